/* The FP32 element operator (hx_ax_create_prec, hx_ax_apply_p) against the
 * FP64 one, for p = 1..8 on deformed elements (hex8 vertices moved by up to
 * 15% of h: PRECOMPUTED and ONTHEFLY; curved hex27: PRECOMPUTED), with and
 * without the mass term. u is random and float-representable, so both
 * operators see the same input. Checks:
 *  - HX_F64 through hx_ax_create_prec / hx_ax_apply_p: the bits of
 *    hx_ax_create / hx_ax_apply (w and u.w);
 *  - ||w32 - w64||_inf <= 5e-6 ||w64||_inf and |uw32 - uw64| <= 5e-6
 *    |u| |w|: each factor carries one float rounding (eps_f/2 ~ 6e-8) and each
 *    output ~6n float multiply-adds of terms of similar size; measured
 *    0.4-3.3e-7 (p = 1..8), so 5e-6 (~40 eps_f) is a margin of >10, below the
 *    ~1e-5 an FP32 preconditioner needs to stay a small perturbation;
 *  - symmetry in units of float eps: |x.(A y) - y.(A x)| <=
 *    1 eps_f (|x| |A y| + |y| |A x|) (measured <= 0.05 units: both sides
 *    accumulate the exact float products in double, so the asymmetry is the
 *    float rounding of A's outputs, which averages out in the dot products);
 *  - hx_ax_apply_list_p on a subset = the full apply on those elements (bits);
 *  - hx_ax_apply on an FP32 operator is HX_ERR_ARG;
 *  - with --backend cuda, the FP32 result within 1e-5 of the CPU FP32 one.
 */
#include "ax_test.h"

#include <float.h>

#define EPSF ((double)FLT_EPSILON)

static double nrm2(int64_t n, const double *x) { return sqrt(axt_dot(n, x, x)); }

/* w = A u with a float operator, through host arrays of double (rounded in,
 * widened out) */
static int apply32(hx_ax ax, int64_t nl, const double *hu, double *hw, double *uw) {
  hx_backend b = hx_ax_backend(ax);
  float *fu = malloc(4 * (size_t)(nl + 1)), *fw = malloc(4 * (size_t)(nl + 1));
  for (int64_t i = 0; i < nl; i++) fu[i] = (float)hu[i];
  void *du = NULL, *dw = NULL;
  HX_TCALL(hx_mem_alloc(b, 4 * (size_t)nl, &du));
  HX_TCALL(hx_mem_alloc(b, 4 * (size_t)nl, &dw));
  HX_TCALL(hx_mem_to_device(b, du, fu, 4 * (size_t)nl));
  HX_TCALL(hx_ax_apply_p(ax, du, dw, uw));
  HX_TCALL(hx_mem_to_host(b, fw, dw, 4 * (size_t)nl));
  for (int64_t i = 0; i < nl; i++) hw[i] = fw[i];
  hx_mem_free(b, &du), hx_mem_free(b, &dw);
  free(fu), free(fw);
  return 0;
}

int main(int argc, char **argv) {
  hx_backend b = NULL, cpu = NULL;
  const int rc = axt_init(&argc, &argv, &b);
  if (rc) return rc;
  const int is_cuda = hx_backend_get_kind(b) == HX_BACKEND_CUDA;
  if (is_cuda) HX_TCALL(hx_backend_create("cpu", &cpu));
  const int verbose = getenv("HX_TEST_VERBOSE") != NULL;
  for (int p = 1; p <= 8; p++)
    for (int variant = 0; variant < 4; variant++) {
      /* 0: hex8 precomputed with mass, 1: hex8 precomputed Poisson,
       * 2: hex8 on the fly with mass, 3: hex27 precomputed with mass */
      const int npe = variant == 3 ? 27 : 8;
      const hx_geo_mode mode = variant == 2 ? HX_GEO_ONTHEFLY : HX_GEO_PRECOMPUTED;
      const int32_t E = 11;
      const int n = p + 1, n3 = n * n * n;
      const int64_t nl = (int64_t)E * n3;
      hx_test_rng r = {777 + 31 * p + variant};
      double *v = malloc(sizeof(double) * E * 81), kap[11], lam[11];
      for (int e = 0; e < E; e++) {
        double v8[24];
        axt_random_hex8(&r, 0.25, 0.15, v8);
        if (npe == 8)
          memcpy(v + 24 * e, v8, sizeof v8);
        else {
          axt_hex8_to_hex27(v8, v + 81 * e);
          for (int m = 0; m < 81; m++) v[81 * e + m] += 0.01 * hx_test_rand(&r); /* curved */
        }
        kap[e] = 1.0 + 0.5 * hx_test_rand(&r);
        lam[e] = variant == 1 ? 0.0 : 2.0 + hx_test_rand(&r);
      }
      hx_ax a64 = NULL, a64p = NULL, a32 = NULL, a32c = NULL;
      HX_TCALL(hx_ax_create(b, p, E, npe, v, kap, lam, mode, &a64));
      HX_TCALL(hx_ax_create_prec(b, p, E, npe, v, kap, lam, mode, HX_F64, &a64p));
      HX_TCALL(hx_ax_create_prec(b, p, E, npe, v, kap, lam, mode, HX_F32, &a32));
      HX_ASSERT(hx_ax_precision(a32) == HX_F32 && hx_ax_precision(a64p) == HX_F64, "precision query");
      double *u = malloc(8 * nl), *x = malloc(8 * nl), *w64 = malloc(8 * nl), *w64p = malloc(8 * nl),
             *w32 = malloc(8 * nl), *ax32 = malloc(8 * nl), *wl = malloc(8 * nl);
      for (int64_t i = 0; i < nl; i++) u[i] = (float)hx_test_rand(&r), x[i] = (float)hx_test_rand(&r);
      double uw64, uw64p, uw32;
      if (axt_apply(a64, nl, u, w64, &uw64)) break;
      if (axt_apply(a64p, nl, u, w64p, &uw64p)) break; /* hx_ax_apply on the _prec F64 operator */
      {
        /* and through hx_ax_apply_p */
        double *du = NULL, *dw = NULL, uwq;
        HX_TCALL(hx_mem_alloc(b, 8 * (size_t)nl, (void **)&du));
        HX_TCALL(hx_mem_alloc(b, 8 * (size_t)nl, (void **)&dw));
        HX_TCALL(hx_mem_to_device(b, du, u, 8 * (size_t)nl));
        HX_TCALL(hx_ax_apply_p(a64p, du, dw, &uwq));
        HX_TCALL(hx_mem_to_host(b, wl, dw, 8 * (size_t)nl));
        HX_ASSERT(!memcmp(wl, w64, 8 * (size_t)nl) && uwq == uw64, "p=%d v=%d: apply_p(F64) differs", p,
                  variant);
        HX_ASSERT(hx_ax_apply(a32, du, dw, NULL) == HX_ERR_ARG, "FP64 apply of an FP32 operator accepted");
        hx_error_clear();
        hx_mem_free(b, (void **)&du), hx_mem_free(b, (void **)&dw);
      }
      HX_ASSERT(!memcmp(w64, w64p, 8 * (size_t)nl) && uw64 == uw64p, "p=%d v=%d: create_prec(F64) differs", p,
                variant);
      if (apply32(a32, nl, u, w32, &uw32)) break;
      double err = 0.0;
      for (int64_t i = 0; i < nl; i++) err = fmax(err, fabs(w32[i] - w64[i]));
      const double rel = err / axt_maxabs(nl, w64);
      const double uwrel = fabs(uw32 - uw64) / (nrm2(nl, u) * nrm2(nl, w64));
      HX_ASSERT(rel <= 5e-6, "p=%d variant %d: FP32 vs FP64 max relative difference %.3g", p, variant, rel);
      HX_ASSERT(uwrel <= 5e-6, "p=%d variant %d: FP32 u.w %.17g vs %.17g", p, variant, uw32, uw64);
      /* symmetry in units of eps_f */
      double xy, yx;
      if (apply32(a32, nl, x, ax32, NULL)) break;
      xy = axt_dot(nl, x, w32);  /* x . A u */
      yx = axt_dot(nl, u, ax32); /* u . A x */
      const double scale = EPSF * (nrm2(nl, x) * nrm2(nl, w32) + nrm2(nl, u) * nrm2(nl, ax32));
      const double units = fabs(xy - yx) / scale;
      HX_ASSERT(units <= 1.0, "p=%d variant %d: FP32 asymmetry %.3g eps_f units (> 1)", p, variant, units);
      /* list apply on the odd elements = the full apply there */
      {
        int32_t list[11], nlist = 0;
        for (int32_t e = 1; e < E; e += 2) list[nlist++] = e;
        int32_t *dlist = NULL;
        float *fu = malloc(4 * nl), *fw = malloc(4 * nl);
        void *du = NULL, *dw = NULL;
        for (int64_t i = 0; i < nl; i++) fu[i] = (float)u[i];
        HX_TCALL(hx_mem_alloc(b, sizeof list, (void **)&dlist));
        HX_TCALL(hx_mem_to_device(b, dlist, list, sizeof(int32_t) * nlist));
        HX_TCALL(hx_mem_alloc(b, 4 * (size_t)nl, &du));
        HX_TCALL(hx_mem_alloc(b, 4 * (size_t)nl, &dw));
        HX_TCALL(hx_mem_to_device(b, du, fu, 4 * (size_t)nl));
        HX_TCALL(hx_mem_zero(b, dw, 4 * (size_t)nl));
        double uwl;
        HX_TCALL(hx_ax_apply_list_p(a32, nlist, dlist, du, dw, &uwl));
        HX_TCALL(hx_mem_to_host(b, fw, dw, 4 * (size_t)nl));
        int bad = 0;
        for (int32_t e = 0; e < E; e++)
          for (int q = 0; q < n3; q++) {
            const double want = (e & 1) ? w32[(int64_t)e * n3 + q] : 0.0;
            bad += (double)fw[(int64_t)e * n3 + q] != want;
          }
        HX_ASSERT(!bad, "p=%d variant %d: FP32 list apply differs from the full apply on %d entries", p,
                  variant, bad);
        hx_mem_free(b, (void **)&dlist), hx_mem_free(b, &du), hx_mem_free(b, &dw);
        free(fu), free(fw);
      }
      if (is_cuda) {
        HX_TCALL(hx_ax_create_prec(cpu, p, E, npe, v, kap, lam, mode, HX_F32, &a32c));
        double uwc;
        if (apply32(a32c, nl, u, wl, &uwc)) break;
        const double d = axt_maxdiff(nl, wl, w32) / axt_maxabs(nl, wl);
        HX_ASSERT(d <= 1e-5, "p=%d variant %d: cuda FP32 vs cpu FP32 %.3g", p, variant, d);
        hx_ax_destroy(&a32c);
      }
      if (verbose)
        printf("p=%d variant %d: rel %.3g uw %.3g asym %.3g eps_f\n", p, variant, rel, uwrel, units);
      hx_ax_destroy(&a64), hx_ax_destroy(&a64p), hx_ax_destroy(&a32);
      free(v), free(u), free(x), free(w64), free(w64p), free(w32), free(ax32), free(wl);
    }
  if (cpu) hx_backend_destroy(&cpu);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
