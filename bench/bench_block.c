/* hexcg bench block: several right-hand sides at once (issue 50). On a box
 * or Kershaw mesh at order p, for each k of --ks:
 *   op   the assembled operator on k columns (hx_op_apply_many_p: each
 *        element's factors read once for all k, one exchange message per
 *        neighbour), FP64 and FP32, against k single applies timed in the
 *        same round: seconds per column and their ratio;
 *   solve  block PCG (hx_pcg_solve_many) with the --pc preconditioner on k
 *        right-hand sides against k single solves (hx_pcg_solve) of the same
 *        right-hand sides in the same round: seconds per right-hand side and
 *        their ratio (the target of issue 50: <= 0.5 at k = 8, Kershaw 12^3,
 *        p = 7, pmg), and whether every column has its single solve's
 *        iterations.
 * Best of --rounds rounds for each figure (the variants alternate within a
 * round); figures are the slowest rank's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "hx_bench.h"
#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"

#define KMAX 16

typedef struct {
  const char *backend, *mesh, *pc, *ks, *what;
  int n, p, rounds;
  double rtol;
} options;

static int parse_ks(const char *s, int *ks, int *nk) {
  *nk = 0;
  const char *q = s;
  while (*q) {
    char *end;
    const long v = strtol(q, &end, 10);
    HX_CHECK(end != q && v >= 1 && v <= KMAX && *nk < KMAX, HX_ERR_INPUT,
             "bench block: --ks '%s': a comma-separated list of up to %d column counts in 1..%d", s, KMAX, KMAX);
    ks[(*nk)++] = (int)v;
    q = end;
    if (*q == ',') q++;
    else HX_CHECK(!*q, HX_ERR_INPUT, "bench block: --ks '%s': a comma-separated list of integers", s);
  }
  HX_CHECK(*nk > 0, HX_ERR_INPUT, "bench block: --ks is empty");
  return HX_SUCCESS;
}

static double maxr(MPI_Comm comm, double v) {
  double g = v;
  MPI_Allreduce(&v, &g, 1, MPI_DOUBLE, MPI_MAX, comm);
  return g;
}

/* the operator part: k columns at once against k single applies, precision prec */
static int bench_op(hx_app_ctx *ctx, const options *o, hx_disc d, hx_precision prec, const int *ks, int nks) {
  hx_op op = hx_disc_op(d);
  if (prec == HX_F32) HX_CALL(hx_disc_op_prec(d, HX_F32, &op));
  hx_backend b = hx_op_backend(op);
  const int64_t ng = hx_op_size(op);
  const size_t bytes = hx_precision_size(prec) * (size_t)(ng > 0 ? ng : 1);
  void *x[KMAX], *y[KMAX];
  memset(x, 0, sizeof x), memset(y, 0, sizeof y);
  int err = HX_SUCCESS;
  for (int c = 0; c < KMAX && !err; c++) {
    if (!(err = hx_mem_alloc(b, bytes, &x[c]))) err = hx_mem_zero(b, x[c], bytes);
    if (!err && !(err = hx_mem_alloc(b, bytes, &y[c]))) err = hx_mem_zero(b, y[c], bytes);
  }
  for (int i = 0; i < nks && !err; i++) {
    const int k = ks[i];
    double best1 = 1e300, bestk = 1e300;
    for (int r = 0; r < o->rounds && !err; r++) {
      /* k single applies, then one k-column apply; ~0.2 s each */
      int reps = 1;
      double t1 = 0, tk = 0;
      for (;;) {
        MPI_Barrier(ctx->comm);
        double t0 = hx_wtime();
        for (int rep = 0; rep < reps && !err; rep++)
          for (int c = 0; c < k && !err; c++) err = hx_op_apply_p(op, x[c], y[c]);
        if (!err) err = hx_backend_sync(b);
        t1 = maxr(ctx->comm, hx_wtime() - t0);
        MPI_Barrier(ctx->comm);
        t0 = hx_wtime();
        for (int rep = 0; rep < reps && !err; rep++) err = hx_op_apply_many_p(op, k, (const void *const *)x, y, NULL);
        if (!err) err = hx_backend_sync(b);
        tk = maxr(ctx->comm, hx_wtime() - t0);
        if (err || t1 + tk >= 0.2 || reps >= 1 << 20) break;
        reps *= 2;
      }
      best1 = fmin(best1, t1 / ((double)reps * k));
      bestk = fmin(bestk, tk / ((double)reps * k));
    }
    if (!err && ctx->rank == 0)
      printf("op     %s k=%2d  single %8.3f ms/column  block %8.3f ms/column  ratio %.3f\n",
             prec == HX_F64 ? "fp64" : "fp32", k, 1e3 * best1, 1e3 * bestk, bestk / best1);
  }
  for (int c = 0; c < KMAX; c++) hx_mem_free(b, &x[c]), hx_mem_free(b, &y[c]);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* the solve part: block PCG on k right-hand sides against k single solves */
static int bench_solve(hx_app_ctx *ctx, const options *o, hx_disc d, hx_pc pc, const int *ks, int nks) {
  hx_op op = hx_disc_op(d);
  hx_backend b = hx_op_backend(op);
  const int64_t ng = hx_op_size(op);
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  double *bv[KMAX], *x[KMAX];
  memset(bv, 0, sizeof bv), memset(x, 0, sizeof x);
  int err = HX_SUCCESS;
  const int64_t *gid = hx_gs_global_ids(hx_disc_gs(d));
  double *h = malloc(bytes);
  if (!h) return HX_ERROR(HX_ERR_MEM, "bench block: out of memory");
  for (int c = 0; c < KMAX && !err; c++) {
    /* right-hand side c: a smooth field of its own frequency plus 1, masked */
    for (int64_t i = 0; i < ng; i++) h[i] = 1.0 + sin((0.11 + 0.07 * c) * (double)gid[i]);
    if (!(err = hx_mem_alloc(b, bytes, (void **)&bv[c]))) err = hx_mem_to_device(b, bv[c], h, bytes);
    if (!err) err = hx_gs_apply_mask(hx_disc_gs(d), bv[c]);
    if (!err) err = hx_mem_alloc(b, bytes, (void **)&x[c]);
  }
  free(h);
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = o->rtol;
  hx_pcg_result res[KMAX], r1[KMAX];
  for (int i = 0; i < nks && !err; i++) {
    const int k = ks[i];
    double best1 = 1e300, bestk = 1e300;
    int same = 1, itmin = 1 << 30, itmax = 0;
    for (int r = 0; r < o->rounds && !err; r++) {
      MPI_Barrier(ctx->comm);
      double t0 = hx_wtime();
      for (int c = 0; c < k && !err; c++) {
        if (!(err = hx_mem_zero(b, x[c], bytes))) err = hx_pcg_solve(op, pc, bv[c], x[c], &po, &r1[c]);
      }
      const double t1 = maxr(ctx->comm, hx_wtime() - t0);
      MPI_Barrier(ctx->comm);
      t0 = hx_wtime();
      for (int c = 0; c < k && !err; c++) err = hx_mem_zero(b, x[c], bytes);
      if (!err) err = hx_pcg_solve_many(op, pc, k, (const double *const *)bv, x, &po, res);
      const double tk = maxr(ctx->comm, hx_wtime() - t0);
      best1 = fmin(best1, t1 / k), bestk = fmin(bestk, tk / k);
      for (int c = 0; c < k && !err; c++) {
        same &= res[c].iterations == r1[c].iterations && res[c].reason == r1[c].reason;
        itmin = res[c].iterations < itmin ? res[c].iterations : itmin;
        itmax = res[c].iterations > itmax ? res[c].iterations : itmax;
      }
    }
    if (!err && ctx->rank == 0)
      printf("solve  k=%2d  single %8.3f s/rhs  block %8.3f s/rhs  ratio %.3f  iterations %d..%d %s\n", k, best1,
             bestk, bestk / best1, itmin, itmax, same ? "(as the single solves)" : "(DIFFER from the single solves)");
  }
  for (int c = 0; c < KMAX; c++) hx_mem_free(b, (void **)&bv[c]), hx_mem_free(b, (void **)&x[c]);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int run(hx_app_ctx *ctx, const options *o, const int *ks, int nks) {
  hx_backend b = NULL;
  hx_mesh m = NULL;
  hx_disc d = NULL;
  hx_pc pc = NULL;
  hx_opt *opts = NULL;
  int err = hx_backend_create(o->backend, &b);
  if (!err) err = hx_bench_box_mesh(ctx->comm, o->mesh, o->n, &m);
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = o->p;
  if (!err) err = hx_disc_create(m, b, &dopt, &d);
  if (!err && ctx->rank == 0)
    printf("bench block: %s %d^3 p=%d, %lld dofs, backend %s, best of %d rounds\n", o->mesh, o->n, o->p,
           (long long)hx_disc_num_dofs(d), o->backend, o->rounds);
  if (!err && strcmp(o->what, "solve")) err = bench_op(ctx, o, d, HX_F64, ks, nks);
  if (!err && strcmp(o->what, "solve")) err = bench_op(ctx, o, d, HX_F32, ks, nks);
  if (!err && strcmp(o->what, "op")) {
    if (!err) err = hx_opt_parse_yaml(o->pc, "--pc", &opts);
    if (!err) err = hx_pc_options_check(opts);
    if (!err) err = hx_pc_create_from_options(d, opts, &pc);
    if (!err) err = hx_pc_setup(pc);
    if (!err && ctx->rank == 0) printf("solve: --pc %s, rtol %g\n", o->pc, o->rtol);
    if (!err) err = bench_solve(ctx, o, d, pc, ks, nks);
  }
  hx_opt_free(&opts);
  hx_pc_destroy(&pc);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_bench_block(hx_app_ctx *ctx, int argc, char **argv) {
  options o = {0};
  const hx_bench_opt opt[] = {
      {"--backend", HX_BOPT_STRING, &o.backend, "cpu", .meta = "NAME", .help = "backend: cpu or cuda"},
      {"--mesh", HX_BOPT_CHOICE, &o.mesh, "kershaw", .choices = "box,kershaw",
       .help = "unit cube, or the Kershaw mesh with eps 0.3"},
      {"--elements", HX_BOPT_INT, &o.n, "12", 1, 512, .meta = "N", .help = "N^3 elements (kershaw: a multiple of 6)"},
      {"--order", HX_BOPT_INT, &o.p, "7", HX_ORDER_MIN, HX_ORDER_MAX, .meta = "P", .help = "polynomial order"},
      {"--pc", HX_BOPT_STRING, &o.pc, "{type: pmg}", .meta = "YAML",
       .help = "the solve's preconditioner options as in a case file, flow style"},
      {"--ks", HX_BOPT_STRING, &o.ks, "1,2,4,8,16", .meta = "LIST", .help = "column counts k (1..16)"},
      {"--what", HX_BOPT_CHOICE, &o.what, "all", .choices = "all,op,solve",
       .help = "the operator part, the solve part or both"},
      {"--rtol", HX_BOPT_REAL, &o.rtol, "1e-8", 0, 1, HX_BOPT_OPEN_LO, .meta = "TOL", .help = "the solves' rtol"},
      {"--rounds", HX_BOPT_INT, &o.rounds, "2", 1, 100, .meta = "K", .help = "rounds, best of each figure kept"},
  };
  const hx_bench_cmd cmd = {"bench block", NULL, NULL, (int)(sizeof opt / sizeof opt[0]), opt};
  int status = 0;
  if (hx_bench_args(ctx, &cmd, argc, argv, &status)) return status;
  int ks[KMAX], nks = 0;
  int err = parse_ks(o.ks, ks, &nks);
  if (!err && !strcmp(o.mesh, "kershaw") && o.n % 6)
    err = HX_ERROR(HX_ERR_INPUT, "bench block: --elements %d: the Kershaw mesh needs a multiple of 6", o.n);
  if (!err) err = run(ctx, &o, ks, nks);
  if (err) return hx_app_fail(ctx, err, 1);
  return 0;
}
