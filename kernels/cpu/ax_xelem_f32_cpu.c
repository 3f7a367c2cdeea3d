/* Cross-element vectorised FP32 operator (issue 34 item 1; docs/operator.md,
 * "Low orders per DOF"): the FP32 twin of ax_xelem_cpu.c, eight elements at
 * once, one per float lane of an AVX2 register, for p = 1, 2, 4, 5, 6 (p = 3
 * keeps its hand-written kernel, p = 7 too). The one-element generic loop
 * at those orders ran 4-6x the p = 7 kernel's time per DOF.
 *
 * Per group of 8 elements (interleaved scratch: x[q] holds node q of the 8
 * elements):
 *  1. gather u (L-vector: 8 x 8 transposes of 8 consecutive nodes of each
 *     element; fused scatter: through the map, 0 where it is negative);
 *  2. ur, us, ut: the generic loop's sums (from 0, m increasing, fused);
 *  3. fluxes: general records transposed 8 nodes at a time into an
 *     interleaved factor block; affine (AFF) and scaled affine (AFV) records
 *     as w_q kappa_q times the lane's constants (kappa_q = lambda_q = 1 for
 *     AFF, so the products are those of hx_geo_affine_node_f32 and
 *     hx_geo_scaled_node_f32); a group that mixes general with other records
 *     fills its factor block lane by lane with those functions; the fluxes
 *     as hx_apply_g_f32 (not fused);
 *  4. out = M u + D^T contractions in the generic loop's order (t, then r,
 *     then s), de-interleaved into each element's L slots; the per-element
 *     partials u.w as hx_ax_cpu_dot_f32 (8 fixed accumulators per lane).
 * Each lane thus performs the one-element kernel's operations in its order:
 * results bit for bit those of the generic loop (t117), so the histories of
 * FP32-preconditioned runs do not move (the regression baselines of p = 4
 * cases compare them to 1e-6). No even-odd split: it would change the bits.
 * The list is reordered by record kind (stable: general, then affine and
 * scaled affine) before grouping, so at most one group mixes kinds; a short
 * last group repeats its last element in the spare lanes (computed, not
 * stored). At p = 4 and 5 the general records go back to the one-element
 * loop (as fast there). FP32 storage: ax_prec.c. */
#include "prec_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#include "hx_avx2_tr.h"

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
  const double *D; /* the FP64 D (unused: the float D below) */
  const float *Df; /* the float D of d_basis32, Df[i*n + m] = l_m'(t_i) */
  const int64_t *eoff;
  int ncomp;
} hx_xf_args;


/* X[q] = (p[0][q], ..., p[7][q]) for q < n3: the interleaved copy of 8
 * arrays of n3 floats. */
HX_XF_INLINE void hx_xf_load(const int n3, const float *const *p, hx_v8 *HX_RESTRICT X) {
  const int nb = n3 & ~7;
  for (int q = 0; q < nb; q += 8) {
    for (int l = 0; l < 8; l++) X[q + l] = _mm256_loadu_ps(p[l] + q);
    hx_avx2_tr8_ps(X + q);
  }
  for (int q = nb; q < n3; q++)
    X[q] = _mm256_setr_ps(p[0][q], p[1][q], p[2][q], p[3][q], p[4][q], p[5][q], p[6][q], p[7][q]);
}

/* hx_apply_g_f32's products and sums (not fused), into R, S, T at q */
#define HX_XF_FLUX(g0, g1, g2, g3, g4, g5, ur, us, ut, q)                                                     \
  R[q] = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g0, ur), _mm256_mul_ps(g1, us)), _mm256_mul_ps(g2, ut)); \
  S[q] = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g1, ur), _mm256_mul_ps(g3, us)), _mm256_mul_ps(g4, ut)); \
  T[q] = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g2, ur), _mm256_mul_ps(g4, us)), _mm256_mul_ps(g5, ut))

/* Per-thread scratch of one group (n3 rounded up to 8 vectors). */
typedef struct {
  __attribute__((aligned(32))) hx_v8 U[HX_XF_N3MAX + 8], R[HX_XF_N3MAX + 8], S[HX_XF_N3MAX + 8],
      T[HX_XF_N3MAX + 8], O[HX_XF_N3MAX + 8];
  __attribute__((aligned(32))) hx_v8 G[7 * (HX_XF_N3MAX + 8)]; /* factors, c * n38 + q */
  __attribute__((aligned(32))) hx_v8 Dv[HX_XF_NMAX * HX_XF_NMAX];
  __attribute__((aligned(32))) float ones[HX_XF_N3MAX + 8];
} hx_xf_scr;

/* Step 1 of hx_xf_group: the 8 elements' nodes gathered into U, lane l
 * element e[l]. */
HX_XF_INLINE void hx_xf_gather(const int n, const hx_xf_args *a, hx_v8 *HX_RESTRICT U, const size_t *e) {
  const int n3 = n * n * n;
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
}

/* Step 2 of hx_xf_group: the gradients R, S, T of U; the one-element
 * kernels' sums: from 0, m increasing, fused (ax_cpu_t.h steps 1a, 1b; the
 * n = 4 kernel sums the same way), so each lane's result is bit for bit
 * theirs. */
HX_XF_INLINE void hx_xf_grad(const int n, const hx_v8 *HX_RESTRICT Dv, const hx_v8 *HX_RESTRICT U,
                             hx_v8 *HX_RESTRICT R, hx_v8 *HX_RESTRICT S, hx_v8 *HX_RESTRICT T) {
  const int n2 = n * n;
  const hx_v8 z = _mm256_setzero_ps();
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      hx_v8 t = z;
      for (int m = 0; m < n; m++) t = _mm256_fmadd_ps(Dv[k * n + m], U[ij + n2 * m], t);
      T[ij + n2 * k] = t;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        hx_v8 r = z, sv = z;
        for (int m = 0; m < n; m++) {
          r = _mm256_fmadd_ps(Dv[i * n + m], U[m + n * j + n2 * k], r);
          sv = _mm256_fmadd_ps(Dv[j * n + m], U[i + n * m + n2 * k], sv);
        }
        R[q] = r, S[q] = sv;
      }
}

/* Step 3 of hx_xf_group for a group of affine and scaled affine elements
 * (rec[l]: lane l's record, nafv of them scaled): the fluxes into R, S, T
 * and the mass term into O, g = (w_q kappa_q) m, mass (w_q lambda_q) m_6. */
HX_XF_INLINE void hx_xf_flux_affine(const int n, const hx_xf_args *a, hx_xf_scr *HX_RESTRICT W, const int *kind,
                                    const float *const *rec, const int nafv) {
  const int n3 = n * n * n, n38 = (n3 + 7) & ~7, cs = n3 + HX_AX_PAD, ncomp = a->ncomp;
  hx_v8 *HX_RESTRICT U = W->U, *HX_RESTRICT R = W->R, *HX_RESTRICT S = W->S, *HX_RESTRICT T = W->T,
        *HX_RESTRICT O = W->O, *HX_RESTRICT G = W->G;
  const hx_v8 z = _mm256_setzero_ps();
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
    HX_XF_FLUX(g0, g1, g2, g3, g4, g5, ur, us, ut, q);
    if (ncomp == 7) {
      const hx_v8 wl = nafv ? _mm256_mul_ps(wq, Lm[q]) : wq;
      O[q] = _mm256_mul_ps(_mm256_mul_ps(wl, M[6]), U[q]);
    } else {
      O[q] = n == 4 ? z : _mm256_mul_ps(z, U[q]); /* as the one-element kernels */
    }
  }
}

/* Step 3 of hx_xf_group for a group with general elements (all 8, or the
 * one mixed group lane by lane with the one-element math): the fluxes into
 * R, S, T and the mass term into O. */
HX_XF_INLINE void hx_xf_flux_general(const int n, const hx_xf_args *a, hx_xf_scr *HX_RESTRICT W, const int *kind,
                                     const float *const *rec, const int ngen) {
  const int n3 = n * n * n, n38 = (n3 + 7) & ~7, cs = n3 + HX_AX_PAD, ncomp = a->ncomp;
  hx_v8 *HX_RESTRICT U = W->U, *HX_RESTRICT R = W->R, *HX_RESTRICT S = W->S, *HX_RESTRICT T = W->T,
        *HX_RESTRICT O = W->O, *HX_RESTRICT G = W->G;
  const hx_v8 z = _mm256_setzero_ps();
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
    HX_XF_FLUX(g0, g1, g2, g3, g4, g5, ur, us, ut, q);
    O[q] = ncomp == 7 ? _mm256_mul_ps(G[6 * n38 + q], U[q]) : n == 4 ? z : _mm256_mul_ps(z, U[q]);
  }
}

/* Step 4 of hx_xf_group: the transposed gradients added to O in the
 * one-element kernels' order: the generic loop adds the t, then the r and
 * the s contractions (ax_cpu_t.h 2a, 2b); the n = 4 kernel adds r, s, t for
 * each m in turn. */
HX_XF_INLINE void hx_xf_grad_t(const int n, const hx_v8 *HX_RESTRICT Dv, const hx_v8 *HX_RESTRICT R,
                               const hx_v8 *HX_RESTRICT S, const hx_v8 *HX_RESTRICT T, hx_v8 *HX_RESTRICT O) {
  const int n2 = n * n;
  if (n == 4) {
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const int q = i + n * j + n2 * k;
          hx_v8 acc = O[q];
          for (int m = 0; m < n; m++) {
            acc = _mm256_fmadd_ps(Dv[m * n + i], R[m + n * j + n2 * k], acc);
            acc = _mm256_fmadd_ps(Dv[m * n + j], S[i + n * m + n2 * k], acc);
            acc = _mm256_fmadd_ps(Dv[m * n + k], T[i + n * j + n2 * m], acc);
          }
          O[q] = acc;
        }
  } else {
    for (int k = 0; k < n; k++)
      for (int ij = 0; ij < n2; ij++) {
        hx_v8 acc = O[ij + n2 * k];
        for (int m = 0; m < n; m++) acc = _mm256_fmadd_ps(Dv[m * n + k], T[ij + n2 * m], acc);
        O[ij + n2 * k] = acc;
      }
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const int q = i + n * j + n2 * k;
          hx_v8 acc = O[q];
          for (int m = 0; m < n; m++) acc = _mm256_fmadd_ps(Dv[m * n + i], R[m + n * j + n2 * k], acc);
          for (int m = 0; m < n; m++) acc = _mm256_fmadd_ps(Dv[m * n + j], S[i + n * m + n2 * k], acc);
          O[q] = acc;
        }
  }
}

/* The partials u.(A u) per lane into part[pk[l]] (before the transposes
 * reorder O): hx_ax_cpu_dot_f32 per lane: accumulator j takes the nodes
 * q = j mod 8 (then the tail q - nb), in increasing q, the exact products of
 * floats added in double; then its fixed tree. */
HX_XF_INLINE void hx_xf_part(const int n3, const hx_v8 *HX_RESTRICT U, const hx_v8 *HX_RESTRICT O, double *part,
                             const int32_t *pk, const int nv) {
  __m256d s0[8], s1[8];
  for (int j = 0; j < 8; j++) s0[j] = _mm256_setzero_pd(), s1[j] = _mm256_setzero_pd();
  const int nb8 = n3 / 8 * 8;
  for (int q = 0; q < n3; q++) {
    const int j = q < nb8 ? q & 7 : q - nb8;
    const __m128 u0 = _mm256_castps256_ps128(U[q]), u1 = _mm256_extractf128_ps(U[q], 1);
    const __m128 o0 = _mm256_castps256_ps128(O[q]), o1 = _mm256_extractf128_ps(O[q], 1);
    s0[j] = _mm256_add_pd(s0[j], _mm256_mul_pd(_mm256_cvtps_pd(u0), _mm256_cvtps_pd(o0)));
    s1[j] = _mm256_add_pd(s1[j], _mm256_mul_pd(_mm256_cvtps_pd(u1), _mm256_cvtps_pd(o1)));
  }
  const __m256d t0 = _mm256_add_pd(_mm256_add_pd(s0[0], s0[1]), _mm256_add_pd(s0[2], s0[3]));
  const __m256d t1 = _mm256_add_pd(_mm256_add_pd(s0[4], s0[5]), _mm256_add_pd(s0[6], s0[7]));
  const __m256d t2 = _mm256_add_pd(_mm256_add_pd(s1[0], s1[1]), _mm256_add_pd(s1[2], s1[3]));
  const __m256d t3 = _mm256_add_pd(_mm256_add_pd(s1[4], s1[5]), _mm256_add_pd(s1[6], s1[7]));
  double sd[8];
  _mm256_storeu_pd(sd, _mm256_add_pd(t0, t1)), _mm256_storeu_pd(sd + 4, _mm256_add_pd(t2, t3));
  for (int l = 0; l < nv; l++) part[pk[l]] = sd[l];
}

/* The valid lanes of O de-interleaved into their elements' L slots. */
HX_XF_INLINE void hx_xf_store(const int n3, hx_v8 *HX_RESTRICT O, float *out, const size_t *e, const int nv) {
  const int nb = n3 & ~7;
  for (int q = 0; q < nb; q += 8) {
    hx_avx2_tr8_ps(O + q);
    for (int l = 0; l < nv; l++) _mm256_storeu_ps(out + (size_t)n3 * e[l] + q, O[q + l]);
  }
  for (int q = nb; q < n3; q++) {
    const float *Oq = (const float *)(O + q);
    for (int l = 0; l < nv; l++) out[(size_t)n3 * e[l] + q] = Oq[l];
  }
}

/* One group of 8 elements (positions pk[l], elements e[l]); nv lanes valid:
 * gather, gradients, fluxes and mass term, transposed gradients, partials,
 * store. */
HX_XF_INLINE void hx_xf_group(const int n, const hx_xf_args *a, hx_xf_scr *HX_RESTRICT W, const int32_t *pk,
                              const size_t *e, const int nv) {
  const int n3 = n * n * n;
  hx_xf_gather(n, a, W->U, e);
  hx_xf_grad(n, W->Dv, W->U, W->R, W->S, W->T);
  int kind[8], ngen = 0, nafv = 0;
  const float *rec[8];
  for (int l = 0; l < 8; l++) {
    const int64_t eo = a->eoff[e[l]];
    kind[l] = (int)(eo & 3);
    rec[l] = a->geo + (eo >> 2);
    ngen += kind[l] == HX_AXK_GEN;
    nafv += kind[l] == HX_AXK_AFV;
  }
  if (ngen == 0)
    hx_xf_flux_affine(n, a, W, kind, rec, nafv);
  else
    hx_xf_flux_general(n, a, W, kind, rec, ngen);
  hx_xf_grad_t(n, W->Dv, W->R, W->S, W->T, W->O);
  if (a->part) hx_xf_part(n3, W->U, W->O, a->part, pk, nv);
  hx_xf_store(n3, W->O, a->out, e, nv);
}

/* D broadcast into the scratch; a helper of its own as in ax_xelem_cpu.c
 * (hx_xe_eo_table): clang outlines the OpenMP region into a function without
 * the target attribute and refuses AVX values built directly inside it. */
HX_XF_INLINE void hx_xf_broadcast(const int nn, const float *Df, hx_v8 *Dv) {
  for (int i = 0; i < nn; i++) Dv[i] = _mm256_set1_ps(Df[i]);
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
        hx_xf_broadcast((N) * (N), a->Df, W->Dv);                                            \
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
HX_XF_DEFINE(5)
HX_XF_DEFINE(6)
HX_XF_DEFINE(7)

/* The orders served (p), with the measurements that chose them in
 * docs/operator.md, "FP32 cross-element operator (issue 34)". */
static int hx_xf_fn(int p, int (**fn)(const hx_xf_args *)) {
  switch (p) {
    case 1: *fn = hx_xf_apply_2; return 1;
    case 2: *fn = hx_xf_apply_3; return 1;
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
 * p = 4 and 5 those were as fast or faster (general records, 16^3
 * elements, one thread, CPU time per apply, one-element against
 * cross-element: p = 2 0.35 against 0.18 ms, p = 4 1.56 against 1.70,
 * p = 5 2.98 against 2.80, p = 6 6.9 against 5.2). p = 3 is not served:
 * the hand-written n = 4 kernel was faster (affine 0.21 against 0.29). */
static int hx_xf_gen_rest(int p) { return p == 4 || p == 5; }

int hx_ax_xelem_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                          const float *u, float *w, double *part, int32_t *nrest, int32_t **rest) {
  int (*fn)(const hx_xf_args *) = NULL;
  *nrest = 0, *rest = NULL;
  if (!ax->isa || ax->mode != HX_GEO_PRECOMPUTED || !hx_xf_fn(ax->p, &fn)) return 0;
  if (hx_env_off("HEXCG_AX_XELEM")) return 0;
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
                  .Df = ax->d_basis32,
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
