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

/* hx_tensor_dot, hx_tensor_stage1..3 for double (the FP64 transfer, bit for
 * bit as before) and float (_f32; under C++ also the plain names, as
 * overloads, for the CUDA kernel templated on the type): hx_tensor_math_t.h */
#define HX_TEMPLATE "hx_tensor_math_t.h"
#include "hx_instantiate.h"

#endif
