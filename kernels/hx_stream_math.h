/* Per-entry math of the streaming kernels (BS3, BS5 and the CG helpers),
 * shared by kernels/cpu/stream_cpu.c and kernels/cuda/stream_cuda.cu.
 * Plain C that also compiles as CUDA C++ (see hx_hd.h). */
#ifndef HX_STREAM_MATH_H
#define HX_STREAM_MATH_H

#include "hx_hd.h"

/* x + alpha p (the x update of CG) */
static inline HX_HD double hx_x_update_1(double x, double alpha, double p) { return x + alpha * p; }
/* r - alpha w (the r update of CG) */
static inline HX_HD double hx_r_update_1(double r, double alpha, double w) { return r - alpha * w; }
/* z + beta p (the p update of CG) */
static inline HX_HD double hx_xpay_1(double z, double beta, double p) { return z + beta * p; }
/* x z (pointwise product, e.g. Jacobi) */
static inline HX_HD double hx_pmult_1(double x, double z) { return x * z; }
/* contribution of one entry to a squared norm */
static inline HX_HD double hx_sq_1(double x) { return x * x; }

/* The chunk reductions below keep 8 independent partial sums (s[j] takes
 * entries i = j mod 8 from the chunk start) and add them in a fixed tree:
 * enough independent additions in flight to run at cache bandwidth on a
 * CPU, and a fixed order, so the result is deterministic. */
#define HX_NACC 8
static inline HX_HD double hx_acc_sum(const double *s) {
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* Sum of x[i]^2 over one chunk [lo, hi) in a fixed order. */
static inline HX_HD double hx_chunk_norm2sq(const double *HX_RESTRICT x, long lo, long hi) {
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < hi; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) s[j] += hx_sq_1(x[i + j]);
  for (int j = 0; i < hi; i++, j++) s[j] += hx_sq_1(x[i]);
  return hx_acc_sum(s);
}

/* r -= alpha w on [lo, hi); returns the sum of the new r[i]^2 over
 * [lo, min(hi, red_hi)) in a fixed order. */
static inline HX_HD double hx_chunk_r_update(double *HX_RESTRICT r, const double *HX_RESTRICT w, double alpha,
                                             long lo, long hi, long red_hi) {
  const long m = hi < red_hi ? hi : red_hi;
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < m; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) {
      const double rj = hx_r_update_1(r[i + j], alpha, w[i + j]);
      r[i + j] = rj;
      s[j] += hx_sq_1(rj);
    }
  for (int j = 0; i < m; i++, j++) {
    r[i] = hx_r_update_1(r[i], alpha, w[i]);
    s[j] += hx_sq_1(r[i]);
  }
  for (; i < hi; i++) r[i] = hx_r_update_1(r[i], alpha, w[i]);
  return hx_acc_sum(s);
}

/* x += alpha p; r -= alpha w on [lo, hi); returns the sum of the new r[i]^2
 * over [lo, min(hi, red_hi)) in a fixed order (4 accumulators). */
static inline HX_HD double hx_chunk_cg_update(double *HX_RESTRICT x, double *HX_RESTRICT r,
                                              const double *HX_RESTRICT p, const double *HX_RESTRICT w,
                                              double alpha, long lo, long hi, long red_hi) {
  for (long i = lo; i < hi; i++) x[i] = hx_x_update_1(x[i], alpha, p[i]);
  return hx_chunk_r_update(r, w, alpha, lo, hi, red_hi);
}

/* x += alpha p; r -= alpha w; z = d r on [lo, hi) (Jacobi fused into the CG
 * update); over [lo, min(hi, red_hi)): *rr = sum r_i^2 with the 8 lanes of
 * hx_chunk_r_update, *rz = sum r_i z_i and (zw != NULL) *zw = sum z_i w_i
 * with the 4 lanes of hx_chunk_dot, each in exactly the order of those
 * functions, so the fused pass gives the bits of the separate ones. */
static inline HX_HD void hx_chunk_cg_update_diag(double *HX_RESTRICT x, double *HX_RESTRICT r,
                                                 const double *HX_RESTRICT p, const double *HX_RESTRICT w,
                                                 const double *HX_RESTRICT d, double *HX_RESTRICT z,
                                                 double alpha, long lo, long hi, long red_hi, double *rr,
                                                 double *rz, double *zw) {
  for (long i = lo; i < hi; i++) x[i] = hx_x_update_1(x[i], alpha, p[i]);
  const long m = hi < red_hi ? hi : red_hi;
  double s[HX_NACC] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  double t[4] = {0.0, 0.0, 0.0, 0.0}, q[4] = {0.0, 0.0, 0.0, 0.0};
  long i = lo;
  for (; i + HX_NACC - 1 < m; i += HX_NACC)
    for (int j = 0; j < HX_NACC; j++) {
      const double rj = hx_r_update_1(r[i + j], alpha, w[i + j]);
      const double zj = hx_pmult_1(rj, d[i + j]);
      r[i + j] = rj;
      z[i + j] = zj;
      s[j] += hx_sq_1(rj);
      t[j & 3] += hx_dot_1(rj, zj);
      if (zw) q[j & 3] += hx_dot_1(zj, w[i + j]);
    }
  /* tail: hx_chunk_dot takes one more block of 4 if there is one, then lane 0 */
  const long rem = m - i;
  for (int j = 0; i < m; i++, j++) {
    const double ri = hx_r_update_1(r[i], alpha, w[i]);
    const double zi = hx_pmult_1(ri, d[i]);
    r[i] = ri;
    z[i] = zi;
    s[j] += hx_sq_1(ri);
    const int lane = (rem >= 4 && j < 4) ? j : 0;
    t[lane] += hx_dot_1(ri, zi);
    if (zw) q[lane] += hx_dot_1(zi, w[i]);
  }
  for (; i < hi; i++) {
    r[i] = hx_r_update_1(r[i], alpha, w[i]);
    z[i] = hx_pmult_1(r[i], d[i]);
  }
  *rr = hx_acc_sum(s);
  *rz = (t[0] + t[1]) + (t[2] + t[3]);
  if (zw) *zw = (q[0] + q[1]) + (q[2] + q[3]);
}

/* ---- precision (hx_kernels_prec.h) ---- */
/* The float instantiation of the streaming per-entry math: hx_axpby_1_f32,
 * hx_xpay_1_f32, hx_pmult_1_f32, hx_dot_1_f32, hx_chunk_dot_f32,
 * hx_chunk_norm2sq_f32 (hx_stream_math_t.h). */
#define HX_REAL float
#define HX_FN(name) name##_f32
#include "hx_stream_math_t.h"
#undef HX_FN
#undef HX_REAL

/* FP64 -> FP32, round to nearest (even) */
static inline HX_HD float hx_to_f32_1(double x) { return (float)x; }
/* y + a x with x widened exactly: the FP32 correction added into FP64 */
static inline HX_HD double hx_axpy_f32_to_f64_1(double y, double a, float x) { return y + a * (double)x; }

#endif
