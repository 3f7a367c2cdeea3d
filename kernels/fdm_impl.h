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
#ifdef HEXCG_HAVE_CUDA
int hx_fdm_cuda_apply_map(hx_backend b, int m, int32_t nlist, const int32_t *list, const double *S,
                          const double *L, const int32_t *map, const double *x, double *w);
#endif

#ifdef __cplusplus
}
#endif
#endif
