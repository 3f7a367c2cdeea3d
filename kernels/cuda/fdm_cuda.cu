// CUDA FDM box solves: one (M x M) thread layer per element, thread (a, b)
// owning the column (a, b, 0..M-1) of the box in registers; the r and s
// contractions go through the element's box in shared memory, the t
// contractions and the diagonal scaling stay in registers. Small boxes pack
// NE elements per block (blockDim.z). Per-point math: ../hx_fdm_math.h (the
// same dot products in the same order as cpu/fdm_cpu.c).
#include "backend_impl.h"
#include "fdm_impl.h"
#include "../hx_fdm_math.h"
#include "hx_cuda_check.h"

static constexpr __host__ __device__ int hx_fdm_ne(int M) { return 256 / (M * M) > 0 ? 256 / (M * M) : 1; }
static constexpr __host__ __device__ int hx_fdm_threads(int M) { return M * M * hx_fdm_ne(M); }

template <int M, typename T>
__global__ void __launch_bounds__(hx_fdm_threads(M))
    hx_fdm_kernel(int32_t nlist, const int32_t *__restrict__ list, const T *__restrict__ S,
                  const T *__restrict__ L, const T *__restrict__ u, T *__restrict__ w,
                  const int32_t *__restrict__ map, const T *__restrict__ x) {
  constexpr int NE = hx_fdm_ne(M), M2 = M * M, M3 = M2 * M;
  __shared__ T s_u[NE][M3];
  const int a = threadIdx.x, b = threadIdx.y, z = threadIdx.z;
  const int32_t pos = (int32_t)blockIdx.x * NE + z;
  const bool active = pos < nlist;
  // inactive slots of the last block work on a valid element and store nothing
  const size_t e = (size_t)(active ? (list ? list[pos] : pos) : (list ? list[0] : 0));
  const T *Sr = S + e * 3 * M2, *Ss = Sr + M2, *St = Ss + M2, *Le = L + e * 3 * M;
  const T *ue = u ? u + e * M3 : u;
  T *s = s_u[z];
  T r[M], t[M];
#pragma unroll
  for (int k = 0; k < M; k++) {
    const int pt = a + M * (b + M * k);
    // map: the scatter fused in (input from the extended G-vector x)
    s[pt] = map ? hx_fdm_wgather_1(x, map[e * M3 + pt], (T)1) : ue[pt];
  }
  __syncthreads();
  // forward r
#pragma unroll
  for (int k = 0; k < M; k++) t[k] = hx_fdm_dot(M, Sr + a * M, 1, s + M * (b + M * k), 1);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < M; k++) s[a + M * (b + M * k)] = t[k];
  __syncthreads();
  // forward s
#pragma unroll
  for (int k = 0; k < M; k++) r[k] = hx_fdm_dot(M, Ss + b * M, 1, s + a + M2 * k, M);
    // forward t, scaling, back t (registers)
#pragma unroll
  for (int k = 0; k < M; k++)
    t[k] = hx_fdm_dot(M, St + k * M, 1, r, 1) * hx_fdm_inv_diag(Le[a], Le[M + b], Le[2 * M + k]);
#pragma unroll
  for (int k = 0; k < M; k++) r[k] = hx_fdm_dot(M, St + k, M, t, 1);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < M; k++) s[a + M * (b + M * k)] = r[k];
  __syncthreads();
  // back s
#pragma unroll
  for (int k = 0; k < M; k++) t[k] = hx_fdm_dot(M, Ss + b, M, s + a + M2 * k, M);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < M; k++) s[a + M * (b + M * k)] = t[k];
  __syncthreads();
  // back r
  if (active) {
    T *we = w + e * M3;
#pragma unroll
    for (int k = 0; k < M; k++) we[a + M * (b + M * k)] = hx_fdm_dot(M, Sr + a, M, s + M * (b + M * k), 1);
  }
}

template <int M, typename T>
static int hx_fdm_launch(hx_backend b, int32_t nlist, const int32_t *list, const T *S, const T *L,
                         const T *u, T *w, const int32_t *map, const T *x) {
  constexpr int NE = hx_fdm_ne(M);
  const dim3 block(M, M, NE);
  const unsigned grid = (unsigned)((nlist + NE - 1) / NE);
  hx_fdm_kernel<M, T><<<grid, block, 0, HX_STREAM(b)>>>(nlist, list, S, L, u, w, map, x);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

template <typename T>
static int hx_fdm_cuda_run(hx_backend b, int m, int32_t nlist, const int32_t *list, const T *S,
                           const T *L, const T *u, T *w, const int32_t *map, const T *x) {
  switch (m) {
#define HX_FDM_CASE(M) \
  case M: HX_CALL((hx_fdm_launch<M, T>(b, nlist, list, S, L, u, w, map, x))); break;
    HX_FDM_CASE(4)
    HX_FDM_CASE(5)
    HX_FDM_CASE(6)
    HX_FDM_CASE(7)
    HX_FDM_CASE(8)
    HX_FDM_CASE(9)
    HX_FDM_CASE(10)
    HX_FDM_CASE(11)
    HX_FDM_CASE(12)
    HX_FDM_CASE(13)
    HX_FDM_CASE(14)
    HX_FDM_CASE(15)
    HX_FDM_CASE(16)
    HX_FDM_CASE(17)
    HX_FDM_CASE(18)
#undef HX_FDM_CASE
    default: return HX_ERROR(HX_ERR_ARG, "FDM box size m = %d outside 4..%d", m, HX_FDM_MMAX);
  }
  return HX_SUCCESS;
}

extern "C" int hx_fdm_cuda_apply(hx_backend b, int m, int32_t nlist, const int32_t *list, const double *S,
                                 const double *L, const double *u, double *w) {
  HX_CALL(hx_fdm_cuda_run<double>(b, m, nlist, list, S, L, u, w, NULL, NULL));
  return HX_SUCCESS;
}

extern "C" int hx_fdm_cuda_apply_map(hx_backend b, int m, int32_t nlist, const int32_t *list, const double *S,
                                     const double *L, const int32_t *map, const double *x, double *w) {
  HX_CALL(hx_fdm_cuda_run<double>(b, m, nlist, list, S, L, NULL, w, map, x));
  return HX_SUCCESS;
}

// FP32: the same kernel on floats (the float overloads of hx_fdm_math.h)
extern "C" int hx_fdm_cuda_apply_f32(hx_backend b, int m, int32_t nlist, const int32_t *list, const float *S,
                                     const float *L, const float *u, float *w, const int32_t *map,
                                     const float *x) {
  HX_CALL(hx_fdm_cuda_run<float>(b, m, nlist, list, S, L, u, w, map, x));
  return HX_SUCCESS;
}

__global__ void hx_fdm_wgather_kernel(int64_t n, const int32_t *__restrict__ idx,
                                      const double *__restrict__ wt, const double *__restrict__ x,
                                      double *__restrict__ y) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = hx_fdm_wgather_1(x, idx[i], wt[i]);
}

extern "C" int hx_fdm_cuda_wgather(hx_backend b, int64_t n, const int32_t *idx, const double *wt,
                                   const double *x, double *y) {
  const int block = 256;
  int64_t g = (n + block - 1) / block;
  const unsigned grid = (unsigned)(g > 65535 * 16 ? 65535 * 16 : (g < 1 ? 1 : g));
  hx_fdm_wgather_kernel<<<grid, block, 0, HX_STREAM(b)>>>(n, idx, wt, x, y);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

// across the precision boundary (entry: double -> float, exit: float -> double)
__global__ void hx_fdm_wgather_mixed_kernel(int64_t n, const int32_t *__restrict__ idx,
                                            const double *__restrict__ wt, int to_f32, const void *__restrict__ x,
                                            void *__restrict__ y) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    if (to_f32)
      ((float *)y)[i] = hx_fdm_wgather_1_to_f32((const double *)x, idx[i], wt[i]);
    else
      ((double *)y)[i] = hx_fdm_wgather_1_from_f32((const float *)x, idx[i], wt[i]);
  }
}

__global__ void hx_fdm_wgather_f32_kernel(int64_t n, const int32_t *__restrict__ idx,
                                          const double *__restrict__ wt, const float *__restrict__ x,
                                          float *__restrict__ y) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = hx_fdm_wgather_1_f32(x, idx[i], (float)wt[i]);
}

static unsigned hx_fdm_wgather_grid(int64_t n, int block) {
  int64_t g = (n + block - 1) / block;
  return (unsigned)(g > 65535 * 16 ? 65535 * 16 : (g < 1 ? 1 : g));
}

extern "C" int hx_fdm_cuda_wgather_mixed(hx_backend b, int64_t n, const int32_t *idx, const double *wt,
                                         int to_f32, const void *x, void *y) {
  hx_fdm_wgather_mixed_kernel<<<hx_fdm_wgather_grid(n, 256), 256, 0, HX_STREAM(b)>>>(n, idx, wt, to_f32, x, y);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

// hx_fdm_wscatter_p's scatter (y zeroed before): the gather's forms read at x + i
__global__ void hx_fdm_wscatter_kernel(int64_t n, const int32_t *__restrict__ idx, const double *__restrict__ wt,
                                       int kind, const void *__restrict__ x, void *__restrict__ y) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int32_t j = idx[i];
    if (j < 0) continue;
    if (kind == 0)
      ((double *)y)[j] = hx_fdm_wgather_1((const double *)x + i, 0, wt[i]);
    else if (kind == 1)
      ((double *)y)[j] = hx_fdm_wgather_1_from_f32((const float *)x + i, 0, wt[i]);
    else if (kind == 2)
      ((float *)y)[j] = hx_fdm_wgather_1_to_f32((const double *)x + i, 0, wt[i]);
    else
      ((float *)y)[j] = hx_fdm_wgather_1_f32((const float *)x + i, 0, (float)wt[i]);
  }
}

extern "C" int hx_fdm_cuda_wscatter(hx_backend b, int64_t n, const int32_t *idx, const double *wt, int kind,
                                    const void *x, void *y) {
  hx_fdm_wscatter_kernel<<<hx_fdm_wgather_grid(n, 256), 256, 0, HX_STREAM(b)>>>(n, idx, wt, kind, x, y);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_fdm_cuda_wgather_f32(hx_backend b, int64_t n, const int32_t *idx, const double *wt,
                                       const float *x, float *y) {
  hx_fdm_wgather_f32_kernel<<<hx_fdm_wgather_grid(n, 256), 256, 0, HX_STREAM(b)>>>(n, idx, wt, x, y);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}
