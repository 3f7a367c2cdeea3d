/* The element operator with kappa and lambda given at the GLL nodes
 * (hx_ax_opts h_kappa_node / h_lambda_node, issue 29) against an
 * independent node-by-node reference (tests/ax/ax_test.h's quadrature with
 * the coefficient taken per node): kappa varies by a factor of 101 inside
 * an element, lambda by 3; affine, trilinear and curved triquadratic
 * elements; affine detection on and off, split geometry, FP32 (its scaled
 * affine record, bytes per element, and agreement with FP64 within float
 * rounding, with and without the mass term), the diagonal (against the reference applied to unit vectors)
 * and the lumped mass. Elements whose node values are all equal must keep
 * the affine record and give the bits of the per-element operator; on the
 * fly must refuse varying values. Run with --backend cuda for the device
 * kernels and with HEXCG_CPU_ISA=generic for the portable CPU twin. */
#include "../ax/ax_test.h"

static void *upload(hx_backend b, size_t bytes, const void *h) {
  void *d = NULL;
  if (hx_mem_alloc(b, bytes + 8, &d)) return NULL;
  if (bytes && hx_mem_to_device(b, d, h, bytes)) return NULL;
  return d;
}

/* elements: 0 affine, 1 trilinear deformed, 2 affine with constant node
 * values, 3 trilinear deformed; the hex27 set: the same maps as hex27 plus
 * curved elements */
static int check_order(hx_backend b, int p) {
  const int n = p + 1, n3 = n * n * n;
  const int32_t E = 5;
  const int64_t nl = (int64_t)E * n3;
  hx_test_rng rng = {0x51ed2701ull + (uint64_t)p};
  double *v8, *v27, *kn, *ln, *u, *wref, *w, *diag, *mass, *kap, *lam;
  HX_TCALL(HX_ALLOC(&v8, E * 24));
  HX_TCALL(HX_ALLOC(&v27, E * 81));
  HX_TCALL(HX_ALLOC(&kn, nl));
  HX_TCALL(HX_ALLOC(&ln, nl));
  HX_TCALL(HX_ALLOC(&u, nl));
  HX_TCALL(HX_ALLOC(&wref, nl));
  HX_TCALL(HX_ALLOC(&w, nl));
  HX_TCALL(HX_ALLOC(&diag, nl));
  HX_TCALL(HX_ALLOC(&mass, nl));
  HX_TCALL(HX_ALLOC(&kap, E));
  HX_TCALL(HX_ALLOC(&lam, E));
  double tg[AXT_NMAX], wg[AXT_NMAX];
  hx_gll(n, tg, wg);
  for (int32_t e = 0; e < E; e++) {
    double a[3][3];
    if (e == 0 || e == 2)
      axt_random_affine(&rng, v8 + 24 * e, a);
    else
      axt_random_hex8(&rng, 1.0 + 0.5 * hx_test_rand(&rng), 0.2, v8 + 24 * e);
    axt_hex8_to_hex27(v8 + 24 * e, v27 + 81 * e);
    if (e == 4) axt_random_hex27(&rng, 1.0, 0.08, v27 + 81 * e); /* curved (hex27 set only) */
    for (int q = 0; q < n3; q++) {
      const double r = 0.5 * (1.0 + tg[q % n]), s = 0.5 * (1.0 + tg[(q / n) % n]), t = 0.5 * (1.0 + tg[q / (n * n)]);
      kn[(int64_t)e * n3 + q] = e == 2 ? 3.5 : 1.0 + 100.0 * r * r * s * s * (0.5 + 0.5 * t);
      ln[(int64_t)e * n3 + q] = e == 2 ? 0.75 : 1.0 + 2.0 * r * t * t;
    }
    kap[e] = 3.5, lam[e] = 0.75;
  }
  for (int64_t i = 0; i < nl; i++) u[i] = hx_test_rand(&rng) - 0.5;

  for (int set = 0; set < 2; set++) { /* 0: hex8 (elements 0..3), 1: hex27 (all 5) */
    const int npe = set ? 27 : 8;
    const int32_t Es = set ? E : 4;
    const int64_t nls = (int64_t)Es * n3;
    const double *v = set ? v27 : v8;
    for (int32_t e = 0; e < Es; e++)
      axt_ref_apply_node(p, npe, v + (size_t)e * npe * 3, 0.0, 0.0, kn + (int64_t)e * n3,
                         ln + (int64_t)e * n3, u + (int64_t)e * n3, wref + (int64_t)e * n3, NULL);
    const double wmax = axt_maxabs(nls, wref);
    /* variants: 0 default (affine detection), 1 affine off, 2 split */
    for (int var = 0; var < 3; var++) {
      hx_ax_opts o = hx_ax_opts_default();
      o.affine = var != 1;
      o.geometry = var == 2 ? HX_AX_GEO_SPLIT : HX_AX_GEO_FP64;
      o.h_kappa_node = kn, o.h_lambda_node = ln;
      hx_ax ax;
      HX_TCALL(hx_ax_create_opts(b, p, Es, npe, v, NULL, NULL, &o, &ax));
      int32_t na, ns, ng;
      hx_ax_storage_counts(ax, &na, &ns, &ng);
      /* the affine elements 0 (varying: the scaled record, AFV) and 2
       * (constant node values: the plain affine record) */
      const int32_t want_aff = var == 1 ? 0 : 2;
      HX_ASSERT(na == want_aff, "p=%d set %d variant %d: %d affine records, expected %d", p, set, var, na,
                want_aff);
      if (var == 0) {
        /* storage: the scaled affine record costs 8 doubles + kappa and lambda per node */
        double bytes, flops;
        hx_ax_cost(ax, &bytes, &flops);
        const double gen = 8.0 * 7 * n3, afv = 8.0 * 8 + 8.0 * 2 * n3, aff = 8.0 * 8;
        const double want = 16.0 * n3 + (set ? (3 * gen + afv + aff) / 5 : (gen + afv + aff + gen) / 4);
        HX_ASSERT(fabs(bytes - want) < 1e-9 * want, "p=%d set %d: %.1f bytes per element, expected %.1f", p, set,
                  bytes, want);
      }
      double uw;
      if (axt_apply(ax, nls, u, w, &uw)) return 1;
      /* split: FP32 deviations of the per-node factors, relative to the
       * factor's mean; with kappa varying by 100 within an element the
       * deviations are as large as the mean, so the bound is float rounding
       * times the contrast-weighted terms (observed ~1e-7) */
      const double tol = var == 2 ? 2e-7 : 1e-13;
      const double err = axt_maxdiff(nls, w, wref) / wmax;
      if (getenv("AXT_VERBOSE")) printf("p=%d set %d var %d err %.2e\n", p, set, var, err);
      HX_ASSERT(err < tol, "p=%d set %d variant %d: max|w - w_ref|/max|w_ref| = %.3e (tol %.0e)", p, set, var,
                err, tol);
      const double d = axt_dot(nls, u, w);
      double sabs = 0.0;
      for (int64_t i = 0; i < nls; i++) sabs += fabs(u[i] * w[i]);
      HX_ASSERT(fabs(uw - d) <= 1e-13 * sabs, "p=%d: fused u.w %.17g vs %.17g", p, uw, d);
      if (var == 0) {
        /* diagonal: the reference applied to unit vectors (p <= 4: n^3 applies) */
        HX_TCALL(hx_ax_diagonal(ax, diag));
        HX_TCALL(hx_ax_mass(ax, mass));
        if (p <= 4) {
          double *ei, *wi;
          HX_TCALL(HX_ALLOC(&ei, n3));
          HX_TCALL(HX_ALLOC(&wi, n3));
          double dmax = 0.0, derr = 0.0;
          for (int32_t e = 0; e < Es; e++)
            for (int q = 0; q < n3; q++) {
              for (int r = 0; r < n3; r++) ei[r] = r == q;
              axt_ref_apply_node(p, npe, v + (size_t)e * npe * 3, 0.0, 0.0, kn + (int64_t)e * n3,
                                 ln + (int64_t)e * n3, ei, wi, NULL);
              dmax = fmax(dmax, fabs(wi[q]));
              derr = fmax(derr, fabs(wi[q] - diag[(int64_t)e * n3 + q]));
            }
          HX_ASSERT(derr < 1e-13 * dmax, "p=%d set %d: diagonal off by %.3e (max %.3e)", p, set, derr, dmax);
          free(ei), free(wi);
        }
        /* mass: w |J| without any coefficient: the sum over an element is its volume */
        for (int32_t e = 0; e < Es; e++) {
          double vol = 0.0;
          for (int q = 0; q < n3; q++) vol += mass[(int64_t)e * n3 + q];
          const double ref = axt_volume(npe, v + (size_t)e * npe * 3, 8);
          if (p >= 2 && e < 4) /* GLL with n >= 3 points integrates the trilinear |J| (degree 2) */
            HX_ASSERT(fabs(vol - ref) < 1e-12 * ref, "p=%d set %d element %d: mass sum %.17g vs volume %.17g", p,
                      set, e, vol, ref);
        }
      }
      HX_TCALL(hx_ax_destroy(&ax));
    }
    /* FP32 (the preconditioners' operator), with the mass term (kappa and
     * lambda vary: ncomp 7) and without (Poisson, kappa varies: ncomp 6):
     * the affine element with varying coefficients keeps the scaled affine
     * record (AFV: 8 floats, then 1 float per node per varying coefficient,
     * where the general record takes ncomp), and the FP32 operator agrees with
     * the FP64 one (the same records rounded to float, the same per-node
     * math) to float rounding */
    for (int withmass = 1; withmass >= 0; withmass--) {
      hx_ax_opts o = hx_ax_opts_default();
      o.h_kappa_node = kn, o.h_lambda_node = withmass ? ln : NULL;
      hx_ax ax, a64;
      HX_TCALL(hx_ax_create_opts_prec(b, p, Es, npe, v, NULL, NULL, &o, HX_F32, &ax));
      HX_TCALL(hx_ax_create_opts(b, p, Es, npe, v, NULL, NULL, &o, &a64));
      int32_t na, ns, ng;
      hx_ax_storage_counts(ax, &na, &ns, &ng);
      HX_ASSERT(na == 2 && ns == 0 && ng == Es - 2,
                "p=%d set %d FP32 mass %d: %d affine, %d split, %d general records, expected 2, 0, %d", p,
                set, withmass, na, ns, ng, Es - 2);
      /* bytes per element: u and w 4 B per node each, then the records
       * (general 4 ncomp per node, AFV 4 * 8 + 4 nv per node, AFF 4 * 8) */
      const double nc = withmass ? 7.0 : 6.0, nv = withmass ? 2.0 : 1.0;
      const double gen = 4.0 * nc * n3, afv = 4.0 * 8 + 4.0 * nv * n3, aff = 4.0 * 8;
      const double want = 8.0 * n3 + (set ? (3 * gen + afv + aff) / 5 : (gen + afv + aff + gen) / 4);
      double bytes, flops;
      hx_ax_cost(ax, &bytes, &flops);
      HX_ASSERT(fabs(bytes - want) < 1e-9 * want,
                "p=%d set %d FP32 mass %d: %.1f bytes per element, expected %.1f", p, set, withmass, bytes,
                want);
      if (p == 7 && set == 0 && getenv("AXT_VERBOSE"))
        printf("p=7 FP32 mass %d: AFV record %.0f B (%.2f B/node), general %.0f B\n", withmass, afv, afv / n3,
               gen);
      /* FP64 reference: the FP64 operator on the same input */
      double *w64;
      HX_TCALL(HX_ALLOC(&w64, nls));
      if (axt_apply(a64, nls, u, w64, NULL)) return 1;
      const double wmax64 = axt_maxabs(nls, w64);
      float *uf, *wf;
      HX_TCALL(HX_ALLOC(&uf, nls));
      HX_TCALL(HX_ALLOC(&wf, nls));
      for (int64_t i = 0; i < nls; i++) uf[i] = (float)u[i];
      void *du = upload(b, 4 * (size_t)nls, uf), *dw = upload(b, 4 * (size_t)nls, wf);
      HX_ASSERT(du && dw, "upload");
      HX_TCALL(hx_ax_apply_p(ax, du, dw, NULL));
      HX_TCALL(hx_mem_to_host(b, wf, dw, 4 * (size_t)nls));
      double err = 0.0, err0 = 0.0;
      for (int64_t i = 0; i < nls; i++) {
        const double d = fabs((double)wf[i] - w64[i]);
        err = fmax(err, d);
        if (i < n3) err0 = fmax(err0, d); /* element 0: the AFV record */
      }
      err /= wmax64, err0 /= wmax64;
      if (getenv("AXT_VERBOSE"))
        printf("p=%d set %d FP32 mass %d: vs FP64 %.2e (AFV element %.2e)\n", p, set, withmass, err, err0);
      /* each output is a sum of about 3n + 1 terms (three contractions of
       * n terms of fluxes, themselves sums of 3 products of an n-term
       * gradient and a factor (w_q kappa_q) m_c), every quantity rounded to
       * float once per operation: with eps_f = 2^-24 = 6e-8, about
       * (2n + 6) eps_f relative to the largest terms, which the affine
       * elements' kappa contrast of 101 and the derivative matrix (|D| ~ n^2/4
       * at the ends) leave within a few max|w|: 5e-6 at p = 12 (n = 13:
       * 32 eps_f = 1.9e-6, times 2.5); observed <= 3e-7. Above 1e-10: it
       * really rounded in float (the FP64 operator would agree to 1e-15). */
      HX_ASSERT(err < 5e-6 && err0 < 5e-6,
                "p=%d set %d FP32 mass %d: relative difference to FP64 %.3e (AFV %.3e)", p, set, withmass,
                err, err0);
      HX_ASSERT(err0 > 1e-10,
                "p=%d set %d FP32 mass %d: AFV element within %.3e of FP64: not rounded in float?", p, set,
                withmass, err0);
      if (withmass) {
        /* and the independent quadrature reference (float rounding of u,
         * the factors and the sums, as above plus the FP64 operator's own
         * 1e-13) */
        double eref = 0.0;
        for (int64_t i = 0; i < nls; i++) eref = fmax(eref, fabs((double)wf[i] - wref[i]));
        eref /= wmax;
        HX_ASSERT(eref < 5e-6, "p=%d set %d FP32: relative error %.3e against the reference", p, set, eref);
      }
      hx_mem_free(b, &du), hx_mem_free(b, &dw);
      free(uf), free(wf), free(w64);
      HX_TCALL(hx_ax_destroy(&ax));
      HX_TCALL(hx_ax_destroy(&a64));
    }
  }

  /* constant node values everywhere: the same bits as the per-element operator */
  {
    double *kc, *lc, *w2;
    HX_TCALL(HX_ALLOC(&kc, nl));
    HX_TCALL(HX_ALLOC(&lc, nl));
    HX_TCALL(HX_ALLOC(&w2, nl));
    for (int32_t e = 0; e < 4; e++)
      for (int q = 0; q < n3; q++) kc[(int64_t)e * n3 + q] = 1.0 + e, lc[(int64_t)e * n3 + q] = 0.5 * e;
    const double kk[4] = {1, 2, 3, 4}, ll[4] = {0, 0.5, 1.0, 1.5};
    hx_ax a1, a2;
    hx_ax_opts o = hx_ax_opts_default();
    o.h_kappa_node = kc, o.h_lambda_node = lc;
    HX_TCALL(hx_ax_create_opts(b, p, 4, 8, v8, NULL, NULL, &o, &a1));
    HX_TCALL(hx_ax_create(b, p, 4, 8, v8, kk, ll, HX_GEO_PRECOMPUTED, &a2));
    const int64_t nl4 = 4 * (int64_t)n3;
    if (axt_apply(a1, nl4, u, w, NULL) || axt_apply(a2, nl4, u, w2, NULL)) return 1;
    for (int64_t i = 0; i < nl4; i++) HX_ASSERT(w[i] == w2[i], "p=%d: constant node values change the bits at %lld", p, (long long)i);
    HX_TCALL(hx_ax_destroy(&a1));
    HX_TCALL(hx_ax_destroy(&a2));
    /* on the fly: varying values refused, constant ones accepted */
    o.mode = HX_GEO_ONTHEFLY;
    HX_TCALL(hx_ax_create_opts(b, p, 4, 8, v8, NULL, NULL, &o, &a1));
    HX_TCALL(hx_ax_destroy(&a1));
    o.h_kappa_node = kn, o.h_lambda_node = ln;
    const int ierr = hx_ax_create_opts(b, p, 4, 8, v8, NULL, NULL, &o, &a1);
    HX_ASSERT(ierr == HX_ERR_INPUT && strstr(hx_error_message(), "on-the-fly"),
              "p=%d: on the fly with varying kappa gave %d (%s)", p, ierr, hx_error_message());
    hx_error_clear();
    /* a non-positive kappa at one node */
    kc[3 * n3 + n3 / 2] = 0.0;
    o.mode = HX_GEO_PRECOMPUTED, o.h_kappa_node = kc, o.h_lambda_node = NULL;
    const int ierr2 = hx_ax_create_opts(b, p, 4, 8, v8, NULL, NULL, &o, &a1);
    HX_ASSERT(ierr2 == HX_ERR_INPUT && strstr(hx_error_message(), "kappa = 0 must be positive"),
              "p=%d: kappa 0 at a node gave %d (%s)", p, ierr2, hx_error_message());
    hx_error_clear();
    free(kc), free(lc), free(w2);
  }
  free(v8), free(v27), free(kn), free(ln), free(u), free(wref), free(w), free(diag), free(mass), free(kap), free(lam);
  return 0;
}

int main(int argc, char **argv) {
  hx_backend b;
  int rc = axt_init(&argc, &argv, &b);
  if (rc) return rc;
  const int orders[] = {1, 2, 3, 4, 5, 7, 9, 12};
  for (size_t i = 0; i < sizeof orders / sizeof orders[0] && !rc; i++) rc = check_order(b, orders[i]);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return rc ? rc : hx_test_result();
}
