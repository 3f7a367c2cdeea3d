/* Periodic boxes end to end: -lap u + lambda u = f on [0,1]^3 with u
 * periodic along the periodic axes and Dirichlet (u = exact) only on the
 * faces of the other axes. MODE:
 *   conv   u periodic in x (lambda 0), in x,y (lambda 0) and in x,y,z
 *          (lambda 1, no Dirichlet face): the L2 error falls exponentially
 *          in p on a 3^3 mesh (each +2 in p gains at least 30x, p = 8 below
 *          1e-6), pmg preconditioned;
 *   ranks  jacobi, asm and pmg on the periodic x,y box: on this run's ranks
 *          (an element and its periodic neighbour on different ranks) the
 *          error equals a single-rank solve to 1e-10 and the iteration
 *          count is within 1;
 *   kershaw  a Kershaw mesh (eps 0.3) periodic in y, z: exact DOF count,
 *          fast convergence in p, bounded pmg iterations;
 *   hind   pmg iterations on the periodic x,y,z box (lambda 1) at 4^3, 6^3,
 *          8^3 elements (p = 4): h-independent (max - min <= 2);
 *   null   fully periodic Poisson (x,y,z, lambda 0: the constants are the
 *          null space, hx_disc_opts.nullspace): exact DOF count, the solve
 *          reports the null space, the error against the zero-mean exact
 *          solution falls exponentially in p as in conv (30x per +2, p = 8
 *          below 1e-6), pmg preconditioned.
 * --backend cpu|cuda (default cpu): the backend of every solve (the .cuda
 * tests: docs/gpu-verification.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"

static const double TWO_PI = 6.283185307179586;

typedef struct {
  int per[3];
  double lambda;
} prob;

/* periodic axes: cos / sin in 2 pi x; others: exp(y), 1 + z (harmonic in them) */
static double u_ex(const void *c, double x, double y, double z) {
  const prob *p = c;
  double u = p->per[0] ? cos(TWO_PI * x + 0.5) : 1 + x;
  u *= p->per[1] ? sin(TWO_PI * y + 0.2) : exp(y);
  u *= p->per[2] ? cos(TWO_PI * z + 0.1) : 1 + z;
  return u;
}
static double f_ex(const void *c, double x, double y, double z) {
  const prob *p = c;
  /* -lap u = (4 pi^2 per axis - 1 for exp(y)) u */
  double k = 0;
  for (int d = 0; d < 3; d++) k += p->per[d] ? TWO_PI * TWO_PI : (d == 1 ? -1.0 : 0.0);
  return (k + p->lambda) * u_ex(c, x, y, z);
}

typedef struct {
  int its;
  double err;
  int64_t dofs;
} result;

static double g_eps = 1.0; /* Kershaw eps of the meshes (1: box) */
static int g_null = 0;     /* hx_disc_opts.nullspace of the solves */
static const char *g_backend = "cpu";

static int solve(MPI_Comm comm, int n, int p, const int per[3], double lambda, const char *pcs, result *out) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = n;
  if (g_eps < 1.0) mo.nx = 6 * ((n + 5) / 6), mo.kershaw_eps = g_eps;
  memcpy(mo.periodic, per, sizeof mo.periodic);
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_backend_create(g_backend, &b));
  HX_TCALL(hx_mesh_create_box(comm, &mo, &m));
  hx_disc_opts o = hx_disc_opts_default();
  o.p = p, o.lambda = &lambda, o.nullspace = g_null;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  hx_pc pc;
  HX_TCALL(hx_test_pc_create(d, pcs, "t560", &pc));
  prob pr = {{per[0], per[1], per[2]}, lambda};
  hx_field f = {f_ex, &pr, NULL}, ex = {u_ex, &pr, NULL};
  const int64_t nl = hx_disc_num_l(d);
  double *hf = malloc(sizeof(double) * nl), *hg = malloc(sizeof(double) * nl),
         *u = malloc(sizeof(double) * nl);
  HX_TCALL(hx_disc_eval(d, f, hf));
  HX_TCALL(hx_disc_eval(d, ex, hg));
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = 1e-12;
  po.max_iterations = 2000;
  hx_solve_result r;
  HX_TCALL(hx_solve(d, pc, hf, hg, NULL, ex, &po, NULL, u, &r));
  HX_ASSERT(r.pcg.reason > 0, "%s n=%d p=%d: %s after %d iterations", pcs, n, p, hx_reason_name(r.pcg.reason),
            r.pcg.iterations);
  HX_ASSERT(r.nullspace == g_null, "%s n=%d p=%d: null space %d, expected %d", pcs, n, p, r.nullspace,
            g_null);
  out->its = r.pcg.iterations, out->err = r.err_l2, out->dofs = hx_disc_num_dofs(d);
  free(hf), free(hg), free(u);
  HX_TCALL(hx_test_release(&pc, &d, &m, &b));
  return 0;
}

static void mode_conv(int rank) {
  const int cases[4][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {1, 1, 1}};
  const double lam[4] = {0, 0, 1, 0};
  for (int c = g_null ? 3 : 0; c < (g_null ? 4 : 3); c++) {
    double prev = 0;
    for (int p = 2; p <= 8; p += 2) {
      result r;
      if (solve(MPI_COMM_WORLD, 3, p, cases[c], lam[c], "{type: pmg}", &r)) return;
      int64_t dexp = 1;
      for (int d = 0; d < 3; d++) dexp *= 3 * p + (cases[c][d] ? 0 : 1);
      HX_ASSERT(r.dofs == dexp, "case %d p=%d: %lld DOFs, expected %lld", c, p, (long long)r.dofs,
                (long long)dexp);
      if (rank == 0 && getenv("HX_T560_VERBOSE"))
        printf("periodic %d%d%d p=%d: err %.3e its %d\n", cases[c][0], cases[c][1], cases[c][2], p, r.err,
               r.its);
      if (p > 2)
        HX_ASSERT(r.err < prev / 30, "case %d p=%d: error %.3e, at p-2 %.3e (not exponential)", c, p, r.err,
                  prev);
      if (p == 8) HX_ASSERT(r.err < 1e-6, "case %d p=8: error %.3e", c, r.err);
      prev = r.err;
    }
  }
}

static void mode_ranks(int rank) {
  const int per[3] = {1, 1, 0};
  const char *pcs[3] = {"{type: jacobi}", "{type: asm}", "{type: pmg}"};
  for (int i = 0; i < 3; i++) {
    result r, r1 = {0, 0, 0};
    if (solve(MPI_COMM_WORLD, 4, 4, per, 0.0, pcs[i], &r)) return;
    if (rank == 0 && solve(MPI_COMM_SELF, 4, 4, per, 0.0, pcs[i], &r1)) return;
    MPI_Bcast(&r1.its, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&r1.err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0 && getenv("HX_T560_VERBOSE"))
      printf("%s: its %d (1 rank %d) err %.6e (1 rank %.6e)\n", pcs[i], r.its, r1.its, r.err, r1.err);
    HX_ASSERT(abs(r.its - r1.its) <= 1, "%s: %d iterations, %d on one rank", pcs[i], r.its, r1.its);
    HX_ASSERT(fabs(r.err - r1.err) <= 1e-10 * r1.err + 1e-14, "%s: error %.12e, %.12e on one rank", pcs[i],
              r.err, r1.err);
  }
}

static void mode_hind(int rank) {
  const int per[3] = {1, 1, 1};
  int lo = 1 << 30, hi = 0;
  for (int n = 4; n <= 8; n += 2) {
    result r;
    if (solve(MPI_COMM_WORLD, n, 4, per, 1.0, "{type: pmg}", &r)) return;
    if (rank == 0 && getenv("HX_T560_VERBOSE"))
      printf("pmg periodic xyz n=%d: its %d err %.3e\n", n, r.its, r.err);
    lo = r.its < lo ? r.its : lo, hi = r.its > hi ? r.its : hi;
  }
  HX_ASSERT(hi - lo <= 2, "pmg iterations between %d and %d over 4^3..8^3 (not h-independent)", lo, hi);
}

/* Kershaw (eps 0.3) periodic in y, z: Dirichlet on the x faces. The mesh is
 * coarse for 2 pi waves (6 x 4 x 4), so the test asks for the signature of
 * exponential convergence: the gain of each +2 in p is above 5 and grows
 * with p (algebraic convergence p^-k gives shrinking gains ((p+2)/p)^k).
 * pmg at p = 7 within 1.5x of the same mesh without periodicity. */
static void mode_kershaw(int rank) {
  const int per[3] = {0, 1, 1};
  g_eps = 0.3;
  double prev = 0, gain = 0;
  int its7 = 0;
  for (int p = 3; p <= 7; p += 2) {
    result r;
    if (solve(MPI_COMM_WORLD, 4, p, per, 0.0, "{type: pmg}", &r)) return;
    its7 = r.its;
    const int64_t dexp = (int64_t)(6 * p + 1) * (4 * p) * (4 * p);
    HX_ASSERT(r.dofs == dexp, "kershaw p=%d: %lld DOFs, expected %lld", p, (long long)r.dofs,
              (long long)dexp);
    if (rank == 0 && getenv("HX_T560_VERBOSE"))
      printf("kershaw periodic yz p=%d: err %.3e its %d\n", p, r.err, r.its);
    if (p > 3) {
      const double g = prev / r.err;
      HX_ASSERT(g > 5 && g > gain, "kershaw p=%d: error %.3e, at p-2 %.3e: gain %.2f after %.2f", p, r.err,
                prev, g, gain);
      gain = g;
    }
    prev = r.err;
  }
  const int none[3] = {0, 0, 0};
  result r0;
  if (solve(MPI_COMM_WORLD, 4, 7, none, 0.0, "{type: pmg}", &r0)) return;
  if (rank == 0 && getenv("HX_T560_VERBOSE")) printf("kershaw non-periodic p=7: its %d\n", r0.its);
  HX_ASSERT(its7 <= 1.5 * r0.its, "kershaw p=7: %d pmg iterations periodic, %d without", its7, r0.its);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hx_log_init(rank, HX_LOG_QUIET);
  const char *mode = argc > 1 && argv[1][0] != '-' ? argv[1] : "conv";
  g_backend = hx_test_backend_arg(argc, argv);
  hx_test_skip_without_device(g_backend);
  if (!strcmp(mode, "conv"))
    mode_conv(rank);
  else if (!strcmp(mode, "null"))
    g_null = 1, mode_conv(rank);
  else if (!strcmp(mode, "ranks"))
    mode_ranks(rank);
  else if (!strcmp(mode, "hind"))
    mode_hind(rank);
  else if (!strcmp(mode, "kershaw"))
    mode_kershaw(rank);
  else
    HX_ASSERT(0, "unknown mode %s", mode);
  MPI_Finalize();
  return hx_test_result();
}
