/* Per-entry and per-chunk math of the streaming kernels (BS3, BS5, the CG
 * helpers and the vector ops), written once for a type HX_REAL and
 * instantiated by hx_stream_math.h through hx_instantiate.h (no include
 * guard): double under the plain names (the FP64 kernels), float as
 * name_f32 (and, under C++, as overloads of the plain names).
 *
 * Data and per-entry arithmetic are in HX_REAL. Reductions accumulate in
 * double: the product of two floats is exact in double, and for double
 * (double)x * (double)y is x * y, so both types share one accumulator
 * layout and final tree (dot: 4 lanes, squared norms: the 8 lanes of
 * HX_NACC) and the FP32 reductions are deterministic in the same way. */

/* a x + b y */
static inline HX_HD HX_REAL HX_FN(hx_axpby_1)(HX_REAL a, HX_REAL x, HX_REAL b, HX_REAL y) {
  return a * x + b * y;
}
/* x + alpha p (the x update of CG) */
static inline HX_HD HX_REAL HX_FN(hx_x_update_1)(HX_REAL x, HX_REAL alpha, HX_REAL p) { return x + alpha * p; }
/* r - alpha w (the r update of CG) */
static inline HX_HD HX_REAL HX_FN(hx_r_update_1)(HX_REAL r, HX_REAL alpha, HX_REAL w) { return r - alpha * w; }
/* z + beta p (the p update of CG) */
static inline HX_HD HX_REAL HX_FN(hx_xpay_1)(HX_REAL z, HX_REAL beta, HX_REAL p) { return z + beta * p; }
/* x z (pointwise product, e.g. Jacobi) */
static inline HX_HD HX_REAL HX_FN(hx_pmult_1)(HX_REAL x, HX_REAL z) { return x * z; }
/* contribution of one entry to a dot product / a squared norm, in double */
static inline HX_HD double HX_FN(hx_dot_1)(HX_REAL x, HX_REAL y) { return (double)x * (double)y; }
static inline HX_HD double HX_FN(hx_sq_1)(HX_REAL x) { return HX_FN(hx_dot_1)(x, x); }

/* Sum of x[i] y[i] over one chunk [lo, hi) in a fixed order with 4
 * independent accumulators (vectorisable, deterministic). */
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

/* Sum of x[i]^2 over one chunk [lo, hi) in a fixed order (8 lanes). */
static inline HX_HD double HX_FN(hx_chunk_norm2sq)(const HX_REAL *HX_RESTRICT x, long lo, long hi) {
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < hi; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) s[j] += HX_FN(hx_sq_1)(x[i + j]);
  for (int j = 0; i < hi; i++, j++) s[j] += HX_FN(hx_sq_1)(x[i]);
  return hx_acc_sum(s);
}

/* r -= alpha w on [lo, hi); returns the sum of the new r[i]^2 over
 * [lo, min(hi, red_hi)) in the order of hx_chunk_norm2sq. */
static inline HX_HD double HX_FN(hx_chunk_r_update)(HX_REAL *HX_RESTRICT r, const HX_REAL *HX_RESTRICT w,
                                                    HX_REAL alpha, long lo, long hi, long red_hi) {
  const long m = hi < red_hi ? hi : red_hi;
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < m; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) {
      const HX_REAL rj = HX_FN(hx_r_update_1)(r[i + j], alpha, w[i + j]);
      r[i + j] = rj;
      s[j] += HX_FN(hx_sq_1)(rj);
    }
  for (int j = 0; i < m; i++, j++) {
    r[i] = HX_FN(hx_r_update_1)(r[i], alpha, w[i]);
    s[j] += HX_FN(hx_sq_1)(r[i]);
  }
  for (; i < hi; i++) r[i] = HX_FN(hx_r_update_1)(r[i], alpha, w[i]);
  return hx_acc_sum(s);
}

/* x += alpha p; r -= alpha w on [lo, hi); returns the sum of the new r[i]^2
 * over [lo, min(hi, red_hi)) as hx_chunk_r_update. */
static inline HX_HD double HX_FN(hx_chunk_cg_update)(HX_REAL *HX_RESTRICT x, HX_REAL *HX_RESTRICT r,
                                                     const HX_REAL *HX_RESTRICT p, const HX_REAL *HX_RESTRICT w,
                                                     HX_REAL alpha, long lo, long hi, long red_hi) {
  for (long i = lo; i < hi; i++) x[i] = HX_FN(hx_x_update_1)(x[i], alpha, p[i]);
  return HX_FN(hx_chunk_r_update)(r, w, alpha, lo, hi, red_hi);
}

/* x += alpha p; r -= alpha w; z = d r on [lo, hi) (Jacobi fused into the CG
 * update); over [lo, min(hi, red_hi)): *rr = sum r_i^2 with the 8 lanes of
 * hx_chunk_r_update, *rz = sum r_i z_i and (zw != NULL) *zw = sum z_i w_i
 * with the 4 lanes of hx_chunk_dot, each in exactly the order of those
 * functions, so the fused pass gives the bits of the separate ones. */
static inline HX_HD void HX_FN(hx_chunk_cg_update_diag)(HX_REAL *HX_RESTRICT x, HX_REAL *HX_RESTRICT r,
                                                        const HX_REAL *HX_RESTRICT p, const HX_REAL *HX_RESTRICT w,
                                                        const HX_REAL *HX_RESTRICT d, HX_REAL *HX_RESTRICT z,
                                                        HX_REAL alpha, long lo, long hi, long red_hi, double *rr,
                                                        double *rz, double *zw) {
  for (long i = lo; i < hi; i++) x[i] = HX_FN(hx_x_update_1)(x[i], alpha, p[i]);
  const long m = hi < red_hi ? hi : red_hi;
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  double t[4] = {0.0, 0.0, 0.0, 0.0}, q[4] = {0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < m; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) {
      const HX_REAL rj = HX_FN(hx_r_update_1)(r[i + j], alpha, w[i + j]);
      const HX_REAL zj = HX_FN(hx_pmult_1)(rj, d[i + j]);
      r[i + j] = rj;
      z[i + j] = zj;
      s[j] += HX_FN(hx_sq_1)(rj);
      t[j & 3] += HX_FN(hx_dot_1)(rj, zj);
      if (zw) q[j & 3] += HX_FN(hx_dot_1)(zj, w[i + j]);
    }
  /* tail: hx_chunk_dot takes one more block of 4 if there is one, then lane 0 */
  const long rem = m - i;
  for (int j = 0; i < m; i++, j++) {
    const HX_REAL ri = HX_FN(hx_r_update_1)(r[i], alpha, w[i]);
    const HX_REAL zi = HX_FN(hx_pmult_1)(ri, d[i]);
    r[i] = ri;
    z[i] = zi;
    s[j] += HX_FN(hx_sq_1)(ri);
    const int lane = (rem >= 4 && j < 4) ? j : 0;
    t[lane] += HX_FN(hx_dot_1)(ri, zi);
    if (zw) q[lane] += HX_FN(hx_dot_1)(zi, w[i]);
  }
  for (; i < hi; i++) {
    r[i] = HX_FN(hx_r_update_1)(r[i], alpha, w[i]);
    z[i] = HX_FN(hx_pmult_1)(r[i], d[i]);
  }
  *rr = hx_acc_sum(s);
  *rz = (t[0] + t[1]) + (t[2] + t[3]);
  if (zw) *zw = (q[0] + q[1]) + (q[2] + q[3]);
}
