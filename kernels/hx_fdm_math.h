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

/* The functions are written once for a value type in hx_fdm_math_t.h and
 * instantiated for double (hx_fdm_dot, hx_fdm_inv_diag, hx_fdm_contract,
 * hx_fdm_elem_solve, hx_fdm_wgather_1) and for float (the same names with
 * _f32: the FP32 preconditioner). Under C++ (the CUDA kernel, templated on
 * the type) the float instantiation also exists under the plain names, as
 * overloads. */
#define HX_TEMPLATE "hx_fdm_math_t.h"
#include "hx_instantiate.h"

/* The precision boundary of the FP32 preconditioner, fused into the
 * weighted copies: the FP64 residual is weighted in double and rounded to
 * float once (entry), the float correction widened exactly and weighted in
 * double (exit). */
HX_FDM_INLINE HX_HD float hx_fdm_wgather_1_to_f32(const double *HX_RESTRICT x, int idx, double w) {
  return idx >= 0 ? (float)(w * x[idx]) : 0.0f;
}
HX_FDM_INLINE HX_HD double hx_fdm_wgather_1_from_f32(const float *HX_RESTRICT x, int idx, double w) {
  return idx >= 0 ? w * (double)x[idx] : 0.0;
}

#endif
