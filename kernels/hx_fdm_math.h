/* Per-element math of the fast-diagonalisation (FDM) box solve, shared by
 * the CPU loop (cpu/fdm_cpu.c) and the CUDA kernel (cuda/fdm_cuda.cu). See
 * docs/fdm.md.
 *
 * Box of m = p + 3 points per direction (indices -1..p+1 stored at 0..m-1),
 * point (a, b, c) of element e at e*m^3 + a + m*(b + m*c).
 * Per element and direction d (0: r, 1: s, 2: t):
 *   S: m x m at S + (3e + d)*m*m, row i = generalized eigenvector i
 *      (S[i*m + a] = component a), zero rows for absent 1D points;
 *   L: m eigenvalues at L + (3e + d)*m, with kappa folded in and lambda
 *      added to the r direction, so the box inverse
 *      (Sz x Sy x Sx)^T diag(1 / (L_r + L_s + L_t)) (Sz x Sy x Sx) reads
 *      t[i,j,k] = sum_{a,b,c} S_r[i,a] S_s[j,b] S_t[k,c] u[a,b,c]
 *      t[i,j,k] /= L_r[i] + L_s[j] + L_t[k]        (0 where the sum is <= 0)
 *      w[a,b,c] = sum_{i,j,k} S_r[i,a] S_s[j,b] S_t[k,c] t[i,j,k].
 * Both backends contract in the same order (r, s, t forward, t, s, r back)
 * with the same dot product. */
#ifndef HX_FDM_MATH_H
#define HX_FDM_MATH_H

#include "hx_hd.h"

#include <stdint.h>

/* GCC: force inlining so the CPU instantiations see a constant m (and the
 * AVX2 one compiles the math for its own target) */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define HX_FDM_INLINE static inline __attribute__((always_inline))
#else
#define HX_FDM_INLINE static inline
#endif

/* largest order and box size supported */
#define HX_FDM_PMAX 15
#define HX_FDM_MMAX (HX_FDM_PMAX + 3)

/* sum_{q<m} a[q*sa] * x[q*sx], in increasing q */
HX_FDM_INLINE HX_HD double hx_fdm_dot(int m, const double *HX_RESTRICT a, int sa, const double *HX_RESTRICT x,
                                      int sx) {
  double s = 0.0;
  for (int q = 0; q < m; q++) s += a[q * sa] * x[q * sx];
  return s;
}

/* 1 / (lr + ls + lt), 0 when the sum is not positive (the zero mode of a
 * pure-Neumann box with lambda = 0: pseudo-inverse) */
HX_FDM_INLINE HX_HD double hx_fdm_inv_diag(double lr, double ls, double lt) {
  const double d = lr + ls + lt;
  return d > 0.0 ? 1.0 / d : 0.0;
}

/* One 1D contraction over the whole box along direction d, forward
 * (out[i] = sum_q S[i*m + q] in[q]) or back (out[a] = sum_q S[q*m + a] in[q]).
 * The coefficients are first copied to T[q*m + i] (coefficient of in[q] in
 * out[i]), then whole contiguous runs of the box are updated per term
 * (vectorisable), every point still summed over q = 0..m-1 in increasing
 * order, as hx_fdm_dot does. in and out must not alias. */
HX_FDM_INLINE HX_HD void hx_fdm_contract(int m, int d, int back, const double *HX_RESTRICT S,
                                         const double *HX_RESTRICT in, double *HX_RESTRICT out) {
  double T[HX_FDM_MMAX * HX_FDM_MMAX];
  for (int q = 0; q < m; q++)
    for (int i = 0; i < m; i++) T[q * m + i] = back ? S[q * m + i] : S[i * m + q];
  if (d == 0) {
    for (int bc = 0; bc < m * m; bc++) {
      double *HX_RESTRICT y = out + m * bc;
      const double *HX_RESTRICT x = in + m * bc;
      for (int i = 0; i < m; i++) y[i] = 0.0 + T[i] * x[0];
      for (int q = 1; q < m; q++)
        for (int i = 0; i < m; i++) y[i] += T[q * m + i] * x[q];
    }
    return;
  }
  const int len = d == 1 ? m : m * m, nouter = d == 1 ? m : 1;
  for (int o = 0; o < nouter; o++)
    for (int i = 0; i < m; i++) {
      double *HX_RESTRICT y = out + (int64_t)o * m * len + i * len;
      const double *HX_RESTRICT x = in + (int64_t)o * m * len;
      for (int v = 0; v < len; v++) y[v] = 0.0 + T[i] * x[v];
      for (int q = 1; q < m; q++) {
        const double sv = T[q * m + i];
        const double *HX_RESTRICT xq = x + q * len;
        for (int v = 0; v < len; v++) y[v] += sv * xq[v];
      }
    }
}

/* Whole-element box solve w = A_box^{-1} u on one thread (CPU). S3: the 3
 * matrices of the element, L3: its 3 m eigenvalues, t: m^3 scratch. u and
 * w must not alias; u is not modified. */
HX_FDM_INLINE HX_HD void hx_fdm_elem_solve(int m, const double *HX_RESTRICT S3, const double *HX_RESTRICT L3,
                                           const double *HX_RESTRICT u, double *HX_RESTRICT w,
                                           double *HX_RESTRICT t) {
  const int m2 = m * m;
  hx_fdm_contract(m, 0, 0, S3, u, t);
  hx_fdm_contract(m, 1, 0, S3 + m2, t, w);
  hx_fdm_contract(m, 2, 0, S3 + 2 * m2, w, t);
  for (int c = 0; c < m; c++)
    for (int b = 0; b < m; b++)
      for (int a = 0; a < m; a++) t[a + m * (b + m * c)] *= hx_fdm_inv_diag(L3[a], L3[m + b], L3[2 * m + c]);
  hx_fdm_contract(m, 2, 1, S3 + 2 * m2, t, w);
  hx_fdm_contract(m, 1, 1, S3 + m2, w, t);
  hx_fdm_contract(m, 0, 1, S3, t, w);
}

/* y = w * x[idx] (0 where idx < 0): the weighted copies between the fine and
 * the extended G-vectors */
HX_FDM_INLINE HX_HD double hx_fdm_wgather_1(const double *HX_RESTRICT x, int idx, double w) {
  return idx >= 0 ? w * x[idx] : 0.0;
}

#endif
