// CUDA element operator templated on the value type T (instantiated for
// float; the FP64 kernel of ax_cuda.cu is unchanged). Same structure as
// ax_cuda.cu: an N x N thread layout per element looping over the third
// direction, u in shared memory, the fluxes of one k layer in shared memory,
// NE elements per block for small orders. Per-node math: ../hx_ax_math.h,
// whose plain names are overloaded on the type under C++ (the float
// instantiation is the one cpu/ax_f32_cpu.c calls as *_f32). The element
// partial u.w accumulates the products in double, with a fixed tree.
// Precomputed records as cpu/ax_f32_cpu.c (ax_prec.c): kind per element from
// eoff (general: per-node floats; affine: 7 constants, g = w_q m with w_q the
// float products (w_i w_j) w_k, as the CPU's table); map != NULL: the
// scatter fused in (each thread loads its column through the L->G map).
#include "../hx_gs_math.h"
#include "prec_impl.h"
#include "hx_cuda_check.h"

static constexpr __host__ __device__ int hx_axt_ne(int N) { return 256 / (N * N) > 0 ? 256 / (N * N) : 1; }
static constexpr __host__ __device__ int hx_axt_threads(int N) { return N * N * hx_axt_ne(N); }
static constexpr __host__ __device__ int hx_axt_pow2(int m) { return m <= 1 ? 1 : 2 * hx_axt_pow2((m + 1) / 2); }

template <typename T, int N, bool OTF>
__global__ void __launch_bounds__(hx_axt_threads(N))
    hx_axt_kernel(int32_t nlist, const int32_t *__restrict__ list, const T *__restrict__ basis,
                  const T *__restrict__ geo, const int64_t *__restrict__ eoff, int ncomp,
                  const int32_t *__restrict__ map, const T *__restrict__ u, T *__restrict__ w,
                  double *__restrict__ part) {
  constexpr int NE = hx_axt_ne(N), N2 = N * N, N3 = N2 * N;
  __shared__ T s_D[N2];
  __shared__ T s_tw[2 * N];
  __shared__ T s_u[NE][N3];
  __shared__ T s_fr[NE][N2];
  __shared__ T s_fs[NE][N2];
  __shared__ T s_c[NE][OTF ? HX_AX_OTF_STRIDE : 1];
  __shared__ double s_red[NE][N2];

  const int i = threadIdx.x, j = threadIdx.y, z = threadIdx.z;
  const int tid = i + N * j;
  const int32_t pos = (int32_t)blockIdx.x * NE + z;
  const bool active = pos < nlist;
  const size_t e = (size_t)(active ? (list ? list[pos] : pos) : (list ? list[0] : 0));

  for (int q = tid + N2 * z; q < N2; q += N2 * NE) s_D[q] = basis[q];
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
    // the record holds the map coefficients (formed in double at setup), kappa, lambda
    const T *gv = geo + e * HX_AX_OTF_STRIDE;
    for (int q = tid; q < HX_AX_OTF_STRIDE; q += N2) s_c[z][q] = gv[q];
  } else {
    (void)s_c;
  }
  __syncthreads();

  constexpr int CS = N3 + HX_AX_PAD;
  const int64_t eo = OTF ? 0 : eoff[e];
  const int kind = (int)(eo & 3);  // HX_AXK_GEN or HX_AXK_AFF: uniform over the element
  (void)kind;
  const T *ge = OTF ? nullptr : geo + (eo >> 2);
#pragma unroll
  for (int k = 0; k < N; k++) {
    const int q = i + N * (j + N * k);
    T ur = (T)0, us = (T)0, ut = (T)0;
#pragma unroll
    for (int m = 0; m < N; m++) {
      ur += s_D[i * N + m] * s_u[z][m + N * (j + N * k)];
      us += s_D[j * N + m] * s_u[z][i + N * (m + N * k)];
      ut += s_D[k * N + m] * r_u[m];
    }
    T g[6], mm;
    if constexpr (OTF) {
      T J[9];
      hx_hex8_jacobian(s_c[z], s_tw[i], s_tw[j], s_tw[k], J);
      const T wq = s_tw[N + i] * s_tw[N + j] * s_tw[N + k];
      hx_geo_factors(J, s_c[z][24] * wq, s_c[z][25] * wq, g, &mm);
    } else if (kind == HX_AXK_AFF) {
      const T wq = s_tw[N + i] * s_tw[N + j] * s_tw[N + k];  // the CPU's w3 order
      hx_geo_affine_node_f32(ge, wq, ncomp, g, &mm);
    } else {
#pragma unroll
      for (int c = 0; c < 6; c++) g[c] = ge[c * CS + q];
      mm = ncomp == 7 ? ge[6 * CS + q] : (T)0;
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
    for (int m = 0; m < N; m++) acc += s_D[m * N + i] * s_fr[z][m + N * j] + s_D[m * N + j] * s_fs[z][i + N * m];
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
    constexpr int P2 = hx_axt_pow2(N2);
    s_red[z][tid] = uw;
    __syncthreads();
#pragma unroll
    for (int st = P2 / 2; st > 0; st >>= 1) {
      if (tid < st && tid + st < N2) s_red[z][tid] += s_red[z][tid + st];
      __syncthreads();
    }
    if (active && tid == 0) part[pos] = s_red[z][0];
  }
}

template <typename T, int N>
static int hx_axt_launch(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                         const T *basis, const T *geo, const T *u, T *w, double *part) {
  constexpr int NE = hx_axt_ne(N);
  const dim3 block(N, N, NE);
  const unsigned grid = (unsigned)((nlist + NE - 1) / NE);
  cudaStream_t s = HX_STREAM(ax->b);
  if (ax->mode == HX_GEO_ONTHEFLY)
    hx_axt_kernel<T, N, true><<<grid, block, 0, s>>>(nlist, list, basis, geo, nullptr, 7, map, u, w, part);
  else
    hx_axt_kernel<T, N, false>
        <<<grid, block, 0, s>>>(nlist, list, basis, geo, ax->d_eoff, ax->ncomp, map, u, w, part);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_ax_cuda_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list,
                                    const int32_t *map, const float *u, float *w, double *part) {
  const float *basis = ax->d_basis32, *geo = ax->d_geo32;
  switch (ax->n) {
#define HX_AXT_CASE(N)                                                            \
  case N:                                                                         \
    HX_CALL((hx_axt_launch<float, N>(ax, nlist, list, map, basis, geo, u, w, part)));    \
    break;
    HX_AXT_CASE(2)
    HX_AXT_CASE(3)
    HX_AXT_CASE(4)
    HX_AXT_CASE(5)
    HX_AXT_CASE(6)
    HX_AXT_CASE(7)
    HX_AXT_CASE(8)
    HX_AXT_CASE(9)
    HX_AXT_CASE(10)
    HX_AXT_CASE(11)
    HX_AXT_CASE(12)
    HX_AXT_CASE(13)
    HX_AXT_CASE(14)
    HX_AXT_CASE(15)
    HX_AXT_CASE(16)
#undef HX_AXT_CASE
    default:
      return HX_ERROR(HX_ERR_ARG, "order p = %d outside 1..%d", ax->p, HX_AX_PMAX);
  }
  return HX_SUCCESS;
}
