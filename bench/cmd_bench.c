/* hexcg bench: dispatch to the benchmark suites. */
#include <stdio.h>
#include <string.h>

#include "hx_bench.h"
#include "hx_core.h"

int hx_cmd_bench(hx_app_ctx *ctx, int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    if (ctx->rank == 0)
      fprintf(argc < 2 ? stderr : stdout,
              "usage: hexcg bench SUITE [OPTIONS]\n"
              "suites:\n"
              "  stream   BS1-BS7 streaming kernels + performance-model fit\n"
              "  ax       spectral-element operator, p = 1..15\n"
              "  cg       a Jacobi-PCG iteration against the sum of its kernels\n"
              "  precond  preconditioner setup and apply times (fine, coarse, overlap)\n"
              "  block    several right-hand sides at once: k-vector operator and block PCG against single ones\n"
              "  comm     ping-pong latency/bandwidth and allreduce time (comm.yaml, scaling model)\n"
              "Run 'hexcg bench SUITE --help' for its options.\n");
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "stream")) return hx_bench_stream(ctx, argc - 1, argv + 1);
  if (!strcmp(argv[1], "ax")) return hx_bench_ax(ctx, argc - 1, argv + 1);
  if (!strcmp(argv[1], "cg")) return hx_bench_cg(ctx, argc - 1, argv + 1);
  if (!strcmp(argv[1], "precond")) return hx_bench_precond(ctx, argc - 1, argv + 1);
  if (!strcmp(argv[1], "block")) return hx_bench_block(ctx, argc - 1, argv + 1);
  if (!strcmp(argv[1], "comm")) return hx_bench_comm(ctx, argc - 1, argv + 1);
  return hx_app_fail(ctx, HX_ERROR(HX_ERR_INPUT, "unknown benchmark suite '%s' (allowed: stream, ax, cg, precond, block, comm)", argv[1]), 1);
}
