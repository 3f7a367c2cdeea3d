/* hexcg kernels: the backend layer.
 *
 * A backend ("cpu" with OpenMP, "cuda") owns a memory space. Pointers named
 * d_* / returned by hx_vec_data() live in the backend's memory space (device
 * memory for cuda, host memory for cpu); h_* pointers are host memory.
 * Nothing in this module is collective over MPI: reductions return the local
 * value and the caller reduces across ranks.
 *
 * This is the module's single public header. Kernel families added later
 * (gather-scatter, operator, FDM...) declare their API in the sections below
 * or in a header included from here.
 */
#ifndef HX_KERNELS_H
#define HX_KERNELS_H

#include "hx_core.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HX_BACKEND_CPU = 0, HX_BACKEND_CUDA = 1 } hx_backend_kind;

/* Information about the CUDA device, when there is one. */
typedef struct {
  int device;             /* device index used */
  int count;              /* number of visible devices */
  char name[256];
  int cc_major, cc_minor; /* compute capability */
  double mem_gib;         /* global memory */
  int sm_count;
  int runtime_version;    /* e.g. 13000 */
  int driver_version;
} hx_device_info;

typedef struct hx_backend_s *hx_backend;

/* 1 if the CUDA backend was compiled into this build. */
int hx_cuda_compiled(void);
/* CUDA runtime version the build links (e.g. 13000), 0 if not compiled. */
int hx_cuda_runtime_version(void);
/* Query the CUDA device. Returns HX_ERR_NO_DEVICE (with a message saying
 * why: not compiled in, no driver, no device...) when no usable device
 * exists; every CUDA error code is treated as "no device" here. */
int hx_cuda_query(hx_device_info *info);

/* Create a backend by name: "cpu" or "cuda". An unknown name is HX_ERR_INPUT;
 * "cuda" in a build without CUDA or without a usable device is
 * HX_ERR_NO_DEVICE with a message that says which. */
int hx_backend_create(const char *name, hx_backend *b);
int hx_backend_destroy(hx_backend *b);
hx_backend_kind hx_backend_get_kind(hx_backend b);
const char *hx_backend_name(hx_backend b);
/* Wait for all work queued on the backend. */
int hx_backend_sync(hx_backend b);
/* Number of OpenMP threads the CPU backend uses. */
int hx_backend_num_threads(hx_backend b);

/* Memory in the backend's space. hx_mem_free accepts NULL and nulls *ptr. */
int hx_mem_alloc(hx_backend b, size_t bytes, void **d_ptr);
int hx_mem_free(hx_backend b, void **d_ptr);
int hx_mem_to_device(hx_backend b, void *d_dst, const void *h_src, size_t bytes);
int hx_mem_to_host(hx_backend b, void *h_dst, const void *d_src, size_t bytes);
int hx_mem_copy(hx_backend b, void *d_dst, const void *d_src, size_t bytes);
int hx_mem_zero(hx_backend b, void *d_ptr, size_t bytes);

/* ------------------------------------------------------------ vectors */
typedef struct hx_vec_s *hx_vec;

/* A vector of n doubles in the backend's memory, zero-initialised. The
 * vector borrows b: b must outlive it. */
int hx_vec_create(hx_backend b, int64_t n, hx_vec *v);
int hx_vec_destroy(hx_vec *v);
int64_t hx_vec_size(hx_vec v);
hx_backend hx_vec_backend(hx_vec v);
/* Pointer to the data in the backend's memory space. */
double *hx_vec_data(hx_vec v);
/* Copy n doubles from/to host memory. */
int hx_vec_set_host(hx_vec v, const double *h_src);
int hx_vec_get_host(hx_vec v, double *h_dst);
int hx_vec_set_value(hx_vec v, double value);

/* Streaming ops (BS1-BS4 of the streaming suite). Sizes must match.
 * Reductions are local to this rank and deterministic (HX_REDUCE_CHUNK). */
int hx_vec_copy(hx_vec y, hx_vec x);                        /* y = x */
int hx_vec_axpby(hx_vec y, double a, hx_vec x, double b);   /* y = a x + b y */
int hx_vec_dot(hx_vec x, hx_vec y, double *result);         /* x . y */
int hx_vec_norm2sq(hx_vec x, double *result);               /* x . x */

/* The same on raw arrays in the backend's memory (n entries). */
int hx_array_copy(hx_backend b, int64_t n, double *d_y, const double *d_x);
int hx_array_axpby(hx_backend b, int64_t n, double *d_y, double a, const double *d_x, double bb);
int hx_array_dot(hx_backend b, int64_t n, const double *d_x, const double *d_y, double *result);

/* ============================================================ streaming
 * Fused CG updates and the other streaming kernels (BS5...) - issue 7. */
/* (section: stream) */

/* ============================================================ gather-scatter
 * Z, Z^T, direct stiffness summation across ranks, owner marks - issue 4. */
/* (section: gs) */

/* ============================================================ operator
 * Element operator A_L by sum factorisation, geometric factors - issue 5. */
/* (section: ax) */

#ifdef __cplusplus
}
#endif
#endif
