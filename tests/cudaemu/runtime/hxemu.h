/* The CUDA emulation runtime (HEXCG_CUDA=EMU; docs/gpu-verification.md).
 * Test-only: nothing of it ships in hexcg.
 *
 * Forced-included (-include) into every CUDA source that cu_rewrite.py has
 * turned into host C++, and reached through the stand-in cuda_runtime.h. It
 * provides what those sources use of CUDA: the qualifiers (empty), dim3 and
 * the built-in indices, __syncthreads, the runtime API subset hexcg calls,
 * and the entry points the rewriter produces (hxemu::launch, hxemu::cfg,
 * hxemu::shared, hxemu::dyn_shared, HXEMU_ENTRY).
 *
 * Execution model (hxemu.cc): a launch is checked on the calling thread as
 * CUDA checks it (block and grid limits, shared memory, __launch_bounds__)
 * and queued on its stream; each CUDA thread of a block then runs as a fiber,
 * switched at __syncthreads, in an order shuffled from HEXCG_CUDAEMU_SEED.
 * Device memory handed to the host can never be dereferenced there; kernels
 * and copies use a second view of it with a guard page after each
 * allocation. Streams run their work lazily (at the latest point CUDA allows,
 * HEXCG_CUDAEMU_MODE=lazy, the default) or eagerly on a worker thread per
 * stream (HEXCG_CUDAEMU_MODE=eager). */
#ifndef HXEMU_H
#define HXEMU_H

#ifndef __cplusplus
#error "hxemu.h is for the C++ that cu_rewrite.py makes of a .cu file"
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

/* ------------------------------------------------------------ qualifiers */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __HXEMU__ 1

/* ------------------------------------------------------------ vector types */
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/* ------------------------------------------------------------ runtime API types */
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventBlockingSync 0x1
#define cudaEventDisableTiming 0x2
#define CUDART_VERSION 13000

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major, minor;
  int multiProcessorCount;
  int pciBusID, pciDeviceID, pciDomainID;
};

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaMalloc(void **p, size_t bytes);
template <class T>
static inline cudaError_t cudaMalloc(T **p, size_t bytes) {
  return cudaMalloc((void **)p, bytes);
}
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t bytes);
template <class T>
static inline cudaError_t cudaMallocHost(T **p, size_t bytes) {
  return cudaMallocHost((void **)p, bytes);
}
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s = 0);
cudaError_t cudaMemset(void *p, int value, size_t bytes);

/* ------------------------------------------------------------ emulation internals */
namespace hxemu {

struct BlkView {
  uint3 idx;
  dim3 dim, grid;
};
struct ThrView {
  uint3 idx;
};
// initial-exec: read at every threadIdx; the default model of position-
// independent code would call __tls_get_addr each time (22 % of a run)
#define HXEMU_TLS __attribute__((tls_model("initial-exec")))
extern thread_local ThrView *t_thr HXEMU_TLS;
extern thread_local BlkView *t_blk HXEMU_TLS;
extern thread_local int t_probe HXEMU_TLS;       // launch probe: HXEMU_ENTRY records the bounds and returns
extern thread_local unsigned t_bounds HXEMU_TLS; // the bounds recorded by the probe

/* __syncthreads at file:line */
void syncthreads(const char *file, int line);
/* static shared memory: the block's copy of the array declared at key */
void *shared_alloc(const void *key, const char *name, size_t bytes, size_t align);
template <class X>
static inline X *shared(const void *key, const char *name) {
  return (X *)shared_alloc(key, name, sizeof(X), alignof(X));
}
/* the block's dynamic shared memory */
void *dyn_shared(void);
/* a kernel's first statement: in the launch probe, record __launch_bounds__ and leave */
static inline int entry(unsigned max_threads, unsigned min_blocks = 0) {
  (void)min_blocks;
  if (t_probe) {
    t_bounds = max_threads;
    return 1;
  }
  return 0;
}

/* <<<grid, block, shmem, stream>>> */
struct Cfg {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
};
static inline Cfg cfg(dim3 g, dim3 b, size_t shmem = 0, cudaStream_t s = 0) { return Cfg{g, b, shmem, s}; }

/* a launch's kernel and arguments, type-erased */
struct Job {
  virtual ~Job() {}
  virtual void call() = 0;
};
template <class F, class Tup>
struct JobT final : Job {
  F f;
  Tup args;
  JobT(F ff, Tup &&a) : f(ff), args(std::move(a)) {}
  void call() override { std::apply(f, args); }
};

/* the kernel view of a device address (the host view faults) */
const void *to_kernel_view(const void *p);
template <class X>
static inline void xlate_arg(X &x) {
  if constexpr (std::is_pointer_v<X>) x = (X)to_kernel_view((const void *)x);
}

/* checks the configuration, probes the bounds, queues the job (owned from
 * here on); the error (also cudaGetLastError's) */
cudaError_t launch_job(const char *file, int line, const char *name, const void *fn, Cfg c, Job *job);

template <class... P, class... A>
static inline void launch(const char *file, int line, const char *name, void (*k)(P...), Cfg c, A &&...a) {
  using Tup = std::tuple<std::decay_t<P>...>;
  Tup t(std::forward<A>(a)...);
  std::apply([](auto &...x) { (xlate_arg(x), ...); }, t);
  launch_job(file, line, name, (const void *)k, c, new JobT<void (*)(P...), Tup>(k, std::move(t)));
}

cudaError_t func_set_attribute(const void *fn, cudaFuncAttribute attr, int value);

}  // namespace hxemu

template <class... P>
static inline cudaError_t cudaFuncSetAttribute(void (*fn)(P...), cudaFuncAttribute attr, int value) {
  return hxemu::func_set_attribute((const void *)fn, attr, value);
}

static constexpr int warpSize = 32;
#define threadIdx (::hxemu::t_thr->idx)
#define blockIdx (::hxemu::t_blk->idx)
#define blockDim (::hxemu::t_blk->dim)
#define gridDim (::hxemu::t_blk->grid)
#define __syncthreads() ::hxemu::syncthreads(__FILE__, __LINE__)
#define HXEMU_ENTRY(...)                     \
  do {                                       \
    if (::hxemu::entry(__VA_ARGS__)) return; \
  } while (0)

#endif
