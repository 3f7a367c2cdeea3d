// CUDA extra diagonal on listed entries (hx_array_diag_add_list_p), one
// template on T for FP64 and FP32 on the per-entry math of
// ../hx_diag_math.h (shared with cpu/diag_cpu.c). The x.R.x sum is one block:
// thread t takes j = t, t + 256, ... in order and the block adds the 256
// partials in a fixed tree, so it is deterministic run to run (the list
// holds boundary nodes only). It runs before the update (reads x, y unwritten).
#include "backend_impl.h"
#include "hx_cuda_check.h"
#include "hx_diag_math.h"

#define HX_DBLOCK 256

template <typename T>
__global__ void hx_diag_add_kernel(int64_t m, const int32_t *__restrict__ idx, const T *__restrict__ r,
                                   const T *__restrict__ x, T *__restrict__ y) {
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < m; j += (int64_t)gridDim.x * blockDim.x) {
    const int32_t i = idx[j];
    y[i] = hx_diag_add_1(y[i], r[j], x[i]);
  }
}

template <typename T>
__global__ void hx_diag_xrx_kernel(int64_t mred, const int32_t *__restrict__ idx, const T *__restrict__ r,
                                   const T *__restrict__ x, double *__restrict__ out) {
  __shared__ double s[HX_DBLOCK];
  double v = 0.0;
  for (int64_t j = threadIdx.x; j < mred; j += HX_DBLOCK) v += hx_diag_xrx_1(r[j], x[idx[j]]);
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = HX_DBLOCK / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

template <typename T>
static int hx_diag_launch(hx_backend b, int64_t m, int64_t mred, const int32_t *idx, const T *r, const T *x, T *y,
                          double *d_xrx) {
  if (d_xrx) {
    hx_diag_xrx_kernel<T><<<1, HX_DBLOCK, 0, HX_STREAM(b)>>>(mred, idx, r, x, d_xrx);
    HX_CUDA_LAUNCH_CHECK();
  }
  int64_t g = (m + HX_DBLOCK - 1) / HX_DBLOCK;
  if (g > 65535 * 16) g = 65535 * 16;
  hx_diag_add_kernel<T><<<(unsigned)(g < 1 ? 1 : g), HX_DBLOCK, 0, HX_STREAM(b)>>>(m, idx, r, x, y);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_diag_add_list(hx_backend b, int64_t m, int64_t mred, const int32_t *idx, const double *r,
                                     const double *x, double *y, double *d_xrx) {
  return hx_diag_launch<double>(b, m, mred, idx, r, x, y, d_xrx);
}
extern "C" int hx_cuda_diag_add_list_f32(hx_backend b, int64_t m, int64_t mred, const int32_t *idx, const float *r,
                                         const float *x, float *y, double *d_xrx) {
  return hx_diag_launch<float>(b, m, mred, idx, r, x, y, d_xrx);
}
