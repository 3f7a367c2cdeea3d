/* Standalone gather-scatter timing (not a test; a small smoke run is
 * registered with the `bench` label).
 *   mpiexec -n R gs-bench [--backend cpu|cuda] [--n NX NY NZ] [--p P]
 *                         [--dist slab|rr] [--reps K]
 * Box of NX x NY x NZ elements at order P, elements in z-slabs (or
 * round-robin). Prints, from rank 0: setup time, one blocking halo
 * exchange (MAX; per repetition the max over ranks, then min and median),
 * and gather / scatter / copy of nl doubles in GB/s measured in the same run
 * (best of reps; bytes from hx_gs_get_info: indices and values read once
 * plus values written once; copy: 16 bytes per entry). */
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double tmax(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  int nx = 16, ny = 16, nz = 16, p = 7, reps = 20, rr = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 3 < argc) {
      nx = atoi(argv[i + 1]), ny = atoi(argv[i + 2]), nz = atoi(argv[i + 3]);
      i += 3;
    } else if (!strcmp(argv[i], "--p") && i + 1 < argc) {
      p = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
      if (reps < 1) reps = 1;
    } else if (!strcmp(argv[i], "--dist") && i + 1 < argc) {
      rr = !strcmp(argv[++i], "rr");
    }
  }
  hx_backend b = NULL;
  /* no device: a skip */
  if (hx_test_backends(argc, argv, &b, NULL)) {
    hx_error_print(stderr, rank, 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int64_t nel = (int64_t)nx * ny * nz, npe = (int64_t)(p + 1) * (p + 1) * (p + 1);
  int64_t e0 = nel * rank / size, e1 = nel * (rank + 1) / size, ne = e1 - e0;
  if (rr) ne = (nel - rank + size - 1) / size;
  const int64_t nl = ne * npe;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)(nl + 1));
  if (!rr) {
    if (hx_gs_box_ids(nx, ny, nz, p, e0, ne, ids)) MPI_Abort(MPI_COMM_WORLD, 1);
  } else {
    for (int64_t a = 0; a < ne; a++)
      if (hx_gs_box_ids(nx, ny, nz, p, rank + a * size, 1, ids + a * npe)) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = hx_wtime();
  hx_gs gs = NULL;
  if (hx_gs_create(b, MPI_COMM_WORLD, nl, ids, &gs)) {
    hx_error_print(stderr, rank, 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double tsetup = tmax(hx_wtime() - t0);
  free(ids);
  hx_gs_info info;
  hx_gs_get_info(gs, &info);
  const int64_t ng = info.ng;
  void *dl = NULL, *dl2 = NULL, *dg = NULL;
  if (hx_mem_alloc(b, (size_t)nl * 8 + 8, &dl) || hx_mem_alloc(b, (size_t)nl * 8 + 8, &dl2) ||
      hx_mem_alloc(b, (size_t)ng * 8 + 8, &dg))
    MPI_Abort(MPI_COMM_WORLD, 1);
  double *h = malloc(sizeof(double) * (size_t)(nl + 1));
  for (int64_t i = 0; i < nl; i++) h[i] = 1.0 + 1e-3 * (double)(i % 1000);
  hx_mem_to_device(b, dl, h, (size_t)nl * 8);
  hx_mem_to_device(b, dl2, h, (size_t)nl * 8);
  free(h);
  hx_gs_gather(gs, dl, dg);
  hx_backend_sync(b);

  /* halo exchange: per repetition the max over ranks; min and median */
  double *tex = malloc(sizeof(double) * (size_t)(reps + 1));
  for (int r = -2; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = hx_wtime();
    hx_gs_exchange(gs, dg, HX_GS_MAX);
    hx_backend_sync(b);
    t = tmax(hx_wtime() - t);
    if (r >= 0) tex[r] = t;
  }
  qsort(tex, (size_t)reps, sizeof(double), cmp_double);
  const double tex_min = tex[0], tex_med = tex[reps / 2];
  free(tex);

  /* gather, scatter, copy: best of reps (each rank alone, then max) */
  double tg = 1e30, ts = 1e30, tc = 1e30;
  for (int r = -1; r < reps; r++) {
    double t = hx_wtime();
    hx_gs_gather(gs, dl, dg);
    hx_backend_sync(b);
    double a = hx_wtime() - t;
    t = hx_wtime();
    hx_gs_scatter(gs, dg, dl2);
    hx_backend_sync(b);
    double s = hx_wtime() - t;
    t = hx_wtime();
    hx_array_copy(b, nl, (double *)dl2, (const double *)dl);
    hx_backend_sync(b);
    double c = hx_wtime() - t;
    if (r >= 0) {
      if (a < tg) tg = a;
      if (s < ts) ts = s;
      if (c < tc) tc = c;
    }
  }
  tg = tmax(tg), ts = tmax(ts), tc = tmax(tc);
  const double cbytes = 16.0 * (double)nl;
  if (rank == 0) {
    printf("gs-bench: backend %s, %d rank(s), box %dx%dx%d p=%d (%s), threads %d\n", hx_backend_name(b), size,
           nx, ny, nz, p, rr ? "round-robin" : "slabs", hx_backend_num_threads(b));
    printf("  rank 0: nl %lld  ng %lld  owned %lld  shared %lld  neighbours %d  values sent/exchange %lld\n",
           (long long)info.nl, (long long)info.ng, (long long)info.n_owned, (long long)info.n_shared,
           info.n_neighbors, (long long)info.n_send);
    printf("  setup %.3f s (max over ranks)\n", tsetup);
    printf("  halo exchange (blocking, MAX): min %.3f ms, median %.3f ms (of %d; max over ranks)\n",
           1e3 * tex_min, 1e3 * tex_med, reps);
    printf("  gather  %8.3f ms  %7.2f GB/s  (%.1f MB)\n", 1e3 * tg, info.gather_bytes / tg * 1e-9,
           info.gather_bytes * 1e-6);
    printf("  scatter %8.3f ms  %7.2f GB/s  (%.1f MB)\n", 1e3 * ts, info.scatter_bytes / ts * 1e-9,
           info.scatter_bytes * 1e-6);
    printf("  copy    %8.3f ms  %7.2f GB/s  (%.1f MB, nl doubles)\n", 1e3 * tc, cbytes / tc * 1e-9,
           cbytes * 1e-6);
    printf("  ratio to copy bandwidth: gather %.2f  scatter %.2f\n", (info.gather_bytes / tg) / (cbytes / tc),
           (info.scatter_bytes / ts) / (cbytes / tc));
  }
  hx_mem_free(b, &dl);
  hx_mem_free(b, &dl2);
  hx_mem_free(b, &dg);
  hx_gs_destroy(&gs);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return 0;
}
