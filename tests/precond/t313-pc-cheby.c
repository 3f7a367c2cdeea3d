/* Type cheby (precond/pc_cheby.c, the Chebyshev-Jacobi preconditioner):
 * z = q(S A) S r with S = D^-1 (the assembled diagonal), checked against
 * the closed form of its error polynomial E(lambda) = 1 - lambda q(lambda),
 * evaluated independently of the smoother's three-term recurrence (cheby.c):
 *   kind fourth: E = W_k(1 - 2 lambda/rho)/(2k+1), W_0 = 1, W_1 = 2x + 1,
 *                W_{j+1} = 2x W_j - W_{j-1}
 *   kind first:  E = T_k(sigma - 2 lambda/(rho - a))/T_k(sigma), a = lower rho,
 *                sigma = (rho + a)/(rho - a), T_0 = 1, T_1 = x, the same recurrence
 * expanded in monomials of u = lambda/rho (the test's own polynomial
 * arithmetic), q(lambda) = Q(u)/rho with 1 - E = u Q(u), and applied by
 * Horner's rule with the operator and 1/diag: y = Q_{k-1} S r,
 * y = Q_j S r + (S A y)/rho, z_ref = y/rho. rho is the preconditioner's own
 * (hx_pc_cheby_rho; the report's agrees to its printed digits). The two
 * agree to 1e-12 relative: the monomial form loses about eps x sum |Q_j|
 * (at most ~5e2 for the degrees here: 1e-13) to cancellation; measured
 * 1e-16 to 2e-15. Also: the report's degree, the view names the type.
 *   t313-pc-cheby [--p P] [--n N] */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"
#include "precond_impl.h"

#define KMAX 8

static double num(const hx_opt *map, const char *key) {
  const hx_opt *v = map ? hx_opt_get(map, key) : NULL;
  return v && v->kind == HX_OPT_SCALAR ? atof(v->value) : NAN;
}

/* the coefficients in u of E(u) = P_k(alpha + beta u) / P_k(alpha), k >= 1,
 * for the Chebyshev family with P_0 = 1, P_1(x) = 2x + 1 (w = 1: W, 4th
 * kind) or x (w = 0: T, 1st kind), P_{j+1} = 2x P_j - P_{j-1} */
static void error_poly(int k, int w, double alpha, double beta, double *e) {
  double pm[KMAX + 2] = {0}, p[KMAX + 2] = {0}, pn[KMAX + 2];
  pm[0] = 1.0;
  p[0] = w ? 2.0 * alpha + 1.0 : alpha, p[1] = w ? 2.0 * beta : beta;
  double vm = 1.0, v = p[0]; /* P_j(alpha): the value at u = 0 */
  for (int j = 1; j < k; j++) {
    for (int i = 0; i <= KMAX + 1; i++)
      pn[i] = 2.0 * alpha * p[i] + (i > 0 ? 2.0 * beta * p[i - 1] : 0.0) - pm[i];
    const double vn = 2.0 * alpha * v - vm;
    memcpy(pm, p, sizeof p), memcpy(p, pn, sizeof p);
    vm = v, v = vn;
  }
  for (int i = 0; i <= k; i++) e[i] = p[i] / v;
}

static int check(hx_disc d, const char *kind, int k, double lower) {
  char yaml[160];
  snprintf(yaml, sizeof yaml, "{type: cheby, kind: %s, degree: %d, lower: %g}", kind, k, lower);
  hx_pc pc = NULL;
  HX_TCALL(hx_test_pc_make(d, yaml, "--pc", &pc));
  hx_gs gs = hx_disc_gs(d);
  hx_op op = hx_disc_op(d);
  hx_backend b = hx_disc_backend(d);
  hx_opt *root = NULL;
  HX_TCALL(hx_pc_report(pc, hx_gs_comm(gs), &root));
  const double rho = hx_pc_cheby_rho(pc);
  HX_ASSERT(rho > 0 && isfinite(rho) && fabs(num(root, "rho") / rho - 1.0) < 1e-6, "%s: rho %g, reported %g",
            yaml, rho, num(root, "rho"));
  HX_ASSERT(num(root, "degree") == k, "%s: report degree %g", yaml, num(root, "degree"));
  hx_opt_free(&root);
  char view[200];
  hx_pc_view(pc, view, sizeof view);
  HX_ASSERT(strstr(view, "cheby(jacobi") != NULL, "view '%s'", view);
  /* E(u), then Q(u) = (1 - E(u))/u */
  double e[KMAX + 2] = {0}, q[KMAX + 1] = {0};
  if (!strcmp(kind, "fourth"))
    error_poly(k, 1, 1.0, -2.0, e); /* W_k(1 - 2u)/W_k(1), W_k(1) = 2k + 1 */
  else {
    const double s = (1.0 + lower) / (1.0 - lower);
    error_poly(k, 0, s, -2.0 / (1.0 - lower), e);
  }
  HX_ASSERT(fabs(e[0] - 1.0) < 1e-13, "%s: E(0) = %.17g, expected 1", yaml, e[0]);
  double qsum = 0.0;
  for (int j = 0; j < k; j++) q[j] = -e[j + 1], qsum += fabs(q[j]);
  /* r random and masked; z = pc(r); z_ref by Horner */
  const int64_t n = hx_op_size(op);
  const size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
  double *h = malloc(bytes), *hd = malloc(bytes), *hsr = malloc(bytes), *hy = malloc(bytes);
  double *dr, *dz, *dy, *dw;
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dr));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dz));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dy));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dw));
  HX_TCALL(hx_op_diagonal_host(op, dw, hd));
  HX_TCALL(hx_test_random_gvec(d, 0x9E3779B97F4A7C15ull, 11, h, dr));
  HX_TCALL(hx_mem_to_host(b, h, dr, bytes));
  HX_TCALL(hx_pc_apply(pc, dr, dz));
  for (int64_t i = 0; i < n; i++) hsr[i] = h[i] / hd[i], hy[i] = q[k - 1] * hsr[i];
  for (int j = k - 2; j >= 0; j--) {
    HX_TCALL(hx_mem_to_device(b, dy, hy, bytes));
    HX_TCALL(hx_op_apply(op, dy, dw, NULL));
    HX_TCALL(hx_mem_to_host(b, hy, dw, bytes));
    for (int64_t i = 0; i < n; i++) hy[i] = q[j] * hsr[i] + hy[i] / hd[i] / rho;
  }
  for (int64_t i = 0; i < n; i++) hy[i] /= rho;
  HX_TCALL(hx_mem_to_device(b, dy, hy, bytes));
  double zz, dd;
  HX_TCALL(hx_gs_dot(gs, dz, dz, &zz));
  HX_TCALL(hx_array_axpby(b, n, dy, 1.0, dz, -1.0));
  HX_TCALL(hx_gs_dot(gs, dy, dy, &dd));
  HX_ASSERT(zz > 0 && sqrt(dd) <= 1e-12 * sqrt(zz),
            "%s: differs from the closed form by %.3e relative (sum |Q_j| %.3g)", yaml, sqrt(dd / zz), qsum);
  if (hx_log_rank() == 0)
    printf("%-48s rho %.6g, |z - z_ref| / |z| = %.2e\n", yaml, rho, zz > 0 ? sqrt(dd / zz) : NAN);
  hx_mem_free(b, (void **)&dr), hx_mem_free(b, (void **)&dz), hx_mem_free(b, (void **)&dy);
  hx_mem_free(b, (void **)&dw);
  free(h), free(hd), free(hsr), free(hy);
  hx_pc_destroy(&pc);
  return 0;
}

int main(int argc, char **argv) {
  int rank;
  hx_test_init_threads(&argc, &argv, &rank);
  const int p = atoi(hx_test_arg(argc, argv, "--p", "3")), n = atoi(hx_test_arg(argc, argv, "--n", "3"));
  hx_backend b;
  hx_mesh m;
  hx_disc d;
  if (hx_test_box_disc(n, 0.0, p, &b, &m, &d)) return 1;
  for (int k = 1; k <= 5; k++) check(d, "fourth", k, 0.1);
  for (int k = 1; k <= 5; k++) check(d, "first", k, 0.1);
  check(d, "first", 3, 0.3);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
