/* Per-entry math of the precision-parametrised streaming ops, written once
 * for a type HX_REAL (included by hx_stream_math.h once per instantiation,
 * with HX_REAL and the name macro HX_FN defined; no include guard). Data and
 * per-entry arithmetic in HX_REAL; reductions accumulate the products in
 * double (a product of two floats is exact in double) with the accumulator
 * layout and final tree of the FP64 chunk reductions (hx_chunk_dot in
 * hx_hd.h: 4 lanes, hx_chunk_norm2sq: 8 lanes), so the FP32 reductions are
 * deterministic in the same way. The double instantiation of these
 * expressions is the pre-existing code of hx_hd.h / hx_stream_math.h, which
 * stays where it is (bit for bit); this file adds the float one. */

static inline HX_HD HX_REAL HX_FN(hx_axpby_1)(HX_REAL a, HX_REAL x, HX_REAL b, HX_REAL y) {
  return a * x + b * y;
}
static inline HX_HD HX_REAL HX_FN(hx_xpay_1)(HX_REAL z, HX_REAL beta, HX_REAL p) { return z + beta * p; }
static inline HX_HD HX_REAL HX_FN(hx_pmult_1)(HX_REAL x, HX_REAL z) { return x * z; }
/* exact product in double */
static inline HX_HD double HX_FN(hx_dot_1)(HX_REAL x, HX_REAL y) { return (double)x * (double)y; }

static inline HX_HD double HX_FN(hx_chunk_dot)(const HX_REAL *HX_RESTRICT x, const HX_REAL *HX_RESTRICT y,
                                               long lo, long hi) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  long i = lo;
  for (; i + 3 < hi; i += 4) {
    s0 += HX_FN(hx_dot_1)(x[i], y[i]);
    s1 += HX_FN(hx_dot_1)(x[i + 1], y[i + 1]);
    s2 += HX_FN(hx_dot_1)(x[i + 2], y[i + 2]);
    s3 += HX_FN(hx_dot_1)(x[i + 3], y[i + 3]);
  }
  for (; i < hi; i++) s0 += HX_FN(hx_dot_1)(x[i], y[i]);
  return (s0 + s1) + (s2 + s3);
}

static inline HX_HD double HX_FN(hx_chunk_norm2sq)(const HX_REAL *HX_RESTRICT x, long lo, long hi) {
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < hi; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) s[j] += HX_FN(hx_dot_1)(x[i + j], x[i + j]);
  for (int j = 0; i < hi; i++, j++) s[j] += HX_FN(hx_dot_1)(x[i], x[i]);
  return hx_acc_sum(s);
}
