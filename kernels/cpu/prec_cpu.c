/* CPU (OpenMP) FP32 streaming ops and precision conversions. Per-entry math:
 * the float instantiation in hx_stream_math.h (hx_stream_math_t.h). The
 * reductions use the chunking of stream_cpu.c / vec_cpu.c: fixed
 * HX_REDUCE_CHUNK chunks, partials added in chunk order (FP64), so the
 * result does not depend on the thread count. */
#include "prec_impl.h"

#define HX_PAR_IF(n) if ((n) > HX_REDUCE_CHUNK)

void hx_cpu_f64_to_f32(int64_t n, float *HX_RESTRICT y, const double *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = hx_to_f32_1(x[i]);
}

void hx_cpu_f32_to_f64(int64_t n, double *HX_RESTRICT y, const float *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = (double)x[i];
}

void hx_cpu_axpy_f32_to_f64(int64_t n, double *HX_RESTRICT y, double a, const float *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = hx_axpy_f32_to_f64_1(y[i], a, x[i]);
}

void hx_cpu_copy_f32(int64_t n, float *HX_RESTRICT y, const float *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = x[i];
}

void hx_cpu_axpby_f32(int64_t n, float *HX_RESTRICT y, float a, const float *HX_RESTRICT x, float bb) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = hx_axpby_1_f32(a, x[i], bb, y[i]);
}

void hx_cpu_xpay_f32(int64_t n, float *HX_RESTRICT p, const float *HX_RESTRICT z, float beta) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) p[i] = hx_xpay_1_f32(z[i], beta, p[i]);
}

/* y may alias x or z: no restrict (each entry is read before written) */
void hx_cpu_pointwise_mult_f32(int64_t n, float *y, const float *x, const float *z) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = hx_pmult_1_f32(x[i], z[i]);
}

/* x.y (y == NULL: x.x) over the fixed chunks, the partials added in chunk
 * order: the chunk sums of hx_stream_math_t.h (4 lanes for dot, 8 for the
 * squared norm, as the FP64 ones) */
static int hx_cpu_reduce_f32(hx_backend b, int64_t n, const float *x, const float *y, double *result) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_backend_partials(b, (size_t)nc));
  double *part = b->q0->d_partials;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
    part[c] = y ? hx_chunk_dot_f32(x, y, (long)lo, (long)hi) : hx_chunk_norm2sq_f32(x, (long)lo, (long)hi);
  }
  double s = 0.0;
  for (int64_t c = 0; c < nc; c++) s += part[c];
  *result = s;
  return HX_SUCCESS;
}

int hx_cpu_dot_f32(hx_backend b, int64_t n, const float *x, const float *y, double *result) {
  HX_CALL(hx_cpu_reduce_f32(b, n, x, y, result));
  return HX_SUCCESS;
}

int hx_cpu_norm2sq_f32(hx_backend b, int64_t n, const float *x, double *result) {
  HX_CALL(hx_cpu_reduce_f32(b, n, x, NULL, result));
  return HX_SUCCESS;
}
