/* Several right-hand sides at once (issue 50, the block solve):
 *   ax     the k-vector element operator (hx_ax_apply_many_prec) against k
 *          single applies (hx_ax_apply_prec), FP64 and FP32, every element
 *          and a list, the per-column u.w sums; relative 1e-13 (FP64) and
 *          1e-6 (FP32), and on the cpu backends the same bits (the k-vector
 *          loop runs the one-vector kernels)
 *   op     the assembled operator on k columns (hx_op_apply_many_p: the
 *          fused scatter, the k-vector exchange, the mask, x.y) against k
 *          hx_op_apply / hx_op_apply_p, FP64 and FP32, on 1-3 ranks
 *   gs     the k-vector exchange (hx_gs_exchange_many_p) against k single
 *          exchanges, add/min/max, FP64 and FP32, on 1-3 ranks
 *   solve  block PCG (hx_pcg_solve_many) against hx_pcg_solve per column,
 *          jacobi and pmg: k = 1 bit for bit; k = 5 columns that converge at
 *          different iterations (one b = 0, one from a good guess), each
 *          with its single solve's iterations and solution (the same bits
 *          on up to two cpu ranks); k = 17 (more than the bench's 16);
 *          bad arguments refused
 *   solve-pmg  pmg alone, k = 1 and 5 (the 3-rank and cpu-memcheck runs)
 * Usage: t570-block MODE [--backend cpu|cpu-memcheck|cuda] */
#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"

static int g_rank = 0, g_size = 1;
static const char *g_backend = "cpu";

typedef struct {
  hx_backend b;
  hx_mesh m;
  hx_disc d;
} setup;

static int make(int n, int p, setup *s) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = 6, mo.ny = mo.nz = n; /* Kershaw: nx a multiple of 6, ny and nz even */
  mo.kershaw_eps = 0.3;
  HX_TCALL(hx_backend_create(g_backend, &s->b));
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &s->m));
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = p;
  HX_TCALL(hx_disc_create(s->m, s->b, &dopt, &s->d));
  return 0;
}

static int unmake(setup *s) {
  HX_TCALL(hx_disc_destroy(&s->d));
  HX_TCALL(hx_mesh_destroy(&s->m));
  HX_TCALL(hx_backend_destroy(&s->b));
  return 0;
}

/* k backend vectors of n entries of size es, filled with seeded values in
 * [-1, 1) (h: host copies as double, k*n) */
static int vecs(hx_backend b, int k, int64_t n, size_t es, uint64_t seed, void **d, double *h) {
  hx_test_rng r = {seed};
  void *tmp = malloc(es * (size_t)(n > 0 ? n : 1));
  for (int c = 0; c < k; c++) {
    for (int64_t i = 0; i < n; i++) {
      const double v = hx_test_rand(&r);
      if (h) h[(size_t)c * n + i] = es == 4 ? (double)(float)v : v;
      if (es == 4) ((float *)tmp)[i] = (float)v;
      else ((double *)tmp)[i] = v;
    }
    HX_TCALL(hx_mem_alloc(b, es * (size_t)(n > 0 ? n : 1), &d[c]));
    HX_TCALL(hx_mem_to_device(b, d[c], tmp, es * (size_t)n));
  }
  free(tmp);
  return 0;
}

static int freevecs(hx_backend b, int k, void **d) {
  for (int c = 0; c < k; c++) HX_TCALL(hx_mem_free(b, &d[c]));
  return 0;
}

/* largest |a - b| / max|b| over n entries of two backend vectors of size es, over the ranks */
static int vdiff(hx_backend b, int64_t n, size_t es, const void *da, const void *db, double *rel) {
  void *ha = malloc(es * (size_t)(n + 1)), *hb = malloc(es * (size_t)(n + 1));
  HX_TCALL(hx_mem_to_host(b, ha, da, es * (size_t)n));
  HX_TCALL(hx_mem_to_host(b, hb, db, es * (size_t)n));
  double loc[2] = {0.0, 0.0}, glob[2];
  for (int64_t i = 0; i < n; i++) {
    const double x = es == 4 ? ((float *)ha)[i] : ((double *)ha)[i];
    const double y = es == 4 ? ((float *)hb)[i] : ((double *)hb)[i];
    loc[0] = fmax(loc[0], fabs(x - y));
    loc[1] = fmax(loc[1], fabs(y));
  }
  free(ha), free(hb);
  MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  *rel = glob[1] > 0 ? glob[0] / glob[1] : glob[0];
  return 0;
}

/* ------------------------------------------------------------ ax */
static int ax_case(setup *s, hx_precision prec, int k, int use_list) {
  hx_op op = hx_disc_op(s->d);
  if (prec == HX_F32) HX_TCALL(hx_disc_op_prec(s->d, HX_F32, &op));
  hx_ax ax = hx_op_ax(op);
  const int64_t nl = hx_ax_num_nodes(ax);
  const int32_t E = hx_ax_num_elements(ax);
  const size_t es = hx_precision_size(prec);
  const double tol = prec == HX_F64 ? 1e-13 : 1e-6;
  void *u[40], *w[40], *w1;
  HX_TCALL(vecs(s->b, k, nl, es, 17 + k, u, NULL));
  HX_TCALL(vecs(s->b, k, nl, es, 99, w, NULL)); /* garbage where the list does not write */
  HX_TCALL(hx_mem_alloc(s->b, es * (size_t)(nl + 1), &w1));
  /* every other element, in reverse order */
  int32_t nlist = E, *hl = malloc(sizeof(int32_t) * (size_t)(E + 1)), *dl = NULL;
  if (use_list) {
    nlist = 0;
    for (int32_t e = E - 1; e >= 0; e -= 2) hl[nlist++] = e;
    HX_TCALL(hx_mem_alloc(s->b, sizeof(int32_t) * (size_t)(nlist + 1), (void **)&dl));
    HX_TCALL(hx_mem_to_device(s->b, dl, hl, sizeof(int32_t) * (size_t)nlist));
  }
  double uw[40];
  HX_TCALL(hx_ax_apply_many_prec(ax, prec, k, nlist, dl, NULL, (const void *const *)u, w, uw));
  for (int c = 0; c < k; c++) {
    double uw1, rel;
    HX_TCALL(hx_mem_zero(s->b, w1, es * (size_t)nl));
    if (use_list) {
      /* the unlisted entries of w[c] keep their values: copy them to w1 first */
      void *h = malloc(es * (size_t)(nl + 1));
      HX_TCALL(hx_mem_to_host(s->b, h, w[c], es * (size_t)nl));
      HX_TCALL(hx_mem_to_device(s->b, w1, h, es * (size_t)nl));
      free(h);
    }
    HX_TCALL(hx_ax_apply_prec(ax, prec, nlist, dl, NULL, u[c], w1, &uw1, NULL, 0));
    HX_TCALL(vdiff(s->b, nl, es, w[c], w1, &rel));
    HX_ASSERT(rel <= tol, "ax %s k=%d list=%d column %d: rel diff %.3e > %.0e", hx_precision_name(prec), k, use_list,
              c, rel, tol);
    HX_ASSERT(hx_test_reldiff(uw[c], uw1, 1e-300) <= tol, "ax %s column %d: u.w %.17g vs single %.17g",
              hx_precision_name(prec), c, uw[c], uw1);
    if (hx_backend_get_kind(s->b) == HX_BACKEND_CPU)
      HX_ASSERT(rel == 0.0 && uw[c] == uw1, "ax %s column %d: not the single apply's bits on the cpu (%.3e)",
                hx_precision_name(prec), c, rel);
  }
  /* bad arguments: a NULL column, too many columns */
  void *bad[2] = {w[0], NULL};
  HX_ASSERT(hx_ax_apply_many_prec(ax, prec, 2, nlist, dl, NULL, (const void *const *)u, bad, NULL) == HX_ERR_ARG,
            "a NULL column is refused");
  hx_error_clear();
  HX_ASSERT(hx_ax_apply_many_prec(ax, prec, HX_AX_MANY_MAX + 1, nlist, dl, NULL, (const void *const *)u, w, NULL) ==
                HX_ERR_ARG,
            "more than HX_AX_MANY_MAX columns are refused");
  hx_error_clear();
  HX_TCALL(freevecs(s->b, k, u));
  HX_TCALL(freevecs(s->b, k, w));
  HX_TCALL(hx_mem_free(s->b, &w1));
  if (dl) HX_TCALL(hx_mem_free(s->b, (void **)&dl));
  free(hl);
  return 0;
}

static int mode_ax(void) {
  const int orders[2] = {3, 7};
  for (int i = 0; i < 2; i++) {
    setup s;
    HX_TCALL(make(2, orders[i], &s));
    for (int prec = 0; prec < 2; prec++)
      for (int list = 0; list < 2; list++) HX_TCALL(ax_case(&s, prec ? HX_F32 : HX_F64, i ? 3 : 9, list));
    HX_TCALL(unmake(&s));
  }
  return 0;
}

/* ------------------------------------------------------------ op */
static int mode_op(void) {
  setup s;
  HX_TCALL(make(2, 4, &s));
  for (int prec = 0; prec < 2; prec++) {
    hx_op op = hx_disc_op(s.d);
    if (prec) HX_TCALL(hx_disc_op_prec(s.d, HX_F32, &op));
    const int64_t ng = hx_op_size(op);
    const size_t es = prec ? 4 : 8;
    const int k = 6;
    void *x[6], *y[6], *y1;
    HX_TCALL(vecs(s.b, k, ng, es, 5, x, NULL));
    HX_TCALL(vecs(s.b, k, ng, es, 6, y, NULL));
    HX_TCALL(hx_mem_alloc(s.b, es * (size_t)(ng + 1), &y1));
    /* the exchange makes shared rows consistent: the inputs too */
    for (int c = 0; c < k; c++) HX_TCALL(hx_gs_exchange_p(hx_op_gs(op), prec ? HX_F32 : HX_F64, x[c], HX_GS_MAX));
    double xy[6];
    HX_TCALL(hx_op_apply_many_p(op, k, (const void *const *)x, y, prec ? NULL : xy));
    for (int c = 0; c < k; c++) {
      double xy1 = 0.0, rel;
      if (prec) HX_TCALL(hx_op_apply_p(op, x[c], y1));
      else HX_TCALL(hx_op_apply(op, x[c], y1, &xy1));
      HX_TCALL(vdiff(s.b, ng, es, y[c], y1, &rel));
      HX_ASSERT(rel <= (prec ? 1e-6 : 1e-13), "op %s column %d on %d ranks: rel diff %.3e", prec ? "fp32" : "fp64", c,
                g_size, rel);
      if (hx_backend_get_kind(s.b) == HX_BACKEND_CPU)
        HX_ASSERT(rel == 0.0, "op %s column %d: not the single apply's bits on the cpu (%.3e)", prec ? "fp32" : "fp64",
                  c, rel);
      if (!prec) {
        HX_ASSERT(hx_test_reldiff(xy[c], xy1, 1e-300) <= 1e-13, "op column %d: x.y %.17g vs %.17g", c, xy[c], xy1);
        if (g_size <= 2 && hx_backend_get_kind(s.b) == HX_BACKEND_CPU)
          HX_ASSERT(xy[c] == xy1, "op column %d: x.y not the single apply's bits", c);
      }
    }
    HX_ASSERT(hx_op_apply_many_p(op, 0, NULL, NULL, NULL) == HX_SUCCESS, "k = 0 is nothing to do");
    HX_TCALL(freevecs(s.b, k, x));
    HX_TCALL(freevecs(s.b, k, y));
    HX_TCALL(hx_mem_free(s.b, &y1));
  }
  HX_TCALL(unmake(&s));
  return 0;
}

/* ------------------------------------------------------------ gs */
static int mode_gs(void) {
  setup s;
  HX_TCALL(make(2, 3, &s));
  hx_gs gs = hx_disc_gs(s.d);
  const int64_t ng = hx_gs_num_local(gs);
  for (int prec = 0; prec < 2; prec++)
    for (int op = 0; op < 3; op++) {
      const hx_gs_op gop = op == 0 ? HX_GS_ADD : op == 1 ? HX_GS_MIN : HX_GS_MAX;
      const size_t es = prec ? 4 : 8;
      const int k = 5;
      void *g[5], *g1[5];
      HX_TCALL(vecs(s.b, k, ng, es, 1000 + g_rank, g, NULL));
      HX_TCALL(vecs(s.b, k, ng, es, 1000 + g_rank, g1, NULL));
      HX_TCALL(hx_gs_exchange_many_p(gs, prec ? HX_F32 : HX_F64, k, g, gop));
      for (int c = 0; c < k; c++) {
        HX_TCALL(hx_gs_exchange_p(gs, prec ? HX_F32 : HX_F64, g1[c], gop));
        double rel;
        HX_TCALL(vdiff(s.b, ng, es, g[c], g1[c], &rel));
        HX_ASSERT(rel == 0.0, "gs %s op %d column %d on %d ranks: rel diff %.3e (the same bits expected)",
                  prec ? "fp32" : "fp64", op, c, g_size, rel);
      }
      HX_TCALL(freevecs(s.b, k, g));
      HX_TCALL(freevecs(s.b, k, g1));
    }
  HX_ASSERT(hx_gs_exchange_many_p(gs, HX_F64, 1, NULL, HX_GS_ADD) == HX_ERR_ARG, "a NULL column array is refused");
  hx_error_clear();
  HX_TCALL(unmake(&s));
  return 0;
}

/* ------------------------------------------------------------ solve */
/* right-hand side c: column 0 smooth, 1 zero (0 iterations), 2 a scaled copy
 * of 0 (the same iterations), the others seeded noise (more iterations) */
static int rhs(setup *s, hx_op op, int c, double *db) {
  const int64_t ng = hx_op_size(op);
  double *h = malloc(sizeof(double) * (size_t)(ng + 1));
  hx_test_rng r = {77 + (uint64_t)c * 31 + (uint64_t)g_rank * 1000};
  for (int64_t i = 0; i < ng; i++) h[i] = c == 1 ? 0.0 : c == 0 || c == 2 ? 1.0 : hx_test_rand(&r);
  if (c == 2)
    for (int64_t i = 0; i < ng; i++) h[i] *= 3.0;
  HX_TCALL(hx_mem_to_device(s->b, db, h, sizeof(double) * (size_t)ng));
  free(h);
  /* consistent shared rows, the masked ones zero */
  HX_TCALL(hx_gs_exchange(hx_op_gs(op), db, HX_GS_MAX));
  HX_TCALL(hx_gs_apply_mask(hx_op_gs(op), db));
  return 0;
}

static int solve_case(setup *s, const char *pcy, int k, double rtol) {
  hx_op op = hx_disc_op(s->d);
  const int64_t ng = hx_op_size(op);
  hx_opt *opts;
  HX_TCALL(hx_opt_parse_yaml(pcy, "t570", &opts));
  HX_TCALL(hx_pc_options_check(opts));
  hx_pc pc;
  HX_TCALL(hx_pc_create_from_options(s->d, opts, &pc));
  hx_opt_free(&opts);
  HX_TCALL(hx_pc_setup(pc));
  double *b[20], *x[20], *x0[20], *x1;
  const size_t gb = sizeof(double) * (size_t)(ng + 1);
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = rtol;
  po.max_iterations = 500;
  hx_pcg_result res[20], r1;
  for (int c = 0; c < k; c++) {
    HX_TCALL(hx_mem_alloc(s->b, gb, (void **)&b[c]));
    HX_TCALL(hx_mem_alloc(s->b, gb, (void **)&x[c]));
    HX_TCALL(hx_mem_alloc(s->b, gb, (void **)&x0[c]));
    HX_TCALL(rhs(s, op, c == 4 ? 0 : c, b[c]));
    HX_TCALL(hx_mem_zero(s->b, x0[c], gb));
    if (c == 4) {
      /* column 4: column 0's system from a guess already at 1e-3, so it
       * stops iterations before column 0 does */
      hx_pcg_opts p3 = po;
      p3.rtol = 1e-3;
      HX_TCALL(hx_pcg_solve(op, pc, b[c], x0[c], &p3, &r1));
    }
    HX_TCALL(hx_array_copy(s->b, ng, x[c], x0[c]));
  }
  HX_TCALL(hx_mem_alloc(s->b, gb, (void **)&x1));
  HX_TCALL(hx_pcg_solve_many(op, pc, k, (const double *const *)b, x, &po, res));
  const int cpu = hx_backend_get_kind(s->b) == HX_BACKEND_CPU;
  for (int c = 0; c < k; c++) {
    HX_TCALL(hx_array_copy(s->b, ng, x1, x0[c]));
    HX_TCALL(hx_pcg_solve(op, pc, b[c], x1, &po, &r1));
    double rel;
    HX_TCALL(vdiff(s->b, ng, 8, x[c], x1, &rel));
    HX_ASSERT(res[c].reason == r1.reason, "%s k=%d column %d: reason %s, single %s", pcy, k, c,
              hx_reason_name(res[c].reason), hx_reason_name(r1.reason));
    HX_ASSERT(res[c].reason > 0, "%s k=%d column %d did not converge (%s)", pcy, k, c, hx_reason_name(res[c].reason));
    /* the same arithmetic per column: the same bits on up to two cpu ranks
     * (the allreduce of more values may add in another order on more),
     * else the solution to well within the tolerance */
    if (cpu && g_size <= 2) {
      HX_ASSERT(res[c].iterations == r1.iterations && res[c].rnorm == r1.rnorm && rel == 0.0,
                "%s k=%d column %d: %d its rnorm %.17g, single %d its %.17g, x rel diff %.3e (bits expected)", pcy, k,
                c, res[c].iterations, res[c].rnorm, r1.iterations, r1.rnorm, rel);
    } else {
      HX_ASSERT(abs(res[c].iterations - r1.iterations) <= 1 && rel <= 100 * rtol,
                "%s k=%d column %d: %d its, single %d; x rel diff %.3e", pcy, k, c, res[c].iterations, r1.iterations,
                rel);
    }
    HX_ASSERT(res[c].bnorm == r1.bnorm, "%s column %d: ||b|| %.17g vs %.17g", pcy, c, res[c].bnorm, r1.bnorm);
  }
  if (k >= 5) {
    /* columns that stop at different iterations: b = 0 at once, column 4
     * (a good guess) before column 0 (the same system from zero) */
    HX_ASSERT(res[1].iterations == 0 && res[1].reason > 0, "the b = 0 column stops at once (%d its)",
              res[1].iterations);
    HX_ASSERT(res[4].iterations < res[0].iterations, "%s: column 4 (a guess at 1e-3) stops before column 0 (%d, %d its)",
              pcy, res[4].iterations, res[0].iterations);
  }
  for (int c = 0; c < k; c++) {
    HX_TCALL(hx_mem_free(s->b, (void **)&b[c]));
    HX_TCALL(hx_mem_free(s->b, (void **)&x[c]));
    HX_TCALL(hx_mem_free(s->b, (void **)&x0[c]));
  }
  HX_TCALL(hx_mem_free(s->b, (void **)&x1));
  HX_TCALL(hx_pc_destroy(&pc));
  return 0;
}

static int mode_solve(void) {
  setup s;
  HX_TCALL(make(2, 3, &s));
  const char *pcs[2] = {"{type: jacobi}", "{type: pmg}"};
  /* cpu-memcheck: jacobi here (pmg's k-column cycle: mode solve-pmg) */
  const int memcheck = !strcmp(g_backend, "cpu-memcheck");
  for (int i = 0; i < (memcheck ? 1 : 2); i++) {
    HX_TCALL(solve_case(&s, pcs[i], 1, 1e-8));
    HX_TCALL(solve_case(&s, pcs[i], 5, 1e-8));
  }
  HX_TCALL(solve_case(&s, pcs[memcheck ? 0 : 1], 17, 1e-6));
  /* refused: flexible, too many columns */
  hx_pc pc;
  HX_TCALL(hx_pc_create_jacobi(hx_disc_op(s.d), &pc));
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.flexible = 1;
  hx_pcg_result r[1];
  double *nil[1] = {NULL};
  HX_ASSERT(hx_pcg_solve_many(hx_disc_op(s.d), pc, 1, (const double *const *)nil, nil, &po, r) == HX_ERR_ARG,
            "flexible is refused");
  hx_error_clear();
  po.flexible = 0;
  HX_ASSERT(hx_pcg_solve_many(hx_disc_op(s.d), pc, HX_AX_MANY_MAX + 1, (const double *const *)nil, nil, &po, r) ==
                HX_ERR_ARG,
            "too many columns are refused");
  hx_error_clear();
  HX_TCALL(hx_pc_destroy(&pc));
  HX_TCALL(unmake(&s));
  return 0;
}

/* pmg alone, k = 1 and 5 (for 3 ranks: jacobi's hundreds of allreduces
 * per single solve cost minutes on an oversubscribed machine) */
static int mode_solve_pmg(void) {
  setup s;
  HX_TCALL(make(2, 3, &s));
  HX_TCALL(solve_case(&s, "{type: pmg}", 1, 1e-8));
  HX_TCALL(solve_case(&s, "{type: pmg}", 5, 1e-8));
  HX_TCALL(unmake(&s));
  return 0;
}

int main(int argc, char **argv) {
  hx_test_init(&argc, &argv, &g_rank, &g_size);
  g_backend = hx_test_backend_arg(argc, argv);
  static const hx_test_mode modes[] = {{"ax", mode_ax}, {"op", mode_op}, {"gs", mode_gs}, {"solve", mode_solve},
                                       {"solve-pmg", mode_solve_pmg}};
  return hx_test_run_modes(argc, argv, "t570-block", modes, 5);
}
