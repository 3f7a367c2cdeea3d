/* hexcg_solve and hexcg_solve_many: the data at the local nodes to the
 * discretisation's L-vectors, the solve (hx_api_solve, the one `hexcg run`
 * makes; block PCG for several columns), the solution back at the nodes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_api.h"

/* v (G, host) from an L-vector: each node's value from one of its copies */
void hx_api_l_to_nodes(hx_gs gs, const double *l, double *g) {
  const int32_t *map = hx_gs_map_host(gs);
  const int64_t nl = hx_gs_num_l(gs);
  for (int64_t i = 0; i < nl; i++)
    if (map[i] >= 0) g[map[i]] = l[i];
}

/* l (L, host) from values at the nodes */
void hx_api_nodes_to_l(hx_gs gs, const double *g, double *l) {
  const int32_t *map = hx_gs_map_host(gs);
  const int64_t nl = hx_gs_num_l(gs);
  for (int64_t i = 0; i < nl; i++) l[i] = map[i] >= 0 ? g[map[i]] : 0.0;
}

/* values at the local nodes must be finite: the first that is not is an
 * input error naming the argument, the index and the node (agreed) */
static int check_nodes(hexcg_solver *s, const char *what, const double *v, int64_t n) {
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; i++)
    if (!isfinite(v[i])) bad = i;
  int err = HX_SUCCESS;
  if (bad >= 0) {
    hx_gs gs = hx_disc_gs(s->d);
    const int64_t ng = hx_gs_num_local(gs), c = bad / (ng > 0 ? ng : 1), i = bad % (ng > 0 ? ng : 1);
    double xyz[3] = {NAN, NAN, NAN};
    const int32_t *map = hx_gs_map_host(gs);
    const double *X, *Y, *Z;
    if (!hx_disc_coords(s->d, &X, &Y, &Z))
      for (int64_t l = 0; l < hx_gs_num_l(gs); l++)
        if (map[l] == i) {
          xyz[0] = X[l], xyz[1] = Y[l], xyz[2] = Z[l];
          break;
        }
    char col[96] = "";
    if (n > ng) snprintf(col, sizeof col, " (column %lld, node %lld)", (long long)c, (long long)i);
    err = HX_ERROR(HX_ERR_INPUT,
                   "%s[%lld] = %g%s on rank %d is not finite, at the node (%.6g, %.6g, %.6g); give finite "
                   "values at every local node",
                   what, (long long)bad, v[bad], col, s->rank, xyz[0], xyz[1], xyz[2]);
  }
  return hx_error_agree(s->comm, err);
}

/* the problem's data at the nodes (f, Dirichlet values, Neumann loads),
 * the caller's f and Dirichlet values over them */
static int data_for(hexcg_solver *s, const double *f, double **hf, double **hg, double **hbn) {
  HX_CALL(hx_problem_data(s->prob, s->d, 0.0, 0, hf, hg, hbn));
  hx_gs gs = hx_disc_gs(s->d);
  if (f) hx_api_nodes_to_l(gs, f, *hf);
  if (s->g_user) hx_api_nodes_to_l(gs, s->g_user, *hg);
  return HX_SUCCESS;
}

/* the problem's exact solution applies when its own data are solved */
static hx_field exact_for(const hexcg_solver *s, const double *f) {
  if (f || s->g_user || s->shift != 0.0) return (hx_field){NULL, NULL, NULL};
  return s->exact;
}

static void result_of(const hx_pcg_result *p, double seconds, hexcg_result *r) {
  memset(r, 0, sizeof *r);
  r->iterations = p->iterations;
  r->converged = p->reason > 0;
  snprintf(r->reason, sizeof r->reason, "%s", hx_reason_name(p->reason));
  r->residual0 = p->r0norm, r->residual = p->rnorm, r->rel_residual = p->rel;
  r->seconds = seconds;
}

/* one solve into u (n values) */
static int solve_one(hexcg_solver *s, const double *f, double *u, hexcg_result *r) {
  double *hf = NULL, *hg = NULL, *hbn = NULL, *hu = NULL;
  hx_solve_result dr;
  const double t0 = hx_wtime();
  int err = data_for(s, f, &hf, &hg, &hbn);
  if (!err) err = hx_api_solve(s, &hf, &hg, &hbn, exact_for(s, f), &s->po, NULL, &hu, &dr);
  if (!err) hx_api_l_to_nodes(hx_disc_gs(s->d), hu, u);
  free(hf), free(hg), free(hbn), free(hu);
  HX_CALL(err);
  double sec = hx_wtime() - t0;
  HX_CALL(hx_reduce_max(s->comm, &sec, 1));
  if (r) {
    result_of(&dr.pcg, sec, r);
    r->error_known = dr.exact_known, r->error_l2 = dr.err_l2, r->error_max = dr.err_max;
  }
  return HX_SUCCESS;
}


int hexcg_solve(hexcg_solver *s, const double *f, double *u, hexcg_result *r) {
  HX_API_CHECK_SOLVER(s, "hexcg_solve");
  if (!u) return hx_api_arg("%s: u is NULL (give n values: hexcg_num_nodes)", "hexcg_solve");
  hx_api_saved sv;
  hx_api_enter(s, &sv);
  const int64_t ng = hx_gs_num_local(hx_disc_gs(s->d));
  int err = f ? check_nodes(s, "hexcg_solve: f", f, ng) : HX_SUCCESS;
  if (!err) err = hx_error_agree(s->comm, solve_one(s, f, u, r));
  const int st = hx_api_fail(err);
  hx_api_leave(&sv);
  return st;
}

/* ------------------------------------------------------------ several at once */
/* the backend G-vectors of a block solve */
typedef struct {
  hx_backend b;
  int k;
  double **bv, **xv, *g, *w;
} block_bufs;

static int bufs_alloc(block_bufs *B, hx_backend b, int k, int64_t ng) {
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  B->b = b, B->k = k;
  HX_CALL(HX_ALLOC(&B->bv, k));
  HX_CALL(HX_ALLOC(&B->xv, k));
  for (int c = 0; c < k; c++) {
    HX_CALL(hx_mem_alloc(b, bytes, (void **)&B->bv[c]));
    HX_CALL(hx_mem_alloc(b, bytes, (void **)&B->xv[c]));
    HX_CALL(hx_mem_zero(b, B->xv[c], bytes));
  }
  HX_CALL(hx_mem_alloc(b, bytes, (void **)&B->g));
  HX_CALL(hx_mem_alloc(b, bytes, (void **)&B->w));
  return HX_SUCCESS;
}

static void bufs_free(block_bufs *B) {
  for (int c = 0; c < B->k; c++) {
    if (B->bv) hx_mem_free(B->b, (void **)&B->bv[c]);
    if (B->xv) hx_mem_free(B->b, (void **)&B->xv[c]);
  }
  free(B->bv), free(B->xv);
  hx_mem_free(B->b, (void **)&B->g);
  hx_mem_free(B->b, (void **)&B->w);
}

/* ||b - A x|| of one column (w: work) */
static int true_residual(hx_op op, const double *d_b, const double *d_x, double *d_w, double *rn) {
  const int64_t ng = hx_op_size(op);
  HX_CALL(hx_op_apply(op, d_x, d_w, NULL));
  HX_CALL(hx_array_axpby(hx_op_backend(op), ng, d_w, 1.0, d_b, -1.0));
  double rr = 0.0;
  HX_CALL(hx_gs_dot(hx_op_gs(op), d_w, d_w, &rr));
  *rn = sqrt(rr);
  return HX_SUCCESS;
}

/* the right-hand sides, block PCG in chunks of HX_AX_MANY_MAX, the
 * solutions u = x + g as L-vectors, their errors against exact[c] */
static int block_steps(hexcg_solver *s, int k, double *const *hf_l, const double *hg, const double *hbn,
                       const hx_field *exact, double *const *hu_l, hx_pcg_result *pr, double *err_l2,
                       double *err_max, block_bufs *B) {
  hx_disc d = s->d;
  hx_op op = hx_disc_op(d);
  const int64_t ng = hx_gs_num_local(hx_disc_gs(d));
  for (int c = 0; c < k; c++) HX_CALL(hx_disc_rhs(d, hf_l[c], hg, hbn, B->bv[c], B->g));
  HX_CALL(hx_pc_setup(s->pc));
  for (int c0 = 0; c0 < k; c0 += HX_AX_MANY_MAX) {
    const int kc = k - c0 < HX_AX_MANY_MAX ? k - c0 : HX_AX_MANY_MAX;
    HX_CALL(hx_pcg_solve_many(op, s->pc, kc, (const double *const *)B->bv + c0, B->xv + c0, &s->po, pr + c0));
  }
  for (int c = 0; c < k; c++) {
    HX_CALL(true_residual(op, B->bv[c], B->xv[c], B->w, &pr[c].rnorm));
    pr[c].rel = pr[c].bnorm > 0.0 ? pr[c].rnorm / pr[c].bnorm : pr[c].rnorm;
    HX_CALL(hx_array_axpby(s->b, ng, B->xv[c], 1.0, B->g, 1.0));
    HX_CALL(hx_op_to_l_host(op, B->xv[c], hu_l[c]));
    err_l2[c] = err_max[c] = 0.0;
    if (exact && exact[c].fn) HX_CALL(hx_disc_error(d, hu_l[c], exact[c], &err_l2[c], &err_max[c]));
  }
  return HX_SUCCESS;
}

/* why the solver's configuration has no block path (NULL: it has one) */
static const char *block_refusal(hexcg_solver *s) {
  hx_op opx = NULL;
  if (hx_disc_op_exact(s->d, &opx)) {
    hx_error_clear();
    return "the exact operator is not at hand";
  }
  const char *pct = hx_pc_config_type(s->pcc);
  if (pct && !strcmp(pct, "auto")) return "preconditioner auto";
  if (hx_disc_nullspace(s->d)) return "a pure Neumann problem (null space)";
  if (opx != hx_disc_op(s->d)) return "split geometry (operator.geometry): residuals on another operator";
  if (s->po.flexible || s->po.single_reduction) return "solver.type fcg or pcg1";
  return NULL;
}

/* whether the solver's configuration has a block path */
static int block_possible(hexcg_solver *s) { return block_refusal(s) == NULL; }

int hx_api_solve_many_l(hexcg_solver *s, int k, double *const *hf_l, const double *hg, const double *hbn,
                        const hx_field *exact, double *const *hu_l, hx_pcg_result *pr, double *err_l2,
                        double *err_max) {
  const char *why = block_refusal(s);
  HX_CHECK(!why, HX_ERR_UNSUPPORTED,
           "several right-hand sides are solved at once by block PCG, which this case cannot use: %s; solve "
           "them one at a time (one right-hand side per case)",
           why);
  block_bufs B;
  memset(&B, 0, sizeof B);
  int err = bufs_alloc(&B, s->b, k, hx_gs_num_local(hx_disc_gs(s->d)));
  if (!err) err = block_steps(s, k, hf_l, hg, hbn, exact, hu_l, pr, err_l2, err_max, &B);
  bufs_free(&B);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* k L-vectors of nl values each (one allocation behind v[0]) */
static int lvecs_alloc(int k, int64_t nl, double ***v) {
  HX_CALL(HX_ALLOC(v, k));
  HX_CALL(HX_ALLOC(&(*v)[0], (size_t)k * (size_t)(nl > 0 ? nl : 1)));
  for (int c = 1; c < k; c++) (*v)[c] = (*v)[0] + (size_t)c * (size_t)(nl > 0 ? nl : 1);
  return HX_SUCCESS;
}

static void lvecs_free(double ***v) {
  if (*v) free((*v)[0]);
  free(*v), *v = NULL;
}

/* the columns at the nodes: their L-vectors (F NULL: the problem's f in
 * every column), hx_api_solve_many_l, the solutions back at the nodes */
static int block_nodes(hexcg_solver *s, int k, const double *F, double *U, hx_pcg_result *pr, double *ferr) {
  hx_gs gs = hx_disc_gs(s->d);
  const int64_t ng = hx_gs_num_local(gs), nl = hx_disc_num_l(s->d);
  double *hf = NULL, *hg = NULL, *hbn = NULL, **fl = NULL, **ul = NULL;
  hx_field *ex = NULL;
  int err = data_for(s, NULL, &hf, &hg, &hbn);
  if (!err) err = lvecs_alloc(k, nl, &fl);
  if (!err) err = lvecs_alloc(k, nl, &ul);
  if (!err) err = HX_ALLOC(&ex, k);
  for (int c = 0; c < k && !err; c++) {
    if (F)
      hx_api_nodes_to_l(gs, F + (int64_t)c * ng, fl[c]);
    else
      memcpy(fl[c], hf, sizeof(double) * (size_t)nl);
    ex[c] = exact_for(s, F);
  }
  if (!err) err = hx_api_solve_many_l(s, k, fl, hg, hbn, ex, ul, pr, ferr, ferr + k);
  for (int c = 0; c < k && !err; c++) hx_api_l_to_nodes(gs, ul[c], U + (int64_t)c * ng);
  free(hf), free(hg), free(hbn), free(ex);
  lvecs_free(&fl), lvecs_free(&ul);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int solve_block(hexcg_solver *s, int k, const double *F, double *U, hexcg_result *r) {
  hx_pcg_result *pr = NULL;
  double *ferr = NULL;
  const double t0 = hx_wtime();
  int err = HX_ALLOC(&pr, k);
  if (!err) err = HX_ALLOC(&ferr, 2 * k);
  if (!err) err = block_nodes(s, k, F, U, pr, ferr);
  double sec = hx_wtime() - t0;
  if (!err) err = hx_reduce_max(s->comm, &sec, 1);
  const int known = exact_for(s, F).fn != NULL;
  for (int c = 0; c < k && !err && r; c++) {
    result_of(&pr[c], sec, &r[c]);
    r[c].block = 1;
    r[c].error_known = known, r[c].error_l2 = ferr[c], r[c].error_max = ferr[k + c];
  }
  free(pr), free(ferr);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hexcg_solve_many(hexcg_solver *s, int k, const double *F, double *U, hexcg_result *r) {
  HX_API_CHECK_SOLVER(s, "hexcg_solve_many");
  if (k < 0) return hx_api_arg("%s: k < 0 (give the number of columns)", "hexcg_solve_many");
  if (k > 0 && !U) return hx_api_arg("%s: U is NULL (give k n values: hexcg_num_nodes)", "hexcg_solve_many");
  if (k == 0) {
    hx_api_clear();
    return HEXCG_OK;
  }
  hx_api_saved sv;
  hx_api_enter(s, &sv);
  const int64_t ng = hx_gs_num_local(hx_disc_gs(s->d));
  int err = F ? check_nodes(s, "hexcg_solve_many: F", F, ng * k) : HX_SUCCESS;
  if (!err && (k == 1 || !block_possible(s))) {
    for (int c = 0; c < k && !err; c++) {
      err = hx_error_agree(s->comm, solve_one(s, F ? F + (int64_t)c * ng : NULL, U + (int64_t)c * ng,
                                              r ? &r[c] : NULL));
      if (!err && r) r[c].block = 0;
    }
  } else if (!err) {
    err = hx_error_agree(s->comm, solve_block(s, k, F, U, r));
  }
  const int st = hx_api_fail(err);
  hx_api_leave(&sv);
  return st;
}
