/* Backend selection, memory and vectors: dispatch to cpu/ or cuda/. */
#include "backend_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int hx_cuda_compiled(void) {
#ifdef HEXCG_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

int hx_cuda_runtime_version(void) {
#ifdef HEXCG_HAVE_CUDA
  return hx_cuda_runtime_version_impl();
#else
  return 0;
#endif
}

int hx_cuda_query(hx_device_info *info) {
  memset(info, 0, sizeof *info);
#ifdef HEXCG_HAVE_CUDA
  char why[512] = "";
  if (hx_cuda_query_impl(info, why, sizeof why) != HX_SUCCESS)
    return HX_ERROR(HX_ERR_NO_DEVICE, "no usable CUDA device: %s", why);
  return HX_SUCCESS;
#else
  return HX_ERROR(HX_ERR_NO_DEVICE,
                  "backend 'cuda' is not compiled in (this build has no nvcc; configure with "
                  "-DHEXCG_CUDA=ON on a machine with the CUDA toolkit)");
#endif
}

/* HEXCG_BACKEND_CPU=cpu-memcheck turns every request for "cpu" into one for
 * "cpu-memcheck" (whole programs and test suites run under it unchanged). */
static int hx_backend_cpu_alias(const char **name) {
  const char *env = getenv("HEXCG_BACKEND_CPU");
  if (strcmp(*name, "cpu") != 0 || !env || !*env) return HX_SUCCESS;
  HX_CHECK(strcmp(env, "cpu") == 0 || strcmp(env, "cpu-memcheck") == 0, HX_ERR_INPUT,
           "HEXCG_BACKEND_CPU=%s: allowed values are cpu and cpu-memcheck", env);
  *name = env;
  return HX_SUCCESS;
}

static void hx_backend_free(hx_backend b) {
  if (!b) return;
  if (b->qlock) {
    pthread_mutex_destroy((pthread_mutex_t *)b->qlock);
    free(b->qlock);
  }
  free(b);
}

int hx_backend_create(const char *name, hx_backend *out) {
  *out = NULL;
  HX_CHECK(name, HX_ERR_ARG, "backend name is NULL");
  HX_CALL(hx_backend_cpu_alias(&name));
  hx_backend b = NULL;
  if (strcmp(name, "cpu") == 0 || strcmp(name, "cpu-memcheck") == 0 || strcmp(name, "host") == 0) {
    const int mc = strcmp(name, "cpu-memcheck") == 0;
    if (mc) HX_CALL(hx_mc_init());
    HX_CALL(HX_ALLOC(&b, 1));
    b->kind = HX_BACKEND_CPU;
    b->memcheck = mc;
#ifdef _OPENMP
    b->nthreads = omp_get_max_threads();
#else
    b->nthreads = 1;
#endif
  } else if (strcmp(name, "cuda") == 0) {
    hx_device_info info;
    HX_CALL(hx_cuda_query(&info));
#ifdef HEXCG_HAVE_CUDA
    HX_CALL(HX_ALLOC(&b, 1));
    b->kind = HX_BACKEND_CUDA;
    b->nthreads = 1;
    b->dev = info;
    int ierr = hx_cuda_backend_init(b);
    if (ierr) {
      free(b);
      return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    }
#endif
  } else {
    return HX_ERROR(HX_ERR_INPUT, "unknown backend '%s' (allowed: cpu, cuda, cpu-memcheck)", name);
  }
  snprintf(b->name, sizeof b->name, "%s", name);
  int ierr = HX_ALLOC((pthread_mutex_t **)&b->qlock, 1);
  if (!ierr) pthread_mutex_init((pthread_mutex_t *)b->qlock, NULL);
  if (!ierr) ierr = hx_queue_new(b, 1, &b->q0);
  if (ierr) {
    hx_backend_free(b);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  *out = b;
  return HX_SUCCESS;
}

int hx_backend_destroy(hx_backend *pb) {
  if (!pb || !*pb) return HX_SUCCESS;
  hx_backend b = *pb;
  int ierr = HX_SUCCESS;
  while (b->queues) { /* queues the caller left: wait for them and free them */
    hx_queue q = b->queues;
    b->queues = q->next;
    int e = hx_queue_free(q);
    if (e && !ierr) ierr = e;
  }
  int e = hx_queue_free(b->q0);
  if (e && !ierr) ierr = e;
  hx_backend_free(b);
  *pb = NULL;
  if (ierr) return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  return HX_SUCCESS;
}

hx_backend_kind hx_backend_get_kind(hx_backend b) { return b->kind; }
const char *hx_backend_name(hx_backend b) { return b->name; }
int hx_backend_num_threads(hx_backend b) { return b->nthreads; }

/* ------------------------------------------------------------ memory */
int hx_mem_alloc(hx_backend b, size_t bytes, void **ptr) {
  *ptr = NULL;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_cuda_malloc(bytes ? bytes : 1, ptr));
    return HX_SUCCESS;
  }
#endif
  if (b->memcheck) {
    HX_CALL(hx_mc_alloc(bytes, ptr)); /* NaN-filled, like uninitialised device memory */
    return HX_SUCCESS;
  }
  HX_CALL(hx_calloc(bytes ? bytes : 1, 1, ptr));
  return HX_SUCCESS;
}

int hx_mem_free(hx_backend b, void **ptr) {
  if (!ptr || !*ptr) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_backend_sync(b)); /* kernels queued on any queue may still use it */
    HX_CALL(hx_cuda_free(*ptr));
    *ptr = NULL;
    return HX_SUCCESS;
  }
#endif
  if (b->memcheck) {
    HX_CALL(hx_mc_free(*ptr));
    *ptr = NULL;
    return HX_SUCCESS;
  }
  free(*ptr);
  *ptr = NULL;
  return HX_SUCCESS;
}

/* kind: 1 h2d, 2 d2h, 3 d2d. sync: return after the copy is complete and the
 * host buffer is free (the functions without _q); otherwise it belongs to the
 * queue until the queue is synchronised. */
static int hx_mem_xfer(hx_queue q, void *dst, const void *src, size_t bytes, int kind, int sync) {
  HX_CHECK(q, HX_ERR_ARG, "queue is NULL");
  if (bytes == 0) return HX_SUCCESS;
  HX_CHECK(dst && src, HX_ERR_ARG, "NULL pointer in a %zu-byte copy", bytes);
  hx_backend b = q->b;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) return hx_cuda_memcpy(q, dst, src, bytes, kind, sync && kind != 3);
#endif
  if (b->memcheck) {
    static const char *const what[4][2] = {
        {"", ""}, {"hx_mem_to_device destination", "hx_mem_to_device source"},
        {"hx_mem_to_host destination", "hx_mem_to_host source"}, {"hx_mem_copy destination", "hx_mem_copy source"}};
    if (kind == 2) HX_CALL(hx_mc_check_host(dst, bytes, what[kind][0]));
    else HX_CALL(hx_mc_check_dev(dst, bytes, what[kind][0]));
    if (kind == 1) HX_CALL(hx_mc_check_host(src, bytes, what[kind][1]));
    else HX_CALL(hx_mc_check_dev(src, bytes, what[kind][1]));
    HX_MC_SCOPE(b);
    if (!sync && kind == 2) return hx_mc_to_host_async(q, dst, src, bytes);
    if (!sync && kind == 1) return hx_mc_to_device_async(q, dst, src, bytes);
    memmove(dst, src, bytes);
    /* a synchronous transfer waits for its queue (cuda): earlier async ones complete */
    if (sync && kind != 3) HX_CALL(hx_mc_flush(q, UINT64_MAX));
    return HX_SUCCESS;
  }
  memmove(dst, src, bytes);
  return HX_SUCCESS;
}
int hx_mem_to_device(hx_backend b, void *d, const void *h, size_t n) { HX_CALL(hx_mem_xfer(b->q0, d, h, n, 1, 1)); return HX_SUCCESS; }
int hx_mem_to_host(hx_backend b, void *h, const void *d, size_t n) { HX_CALL(hx_mem_xfer(b->q0, h, d, n, 2, 1)); return HX_SUCCESS; }
int hx_mem_copy(hx_backend b, void *d, const void *s, size_t n) { HX_CALL(hx_mem_xfer(b->q0, d, s, n, 3, 1)); return HX_SUCCESS; }
int hx_mem_to_device_q(hx_queue q, void *d, const void *h, size_t n) { HX_CALL(hx_mem_xfer(q, d, h, n, 1, 0)); return HX_SUCCESS; }
int hx_mem_to_host_q(hx_queue q, void *h, const void *d, size_t n) { HX_CALL(hx_mem_xfer(q, h, d, n, 2, 0)); return HX_SUCCESS; }
int hx_mem_copy_q(hx_queue q, void *d, const void *s, size_t n) { HX_CALL(hx_mem_xfer(q, d, s, n, 3, 0)); return HX_SUCCESS; }

int hx_mem_zero_q(hx_queue q, void *ptr, size_t bytes) {
  HX_CHECK(q, HX_ERR_ARG, "queue is NULL");
  if (bytes == 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (q->b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_cuda_memset0(q, ptr, bytes));
    return HX_SUCCESS;
  }
#endif
  if (q->b->memcheck) HX_CALL(hx_mc_check_dev(ptr, bytes, "hx_mem_zero pointer"));
  HX_MC_SCOPE(q->b);
  memset(ptr, 0, bytes);
  return HX_SUCCESS;
}
int hx_mem_zero(hx_backend b, void *ptr, size_t bytes) { HX_CALL(hx_mem_zero_q(b->q0, ptr, bytes)); return HX_SUCCESS; }

/* ------------------------------------------------------------ arrays */
int hx_array_copy_q(hx_queue q, int64_t n, double *y, const double *x) {
  HX_CHECK(q, HX_ERR_ARG, "queue is NULL");
  if (n <= 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (q->b->kind == HX_BACKEND_CUDA) { HX_CALL(hx_cuda_copy(q, n, y, x)); return HX_SUCCESS; }
#endif
  HX_MC_DEV(q->b, y, n, "copy: y");
  HX_MC_DEV(q->b, x, n, "copy: x");
  HX_MC_SCOPE(q->b);
  HX_CALL(hx_cpu_copy(n, y, x));
  return HX_SUCCESS;
}

int hx_array_axpby_q(hx_queue q, int64_t n, double *y, double a, const double *x, double bb) {
  HX_CHECK(q, HX_ERR_ARG, "queue is NULL");
  if (n <= 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (q->b->kind == HX_BACKEND_CUDA) { HX_CALL(hx_cuda_axpby(q, n, y, a, x, bb)); return HX_SUCCESS; }
#endif
  HX_MC_DEV(q->b, y, n, "axpby: y");
  HX_MC_DEV(q->b, x, n, "axpby: x");
  HX_MC_SCOPE(q->b);
  HX_CALL(hx_cpu_axpby(n, y, a, x, bb));
  return HX_SUCCESS;
}

int hx_array_dot_q(hx_queue q, int64_t n, const double *x, const double *y, double *result) {
  HX_CHECK(q && result, HX_ERR_ARG, "NULL queue or result pointer");
  *result = 0.0;
  if (n <= 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (q->b->kind == HX_BACKEND_CUDA) { HX_CALL(hx_cuda_dot(q, n, x, y, result)); return HX_SUCCESS; }
#endif
  HX_MC_DEV(q->b, x, n, "dot: x");
  HX_MC_DEV(q->b, y, n, "dot: y");
  HX_MC_SCOPE(q->b);
  HX_CALL(hx_cpu_dot(q, n, x, y, result));
  if (q->b->memcheck) HX_CALL(hx_mc_flush(q, UINT64_MAX)); /* a reduction waits for its queue */
  return HX_SUCCESS;
}

int hx_array_copy(hx_backend b, int64_t n, double *y, const double *x) { HX_CALL(hx_array_copy_q(b->q0, n, y, x)); return HX_SUCCESS; }
int hx_array_axpby(hx_backend b, int64_t n, double *y, double a, const double *x, double bb) {
  HX_CALL(hx_array_axpby_q(b->q0, n, y, a, x, bb));
  return HX_SUCCESS;
}
int hx_array_dot(hx_backend b, int64_t n, const double *x, const double *y, double *result) {
  HX_CALL(hx_array_dot_q(b->q0, n, x, y, result));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ vectors */
int hx_vec_create(hx_backend b, int64_t n, hx_vec *out) {
  *out = NULL;
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(n >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)n);
  hx_vec v;
  HX_CALL(HX_ALLOC(&v, 1));
  v->b = b;
  v->n = n;
  int ierr = hx_mem_alloc(b, (size_t)n * sizeof(double), (void **)&v->data);
  if (!ierr) ierr = hx_mem_zero(b, v->data, (size_t)n * sizeof(double));
  if (ierr) {
    hx_mem_free(b, (void **)&v->data);
    free(v);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  *out = v;
  return HX_SUCCESS;
}

int hx_vec_destroy(hx_vec *pv) {
  if (!pv || !*pv) return HX_SUCCESS;
  HX_CALL(hx_mem_free((*pv)->b, (void **)&(*pv)->data));
  free(*pv);
  *pv = NULL;
  return HX_SUCCESS;
}

int64_t hx_vec_size(hx_vec v) { return v->n; }
hx_backend hx_vec_backend(hx_vec v) { return v->b; }
double *hx_vec_data(hx_vec v) { return v->data; }

int hx_vec_set_host(hx_vec v, const double *h) {
  HX_CALL(hx_mem_to_device(v->b, v->data, h, (size_t)v->n * sizeof(double)));
  return HX_SUCCESS;
}
int hx_vec_get_host(hx_vec v, double *h) {
  HX_CALL(hx_mem_to_host(v->b, h, v->data, (size_t)v->n * sizeof(double)));
  return HX_SUCCESS;
}
int hx_vec_set_value(hx_vec v, double value) {
  if (v->n == 0) return HX_SUCCESS;
  if (value == 0.0) {
    HX_CALL(hx_mem_zero(v->b, v->data, (size_t)v->n * sizeof(double)));
    return HX_SUCCESS;
  }
  /* y = value * 1 + 0 * y, via a one-entry source broadcast: fill on host */
  double *h;
  HX_CALL(HX_ALLOC(&h, v->n));
  for (int64_t i = 0; i < v->n; i++) h[i] = value;
  int ierr = hx_vec_set_host(v, h);
  free(h);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

#define HX_SAME_SIZE(x, y)                                                                    \
  HX_CHECK((x)->n == (y)->n, HX_ERR_ARG, "vector sizes differ: %lld vs %lld", (long long)(x)->n, \
           (long long)(y)->n)

int hx_vec_copy(hx_vec y, hx_vec x) {
  HX_SAME_SIZE(x, y);
  HX_CALL(hx_array_copy(y->b, y->n, y->data, x->data));
  return HX_SUCCESS;
}
int hx_vec_axpby(hx_vec y, double a, hx_vec x, double bb) {
  HX_SAME_SIZE(x, y);
  HX_CALL(hx_array_axpby(y->b, y->n, y->data, a, x->data, bb));
  return HX_SUCCESS;
}
int hx_vec_dot(hx_vec x, hx_vec y, double *r) {
  HX_SAME_SIZE(x, y);
  HX_CALL(hx_array_dot(x->b, x->n, x->data, y->data, r));
  return HX_SUCCESS;
}
int hx_vec_norm2sq(hx_vec x, double *r) {
  HX_CALL(hx_array_dot(x->b, x->n, x->data, x->data, r));
  return HX_SUCCESS;
}
