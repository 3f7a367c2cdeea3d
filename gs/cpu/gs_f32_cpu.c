/* CPU (OpenMP) FP32 gather-scatter loops: the loops of gs_cpu.c on float
 * data, calling the float instantiation of hx_gs_math.h (same order of
 * operations, so the CUDA FP32 kernels give the same bits). */
#include "gs_impl.h"

void hx_cpu_gs_scatter_f32(int64_t nl, const int32_t *HX_RESTRICT map, const float *HX_RESTRICT g,
                           float *HX_RESTRICT l) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nl; i++) l[i] = hx_gs_scatter_1_f32(g, map[i]);
}

void hx_cpu_gs_gather_acc_f32(int nchunk, const int64_t *HX_RESTRICT chunk, const uint32_t *HX_RESTRICT acc,
                              const float *HX_RESTRICT l, float *HX_RESTRICT g) {
#pragma omp parallel for schedule(static, 1)
  for (int c = 0; c < nchunk; c++) {
    const int64_t i1 = chunk[c + 1];
    for (int64_t i = chunk[c]; i < i1; i++) {
      const uint32_t a = acc[i];
      if (a == HX_GS_SKIP) continue;
      const uint32_t r = a & ~HX_GS_FIRST;
      g[r] = hx_gs_acc_1_f32(g[r], l[i], (int)(a >> 31));
    }
  }
}

void hx_cpu_gs_gather_rows_f32(int64_t n, const int32_t *HX_RESTRICT rows, const int32_t *HX_RESTRICT row,
                               const int32_t *HX_RESTRICT col, const float *HX_RESTRICT l,
                               float *HX_RESTRICT g) {
#pragma omp parallel for schedule(static) if (n > 8192)
  for (int64_t m = 0; m < n; m++) {
    const int32_t r = rows[m];
    g[r] = hx_gs_row_sum_f32(l, col, row[r], row[r + 1]);
  }
}

void hx_cpu_gs_pack_f32(int64_t n, const int32_t *HX_RESTRICT idx, const float *HX_RESTRICT g,
                        float *HX_RESTRICT buf) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) buf[i] = g[idx[i]];
}

void hx_cpu_gs_combine_f32(int op, int64_t n_shared, float *HX_RESTRICT g_shared,
                           const int32_t *HX_RESTRICT off, const int32_t *HX_RESTRICT pos,
                           const int32_t *HX_RESTRICT self, const float *HX_RESTRICT recv) {
#pragma omp parallel for schedule(static) if (n_shared > 4096)
  for (int64_t s = 0; s < n_shared; s++)
    g_shared[s] = hx_gs_combine_1_f32(op, g_shared[s], recv, pos + off[s], off[s + 1] - off[s], self[s]);
}

void hx_cpu_gs_zero_idx_f32(int64_t n, const int32_t *HX_RESTRICT idx, float *HX_RESTRICT g) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) g[idx[i]] = 0.0f;
}
