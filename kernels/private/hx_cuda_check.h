/* Private to the CUDA sources of kernels/ and gs/: error wrapper for CUDA
 * runtime calls. Include only from .cu files. Launch errors are checked with
 * cudaGetLastError after each launch; a device synchronisation after each
 * launch happens only in builds with HEXCG_CUDA_DEBUG_SYNC (debug builds). */
#ifndef HX_CUDA_CHECK_H
#define HX_CUDA_CHECK_H
#include <cuda_runtime.h>

#include "backend_impl.h"

#define HX_CUDA(expr)                                                                           \
  do {                                                                                          \
    cudaError_t hx_cerr_ = (expr);                                                              \
    if (hx_cerr_ != cudaSuccess)                                                                \
      return hx_error_set(__FILE__, __LINE__, __func__, HX_ERR_CUDA, "CUDA call %s failed: %s (%s)", \
                          #expr, cudaGetErrorName(hx_cerr_), cudaGetErrorString(hx_cerr_));    \
  } while (0)

#ifdef HEXCG_CUDA_DEBUG_SYNC
#define HX_CUDA_LAUNCH_CHECK()              \
  do {                                      \
    HX_CUDA(cudaGetLastError());            \
    HX_CUDA(cudaDeviceSynchronize());       \
  } while (0)
#else
#define HX_CUDA_LAUNCH_CHECK() HX_CUDA(cudaGetLastError())
#endif

// the stream of b's default queue / of queue q
#define HX_STREAM(b) ((cudaStream_t)(b)->q0->stream)
#define HX_QSTREAM(q) ((cudaStream_t)(q)->stream)

#endif
