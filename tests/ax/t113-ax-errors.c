/* Input validation of hx_ax_create: inverted elements (HX_ERR_INPUT naming
 * the element), on-the-fly with hex27, bad orders, bad coefficients; NULL-safe
 * destroy. CPU only (setup runs on the host for every backend). */
#include "ax_test.h"

int main(int argc, char **argv) {
  hx_backend b = NULL;
  const int rc = axt_init(&argc, &argv, &b);
  if (rc) return rc;
  hx_test_rng rng = {42};
  double v[3 * 24], v27[81], kap[3] = {1, 1, 1}, lam[3] = {0, 0, 0};
  for (int e = 0; e < 3; e++) axt_random_hex8(&rng, 1.0, 0.1, v + 24 * e);
  axt_hex8_to_hex27(v, v27);
  hx_ax ax = NULL;
  /* element 2 inverted: swap the z = 0 and z = 1 faces */
  for (int q = 0; q < 4; q++)
    for (int d = 0; d < 3; d++) {
      double tmp = v[48 + 3 * q + d];
      v[48 + 3 * q + d] = v[48 + 3 * (q + 4) + d];
      v[48 + 3 * (q + 4) + d] = tmp;
    }
  for (int mode = 0; mode < 2; mode++) {
    int ierr = hx_ax_create(b, 3, 3, 8, v, kap, lam, (hx_geo_mode)mode, &ax);
    HX_ASSERT(ierr == HX_ERR_INPUT, "inverted element: got %s", hx_error_name(ierr));
    HX_ASSERT(strstr(hx_error_message(), "element 2") != NULL, "message names the element: '%s'",
              hx_error_message());
    HX_ASSERT(ax == NULL, "no handle on failure");
    hx_error_clear();
  }
  /* a degenerate element: all vertices of the top face on the bottom face */
  for (int q = 0; q < 4; q++)
    for (int d = 0; d < 3; d++) v[48 + 3 * (q + 4) + d] = v[48 + 3 * q + d];
  HX_ASSERT(hx_ax_create(b, 2, 3, 8, v, kap, lam, HX_GEO_PRECOMPUTED, &ax) == HX_ERR_INPUT,
            "degenerate element");
  hx_error_clear();
  HX_ASSERT(hx_ax_create(b, 2, 1, 27, v27, kap, lam, HX_GEO_ONTHEFLY, &ax) == HX_ERR_ARG, "hex27 on the fly");
  HX_ASSERT(hx_ax_create(b, 0, 1, 8, v, kap, lam, HX_GEO_PRECOMPUTED, &ax) == HX_ERR_ARG, "p = 0");
  HX_ASSERT(hx_ax_create(b, 16, 1, 8, v, kap, lam, HX_GEO_PRECOMPUTED, &ax) == HX_ERR_ARG, "p = 16");
  HX_ASSERT(hx_ax_create(b, 2, 1, 9, v, kap, lam, HX_GEO_PRECOMPUTED, &ax) == HX_ERR_ARG, "npe = 9");
  double bad = -1.0;
  HX_ASSERT(hx_ax_create(b, 2, 1, 8, v, &bad, lam, HX_GEO_PRECOMPUTED, &ax) == HX_ERR_INPUT, "kappa < 0");
  HX_ASSERT(hx_ax_create(b, 2, 1, 8, v, kap, &bad, HX_GEO_PRECOMPUTED, &ax) == HX_ERR_INPUT, "lambda < 0");
  hx_error_clear();
  /* E = 0 is a valid (empty) operator */
  HX_TCALL(hx_ax_create(b, 4, 0, 8, NULL, NULL, NULL, HX_GEO_ONTHEFLY, &ax));
  double uw = -1.0;
  HX_TCALL(hx_ax_apply(ax, NULL, NULL, &uw));
  HX_ASSERT(uw == 0.0, "empty apply u.w = %g", uw);
  HX_TCALL(hx_ax_destroy(&ax));
  HX_TCALL(hx_ax_destroy(&ax));
  HX_TCALL(hx_ax_destroy(NULL));
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
