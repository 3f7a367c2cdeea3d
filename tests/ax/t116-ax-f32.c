/* The FP32 element operator's storage kinds, fused scatter and p = 7 kernel
 * (issue 14; kernels/ax_prec.c, cpu/ax_f32_cpu.c, cpu/ax_f32_avx2_8.h,
 * cuda/ax_f32_cuda.cu), for p = 1..8 on two 6 x 2 x 2 meshes of the unit
 * cube: a box (every element affine: 7 float constants each) and a Kershaw
 * mesh (eps = 0.3; the map is piecewise linear in y and z with x-dependent
 * slopes, so most elements are trilinear non-affine: per-node floats; the
 * rest affine). Odd p have the mass term (ncomp = 7), even p are Poisson
 * (ncomp = 6). u is random and float-representable. Checks:
 *  - the FP32 storage counts equal the FP64 ones (same affine detection; no
 *    split kind in FP32): all affine on the box, a mix on the Kershaw mesh;
 *  - FP32 vs FP64: ||w32 - w64||_inf <= 5e-6 ||w64||_inf and
 *    |uw32 - uw64| <= 5e-6 |u| |w64|: each factor carries a few float
 *    roundings (eps_f/2 = 6e-8 each) and each output ~6n float multiply-adds
 *    of terms of similar size; t114 measured 0.4-3.3e-7 on random elements,
 *    this mesh 1-4e-7, so 5e-6 (~40 eps_f) leaves a margin >10 and stays
 *    below the ~1e-5 an FP32 preconditioner needs;
 *  - affine records vs the general per-node records (hx_ax_opts.affine = 0)
 *    of the same FP32 operator: ||w_aff - w_gen||_inf <= 2e-6 ||w_gen||_inf:
 *    the two differ in the rounding of the factors only (fl(fl(w_q) m)
 *    against fl(G_q): <= 4 roundings per factor, ~2.4e-7 relative), which
 *    the contractions carry like the FP32 error above (measured ~1e-7);
 *  - at p = 3 and 7 with AVX2+FMA (the hand-written kernels) against the generic
 *    FP32 loop (HEXCG_CPU_ISA=generic at creation): <= 2e-6 ||w||_inf (same
 *    float data; even-odd and register-blocked sums in another order, ~n
 *    roundings of terms of similar size); at p = 3 where the CPU has AVX-512,
 *    its kernel (a plane per vector) bit for bit the AVX2 one's;
 *  - fused scatter: hx_ax_apply_list_g_p from a G-vector through the map
 *    (every 7th entry set to -1) = the host scatter followed by
 *    hx_ax_apply_list_p, w and u.w bit for bit (the kernel runs the same
 *    float operations on the same values, only their source differs), for
 *    the full list (d_list NULL) and a shuffled list; for an FP64 operator
 *    hx_ax_apply_list_g_p is hx_ax_apply_list_g (bits);
 *  - lists of 0, 1, 7, E-1 and E elements in shuffled order: the listed
 *    elements get the full apply's bits, the others keep a sentinel; u.w =
 *    sum over the list of u_e.w_e computed here in double from the float
 *    values, to 1e-12 relative to sum |u_e||w_e| (exact float products,
 *    summed in another order: ~n3 E eps_d);
 *  - with --backend cuda, FP32 cuda vs FP32 cpu within 1e-5 (other
 *    summation order and contraction into FMA). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "ax_test.h"
#include "hx_gs.h"
#include "hx_mesh.h"

enum { NX = 6, NY = 2, NZ = 2, E = NX * NY * NZ };

static void make_mesh(int kershaw, double *v) {
  for (int e = 0; e < E; e++) {
    const int ex = e % NX, ey = (e / NX) % NY, ez = e / (NX * NY);
    for (int q = 0; q < 8; q++) {
      const double x[3] = {(double)(ex + (q & 1)) / NX, (double)(ey + ((q >> 1) & 1)) / NY,
                           (double)(ez + ((q >> 2) & 1)) / NZ};
      double X[3] = {x[0], x[1], x[2]};
      if (kershaw) hx_mesh_kershaw_map(0.3, x, X);
      for (int c = 0; c < 3; c++) v[24 * e + 3 * q + c] = X[c];
    }
  }
}

/* device copy of n floats (or int32) */
static void *upload(hx_backend b, size_t bytes, const void *h) {
  void *d = NULL;
  if (hx_mem_alloc(b, bytes + 4, &d)) return NULL;
  if (bytes && hx_mem_to_device(b, d, h, bytes)) return NULL;
  return d;
}

/* w = A u on the listed elements (list NULL: all) of a float operator, w
 * pre-filled with the sentinel; host float arrays. map != NULL: fused, u a
 * G-vector of ng entries. */
/* an FP32 operator made with HEXCG_CPU_ISA=isa (restored after) */
static int create_isa(hx_backend b, int p, const double *v, const double *kap, const double *lam, const char *isa,
                      hx_ax *out) {
  hx_test_env_keep keep;
  hx_test_env_push("HEXCG_CPU_ISA", isa, &keep);
  const int ierr = hx_ax_create_prec(b, p, E, 8, v, kap, lam, HX_GEO_PRECOMPUTED, HX_F32, out);
  hx_test_env_pop("HEXCG_CPU_ISA", &keep);
  return ierr;
}

static int apply32(hx_ax ax, int32_t nlist, const int32_t *list, const int32_t *map, int64_t nu, const float *u,
                   int64_t nl, float *w, double *uw) {
  hx_backend b = hx_ax_backend(ax);
  for (int64_t i = 0; i < nl; i++) w[i] = 12345.0f;
  void *du = upload(b, 4 * (size_t)nu, u), *dw = upload(b, 4 * (size_t)nl, w);
  void *dl = list ? upload(b, 4 * (size_t)nlist, list) : NULL, *dm = map ? upload(b, 4 * (size_t)nl, map) : NULL;
  HX_ASSERT(du && dw && (!list || dl) && (!map || dm), "upload failed");
  if (map)
    HX_TCALL(hx_ax_apply_list_g_p(ax, nlist, dl, dm, du, dw, uw));
  else if (list)
    HX_TCALL(hx_ax_apply_list_p(ax, nlist, dl, du, dw, uw));
  else
    HX_TCALL(hx_ax_apply_p(ax, du, dw, uw));
  HX_TCALL(hx_mem_to_host(b, w, dw, 4 * (size_t)nl));
  hx_mem_free(b, &du), hx_mem_free(b, &dw), hx_mem_free(b, &dl), hx_mem_free(b, &dm);
  return 0;
}

static double maxabs_f(int64_t n, const float *x) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)x[i]));
  return m;
}
static double maxdiff_f(int64_t n, const float *x, const float *y) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)x[i] - (double)y[i]));
  return m;
}

static void shuffle(hx_test_rng *r, int32_t *a, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)((hx_test_rand(r) + 1.0) * 0.5 * (i + 1));
    if (j > i) j = i;
    const int32_t t = a[i];
    a[i] = a[j], a[j] = t;
  }
}

static int run(hx_backend b, hx_backend cpu, int p, int kershaw, int verbose) {
  const int n = p + 1, n3 = n * n * n;
  const int64_t nl = (int64_t)E * n3;
  hx_test_rng r = {4242 + 17 * p + kershaw};
  double v[24 * E], kap[E], lam[E];
  make_mesh(kershaw, v);
  for (int e = 0; e < E; e++) kap[e] = 1.0 + 0.5 * hx_test_rand(&r), lam[e] = p % 2 ? 2.0 + hx_test_rand(&r) : 0.0;
  const char *mesh = kershaw ? "kershaw" : "box";
  hx_ax a64 = NULL, a32 = NULL, a32g = NULL;
  hx_ax_opts og = hx_ax_opts_default();
  og.affine = 0;
  HX_TCALL(hx_ax_create(b, p, E, 8, v, kap, lam, HX_GEO_PRECOMPUTED, &a64));
  HX_TCALL(hx_ax_create_prec(b, p, E, 8, v, kap, lam, HX_GEO_PRECOMPUTED, HX_F32, &a32));
  HX_TCALL(hx_ax_create_opts_prec(b, p, E, 8, v, kap, lam, &og, HX_F32, &a32g));
  /* storage kinds */
  int32_t a64n[3], a32n[3], ggn[3];
  hx_ax_storage_counts(a64, &a64n[0], &a64n[1], &a64n[2]);
  hx_ax_storage_counts(a32, &a32n[0], &a32n[1], &a32n[2]);
  hx_ax_storage_counts(a32g, &ggn[0], &ggn[1], &ggn[2]);
  HX_ASSERT(a32n[0] == a64n[0] && a32n[1] == 0 && a32n[2] == E - a64n[0],
            "p=%d %s: FP32 storage %d/%d/%d vs FP64 %d/%d/%d", p, mesh, a32n[0], a32n[1], a32n[2], a64n[0],
            a64n[1], a64n[2]);
  HX_ASSERT(kershaw ? (a32n[0] > 0 && a32n[0] < E) : a32n[0] == E, "p=%d %s: %d affine elements of %d", p, mesh,
            a32n[0], E);
  HX_ASSERT(ggn[0] == 0 && ggn[2] == E, "p=%d %s: affine = 0 still stores %d affine", p, mesh, ggn[0]);

  float *u = malloc(4 * (size_t)nl), *w32 = malloc(4 * (size_t)nl), *wg = malloc(4 * (size_t)nl),
        *wx = malloc(4 * (size_t)nl);
  double *ud = malloc(8 * (size_t)nl), *w64 = malloc(8 * (size_t)nl);
  for (int64_t i = 0; i < nl; i++) u[i] = (float)hx_test_rand(&r), ud[i] = u[i];
  double uw64, uw32, uwg;
  if (axt_apply(a64, nl, ud, w64, &uw64)) return 1;
  if (apply32(a32, E, NULL, NULL, nl, u, nl, w32, &uw32)) return 1;
  double err = 0.0, nu = 0.0, nw = 0.0;
  for (int64_t i = 0; i < nl; i++) {
    err = fmax(err, fabs(w32[i] - w64[i]));
    nu += ud[i] * ud[i], nw += w64[i] * w64[i];
  }
  const double rel = err / axt_maxabs(nl, w64), uwrel = fabs(uw32 - uw64) / sqrt(nu * nw);
  HX_ASSERT(rel <= 5e-6, "p=%d %s: FP32 vs FP64 %.3g", p, mesh, rel);
  HX_ASSERT(uwrel <= 5e-6, "p=%d %s: FP32 u.w %.17g vs FP64 %.17g", p, mesh, uw32, uw64);
  /* affine records vs general */
  if (apply32(a32g, E, NULL, NULL, nl, u, nl, wg, &uwg)) return 1;
  const double relg = maxdiff_f(nl, w32, wg) / maxabs_f(nl, wg);
  HX_ASSERT(relg <= 2e-6, "p=%d %s: FP32 affine vs general records %.3g", p, mesh, relg);
  /* the AVX2 p = 3 and 7 kernels against the generic FP32 loop; at p = 3
   * the AVX-512 kernel against the AVX2 one, bit for bit */
  double relk = 0.0;
  if ((p == 3 || p == 7) && hx_backend_get_kind(b) == HX_BACKEND_CPU) {
    hx_ax ag = NULL;
    HX_TCALL(create_isa(b, p, v, kap, lam, "generic", &ag));
    if (apply32(ag, E, NULL, NULL, nl, u, nl, wx, NULL)) return 1;
    relk = maxdiff_f(nl, w32, wx) / maxabs_f(nl, wx);
    HX_ASSERT(relk <= 2e-6, "p=%d %s: AVX2 kernel vs generic FP32 loop %.3g", p, mesh, relk);
    hx_ax_destroy(&ag);
    if (p == 3 && !strcmp(hx_cpu_kernels_name(), "avx512+avx2+fma")) {
      HX_TCALL(create_isa(b, p, v, kap, lam, "avx2", &ag));
      if (apply32(ag, E, NULL, NULL, nl, u, nl, wx, NULL)) return 1;
      HX_ASSERT(!memcmp(w32, wx, sizeof(float) * (size_t)nl), "p=3 %s: the AVX-512 kernel's bits differ from the AVX2 kernel's", mesh);
      hx_ax_destroy(&ag);
      printf("p=3 %s: AVX-512 = AVX2 bit for bit\n", mesh);
    }
  }
  /* lists of several lengths, shuffled: bits of the full apply, the rest
   * untouched, u.w against a double sum here */
  const int32_t lens[5] = {0, 1, 7, E - 1, E};
  for (int li = 0; li < 5; li++) {
    int32_t list[E];
    for (int e = 0; e < E; e++) list[e] = e;
    shuffle(&r, list, E);
    const int32_t m = lens[li];
    double uwl;
    if (apply32(a32, m, list, NULL, nl, u, nl, wx, &uwl)) return 1;
    char in[E] = {0};
    double ref = 0.0, scale = 0.0;
    for (int k = 0; k < m; k++) {
      const int64_t e = list[k];
      in[e] = 1;
      double s = 0.0, su = 0.0, sw = 0.0;
      for (int q = 0; q < n3; q++) {
        const double a = u[e * n3 + q], c = w32[e * n3 + q];
        s += a * c, su += a * a, sw += c * c;
      }
      ref += s, scale += sqrt(su * sw);
    }
    int bad = 0;
    for (int e = 0; e < E; e++)
      for (int q = 0; q < n3; q++) {
        const float want = in[e] ? w32[(int64_t)e * n3 + q] : 12345.0f;
        bad += memcmp(&wx[(int64_t)e * n3 + q], &want, 4) != 0;
      }
    HX_ASSERT(!bad, "p=%d %s: list of %d: %d entries differ from the full apply / sentinel", p, mesh, (int)m, bad);
    HX_ASSERT(m == 0 ? uwl == 0.0 : fabs(uwl - ref) <= 1e-12 * scale, "p=%d %s: list of %d: u.w %.17g vs %.17g",
              p, mesh, (int)m, uwl, ref);
  }
  /* fused scatter: G-vector through the box's L->G map with holes */
  {
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)nl);
    int32_t *map = malloc(4 * (size_t)nl), list[E];
    HX_TCALL(hx_gs_box_ids(NX, NY, NZ, p, 0, E, ids));
    int64_t ng = 0;
    for (int64_t i = 0; i < nl; i++) ng = ids[i] > ng ? ids[i] : ng;
    for (int64_t i = 0; i < nl; i++) map[i] = i % 7 == 3 ? -1 : (int32_t)(ids[i] - 1);
    float *g = malloc(4 * (size_t)(ng + 1)), *ul = malloc(4 * (size_t)nl), *wf = malloc(4 * (size_t)nl);
    for (int64_t i = 0; i < ng; i++) g[i] = (float)hx_test_rand(&r);
    for (int64_t i = 0; i < nl; i++) ul[i] = map[i] >= 0 ? g[map[i]] : 0.0f;
    for (int e = 0; e < E; e++) list[e] = e;
    shuffle(&r, list, E);
    for (int pass = 0; pass < 2; pass++) {
      const int32_t m = pass ? E / 2 + 1 : E, *lp = pass ? list : NULL;
      double uwf, uwu;
      if (apply32(a32, m, lp, map, ng, g, nl, wf, &uwf)) return 1;
      if (lp ? apply32(a32, m, lp, NULL, nl, ul, nl, wx, &uwu) : apply32(a32, E, NULL, NULL, nl, ul, nl, wx, &uwu))
        return 1;
      HX_ASSERT(!memcmp(wf, wx, 4 * (size_t)nl) && uwf == uwu, "p=%d %s: fused scatter (%s) differs: u.w %.17g vs %.17g",
                p, mesh, pass ? "list" : "all", uwf, uwu);
    }
    /* FP64 operator through the _p form: hx_ax_apply_list_g's bits */
    {
      double *gd = malloc(8 * (size_t)(ng + 1)), *w1 = malloc(8 * (size_t)nl), *w2 = malloc(8 * (size_t)nl);
      for (int64_t i = 0; i < ng; i++) gd[i] = g[i];
      void *dg = upload(b, 8 * (size_t)ng, gd), *dm = upload(b, 4 * (size_t)nl, map), *dw = NULL;
      HX_TCALL(hx_mem_alloc(b, 8 * (size_t)nl, &dw));
      double uw1, uw2;
      HX_TCALL(hx_ax_apply_list_g(a64, E, NULL, dm, dg, dw, &uw1));
      HX_TCALL(hx_mem_to_host(b, w1, dw, 8 * (size_t)nl));
      HX_TCALL(hx_ax_apply_list_g_p(a64, E, NULL, dm, dg, dw, &uw2));
      HX_TCALL(hx_mem_to_host(b, w2, dw, 8 * (size_t)nl));
      HX_ASSERT(!memcmp(w1, w2, 8 * (size_t)nl) && uw1 == uw2, "p=%d %s: FP64 apply_list_g_p differs", p, mesh);
      hx_mem_free(b, &dg), hx_mem_free(b, &dm), hx_mem_free(b, &dw);
      free(gd), free(w1), free(w2);
    }
    free(ids), free(map), free(g), free(ul), free(wf);
  }
  if (cpu) {
    hx_ax ac = NULL;
    HX_TCALL(hx_ax_create_prec(cpu, p, E, 8, v, kap, lam, HX_GEO_PRECOMPUTED, HX_F32, &ac));
    if (apply32(ac, E, NULL, NULL, nl, u, nl, wx, NULL)) return 1;
    const double d = maxdiff_f(nl, wx, w32) / maxabs_f(nl, wx);
    HX_ASSERT(d <= 1e-5, "p=%d %s: cuda FP32 vs cpu FP32 %.3g", p, mesh, d);
    hx_ax_destroy(&ac);
  }
  if (verbose)
    printf("p=%d %-7s affine %2d/%d: fp32-fp64 %.3g uw %.3g, aff-gen %.3g, avx2-generic %.3g\n", p, mesh, a32n[0],
           E, rel, uwrel, relg, relk);
  hx_ax_destroy(&a64), hx_ax_destroy(&a32), hx_ax_destroy(&a32g);
  free(u), free(w32), free(wg), free(wx), free(ud), free(w64);
  return 0;
}

int main(int argc, char **argv) {
  hx_backend b = NULL, cpu = NULL;
  const int rc = axt_init_twin(&argc, &argv, &b, &cpu);
  if (rc) return rc;
  const int verbose = getenv("HX_TEST_VERBOSE") != NULL;
  for (int p = 1; p <= 8; p++)
    for (int k = 0; k < 2; k++)
      if (run(b, cpu, p, k, verbose)) break;
  return axt_finish(&b, &cpu);
}
