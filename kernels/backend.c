/* Backend selection, memory and vectors: dispatch to cpu/ or cuda/. */
#include "backend_impl.h"

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

int hx_backend_create(const char *name, hx_backend *out) {
  *out = NULL;
  HX_CHECK(name, HX_ERR_ARG, "backend name is NULL");
  hx_backend b = NULL;
  if (strcmp(name, "cpu") == 0) {
    HX_CALL(HX_ALLOC(&b, 1));
    b->kind = HX_BACKEND_CPU;
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
    return HX_ERROR(HX_ERR_INPUT, "unknown backend '%s' (allowed: cpu, cuda)", name);
  }
  snprintf(b->name, sizeof b->name, "%s", name);
  *out = b;
  return HX_SUCCESS;
}

int hx_backend_destroy(hx_backend *pb) {
  if (!pb || !*pb) return HX_SUCCESS;
  hx_backend b = *pb;
  if (b->kind == HX_BACKEND_CPU) {
    free(b->d_partials);
  }
#ifdef HEXCG_HAVE_CUDA
  else {
    if (b->d_partials) hx_cuda_free(b->d_partials);
    HX_CALL(hx_cuda_backend_finalize(b));
  }
#endif
  free(b);
  *pb = NULL;
  return HX_SUCCESS;
}

hx_backend_kind hx_backend_get_kind(hx_backend b) { return b->kind; }
const char *hx_backend_name(hx_backend b) { return b->name; }
int hx_backend_num_threads(hx_backend b) { return b->nthreads; }

int hx_backend_sync(hx_backend b) {
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) HX_CALL(hx_cuda_sync(b));
#endif
  (void)b;
  return HX_SUCCESS;
}

int hx_backend_partials(hx_backend b, size_t n) {
  if (n <= b->npartials && b->d_partials) return HX_SUCCESS;
  size_t want = n < 64 ? 64 : n;
  if (b->kind == HX_BACKEND_CPU) {
    HX_CALL(hx_realloc(want, sizeof(double), &b->d_partials));
  }
#ifdef HEXCG_HAVE_CUDA
  else {
    if (b->d_partials) HX_CALL(hx_cuda_free(b->d_partials));
    b->d_partials = NULL;
    HX_CALL(hx_cuda_malloc(want * sizeof(double), (void **)&b->d_partials));
  }
#endif
  b->npartials = want;
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ memory */
int hx_mem_alloc(hx_backend b, size_t bytes, void **ptr) {
  *ptr = NULL;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_cuda_malloc(bytes ? bytes : 1, ptr));
    return HX_SUCCESS;
  }
#endif
  (void)b;
  HX_CALL(hx_calloc(bytes ? bytes : 1, 1, ptr));
  return HX_SUCCESS;
}

int hx_mem_free(hx_backend b, void **ptr) {
  if (!ptr || !*ptr) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_cuda_sync(b)); /* kernels queued on the stream may still use it */
    HX_CALL(hx_cuda_free(*ptr));
    *ptr = NULL;
    return HX_SUCCESS;
  }
#endif
  (void)b;
  free(*ptr);
  *ptr = NULL;
  return HX_SUCCESS;
}

static int hx_mem_xfer(hx_backend b, void *dst, const void *src, size_t bytes, int kind) {
  if (bytes == 0) return HX_SUCCESS;
  HX_CHECK(dst && src, HX_ERR_ARG, "NULL pointer in a %zu-byte copy", bytes);
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) return hx_cuda_memcpy(b, dst, src, bytes, kind);
#endif
  (void)b;
  (void)kind;
  memmove(dst, src, bytes);
  return HX_SUCCESS;
}
int hx_mem_to_device(hx_backend b, void *d, const void *h, size_t n) { HX_CALL(hx_mem_xfer(b, d, h, n, 1)); return HX_SUCCESS; }
int hx_mem_to_host(hx_backend b, void *h, const void *d, size_t n) { HX_CALL(hx_mem_xfer(b, h, d, n, 2)); return HX_SUCCESS; }
int hx_mem_copy(hx_backend b, void *d, const void *s, size_t n) { HX_CALL(hx_mem_xfer(b, d, s, n, 3)); return HX_SUCCESS; }

int hx_mem_zero(hx_backend b, void *ptr, size_t bytes) {
  if (bytes == 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_cuda_memset0(b, ptr, bytes));
    return HX_SUCCESS;
  }
#endif
  (void)b;
  memset(ptr, 0, bytes);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ arrays */
int hx_array_copy(hx_backend b, int64_t n, double *y, const double *x) {
  if (n <= 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) { HX_CALL(hx_cuda_copy(b, n, y, x)); return HX_SUCCESS; }
#endif
  (void)b;
  HX_CALL(hx_cpu_copy(n, y, x));
  return HX_SUCCESS;
}

int hx_array_axpby(hx_backend b, int64_t n, double *y, double a, const double *x, double bb) {
  if (n <= 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) { HX_CALL(hx_cuda_axpby(b, n, y, a, x, bb)); return HX_SUCCESS; }
#endif
  (void)b;
  HX_CALL(hx_cpu_axpby(n, y, a, x, bb));
  return HX_SUCCESS;
}

int hx_array_dot(hx_backend b, int64_t n, const double *x, const double *y, double *result) {
  *result = 0.0;
  if (n <= 0) return HX_SUCCESS;
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) { HX_CALL(hx_cuda_dot(b, n, x, y, result)); return HX_SUCCESS; }
#endif
  HX_CALL(hx_cpu_dot(b, n, x, y, result));
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
