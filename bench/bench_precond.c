/* hexcg bench precond: the setup and apply times of a preconditioner given by
 * its case-file options (default: the two-level Schwarz, asm), on a box or
 * Kershaw mesh at order p: setup (discretisation, FDM, coarse assembly,
 * BoomerAMG), per apply the fine level (and its GDOF/s and ratio to one
 * operator apply timed in the same run), the coarse level, and the combined
 * apply overlapped and sequential, with the overlap efficiency
 * total / max(fine, coarse). For pmg: the setup per level (discretisation,
 * smoother, eigenvalue estimate) and of the coarse level, and per apply
 * (one V-cycle) the smoothing and the transfers of every level, the coarse
 * level and the whole cycle; the additive cycle runs overlapped and
 * sequential. asm and pmg run with preconditioner.precision fp64 and fp32
 * in the same run (whatever --pc says), the variants timed in turn over
 * --rounds rounds (default 3, best of each), and the fp64/fp32 ratios
 * printed. The operator, and for asm the fine level alone
 * (hx_asm_fine_apply), are timed in the same rounds, best of them, so their
 * ratio compares like with like. Figures are the slowest rank's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "bench_util.h"
#include "hx_bench.h"
#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"

typedef struct {
  const char *backend, *mesh, *pc;
  int n, p;
  double min_time;
  int rounds;
} options;

/* 1: --help was asked (printed); an input error: HX_ERR_INPUT */
static int parse_args(const hx_app_ctx *ctx, int argc, char **argv, options *o) {
  *o = (options){0};
  const hx_bench_opt opt[] = {
      {"--backend", HX_BOPT_STRING, &o->backend, "cpu", .meta = "NAME", .help = "backend: cpu or cuda"},
      {"--mesh", HX_BOPT_CHOICE, &o->mesh, "box", .choices = "box,kershaw",
       .help = "unit cube, or the Kershaw mesh with eps 0.3"},
      {"--elements", HX_BOPT_INT, &o->n, "8", 1, 512, .meta = "N",
       .help = "N^3 elements (kershaw: a multiple of 6)"},
      {"--order", HX_BOPT_INT, &o->p, "7", HX_ORDER_MIN, HX_ORDER_MAX, .meta = "P",
       .help = "polynomial order"},
      {"--pc", HX_BOPT_STRING, &o->pc, "{type: asm}", .meta = "YAML",
       .help = "preconditioner options as in a case file, flow style; asm and the additive pmg cycle run "
               "overlapped and sequential; pmg prints its levels; asm and pmg run with precision fp64 and "
               "fp32 in turn and print the ratios"},
      {"--min-time", HX_BOPT_REAL, &o->min_time, "0.2", 0, 60, HX_BOPT_OPEN_LO, .meta = "S",
       .help = "seconds per timed batch"},
      {"--rounds", HX_BOPT_INT, &o->rounds, "3", 1, 100, .meta = "K",
       .help = "rounds over the variants, best of each kept (more on a busy machine: the best of many is "
               "the stable figure)"},
  };
  const hx_bench_cmd cmd = {"bench precond", NULL, NULL, (int)(sizeof opt / sizeof opt[0]), opt};
  int help = 0;
  HX_CALL(hx_bench_parse(&cmd, argc, argv, &help));
  if (help) {
    if (ctx->rank == 0) hx_bench_usage(&cmd, stdout);
    return 1;
  }
  HX_CHECK(strcmp(o->mesh, "kershaw") || o->n % 6 == 0, HX_ERR_INPUT,
           "bench precond: --elements %d: the Kershaw mesh needs a multiple of 6", o->n);
  return HX_SUCCESS;
}

typedef struct {
  hx_op op;
  hx_pc pc;
  double *r, *z;
} kargs;

static int k_op(void *a) {
  kargs *k = (kargs *)a;
  HX_CALL(hx_op_apply(k->op, k->r, k->z, NULL));
  return HX_SUCCESS;
}

static int k_fine(void *a) {
  kargs *k = (kargs *)a;
  HX_CALL(hx_asm_fine_apply(k->pc, k->r, k->z));
  return HX_SUCCESS;
}

static int k_pc(void *a) {
  kargs *k = (kargs *)a;
  HX_CALL(hx_pc_apply(k->pc, k->r, k->z));
  return HX_SUCCESS;
}

/* max over ranks of v[0..n) in place */
static int max_ranks(MPI_Comm comm, double *v, int n) {
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm));
  return HX_SUCCESS;
}

static int run(hx_app_ctx *ctx, const options *o) {
  hx_backend b = NULL;
  hx_mesh m = NULL;
  hx_disc d = NULL;
  hx_pc pcs[4] = {NULL, NULL, NULL, NULL};
  hx_opt *opts = NULL;
  kargs k = {0};
  int err = hx_backend_create(o->backend, &b);
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = o->n;
  if (!strcmp(o->mesh, "kershaw")) mo.kershaw_eps = 0.3;
  if (!err) err = hx_mesh_create_box(ctx->comm, &mo, &m);
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = o->p;
  double t0 = hx_wtime();
  if (!err) err = hx_disc_create(m, b, &dopt, &d);
  double t_disc = hx_wtime() - t0;
  if (!err) err = hx_opt_parse_yaml(o->pc, "--pc", &opts);
  if (!err) err = hx_pc_options_check(opts);
  if (err) goto done;
  const int is_asm = !strcmp(hx_opt_get(opts, "type")->value, "asm");
  const int is_pmg = !strcmp(hx_opt_get(opts, "type")->value, "pmg");
  const int has_coarse = is_asm && strcmp(hx_opt_get(hx_opt_get(opts, "coarse"), "solver")->value, "none");
  const int pmg_add = is_pmg && !strcmp(hx_opt_get(opts, "cycle")->value, "additive") &&
                      strcmp(hx_opt_get(hx_opt_get(opts, "coarse"), "solver")->value, "none");
  /* variants: overlap on/off (where it applies) x precision fp64/fp32 (asm,
   * pmg: both in the same run, whatever --pc says) */
  const int nov = has_coarse || pmg_add ? 2 : 1, nprec = is_asm || is_pmg ? 2 : 1, npc = nov * nprec;
  hx_pmg_stats ps[4];
  memset(ps, 0, sizeof ps);
  k.op = hx_disc_op(d);
  const int64_t ng = hx_op_size(k.op), dofs = hx_disc_num_dofs(d);
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  if ((err = hx_mem_alloc(b, bytes, (void **)&k.r)) || (err = hx_mem_alloc(b, bytes, (void **)&k.z))) goto done;
  {
    /* a smooth-plus-rough residual, masked */
    double *h = malloc(bytes);
    const int64_t *gid = hx_gs_global_ids(hx_disc_gs(d));
    for (int64_t i = 0; i < ng; i++) h[i] = sin(0.37 * (double)gid[i]) + 1.0;
    err = hx_mem_to_device(b, k.r, h, bytes);
    free(h);
    if (!err) err = hx_gs_apply_mask(hx_disc_gs(d), k.r);
    if (err) goto done;
  }
  hx_bench_timing_opts to = {o->min_time, 3, 100000, 1};
  hx_bench_timing top;
  if ((err = hx_bench_time(ctx->comm, b, NULL, k_op, &k, &to, &top))) goto done;
  char view[4][512];
  double setup[4] = {0, 0, 0, 0};
  hx_bench_timing tp[4];
  hx_asm_stats st[4];
  memset(st, 0, sizeof st);
  for (int i = 0; i < npc; i++) {
    if (nov == 2 && (err = hx_opt_set(opts, "overlap", i % nov == 0 ? "true" : "false"))) goto done;
    if (nprec == 2 && (err = hx_opt_set(opts, "precision", i / nov == 0 ? "fp64" : "fp32"))) goto done;
    if ((err = hx_pc_create_from_options(d, opts, &pcs[i]))) goto done;
    t0 = hx_wtime();
    if ((err = hx_pc_setup(pcs[i]))) goto done;
    setup[i] = hx_wtime() - t0;
  }
  /* the variants timed in turn, o->rounds rounds, best of each (A B A B: on a
   * loaded machine the ratio of the best times is the stable figure); the
   * operator and, for asm, the fine level alone in the same rounds */
  hx_bench_timing tfine[4];
  for (int round = 0; round < o->rounds; round++) {
    hx_bench_timing t;
    if ((err = hx_bench_time(ctx->comm, b, NULL, k_op, &k, &to, &t))) goto done;
    if (t.seconds < top.seconds) top = t;
    for (int i = 0; i < npc; i++) {
      k.pc = pcs[i];
      if ((err = hx_bench_time(ctx->comm, b, NULL, k_pc, &k, &to, &t))) goto done;
      if (round == 0 || t.seconds < tp[i].seconds) tp[i] = t;
      if (!is_asm || (nov == 2 && i % nov == 1)) continue; /* the fine level of each precision once */
      if ((err = hx_bench_time(ctx->comm, b, NULL, k_fine, &k, &to, &t))) goto done;
      if (round == 0 || t.seconds < tfine[i].seconds) tfine[i] = t;
    }
  }
  for (int i = 0; i < npc; i++) {
    hx_asm_get_stats(pcs[i], &st[i]);
    hx_pc_view(pcs[i], view[i], sizeof view[i]);
    double v[8] = {st[i].t_fine, st[i].t_coarse, st[i].t_copy, st[i].t_total, st[i].t_fine_setup,
                   st[i].t_coarse_assembly, st[i].t_amg_setup, setup[i]};
    if ((err = max_ranks(ctx->comm, v, 8))) goto done;
    st[i].t_fine = v[0], st[i].t_coarse = v[1], st[i].t_copy = v[2], st[i].t_total = v[3];
    st[i].t_fine_setup = v[4], st[i].t_coarse_assembly = v[5], st[i].t_amg_setup = v[6], setup[i] = v[7];
    if (is_pmg) {
      hx_pmg_get_stats(pcs[i], &ps[i]);
      const int nl = ps[i].nlevels;
      double w[3 * HX_PMG_STATS_LEVELS + 4];
      for (int l = 0; l < nl; l++)
        w[3 * l] = ps[i].t_setup[l], w[3 * l + 1] = ps[i].t_smooth[l], w[3 * l + 2] = ps[i].t_transfer[l];
      w[3 * nl] = ps[i].t_coarse, w[3 * nl + 1] = ps[i].t_coarse_copy, w[3 * nl + 2] = ps[i].t_coarse_setup;
      w[3 * nl + 3] = ps[i].t_total;
      if ((err = max_ranks(ctx->comm, w, 3 * nl + 4))) goto done;
      for (int l = 0; l < nl; l++)
        ps[i].t_setup[l] = w[3 * l], ps[i].t_smooth[l] = w[3 * l + 1], ps[i].t_transfer[l] = w[3 * l + 2];
      ps[i].t_coarse = w[3 * nl], ps[i].t_coarse_copy = w[3 * nl + 1], ps[i].t_coarse_setup = w[3 * nl + 2];
      ps[i].t_total = w[3 * nl + 3];
    }
  }
  if (ctx->rank == 0) {
    printf("bench precond: %s mesh, %d^3 elements, p = %d, %lld DOFs, %d ranks, backend %s\n", o->mesh, o->n, o->p,
           (long long)dofs, ctx->size, o->backend);
    printf("discretisation setup %.4f s; operator apply %.4e s (%.3f GDOF/s)\n", t_disc, top.seconds,
           (double)dofs / top.seconds * 1e-9);
    for (int i = 0; i < npc; i++) {
      printf("%s\n", view[i]);
      printf("  setup %.4f s", setup[i]);
      if (is_asm)
        printf(" (fdm %.4f s%s", st[i].t_fine_setup, has_coarse ? "" : ")");
      if (has_coarse)
        printf(", coarse assembly %.4f s, BoomerAMG setup %.4f s; %lld coarse rows, %d AMG levels)",
               st[i].t_coarse_assembly, st[i].t_amg_setup, (long long)st[i].coarse_rows, st[i].amg_levels);
      printf("\n  apply %.4e s (%.3f GDOF/s, %.2f operator applies)\n", tp[i].seconds,
             (double)dofs / tp[i].seconds * 1e-9, tp[i].seconds / top.seconds);
      if (is_pmg) {
        const hx_pmg_stats *q = &ps[i];
        double work = 0.0;
        printf("  level  order  setup (s)   rho      smoothing (s/cycle)  transfers (s/cycle)\n");
        for (int l = 0; l < q->nlevels; l++) {
          printf("  %5d  %5d  %.4e  %7.4f  %.4e           %.4e\n", l, q->order[l], q->t_setup[l], q->rho[l],
                 q->t_smooth[l], q->t_transfer[l]);
          work += q->t_smooth[l] + q->t_transfer[l];
        }
        if (q->coarse)
          printf("  coarse Q1 (BoomerAMG): setup %.4e s, %lld rows, %d AMG levels; %.4e s/cycle (+ host copies "
                 "%.4e s)\n",
                 q->t_coarse_setup, (long long)q->coarse_rows, q->amg_levels, q->t_coarse, q->t_coarse_copy);
        printf("  whole cycle %.4e s", q->t_total);
        if (q->additive && q->coarse)
          printf(" (%s; total / max(levels %.4e, coarse %.4e) = %.3f)", q->overlap ? "overlapped" : "sequential", work,
                 q->t_coarse, q->t_total / fmax(work, q->t_coarse));
        printf("\n");
      }
      if (is_asm) {
        printf("  fine level %.4e s (%.3f GDOF/s, %.2f operator applies; the mean within the applies)\n",
               st[i].t_fine, (double)dofs / st[i].t_fine * 1e-9, st[i].t_fine / top.seconds);
        if (!(nov == 2 && i % nov == 1))
          printf("  fine level alone %.4e s (%.3f GDOF/s, %.2f operator applies; best of %d rounds, as the "
                 "operator)\n",
                 tfine[i].seconds, (double)dofs / tfine[i].seconds * 1e-9, tfine[i].seconds / top.seconds,
                 o->rounds);
        if (has_coarse)
          printf("  coarse level %.4e s, host copies %.4e s, total %.4e s, overlap efficiency "
                 "total/max(fine, coarse) = %.3f\n",
                 st[i].t_coarse, st[i].t_copy, st[i].t_total,
                 st[i].t_total / fmax(st[i].t_fine, st[i].t_coarse));
      }
    }
    /* preconditioner.precision: FP32 against FP64 in this run */
    for (int v = 0; nprec == 2 && v < nov; v++) {
      const int a = v, c = nov + v;
      printf("precision%s: apply fp64 %.4e s, fp32 %.4e s: fp64/fp32 %.2f", nov == 2 ? (v ? " (sequential)" : " (overlapped)") : "",
             tp[a].seconds, tp[c].seconds, tp[a].seconds / tp[c].seconds);
      if (is_asm)
        printf("; fine level fp64 %.4e s, fp32 %.4e s: %.2f", st[a].t_fine, st[c].t_fine, st[a].t_fine / st[c].t_fine);
      if (is_pmg)
        for (int l = 0; l < ps[a].nlevels; l++)
          printf("; smoothing fp64/fp32 at p=%d %.2f", ps[a].order[l], ps[a].t_smooth[l] / fmax(ps[c].t_smooth[l], 1e-300));
      printf("\n");
    }
  }
done:
  for (int i = 0; i < 4; i++) hx_pc_destroy(&pcs[i]);
  hx_opt_free(&opts);
  if (b) hx_mem_free(b, (void **)&k.r), hx_mem_free(b, (void **)&k.z);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_bench_precond(hx_app_ctx *ctx, int argc, char **argv) {
  options o;
  int err = parse_args(ctx, argc, argv, &o);
  if (err == 1) return 0;
  if (err) return hx_app_fail(ctx, err, 1);
  /* the global mesh on rank 0 and each rank's data, as for a case */
  const double E = (double)o.n * o.n * o.n, n3 = (o.p + 1.0) * (o.p + 1) * (o.p + 1);
  double pc_node = 0.0; /* what the preconditioner adds (precond/ knows) */
  hx_opt *pco = NULL;
  err = hx_opt_parse_yaml(o.pc, "--pc", &pco);
  if (!err) err = hx_pc_options_check(pco);
  if (!err) err = hx_pc_options_mem_per_node(pco, o.p, &pc_node);
  hx_opt_free(&pco);
  if (err) return hx_app_fail(ctx, err, 1);
  const double per = HX_MEM_MESH_LOCAL_ELEM + (HX_MEM_RUN_NODE + pc_node) * n3;
  char what[96];
  snprintf(what, sizeof what, "bench precond: --elements %d --order %d", o.n, o.p);
  err = hx_bench_check_memory(ctx->comm, E * HX_MEM_MESH_GLOBAL_ELEM,
                              (floor(E / ctx->size) + (ctx->rank < fmod(E, ctx->size))) * per,
                              ceil(E / ctx->size) * per, what);
  if (err) return hx_app_fail(ctx, err, 1);
  err = run(ctx, &o);
  if (err) return hx_app_fail(ctx, err, 1);
  return 0;
}
