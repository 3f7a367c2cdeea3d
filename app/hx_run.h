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

#include "hx_app.h"
#include "hx_io.h"
#include "hx_mesh.h"

/* Everything summary.yaml reports about a solve (fields: hx_run_stats in
 * io/hx_io.h): ranks, backend, global elements, order, global DOFs,
 * iterations, converged + reason, initial/final residual and relative
 * residual, error L2/max (exact_known), seconds per phase (setup, operator,
 * preconditioner, reductions, exchange, io, solve, total; max over ranks) and
 * peak memory per rank (max over ranks). Defined in io so that io's summary
 * writer can read it. */
typedef hx_run_stats hx_run_result;

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
/* Collective. What --dry-run checks beyond the case file: the backend, the
 * mesh built (or read) and partitioned, its tags and materials against the
 * case, its Jacobians; the same errors as hx_run_case, nothing written. */
int hx_run_check(hx_app_ctx *ctx, const hx_case *cs);
/* The mesh module's partitioner for the case's mesh.partitioner. */
hx_partitioner hx_run_partitioner(const hx_case *cs);
/* hexcg keys [--names]: every key of the case file and of the
 * preconditioner from the option tables (cmd_run.c). */
int hx_cmd_keys(hx_app_ctx *ctx, int argc, char **argv);

#endif
