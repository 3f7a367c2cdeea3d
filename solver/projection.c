/* Projection of the initial guess onto earlier solutions (Fischer 1998;
 * see hx_solver.h and docs/time.md): X = [x_1 .. x_k] A-orthonormal, the
 * guess x0 = sum_i (x_i . b) x_i is the A-norm best approximation of
 * A^{-1} b in span(X), and the correction dx = x - x0 of each solve is
 * A-orthonormalised against X and appended. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"

struct hx_proj_s {
  hx_op op;
  hx_backend b;
  MPI_Comm comm;
  int64_t ng, nown;
  int K, k;     /* capacity, vectors held */
  double **x;   /* K backend G-vectors, A-orthonormal */
  double *w;    /* A dx */
  double *c;    /* K coefficients (host) */
  int64_t restarts;
};

int hx_proj_create(hx_op op, int K, hx_proj *pj) {
  *pj = NULL;
  HX_CHECK(K >= 1, HX_ERR_ARG, "projection needs K >= 1, got %d", K);
  struct hx_proj_s *p = calloc(1, sizeof *p);
  HX_CHECK(p, HX_ERR_MEM, "out of memory");
  p->op = op, p->b = hx_op_backend(op), p->comm = hx_gs_comm(hx_op_gs(op));
  p->ng = hx_op_size(op), p->nown = hx_op_owned(op), p->K = K;
  const size_t bytes = sizeof(double) * (size_t)(p->ng > 0 ? p->ng : 1);
  int err = HX_ALLOC(&p->x, K);
  if (!err) err = HX_ALLOC(&p->c, K);
  for (int i = 0; i < K && !err; i++) err = hx_mem_alloc(p->b, bytes, (void **)&p->x[i]);
  if (!err) err = hx_mem_alloc(p->b, bytes, (void **)&p->w);
  *pj = p;
  if (err) hx_proj_destroy(pj);
  HX_CALL(err);
  return HX_SUCCESS;
}

void hx_proj_destroy(hx_proj *pj) {
  if (!pj || !*pj) return;
  struct hx_proj_s *p = *pj;
  for (int i = 0; p->x && i < p->K; i++) hx_mem_free(p->b, (void **)&p->x[i]);
  hx_mem_free(p->b, (void **)&p->w);
  free(p->x), free(p->c), free(p);
  *pj = NULL;
}

void hx_proj_reset(hx_proj p) {
  if (p) p->k = 0;
}
int hx_proj_size(hx_proj p) { return p ? p->k : 0; }
int hx_proj_capacity(hx_proj p) { return p ? p->K : 0; }

/* c[i] = x_i . v for i < k, one allreduce */
static int dots(hx_proj p, const double *v) {
  for (int i = 0; i < p->k; i++) HX_CALL(hx_array_dot(p->b, p->nown, p->x[i], v, &p->c[i]));
  if (p->k) HX_MPI(MPI_Allreduce(MPI_IN_PLACE, p->c, p->k, MPI_DOUBLE, MPI_SUM, p->comm));
  return HX_SUCCESS;
}

int hx_proj_guess(hx_proj p, const double *d_b, double *d_x) {
  HX_CALL(hx_mem_zero(p->b, d_x, sizeof(double) * (size_t)p->ng));
  if (!p->k) return HX_SUCCESS;
  HX_CALL(dots(p, d_b));
  for (int i = 0; i < p->k; i++) HX_CALL(hx_array_axpby(p->b, p->ng, d_x, p->c[i], p->x[i], 1.0));
  return HX_SUCCESS;
}

/* ||v||_A with w = A v */
static int anorm(hx_proj p, const double *v, double *a) {
  double s;
  HX_CALL(hx_op_apply(p->op, v, p->w, NULL));
  HX_CALL(hx_array_dot(p->b, p->nown, v, p->w, &s));
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, p->comm));
  *a = s > 0 && isfinite(s) ? sqrt(s) : 0.0;
  return HX_SUCCESS;
}

int hx_proj_update(hx_proj p, const double *d_x0, const double *d_x) {
  if (p->k == p->K) { /* full: restart from the latest solution */
    p->k = 0, p->restarts++;
    double a;
    HX_CALL(hx_array_copy(p->b, p->ng, p->x[0], d_x));
    HX_CALL(anorm(p, p->x[0], &a));
    if (a > 0) {
      HX_CALL(hx_array_axpby(p->b, p->ng, p->x[0], 1.0 / a, p->x[0], 0.0));
      p->k = 1;
    }
    return HX_SUCCESS;
  }
  double *v = p->x[p->k]; /* dx = x - x0 in the next free slot */
  HX_CALL(hx_array_copy(p->b, p->ng, v, d_x));
  HX_CALL(hx_array_axpby(p->b, p->ng, v, -1.0, d_x0, 1.0));
  double a0, a = 0.0;
  HX_CALL(anorm(p, v, &a0));
  if (!(a0 > 0)) return HX_SUCCESS; /* x0 was the solution: nothing new */
  for (int pass = 0; pass < 2; pass++) {
    /* classical Gram-Schmidt in the A inner product: c_i = x_i . (A dx) */
    HX_CALL(dots(p, p->w));
    for (int i = 0; i < p->k; i++) HX_CALL(hx_array_axpby(p->b, p->ng, v, -p->c[i], p->x[i], 1.0));
    HX_CALL(anorm(p, v, &a));
    if (a > 0.5 * a0) break; /* lost less than half its norm: one pass is enough */
    a0 = a;
  }
  if (!(a > 1e-14 * a0) || !(a > 0)) return HX_SUCCESS; /* in the span already */
  HX_CALL(hx_array_axpby(p->b, p->ng, v, 1.0 / a, v, 0.0));
  p->k++;
  return HX_SUCCESS;
}

int hx_proj_get(hx_proj p, int i, double *h_l) {
  HX_CHECK(i >= 0 && i < p->k, HX_ERR_ARG, "projection vector %d of %d", i, p->k);
  HX_CALL(hx_op_to_l_host(p->op, p->x[i], h_l));
  return HX_SUCCESS;
}

int hx_proj_set(hx_proj p, int k, const double *const *h_l) {
  HX_CHECK(k >= 0 && k <= p->K, HX_ERR_ARG, "projection: %d vectors for a capacity of %d", k, p->K);
  hx_gs gs = hx_op_gs(p->op);
  const int64_t nl = hx_gs_num_l(gs);
  const int32_t *map = hx_gs_map_host(gs);
  double *h_g;
  HX_CALL(HX_ALLOC(&h_g, p->ng > 0 ? p->ng : 1));
  int err = HX_SUCCESS;
  /* every copy of a node holds the same bits: taking one (not the average)
   * gives back the G-vector hx_proj_get wrote, to the last bit */
  for (int i = 0; i < k && !err; i++) {
    memset(h_g, 0, sizeof(double) * (size_t)p->ng);
    for (int64_t l = 0; l < nl; l++)
      if (map[l] >= 0) h_g[map[l]] = h_l[i][l];
    err = hx_mem_to_device(p->b, p->x[i], h_g, sizeof(double) * (size_t)p->ng);
  }
  free(h_g);
  HX_CALL(err);
  p->k = k;
  return HX_SUCCESS;
}
