/* The hand-written AVX2+FMA FP32 element kernel for n = 8 (p = 7), included
 * once by ax_cpu.c (x86 with GCC/clang only; needs hx_ax_cpu_args_f32,
 * hx_axf_u, hx_axf_dot, HX_AX_CHUNK from there). The twin of ax_cpu.c's
 * FP64 p = 7 kernel (hx_ax_cpu_avx2_pre_8): one row of 8 nodes is one
 * __m256, so each contraction needs half the vectors of the FP64 one:
 *  - the t- and s-direction contractions (and their transposes) by the
 *    even-odd decomposition of the centro-antisymmetric D (half the
 *    multiply-adds);
 *  - the r-direction contraction (and its transpose) register-blocked: the 8
 *    rows of a plane in 8 accumulators, the 8 rows of D^T loaded once (the
 *    FP64 kernel's is even-odd since 2026-12-01; here a whole line is one
 *    __m256, and even-odd would leave half-width vectors: not tried);
 *  - per k-plane the gradients of plane k, the transposed r, s contractions
 *    of plane k-1 and the fluxes of plane k (software pipeline, fr and fs
 *    double-buffered plane scratch), the next element's factors, u (or map)
 *    prefetched into L2 one plane per plane.
 * Records: general (ncomp blocks of 520 floats), affine (7 constants,
 * g = w_q m in float: hx_geo_affine_node_f32's products) and scaled affine
 * (the 7 constants, then kappa and, with ncomp = 7, lambda per node in
 * blocks of 520: hx_geo_scaled_node_f32's products (w_q kappa_q) m,
 * (w_q lambda_q) m_6). Fluxes in
 * hx_apply_g's order (products, then two adds, not fused). Not bitwise equal
 * to the generic loop (even-odd sums in another order); within float
 * round-off of it. */
#ifndef HX_AX_F32_AVX2_8_H
#define HX_AX_F32_AVX2_8_H

#include <immintrin.h>

#define HX_AXF_AVX2_FN static inline __attribute__((always_inline, target("avx2,fma")))

/* Co[i*rs + v..v+7] = (C[..] +) sum_m A[i][m] B[m*rs + v..v+7], i = 0..7,
 * for nv vectors of 8 columns, by the even-odd decomposition of A
 * (A[7-i][7-m] = -A[i][m]): E_m = B_m + B_{7-m}, O_m = B_m - B_{7-m},
 * P_i = sum_m pe[4i+m] E_m, Q_i = sum_m po[4i+m] O_m (m, i < 4),
 * C_i = Q_i + P_i, C_{7-i} = Q_i - P_i. */
HX_AXF_AVX2_FN void hx_axf_avx2_left8eo(const float *HX_RESTRICT pe, const float *HX_RESTRICT po,
                                        const float *HX_RESTRICT B, const int rs, const int nv, const float *C,
                                        float *Co, const int acc) {
#pragma GCC unroll 1
  for (int v = 0; v < 8 * nv; v += 8) {
    const float *HX_RESTRICT Pe = pe, *HX_RESTRICT Po = po;
    __asm__("" : "+r"(Pe), "+r"(Po)); /* keep the broadcasts as memory operands */
    __m256 P[4], Q[4];
    for (int m = 0; m < 4; m++) {
      const __m256 b0 = _mm256_loadu_ps(B + m * rs + v), b1 = _mm256_loadu_ps(B + (7 - m) * rs + v);
      const __m256 E = _mm256_add_ps(b0, b1), O = _mm256_sub_ps(b0, b1);
      for (int i = 0; i < 4; i++) {
        if (m == 0) {
          P[i] = _mm256_mul_ps(_mm256_broadcast_ss(Pe + 4 * i), E);
          Q[i] = _mm256_mul_ps(_mm256_broadcast_ss(Po + 4 * i), O);
        } else {
          P[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(Pe + 4 * i + m), E, P[i]);
          Q[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(Po + 4 * i + m), O, Q[i]);
        }
      }
    }
    for (int i = 0; i < 4; i++) {
      __m256 lo = _mm256_add_ps(Q[i], P[i]), hi = _mm256_sub_ps(Q[i], P[i]);
      if (acc) {
        lo = _mm256_add_ps(_mm256_loadu_ps(C + i * rs + v), lo);
        hi = _mm256_add_ps(_mm256_loadu_ps(C + (7 - i) * rs + v), hi);
      }
      _mm256_storeu_ps(Co + i * rs + v, lo);
      _mm256_storeu_ps(Co + (7 - i) * rs + v, hi);
    }
  }
}

/* C[l][.] (+)= sum_m U[8l + m] Bt[8m + .] for the 8 lines l of one plane:
 * 8 accumulators, the 8 rows of Bt loaded once, U broadcast. */
HX_AXF_AVX2_FN void hx_axf_avx2_right8(const float *HX_RESTRICT Bt, const float *HX_RESTRICT U,
                                       float *HX_RESTRICT C, const int acc) {
  const float *HX_RESTRICT Ur = U;
  __asm__("" : "+r"(Ur));
  __m256 c[8];
  for (int l = 0; l < 8; l++) c[l] = acc ? _mm256_loadu_ps(C + 8 * l) : _mm256_setzero_ps();
  for (int m = 0; m < 8; m++) {
    const __m256 b = _mm256_loadu_ps(Bt + 8 * m);
    for (int l = 0; l < 8; l++) c[l] = _mm256_fmadd_ps(_mm256_broadcast_ss(Ur + 8 * l + m), b, c[l]);
  }
  for (int l = 0; l < 8; l++) _mm256_storeu_ps(C + 8 * l, c[l]);
}

/* prefetch distance (list positions) and target cache level, as the FP64
 * kernel */
#define HX_AXF_PF_DIST 1
#define HX_AXF_PF_HINT _MM_HINT_T1

/* One n = 8 element, precomputed factors, record kind gk (HX_AXK_GEN,
 * HX_AXK_AFF or HX_AXK_AFV): ut of the whole element into ft (even-odd), then per plane
 * ur, us, the fluxes and out = M u, the transposed r, s contractions one
 * plane behind, finally out += D^T contraction of ft (even-odd). */
HX_AXF_AVX2_FN void hx_axf_avx2_pre8_elem(const int gk, const int ncomp, const float *HX_RESTRICT D,
                                          const float *HX_RESTRICT Dt, const float *HX_RESTRICT eo,
                                          const float *HX_RESTRICT w3, const float *HX_RESTRICT geo,
                                          const float *HX_RESTRICT u, float *HX_RESTRICT out,
                                          float *HX_RESTRICT ft, const int kind_next, const float *geo_next,
                                          const float *u_next, const int32_t *map_next) {
  const int cs = 512 + HX_AX_PAD;
  __attribute__((aligned(32))) float fr[2][64], fs[2][64];
  hx_axf_avx2_left8eo(eo, eo + 16, u, 64, 8, ft, ft, 0);
  __m256 m[7];
  if (gk != HX_AXK_GEN)
    for (int cc = 0; cc < 7; cc++) m[cc] = _mm256_broadcast_ss(geo + cc);
#pragma GCC unroll 1
  for (int k = 0; k <= 8; k++) {
    const int b = k & 1;
    if (k < 8) {
      hx_axf_avx2_right8(Dt, u + 64 * k, fr[b], 0);
      hx_axf_avx2_left8eo(eo, eo + 16, u + 64 * k, 8, 1, fs[b], fs[b], 0);
    }
    if (k > 0) {
      hx_axf_avx2_right8(D, fr[b ^ 1], out + 64 * (k - 1), 1);
      hx_axf_avx2_left8eo(eo + 32, eo + 48, fs[b ^ 1], 8, 1, out + 64 * (k - 1), out + 64 * (k - 1), 1);
    }
    if (k == 8) break;
    const float *HX_RESTRICT uk = u + 64 * k;
    const float *HX_RESTRICT gk0 = geo + 64 * k;
    float *HX_RESTRICT ok = out + 64 * k, *HX_RESTRICT tk = ft + 64 * k;
    float *HX_RESTRICT ur = fr[b], *HX_RESTRICT us = fs[b];
#pragma GCC unroll 1
    for (int q = 0; q < 64; q += 8) {
      if (!(q & 8)) { /* one 64-byte line per stream every 16 nodes */
        if (kind_next == HX_AXK_GEN) {
          const float *pg = geo_next + 64 * k + q;
          for (int cc = 0; cc < ncomp; cc++) _mm_prefetch((const char *)(pg + cc * cs), HX_AXF_PF_HINT);
        } else if (kind_next == HX_AXK_AFV) {
          const float *pg = geo_next + HX_AX_MEANS + 64 * k + q;
          _mm_prefetch((const char *)pg, HX_AXF_PF_HINT);
          if (ncomp == 7) _mm_prefetch((const char *)(pg + cs), HX_AXF_PF_HINT);
        }
        if (u_next) _mm_prefetch((const char *)(u_next + 64 * k + q), HX_AXF_PF_HINT);
        if (map_next) _mm_prefetch((const char *)(map_next + 64 * k + q), HX_AXF_PF_HINT);
      }
      const __m256 vr = _mm256_load_ps(ur + q), vs = _mm256_load_ps(us + q), vt = _mm256_loadu_ps(tk + q);
      __m256 g0, g1, g2, g3, g4, g5, gm = _mm256_setzero_ps();
      if (gk == HX_AXK_GEN) {
        g0 = _mm256_loadu_ps(gk0 + q), g1 = _mm256_loadu_ps(gk0 + cs + q);
        g2 = _mm256_loadu_ps(gk0 + 2 * cs + q), g3 = _mm256_loadu_ps(gk0 + 3 * cs + q);
        g4 = _mm256_loadu_ps(gk0 + 4 * cs + q), g5 = _mm256_loadu_ps(gk0 + 5 * cs + q);
        if (ncomp == 7) gm = _mm256_loadu_ps(gk0 + 6 * cs + q);
      } else {
        /* AFF: g = w_q m; AFV: g = (w_q kappa_q) m, mass (w_q lambda_q) m_6 */
        const __m256 wv = _mm256_loadu_ps(w3 + 64 * k + q);
        const float *kq = geo + HX_AX_MEANS + 64 * k + q;
        const __m256 wk = gk == HX_AXK_AFV ? _mm256_mul_ps(wv, _mm256_loadu_ps(kq)) : wv;
        g0 = _mm256_mul_ps(wk, m[0]), g1 = _mm256_mul_ps(wk, m[1]), g2 = _mm256_mul_ps(wk, m[2]);
        g3 = _mm256_mul_ps(wk, m[3]), g4 = _mm256_mul_ps(wk, m[4]), g5 = _mm256_mul_ps(wk, m[5]);
        if (ncomp == 7)
          gm = _mm256_mul_ps(gk == HX_AXK_AFV ? _mm256_mul_ps(wv, _mm256_loadu_ps(kq + cs)) : wv, m[6]);
      }
      _mm256_store_ps(ur + q, _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g0, vr), _mm256_mul_ps(g1, vs)),
                                            _mm256_mul_ps(g2, vt)));
      _mm256_store_ps(us + q, _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g1, vr), _mm256_mul_ps(g3, vs)),
                                            _mm256_mul_ps(g4, vt)));
      _mm256_storeu_ps(tk + q, _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g2, vr), _mm256_mul_ps(g4, vs)),
                                             _mm256_mul_ps(g5, vt)));
      const __m256 mu = ncomp == 7 ? _mm256_mul_ps(gm, _mm256_loadu_ps(uk + q)) : _mm256_setzero_ps();
      _mm256_storeu_ps(ok + q, mu);
    }
  }
  hx_axf_avx2_left8eo(eo + 32, eo + 48, ft, 64, 8, out, out, 1);
}

HX_AX_AVX2_ATTR static void hx_ax_cpu_avx2_pre_8_f32(const hx_ax_cpu_args_f32 *a) {
  const size_t n3 = 512;
  const int chunk = HX_AX_CHUNK(8);
#pragma omp parallel
  {
    /* per-thread copies of D, D^T and the even-odd tables (the broadcasts
     * address the stack frame), the t-fluxes and the gathered u */
    __attribute__((aligned(64))) float D[64], Dt[64], eo8[64], ft[512], ub[512];
    memcpy(D, a->D, sizeof D);
    memcpy(Dt, a->Dt, sizeof Dt);
    memcpy(eo8, a->eo, sizeof eo8);
#pragma omp for schedule(dynamic, chunk)
    for (int32_t k = 0; k < a->nlist; k++) {
      const size_t e = (size_t)(a->list ? a->list[k] : k);
      const size_t en = k + HX_AXF_PF_DIST < a->nlist
                            ? (size_t)(a->list ? a->list[k + HX_AXF_PF_DIST] : k + HX_AXF_PF_DIST)
                            : e;
      const int64_t eo = a->eoff[e], eon = a->eoff[en];
      const float *ge = a->geo + (eo >> 2), *gn = a->geo + (eon >> 2);
      float *oe = a->out + n3 * e;
      const int kn = (int)(eon & 3);
      /* the fused and the plain input in separate copies (see HX_AX_CPU_LOOP) */
#define HX_AXF8_ELEM(UE, UN, MN)                                                                      \
  do {                                                                                                \
    if ((eo & 3) == HX_AXK_AFF)                                                                       \
      hx_axf_avx2_pre8_elem(HX_AXK_AFF, a->ncomp, D, Dt, eo8, a->w3, ge, UE, oe, ft, kn, gn, UN, MN); \
    else if ((eo & 3) == HX_AXK_AFV)                                                                  \
      hx_axf_avx2_pre8_elem(HX_AXK_AFV, a->ncomp, D, Dt, eo8, a->w3, ge, UE, oe, ft, kn, gn, UN, MN); \
    else                                                                                              \
      hx_axf_avx2_pre8_elem(HX_AXK_GEN, a->ncomp, D, Dt, eo8, a->w3, ge, UE, oe, ft, kn, gn, UN, MN); \
    if (a->part) a->part[k] = hx_ax_cpu_dot_f32((int)n3, UE, oe);                                     \
  } while (0)
      if (a->map) {
        const float *ue = hx_ax_cpu_u_f32(n3, a, e, ub);
        if (en != e) hx_axf_pf_g(8, n3, a, en);
        HX_AXF8_ELEM(ue, NULL, a->map + n3 * en);
      } else {
        HX_AXF8_ELEM(a->u + n3 * e, a->u + n3 * en, NULL);
      }
#undef HX_AXF8_ELEM
    }
  }
}

#endif
