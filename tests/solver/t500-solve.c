/* End-to-end solves through the discretization wiring (mesh -> gs -> ax ->
 * op -> PCG), checked against exact solutions:
 *   sym       operator symmetric and positive definite on random vectors,
 *             A 1 = 0 for pure Neumann Poisson
 *   poly      polynomial solutions of degree <= p reproduced on affine meshes
 *   hconv     L2 error rate within 10% of p+1 for p = 1..4
 *   pconv     exponential decay of the error for p = 2..10, deformed mesh
 *   ranks     (4 ranks) same iterations, histories within 1e-10 on 1..4
 *             ranks, RCB vs METIS, overlapped vs blocking exchange
 *   kershaw   Kershaw eps = 0.3 converges with the expected error
 *   helmholtz lambda > 0 on a deformed mesh
 *   breakdown NaN, indefinite preconditioner, iteration limit, b = 0: reasons
 *   neumann   a Neumann boundary load (kappa du/dn = g) on a deformed mesh
 *   split     split geometry (hex8 and hex27): the solve's final residual is
 *             the FP64 operator's (checked with an independent FP64 disc) and meets
 *             the tolerance with PCG (residual replacement) and pcg1 (the
 *             correction solve); PCG on the split operator alone misses it;
 *             an unattainable tolerance stops with a reason; at the
 *             iteration limit the reported residual is the FP64 one
 * Usage: t500-solve MODE [--backend cpu|cuda] */
#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_indef.h"
#include "hx_test_pc.h"

static int g_rank = 0;
static const char *g_backend = "cpu";

typedef struct {
  double lambda, kappa;
  int deg; /* polynomial degree (poly mode) */
} prob;

static double u_sin(const void *c, double x, double y, double z) {
  (void)c;
  return sin(M_PI * x) * sin(M_PI * y) * sin(M_PI * z);
}
static double f_sin(const void *c, double x, double y, double z) {
  const prob *p = (const prob *)c;
  return (3 * M_PI * M_PI * p->kappa + p->lambda) * u_sin(NULL, x, y, z);
}
/* a polynomial of degree deg in each variable (Q_deg) */
static double u_poly(const void *c, double x, double y, double z) {
  const int d = ((const prob *)c)->deg;
  return pow(x, d) + 0.5 * pow(y, d) * z + x * y * pow(z, d - 1) - 0.25 * pow(x * y * z, d > 1 ? d - 1 : 1) + 1.0;
}
/* -lap u_poly */
static double f_poly(const void *c, double x, double y, double z) {
  const int d = ((const prob *)c)->deg;
  double s = 0;
  if (d >= 2) s += d * (d - 1) * pow(x, d - 2) + 0.5 * d * (d - 1) * pow(y, d - 2) * z;
  if (d - 1 >= 2) s += x * y * (d - 1) * (d - 2) * pow(z, d - 3);
  const int q = d > 1 ? d - 1 : 1;
  if (q >= 2) {
    const double c2 = 0.25 * q * (q - 1);
    s -= c2 * (pow(x, q - 2) * pow(y * z, q) + pow(y, q - 2) * pow(x * z, q) + pow(z, q - 2) * pow(x * y, q));
  }
  return -s;
}

typedef struct {
  int n;
  double res[1024];
  int it[1024];
} hist;
static void monitor(void *ctx, int it, double rnorm, double rel) {
  (void)rel;
  hist *h = (hist *)ctx;
  if (h->n < 1024) h->it[h->n] = it, h->res[h->n++] = rnorm;
}

typedef struct {
  int nx, ny, nz, deform, p, part, overlap;
  double eps, ext[3][2], lambda, kappa, tol, amp;
  int poly_deg, neumann;
} setup;

static void setup_default(setup *s) {
  memset(s, 0, sizeof *s);
  s->nx = s->ny = s->nz = 2;
  s->p = 3;
  s->eps = 1.0;
  for (int d = 0; d < 3; d++) s->ext[d][0] = 0, s->ext[d][1] = 1;
  s->kappa = 1.0;
  s->tol = 1e-10;
  s->overlap = 1;
  s->amp = 0.05;
}

/* hx_solve with a preconditioner by name ("jacobi" or "none") */
static int solve_pc(hx_disc d, const double *hf, const double *hg, const double *hbn, hx_field ex, const char *pc_name,
                    const hx_pcg_opts *po, const double *u0, double *u, hx_solve_result *r) {
  hx_pc pc = NULL;
  if (!strcmp(pc_name, "none")) HX_TCALL(hx_pc_create_identity(hx_disc_op(d), &pc));
  else HX_TCALL(hx_pc_create_jacobi(hx_disc_op(d), &pc));
  HX_TCALL(hx_solve(d, pc, hf, hg, hbn, ex, po, u0, u, r));
  HX_TCALL(hx_pc_destroy(&pc));
  return 0;
}

static int solve(MPI_Comm comm, const setup *s, hx_solve_result *r, hist *h) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = s->nx, mo.ny = s->ny, mo.nz = s->nz;
  memcpy(mo.extent, s->ext, sizeof mo.extent);
  mo.kershaw_eps = s->eps;
  mo.deform = s->deform;
  mo.deform_amplitude = s->amp;
  mo.partitioner = s->part ? HX_PART_METIS : HX_PART_RCB;
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_mesh_create_box(comm, &mo, &m));
  HX_TCALL(hx_backend_create(g_backend, &b));
  const double kap = s->kappa, lam = s->lambda;
  hx_disc_opts o = {.p = s->p, .geo = HX_GEO_PRECOMPUTED, .overlap = s->overlap, .kappa = &kap, .lambda = &lam, .dirichlet_tag = NULL};
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  prob pr = {s->lambda, s->kappa, s->poly_deg};
  hx_field f = {s->poly_deg ? f_poly : f_sin, &pr, NULL}, ex = {s->poly_deg ? u_poly : u_sin, &pr, NULL};
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = s->tol;
  po.max_iterations = 2000;
  if (h) h->n = 0, po.monitor = monitor, po.monitor_ctx = h;
  double *hf = malloc(sizeof(double) * hx_disc_num_l(d)), *hg = malloc(sizeof(double) * hx_disc_num_l(d));
  HX_TCALL(hx_disc_eval(d, f, hf));
  /* Dirichlet data only where it is read, so averaging bugs would show */
  HX_TCALL(hx_disc_eval(d, ex, hg));
  for (int64_t i = 0; i < hx_disc_num_l(d); i++)
    if (!hx_disc_dirichlet_l(d)[i]) hg[i] = 1e30;
  HX_TCALL(solve_pc(d, hf, hg, NULL, ex, "jacobi", &po, NULL, NULL, r));
  free(hf), free(hg);
  HX_TCALL(hx_test_release(NULL, &d, &m, &b));
  return 0;
}

/* x.Ay vs y.Ax, x.Ax > 0 on random masked vectors; A 1 = 0 (Neumann) */
static int mode_sym(void) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = 3, mo.ny = 2, mo.nz = 2, mo.deform = 1;
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  HX_TCALL(hx_backend_create(g_backend, &b));
  for (int neumann = 0; neumann < 2; neumann++) {
    const int p = 4;
    const double kap = 1.3, lam = 0.0;
    int notag[6] = {0, 0, 0, 0, 0, 0};
    hx_disc_opts o = {.p = p, .geo = HX_GEO_PRECOMPUTED, .overlap = 1, .kappa = &kap, .lambda = &lam, .dirichlet_tag = neumann ? notag : NULL};
    hx_disc d;
    HX_TCALL(hx_disc_create(m, b, &o, &d));
    const int64_t ng = hx_op_size(hx_disc_op(d));
    const int64_t *gid = hx_gs_global_ids(hx_disc_gs(d));
    double *hx = malloc(sizeof(double) * ng), *hy = malloc(sizeof(double) * ng);
    /* values from the global id: consistent across ranks */
    for (int64_t i = 0; i < ng; i++) {
      hx_test_rng r = {(uint64_t)gid[i] * 2654435761u + 7};
      hx[i] = hx_test_rand(&r), hy[i] = hx_test_rand(&r);
    }
    double *dx, *dy, *dax, *day;
    size_t bytes = sizeof(double) * ng;
    HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dx));
    HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dy));
    HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dax));
    HX_TCALL(hx_mem_alloc(b, bytes, (void **)&day));
    HX_TCALL(hx_mem_to_device(b, dx, hx, bytes));
    HX_TCALL(hx_mem_to_device(b, dy, hy, bytes));
    HX_TCALL(hx_gs_apply_mask(hx_disc_gs(d), dx));
    HX_TCALL(hx_gs_apply_mask(hx_disc_gs(d), dy));
    double xax, yay, xay, yax, xx, yy;
    HX_TCALL(hx_op_apply(hx_disc_op(d), dx, dax, &xax));
    HX_TCALL(hx_op_apply(hx_disc_op(d), dy, day, &yay));
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dx, day, &xay));
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dy, dax, &yax));
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dx, dx, &xx));
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dy, dy, &yy));
    double xax2;
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dx, dax, &xax2));
    /* |A| <= max row sum; estimate by |Ax|/|x| lower bound times a margin:
     * use the Rayleigh quotients as the scale */
    double ax2;
    HX_TCALL(hx_gs_dot(hx_disc_gs(d), dax, dax, &ax2));
    const double scale = sqrt(xx) * sqrt(yy) * sqrt(ax2 / xx);
    HX_ASSERT(fabs(xay - yax) <= 300 * 2.2e-16 * scale * 10, "symmetry |x.Ay - y.Ax| = %.3e, scale %.3e",
              fabs(xay - yax), scale);
    HX_ASSERT(xax > 0 && yay > 0, "positive: x.Ax = %g, y.Ay = %g", xax, yay);
    HX_ASSERT(fabs(xax - xax2) <= 1e-12 * fabs(xax), "fused x.Ax %.17g equals separate dot %.17g", xax, xax2);
    if (neumann) {
      for (int64_t i = 0; i < ng; i++) hx[i] = 1.0;
      HX_TCALL(hx_mem_to_device(b, dx, hx, bytes));
      double one_a_one, a1norm2;
      HX_TCALL(hx_op_apply(hx_disc_op(d), dx, dax, &one_a_one));
      HX_TCALL(hx_gs_dot(hx_disc_gs(d), dax, dax, &a1norm2));
      HX_ASSERT(sqrt(a1norm2) <= 1e-12 * sqrt(ax2 / xx) * sqrt((double)hx_gs_num_global(hx_disc_gs(d))),
                "Neumann A 1 = 0: |A1| = %.3e", sqrt(a1norm2));
    }
    hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dy), hx_mem_free(b, (void **)&dax);
    hx_mem_free(b, (void **)&day);
    free(hx), free(hy);
    HX_TCALL(hx_disc_destroy(&d));
  }
  HX_TCALL(hx_backend_destroy(&b));
  HX_TCALL(hx_mesh_destroy(&m));
  return 0;
}

static int mode_poly(void) {
  for (int p = 1; p <= 6; p++) {
    setup s;
    setup_default(&s);
    s.nx = 3, s.ny = 2, s.nz = 2, s.p = p, s.poly_deg = p, s.tol = 1e-13;
    s.ext[0][0] = -0.5, s.ext[0][1] = 1.5, s.ext[1][1] = 0.7, s.ext[2][0] = 0.2, s.ext[2][1] = 1.1;
    hx_solve_result r;
    if (solve(MPI_COMM_WORLD, &s, &r, NULL)) return 1;
    HX_ASSERT(r.pcg.reason > 0, "p=%d converged (%s)", p, hx_reason_name(r.pcg.reason));
    /* exact up to the solver tolerance times the conditioning */
    HX_ASSERT(r.err_max < 1e-9, "p=%d polynomial of degree %d reproduced: max error %.3e", p, p, r.err_max);
    if (g_rank == 0 && getenv("HX_TEST_VERBOSE")) printf("poly p=%d it=%d err=%.3e\n", p, r.pcg.iterations, r.err_max);
  }
  return 0;
}

static int mode_hconv(void) {
  const int nlev[5][3] = {{0}, {4, 8, 16}, {2, 4, 8}, {2, 4, 8}, {2, 4, 6}};
  for (int p = 1; p <= 4; p++) {
    double err[3];
    for (int l = 0; l < 3; l++) {
      setup s;
      setup_default(&s);
      s.nx = s.ny = s.nz = nlev[p][l], s.p = p, s.tol = 1e-12;
      hx_solve_result r;
      if (solve(MPI_COMM_WORLD, &s, &r, NULL)) return 1;
      err[l] = r.err_l2;
    }
    const double rate = log(err[1] / err[2]) / log((double)nlev[p][2] / nlev[p][1]);
    if (g_rank == 0 && getenv("HX_TEST_VERBOSE"))
      printf("hconv p=%d errors %.3e %.3e %.3e rate %.3f\n", p, err[0], err[1], err[2], rate);
    HX_ASSERT(fabs(rate - (p + 1)) <= 0.1 * (p + 1), "p=%d L2 rate %.3f, expected %d +- 10%%", p, rate, p + 1);
  }
  return 0;
}

static int mode_pconv(void) {
  double err[11];
  for (int p = 2; p <= 10; p++) {
    setup s;
    setup_default(&s);
    s.nx = s.ny = s.nz = 3, s.p = p, s.deform = 1, s.tol = 1e-13;
    hx_solve_result r;
    if (solve(MPI_COMM_WORLD, &s, &r, NULL)) return 1;
    err[p] = r.err_l2;
    if (g_rank == 0 && getenv("HX_TEST_VERBOSE")) printf("pconv p=%d it=%d err=%.3e\n", p, r.pcg.iterations, err[p]);
  }
  /* exponential: least-squares slope of log(err) vs p well below 0, and
   * every two orders gain at least a factor 10 */
  double sp = 0, sl = 0, spp = 0, spl = 0;
  for (int p = 2; p <= 10; p++) sp += p, sl += log(err[p]), spp += p * p, spl += p * log(err[p]);
  const double slope = (9 * spl - sp * sl) / (9 * spp - sp * sp);
  HX_ASSERT(slope < -1.5, "log-error slope %.3f per order (exponential decay expected)", slope);
  for (int p = 4; p <= 10; p++) HX_ASSERT(err[p] < err[p - 2] / 10, "p=%d error %.3e vs p=%d %.3e", p, err[p], p - 2, err[p - 2]);
  return 0;
}

static int mode_ranks(void) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (g_rank == 0) printf("SKIP: ranks mode needs exactly 4 ranks\n");
    return HX_TEST_SKIP;
  }
  setup s;
  setup_default(&s);
  s.nx = 4, s.ny = 3, s.nz = 3, s.p = 3, s.deform = 1, s.tol = 1e-9;
  static hist ref, h;
  hx_solve_result r0, r;
  /* reference: 1 rank, RCB, blocking */
  struct { int np, part, overlap; } cfg[] = {{1, 0, 0}, {2, 0, 1}, {3, 0, 1}, {4, 0, 1}, {4, 1, 1}, {3, 1, 0}, {2, 0, 0}};
  for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank < cfg[c].np ? 0 : MPI_UNDEFINED, g_rank, &comm);
    s.part = cfg[c].part, s.overlap = cfg[c].overlap;
    if (comm != MPI_COMM_NULL) {
      if (solve(comm, &s, c ? &r : &r0, c ? &h : &ref)) return 1;
      MPI_Comm_free(&comm);
    }
    if (c == 0 || g_rank != 0) continue;
    HX_ASSERT(r.pcg.iterations == r0.pcg.iterations, "np=%d %s overlap=%d: %d iterations vs %d on 1 rank",
              cfg[c].np, cfg[c].part ? "metis" : "rcb", cfg[c].overlap, r.pcg.iterations, r0.pcg.iterations);
    /* relative to the initial residual: late residuals are ~1e-9 of r0 and
     * carry rounding noise of order eps |r0| whatever the partition */
    double worst = 0, worst_local = 0;
    for (int i = 0; i < h.n && i < ref.n; i++) {
      worst = fmax(worst, fabs(h.res[i] - ref.res[i]) / ref.res[0]);
      worst_local = fmax(worst_local, fabs(h.res[i] - ref.res[i]) / ref.res[i]);
    }
    if (getenv("HX_TEST_VERBOSE"))
      printf("np=%d part=%d overlap=%d: it %d, max diff/r0 %.3e, max diff/r_i %.3e\n", cfg[c].np, cfg[c].part,
             cfg[c].overlap, r.pcg.iterations, worst, worst_local);
    HX_ASSERT(worst <= 1e-10, "np=%d %s: residual history differs by %.3e relative", cfg[c].np,
              cfg[c].part ? "metis" : "rcb", worst);
    HX_ASSERT(fabs(r.err_l2 - r0.err_l2) <= 1e-10 * r0.err_l2, "np=%d error %.17g vs %.17g", cfg[c].np, r.err_l2,
              r0.err_l2);
  }
  return 0;
}

static int mode_kershaw(void) {
  /* Kershaw eps = 0.3 (6^3 elements): converges, with more iterations than
   * the uniform box, and the error decays with p (exponentially: a factor
   * > 10 from p = 3 to p = 5, and < 1e-3 at p = 5). The distorted elements
   * make the error much larger than on the uniform box at the same order. */
  setup s;
  setup_default(&s);
  s.nx = 6, s.ny = 6, s.nz = 6, s.p = 3, s.tol = 1e-10;
  hx_solve_result ru, rk3, rk5;
  if (solve(MPI_COMM_WORLD, &s, &ru, NULL)) return 1;
  s.eps = 0.3;
  if (solve(MPI_COMM_WORLD, &s, &rk3, NULL)) return 1;
  s.p = 5;
  if (solve(MPI_COMM_WORLD, &s, &rk5, NULL)) return 1;
  if (g_rank == 0 && getenv("HX_TEST_VERBOSE"))
    printf("kershaw: uniform p=3 err %.3e it %d; eps=0.3 p=3 err %.3e it %d, p=5 err %.3e it %d\n", ru.err_l2,
           ru.pcg.iterations, rk3.err_l2, rk3.pcg.iterations, rk5.err_l2, rk5.pcg.iterations);
  HX_ASSERT(rk3.pcg.reason > 0 && rk5.pcg.reason > 0, "Kershaw converged");
  HX_ASSERT(rk5.err_l2 < rk3.err_l2 / 10 && rk5.err_l2 < 1e-3, "Kershaw errors p=3 %.3e p=5 %.3e", rk3.err_l2,
            rk5.err_l2);
  HX_ASSERT(rk3.pcg.iterations > 3 * ru.pcg.iterations, "Kershaw is harder: %d vs %d iterations",
            rk3.pcg.iterations, ru.pcg.iterations);
  return 0;
}

static int mode_helmholtz(void) {
  /* lambda > 0 on a deformed mesh: converges, error decreases with p */
  double e[2];
  for (int i = 0; i < 2; i++) {
    setup s;
    setup_default(&s);
    s.nx = s.ny = s.nz = 3, s.p = 3 + 2 * i, s.deform = 1, s.lambda = 25.0, s.kappa = 0.7, s.tol = 1e-12;
    hx_solve_result r;
    if (solve(MPI_COMM_WORLD, &s, &r, NULL)) return 1;
    HX_ASSERT(r.pcg.reason > 0, "Helmholtz converged");
    e[i] = r.err_l2;
  }
  HX_ASSERT(e[0] < 1e-3 && e[1] < e[0] / 20, "Helmholtz errors p=3 %.3e, p=5 %.3e", e[0], e[1]);
  return 0;
}

/* kappa du/dn on xmin (outward normal -x) of the sine solution, times scale */
static double flux_xmin(const void *c, double x, double y, double z) {
  (void)x;
  const double *k = (const double *)c; /* kappa, scale */
  return -k[0] * k[1] * M_PI * sin(M_PI * y) * sin(M_PI * z);
}

/* Neumann condition on xmin (Dirichlet elsewhere) on a deformed mesh: with
 * the right flux the error decays spectrally; with a 25% wrong flux it
 * stays O(1e-2) (so the boundary load is really used). */
static int mode_neumann(void) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = 3, mo.deform = 1;
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  HX_TCALL(hx_backend_create(g_backend, &b));
  const int xmin = hx_mesh_find_tag(m, "xmin");
  HX_ASSERT(xmin >= 0, "box has an xmin tag");
  double err[2][2];
  for (int wrong = 0; wrong < 2; wrong++)
    for (int i = 0; i < 2; i++) {
      const double kap = 2.0, lam = 1.0;
      int dtag[6];
      for (int t = 0; t < 6; t++) dtag[t] = t != xmin;
      hx_disc_opts o = {.p = 3 + 2 * i, .geo = HX_GEO_PRECOMPUTED, .overlap = 1, .kappa = &kap, .lambda = &lam, .dirichlet_tag = dtag};
      hx_disc d;
      HX_TCALL(hx_disc_create(m, b, &o, &d));
      prob pr = {lam, kap, 0};
      double kc[2] = {kap, wrong ? 1.25 : 1.0};
      hx_field f = {f_sin, &pr, NULL}, ex = {u_sin, &pr, NULL}, g = {flux_xmin, kc, NULL};
      double *hf = malloc(sizeof(double) * hx_disc_num_l(d)), *hg = malloc(sizeof(double) * hx_disc_num_l(d));
      double *hbn = calloc(hx_disc_num_l(d), sizeof(double));
      HX_TCALL(hx_disc_eval(d, f, hf));
      HX_TCALL(hx_disc_eval(d, ex, hg));
      HX_TCALL(hx_disc_neumann_load(d, xmin, g, hbn));
      hx_pcg_opts po;
      hx_pcg_opts_default(&po);
      po.rtol = 1e-12;
      hx_solve_result r;
      HX_TCALL(solve_pc(d, hf, hg, hbn, ex, "jacobi", &po, NULL, NULL, &r));
      err[wrong][i] = r.err_l2;
      free(hf), free(hg), free(hbn);
      HX_TCALL(hx_disc_destroy(&d));
    }
  if (g_rank == 0 && getenv("HX_TEST_VERBOSE"))
    printf("neumann: p=3 %.3e p=5 %.3e; wrong flux p=3 %.3e p=5 %.3e\n", err[0][0], err[0][1], err[1][0], err[1][1]);
  HX_ASSERT(err[0][1] < 1e-5 && err[0][1] < err[0][0] / 50, "Neumann errors p=3 %.3e p=5 %.3e", err[0][0],
            err[0][1]);
  HX_ASSERT(err[1][1] > 1e-3, "a wrong flux must show: error %.3e", err[1][1]);
  HX_TCALL(hx_backend_destroy(&b));
  HX_TCALL(hx_mesh_destroy(&m));
  return 0;
}

/* Breakdowns and limits stop with a reason, not an error, and keep the
 * history: NaN in the right-hand side, an indefinite preconditioner, the
 * iteration limit; a zero right-hand side converges at iteration 0. */
static int mode_breakdown(void) {
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_test_box_mesh(2, 0.0, g_backend, &b, &m));
  hx_disc_opts o = {.p = 3, .geo = HX_GEO_PRECOMPUTED, .overlap = 1, .kappa = NULL, .lambda = NULL, .dirichlet_tag = NULL};
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  double *hf = malloc(sizeof(double) * hx_disc_num_l(d));
  static hist h;
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.monitor = monitor, po.monitor_ctx = &h;
  hx_field none = {NULL, NULL, NULL};
  hx_solve_result r;
  /* NaN */
  /* an interior node of element 0 (a Dirichlet node would be masked away) */
  for (int64_t i = 0; i < hx_disc_num_l(d); i++) hf[i] = i == 2 + 4 * (2 + 4 * 2) ? NAN : 1.0;
  h.n = 0;
  HX_TCALL(solve_pc(d, hf, NULL, NULL, none, "jacobi", &po, NULL, NULL, &r));
  HX_ASSERT(r.pcg.reason == HX_DIVERGED_NAN && h.n >= 1, "NaN: reason %s, %d history rows",
            hx_reason_name(r.pcg.reason), h.n);
  /* iteration limit */
  for (int64_t i = 0; i < hx_disc_num_l(d); i++) hf[i] = 1.0;
  h.n = 0;
  po.max_iterations = 3;
  HX_TCALL(solve_pc(d, hf, NULL, NULL, none, "jacobi", &po, NULL, NULL, &r));
  HX_ASSERT(r.pcg.reason == HX_DIVERGED_MAX_IT && r.pcg.iterations == 3 && h.n == 4,
            "max iterations: %s after %d iterations, %d rows", hx_reason_name(r.pcg.reason), r.pcg.iterations, h.n);
  HX_ASSERT(h.res[3] < h.res[0], "the residual decreased before the limit");
  /* zero right-hand side: converged at iteration 0 */
  for (int64_t i = 0; i < hx_disc_num_l(d); i++) hf[i] = 0.0;
  h.n = 0;
  po.max_iterations = 100;
  HX_TCALL(solve_pc(d, hf, NULL, NULL, none, "jacobi", &po, NULL, NULL, &r));
  HX_ASSERT(r.pcg.reason > 0 && r.pcg.iterations == 0, "b = 0: %s in %d iterations", hx_reason_name(r.pcg.reason),
            r.pcg.iterations);
  /* indefinite preconditioner, straight through hx_pcg_solve */
  hxt_indef t;
  HX_TCALL(hxt_indef_create(d, &t));
  hx_pcg_result pr;
  h.n = 0;
  HX_TCALL(hx_pcg_solve(hx_disc_op(d), t.neg, t.db, t.dx, &po, &pr));
  HX_TCALL(hxt_indef_destroy(&t));
  HX_ASSERT(pr.reason == HX_DIVERGED_INDEFINITE_PC && h.n == 1, "indefinite pc: %s, %d rows", hx_reason_name(pr.reason),
            h.n);
  free(hf);
  HX_TCALL(hx_test_release(NULL, &d, &m, &b));
  return 0;
}

/* ||b64 - A64 x||_2 with x the free part of the host L-vector u, on the
 * FP64 disc d64 (b64 its right-hand side, lifting from the same data) */
static int fp64_residual(hx_disc d64, const double *hf, const double *hg, const double *u, double *rnorm,
                         double *bnorm) {
  hx_op op = hx_disc_op(d64);
  hx_backend b = hx_disc_backend(d64);
  const int64_t ng = hx_op_size(op), nown = hx_op_owned(op);
  double *d_b, *d_g, *d_x, *d_r;
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_b));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_g));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_x));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_r));
  HX_TCALL(hx_disc_rhs(d64, hf, hg, NULL, d_b, d_g));
  HX_TCALL(hx_disc_from_l_host(d64, u, 1, d_x));
  HX_TCALL(hx_op_apply(op, d_x, d_r, NULL));
  HX_TCALL(hx_array_axpby(b, ng, d_r, 1.0, d_b, -1.0));
  double s[2];
  HX_TCALL(hx_array_dot(b, nown, d_r, d_r, &s[0]));
  HX_TCALL(hx_array_dot(b, nown, d_b, d_b, &s[1]));
  MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  *rnorm = sqrt(s[0]), *bnorm = sqrt(s[1]);
  HX_TCALL(hx_mem_free(b, (void **)&d_b));
  HX_TCALL(hx_mem_free(b, (void **)&d_g));
  HX_TCALL(hx_mem_free(b, (void **)&d_x));
  HX_TCALL(hx_mem_free(b, (void **)&d_r));
  return 0;
}

/* geom_order 1: hex8, the FP64 operator on the fly; 2: hex27, stored */
static int split_case(int geom_order) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = 3, mo.deform = 1, mo.deform_amplitude = 0.08, mo.geom_order = geom_order;
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  HX_TCALL(hx_backend_create(g_backend, &b));
  const double kap = 1.0, lam = 0.0;
  hx_disc_opts o = {.p = 6, .geo = HX_GEO_PRECOMPUTED, .overlap = 1, .kappa = &kap, .lambda = &lam};
  hx_disc d64, dsp;
  HX_TCALL(hx_disc_create(m, b, &o, &d64));
  o.geometry = HX_AX_GEO_SPLIT;
  HX_TCALL(hx_disc_create(m, b, &o, &dsp));
  hx_op ox;
  HX_TCALL(hx_disc_op_exact(d64, &ox));
  HX_ASSERT(ox == hx_disc_op(d64), "fp64 disc: the exact operator is not the disc's own");
  HX_TCALL(hx_disc_op_exact(dsp, &ox));
  HX_ASSERT(ox && ox != hx_disc_op(dsp), "split disc: no separate FP64 operator");
  HX_ASSERT(hx_ax_geo_mode(hx_op_ax(ox)) == (geom_order == 1 ? HX_GEO_ONTHEFLY : HX_GEO_PRECOMPUTED) &&
                hx_ax_geometry_of(hx_op_ax(ox)) == HX_AX_GEO_FP64,
            "hex%d: the FP64 operator is not %s", geom_order == 1 ? 8 : 27,
            geom_order == 1 ? "on the fly" : "precomputed FP64");
  const int64_t nl = hx_disc_num_l(d64);
  prob pr = {0.0, 1.0, 0};
  hx_field f = {f_sin, &pr, NULL}, ex = {u_sin, &pr, NULL};
  double *hf = malloc(sizeof(double) * nl), *hg = malloc(sizeof(double) * nl), *u = malloc(sizeof(double) * nl);
  HX_TCALL(hx_disc_eval(d64, f, hf));
  HX_TCALL(hx_disc_eval(d64, ex, hg));
  const double tol = 1e-12;
  for (int variant = 0; variant < 3; variant++) {
    /* 0: PCG, 1: pcg1 (no replacement: the correction solve), 2: PCG on
     * the split operator alone (hx_pcg_solve, no FP64 residual) */
    hx_pcg_opts po;
    hx_pcg_opts_default(&po);
    po.rtol = tol, po.max_iterations = 3000, po.single_reduction = variant == 1;
    hx_solve_result r = {0};
    if (variant < 2) {
      HX_TCALL(solve_pc(dsp, hf, hg, NULL, ex, "jacobi", &po, NULL, u, &r));
    } else {
      hx_op op = hx_disc_op(dsp);
      const int64_t ng = hx_op_size(op);
      double *d_b, *d_g, *d_x;
      HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_b));
      HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_g));
      HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&d_x));
      HX_TCALL(hx_disc_rhs(dsp, hf, hg, NULL, d_b, d_g));
      HX_TCALL(hx_mem_zero(b, d_x, sizeof(double) * (size_t)ng));
      hx_pc pc;
      HX_TCALL(hx_pc_create_jacobi(op, &pc));
      HX_TCALL(hx_pcg_solve(op, pc, d_b, d_x, &po, &r.pcg));
      HX_TCALL(hx_pc_destroy(&pc));
      HX_TCALL(hx_array_axpby(b, ng, d_x, 1.0, d_g, 1.0));
      HX_TCALL(hx_op_to_l_host(op, d_x, u));
      HX_TCALL(hx_mem_free(b, (void **)&d_b));
      HX_TCALL(hx_mem_free(b, (void **)&d_g));
      HX_TCALL(hx_mem_free(b, (void **)&d_x));
    }
    double rn, bn;
    HX_TCALL(fp64_residual(d64, hf, hg, u, &rn, &bn));
    if (g_rank == 0)
      printf("split hex%d variant %d: %d iterations, %s, %d replacements, %d corrections; reported %.3e, FP64 %.3e "
             "(relative)\n",
             geom_order == 1 ? 8 : 27, variant, r.pcg.iterations, hx_reason_name(r.pcg.reason), r.pcg.replacements,
             r.refinements, r.pcg.rel,
             rn / bn);
    HX_ASSERT(r.pcg.reason == HX_CONVERGED_RTOL, "variant %d: %s", variant, hx_reason_name(r.pcg.reason));
    if (variant < 2) {
      /* the reported residual is the FP64 one (up to the rounding of two
       * operators' applies) and meets the tolerance */
      HX_ASSERT(rn <= 2.0 * tol * bn, "variant %d: FP64 residual %.3e > 2 tol", variant, rn / bn);
      HX_ASSERT(fabs(r.pcg.rel - rn / bn) <= 0.1 * rn / bn + 1e-14, "variant %d: reported %.3e, FP64 %.3e", variant,
                r.pcg.rel, rn / bn);
      HX_ASSERT(variant == 1 ? r.pcg.replacements == 0 && r.refinements >= 1 : r.pcg.replacements >= 2,
                "variant %d: %d replacements, %d corrections", variant, r.pcg.replacements, r.refinements);
    } else {
      /* without it the split operator's perturbation (~1e-8) shows */
      HX_ASSERT(rn > 100.0 * tol * bn, "split alone: FP64 residual %.3e already below 100 tol", rn / bn);
    }
  }
  /* below what the FP64 operator attains: a reason, not an error */
  {
    hx_pcg_opts po;
    hx_pcg_opts_default(&po);
    po.rtol = 1e-19, po.max_iterations = 3000;
    hx_solve_result r;
    HX_TCALL(solve_pc(dsp, hf, hg, NULL, ex, "jacobi", &po, NULL, u, &r));
    HX_ASSERT(r.pcg.reason == HX_DIVERGED_STAGNATION || r.pcg.reason == HX_DIVERGED_MAX_IT,
              "tol 1e-19: %s after %d iterations", hx_reason_name(r.pcg.reason), r.pcg.iterations);
    /* stopped at the iteration limit: the reported residual is still the FP64
     * one (pcg1: no replacements, so its recursive residual has gone below
     * the FP64 one by then) */
    po.max_iterations = 60, po.single_reduction = 1;
    HX_TCALL(solve_pc(dsp, hf, hg, NULL, ex, "jacobi", &po, NULL, u, &r));
    double rn, bn;
    HX_TCALL(fp64_residual(d64, hf, hg, u, &rn, &bn));
    HX_ASSERT(r.pcg.reason == HX_DIVERGED_MAX_IT && fabs(r.pcg.rel - rn / bn) <= 1e-6 * rn / bn,
              "pcg1, 60 iterations: %s, reported %.6e, FP64 %.6e", hx_reason_name(r.pcg.reason), r.pcg.rel, rn / bn);
  }
  free(hf), free(hg), free(u);
  HX_TCALL(hx_disc_destroy(&dsp));
  HX_TCALL(hx_test_release(NULL, &d64, &m, &b));
  return 0;
}

static int mode_split(void) {
  HX_TCALL(split_case(1));
  HX_TCALL(split_case(2));
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  g_backend = hx_test_backend_arg(argc, argv);
  static const hx_test_mode modes[] = {{"sym", mode_sym},
                                       {"poly", mode_poly},
                                       {"hconv", mode_hconv},
                                       {"pconv", mode_pconv},
                                       {"ranks", mode_ranks},
                                       {"kershaw", mode_kershaw},
                                       {"helmholtz", mode_helmholtz},
                                       {"neumann", mode_neumann},
                                       {"breakdown", mode_breakdown},
                                       {"split", mode_split}};
  return hx_test_run_modes(argc, argv, "t500-solve", modes, (int)(sizeof modes / sizeof modes[0]));
}
