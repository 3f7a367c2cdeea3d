/* CPU (OpenMP) streaming kernels: the vector ops and reductions for FP64
 * and FP32 (one template, stream_cpu_t.h), the conversions between the two,
 * and the fused CG kernels with the deferred reductions (FP64). Per-entry
 * math comes from hx_stream_math.h; reductions sum fixed HX_REDUCE_CHUNK
 * chunks, then the chunk partials in chunk order, so the result does not
 * depend on the thread count. Vectors of one chunk (HX_REDUCE_CHUNK
 * entries) or less run without forking the thread team: a fork/join costs
 * more than streaming 32 KB. */
#include "prec_impl.h"

#define HX_PAR_IF(n) if ((n) > HX_REDUCE_CHUNK)

static inline int64_t hx_imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* add the partials of the chunks that hold reduced entries, in order */
static double hx_sum_partials(const double *part, int64_t nred) {
  const int64_t nc = hx_num_chunks(nred);
  double s = 0.0;
  for (int64_t c = 0; c < nc; c++) s += part[c];
  return s;
}

/* the template's path is relative to hx_instantiate.h (kernels/) */
#define HX_TEMPLATE "cpu/stream_cpu_t.h"
#include "hx_instantiate.h"

void hx_cpu_axpy_f32_to_f64(int64_t n, double *HX_RESTRICT y, double a, const float *HX_RESTRICT x) {
#pragma omp parallel for schedule(static) HX_PAR_IF(n)
  for (int64_t i = 0; i < n; i++) y[i] = hx_axpy_f32_to_f64_1(y[i], a, x[i]);
}

/* ------------------------------------------------------------ fused CG updates (FP64) */
/* x += alpha p (x == NULL: no x update); r -= alpha w; the chunk partials
 * of the new r.r over [0, nred) into part[0 .. nchunks(n)) (0 for the
 * chunks past nred) */
static void hx_cpu_cg_parts(int64_t n, int64_t nred, double *x, double *r, const double *p, const double *w,
                            double alpha, double *part) {
  const int64_t nc = hx_num_chunks(n);
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t lo = c * HX_REDUCE_CHUNK, hi = hx_imin(lo + HX_REDUCE_CHUNK, n);
    part[c] = x ? hx_chunk_cg_update(x, r, p, w, alpha, (long)lo, (long)hi, (long)nred)
                : hx_chunk_r_update(r, w, alpha, (long)lo, (long)hi, (long)nred);
  }
}

int hx_cpu_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                     const double *w, double alpha, double *rr) {
  HX_CALL(hx_queue_partials(q, (size_t)hx_num_chunks(n))); /* the queue's own scratch */
  hx_cpu_cg_parts(n, nred, x, r, p, w, alpha, q->d_partials);
  *rr = hx_sum_partials(q->d_partials, nred);
  return HX_SUCCESS;
}

int hx_cpu_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w, double alpha,
                    double *rr) {
  HX_CALL(hx_cpu_cg_update(q, n, nred, NULL, r, NULL, w, alpha, rr));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ deferred reductions */
/* Each fills the partials of the chunks holding reduced entries into its
 * slot's row (n <= the set's capacity: the row holds all nchunks(n)
 * partials); hx_red_fetch adds them in chunk order. */
void hx_cpu_dot_red(hx_red red, int k, int64_t n, const double *x, const double *y) {
  hx_cpu_dot_parts(n, x, y, red->part + (int64_t)k * red->ncmax);
  red->nparts[k] = hx_num_chunks(n);
}

void hx_cpu_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *x, double *r,
                          const double *p, const double *w, double alpha) {
  hx_cpu_cg_parts(n, nred, x, r, p, w, alpha, red->part + (int64_t)k_rr * red->ncmax);
  red->nparts[k_rr] = hx_num_chunks(nred);
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
