/* GLL basis: known points and weights, quadrature exact for polynomials of
 * degree <= 2p-1, derivative and interpolation matrices exact on
 * polynomials of degree <= p, for p = 1..15. */
#include "hx_test.h"

int main(void) {
  double x[32], w[32], D[32 * 32], I[32 * 32];
  /* p = 2: {-1, 0, 1}, {1/3, 4/3, 1/3}; p = 4: 0, +-sqrt(3/7), +-1 with
   * weights 32/45, 49/90, 1/10 */
  HX_TCALL(hx_gll(3, x, w));
  HX_ASSERT(x[0] == -1 && x[1] == 0 && x[2] == 1, "p=2 points");
  HX_ASSERT(fabs(w[0] - 1.0 / 3) < 1e-15 && fabs(w[1] - 4.0 / 3) < 1e-15, "p=2 weights");
  HX_TCALL(hx_gll(5, x, w));
  HX_ASSERT(fabs(x[3] - sqrt(3.0 / 7)) < 1e-15 && fabs(x[1] + sqrt(3.0 / 7)) < 1e-15, "p=4 points");
  HX_ASSERT(fabs(w[2] - 32.0 / 45) < 1e-15 && fabs(w[1] - 49.0 / 90) < 1e-15 && fabs(w[0] - 0.1) < 1e-15,
            "p=4 weights");

  for (int p = 1; p <= 15; p++) {
    int n = p + 1;
    HX_TCALL(hx_gll(n, x, w));
    for (int i = 1; i < n; i++) HX_ASSERT(x[i] > x[i - 1], "p=%d ascending", p);
    for (int k = 0; k <= 2 * p - 1; k++) {
      double q = 0;
      for (int i = 0; i < n; i++) q += w[i] * pow(x[i], k);
      double exact = (k % 2) ? 0.0 : 2.0 / (k + 1);
      HX_ASSERT(fabs(q - exact) < 1e-14, "p=%d quadrature of t^%d: %.17g vs %.17g", p, k, q, exact);
    }
    /* degree 2p is NOT integrated exactly by GLL (fails if the rule were
     * accidentally Gauss): sum w P_p^2 = 2/p instead of 2/(2p+1) */
    double q = 0;
    for (int i = 0; i < n; i++) q += w[i] * hx_legendre(p, x[i]) * hx_legendre(p, x[i]);
    HX_ASSERT(fabs(q - 2.0 / p) < 1e-13, "p=%d GLL norm of P_p: %.17g vs 2/p", p, q);

    HX_TCALL(hx_lagrange_deriv(n, x, D));
    double y[7] = {-0.99, -0.5, -0.123, 0.0, 0.3, 0.77, 1.0};
    HX_TCALL(hx_lagrange_interp(n, x, 7, y, I));
    for (int k = 0; k <= p; k++) {
      for (int i = 0; i < n; i++) {
        double d = 0;
        for (int j = 0; j < n; j++) d += D[i * n + j] * pow(x[j], k);
        double exact = k ? k * pow(x[i], k - 1) : 0.0;
        HX_ASSERT(fabs(d - exact) < 1e-12 * (1 + p * p), "p=%d d/dt t^%d at node %d: %g vs %g", p, k, i, d,
                  exact);
      }
      for (int i = 0; i < 7; i++) {
        double v = 0;
        for (int j = 0; j < n; j++) v += I[i * n + j] * pow(x[j], k);
        HX_ASSERT(fabs(v - pow(y[i], k)) < 1e-13, "p=%d interp t^%d at %g", p, k, y[i]);
      }
    }
  }
  HX_ASSERT(hx_gll(1, x, w) == HX_ERR_ARG, "n=1 refused");
  hx_error_clear();
  return hx_test_result();
}
