/* The choice between the AVX-512 and the AVX2 CPU kernels (kernels/cpu/isa_cpu.c,
 * issue 52 point 4), one mode per property:
 *  - decide: the probe's decision from injected timings (a pure function):
 *    AVX-512 per order where its time is within the margin of AVX2's, the
 *    margin's edge on both sides, unmeasured orders (0, negative, NaN, inf)
 *    left out of the choice and of the mean, the overall choice by the
 *    geometric mean;
 *  - table: the rows by CPU vendor, family and model (Intel keeps AVX-512
 *    at p = 7, AMD Zen 4 and unknown CPUs AVX2);
 *  - override: HEXCG_CPU_ISA=generic, avx2 and avx512 force the choice at
 *    every order, read at every query, and say so (hexcg --version's line);
 *  - probe: without the override the probe's first run happens inside an
 *    OpenMP region on every thread at once (the lazy, once-only start), all
 *    threads see one choice; at p = 2..6 it is the probe's, at p = 7 the
 *    table's, the probe's own verdict is hx_cpu_isa_decide of its ratios,
 *    and it cost < 100 ms (printed: the measure of its cost);
 *  - bits: the design's premise: the AVX-512 FP64 operator gives the AVX2
 *    kernel's bits at p = 2..6 (so the probe may choose per rank and per
 *    run) and agrees to round-off at p = 7, where the bits differ (so the
 *    table chooses; the difference also shows the forced kernels ran), on affine and deformed elements, with
 * and without lambda, L-vector and fused input with u.w; the FP32 p = 3 kernel bit for bit too. The probe,
 * override and bits modes need a CPU with AVX2 (bits: AVX-512 F/VL/DQ/BW) and skip without it; one rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "hx_kernels.h"
#include "hx_kernels_prec.h"
#include "hx_test.h"
#include "isa_impl.h"

/* ------------------------------------------------------------ decide */

static unsigned decide_ratios(const double *r, int *overall, double *mean) {
  double t2[HX_ISA_PMAX + 1], t512[HX_ISA_PMAX + 1];
  for (int p = 0; p <= HX_ISA_PMAX; p++) t2[p] = 2e-4, t512[p] = r[p] * 2e-4;
  return hx_cpu_isa_decide(t512, t2, HX_ISA_MARGIN, overall, mean);
}

static int mode_decide(void) {
  const unsigned all = ((1u << (HX_ISA_PMAX + 1)) - 1) & ~((1u << HX_ISA_PMIN) - 1);
  double r[HX_ISA_PMAX + 1] = {0};
  int overall = -1;
  double mean = -1;
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) r[p] = 0.8;
  unsigned m = decide_ratios(r, &overall, &mean);
  HX_ASSERT(m == all && overall == 1 && fabs(mean - 0.8) < 1e-12, "all 0.8: mask %#x overall %d mean %g", m,
            overall, mean);
  /* Zen 4's shape: faster at the low orders, slower at p = 7 */
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) r[p] = p == 7 ? 1.2 : 0.9;
  m = decide_ratios(r, &overall, &mean);
  const double gm = exp((5 * log(0.9) + log(1.2)) / 6);
  HX_ASSERT(m == (all & ~(1u << 7)) && overall == 1 && fabs(mean - gm) < 1e-12,
            "0.9 and 1.2 at p = 7: mask %#x overall %d mean %g (expected %g)", m, overall, mean, gm);
  /* the margin's edge: 1.04 is noise, 1.06 is slower */
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) r[p] = p & 1 ? 1.04 : 1.06;
  m = decide_ratios(r, &overall, &mean);
  HX_ASSERT(m == (1u << 3 | 1u << 5 | 1u << 7) && overall == 1, "1.04/1.06: mask %#x overall %d mean %g", m,
            overall, mean);
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) r[p] = 1.2;
  m = decide_ratios(r, &overall, &mean);
  HX_ASSERT(m == 0 && overall == 0 && fabs(mean - 1.2) < 1e-12, "all 1.2: mask %#x overall %d", m, overall);
  /* unmeasured orders: neither chosen nor in the mean */
  double t2[HX_ISA_PMAX + 1] = {0}, t512[HX_ISA_PMAX + 1] = {0};
  t2[2] = 1e-4, t512[2] = 0.5e-4;   /* 0.5 */
  t2[3] = NAN, t512[3] = 1e-4;      /* NaN */
  t2[4] = 1e-4, t512[4] = -1.0;     /* negative */
  t2[5] = 1e-4, t512[5] = INFINITY; /* no finite time */
  t2[6] = 2e-4, t512[6] = 4e-4;     /* 2.0 */
  m = hx_cpu_isa_decide(t512, t2, HX_ISA_MARGIN, &overall, &mean);
  HX_ASSERT(m == 1u << 2 && overall == 1 && fabs(mean - 1.0) < 1e-12, "gaps: mask %#x overall %d mean %g", m,
            overall, mean);
  memset(t2, 0, sizeof t2), memset(t512, 0, sizeof t512);
  m = hx_cpu_isa_decide(t512, t2, HX_ISA_MARGIN, &overall, &mean);
  HX_ASSERT(m == 0 && overall == 0 && mean == 0.0, "nothing measured: mask %#x overall %d mean %g", m,
            overall, mean);
  m = hx_cpu_isa_decide(t512, t2, HX_ISA_MARGIN, NULL, NULL); /* the outputs are optional */
  HX_ASSERT(m == 0, "NULL outputs: mask %#x", m);
  return 0;
}

/* ------------------------------------------------------------ table */

static int mode_table(void) {
  const hx_isa_row *intel = hx_cpu_isa_row("GenuineIntel", 6, 207),
                   *intel19 = hx_cpu_isa_row("GenuineIntel", 19, 1);
  const hx_isa_row *zen4 = hx_cpu_isa_row("AuthenticAMD", 0x19, 0x11),
                   *zen5 = hx_cpu_isa_row("AuthenticAMD", 0x1a, 0x02);
  const hx_isa_row *other = hx_cpu_isa_row("HygonGenuine", 0x18, 0), *none = hx_cpu_isa_row("", -1, -1);
  HX_ASSERT(intel->avx512 == 1 && intel19->avx512 == 1, "Intel: AVX-512 at p = 7 (%s)", intel->evidence);
  HX_ASSERT(zen4->avx512 == 0 && zen4 != zen5, "Zen 4: AVX2 at p = 7, its own row (%s)", zen4->evidence);
  HX_ASSERT(zen5->avx512 == 0 && zen5 == other && other == none, "unmeasured CPUs: the default row (%s)",
            zen5->evidence);
  HX_ASSERT(intel->evidence[0] && zen4->evidence[0] && none->evidence[0],
            "every row says where it comes from");
  return 0;
}

/* ------------------------------------------------------------ override */

static int mode_override(void) {
  hx_cpu_isa_info c;
  hx_cpu_isa_choice(&c);
  if (strcmp(c.source, "build") == 0 || (strcmp(c.source, "cpu") == 0 && !strcmp(c.kernels, "generic"))) {
    printf("SKIP: no AVX2+FMA on this CPU or in this build (%s)\n", c.kernels);
    return HX_TEST_SKIP;
  }
  const unsigned all = ((1u << (HX_ISA_PMAX + 1)) - 1) & ~((1u << HX_ISA_PMIN) - 1);
  const int has512 = strcmp(c.source, "cpu") != 0; /* the CPU has AVX-512 F/VL/DQ/BW */
  static const char *const isas[] = {"generic", "avx2", "avx512"};
  static const char *const names[] = {"generic", "avx2+fma", "avx512+avx2+fma"};
  for (int i = 0; i < 3; i++) {
    hx_test_env_keep keep;
    hx_test_env_push("HEXCG_CPU_ISA", isas[i], &keep);
    hx_cpu_isa_choice(&c);
    char line[512];
    hx_cpu_isa_describe(line, sizeof line);
    hx_test_env_pop("HEXCG_CPU_ISA", &keep);
    const int on = i == 2 && has512;
    const char *want = i == 2 && !has512 ? names[1] : names[i];
    HX_ASSERT(!strcmp(c.source, "HEXCG_CPU_ISA") && !strcmp(c.kernels, want),
              "HEXCG_CPU_ISA=%s: source %s, kernels %s (expected %s)", isas[i], c.source, c.kernels, want);
    HX_ASSERT(c.avx512_orders == (on ? all : 0u) && c.avx512 == on && c.probe_ms == 0.0,
              "HEXCG_CPU_ISA=%s: orders %#x, all-order %d, probe %g ms", isas[i], c.avx512_orders, c.avx512,
              c.probe_ms);
    char want_line[64];
    snprintf(want_line, sizeof want_line, "%s (HEXCG_CPU_ISA)", want);
    HX_ASSERT(!strcmp(line, want_line), "HEXCG_CPU_ISA=%s: '%s', expected '%s'", isas[i], line, want_line);
  }
  return 0;
}

/* ------------------------------------------------------------ probe */

static int mode_probe(void) {
  unsetenv("HEXCG_CPU_ISA"); /* this process's choice without the override */
  int first[64], nthr = 1;
  /* the first query of the process, from every thread of an OpenMP region at once */
#pragma omp parallel
  {
#ifdef _OPENMP
    const int t = omp_get_thread_num();
#pragma omp single
    nthr = omp_get_num_threads();
#else
    const int t = 0;
#endif
    int v = 0;
    for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) v |= hx_cpu_avx512_order(p) << p;
    if (t < 64) first[t] = v;
  }
  hx_cpu_isa_info c;
  hx_cpu_isa_choice(&c);
  char line[512];
  hx_cpu_isa_describe(line, sizeof line);
  printf("%d threads; cpu kernels: %s\n", nthr, line);
  for (int t = 0; t < nthr && t < 64; t++)
    HX_ASSERT(first[t] == (int)c.avx512_orders, "thread %d saw orders %#x, the process %#x", t,
              (unsigned)first[t], c.avx512_orders);
  if (strcmp(c.source, "probe") != 0) {
    HX_ASSERT(strcmp(c.source, "table") != 0, "the probe failed: %s", c.error);
    printf("SKIP: no probe here (%s: %s)\n", c.source, line);
    return HX_TEST_SKIP;
  }
  HX_ASSERT(c.probe_ms > 0.0 && c.probe_ms < 100.0, "the probe took %.1f ms", c.probe_ms);
  double t2[HX_ISA_PMAX + 1] = {0};
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) {
    HX_ASSERT(c.ratio[p] > 0.1 && c.ratio[p] < 10.0, "p = %d: avx512/avx2 time %g", p, c.ratio[p]);
    t2[p] = 1.0;
  }
  int overall = -1;
  double mean = 0;
  const unsigned m = hx_cpu_isa_decide(c.ratio, t2, HX_ISA_MARGIN, &overall, &mean);
  HX_ASSERT(m == c.probe_orders && overall == c.avx512 && fabs(mean - c.ratio_mean) <= 1e-12 * mean,
            "the probe's verdict %#x/%d/%g is not its ratios' %#x/%d/%g", c.probe_orders, c.avx512,
            c.ratio_mean, m, overall, mean);
  const unsigned probed = ((1u << (HX_ISA_PROBE_PMAX + 1)) - 1) & ~((1u << HX_ISA_PMIN) - 1);
  const unsigned want = (c.probe_orders & probed) | (c.table_avx512 ? 1u << HX_ISA_PMAX : 0u);
  HX_ASSERT(c.avx512_orders == want,
            "orders %#x: expected the probe's at p = 2..6 and the table's at 7 (%#x)", c.avx512_orders, want);
  const int any = c.avx512_orders != 0 || c.avx512;
  HX_ASSERT(!strcmp(c.kernels, any ? "avx512+avx2+fma" : "avx2+fma"), "kernels %s", c.kernels);
  HX_ASSERT(strstr(line, "probe ") && strstr(line, c.cpu), "the line names the probe and the CPU: %s", line);
  return 0;
}

/* ------------------------------------------------------------ bits */

/* E elements of order p (half affine, half deformed) with isa forced, applied
 * to u (L-vector) and, through map, to x (G-vector of ng values) */
static int apply_isa(hx_backend b, const char *isa, int p, hx_precision prec, int32_t E, const double *v,
                     const double *kap, const double *lam, const void *d_u, const int32_t *d_map,
                     const void *d_x, void *d_w, void *d_wg, double uw[2]) {
  hx_test_env_keep keep;
  hx_ax ax = NULL;
  hx_test_env_push("HEXCG_CPU_ISA", isa, &keep);
  const int ierr = hx_ax_create_prec(b, p, E, 8, v, kap, lam, HX_GEO_PRECOMPUTED, prec, &ax);
  hx_test_env_pop("HEXCG_CPU_ISA", &keep);
  HX_TCALL(ierr);
  HX_TCALL(hx_ax_apply_prec(ax, prec, E, NULL, NULL, d_u, d_w, &uw[0], NULL, 0));
  HX_TCALL(hx_ax_apply_prec(ax, prec, E, NULL, d_map, d_x, d_wg, &uw[1], NULL, 0));
  hx_ax_destroy(&ax);
  return 0;
}

static void make_mesh(hx_test_rng *r, int32_t E, double *v, double *kap, double *lam) {
  for (int32_t e = 0; e < E; e++) {
    kap[e] = 1.5 + fabs(hx_test_rand(r)), lam[e] = 0.5 * fabs(hx_test_rand(r));
    for (int q = 0; q < 8; q++)
      for (int d = 0; d < 3; d++)
        v[24 * e + 3 * q + d] = (d == 0 ? e : 0) + (q >> d & 1) + (e & 1 ? 0.2 * hx_test_rand(r) : 0.0);
  }
}

/* the two kernels' outputs at order p in precision prec: 1 equal bits, 0 not; *rel the largest relative
 * difference */
static int compare_order(hx_backend b, int p, hx_precision prec, int withlam, double *rel) {
  const int32_t E = 21; /* two groups of 8 and a short one */
  const int n3 = (p + 1) * (p + 1) * (p + 1), ng = E * n3 / 2;
  const size_t sz = prec == HX_F32 ? sizeof(float) : sizeof(double), nl = (size_t)E * n3;
  hx_test_rng r = {0xa5a5ull + (uint64_t)p};
  double v[24 * 21], kap[21], lam[21], uw[2][2];
  make_mesh(&r, E, v, kap, lam);
  char *h_u = malloc(sz * nl), *h_x = malloc(sz * ng), *h_w[2][2];
  int32_t *h_map = malloc(sizeof(int32_t) * nl);
  for (size_t i = 0; i < nl; i++) {
    const double x = hx_test_rand(&r) - 0.5;
    if (prec == HX_F32)
      ((float *)h_u)[i] = (float)x;
    else
      ((double *)h_u)[i] = x;
    h_map[i] = i % 11 == 3 ? -1 : (int32_t)((i * 7919) % (size_t)ng);
  }
  for (int i = 0; i < ng; i++) {
    const double x = hx_test_rand(&r);
    if (prec == HX_F32)
      ((float *)h_x)[i] = (float)x;
    else
      ((double *)h_x)[i] = x;
  }
  void *d_u = NULL, *d_x = NULL, *d_w = NULL, *d_wg = NULL;
  int32_t *d_map = NULL;
  HX_TCALL(hx_mem_alloc(b, sz * nl, &d_u));
  HX_TCALL(hx_mem_alloc(b, sz * ng, &d_x));
  HX_TCALL(hx_mem_alloc(b, sz * nl, &d_w));
  HX_TCALL(hx_mem_alloc(b, sz * nl, &d_wg));
  HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * nl, (void **)&d_map));
  HX_TCALL(hx_mem_to_device(b, d_u, h_u, sz * nl));
  HX_TCALL(hx_mem_to_device(b, d_x, h_x, sz * ng));
  HX_TCALL(hx_mem_to_device(b, d_map, h_map, sizeof(int32_t) * nl));
  static const char *const isas[2] = {"avx2", "avx512"};
  for (int k = 0; k < 2; k++) {
    if (apply_isa(b, isas[k], p, prec, E, v, kap, withlam ? lam : NULL, d_u, d_map, d_x, d_w, d_wg, uw[k]))
      return -1;
    h_w[k][0] = malloc(sz * nl), h_w[k][1] = malloc(sz * nl);
    HX_TCALL(hx_mem_to_host(b, h_w[k][0], d_w, sz * nl));
    HX_TCALL(hx_mem_to_host(b, h_w[k][1], d_wg, sz * nl));
  }
  int same = uw[0][0] == uw[1][0] && uw[0][1] == uw[1][1];
  double maxd = 0.0, maxa = 0.0;
  for (int f = 0; f < 2; f++) {
    same = same && !memcmp(h_w[0][f], h_w[1][f], sz * nl);
    for (size_t i = 0; i < nl; i++) {
      const double a = prec == HX_F32 ? ((float *)h_w[0][f])[i] : ((double *)h_w[0][f])[i];
      const double c = prec == HX_F32 ? ((float *)h_w[1][f])[i] : ((double *)h_w[1][f])[i];
      if (fabs(a - c) > maxd) maxd = fabs(a - c);
      if (fabs(a) > maxa) maxa = fabs(a);
    }
  }
  *rel = maxa > 0 ? maxd / maxa : maxd;
  for (int k = 0; k < 2; k++) free(h_w[k][0]), free(h_w[k][1]);
  hx_mem_free(b, &d_u), hx_mem_free(b, &d_x), hx_mem_free(b, &d_w), hx_mem_free(b, &d_wg);
  hx_mem_free(b, (void **)&d_map);
  free(h_u), free(h_x), free(h_map);
  return same;
}

static int mode_bits(void) {
  hx_test_env_keep keep;
  hx_cpu_isa_info c;
  hx_test_env_push("HEXCG_CPU_ISA", "avx512", &keep);
  hx_cpu_isa_choice(&c);
  hx_test_env_pop("HEXCG_CPU_ISA", &keep);
  const int has512 = c.avx512;
  if (!has512) {
    printf("SKIP: no AVX-512 F/VL/DQ/BW (or no AVX2+FMA) on this CPU: %s\n", hx_cpu_kernels_name());
    return HX_TEST_SKIP;
  }
  hx_backend b = NULL;
  HX_TCALL(hx_backend_create("cpu", &b));
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++)
    for (int withlam = 0; withlam < 2; withlam++) {
      double rel = 0.0;
      const int same = compare_order(b, p, HX_F64, withlam, &rel);
      if (same < 0) return 1;
      if (p <= HX_ISA_PROBE_PMAX)
        HX_ASSERT(same,
                  "p = %d%s: the AVX-512 operator's bits differ from AVX2's (%.3g): the probe must not "
                  "choose it per rank",
                  p, withlam ? " lambda" : "", rel);
      else /* differing bits also show that the forced kernels did run */
        HX_ASSERT(!same && rel <= 1e-13,
                  "p = %d%s: AVX-512 against AVX2 %.3g, %s bits (equal bits: the probe "
                  "could choose this order too, HX_ISA_PROBE_PMAX)",
                  p, withlam ? " lambda" : "", rel, same ? "the same" : "other");
      if (p > HX_ISA_PROBE_PMAX && withlam)
        printf("p = %d: AVX-512 %s AVX2's bits (%.2g relative)\n", p, same ? "gives" : "differs from", rel);
    }
  double rel = 0.0;
  const int same32 = compare_order(b, 3, HX_F32, 1, &rel);
  HX_ASSERT(same32 == 1, "FP32 p = 3: the AVX-512 kernel's bits differ from AVX2's (%.3g)", rel);
  HX_TCALL(hx_backend_destroy(&b));
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  static const hx_test_mode modes[] = {{"decide", mode_decide},
                                       {"table", mode_table},
                                       {"override", mode_override},
                                       {"probe", mode_probe},
                                       {"bits", mode_bits}};
  return hx_test_run_modes(argc, argv, "t121-isa-choice", modes, (int)(sizeof modes / sizeof *modes));
}
