/* Gather-scatter per-row / per-entry math for one value type HX_REAL (see
 * hx_gs_math.h, which includes this file once per instantiation with HX_REAL
 * and the name macro HX_FN defined; no include guard). */

/* Sum of one gather row: v[col[lo]] + v[col[lo+1]] + ... in increasing j
 * (the CSR columns of a row are increasing L indices). An empty row is 0. */
static inline HX_HD HX_REAL HX_FN(hx_gs_row_sum)(const HX_REAL *HX_RESTRICT v, const int32_t *HX_RESTRICT col,
                                                 int32_t lo, int32_t hi) {
  HX_REAL s = (HX_REAL)0;
  if (lo < hi) {
    s = v[col[lo]];
    for (int32_t j = lo + 1; j < hi; j++) s += v[col[j]];
  }
  return s;
}

/* The same sum over contiguous values v[lo..hi) (the CUDA gather stages a
 * block's row entries in shared memory in CSR order): same order, same bits. */
static inline HX_HD HX_REAL HX_FN(hx_gs_seq_sum)(const HX_REAL *HX_RESTRICT v, int32_t lo, int32_t hi) {
  HX_REAL s = (HX_REAL)0;
  if (lo < hi) {
    s = v[lo];
    for (int32_t j = lo + 1; j < hi; j++) s += v[j];
  }
  return s;
}

/* One step of an in-order accumulation of a row: the first entry assigns
 * (-0.0 is the exact additive identity: -0.0 + v == v for every v, +-0
 * included), later ones add. Accumulating a row's entries in increasing L
 * order this way gives exactly the bits of hx_gs_row_sum. */
static inline HX_HD HX_REAL HX_FN(hx_gs_acc_1)(HX_REAL prev, HX_REAL v, int first) {
  return (first ? (HX_REAL)-0.0 : prev) + v;
}

/* One scatter entry: G value at map (map < 0: id 0, the entry gets 0). */
static inline HX_HD HX_REAL HX_FN(hx_gs_scatter_1)(const HX_REAL *HX_RESTRICT g, int32_t map) {
  return map >= 0 ? g[map] : (HX_REAL)0;
}

/* a op b for op = 0 add, 1 min, 2 max. min/max keep a on ties, so the
 * result does not depend on which of two equal values (e.g. +0/-0) came
 * first beyond the fixed rank order. */
static inline HX_HD HX_REAL HX_FN(hx_gs_op_1)(int op, HX_REAL a, HX_REAL b) {
  if (op == 1) return b < a ? b : a;
  if (op == 2) return b > a ? b : a;
  return a + b;
}

/* Combine one shared G entry over all ranks holding it, in increasing rank
 * order: the n received values recv[pos[0..n)] come from the other holders
 * in increasing rank order, and this rank's own value belongs at position
 * self (= number of holders with a lower rank). Every holder evaluates the
 * same expression on the same values, so all get the same bits. */
static inline HX_HD HX_REAL HX_FN(hx_gs_combine_1)(int op, HX_REAL own, const HX_REAL *HX_RESTRICT recv,
                                                   const int32_t *HX_RESTRICT pos, int32_t n, int32_t self) {
  int32_t k = 0;
  HX_REAL v;
  if (self == 0) {
    v = own;
  } else {
    v = recv[pos[0]];
    k = 1;
  }
  for (int32_t j = 1; j <= n; j++) {
    HX_REAL x;
    if (j == self) {
      x = own;
    } else {
      x = recv[pos[k]];
      k++;
    }
    v = HX_FN(hx_gs_op_1)(op, v, x);
  }
  return v;
}
