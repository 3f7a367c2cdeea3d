// CUDA FP32 streaming ops and precision conversions (hx_kernels_prec.h).
// Per-entry math: the float instantiation in ../hx_stream_math.h, shared with
// cpu/prec_cpu.c. Reductions: stage 1 reduces each HX_REDUCE_CHUNK chunk in
// one block in double (fixed tree), stage 2 sums the chunk partials in one
// block (fixed tree): deterministic run to run, as the FP64 reductions.
#include "prec_impl.h"
#include "hx_cuda_check.h"

#define HX_PBLOCK 256

static inline unsigned hx_pgrid(int64_t n) {
  int64_t g = (n + HX_PBLOCK - 1) / HX_PBLOCK;
  return (unsigned)(g > 65535 * 16 ? 65535 * 16 : (g < 1 ? 1 : g));
}

#define HX_PFOR(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

__global__ void hx_f64_to_f32_kernel(int64_t n, float *__restrict__ y, const double *__restrict__ x) {
  HX_PFOR(i, n) y[i] = hx_to_f32_1(x[i]);
}
__global__ void hx_f32_to_f64_kernel(int64_t n, double *__restrict__ y, const float *__restrict__ x) {
  HX_PFOR(i, n) y[i] = (double)x[i];
}
__global__ void hx_axpy_f32_to_f64_kernel(int64_t n, double *__restrict__ y, double a, const float *__restrict__ x) {
  HX_PFOR(i, n) y[i] = hx_axpy_f32_to_f64_1(y[i], a, x[i]);
}
__global__ void hx_copy_f32_kernel(int64_t n, float *__restrict__ y, const float *__restrict__ x) {
  HX_PFOR(i, n) y[i] = x[i];
}
__global__ void hx_axpby_f32_kernel(int64_t n, float *__restrict__ y, float a, const float *__restrict__ x,
                                    float bb) {
  HX_PFOR(i, n) y[i] = hx_axpby_1_f32(a, x[i], bb, y[i]);
}
__global__ void hx_xpay_f32_kernel(int64_t n, float *__restrict__ p, const float *__restrict__ z, float beta) {
  HX_PFOR(i, n) p[i] = hx_xpay_1_f32(z[i], beta, p[i]);
}
// y may alias x or z
__global__ void hx_pmult_f32_kernel(int64_t n, float *y, const float *x, const float *z) {
  HX_PFOR(i, n) y[i] = hx_pmult_1_f32(x[i], z[i]);
}

static __device__ double hx_prec_block_sum(double v) {
  __shared__ double s[HX_PBLOCK];
  s[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int w = HX_PBLOCK / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

// stage 1: block c reduces chunk c; y == nullptr gives the squared norm of x
__global__ void hx_dot_f32_stage1(int64_t n, const float *__restrict__ x, const float *__restrict__ y,
                                  double *__restrict__ part) {
  const int64_t lo = (int64_t)blockIdx.x * HX_REDUCE_CHUNK;
  const int64_t hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
  double s = 0.0;
  for (int64_t i = lo + threadIdx.x; i < hi; i += HX_PBLOCK) s += hx_dot_1_f32(x[i], y ? y[i] : x[i]);
  s = hx_prec_block_sum(s);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

__global__ void hx_prec_stage2(int64_t m, double *__restrict__ part) {
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < m; i += HX_PBLOCK) s += part[i];
  s = hx_prec_block_sum(s);
  if (threadIdx.x == 0) part[0] = s;
}

#define HX_PLAUNCH(kernel, n, ...)                                              \
  do {                                                                          \
    kernel<<<hx_pgrid(n), HX_PBLOCK, 0, HX_STREAM(b)>>>((n), __VA_ARGS__);      \
    HX_CUDA_LAUNCH_CHECK();                                                     \
  } while (0)

extern "C" int hx_cuda_f64_to_f32(hx_backend b, int64_t n, float *y, const double *x) {
  HX_PLAUNCH(hx_f64_to_f32_kernel, n, y, x);
  return HX_SUCCESS;
}
extern "C" int hx_cuda_f32_to_f64(hx_backend b, int64_t n, double *y, const float *x) {
  HX_PLAUNCH(hx_f32_to_f64_kernel, n, y, x);
  return HX_SUCCESS;
}
extern "C" int hx_cuda_axpy_f32_to_f64(hx_backend b, int64_t n, double *y, double a, const float *x) {
  HX_PLAUNCH(hx_axpy_f32_to_f64_kernel, n, y, a, x);
  return HX_SUCCESS;
}
extern "C" int hx_cuda_copy_f32(hx_backend b, int64_t n, float *y, const float *x) {
  HX_PLAUNCH(hx_copy_f32_kernel, n, y, x);
  return HX_SUCCESS;
}
extern "C" int hx_cuda_axpby_f32(hx_backend b, int64_t n, float *y, float a, const float *x, float bb) {
  HX_PLAUNCH(hx_axpby_f32_kernel, n, y, a, x, bb);
  return HX_SUCCESS;
}
extern "C" int hx_cuda_xpay_f32(hx_backend b, int64_t n, float *p, const float *z, float beta) {
  HX_PLAUNCH(hx_xpay_f32_kernel, n, p, z, beta);
  return HX_SUCCESS;
}
extern "C" int hx_cuda_pointwise_mult_f32(hx_backend b, int64_t n, float *y, const float *x, const float *z) {
  HX_PLAUNCH(hx_pmult_f32_kernel, n, y, x, z);
  return HX_SUCCESS;
}

static int hx_cuda_reduce_f32(hx_backend b, int64_t n, const float *x, const float *y, double *result) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_backend_partials(b, (size_t)nc));
  hx_dot_f32_stage1<<<(unsigned)nc, HX_PBLOCK, 0, HX_STREAM(b)>>>(n, x, y, b->q0->d_partials);
  HX_CUDA_LAUNCH_CHECK();
  hx_prec_stage2<<<1, HX_PBLOCK, 0, HX_STREAM(b)>>>(nc, b->q0->d_partials);
  HX_CUDA_LAUNCH_CHECK();
  HX_CUDA(cudaMemcpyAsync(b->q0->h_result, b->q0->d_partials, sizeof(double), cudaMemcpyDeviceToHost, HX_STREAM(b)));
  HX_CUDA(cudaStreamSynchronize(HX_STREAM(b)));
  *result = *b->q0->h_result;
  return HX_SUCCESS;
}

extern "C" int hx_cuda_dot_f32(hx_backend b, int64_t n, const float *x, const float *y, double *result) {
  HX_CALL(hx_cuda_reduce_f32(b, n, x, y, result));
  return HX_SUCCESS;
}
extern "C" int hx_cuda_norm2sq_f32(hx_backend b, int64_t n, const float *x, double *result) {
  HX_CALL(hx_cuda_reduce_f32(b, n, x, nullptr, result));
  return HX_SUCCESS;
}
