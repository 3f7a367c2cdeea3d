// CUDA streaming ops. Per-entry math comes from hx_hd.h (shared with cpu/).
#include "../hx_hd.h"
#include "hx_cuda_check.h"

#define HX_BLOCK 256

static inline int hx_grid(int64_t n) {
  int64_t g = (n + HX_BLOCK - 1) / HX_BLOCK;
  return (int)(g > 65535 * 16 ? 65535 * 16 : g);
}

__global__ void hx_copy_kernel(int64_t n, double *__restrict__ y, const double *__restrict__ x) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

__global__ void hx_axpby_kernel(int64_t n, double *__restrict__ y, double a, const double *__restrict__ x,
                                double b) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = hx_axpby_1(a, x[i], b, y[i]);
}

// Deterministic block tree reduction of one value per thread.
__device__ double hx_block_sum(double v) {
  __shared__ double s[HX_BLOCK];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = HX_BLOCK / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

// Stage 1: one block per HX_REDUCE_CHUNK entries, fixed order.
__global__ void hx_dot_stage1(int64_t n, const double *__restrict__ x, const double *__restrict__ y,
                              double *__restrict__ part) {
  const int64_t lo = (int64_t)blockIdx.x * HX_REDUCE_CHUNK;
  const int64_t hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
  double s = 0.0;
  for (int64_t i = lo + threadIdx.x; i < hi; i += HX_BLOCK) s += hx_dot_1(x[i], y[i]);
  s = hx_block_sum(s);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// Stage 2: one block sums the partials, fixed order.
__global__ void hx_sum_stage2(int64_t m, double *__restrict__ part) {
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < m; i += HX_BLOCK) s += part[i];
  s = hx_block_sum(s);
  if (threadIdx.x == 0) part[0] = s;
}

extern "C" int hx_cuda_copy(hx_queue q, int64_t n, double *y, const double *x) {
  hx_copy_kernel<<<hx_grid(n), HX_BLOCK, 0, HX_QSTREAM(q)>>>(n, y, x);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_axpby(hx_queue q, int64_t n, double *y, double a, const double *x, double bb) {
  hx_axpby_kernel<<<hx_grid(n), HX_BLOCK, 0, HX_QSTREAM(q)>>>(n, y, a, x, bb);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_dot(hx_queue q, int64_t n, const double *x, const double *y, double *result) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_queue_partials(q, (size_t)nc));
  hx_dot_stage1<<<(unsigned)nc, HX_BLOCK, 0, HX_QSTREAM(q)>>>(n, x, y, q->d_partials);
  HX_CUDA_LAUNCH_CHECK();
  hx_sum_stage2<<<1, HX_BLOCK, 0, HX_QSTREAM(q)>>>(nc, q->d_partials);
  HX_CUDA_LAUNCH_CHECK();
  HX_CUDA(cudaMemcpyAsync(q->h_result, q->d_partials, sizeof(double), cudaMemcpyDeviceToHost, HX_QSTREAM(q)));
  HX_CUDA(cudaStreamSynchronize(HX_QSTREAM(q)));
  *result = *q->h_result;
  return HX_SUCCESS;
}
