/* Private to kernels/: the launchers of the element-wise tensor-product
 * transfer (kernels/tensor.c dispatches to them; math in hx_tensor_math.h). */
#ifndef HX_TENSOR_IMPL_H
#define HX_TENSOR_IMPL_H

#include "backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

int hx_tensor3_cpu(int a, int c, int32_t E, const double *A, const double *in, double *out);
int hx_tensor3_f32_cpu(int a, int c, int32_t E, const float *A, const float *in, float *out);
#ifdef HEXCG_HAVE_CUDA
int hx_tensor3_cuda(hx_backend b, int a, int c, int32_t E, const double *A, const double *in, double *out);
int hx_tensor3_f32_cuda(hx_backend b, int a, int c, int32_t E, const float *A, const float *in, float *out);
#endif

#ifdef __cplusplus
}
#endif
#endif
