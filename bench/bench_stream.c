/* hexcg bench stream: the streaming benchmark suite BS1-BS7 (seeds/000:
 * copy, AXPY, norm, dot, fused CG update (+ its 3-word variant), gather,
 * scatter) over a sweep of sizes, with the fit of T(B) = T0 + B / Wmax per
 * kernel and the same-run copy as the reference ceiling. See
 * docs/benchmarks.md. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_opts.h"
#include "bench_util.h"
#include "hx_bench.h"
#include "hx_core.h"
#include "hx_gs.h"
#include "hx_kernels.h"

/* ------------------------------------------------------------ kernels */
enum { K_COPY = 0, K_AXPY, K_NORM, K_DOT, K_CG, K_CG3, K_GATHER, K_SCATTER, K_NUM };

typedef struct {
  const char *id;   /* key in the outputs */
  const char *name; /* what it computes */
  const char *what; /* the operation */
  int words;        /* doubles moved per entry (BS1-BS5); 0: from the gather-scatter sizes */
  int arrays[4];    /* which of the 4 work arrays it touches (1 = yes) */
  int is_gs;        /* BS6/BS7: needs a box-mesh gather-scatter */
} kernel_desc;

static const kernel_desc K[K_NUM] = {
    {"BS1", "copy", "y = x", 2, {1, 1, 0, 0}, 0},
    {"BS2", "axpy", "y = a x + b y", 3, {1, 1, 0, 0}, 0},
    {"BS3", "norm", "x . x", 1, {1, 0, 0, 0}, 0},
    {"BS4", "dot", "x . y", 2, {1, 1, 0, 0}, 0},
    {"BS5", "cg_update", "x += a p; r -= a w; r . r", 6, {1, 1, 1, 1}, 0},
    {"BS5r", "r_update", "r -= a w; r . r (3-word variant)", 3, {1, 1, 0, 0}, 0},
    {"BS6", "gather", "g = Z^T l (local, box mesh)", 0, {0, 0, 0, 0}, 1},
    {"BS7", "scatter", "l = Z g (box mesh)", 0, {0, 0, 0, 0}, 1},
};

typedef struct {
  hx_backend b;
  int kid;
  int64_t n;
  double *d[4];
  double sink;
  hx_gs gs;
  double *dl, *dg;
} run_arg;

static int run_kernel(void *arg) {
  run_arg *a = (run_arg *)arg;
  double s = 0.0;
  switch (a->kid) {
    case K_COPY: HX_CALL(hx_array_copy(a->b, a->n, a->d[1], a->d[0])); break;
    case K_AXPY: HX_CALL(hx_array_axpby(a->b, a->n, a->d[1], 0.5, a->d[0], 0.5)); break;
    case K_NORM: HX_CALL(hx_array_norm2sq(a->b, a->n, a->d[0], &s)); break;
    case K_DOT: HX_CALL(hx_array_dot(a->b, a->n, a->d[0], a->d[1], &s)); break;
    case K_CG:
      HX_CALL(hx_array_cg_update(a->b, a->n, a->n, a->d[0], a->d[1], a->d[2], a->d[3], 1e-9, &s));
      break;
    case K_CG3: HX_CALL(hx_array_r_update(a->b, a->n, a->n, a->d[0], a->d[1], 1e-9, &s)); break;
    case K_GATHER: HX_CALL(hx_gs_gather(a->gs, a->dl, a->dg)); break;
    case K_SCATTER: HX_CALL(hx_gs_scatter(a->gs, a->dg, a->dl)); break;
    default: return HX_ERROR(HX_ERR_INTERNAL, "kernel %d not runnable", a->kid);
  }
  a->sink += s;
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ options */
typedef struct {
  const char *backend;
  double min_bytes, max_bytes;
  double gs_max_bytes; /* largest size of the BS6/BS7 sweep */
  double fit_min;      /* the fit uses sizes >= this */
  int points;
  int order;
  const char *output;
  int trials;
  int use_median;
  double min_time;
  int want[K_NUM];
  int plot;
  const char *plot_script;
  const char *python;
} options;

/* --kernels LIST */
static int parse_kernels(const char *cmd, const char *name, const char *s, void *dest) {
  int *want = (int *)dest;
  for (int k = 0; k < K_NUM; k++) want[k] = 0;
  char buf[256];
  HX_CHECK(strlen(s) < sizeof buf, HX_ERR_INPUT, "%s: %s: list too long", cmd, name);
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = -1;
    for (int k = 0; k < K_NUM; k++)
      if (!strcmp(tok, K[k].id) || !strcmp(tok, K[k].name)) found = k;
    HX_CHECK(found >= 0, HX_ERR_INPUT,
             "%s: %s: unknown kernel '%s' (allowed: BS1, BS2, BS3, BS4, BS5, BS5r, BS6, BS7)", cmd, name,
             tok);
    want[found] = 1;
  }
  want[K_COPY] = 1;
  return HX_SUCCESS;
}

/* the defaults that depend on the backend, and the checks across options */
static int check_options(options *o) {
  if (o->max_bytes < 0.0) o->max_bytes = strcmp(o->backend, "cuda") == 0 ? 4294967296.0 : 268435456.0;
  /* the mesh and handle setup of BS6/BS7 runs on the host and costs far more
   * than the timing: cap its sweep by default (64M cpu, 512M cuda) */
  if (o->gs_max_bytes < 0.0) {
    const double cap = strcmp(o->backend, "cuda") == 0 ? 536870912.0 : 67108864.0;
    o->gs_max_bytes = o->max_bytes < cap ? o->max_bytes : cap;
  }
  HX_CHECK(o->max_bytes > o->min_bytes, HX_ERR_INPUT,
           "bench stream: --max (%.0f) must be larger than --min (%.0f)", o->max_bytes, o->min_bytes);
  HX_CHECK(o->output[0], HX_ERR_INPUT, "bench stream: --output: empty directory name");
  return HX_SUCCESS;
}

/* 1: stop with *status (after --help or an input error) */
static int parse_options(const hx_app_ctx *ctx, int argc, char **argv, options *o, int *status) {
  memset(o, 0, sizeof *o);
  o->max_bytes = -1.0;
  o->gs_max_bytes = -1.0;
  for (int k = 0; k < K_NUM; k++) o->want[k] = 1;
  const char *stat = NULL;
  int no_plot = 0;
  const hx_bench_opt opt[] = {
      {"--backend", HX_BOPT_CHOICE, &o->backend, "cpu", .choices = "cpu,cuda", .help = "backend"},
      {"--min", HX_BOPT_BYTES, &o->min_bytes, "4K", 8, 1e15, .help = "smallest size, bytes moved per launch"},
      {"--max", HX_BOPT_BYTES, &o->max_bytes, NULL, 8, 1e15,
       .help = "largest size (default 256M on cpu, 4G on cuda)"},
      {"--points", HX_BOPT_INT, &o->points, "20", 2, 200, .help = "sizes in the geometric sweep"},
      {"--order", HX_BOPT_INT, &o->order, "7", 1, 15, .meta = "P",
       .help = "order of the box mesh of BS6/BS7"},
      {"--gs-max", HX_BOPT_BYTES, &o->gs_max_bytes, NULL, 8, 1e15,
       .help = "largest size of the BS6/BS7 sweep (default: --max, but at most 64M on cpu and 512M on cuda: "
               "the host-side mesh setup dominates)"},
      {"--output", HX_BOPT_STRING, &o->output, ".", .meta = "DIR",
       .help = "where stream.csv, stream_fit.yaml, stream.png go"},
      {"--fit-min", HX_BOPT_BYTES, &o->fit_min, NULL, 8, 1e15,
       .help = "fit the model to the sizes >= BYTES only (default 0: all; on a cpu e.g. 4x the last-level "
               "cache gives the memory Wmax)"},
      {"--kernels", HX_BOPT_CUSTOM, o->want, NULL, .parse = parse_kernels, .meta = "LIST",
       .help = "comma-separated subset of BS1,BS2,BS3,BS4,BS5,BS5r,BS6,BS7 (default all; BS1, the copy "
               "ceiling, always runs)"},
      {"--trials", HX_BOPT_INT, &o->trials, "5", 1, 101, .help = "timed batches per size"},
      {"--stat", HX_BOPT_CHOICE, &stat, "min", .choices = "min,median",
       .help = "statistic over the trials (min as STREAM; both are in stream.csv)"},
      {"--min-time", HX_BOPT_REAL, &o->min_time, "0.005", 0, 10, .meta = "SECONDS",
       .help = "minimum duration of one timed batch"},
      {"--no-plot", HX_BOPT_FLAG, &no_plot, .help = "do not draw stream.png"},
      {"--plot-script", HX_BOPT_STRING, &o->plot_script, NULL, .meta = "PATH",
       .help = "plotting script (default: the project's scripts/plot_stream.py)"},
      {"--python", HX_BOPT_STRING, &o->python, NULL, .meta = "PATH",
       .help = "Python with matplotlib (default: $HEXCG_PYTHON, else /usr/bin/python3, else "
               "python3 from PATH)"},
  };
  const hx_bench_cmd cmd = {
      "bench stream",
      "Streaming kernels BS1-BS7 over a sweep of sizes, fit of T(B) = T0 + B / Wmax per kernel.",
      "BYTES accepts the suffixes K, M, G (powers of 1024). Sizes are bytes moved by one launch (see "
      "docs/benchmarks.md), summed over ranks in the aggregate figures.",
      (int)(sizeof opt / sizeof opt[0]), opt};
  if (hx_bench_args(ctx, &cmd, argc, argv, status)) return 1;
  o->use_median = !strcmp(stat, "median");
  o->plot = !no_plot;
  const int ierr = check_options(o);
  if (ierr) {
    *status = hx_app_fail(ctx, ierr, 1);
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------------ results */
typedef struct {
  int n;                  /* points measured */
  int64_t *entries;       /* vector length (BS1-5) or elements (BS6/7) per rank */
  double *bytes;          /* bytes per launch, summed over ranks */
  double *seconds;        /* per launch, slowest rank, the statistic over trials */
  double *seconds_min;    /* fastest trial */
  double *seconds_median; /* median trial */
  double *seconds_event;  /* device events (-1 on cpu) */
  double *gbps_rank_min, *gbps_rank_max;
  long *reps;
  hx_bench_fit fit, fit_event;
  int fit_ok, fit_event_ok;
  int stable;      /* hx_bench_stable over the fitted sizes */
  double spread;   /* the largest median / fastest trial */
  char why[200];   /* why not stable */
} series;

static int series_alloc(series *s, int cap) {
  memset(s, 0, sizeof *s);
  HX_CALL(HX_ALLOC(&s->entries, cap));
  HX_CALL(HX_ALLOC(&s->bytes, cap));
  HX_CALL(HX_ALLOC(&s->seconds, cap));
  HX_CALL(HX_ALLOC(&s->seconds_min, cap));
  HX_CALL(HX_ALLOC(&s->seconds_median, cap));
  HX_CALL(HX_ALLOC(&s->seconds_event, cap));
  HX_CALL(HX_ALLOC(&s->gbps_rank_min, cap));
  HX_CALL(HX_ALLOC(&s->gbps_rank_max, cap));
  HX_CALL(HX_ALLOC(&s->reps, cap));
  return HX_SUCCESS;
}

static void series_free(series *s) {
  free(s->entries), free(s->bytes), free(s->seconds), free(s->seconds_min), free(s->seconds_event);
  free(s->seconds_median);
  free(s->gbps_rank_min), free(s->gbps_rank_max), free(s->reps);
  memset(s, 0, sizeof *s);
}

typedef struct {
  const options *o;
  const hx_app_ctx *ctx;
  hx_backend b;
  hx_dev_timer dt;
  hx_bench_timing_opts topt;
  double *target; /* geometric sweep of bytes per rank */
  series s[K_NUM];
  int ran[K_NUM];
  char gs_note[256];
  double gs_setup_s; /* seconds spent building the BS6/BS7 meshes and handles */
} bench;

/* time one point and append it to series s */
static int measure_point(bench *B, run_arg *ra, double bytes_rank, int64_t entries, series *s) {
  hx_bench_timing t;
  HX_CALL(hx_bench_time(B->ctx->comm, B->b, B->dt, run_kernel, ra, &B->topt, &t));
  double sum;
  HX_MPI(MPI_Allreduce(&bytes_rank, &sum, 1, MPI_DOUBLE, MPI_SUM, B->ctx->comm));
  const double mine = bytes_rank / t.seconds_rank / 1e9;
  double gmin, gmax;
  HX_MPI(MPI_Allreduce(&mine, &gmin, 1, MPI_DOUBLE, MPI_MIN, B->ctx->comm));
  HX_MPI(MPI_Allreduce(&mine, &gmax, 1, MPI_DOUBLE, MPI_MAX, B->ctx->comm));
  const int i = s->n++;
  s->entries[i] = entries;
  s->bytes[i] = sum;
  s->seconds[i] = t.seconds;
  s->seconds_min[i] = t.seconds_min;
  s->seconds_median[i] = t.seconds_median;
  s->seconds_event[i] = t.seconds_event;
  s->gbps_rank_min[i] = gmin;
  s->gbps_rank_max[i] = gmax;
  s->reps[i] = t.reps;
  return HX_SUCCESS;
}

/* fill n doubles of backend memory with values in [-1, 1) (host staging in
 * pieces); the first touch of the pages is done by the backend's threads */
static int fill_random(hx_backend b, int64_t n, double *d, uint64_t seed) {
  HX_CALL(hx_array_pointwise_mult(b, n, d, d, d)); /* first touch (zeros) in the kernels' layout */
  const int64_t piece = 1 << 20;
  double *h;
  HX_CALL(HX_ALLOC(&h, piece));
  uint64_t st = seed | 1u;
  int ierr = HX_SUCCESS;
  for (int64_t lo = 0; lo < n && !ierr; lo += piece) {
    const int64_t m = n - lo < piece ? n - lo : piece;
    for (int64_t i = 0; i < m; i++) {
      st ^= st >> 12, st ^= st << 25, st ^= st >> 27;
      h[i] = (double)((st * 2685821657736338717ull) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
    ierr = hx_mem_to_device(b, d + lo, h, (size_t)m * sizeof(double));
  }
  free(h);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

/* BS1-BS5: sweep the vector length so that the bytes per launch follow the
 * targets; duplicates after rounding are dropped */
static int run_vector_kernels(bench *B) {
  const options *o = B->o;
  int64_t need[4] = {0, 0, 0, 0};
  for (int k = 0; k < K_NUM; k++) {
    if (!o->want[k] || K[k].is_gs) continue;
    const int64_t nmax = (int64_t)llround(o->max_bytes / (8.0 * K[k].words));
    for (int a = 0; a < 4; a++)
      if (K[k].arrays[a] && nmax > need[a]) need[a] = nmax;
  }
  run_arg ra;
  memset(&ra, 0, sizeof ra);
  ra.b = B->b;
  int ierr = HX_SUCCESS;
  for (int a = 0; a < 4 && !ierr; a++) {
    if (!need[a]) continue;
    ierr = hx_mem_alloc(B->b, (size_t)need[a] * sizeof(double), (void **)&ra.d[a]);
    if (!ierr) ierr = fill_random(B->b, need[a], ra.d[a], 0x9E3779B97F4A7C15ull * (uint64_t)(a + 1));
  }
  for (int k = 0; k < K_NUM && !ierr; k++) {
    if (!o->want[k] || K[k].is_gs) continue;
    ierr = series_alloc(&B->s[k], o->points);
    ra.kid = k;
    int64_t prev = 0;
    for (int j = 0; j < o->points && !ierr; j++) {
      int64_t n = (int64_t)llround(B->target[j] / (8.0 * K[k].words));
      if (n < 1) n = 1;
      if (n <= prev) continue;
      prev = n;
      ra.n = n;
      ierr = measure_point(B, &ra, 8.0 * K[k].words * (double)n, n, &B->s[k]);
    }
    B->ran[k] = !ierr;
  }
  for (int a = 0; a < 4; a++) hx_mem_free(B->b, (void **)&ra.d[a]);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

/* BS6/BS7 on an nx x ny x nz box of order p whose elements are split over
 * the ranks in contiguous slabs; the sweep runs over the number of elements
 * (targets clipped to --gs-max). One gather-scatter handle per size serves
 * both kernels; the bytes per launch are the handle's own count
 * (hx_gs_get_info: CSR gather with index arrays, scatter through the map). */
static int run_gs_point(bench *B, int nx, int ny, int nz) {
  const hx_app_ctx *ctx = B->ctx;
  const int p = B->o->order, npe = (p + 1) * (p + 1) * (p + 1);
  const int64_t E = (int64_t)nx * ny * nz;
  const int64_t e0 = E * ctx->rank / ctx->size, ne = E * (ctx->rank + 1) / ctx->size - e0;
  const int64_t nl = ne * npe;
  int64_t *ids = NULL;
  run_arg ra;
  memset(&ra, 0, sizeof ra);
  ra.b = B->b;
  const double t_setup = MPI_Wtime();
  int ierr = HX_ALLOC(&ids, nl + 1);
  if (!ierr) ierr = hx_gs_box_ids(nx, ny, nz, p, e0, ne, ids);
  if (!ierr) ierr = hx_gs_create(B->b, ctx->comm, nl, ids, &ra.gs);
  free(ids);
  hx_gs_info info;
  memset(&info, 0, sizeof info);
  if (!ierr) ierr = hx_gs_get_info(ra.gs, &info);
  if (!ierr) ierr = hx_mem_alloc(B->b, (size_t)(info.nl + 1) * sizeof(double), (void **)&ra.dl);
  if (!ierr) ierr = hx_mem_alloc(B->b, (size_t)(info.ng + 1) * sizeof(double), (void **)&ra.dg);
  if (!ierr && info.nl) ierr = fill_random(B->b, info.nl, ra.dl, 0xD1B54A32D192ED03ull);
  if (!ierr && info.ng) ierr = fill_random(B->b, info.ng, ra.dg, 0x8CB92BA72F3D8DD7ull);
  double setup = MPI_Wtime() - t_setup;
  if (!ierr)
    ierr = MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS
               ? HX_SUCCESS
               : HX_ERROR(HX_ERR_MPI, "MPI_Allreduce failed");
  B->gs_setup_s += setup;
  if (!ierr && B->o->want[K_GATHER]) {
    ra.kid = K_GATHER;
    ierr = measure_point(B, &ra, info.gather_bytes, E, &B->s[K_GATHER]);
  }
  if (!ierr && B->o->want[K_SCATTER]) {
    ra.kid = K_SCATTER;
    ierr = measure_point(B, &ra, info.scatter_bytes, E, &B->s[K_SCATTER]);
  }
  hx_mem_free(B->b, (void **)&ra.dl);
  hx_mem_free(B->b, (void **)&ra.dg);
  hx_gs_destroy(&ra.gs);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

static int run_gs_kernels(bench *B) {
  const options *o = B->o;
  const hx_app_ctx *ctx = B->ctx;
  const int p = o->order;
  /* gather bytes per element, about: (p+1)^3 (value + index) + p^3 (value + offset) */
  const double bpe = 12.0 * (p + 1) * (p + 1) * (p + 1) + 12.0 * p * p * p;
  for (int k = K_GATHER; k <= K_SCATTER; k++)
    if (o->want[k]) HX_CALL(series_alloc(&B->s[k], o->points));
  int64_t prev = 0;
  for (int j = 0; j < o->points; j++) {
    const double total = B->target[j] * ctx->size;
    if (total > o->gs_max_bytes * (1.0 + 1e-9)) break;
    double Et = floor(total / bpe + 0.5);
    if (Et < ctx->size) Et = ctx->size;
    HX_CHECK(Et < 1e9, HX_ERR_INPUT, "--gs-max too large for the box mesh (%.3g elements)", Et);
    int nx = (int)floor(cbrt(Et));
    if (nx < 1) nx = 1;
    const int ny = nx;
    int nz = (int)floor(Et / ((double)nx * ny) + 0.5);
    if (nz < 1) nz = 1;
    const int64_t E = (int64_t)nx * ny * nz;
    if (E <= prev) continue;
    HX_CHECK(E / ctx->size * (p + 1) * (p + 1) * (p + 1) < INT32_MAX, HX_ERR_INPUT,
             "BS6/BS7: %lld elements of order %d are too many for one rank (give a smaller --gs-max)",
             (long long)E, p);
    prev = E;
    HX_CALL(run_gs_point(B, nx, ny, nz));
  }
  for (int k = K_GATHER; k <= K_SCATTER; k++) B->ran[k] = o->want[k];
  snprintf(B->gs_note, sizeof B->gs_note,
           "BS6/BS7: box mesh of order %d, sizes up to %.3g bytes (--gs-max), %.2f s spent in gather-scatter "
           "setup",
           p, o->gs_max_bytes, B->gs_setup_s);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ output */
static void fmt_bytes(double b, char *buf, size_t len) {
  if (b >= 1073741824.0)
    snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
  else if (b >= 1048576.0)
    snprintf(buf, len, "%.2f MiB", b / 1048576.0);
  else if (b >= 1024.0)
    snprintf(buf, len, "%.1f KiB", b / 1024.0);
  else
    snprintf(buf, len, "%.0f B", b);
}

static double copy_gbps_at(const bench *B, double bytes) {
  const series *c = &B->s[K_COPY];
  double g[256];
  const int n = c->n < 256 ? c->n : 256;
  for (int i = 0; i < n; i++) g[i] = c->bytes[i] / c->seconds[i] / 1e9;
  return hx_bench_interp_log(n, c->bytes, g, bytes);
}

static void yaml_num(FILE *f, const char *key, double v, const char *indent) {
  if (isinf(v))
    fprintf(f, "%s%s: %s\n", indent, key, v > 0 ? ".inf" : "-.inf");
  else if (isnan(v))
    fprintf(f, "%s%s: .nan\n", indent, key);
  else
    fprintf(f, "%s%s: %.6e\n", indent, key, v);
}

static double target_ratio(const bench *B, int k) {
  const int gpu = hx_backend_get_kind(B->b) == HX_BACKEND_CUDA;
  if (K[k].is_gs) return gpu ? 0.9 : 0.6;
  return gpu ? 0.9 : 0.85;
}

static int write_csv(const bench *B) {
  char tmp[4200];
  FILE *f;
  HX_CALL(hx_bench_file_open(B->o->output, "stream.csv", &f, tmp, sizeof tmp));
  fprintf(f,
          "kernel,bytes,seconds,gbps,ratio_to_copy,entries,reps,seconds_min,seconds_median,seconds_event,"
          "gbps_rank_min,gbps_rank_max\n");
  for (int k = 0; k < K_NUM; k++) {
    const series *s = &B->s[k];
    if (!B->ran[k]) continue;
    for (int i = 0; i < s->n; i++) {
      const double g = s->bytes[i] / s->seconds[i] / 1e9;
      fprintf(f, "%s,%.0f,%.9e,%.6f,%.6f,%lld,%ld,%.9e,%.9e,%.9e,%.6f,%.6f\n", K[k].id, s->bytes[i],
              s->seconds[i], g, g / copy_gbps_at(B, s->bytes[i]), (long long)s->entries[i], s->reps[i],
              s->seconds_min[i], s->seconds_median[i], s->seconds_event[i], s->gbps_rank_min[i],
              s->gbps_rank_max[i]);
    }
  }
  HX_CALL(hx_bench_file_commit(f, tmp, B->o->output, "stream.csv"));
  return HX_SUCCESS;
}

static void yaml_fit(FILE *f, const hx_bench_fit *fit, const char *ind) {
  yaml_num(f, "t0_seconds", fit->t0, ind);
  yaml_num(f, "wmax_gbps", fit->wmax / 1e9, ind);
  yaml_num(f, "b08_bytes", fit->b08, ind);
  yaml_num(f, "rel_rms", fit->rel_rms, ind);
  yaml_num(f, "rel_max", fit->rel_max, ind);
  yaml_num(f, "r2", fit->r2, ind);
  fprintf(f, "%spoints: %d\n%st0_clamped: %s\n", ind, fit->npoints, ind, fit->t0_clamped ? "true" : "false");
}

static int write_yaml(const bench *B) {
  const options *o = B->o;
  char tmp[4200];
  FILE *f;
  HX_CALL(hx_bench_file_open(o->output, "stream_fit.yaml", &f, tmp, sizeof tmp));
  const int gpu = hx_backend_get_kind(B->b) == HX_BACKEND_CUDA;
  hx_device_info di;
  memset(&di, 0, sizeof di);
  if (gpu) hx_cuda_query(&di);
  hx_error_clear();
  fprintf(f, "# hexcg bench stream: fit of T(B) = T0 + B / Wmax per kernel (docs/benchmarks.md)\n");
  fprintf(f, "hexcg_version: \"%s\"\n", HX_VERSION_STRING);
  fprintf(f, "backend: %s\n", hx_backend_name(B->b));
  fprintf(f, "device: \"%s\"\n", gpu ? di.name : "host");
  fprintf(f, "ranks: %d\nthreads_per_rank: %d\n", B->ctx->size, hx_backend_num_threads(B->b));
  fprintf(f, "timing:\n  clock: MPI_Wtime\n  statistic: %s\n  trials: %d\n", o->use_median ? "median" : "min",
          o->trials);
  yaml_num(f, "min_batch_seconds", o->min_time, "  ");
  fprintf(f, "  device_events: %s\n", gpu ? "true" : "false");
  fprintf(f, "sweep:\n");
  yaml_num(f, "min_bytes", o->min_bytes, "  ");
  yaml_num(f, "max_bytes", o->max_bytes, "  ");
  fprintf(f, "  points: %d\n  order: %d\n", o->points, o->order);
  yaml_num(f, "gs_max_bytes", o->gs_max_bytes, "  ");
  yaml_num(f, "fit_min_bytes", o->fit_min, "  ");
  fprintf(f, "bytes: aggregate over ranks per launch\n");
  fprintf(f, "copy_reference: BS1\n");
  if (B->gs_note[0]) fprintf(f, "note: \"%s\"\n", B->gs_note);
  fprintf(f, "kernels:\n");
  for (int k = 0; k < K_NUM; k++) {
    if (!B->ran[k]) continue;
    const series *s = &B->s[k];
    fprintf(f, "  %s:\n    name: %s\n    operation: \"%s\"\n", K[k].id, K[k].name, K[k].what);
    if (K[k].words) fprintf(f, "    words_per_entry: %d\n", K[k].words);
    double peak = 0.0;
    for (int i = 0; i < s->n; i++)
      if (s->bytes[i] / s->seconds[i] > peak) peak = s->bytes[i] / s->seconds[i];
    yaml_num(f, "peak_gbps", peak / 1e9, "    ");
    if (s->n) yaml_num(f, "largest_gbps", s->bytes[s->n - 1] / s->seconds[s->n - 1] / 1e9, "    ");
    if (s->fit_ok) {
      yaml_fit(f, &s->fit, "    ");
      const series *c = &B->s[K_COPY];
      const double r = c->fit_ok ? s->fit.wmax / c->fit.wmax : NAN;
      yaml_num(f, "wmax_ratio_to_copy", r, "    ");
      yaml_num(f, "target_ratio", target_ratio(B, k), "    ");
      if (s->stable)
        fprintf(f, "    meets_target: %s\n", r >= target_ratio(B, k) ? "true" : "false");
      else
        fprintf(f, "    meets_target: null  # not judged: the series was not stable\n");
    } else {
      fprintf(f, "    t0_seconds: null\n    wmax_gbps: null\n    b08_bytes: null\n");
    }
    fprintf(f, "    stable: %s\n", s->stable ? "true" : "false");
    yaml_num(f, "trial_spread", s->spread, "    ");
    if (!s->stable) fprintf(f, "    unstable_reason: \"%s\"\n", s->why);
    if (s->fit_event_ok) {
      fprintf(f, "    event_fit:\n");
      yaml_fit(f, &s->fit_event, "      ");
    }
  }
  HX_CALL(hx_bench_file_commit(f, tmp, o->output, "stream_fit.yaml"));
  return HX_SUCCESS;
}

/* find the plotting script: --plot-script, the source tree known at build
 * time, or scripts/ next to / above the executable */
static int find_plot_script(const options *o, char *out, size_t len) {
  if (o->plot_script) {
    snprintf(out, len, "%s", o->plot_script);
    return access(out, R_OK) == 0;
  }
#ifdef HEXCG_SOURCE_DIR
  snprintf(out, len, "%s/scripts/plot_stream.py", HEXCG_SOURCE_DIR);
  if (access(out, R_OK) == 0) return 1;
#endif
  char exe[4096];
  const ssize_t m = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (m > 0) {
    exe[m] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    const char *rel[] = {"/../scripts/plot_stream.py", "/scripts/plot_stream.py",
                         "/../share/hexcg/plot_stream.py"};
    for (int i = 0; i < 3; i++) {
      snprintf(out, len, "%s%s", exe, rel[i]);
      if (access(out, R_OK) == 0) return 1;
    }
  }
  return 0;
}

static int has_quote(const char *s) { return strchr(s, '\'') != NULL; }

/* draw stream.png with the project's script; a missing Python or
 * matplotlib is a warning, not a failure (the CSV and YAML hold the data) */
static void make_plot(const bench *B) {
  const options *o = B->o;
  char script[4096], tmp[4200], path[4200], cmd[16384];
  if (!find_plot_script(o, script, sizeof script)) {
    hx_warn("no plot: scripts/plot_stream.py not found (give --plot-script PATH)");
    return;
  }
  const char *py = o->python ? o->python : hx_python(); /* the project's one rule (hx_core.h) */
  if (strchr(py, '/') && access(py, X_OK) != 0) {
    hx_warn("no plot: %s is not executable (give --python PATH or set HEXCG_PYTHON)", py);
    return;
  }
  snprintf(tmp, sizeof tmp, "%s/.stream.png.tmp.%ld.png", o->output, (long)getpid());
  snprintf(path, sizeof path, "%s/stream.png", o->output);
  if (has_quote(script) || has_quote(tmp) || has_quote(py)) {
    hx_warn("no plot: a path contains a single quote");
    return;
  }
  snprintf(cmd, sizeof cmd, "'%s' '%s' --dir '%s' --out '%s'", py, script, o->output, tmp);
  fflush(stdout);
  const int rc = system(cmd);
  if (rc != 0) {
    remove(tmp);
    hx_warn("no plot: '%s' failed (status %d); stream.csv and stream_fit.yaml are written", cmd, rc);
    return;
  }
  if (rename(tmp, path) != 0) {
    hx_warn("no plot: cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    remove(tmp);
    return;
  }
  hx_log(HX_LOG_NORMAL, "wrote %s\n", path);
}

static void print_series(const bench *B, int k) {
  const series *s = &B->s[k];
  const int multi = B->ctx->size > 1, gpu = hx_backend_get_kind(B->b) == HX_BACKEND_CUDA;
  hx_log(HX_LOG_NORMAL, "\n%s %s: %s\n", K[k].id, K[k].name, K[k].what);
  hx_log(HX_LOG_NORMAL, "  %12s %12s %7s %12s %9s %7s%s%s\n", k >= K_GATHER ? "elements" : "entries", "bytes",
         "reps", "us/launch", "GB/s", "/copy", gpu ? "  event GB/s" : "",
         multi ? "  rank GB/s min..max" : "");
  for (int i = 0; i < s->n; i++) {
    char bb[32];
    fmt_bytes(s->bytes[i], bb, sizeof bb);
    const double g = s->bytes[i] / s->seconds[i] / 1e9;
    char ev[32] = "", rk[64] = "";
    if (gpu)
      snprintf(ev, sizeof ev, "  %11.2f",
               s->seconds_event[i] > 0 ? s->bytes[i] / s->seconds_event[i] / 1e9 : 0.0);
    if (multi) snprintf(rk, sizeof rk, "  %8.2f..%-8.2f", s->gbps_rank_min[i], s->gbps_rank_max[i]);
    hx_log(HX_LOG_NORMAL, "  %12lld %12s %7ld %12.3f %9.2f %7.3f%s%s\n", (long long)s->entries[i], bb,
           s->reps[i], 1e6 * s->seconds[i], g, g / copy_gbps_at(B, s->bytes[i]), ev, rk);
  }
}

static void print_summary(const bench *B) {
  const int gpu = hx_backend_get_kind(B->b) == HX_BACKEND_CUDA;
  char fm[40] = "all sizes";
  if (B->o->fit_min > 0) {
    char b[24];
    fmt_bytes(B->o->fit_min, b, sizeof b);
    snprintf(fm, sizeof fm, "sizes >= %s", b);
  }
  hx_log(HX_LOG_NORMAL,
         "\nfit of T(B) = T0 + B / Wmax over %s (weighted least squares on relative residuals, T0 >= 0)%s\n",
         fm, gpu ? "; host clock (events in stream_fit.yaml)" : "");
  hx_log(HX_LOG_NORMAL, "  %-5s %-10s %10s %10s %12s %8s %8s %8s %7s %s\n", "id", "kernel", "T0 [us]",
         "Wmax GB/s", "B_0.8", "rel.rms", "rel.max", "/copy", "target", "");
  const series *c = &B->s[K_COPY];
  int unstable = 0;
  for (int k = 0; k < K_NUM; k++) {
    if (!B->ran[k]) continue;
    const series *s = &B->s[k];
    unstable += !s->stable;
    if (!s->fit_ok) {
      hx_log(HX_LOG_NORMAL, "  %-5s %-10s (no fit: fewer than 2 sizes in the fit range)\n", K[k].id,
             K[k].name);
      continue;
    }
    char bb[32];
    fmt_bytes(s->fit.b08, bb, sizeof bb);
    const double r = c->fit_ok ? s->fit.wmax / c->fit.wmax : NAN;
    const double tr = target_ratio(B, k);
    hx_log(HX_LOG_NORMAL, "  %-5s %-10s %10.3f %10.2f %12s %8.3f %8.3f %8.3f %7.2f %s%s\n", K[k].id,
           K[k].name, 1e6 * s->fit.t0, s->fit.wmax / 1e9, isfinite(s->fit.b08) ? bb : "inf", s->fit.rel_rms,
           s->fit.rel_max, r, tr,
           !s->stable    ? "UNSTABLE"
           : k == K_COPY ? "(reference)"
           : r >= tr     ? "ok"
                         : "BELOW TARGET",
           s->fit.t0_clamped ? " (T0 clamped at 0)" : "");
  }
  if (B->gs_note[0]) hx_log(HX_LOG_NORMAL, "  %s\n", B->gs_note);
  if (unstable) {
    for (int k = 0; k < K_NUM; k++)
      if (B->ran[k] && !B->s[k].stable) hx_log(HX_LOG_NORMAL, "  %s UNSTABLE: %s\n", K[k].id, B->s[k].why);
    hx_warn("the machine was not stable during %d of the series (other load?): their figures and targets are not "
            "to be trusted; rerun on a quiet machine (stream_fit.yaml says stable: false)",
            unstable);
  }
}

/* fit each kernel over its sizes >= --fit-min (host times, and on cuda the
 * event times) */
static int do_fits(bench *B) {
  for (int k = 0; k < K_NUM; k++) {
    series *s = &B->s[k];
    if (!B->ran[k] || s->n < 1) continue;
    double *bb, *tt, *te;
    HX_CALL(HX_ALLOC(&bb, s->n));
    HX_CALL(HX_ALLOC(&tt, s->n));
    HX_CALL(HX_ALLOC(&te, s->n));
    int m = 0, ev = 1;
    for (int i = 0; i < s->n; i++) {
      if (s->bytes[i] < B->o->fit_min) continue;
      bb[m] = s->bytes[i], tt[m] = s->seconds[i], te[m] = s->seconds_event[i];
      ev = ev && te[m] > 0.0;
      m++;
    }
    s->fit_ok = m >= 2 && hx_bench_fit_model(m, bb, tt, &s->fit) == HX_SUCCESS;
    s->fit_event_ok = m >= 2 && ev && hx_bench_fit_model(m, bb, te, &s->fit_event) == HX_SUCCESS;
    hx_error_clear();
    /* a loaded machine: trials that disagree, a fit that is not finite or misses points */
    s->stable = hx_bench_stable(s->n, s->seconds_min, s->seconds_median, s->fit_ok ? &s->fit : NULL, &s->spread,
                                s->why, sizeof s->why);
    free(bb), free(tt), free(te);
  }
  return HX_SUCCESS;
}

static int bench_run(bench *B) {
  const options *o = B->o;
  const hx_app_ctx *ctx = B->ctx;
  HX_CALL(hx_backend_create(o->backend, &B->b));
  HX_CALL(hx_dev_timer_create(B->b, &B->dt));
  /* rank 0 writes the files: make sure it can before anyone starts timing */
  int dir_err = ctx->rank == 0 ? hx_bench_mkdir_p(o->output) : HX_SUCCESS;
  HX_MPI(MPI_Bcast(&dir_err, 1, MPI_INT, 0, ctx->comm));
  if (dir_err) {
    if (ctx->rank == 0) return hx_error_trace(__FILE__, __LINE__, __func__, dir_err);
    return HX_ERROR(dir_err, "rank 0 cannot use the output directory '%s'", o->output);
  }
  B->topt.min_batch_s = o->min_time;
  B->topt.trials = o->trials;
  B->topt.max_reps = 1L << 30;
  B->topt.use_median = o->use_median;
  HX_CALL(HX_ALLOC(&B->target, o->points));
  /* per-rank targets: the sweep is of the aggregate bytes */
  for (int j = 0; j < o->points; j++)
    B->target[j] = o->min_bytes * pow(o->max_bytes / o->min_bytes, (double)j / (o->points - 1)) / ctx->size;

  const int gpu = hx_backend_get_kind(B->b) == HX_BACKEND_CUDA;
  hx_log(HX_LOG_NORMAL, "hexcg bench stream: backend %s", hx_backend_name(B->b));
  if (gpu) {
    hx_device_info di;
    if (hx_cuda_query(&di) == HX_SUCCESS) hx_log(HX_LOG_NORMAL, " (%s, %.0f GiB)", di.name, di.mem_gib);
    hx_error_clear();
  }
  char b0[32], b1[32];
  fmt_bytes(o->min_bytes, b0, sizeof b0);
  fmt_bytes(o->max_bytes, b1, sizeof b1);
  hx_log(HX_LOG_NORMAL, ", %d rank(s) x %d thread(s)\n", ctx->size, hx_backend_num_threads(B->b));
  hx_log(HX_LOG_NORMAL,
         "sweep %s .. %s bytes per launch (aggregate), %d sizes; timing: MPI_Wtime around "
         "batches of >= %.3g s after warm-up, %s of %d trials%s\n",
         b0, b1, o->points, o->min_time, o->use_median ? "median" : "min", o->trials,
         gpu ? ", also cudaEvents" : "");

  HX_CALL(run_vector_kernels(B));
  if (o->want[K_GATHER] || o->want[K_SCATTER]) {
    HX_CALL(run_gs_kernels(B));
  }
  HX_CALL(do_fits(B));
  if (ctx->rank == 0) {
    for (int k = 0; k < K_NUM; k++)
      if (B->ran[k]) print_series(B, k);
    print_summary(B);
    HX_CALL(write_csv(B));
    HX_CALL(write_yaml(B));
    hx_log(HX_LOG_NORMAL, "\nwrote %s/stream.csv, %s/stream_fit.yaml\n", o->output, o->output);
    if (o->plot) make_plot(B);
  }
  return HX_SUCCESS;
}

/* Host memory per rank, the larger of the two phases: BS1-BS5 allocate
 * their arrays once, for the largest size (on the device on cuda); BS6/BS7
 * build box meshes of up to --gs-max bytes per launch over all ranks, at
 * least that much of ids and vectors on the host. */
static int check_memory(const hx_app_ctx *ctx, const options *o) {
  double need[4] = {0, 0, 0, 0}, vec = 0;
  for (int k = 0; k < K_NUM; k++) {
    if (!o->want[k] || K[k].is_gs) continue;
    const double nmax = o->max_bytes / (8.0 * K[k].words);
    for (int a = 0; a < 4; a++)
      if (K[k].arrays[a] && nmax > need[a]) need[a] = nmax;
  }
  for (int a = 0; a < 4; a++) vec += 8.0 * need[a];
  if (!strcmp(o->backend, "cuda")) vec = 0;
  const int gs = o->want[K_GATHER] || o->want[K_SCATTER];
  const double gsb = gs ? o->gs_max_bytes / ctx->size : 0, bytes = vec > gsb ? vec : gsb;
  char what[128];
  snprintf(what, sizeof what, "bench stream: --max %.3g%s", o->max_bytes,
           gsb > vec ? " (--gs-max, the BS6/BS7 sweep)" : "");
  if (gsb > vec) snprintf(what, sizeof what, "bench stream: --gs-max %.3g", o->gs_max_bytes);
  HX_CALL(hx_bench_check_memory(ctx->comm, 0.0, bytes, bytes, what));
  return HX_SUCCESS;
}

int hx_bench_stream(hx_app_ctx *ctx, int argc, char **argv) {
  options o;
  int status = 0;
  if (parse_options(ctx, argc, argv, &o, &status)) return status;
  int ierr = check_memory(ctx, &o);
  if (ierr) return hx_app_fail(ctx, ierr, 1);
  bench B;
  memset(&B, 0, sizeof B);
  B.o = &o;
  B.ctx = ctx;
  ierr = bench_run(&B);
  /* every rank takes part in the sweep; agree on success before leaving */
  int any = ierr != HX_SUCCESS, all_any = 0;
  MPI_Allreduce(&any, &all_any, 1, MPI_INT, MPI_MAX, ctx->comm);
  for (int k = 0; k < K_NUM; k++) series_free(&B.s[k]);
  free(B.target);
  hx_dev_timer_destroy(&B.dt);
  hx_backend_destroy(&B.b);
  if (ierr) return hx_app_fail(ctx, ierr, 0);
  if (all_any) return 1;
  return 0;
}
