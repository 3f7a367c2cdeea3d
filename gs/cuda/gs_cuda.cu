// CUDA gather-scatter kernels. Per-row / per-entry math comes from
// hx_gs_math.h (shared with cpu/gs_cpu.c), so both backends give the same bits.
#include "gs_impl.h"
#include "hx_cuda_check.h"

static inline unsigned hx_gs_grid(int64_t n) {
  int64_t g = (n + HX_GS_BLOCK - 1) / HX_GS_BLOCK;
  return (unsigned)(g > 65535 * 16 ? 65535 * 16 : (g < 1 ? 1 : g));
}

__global__ void hx_gs_scatter_kernel(int64_t nl, const int32_t *__restrict__ map,
                                     const double *__restrict__ g, double *__restrict__ l) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nl;
       i += (int64_t)gridDim.x * blockDim.x)
    l[i] = hx_gs_scatter_1(g, map[i]);
}

// BS6-style gather: block blk0+blockIdx.x owns rows [bstart[b], bstart[b+1]),
// whose CSR entries (at most HX_GS_NODES_PER_BLOCK unless one row is longer)
// are first loaded into shared memory with coalesced reads of col; then each
// thread sums its rows from shared memory in increasing column order.
__global__ void __launch_bounds__(HX_GS_BLOCK)
    hx_gs_gather_kernel(int32_t blk0, const int32_t *__restrict__ bstart, const int32_t *__restrict__ row,
                        const int32_t *__restrict__ col, const double *__restrict__ l,
                        double *__restrict__ g) {
  __shared__ double s_val[HX_GS_NODES_PER_BLOCK];
  const int32_t blk = blk0 + (int32_t)blockIdx.x;
  const int32_t r0 = bstart[blk], r1 = bstart[blk + 1];
  const int32_t j0 = row[r0], j1 = row[r1];
  if (j1 - j0 <= HX_GS_NODES_PER_BLOCK) {
    for (int32_t j = j0 + (int32_t)threadIdx.x; j < j1; j += blockDim.x) s_val[j - j0] = l[col[j]];
    __syncthreads();
    for (int32_t r = r0 + (int32_t)threadIdx.x; r < r1; r += blockDim.x) {
      g[r] = hx_gs_seq_sum(s_val, row[r] - j0, row[r + 1] - j0);
    }
  } else {
    // one long row (a block of its own): read straight from global memory
    for (int32_t r = r0 + (int32_t)threadIdx.x; r < r1; r += blockDim.x)
      g[r] = hx_gs_row_sum(l, col, row[r], row[r + 1]);
  }
}

__global__ void hx_gs_pack_kernel(int64_t n, const int32_t *__restrict__ idx, const double *__restrict__ g,
                                  double *__restrict__ buf) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    buf[i] = g[idx[i]];
}

__global__ void hx_gs_combine_kernel(int op, int64_t n, double *__restrict__ g_sh,
                                     const int32_t *__restrict__ off, const int32_t *__restrict__ pos,
                                     const int32_t *__restrict__ self, const double *__restrict__ recv) {
  for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < n;
       s += (int64_t)gridDim.x * blockDim.x)
    g_sh[s] = hx_gs_combine_1(op, g_sh[s], recv, pos + off[s], off[s + 1] - off[s], self[s]);
}

__global__ void hx_gs_zero_idx_kernel(int64_t n, const int32_t *__restrict__ idx, double *__restrict__ g) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    g[idx[i]] = 0.0;
}

extern "C" int hx_cuda_gs_scatter(hx_backend b, int64_t nl, const int32_t *map, const double *g, double *l) {
  if (nl <= 0) return HX_SUCCESS;
  hx_gs_scatter_kernel<<<hx_gs_grid(nl), HX_GS_BLOCK, 0, HX_STREAM(b)>>>(nl, map, g, l);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_gs_gather(hx_backend b, int32_t blk0, int32_t blk1, const int32_t *bstart,
                                 const int32_t *row, const int32_t *col, const double *l, double *g) {
  if (blk1 <= blk0) return HX_SUCCESS;
  // grid.x is at most 2^31-1 blocks: every block has >= 1 row and rows < 2^31
  hx_gs_gather_kernel<<<(unsigned)(blk1 - blk0), HX_GS_BLOCK, 0, HX_STREAM(b)>>>(blk0, bstart, row, col, l,
                                                                                 g);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

// pack and combine run on the handle's exchange queue (gs.c), not on the
// default stream: the default stream goes on with the interior meanwhile
extern "C" int hx_cuda_gs_pack_q(hx_queue q, int64_t n, const int32_t *idx, const double *g, double *buf) {
  if (n <= 0) return HX_SUCCESS;
  hx_gs_pack_kernel<<<hx_gs_grid(n), HX_GS_BLOCK, 0, HX_QSTREAM(q)>>>(n, idx, g, buf);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_gs_combine_q(hx_queue q, int op, int64_t n, double *g_sh, const int32_t *off,
                                    const int32_t *pos, const int32_t *self, const double *recv) {
  if (n <= 0) return HX_SUCCESS;
  hx_gs_combine_kernel<<<hx_gs_grid(n), HX_GS_BLOCK, 0, HX_QSTREAM(q)>>>(op, n, g_sh, off, pos, self, recv);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_gs_zero_idx(hx_backend b, int64_t n, const int32_t *idx, double *g) {
  if (n <= 0) return HX_SUCCESS;
  hx_gs_zero_idx_kernel<<<hx_gs_grid(n), HX_GS_BLOCK, 0, HX_STREAM(b)>>>(n, idx, g);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}
