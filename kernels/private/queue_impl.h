/* Private to kernels/ (and gs/, the tests named in tests/CMakeLists.txt):
 * the queue forms of the transfers and streaming ops. Each runs on queue q
 * with the rules of hx_kernels.h "Queues"; the functions without _q run on
 * the backend's default queue. Nothing outside the backend layer and the
 * gather-scatter's exchange queues work of its own, so these are not public
 * API (issue 28). Not collective. */
#ifndef HX_QUEUE_IMPL_H
#define HX_QUEUE_IMPL_H

#include "hx_kernels.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Transfers on a queue, asynchronous where the backend allows: the copy is
 * ordered after earlier work on q, and the host buffer h_* belongs to the
 * queue until q is synchronised (hx_queue_sync, hx_event_sync of a later
 * event, hx_backend_sync, or a reduction on q, which returns after q's
 * earlier work): read h_dst of a _to_host_q / modify h_src of a _to_device_q
 * only after that. (cuda: cudaMemcpyAsync on the queue's stream; with
 * pageable host memory the runtime may complete it before returning.) */
int hx_mem_to_device_q(hx_queue q, void *d_dst, const void *h_src, size_t bytes);
int hx_mem_to_host_q(hx_queue q, void *h_dst, const void *d_src, size_t bytes);
int hx_mem_copy_q(hx_queue q, void *d_dst, const void *d_src, size_t bytes);
int hx_mem_zero_q(hx_queue q, void *d_ptr, size_t bytes);

/* The streaming ops of both precisions on queue q: the one dispatch of each
 * (the public _p functions run them on the default queue, and the FP64
 * names are inline forms of those). copy/axpby/xpay/pointwise_mult are
 * asynchronous (cuda); dot and norm2sq return with the host result, waiting
 * for q only (other queues keep running). HX_F32: scalars rounded to float,
 * reductions accumulated in double (hx_kernels_prec.h). n <= 0 for copy,
 * axpby and dot does nothing. */
int hx_array_copy_q(hx_queue q, hx_precision prec, int64_t n, void *d_y, const void *d_x);
int hx_array_axpby_q(hx_queue q, hx_precision prec, int64_t n, void *d_y, double a, const void *d_x, double bb);
int hx_array_dot_q(hx_queue q, hx_precision prec, int64_t n, const void *d_x, const void *d_y, double *result);
int hx_array_xpay_q(hx_queue q, hx_precision prec, int64_t n, void *d_p, const void *d_z, double beta);
int hx_array_pointwise_mult_q(hx_queue q, hx_precision prec, int64_t n, void *d_y, const void *d_x,
                              const void *d_z);
int hx_array_norm2sq_q(hx_queue q, hx_precision prec, int64_t n, const void *d_x, double *result);

/* The fused CG kernels on queue q (hx_array_cg_update...; FP64). The
 * reductions wait for q only. */
int hx_array_cg_update_q(hx_queue q, int64_t n, int64_t nred, double *d_x, double *d_r,
                         const double *d_p, const double *d_w, double alpha, double *rr);
int hx_array_r_update_q(hx_queue q, int64_t n, int64_t nred, double *d_r, const double *d_w,
                        double alpha, double *rr);

#ifdef __cplusplus
}
#endif
#endif
