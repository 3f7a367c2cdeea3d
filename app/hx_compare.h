/* Private to app/: `hexcg compare` (app/cmd_compare.c) and its pieces:
 * loading a run (app/compare_input.c) and comparing two runs or checking
 * bounds (app/compare.c). Not collective; host memory only. The rules are
 * documented in docs/regression.md. */
#ifndef HX_COMPARE_H
#define HX_COMPARE_H

#include <stdio.h>

#include "hx_io.h"

/* One side of a comparison: a residual history and, when found, the
 * summary.yaml of the same run. */
typedef struct {
  char *arg;          /* what the user gave (a folder or a file) */
  char *hist_path;    /* the history file read (history.csv or history.h5) */
  char *summary_path; /* the summary.yaml read, or NULL */
  int n;              /* rows; row i is iteration it[0] + i (checked at load) */
  int *it;
  double *res, *rel; /* residual and relative residual per row */
  int has_summary;
  hx_summary_info sum;
  int is_time;         /* the summary has a time: section (a time-dependent run) */
  char *case_path;     /* the effective case.yaml beside the history, or NULL */
  hx_case_keys keys;   /* its keys (n = 0 without one) */
  char *solution_path; /* the solution.h5 beside the history, or NULL */
} hx_cmp_run;

/* Load RUN or BASELINE (role names the side in messages). arg is
 *  - a folder: its history.csv, else its history.h5, and its summary.yaml,
 *    case.yaml and solution.h5 if present;
 *  - a history.csv / history.h5 file (HDF5 recognised by its signature): the
 *    summary.yaml (case.yaml, solution.h5) beside it is used when the file is
 *    named history.csv/.h5.
 * Missing or malformed input: HX_ERR_INPUT with a message naming the file
 * (and line for CSV). Checks: rows start at iteration >= 0 and count up by
 * one, residuals are >= 0 (or NaN), the summary's iteration count equals the
 * history's last iteration. */
int hx_cmp_run_load(const char *arg, const char *role, hx_cmp_run *r);
/* Read a history.csv ("iteration,residual,rel_residual[,time_s]" header,
 * then one row per iteration) into r->n/it/res/rel. */
int hx_cmp_read_csv(const char *path, hx_cmp_run *r);
void hx_cmp_run_free(hx_cmp_run *r);
/* Last iteration number of the history (the iteration count). */
int hx_cmp_iterations(const hx_cmp_run *r);

/* Tolerances. Residual rows i < min(rows) match when
 *   |r_i - b_i| <= rtol * max(b_i, floor * b_0)        (b = baseline)
 * for both the residual and rel_residual columns; iteration counts match
 * when they differ by at most slack; error norms when
 *   |e - e'| <= max(error_rtol * max(e, e'), error_floor)
 * (an error norm near the floor measures the solver's tolerance and the
 * rounding, not the discretisation: the same case on 1 and 2 ranks gives
 * 6e-12 norms 1.8 % apart). */
typedef struct {
  double rtol, floor, error_rtol, error_floor;
  int slack;
  const char *x_axis; /* --plot-x: "iteration" (NULL) or "time" */
  int strict;         /* --strict: no "consistent" verdict, round-off or mismatch */
  double consistent_error; /* --consistent-error: error norms of a consistent pair within this (relative) */
} hx_cmp_opts;
/* The "consistent" verdict (docs/regression.md): the same problem on other
 * rank counts with a preconditioner that depends on the partition (pmg's
 * FP32 Schwarz boxes, Chebyshev bounds from a partition-dependent Lanczos,
 * BoomerAMG): both converged to the same tolerance, the iteration counts
 * within max(HX_CMP_PART_SLACK_MIN, HX_CMP_PART_SLACK_FRAC * n), the error
 * norms within consistent_error of each other (or both below error_floor). */
#define HX_CMP_CONSISTENT_ERROR_DEFAULT 0.1
#define HX_CMP_PART_SLACK_MIN 2
#define HX_CMP_PART_SLACK_FRAC 0.1
#define HX_CMP_RTOL_DEFAULT 1e-3
#define HX_CMP_FLOOR_DEFAULT 1e-4
#define HX_CMP_ERROR_RTOL_DEFAULT 1e-3
#define HX_CMP_ERROR_FLOOR_DEFAULT 1e-10
#define HX_CMP_SLACK_DEFAULT 0
/* Iteration 0 (the initial residual, ||b|| from a zero guess, or ||b - A x0||)
 * does not depend on the partition beyond the order of the sums: the two
 * runs' values must agree within HX_CMP_R0_ROUNDOFF_PER_DOF * N * u relative
 * (u = 2^-53, N the DOFs; a sum of N squares in another order moves by at
 * most (N - 1) u, Higham's bound for positive terms, and the assembly of b
 * from <= 8 element contributions per node by 7 u), at least
 * HX_CMP_R0_MIN (1 ulp of libm in the right-hand side, amplified by the
 * cancellation in b - A u_D) and, without a summary (N unknown),
 * HX_CMP_R0_NO_DOFS. A
 * larger difference means another right-hand side, coefficient or mesh:
 * another problem, never excused as "consistent". */
#define HX_CMP_R0_ROUNDOFF_PER_DOF 8.0
#define HX_CMP_R0_MIN 1e-11
#define HX_CMP_R0_NO_DOFS 1e-8
/* Key classes of an effective case (hx_cmp_key_class). */
enum { HX_CMP_KEY_IGNORED = 0, HX_CMP_KEY_PROBLEM = 1, HX_CMP_KEY_SOLVER = 2 };
/* HX_CMP_KEY_PROBLEM: the key defines the PDE or its discretisation (mesh.*
 * but mesh.partitioner, order, problem.*, time.* but the *_every output
 * steps); HX_CMP_KEY_IGNORED: output.* and time.{output,checkpoint,error}_every
 * (what is written, not what is solved); HX_CMP_KEY_SOLVER: the rest (solver.*,
 * preconditioner.*, operator.*, backend, mesh.partitioner). */
int hx_cmp_key_class(const char *key);

/* Where a residual column differs: first = first row over the tolerance (or,
 * if none, the first row that differs at all; -1 if identical), worst = the
 * row of the largest |diff| / allowed. */
typedef struct {
  int first, first_fails;
  double first_ratio; /* |diff| / allowed at first */
  int worst;
  double worst_ratio; /* |diff| / allowed at worst (inf where allowed is 0 and diff is not) */
  int nfail;          /* rows over the tolerance */
} hx_cmp_curve;

typedef struct {
  int checks, failures; /* number of checks made and failed (curves, counts, summary, bounds) */
  int iterations_ok;
  hx_cmp_curve res, rel;
  int summary_compared; /* both sides had a summary.yaml */
  /* the runs solved different problems (order, elements or DOFs differ, a
   * problem key of the effective cases, the initial residual): what
   * differs, for the verdict */
  char problem_diff[1536];
  /* the effective cases' keys that differ: "key a vs b, ..." per class, and
   * their names (problem keys first, comma-separated: the plot's labels) */
  int n_problem_keys, n_solver_keys;
  int n_solve_keys; /* solver keys other than mesh.partitioner and backend */
  char problem_keys[1024], solver_keys[1024], diff_keys[1024];
  /* iteration 0 beyond round-off (HX_CMP_R0_*): relative difference and allowance */
  int r0_fails;
  double r0_rel, r0_allowed;
  /* both sides had a solution.h5: how far apart */
  int solution_read;
  hx_solution_diff_info sol;
  char first_failure[48]; /* the first failed check's name */
  /* failed checks, yet the same problem solved to the same tolerance on
   * another partition within the partition allowances (HX_CMP_PART_*):
   * why, for the verdict; 0 with opts.strict */
  int consistent;
  char consistent_why[256];
} hx_cmp_result;
/* The verdict line for res: "the same results within round-off (...)",
 * "different problems (...)", "consistent: the same problem ..." or
 * "different results for the same problem (...)"; each names the keys of
 * the effective cases that differ and how far apart the solutions are. */
void hx_cmp_verdict(const hx_cmp_result *res, char *buf, size_t len);

/* Compare run with base under o; print the table to out (NULL: print nothing).
 * Fills *res; returns HX_SUCCESS whether or not they match. */
int hx_compare_runs(const hx_cmp_run *run, const hx_cmp_run *base, const hx_cmp_opts *o, FILE *out,
                    hx_cmp_result *res);
/* Compare one residual column (rows 0..n-1) under o. */
void hx_cmp_curve_compare(int n, const double *run, const double *base, const hx_cmp_opts *o,
                          hx_cmp_curve *c);
/* Check run against bounds b (iterations from the history; rel_residual and
 * converged from the summary, else from the history; errors need the
 * summary). Adds to res->checks/failures and prints rows to out (may be NULL). */
void hx_check_bounds(const hx_cmp_run *run, const hx_bounds *b, FILE *out, hx_cmp_result *res);

#endif
