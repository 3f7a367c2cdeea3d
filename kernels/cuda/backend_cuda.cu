// CUDA backend: device query, memory, streams.
#include <stdio.h>
#include <string.h>

#include "hx_cuda_check.h"

extern "C" int hx_cuda_runtime_version_impl(void) {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

// Every CUDA error here means "no usable device" (without a driver the
// runtime answers cudaErrorInsufficientDriver, not cudaErrorNoDevice).
extern "C" int hx_cuda_query_impl(hx_device_info *info, char *why, size_t whylen) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    snprintf(why, whylen, "cudaGetDeviceCount: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    cudaGetLastError();
    return HX_ERR_NO_DEVICE;
  }
  if (count < 1) {
    snprintf(why, whylen, "the CUDA runtime sees 0 devices");
    return HX_ERR_NO_DEVICE;
  }
  int dev = 0;
  e = cudaGetDevice(&dev);
  cudaDeviceProp prop;
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, dev);
  if (e != cudaSuccess) {
    snprintf(why, whylen, "cudaGetDeviceProperties: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    cudaGetLastError();
    return HX_ERR_NO_DEVICE;
  }
  info->device = dev;
  info->count = count;
  snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->cc_major = prop.major;
  info->cc_minor = prop.minor;
  info->mem_gib = (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
  info->sm_count = prop.multiProcessorCount;
  cudaRuntimeGetVersion(&info->runtime_version);
  cudaDriverGetVersion(&info->driver_version);
  return HX_SUCCESS;
}

extern "C" int hx_cuda_backend_init(hx_backend b) {
  HX_CUDA(cudaSetDevice(b->dev.device));
  cudaStream_t s;
  HX_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  b->stream = (void *)s;
  HX_CUDA(cudaMallocHost((void **)&b->h_result, sizeof(double)));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_backend_finalize(hx_backend b) {
  if (b->h_result) HX_CUDA(cudaFreeHost(b->h_result));
  b->h_result = NULL;
  if (b->stream) HX_CUDA(cudaStreamDestroy(HX_STREAM(b)));
  b->stream = NULL;
  return HX_SUCCESS;
}

extern "C" int hx_cuda_sync(hx_backend b) {
  HX_CUDA(cudaStreamSynchronize(HX_STREAM(b)));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_malloc(size_t bytes, void **ptr) {
  HX_CUDA(cudaMalloc(ptr, bytes));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_free(void *ptr) {
  HX_CUDA(cudaFree(ptr));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_malloc_host(size_t bytes, void **ptr) {
  HX_CUDA(cudaMallocHost(ptr, bytes));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_free_host(void *ptr) {
  HX_CUDA(cudaFreeHost(ptr));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_memcpy(hx_backend b, void *dst, const void *src, size_t bytes, int kind) {
  cudaMemcpyKind k = kind == 1 ? cudaMemcpyHostToDevice : kind == 2 ? cudaMemcpyDeviceToHost
                                                                     : cudaMemcpyDeviceToDevice;
  HX_CUDA(cudaMemcpyAsync(dst, src, bytes, k, HX_STREAM(b)));
  if (kind != 3) HX_CUDA(cudaStreamSynchronize(HX_STREAM(b)));  // host memory is pageable
  return HX_SUCCESS;
}

extern "C" int hx_cuda_memset0(hx_backend b, void *ptr, size_t bytes) {
  HX_CUDA(cudaMemsetAsync(ptr, 0, bytes, HX_STREAM(b)));
  return HX_SUCCESS;
}
