/* Private to kernels/: the backend struct and the per-backend entry points.
 * No CUDA headers here: the CUDA side is reached through plain C functions
 * defined in the kernels/cuda sources with extern "C" linkage. */
#ifndef HX_BACKEND_IMPL_H
#define HX_BACKEND_IMPL_H

#include "hx_hd.h"
#include "hx_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hx_backend_s {
  hx_backend_kind kind;
  char name[16];
  int nthreads;
  hx_device_info dev;
  void *stream;          /* cudaStream_t of the main work stream (cuda) */
  double *d_partials;    /* reduction scratch in the backend's memory */
  size_t npartials;
  double *h_result;      /* pinned host double for reduction results (cuda) */
};

struct hx_vec_s {
  hx_backend b;
  int64_t n;
  double *data;
};

/* number of reduction chunks for n entries */
static inline int64_t hx_num_chunks(int64_t n) { return (n + HX_REDUCE_CHUNK - 1) / HX_REDUCE_CHUNK; }
/* grow the reduction scratch to hold n partials */
int hx_backend_partials(hx_backend b, size_t n);

/* CPU implementations (kernels/cpu/) */
int hx_cpu_copy(int64_t n, double *y, const double *x);
int hx_cpu_axpby(int64_t n, double *y, double a, const double *x, double bb);
int hx_cpu_dot(hx_backend b, int64_t n, const double *x, const double *y, double *result);

#ifdef HEXCG_HAVE_CUDA
/* CUDA implementations (kernels/cuda/) */
int hx_cuda_query_impl(hx_device_info *info, char *why, size_t whylen);
int hx_cuda_runtime_version_impl(void);
int hx_cuda_backend_init(hx_backend b);
int hx_cuda_backend_finalize(hx_backend b);
int hx_cuda_sync(hx_backend b);
int hx_cuda_malloc(size_t bytes, void **ptr);
int hx_cuda_free(void *ptr);
int hx_cuda_free_host(void *ptr);
int hx_cuda_malloc_host(size_t bytes, void **ptr);
int hx_cuda_memcpy(hx_backend b, void *dst, const void *src, size_t bytes, int kind); /* 1 h2d 2 d2h 3 d2d */
int hx_cuda_memset0(hx_backend b, void *ptr, size_t bytes);
int hx_cuda_copy(hx_backend b, int64_t n, double *y, const double *x);
int hx_cuda_axpby(hx_backend b, int64_t n, double *y, double a, const double *x, double bb);
int hx_cuda_dot(hx_backend b, int64_t n, const double *x, const double *y, double *result);
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
