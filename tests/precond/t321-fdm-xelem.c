/* FP32 FDM box solves of the kernels layer against the double-precision
 * per-element math (hx_fdm_elem_solve of hx_fdm_math.h, an independent
 * evaluation on the host), on random boxes, for every box size the
 * cross-element kernel serves (m = 4..13) and one above it (m = 14, the
 * within-element kernel only), with lists whose lengths are not multiples
 * of 8 (the cross-element kernel takes complete groups of 8, the rest goes
 * through the within-element kernel), with and without an element list,
 * and through the extended map (fused gather, -1 entries read as 0); with
 * the map also in the grouped layout (hx_fdm_elem_apply_grouped_f32: 8
 * elements interleaved per group, empty lanes padding the last group, which
 * must give 0), where the backend has it. Where the CPU has AVX-512 the
 * grouped kernel solves two groups at a time in 16 lanes: its output must be
 * the AVX2 kernel's (HEXCG_CPU_ISA=avx2) bit for bit, the same arithmetic
 * per lane (the counts give ranges with pairs and an odd last group).
 * ctest runs it with the cross-element kernel on (the default) and off
 * (HEXCG_FDM_XELEM=0), and with HEXCG_CPU_ISA=generic, avx2 and avx512 (the
 * AVX-512 kernels wherever the CPU has them, not only on Intel's).
 *
 * Tolerance: the inputs are rounded to float once and both evaluations see
 * the same rounded values; the float kernel then rounds once per term of six
 * contractions of m <= 14 terms with |S| <= 1/sqrt(m)-scaled rows and one
 * scaling, so |w - w_ref| <= ~6 m eps_32 max|intermediate| ~ 5e-6 max|w_ref|
 * (eps_32 = 6e-8); the bound 2e-5 max|w_ref| per element leaves a factor 4. */
#include "hx_fdm_math.h"
#include "hx_kernels.h"
#include "hx_test.h"

#define TOL 2e-5

static int run(const char *backend, int p, int32_t E, int use_list, int use_map, hx_test_rng *rng) {
  const int m = p + 3, m2 = m * m, m3 = m2 * m;
  hx_backend b;
  HX_TCALL(hx_backend_create(backend, &b));
  const size_t nS = (size_t)E * 3 * m2, nL = (size_t)E * 3 * m, nB = (size_t)E * m3;
  const int64_t nx = (int64_t)nB / 2 + 1; /* map targets: a vector half the boxes' size, shared nodes */
  float *S = malloc(sizeof(float) * (nS + 1)), *L = malloc(sizeof(float) * (nL + 1));
  float *u = malloc(sizeof(float) * (nB + 1)), *w = malloc(sizeof(float) * (nB + 1));
  float *x = malloc(sizeof(float) * (size_t)nx);
  int32_t *map = malloc(sizeof(int32_t) * (nB + 1)), *list = malloc(sizeof(int32_t) * (E + 1));
  const double sc = 1.0 / sqrt((double)m);
  for (size_t i = 0; i < nS; i++) S[i] = (float)(sc * hx_test_rand(rng));
  for (size_t i = 0; i < nL; i++) L[i] = (float)(0.5 + 0.5 * hx_test_rand(rng)); /* > 0 */
  for (size_t i = 0; i < nB; i++) u[i] = (float)hx_test_rand(rng);
  for (int64_t i = 0; i < nx; i++) x[i] = (float)hx_test_rand(rng);
  for (size_t i = 0; i < nB; i++) {
    const double r = hx_test_rand(rng);
    map[i] = r < -0.8 ? -1 : (int32_t)((0.5 * (r + 1.0)) * (double)(nx - 1));
  }
  /* a permutation of the elements (reversed order: not the identity) */
  for (int32_t k = 0; k < E; k++) list[k] = E - 1 - k;
  float *dS, *dL, *du, *dw, *dx;
  int32_t *dmap, *dlist;
  HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nS + 1), (void **)&dS));
  HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nL + 1), (void **)&dL));
  HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nB + 1), (void **)&du));
  HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nB + 1), (void **)&dw));
  HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)nx, (void **)&dx));
  HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * (nB + 1), (void **)&dmap));
  HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * (E + 1), (void **)&dlist));
  HX_TCALL(hx_mem_to_device(b, dS, S, sizeof(float) * nS));
  HX_TCALL(hx_mem_to_device(b, dL, L, sizeof(float) * nL));
  HX_TCALL(hx_mem_to_device(b, du, u, sizeof(float) * nB));
  HX_TCALL(hx_mem_to_device(b, dx, x, sizeof(float) * (size_t)nx));
  HX_TCALL(hx_mem_to_device(b, dmap, map, sizeof(int32_t) * nB));
  HX_TCALL(hx_mem_to_device(b, dlist, list, sizeof(int32_t) * (size_t)E));
  HX_TCALL(hx_mem_zero(b, dw, sizeof(float) * (nB + 1)));
  const int32_t *dl = use_list ? dlist : NULL;
  if (use_map) HX_TCALL(hx_fdm_elem_apply_map_p(b, HX_F32, p, E, dl, dS, dL, dmap, dx, dw));
  else HX_TCALL(hx_fdm_elem_apply_list_p(b, HX_F32, p, E, dl, dS, dL, du, dw));
  HX_TCALL(hx_mem_to_host(b, w, dw, sizeof(float) * nB));
  double *Sd = malloc(sizeof(double) * 3 * m2), *Ld = malloc(sizeof(double) * 3 * m);
  double *ud = malloc(sizeof(double) * m3), *wd = malloc(sizeof(double) * m3), *t = malloc(sizeof(double) * m3);
  /* the grouped layout (hx_fdm_elem_apply_grouped_f32), where the backend
   * has it: the elements in list order, 8 lanes per group, the last group
   * padded with empty lanes (zero S, L; map -1), solved as two ranges */
  const int grouped = use_map && hx_fdm_grouped_f32_available(b, p);
  const int32_t G = (E + 7) / 8;
  float *wgh = NULL;
  if (grouped) {
    const size_t nSg = (size_t)G * 8 * 3 * m2, nLg = (size_t)G * 8 * 3 * m, nBg = (size_t)G * 8 * m3;
    float *Sg = calloc(nSg + 1, sizeof(float)), *Lg = calloc(nLg + 1, sizeof(float));
    int32_t *mg = malloc(sizeof(int32_t) * (nBg + 1));
    wgh = malloc(sizeof(float) * (nBg + 1));
    for (int32_t g = 0; g < G; g++)
      for (int l = 0; l < 8; l++) {
        const int32_t k = g * 8 + l, e = k < E ? (use_list ? list[k] : k) : -1;
        for (int j = 0; j < 3 * m2 && e >= 0; j++) Sg[((size_t)g * 3 * m2 + j) * 8 + l] = S[(size_t)e * 3 * m2 + j];
        for (int j = 0; j < 3 * m && e >= 0; j++) Lg[((size_t)g * 3 * m + j) * 8 + l] = L[(size_t)e * 3 * m + j];
        for (int pt = 0; pt < m3; pt++)
          mg[((size_t)g * m3 + pt) * 8 + l] = e >= 0 ? map[(size_t)e * m3 + pt] : -1;
      }
    float *dSg, *dLg, *dwg;
    int32_t *dmg;
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nSg + 1), (void **)&dSg));
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nLg + 1), (void **)&dLg));
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * (nBg + 1), (void **)&dwg));
    HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * (nBg + 1), (void **)&dmg));
    HX_TCALL(hx_mem_to_device(b, dSg, Sg, sizeof(float) * nSg));
    HX_TCALL(hx_mem_to_device(b, dLg, Lg, sizeof(float) * nLg));
    HX_TCALL(hx_mem_to_device(b, dmg, mg, sizeof(int32_t) * nBg));
    HX_TCALL(hx_fdm_elem_apply_grouped_f32(b, p, 0, G / 2, dSg, dLg, dmg, dx, dwg));
    HX_TCALL(hx_fdm_elem_apply_grouped_f32(b, p, G / 2, G - G / 2, dSg, dLg, dmg, dx, dwg));
    HX_TCALL(hx_mem_to_host(b, wgh, dwg, sizeof(float) * nBg));
    const char *isa = getenv("HEXCG_CPU_ISA");
    if (!strcmp(backend, "cpu") && !(isa && (!strcmp(isa, "avx2") || !strcmp(isa, "generic")))) {
      /* the AVX2 kernel alone (the same kernel where the AVX-512 one does not run) */
      float *w2 = malloc(sizeof(float) * (nBg + 1));
      hx_test_env_keep keep;
      hx_test_env_push("HEXCG_CPU_ISA", "avx2", &keep);
      int ierr = hx_mem_zero(b, dwg, sizeof(float) * (nBg + 1));
      if (!ierr) ierr = hx_fdm_elem_apply_grouped_f32(b, p, 0, G / 2, dSg, dLg, dmg, dx, dwg);
      if (!ierr) ierr = hx_fdm_elem_apply_grouped_f32(b, p, G / 2, G - G / 2, dSg, dLg, dmg, dx, dwg);
      hx_test_env_pop("HEXCG_CPU_ISA", &keep);
      HX_TCALL(ierr);
      HX_TCALL(hx_mem_to_host(b, w2, dwg, sizeof(float) * nBg));
      HX_ASSERT(!memcmp(w2, wgh, sizeof(float) * nBg), "p = %d, %d elements: the grouped kernel's output differs from the AVX2 kernel's", p, (int)E);
      free(w2);
    }
    int64_t nonzero = 0;
    for (int32_t k = E; k < G * 8; k++)
      for (int pt = 0; pt < m3; pt++) nonzero += wgh[((size_t)(k / 8) * m3 + pt) * 8 + k % 8] != 0.0f;
    HX_ASSERT(nonzero == 0, "p = %d, %d elements: %lld outputs of empty grouped lanes are not 0", p, (int)E,
              (long long)nonzero);
    hx_mem_free(b, (void **)&dSg), hx_mem_free(b, (void **)&dLg), hx_mem_free(b, (void **)&dwg);
    hx_mem_free(b, (void **)&dmg);
    free(Sg), free(Lg), free(mg);
  }
  double worst = 0.0, worst_g = 0.0;
  for (int32_t e = 0; e < E; e++) {
    for (int j = 0; j < 3 * m2; j++) Sd[j] = S[(size_t)e * 3 * m2 + j];
    for (int j = 0; j < 3 * m; j++) Ld[j] = L[(size_t)e * 3 * m + j];
    for (int pt = 0; pt < m3; pt++) {
      const size_t i = (size_t)e * m3 + pt;
      ud[pt] = use_map ? (map[i] >= 0 ? (double)x[map[i]] : 0.0) : (double)u[i];
    }
    hx_fdm_elem_solve(m, Sd, Ld, ud, wd, t);
    double mx = 0.0, err = 0.0;
    for (int pt = 0; pt < m3; pt++) {
      mx = fmax(mx, fabs(wd[pt]));
      err = fmax(err, fabs(wd[pt] - (double)w[(size_t)e * m3 + pt]));
    }
    worst = fmax(worst, err / (mx > 0 ? mx : 1.0));
    if (grouped) {
      int32_t k = 0; /* the lane of e */
      while (k < E && (use_list ? list[k] : k) != e) k++;
      double eg = 0.0;
      for (int pt = 0; pt < m3; pt++)
        eg = fmax(eg, fabs(wd[pt] - (double)wgh[((size_t)(k / 8) * m3 + pt) * 8 + k % 8]));
      worst_g = fmax(worst_g, eg / (mx > 0 ? mx : 1.0));
    }
  }
  HX_ASSERT(worst_g <= TOL, "p = %d, %d elements, list %d: grouped layout max error %.3e of max|w| (bound %.0e)",
            p, (int)E, use_list, worst_g, TOL);
  free(wgh);
  HX_ASSERT(worst <= TOL, "p = %d, %d elements, list %d, map %d: max error %.3e of max|w| (bound %.0e)", p,
            (int)E, use_list, use_map, worst, TOL);
  free(Sd), free(Ld), free(ud), free(wd), free(t);
  hx_mem_free(b, (void **)&dS), hx_mem_free(b, (void **)&dL), hx_mem_free(b, (void **)&du);
  hx_mem_free(b, (void **)&dw), hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dmap);
  hx_mem_free(b, (void **)&dlist);
  free(S), free(L), free(u), free(w), free(x), free(map), free(list);
  HX_TCALL(hx_backend_destroy(&b));
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *backend = hx_test_backend_arg(argc, argv);
  hx_test_skip_without_device(backend);
  hx_test_rng rng = {0x1234567ull};
  const int32_t counts[] = {1, 7, 8, 9, 17, 24, 40};
  printf("CPU kernels: %s\n", hx_cpu_kernels_name());
  int rc = 0;
  for (int p = 1; p <= 11 && !rc; p++)
    for (size_t c = 0; c < sizeof counts / sizeof *counts && !rc; c++)
      for (int mode = 1; mode < 4 && !rc; mode++) /* the box form takes a list; the map form with and without */
        rc = run(backend, p, counts[c], mode & 1 || !(mode >> 1), mode >> 1, &rng);
  MPI_Finalize();
  return rc || hx_test_failures_ ? 1 : 0;
}
