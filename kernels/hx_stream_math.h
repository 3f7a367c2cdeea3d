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
