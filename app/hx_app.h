/* Private to app/: the subcommands of the hexcg executable. Each returns the
 * process exit status: 0 success, 1 failure, 2 invalid input (usage, case),
 * 3 a solve that ran but did not converge (docs/case-format.md). */
#ifndef HX_APP_H
#define HX_APP_H

#include <mpi.h>
#include <stdio.h>

typedef struct {
  MPI_Comm comm;
  int rank, size;
  int thread_level; /* what MPI_Init_thread provided */
} hx_app_ctx;

#define HX_EXIT_NOT_CONVERGED 3
/* hexcg run stopped by SIGINT, SIGTERM or SIGUSR1: the solve ended at its next
 * iteration on every rank, the outputs so far are written (summary.yaml:
 * reason interrupted) */
#define HX_EXIT_INTERRUPTED 4
/* a time-dependent hexcg run stopped by one of those signals: the step in
 * progress was dropped, a checkpoint of the last completed step and the
 * outputs so far are written; `hexcg run --restart DIR` continues it
 * (docs/time.md) */
#define HX_EXIT_CHECKPOINTED 5

/* exit status for an error code: 2 for HX_ERR_INPUT, 1 otherwise */
int hx_app_status(int code);
/* print the current error (rank-tagged) and return hx_app_status(code). If
 * collective != 0 every rank has the same error and only rank 0 prints. */
int hx_app_fail(const hx_app_ctx *ctx, int code, int collective);
/* After a subcommand's argument parse that asked for --help (pa 1) or
 * failed (pa 2, the reason in msg): rank 0 prints "hexcg CMD: msg" and the
 * usage (on stderr after a failure, on stdout for --help); returns the exit
 * status, 0 or 2. */
int hx_app_usage_exit(const hx_app_ctx *ctx, int pa, const char *cmd, const char *msg, void (*usage)(FILE *));
/* An option's count: val a whole number from 0 to 1000000000 (no sign
 * games, nothing after it): 1 with it in *n, else 0 (*n untouched). */
int hx_app_parse_count(const char *val, int *n);

int hx_cmd_run(hx_app_ctx *ctx, int argc, char **argv);
int hx_cmd_mesh(hx_app_ctx *ctx, int argc, char **argv);
int hx_cmd_compare(hx_app_ctx *ctx, int argc, char **argv);
/* The MPI thread level hexcg requests: MPI_THREAD_MULTIPLE, or the level
 * HEXCG_MPI_THREAD_LEVEL names (single, funneled, serialized, multiple: a
 * test of the fallbacks without an MPI library that grants less); -1 when
 * the variable holds anything else (main requests MPI_THREAD_MULTIPLE and
 * says so). Before MPI_Init. */
int hx_app_thread_request(void);
void hx_print_version(const hx_app_ctx *ctx);

#endif
