/* 1D Gauss-Lobatto-Legendre basis: points, weights, derivative and
 * interpolation matrices (see hx_core.h). */
#include <math.h>
#include <stdlib.h>

#include "hx_core.h"

double hx_legendre(int k, double t) {
  if (k == 0) return 1.0;
  double p0 = 1.0, p1 = t;
  for (int j = 2; j <= k; j++) {
    double p2 = ((2.0 * j - 1.0) * t * p1 - (j - 1.0) * p0) / j;
    p0 = p1, p1 = p2;
  }
  return p1;
}

int hx_gll(int n, double *x, double *w) {
  HX_CHECK(n >= 2 && n <= 32, HX_ERR_ARG, "GLL rule needs 2..32 points, got %d", n);
  const int p = n - 1;
  for (int i = 0; i < n; i++) {
    /* Chebyshev-Gauss-Lobatto guess, ascending */
    double t = -cos(M_PI * i / p);
    if (i > 0 && i < p) {
      /* Newton on q(t) = P_{p+1}(t) - P_{p-1}(t) ~ (1-t^2) P'_p(t) (same
       * interior roots); q'(t) = (2p+1) P_p(t). */
      for (int it = 0; it < 100; it++) {
        double q = hx_legendre(p + 1, t) - hx_legendre(p - 1, t);
        double dq = (2.0 * p + 1.0) * hx_legendre(p, t);
        double dt = q / dq;
        t -= dt;
        if (fabs(dt) < 1e-16) break;
      }
    }
    x[i] = t;
  }
  /* exact symmetry */
  for (int i = 0; i < n / 2; i++) {
    double a = 0.5 * (x[n - 1 - i] - x[i]);
    x[i] = -a, x[n - 1 - i] = a;
  }
  if (n % 2) x[n / 2] = 0.0;
  for (int i = 0; i < n; i++) {
    double L = hx_legendre(p, x[i]);
    w[i] = 2.0 / (p * (p + 1.0) * L * L);
  }
  return HX_SUCCESS;
}

static int hx_bary_weights(int n, const double *x, double *c) {
  for (int j = 0; j < n; j++) {
    double prod = 1.0;
    for (int k = 0; k < n; k++)
      if (k != j) prod *= (x[j] - x[k]);
    HX_CHECK(prod != 0.0, HX_ERR_ARG, "interpolation nodes %d and another coincide", j);
    c[j] = 1.0 / prod;
  }
  return HX_SUCCESS;
}

int hx_lagrange_deriv(int n, const double *x, double *D) {
  double c[64];
  HX_CHECK(n >= 1 && n <= 64, HX_ERR_ARG, "n = %d out of range 1..64", n);
  HX_CALL(hx_bary_weights(n, x, c));
  for (int i = 0; i < n; i++) {
    double diag = 0.0;
    for (int j = 0; j < n; j++) {
      if (j == i) continue;
      D[i * n + j] = (c[j] / c[i]) / (x[i] - x[j]);
      diag -= D[i * n + j]; /* rows sum to zero: derivative of a constant */
    }
    D[i * n + i] = diag;
  }
  return HX_SUCCESS;
}

int hx_lagrange_interp(int n, const double *x, int m, const double *y, double *I) {
  double c[64];
  HX_CHECK(n >= 1 && n <= 64, HX_ERR_ARG, "n = %d out of range 1..64", n);
  HX_CALL(hx_bary_weights(n, x, c));
  for (int i = 0; i < m; i++) {
    int hit = -1;
    for (int j = 0; j < n; j++)
      if (y[i] == x[j]) hit = j;
    if (hit >= 0) {
      for (int j = 0; j < n; j++) I[i * n + j] = (j == hit);
      continue;
    }
    double den = 0.0;
    for (int j = 0; j < n; j++) den += c[j] / (y[i] - x[j]);
    for (int j = 0; j < n; j++) I[i * n + j] = (c[j] / (y[i] - x[j])) / den;
  }
  return HX_SUCCESS;
}
