/* CPU (OpenMP) vector ops and reductions for one type HX_REAL, included
 * twice from stream_cpu.c through hx_instantiate.h (no include guard):
 * double under the plain names, float as name_f32. Per-entry and per-chunk
 * math: hx_stream_math_t.h. Reductions reduce fixed HX_REDUCE_CHUNK chunks
 * in double and add the chunk partials in chunk order, so the result does
 * not depend on the thread count. */

int HX_FN(hx_cpu_copy)(int64_t n, HX_REAL *HX_RESTRICT y, const HX_REAL *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = x[i];
  return HX_SUCCESS;
}

/* into HX_REAL from the other type: exact into double, round to nearest
 * (even) into float */
int HX_FN(hx_cpu_convert)(int64_t n, HX_REAL *HX_RESTRICT y, const HX_REAL_OTHER *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = (HX_REAL)x[i];
  return HX_SUCCESS;
}

int HX_FN(hx_cpu_axpby)(int64_t n, HX_REAL *HX_RESTRICT y, HX_REAL a, const HX_REAL *HX_RESTRICT x, HX_REAL bb) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = HX_FN(hx_axpby_1)(a, x[i], bb, y[i]);
  return HX_SUCCESS;
}

int HX_FN(hx_cpu_xpay)(int64_t n, HX_REAL *HX_RESTRICT p, const HX_REAL *HX_RESTRICT z, HX_REAL beta) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) p[i] = HX_FN(hx_xpay_1)(z[i], beta, p[i]);
  return HX_SUCCESS;
}

/* y may alias x or z: no restrict here (each entry is read before written) */
int HX_FN(hx_cpu_pointwise_mult)(int64_t n, HX_REAL *y, const HX_REAL *x, const HX_REAL *z) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = HX_FN(hx_pmult_1)(x[i], z[i]);
  return HX_SUCCESS;
}

/* the chunk partials of x.y (y == NULL: x.x) into part[0 .. nchunks(n)) */
static void HX_FN(hx_cpu_dot_parts)(int64_t n, const HX_REAL *x, const HX_REAL *y, double *part) {
  const int64_t nc = hx_num_chunks(n);
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    part[c] = y ? HX_FN(hx_chunk_dot)(x, y, (long)lo, (long)hi) : HX_FN(hx_chunk_norm2sq)(x, (long)lo, (long)hi);
  }
}

int HX_FN(hx_cpu_dot)(hx_queue q, int64_t n, const HX_REAL *x, const HX_REAL *y, double *result) {
  HX_CALL(hx_queue_partials(q, (size_t)hx_num_chunks(n))); /* the queue's own scratch */
  HX_FN(hx_cpu_dot_parts)(n, x, y, q->d_partials);
  *result = hx_sum_partials(q->d_partials, n);
  return HX_SUCCESS;
}

int HX_FN(hx_cpu_norm2sq)(hx_queue q, int64_t n, const HX_REAL *x, double *result) {
  HX_CALL(HX_FN(hx_cpu_dot)(q, n, x, NULL, result));
  return HX_SUCCESS;
}
