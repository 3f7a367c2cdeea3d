/* bench/: the benchmarks of `hexcg bench SUITE [OPTIONS]`. Each entry point
 * takes the subcommand's argv (argv[0] the suite's name) and returns the
 * process exit status (0 success, 1 failure, 2 invalid input); collective
 * over ctx->comm. Options: each suite's table (bench/bench_*.c, parsed by
 * bench/bench_opts.c); figures: docs/benchmarks.md. */
#ifndef HX_BENCH_H
#define HX_BENCH_H

#include "hx_app.h"

/* hexcg bench SUITE: dispatch to the suites below */
int hx_cmd_bench(hx_app_ctx *ctx, int argc, char **argv);
/* hexcg bench stream: the streaming kernels BS1-BS7 and the model fit (bench_stream.c) */
int hx_bench_stream(hx_app_ctx *ctx, int argc, char **argv);
/* hexcg bench ax: the element operator per order and geometry storage (bench_ax.c) */
int hx_bench_ax(hx_app_ctx *ctx, int argc, char **argv);
/* hexcg bench cg: a Jacobi-PCG iteration against the sum of its kernels (bench_cg.c) */
int hx_bench_cg(hx_app_ctx *ctx, int argc, char **argv);
/* hexcg bench precond: preconditioner setup and apply times (bench_precond.c) */
int hx_bench_precond(hx_app_ctx *ctx, int argc, char **argv);
/* hexcg bench block: several right-hand sides at once, operator and block PCG against single ones (bench_block.c) */
int hx_bench_block(hx_app_ctx *ctx, int argc, char **argv);
/* hexcg bench comm: latency, bandwidth, allreduce -> comm.yaml (bench_comm.c) */
int hx_bench_comm(hx_app_ctx *ctx, int argc, char **argv);

#endif
