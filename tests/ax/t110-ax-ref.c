/* Element operator against the independent reference (ax_test.h) for every
 * order p = 1..15 on random deformed trilinear elements, both geometry modes,
 * hex27 input of the same elements, the fused u.w, and apply_list. With
 * --backend cuda the CUDA results are also compared with the CPU backend's. */
#include "ax_test.h"

static int check_order(hx_backend b, hx_backend bcpu, int p) {
  const int n = p + 1, n3 = n * n * n;
  const int32_t E = p <= 9 ? 4 : 2;
  const int64_t nl = (int64_t)E * n3;
  hx_test_rng rng = {0x9e3779b97f4a7c15ull + (uint64_t)p};
  double *v8, *v27, *kap, *lam, *u, *wref, *w[4], *wcpu;
  HX_TCALL(HX_ALLOC(&v8, E * 24));
  HX_TCALL(HX_ALLOC(&v27, E * 81));
  HX_TCALL(HX_ALLOC(&kap, E));
  HX_TCALL(HX_ALLOC(&lam, E));
  HX_TCALL(HX_ALLOC(&u, nl));
  HX_TCALL(HX_ALLOC(&wref, nl));
  HX_TCALL(HX_ALLOC(&wcpu, nl));
  for (int c = 0; c < 4; c++) HX_TCALL(HX_ALLOC(&w[c], nl));
  for (int32_t e = 0; e < E; e++) {
    axt_random_hex8(&rng, 1.0 + 0.5 * hx_test_rand(&rng), 0.2, v8 + 24 * e);
    axt_hex8_to_hex27(v8 + 24 * e, v27 + 81 * e);
    kap[e] = 1.25 + 0.75 * hx_test_rand(&rng);
    lam[e] = e == 0 ? 0.0 : 0.5 + 0.5 * hx_test_rand(&rng);
  }
  for (int64_t i = 0; i < nl; i++) u[i] = hx_test_rand(&rng);
  for (int32_t e = 0; e < E; e++)
    axt_ref_apply(p, 8, v8 + 24 * e, kap[e], lam[e], u + e * n3, wref + e * n3, NULL);
  const double wmax = axt_maxabs(nl, wref);

  /* 0: hex8 precomputed, 1: hex8 on the fly, 2: hex27 precomputed */
  hx_ax ax[3] = {NULL, NULL, NULL};
  HX_TCALL(hx_ax_create(b, p, E, 8, v8, kap, lam, HX_GEO_PRECOMPUTED, &ax[0]));
  HX_TCALL(hx_ax_create(b, p, E, 8, v8, kap, lam, HX_GEO_ONTHEFLY, &ax[1]));
  HX_TCALL(hx_ax_create(b, p, E, 27, v27, kap, lam, HX_GEO_PRECOMPUTED, &ax[2]));
  HX_ASSERT(hx_ax_num_nodes(ax[0]) == nl && hx_ax_order(ax[0]) == p && hx_ax_num_elements(ax[0]) == E,
            "p=%d: accessors", p);
  for (int c = 0; c < 3; c++) {
    double uw = 0.0;
    if (axt_apply(ax[c], nl, u, w[c], &uw)) return 1;
    /* reference: same quadrature, different code (observed <= 4e-15 for
     * p <= 15; the bound leaves a 25x margin): rounding grows ~ n eps
     * times the size of the terms, which are within ~n^2 of max|w|. */
    const double err = axt_maxdiff(nl, w[c], wref) / wmax;
    HX_ASSERT(err < 1e-13, "p=%d variant %d: max|w - w_ref|/max|w_ref| = %.3e", p, c, err);
    double sabs = 0.0;
    for (int64_t i = 0; i < nl; i++) sabs += fabs(u[i] * w[c][i]);
    const double d = axt_dot(nl, u, w[c]);
    HX_ASSERT(fabs(uw - d) <= 1e-13 * sabs, "p=%d variant %d: fused u.w %.17g vs dot %.17g", p, c, uw, d);
  }
  /* the two geometry modes evaluate the same factors in the same order */
  const double dmode = axt_maxdiff(nl, w[0], w[1]) / wmax;
  HX_ASSERT(dmode < 1e-13, "p=%d: precomputed vs on-the-fly differ by %.3e", p, dmode);
  const double d27 = axt_maxdiff(nl, w[0], w[2]) / wmax;
  if (getenv("AXT_VERBOSE"))
    printf("p=%2d ref err %.2e %.2e %.2e  modes %.2e  hex27 %.2e\n", p, axt_maxdiff(nl, w[0], wref) / wmax,
           axt_maxdiff(nl, w[1], wref) / wmax, axt_maxdiff(nl, w[2], wref) / wmax, dmode, d27);
  HX_ASSERT(d27 < 1e-13, "p=%d: hex8 vs hex27 of the same map differ by %.3e", p, d27);

  /* Poisson (every lambda = 0): the precomputed data drop the mass term */
  {
    double *lam0, *wr0;
    HX_TCALL(HX_ALLOC(&lam0, E));
    HX_TCALL(HX_ALLOC(&wr0, nl));
    for (int32_t e = 0; e < E; e++)
      axt_ref_apply(p, 8, v8 + 24 * e, kap[e], 0.0, u + e * n3, wr0 + e * n3, NULL);
    for (int mode = 0; mode < 2; mode++) {
      hx_ax ax0 = NULL;
      double bpe0, bpe;
      HX_TCALL(hx_ax_create(b, p, E, 8, v8, kap, lam0, (hx_geo_mode)mode, &ax0));
      if (axt_apply(ax0, nl, u, w[3], NULL)) return 1;
      const double err = axt_maxdiff(nl, w[3], wr0) / axt_maxabs(nl, wr0);
      HX_ASSERT(err < 1e-13, "p=%d mode %d lambda=0: max rel error %.3e", p, mode, err);
      hx_ax_cost(ax0, &bpe0, NULL);
      hx_ax_cost(ax[mode], &bpe, NULL);
      HX_ASSERT(mode == 1 ? bpe0 == bpe : bpe0 == bpe - 8.0 * n3, "p=%d mode %d: bytes %g vs %g", p, mode,
                bpe0, bpe);
      HX_TCALL(hx_ax_destroy(&ax0));
    }
    free(lam0);
    free(wr0);
  }

  /* apply_list: elements {E-1, 0}; the others must stay untouched */
  {
    const int32_t list[2] = {E - 1, 0};
    double *du, *dw;
    int32_t *dl;
    HX_TCALL(hx_mem_alloc(b, nl * sizeof(double), (void **)&du));
    HX_TCALL(hx_mem_alloc(b, nl * sizeof(double), (void **)&dw));
    HX_TCALL(hx_mem_alloc(b, sizeof list, (void **)&dl));
    HX_TCALL(hx_mem_to_device(b, du, u, nl * sizeof(double)));
    HX_TCALL(hx_mem_to_device(b, dl, list, sizeof list));
    for (int64_t i = 0; i < nl; i++) w[3][i] = 7.0;
    HX_TCALL(hx_mem_to_device(b, dw, w[3], nl * sizeof(double)));
    for (int mode = 0; mode < 2; mode++) {
      double uw = -1.0;
      HX_TCALL(hx_ax_apply_list(ax[mode], 2, dl, du, dw, &uw));
      HX_TCALL(hx_mem_to_host(b, w[3], dw, nl * sizeof(double)));
      int bad_other = 0, bad_listed = 0;
      for (int32_t e = 0; e < E; e++)
        for (int q = 0; q < n3; q++) {
          const int64_t i = (int64_t)e * n3 + q;
          if (e == 0 || e == E - 1)
            bad_listed += w[3][i] != w[mode][i];
          else
            bad_other += w[3][i] != 7.0;
        }
      HX_ASSERT(bad_listed == 0, "p=%d mode %d: %d listed entries differ from the full apply", p, mode,
                bad_listed);
      HX_ASSERT(bad_other == 0, "p=%d mode %d: %d entries of unlisted elements changed", p, mode, bad_other);
      const double ref =
          axt_dot(n3, u + (int64_t)(E - 1) * n3, w[mode] + (int64_t)(E - 1) * n3) + axt_dot(n3, u, w[mode]);
      HX_ASSERT(hx_test_reldiff(uw, ref, 1e-300) < 1e-13, "p=%d mode %d: list u.w %.17g vs %.17g", p, mode,
                uw, ref);
      double z = -1.0;
      HX_TCALL(hx_ax_apply_list(ax[mode], 0, NULL, du, dw, &z));
      HX_ASSERT(z == 0.0, "p=%d: empty list u.w = %g", p, z);
    }
    HX_TCALL(hx_mem_free(b, (void **)&du));
    HX_TCALL(hx_mem_free(b, (void **)&dw));
    HX_TCALL(hx_mem_free(b, (void **)&dl));
  }

  /* CUDA vs CPU */
  if (bcpu) {
    hx_geo_mode modes[3] = {HX_GEO_PRECOMPUTED, HX_GEO_ONTHEFLY, HX_GEO_PRECOMPUTED};
    for (int c = 0; c < 3; c++) {
      hx_ax axc = NULL;
      HX_TCALL(hx_ax_create(bcpu, p, E, c == 2 ? 27 : 8, c == 2 ? v27 : v8, kap, lam, modes[c], &axc));
      double uwc = 0.0, uwg = 0.0;
      if (axt_apply(axc, nl, u, wcpu, &uwc)) return 1;
      if (axt_apply(ax[c], nl, u, w[c], &uwg)) return 1;
      const double err = axt_maxdiff(nl, w[c], wcpu) / axt_maxabs(nl, wcpu);
      HX_ASSERT(err < 1e-12, "p=%d variant %d: CUDA vs CPU max rel diff %.3e", p, c, err);
      HX_ASSERT(hx_test_reldiff(uwg, uwc, 1e-300) < 1e-12, "p=%d variant %d: CUDA u.w %.17g vs CPU %.17g", p,
                c, uwg, uwc);
      HX_TCALL(hx_ax_destroy(&axc));
    }
  }
  for (int c = 0; c < 3; c++) HX_TCALL(hx_ax_destroy(&ax[c]));
  HX_ASSERT(ax[0] == NULL, "destroy nulls the handle");
  free(v8);
  free(v27);
  free(kap);
  free(lam);
  free(u);
  free(wref);
  free(wcpu);
  for (int c = 0; c < 4; c++) free(w[c]);
  return 0;
}

int main(int argc, char **argv) {
  hx_backend b = NULL, bcpu = NULL;
  const int rc = axt_init_twin(&argc, &argv, &b, &bcpu);
  if (rc) return rc;
  for (int p = 1; p <= 15; p++)
    if (check_order(b, bcpu, p)) break;
  return axt_finish(&b, &bcpu);
}
