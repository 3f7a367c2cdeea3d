/* hexcg bench comm: the communication figures of the scaling model
 * (jobs/model.py, docs/scaling.md): ping-pong latency and bandwidth between
 * rank 0 and a peer, and the time of an 8-byte MPI_Allreduce over all ranks
 * (what PCG does twice per iteration). Writes OUTPUT/comm.yaml on rank 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "bench_util.h"
#include "hx_bench.h"

typedef struct {
  const char *output;
  double min_time; /* seconds per measurement (each of trials) */
  int trials;
  int peer;
  long big; /* bytes of the bandwidth message */
} comm_opts;

/* median over trials of the seconds per repetition of fn; reps calibrated
 * on rank 0 and broadcast, so every rank runs the same count */
typedef void (*comm_fn)(MPI_Comm c, int rank, int peer, char *buf, long bytes, long reps);

static void pingpong(MPI_Comm c, int rank, int peer, char *buf, long bytes, long reps) {
  for (long r = 0; r < reps; r++) {
    if (rank == 0) {
      MPI_Send(buf, (int)bytes, MPI_CHAR, peer, 7, c);
      MPI_Recv(buf, (int)bytes, MPI_CHAR, peer, 7, c, MPI_STATUS_IGNORE);
    } else if (rank == peer) {
      MPI_Recv(buf, (int)bytes, MPI_CHAR, 0, 7, c, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)bytes, MPI_CHAR, 0, 7, c);
    }
  }
}

static void allreduce(MPI_Comm c, int rank, int peer, char *buf, long bytes, long reps) {
  (void)rank, (void)peer, (void)buf, (void)bytes;
  double x = 1.0, y;
  for (long r = 0; r < reps; r++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
}

static double measure(MPI_Comm c, int rank, int peer, char *buf, long bytes, const comm_opts *o, comm_fn fn) {
  long reps = 1;
  for (;;) { /* calibrate: double until a batch lasts min_time (rank 0 decides) */
    MPI_Barrier(c);
    double t = MPI_Wtime();
    fn(c, rank, peer, buf, bytes, reps);
    t = MPI_Wtime() - t;
    int done = t >= o->min_time || reps >= (1L << 24);
    MPI_Bcast(&done, 1, MPI_INT, 0, c);
    if (done) break;
    reps *= 2;
  }
  double ts[64];
  for (int k = 0; k < o->trials; k++) {
    MPI_Barrier(c);
    double t = MPI_Wtime();
    fn(c, rank, peer, buf, bytes, reps);
    t = MPI_Wtime() - t;
    double tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, c);
    ts[k] = tmax / (double)reps;
  }
  return hx_bench_median(o->trials, ts);
}

static int bench(hx_app_ctx *ctx, const comm_opts *o) {
  const int rank = ctx->rank, size = ctx->size;
  const int peer = o->peer >= 0 ? o->peer : size - 1;
  HX_CHECK(peer < size, HX_ERR_INPUT, "bench comm: --peer %d but only %d ranks", peer, size);
  HX_CHECK(size == 1 || peer != 0, HX_ERR_INPUT, "bench comm: --peer must not be rank 0");
  int dir_err = rank == 0 ? hx_bench_mkdir_p(o->output) : HX_SUCCESS;
  HX_MPI(MPI_Bcast(&dir_err, 1, MPI_INT, 0, ctx->comm));
  if (dir_err) {
    if (rank == 0) return hx_error_trace(__FILE__, __LINE__, __func__, dir_err);
    return HX_ERROR(dir_err, "rank 0 cannot use the output directory '%s'", o->output);
  }
  char *buf;
  HX_CALL(HX_ALLOC(&buf, (size_t)o->big));
  double lat = 0, bw = 0;
  if (size > 1) {
    lat = measure(ctx->comm, rank, peer, buf, 8, o, pingpong) / 2;
    const double half = measure(ctx->comm, rank, peer, buf, o->big, o, pingpong) / 2;
    bw = (double)o->big / half / 1e9;
  }
  const double tar = measure(ctx->comm, rank, peer, buf, 8, o, allreduce);
  free(buf);
  char host[MPI_MAX_PROCESSOR_NAME] = "", phost[MPI_MAX_PROCESSOR_NAME] = "";
  int hl;
  MPI_Get_processor_name(host, &hl);
  if (size > 1) {
    if (rank == peer) MPI_Send(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 8, ctx->comm);
    if (rank == 0) MPI_Recv(phost, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, peer, 8, ctx->comm, MPI_STATUS_IGNORE);
  }
  hx_log(HX_LOG_NORMAL, "hexcg bench comm: %d ranks, rank 0 (%s) <-> rank %d (%s)\n", size, host, peer,
         size > 1 ? phost : "-");
  hx_log(HX_LOG_NORMAL, "  latency    %.3e s (8 bytes, half round trip)\n", lat);
  hx_log(HX_LOG_NORMAL, "  bandwidth  %.3f GB/s (%ld bytes)\n", bw, o->big);
  hx_log(HX_LOG_NORMAL, "  allreduce  %.3e s (8 bytes, %d ranks)\n", tar, size);
  if (rank != 0) return HX_SUCCESS;
  FILE *f;
  char tmp[4200];
  HX_CALL(hx_bench_file_open(o->output, "comm.yaml", &f, tmp, sizeof tmp));
  fprintf(
      f,
      "# hexcg bench comm (jobs/model.py reads it)\nranks: %d\nhost: \"%s\"\npeer: %d\npeer_host: \"%s\"\n"
      "latency_s: %.6e\nbandwidth_bytes: %ld\nbandwidth_gbps: %.6e\nallreduce_s: %.6e\n"
      "min_time_s: %g\ntrials: %d\n",
      size, host, size > 1 ? peer : -1, size > 1 ? phost : "", lat, o->big, bw, tar, o->min_time, o->trials);
  HX_CALL(hx_bench_file_commit(f, tmp, o->output, "comm.yaml"));
  hx_log(HX_LOG_NORMAL, "wrote %s/comm.yaml\n", o->output);
  return HX_SUCCESS;
}

int hx_bench_comm(hx_app_ctx *ctx, int argc, char **argv) {
  comm_opts o = {NULL, 0, 0, -1, 0};
  const hx_bench_opt opt[] = {
      {"--output", HX_BOPT_STRING, &o.output, ".", .meta = "DIR", .help = "where comm.yaml goes"},
      {"--min-time", HX_BOPT_REAL, &o.min_time, "0.05", 0, 60, HX_BOPT_OPEN_LO | HX_BOPT_OPEN_HI, .meta = "S",
       .help = "seconds per timed batch"},
      {"--trials", HX_BOPT_INT, &o.trials, "5", 1, 64, .meta = "N",
       .help = "batches per figure, the median is reported"},
      {"--peer", HX_BOPT_INT, &o.peer, NULL, 0, 1 << 30, .meta = "R",
       .help = "ping-pong partner of rank 0 (default: the last rank)"},
      {"--bytes", HX_BOPT_LONG, &o.big, "4194304", 8, 1 << 30, .meta = "B", .help = "bandwidth message size"},
  };
  const hx_bench_cmd cmd = {"bench comm", "Collective; the ping-pong needs >= 2 ranks.",
                            "comm.yaml: ranks, peer, latency_s (half round trip, 8 bytes), bandwidth_gbps "
                            "(B / half round trip of B bytes; 0 on one rank), allreduce_s (8 bytes, all ranks)",
                            (int)(sizeof opt / sizeof opt[0]), opt};
  int status = 0;
  if (hx_bench_args(ctx, &cmd, argc, argv, &status)) return status;
  int ierr = bench(ctx, &o);
  return ierr ? hx_app_fail(ctx, ierr, 0) : 0;
}
