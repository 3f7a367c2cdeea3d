/* Private to kernels/: the FDM launchers added after backend_impl.h's
 * (the scatter-fused element solves). kernels/fdm.c dispatches to them. */
#ifndef HX_FDM_IMPL_H
#define HX_FDM_IMPL_H

#include "backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Box solves whose input box of element e is x[map[e m^3 + pt]] (0 where
 * map < 0): the extended scatter fused into the element kernel. */
int hx_fdm_cpu_apply_map(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                         const int32_t *map, const double *x, double *w);
/* FP32 box solves (u or, with map != NULL, x[map]) and the weighted copies
 * across the precision boundary: to_f32 != 0: y (float) = (float)(wt * x)
 * from a double x; 0: y (double) = wt * (double)x from a float x. The
 * all-float copy rounds the weight to float. */
int hx_fdm_cpu_apply_f32(int m, int32_t nlist, const int32_t *list, const float *S, const float *L,
                         const float *u, float *w, const int32_t *map, const float *x);
/* Cross-element FP32 box solves (cpu/fdm_xelem_cpu.c): the first
 * floor(nlist / 8) * 8 elements of the list, one per lane of 8; returns how
 * many it solved (0 where it does not apply: m > 13, no AVX2,
 * HEXCG_CPU_ISA=generic or HEXCG_FDM_XELEM=0). */
int32_t hx_fdm_cpu_xelem_f32(int m, int32_t nlist, const int32_t *list, const float *S, const float *L,
                             const float *u, float *w, const int32_t *map, const float *x);
/* The grouped layout (hx_kernels_prec.h): hx_fdm_cpu_xelem_grouped_on says
 * whether the cross-element kernel runs for box size m. */
int hx_fdm_cpu_xelem_grouped_on(int m);
void hx_fdm_cpu_xelem_grouped_f32(int m, int32_t g0, int32_t ng, const float *Sg, const float *Lg,
                                  const int32_t *mapg, const float *x, float *wg);
void hx_fdm_cpu_wgather_mixed(int64_t n, const int32_t *idx, const double *wt, int to_f32, const void *x,
                              void *y);
void hx_fdm_cpu_wgather_f32(int64_t n, const int32_t *idx, const double *wt, const float *x, float *y);
/* hx_fdm_wscatter_p's scatter (y already zero); kind: 0 F64 -> F64, 1 F32 ->
 * F64, 2 F64 -> F32, 3 F32 -> F32 */
void hx_fdm_cpu_wscatter(int64_t n, const int32_t *idx, const double *wt, int kind, const void *x, void *y);
#ifdef HEXCG_HAVE_CUDA
int hx_fdm_cuda_wscatter(hx_backend b, int64_t n, const int32_t *idx, const double *wt, int kind, const void *x,
                         void *y);
int hx_fdm_cuda_apply_f32(hx_backend b, int m, int32_t nlist, const int32_t *list, const float *S,
                          const float *L, const float *u, float *w, const int32_t *map, const float *x);
int hx_fdm_cuda_wgather_mixed(hx_backend b, int64_t n, const int32_t *idx, const double *wt, int to_f32,
                              const void *x, void *y);
int hx_fdm_cuda_wgather_f32(hx_backend b, int64_t n, const int32_t *idx, const double *wt, const float *x,
                            float *y);
int hx_fdm_cuda_apply_map(hx_backend b, int m, int32_t nlist, const int32_t *list, const double *S,
                          const double *L, const int32_t *map, const double *x, double *w);
#endif

#ifdef __cplusplus
}
#endif
#endif
