/* Benchmark helpers: timing, the T(B) = T0 + B / Wmax fit, output files. */
#include "bench_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ------------------------------------------------------------ timing */
static int hx_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

double hx_bench_median(int n, double *v) {
  qsort(v, (size_t)n, sizeof *v, hx_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* one batch of reps launches, host-timed (and device-timed with dt) */
static int hx_bench_batch(MPI_Comm comm, hx_backend b, hx_dev_timer dt, hx_bench_kernel fn, void *arg,
                          long reps, double *host_s, double *dev_s) {
  HX_MPI(MPI_Barrier(comm));
  const double t0 = MPI_Wtime();
  if (dt) HX_CALL(hx_dev_timer_start(dt));
  for (long k = 0; k < reps; k++) HX_CALL(fn(arg));
  if (dt) HX_CALL(hx_dev_timer_stop(dt));
  HX_CALL(hx_backend_sync(b));
  *host_s = MPI_Wtime() - t0;
  *dev_s = -1.0;
  if (dt) HX_CALL(hx_dev_timer_elapsed(dt, dev_s));
  return HX_SUCCESS;
}

int hx_bench_time(MPI_Comm comm, hx_backend b, hx_dev_timer dt, hx_bench_kernel fn, void *arg,
                  const hx_bench_timing_opts *o, hx_bench_timing *t) {
  HX_CHECK(o->trials >= 1 && o->max_reps >= 1 && o->min_batch_s >= 0.0, HX_ERR_ARG, "bad timing options");
  memset(t, 0, sizeof *t);
  /* warm-up */
  HX_CALL(fn(arg));
  HX_CALL(hx_backend_sync(b));
  /* calibrate: grow the batch until it lasts min_batch_s on the slowest
   * rank, then size it from the faster of two batches of that length (one
   * batch slowed down by another process must not shrink the batches) */
  long reps = 1;
  double hmax = 0.0;
  for (;;) {
    double h, d;
    HX_CALL(hx_bench_batch(comm, b, NULL, fn, arg, reps, &h, &d));
    HX_MPI(MPI_Allreduce(&h, &hmax, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (hmax >= o->min_batch_s || reps >= o->max_reps) break;
    double grow = hmax > 0.0 ? 1.25 * o->min_batch_s / hmax : 100.0;
    if (grow < 2.0) grow = 2.0;
    if (grow > 100.0) grow = 100.0;
    const double next = ceil((double)reps * grow);
    reps = next > (double)o->max_reps ? o->max_reps : (long)next;
  }
  if (reps < o->max_reps) {
    double h, d, h2max;
    HX_CALL(hx_bench_batch(comm, b, NULL, fn, arg, reps, &h, &d));
    HX_MPI(MPI_Allreduce(&h, &h2max, 1, MPI_DOUBLE, MPI_MAX, comm));
    const double per = (h2max < hmax ? h2max : hmax) / (double)reps;
    if (per > 0.0) {
      const double want = ceil(1.1 * o->min_batch_s / per);
      if (want > (double)reps) reps = want > (double)o->max_reps ? o->max_reps : (long)want;
    }
  }
  double *host, *dev, *mine;
  HX_CALL(HX_ALLOC(&host, o->trials));
  HX_CALL(HX_ALLOC(&dev, o->trials));
  HX_CALL(HX_ALLOC(&mine, o->trials));
  int ierr = HX_SUCCESS;
  for (int k = 0; k < o->trials && !ierr; k++) {
    double loc[2], mx[2];
    ierr = hx_bench_batch(comm, b, dt, fn, arg, reps, &loc[0], &loc[1]);
    if (ierr) break;
    mine[k] = loc[0] / (double)reps;
    if (MPI_Allreduce(loc, mx, 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
      ierr = HX_ERROR(HX_ERR_MPI, "MPI_Allreduce of the batch times failed");
      break;
    }
    host[k] = mx[0] / (double)reps;
    dev[k] = mx[1] < 0.0 ? -1.0 : mx[1] / (double)reps;
  }
  if (!ierr) {
    t->reps = reps;
    t->seconds_median = hx_bench_median(o->trials, host);
    t->seconds_min = host[0]; /* sorted by the median */
    t->seconds = o->use_median ? t->seconds_median : t->seconds_min;
    const double rmed = hx_bench_median(o->trials, mine);
    t->seconds_rank = o->use_median ? rmed : mine[0];
    t->seconds_event = -1.0;
    if (dt) {
      const double emed = hx_bench_median(o->trials, dev);
      t->seconds_event = o->use_median ? emed : dev[0];
      if (t->seconds_event < 0.0) t->seconds_event = -1.0;
    }
  }
  free(host), free(dev), free(mine);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ model fit */
int hx_bench_stable(int n, const double *smin, const double *smed, const hx_bench_fit *fit, double *spread,
                    char *why, size_t len) {
  double worst = 1.0;
  int at = -1;
  for (int i = 0; i < n; i++) {
    const double r = smin[i] > 0 && isfinite(smed[i]) ? smed[i] / smin[i] : INFINITY;
    if (!(r <= worst)) worst = r, at = i;
  }
  if (spread) *spread = worst;
  if (why && len) why[0] = 0;
  if (fit && !(isfinite(fit->wmax) && fit->wmax > 0 && isfinite(fit->t0))) {
    if (why) snprintf(why, len, "the fit is not finite (Wmax %g GB/s, T0 %g us): the time did not grow with the size",
                      fit->wmax / 1e9, 1e6 * fit->t0);
    return 0;
  }
  if (!(worst <= HX_BENCH_MAX_SPREAD)) {
    if (why) snprintf(why, len, "the trials disagree: median %.2fx the fastest at point %d (limit %.2f)", worst, at,
                      HX_BENCH_MAX_SPREAD);
    return 0;
  }
  if (fit && !(fit->rel_max <= HX_BENCH_MAX_REL_MISS)) {
    if (why) snprintf(why, len, "the model misses a point by %.0f %% (limit %.0f %%)", 100 * fit->rel_max,
                      100 * HX_BENCH_MAX_REL_MISS);
    return 0;
  }
  return 1;
}

int hx_bench_fit_model(int n, const double *B, const double *T, hx_bench_fit *fit) {
  memset(fit, 0, sizeof *fit);
  HX_CHECK(n >= 2, HX_ERR_ARG, "the model fit needs >= 2 points, got %d", n);
  double S = 0.0, Sx = 0.0, Sy = 0.0, bmin = B[0], bmax = B[0];
  for (int i = 0; i < n; i++) {
    HX_CHECK(T[i] > 0.0 && isfinite(T[i]) && B[i] >= 0.0, HX_ERR_ARG, "bad point %d: B = %g, T = %g", i, B[i],
             T[i]);
    const double w = 1.0 / (T[i] * T[i]);
    S += w, Sx += w * B[i], Sy += w * T[i];
    if (B[i] < bmin) bmin = B[i];
    if (B[i] > bmax) bmax = B[i];
  }
  HX_CHECK(bmax > bmin, HX_ERR_ARG, "the model fit needs >= 2 distinct sizes");
  /* weighted least squares on centred data */
  const double xm = Sx / S, ym = Sy / S;
  double Sxx = 0.0, Sxy = 0.0, Syy = 0.0;
  for (int i = 0; i < n; i++) {
    const double w = 1.0 / (T[i] * T[i]), dx = B[i] - xm, dy = T[i] - ym;
    Sxx += w * dx * dx, Sxy += w * dx * dy, Syy += w * dy * dy;
  }
  double c1 = Sxy / Sxx, c0 = ym - c1 * xm;
  if (c1 <= 0.0) {
    /* time does not grow with size (all latency-bound, or noise): the
     * constrained optimum has slope 0 */
    c1 = 0.0, c0 = ym;
  } else if (c0 < 0.0) {
    /* constrained optimum on T0 = 0: one-parameter fit T = c1 B */
    double Sbb = 0.0, Sbt = 0.0;
    for (int i = 0; i < n; i++) {
      const double w = 1.0 / (T[i] * T[i]);
      Sbb += w * B[i] * B[i], Sbt += w * B[i] * T[i];
    }
    c0 = 0.0, c1 = Sbt / Sbb;
    fit->t0_clamped = 1;
  }
  double ss = 0.0, sw = 0.0, rmax = 0.0;
  for (int i = 0; i < n; i++) {
    const double rel = (c0 + c1 * B[i] - T[i]) / T[i];
    ss += rel * rel;
    sw += rel * rel; /* = w * res^2 with w = 1/T^2 */
    if (fabs(rel) > rmax) rmax = fabs(rel);
  }
  fit->npoints = n;
  fit->t0 = c0;
  fit->wmax = c1 > 0.0 ? 1.0 / c1 : INFINITY;
  fit->b08 = c1 > 0.0 ? 4.0 * c0 * fit->wmax : INFINITY;
  fit->rel_rms = sqrt(ss / n);
  fit->rel_max = rmax;
  fit->r2 = Syy > 0.0 ? 1.0 - sw / Syy : 1.0;
  return HX_SUCCESS;
}

double hx_bench_interp_log(int n, const double *x, const double *y, double xq) {
  if (n == 1 || xq <= x[0]) return y[0];
  if (xq >= x[n - 1]) return y[n - 1];
  int k = 0;
  while (k + 2 < n && x[k + 1] < xq) k++;
  if (x[k + 1] <= x[k]) return y[k + 1];
  const double s = (log(xq) - log(x[k])) / (log(x[k + 1]) - log(x[k]));
  return y[k] + s * (y[k + 1] - y[k]);
}

/* ------------------------------------------------------------ files */
int hx_bench_mkdir_p(const char *dir) {
  HX_CHECK(dir && dir[0], HX_ERR_INPUT, "empty output directory name");
  char path[4096];
  HX_CHECK(strlen(dir) < sizeof path, HX_ERR_INPUT, "output directory name too long");
  snprintf(path, sizeof path, "%s", dir);
  for (char *s = path + 1;; s++) {
    const int end = *s == '\0';
    if (*s == '/' || end) {
      *s = '\0';
      if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return HX_ERROR(HX_ERR_IO, "cannot create directory '%s': %s", path, strerror(errno));
      if (end) break;
      *s = '/';
    }
  }
  struct stat st;
  HX_CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), HX_ERR_IO, "'%s' exists and is not a directory", dir);
  return HX_SUCCESS;
}

int hx_bench_file_open(const char *dir, const char *name, FILE **fp, char *tmp, size_t tmplen) {
  *fp = NULL;
  const int len = snprintf(tmp, tmplen, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
  HX_CHECK(len > 0 && (size_t)len < tmplen, HX_ERR_INPUT, "output path too long: %s/%s", dir, name);
  *fp = fopen(tmp, "w");
  HX_CHECK(*fp, HX_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
  return HX_SUCCESS;
}

int hx_bench_file_commit(FILE *fp, const char *tmp, const char *dir, const char *name) {
  const int bad = ferror(fp);
  const int cl = fclose(fp);
  if (bad || cl != 0) {
    remove(tmp);
    return HX_ERROR(HX_ERR_IO, "writing '%s' failed", tmp);
  }
  char path[4096];
  const int len = snprintf(path, sizeof path, "%s/%s", dir, name);
  if (len <= 0 || (size_t)len >= sizeof path) {
    remove(tmp);
    return HX_ERROR(HX_ERR_INPUT, "output path too long: %s/%s", dir, name);
  }
  if (rename(tmp, path) != 0) {
    const int e = errno;
    remove(tmp);
    return HX_ERROR(HX_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
  }
  return HX_SUCCESS;
}

void hx_bench_file_abort(FILE *fp, const char *tmp) {
  if (fp) fclose(fp);
  if (tmp && tmp[0]) remove(tmp);
}

int hx_bench_check_memory(MPI_Comm comm, double rank0_bytes, double rank_bytes, double rank_bytes_max,
                          const char *what) {
  hx_mem_fit_info fi;
  HX_CALL(hx_mem_fit(comm, rank0_bytes, rank_bytes, &fi));
  if (fi.fits) return HX_SUCCESS;
  char why[512];
  hx_mem_fit_describe(&fi, rank0_bytes, rank_bytes_max, why, sizeof why);
  return HX_ERROR(HX_ERR_INPUT, "%s: %s; see \"Memory\" in docs/case-format.md", what, why);
}
