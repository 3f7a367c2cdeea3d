/* The AVX-512 FP64 element kernel for n = 8 (p = 7), precomputed factors,
 * included once by ax_cpu.c (x86 with GCC/clang; needs hx_ax_cpu_args,
 * HX_AX_PRE8_LOOP, HX_AX_PF_* from there); run where
 * hx_cpu_avx512() says so instead of hx_ax_cpu_avx2_pre_8. One line of 8
 * nodes is one __m512d, so the kernel is the AVX2 one (same pipeline over
 * the planes, same prefetches, same fluxes) with half the vectors:
 *  - t and s contractions and their transposes by the even-odd
 *    decomposition, the coefficients broadcast from scalar tables (a memory
 *    operand of the multiply-add: no shuffle);
 *  - the r contraction (along a line, where AVX2 broadcast the line's
 *    entries into even-odd sums) as the plain product: line l of the output
 *    is sum_m u[l][m] times row m of D^T, 8 multiply-adds of 8 lanes with
 *    u[l][m] broadcast from memory; its transpose with the rows of D.
 * The fluxes are the AVX2 kernel's, lane by lane; the r contraction sums
 * its 8 terms in another order than the even-odd one, so the result agrees
 * with the AVX2 kernel to round-off, not bit for bit. */
#ifndef HX_AX_AVX512_8_H
#define HX_AX_AVX512_8_H

#include <immintrin.h>

#define HX_AX512_FN static inline __attribute__((always_inline, target(HX_AVX512_TARGET)))

/* Co[i*rs + v..v+7] (+)= sum_m A[i][m] B[m*rs + v..v+7], i = 0..7, for nv
 * vectors of 8 columns, A centro-antisymmetric, by the even-odd
 * decomposition (pe[4i+m], po[4i+m] as in hx_ax_avx2_left8eo, scalars). */
HX_AX512_FN void hx_ax512_left8eo(const double *HX_RESTRICT pe, const double *HX_RESTRICT po,
                                  const double *HX_RESTRICT B, const int rs, const int nv, const double *C,
                                  double *Co, const int acc) {
#pragma GCC unroll 1
  for (int v = 0; v < 8 * nv; v += 8) {
    __m512d P[4], Q[4];
    for (int m = 0; m < 4; m++) {
      const __m512d b0 = _mm512_loadu_pd(B + m * rs + v), b1 = _mm512_loadu_pd(B + (7 - m) * rs + v);
      const __m512d E = _mm512_add_pd(b0, b1), O = _mm512_sub_pd(b0, b1);
      for (int i = 0; i < 4; i++) {
        if (m == 0) {
          P[i] = _mm512_mul_pd(_mm512_set1_pd(pe[4 * i]), E);
          Q[i] = _mm512_mul_pd(_mm512_set1_pd(po[4 * i]), O);
        } else {
          P[i] = _mm512_fmadd_pd(_mm512_set1_pd(pe[4 * i + m]), E, P[i]);
          Q[i] = _mm512_fmadd_pd(_mm512_set1_pd(po[4 * i + m]), O, Q[i]);
        }
      }
    }
    for (int i = 0; i < 4; i++) {
      __m512d lo = _mm512_add_pd(Q[i], P[i]), hi = _mm512_sub_pd(Q[i], P[i]);
      if (acc) {
        lo = _mm512_add_pd(_mm512_loadu_pd(C + i * rs + v), lo);
        hi = _mm512_add_pd(_mm512_loadu_pd(C + (7 - i) * rs + v), hi);
      }
      _mm512_storeu_pd(Co + i * rs + v, lo);
      _mm512_storeu_pd(Co + (7 - i) * rs + v, hi);
    }
  }
}

/* C[l][.] (+)= sum_m U[8l + m] Bt[8m + .] for the 8 lines l of one plane:
 * 8 accumulators, the 8 rows of Bt loaded once, U[8l + m] broadcast. */
HX_AX512_FN void hx_ax512_right8(const double *HX_RESTRICT Bt, const double *HX_RESTRICT U, double *HX_RESTRICT C,
                                 const int acc) {
  __m512d b[8], c[8];
  for (int m = 0; m < 8; m++) b[m] = _mm512_load_pd(Bt + 8 * m);
  for (int l = 0; l < 8; l++) c[l] = acc ? _mm512_loadu_pd(C + 8 * l) : _mm512_setzero_pd();
  for (int m = 0; m < 8; m++)
    for (int l = 0; l < 8; l++) c[l] = _mm512_fmadd_pd(_mm512_set1_pd(U[8 * l + m]), b[m], c[l]);
  for (int l = 0; l < 8; l++) _mm512_storeu_pd(C + 8 * l, c[l]);
}

/* The tables of hx_ax512_pre8_elem from D: tb[0..31] pe, po of D (4i+m),
 * tb[32..63] of D^T, tb[64..127] D^T by rows (DT[8m + i] = D[8i + m]: the
 * r gradient), tb[128..191] D by rows (its transpose). */
static void hx_ax512_tables(const double *D, double *tb) {
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < 4; i++)
      for (int m = 0; m < 4; m++) {
        const double a0 = t ? D[8 * m + i] : D[8 * i + m], a1 = t ? D[8 * (7 - m) + i] : D[8 * i + 7 - m];
        tb[32 * t + 4 * i + m] = 0.5 * (a0 + a1);
        tb[32 * t + 16 + 4 * i + m] = 0.5 * (a0 - a1);
      }
  for (int i = 0; i < 8; i++)
    for (int m = 0; m < 8; m++) {
      tb[64 + 8 * m + i] = D[8 * i + m];
      tb[128 + 8 * i + m] = D[8 * i + m];
    }
}

/* One n = 8 element, precomputed factors, record kind gk: the AVX2
 * kernel's steps (hx_ax_avx2_pre8_elem) on 8-lane vectors. */
HX_AX512_FN void hx_ax512_pre8_elem(const int gk, const int ncomp, const double *HX_RESTRICT tb,
                                    const double *HX_RESTRICT w3, const double *HX_RESTRICT geo,
                                    const double *HX_RESTRICT u, double *HX_RESTRICT out, double *HX_RESTRICT ft,
                                    const int kind_next, const double *geo_next, const double *u_next,
                                    const int32_t *map_next) {
  const int cs = 512 + HX_AX_PAD, cs32 = hx_ax_cs32(512);
  const float *dev = (const float *)(geo + HX_AX_MEANS);
  __attribute__((aligned(64))) double fr[2][64], fs[2][64];
  __m512d mb[7];
  for (int cc = 0; cc < 7; cc++) mb[cc] = _mm512_set1_pd(geo[cc]);
  hx_ax512_left8eo(tb, tb + 16, u, 64, 8, ft, ft, 0);
#pragma GCC unroll 1
  for (int k = 0; k <= 8; k++) {
    const int b = k & 1;
    if (k < 8) {
      hx_ax512_right8(tb + 64, u + 64 * k, fr[b], 0);
      hx_ax512_left8eo(tb, tb + 16, u + 64 * k, 8, 1, fs[b], fs[b], 0);
    }
    if (k > 0) {
      hx_ax512_right8(tb + 128, fr[b ^ 1], out + 64 * (k - 1), ncomp == 7);
      hx_ax512_left8eo(tb + 32, tb + 48, fs[b ^ 1], 8, 1, out + 64 * (k - 1), out + 64 * (k - 1), 1);
    }
    if (k == 8) break;
    const double *HX_RESTRICT uk = u + 64 * k;
    const double *HX_RESTRICT gk0 = geo + 64 * k;
    double *HX_RESTRICT ok = out + 64 * k, *HX_RESTRICT tk = ft + 64 * k;
    double *HX_RESTRICT ur = fr[b], *HX_RESTRICT us = fs[b];
#pragma GCC unroll 1
    for (int q = 0; q < 64; q += 8) {
      const double *pg = geo_next + 64 * k + q;
      if (kind_next == HX_AXK_GEN) {
        for (int cc = 0; cc < 6; cc++) _mm_prefetch((const char *)(pg + cc * cs), HX_AX_PF_HINT);
        if (ncomp == 7) _mm_prefetch((const char *)(pg + 6 * cs), HX_AX_PF_HINT);
      } else if (kind_next == HX_AXK_SPL && !(q & 8)) {
        const float *pd = (const float *)(geo_next + HX_AX_MEANS) + 64 * k + q;
        for (int cc = 0; cc < ncomp; cc++) _mm_prefetch((const char *)(pd + cc * cs32), HX_AX_PF_HINT);
      }
      if (u_next) _mm_prefetch((const char *)(u_next + 64 * k + q), HX_AX_PF_HINT);
      if (map_next && !(q & 8)) _mm_prefetch((const char *)(map_next + 64 * k + q), HX_AX_PF_HINT);
      const __m512d vr = _mm512_load_pd(ur + q), vs = _mm512_load_pd(us + q), vt = _mm512_loadu_pd(tk + q);
      if (gk == HX_AXK_GEN) {
        const __m512d g0 = _mm512_loadu_pd(gk0 + q), g1 = _mm512_loadu_pd(gk0 + cs + q);
        const __m512d g2 = _mm512_loadu_pd(gk0 + 2 * cs + q), g3 = _mm512_loadu_pd(gk0 + 3 * cs + q);
        const __m512d g4 = _mm512_loadu_pd(gk0 + 4 * cs + q), g5 = _mm512_loadu_pd(gk0 + 5 * cs + q);
        _mm512_store_pd(ur + q, _mm512_fmadd_pd(g2, vt, _mm512_fmadd_pd(g1, vs, _mm512_mul_pd(g0, vr))));
        _mm512_store_pd(us + q, _mm512_fmadd_pd(g4, vt, _mm512_fmadd_pd(g3, vs, _mm512_mul_pd(g1, vr))));
        _mm512_storeu_pd(tk + q, _mm512_fmadd_pd(g5, vt, _mm512_fmadd_pd(g4, vs, _mm512_mul_pd(g2, vr))));
        if (ncomp == 7)
          _mm512_storeu_pd(ok + q, _mm512_mul_pd(_mm512_loadu_pd(gk0 + 6 * cs + q), _mm512_loadu_pd(uk + q)));
        continue;
      }
      const __m512d wv = _mm512_loadu_pd(w3 + 64 * k + q);
      const __m512d wk = gk == HX_AXK_AFV ? _mm512_mul_pd(wv, _mm512_loadu_pd(geo + HX_AX_MEANS + 64 * k + q)) : wv;
      const __m512d wr = _mm512_mul_pd(wk, vr), ws = _mm512_mul_pd(wk, vs), wt = _mm512_mul_pd(wk, vt);
      __m512d m[7];
      for (int cc = 0; cc < 7; cc++) {
        m[cc] = mb[cc];
        if (gk == HX_AXK_SPL && (cc < 6 || ncomp == 7))
          m[cc] = _mm512_add_pd(m[cc], _mm512_cvtps_pd(_mm256_loadu_ps(dev + cc * cs32 + 64 * k + q)));
      }
      _mm512_store_pd(ur + q, _mm512_fmadd_pd(m[2], wt, _mm512_fmadd_pd(m[1], ws, _mm512_mul_pd(m[0], wr))));
      _mm512_store_pd(us + q, _mm512_fmadd_pd(m[4], wt, _mm512_fmadd_pd(m[3], ws, _mm512_mul_pd(m[1], wr))));
      _mm512_storeu_pd(tk + q, _mm512_fmadd_pd(m[5], wt, _mm512_fmadd_pd(m[4], ws, _mm512_mul_pd(m[2], wr))));
      if (ncomp == 7 && gk == HX_AXK_AFV)
        _mm512_storeu_pd(
            ok + q,
            _mm512_mul_pd(
                _mm512_mul_pd(_mm512_mul_pd(wv, _mm512_loadu_pd(geo + HX_AX_MEANS + cs + 64 * k + q)), m[6]),
                _mm512_loadu_pd(uk + q)));
      else if (ncomp == 7)
        _mm512_storeu_pd(ok + q, _mm512_mul_pd(m[6], _mm512_mul_pd(wv, _mm512_loadu_pd(uk + q))));
    }
  }
  hx_ax512_left8eo(tb + 32, tb + 48, ft, 64, 8, out, out, 1);
}

HX_AX_PRE8_LOOP(hx_ax_cpu_avx512_pre_8, __attribute__((target(HX_AVX512_TARGET))), 192, hx_ax512_tables,
                hx_ax512_pre8_elem)

#endif
