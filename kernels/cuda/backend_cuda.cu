// CUDA backend: device query, memory, streams.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hx_cuda_check.h"

extern "C" int hx_cuda_runtime_version_impl(void) {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

// Every CUDA error here means "no usable device" (without a driver the
// runtime answers cudaErrorInsufficientDriver, not cudaErrorNoDevice).
extern "C" int hx_cuda_query_impl(int local_rank, int requested, hx_device_info *info, char *why, size_t whylen) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    // the runtime's words for a machine without a driver ("CUDA driver version is
    // insufficient") blame a version that does not exist: say what is missing
    int drv = 0, rt = 0;
    const int have_driver = access("/proc/driver/nvidia/version", F_OK) == 0;
    if ((e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) && !have_driver)
      snprintf(why, whylen, "this machine has no NVIDIA driver loaded (no /proc/driver/nvidia/version): no GPU, "
               "or its driver is not installed (%s)", cudaGetErrorName(e));
    else if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&drv) == cudaSuccess &&
             cudaRuntimeGetVersion(&rt) == cudaSuccess && drv > 0)
      snprintf(why, whylen, "the NVIDIA driver supports CUDA up to %d.%d, this build needs %d.%d: update the driver "
               "or build with an older CUDA toolkit (%s)", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10,
               cudaGetErrorName(e));
    else
      snprintf(why, whylen, "cudaGetDeviceCount: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    cudaGetLastError();
    return HX_ERR_NO_DEVICE;
  }
  if (count < 1) {
    snprintf(why, whylen, "the CUDA runtime sees 0 devices");
    return HX_ERR_NO_DEVICE;
  }
  int dev = 0;
  if (hx_device_select(local_rank, count, requested, &dev) != HX_SUCCESS) {
    snprintf(why, whylen, "%s", hx_error_message());
    hx_error_clear();
    return requested >= count ? HX_ERR_INPUT : HX_ERR_NO_DEVICE;
  }
  cudaDeviceProp prop;
  e = cudaGetDeviceProperties(&prop, dev);
  if (e == cudaSuccess) e = cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, dev);
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
  return HX_SUCCESS;
}

// A queue: a non-blocking stream (no implicit sync with the legacy default
// stream) and a pinned double for reduction results.
extern "C" int hx_cuda_queue_init(hx_queue q) {
  cudaStream_t s;
  HX_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  q->stream = (void *)s;
  HX_CUDA(cudaMallocHost((void **)&q->h_result, sizeof(double)));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_queue_finalize(hx_queue q) {
  cudaError_t e = cudaSuccess;
  if (q->stream) e = cudaStreamSynchronize(HX_QSTREAM(q));
  if (q->h_result) cudaFreeHost(q->h_result);
  q->h_result = NULL;
  if (q->stream) cudaStreamDestroy(HX_QSTREAM(q));
  q->stream = NULL;
  HX_CUDA(e);
  return HX_SUCCESS;
}

extern "C" int hx_cuda_queue_sync(hx_queue q) {
  HX_CUDA(cudaStreamSynchronize(HX_QSTREAM(q)));
  return HX_SUCCESS;
}

// ------------------------------------------------------------ events
extern "C" int hx_cuda_event_create(void **ev) {
  cudaEvent_t e;
  HX_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  *ev = (void *)e;
  return HX_SUCCESS;
}
extern "C" int hx_cuda_event_destroy(void *ev) {
  HX_CUDA(cudaEventDestroy((cudaEvent_t)ev));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_event_record(void *ev, hx_queue q) {
  HX_CUDA(cudaEventRecord((cudaEvent_t)ev, HX_QSTREAM(q)));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_event_wait(hx_queue q, void *ev) {
  HX_CUDA(cudaStreamWaitEvent(HX_QSTREAM(q), (cudaEvent_t)ev, 0));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_event_sync(void *ev) {
  HX_CUDA(cudaEventSynchronize((cudaEvent_t)ev));
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

extern "C" int hx_cuda_memcpy(hx_queue q, void *dst, const void *src, size_t bytes, int kind, int sync) {
  cudaMemcpyKind k = kind == 1 ? cudaMemcpyHostToDevice : kind == 2 ? cudaMemcpyDeviceToHost
                                                                     : cudaMemcpyDeviceToDevice;
  HX_CUDA(cudaMemcpyAsync(dst, src, bytes, k, HX_QSTREAM(q)));
  if (sync) HX_CUDA(cudaStreamSynchronize(HX_QSTREAM(q)));  // the host buffer is the caller's again
  return HX_SUCCESS;
}

extern "C" int hx_cuda_memset0(hx_queue q, void *ptr, size_t bytes) {
  HX_CUDA(cudaMemsetAsync(ptr, 0, bytes, HX_QSTREAM(q)));
  return HX_SUCCESS;
}
