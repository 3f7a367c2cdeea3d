/* Exactness: on affine elements u.A u = kappa |grad u|^2 vol for linear u
 * (every p), and the lumped mass sums to the volume; on trilinear and curved
 * triquadratic elements the mass sums to the volume from an independent
 * high-order quadrature of the map's |J| (exact once GLL integrates |J|). */
#include "ax_test.h"

int main(int argc, char **argv) {
  hx_backend b = NULL;
  const int rc = axt_init(&argc, &argv, &b);
  if (rc) return rc;
  hx_test_rng rng = {0xabcdef12345ull};
  for (int p = 1; p <= 15; p++) {
    const int n = p + 1, n3 = n * n * n;
    double t[AXT_NMAX], wt[AXT_NMAX];
    hx_gll(n, t, wt);
    /* affine element, linear u, both modes */
    double v[24], a[3][3], v27[81];
    const double vol = axt_random_affine(&rng, v, a);
    axt_hex8_to_hex27(v, v27);
    const double kappa = 1.7, lambda = 0.6;
    const double g[3] = {hx_test_rand(&rng), hx_test_rand(&rng), hx_test_rand(&rng)}, c0 = 0.3;
    double *u, *w, *mass;
    if (HX_ALLOC(&u, n3) || HX_ALLOC(&w, n3) || HX_ALLOC(&mass, n3)) return 1;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          double x[3];
          for (int d = 0; d < 3; d++)
            x[d] =
                v[d] + a[0][d] * 0.5 * (t[i] + 1) + a[1][d] * 0.5 * (t[j] + 1) + a[2][d] * 0.5 * (t[k] + 1);
          u[i + n * (j + n * k)] = c0 + g[0] * x[0] + g[1] * x[1] + g[2] * x[2];
        }
    const double exact = kappa * (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * vol;
    for (int mode = 0; mode < 3; mode++) {
      hx_ax ax = NULL;
      const double zero = 0.0;
      if (hx_ax_create(b, p, 1, mode == 2 ? 27 : 8, mode == 2 ? v27 : v, &kappa, &zero,
                       mode == 1 ? HX_GEO_ONTHEFLY : HX_GEO_PRECOMPUTED, &ax)) {
        hx_error_print(stderr, 0, 1);
        return 1;
      }
      double uw = 0.0;
      if (axt_apply(ax, n3, u, w, &uw)) return 1;
      HX_ASSERT(hx_test_reldiff(uw, exact, 1e-300) < 1e-12,
                "p=%d mode %d: u.Au = %.17g, kappa|grad u|^2 vol = %.17g", p, mode, uw, exact);
      HX_TCALL(hx_ax_mass(ax, mass));
      double s = 0.0;
      for (int q = 0; q < n3; q++) s += mass[q];
      HX_ASSERT(hx_test_reldiff(s, vol, 1e-300) < 1e-13, "p=%d mode %d: mass sum %.17g, volume %.17g", p,
                mode, s, vol);
      HX_TCALL(hx_ax_destroy(&ax));
      /* lambda: u.Au gains lambda * sum mass u^2 (the lumped mass of u^2) */
      HX_TCALL(hx_ax_create(b, p, 1, mode == 2 ? 27 : 8, mode == 2 ? v27 : v, &kappa, &lambda,
                            mode == 1 ? HX_GEO_ONTHEFLY : HX_GEO_PRECOMPUTED, &ax));
      double uw2 = 0.0, mu2 = 0.0;
      if (axt_apply(ax, n3, u, w, &uw2)) return 1;
      for (int q = 0; q < n3; q++) mu2 += mass[q] * u[q] * u[q];
      HX_ASSERT(hx_test_reldiff(uw2, exact + lambda * mu2, 1e-300) < 1e-12,
                "p=%d mode %d: with lambda %.17g vs %.17g", p, mode, uw2, exact + lambda * mu2);
      HX_TCALL(hx_ax_destroy(&ax));
    }
    /* trilinear (non-affine) and curved triquadratic elements: mass = volume */
    double vt[24], vc[81];
    axt_random_hex8(&rng, 1.0, 0.2, vt);
    axt_random_hex27(&rng, 1.0, 0.05, vc);
    const double volt = axt_volume(8, vt, 12), volc = axt_volume(27, vc, 12);
    for (int which = 0; which < 2; which++) {
      hx_ax ax = NULL;
      const double one = 1.0;
      HX_TCALL(hx_ax_create(b, p, 1, which ? 27 : 8, which ? vc : vt, &one, NULL, HX_GEO_PRECOMPUTED, &ax));
      HX_TCALL(hx_ax_mass(ax, mass));
      double s = 0.0;
      for (int q = 0; q < n3; q++) s += mass[q];
      const double ref = which ? volc : volt;
      /* GLL with n points is exact for degree 2n-3: |J| has degree 2 (hex8)
       * or 5 (hex27) per variable; below that, the quadrature error of a
       * mildly curved element is a few percent at most. */
      const int exact_from = which ? 4 : 3;
      const double tol = n >= exact_from ? 1e-13 : 5e-2;
      HX_ASSERT(hx_test_reldiff(s, ref, 1e-300) < tol, "p=%d %s: mass sum %.17g, volume %.17g (rel %.2e)", p,
                which ? "hex27" : "hex8", s, ref, hx_test_reldiff(s, ref, 1e-300));
      HX_TCALL(hx_ax_destroy(&ax));
    }
    free(u);
    free(w);
    free(mass);
  }
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
