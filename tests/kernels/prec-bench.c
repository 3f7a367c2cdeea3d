/* FP32 vs FP64 timing of the kernels an FP32 preconditioner uses: scatter,
 * gather, exchange (ADD), the element operator (precomputed factors, with
 * the mass term) on an L-vector ("ax") and with the scatter fused in
 * ("ax+map": hx_ax_apply_list_g_p from the G-vector through the L->G map,
 * as hx_op runs it) on an nx x ny x nz GLL box of order p, elements in
 * z-slabs over the ranks, vertices perturbed so the elements are not affine
 * (--affine: the plain box, every element stored as 7 constants), and the
 * element-wise transfers between orders p and q (hx_tensor3_apply_p:
 * "interp" p -> q, "interpT" q -> p, as a p-multigrid's transfers run them
 * on the L-vectors; --q Q, default p/2).
 *   mpiexec -n R prec-bench [--backend cpu|cuda] [--p P] [--q Q] [--n NX NY NZ]
 *                           [--min-time S] [--affine]
 * Each figure: repeat the call until the batch lasts >= min-time, best of 3
 * batches, time per call (max over ranks, after a barrier per batch): wall
 * time, and the process CPU time (CLOCK_PROCESS_CPUTIME_ID; with one thread
 * per rank the time the rank actually ran, which on a shared, oversubscribed
 * machine is far less noisy than the wall time; for the exchange it includes
 * MPI's polling). */
#include <time.h>

#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

typedef struct {
  hx_backend b;
  hx_gs gs;
  hx_ax ax;
  hx_precision prec;
  void *l, *g, *w;
  const int32_t *map;
  int n, nc;        /* points per direction of the two orders of the transfers */
  void *A, *AT, *lc; /* nc x n interpolation-like matrix, its transpose, a coarse L-vector */
} ctx_t;

enum { K_SCATTER, K_GATHER, K_EXCHANGE, K_AX, K_AXMAP, K_INTERP, K_INTERPT, K_N };
static const char *kname[K_N] = {"scatter", "gather", "exchange", "ax", "ax+map", "interp", "interpT"};

static int run_kernel(ctx_t *c, int k) {
  switch (k) {
    case K_SCATTER: return hx_gs_scatter_p(c->gs, c->prec, c->g, c->l);
    case K_GATHER: return hx_gs_gather_p(c->gs, c->prec, c->l, c->g);
    case K_EXCHANGE: return hx_gs_exchange_p(c->gs, c->prec, c->g, HX_GS_ADD);
    case K_AX: return hx_ax_apply_p(c->ax, c->l, c->w, NULL);
    case K_INTERP:
      return hx_tensor3_apply_p(c->b, c->prec, c->n, c->nc, hx_ax_num_elements(c->ax), c->A, c->l, c->lc);
    case K_INTERPT:
      return hx_tensor3_apply_p(c->b, c->prec, c->nc, c->n, hx_ax_num_elements(c->ax), c->AT, c->lc, c->w);
    default: return hx_ax_apply_list_g_p(c->ax, hx_ax_num_elements(c->ax), NULL, c->map, c->g, c->w, NULL);
  }
}

static double cpu_time(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int time_kernel(ctx_t *c, int k, double min_time, double *sec, double *csec) {
  long reps = 1;
  double best = 1e300, cbest = 1e300;
  for (int trial = 0; trial < 3;) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = hx_wtime(), c0 = cpu_time();
    for (long r = 0; r < reps; r++) HX_TCALL(run_kernel(c, k));
    HX_TCALL(hx_backend_sync(c->b));
    double dt[2] = {hx_wtime() - t0, cpu_time() - c0}, dm[2];
    MPI_Allreduce(dt, dm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double dtmax = dm[0];
    if (dtmax < min_time) {
      reps *= 2;
      continue;
    }
    if (dtmax / reps < best) best = dtmax / reps;
    if (dm[1] / reps < cbest) cbest = dm[1] / reps;
    trial++;
  }
  *sec = best;
  *csec = cbest;
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  int p = 3, nx = 8, ny = 8, nz = 8, pq = -1;
  double min_time = 0.2;
  int affine = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--p") && i + 1 < argc)
      p = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--q") && i + 1 < argc)
      pq = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--n") && i + 3 < argc)
      nx = atoi(argv[++i]), ny = atoi(argv[++i]), nz = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
      min_time = atof(argv[++i]);
    else if (!strcmp(argv[i], "--affine"))
      affine = 1;
  }
  hx_backend b;
  HX_TCALL(hx_test_backends(argc, argv, &b, NULL));
  if (pq < 0) pq = p / 2;
  const int n = p + 1, npe = n * n * n, nc = pq + 1;
  const int64_t nel = (int64_t)nx * ny * nz, e0 = nel * rank / size, e1 = nel * (rank + 1) / size;
  const int32_t E = (int32_t)(e1 - e0);
  const int64_t nl = (int64_t)E * npe;
  int64_t *ids = malloc(sizeof(int64_t) * (nl + 1));
  HX_TCALL(hx_gs_box_ids(nx, ny, nz, p, e0, E, ids));
  double *v = malloc(sizeof(double) * 24 * (E + 1)), *kap = malloc(8 * (E + 1)), *lam = malloc(8 * (E + 1));
  for (int32_t a = 0; a < E; a++) {
    const int64_t el = e0 + a, ex = el % nx, ey = (el / nx) % ny, ez = el / ((int64_t)nx * ny);
    for (int q = 0; q < 8; q++) {
      const double x = (double)(ex + (q & 1)) / nx, y = (double)(ey + ((q >> 1) & 1)) / ny,
                   z = (double)(ez + ((q >> 2) & 1)) / nz;
      const double d = affine ? 0.0 : 0.05 * sin(6.0 * x) * sin(5.0 * y) * sin(4.0 * z);
      v[24 * a + 3 * q + 0] = x + d / nx, v[24 * a + 3 * q + 1] = y - d / ny,
                         v[24 * a + 3 * q + 2] = z + d / nz;
    }
    kap[a] = 1.0, lam[a] = 1.0;
  }
  hx_gs gs;
  HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, nl, ids, &gs));
  const int64_t ng = hx_gs_num_local(gs);
  int32_t *d_map = NULL;
  HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * (size_t)(nl + 1), (void **)&d_map));
  HX_TCALL(hx_mem_to_device(b, d_map, hx_gs_map_host(gs), sizeof(int32_t) * (size_t)nl));
  int32_t naff = 0;
  double t[2][K_N], ct[2][K_N];
  for (int pr = 0; pr < 2; pr++) {
    ctx_t c = {b, gs, NULL, pr ? HX_F32 : HX_F64, NULL, NULL, NULL, d_map, n, nc, NULL, NULL, NULL};
    const size_t sz = hx_precision_size(c.prec);
    {
      double hA[16 * 16], hAT[16 * 16];
      float fA[16 * 16], fAT[16 * 16];
      for (int i = 0; i < nc; i++)
        for (int j = 0; j < n; j++) hA[i * n + j] = hAT[j * nc + i] = 1.0 / (1.0 + i + j);
      for (int i = 0; i < nc * n; i++) fA[i] = (float)hA[i], fAT[i] = (float)hAT[i];
      HX_TCALL(hx_mem_alloc(b, sz * (size_t)(nc * n), &c.A));
      HX_TCALL(hx_mem_alloc(b, sz * (size_t)(nc * n), &c.AT));
      HX_TCALL(hx_mem_to_device(b, c.A, pr ? (void *)fA : (void *)hA, sz * (size_t)(nc * n)));
      HX_TCALL(hx_mem_to_device(b, c.AT, pr ? (void *)fAT : (void *)hAT, sz * (size_t)(nc * n)));
      HX_TCALL(hx_mem_alloc(b, sz * (size_t)((int64_t)E * nc * nc * nc + 1), &c.lc));
      HX_TCALL(hx_mem_zero(b, c.lc, sz * (size_t)((int64_t)E * nc * nc * nc + 1)));
    }
    HX_TCALL(hx_ax_create_prec(b, p, E, 8, v, kap, lam, HX_GEO_PRECOMPUTED, c.prec, &c.ax));
    hx_ax_storage_counts(c.ax, &naff, NULL, NULL);
    HX_TCALL(hx_mem_alloc(b, sz * (size_t)(nl + 1), &c.l));
    HX_TCALL(hx_mem_alloc(b, sz * (size_t)(nl + 1), &c.w));
    HX_TCALL(hx_mem_alloc(b, sz * (size_t)(ng + 1), &c.g));
    HX_TCALL(hx_mem_zero(b, c.g, sz * (size_t)ng));
    HX_TCALL(hx_gs_scatter_p(gs, c.prec, c.g, c.l));
    for (int k = 0; k < K_N; k++)
      if (time_kernel(&c, k, min_time, &t[pr][k], &ct[pr][k])) return 1;
    hx_mem_free(b, &c.l), hx_mem_free(b, &c.w), hx_mem_free(b, &c.g);
    hx_mem_free(b, &c.A), hx_mem_free(b, &c.AT), hx_mem_free(b, &c.lc);
    hx_ax_destroy(&c.ax);
  }
  hx_gs_info info;
  HX_TCALL(hx_gs_get_info(gs, &info));
  if (!rank) {
    printf(
        "prec-bench: backend %s, %d rank(s) x %d thread(s), p = %d, %dx%dx%d elements, %lld L entries and "
        "%lld G entries on rank 0, %lld values exchanged per rank 0 exchange, %d of %d elements affine on rank 0; "
        "transfers p = %d <-> %d\n",
        hx_backend_name(b), size, hx_backend_num_threads(b), p, nx, ny, nz, (long long)nl, (long long)ng,
        (long long)info.n_send, (int)naff, (int)E, p, pq);
    printf("%-9s %12s %12s %8s %12s %12s %8s\n", "kernel", "fp64 [ms]", "fp32 [ms]", "ratio", "fp64 cpu", "fp32 cpu",
           "ratio");
    for (int k = 0; k < K_N; k++)
      printf("%-9s %12.4f %12.4f %8.2f %12.4f %12.4f %8.2f\n", kname[k], 1e3 * t[0][k], 1e3 * t[1][k],
             t[0][k] / t[1][k], 1e3 * ct[0][k], 1e3 * ct[1][k], ct[0][k] / ct[1][k]);
  }
  hx_mem_free(b, (void **)&d_map);
  HX_TCALL(hx_gs_destroy(&gs));
  free(ids), free(v), free(kap), free(lam);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return 0;
}
