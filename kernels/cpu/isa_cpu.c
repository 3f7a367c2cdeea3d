/* Which CPU kernels run where the CPU has AVX-512 F/VL/DQ/BW (issue 52
 * point 4): the AVX-512 kernels beside the AVX2 ones were taken on Intel
 * CPUs only, though AMD's Zen 4 ran them 0-25 % faster at p = 3..5 and
 * either way at p = 7; now they are chosen per machine.
 *
 * Design (docs/operator.md "Which AVX-512 kernels run"):
 *  - HEXCG_CPU_ISA=generic|avx2|avx512 forces, read at every query (the
 *    tests set it around an operator's creation).
 *  - Where the AVX-512 kernel gives the AVX2 kernel's bits (the FP64
 *    cross-element operator at p = 2..6, 8 lanes against 4; the FP32 p = 3
 *    kernel and the FDM grouped kernels, tests t121, t116, t321), a start-up
 *    probe decides: it times both FP64 operator kernels on a few elements at
 *    p = 2..7, alternated, the best of HX_ISA_ROUNDS batches each, and takes
 *    AVX-512 per order (the operator picks its kernel per order at create
 *    time, and the gain varies with the order) where it is not slower than
 *    AVX2 by more than HX_ISA_MARGIN (the FP32 p = 3 kernel follows p = 3:
 *    it is made from the same operator). The kernels not chosen per order
 *    (FDM grouped FP32, the peak loop) follow the geometric mean over the orders.
 *    Ranks, or a restarted run, may decide differently: the bits are the same.
 *  - The p = 7 kernel's bits differ (round-off), so a timing, which differs
 *    between ranks and between runs, must not choose it (a restart would not
 *    reproduce the run it continues, ranks would mix kernels): a table by CPU
 *    vendor, family and model decides it, the same everywhere. The probe
 *    still times p = 7 and hexcg --version shows its view, so a row can be
 *    corrected from measurements. The table is also the fallback for every
 *    order where the probe fails (no memory).
 *  - The probe runs once per process (pthread_once, safe from OpenMP
 *    regions), on one OpenMP thread: 5-10 ms on the 2-core Xeon under load
 *    (docs/log/performance.md, 2026-12-07). */
#include "ax_impl.h"
#include "isa_impl.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HX_ISA_X86 1
#include <cpuid.h>
#else
#define HX_ISA_X86 0
#endif

_Static_assert(HX_ISA_PMAX == HX_CPU_ISA_PMAX, "the public ratio array covers the probed orders");

/* the table by CPU: first match wins, the last row matches every CPU */
static const hx_isa_row hx_isa_rows[] = {
    {"GenuineIntel", -1, 0, 0xffff, 1,
     "Intel: avx512 at p = 7 (Xeon family 6 model 207: 0.70-0.86x avx2's time in the probe, "
     "docs/log/performance.md)"},
    {"AuthenticAMD", 0x19, 0, 0xffff, 0, "AMD family 19h (Zen 4): avx2 at p = 7 (issue 52: mixed)"},
    {"", -1, 0, 0xffff, 0, "not measured: avx2 at p = 7"},
};

const hx_isa_row *hx_cpu_isa_row(const char *vendor, int family, int model) {
  const int nrow = (int)(sizeof hx_isa_rows / sizeof *hx_isa_rows);
  for (int i = 0; i < nrow - 1; i++) {
    const hx_isa_row *r = &hx_isa_rows[i];
    if (!strcmp(r->vendor, vendor) && (r->family < 0 || r->family == family) && model >= r->model_lo &&
        model <= r->model_hi)
      return r;
  }
  return &hx_isa_rows[nrow - 1];
}

unsigned hx_cpu_isa_decide(const double *t512, const double *t2, double margin, int *overall, double *ratio) {
  unsigned mask = 0;
  double lsum = 0.0;
  int cnt = 0;
  for (int p = 0; p <= HX_ISA_PMAX; p++) {
    if (!(t512[p] > 0.0 && t2[p] > 0.0 && isfinite(t512[p]) && isfinite(t2[p]))) continue;
    const double r = t512[p] / t2[p];
    if (r <= 1.0 + margin) mask |= 1u << p;
    lsum += log(r);
    cnt++;
  }
  const double gm = cnt ? exp(lsum / cnt) : 0.0;
  if (ratio) *ratio = gm;
  if (overall) *overall = cnt > 0 && gm <= 1.0 + margin;
  return mask;
}

/* The probe's outcome (written once by probe_init). */
static struct {
  int ok;        /* the probe ran to the end */
  unsigned mask; /* its per-order choice */
  int overall;   /* its choice for all orders at once */
  double ratio[HX_ISA_PMAX + 1], mean, ms;
  char error[160];
  char vendor[13];
  int family, model;
  const hx_isa_row *row;
} probe;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static _Thread_local int probing; /* this thread is inside the probe */

/* the CPU's vendor, family and model (cpuid leaves 0 and 1) */
static void cpu_ident(char vendor[13], int *family, int *model) {
  memset(vendor, 0, 13);
  *family = *model = -1;
#if HX_ISA_X86
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  memcpy(vendor, &b, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &c, 4);
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  const int fam = (int)((a >> 8) & 0xf), mod = (int)((a >> 4) & 0xf);
  *family = fam == 0xf ? fam + (int)((a >> 20) & 0xff) : fam;
  *model = fam == 0x6 || fam == 0xf ? mod + (int)(((a >> 16) & 0xf) << 4) : mod;
#endif
}

#define HX_ISA_NODES 4096 /* nodes per timed apply (~30 KB of factors per 512: the L2) */
#define HX_ISA_APPLIES 3  /* applies per timed batch */
#define HX_ISA_ROUNDS 5   /* batches per kernel, alternated */

/* E elements (a multiple of 8) of order p: unit cubes on a line, vertices
 * moved by up to 0.15 (general records, as `hexcg bench ax --geo
 * precomputed`), kappa 1, lambda 0 (6 factors per node: the Poisson case) */
static int probe_operator(hx_backend b, int p, int32_t E, hx_ax *ax) {
  double *v = NULL, *kap = NULL;
  int ierr = HX_ALLOC(&v, (size_t)E * 24);
  if (!ierr) ierr = HX_ALLOC(&kap, (size_t)E);
  uint64_t s = 0x9e3779b97f4a7c15ull + (uint64_t)p;
  for (int32_t e = 0; e < E && !ierr; e++) {
    kap[e] = 1.0;
    for (int q = 0; q < 24; q++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const double r = (double)(s >> 11) * 0x1.0p-53;
      v[24 * e + q] = (q % 3 == 0 ? e : 0) + ((q / 3) >> (q % 3) & 1) + 0.15 * r;
    }
  }
  if (!ierr) ierr = hx_ax_create(b, p, E, 8, v, kap, NULL, HX_GEO_PRECOMPUTED, ax);
  free(v), free(kap);
  return ierr;
}

/* the best seconds per batch of the AVX-512 (t[1]) and AVX2 (t[0]) kernels at order p */
static int probe_order(hx_backend b, int p, double t[2]) {
  const int n = p + 1, n3 = n * n * n;
  const int32_t E = (HX_ISA_NODES / n3 + 7) / 8 * 8;
  hx_ax ax = NULL;
  double *d_u = NULL, *d_w = NULL, uw = 0.0;
  int ierr = probe_operator(b, p, E, &ax);
  if (!ierr) ierr = hx_mem_alloc(b, sizeof(double) * (size_t)E * n3, (void **)&d_u);
  if (!ierr) ierr = hx_mem_alloc(b, sizeof(double) * (size_t)E * n3, (void **)&d_w);
  if (!ierr) {
    for (int64_t i = 0; i < (int64_t)E * n3; i++) d_u[i] = (double)(i % 17) / 17.0 - 0.5;
    t[0] = t[1] = HUGE_VAL;
    for (int k = 0; k < 2 && !ierr; k++) { /* warm-up: both kernels once */
      ax->avx512 = k;
      ierr = hx_ax_apply(ax, d_u, d_w, &uw);
    }
  }
  for (int r = 0; r < HX_ISA_ROUNDS && !ierr; r++)
    for (int j = 0; j < 2 && !ierr; j++) {
      const int k = (r + j) & 1; /* ABBAA...: neither kernel always first */
      ax->avx512 = k;
      const double t0 = hx_wtime();
      for (int a = 0; a < HX_ISA_APPLIES && !ierr; a++) ierr = hx_ax_apply(ax, d_u, d_w, &uw);
      const double dt = hx_wtime() - t0;
      if (dt < t[k]) t[k] = dt;
    }
  hx_mem_free(b, (void **)&d_u), hx_mem_free(b, (void **)&d_w);
  hx_ax_destroy(&ax);
  return ierr;
}

/* time p = HX_ISA_PMIN..PMAX on one OpenMP thread of a host backend */
static int probe_run(void) {
  double t512[HX_ISA_PMAX + 1] = {0}, t2[HX_ISA_PMAX + 1] = {0};
  hx_backend b = NULL;
#ifdef _OPENMP
  const int nt = omp_get_max_threads();
  omp_set_num_threads(1); /* this thread's next parallel regions */
#endif
  int ierr = hx_backend_create("host", &b);
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX && !ierr; p++) {
    double t[2];
    ierr = probe_order(b, p, t);
    t2[p] = t[0], t512[p] = t[1];
  }
  hx_backend_destroy(&b);
#ifdef _OPENMP
  omp_set_num_threads(nt);
#endif
  if (ierr) return ierr;
  probe.mask = hx_cpu_isa_decide(t512, t2, HX_ISA_MARGIN, &probe.overall, &probe.mean);
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++) probe.ratio[p] = t512[p] / t2[p];
  return HX_SUCCESS;
}

static void probe_init(void) {
  cpu_ident(probe.vendor, &probe.family, &probe.model);
  probe.row = hx_cpu_isa_row(probe.vendor, probe.family, probe.model);
  probing = 1;
  const double t0 = hx_wtime();
  const int ierr = probe_run();
  probe.ms = 1e3 * (hx_wtime() - t0);
  probing = 0;
  probe.ok = ierr == HX_SUCCESS;
  if (!probe.ok) {
    snprintf(probe.error, sizeof probe.error, "%s", hx_error_message());
    hx_error_clear();
  }
}

/* HEXCG_CPU_ISA: -1 unset (or another value), 0 generic or avx2, 1 avx512 */
static int isa_forced(void) {
  const char *env = hx_env("HEXCG_CPU_ISA");
  if (env && (!strcmp(env, "avx2") || !strcmp(env, "generic"))) return 0;
  return env && !strcmp(env, "avx512") ? 1 : -1;
}

/* 1 where the AVX-512 kernels may run: the AVX2 ones are chosen
 * (hx_ax_cpu_isa) and the CPU has AVX-512 F, VL, DQ and BW */
static int avx512_present(void) {
#if HX_ISA_X86
  return hx_ax_cpu_isa() == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
#else
  return 0;
#endif
}

/* the choice at order p (p = 0: for the kernels chosen for all orders at once) */
static int avx512_at(int p) {
  if (!avx512_present()) return 0;
  const int f = isa_forced();
  if (f >= 0) return f;
  if (probing) return 0; /* the probe's own operators: it sets the kernel itself */
  pthread_once(&probe_once, probe_init);
  if (!probe.ok || p > HX_ISA_PROBE_PMAX) return probe.row->avx512;
  return p == 0 ? probe.overall : (int)(probe.mask >> p & 1u);
}

int hx_cpu_avx512_order(int p) { return p >= HX_ISA_PMIN && p <= HX_ISA_PMAX && avx512_at(p); }

/* 1 where the AVX-512 kernels chosen for all orders at once run (FDM
 * grouped FP32, the peak loop); the operator asks hx_cpu_avx512_order */
int hx_cpu_avx512(void) { return avx512_at(0); }

const char *hx_cpu_kernels_name(void) {
  int any = hx_cpu_avx512();
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX && !any; p++) any = hx_cpu_avx512_order(p);
  return any ? "avx512+avx2+fma" : hx_ax_cpu_isa_name(hx_ax_cpu_isa());
}

/* where the choice comes from (hx_cpu_isa_info.source) */
static const char *isa_source(void) {
  const char *env = hx_env("HEXCG_CPU_ISA");
  if (!HX_ISA_X86) return "build";
  if (env && (!strcmp(env, "generic") || !strcmp(env, "avx2") || !strcmp(env, "avx512")))
    return "HEXCG_CPU_ISA";
  if (!avx512_present()) return "cpu";
  return probe.ok ? "probe" : "table";
}

void hx_cpu_isa_choice(hx_cpu_isa_info *info) {
  memset(info, 0, sizeof *info);
  info->kernels = hx_cpu_kernels_name(); /* runs the probe where it decides */
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX; p++)
    if (hx_cpu_avx512_order(p)) info->avx512_orders |= 1u << p;
  info->avx512 = hx_cpu_avx512();
  info->source = isa_source();
  char vendor[13];
  int family, model;
  cpu_ident(vendor, &family, &model);
  snprintf(info->cpu, sizeof info->cpu, "%s family %d model %d", vendor[0] ? vendor : "unknown", family,
           model);
  const hx_isa_row *row = hx_cpu_isa_row(vendor, family, model);
  info->table_avx512 = row->avx512;
  info->table = row->evidence;
  if (!strcmp(info->source, "probe") || !strcmp(info->source, "table")) {
    for (int p = 0; p <= HX_ISA_PMAX && probe.ok; p++) info->ratio[p] = probe.ratio[p];
    info->ratio_mean = probe.ok ? probe.mean : 0.0;
    info->probe_orders = probe.ok ? probe.mask : 0u;
    info->probe_ms = probe.ms;
    snprintf(info->error, sizeof info->error, "%s", probe.error);
  }
}

/* " 2 3 5" for the orders of mask (p = HX_ISA_PMIN..PMAX), or " none" */
static void orders_text(unsigned mask, int pmax, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (int p = HX_ISA_PMIN; p <= pmax && at < len; p++)
    if (mask >> p & 1u) at += (size_t)snprintf(buf + at, len - at, " %d", p);
  if (!buf[0]) snprintf(buf, len, " none");
}

void hx_cpu_isa_describe(char *buf, size_t len) {
  hx_cpu_isa_info c;
  hx_cpu_isa_choice(&c);
  if (!len) return;
  if (!strcmp(c.source, "HEXCG_CPU_ISA") || !strcmp(c.source, "build")) {
    snprintf(buf, len, "%s (%s)", c.kernels,
             !strcmp(c.source, "build") ? "no x86 kernels in this build" : "HEXCG_CPU_ISA");
    return;
  }
  if (!strcmp(c.source, "cpu")) {
    snprintf(buf, len, "%s (%s; %s)", c.kernels,
             hx_ax_cpu_isa() ? "the CPU has no AVX-512 F/VL/DQ/BW" : "the CPU has no AVX2+FMA", c.cpu);
    return;
  }
  char on[32], table[64];
  orders_text(c.avx512_orders, HX_ISA_PROBE_PMAX, on, sizeof on);
  snprintf(table, sizeof table, "%s", c.table_avx512 ? "avx512" : "avx2");
  if (!strcmp(c.source, "table")) {
    snprintf(buf, len, "%s (the probe failed: %s; the table for %s: %s at every order)", c.kernels, c.error,
             c.cpu, table);
    return;
  }
  char r[96];
  size_t at = 0;
  for (int p = HX_ISA_PMIN; p <= HX_ISA_PMAX && at < sizeof r; p++)
    at += (size_t)snprintf(r + at, sizeof r - at, "%s%.2f", p > HX_ISA_PMIN ? " " : "", c.ratio[p]);
  snprintf(
      buf, len,
      "%s (probe %.1f ms, avx512/avx2 time at p = %d..%d: %s, mean %.2f: avx512 at p =%s, for all orders %s; "
      "p = %d by the table for %s: %s)",
      c.kernels, c.probe_ms, HX_ISA_PMIN, HX_ISA_PMAX, r, c.ratio_mean, on, c.avx512 ? "avx512" : "avx2",
      HX_ISA_PMAX, c.cpu, table);
}
