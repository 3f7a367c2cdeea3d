// CUDA element operator, FP64 and FP32 from one kernel templated on the value
// type: a 2D (N x N) thread layout per element looping over the third
// direction (the "k loop" of the BP5 kernels), u of the element in shared
// memory, the fluxes of one k layer in shared memory, the t-direction work
// in registers. Small orders pack NE elements per block (blockDim.z) so a
// block has ~256 threads. Per-node math: ../hx_ax_math.h (shared with cpu/;
// its plain names are overloaded on the type under C++). FP32 records as
// ax_prec.c: general (per-node floats), affine (7 constants, g = w_q m with
// w_q the float products (w_i w_j) w_k, as the CPU's table) and scaled
// affine (the same plus kappa, lambda per node: hx_geo_scaled_node for both
// types); split records exist in FP64 only.
#include "prec_impl.h"
#include "../hx_gs_math.h"
#include "hx_cuda_check.h"

// elements per block and threads per block for N points per direction
static constexpr __host__ __device__ int hx_ax_ne(int N) { return 256 / (N * N) > 0 ? 256 / (N * N) : 1; }
static constexpr __host__ __device__ int hx_ax_threads(int N) { return N * N * hx_ax_ne(N); }
static constexpr __host__ __device__ int hx_ax_pow2(int m) {
  return m <= 1 ? 1 : 2 * hx_ax_pow2((m + 1) / 2);
}

// Row stride of the padded copy of D in shared memory: the gradient reads
// D[i][m] and D[j][m] with i (j) varying across the warp; at even N a stride
// of N doubles puts rows i and i+2 in the same banks (4-way conflicts at
// N = 8), N + 1 spreads them over distinct banks.
static constexpr __host__ __device__ int hx_ax_dstride(int N) { return N % 2 == 0 ? N + 1 : N; }
// Minimum resident blocks per SM for __launch_bounds__: caps the registers
// per thread so that the occupancy the shared memory allows is not lost to
// registers (the r_u, r_w columns grow with N). Orders up to 8 (256-thread
// blocks, <= 21 KB of shared memory) ask for 2, the larger ones for 1.
// A first setting, not yet measured on a device (docs/operator.md).
static constexpr __host__ __device__ int hx_ax_minblocks(int N) { return N <= 8 ? 2 : 1; }

// The record of an on-the-fly element: FP64 keeps the 8 vertices (the map
// coefficients formed per element here), FP32 the 24 coefficients already
// formed in double at setup (ax_prec.c); split records exist in FP64 only.

// The element kernel for value type T (double: the FP64 operator; float: the
// FP32 one of ax_prec.c, its element partial u.w accumulating the products in
// double). map != NULL: the scatter fused in (each thread loads its column
// through the L->G map).
template <typename T, int N, bool OTF>
__global__ void __launch_bounds__(hx_ax_threads(N), hx_ax_minblocks(N))
    hx_ax_kernel(int32_t nlist, const int32_t *__restrict__ list, const T *__restrict__ basis,
                 const T *__restrict__ geo, const int64_t *__restrict__ eoff, int ncomp,
                 const int32_t *__restrict__ map, const T *__restrict__ u, T *__restrict__ w,
                 double *__restrict__ part) {
  constexpr int NE = hx_ax_ne(N), N2 = N * N, N3 = N2 * N, NP = hx_ax_dstride(N);
  constexpr bool F64 = sizeof(T) == sizeof(double);
  __shared__ T s_D[N2];
  __shared__ T s_Dp[N * NP];
  __shared__ T s_tw[2 * N];
  __shared__ T s_u[NE][N3];
  __shared__ T s_fr[NE][N2];
  __shared__ T s_fs[NE][N2];
  __shared__ T s_c[NE][OTF ? HX_AX_OTF_STRIDE : 1];
  __shared__ double s_red[NE][F64 ? 1 : N2];  // FP64 reduces in s_fr

  const int i = threadIdx.x, j = threadIdx.y, z = threadIdx.z;
  const int tid = i + N * j;
  const int32_t pos = (int32_t)blockIdx.x * NE + z;
  const bool active = pos < nlist;
  // inactive slots of the last block work on a valid element and store nothing
  const size_t e = (size_t)(active ? (list ? list[pos] : pos) : (list ? list[0] : 0));

  for (int q = tid + N2 * z; q < N2; q += N2 * NE) {
    s_D[q] = basis[q];
    s_Dp[(q / N) * NP + q % N] = basis[q];
  }
  for (int q = tid + N2 * z; q < 2 * N; q += N2 * NE) s_tw[q] = basis[N2 + q];
  const T *ue = u + e * N3;
  const int32_t *me = map ? map + e * N3 : nullptr;
  T r_u[N], r_w[N];
#pragma unroll
  for (int k = 0; k < N; k++) {
    // fused scatter: the element's values straight from the G-vector
    r_u[k] = me ? hx_gs_scatter_1(u, me[i + N * (j + N * k)]) : ue[i + N * (j + N * k)];
    s_u[z][i + N * (j + N * k)] = r_u[k];
    r_w[k] = (T)0;
  }
  if constexpr (OTF) {
    const T *gv = geo + e * HX_AX_OTF_STRIDE;
    if constexpr (F64) {
      if (tid == 0) {
        hx_hex8_coeffs(gv, s_c[z]);
        s_c[z][24] = gv[24];
        s_c[z][25] = gv[25];
      }
    } else {
      for (int q = tid; q < HX_AX_OTF_STRIDE; q += N2) s_c[z][q] = gv[q];
    }
  } else {
    (void)s_c;
  }
  __syncthreads();

  constexpr int CS = N3 + HX_AX_PAD;  // padded component stride
  const int64_t eo = OTF ? 0 : eoff[e];
  const int kind = (int)(eo & 3);  // HX_AXK_*: uniform over the element
  const T *ge = OTF ? nullptr : geo + (eo >> 2);
#pragma unroll
  for (int k = 0; k < N; k++) {
    const int q = i + N * (j + N * k);
    T ur = (T)0, us = (T)0, ut = (T)0;
#pragma unroll
    for (int m = 0; m < N; m++) {
      ur += s_Dp[i * NP + m] * s_u[z][m + N * (j + N * k)];
      us += s_Dp[j * NP + m] * s_u[z][i + N * (m + N * k)];
      ut += s_D[k * N + m] * r_u[m];
    }
    // mm: every kind sets it, but not visibly to g++ -O1 on the emulator's host build
    T g[6], mm = (T)0;
    if constexpr (OTF) {
      T J[9];
      hx_hex8_jacobian(s_c[z], s_tw[i], s_tw[j], s_tw[k], J);
      const T wq = s_tw[N + i] * s_tw[N + j] * s_tw[N + k];
      hx_geo_factors(J, s_c[z][24] * wq, s_c[z][25] * wq, g, &mm);
    } else if (kind == HX_AXK_GEN || (!F64 && kind == HX_AXK_SPL)) {  // FP32 has no split records
#pragma unroll
      for (int c = 0; c < 6; c++) g[c] = ge[c * CS + q];
      mm = ncomp == 7 ? ge[6 * CS + q] : (T)0;
    } else {
      const T wq = s_tw[N + i] * s_tw[N + j] * s_tw[N + k];  // the CPU's w3 order
      if (kind == HX_AXK_AFF) {
        hx_geo_affine_node(ge, wq, ncomp, g, &mm);
      } else if (kind == HX_AXK_AFV) {
        const T lq = ncomp == 7 ? ge[HX_AX_MEANS + CS + q] : (T)0;
        hx_geo_scaled_node(ge, wq, ge[HX_AX_MEANS + q], lq, ncomp, g, &mm);
      } else {
        if constexpr (F64)
          hx_geo_split_node(ge, reinterpret_cast<const float *>(ge + HX_AX_MEANS) + q, hx_ax_cs32(N3), wq, ncomp,
                            g, &mm);
      }
    }
    T fr, fs, ft;
    hx_apply_g(g[0], g[1], g[2], g[3], g[4], g[5], ur, us, ut, &fr, &fs, &ft);
    r_w[k] += mm * r_u[k];
    s_fr[z][tid] = fr;
    s_fs[z][tid] = fs;
#pragma unroll
    for (int kk = 0; kk < N; kk++) r_w[kk] += s_D[k * N + kk] * ft;
    __syncthreads();
    T acc = (T)0;
#pragma unroll
    for (int m = 0; m < N; m++)
      acc += s_D[m * N + i] * s_fr[z][m + N * j] + s_D[m * N + j] * s_fs[z][i + N * m];
    r_w[k] += acc;
    __syncthreads();
  }

  T *we = w + e * N3;
  double uw = 0.0;
#pragma unroll
  for (int k = 0; k < N; k++) {
    if (active) we[i + N * (j + N * k)] = r_w[k];
    uw += (double)r_u[k] * (double)r_w[k];
  }
  if (part) {  // uniform over the block
    // deterministic tree over the N2 threads of the element (padded to a power of 2)
    constexpr int P2 = hx_ax_pow2(N2);
    double *red;
    if constexpr (F64) red = reinterpret_cast<double *>(s_fr[z]);
    else red = s_red[z];
    red[tid] = uw;
    __syncthreads();
#pragma unroll
    for (int st = P2 / 2; st > 0; st >>= 1) {
      if (tid < st && tid + st < N2) red[tid] += red[tid + st];
      __syncthreads();
    }
    if (active && tid == 0) part[pos] = red[0];
  }
}

// One block sums m partials in a fixed order (strided per thread, then a tree).
#define HX_AX_SUM_BLOCK 256
__global__ void hx_ax_sum_kernel(int32_t m, double *__restrict__ part) {
  __shared__ double s[HX_AX_SUM_BLOCK];
  double v = 0.0;
  for (int32_t q = threadIdx.x; q < m; q += HX_AX_SUM_BLOCK) v += part[q];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int st = HX_AX_SUM_BLOCK / 2; st > 0; st >>= 1) {
    if ((int)threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[0] = s[0];
}

template <typename T, int N>
static int hx_ax_launch(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                        const T *basis, const T *geo, const T *u, T *w, double *part) {
  constexpr int NE = hx_ax_ne(N);
  const dim3 block(N, N, NE);
  const unsigned grid = (unsigned)((nlist + NE - 1) / NE);
  cudaStream_t s = HX_STREAM(ax->b);
  if (ax->mode == HX_GEO_ONTHEFLY)
    hx_ax_kernel<T, N, true><<<grid, block, 0, s>>>(nlist, list, basis, geo, nullptr, 7, map, u, w, part);
  else
    hx_ax_kernel<T, N, false><<<grid, block, 0, s>>>(nlist, list, basis, geo, ax->d_eoff, ax->ncomp, map, u, w, part);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

template <typename T>
static int hx_ax_dispatch(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                          const T *basis, const T *geo, const T *u, T *w, double *part) {
  switch (ax->n) {
#define HX_AX_CASE(N)                                                                  \
  case N:                                                                              \
    HX_CALL((hx_ax_launch<T, N>(ax, nlist, list, map, basis, geo, u, w, part)));       \
    break;
    HX_AX_CASE(2)
    HX_AX_CASE(3)
    HX_AX_CASE(4)
    HX_AX_CASE(5)
    HX_AX_CASE(6)
    HX_AX_CASE(7)
    HX_AX_CASE(8)
    HX_AX_CASE(9)
    HX_AX_CASE(10)
    HX_AX_CASE(11)
    HX_AX_CASE(12)
    HX_AX_CASE(13)
    HX_AX_CASE(14)
    HX_AX_CASE(15)
    HX_AX_CASE(16)
#undef HX_AX_CASE
    default:
      return HX_ERROR(HX_ERR_ARG, "order p = %d outside 1..%d", ax->p, HX_AX_PMAX);
  }
  return HX_SUCCESS;
}

extern "C" int hx_cuda_ax_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                                const double *u, double *w, double *part) {
  HX_CALL(hx_ax_dispatch<double>(ax, nlist, list, map, ax->d_basis, ax->d_geo, u, w, part));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_ax_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list,
                                    const int32_t *map, const float *u, float *w, double *part) {
  HX_CALL(hx_ax_dispatch<float>(ax, nlist, list, map, ax->d_basis32, ax->d_geo32, u, w, part));
  return HX_SUCCESS;
}

extern "C" int hx_ax_cuda_sum(hx_backend b, int32_t m, double *part, double *result) {
  cudaStream_t s = HX_STREAM(b);
  hx_ax_sum_kernel<<<1, HX_AX_SUM_BLOCK, 0, s>>>(m, part);
  HX_CUDA_LAUNCH_CHECK();
  HX_CUDA(cudaMemcpyAsync(b->q0->h_result, part, sizeof(double), cudaMemcpyDeviceToHost, s));
  HX_CUDA(cudaStreamSynchronize(s));
  *result = *b->q0->h_result;
  return HX_SUCCESS;
}

extern "C" int hx_ax_cuda_sum_to(hx_backend b, int32_t m, double *part, double *d_dst) {
  cudaStream_t s = HX_STREAM(b);
  hx_ax_sum_kernel<<<1, HX_AX_SUM_BLOCK, 0, s>>>(m, part);
  HX_CUDA_LAUNCH_CHECK();
  HX_CUDA(cudaMemcpyAsync(d_dst, part, sizeof(double), cudaMemcpyDeviceToDevice, s));
  return HX_SUCCESS;
}

// FP64 peak: 8 independent FMA chains per thread (2 flops each per step).
__global__ void hx_ax_peak_kernel(long iters, double m, double c, double *out) {
  double x[8];
#pragma unroll
  for (int l = 0; l < 8; l++) x[l] = 1.0 + 1e-3 * (l + threadIdx.x);
  for (long it = 0; it < iters; it++) {
#pragma unroll
    for (int l = 0; l < 8; l++) x[l] = fma(x[l], m, c);
  }
  double s = 0.0;
#pragma unroll
  for (int l = 0; l < 8; l++) s += x[l];
  if (s == 12345.678) out[0] = s;  // never true; keeps the chains alive
}

extern "C" int hx_ax_cuda_peak(hx_backend b, double seconds, double *gflops) {
  cudaStream_t s = HX_STREAM(b);
  const int threads = 256, blocks = (b->dev.sm_count > 0 ? b->dev.sm_count : 1) * 16;
  cudaEvent_t e0, e1;
  HX_CUDA(cudaEventCreate(&e0));
  HX_CUDA(cudaEventCreate(&e1));
  long iters = 1024;
  float ms = 0.0f;
  HX_CALL(hx_backend_partials(b, 1));
  double *out = b->q0->d_partials;
  for (;;) {
    HX_CUDA(cudaEventRecord(e0, s));
    hx_ax_peak_kernel<<<blocks, threads, 0, s>>>(iters, 0.9999999, 1e-7, out);
    HX_CUDA_LAUNCH_CHECK();
    HX_CUDA(cudaEventRecord(e1, s));
    HX_CUDA(cudaEventSynchronize(e1));
    HX_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    if (ms * 1e-3 >= 0.5 * seconds || iters > (1L << 36)) break;
    iters *= 4;
  }
  HX_CUDA(cudaEventDestroy(e0));
  HX_CUDA(cudaEventDestroy(e1));
  *gflops = 16.0 * (double)iters * blocks * threads / (ms * 1e-3) * 1e-9;
  return HX_SUCCESS;
}

// The operator on nk columns (hx_ax_apply_many_prec): one launch per column
// of the one-vector kernel, in column order on the backend's stream (the
// partials of column c at part + c nlist). The geometry is read once per
// column here; a kernel that holds an element's factors for all columns is
// the next step (docs/performance.md, block solve).
template <typename T>
static int hx_ax_many(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map, int nk,
                      const T *basis, const T *geo, const T *const *u, T *const *w, double *part) {
  for (int c = 0; c < nk; c++)
    HX_CALL(hx_ax_dispatch<T>(ax, nlist, list, map, basis, geo, u[c], w[c], part ? part + (size_t)c * nlist : nullptr));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_ax_apply_many(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list,
                                     const int32_t *map, int nk, const double *const *u, double *const *w,
                                     double *part) {
  HX_CALL(hx_ax_many<double>(ax, nlist, list, map, nk, ax->d_basis, ax->d_geo, u, w, part));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_ax_apply_many_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list,
                                         const int32_t *map, int nk, const float *const *u, float *const *w,
                                         double *part) {
  HX_CALL(hx_ax_many<float>(ax, nlist, list, map, nk, ax->d_basis32, ax->d_geo32, u, w, part));
  return HX_SUCCESS;
}
