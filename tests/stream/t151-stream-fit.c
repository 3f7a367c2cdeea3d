/* The benchmark helpers of bench/bench_util.c: the T(B) = T0 + B / Wmax fit
 * recovers known T0 and Wmax from synthetic timings (exact, with noise,
 * with the T0 >= 0 constraint active), rejects degenerate input; median,
 * log interpolation; the timing loop; output files via temporary names. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "hx_test.h"

static int check_fit(void) {
  enum { N = 24 };
  double B[N], T[N];
  const double t0 = 3.5e-6, w = 12.5e9;
  for (int i = 0; i < N; i++) {
    B[i] = 4096.0 * pow(65536.0, i / (N - 1.0));
    T[i] = t0 + B[i] / w;
  }
  hx_bench_fit f;
  HX_TCALL(hx_bench_fit_model(N, B, T, &f));
  HX_ASSERT(hx_test_reldiff(f.t0, t0, 0) < 1e-9, "exact data: t0 %.17g", f.t0);
  HX_ASSERT(hx_test_reldiff(f.wmax, w, 0) < 1e-9, "exact data: wmax %.17g", f.wmax);
  HX_ASSERT(hx_test_reldiff(f.b08, 4 * t0 * w, 0) < 1e-9, "b08 = 4 t0 wmax: %.17g", f.b08);
  HX_ASSERT(f.rel_rms < 1e-12 && f.rel_max < 1e-12 && f.r2 > 1 - 1e-12 && !f.t0_clamped && f.npoints == N,
            "exact data: quality rms %g max %g r2 %g", f.rel_rms, f.rel_max, f.r2);

  /* +-3% multiplicative noise: with 24 points the parameters move by about
   * 3%/sqrt(points that constrain each), far below 10% */
  hx_test_rng rng = {12345};
  for (int i = 0; i < N; i++) T[i] = (t0 + B[i] / w) * (1.0 + 0.03 * hx_test_rand(&rng));
  HX_TCALL(hx_bench_fit_model(N, B, T, &f));
  HX_ASSERT(hx_test_reldiff(f.t0, t0, 0) < 0.10, "noisy data: t0 %g vs %g", f.t0, t0);
  HX_ASSERT(hx_test_reldiff(f.wmax, w, 0) < 0.05, "noisy data: wmax %g vs %g", f.wmax, w);
  HX_ASSERT(f.rel_max <= 0.07 && f.rel_rms <= 0.04 && f.rel_rms > 1e-3, "noisy data: quality rms %g max %g",
            f.rel_rms, f.rel_max);

  /* a fit with T0 < 0 unconstrained is clamped to T0 = 0: T = B/w - 1e-7 */
  for (int i = 0; i < N; i++) T[i] = B[i] / w + (i < 4 ? -0.2 : 0.0) * (B[i] / w);
  HX_TCALL(hx_bench_fit_model(N, B, T, &f));
  HX_ASSERT(f.t0_clamped && f.t0 == 0.0 && f.b08 == 0.0, "clamped: t0 %g", f.t0);
  HX_ASSERT(hx_test_reldiff(f.wmax, w, 0) < 0.2, "clamped: wmax %g", f.wmax);

  /* latency-only data: slope 0, Wmax infinite */
  for (int i = 0; i < N; i++) T[i] = 1e-5 * (1.0 - 1e-3 * i);
  HX_TCALL(hx_bench_fit_model(N, B, T, &f));
  HX_ASSERT(isinf(f.wmax) && f.t0 > 0.9e-5 && f.t0 < 1.1e-5, "flat data: wmax %g t0 %g", f.wmax, f.t0);

  /* degenerate input */
  HX_ASSERT(hx_bench_fit_model(1, B, T, &f) == HX_ERR_ARG, "one point refused");
  double Bs[3] = {1e6, 1e6, 1e6}, Ts[3] = {1e-4, 1.1e-4, 0.9e-4};
  HX_ASSERT(hx_bench_fit_model(3, Bs, Ts, &f) == HX_ERR_ARG, "one distinct size refused");
  double B2[2] = {1e3, 1e6}, T2[2] = {1e-6, 0.0};
  HX_ASSERT(hx_bench_fit_model(2, B2, T2, &f) == HX_ERR_ARG, "zero time refused");
  hx_error_clear();
  return 0;
}

static int check_small_helpers(void) {
  double v[5] = {5, 1, 4, 2, 3};
  HX_ASSERT(hx_bench_median(5, v) == 3.0, "median of 5");
  double u[4] = {10, 1, 4, 2};
  HX_ASSERT(hx_bench_median(4, u) == 3.0, "median of 4");
  double x[3] = {1024, 4096, 16384}, y[3] = {1, 3, 7};
  HX_ASSERT(fabs(hx_bench_interp_log(3, x, y, 2048) - 2.0) < 1e-12, "interp at the log midpoint: %g",
            hx_bench_interp_log(3, x, y, 2048));
  HX_ASSERT(fabs(hx_bench_interp_log(3, x, y, 8192) - 5.0) < 1e-12, "interp second interval");
  HX_ASSERT(hx_bench_interp_log(3, x, y, 10) == 1.0 && hx_bench_interp_log(3, x, y, 1e9) == 7.0,
            "clamped ends");
  return 0;
}

typedef struct {
  long calls;
  double spin;
} counter;

static int count_kernel(void *arg) {
  counter *c = (counter *)arg;
  c->calls++;
  double s = 0.0;
  for (int i = 0; i < 20000; i++) s += sqrt((double)i + c->spin); /* ~ tens of us */
  c->spin = s * 1e-30;
  return HX_SUCCESS;
}

static int check_timing(void) {
  hx_backend b;
  HX_TCALL(hx_backend_create("cpu", &b));
  hx_dev_timer dt;
  HX_TCALL(hx_dev_timer_create(b, &dt));
  counter c = {0, 0.0};
  hx_bench_timing_opts o = {0.002, 3, 1L << 20, 0};
  hx_bench_timing t;
  HX_TCALL(hx_bench_time(MPI_COMM_WORLD, b, dt, count_kernel, &c, &o, &t));
  HX_ASSERT(t.reps >= 1 && c.calls >= 1 + 3 * t.reps, "reps %ld calls %ld", t.reps, c.calls);
  /* each timed batch lasts >= min_batch_s (or the calibration batch did) */
  HX_ASSERT(t.seconds > 0 && t.seconds * (double)t.reps >= 0.5 * o.min_batch_s, "batch %g s",
            t.seconds * t.reps);
  HX_ASSERT(t.seconds_min == t.seconds && t.seconds_median >= t.seconds_min && t.seconds_rank > 0,
            "min %g median %g reported %g", t.seconds_min, t.seconds_median, t.seconds);
  o.use_median = 1;
  HX_TCALL(hx_bench_time(MPI_COMM_WORLD, b, dt, count_kernel, &c, &o, &t));
  HX_ASSERT(t.seconds == t.seconds_median && t.seconds_median >= t.seconds_min, "median reported");
  HX_ASSERT(t.seconds_event == -1.0, "no device events on cpu: %g", t.seconds_event);
  /* max_reps caps the batch */
  o.max_reps = 2;
  o.min_batch_s = 10.0;
  HX_TCALL(hx_bench_time(MPI_COMM_WORLD, b, NULL, count_kernel, &c, &o, &t));
  HX_ASSERT(t.reps == 2, "capped reps %ld", t.reps);
  HX_TCALL(hx_dev_timer_destroy(&dt));
  HX_TCALL(hx_backend_destroy(&b));
  return 0;
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

static int check_files(void) {
  char base[] = "/tmp/hx_t151_XXXXXX";
  HX_ASSERT(mkdtemp(base) != NULL, "mkdtemp");
  char dir[256], path[512];
  snprintf(dir, sizeof dir, "%s/a/b", base);
  HX_TCALL(hx_bench_mkdir_p(dir));
  HX_TCALL(hx_bench_mkdir_p(dir)); /* exists: fine */
  /* an unrelated file stays; the named file is replaced */
  snprintf(path, sizeof path, "%s/keep.txt", dir);
  FILE *k = fopen(path, "w");
  fputs("keep\n", k);
  fclose(k);
  char tmp[512];
  FILE *f;
  HX_TCALL(hx_bench_file_open(dir, "out.csv", &f, tmp, sizeof tmp));
  HX_ASSERT(strncmp(tmp, dir, strlen(dir)) == 0 && strstr(tmp, "out.csv") &&
                strcmp(tmp + strlen(dir) + 1, "out.csv"),
            "temporary name %s differs from the final name", tmp);
  fputs("a,b\n1,2\n", f);
  HX_TCALL(hx_bench_file_commit(f, tmp, dir, "out.csv"));
  HX_ASSERT(access(tmp, F_OK) != 0, "temporary file gone");
  HX_ASSERT(count_entries(dir) == 2, "dir holds keep.txt and out.csv: %d entries", count_entries(dir));
  snprintf(path, sizeof path, "%s/out.csv", dir);
  char line[64] = "";
  f = fopen(path, "r");
  HX_ASSERT(f && fgets(line, sizeof line, f) && !strcmp(line, "a,b\n"), "content written");
  if (f) fclose(f);
  /* abort leaves nothing behind */
  HX_TCALL(hx_bench_file_open(dir, "x.yaml", &f, tmp, sizeof tmp));
  hx_bench_file_abort(f, tmp);
  HX_ASSERT(count_entries(dir) == 2, "abort removes the temporary");
  /* a path through a regular file is an I/O error */
  snprintf(path, sizeof path, "%s/keep.txt/sub", dir);
  HX_ASSERT(hx_bench_mkdir_p(path) == HX_ERR_IO, "mkdir through a file refused");
  hx_error_clear();
  /* clean up */
  snprintf(path, sizeof path, "%s/keep.txt", dir), remove(path);
  snprintf(path, sizeof path, "%s/out.csv", dir), remove(path);
  rmdir(dir);
  snprintf(path, sizeof path, "%s/a", base), rmdir(path);
  rmdir(base);
  return 0;
}

/* hx_bench_stable: a quiet series passes; a loaded machine's signs each fail
 * it with a reason (issue 31: a loaded run printed "Wmax inf" and 0.05 GB/s
 * points and still marked every kernel ok) */
static int check_stable(void) {
  enum { N = 12 };
  double B[N], Tmin[N], Tmed[N];
  const double t0 = 2e-6, w = 20e9;
  for (int i = 0; i < N; i++) {
    B[i] = 8192.0 * pow(4096.0, i / (N - 1.0));
    Tmin[i] = t0 + B[i] / w;
    Tmed[i] = 1.05 * Tmin[i]; /* 5 % between trials: a quiet machine */
  }
  hx_bench_fit f;
  HX_TCALL(hx_bench_fit_model(N, B, Tmin, &f));
  char why[256];
  double spread;
  HX_ASSERT(hx_bench_stable(N, Tmin, Tmed, &f, &spread, why, sizeof why) == 1 && why[0] == 0,
            "quiet series judged unstable: %s", why);
  HX_ASSERT(fabs(spread - 1.05) < 1e-12, "spread %g", spread);
  /* one size whose median trial took 3x the fastest (another job ran then) */
  Tmed[7] = 3.0 * Tmin[7];
  HX_ASSERT(hx_bench_stable(N, Tmin, Tmed, &f, &spread, why, sizeof why) == 0 && strstr(why, "trials disagree") &&
                strstr(why, "point 7"),
            "a 3x trial spread: %s", why);
  Tmed[7] = 1.05 * Tmin[7];
  /* the time does not grow with the size (the largest sizes slowed down the small ones' way): Wmax inf */
  hx_bench_fit g = f;
  g.wmax = INFINITY;
  HX_ASSERT(hx_bench_stable(N, Tmin, Tmed, &g, NULL, why, sizeof why) == 0 && strstr(why, "not finite"),
            "Wmax inf: %s", why);
  /* a series whose points scatter: fit it and let the model miss */
  double T[N];
  for (int i = 0; i < N; i++) T[i] = Tmin[i] * (i % 2 ? 4.0 : 1.0);
  HX_TCALL(hx_bench_fit_model(N, B, T, &g));
  HX_ASSERT(hx_bench_stable(N, T, T, &g, NULL, why, sizeof why) == 0 && strstr(why, "misses a point"),
            "scattered points (rel.max %g): %s", g.rel_max, why);
  /* without a fit only the spread is judged */
  HX_ASSERT(hx_bench_stable(N, Tmin, Tmed, NULL, NULL, why, sizeof why) == 1, "no fit: %s", why);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  check_fit();
  check_stable();
  check_small_helpers();
  check_timing();
  check_files();
  MPI_Finalize();
  return hx_test_result();
}
