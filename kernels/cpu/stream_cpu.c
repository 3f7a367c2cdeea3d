/* CPU (OpenMP) fused CG kernels. Per-entry math comes from hx_stream_math.h;
 * reductions sum fixed HX_REDUCE_CHUNK chunks, then the chunk partials in
 * chunk order, so the result does not depend on the thread count. Vectors
 * of one chunk (HX_REDUCE_CHUNK entries) or less run without forking the
 * thread team: a fork/join costs more than streaming 32 KB. */
#include "stream_impl.h"

static inline int64_t hx_imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* add the partials of the chunks that hold reduced entries, in order */
static double hx_sum_partials(const double *part, int64_t nred) {
  const int64_t nc = hx_num_chunks(nred);
  double s = 0.0;
  for (int64_t c = 0; c < nc; c++) s += part[c];
  return s;
}

int hx_cpu_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                     const double *w, double alpha, double *rr) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_queue_partials(q, (size_t)nc)); /* the queue's own scratch */
  double *part = q->d_partials;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    part[c] = hx_chunk_cg_update(x, r, p, w, alpha, (long)lo, (long)hi, (long)nred);
  }
  *rr = hx_sum_partials(part, nred);
  return HX_SUCCESS;
}

int hx_cpu_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                    double *rr) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_queue_partials(q, (size_t)nc)); /* the queue's own scratch */
  double *part = q->d_partials;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    part[c] = hx_chunk_r_update(r, w, alpha, (long)lo, (long)hi, (long)nred);
  }
  *rr = hx_sum_partials(part, nred);
  return HX_SUCCESS;
}

int hx_cpu_norm2sq(hx_queue q, int64_t n, const double *x, double *result) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_queue_partials(q, (size_t)nc)); /* the queue's own scratch */
  double *part = q->d_partials;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    part[c] = hx_chunk_norm2sq(x, (long)lo, (long)hi);
  }
  *result = hx_sum_partials(part, n);
  return HX_SUCCESS;
}

int hx_cpu_xpay(int64_t n, double *HX_RESTRICT p, const double *HX_RESTRICT z, double beta) {
#pragma omp parallel for schedule(static) if (n > HX_REDUCE_CHUNK)
  for (int64_t i = 0; i < n; i++) p[i] = hx_xpay_1(z[i], beta, p[i]);
  return HX_SUCCESS;
}

/* y may alias x or z: no restrict here (each entry is read before written) */
int hx_cpu_pointwise_mult(int64_t n, double *y, const double *x, const double *z) {
#pragma omp parallel for schedule(static) if (n > HX_REDUCE_CHUNK)
  for (int64_t i = 0; i < n; i++) y[i] = hx_pmult_1(x[i], z[i]);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ deferred reductions */
/* Each fills the partials of the chunks holding reduced entries into its
 * slot's row; hx_red_fetch adds them in chunk order. */
void hx_cpu_dot_red(hx_red red, int k, int64_t n, const double *x, const double *y) {
  const int64_t nc = hx_num_chunks(n);
  double *part = red->part + (int64_t)k * red->ncmax;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    part[c] = hx_chunk_dot(x, y, (long)lo, (long)hi);
  }
  red->nparts[k] = nc;
}

void hx_cpu_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *x, double *r,
                          const double *p, const double *w, double alpha) {
  const int64_t nc = hx_num_chunks(n);
  double *part = red->part + (int64_t)k_rr * red->ncmax;
  const int64_t ncr = hx_num_chunks(nred);
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    const double s = hx_chunk_cg_update(x, r, p, w, alpha, (long)lo, (long)hi, (long)nred);
    if (c < ncr) part[c] = s;
  }
  red->nparts[k_rr] = ncr;
}

void hx_cpu_cg_update_diag_red(hx_red red, int k_rr, int k_rz, int k_zw, int64_t n, int64_t nred, double *x,
                               double *r, const double *p, const double *w, const double *d, double *z,
                               double alpha) {
  const int64_t nc = hx_num_chunks(n), ncr = hx_num_chunks(nred);
  double *prr = red->part + (int64_t)k_rr * red->ncmax, *prz = red->part + (int64_t)k_rz * red->ncmax;
  double *pzw = k_zw >= 0 ? red->part + (int64_t)k_zw * red->ncmax : NULL;
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    double rr, rz, zw = 0.0;
    hx_chunk_cg_update_diag(x, r, p, w, d, z, alpha, (long)lo, (long)hi, (long)nred, &rr, &rz,
                            pzw ? &zw : NULL);
    if (c < ncr) {
      prr[c] = rr, prz[c] = rz;
      if (pzw) pzw[c] = zw;
    }
  }
  red->nparts[k_rr] = red->nparts[k_rz] = ncr;
  if (k_zw >= 0) red->nparts[k_zw] = ncr;
}
