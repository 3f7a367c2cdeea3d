/* Fused CG kernels and the benchmark device timer: argument checks and
 * dispatch to cpu/stream_cpu.c or cuda/stream_cuda.cu. */
#include "stream_impl.h"

#include <stdlib.h>

#define HX_STREAM_SIZES(n, nred)                                                                      \
  do {                                                                                                \
    HX_CHECK((n) >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)(n));                    \
    HX_CHECK((nred) >= 0 && (nred) <= (n), HX_ERR_ARG, "reduction length %lld outside [0, n = %lld]", \
             (long long)(nred), (long long)(n));                                                      \
  } while (0)

int hx_array_cg_update_q(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                         const double *w, double alpha, double *rr) {
  HX_CHECK(q && rr, HX_ERR_ARG, "NULL queue or result pointer");
  *rr = 0.0;
  HX_STREAM_SIZES(n, nred);
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(q->b, "cg_update", hx_cuda_cg_update(q, n, nred, x, r, p, w, alpha, rr), HX_CALL(hx_cpu_cg_update(q, n, nred, x, r, p, w, alpha, rr)),
                     HX_KARG_D(x, n), HX_KARG_D(r, n), HX_KARG_D(p, n), HX_KARG_D(w, n));
  if (q->b->memcheck) HX_CALL(hx_mc_flush(q, UINT64_MAX)); /* a reduction waits for its queue */
  return HX_SUCCESS;
}

int hx_array_r_update_q(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                        double *rr) {
  HX_CHECK(q && rr, HX_ERR_ARG, "NULL queue or result pointer");
  *rr = 0.0;
  HX_STREAM_SIZES(n, nred);
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(q->b, "r_update", hx_cuda_r_update(q, n, nred, r, w, alpha, rr), HX_CALL(hx_cpu_r_update(q, n, nred, r, w, alpha, rr)),
                     HX_KARG_D(r, n), HX_KARG_D(w, n));
  if (q->b->memcheck) HX_CALL(hx_mc_flush(q, UINT64_MAX));
  return HX_SUCCESS;
}

/* HX_F32: beta rounded to float */
int hx_array_xpay_q(hx_queue q, hx_precision prec, int64_t n, void *p, const void *z, double beta) {
  HX_CHECK(q, HX_ERR_ARG, "NULL queue");
  HX_CHECK_PREC(prec);
  HX_CHECK(n >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)n);
  if (n == 0) return HX_SUCCESS;
  const size_t es = hx_precision_size(prec);
  HX_KERNEL_DISPATCH(q->b, "xpay", HX_CUDA_P(prec, xpay, q, n, p, z, beta), HX_CALL(HX_CPU_P(prec, xpay, n, p, z, beta)),
                     HX_KARG(p, n, es, "p"), HX_KARG(z, n, es, "z"));
  return HX_SUCCESS;
}

int hx_array_pointwise_mult_q(hx_queue q, hx_precision prec, int64_t n, void *y, const void *x, const void *z) {
  HX_CHECK(q, HX_ERR_ARG, "NULL queue");
  HX_CHECK_PREC(prec);
  HX_CHECK(n >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)n);
  if (n == 0) return HX_SUCCESS;
  const size_t es = hx_precision_size(prec);
  HX_KERNEL_DISPATCH(q->b, "pointwise_mult", HX_CUDA_P(prec, pointwise_mult, q, n, y, x, z),
                     HX_CALL(HX_CPU_P(prec, pointwise_mult, n, y, x, z)), HX_KARG(y, n, es, "y"),
                     HX_KARG(x, n, es, "x"), HX_KARG(z, n, es, "z"));
  return HX_SUCCESS;
}

int hx_array_norm2sq_q(hx_queue q, hx_precision prec, int64_t n, const void *x, double *result) {
  HX_CHECK(q && result, HX_ERR_ARG, "NULL queue or result pointer");
  *result = 0.0;
  HX_CHECK_PREC(prec);
  HX_CHECK(n >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)n);
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(q->b, "norm2sq", HX_CUDA_P(prec, norm2sq, q, n, x, result),
                     HX_CALL(HX_CPU_P(prec, norm2sq, q, n, x, result)), HX_KARG(x, n, hx_precision_size(prec), "x"));
  if (q->b->memcheck) HX_CALL(hx_mc_flush(q, UINT64_MAX));
  return HX_SUCCESS;
}

/* the default-queue versions */
int hx_array_cg_update(hx_backend b, int64_t n, int64_t nred, double *x, double *r, const double *p,
                       const double *w, double alpha, double *rr) {
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_CALL(hx_array_cg_update_q(b->q0, n, nred, x, r, p, w, alpha, rr));
  return HX_SUCCESS;
}
int hx_array_r_update(hx_backend b, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                      double *rr) {
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_CALL(hx_array_r_update_q(b->q0, n, nred, r, w, alpha, rr));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ deferred reductions */
int hx_red_create(hx_backend b, int nslots, int64_t nmax, hx_red *out) {
  HX_CHECK(b && out, HX_ERR_ARG, "NULL backend or handle");
  *out = NULL;
  HX_CHECK(nslots >= 1 && nslots <= HX_RED_MAX_SLOTS, HX_ERR_ARG, "hx_red: %d slots (1..%d)", nslots,
           HX_RED_MAX_SLOTS);
  HX_CHECK(nmax >= 0, HX_ERR_ARG, "hx_red: negative vector length %lld", (long long)nmax);
  hx_red red;
  HX_CALL(HX_ALLOC(&red, 1));
  *red =
      /* at least 4 partials per slot: room for those other kernels append
       * (hx_red_next_part: the operator's two element batches) */
      (struct hx_red_s){.b = b, .nslots = nslots, .ncmax = hx_num_chunks(nmax) > 4 ? hx_num_chunks(nmax) : 4};
  int err = HX_SUCCESS;
  if (b->kind != HX_BACKEND_CUDA) err = HX_ALLOC(&red->part, (size_t)nslots * (size_t)red->ncmax);
  HX_CUDA_ONLY(else err = hx_cuda_red_alloc(red);)
  if (err) {
    hx_red_destroy(&red);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = red;
  return HX_SUCCESS;
}

int hx_red_destroy(hx_red *pred) {
  if (!pred || !*pred) return HX_SUCCESS;
  hx_red red = *pred;
  *pred = NULL;
  int err = HX_SUCCESS;
  if (red->b->kind != HX_BACKEND_CUDA) free(red->part);
  HX_CUDA_ONLY(else err = hx_cuda_red_free(red);)
  free(red);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_red_fetch(hx_red red, int m, double *h_out) {
  HX_CHECK(red && h_out, HX_ERR_ARG, "NULL reduction set or result pointer");
  HX_CHECK(m >= 0 && m <= red->nslots, HX_ERR_ARG, "hx_red_fetch: %d slots of %d", m, red->nslots);
  HX_CUDA_ONLY(if (red->b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_cuda_red_fetch(red, m));
    for (int k = 0; k < m; k++) h_out[k] = red->nparts[k] ? red->h_res[k] : 0.0, red->nparts[k] = 0;
    return HX_SUCCESS;
  })
  for (int k = 0; k < m; k++) {
    const double *part = red->part + (int64_t)k * red->ncmax;
    double s = 0.0;
    for (int64_t c = 0; c < red->nparts[k]; c++) s += part[c];
    h_out[k] = s;
    red->nparts[k] = 0;
  }
  if (red->b->memcheck) HX_CALL(hx_mc_flush(red->b->q0, UINT64_MAX)); /* a reduction waits for its queue */
  return HX_SUCCESS;
}

int hx_red_next_part(hx_red red, int k, double **part) {
  HX_CHECK(red && part, HX_ERR_ARG, "NULL reduction set or pointer");
  HX_CHECK(k >= 0 && k < red->nslots, HX_ERR_ARG, "reduction slot %d outside [0, %d)", k, red->nslots);
  HX_CHECK(red->nparts[k] < red->ncmax, HX_ERR_ARG, "reduction slot %d is full (%lld partials)", k,
           (long long)red->ncmax);
  *part = red->part + (int64_t)k * red->ncmax + red->nparts[k]++;
  return HX_SUCCESS;
}

#define HX_RED_SLOT(red, k, n)                                                                           \
  do {                                                                                                   \
    HX_CHECK((k) >= 0 && (k) < (red)->nslots, HX_ERR_ARG, "reduction slot %d outside [0, %d)", (int)(k), \
             (red)->nslots);                                                                             \
    HX_CHECK(hx_num_chunks(n) <= (red)->ncmax, HX_ERR_ARG,                                               \
             "vector of %lld entries longer than the reduction set's capacity", (long long)(n));         \
  } while (0)

int hx_array_dot_red(hx_red red, int k, int64_t n, const double *x, const double *y) {
  HX_CHECK(red, HX_ERR_ARG, "NULL reduction set");
  HX_CHECK(n >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)n);
  HX_RED_SLOT(red, k, n);
  red->nparts[k] = 0;
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(red->b, "dot_red", hx_cuda_dot_red(red, k, n, x, y), hx_cpu_dot_red(red, k, n, x, y),
                     HX_KARG_D(x, n), HX_KARG_D(y, n));
  return HX_SUCCESS;
}

int hx_array_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *x, double *r,
                           const double *p, const double *w, double alpha) {
  HX_CHECK(red, HX_ERR_ARG, "NULL reduction set");
  HX_STREAM_SIZES(n, nred);
  HX_RED_SLOT(red, k_rr, n);
  red->nparts[k_rr] = 0;
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(red->b, "cg_update_red", hx_cuda_cg_update_red(red, k_rr, n, nred, x, r, p, w, alpha), hx_cpu_cg_update_red(red, k_rr, n, nred, x, r, p, w, alpha),
                     HX_KARG_D(x, n), HX_KARG_D(r, n), HX_KARG_D(p, n), HX_KARG_D(w, n));
  return HX_SUCCESS;
}

int hx_array_cg_update_diag_red(hx_red red, int k_rr, int k_rz, int k_zw, int64_t n, int64_t nred, double *x,
                                double *r, const double *p, const double *w, const double *d, double *z,
                                double alpha) {
  HX_CHECK(red, HX_ERR_ARG, "NULL reduction set");
  HX_STREAM_SIZES(n, nred);
  HX_RED_SLOT(red, k_rr, n);
  HX_RED_SLOT(red, k_rz, n);
  if (k_zw >= 0) HX_RED_SLOT(red, k_zw, n);
  HX_CHECK(k_rr != k_rz && k_rr != k_zw && k_rz != k_zw, HX_ERR_ARG,
           "cg_update_diag_red: slots %d, %d, %d not distinct", k_rr, k_rz, k_zw);
  red->nparts[k_rr] = red->nparts[k_rz] = 0;
  if (k_zw >= 0) red->nparts[k_zw] = 0;
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(red->b, "cg_update_diag_red", hx_cuda_cg_update_diag_red(red, k_rr, k_rz, k_zw, n, nred, x, r, p, w, d, z, alpha), hx_cpu_cg_update_diag_red(red, k_rr, k_rz, k_zw, n, nred, x, r, p, w, d, z, alpha),
                     HX_KARG_D(x, n), HX_KARG_D(r, n), HX_KARG_D(p, n), HX_KARG_D(w, n), HX_KARG_D(d, n), HX_KARG_D(z, n));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ device timer */
struct hx_dev_timer_s {
  hx_backend b;
  void *ev; /* cuda event pair; NULL on cpu */
  int started, stopped;
};

int hx_dev_timer_create(hx_backend b, hx_dev_timer *out) {
  HX_CHECK(b && out, HX_ERR_ARG, "NULL backend or handle");
  *out = NULL;
  hx_dev_timer t;
  HX_CALL(HX_ALLOC(&t, 1));
  t->b = b;
  int ierr = HX_SUCCESS;
  HX_CUDA_ONLY(if (b->kind == HX_BACKEND_CUDA) ierr = hx_cuda_event_pair_create(&t->ev);)
  if (ierr) {
    free(t);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  *out = t;
  return HX_SUCCESS;
}

int hx_dev_timer_destroy(hx_dev_timer *pt) {
  if (!pt || !*pt) return HX_SUCCESS;
  hx_dev_timer t = *pt;
  int ierr = HX_SUCCESS;
  HX_CUDA_ONLY(if (t->ev) ierr = hx_cuda_event_pair_destroy(t->ev);)
  free(t);
  *pt = NULL;
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_dev_timer_start(hx_dev_timer t) {
  HX_CHECK(t, HX_ERR_ARG, "NULL timer");
  HX_CUDA_ONLY(if (t->ev) HX_CALL(hx_cuda_event_pair_record(t->b, t->ev, 0));)
  t->started = 1;
  t->stopped = 0;
  return HX_SUCCESS;
}

int hx_dev_timer_stop(hx_dev_timer t) {
  HX_CHECK(t, HX_ERR_ARG, "NULL timer");
  HX_CHECK(t->started, HX_ERR_ARG, "device timer stopped before it was started");
  HX_CUDA_ONLY(if (t->ev) HX_CALL(hx_cuda_event_pair_record(t->b, t->ev, 1));)
  t->stopped = 1;
  return HX_SUCCESS;
}

int hx_dev_timer_elapsed(hx_dev_timer t, double *seconds) {
  HX_CHECK(t && seconds, HX_ERR_ARG, "NULL timer or result pointer");
  *seconds = -1.0;
  HX_CHECK(t->started && t->stopped, HX_ERR_ARG, "device timer read before start and stop");
  HX_CUDA_DISPATCH_IF(t->ev, hx_cuda_event_elapsed(t->ev, seconds));
  return HX_SUCCESS;
}
