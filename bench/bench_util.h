/* Private to bench/: helpers shared by the benchmarks:
 * timing of repeated launches, the T(B) = T0 + B / Wmax model fit,
 * interpolation of a measured ceiling, output files written via a temporary
 * name + rename. */
#ifndef HX_BENCH_UTIL_H
#define HX_BENCH_UTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "hx_kernels.h"

/* ------------------------------------------------------------ timing */
/* One launch of the kernel under test; returns an hexcg error code. */
typedef int (*hx_bench_kernel)(void *arg);

typedef struct {
  double min_batch_s; /* each timed batch of launches lasts at least this long */
  int trials;         /* timed batches (>= 1) */
  long max_reps;      /* cap on launches per batch */
  int use_median;     /* report the median batch (1) or the fastest (0, as STREAM does) */
} hx_bench_timing_opts;

typedef struct {
  long reps;             /* launches per timed batch (the same on all ranks) */
  double seconds;        /* per launch, the reported statistic (min or median, see use_median)
                            over trials of the slowest rank's batch time / reps */
  double seconds_min;    /* per launch: the fastest trial (slowest rank in each trial) */
  double seconds_median; /* per launch: the median trial (slowest rank in each trial) */
  double seconds_rank;   /* per launch: this rank's own statistic */
  double seconds_event;  /* per launch from device events (statistic, slowest rank); -1 without */
} hx_bench_timing;

/* Time fn(arg): one warm-up launch, calibration of the launches per batch
 * so that a batch lasts >= o->min_batch_s, then o->trials batches, each
 * preceded by MPI_Barrier and timed with MPI_Wtime from before the first
 * launch to after hx_backend_sync; with dt != NULL also with the device
 * timer around the batch. Collective over comm (all ranks time together). */
int hx_bench_time(MPI_Comm comm, hx_backend b, hx_dev_timer dt, hx_bench_kernel fn, void *arg,
                  const hx_bench_timing_opts *o, hx_bench_timing *t);

/* Median of n values (n >= 1); v is reordered. */
double hx_bench_median(int n, double *v);

/* ------------------------------------------------------------ model fit */
typedef struct {
  int npoints;    /* points used */
  double t0;      /* seconds: fixed cost per launch */
  double wmax;    /* bytes/second: asymptotic bandwidth (INFINITY if the slope is <= 0) */
  double b08;     /* bytes: 4 t0 wmax, the size at 80% of wmax (Fischer-Brown point) */
  double rel_rms; /* root mean square of (T_model - T) / T over the points */
  double rel_max; /* max |T_model - T| / T */
  double r2;      /* coefficient of determination of the weighted linear fit */
  int t0_clamped; /* 1: the unconstrained fit gave t0 < 0, so t0 = 0 was imposed */
} hx_bench_fit;

/* Least-squares fit of T(B) = T0 + B / Wmax to n points (B_i bytes, T_i
 * seconds), minimising the relative residuals sum ((T0 + B_i/W - T_i)/T_i)^2
 * (weights 1/T_i^2, so small and large sizes count alike) subject to T0 >= 0.
 * Needs >= 2 distinct sizes and T_i > 0: else HX_ERR_ARG. */
int hx_bench_fit_model(int n, const double *bytes, const double *seconds, hx_bench_fit *fit);

/* Was the machine stable while a series was measured? A loaded machine (other
 * jobs, a busy host) shows as trials that disagree (the median trial over
 * HX_BENCH_MAX_SPREAD times the fastest at some size), a fit that is not
 * finite (Wmax inf: the time did not grow with the size) or that misses a
 * point by more than HX_BENCH_MAX_REL_MISS. Returns 1 (stable) or 0 with the
 * reason in why; *spread (may be NULL) gets the largest median/min ratio.
 * fit may be NULL (no fit: only the spread is judged). */
#define HX_BENCH_MAX_SPREAD 1.5
#define HX_BENCH_MAX_REL_MISS 0.5
int hx_bench_stable(int n, const double *seconds_min, const double *seconds_median, const hx_bench_fit *fit,
                    double *spread, char *why, size_t len);

/* Piecewise-linear interpolation of y(x) in (log x, y) through n points
 * sorted by increasing x (n >= 1); constant beyond the ends. */
double hx_bench_interp_log(int n, const double *x, const double *y, double xq);

/* ------------------------------------------------------------ memory */
/* Collective. Refuse a benchmark size that cannot fit in the host memory of
 * the nodes (hx_mem_fit: each rank needs rank_bytes, rank 0 rank0_bytes
 * more; rank_bytes_max is the largest rank_bytes): HX_ERR_INPUT "what: need
 * about X of memory on ..., more than the Y available there (...)", the
 * same on every rank. Formulas: docs/case-format.md, "Memory". */
int hx_bench_check_memory(MPI_Comm comm, double rank0_bytes, double rank_bytes, double rank_bytes_max,
                          const char *what);

/* ------------------------------------------------------------ files */
/* Create directory dir and its parents (like mkdir -p). */
int hx_bench_mkdir_p(const char *dir);
/* Open a temporary file in dir for the output dir/name (a hidden name with
 * the pid). tmp receives its path. Commit with hx_bench_file_commit. */
int hx_bench_file_open(const char *dir, const char *name, FILE **fp, char *tmp, size_t tmplen);
/* Close fp (checking for write errors) and rename tmp to dir/name. On any
 * error the temporary file is removed. */
int hx_bench_file_commit(FILE *fp, const char *tmp, const char *dir, const char *name);
/* Close fp and remove the temporary file (error path). */
void hx_bench_file_abort(FILE *fp, const char *tmp);

#endif
