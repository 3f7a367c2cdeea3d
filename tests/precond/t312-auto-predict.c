/* type auto's prediction (precond/pc_auto.c, hx_auto_predict) against an
 * independent CG on A = diag(lambda_i), M = I, n = 40, lambda_i =
 * 1 + (K - 1) (i / 39)^2 (K = 1e3), b = 1 (every eigenvector excited):
 *   1. Lanczos extremes: after k < n steps inside [1, K] (Cauchy
 *      interlacing: lmin >= 1, lmax <= K, up to 1e-10), lmax non-decreasing
 *      and lmin non-increasing in k; a second CG (n = 8, spectrum 1..100
 *      evenly), whose 8 steps span the space, gives both ends within 1e-8;
 *   2. the CG bound: jacobi_bound = log(rel / target) / -log((sqrt(kappa) -
 *      1) / (sqrt(kappa) + 1)) for the returned kappa (1e-9);
 *   3. the error rate (k <= 24): with the iterates x_j of the test's own CG, E_j^2 =
 *      (x_k - x_j).A(x_k - x_j) computed from the vectors (not from the
 *      coefficients), rate = (E_{k/2} / E_0)^(1 / (k/2)), jacobi_rate =
 *      log(rel / target) / -log(rate) within 1e-8; jacobi the lesser;
 *   4. pmg's cost = setup + cycle x iterations x log(rel/target) / log(1e8)
 *      (1e-14), and 0 Jacobi iterations once rel <= target;
 *   5. bad coefficients (alpha <= 0, NaN) and n = 0 are errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_precond.h"
#include "hx_test.h"
#include "precond_impl.h"

#define N 40
#define K 1e3
#define N2 8 /* the small problem: spectrum 1, 1 + 99/7, ..., 100 */
#define K2 1e2

static double anorm2(const long double *lam, const long double *x, const long double *y) {
  long double s = 0.0;
  for (int i = 0; i < N; i++) s += (x[i] - y[i]) * lam[i] * (x[i] - y[i]);
  return (double)s;
}

/* CG on diag(lam) (n <= N), b = 1, x0 = 0, M = I, in long double: its
 * coefficients (rounded to double for the prediction) and iterates X[k]
 * follow exact arithmetic's to far below the tolerances while the Krylov
 * basis stays orthogonal (checks 3: k <= 24; from about k = 32 the A-norm
 * sum drifts from the vectors' by up to 3e-4, in double as in long double:
 * the loss of orthogonality of finite-precision Lanczos once Ritz values
 * have converged, Paige). Returns the steps taken. */
static int cg(int n, const long double *lam, double *alpha, double *beta, double *rel, long double (*X)[N]) {
  long double x[N], r[N], p[N], w[N], rz = 0.0, bn = sqrtl((long double)n);
  for (int i = 0; i < n; i++) x[i] = 0.0, r[i] = 1.0, p[i] = 1.0, rz += 1.0;
  if (X) memcpy(X[0], x, sizeof x);
  for (int k = 0; k < n; k++) {
    long double pw = 0.0, rzn = 0.0;
    for (int i = 0; i < n; i++) w[i] = lam[i] * p[i], pw += p[i] * w[i];
    const long double al = rz / pw;
    for (int i = 0; i < n; i++) x[i] += al * p[i], r[i] -= al * w[i], rzn += r[i] * r[i];
    const long double be = rzn / rz;
    alpha[k] = (double)al, beta[k] = (double)be, rel[k] = (double)(sqrtl(rzn) / bn);
    for (int i = 0; i < n; i++) p[i] = r[i] + be * p[i];
    rz = rzn;
    if (X) memcpy(X[k + 1], x, sizeof x);
    if (rel[k] < 1e-15) return k + 1;
  }
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long double lam[N];
  double alpha[N], beta[N], rel[N];
  static long double X[N + 1][N];
  for (int i = 0; i < N; i++) {
    const double t = (double)i / (N - 1);
    lam[i] = 1.0 + (K - 1.0) * t * t;
  }
  const int steps = cg(N, lam, alpha, beta, rel, X);
  HX_ASSERT(steps == N, "CG stopped after %d of %d steps", steps, N);
  hx_auto_opts o;
  hx_auto_opts_default(&o);
  o.setup_cost = 123.0, o.cycle_cost = 7.0, o.pmg_iterations = 11.0;
  const double target = 1e-12;
  double lmin_prev = INFINITY, lmax_prev = 0.0;
  for (int k = 4; k <= steps; k++) {
    hx_auto_pred pr;
    HX_TCALL(hx_auto_predict(k, alpha, beta, rel[k - 1], target, &o, &pr));
    /* 1. */
    HX_ASSERT(pr.lmin >= 1.0 - 1e-10 && pr.lmax <= K * (1 + 1e-10) && pr.lmin <= pr.lmax,
              "k = %d: Lanczos extremes [%.10g, %.10g] outside the spectrum [1, %g]", k, pr.lmin, pr.lmax, K);
    HX_ASSERT(pr.lmax >= lmax_prev * (1 - 1e-12) && pr.lmin <= lmin_prev * (1 + 1e-12),
              "k = %d: extremes [%.10g, %.10g] moved inwards from [%.10g, %.10g]", k, pr.lmin, pr.lmax,
              lmin_prev, lmax_prev);
    lmin_prev = pr.lmin, lmax_prev = pr.lmax;
    HX_ASSERT(fabs(pr.kappa - pr.lmax / pr.lmin) <= 1e-12 * pr.kappa, "k = %d: kappa %g", k, pr.kappa);
    const double drop = log(rel[k - 1] / target);
    if (drop <= 0) continue;
    /* 2. */
    const double sk = sqrt(pr.kappa), bound = drop / -log((sk - 1.0) / (sk + 1.0));
    HX_ASSERT(fabs(pr.jacobi_bound - bound) <= 1e-9 * bound, "k = %d: CG bound %.12g, expected %.12g", k,
              pr.jacobi_bound, bound);
    /* 3. from the iterates (while the basis is orthogonal, see cg) */
    if (k <= 24) {
      const int h = k / 2;
      const double e0 = sqrt(anorm2(lam, X[k], X[0])), eh = sqrt(anorm2(lam, X[k], X[h]));
      const double want = drop / -log(pow(eh / e0, 1.0 / h));
      HX_ASSERT(fabs(pr.jacobi_rate - want) <= 1e-8 * want,
                "k = %d: error-rate estimate %.12g, expected %.12g (E_h / E_0 = %.3g)", k, pr.jacobi_rate,
                want, eh / e0);
    }
    HX_ASSERT(pr.jacobi == fmin(pr.jacobi_bound, pr.jacobi_rate), "k = %d: jacobi %g is not the lesser", k,
              pr.jacobi);
    /* 4. */
    const double cost = 123.0 + 7.0 * 11.0 * drop / log(1e8);
    HX_ASSERT(fabs(pr.pmg - cost) <= 1e-14 * cost, "k = %d: pmg cost %.15g, expected %.15g", k, pr.pmg, cost);
  }
  /* the small problem: n steps span the space, T_n has the spectrum */
  for (int i = 0; i < N2; i++) lam[i] = 1.0 + (K2 - 1.0) * i / (N2 - 1);
  const int s2 = cg(N2, lam, alpha, beta, rel, NULL);
  hx_auto_pred p2;
  HX_TCALL(hx_auto_predict(s2, alpha, beta, 1.0, 1e-8, &o, &p2));
  HX_ASSERT(s2 == N2 && fabs(p2.lmin - 1.0) <= 1e-8 && fabs(p2.lmax - K2) <= 1e-8 * K2,
            "after %d of %d steps: extremes [%.12g, %.12g], expected [1, %g]", s2, N2, p2.lmin, p2.lmax, K2);
  /* the small problem's coefficients from here on */
  hx_auto_pred pr;
  HX_TCALL(hx_auto_predict(8, alpha, beta, target / 2, target, &o, &pr));
  HX_ASSERT(pr.jacobi == 0.0 && pr.pmg == o.setup_cost, "converged: jacobi %g, pmg %g", pr.jacobi, pr.pmg);
  /* 5. */
  double bad[4] = {alpha[0], -1.0, alpha[2], alpha[3]};
  HX_ASSERT(hx_auto_predict(4, bad, beta, 1.0, target, &o, &pr) == HX_ERR_NUMERIC, "alpha < 0 accepted");
  bad[1] = NAN;
  HX_ASSERT(hx_auto_predict(4, bad, beta, 1.0, target, &o, &pr) == HX_ERR_NUMERIC, "alpha NaN accepted");
  HX_ASSERT(hx_auto_predict(0, alpha, beta, 1.0, target, &o, &pr) == HX_ERR_ARG, "n = 0 accepted");
  hx_error_clear();
  MPI_Finalize();
  return hx_test_result();
}
