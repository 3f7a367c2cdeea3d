/* Private to kernels/: per-backend entry points of the streaming kernels
 * (kernels/stream.c dispatches to these). No CUDA headers here. */
#ifndef HX_STREAM_IMPL_H
#define HX_STREAM_IMPL_H

#include "backend_impl.h"
#include "hx_stream_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU (kernels/cpu/stream_cpu.c). Sizes are checked by the caller: n >= 1,
 * 0 <= nred <= n. */
int hx_cpu_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                     const double *w, double alpha, double *rr);
int hx_cpu_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                    double *rr);
int hx_cpu_xpay(int64_t n, double *p, const double *z, double beta);
int hx_cpu_pointwise_mult(int64_t n, double *y, const double *x, const double *z);
int hx_cpu_norm2sq(hx_queue q, int64_t n, const double *x, double *result);

#ifdef HEXCG_HAVE_CUDA
/* CUDA (kernels/cuda/stream_cuda.cu) */
int hx_cuda_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                      const double *w, double alpha, double *rr);
int hx_cuda_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                     double *rr);
int hx_cuda_xpay(hx_queue q, int64_t n, double *p, const double *z, double beta);
int hx_cuda_pointwise_mult(hx_queue q, int64_t n, double *y, const double *x, const double *z);
int hx_cuda_norm2sq(hx_queue q, int64_t n, const double *x, double *result);
/* A pair of CUDA events (start, stop) for timing work on the backend's
 * stream. *ev is an opaque pointer owned by the caller. */
int hx_cuda_event_pair_create(void **ev);
int hx_cuda_event_pair_destroy(void *ev);
/* record event `which` (0 = start, 1 = stop) on the backend's work stream */
int hx_cuda_event_pair_record(hx_backend b, void *ev, int which);
/* wait for the stop event; seconds from start to stop */
int hx_cuda_event_elapsed(void *ev, double *seconds);
#endif

#ifdef __cplusplus
}
#endif
#endif
