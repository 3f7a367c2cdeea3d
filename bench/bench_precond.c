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

/* the variants of one run and what was measured of them */
typedef struct {
  int is_asm, is_pmg, has_coarse, nov, nprec, npc; /* npc = nov * nprec variants */
  int64_t dofs;
  double t_disc;
  hx_bench_timing top;     /* the operator */
  hx_pc pcs[4];
  double setup[4];
  hx_bench_timing tp[4], tfine[4]; /* the whole apply, asm's fine level alone */
  hx_asm_stats st[4];
  hx_pmg_stats ps[4];
  char view[4][512];
} bench_run;

/* the variants from the options: overlap on/off (where it applies) x
 * precision fp64/fp32 (asm, pmg: both in the same run, whatever --pc says) */
static void plan_variants(const hx_opt *opts, bench_run *r) {
  r->is_asm = !strcmp(hx_opt_get(opts, "type")->value, "asm");
  r->is_pmg = !strcmp(hx_opt_get(opts, "type")->value, "pmg");
  r->has_coarse = r->is_asm && strcmp(hx_opt_get(hx_opt_get(opts, "coarse"), "solver")->value, "none");
  const int pmg_add = r->is_pmg && !strcmp(hx_opt_get(opts, "cycle")->value, "additive") &&
                      strcmp(hx_opt_get(hx_opt_get(opts, "coarse"), "solver")->value, "none");
  r->nov = r->has_coarse || pmg_add ? 2 : 1, r->nprec = r->is_asm || r->is_pmg ? 2 : 1;
  r->npc = r->nov * r->nprec;
}

/* a smooth-plus-rough residual in k->r, masked */
static int make_residual(hx_backend b, hx_disc d, kargs *k) {
  const int64_t ng = hx_op_size(k->op);
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  HX_CALL(hx_mem_alloc(b, bytes, (void **)&k->r));
  HX_CALL(hx_mem_alloc(b, bytes, (void **)&k->z));
  double *h = malloc(bytes);
  const int64_t *gid = hx_gs_global_ids(hx_disc_gs(d));
  for (int64_t i = 0; i < ng; i++) h[i] = sin(0.37 * (double)gid[i]) + 1.0;
  int err = hx_mem_to_device(b, k->r, h, bytes);
  free(h);
  if (!err) err = hx_gs_apply_mask(hx_disc_gs(d), k->r);
  return err;
}

/* every variant created and set up (timed) */
static int setup_variants(hx_disc d, hx_opt *opts, bench_run *r) {
  for (int i = 0; i < r->npc; i++) {
    if (r->nov == 2) HX_CALL(hx_opt_set(opts, "overlap", i % r->nov == 0 ? "true" : "false"));
    if (r->nprec == 2) HX_CALL(hx_opt_set(opts, "precision", i / r->nov == 0 ? "fp64" : "fp32"));
    HX_CALL(hx_pc_create_from_options(d, opts, &r->pcs[i]));
    const double t0 = hx_wtime();
    HX_CALL(hx_pc_setup(r->pcs[i]));
    r->setup[i] = hx_wtime() - t0;
  }
  return HX_SUCCESS;
}

/* the variants timed in turn, o->rounds rounds, best of each (A B A B: on a
 * loaded machine the ratio of the best times is the stable figure); the
 * operator and, for asm, the fine level alone in the same rounds */
static int time_rounds(const hx_app_ctx *ctx, hx_backend b, const options *o, const hx_bench_timing_opts *to,
                       kargs *k, bench_run *r) {
  for (int round = 0; round < o->rounds; round++) {
    hx_bench_timing t;
    HX_CALL(hx_bench_time(ctx->comm, b, NULL, k_op, k, to, &t));
    if (t.seconds < r->top.seconds) r->top = t;
    for (int i = 0; i < r->npc; i++) {
      k->pc = r->pcs[i];
      HX_CALL(hx_bench_time(ctx->comm, b, NULL, k_pc, k, to, &t));
      if (round == 0 || t.seconds < r->tp[i].seconds) r->tp[i] = t;
      if (!r->is_asm || (r->nov == 2 && i % r->nov == 1)) continue; /* the fine level of each precision once */
      HX_CALL(hx_bench_time(ctx->comm, b, NULL, k_fine, k, to, &t));
      if (round == 0 || t.seconds < r->tfine[i].seconds) r->tfine[i] = t;
    }
  }
  return HX_SUCCESS;
}

/* Collective: pmg's per-level times, the slowest rank's */
static int pmg_stats_max(MPI_Comm comm, hx_pmg_stats *ps) {
  const int nl = ps->nlevels;
  double w[3 * HX_PMG_STATS_LEVELS + 4];
  for (int l = 0; l < nl; l++) w[3 * l] = ps->t_setup[l], w[3 * l + 1] = ps->t_smooth[l], w[3 * l + 2] = ps->t_transfer[l];
  w[3 * nl] = ps->t_coarse, w[3 * nl + 1] = ps->t_coarse_copy, w[3 * nl + 2] = ps->t_coarse_setup;
  w[3 * nl + 3] = ps->t_total;
  HX_CALL(max_ranks(comm, w, 3 * nl + 4));
  for (int l = 0; l < nl; l++) ps->t_setup[l] = w[3 * l], ps->t_smooth[l] = w[3 * l + 1], ps->t_transfer[l] = w[3 * l + 2];
  ps->t_coarse = w[3 * nl], ps->t_coarse_copy = w[3 * nl + 1], ps->t_coarse_setup = w[3 * nl + 2];
  ps->t_total = w[3 * nl + 3];
  return HX_SUCCESS;
}

/* Collective: each variant's view and statistics, the slowest rank's times */
static int gather_stats(const hx_app_ctx *ctx, bench_run *r) {
  for (int i = 0; i < r->npc; i++) {
    hx_asm_stats *st = &r->st[i];
    hx_asm_get_stats(r->pcs[i], st);
    hx_pc_view(r->pcs[i], r->view[i], sizeof r->view[i]);
    double v[8] = {st->t_fine,         st->t_coarse,          st->t_copy,       st->t_total,
                   st->t_fine_setup,   st->t_coarse_assembly, st->t_amg_setup,  r->setup[i]};
    HX_CALL(max_ranks(ctx->comm, v, 8));
    st->t_fine = v[0], st->t_coarse = v[1], st->t_copy = v[2], st->t_total = v[3];
    st->t_fine_setup = v[4], st->t_coarse_assembly = v[5], st->t_amg_setup = v[6], r->setup[i] = v[7];
    if (r->is_pmg) {
      hx_pmg_get_stats(r->pcs[i], &r->ps[i]);
      HX_CALL(pmg_stats_max(ctx->comm, &r->ps[i]));
    }
  }
  return HX_SUCCESS;
}

/* pmg's levels, coarse level and whole cycle */
static void print_pmg(const hx_pmg_stats *q) {
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

/* asm's fine level (within the applies and alone) and coarse level */
static void print_asm(const bench_run *r, const options *o, int i) {
  const hx_asm_stats *st = &r->st[i];
  const double dofs = (double)r->dofs, top = r->top.seconds;
  printf("  fine level %.4e s (%.3f GDOF/s, %.2f operator applies; the mean within the applies)\n", st->t_fine,
         dofs / st->t_fine * 1e-9, st->t_fine / top);
  if (!(r->nov == 2 && i % r->nov == 1))
    printf("  fine level alone %.4e s (%.3f GDOF/s, %.2f operator applies; best of %d rounds, as the "
           "operator)\n",
           r->tfine[i].seconds, dofs / r->tfine[i].seconds * 1e-9, r->tfine[i].seconds / top, o->rounds);
  if (r->has_coarse)
    printf("  coarse level %.4e s, host copies %.4e s, total %.4e s, overlap efficiency "
           "total/max(fine, coarse) = %.3f\n",
           st->t_coarse, st->t_copy, st->t_total, st->t_total / fmax(st->t_fine, st->t_coarse));
}

/* variant i: its view, setup and apply */
static void print_variant(const bench_run *r, const options *o, int i) {
  const hx_asm_stats *st = &r->st[i];
  printf("%s\n", r->view[i]);
  printf("  setup %.4f s", r->setup[i]);
  if (r->is_asm) printf(" (fdm %.4f s%s", st->t_fine_setup, r->has_coarse ? "" : ")");
  if (r->has_coarse)
    printf(", coarse assembly %.4f s, BoomerAMG setup %.4f s; %lld coarse rows, %d AMG levels)",
           st->t_coarse_assembly, st->t_amg_setup, (long long)st->coarse_rows, st->amg_levels);
  printf("\n  apply %.4e s (%.3f GDOF/s, %.2f operator applies)\n", r->tp[i].seconds,
         (double)r->dofs / r->tp[i].seconds * 1e-9, r->tp[i].seconds / r->top.seconds);
  if (r->is_pmg) print_pmg(&r->ps[i]);
  if (r->is_asm) print_asm(r, o, i);
}

/* preconditioner.precision: FP32 against FP64 in this run */
static void print_precision(const bench_run *r) {
  const int nov = r->nov;
  for (int v = 0; r->nprec == 2 && v < nov; v++) {
    const int a = v, c = nov + v;
    printf("precision%s: apply fp64 %.4e s, fp32 %.4e s: fp64/fp32 %.2f", nov == 2 ? (v ? " (sequential)" : " (overlapped)") : "",
           r->tp[a].seconds, r->tp[c].seconds, r->tp[a].seconds / r->tp[c].seconds);
    if (r->is_asm)
      printf("; fine level fp64 %.4e s, fp32 %.4e s: %.2f", r->st[a].t_fine, r->st[c].t_fine,
             r->st[a].t_fine / r->st[c].t_fine);
    if (r->is_pmg)
      for (int l = 0; l < r->ps[a].nlevels; l++)
        printf("; smoothing fp64/fp32 at p=%d %.2f", r->ps[a].order[l],
               r->ps[a].t_smooth[l] / fmax(r->ps[c].t_smooth[l], 1e-300));
    printf("\n");
  }
}

static int run(hx_app_ctx *ctx, const options *o) {
  hx_backend b = NULL;
  hx_mesh m = NULL;
  hx_disc d = NULL;
  hx_opt *opts = NULL;
  kargs k = {0};
  bench_run r;
  memset(&r, 0, sizeof r);
  int err = hx_backend_create(o->backend, &b);
  if (!err) err = hx_bench_box_mesh(ctx->comm, o->mesh, o->n, &m);
  hx_disc_opts dopt = hx_disc_opts_default();
  dopt.p = o->p;
  double t0 = hx_wtime();
  if (!err) err = hx_disc_create(m, b, &dopt, &d);
  r.t_disc = hx_wtime() - t0;
  if (!err) err = hx_opt_parse_yaml(o->pc, "--pc", &opts);
  if (!err) err = hx_pc_options_check(opts);
  if (err) goto done;
  plan_variants(opts, &r);
  k.op = hx_disc_op(d);
  r.dofs = hx_disc_num_dofs(d);
  hx_bench_timing_opts to = {o->min_time, 3, 100000, 1};
  err = make_residual(b, d, &k);
  if (!err) err = hx_bench_time(ctx->comm, b, NULL, k_op, &k, &to, &r.top);
  if (!err) err = setup_variants(d, opts, &r);
  if (!err) err = time_rounds(ctx, b, o, &to, &k, &r);
  if (!err) err = gather_stats(ctx, &r);
  if (!err && ctx->rank == 0) {
    printf("bench precond: %s mesh, %d^3 elements, p = %d, %lld DOFs, %d ranks, backend %s\n", o->mesh, o->n, o->p,
           (long long)r.dofs, ctx->size, o->backend);
    printf("discretisation setup %.4f s; operator apply %.4e s (%.3f GDOF/s)\n", r.t_disc, r.top.seconds,
           (double)r.dofs / r.top.seconds * 1e-9);
    for (int i = 0; i < r.npc; i++) print_variant(&r, o, i);
    print_precision(&r);
  }
done:
  for (int i = 0; i < 4; i++) hx_pc_destroy(&r.pcs[i]);
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
