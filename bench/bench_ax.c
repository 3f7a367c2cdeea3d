/* hexcg bench ax: the element operator A_L (kernels/ax*.c) for p = pmin..pmax
 * and the geometry storages (per-node FP64 factors, split FP64 mean + FP32
 * deviations and on-the-fly factors on a deformed mesh, affine constants on
 * an undeformed one), against the ceilings measured in the same run: the
 * copy bandwidth (hx_array_copy of a comparable size) and the FP64 peak
 * (hx_ax_peak_gflops). Roofline time = max(bytes / copy_bw, flops / peak)
 * with the model bytes and flops of hx_ax_cost (docs/operator.md). Every rank
 * runs its own copy (MPI_COMM_WORLD ranks time together; figures per rank). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "bench_util.h"
#include "hx_bench.h"
#include "hx_core.h"
#include "hx_kernels.h"

/* the variants: storage and mesh */
enum { V_PRE, V_SPLIT, V_AFFINE, V_OTF, NVAR };
static const char *const var_name[NVAR] = {"precomputed", "split", "affine", "onthefly"};

typedef struct {
  const char *backend;
  int pmin, pmax;
  int geo[NVAR]; /* variants to run */
  double dofs;
  double min_time;
  int trials;
  double lambda;
} options;

/* --geo LIST: the variants to run */
static int parse_geo(const char *cmd, const char *name, const char *v, void *dest) {
  int *geo = (int *)dest;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", v);
  for (int g = 0; g < NVAR; g++) geo[g] = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int found = 0;
    for (int g = 0; g < NVAR; g++)
      if (!strcmp(tok, var_name[g])) geo[g] = found = 1;
    if (!strcmp(tok, "both")) geo[V_PRE] = geo[V_OTF] = found = 1;
    if (!strcmp(tok, "all"))
      for (int g = 0; g < NVAR; g++) geo[g] = found = 1;
    if (!found)
      return HX_ERROR(HX_ERR_INPUT,
                      "%s: %s: '%s' (allowed: a comma-separated list of precomputed, split, affine, "
                      "onthefly; or both, all)",
                      cmd, name, tok);
  }
  return HX_SUCCESS;
}

/* 1: stop with *status (after --help or an input error) */
static int parse_options(const hx_app_ctx *ctx, int argc, char **argv, options *o, int *status) {
  memset(o, 0, sizeof *o);
  o->dofs = -1.0;
  const hx_bench_opt opt[] = {
      {"--backend", HX_BOPT_STRING, &o->backend, "cpu", .meta = "NAME", .help = "backend: cpu or cuda"},
      {"--pmin", HX_BOPT_INT, &o->pmin, "1", 1, 15, .meta = "P", .help = "lowest order to run"},
      {"--pmax", HX_BOPT_INT, &o->pmax, "15", 1, 15, .meta = "P", .help = "highest order to run"},
      {"--geo", HX_BOPT_CUSTOM, o->geo, "all", .parse = parse_geo, .meta = "LIST",
       .help = "comma-separated variants: precomputed (FP64 factors per node), split (FP64 mean + FP32 "
               "deviations per node), onthefly (factors recomputed): a deformed mesh; affine: undeformed "
               "cubes, 7 constants per element; both = precomputed,onthefly; all"},
      {"--dofs", HX_BOPT_REAL, &o->dofs, NULL, 1.0, 1e11, .meta = "N",
       .help = "L-vector entries E*(p+1)^3 per case (default 2e6 on cpu, 3.2e7 on cuda); E = max(1, "
               "N/(p+1)^3)"},
      {"--min-time", HX_BOPT_REAL, &o->min_time, "0.05", 0.0, 100.0, .meta = "S",
       .help = "seconds per timed batch"},
      {"--trials", HX_BOPT_INT, &o->trials, "3", 1, 1000, .meta = "K",
       .help = "rounds over the variants, one timed batch of each per round; the median reported"},
      {"--lambda", HX_BOPT_REAL, &o->lambda, "0", 0.0, 1e300, .meta = "L",
       .help = "lambda of every element; 0: Poisson, as CEED BP5; L > 0 adds the mass term and its 8 "
               "B/node"},
  };
  const hx_bench_cmd cmd = {
      "bench ax", NULL,
      "Figures: MDOF/s counts E*p^3 (unique nodes of a periodic mesh, the CEED convention); GB/s and "
      "GFLOP/s use the model counts of hx_ax_cost (bytes of u, w and the geometry; flops of the sum "
      "factorisation, plus the factor computation on the fly); 'roof' is the roofline time "
      "max(bytes/copy_bw, flops/peak) over the measured time; 'xpre' the precomputed FP64 time of the "
      "same p over this variant's in the same round, median over the rounds (> 1: faster).",
      (int)(sizeof opt / sizeof opt[0]), opt};
  if (hx_bench_args(ctx, &cmd, argc, argv, status)) return 1;
  if (o->pmin > o->pmax) {
    *status =
        hx_app_fail(ctx, HX_ERROR(HX_ERR_INPUT, "bench ax: --pmin %d > --pmax %d", o->pmin, o->pmax), 1);
    return 1;
  }
  return 0;
}

/* kernels timed by hx_bench_time */
typedef struct {
  hx_backend b;
  hx_ax ax;
  int64_t n;
  double *d_x, *d_y;
} karg;
static int run_copy(void *p) {
  karg *a = (karg *)p;
  HX_CALL(hx_array_copy(a->b, a->n, a->d_y, a->d_x));
  return HX_SUCCESS;
}
static int run_ax(void *p) {
  karg *a = (karg *)p;
  HX_CALL(hx_ax_apply(a->ax, a->d_x, a->d_y, NULL));
  return HX_SUCCESS;
}

/* The copy ceiling: hx_array_copy moving `bytes` (two arrays of bytes/16
 * doubles; 16 bytes per entry, no write-allocate, like the operator's
 * count). */
static int copy_ceiling(const hx_app_ctx *ctx, hx_backend b, const hx_bench_timing_opts *topt, double bytes,
                        double *copy_bw) {
  karg c = {b, NULL, (int64_t)(bytes / 16.0) + 1, NULL, NULL};
  int ierr = hx_mem_alloc(b, (size_t)c.n * sizeof(double), (void **)&c.d_x);
  if (!ierr) ierr = hx_mem_alloc(b, (size_t)c.n * sizeof(double), (void **)&c.d_y);
  if (!ierr) ierr = hx_mem_zero(b, c.d_x, (size_t)c.n * sizeof(double));
  if (!ierr) ierr = hx_mem_zero(b, c.d_y, (size_t)c.n * sizeof(double));
  hx_bench_timing t;
  hx_bench_timing_opts best = *topt;
  best.use_median = 0; /* a ceiling: the fastest batch, as STREAM reports */
  if (!ierr) ierr = hx_bench_time(ctx->comm, b, NULL, run_copy, &c, &best, &t);
  if (!ierr) *copy_bw = 16.0 * (double)c.n / t.seconds;
  hx_mem_free(b, (void **)&c.d_x);
  hx_mem_free(b, (void **)&c.d_y);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

/* deterministic pseudo-random in [-1, 1) */
static double rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static int bench(const hx_app_ctx *ctx, const options *o) {
  hx_backend b = NULL;
  HX_CALL(hx_backend_create(o->backend, &b));
  const int cuda = hx_backend_get_kind(b) == HX_BACKEND_CUDA;
  const double dofs = o->dofs > 0 ? o->dofs : (cuda ? 3.2e7 : 2e6);
  hx_bench_timing_opts topt;
  memset(&topt, 0, sizeof topt);
  topt.min_batch_s = o->min_time;
  topt.trials = o->trials;
  topt.max_reps = 1L << 30;
  topt.use_median = 1;
  int ierr = HX_SUCCESS;
  karg a = {b, NULL, 0, NULL, NULL};
  double *h_nodes = NULL, *h_kap = NULL, *h_u = NULL, *h_flat = NULL;

  if (ctx->rank == 0) {
    double load[3] = {-1, -1, -1};
    FILE *fl = fopen("/proc/loadavg", "r");
    if (fl) {
      if (fscanf(fl, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
      fclose(fl);
    }
    printf(
        "hexcg bench ax: backend %s (%d %s), %d rank(s), ~%.3g L-entries per case, batches >= %.3g s, "
        "median of %d; lambda %g; load average %.2f\n",
        o->backend, cuda ? 1 : hx_backend_num_threads(b), cuda ? "device" : "OpenMP threads", ctx->size, dofs,
        o->min_time, o->trials, o->lambda, load[0]);
    printf(
        "ceilings, measured next to the cases (fastest of the trials; the operator: median):\n"
        "copyGB = hx_array_copy moving the bytes of the precomputed case of that p (16 B/entry),\n"
        "once per p; peakGF = FP64 multiply-add chains (hx_ax_peak_gflops, same instruction set\n"
        "as the kernel), before each case\n");
    printf("%-11s %2s %8s %7s %7s %8s %8s %8s %7s %7s %7s %5s %5s %6s\n", "geo", "p", "E", "B/DOF", "flop/DOF",
           "ms/apply", "MDOF/s", "GFLOP/s", "GB/s", "copyGB", "peakGF", "roof", "bound", "xpre");
  }
  for (int p = o->pmin; p <= o->pmax && !ierr; p++) {
    const int n = p + 1, n3 = n * n * n;
    int64_t E64 = (int64_t)(dofs / n3);
    if (E64 < 1) E64 = 1;
    if (E64 * n3 >= ((int64_t)1 << 31)) {
      ierr =
          HX_ERROR(HX_ERR_INPUT, "--dofs %.3g: E*(p+1)^3 must stay below 2^31 (int32 local indices)", dofs);
      break;
    }
    const int32_t E = (int32_t)E64;
    const int64_t nl = (int64_t)E * n3;
    /* elements: unit cubes on a line of lattice positions, vertices moved by
     * up to 0.15 (positive Jacobian), kappa = 1, lambda = o->lambda */
    ierr = HX_ALLOC(&h_nodes, (size_t)E * 24);
    if (!ierr) ierr = HX_ALLOC(&h_flat, (size_t)E * 24);
    if (!ierr) ierr = HX_ALLOC(&h_kap, (size_t)E * 2);
    if (!ierr) ierr = HX_ALLOC(&h_u, (size_t)nl);
    if (ierr) break;
    uint64_t s = 12345u + (uint64_t)p;
    for (int32_t e = 0; e < E; e++) {
      for (int q = 0; q < 8; q++) {
        h_nodes[24 * (size_t)e + 3 * q + 0] = (e % 64) + (q & 1) + 0.15 * rnd(&s);
        h_nodes[24 * (size_t)e + 3 * q + 1] = ((e / 64) % 64) + ((q >> 1) & 1) + 0.15 * rnd(&s);
        h_nodes[24 * (size_t)e + 3 * q + 2] = (e / 4096) + ((q >> 2) & 1) + 0.15 * rnd(&s);
        h_flat[24 * (size_t)e + 3 * q + 0] = (e % 64) + (q & 1);
        h_flat[24 * (size_t)e + 3 * q + 1] = ((e / 64) % 64) + ((q >> 1) & 1);
        h_flat[24 * (size_t)e + 3 * q + 2] = (e / 4096) + ((q >> 2) & 1);
      }
      h_kap[e] = 1.0;
      h_kap[E + e] = o->lambda;
    }
    for (int64_t i = 0; i < nl; i++) h_u[i] = rnd(&s);
    a.n = nl;
    ierr = hx_mem_alloc(b, (size_t)nl * sizeof(double), (void **)&a.d_x);
    if (!ierr) ierr = hx_mem_alloc(b, (size_t)nl * sizeof(double), (void **)&a.d_y);
    if (!ierr) ierr = hx_mem_to_device(b, a.d_x, h_u, (size_t)nl * sizeof(double));
    double copy_bw = 0.0; /* measured once per p, before its first case */
    /* every selected variant built first, then timed in turn, one batch
     * each per round (A B A B ...): a slow phase of a shared machine hits
     * all variants of the round alike, and xpre is the median over the
     * rounds of the ratio within a round */
    hx_ax axs[NVAR] = {NULL};
    double bpe[NVAR] = {0}, fpe[NVAR] = {0}, peak[NVAR] = {0};
    /* tt[g * trials + r]: seconds per apply; then 2 * trials of scratch for
     * the medians */
    double *tt = NULL;
    ierr = HX_ALLOC(&tt, (size_t)(NVAR + 2) * (size_t)o->trials);
    for (int g = 0; g < NVAR && !ierr; g++) {
      if (!o->geo[g]) continue;
      hx_ax_opts ao = hx_ax_opts_default();
      ao.mode = g == V_OTF ? HX_GEO_ONTHEFLY : HX_GEO_PRECOMPUTED;
      ao.geometry = g == V_SPLIT ? HX_AX_GEO_SPLIT : HX_AX_GEO_FP64;
      ierr = hx_ax_create_opts(b, p, E, 8, g == V_AFFINE ? h_flat : h_nodes, h_kap, h_kap + E, &ao, &axs[g]);
      if (!ierr) {
        hx_ax_cost(axs[g], &bpe[g], &fpe[g]);
        if (copy_bw <= 0.0)
          ierr = copy_ceiling(ctx, b, &topt, (o->lambda > 0 ? 72.0 : 64.0) * (double)nl, &copy_bw);
      }
      if (!ierr) ierr = hx_ax_peak_gflops(b, 0.2, &peak[g]);
    }
    hx_bench_timing_opts t1 = topt;
    t1.trials = 1;
    for (int r = 0; r < o->trials && !ierr; r++)
      for (int g = 0; g < NVAR && !ierr; g++) {
        if (!axs[g]) continue;
        a.ax = axs[g];
        hx_bench_timing t;
        ierr = hx_bench_time(ctx->comm, b, NULL, run_ax, &a, &t1, &t);
        if (!ierr) tt[g * o->trials + r] = t.seconds;
      }
    a.ax = NULL;
    for (int g = 0; g < NVAR && !ierr; g++) {
      if (!axs[g] || ctx->rank != 0) continue;
      double *v = tt + g * o->trials, *w = tt + NVAR * o->trials, med, xr = 0.0;
      for (int r = 0; r < o->trials; r++) {
        w[r] = v[r];
        if (axs[V_PRE]) w[o->trials + r] = tt[V_PRE * o->trials + r] / v[r];
      }
      med = hx_bench_median(o->trials, w);
      if (axs[V_PRE] && g != V_PRE) xr = hx_bench_median(o->trials, w + o->trials);
      const double bytes = bpe[g] * E, flops = fpe[g] * E, ndof = (double)E * p * p * p;
      const double tb = bytes / copy_bw, tf = flops / (peak[g] * 1e9);
      const double troof = tb > tf ? tb : tf;
      char xpre[16] = "-";
      if (xr > 0.0) snprintf(xpre, sizeof xpre, "%.2f", xr);
      printf("%-11s %2d %8d %7.1f %7.1f %8.3f %8.1f %8.2f %7.2f %7.2f %7.1f %5.2f %5s %6s\n", var_name[g], p,
             (int)E, bpe[g] / (p * p * p), fpe[g] / (p * p * p), 1e3 * med, ndof / med * 1e-6, flops / med * 1e-9,
             bytes / med * 1e-9, copy_bw * 1e-9, peak[g], troof / med, tb > tf ? "bw" : "flop", xpre);
      fflush(stdout);
    }
    for (int g = 0; g < NVAR; g++) hx_ax_destroy(&axs[g]);
    free(tt);
    hx_mem_free(b, (void **)&a.d_x);
    hx_mem_free(b, (void **)&a.d_y);
    free(h_nodes), free(h_flat), free(h_kap), free(h_u);
    h_nodes = h_flat = h_kap = h_u = NULL;
  }
  free(h_nodes), free(h_flat), free(h_kap), free(h_u);
  hx_ax_destroy(&a.ax);
  hx_mem_free(b, (void **)&a.d_x);
  hx_mem_free(b, (void **)&a.d_y);
  hx_backend_destroy(&b);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_bench_ax(hx_app_ctx *ctx, int argc, char **argv) {
  options o;
  int status = 0;
  if (parse_options(ctx, argc, argv, &o, &status)) return status;
  /* host memory per rank: on cpu the L-vectors x, y and u, the precomputed
   * geometric factors and the copy ceiling's two arrays, about 144 bytes per
   * entry; on cuda the host copy of u (8 bytes) */
  const int cuda = !strcmp(o.backend, "cuda");
  const double bytes = (o.dofs > 0 ? o.dofs : cuda ? 3.2e7 : 2e6) * (cuda ? 8.0 : 144.0);
  char what[96];
  snprintf(what, sizeof what, "bench ax: --dofs %.3g", o.dofs > 0 ? o.dofs : cuda ? 3.2e7 : 2e6);
  int ierr = hx_bench_check_memory(ctx->comm, 0.0, bytes, bytes, what);
  if (ierr) return hx_app_fail(ctx, ierr, 1);
  ierr = bench(ctx, &o);
  if (ierr) return hx_app_fail(ctx, ierr, 0);
  return 0;
}
