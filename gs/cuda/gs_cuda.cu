// CUDA gather-scatter kernels, written once as templates on the value type
// and instantiated for double (plain names) and float (_f32). Per-row /
// per-entry math: hx_gs_math.h, whose float instantiation's plain names are
// overloaded on the type under C++; the same functions as cpu/gs_cpu_t.h, so
// both backends give the same bits in each precision.
#include "gs_impl.h"
#include "hx_cuda_check.h"

static inline unsigned hx_gs_grid(int64_t n) {
  int64_t g = (n + HX_GS_BLOCK - 1) / HX_GS_BLOCK;
  return (unsigned)(g > 65535 * 16 ? 65535 * 16 : (g < 1 ? 1 : g));
}

#define HX_GSF_FOR(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

template <typename T>
__global__ void hx_gst_scatter_kernel(int64_t nl, const int32_t *__restrict__ map, const T *__restrict__ g,
                                      T *__restrict__ l) {
  HX_GSF_FOR(i, nl) l[i] = hx_gs_scatter_1(g, map[i]);
}

// BS6-style gather: block blk0+blockIdx.x owns rows [bstart[b], bstart[b+1]),
// whose CSR entries (at most HX_GS_NODES_PER_BLOCK unless one row is longer)
// are first loaded into shared memory with coalesced reads of col; then each
// thread sums its rows from shared memory in increasing column order. One long
// row (a block of its own) is read straight from global memory.
template <typename T>
__global__ void __launch_bounds__(HX_GS_BLOCK)
    hx_gst_gather_kernel(int32_t blk0, const int32_t *__restrict__ bstart, const int32_t *__restrict__ row,
                         const int32_t *__restrict__ col, const T *__restrict__ l, T *__restrict__ g) {
  __shared__ T s_val[HX_GS_NODES_PER_BLOCK];
  const int32_t blk = blk0 + (int32_t)blockIdx.x;
  const int32_t r0 = bstart[blk], r1 = bstart[blk + 1];
  const int32_t j0 = row[r0], j1 = row[r1];
  if (j1 - j0 <= HX_GS_NODES_PER_BLOCK) {
    for (int32_t j = j0 + (int32_t)threadIdx.x; j < j1; j += blockDim.x) s_val[j - j0] = l[col[j]];
    __syncthreads();
    for (int32_t r = r0 + (int32_t)threadIdx.x; r < r1; r += blockDim.x)
      g[r] = hx_gs_seq_sum(s_val, row[r] - j0, row[r + 1] - j0);
  } else {
    for (int32_t r = r0 + (int32_t)threadIdx.x; r < r1; r += blockDim.x)
      g[r] = hx_gs_row_sum(l, col, row[r], row[r + 1]);
  }
}

template <typename T>
__global__ void hx_gst_pack_kernel(int64_t n, const int32_t *__restrict__ idx, const T *__restrict__ g,
                                   T *__restrict__ buf) {
  HX_GSF_FOR(i, n) buf[i] = g[idx[i]];
}

template <typename T>
__global__ void hx_gst_combine_kernel(int op, int64_t n, T *__restrict__ g_sh, const int32_t *__restrict__ off,
                                      const int32_t *__restrict__ pos, const int32_t *__restrict__ self,
                                      const T *__restrict__ recv) {
  HX_GSF_FOR(s, n) g_sh[s] = hx_gs_combine_1(op, g_sh[s], recv, pos + off[s], off[s + 1] - off[s], self[s]);
}

template <typename T>
__global__ void hx_gst_zero_idx_kernel(int64_t n, const int32_t *__restrict__ idx, T *__restrict__ g) {
  HX_GSF_FOR(i, n) g[idx[i]] = (T)0;
}

// The launchers of one precision (SUF: empty for double, _f32 for float).
// pack and combine run on the handle's exchange queue (gs.c), not on the
// default stream: the default stream goes on with the interior meanwhile.
#define HX_GS_CUDA_LAUNCHERS(T, SUF)                                                                            \
  extern "C" int hx_cuda_gs_scatter##SUF(hx_backend b, int64_t nl, const int32_t *map, const T *g, T *l) {      \
    if (nl <= 0) return HX_SUCCESS;                                                                             \
    hx_gst_scatter_kernel<T><<<hx_gs_grid(nl), HX_GS_BLOCK, 0, HX_STREAM(b)>>>(nl, map, g, l);                 \
    HX_CUDA_LAUNCH_CHECK();                                                                                     \
    return HX_SUCCESS;                                                                                          \
  }                                                                                                             \
  /* grid.x is at most 2^31-1 blocks: every block has >= 1 row and rows < 2^31 */                               \
  extern "C" int hx_cuda_gs_gather##SUF(hx_backend b, int32_t blk0, int32_t blk1, const int32_t *bstart,       \
                                        const int32_t *row, const int32_t *col, const T *l, T *g) {             \
    if (blk1 <= blk0) return HX_SUCCESS;                                                                        \
    hx_gst_gather_kernel<T>                                                                                     \
        <<<(unsigned)(blk1 - blk0), HX_GS_BLOCK, 0, HX_STREAM(b)>>>(blk0, bstart, row, col, l, g);             \
    HX_CUDA_LAUNCH_CHECK();                                                                                     \
    return HX_SUCCESS;                                                                                          \
  }                                                                                                             \
  extern "C" int hx_cuda_gs_pack##SUF##_q(hx_queue q, int64_t n, const int32_t *idx, const T *g, T *buf) {     \
    if (n <= 0) return HX_SUCCESS;                                                                              \
    hx_gst_pack_kernel<T><<<hx_gs_grid(n), HX_GS_BLOCK, 0, HX_QSTREAM(q)>>>(n, idx, g, buf);                   \
    HX_CUDA_LAUNCH_CHECK();                                                                                     \
    return HX_SUCCESS;                                                                                          \
  }                                                                                                             \
  extern "C" int hx_cuda_gs_combine##SUF##_q(hx_queue q, int op, int64_t n, T *g_sh, const int32_t *off,       \
                                             const int32_t *pos, const int32_t *self, const T *recv) {          \
    if (n <= 0) return HX_SUCCESS;                                                                              \
    hx_gst_combine_kernel<T><<<hx_gs_grid(n), HX_GS_BLOCK, 0, HX_QSTREAM(q)>>>(op, n, g_sh, off, pos, self,    \
                                                                              recv);                            \
    HX_CUDA_LAUNCH_CHECK();                                                                                     \
    return HX_SUCCESS;                                                                                          \
  }                                                                                                             \
  extern "C" int hx_cuda_gs_zero_idx##SUF(hx_backend b, int64_t n, const int32_t *idx, T *g) {                  \
    if (n <= 0) return HX_SUCCESS;                                                                              \
    hx_gst_zero_idx_kernel<T><<<hx_gs_grid(n), HX_GS_BLOCK, 0, HX_STREAM(b)>>>(n, idx, g);                     \
    HX_CUDA_LAUNCH_CHECK();                                                                                     \
    return HX_SUCCESS;                                                                                          \
  }

HX_GS_CUDA_LAUNCHERS(double, )
HX_GS_CUDA_LAUNCHERS(float, _f32)

// the FP32 pack and combine on the default queue (the hx_backend forms of prec_impl.h)
extern "C" int hx_cuda_gs_pack_f32(hx_backend b, int64_t n, const int32_t *idx, const float *g, float *buf) {
  HX_CALL(hx_cuda_gs_pack_f32_q(b->q0, n, idx, g, buf));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_gs_combine_f32(hx_backend b, int op, int64_t n, float *g_sh, const int32_t *off,
                                      const int32_t *pos, const int32_t *self, const float *recv) {
  HX_CALL(hx_cuda_gs_combine_f32_q(b->q0, op, n, g_sh, off, pos, self, recv));
  return HX_SUCCESS;
}
