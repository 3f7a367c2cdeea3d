/* The CG variants of issue 17 end to end (solver/pcg.c):
 *   fused     Jacobi fused into the CG update (hx_pc_ops.cg_update) against
 *             the separate kernels, for pcg, fcg and pcg1: the same iterates
 *             (on the cpu backend bit for bit: the fused chunk keeps the
 *             lanes and order of the separate reductions), fewer passes
 *   pcg1      single-reduction CG against PCG with jacobi, none, asm and
 *             pmg: iteration counts within 2, the same solution, one
 *             allreduce per iteration, the true residual ||b - A x|| at the
 *             end within the tolerance (no residual gap)
 *   breakdown pcg1's reasons (NaN, iteration limit, b = 0, indefinite
 *             preconditioner), a non-symmetric preconditioner refused with a
 *             message naming fcg, flexible + single_reduction refused
 *   twin      (--backend cuda) each variant on cuda against the same run on
 *             cpu in the same process: iteration counts, histories, solution
 * Usage: t540-cg MODE [--backend cpu|cuda] */
#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"
#include "hx_test_exp.h"
#include "hx_test_indef.h"

static int g_rank = 0;
static const char *g_backend = "cpu";
static char g_msg[1024];

#define MAXH 4096
typedef struct {
  int n;
  double res[MAXH];
} hist;
static void monitor(void *ctx, int it, double rnorm, double rel) {
  (void)it, (void)rel;
  hist *h = (hist *)ctx;
  if (h->n < MAXH) h->res[h->n++] = rnorm;
}

enum { T_PCG = 0, T_FCG = 1, T_PCG1 = 2 };
static const char *const tname[] = {"pcg", "fcg", "pcg1"};

typedef struct {
  int n, p, kershaw; /* n^3 elements (kershaw: 6 x 4 x 4 when n == 0) */
  const char *pc;    /* YAML options */
  int type, no_fuse;
  double tol;
  int max_it;
  const char *backend;
  int expect_err;
  double rhs_nan; /* nonzero: one NaN in f */
  int rhs_zero;
} spec;

typedef struct {
  hx_pcg_result r;
  hist h;
  double err_l2;
  double true_rel; /* ||b - A x|| / ||b|| after the solve */
  int64_t applies; /* preconditioner applies */
  int64_t ng;
  double *x; /* G-vector solution (host) */
  int err;
} outcome;


static int run(const spec *s, outcome *o) {
  memset(o, 0, sizeof *o);
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  if (s->kershaw) {
    mo.nx = s->n ? s->n : 6, mo.ny = mo.nz = s->n ? s->n : 4;
    mo.kershaw_eps = 0.3;
  } else {
    mo.nx = mo.ny = mo.nz = s->n;
    mo.deform = 1;
  }
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_backend_create(s->backend ? s->backend : g_backend, &b));
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = s->p;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &dopt, &d));
  hx_op op = hx_disc_op(d);
  hx_pc pc;
  HX_TCALL(hx_test_pc_create(d, s->pc, "t540", &pc));

  const int64_t nl = hx_disc_num_l(d), ng = hx_op_size(op);
  double *hf = malloc(sizeof(double) * nl), *hg = malloc(sizeof(double) * nl);
  hx_field f = {hx_test_f_exp, NULL, NULL}, ex = {hx_test_u_exp, NULL, NULL}; /* -lap u = f */
  HX_TCALL(hx_disc_eval(d, f, hf));
  HX_TCALL(hx_disc_eval(d, ex, hg));
  if (s->rhs_zero)
    for (int64_t i = 0; i < nl; i++) hf[i] = hg[i] = 0.0;
  if (s->rhs_nan && nl > 40) hf[37] = NAN; /* an interior node of element 0 at p >= 3 */
  double *db, *dg, *dx, *dw;
  const size_t gb = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&db));
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dg));
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dx));
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dw));
  HX_TCALL(hx_disc_rhs(d, hf, hg, NULL, db, dg));
  HX_TCALL(hx_mem_zero(b, dx, gb));
  HX_TCALL(hx_pc_setup(pc));

  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = s->tol > 0 ? s->tol : 1e-10;
  po.max_iterations = s->max_it > 0 ? s->max_it : 3000;
  po.flexible = s->type == T_FCG;
  po.single_reduction = s->type == T_PCG1;
  po.no_fuse = s->no_fuse;
  po.monitor = monitor, po.monitor_ctx = &o->h;
  if (s->expect_err) {
    o->err = hx_pcg_solve(op, pc, db, dx, &po, &o->r);
    if (o->err) snprintf(g_msg, sizeof g_msg, "%s", hx_error_message());
    hx_error_clear();
  } else {
    HX_TCALL(hx_pcg_solve(op, pc, db, dx, &po, &o->r));
    /* the true residual b - A x (the iteration's r is a recurrence) */
    double bb, rr;
    HX_TCALL(hx_op_apply(op, dx, dw, NULL));
    HX_TCALL(hx_array_axpby(b, ng, dw, 1.0, db, -1.0)); /* w = b - A x */
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dw, dw, &rr));
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), db, db, &bb));
    o->true_rel = bb > 0 ? sqrt(rr / bb) : sqrt(rr);
    o->ng = ng;
    o->x = malloc(sizeof(double) * (size_t)(ng > 0 ? ng : 1));
    HX_TCALL(hx_mem_to_host(b, o->x, dx, sizeof(double) * (size_t)ng));
    /* the error of u = x + g */
    double *hl = malloc(sizeof(double) * nl);
    HX_TCALL(hx_array_axpby(b, ng, dx, 1.0, dg, 1.0));
    HX_TCALL(hx_op_to_l_host(op, dx, hl));
    double emax;
    if (!s->rhs_nan && !s->rhs_zero) HX_TCALL(hx_disc_error(d, hl, ex, &o->err_l2, &emax));
    free(hl);
  }
  hx_pc_stats st;
  hx_pc_get_stats(pc, &st);
  o->applies = st.applies;
  hx_mem_free(b, (void **)&db), hx_mem_free(b, (void **)&dg), hx_mem_free(b, (void **)&dx);
  hx_mem_free(b, (void **)&dw);
  free(hf), free(hg);
  HX_TCALL(hx_test_release(&pc, &d, &m, &b));
  return 0;
}

static void done(outcome *o) {
  free(o->x);
  o->x = NULL;
}

/* largest |a_i - b_i| / max(|b_i|, floor * |b_0|) over the common rows */
static double hist_diff(const hist *a, const hist *b, double floor_) {
  double worst = 0.0;
  const int n = a->n < b->n ? a->n : b->n;
  for (int i = 0; i < n; i++) {
    const double scale = fmax(fabs(b->res[i]), floor_ * fabs(b->res[0]));
    const double d = fabs(a->res[i] - b->res[i]) / (scale > 0 ? scale : 1.0);
    if (d > worst) worst = d;
  }
  return worst;
}

static double max_abs_diff(const outcome *a, const outcome *b, double *scale) {
  double d = 0.0, m = 0.0;
  for (int64_t i = 0; i < a->ng; i++) d = fmax(d, fabs(a->x[i] - b->x[i])), m = fmax(m, fabs(b->x[i]));
  double g[2] = {d, m}, gg[2];
  MPI_Allreduce(g, gg, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  *scale = gg[1];
  return gg[0];
}

/* ------------------------------------------------------------ fused */
static int mode_fused(void) {
  const int cpu = !strcmp(g_backend, "cpu");
  for (int t = 0; t < 3; t++) {
    /* cpu: the Kershaw mesh, where any rounding difference grows to ~10% of
     * the late residuals (docs/regression.md), so bit-identity is a sharp
     * test; cuda: a deformed box, where it stays near its size */
    spec s = {.n = cpu ? 0 : 3, .p = cpu ? 3 : 5, .kershaw = cpu, .pc = "{type: jacobi}", .type = t, .tol = 1e-8};
    static outcome f, u;
    HX_TCALL(run(&s, &f));
    s.no_fuse = 1;
    HX_TCALL(run(&s, &u));
    HX_ASSERT(f.r.fused_pc_update == 1 && u.r.fused_pc_update == 0, "%s: fused flags %d %d", tname[t],
              f.r.fused_pc_update, u.r.fused_pc_update);
    HX_ASSERT(f.r.reason > 0 && u.r.reason > 0 && f.r.iterations == u.r.iterations,
              "%s: fused %d (%s), separate %d (%s) iterations", tname[t], f.r.iterations,
              hx_reason_name(f.r.reason), u.r.iterations, hx_reason_name(u.r.reason));
    /* every residual of the history: bit for bit on cpu (same lanes, same
     * order); on cuda the kernels keep the same per-thread order too, but
     * nvcc may contract differently in two kernels: within 1e-10 of
     * max(residual, 1e-4 r0) (cross-rank rounding on such a box stays below
     * 1e-9, docs/regression.md), solutions within 1e-10 */
    const double hd = hist_diff(&f.h, &u.h, cpu ? 0.0 : 1e-4);
    HX_ASSERT(f.h.n == u.h.n && (cpu ? hd == 0.0 : hd <= 1e-10), "%s: histories differ by %.3e (%d, %d rows)",
              tname[t], hd, f.h.n, u.h.n);
    double sc;
    const double xd = max_abs_diff(&f, &u, &sc);
    HX_ASSERT(cpu ? xd == 0.0 : xd <= 1e-10 * sc, "%s: solutions differ by %.3e (max %.3e)", tname[t], xd,
              sc);
    /* passes per iteration: Jacobi fused saves 3 (pcg: 11 -> 8 + 3; fcg
     * 13 -> 11, z.w read in the same pass; pcg1 19 -> 16) */
    const int want_f = t == T_PCG1 ? 16 : 11, want_u = t == T_PCG ? 14 : t == T_FCG ? 16 : 19;
    HX_ASSERT(f.r.vector_passes_per_iteration == want_f && u.r.vector_passes_per_iteration == want_u,
              "%s: passes fused %d (want %d), separate %d (want %d)", tname[t],
              f.r.vector_passes_per_iteration, want_f, u.r.vector_passes_per_iteration, want_u);
    /* the fused update counts as an apply: as many as the separate path */
    HX_ASSERT(f.applies == u.applies && f.applies == f.r.iterations + 1,
              "%s: applies fused %lld separate %lld", tname[t], (long long)f.applies, (long long)u.applies);
    if (g_rank == 0)
      printf("fused %-4s: %d iterations, history difference %.3e, passes %d (separate %d)\n", tname[t],
             f.r.iterations, hd, f.r.vector_passes_per_iteration, u.r.vector_passes_per_iteration);
    done(&f), done(&u);
  }
  return 0;
}

/* ------------------------------------------------------------ pcg1 */
static int mode_pcg1(void) {
  static const struct {
    const char *pc;
    int kershaw, n, p;
  } cases[] = {{"{type: jacobi}", 1, 0, 3},
               {"{type: none}", 0, 3, 4},
               {"{type: jacobi}", 0, 3, 7},
               {"{type: asm}", 1, 0, 3},
               {"{type: pmg}", 1, 0, 5}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    spec s = {.n = cases[c].n, .p = cases[c].p, .kershaw = cases[c].kershaw, .pc = cases[c].pc, .tol = 1e-10};
    static outcome a, o1;
    s.type = T_PCG;
    HX_TCALL(run(&s, &a));
    s.type = T_PCG1;
    HX_TCALL(run(&s, &o1));
    const char *mesh = cases[c].kershaw ? "kershaw 6x4x4" : "deformed 3^3";
    HX_ASSERT(a.r.reason > 0 && o1.r.reason > 0, "%s p=%d %s: pcg %s, pcg1 %s", mesh, cases[c].p, cases[c].pc,
              hx_reason_name(a.r.reason), hx_reason_name(o1.r.reason));
    HX_ASSERT(abs(a.r.iterations - o1.r.iterations) <= 2, "%s p=%d %s: pcg %d, pcg1 %d iterations", mesh,
              cases[c].p, cases[c].pc, a.r.iterations, o1.r.iterations);
    HX_ASSERT(o1.r.allreduces_per_iteration == 1 && a.r.allreduces_per_iteration == 2, "allreduces %d / %d",
              o1.r.allreduces_per_iteration, a.r.allreduces_per_iteration);
    /* no residual gap: the true residual of both meets the tolerance
     * (within 10 tol: the recurrence may lag by rounding, not by more) */
    HX_ASSERT(o1.true_rel <= 10 * s.tol && a.true_rel <= 10 * s.tol,
              "%s %s: true residuals pcg1 %.3e, pcg %.3e (tol %.0e)", mesh, cases[c].pc, o1.true_rel,
              a.true_rel, s.tol);
    /* the same solution: both are within the algebraic error of the exact
     * discrete one, ||x - x*|| <= cond(A) tol ||x*||; cond(A) of these
     * problems is below 1e5, so 1e-5 of max|x| bounds the difference */
    double sc;
    const double xd = max_abs_diff(&o1, &a, &sc);
    HX_ASSERT(xd <= 1e-5 * sc, "%s %s: solutions differ by %.3e (max %.3e)", mesh, cases[c].pc, xd, sc);
    /* and the same error norms up to that difference: | ||e1|| - ||e|| | <=
     * ||I(x1 - x)||_L2 <= Lambda^3 |Omega|^(1/2) max|x1 - x|, with Lambda < 2.1
     * the 1D Lebesgue constant of GLL interpolation up to p = 7 (hx_disc_error
     * interpolates to p + 3 points) and |Omega| < 1.1 on these meshes: 10 xd.
     * (A relative bound fails where the algebraic error of tol 1e-10 is as
     * large as the discretisation error: deformed 3^3 at p = 7, e ~ 1e-10.) */
    HX_ASSERT(fabs(o1.err_l2 - a.err_l2) <= 10.0 * xd + 1e-15, "%s %s: L2 errors %.9e vs %.9e (|x1 - x| %.3e)",
              mesh, cases[c].pc, o1.err_l2, a.err_l2, xd);
    if (g_rank == 0)
      printf(
          "%s p=%d %-16s pcg %3d, pcg1 %3d iterations; true residual pcg %.2e pcg1 %.2e; |x1 - x| %.2e of "
          "%.2e; L2 errors %.6e %.6e\n",
          mesh, cases[c].p, cases[c].pc, a.r.iterations, o1.r.iterations, a.true_rel, o1.true_rel, xd, sc,
          a.err_l2, o1.err_l2);
    done(&a), done(&o1);
  }
  return 0;
}

/* ------------------------------------------------------------ breakdown */
static int mode_breakdown(void) {
  static outcome o;
  spec s = {.n = 2, .p = 3, .pc = "{type: jacobi}", .type = T_PCG1, .rhs_nan = 1};
  HX_TCALL(run(&s, &o));
  HX_ASSERT(o.r.reason == HX_DIVERGED_NAN && o.h.n >= 1, "NaN: %s, %d rows", hx_reason_name(o.r.reason),
            o.h.n);
  done(&o);
  s.rhs_nan = 0, s.max_it = 3;
  HX_TCALL(run(&s, &o));
  HX_ASSERT(o.r.reason == HX_DIVERGED_MAX_IT && o.r.iterations == 3 && o.h.n == 4 && o.h.res[3] < o.h.res[0],
            "limit: %s after %d iterations, %d rows", hx_reason_name(o.r.reason), o.r.iterations, o.h.n);
  done(&o);
  s.max_it = 0, s.rhs_zero = 1;
  HX_TCALL(run(&s, &o));
  HX_ASSERT(o.r.reason > 0 && o.r.iterations == 0, "b = 0: %s in %d iterations", hx_reason_name(o.r.reason),
            o.r.iterations);
  done(&o);
  /* a non-symmetric preconditioner: refused, naming fcg */
  spec ns = {.n = 0,
             .kershaw = 1,
             .p = 3,
             .pc = "{type: pmg, smoother: {type: cheby-ras}}",
             .type = T_PCG1,
             .expect_err = 1};
  HX_TCALL(run(&ns, &o));
  HX_ASSERT(o.err == HX_ERR_INPUT && strstr(g_msg, "fcg") && strstr(g_msg, "pcg1"),
            "cheby-ras under pcg1: expected an input error naming fcg, got %d: %s", o.err, g_msg);

  /* indefinite preconditioner and flexible + single_reduction, through hx_pcg_solve */
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_test_box_mesh(2, 0.0, g_backend, &b, &m));
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = 3;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &dopt, &d));
  hxt_indef t;
  HX_TCALL(hxt_indef_create(d, &t));
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.single_reduction = 1;
  hx_pcg_result pr;
  HX_TCALL(hx_pcg_solve(hx_disc_op(d), t.neg, t.db, t.dx, &po, &pr));
  HX_ASSERT(pr.reason == HX_DIVERGED_INDEFINITE_PC && pr.iterations == 0, "indefinite pc: %s after %d",
            hx_reason_name(pr.reason), pr.iterations);
  po.flexible = 1;
  const int e = hx_pcg_solve(hx_disc_op(d), t.neg, t.db, t.dx, &po, &pr);
  HX_ASSERT(e == HX_ERR_ARG && strstr(hx_error_message(), "single_reduction"), "flexible + pcg1: %d %s", e,
            hx_error_message());
  hx_error_clear();
  HX_TCALL(hxt_indef_destroy(&t));
  HX_TCALL(hx_test_release(NULL, &d, &m, &b));
  return 0;
}

/* ------------------------------------------------------------ twin */
static int mode_twin(void) {
  if (!strcmp(g_backend, "cpu")) {
    if (g_rank == 0) printf("SKIP: the twin mode compares a device backend with cpu (--backend cuda)\n");
    return HX_TEST_SKIP;
  }
  static const struct {
    const char *pc;
    int type;
  } cases[] = {{"{type: jacobi}", T_PCG},
               {"{type: jacobi}", T_FCG},
               {"{type: jacobi}", T_PCG1},
               {"{type: asm}", T_PCG1},
               {"{type: none}", T_PCG1}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    spec s = {.n = 3, .p = 5, .pc = cases[c].pc, .type = cases[c].type, .tol = 1e-10};
    static outcome dev, cpu;
    s.backend = g_backend;
    HX_TCALL(run(&s, &dev));
    s.backend = "cpu";
    HX_TCALL(run(&s, &cpu));
    HX_ASSERT(dev.r.reason > 0 && abs(dev.r.iterations - cpu.r.iterations) <= 1,
              "%s %s: %s %d, cpu %d iterations", tname[cases[c].type], cases[c].pc, g_backend,
              dev.r.iterations, cpu.r.iterations);
    HX_ASSERT(dev.r.fused_pc_update == cpu.r.fused_pc_update, "fused on one backend only");
    /* reductions differ in the last bits between the backends (docs/developer.md);
     * on a deformed box the curves then agree to ~1e-9 (docs/regression.md) */
    /* without a preconditioner (~100 iterations at p = 5) CG amplifies those
     * last-bit differences geometrically: measured under the CUDA emulator
     * (docs/gpu-verification.md), 4e-16 at iteration 0, 1e-12 at 30, 4.4e-6
     * where the residual falls to 1e-4 of the first (the floor below), while
     * the solutions still agree to 1e-9 (checked below) */
    const double hd = hist_diff(&dev.h, &cpu.h, 1e-4);
    const double htol = strstr(cases[c].pc, "none") ? 1e-4 : 1e-6;
    HX_ASSERT(hd <= htol, "%s %s: histories differ by %.3e > %.0e", tname[cases[c].type], cases[c].pc, hd, htol);
    double sc;
    const double xd = max_abs_diff(&dev, &cpu, &sc);
    HX_ASSERT(xd <= 1e-9 * sc, "%s %s: solutions differ by %.3e of %.3e", tname[cases[c].type], cases[c].pc,
              xd, sc);
    done(&dev), done(&cpu);
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  g_backend = hx_test_backend_arg(argc, argv);
  static const hx_test_mode modes[] = {
      {"fused", mode_fused}, {"pcg1", mode_pcg1}, {"breakdown", mode_breakdown}, {"twin", mode_twin}};
  return hx_test_run_modes(argc, argv, "t540-cg", modes, (int)(sizeof modes / sizeof modes[0]));
}
