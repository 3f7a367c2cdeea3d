/* Projection of the initial guess (Fischer 1998, solver/projection.c) on a
 * smooth sequence of Helmholtz problems A u_n = f(t_n) with Dirichlet data
 * g(t_n) (u = exp(x y z cos t) + t sin(x + 2 y), not separable in t):
 *   - the same solutions with and without projection (the previous
 *     solution as the guess), to the solver tolerance
 *   - after the first 3 solves at least 2x fewer iterations per solve
 *   - the basis A-orthonormal: |x_i . A x_j - delta_ij| <= 1e-9
 *   - the gain ||b - A x0|| / ||b|| below the previous-solution guess's
 *   - hx_proj_get / hx_proj_set give back the same guess bit for bit
 * Usage: t550-projection [--backend cpu|cuda] */
#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"

static double g_t = 0;
static double u_fn(const void *c, double x, double y, double z) {
  (void)c;
  return exp(x * y * z * cos(g_t)) + g_t * sin(x + 2 * y);
}
#define LAMBDA 20.0
/* -lap u + lambda u */
static double f_fn(const void *c, double x, double y, double z) {
  (void)c;
  const double a = cos(g_t), e = exp(x * y * z * a);
  const double lap = a * a * (y * y * z * z + x * x * z * z + x * x * y * y) * e - 5 * g_t * sin(x + 2 * y);
  return -lap + LAMBDA * u_fn(c, x, y, z);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *backend = hx_test_backend_arg(argc, argv);
  hx_test_skip_without_device(backend);
  hx_backend b;
  hx_mesh m;
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = 3, mo.deform = 1;
  HX_TCALL(hx_backend_create(backend, &b));
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  double lam[1] = {LAMBDA};
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = 5, dopt.lambda = lam;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &dopt, &d));
  hx_op op = hx_disc_op(d);
  hx_pc pc;
  HX_TCALL(hx_test_pc_create(d, "jacobi", "t550", &pc));
  const int K = 6, NS = 12;
  hx_proj pj;
  HX_TCALL(hx_proj_create(op, K, &pj));

  const int64_t nl = hx_disc_num_l(d), ng = hx_op_size(op), nown = hx_op_owned(op);
  double *hf = malloc(sizeof(double) * nl), *hg = malloc(sizeof(double) * nl);
  double *u0 = malloc(sizeof(double) * nl), *u1 = malloc(sizeof(double) * nl), *up = malloc(sizeof(double) * nl);
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = 1e-10, po.max_iterations = 2000;
  hx_field none = {NULL, NULL, NULL};
  int it0 = 0, it1 = 0;
  double maxdiff = 0, umax = 0;
  for (int64_t i = 0; i < nl; i++) up[i] = 0;
  for (int n = 1; n <= NS; n++) {
    g_t = 0.05 * n;
    hx_field f = {f_fn, NULL, NULL}, g = {u_fn, NULL, NULL};
    HX_TCALL(hx_disc_eval(d, f, hf));
    HX_TCALL(hx_disc_eval(d, g, hg));
    hx_solve_result r0, r1;
    HX_TCALL(hx_solve(d, pc, hf, hg, NULL, none, &po, n > 1 ? up : NULL, u0, &r0));
    HX_TCALL(hx_solve_proj(d, pc, pj, hf, hg, NULL, none, &po, n > 1 ? up : NULL, u1, &r1));
    HX_ASSERT(r0.pcg.reason > 0 && r1.pcg.reason > 0, "step %d: both converged (%d, %d)", n, r0.pcg.reason,
              r1.pcg.reason);
    for (int64_t i = 0; i < nl; i++) {
      maxdiff = fmax(maxdiff, fabs(u0[i] - u1[i]));
      umax = fmax(umax, fabs(u0[i]));
    }
    if (n > 3) {
      it0 += r0.pcg.iterations, it1 += r1.pcg.iterations;
      HX_ASSERT(r1.pcg.r0norm < r0.pcg.r0norm, "step %d: projected residual %.3e below the previous solution's %.3e",
                n, r1.pcg.r0norm, r0.pcg.r0norm);
    }
    if (rank == 0)
      printf("step %2d: %3d iterations (previous solution), %3d (projection, %d vectors), gain %.2e vs %.2e\n", n,
             r0.pcg.iterations, r1.pcg.iterations, hx_proj_size(pj), r1.pcg.r0norm / r1.pcg.bnorm,
             r0.pcg.r0norm / r0.pcg.bnorm);
    memcpy(up, u0, sizeof(double) * nl);
  }
  double gd[2] = {maxdiff, umax};
  MPI_Allreduce(MPI_IN_PLACE, gd, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  /* both solve to rtol 1e-10; the solutions agree to far below the discretisation error */
  HX_ASSERT(gd[0] <= 1e-8 * gd[1], "same solutions: max |u0 - u1| = %.3e (max |u| %.3e)", gd[0], gd[1]);
  HX_ASSERT(2 * it1 <= it0, "projection: %d iterations over steps 4..%d against %d without (want <= half)", it1, NS,
            it0);
  if (rank == 0) printf("steps 4..%d: %d iterations without projection, %d with\n", NS, it0, it1);

  /* A-orthonormality of the basis */
  const int k = hx_proj_size(pj);
  HX_ASSERT(k >= 2, "the basis holds %d vectors", k);
  const size_t gb = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  double **h = malloc(sizeof(double *) * K), *dv[8], *dw;
  for (int i = 0; i < k; i++) {
    h[i] = malloc(sizeof(double) * nl);
    HX_TCALL(hx_proj_get(pj, i, h[i]));
    HX_TCALL(hx_mem_alloc(b, gb, (void **)&dv[i]));
    HX_TCALL(hx_disc_from_l_host(d, h[i], 1, dv[i]));
  }
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dw));
  double worst = 0;
  for (int i = 0; i < k; i++) {
    HX_TCALL(hx_op_apply(op, dv[i], dw, NULL));
    for (int j = 0; j < k; j++) {
      double s;
      HX_TCALL(hx_array_dot(b, nown, dv[j], dw, &s));
      MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      worst = fmax(worst, fabs(s - (i == j)));
    }
  }
  HX_ASSERT(worst <= 1e-9, "A-orthonormal basis: max |x_i . A x_j - delta_ij| = %.3e", worst);

  /* get/set round trip: the same guess to the last bit */
  hx_proj pj2;
  HX_TCALL(hx_proj_create(op, K, &pj2));
  HX_TCALL(hx_proj_set(pj2, k, (const double *const *)h));
  double *db, *dg, *dx1, *dx2;
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&db));
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dg));
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dx1));
  HX_TCALL(hx_mem_alloc(b, gb, (void **)&dx2));
  HX_TCALL(hx_disc_rhs(d, hf, hg, NULL, db, dg));
  HX_TCALL(hx_proj_guess(pj, db, dx1));
  HX_TCALL(hx_proj_guess(pj2, db, dx2));
  double *a1 = malloc(gb), *a2 = malloc(gb);
  HX_TCALL(hx_mem_to_host(b, a1, dx1, gb));
  HX_TCALL(hx_mem_to_host(b, a2, dx2, gb));
  HX_ASSERT(!memcmp(a1, a2, gb), "hx_proj_set gives back the same guess bit for bit");

  free(a1), free(a2);
  hx_mem_free(b, (void **)&db), hx_mem_free(b, (void **)&dg), hx_mem_free(b, (void **)&dx1);
  hx_mem_free(b, (void **)&dx2), hx_mem_free(b, (void **)&dw);
  for (int i = 0; i < k; i++) free(h[i]), hx_mem_free(b, (void **)&dv[i]);
  free(h), free(hf), free(hg), free(u0), free(u1), free(up);
  hx_proj_destroy(&pj), hx_proj_destroy(&pj2);
  hx_pc_destroy(&pc);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  return hx_test_mpi_finish(0);
}
