/* Private to kernels/: per-backend entry points of the streaming kernels
 * (kernels/stream.c dispatches to these). No CUDA headers here. */
#ifndef HX_STREAM_IMPL_H
#define HX_STREAM_IMPL_H

#include "backend_impl.h"
#include "hx_stream_math.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HX_RED_MAX_SLOTS 16

/* Deferred reductions (hx_kernels.h). Slot k keeps its chunk partials at
 * part[k * ncmax ...]; nparts[k] of them were written (0: slot unused). */
struct hx_red_s {
  hx_backend b;
  int nslots;
  int64_t ncmax; /* chunk partials per slot */
  double *part;  /* nslots * ncmax: backend memory on cuda, host on cpu */
  double *d_res; /* cuda: nslots slot sums (device) */
  double *h_res; /* cuda: nslots pinned host doubles */
  int64_t nparts[HX_RED_MAX_SLOTS];
};

/* For kernels outside stream.c that leave one partial sum of their own in a
 * slot (the operator's element u.w, kernels/ax.c): *part = where to write
 * the next partial of slot k (backend memory: host on cpu, device on cuda),
 * appended after those already there since the last fetch or dot (a _red
 * streaming kernel restarts the slot). The fetch sums a slot's partials in
 * the order they were appended. */
int hx_red_next_part(hx_red red, int k, double **part);

/* CPU (kernels/cpu/stream_cpu.c). Sizes are checked by the caller: n >= 1,
 * 0 <= nred <= n. */
int hx_cpu_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                     const double *w, double alpha, double *rr);
int hx_cpu_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                    double *rr);
/* deferred reductions: partials of the chunks holding reduced entries into
 * the slots' rows of red->part */
void hx_cpu_dot_red(hx_red red, int k, int64_t n, const double *x, const double *y);
void hx_cpu_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *x, double *r,
                          const double *p, const double *w, double alpha);
void hx_cpu_cg_update_diag_red(hx_red red, int k_rr, int k_rz, int k_zw, int64_t n, int64_t nred, double *x,
                               double *r, const double *p, const double *w, const double *d, double *z,
                               double alpha);

#ifdef HEXCG_HAVE_CUDA
/* CUDA (kernels/cuda/stream_cuda.cu) */
int hx_cuda_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                      const double *w, double alpha, double *rr);
int hx_cuda_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                     double *rr);
int hx_cuda_red_alloc(hx_red red); /* part, d_res, h_res */
int hx_cuda_red_free(hx_red red);
/* stage 2 of slots 0..m-1 into d_res, one copy to h_res, one wait */
int hx_cuda_red_fetch(hx_red red, int m);
int hx_cuda_dot_red(hx_red red, int k, int64_t n, const double *x, const double *y);
int hx_cuda_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *x, double *r,
                          const double *p, const double *w, double alpha);
int hx_cuda_cg_update_diag_red(hx_red red, int k_rr, int k_rz, int k_zw, int64_t n, int64_t nred, double *x,
                               double *r, const double *p, const double *w, const double *d, double *z,
                               double alpha);
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
