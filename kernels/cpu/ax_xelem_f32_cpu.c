/* Cross-element vectorised FP32 operator (issue 34 item 1; docs/operator.md,
 * "Cross-element vectorisation"): the FP32 twin of ax_xelem_cpu.c, eight
 * elements at once, one per float lane of an AVX2 register. At p = 3 the
 * one-element kernels (generic, or the hand-written n = 4 one) spend most of
 * their time in shuffles and short rows; a p-multigrid level of p = 2..5
 * cost several times the fine level's time per DOF.
 *
 * Per group of 8 elements (interleaved scratch: x[q] holds node q of the 8
 * elements):
 *  1. gather u (L-vector: 8 x 8 transposes of 8 consecutive nodes of each
 *     element; fused scatter: through the map, 0 where it is negative);
 *  2. ur, us, ut by line contractions, even-odd split (the FP64 path's
 *     tables, from the FP64 D rounded once);
 *  3. fluxes: general records transposed 8 nodes at a time into an
 *     interleaved factor block; affine (AFF) and scaled affine (AFV) records
 *     as w_q kappa_q times the lane's constants (kappa_q = lambda_q = 1 for
 *     AFF, so the products are those of hx_geo_affine_node_f32 and
 *     hx_geo_scaled_node_f32); a group that mixes general with other records
 *     fills its factor block lane by lane with those functions;
 *  4. out = M u + D^T contractions, de-interleaved into each element's
 *     L slots; the per-element partials u.w (double, exact float products)
 *     are the lanes of one sum.
 * The list is reordered by record kind (stable: general, then affine and
 * scaled affine) before grouping, so at most one group mixes kinds; a short
 * last group repeats its last element in the spare lanes (computed, not
 * stored). Every lane does the same operations, so an element's result does
 * not depend on its group or lane; it differs from the one-element kernels
 * by float round-off (another summation order). FP32 storage: ax_prec.c. */
#include "prec_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#define HX_XF_ATTR __attribute__((target("avx2,fma")))
#define HX_XF_INLINE static inline __attribute__((always_inline, target("avx2,fma")))
typedef __m256 hx_v8;
/* largest n served, the scratch's size */
#define HX_XF_NMAX 7
#define HX_XF_N3MAX (HX_XF_NMAX * HX_XF_NMAX * HX_XF_NMAX)

typedef struct {
  int32_t nlist;
  const int32_t *pos;  /* list positions in group order (by record kind) */
  const int32_t *list; /* NULL: elements 0..nlist-1 */
  const int32_t *map;  /* NULL, or u is a G-vector read through map */
  const float *u;
  float *out;
  double *part;
  const float *geo, *w3;
  const double *D; /* the FP64 D: tables rounded once */
  const int64_t *eoff;
  int ncomp;
} hx_xf_args;

/* Even-odd tables of D or D^T (ax_xelem_cpu.c's hx_xe_eo_table, in float). */
static void hx_xf_eo_table(const int n, const double *D, const int trans, float *T) {
  const int h = n / 2;
#define HX_XF_A(i, m) (trans ? D[(m) * n + (i)] : D[(i) * n + (m)])
  for (int i = 0; i < h; i++)
    for (int m = 0; m < h; m++) {
      T[i * h + m] = (float)(0.5 * (HX_XF_A(i, m) + HX_XF_A(i, n - 1 - m)));
      T[h * h + i * h + m] = (float)(0.5 * (HX_XF_A(i, m) - HX_XF_A(i, n - 1 - m)));
    }
  if (n & 1)
    for (int i = 0; i < h; i++) {
      T[2 * h * h + i] = (float)HX_XF_A(i, h);
      T[2 * h * h + h + i] = (float)HX_XF_A(h, i);
    }
#undef HX_XF_A
}

/* y[i*sy] (+)= sum_m A[i][m] x[m*sx], i < n, 8 elements per vector, by the
 * even-odd split (ax_xelem_cpu.c's hx_xe_line). */
HX_XF_INLINE void hx_xf_line(const int n, const hx_v8 *HX_RESTRICT T, const hx_v8 *HX_RESTRICT x, const int sx,
                             hx_v8 *HX_RESTRICT y, const int sy, const int acc) {
  const int h = n / 2;
  const hx_v8 *pe = T, *po = T + h * h, *ac = T + 2 * h * h, *am = ac + h;
  hx_v8 E[HX_XF_NMAX / 2 + 1], O[HX_XF_NMAX / 2 + 1], xh = _mm256_setzero_ps();
  for (int m = 0; m < h; m++) {
    const hx_v8 a = x[m * sx], b = x[(n - 1 - m) * sx];
    E[m] = _mm256_add_ps(a, b), O[m] = _mm256_sub_ps(a, b);
  }
  if (n & 1) xh = x[h * sx];
  for (int i = 0; i < h; i++) {
    hx_v8 P = _mm256_mul_ps(pe[i * h], E[0]), Q = _mm256_mul_ps(po[i * h], O[0]);
    for (int m = 1; m < h; m++) {
      P = _mm256_fmadd_ps(pe[i * h + m], E[m], P);
      Q = _mm256_fmadd_ps(po[i * h + m], O[m], Q);
    }
    if (n & 1) P = _mm256_fmadd_ps(ac[i], xh, P);
    hx_v8 lo = _mm256_add_ps(P, Q), hi = _mm256_sub_ps(Q, P);
    if (acc) lo = _mm256_add_ps(y[i * sy], lo), hi = _mm256_add_ps(y[(n - 1 - i) * sy], hi);
    y[i * sy] = lo, y[(n - 1 - i) * sy] = hi;
  }
  if (n & 1) {
    hx_v8 s = _mm256_mul_ps(am[0], O[0]);
    for (int m = 1; m < h; m++) s = _mm256_fmadd_ps(am[m], O[m], s);
    y[h * sy] = acc ? _mm256_add_ps(y[h * sy], s) : s;
  }
}

/* r[j] = (row_0[j], ..., row_7[j]) for the 8 rows r[0..7] (8 x 8 transpose;
 * it is its own inverse). */
HX_XF_INLINE void hx_xf_tr8(hx_v8 *r) {
  const hx_v8 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const hx_v8 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const hx_v8 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const hx_v8 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const hx_v8 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const hx_v8 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const hx_v8 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const hx_v8 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* X[q] = (p[0][q], ..., p[7][q]) for q < n3: the interleaved copy of 8
 * arrays of n3 floats. */
HX_XF_INLINE void hx_xf_load(const int n3, const float *const *p, hx_v8 *HX_RESTRICT X) {
  const int nb = n3 & ~7;
  for (int q = 0; q < nb; q += 8) {
    for (int l = 0; l < 8; l++) X[q + l] = _mm256_loadu_ps(p[l] + q);
    hx_xf_tr8(X + q);
  }
  for (int q = nb; q < n3; q++)
    X[q] = _mm256_setr_ps(p[0][q], p[1][q], p[2][q], p[3][q], p[4][q], p[5][q], p[6][q], p[7][q]);
}

/* Per-thread scratch of one group (n3 rounded up to 8 vectors). */
typedef struct {
  __attribute__((aligned(32))) hx_v8 U[HX_XF_N3MAX + 8], R[HX_XF_N3MAX + 8], S[HX_XF_N3MAX + 8],
      T[HX_XF_N3MAX + 8], O[HX_XF_N3MAX + 8];
  __attribute__((aligned(32))) hx_v8 G[7 * (HX_XF_N3MAX + 8)]; /* factors, c * n38 + q */
  __attribute__((aligned(32))) hx_v8 Dv[HX_XF_NMAX * HX_XF_NMAX], Dtv[HX_XF_NMAX * HX_XF_NMAX];
  __attribute__((aligned(32))) float ones[HX_XF_N3MAX + 8];
} hx_xf_scr;

/* One group of 8 elements (positions pk[l], elements e[l]); nv lanes valid. */
HX_XF_INLINE void hx_xf_group(const int n, const hx_xf_args *a, hx_xf_scr *HX_RESTRICT W, const int32_t *pk,
                              const size_t *e, const int nv) {
  const int n2 = n * n, n3 = n2 * n, n38 = (n3 + 7) & ~7, cs = n3 + HX_AX_PAD, ncomp = a->ncomp;
  hx_v8 *HX_RESTRICT U = W->U, *HX_RESTRICT R = W->R, *HX_RESTRICT S = W->S, *HX_RESTRICT T = W->T,
        *HX_RESTRICT O = W->O, *HX_RESTRICT G = W->G;
  /* 1. gather */
  if (a->map) {
    float *HX_RESTRICT Uf = (float *)U;
    const float *HX_RESTRICT u = a->u;
    for (int l = 0; l < 8; l++) {
      const int32_t *HX_RESTRICT mp = a->map + (size_t)n3 * e[l];
      for (int q = 0; q < n3; q++) Uf[8 * q + l] = mp[q] >= 0 ? u[mp[q]] : 0.0f;
    }
  } else {
    const float *p[8];
    for (int l = 0; l < 8; l++) p[l] = a->u + (size_t)n3 * e[l];
    hx_xf_load(n3, p, U);
  }
  /* 2. gradients */
  for (int ij = 0; ij < n2; ij++) hx_xf_line(n, W->Dv, U + ij, n2, T + ij, n2, 0);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++) hx_xf_line(n, W->Dv, U + i + n2 * k, n, S + i + n2 * k, n, 0);
  for (int jk = 0; jk < n2; jk++) hx_xf_line(n, W->Dv, U + n * jk, 1, R + n * jk, 1, 0);
  /* 3. fluxes and mass term */
  int kind[8], ngen = 0, nafv = 0;
  const float *rec[8];
  for (int l = 0; l < 8; l++) {
    const int64_t eo = a->eoff[e[l]];
    kind[l] = (int)(eo & 3);
    rec[l] = a->geo + (eo >> 2);
    ngen += kind[l] == HX_AXK_GEN;
    nafv += kind[l] == HX_AXK_AFV;
  }
  if (ngen == 0) {
    /* affine and scaled affine: g = (w_q kappa_q) m, mass (w_q lambda_q) m_6 */
    hx_v8 M[7];
    for (int c = 0; c < 7; c++)
      M[c] = _mm256_setr_ps(rec[0][c], rec[1][c], rec[2][c], rec[3][c], rec[4][c], rec[5][c], rec[6][c],
                            rec[7][c]);
    hx_v8 *K = G, *Lm = G + n38; /* kappa, lambda per node and lane (AFF: 1) */
    if (nafv) {
      const float *p[8];
      for (int l = 0; l < 8; l++) p[l] = kind[l] == HX_AXK_AFV ? rec[l] + HX_AX_MEANS : W->ones;
      hx_xf_load(n3, p, K);
      if (ncomp == 7) {
        for (int l = 0; l < 8; l++) p[l] = kind[l] == HX_AXK_AFV ? rec[l] + HX_AX_MEANS + cs : W->ones;
        hx_xf_load(n3, p, Lm);
      }
    }
    for (int q = 0; q < n3; q++) {
      const hx_v8 wq = _mm256_broadcast_ss(a->w3 + q);
      const hx_v8 wk = nafv ? _mm256_mul_ps(wq, K[q]) : wq;
      const hx_v8 g0 = _mm256_mul_ps(wk, M[0]), g1 = _mm256_mul_ps(wk, M[1]), g2 = _mm256_mul_ps(wk, M[2]);
      const hx_v8 g3 = _mm256_mul_ps(wk, M[3]), g4 = _mm256_mul_ps(wk, M[4]), g5 = _mm256_mul_ps(wk, M[5]);
      const hx_v8 ur = R[q], us = S[q], ut = T[q];
      R[q] = _mm256_fmadd_ps(g2, ut, _mm256_fmadd_ps(g1, us, _mm256_mul_ps(g0, ur)));
      S[q] = _mm256_fmadd_ps(g4, ut, _mm256_fmadd_ps(g3, us, _mm256_mul_ps(g1, ur)));
      T[q] = _mm256_fmadd_ps(g5, ut, _mm256_fmadd_ps(g4, us, _mm256_mul_ps(g2, ur)));
      if (ncomp == 7) {
        const hx_v8 wl = nafv ? _mm256_mul_ps(wq, Lm[q]) : wq;
        O[q] = _mm256_mul_ps(_mm256_mul_ps(wl, M[6]), U[q]);
      } else {
        O[q] = _mm256_setzero_ps();
      }
    }
  } else {
    if (ngen == 8) {
      for (int c = 0; c < ncomp; c++) {
        const float *p[8];
        for (int l = 0; l < 8; l++) p[l] = rec[l] + (size_t)c * cs;
        hx_xf_load(n3, p, G + c * n38);
      }
    } else {
      /* the one mixed group: lane by lane, with the one-element math */
      float *HX_RESTRICT Gf = (float *)G;
      for (int l = 0; l < 8; l++)
        for (int q = 0; q < n3; q++) {
          float g[6], mm = 0.0f;
          if (kind[l] == HX_AXK_GEN) {
            for (int c = 0; c < 6; c++) g[c] = rec[l][c * cs + q];
            if (ncomp == 7) mm = rec[l][6 * cs + q];
          } else if (kind[l] == HX_AXK_AFF) {
            hx_geo_affine_node_f32(rec[l], a->w3[q], ncomp, g, &mm);
          } else {
            const float *kq = rec[l] + HX_AX_MEANS;
            hx_geo_scaled_node_f32(rec[l], a->w3[q], kq[q], ncomp == 7 ? kq[cs + q] : 0.0f, ncomp, g, &mm);
          }
          for (int c = 0; c < 6; c++) Gf[8 * (c * n38 + q) + l] = g[c];
          Gf[8 * (6 * n38 + q) + l] = mm;
        }
    }
    for (int q = 0; q < n3; q++) {
      const hx_v8 ur = R[q], us = S[q], ut = T[q];
      const hx_v8 g0 = G[q], g1 = G[n38 + q], g2 = G[2 * n38 + q], g3 = G[3 * n38 + q], g4 = G[4 * n38 + q],
                  g5 = G[5 * n38 + q];
      R[q] = _mm256_fmadd_ps(g2, ut, _mm256_fmadd_ps(g1, us, _mm256_mul_ps(g0, ur)));
      S[q] = _mm256_fmadd_ps(g4, ut, _mm256_fmadd_ps(g3, us, _mm256_mul_ps(g1, ur)));
      T[q] = _mm256_fmadd_ps(g5, ut, _mm256_fmadd_ps(g4, us, _mm256_mul_ps(g2, ur)));
      O[q] = ncomp == 7 ? _mm256_mul_ps(G[6 * n38 + q], U[q]) : _mm256_setzero_ps();
    }
  }
  /* 4. transposed gradients */
  for (int ij = 0; ij < n2; ij++) hx_xf_line(n, W->Dtv, T + ij, n2, O + ij, n2, 1);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++) hx_xf_line(n, W->Dtv, S + i + n2 * k, n, O + i + n2 * k, n, 1);
  for (int jk = 0; jk < n2; jk++) hx_xf_line(n, W->Dtv, R + n * jk, 1, O + n * jk, 1, 1);
  /* partials (before the transposes below reorder O) */
  if (a->part) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int q = 0; q < n3; q++) {
      const __m128 u0 = _mm256_castps256_ps128(U[q]), u1 = _mm256_extractf128_ps(U[q], 1);
      const __m128 o0 = _mm256_castps256_ps128(O[q]), o1 = _mm256_extractf128_ps(O[q], 1);
      s0 = _mm256_fmadd_pd(_mm256_cvtps_pd(u0), _mm256_cvtps_pd(o0), s0);
      s1 = _mm256_fmadd_pd(_mm256_cvtps_pd(u1), _mm256_cvtps_pd(o1), s1);
    }
    double sd[8];
    _mm256_storeu_pd(sd, s0), _mm256_storeu_pd(sd + 4, s1);
    for (int l = 0; l < nv; l++) a->part[pk[l]] = sd[l];
  }
  /* de-interleave into the valid lanes' L slots */
  const int nb = n3 & ~7;
  for (int q = 0; q < nb; q += 8) {
    hx_xf_tr8(O + q);
    for (int l = 0; l < nv; l++) _mm256_storeu_ps(a->out + (size_t)n3 * e[l] + q, O[q + l]);
  }
  for (int q = nb; q < n3; q++) {
    const float *Oq = (const float *)(O + q);
    for (int l = 0; l < nv; l++) a->out[(size_t)n3 * e[l] + q] = Oq[l];
  }
}

/* Groups per dynamically scheduled chunk (~2048 nodes, as ax_cpu.c). */
#define HX_XF_CHUNK(N) ((N) * (N) * (N) * 8 >= 2048 ? 1 : 2048 / ((N) * (N) * (N) * 8))

#define HX_XF_DEFINE(N)                                                                      \
  HX_XF_ATTR static int hx_xf_apply_##N(const hx_xf_args *a) {                               \
    const int32_t ng = (a->nlist + 7) / 8;                                                   \
    const int chunk = HX_XF_CHUNK(N);                                                        \
    int err = 0;                                                                             \
    _Pragma("omp parallel reduction(| : err)") {                                             \
      hx_xf_scr *W = aligned_alloc(32, sizeof(hx_xf_scr));                                   \
      if (!W) {                                                                              \
        err = 1;                                                                             \
      } else {                                                                               \
        float Tb[HX_XF_NMAX * HX_XF_NMAX] = {0.0f}; /* 2 h^2 (+ 2h for odd n) used */          \
        hx_xf_eo_table((N), a->D, 0, Tb);                                                    \
        for (int i = 0; i < (N) * (N); i++) W->Dv[i] = _mm256_set1_ps(Tb[i]);                \
        hx_xf_eo_table((N), a->D, 1, Tb);                                                    \
        for (int i = 0; i < (N) * (N); i++) W->Dtv[i] = _mm256_set1_ps(Tb[i]);               \
        for (int q = 0; q < HX_XF_N3MAX + 8; q++) W->ones[q] = 1.0f;                         \
        /* the tails of the rounded-up scratch stay finite */                                \
        memset(W->U, 0, sizeof W->U), memset(W->O, 0, sizeof W->O);                          \
      }                                                                                      \
      _Pragma("omp for schedule(dynamic, chunk)") for (int32_t g = 0; g < ng; g++) {         \
        if (!W) continue;                                                                    \
        int32_t pk[8];                                                                       \
        size_t e[8];                                                                         \
        const int nv = a->nlist - 8 * g < 8 ? (int)(a->nlist - 8 * g) : 8;                   \
        for (int l = 0; l < 8; l++) {                                                        \
          pk[l] = a->pos[8 * g + (l < nv ? l : nv - 1)];                                     \
          e[l] = (size_t)(a->list ? a->list[pk[l]] : pk[l]);                                 \
        }                                                                                    \
        hx_xf_group((N), a, W, pk, e, nv);                                                   \
      }                                                                                      \
      free(W);                                                                               \
    }                                                                                        \
    return err;                                                                              \
  }

HX_XF_DEFINE(2)
HX_XF_DEFINE(3)
HX_XF_DEFINE(4)
HX_XF_DEFINE(5)
HX_XF_DEFINE(6)
HX_XF_DEFINE(7)

/* The orders served (p), with the measurements that chose them in
 * docs/operator.md, "FP32 cross-element operator (issue 34)". */
static int hx_xf_fn(int p, int (**fn)(const hx_xf_args *)) {
  switch (p) {
    case 1: *fn = hx_xf_apply_2; return 1;
    case 2: *fn = hx_xf_apply_3; return 1;
    case 3: *fn = hx_xf_apply_4; return 1;
    case 4: *fn = hx_xf_apply_5; return 1;
    case 5: *fn = hx_xf_apply_6; return 1;
    case 6: *fn = hx_xf_apply_7; return 1;
    default: return 0;
  }
}

int hx_ax_xelem_serves_f32(int p) {
  int (*fn)(const hx_xf_args *) = NULL;
  return hx_ax_cpu_isa() == 1 && hx_xf_fn(p, &fn);
}

/* 1 if the general records of order p go to the one-element kernels: at
 * p = 3 (the hand-written n = 4 kernel) and p = 5 they were faster there
 * (general records, 16^3 elements, one thread, CPU time per apply: p = 3
 * 0.30 ms one-element, 0.47 cross-element; p = 5 3.4 against 3.8; p = 2
 * 0.44 against 0.20, p = 4 1.90 against 1.82, p = 6 8.1 against 4.4). */
static int hx_xf_gen_rest(int p) { return p == 3 || p == 5; }

int hx_ax_xelem_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                          const float *u, float *w, double *part, int32_t *nrest, int32_t **rest) {
  int (*fn)(const hx_xf_args *) = NULL;
  *nrest = 0, *rest = NULL;
  if (!ax->isa || ax->mode != HX_GEO_PRECOMPUTED || !hx_xf_fn(ax->p, &fn)) return 0;
  const char *env = getenv("HEXCG_AX_XELEM");
  if (env && !strcmp(env, "0")) return 0;
  if (nlist <= 0) return 1;
  /* list positions by record kind, stable: general, then affine and scaled
   * affine together (one vector path); FP32 has no split records */
  int32_t *pos = malloc(sizeof(int32_t) * (size_t)nlist);
  if (!pos) return 0; /* the one-element kernel needs no memory */
  int32_t ngen = 0;
  for (int32_t k = 0; k < nlist; k++) ngen += (ax->d_eoff[list ? list[k] : k] & 3) == HX_AXK_GEN;
  int32_t at[2] = {0, ngen};
  for (int32_t k = 0; k < nlist; k++) pos[at[(ax->d_eoff[list ? list[k] : k] & 3) != HX_AXK_GEN]++] = k;
  const int32_t nr = hx_xf_gen_rest(ax->p) ? ngen : 0, nx = nlist - nr;
  if (nx == 0) { /* nothing for this kernel */
    free(pos);
    return 0;
  }
  hx_xf_args a = {.nlist = nx,
                  .pos = pos + nr,
                  .list = list,
                  .map = map,
                  .u = u,
                  .out = w,
                  .part = part,
                  .geo = ax->d_geo32,
                  .w3 = ax->d_basis32 + hx_ax_off_w3_f32(ax->n),
                  .D = ax->D,
                  .eoff = ax->d_eoff,
                  .ncomp = ax->ncomp};
  if (fn(&a)) { /* no scratch: the one-element kernel does it all */
    free(pos);
    return 0;
  }
  if (nr > 0) { /* the general records' list positions, for the caller */
    *rest = pos, *nrest = nr;
    return 1;
  }
  free(pos);
  return 1;
}

#else
int hx_ax_xelem_serves_f32(int p) {
  (void)p;
  return 0;
}
int hx_ax_xelem_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                          const float *u, float *w, double *part, int32_t *nrest, int32_t **rest) {
  *nrest = 0, *rest = NULL;
  (void)ax, (void)nlist, (void)list, (void)map, (void)u, (void)w, (void)part;
  return 0;
}
#endif
