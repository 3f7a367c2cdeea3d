/* Cross-element vectorised FP64 operator (issue 17 item 3; docs/operator.md,
 * "Cross-element vectorisation"): at low order an element is too small for
 * SIMD within it, so four elements go through the sum factorisation
 * together, one per lane of an AVX2 register (deal.II's layout). Precomputed
 * geometry, AVX2+FMA only; ax_cpu.c calls it for the orders in
 * HX_XE_SERVES and falls back to its one-element kernels otherwise.
 *
 * Per group of 4 elements (interleaved scratch: x[q] holds node q of the 4
 * elements):
 *  1. gather u (L-vector: 4x4 transposes of 4 consecutive nodes of each
 *     element; fused scatter: through the map, 0 where it is negative);
 *  2. ur, us, ut by line contractions, even-odd split (half the multiply-
 *     adds; fully unrolled, n a constant);
 *  3. fluxes per node: the factors of 4 consecutive nodes of the 4 elements
 *     loaded and transposed (general records; other kinds in a group with a
 *     general one are first expanded to a general record in scratch; split
 *     records are handed back to the one-element kernel), or
 *     w_q times the per-lane constants when all 4 are affine;
 *  4. out = M u + D^T contractions, de-interleaved into each element's
 *     L slots; the per-element partials u.w are the lanes of one sum.
 * The list is reordered by record kind (stable) before grouping, so groups
 * mix kinds only at the boundaries; a short last group repeats its last
 * element in the spare lanes (same values written twice, its partial once).
 * Every lane computes exactly the same operations, so an element's result
 * does not depend on its group or lane. */
#include "ax_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#define HX_XE_ATTR __attribute__((target("avx2,fma")))
#define HX_XE_INLINE static inline __attribute__((always_inline, target("avx2,fma")))
typedef __m256d hx_v4;

/* Arguments of one apply. */
typedef struct {
  int32_t nlist;
  const int32_t *pos;  /* list positions in group order (by record kind) */
  const int32_t *list; /* NULL: elements 0..nlist-1 */
  const int32_t *map;  /* NULL, or u is a G-vector read through map */
  const double *u;
  double *out, *part;
  const double *geo, *w3, *D;
  const int64_t *eoff;
  int ncomp;
} hx_xe_args;

/* Even-odd tables of an n x n matrix A with A[n-1-i][n-1-m] = -A[i][m]
 * (D and D^T on GLL points, up to round-off), h = n/2, broadcast: pe[i*h + m]
 * = (A[i][m] + A[i][n-1-m]) / 2, po = (A[i][m] - A[i][n-1-m]) / 2 (i, m < h),
 * then for odd n the middle column ac[i] = A[i][h] and row am[m] = A[h][m]. */
HX_XE_INLINE void hx_xe_eo_table(const int n, const double *D, const int trans, hx_v4 *T) {
  const int h = n / 2;
#define HX_XE_A(i, m) (trans ? D[(m) * n + (i)] : D[(i) * n + (m)])
  for (int i = 0; i < h; i++)
    for (int m = 0; m < h; m++) {
      T[i * h + m] = _mm256_set1_pd(0.5 * (HX_XE_A(i, m) + HX_XE_A(i, n - 1 - m)));
      T[h * h + i * h + m] = _mm256_set1_pd(0.5 * (HX_XE_A(i, m) - HX_XE_A(i, n - 1 - m)));
    }
  if (n & 1)
    for (int i = 0; i < h; i++) {
      T[2 * h * h + i] = _mm256_set1_pd(HX_XE_A(i, h));
      T[2 * h * h + h + i] = _mm256_set1_pd(HX_XE_A(h, i));
    }
#undef HX_XE_A
}

/* y[i*sy] (+)= sum_m A[i][m] x[m*sx], i < n: one line of the element along
 * a direction, 4 elements per vector, by the even-odd split (T from
 * hx_xe_eo_table): with E_m = x_m + x_{n-1-m}, O_m = x_m - x_{n-1-m},
 * P_i = sum pe E + ac x_h, Q_i = sum po O: y_i = P_i + Q_i, y_{n-1-i} = Q_i - P_i,
 * and for odd n y_h = sum am O (A[h][h] = 0): half the multiply-adds. */
HX_XE_INLINE void hx_xe_line(const int n, const hx_v4 *HX_RESTRICT T, const hx_v4 *HX_RESTRICT x, const int sx,
                             hx_v4 *HX_RESTRICT y, const int sy, const int acc) {
  const int h = n / 2;
  const hx_v4 *pe = T, *po = T + h * h, *ac = T + 2 * h * h, *am = ac + h;
  hx_v4 E[HX_AX_NMAX / 2], O[HX_AX_NMAX / 2], xh = _mm256_setzero_pd();
  for (int m = 0; m < h; m++) {
    const hx_v4 a = x[m * sx], b = x[(n - 1 - m) * sx];
    E[m] = _mm256_add_pd(a, b), O[m] = _mm256_sub_pd(a, b);
  }
  if (n & 1) xh = x[h * sx];
  for (int i = 0; i < h; i++) {
    hx_v4 P = _mm256_mul_pd(pe[i * h], E[0]), Q = _mm256_mul_pd(po[i * h], O[0]);
    for (int m = 1; m < h; m++) {
      P = _mm256_fmadd_pd(pe[i * h + m], E[m], P);
      Q = _mm256_fmadd_pd(po[i * h + m], O[m], Q);
    }
    if (n & 1) P = _mm256_fmadd_pd(ac[i], xh, P);
    hx_v4 lo = _mm256_add_pd(P, Q), hi = _mm256_sub_pd(Q, P);
    if (acc) lo = _mm256_add_pd(y[i * sy], lo), hi = _mm256_add_pd(y[(n - 1 - i) * sy], hi);
    y[i * sy] = lo, y[(n - 1 - i) * sy] = hi;
  }
  if (n & 1) {
    hx_v4 s = _mm256_mul_pd(am[0], O[0]);
    for (int m = 1; m < h; m++) s = _mm256_fmadd_pd(am[m], O[m], s);
    y[h * sy] = acc ? _mm256_add_pd(y[h * sy], s) : s;
  }
}

/* v[j] = (p[0][j], p[1][j], p[2][j], p[3][j]), j < 4: a 4x4 transpose of 4
 * consecutive doubles of 4 elements (2 shuffles per 2 vectors; the 128-bit
 * inserts come with the loads). */
HX_XE_INLINE void hx_xe_load4x4(const double *p0, const double *p1, const double *p2, const double *p3,
                                hx_v4 *v) {
  for (int h = 0; h < 4; h += 2) {
    const hx_v4 a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p0 + h)), _mm_loadu_pd(p2 + h), 1);
    const hx_v4 b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p1 + h)), _mm_loadu_pd(p3 + h), 1);
    v[h] = _mm256_unpacklo_pd(a, b);
    v[h + 1] = _mm256_unpackhi_pd(a, b);
  }
}

/* The inverse: p[l][j] = v[j] lane l. */
HX_XE_INLINE void hx_xe_store4x4(const hx_v4 *v, double *p0, double *p1, double *p2, double *p3) {
  for (int h = 0; h < 4; h += 2) {
    const hx_v4 a = _mm256_unpacklo_pd(v[h], v[h + 1]), b = _mm256_unpackhi_pd(v[h], v[h + 1]);
    _mm_storeu_pd(p0 + h, _mm256_castpd256_pd128(a));
    _mm_storeu_pd(p1 + h, _mm256_castpd256_pd128(b));
    _mm_storeu_pd(p2 + h, _mm256_extractf128_pd(a, 1));
    _mm_storeu_pd(p3 + h, _mm256_extractf128_pd(b, 1));
  }
}

/* Expand an affine or split record into a general one (g[c*cs + q], the
 * c < ncomp factors) with the same per-node functions as the one-element
 * kernel, so the result is the same as for a group of that kind. */
HX_XE_INLINE void hx_xe_expand(const int n3, const int kind, const int ncomp, const double *HX_RESTRICT rec,
                               const double *HX_RESTRICT w3, double *HX_RESTRICT g) {
  const int cs = n3 + HX_AX_PAD;
  for (int q = 0; q < n3; q++) {
    double gq[6], mm;
    if (kind == HX_AXK_AFF)
      hx_geo_affine_node(rec, w3[q], ncomp, gq, &mm);
    else
      hx_geo_split_node(rec, (const float *)(rec + HX_AX_MEANS) + q, hx_ax_cs32(n3), w3[q], ncomp, gq, &mm);
    for (int c = 0; c < 6; c++) g[c * cs + q] = gq[c];
    g[6 * cs + q] = mm;
  }
}

#define HX_XE_PF_DIST 1
#define HX_XE_PF_HINT _MM_HINT_T1

/* One group of 4 elements (positions pk[l], elements e[l]); nv lanes valid
 * for the partials. Scratch: U, R, S, T, O of n34 = n^3 rounded up to 4
 * vectors (the tails stay 0), xg 4 general records for expanded lanes. */
HX_XE_INLINE void hx_xe_group(const int n, const hx_xe_args *a, const hx_v4 *HX_RESTRICT Dv,
                              const hx_v4 *HX_RESTRICT Dtv, const int32_t *pk, const size_t *e, const int nv,
                              hx_v4 *HX_RESTRICT U, hx_v4 *HX_RESTRICT R, hx_v4 *HX_RESTRICT S, hx_v4 *HX_RESTRICT T,
                              hx_v4 *HX_RESTRICT O, double *HX_RESTRICT xg, const size_t *en) {
  const int n2 = n * n, n3 = n2 * n, n34 = (n3 + 3) & ~3, cs = n3 + HX_AX_PAD, ncomp = a->ncomp;
  const int nb = n3 & ~3; /* nodes in full blocks of 4 */
  double *HX_RESTRICT Ud = (double *)U;
  /* 1. gather */
  if (a->map) {
    const double *HX_RESTRICT u = a->u;
    for (int l = 0; l < 4; l++) {
      const int32_t *HX_RESTRICT mp = a->map + (size_t)n3 * e[l];
      for (int q = 0; q < n3; q++) Ud[4 * q + l] = mp[q] >= 0 ? u[mp[q]] : 0.0;
    }
  } else {
    const double *u0 = a->u + n3 * e[0], *u1 = a->u + n3 * e[1], *u2 = a->u + n3 * e[2], *u3 = a->u + n3 * e[3];
    for (int q = 0; q < nb; q += 4) hx_xe_load4x4(u0 + q, u1 + q, u2 + q, u3 + q, U + q);
    for (int q = nb; q < n3; q++) U[q] = _mm256_setr_pd(u0[q], u1[q], u2[q], u3[q]);
  }
  /* software prefetch of the next group (en[l], HX_XE_PF_DIST groups
   * ahead) into L2: u or its map now, the general records in the flux loop */
  const double *gn[4];
  for (int l = 0; l < 4; l++) {
    const int64_t eo = a->eoff[en[l]];
    gn[l] = (eo & 3) == HX_AXK_GEN ? a->geo + (eo >> 2) : NULL;
    if (a->map) {
      for (int q = 0; q < n3; q += 16) _mm_prefetch((const char *)(a->map + (size_t)n3 * en[l] + q), HX_XE_PF_HINT);
    } else {
      for (int q = 0; q < n3; q += 8) _mm_prefetch((const char *)(a->u + (size_t)n3 * en[l] + q), HX_XE_PF_HINT);
    }
  }
  /* 2. gradients */
  for (int ij = 0; ij < n2; ij++) hx_xe_line(n, Dv, U + ij, n2, T + ij, n2, 0);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++) hx_xe_line(n, Dv, U + i + n2 * k, n, S + i + n2 * k, n, 0);
  for (int jk = 0; jk < n2; jk++) hx_xe_line(n, Dv, U + n * jk, 1, R + n * jk, 1, 0);
  /* 3. fluxes and mass term */
  int kind[4], allaff = 1;
  const double *rec[4];
  for (int l = 0; l < 4; l++) {
    const int64_t eo = a->eoff[e[l]];
    kind[l] = (int)(eo & 3);
    rec[l] = a->geo + (eo >> 2);
    allaff &= kind[l] == HX_AXK_AFF;
  }
  if (allaff) {
    hx_v4 M[7];
    for (int c = 0; c < 7; c++) M[c] = _mm256_setr_pd(rec[0][c], rec[1][c], rec[2][c], rec[3][c]);
    for (int q = 0; q < n34; q++) {
      const hx_v4 wq = _mm256_broadcast_sd(a->w3 + (q < n3 ? q : 0));
      const hx_v4 g0 = _mm256_mul_pd(wq, M[0]), g1 = _mm256_mul_pd(wq, M[1]), g2 = _mm256_mul_pd(wq, M[2]);
      const hx_v4 g3 = _mm256_mul_pd(wq, M[3]), g4 = _mm256_mul_pd(wq, M[4]), g5 = _mm256_mul_pd(wq, M[5]);
      const hx_v4 ur = R[q], us = S[q], ut = T[q];
      R[q] = _mm256_fmadd_pd(g2, ut, _mm256_fmadd_pd(g1, us, _mm256_mul_pd(g0, ur)));
      S[q] = _mm256_fmadd_pd(g4, ut, _mm256_fmadd_pd(g3, us, _mm256_mul_pd(g1, ur)));
      T[q] = _mm256_fmadd_pd(g5, ut, _mm256_fmadd_pd(g4, us, _mm256_mul_pd(g2, ur)));
      O[q] = ncomp == 7 ? _mm256_mul_pd(_mm256_mul_pd(wq, M[6]), U[q]) : _mm256_setzero_pd();
    }
  } else {
    const double *gp[4];
    for (int l = 0; l < 4; l++) {
      if (kind[l] == HX_AXK_GEN) {
        gp[l] = rec[l];
      } else {
        double *x = xg + (size_t)l * 7 * cs;
        hx_xe_expand(n3, kind[l], ncomp, rec[l], a->w3, x);
        gp[l] = x;
      }
    }
    for (int q0 = 0; q0 < n34; q0 += 4) {
      if (!(q0 & 4))
        for (int l = 0; l < 4; l++)
          if (gn[l])
            for (int c = 0; c < ncomp; c++) _mm_prefetch((const char *)(gn[l] + c * cs + q0), HX_XE_PF_HINT);
      hx_v4 g[7][4];
      for (int c = 0; c < ncomp; c++)
        hx_xe_load4x4(gp[0] + c * cs + q0, gp[1] + c * cs + q0, gp[2] + c * cs + q0, gp[3] + c * cs + q0, g[c]);
      for (int j = 0; j < 4; j++) {
        const int q = q0 + j;
        const hx_v4 ur = R[q], us = S[q], ut = T[q];
        R[q] = _mm256_fmadd_pd(g[2][j], ut, _mm256_fmadd_pd(g[1][j], us, _mm256_mul_pd(g[0][j], ur)));
        S[q] = _mm256_fmadd_pd(g[4][j], ut, _mm256_fmadd_pd(g[3][j], us, _mm256_mul_pd(g[1][j], ur)));
        T[q] = _mm256_fmadd_pd(g[5][j], ut, _mm256_fmadd_pd(g[4][j], us, _mm256_mul_pd(g[2][j], ur)));
        O[q] = ncomp == 7 ? _mm256_mul_pd(g[6][j], U[q]) : _mm256_setzero_pd();
      }
    }
  }
  /* 4. transposed gradients */
  for (int ij = 0; ij < n2; ij++) hx_xe_line(n, Dtv, T + ij, n2, O + ij, n2, 1);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++) hx_xe_line(n, Dtv, S + i + n2 * k, n, O + i + n2 * k, n, 1);
  for (int jk = 0; jk < n2; jk++) hx_xe_line(n, Dtv, R + n * jk, 1, O + n * jk, 1, 1);
  /* de-interleave and partials */
  double *o0 = a->out + n3 * e[0], *o1 = a->out + n3 * e[1], *o2 = a->out + n3 * e[2], *o3 = a->out + n3 * e[3];
  for (int q = 0; q < nb; q += 4) hx_xe_store4x4(O + q, o0 + q, o1 + q, o2 + q, o3 + q);
  for (int q = nb; q < n3; q++) {
    const double *Oq = (const double *)(O + q);
    o0[q] = Oq[0], o1[q] = Oq[1], o2[q] = Oq[2], o3[q] = Oq[3];
  }
  if (a->part) {
    hx_v4 s = _mm256_setzero_pd();
    for (int q = 0; q < n3; q++) s = _mm256_fmadd_pd(U[q], O[q], s);
    double sd[4];
    _mm256_storeu_pd(sd, s);
    for (int l = 0; l < nv; l++) a->part[pk[l]] = sd[l];
  }
}

/* Groups per dynamically scheduled chunk (~2048 nodes, as ax_cpu.c). */
#define HX_XE_CHUNK(N) ((N) * (N) * (N) * 4 >= 2048 ? 1 : 2048 / ((N) * (N) * (N) * 4))

#define HX_XE_DEFINE(N)                                                                                  \
  HX_XE_ATTR static void hx_xe_apply_##N(const hx_xe_args *a) {                                          \
    enum { n3 = (N) * (N) * (N), n34 = (n3 + 3) & ~3 };                                                  \
    const int32_t ng = (a->nlist + 3) / 4;                                                               \
    const int chunk = HX_XE_CHUNK(N);                                                                    \
    _Pragma("omp parallel") {                                                                            \
      __attribute__((aligned(32))) hx_v4 Dv[(N) * (N)], Dtv[(N) * (N)];                                  \
      __attribute__((aligned(32))) hx_v4 U[n34], R[n34], S[n34], T[n34], O[n34];                         \
      __attribute__((aligned(32))) double xg[4 * 7 * (n3 + HX_AX_PAD)];                                  \
      hx_xe_eo_table((N), a->D, 0, Dv);                                                                 \
      hx_xe_eo_table((N), a->D, 1, Dtv);                                                                \
      memset(U, 0, sizeof U), memset(R, 0, sizeof R), memset(S, 0, sizeof S);                            \
      memset(T, 0, sizeof T), memset(O, 0, sizeof O), memset(xg, 0, sizeof xg);                          \
      _Pragma("omp for schedule(dynamic, chunk)")           for (int32_t g = 0; g < ng; g++) {           \
        int32_t pk[4];                                                                                   \
        size_t e[4], en[4];                                                                                 \
        const int nv = a->nlist - 4 * g < 4 ? (int)(a->nlist - 4 * g) : 4;                              \
        for (int l = 0; l < 4; l++) {                                                                    \
          pk[l] = a->pos[4 * g + (l < nv ? l : nv - 1)];                                                 \
          e[l] = (size_t)(a->list ? a->list[pk[l]] : pk[l]);                                             \
          const int32_t kn = 4 * (g + HX_XE_PF_DIST) + l < a->nlist ? a->pos[4 * (g + HX_XE_PF_DIST) + l] : pk[l]; \
          en[l] = (size_t)(a->list ? a->list[kn] : kn);                                                  \
        }                                                                                                \
        hx_xe_group((N), a, Dv, Dtv, pk, e, nv, U, R, S, T, O, xg, en);                                  \
      }                                                                                                  \
    }                                                                                                    \
  }

HX_XE_DEFINE(3)
HX_XE_DEFINE(4)
HX_XE_DEFINE(5)
HX_XE_DEFINE(6)
HX_XE_DEFINE(7)

/* The orders served (p), with the measurements that chose them in
 * docs/performance.md, "Cross-element vectorisation (issue 17 item 3)". */
static int hx_xe_fn(int p, void (**fn)(const hx_xe_args *)) {
  switch (p) {
    case 2: *fn = hx_xe_apply_3; return 1;
    case 3: *fn = hx_xe_apply_4; return 1;
    case 4: *fn = hx_xe_apply_5; return 1;
    case 5: *fn = hx_xe_apply_6; return 1;
    case 6: *fn = hx_xe_apply_7; return 1;
    default: return 0;
  }
}

int hx_ax_xelem_serves(int p) {
  void (*fn)(const hx_xe_args *) = NULL;
  return hx_ax_cpu_isa() == 1 && hx_xe_fn(p, &fn);
}

int hx_ax_xelem_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                      const double *u, double *w, double *part, int32_t *nrest, int32_t **rest) {
  void (*fn)(const hx_xe_args *) = NULL;
  *nrest = 0, *rest = NULL;
  if (!ax->isa || ax->mode != HX_GEO_PRECOMPUTED || !hx_xe_fn(ax->p, &fn)) return 0;
  if (hx_env_off("HEXCG_AX_XELEM")) return 0;
  if (nlist <= 0) return 1;
  /* list positions by record kind, stable: general, affine, split */
  int32_t *pos = malloc(sizeof(int32_t) * (size_t)nlist);
  if (!pos) return 0; /* the one-element kernel needs no memory */
  int32_t cnt[4] = {0, 0, 0, 0};
  for (int32_t k = 0; k < nlist; k++) cnt[ax->d_eoff[list ? list[k] : k] & 3]++;
  int32_t at[4] = {0, cnt[HX_AXK_GEN], cnt[HX_AXK_GEN] + cnt[HX_AXK_AFF],
                   cnt[HX_AXK_GEN] + cnt[HX_AXK_AFF] + cnt[HX_AXK_SPL]};
  for (int32_t k = 0; k < nlist; k++) pos[at[ax->d_eoff[list ? list[k] : k] & 3]++] = k;
  /* split records stay with the one-element kernel, which reads the float
   * deviations directly (expanding them here ran 0.5x its speed at p = 3) */
  /* so do the scaled affine records (AFV: kappa and lambda per node) */
  const int32_t nr = cnt[HX_AXK_SPL] + cnt[HX_AXK_AFV], nx = nlist - nr;
  if (nr > 0) {
    if (!(*rest = malloc(sizeof(int32_t) * (size_t)nr))) {
      free(pos);
      return 0;
    }
    memcpy(*rest, pos + nx, sizeof(int32_t) * (size_t)nr);
    *nrest = nr;
  }
  if (nx == 0) {
    free(pos);
    return 1;
  }
  hx_xe_args a = {.nlist = nx,
                  .pos = pos,
                  .list = list,
                  .map = map,
                  .u = u,
                  .out = w,
                  .part = part,
                  .geo = ax->d_geo,
                  .w3 = ax->d_basis + hx_ax_off_w3(ax->n),
                  .D = ax->d_basis,
                  .eoff = ax->d_eoff,
                  .ncomp = ax->ncomp};
  fn(&a);
  free(pos);
  return 1;
}

#else
int hx_ax_xelem_serves(int p) {
  (void)p;
  return 0;
}
int hx_ax_xelem_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                      const double *u, double *w, double *part, int32_t *nrest, int32_t **rest) {
  *nrest = 0, *rest = NULL;
  (void)ax, (void)nlist, (void)list, (void)map, (void)u, (void)w, (void)part;
  return 0;
}
#endif
