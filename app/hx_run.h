/* Private to app/: the run driver called by `hexcg run` (app/cmd_run.c).
 *
 * cmd_run.c parses the command line, loads and validates the case on every
 * rank (io), applies --set/--output/--progress-every, prepares output.dir
 * (refusing an existing one without --force), writes the effective case to
 * output.dir/case.yaml and prints the setup; then it calls hx_run_case, and
 * afterwards writes output.dir/summary.yaml and prints the summary table from
 * the result.
 */
#ifndef HX_RUN_H
#define HX_RUN_H

#include "hx_api.h"
#include "hx_app.h"
#include "hx_io.h"
#include "hx_disc.h"
#include "hx_mesh.h"
#include "hx_solver.h"

/* Everything summary.yaml reports about a solve (fields: hx_run_stats in
 * io/hx_io.h): ranks, backend, global elements, order, global DOFs,
 * iterations, converged + reason, initial/final residual and relative
 * residual, error L2/max (exact_known), seconds per phase (setup, operator,
 * preconditioner, reductions, exchange, io, solve, total; max over ranks) and
 * peak memory per rank (max over ranks). Defined in io so that io's summary
 * writer can read it. */
typedef hx_run_stats hx_run_result;

/* What the steady run and the time loop share: the solver's monitor (the
 * residual history and the progress lines; hx_pcg_opts.monitor with this as
 * its context) and an expression evaluated at a time t as a field. */
typedef struct {
  hx_history hist;
  hx_progress prog;
  double t0;
} hx_run_monitor;
void hx_run_monitor_cb(void *ctx, int it, double rnorm, double rel);
/* The solver options of the case (tolerance, iteration limit, pcg / fcg /
 * pcg1) with mon as the monitor, for the steady run and every time step. */
void hx_run_pcg_opts(const hx_case *cs, hx_run_monitor *mon, hx_pcg_opts *po);
typedef struct {
  const hx_expr *e;
  double t;
} hx_run_texpr;
double hx_run_texpr_fn(const void *ctx, double x, double y, double z); /* ctx: an hx_run_texpr */
void hx_run_texpr_fn_n(const void *ctx, size_t n, const double *x, const double *y, const double *z,
                       double *out); /* the same at n points */

/* Collective over ctx->comm. Solve the validated case cs: mesh -> operator ->
 * PCG (progress lines through hx_progress, history through hx_history) ->
 * solution/history files in cs->output.dir (already created; its case.yaml
 * already written). Fill *res (zeroed by the caller) on every rank, or at
 * least on rank 0. Return HX_ERR_INPUT for problems of the user's input found
 * late (unknown gmsh boundary tag via hx_case_check_tags, restart file that
 * does not match): cmd_run.c then prints the message alone, removes what it
 * wrote and exits with status 2. Non-convergence is not an error
 * (res->converged = 0, res->reason). */
int hx_run_case(hx_app_ctx *ctx, const hx_case *cs, hx_run_result *res);
/* As hx_run_case, for a case with a time: section too (docs/time.md):
 * restart (NULL: none) is the --restart folder (an output folder holding a
 * checkpoint/, or the checkpoint folder itself); final_dir (NULL: the
 * case's output.dir) is the output folder the run commits to, where
 * checkpoints are written at once (they must survive a kill). */
int hx_run_case_time(hx_app_ctx *ctx, const hx_case *cs, const char *restart, const char *final_dir,
                     hx_run_result *res);
/* Collective. What --dry-run checks beyond the case file: the backend, the
 * mesh built (or read) and partitioned, its tags and materials against the
 * case, its Jacobians; the same errors as hx_run_case, nothing written.
 * mid (NULL: not wanted): the mesh's identity beyond its GLL nodes, for a
 * dry run of --restart (hx_run_mesh_parts). */
int hx_run_check(hx_app_ctx *ctx, const hx_case *cs, hx_checkpoint_mesh_id *mid);
/* What the time loop (app/run_time.c) gets from the run driver: the objects
 * set up once (run_case.c) and callbacks into it. */
typedef struct {
  hx_app_ctx *ctx;
  const hx_case *cs;
  hx_run_result *res;
  const char *restart, *final_dir;
  hx_mesh m;
  hx_disc *d; /* the run's discretisation and preconditioner (rebuilt by reshift) */
  hx_pc *pc;
  /* the data at time t into the run's host arrays: *hf (f), *hg (Dirichlet
   * values), *hbn (Neumann loads, NULL: none); *hex stays NULL (the loop
   * evaluates the exact solution where it needs it) */
  int (*eval)(void *arg, double t);
  double **hf, **hg, **hbn, **hex;
  /* rebuild the operator and preconditioner with lambda + shift (BDF start-up) */
  int (*reshift)(void *arg, double shift);
  void *arg;
  double shift;        /* the shift d and pc were built with */
  int setups;          /* setups so far (1 after the first) */
  double *t_io;        /* the run's output seconds */
  hx_solve_result *dr; /* out: the last step's result, times summed over the steps */
  int solved;          /* out: the steps this run solved (0: outputs rebuilt from a checkpoint) */
} hx_run_time_env;
/* The time loop (app/run_time.c). Collective. */
int hx_run_time(hx_run_time_env *env);
/* Collective. The parts of the mesh's identity beyond its GLL nodes
 * (periodicity, connectivity, boundary tags, materials) into mid->part,
 * mid->have_parts = 1 (app/run_time.c). */
int hx_run_mesh_parts(MPI_Comm comm, hx_mesh m, hx_checkpoint_mesh_id *mid);
/* The shift beta0 / dt of the BDF order q (1..3). */
double hx_run_bdf_shift(int q, double dt);

/* Several right-hand sides (problem.rhs a list; app/run_columns.c): the
 * columns' host L-vectors f (hf[k]) and solutions (hu[k]), their block PCG
 * results and errors (err[2k]: L2 of each, then max of each). */
typedef struct {
  int k;
  double **hf, **hu;
  hx_pcg_result *pr;
  double *err;
} hx_run_columns;
/* Collective. The columns' f at the discretisation's nodes: column 0 takes
 * *hf (problem/'s, already checked), the others problem.rhs[i] evaluated
 * and, with problem.exact a list, each exact solution checked finite (the
 * case position and the node where not). */
int hx_run_columns_data(MPI_Comm comm, const hx_case *cs, hx_disc d, double **hf, hx_run_columns *c);
/* Collective. The block solve of the columns with the shared Dirichlet
 * values hg and Neumann loads hbn (hx_api_solve_many_l); dr: the column
 * with the most iterations (the block's seconds), res: the columns and the
 * top-level figures from them (hx_run_stats), one log line per column. */
int hx_run_columns_solve(hexcg_solver *s, const hx_case *cs, hx_run_columns *c, const double *hg,
                         const double *hbn, hx_solve_result *dr, hx_run_result *res);
/* Collective. Every column (u0: column 0's solution, the others c->hu)
 * as a frame series/solution_00000I.h5 (.hdf) of output.dir beside
 * series/mesh.h5 (mesh.hdf), the time series' layout (docs/time.md), and
 * solution.xdmf (solution.hdf.series) as their temporal collection with
 * the column's index as the time; work: hx_disc_num_l values. */
int hx_run_columns_output(MPI_Comm comm, const hx_case *cs, hx_mesh m, hx_disc d, const hx_run_columns *c,
                          const double *u0, double *work);
void hx_run_columns_free(hx_run_columns *c);

/* hexcg keys [--names]: every key of the case file and of the
 * preconditioner from the option tables (cmd_run.c). */
int hx_cmd_keys(hx_app_ctx *ctx, int argc, char **argv);

#endif
