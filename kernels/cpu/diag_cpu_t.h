/* CPU loops of hx_array_diag_add_list_p for one type HX_REAL (included twice
 * from diag_cpu.c; no include guard). The x.R.x sum runs first (x is read,
 * y not yet written: x and y must not alias) over 8 lanes (j mod 8) added in
 * a fixed tree, one thread: the list holds boundary nodes only and the sum
 * is the same for any thread count. */
void HX_FN(hx_cpu_diag_add_list)(int64_t m, int64_t mred, const int32_t *HX_RESTRICT idx,
                                 const HX_REAL *HX_RESTRICT r, const HX_REAL *HX_RESTRICT x, HX_REAL *HX_RESTRICT y,
                                 double *xrx) {
  if (xrx) {
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = 0; j < mred; j++) s[j & 7] += HX_FN(hx_diag_xrx_1)(r[j], x[idx[j]]);
    *xrx = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  }
#pragma omp parallel for schedule(static) if (m > HX_REDUCE_CHUNK)
  for (int64_t j = 0; j < m; j++) {
    const int32_t i = idx[j];
    y[i] = HX_FN(hx_diag_add_1)(y[i], r[j], x[i]);
  }
}
