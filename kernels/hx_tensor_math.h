/* Per-entry math of the element-wise tensor-product transfer
 * out_e = (A x A x A) in_e (kernels/tensor.c), shared by the CPU loop
 * (cpu/tensor_cpu.c) and the CUDA kernel (cuda/tensor_cuda.cu), so that the
 * two backends sum in the same order.
 *
 * A is c x a, row-major (A[r*a + i]); in has a^3 values of one element
 * (i + a*(j + a*k), i along r), out c^3. Three contractions, one direction
 * each:
 *   t1[r + c*(j + a*k)] = sum_i A[r,i] in[i + a*(j + a*k)]     (c x a x a)
 *   t2[r + c*(q + c*k)] = sum_j A[q,j] t1[r + c*(j + a*k)]     (c x c x a)
 *   out[r + c*(q + c*s)] = sum_k A[s,k] t2[r + c*(q + c*k)]    (c x c x c)
 * With A the 1D Lagrange interpolation matrix between two sets of GLL points
 * this is the interpolation of an element's values between two orders; with
 * its transpose, the transpose of that map (docs/preconditioner.md,
 * "Transfers between orders"). */
#ifndef HX_TENSOR_MATH_H
#define HX_TENSOR_MATH_H

#include "hx_hd.h"

/* largest number of points per direction (order 15) */
#define HX_TENSOR_NMAX 16

/* sum_{i<a} A[i] x[i*stride], in increasing i */
static inline HX_HD double hx_tensor_dot(int a, const double *HX_RESTRICT A, const double *HX_RESTRICT x,
                                         int stride) {
  double s = 0.0;
  for (int i = 0; i < a; i++) s += A[i] * x[i * stride];
  return s;
}

/* entry (r, j, k) of stage 1 (pt = r + c*(j + a*k)) */
static inline HX_HD double hx_tensor_stage1(int a, int c, const double *HX_RESTRICT A,
                                            const double *HX_RESTRICT in, int pt) {
  const int r = pt % c, jk = pt / c;
  return hx_tensor_dot(a, A + r * a, in + a * jk, 1);
}

/* entry (r, q, k) of stage 2 (pt = r + c*(q + c*k)) from t1 */
static inline HX_HD double hx_tensor_stage2(int a, int c, const double *HX_RESTRICT A,
                                            const double *HX_RESTRICT t1, int pt) {
  const int r = pt % c, q = (pt / c) % c, k = pt / (c * c);
  return hx_tensor_dot(a, A + q * a, t1 + r + c * a * k, c);
}

/* entry (r, q, s) of stage 3 (pt = r + c*(q + c*s)) from t2 */
static inline HX_HD double hx_tensor_stage3(int a, int c, const double *HX_RESTRICT A,
                                            const double *HX_RESTRICT t2, int pt) {
  const int rq = pt % (c * c), s = pt / (c * c);
  return hx_tensor_dot(a, A + s * a, t2 + rq, c * c);
}

#endif
