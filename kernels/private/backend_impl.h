/* Private to kernels/: the backend struct and the per-backend entry points.
 * No CUDA headers here: the CUDA side is reached through plain C functions
 * defined in the kernels/cuda sources with extern "C" linkage. */
#ifndef HX_BACKEND_IMPL_H
#define HX_BACKEND_IMPL_H

#include "hx_hd.h"
#include "hx_kernels.h"
#include "queue_impl.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A queue (hx_kernels.h "Queues"): an ordered stream of work with its own
 * reduction scratch, so reductions on different queues never share memory. */
struct hx_queue_s {
  hx_backend b;
  void *stream;          /* cudaStream_t (cuda); NULL on cpu */
  double *d_partials;    /* reduction scratch: backend memory on cuda, host on cpu */
  size_t npartials;
  double *h_result;      /* pinned host double for reduction results (cuda) */
  int is_default;        /* the backend's default queue (not destroyable by users) */
  struct hx_queue_s *next; /* the backend's list of created queues */
  void *mc;              /* cpu-memcheck: transfers not yet completed (memcheck.c) */
};

struct hx_backend_s {
  hx_backend_kind kind;
  char name[16];
  int nthreads;
  int memcheck;          /* 1 for cpu-memcheck (kind HX_BACKEND_CPU) */
  hx_device_info dev;
  struct hx_queue_s *q0; /* default queue: every function without _q runs on it */
  struct hx_queue_s *queues; /* queues made by hx_queue_create (under qlock) */
  void *qlock;           /* pthread mutex guarding the queue list */
};

struct hx_vec_s {
  hx_backend b;
  int64_t n;
  double *data;
};

/* ------------------------------------------------------------ backend dispatch
 * Written once here for every entry point of kernels/ and gs/ (issue 28).
 * A kernel entry point uses HX_KERNEL_DISPATCH (below, after cpu-memcheck),
 * which is built on these; the other backend functions (allocation,
 * transfers, events) use them directly.
 *
 * HX_CUDA_DISPATCH(b, call): when b (an hx_backend) is a CUDA backend, make
 *   call (an int-returning CUDA entry point), propagate its error with
 *   HX_CALL (a traceback frame at the caller) and return HX_SUCCESS; on the
 *   other backends fall through to the CPU path. In a build without CUDA
 *   only the condition remains (evaluated and discarded, so a backend
 *   argument counts as used): call (hx_cuda_*, declared only with
 *   HEXCG_HAVE_CUDA) is never compiled and needs no stub.
 * HX_CUDA_DISPATCH_IF(cond, call): the same on a condition of the caller's
 *   (an object that exists on cuda only, e.g. a CUDA event).
 * HX_CUDA_ONLY(...): statements that exist in a CUDA build only (freeing a
 *   CUDA object, an error path of a CUDA constructor).
 * A value needed only by the CUDA call is computed inside the call's
 * arguments, so a build without CUDA has no unused variable. */
#ifdef HEXCG_HAVE_CUDA
#define HX_CUDA_DISPATCH_IF(cond, call) \
  do {                                  \
    if (cond) {                         \
      HX_CALL(call);                    \
      return HX_SUCCESS;                \
    }                                   \
  } while (0)
#define HX_CUDA_ONLY(...) __VA_ARGS__
#else
#define HX_CUDA_DISPATCH_IF(cond, call) \
  do {                                  \
    (void)(cond);                       \
  } while (0)
#define HX_CUDA_ONLY(...)
#endif
#define HX_CUDA_DISPATCH(b, call) HX_CUDA_DISPATCH_IF((b)->kind == HX_BACKEND_CUDA, call)

/* *p, with the caller's handle nulled (for free functions: free(hx_take_ptr(&x))) */
static inline void *hx_take_ptr(void **p) {
  void *v = *p;
  *p = NULL;
  return v;
}

/* number of reduction chunks for n entries */
static inline int64_t hx_num_chunks(int64_t n) { return (n + HX_REDUCE_CHUNK - 1) / HX_REDUCE_CHUNK; }
/* queue objects (kernels/queue.c): the default queue is made by
 * hx_backend_create, freed by hx_backend_destroy */
int hx_queue_new(hx_backend b, int is_default, hx_queue *q);
int hx_queue_free(hx_queue q);

/* Host memory for message buffers that the backend copies to or from
 * asynchronously (the gather-scatter's exchange): pinned (page-locked) on
 * cuda, zeroed ordinary host memory on the cpu backends. free accepts NULL
 * / *h_ptr == NULL and nulls *h_ptr. */
int hx_mem_alloc_host(hx_backend b, size_t bytes, void **h_ptr);
int hx_mem_free_host(hx_backend b, void **h_ptr);

/* grow the reduction scratch of queue q / of b's default queue to n partials */
int hx_queue_partials(hx_queue q, size_t n);
int hx_backend_partials(hx_backend b, size_t n);

/* ------------------------------------------------------------ cpu-memcheck
 * (kernels/memcheck.c, docs/developer.md "cpu-memcheck"). Backend memory of
 * a cpu-memcheck backend lives in one mmap'd arena that is PROT_NONE while
 * host code runs; every public entry point that touches backend memory on
 * the host (a CPU kernel, a transfer) opens a scope with HX_MC_SCOPE(b),
 * which makes the arena accessible until the function returns (scopes nest
 * and count across threads). A new kernel entry point MUST open one, or
 * its CPU loop faults under cpu-memcheck. */
int hx_mc_init(void); /* once per process: arena, SIGSEGV handler */
int hx_mc_enter(void);
void hx_mc_leave(int *entered);
int hx_mc_alloc(size_t bytes, void **ptr);
int hx_mc_free(void *ptr);
/* async transfers on q: the d2h result reaches h only when q is synchronised;
 * an h2d source must not change before then (checked) */
int hx_mc_to_host_async(hx_queue q, void *h, const void *d, size_t bytes);
int hx_mc_to_device_async(hx_queue q, void *d, const void *h, size_t bytes);
/* complete q's transfers up to sequence number upto (UINT64_MAX: all) */
int hx_mc_flush(hx_queue q, uint64_t upto);
uint64_t hx_mc_seq(hx_queue q);
/* argument checks: [p, p+bytes) inside one live backend allocation / not in
 * backend memory at all (HX_ERR_ARG with a message otherwise) */
int hx_mc_check_dev(const void *p, size_t bytes, const char *what);
int hx_mc_check_host(const void *p, size_t bytes, const char *what);
void hx_mc_queue_free(hx_queue q);
static inline int hx_mc_begin(hx_backend b) { return b && b->memcheck ? hx_mc_enter() : 0; }
#define HX_MC_SCOPE(b) \
  int hx_mc_scope_ __attribute__((cleanup(hx_mc_leave), unused)) = hx_mc_begin(b)

/* ------------------------------------------------------------ kernel dispatch
 * Every kernel entry point of kernels/ and gs/ ends in the same three steps,
 * written once here: check the pointer arguments, run the CUDA launcher on a
 * CUDA backend, else open the memcheck scope and run the CPU loop.
 *
 *   int hx_thing_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, void *d_y) {
 *     HX_CHECK(b, ...); HX_CHECK_PREC(prec); ...sizes...; if (n == 0) return HX_SUCCESS;
 *     const size_t es = hx_precision_size(prec);
 *     HX_KERNEL_DISPATCH(b, "thing",
 *                        HX_BY_PREC(prec, hx_cuda_thing(...), hx_cuda_thing_f32(...)),
 *                        HX_CALL(HX_BY_PREC(prec, hx_cpu_thing(...), hx_cpu_thing_f32(...))),
 *                        HX_KARG(d_x, n, es, "x"), HX_KARG(d_y, n, es, "y"));
 *     return HX_SUCCESS;
 *   }
 *
 * hx_karg: one pointer argument, [p, p + bytes) in backend memory.
 * HX_KARG(p, count, size, what): count entries of size bytes; HX_KARG_D(p, n):
 *   n doubles, named as the variable.
 * hx_kernel_args: each argument with bytes > 0 must be non-NULL
 *   (HX_ERR_ARG "kernel: what is NULL"); on cpu-memcheck it must lie inside
 *   one live backend allocation (hx_mc_check_dev, named "kernel: what"); the
 *   only memory check of the kernel entry points.
 * HX_KERNEL_DISPATCH(b, kernel, cuda_call, cpu_stmt, args...): the
 *   arguments' checks, then HX_CUDA_DISPATCH(b, cuda_call) (cuda: make the
 *   call and return), then the memcheck scope, open until the function
 *   returns (what follows cpu_stmt may read backend memory: a CPU sum of
 *   partials), and cpu_stmt (a statement). It declares variables: once per
 *   function, at the top level of its body. */
typedef struct {
  const void *p;
  size_t bytes;
  const char *what;
} hx_karg;
#define HX_KARG(p, count, size, what) \
  ((hx_karg){(const void *)(p), (size_t)(count) * (size_t)(size), (what)})
/* n doubles named as the variable */
#define HX_KARG_D(p, n) HX_KARG(p, n, sizeof(double), #p)
int hx_kernel_args(hx_backend b, const char *kernel, size_t nargs, const hx_karg *args);
#define HX_KERNEL_DISPATCH(b, kernel, cuda_call, cpu_stmt, ...)                                  \
  const hx_karg hx_kargs_[] = {__VA_ARGS__};                                                    \
  HX_CALL(hx_kernel_args((b), (kernel), sizeof hx_kargs_ / sizeof hx_kargs_[0], hx_kargs_));     \
  HX_CUDA_DISPATCH((b), cuda_call);                                                             \
  HX_MC_SCOPE(b);                                                                               \
  cpu_stmt
/* the FP64 or the FP32 launcher of a kernel by precision */
#define HX_BY_PREC(prec, f64_call, f32_call) ((prec) == HX_F64 ? (f64_call) : (f32_call))
#define HX_CHECK_PREC(prec) \
  HX_CHECK((prec) == HX_F64 || (prec) == HX_F32, HX_ERR_ARG, "unknown precision %d", (int)(prec))

/* The launchers of the kernels of both precisions (one list) */
#include "hx_kernel_list.h"

#ifdef HEXCG_HAVE_CUDA
/* CUDA implementations (kernels/cuda/) */
/* the device hx_device_select gives for (local_rank, requested); on failure
 * HX_ERR_NO_DEVICE or HX_ERR_INPUT (bad request) with the reason in why */
int hx_cuda_query_impl(int local_rank, int requested, hx_device_info *info, char *why, size_t whylen);
int hx_cuda_runtime_version_impl(void);
int hx_cuda_backend_init(hx_backend b);
int hx_cuda_queue_init(hx_queue q);     /* stream + pinned result */
int hx_cuda_queue_finalize(hx_queue q); /* waits for the stream */
int hx_cuda_queue_sync(hx_queue q);
int hx_cuda_event_create(void **ev);
int hx_cuda_event_destroy(void *ev);
int hx_cuda_event_record(void *ev, hx_queue q);
int hx_cuda_event_wait(hx_queue q, void *ev);
int hx_cuda_event_sync(void *ev);
int hx_cuda_malloc(size_t bytes, void **ptr);
int hx_cuda_free(void *ptr);
int hx_cuda_free_host(void *ptr);
int hx_cuda_malloc_host(size_t bytes, void **ptr);
/* kind 1 h2d 2 d2h 3 d2d; sync != 0: wait for q before returning */
int hx_cuda_memcpy(hx_queue q, void *dst, const void *src, size_t bytes, int kind, int sync);
int hx_cuda_memset0(hx_queue q, void *ptr, size_t bytes);
#endif

/* FDM box solves and weighted copies (kernels/fdm.c, cpu/fdm_cpu.c,
 * cuda/fdm_cuda.cu); list == NULL: elements 0..nlist-1 */
int hx_fdm_cpu_apply(int m, int32_t nlist, const int32_t *list, const double *S, const double *L, const double *u,
                     double *w);
void hx_fdm_cpu_wgather(int64_t n, const int32_t *idx, const double *wt, const double *x, double *y);
#ifdef HEXCG_HAVE_CUDA
int hx_fdm_cuda_apply(hx_backend b, int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                      const double *u, double *w);
int hx_fdm_cuda_wgather(hx_backend b, int64_t n, const int32_t *idx, const double *wt, const double *x, double *y);
#endif

#ifdef __cplusplus
}
#endif
#endif
