/* hexcg bench cg: a Jacobi-PCG iteration against the sum of its kernels.
 * Runs PCG (or pcg1, --solver) for a fixed number of iterations on a box at
 * order p, prints the iteration's time split (operator, vector updates,
 * preconditioner, reductions) and MDOF/s, then times each kernel of an
 * iteration alone (operator with its parts, the update fused with Jacobi or
 * the separate update, Jacobi and r.z, the allreduce, the direction updates)
 * and prints the breakdown and the ratio iteration / sum of kernels
 * (target <= 1.2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_opts.h"
#include "bench_util.h"
#include "hx_bench.h"
#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_solver.h"

/* Kernels timed alone would find their vectors in the last-level cache,
 * where inside an iteration the operator's geometry has evicted them: each
 * launch therefore takes the next of NSET sets of vectors, enough sets that
 * their bytes exceed twice the last-level cache. */
#define CG_MAXSET 32
typedef struct {
  hx_disc d;
  hx_pc pc;
  double *set[CG_MAXSET][5]; /* p, w, x, r, z */
  double *p, *w, *x, *r, *z, *l;
  int32_t *map; /* L->G map (backend copy) for the element kernel with the scatter fused in */
  int nset, next;
  double scal;
  int64_t n, nown;
  hx_red red;
  double *dinv; /* for the fused kernel: a diagonal (ones) */
} cg_bench;

/* point p, w, x, r, z at the next set */
static void next_set(cg_bench *c) {
  double **v = c->set[c->next];
  c->next = (c->next + 1) % c->nset;
  c->p = v[0], c->w = v[1], c->x = v[2], c->r = v[3], c->z = v[4];
}

static int k_op(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_op_apply(hx_disc_op(c->d), c->p, c->w, &c->scal));
  return HX_SUCCESS;
}
/* the element kernel as the operator runs it: reading p through the L->G map
 * (the scatter fused in), writing the L-vector that the gather sums */
static int k_ax(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  hx_ax ax = hx_disc_ax(c->d);
  HX_CALL(hx_ax_apply_list_g(ax, hx_ax_num_elements(ax), NULL, c->map, c->p, c->l + hx_disc_num_l(c->d),
                             &c->scal));
  return HX_SUCCESS;
}
static int k_gather(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_gs_gather(hx_disc_gs(c->d), c->l + hx_disc_num_l(c->d), c->w));
  return HX_SUCCESS;
}
static int k_exchange(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_gs_exchange(hx_disc_gs(c->d), c->w, HX_GS_ADD));
  return HX_SUCCESS;
}
static int k_update(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_array_cg_update(hx_disc_backend(c->d), c->n, c->nown, c->x, c->r, c->p, c->w, 1e-30, &c->scal));
  return HX_SUCCESS;
}
static int k_pc(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_pc_apply(c->pc, c->r, c->z));
  return HX_SUCCESS;
}
static int k_dot(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  double loc[2] = {0, 0}, glob[2];
  HX_CALL(hx_array_dot(hx_disc_backend(c->d), c->nown, c->r, c->z, &loc[1]));
  HX_MPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, hx_gs_comm(hx_disc_gs(c->d))));
  c->scal = glob[1];
  return HX_SUCCESS;
}
/* x += a p; r -= a w; z = d r; r.r, r.z: Jacobi fused into the update (slots only) */
static int k_fused(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_array_cg_update_diag_red(c->red, 0, 1, -1, c->n, c->nown, c->x, c->r, c->p, c->w, c->dinv, c->z,
                                      1e-30));
  return HX_SUCCESS;
}
/* the sums an iteration leaves on the device read together, then one allreduce */
static int k_fetch_allreduce(void *a) {
  cg_bench *c = (cg_bench *)a;
  double loc[3] = {0, 0, 0}, glob[3];
  HX_CALL(hx_red_fetch(c->red, 3, loc));
  HX_MPI(MPI_Allreduce(loc, glob, 3, MPI_DOUBLE, MPI_SUM, hx_gs_comm(hx_disc_gs(c->d))));
  c->scal = glob[1];
  return HX_SUCCESS;
}
/* pcg1: w.u left in a slot */
static int k_dot_red(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_array_dot_red(c->red, 2, c->nown, c->w, c->z));
  return HX_SUCCESS;
}
/* pcg1: p = u + beta p; s = w + beta s */
static int k_xpay2(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_array_xpay(hx_disc_backend(c->d), c->n, c->p, c->z, 1e-30));
  HX_CALL(hx_array_xpay(hx_disc_backend(c->d), c->n, c->x, c->w, 1e-30));
  return HX_SUCCESS;
}
static int k_xpay(void *a) {
  cg_bench *c = (cg_bench *)a;
  next_set(c);
  HX_CALL(hx_array_xpay(hx_disc_backend(c->d), c->n, c->p, c->z, 1e-30));
  return HX_SUCCESS;
}

static int bench(hx_app_ctx *ctx, const char *backend, int N, int p, int K, int pcg1, int no_fuse) {
  hx_mesh m = NULL;
  hx_backend b = NULL;
  cg_bench c = {0};
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = N;
  HX_CALL(hx_backend_create(backend, &b));
  HX_CALL(hx_mesh_create_box(ctx->comm, &mo, &m));
  hx_disc_opts o = hx_disc_opts_default();
  o.p = p;
  HX_CALL(hx_disc_create(m, b, &o, &c.d));
  c.n = hx_op_size(hx_disc_op(c.d)), c.nown = hx_op_owned(hx_disc_op(c.d));
  const size_t gb = sizeof(double) * (size_t)c.n;
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = 32L << 20;
  c.nset = (int)((2.0 * (double)llc) / (5.0 * (double)gb)) + 1;
  /* at most 256 MiB of sets per rank (sysconf may report the host's cache, not the VM's) */
  const int cap = (int)((256.0 * 1048576.0) / (5.0 * (double)gb));
  if (c.nset > cap) c.nset = cap > 2 ? cap : 2;
  if (c.nset > CG_MAXSET) c.nset = CG_MAXSET;
  if (b && hx_backend_get_kind(b) == HX_BACKEND_CUDA) c.nset = 1; /* device memory: no host cache to defeat */
  for (int s = 0; s < c.nset; s++)
    for (int i = 0; i < 5; i++) {
      HX_CALL(hx_mem_alloc(b, gb, (void **)&c.set[s][i]));
      HX_CALL(hx_mem_zero(b, c.set[s][i], gb));
    }
  next_set(&c);
  HX_CALL(hx_mem_alloc(b, 2 * sizeof(double) * (size_t)hx_disc_num_l(c.d), (void **)&c.l));
  HX_CALL(hx_mem_alloc(b, sizeof(int32_t) * (size_t)(hx_disc_num_l(c.d) + 1), (void **)&c.map));
  HX_CALL(hx_mem_to_device(b, c.map, hx_gs_map_host(hx_disc_gs(c.d)),
                           sizeof(int32_t) * (size_t)hx_disc_num_l(c.d)));
  HX_CALL(hx_red_create(b, 3, c.n, &c.red));
  HX_CALL(hx_mem_alloc(b, gb > 0 ? gb : 8, (void **)&c.dinv));
  {
    double *one;
    HX_CALL(HX_ALLOC(&one, c.n > 0 ? c.n : 1));
    for (int64_t i = 0; i < c.n; i++) one[i] = 1.0;
    const int e = hx_mem_to_device(b, c.dinv, one, gb);
    free(one);
    HX_CALL(e);
  }

  /* the solve: f = 1, zero Dirichlet data, tolerance 0, K iterations */
  double *hf;
  HX_CALL(HX_ALLOC(&hf, hx_disc_num_l(c.d)));
  for (int64_t i = 0; i < hx_disc_num_l(c.d); i++) hf[i] = 1.0;
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = 0.0;
  po.max_iterations = K;
  po.single_reduction = pcg1;
  po.no_fuse = no_fuse;
  hx_solve_result dr;
  hx_field none = {NULL, NULL, NULL};
  HX_CALL(hx_pc_create_jacobi(hx_disc_op(c.d), &c.pc));
  HX_CALL(hx_solve(c.d, c.pc, hf, NULL, NULL, none, &po, NULL, NULL, &dr));
  free(hf);
  double t_it = dr.t_solve / (dr.pcg.iterations > 0 ? dr.pcg.iterations : 1);

  const int fused = dr.pcg.fused_pc_update;
  struct {
    const char *name;
    hx_bench_kernel fn;
    int in_sum;
  } ks[16];
  int nk = 0;
#define HX_K(nm, f, in)                  \
  do {                                   \
    ks[nk].name = (nm), ks[nk].fn = (f); \
    ks[nk++].in_sum = (in);              \
  } while (0)
  HX_K("operator (total)", k_op, 1);
  HX_K("  element (Z fused)", k_ax, 0);
  HX_K("  gather", k_gather, 0);
  HX_K("  exchange", k_exchange, 0);
  if (fused) {
    HX_K("update+jacobi (fused)", k_fused, 1);
  } else {
    HX_K("cg update (BS5)", k_update, 1);
    HX_K("jacobi", k_pc, 1);
  }
  if (pcg1) {
    if (!fused) HX_K("r.u (local)", k_dot_red, 1);
    HX_K("w.u (local)", k_dot_red, 1);
    HX_K("fetch + allreduce", k_fetch_allreduce, 1);
    HX_K("p, s = u, w + beta p, s", k_xpay2, 1);
  } else {
    if (fused)
      HX_K("fetch + allreduce", k_fetch_allreduce, 1);
    else
      HX_K("r.z + allreduce", k_dot, 1);
    HX_K("p = z + beta p", k_xpay, 1);
  }
#undef HX_K
  hx_bench_timing_opts to = {0.05, 5, 100000, 1};
  double sum = 0;
  int64_t dofs = hx_gs_num_global(hx_disc_gs(c.d));
  if (ctx->rank == 0) {
    printf("bench cg: %d^3 elements, p = %d, %lld DOFs, %d ranks, backend %s\n", N, p, (long long)dofs,
           ctx->size, backend);
    printf("%s: %d iterations in %.4f s: %.4e s per iteration (%.3e DOF-iterations/s)\n",
           pcg1 ? "pcg1" : "PCG", dr.pcg.iterations, dr.t_solve, t_it, (double)dofs / t_it);
    printf("%s%s: %.1f MDOF/s (DOFs x iterations / solve seconds)\n", pcg1 ? "pcg1" : "PCG",
           fused ? ", Jacobi fused into the update" : "", 1e-6 * (double)dofs / t_it);
    printf("per iteration: %d allreduces, %d vector passes outside the operator\n",
           dr.pcg.allreduces_per_iteration, dr.pcg.vector_passes_per_iteration);
    /* the split of the solve itself (rank 0's timers; on cuda the queued
     * kernels are paid where the host waits: in the reductions) */
    const double it = dr.pcg.iterations > 0 ? dr.pcg.iterations : 1;
    const double parts[4] = {dr.pcg.t_operator, dr.pcg.t_vector, dr.pcg.t_precond, dr.pcg.t_reduction};
    const char *names[4] = {"operator", "vector updates", "preconditioner", "reductions"};
    double rest = dr.t_solve;
    printf("time split per iteration (in the solve):\n");
    for (int i = 0; i < 4; i++) {
      printf("  %-20s %12.4e s %6.1f%%\n", names[i], parts[i] / it, 100 * parts[i] / dr.t_solve);
      rest -= parts[i];
    }
    printf("  %-20s %12.4e s %6.1f%%\n", "other", rest / it, 100 * rest / dr.t_solve);
    printf(
        "kernels timed alone, cycling through %d sets of vectors (%.1f MiB per rank) so that\n"
        "they do not run from the last-level cache (%.0f MiB reported)\n",
        c.nset, c.nset * 5.0 * (double)gb / 1048576.0, (double)llc / 1048576.0);
    printf("%-22s %12s %8s\n", "kernel", "seconds", "% iter");
  }
  for (int i = 0; i < nk; i++) {
    hx_bench_timing t;
    HX_CALL(hx_bench_time(ctx->comm, b, NULL, ks[i].fn, &c, &to, &t));
    if (ks[i].in_sum) sum += t.seconds;
    if (ctx->rank == 0) printf("%-22s %12.4e %7.1f%%\n", ks[i].name, t.seconds, 100 * t.seconds / t_it);
  }
  if (ctx->rank == 0)
    printf("sum of kernels %.4e s; iteration / sum = %.3f (target <= 1.2)\n", sum, t_it / sum);
  HX_CALL(hx_pc_destroy(&c.pc));
  HX_CALL(hx_red_destroy(&c.red));
  HX_CALL(hx_mem_free(b, (void **)&c.dinv));
  for (int s = 0; s < c.nset; s++)
    for (int i = 0; i < 5; i++) HX_CALL(hx_mem_free(b, (void **)&c.set[s][i]));
  HX_CALL(hx_mem_free(b, (void **)&c.l));
  HX_CALL(hx_mem_free(b, (void **)&c.map));
  HX_CALL(hx_disc_destroy(&c.d));
  HX_CALL(hx_mesh_destroy(&m));
  HX_CALL(hx_backend_destroy(&b));
  return HX_SUCCESS;
}

int hx_bench_cg(hx_app_ctx *ctx, int argc, char **argv) {
  const char *backend = NULL, *solver = NULL;
  int N = 0, p = 0, K = 0, no_fuse = 0;
  const hx_bench_opt opt[] = {
      {"--backend", HX_BOPT_STRING, &backend, "cpu", .meta = "NAME", .help = "backend: cpu or cuda"},
      {"--elements", HX_BOPT_INT, &N, "14", 1, 100000, .meta = "N", .help = "an N^3 box"},
      {"--order", HX_BOPT_INT, &p, "7", 1, 15, .meta = "P", .help = "polynomial order"},
      {"--iterations", HX_BOPT_INT, &K, "30", 1, 2147483647, .meta = "K",
       .help = "PCG iterations, at tolerance 0"},
      {"--solver", HX_BOPT_CHOICE, &solver, "pcg", .choices = "pcg,pcg1",
       .help = "pcg1: single-reduction CG"},
      {"--no-fuse", HX_BOPT_FLAG, &no_fuse,
       .help = "Jacobi applied apart from the CG update (the unfused kernels)"},
  };
  const hx_bench_cmd cmd = {
      "bench cg",
      "Jacobi-PCG on an N^3 box (default 14^3 at p = 7: about 1e6 DOFs), K iterations at "
      "tolerance 0: the time split of an iteration and MDOF/s, then each kernel of an "
      "iteration timed alone, and the ratio iteration / sum of kernels.",
      NULL, (int)(sizeof opt / sizeof opt[0]), opt};
  int status = 0;
  if (hx_bench_args(ctx, &cmd, argc, argv, &status)) return status;
  const int pcg1 = !strcmp(solver, "pcg1");
  /* the global mesh on rank 0 and each rank's Jacobi-PCG data, as for a case */
  const double E = (double)N * N * N, n3 = (p + 1.0) * (p + 1) * (p + 1);
  const double per = HX_MEM_MESH_LOCAL_ELEM + HX_MEM_RUN_NODE * n3;
  char what[96];
  snprintf(what, sizeof what, "bench cg: --elements %d --order %d", N, p);
  int ierr = hx_bench_check_memory(ctx->comm, E * HX_MEM_MESH_GLOBAL_ELEM,
                                   (floor(E / ctx->size) + (ctx->rank < fmod(E, ctx->size))) * per,
                                   ceil(E / ctx->size) * per, what);
  if (ierr) return hx_app_fail(ctx, ierr, 1);
  ierr = bench(ctx, backend, N, p, K, pcg1, no_fuse);
  return ierr ? hx_app_fail(ctx, ierr, 0) : 0;
}
