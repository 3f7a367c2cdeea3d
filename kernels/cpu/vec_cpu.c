/* CPU (OpenMP) streaming ops. Per-entry math comes from hx_hd.h. */
#include "backend_impl.h"
#include "../hx_hd.h"

#include <string.h>

int hx_cpu_copy(int64_t n, double *HX_RESTRICT y, const double *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) if (n > HX_REDUCE_CHUNK)
  for (int64_t i = 0; i < n; i++) y[i] = x[i];
  return HX_SUCCESS;
}

int hx_cpu_axpby(int64_t n, double *HX_RESTRICT y, double a, const double *HX_RESTRICT x, double bb) {
#pragma omp parallel for schedule(static) if (n > HX_REDUCE_CHUNK)
  for (int64_t i = 0; i < n; i++) y[i] = hx_axpby_1(a, x[i], bb, y[i]);
  return HX_SUCCESS;
}

int hx_cpu_dot(hx_queue q, int64_t n, const double *x, const double *y, double *result) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_queue_partials(q, (size_t)nc)); /* the queue's own scratch */
  double *part = q->d_partials;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
    part[c] = hx_chunk_dot(x, y, lo, hi);
  }
  double s = 0.0;
  for (int64_t c = 0; c < nc; c++) s += part[c];
  *result = s;
  return HX_SUCCESS;
}
