/* The CPU (OpenMP) gather-scatter loops for one value type, written once
 * (included by cpu/gs_cpu.c through hx_instantiate.h, no include guard):
 * HX_REAL the type, HX_FN(name) the instantiation's names (plain for double,
 * _f32 for float), HX_R(x) every literal. Per-row / per-entry math: the same
 * instantiation of hx_gs_math.h, so the CUDA kernels of the same precision
 * give the same bits. */

void HX_FN(hx_cpu_gs_scatter)(int64_t nl, const int32_t *HX_RESTRICT map, const HX_REAL *HX_RESTRICT g,
                              HX_REAL *HX_RESTRICT l) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nl; i++) l[i] = HX_FN(hx_gs_scatter_1)(g, map[i]);
}

/* Chunk c adds its L entries to their rows in increasing L order; the
 * first entry of a row assigns (hx_gs_acc_1), so no zeroing pass is needed
 * and each row gets exactly the bits of hx_gs_row_sum. Rows of one chunk
 * are touched by no other chunk (shared and cut rows are skipped and summed
 * through the CSR), so the chunks run in parallel without atomics. */
void HX_FN(hx_cpu_gs_gather_acc)(int nchunk, const int64_t *HX_RESTRICT chunk, const uint32_t *HX_RESTRICT acc,
                                 const HX_REAL *HX_RESTRICT l, HX_REAL *HX_RESTRICT g) {
#pragma omp parallel for schedule(static, 1)
  for (int c = 0; c < nchunk; c++) {
    const int64_t i1 = chunk[c + 1];
    for (int64_t i = chunk[c]; i < i1; i++) {
      const uint32_t a = acc[i];
      if (a == HX_GS_SKIP) continue;
      const uint32_t r = a & ~HX_GS_FIRST;
      g[r] = HX_FN(hx_gs_acc_1)(g[r], l[i], (int)(a >> 31));
    }
  }
}

/* The pull gather: every row of [r0, r1) summed from its CSR entries (the
 * rows in parallel, no atomics; hx_gs_row_sum, the same bits). */
void HX_FN(hx_cpu_gs_gather_range)(int64_t r0, int64_t r1, const int32_t *HX_RESTRICT row,
                                   const int32_t *HX_RESTRICT col, const HX_REAL *HX_RESTRICT l,
                                   HX_REAL *HX_RESTRICT g) {
#pragma omp parallel for schedule(static) if (r1 - r0 > 8192)
  for (int64_t r = r0; r < r1; r++) g[r] = HX_FN(hx_gs_row_sum)(l, col, row[r], row[r + 1]);
}

void HX_FN(hx_cpu_gs_gather_rows)(int64_t n, const int32_t *HX_RESTRICT rows, const int32_t *HX_RESTRICT row,
                                  const int32_t *HX_RESTRICT col, const HX_REAL *HX_RESTRICT l,
                                  HX_REAL *HX_RESTRICT g) {
#pragma omp parallel for schedule(static) if (n > 8192)
  for (int64_t m = 0; m < n; m++) {
    const int32_t r = rows[m];
    g[r] = HX_FN(hx_gs_row_sum)(l, col, row[r], row[r + 1]);
  }
}

void HX_FN(hx_cpu_gs_pack)(int64_t n, const int32_t *HX_RESTRICT idx, const HX_REAL *HX_RESTRICT g,
                           HX_REAL *HX_RESTRICT buf) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) buf[i] = g[idx[i]];
}

void HX_FN(hx_cpu_gs_combine)(int op, int64_t n_shared, HX_REAL *HX_RESTRICT g_shared,
                              const int32_t *HX_RESTRICT off, const int32_t *HX_RESTRICT pos,
                              const int32_t *HX_RESTRICT self, const HX_REAL *HX_RESTRICT recv) {
#pragma omp parallel for schedule(static) if (n_shared > 4096)
  for (int64_t s = 0; s < n_shared; s++)
    g_shared[s] = HX_FN(hx_gs_combine_1)(op, g_shared[s], recv, pos + off[s], off[s + 1] - off[s], self[s]);
}

void HX_FN(hx_cpu_gs_zero_idx)(int64_t n, const int32_t *HX_RESTRICT idx, HX_REAL *HX_RESTRICT g) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) g[idx[i]] = HX_R(0);
}
