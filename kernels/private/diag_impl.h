/* Private to kernels/: the CPU and CUDA halves of hx_array_diag_add_list_p
 * (kernels/diag.c). Sizes and pointers are checked by the caller (m >= 1,
 * 0 <= mred <= m). xrx != NULL: sum_{j<mred} r_j x_{idx_j}^2 written there
 * (host memory on the cpu, backend memory on cuda), in a fixed order. */
#ifndef HX_DIAG_IMPL_H
#define HX_DIAG_IMPL_H

#include "backend_impl.h"
#include "hx_kernels_prec.h"

#ifdef __cplusplus
extern "C" {
#endif

void hx_cpu_diag_add_list(int64_t m, int64_t mred, const int32_t *idx, const double *r, const double *x, double *y,
                          double *xrx);
void hx_cpu_diag_add_list_f32(int64_t m, int64_t mred, const int32_t *idx, const float *r, const float *x, float *y,
                              double *xrx);
#ifdef HEXCG_HAVE_CUDA
int hx_cuda_diag_add_list(hx_backend b, int64_t m, int64_t mred, const int32_t *idx, const double *r,
                          const double *x, double *y, double *d_xrx);
int hx_cuda_diag_add_list_f32(hx_backend b, int64_t m, int64_t mred, const int32_t *idx, const float *r,
                              const float *x, float *y, double *d_xrx);
#endif

#ifdef __cplusplus
}
#endif
#endif
