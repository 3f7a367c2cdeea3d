/* hexcg: command-line entry point and subcommand dispatch. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hx_app.h"
#include "hx_bench.h"
#include "hx_core.h"
#include "hx_io.h"
#include "hx_run.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* OpenMP threads per rank: core's rule (hx_threads_default, the library's
 * too), its warning on stderr (rank 0). */
static void hx_default_threads(MPI_Comm comm) {
  char warn[512];
  const int n = hx_threads_default(comm, warn, sizeof warn);
  if (warn[0]) fprintf(stderr, "hexcg: warning: %s\n", warn);
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

static void usage(FILE *out) {
  fprintf(out,
          "hexcg " HX_VERSION_STRING " - Poisson/Helmholtz solver for all-hex spectral-element meshes\n"
          "\n"
          "usage: hexcg [--help] [--version] COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  run CASE.yaml [--set key=value]...   solve a case\n"
          "  mesh CASE.yaml                       build/read and partition the mesh, print a summary\n"
          "  bench SUITE [OPTIONS]                benchmarks: stream, ax, cg, precond, comm\n"
          "  compare RUN BASELINE [OPTIONS]       compare residual histories\n"
          "  keys [--names | --tune]             every case key: type, default, help (--tune: the\n"
          "                                       environment switches)\n"
          "\n"
          "Run 'hexcg COMMAND --help' for a command's options. With MPI:\n"
          "  mpiexec -n 4 hexcg run configs/poisson_box.yaml\n");
}

/* Every rank must run the same command line (issue 53, defect 5: `mpiexec
 * -n 1 hexcg run c.yaml --set order=3 : -n 1 hexcg run c.yaml --set
 * order=4` applied each rank's own options, "converged" with exit 0 and
 * wrote an unreadable solution.h5; --dry-run on one rank only hung). A hash
 * of the arguments is compared across the ranks first; a mismatch is
 * refused (exit 2), naming the first rank that differs. */
static int args_agree(const hx_app_ctx *ctx, int argc, char **argv) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 1; i < argc; i++) {
    for (const unsigned char *c = (const unsigned char *)argv[i]; *c; c++) h = (h ^ *c) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull; /* the separator: "a b" is not "ab" */
  }
  uint64_t lo = h, hi = h;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, ctx->comm);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, ctx->comm);
  if (lo == hi) return 1;
  uint64_t h0 = h;
  MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, ctx->comm);
  int mine = h != h0 ? ctx->rank : ctx->size, first = ctx->size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx->comm);
  if (ctx->rank == 0) {
    fprintf(stderr, "hexcg: the ranks were started with different arguments: rank %d's differ from rank 0's (", first);
    for (int i = 1; i < argc; i++) fprintf(stderr, "%s%s", i > 1 ? " " : "", argv[i]);
    fprintf(stderr, "); start every rank with the same command line\n");
  }
  return 0;
}

int main(int argc, char **argv) {
  /* `hexcg run`: a SIGTERM during MPI_Init (a job cancelled as it starts)
   * is recorded and stops the run at its first reduction, not killed by it
   * (issue 53, defect 17: found by fuzz.diff-restart) */
  if (argc > 1 && !strcmp(argv[1], "run")) hx_signals_install();
  hx_malloc_tune(); /* before MPI and OpenMP allocate (HEXCG_MALLOC_TUNE=0: glibc's defaults) */
  int provided = MPI_THREAD_SINGLE;
  const int request = hx_app_thread_request(); /* HEXCG_MPI_THREAD_LEVEL: the fallbacks' test */
  if (MPI_Init_thread(&argc, &argv, request < 0 ? MPI_THREAD_MULTIPLE : request, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "error: MPI_Init_thread failed\n");
    return 1;
  }
  hx_app_ctx ctx = {MPI_COMM_WORLD, 0, 1, provided};
  MPI_Comm_rank(ctx.comm, &ctx.rank);
  MPI_Comm_size(ctx.comm, &ctx.size);
  hx_log_init(ctx.rank, HX_LOG_NORMAL);
  if (request < 0 && ctx.rank == 0)
    hx_warn("HEXCG_MPI_THREAD_LEVEL='%s' is not single, funneled, serialized or multiple: requested "
            "MPI_THREAD_MULTIPLE\n",
            hx_env("HEXCG_MPI_THREAD_LEVEL"));
  hx_default_threads(ctx.comm);
  /* a closed stdout (hexcg ... | head) gives EPIPE on write instead of killing the run */
  signal(SIGPIPE, SIG_IGN);

  int status = 0;
  if (!args_agree(&ctx, argc, argv)) {
    status = 2;
  } else if (argc < 2) {
    if (ctx.rank == 0) usage(stderr);
    status = 2;
  } else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    if (ctx.rank == 0) usage(stdout);
  } else if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    hx_print_version(&ctx);
  } else if (!strcmp(argv[1], "run")) {
    status = hx_cmd_run(&ctx, argc - 1, argv + 1);
  } else if (!strcmp(argv[1], "mesh")) {
    status = hx_cmd_mesh(&ctx, argc - 1, argv + 1);
  } else if (!strcmp(argv[1], "bench")) {
    status = hx_cmd_bench(&ctx, argc - 1, argv + 1);
  } else if (!strcmp(argv[1], "keys")) {
    status = hx_cmd_keys(&ctx, argc - 1, argv + 1);
  } else if (!strcmp(argv[1], "compare")) {
    status = hx_cmd_compare(&ctx, argc - 1, argv + 1);
  } else {
    if (ctx.rank == 0) {
      fprintf(stderr, "hexcg: unknown command '%s'\n\n", argv[1]);
      usage(stderr);
    }
    status = 2;
  }
  /* every file is closed before MPI is finalised; a file HDF5 could not
   * close (its error already printed) crashes MPI_Finalize on that rank:
   * the MPI_COMM_SELF callback HDF5 registers ends the library, which closes
   * the file again (H5F__close_cb, a segfault). That rank marks HDF5 ended
   * (H5_libinit_g, looked up at run time: not in HDF5's public headers) so
   * that the callback does nothing, and every rank finalises: Hydra kills
   * the ranks still running as soon as one leaves without finalising, and
   * mpiexec then exits 9 instead of the status (5 runs in 8 on 3 ranks,
   * issue 32), while MPI_Abort loses the ranks' unforwarded stderr (the
   * error message). Where the symbol is missing, all ranks leave with
   * _exit as before. Every command returns on every rank, so the
   * reductions cannot hang. */
  int io_bad = hx_io_finalize() != 0, any_bad = io_bad;
  fflush(stdout), fflush(stderr);
  MPI_Allreduce(&io_bad, &any_bad, 1, MPI_INT, MPI_MAX, ctx.comm);
  if (any_bad) {
    int stuck = 0;
    if (io_bad) {
      unsigned char *libinit = (unsigned char *)dlsym(RTLD_DEFAULT, "H5_libinit_g");
      if (libinit) *libinit = 0;
      stuck = !libinit;
    }
    MPI_Allreduce(MPI_IN_PLACE, &stuck, 1, MPI_INT, MPI_MAX, ctx.comm);
    if (stuck) _exit(status ? status : 1);
    if (!status) status = 1;
  }
  MPI_Finalize();
  return status;
}
