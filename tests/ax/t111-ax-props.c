/* Algebraic properties of A_L on random deformed hex8 and curved hex27
 * elements: symmetry (element matrices and x.Ay = y.Ax on random vectors),
 * positive semi-definiteness, A 1 = 0 for lambda = 0, hx_ax_diagonal equal
 * to e_i.A e_i. Runs on the backend given by --backend. */
#include "ax_test.h"

#define E_ 3

/* element matrices column by column: u = e_q in every element at once */
static int columns(hx_ax ax, int n3, double *A /* E_ * n3 * n3, A[e][row][col] */) {
  const int64_t nl = (int64_t)E_ * n3;
  double *u, *w;
  HX_TCALL(HX_ALLOC(&u, nl));
  HX_TCALL(HX_ALLOC(&w, nl));
  for (int q = 0; q < n3; q++) {
    for (int64_t i = 0; i < nl; i++) u[i] = 0.0;
    for (int e = 0; e < E_; e++) u[(int64_t)e * n3 + q] = 1.0;
    if (axt_apply(ax, nl, u, w, NULL)) return 1;
    for (int e = 0; e < E_; e++)
      for (int r = 0; r < n3; r++) A[((int64_t)e * n3 + r) * n3 + q] = w[(int64_t)e * n3 + r];
  }
  free(u);
  free(w);
  return 0;
}

static int check(hx_backend b, int p, int npe, hx_geo_mode mode, int with_lambda) {
  const int n = p + 1, n3 = n * n * n;
  const int64_t nl = (int64_t)E_ * n3;
  hx_test_rng rng = {0x1234567ull * (uint64_t)(p + 3) + (uint64_t)npe};
  double v[E_ * 81], kap[E_], lam[E_];
  for (int e = 0; e < E_; e++) {
    if (npe == 8)
      axt_random_hex8(&rng, 1.0 + 0.5 * hx_test_rand(&rng), 0.2, v + 24 * e);
    else
      axt_random_hex27(&rng, 1.0 + 0.5 * hx_test_rand(&rng), 0.05, v + 81 * e);
    kap[e] = 1.0 + 0.5 * hx_test_rand(&rng);
    lam[e] = with_lambda ? 1.0 + 0.5 * hx_test_rand(&rng) : 0.0;
  }
  hx_ax ax = NULL;
  HX_TCALL(hx_ax_create(b, p, E_, npe, v, kap, with_lambda ? lam : NULL, mode, &ax));
  double *x, *y, *ax_, *ay, *one, *a1, *diag;
  HX_TCALL(HX_ALLOC(&x, nl));
  HX_TCALL(HX_ALLOC(&y, nl));
  HX_TCALL(HX_ALLOC(&ax_, nl));
  HX_TCALL(HX_ALLOC(&ay, nl));
  HX_TCALL(HX_ALLOC(&one, nl));
  HX_TCALL(HX_ALLOC(&a1, nl));
  HX_TCALL(HX_ALLOC(&diag, nl));
  HX_TCALL(hx_ax_diagonal(ax, diag));
  const double dmax = axt_maxabs(nl, diag);
  /* |A|_2 <= max row sum of |A| <= (3n) * max|entry| ~ 3n dmax: a scale for the bounds */
  const double anorm = 3.0 * n * dmax;
  const double eps = 2.220446049250313e-16;

  for (int trial = 0; trial < 3; trial++) {
    for (int64_t i = 0; i < nl; i++) {
      x[i] = hx_test_rand(&rng);
      y[i] = hx_test_rand(&rng);
    }
    if (axt_apply(ax, nl, x, ax_, NULL) || axt_apply(ax, nl, y, ay, NULL)) return 1;
    const double xay = axt_dot(nl, x, ay), yax = axt_dot(nl, y, ax_);
    const double nx = sqrt(axt_dot(nl, x, x)), ny = sqrt(axt_dot(nl, y, y));
    HX_ASSERT(fabs(xay - yax) <= 300 * eps * nx * anorm * ny,
              "p=%d npe=%d mode=%d: x.Ay = %.17g, y.Ax = %.17g (diff %.2e, bound %.2e)", p, npe, mode, xay,
              yax, fabs(xay - yax), 300 * eps * nx * anorm * ny);
    /* u.Au >= 0 up to rounding, > 0 with lambda > 0 (bounded below by
     * lambda min(mass) |x|^2, positive for random x) */
    const double xax = axt_dot(nl, x, ax_);
    if (with_lambda)
      HX_ASSERT(xax > 0.0, "p=%d npe=%d: x.Ax = %.3e with lambda > 0", p, npe, xax);
    else
      HX_ASSERT(xax >= -300 * eps * anorm * nx * nx, "p=%d npe=%d: x.Ax = %.3e < 0", p, npe, xax);
  }
  /* constants are in the kernel of the element stiffness */
  if (!with_lambda) {
    for (int64_t i = 0; i < nl; i++) one[i] = 1.0;
    if (axt_apply(ax, nl, one, a1, NULL)) return 1;
    HX_ASSERT(axt_maxabs(nl, a1) <= 100 * n * eps * dmax,
              "p=%d npe=%d mode=%d: max|A 1| = %.3e (max diag %.3e)", p, npe, mode, axt_maxabs(nl, a1), dmax);
  }
  /* element matrices for small p: symmetric, PSD on the diagonal, diagonal */
  if (p <= 5) {
    double *A;
    HX_TCALL(HX_ALLOC(&A, (int64_t)E_ * n3 * n3));
    if (columns(ax, n3, A)) return 1;
    double asym = 0.0, ddiff = 0.0;
    for (int e = 0; e < E_; e++)
      for (int r = 0; r < n3; r++) {
        const double *Ae = A + (int64_t)e * n3 * n3;
        for (int c = 0; c < n3; c++) asym = fmax(asym, fabs(Ae[r * n3 + c] - Ae[c * n3 + r]));
        ddiff = fmax(ddiff, fabs(Ae[r * n3 + r] - diag[(int64_t)e * n3 + r]));
        HX_ASSERT(Ae[r * n3 + r] > 0.0, "p=%d: diagonal entry %.3e <= 0", p, Ae[r * n3 + r]);
      }
    HX_ASSERT(asym <= 50 * n * eps * dmax, "p=%d npe=%d mode=%d: max|A - A^T| = %.3e", p, npe, mode, asym);
    HX_ASSERT(ddiff <= 50 * n * eps * dmax, "p=%d npe=%d mode=%d: max|diag - A_ii| = %.3e", p, npe, mode,
              ddiff);
    free(A);
  } else {
    /* sampled e_i.A e_i: 8 nodes of each element (corners to interior) */
    for (int s = 0; s < 8; s++) {
      const int q = (int)((uint64_t)(s * 2654435761u) % (uint64_t)n3);
      for (int64_t i = 0; i < nl; i++) x[i] = 0.0;
      for (int e = 0; e < E_; e++) x[(int64_t)e * n3 + q] = 1.0;
      if (axt_apply(ax, nl, x, ax_, NULL)) return 1;
      for (int e = 0; e < E_; e++) {
        const int64_t i = (int64_t)e * n3 + q;
        HX_ASSERT(fabs(ax_[i] - diag[i]) <= 50 * n * eps * dmax, "p=%d: A_ii = %.17g, diagonal %.17g", p,
                  ax_[i], diag[i]);
      }
    }
  }
  HX_TCALL(hx_ax_destroy(&ax));
  free(x);
  free(y);
  free(ax_);
  free(ay);
  free(one);
  free(a1);
  free(diag);
  return 0;
}

int main(int argc, char **argv) {
  hx_backend b = NULL;
  const int rc = axt_init(&argc, &argv, &b);
  if (rc) return rc;
  const int ps[] = {1, 2, 3, 5, 7, 10, 15};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
    for (int lam = 0; lam < 2; lam++) {
      if (check(b, ps[k], 8, HX_GEO_PRECOMPUTED, lam)) goto done;
      if (check(b, ps[k], 8, HX_GEO_ONTHEFLY, lam)) goto done;
      if (check(b, ps[k], 27, HX_GEO_PRECOMPUTED, lam)) goto done;
    }
done:
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
