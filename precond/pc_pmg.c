/* p-multigrid preconditioner (type pmg): levels of decreasing order
 * p = q_0 > q_1 > ... > q_{L-1} > 1 on the same mesh, each a discretisation
 * of its own (hx_disc_create_order), a polynomial smoother around Jacobi or
 * overlapping Schwarz (FDM at the level's order) on each, and the Q1 level
 * (order 1) as the coarse level of the last discretisation: hx_coarse with
 * the Galerkin (or FEM) Q1 operator and BoomerAMG, exactly the coarse level
 * of the two-level Schwarz preconditioner. The Q1 space is the order-1
 * GLL space of the same elements, so the coarse level's trilinear
 * prolongation is the 1D GLL interpolation from order 1 to q_{L-1}.
 * Transfers between disc levels: hx_disc_interpolate (prolongation) and its
 * exact transpose (restriction).
 *
 * Multiplicative V-cycle (symmetric with symmetric smoothers):
 *   x_l = smooth(b_l, 0); r = b_l - A_l x_l; b_{l+1} = R r; x_{l+1} = V(b_{l+1});
 *   x_l += P x_{l+1}; x_l = smooth(b_l, x_l)
 * with, on the last disc level, x += P0 A0^{-1} P0^T (b - A x) in place of
 * the recursion. Additive cycle: b_{l+1} = R b_l for every level first,
 * then every level's smoothing from zero and the coarse solve (in a host
 * thread beside the smoothing when overlap is on), summed by
 * prolongation. docs/preconditioner.md.
 *
 * The cycle is written once; its precision is a property of the levels
 * (pmg_level.prec: the vectors, the operator hx_disc_op_prec, the smoother
 * hx_cheb.prec around an inner preconditioner of that precision, the
 * transfers hx_disc_interpolate_p). precision fp32: the residual r handed
 * to the preconditioner is rounded to FP32 once on entry and the whole
 * cycle runs in FP32 on the residual equation (x = 0 on entry, so no FP64
 * residual is needed): FP32 Schwarz (hx_fdm_apply_p) or the FP32 Jacobi
 * (hx_pc_create_jacobi_prec: 1/diag rounded to float);
 * the Q1 BoomerAMG level stays FP64 (its input widened, its output rounded);
 * the correction is widened to FP64 on exit. The eigenvalue estimates run
 * in FP32 too, with the FP32 operator and smoother (setup; no FP64 vector
 * of the level is allocated). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pmg_cycle.h"

static const char *const kind_names[] = {"plain", "fourth", "opt-fourth", "first"};

void hx_pmg_opts_default(hx_pmg_opts *o) {
  memset(o, 0, sizeof *o);
  o->nlevels = 0; /* by order: hx_pmg_default_levels */
  o->cycle = HX_PMG_MULTIPLICATIVE;
  o->inner = HX_SMOOTH_ASM;
  o->kind = HX_CHEB_OPT_FOURTH;
  o->degree = 3;
  o->inner_below = -1; /* as the fine level */
  o->kind_below = HX_CHEB_OPT_FOURTH;
  o->degree_below = 0;
  o->sides = HX_PMG_SIDES_BOTH;
  o->lower = 0.1;
  o->eig_steps = 12;
  o->eig_safety = 1.1;
  o->coarse = 1;
  o->overlap = 1;
  o->prec = HX_PC_PRECISION_DEFAULT;
  hx_coarse_opts_default(&o->coarse_opts);
}

int hx_pmg_default_levels(int p, int *levels) {
  int n = 0;
  levels[n++] = p;
  while (p > 1) {
    p = p <= 3 ? 1 : p == 4 ? 2 : p <= 7 ? 3 : (p + 1) / 2;
    levels[n++] = p;
  }
  return n;
}

/* ------------------------------------------------------------ callbacks */
static int lv_A(void *ctx, const void *x, void *y) {
  pmg_level *L = (pmg_level *)ctx;
  HX_CALL(hx_op_apply_p(L->opc, x, y));
  return HX_SUCCESS;
}

static int lv_S(void *ctx, const void *r, void *z) {
  pmg_level *L = (pmg_level *)ctx;
  HX_CALL(hx_pc_apply_p(L->S[L->inner], r, z));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ lifecycle */
int hx_pmg_destroy(void *ctx) {
  pmg *g = (pmg *)ctx;
  int first = HX_SUCCESS, err;
#define KEEP(e) \
  if ((err = (e)) && !first) first = err
  hx_pmg_many_free(g);
  for (int l = 0; l < g->nl; l++) {
    pmg_level *L = &g->lv[l];
    for (int s = 0; s < HX_SMOOTH_COUNT; s++) KEEP(hx_pc_destroy(&L->S[s]));
    if (L->b) {
      KEEP(hx_mem_free(L->b, (void **)&L->bv));
      KEEP(hx_mem_free(L->b, (void **)&L->x));
      KEEP(hx_mem_free(L->b, (void **)&L->r));
      KEEP(hx_mem_free(L->b, (void **)&L->dd));
      KEEP(hx_mem_free(L->b, (void **)&L->t));
    }
    KEEP(hx_disc_destroy(&L->d));
  }
  KEEP(hx_coarse_destroy(&g->coarse));
  KEEP(hx_mem_free(g->b, (void **)&g->d_zc));
  KEEP(hx_disc_destroy(&g->d));
#undef KEEP
  free(g->h_r), free(g->h_z), free(g);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

/* level l's smoother around S = inner (built unless it exists: a level may
 * hold a Jacobi and a Schwarz S, type auto), its eigenvalue bound and
 * polynomial; the level is inner's from here on */
int hx_pmg_level_smoother(pmg *g, int l, hx_smooth_inner inner) {
  pmg_level *L = &g->lv[l];
  const int below = l > 0 && g->o.inner_below >= 0;
  if (!L->S[inner]) HX_CALL(hx_smoothers[inner]->create(L->d, L->prec, &L->S[inner]));
  /* rho >= lambda_max(S A): a few Lanczos (CG) steps on a random vector, in
   * the cycle's precision with the operator and smoother the cycle applies;
   * the level's vectors serve as work (x holds the start vector) */
  const MPI_Comm comm = hx_gs_comm(hx_disc_gs(L->d));
  L->inner = inner; /* lv_S applies it */
  const int sym = hx_smoothers[inner]->symmetric;
  HX_CALL(hx_eig_start_vector(L->d, L->prec, L->x));
  HX_CALL(hx_eig_max_estimate(L->b, L->prec, L->n, L->nown, comm, lv_A, L, lv_S, L, sym, g->o.eig_steps, L->x,
                              L->bv, L->r, L->dd, L->t, &L->est));
  L->est_of[inner] = L->est;
  const int deg = l > 0 && g->o.degree_below > 0 ? g->o.degree_below : g->o.degree;
  L->cheb = (hx_cheb){.kind = below ? g->o.kind_below : g->o.kind,
                      .degree = deg,
                      .rho = g->o.eig_safety * L->est,
                      .lower = g->o.lower,
                      .prec = L->prec};
  return HX_SUCCESS;
}

static int level_setup(pmg *g, int l) {
  pmg_level *L = &g->lv[l];
  hx_ev ev = hx_ev_begin(&L->ev_setup);
  if (l == 0) {
    L->d = g->d;
    HX_CALL(hx_disc_reference(g->d));
  } else {
    HX_CALL(hx_disc_create_order(g->d, g->o.levels[l], &L->d));
  }
  L->op = hx_disc_op(L->d);
  L->b = hx_disc_backend(L->d);
  L->n = hx_op_size(L->op);
  L->nown = hx_op_owned(L->op);
  L->order = hx_disc_order(L->d);
  L->prec = g->prec;
  L->inner = l > 0 && g->o.inner_below >= 0 ? (hx_smooth_inner)g->o.inner_below : g->o.inner;
  HX_CALL(hx_disc_op_prec(L->d, L->prec, &L->opc));
  const size_t bytes = hx_precision_size(L->prec) * (size_t)(L->n > 0 ? L->n : 1);
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->bv));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->x));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->r));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->dd));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->t));
  HX_CALL(hx_pmg_level_smoother(g, l, L->inner));
  hx_ev_end(&ev, 0.0, 0.0);
  HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(L->d)), &L->ev_setup, 1));
  return HX_SUCCESS;
}

int hx_pmg_setup(void *ctx) {
  pmg *g = (pmg *)ctx;
  if (g->prec == HX_F32) {
    int fits = 1;
    HX_CALL(hx_pc_f32_fits(g->d, g->b, "pmg", "cycle", &fits));
    if (!fits) g->prec = g->o.prec = HX_F64;
  }
  for (int l = 0; l < g->nl; l++) HX_CALL(level_setup(g, l));
  if (g->o.coarse) {
    pmg_level *L = &g->lv[g->nl - 1];
    hx_ev ev = hx_ev_begin(&g->ev_coarse_setup);
    HX_CALL(hx_coarse_create_on(L->d, &g->o.coarse_opts, &g->coarse));
    hx_ev_end(&ev, 0.0, 0.0);
    HX_CALL(HX_ALLOC(&g->h_r, L->n > 0 ? L->n : 1));
    HX_CALL(HX_ALLOC(&g->h_z, L->n > 0 ? L->n : 1));
    HX_CALL(hx_mem_alloc(g->b, sizeof(double) * (size_t)(L->n > 0 ? L->n : 1), (void **)&g->d_zc));
    if (g->o.cycle == HX_PMG_ADDITIVE && g->o.overlap) {
      int provided = MPI_THREAD_SINGLE;
      HX_MPI(MPI_Query_thread(&provided));
      g->overlap = provided == MPI_THREAD_MULTIPLE;
      if (!g->overlap && hx_log_rank() == 0)
        hx_warn(
            "preconditioner.overlap: the MPI library does not provide MPI_THREAD_MULTIPLE; the coarse "
            "solve of the additive cycle runs after the smoothing instead of beside it\n");
    }
  }
  return HX_SUCCESS;
}

/* a new shift (hx_pc_set_shift): what level_setup and the coarse setup
 * built from the operators, in their order, on the shifted discs; the
 * start vectors of the estimates are seeded by the global ids, so the
 * bounds come out as a new setup's */
int hx_pmg_set_shift(void *ctx, double shift) {
  pmg *g = (pmg *)ctx;
  HX_CALL(hx_disc_set_shift(g->d, shift));
  if (g->req == HX_F32) { /* setup's choice of the cycle's precision must stay */
    int fits = 1;
    HX_CALL(hx_pc_f32_fits(g->d, g->b, "pmg", "cycle", &fits));
    if ((fits ? HX_F32 : HX_F64) != g->prec)
      return HX_ERROR(HX_ERR_UNSUPPORTED, "pmg: at shift %g the cycle runs in %s, not %s: make a new one",
                      shift, hx_precision_name(fits ? HX_F32 : HX_F64), hx_precision_name(g->prec));
  }
  for (int l = 0; l < g->nl; l++) {
    pmg_level *L = &g->lv[l];
    hx_ev ev = hx_ev_begin(&L->ev_setup); /* added to the level's setup */
    HX_CALL(hx_disc_set_shift(L->d, shift));
    for (int s = 0; s < HX_SMOOTH_COUNT; s++)
      if (L->S[s]) HX_CALL(hx_pc_set_shift(L->S[s], shift));
    HX_CALL(hx_pmg_level_smoother(g, l, L->inner));
    hx_ev_end(&ev, 0.0, 0.0);
    HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(L->d)), &L->ev_setup, 1));
  }
  if (g->coarse) {
    hx_ev ev = hx_ev_begin(&g->ev_coarse_setup);
    HX_CALL(hx_coarse_set_shift_on(g->coarse, g->lv[g->nl - 1].d));
    hx_ev_end(&ev, 0.0, 0.0);
  }
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ apply */
static int smooth(pmg_level *L, const void *b, void *x, int x_zero) {
  hx_ev ev = hx_ev_begin(&L->ev_smooth);
  HX_CALL(hx_cheb_apply(L->b, L->n, &L->cheb, lv_A, L, lv_S, L, b, x, x_zero, L->r, L->dd, L->t));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

/* the last level's residual r (in its precision) to the host for the coarse
 * solve, widened (exactly) to FP64 first when it is FP32 */
static int coarse_in(pmg *g, pmg_level *L, const void *r) {
  hx_ev ev = hx_ev_begin(&g->ev_copy);
  const double *src = (const double *)r;
  if (L->prec != HX_F64) {
    HX_CALL(hx_array_convert(L->b, L->n, HX_F64, g->d_zc, L->prec, r));
    src = g->d_zc;
  }
  HX_CALL(hx_mem_to_host(L->b, g->h_r, src, sizeof(double) * (size_t)L->n));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

/* x += the coarse solve's FP64 result (rounded to the level's precision in
 * the work vector t first when that is FP32) */
static int coarse_out(pmg *g, pmg_level *L, void *x, void *t) {
  hx_ev ev = hx_ev_begin(&g->ev_copy);
  HX_CALL(hx_mem_to_device(L->b, g->d_zc, g->h_z, sizeof(double) * (size_t)L->n));
  const void *z = g->d_zc;
  if (L->prec != HX_F64) {
    HX_CALL(hx_array_convert(L->b, L->n, L->prec, t, HX_F64, g->d_zc));
    z = t;
  }
  HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, x, 1.0, z, 1.0));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

/* pmg_cycle.h */
int hx_pmg_coarse_correct(pmg *g, pmg_level *L, const void *r, void *x, void *t) {
  HX_CALL(coarse_in(g, L, r));
  hx_coarse_job job = {.started = 0};
  double tc;
  hx_coarse_job_start(&job, g->coarse, g->h_r, g->h_z, 0);
  HX_CALL(hx_coarse_job_join(&job, HX_SUCCESS, &tc));
  hx_ev_add(&g->ev_coarse, tc, 0.0, 0.0);
  HX_CALL(coarse_out(g, L, x, t));
  return HX_SUCCESS;
}

static int vcycle(pmg *g, int l, const void *b, void *x) {
  pmg_level *L = &g->lv[l];
  const int last = l == g->nl - 1;
  const int pre = g->o.sides != HX_PMG_SIDES_POST, post = g->o.sides != HX_PMG_SIDES_PRE;
  if (pre) {
    HX_CALL(smooth(L, b, x, 1));
  } else if (!last || g->coarse) {
    /* post-smoothing only: the coarse correction of b itself (r = b) */
    HX_CALL(hx_mem_zero(L->b, x, hx_precision_size(L->prec) * (size_t)L->n));
  }
  if (!last || g->coarse) {
    /* r = b - A x (b itself when x is still zero) */
    if (pre) {
      HX_CALL(hx_op_apply_p(L->opc, x, L->r));
      HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, L->r, 1.0, b, -1.0));
    } else {
      HX_CALL(hx_array_copy_p(L->b, L->prec, L->n, L->r, b));
    }
    if (last) {
      HX_CALL(hx_pmg_coarse_correct(g, L, L->r, x, L->t));
    } else {
      pmg_level *C = &g->lv[l + 1];
      hx_ev ev = hx_ev_begin(&L->ev_transfer);
      HX_CALL(hx_disc_interpolate_transpose_p(C->d, L->d, L->prec, L->r, C->bv));
      hx_ev_end(&ev, 0.0, 0.0);
      HX_CALL(vcycle(g, l + 1, C->bv, C->x));
      ev = hx_ev_begin(&L->ev_transfer);
      HX_CALL(hx_disc_interpolate_p(C->d, L->d, L->prec, C->x, L->t));
      HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, x, 1.0, L->t, 1.0));
      hx_ev_end(&ev, 0.0, 0.0);
    }
  }
  if (post) HX_CALL(smooth(L, b, x, !pre && last && !g->coarse));
  return HX_SUCCESS;
}

static int additive(pmg *g, const void *b, void *x) {
  const int nl = g->nl;
  /* restrict the residual down every level */
  const void *bl[HX_PMG_MAX_LEVELS];
  void *xl[HX_PMG_MAX_LEVELS];
  bl[0] = b, xl[0] = x;
  for (int l = 1; l < nl; l++) {
    hx_ev ev = hx_ev_begin(&g->lv[l - 1].ev_transfer);
    HX_CALL(hx_disc_interpolate_transpose_p(g->lv[l].d, g->lv[l - 1].d, g->prec, bl[l - 1], g->lv[l].bv));
    hx_ev_end(&ev, 0.0, 0.0);
    bl[l] = g->lv[l].bv, xl[l] = g->lv[l].x;
  }
  pmg_level *C = &g->lv[nl - 1];
  hx_coarse_job job = {.started = 0};
  if (g->coarse) {
    HX_CALL(coarse_in(g, C, bl[nl - 1]));
    hx_coarse_job_start(&job, g->coarse, g->h_r, g->h_z, g->overlap);
  }
  int err = HX_SUCCESS;
  for (int l = 0; l < nl && !err; l++) err = smooth(&g->lv[l], bl[l], xl[l], 1);
  if (g->coarse) {
    double t;
    HX_CALL(hx_coarse_job_join(&job, err, &t));
    hx_ev_add(&g->ev_coarse, t, 0.0, 0.0);
    HX_CALL(coarse_out(g, C, xl[nl - 1], C->t));
  }
  HX_CALL(err);
  /* sum the corrections upwards */
  for (int l = nl - 2; l >= 0; l--) {
    pmg_level *L = &g->lv[l];
    hx_ev ev = hx_ev_begin(&L->ev_transfer);
    HX_CALL(hx_disc_interpolate_p(g->lv[l + 1].d, L->d, g->prec, xl[l + 1], L->t));
    HX_CALL(hx_array_axpby_p(L->b, g->prec, L->n, xl[l], 1.0, L->t, 1.0));
    hx_ev_end(&ev, 0.0, 0.0);
  }
  return HX_SUCCESS;
}

/* d_z = M^{-1} d_r; below FP64, r is rounded on entry (level 0's bv), the
 * cycle runs on the residual equation from x = 0 and the correction is
 * widened (exactly) on exit */
int hx_pmg_apply(void *ctx, const double *d_r, double *d_z) {
  pmg *g = (pmg *)ctx;
  pmg_level *L = &g->lv[0];
  hx_ev ev = hx_ev_begin(&g->ev_cycle);
  const void *b = d_r;
  void *x = d_z;
  if (g->prec != HX_F64) {
    HX_CALL(hx_array_convert(L->b, L->n, g->prec, L->bv, HX_F64, d_r));
    b = L->bv, x = L->x;
  }
  if (g->o.cycle == HX_PMG_ADDITIVE)
    HX_CALL(additive(g, b, x));
  else
    HX_CALL(vcycle(g, 0, b, x));
  if (g->prec != HX_F64) {
    HX_CALL(hx_mem_zero(L->b, d_z, sizeof(double) * (size_t)L->n));
    HX_CALL(hx_array_axpy_f32_to_f64(L->b, L->n, d_z, 1.0, (const float *)L->x));
  }
  HX_CALL(hx_backend_sync(g->b));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ view, stats */
static void smoother_name(hx_smooth_inner inner, hx_cheb_kind kind, int degree, char *buf, size_t len) {
  if (kind == HX_CHEB_NONE)
    snprintf(buf, len, "%s x%d", hx_smoothers[inner]->name, degree);
  else
    snprintf(buf, len, "cheby-%s %s degree %d", hx_smoothers[inner]->name, kind_names[kind], degree);
}

/* the smoothers of the options: the fine level's, and below it what differs */
static void smoothers_text(const hx_pmg_opts *o, char *buf, size_t len) {
  char sm[64], lo[64];
  smoother_name(o->inner, o->kind, o->degree, sm, sizeof sm);
  const int below = o->inner_below >= 0 || o->degree_below > 0;
  if (below)
    smoother_name(o->inner_below >= 0 ? (hx_smooth_inner)o->inner_below : o->inner,
                  o->inner_below >= 0 ? o->kind_below : o->kind,
                  o->degree_below > 0 ? o->degree_below : o->degree, lo, sizeof lo);
  snprintf(buf, len, "%s%s%s%s", sm, below ? ", below: " : "", below ? lo : "",
           o->cycle == HX_PMG_ADDITIVE || o->sides == HX_PMG_SIDES_BOTH ? ""
           : o->sides == HX_PMG_SIDES_PRE                               ? ", pre only"
                                                                        : ", post only");
}

void hx_pmg_describe(void *ctx, char *buf, size_t len) {
  pmg *g = (pmg *)ctx;
  char lv[96] = "";
  for (int l = 0; l < g->o.nlevels; l++) {
    const size_t off = strlen(lv);
    snprintf(lv + off, sizeof lv - off, "%s%d", l ? "-" : "", g->o.levels[l]);
  }
  char sm[160];
  smoothers_text(&g->o, sm, sizeof sm);
  snprintf(
      buf, len, "pmg(levels %s, %s, smoother %s %s, coarse %s%s)", lv,
      g->o.cycle == HX_PMG_ADDITIVE ? "additive" : "multiplicative", sm, hx_precision_name(g->o.prec),
      g->o.coarse ? (g->o.coarse_opts.op == HX_COARSE_GALERKIN ? "q1 galerkin boomeramg" : "q1 fem boomeramg")
                  : "none",
      g->o.cycle == HX_PMG_ADDITIVE && g->o.coarse ? (g->overlap ? ", overlapped" : ", sequential") : "");
}

void hx_pmg_get_stats(hx_pc pc, hx_pmg_stats *s) {
  memset(s, 0, sizeof *s);
  if (!pc || strcmp(hx_pc_type(pc), "pmg")) return;
  pmg *g = (pmg *)hx_pc_context(pc);
  const long n = g->ev_cycle.count; /* the applies */
  s->applies = n;
  s->nlevels = g->nl;
  s->additive = g->o.cycle == HX_PMG_ADDITIVE;
  s->overlap = g->overlap;
  s->coarse = g->coarse != NULL;
  double work = 0.0;
  for (int l = 0; l < g->nl && l < HX_PMG_STATS_LEVELS; l++) {
    const pmg_level *L = &g->lv[l];
    s->order[l] = L->order;
    s->t_setup[l] = L->ev_setup.seconds;
    s->rho[l] = L->cheb.rho;
    s->t_smooth[l] = hx_ev_per(&L->ev_smooth, n);
    s->t_transfer[l] = hx_ev_per(&L->ev_transfer, n);
    work += s->t_smooth[l] + s->t_transfer[l];
  }
  s->t_coarse = hx_ev_per(&g->ev_coarse, n);
  s->t_coarse_copy = hx_ev_per(&g->ev_copy, n);
  s->t_coarse_setup = g->ev_coarse_setup.seconds;
  s->t_total = hx_ev_per(&g->ev_cycle, n);
  const double m = work > s->t_coarse ? work : s->t_coarse;
  s->overlap_efficiency = m > 0 ? s->t_total / m : 0.0;
  if (g->coarse) {
    hx_coarse_stats cs;
    hx_coarse_get_stats(g->coarse, &cs);
    s->coarse_rows = cs.rows_global, s->amg_levels = cs.amg_levels;
  }
}

/* the report tree's pmg node (hx_pc_ops.report): per level its order,
 * global DOFs, smoother, eigenvalue estimate, setup and per-cycle times;
 * the Q1 coarse level */
int hx_pmg_report(void *ctx, hx_opt *node) {
  pmg *g = (pmg *)ctx;
  const long n = g->ev_cycle.count; /* the applies */
  char sm[64];
  hx_opt *levels, *m;
  HX_CALL(hx_pc_report_text(node, "precision", hx_precision_name(g->o.prec)));
  HX_CALL(hx_pc_report_text(node, "cycle", g->o.cycle == HX_PMG_ADDITIVE ? "additive" : "multiplicative"));
  if (g->o.cycle == HX_PMG_MULTIPLICATIVE)
    HX_CALL(hx_pc_report_text(node, "sides",
                              g->o.sides == HX_PMG_SIDES_BOTH  ? "both"
                              : g->o.sides == HX_PMG_SIDES_PRE ? "pre"
                                                               : "post"));
  HX_CALL(hx_pc_report_list(node, "levels", &levels));
  for (int l = 0; l < g->nl; l++) {
    const pmg_level *L = &g->lv[l];
    smoother_name(L->inner, L->cheb.kind, L->cheb.degree, sm, sizeof sm);
    HX_CALL(hx_pc_report_map(levels, NULL, &m));
    HX_CALL(hx_pc_report_int(m, "order", L->order));
    HX_CALL(hx_pc_report_int(m, "dofs", hx_disc_num_dofs(L->d)));
    HX_CALL(hx_pc_report_text(m, "smoother", sm));
    HX_CALL(hx_pc_report_real(m, "eig_estimate", L->est));
    HX_CALL(hx_pc_report_real(m, "rho", L->cheb.rho));
    HX_CALL(hx_pc_report_real(m, "setup_s", L->ev_setup.seconds));
    HX_CALL(hx_pc_report_real(m, "smooth_s", hx_ev_per(&L->ev_smooth, n)));
    HX_CALL(hx_pc_report_real(m, "transfer_s", hx_ev_per(&L->ev_transfer, n)));
  }
  if (g->coarse) {
    HX_CALL(hx_coarse_report(g->coarse, g->o.coarse_opts.op, node, &m));
    HX_CALL(hx_pc_report_real(m, "setup_s", g->ev_coarse_setup.seconds));
    HX_CALL(hx_pc_report_real(m, "apply_s", hx_ev_per(&g->ev_coarse, n)));
    HX_CALL(hx_pc_report_real(m, "copy_s", hx_ev_per(&g->ev_copy, n)));
    if (g->o.cycle == HX_PMG_ADDITIVE)
      HX_CALL(hx_pc_report_text(m, "overlap", g->overlap ? "true" : "false"));
  }
  HX_CALL(hx_pc_report_real(node, "cycle_s", hx_ev_per(&g->ev_cycle, n)));
  return HX_SUCCESS;
}

static int pmg_destroy_ctx(void *ctx) { return hx_pmg_destroy(ctx); }

/* a pmg context on d (referenced) with options o, levels checked, not set up */
int hx_pmg_new(hx_disc d, const hx_pmg_opts *o, pmg **out) {
  *out = NULL;
  pmg *g;
  HX_CALL(HX_ALLOC(&g, 1));
  g->d = d;
  g->b = hx_disc_backend(d);
  g->o = *o;
  g->prec = g->req = o->prec;
  const int p = hx_disc_order(d);
  if (g->o.nlevels == 0) g->o.nlevels = hx_pmg_default_levels(p, g->o.levels);
  int err = HX_SUCCESS;
  const int n = g->o.nlevels;
  if (n < 1 || n > HX_PMG_MAX_LEVELS || g->o.levels[0] != p || g->o.levels[n - 1] != 1)
    err = HX_ERROR(HX_ERR_INPUT, "pmg: levels must run from the order p = %d down to 1 (%d levels given)", p,
                   n);
  for (int l = 1; l < n && !err; l++)
    if (g->o.levels[l] >= g->o.levels[l - 1])
      err = HX_ERROR(HX_ERR_INPUT, "pmg: levels must decrease (%d after %d)", g->o.levels[l],
                     g->o.levels[l - 1]);
  if (err) {
    free(g);
    HX_CALL(err);
  }
  /* the disc levels: every order but the final 1 (the Q1 coarse level);
   * with p = 1 the single level is order 1 itself */
  g->nl = n > 1 ? n - 1 : 1;
  if ((err = hx_disc_reference(d))) {
    free(g);
    HX_CALL(err);
  }
  *out = g;
  return HX_SUCCESS;
}

int hx_pc_create_pmg(hx_disc d, const hx_pmg_opts *o, hx_pc *pc) {
  *pc = NULL;
  pmg *g;
  HX_CALL(hx_pmg_new(d, o, &g));
  /* passes per apply: the fine level's smoothing dominates, two smoothings
   * of `degree` steps, each an operator apply, an inner apply and ~6 vector passes */
  const hx_pc_ops ops = {
      .type = "pmg",
      .setup = hx_pmg_setup,
      .apply = hx_pmg_apply,
      .apply_many = hx_pmg_apply_many,
      .describe = hx_pmg_describe,
      .report = hx_pmg_report,
      .destroy = pmg_destroy_ctx,
      .set_shift = hx_pmg_set_shift,
      .passes = (o->sides == HX_PMG_SIDES_BOTH ? 2 : 1) * o->degree * 6,
      .nonsymmetric = !hx_smoothers[o->inner]->symmetric ||
                      (o->inner_below >= 0 && !hx_smoothers[o->inner_below]->symmetric) ||
                      (o->cycle == HX_PMG_MULTIPLICATIVE && o->sides != HX_PMG_SIDES_BOTH)};
  HX_CALL(hx_pc_create_shell(hx_disc_op(d), &ops, g, 0, NULL, pc));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- type pmg */
/* smoother.type: the inner preconditioner S (smoother_types.h), plain, then
 * in a Chebyshev polynomial */
#define HX_SMOOTHER(ID_, id_) #id_,
#define HX_SMOOTHER_CHEBY(ID_, id_) "cheby-" #id_,
static const char *const smoother_types[] = {
#include "smoother_types.h"
#undef HX_SMOOTHER
#define HX_SMOOTHER HX_SMOOTHER_CHEBY
#include "smoother_types.h"
};
#undef HX_SMOOTHER
/* smoother.type_below: "same" (as the fine level), then smoother_types */
#define HX_SMOOTHER(ID_, id_) #id_,
static const char *const smoother_types_below[] = {
    "same",
#include "smoother_types.h"
#undef HX_SMOOTHER
#define HX_SMOOTHER HX_SMOOTHER_CHEBY
#include "smoother_types.h"
};
#undef HX_SMOOTHER
#undef HX_SMOOTHER_CHEBY
/* smoother_types[t]: its S, and plain or Chebyshev */
static hx_smooth_inner smoother_inner(int t) { return (hx_smooth_inner)(t % HX_SMOOTH_COUNT); }
static int smoother_cheby(int t) { return t >= HX_SMOOTH_COUNT; }
static const char *const sides_names[] = {"both", "pre", "post"};          /* hx_pmg_sides */
static const char *const cheb_kinds[] = {"fourth", "opt-fourth", "first"}; /* hx_cheb_kind - 1 */
static const char *const cycle_names[] = {"multiplicative", "additive"};   /* hx_pmg_cycle */
_Static_assert(sizeof(hx_precision) == sizeof(int) && sizeof(hx_pmg_cycle) == sizeof(int) &&
                   sizeof(hx_pmg_sides) == sizeof(int),
               "option enums are int-sized");

/* the smoother's type and kind as named (hx_pmg_opts holds them as inner + kind) */
typedef struct {
  hx_pmg_opts g;
  hx_pc_coarse_vals c;
  int sm_type, sm_kind;
  int sm_type_below; /* 0: same, else smoother_types index + 1 */
} pmg_vals;

#define AT(f) offsetof(pmg_vals, f)
static const hx_opt_key smoother_rows[] = {
    HX_PC_ENUM("type", AT(sm_type), smoother_types, NULL,
               "inner preconditioner S, plain or in a Chebyshev polynomial"),
    HX_PC_INT("degree", AT(g.degree), 1, HX_CHEB_DEGREE_MAX, "polynomial degree (opt-fourth: at most 7)"),
    HX_PC_ENUM("kind", AT(sm_kind), cheb_kinds, NULL, "Chebyshev kind"),
    HX_PC_DBL("lower", AT(g.lower), 1e-6, 0.999, 0, "1st kind: lambda_min / rho"),
    HX_PC_ENUM("type_below", AT(sm_type_below), smoother_types_below, NULL,
               "the levels below the fine one: same, or their own smoother type"),
    HX_PC_INT("degree_below", AT(g.degree_below), 0, HX_CHEB_DEGREE_MAX,
              "polynomial degree of the levels below the fine one (0: degree)"),
    HX_PC_INT("eig_steps", AT(g.eig_steps), 1, 60, "Lanczos steps of the lambda_max(S A) estimate"),
    HX_PC_DBL("eig_safety", AT(g.eig_safety), 1.0, 10.0, 0, "rho = eig_safety x the estimate"),
};
static const hx_opt_group smoother_group = {"preconditioner.smoother", "type: pmg", smoother_rows,
                                            HX_NELEM(smoother_rows)};
static const hx_opt_key pmg_rows[] = {
    HX_PC_TYPE_KEY,
    HX_PC_LEVELS_KEY("the orders of the levels, e.g. [7, 3, 1]"),
    HX_PC_ENUM("cycle", AT(g.cycle), cycle_names, NULL, "V-cycle, or every level's correction summed"),
    HX_PC_ENUM(
        "sides", AT(g.sides), sides_names, NULL,
        "V-cycle: smooth down and up (symmetric), or down (pre) or up (post) only (needs solver.type fcg)"),
    {.key = "smoother",
     .type = HX_OT_GROUP,
     .offset = HX_OPT_NOWHERE,
     .sub = &smoother_group,
     .help = "the smoother of every level"},
    HX_PC_COARSE_KEY("the Q1 coarse level (BoomerAMG)"),
    {.key = "overlap",
     .type = HX_OT_BOOL,
     .offset = AT(g.overlap),
     .help = "additive cycle: BoomerAMG in a host thread while the levels smooth"},
    HX_PC_PREC_KEY(AT(g.prec)),
};
static const hx_opt_group pmg_group = {"preconditioner", "type: pmg", pmg_rows, HX_NELEM(pmg_rows)};

static void pmg_defaults(void *vals) {
  pmg_vals *v = vals;
  hx_pmg_opts_default(&v->g);
  v->c = (hx_pc_coarse_vals){.solver = v->g.coarse, .co = v->g.coarse_opts};
  v->sm_type_below = 0;
  v->sm_type = (int)v->g.inner + (v->g.kind == HX_CHEB_NONE ? 0 : HX_SMOOTH_COUNT);
  v->sm_kind = v->g.kind == HX_CHEB_NONE ? 1 /* opt-fourth */ : (int)v->g.kind - 1;
}

/* preconditioner.levels: auto (nlevels 0), a list, or (from --set
 * preconditioner.levels=[7,3,1]) a scalar "[7,3,1]" */
int hx_pc_levels_read(const hx_opt *o, hx_pmg_opts *g) {
  const hx_opt *lv = hx_opt_get(o, "levels");
  if (!lv || (lv->kind == HX_OPT_SCALAR && lv->value && !strcmp(lv->value, "auto"))) return HX_SUCCESS;
  const char *txt[HX_PMG_MAX_LEVELS + 1];
  const hx_opt *at[HX_PMG_MAX_LEVELS + 1];
  char flat[256] = "";
  int n = 0;
  if (lv->kind == HX_OPT_LIST) {
    for (int i = 0; i < lv->n && n <= HX_PMG_MAX_LEVELS; i++, n++)
      txt[n] = lv->items[i]->kind == HX_OPT_SCALAR ? lv->items[i]->value : NULL, at[n] = lv->items[i];
  } else if (lv->kind == HX_OPT_SCALAR && lv->value && lv->value[0] == '[') {
    snprintf(flat, sizeof flat, "%s", lv->value + 1);
    char *close = strchr(flat, ']'), *save = NULL;
    if (close) *close = '\0';
    for (char *tok = strtok_r(flat, ", ", &save); tok && n <= HX_PMG_MAX_LEVELS;
         tok = strtok_r(NULL, ", ", &save))
      txt[n] = tok, at[n++] = lv;
  }
  if (n < 1 || n > HX_PMG_MAX_LEVELS)
    return hx_opt_error(lv, "preconditioner.levels: expected auto or a list of 1..%d orders, e.g. [7, 3, 1]",
                        HX_PMG_MAX_LEVELS);
  for (int i = 0; i < n; i++) {
    char *end = NULL;
    const long q = txt[i] ? strtol(txt[i], &end, 10) : -1;
    if (!end || *end || q < HX_ORDER_MIN || q > HX_ORDER_MAX)
      return hx_opt_error(at[i], "preconditioner.levels: '%s' is not an order in %d..%d",
                          txt[i] ? txt[i] : "(not a scalar)", HX_ORDER_MIN, HX_ORDER_MAX);
    if (i > 0 && q >= g->levels[i - 1])
      return hx_opt_error(at[i], "preconditioner.levels: the orders must decrease (%ld after %d)", q,
                          g->levels[i - 1]);
    g->levels[i] = (int)q;
  }
  if (g->levels[n - 1] != 1)
    return hx_opt_error(lv, "preconditioner.levels: the last level must be order 1 (the Q1 coarse level)");
  g->nlevels = n;
  return HX_SUCCESS;
}

/* degree of the smoother of kind k (named by key in sm) within what opt-fourth tabulates */
static int opt_degree_check(const hx_opt *sm, const char *key, hx_cheb_kind k, int degree) {
  if (k != HX_CHEB_OPT_FOURTH || degree <= HX_CHEB_OPT_DEGREE_MAX) return HX_SUCCESS;
  return hx_opt_error(hx_opt_get(sm, key) ? hx_opt_get(sm, key) : sm,
                      "%s.%s: %d; the optimised 4th-kind weights are tabulated for degrees 1..%d (use "
                      "kind: fourth or first for higher degrees)",
                      smoother_group.path, key, degree, HX_CHEB_OPT_DEGREE_MAX);
}

static int pmg_read(const hx_opt *o, void *vals) {
  pmg_vals *v = vals;
  hx_pmg_opts *pg = &v->g;
  HX_CALL(hx_pc_levels_read(o, pg));
  const hx_opt *sm = hx_opt_get(o, "smoother");
  HX_CALL(hx_opt_read_group(sm, &smoother_group, v));
  HX_CALL(hx_pc_coarse_read(hx_opt_get(o, "coarse"), &v->c));
  pg->coarse = v->c.solver, pg->coarse_opts = v->c.co;
  pg->inner = smoother_inner(v->sm_type);
  pg->kind = smoother_cheby(v->sm_type) ? (hx_cheb_kind)(v->sm_kind + 1) : HX_CHEB_NONE;
  HX_CALL(opt_degree_check(sm, "degree", pg->kind, pg->degree));
  const int below = v->sm_type_below - 1; /* -1: same */
  pg->inner_below = below >= 0 ? (int)smoother_inner(below) : -1;
  pg->kind_below = below < 0               ? pg->kind
                   : smoother_cheby(below) ? (hx_cheb_kind)(v->sm_kind + 1)
                                           : HX_CHEB_NONE;
  HX_CALL(opt_degree_check(sm, "degree_below", pg->kind_below,
                           pg->degree_below > 0 ? pg->degree_below : pg->degree));
  if (pg->cycle == HX_PMG_ADDITIVE && pg->sides != HX_PMG_SIDES_BOTH)
    return hx_opt_error(
        hx_opt_get(o, "sides"),
        "preconditioner.sides: %s applies to the multiplicative cycle (V-cycle); the additive "
        "cycle smooths each level once; remove the key or use cycle: multiplicative",
        sides_names[pg->sides]);
  return HX_SUCCESS;
}

static int pmg_write(hx_opt *o, const void *vals) {
  const pmg_vals *v = vals;
  HX_CALL(hx_opt_write_group(o, &pmg_group, v));
  if (v->g.nlevels == 0) HX_CALL(hx_opt_set(o, "levels", "auto"));
  hx_opt *sm, *c;
  HX_CALL(hx_opt_submap(o, "smoother", &sm));
  HX_CALL(hx_opt_write_group(sm, &smoother_group, v));
  HX_CALL(hx_opt_submap(o, "coarse", &c));
  HX_CALL(hx_opt_write_group(c, &hx_pc_coarse_group, &v->c));
  return HX_SUCCESS;
}

/* Bytes per GLL node that pmg adds to a Jacobi-PCG solve (HX_MEM_RUN_NODE
 * in hx_core.h), lower bounds (docs/case-format.md, "Memory"), per node of
 * each level at its order q, weighted by its share ((q+1)/(p+1))^3 of the
 * fine nodes: the smoother (its type's mem_per_node, smoother.c), the
 * level's discretisation and vectors below the fine one, the Q1 level
 * (BoomerAMG). Fitted to the peak memory of box and Kershaw cases (CPU,
 * FP32, p = 3, 5, 7, cheby-asm and cheby-jacobi, 2 ranks of 0.4-2M nodes,
 * and a box of 38M nodes per rank): within 10 % at the small sizes, 16 %
 * over at the large one. */
#define PC_MEM_PMG_LEVEL_NODE 15.8
#define PC_MEM_PMG_Q1_NODE 15.8

double hx_pmg_mem_per_node(const hx_pmg_opts *opts, int p, int trial) {
  hx_pmg_opts g = *opts;
  double bytes = 0.0;
  /* with the smoother trial both candidates exist at once (Jacobi, then Schwarz) */
  for (int k = 0; k < (trial ? 2 : 1); k++) {
    if (trial) g.inner = k ? HX_SMOOTH_ASM : HX_SMOOTH_JACOBI, g.inner_below = -1;
    int levels[HX_PMG_MAX_LEVELS], n = g.nlevels;
    if (n)
      memcpy(levels, g.levels, sizeof(int) * (size_t)n);
    else
      n = hx_pmg_default_levels(p, levels);
    const double fine = (p + 1.0) * (p + 1.0) * (p + 1.0);
    for (int l = 0; l < n; l++) {
      const double q = levels[l], share = (q + 1) * (q + 1) * (q + 1) / fine;
      double node = l > 0 ? PC_MEM_PMG_LEVEL_NODE : 0.0;
      if (l == n - 1 && g.coarse) /* the Q1 level: BoomerAMG, not smoothed */
        node = PC_MEM_PMG_Q1_NODE;
      else
        node +=
            hx_smoothers[l > 0 && g.inner_below >= 0 ? g.inner_below : (int)g.inner]->mem_per_node(levels[l]);
      bytes += node * share;
    }
  }
  return bytes;
}

static double pmg_mem_per_node(const void *vals, int p) {
  return hx_pmg_mem_per_node(&((const pmg_vals *)vals)->g, p, 0);
}

int hx_pmg_known_levels(const hx_opt *o, const hx_pmg_opts *g, int order, int *levels, int *n) {
  *n = 0;
  if (g->nlevels == 0) { /* auto */
    levels[(*n)++] = order;
    if (order > 1) levels[(*n)++] = 1;
    return HX_SUCCESS;
  }
  if (g->levels[0] != order) {
    /* the setup refuses the mismatch too, but without a position */
    const hx_opt *lv = hx_opt_get(o, "levels");
    return hx_opt_error(
        lv && lv->kind == HX_OPT_LIST && lv->n > 0 ? lv->items[0] : lv,
        "preconditioner.levels: the first level is order %d but the case's order is %d; start "
        "the list at the order (e.g. [%d, ..., 1]) or use levels: auto",
        g->levels[0], order, order);
  }
  for (int i = 0; i < g->nlevels; i++) levels[i] = g->levels[i];
  *n = g->nlevels;
  return HX_SUCCESS;
}

static int pmg_levels(const hx_opt *o, const void *vals, int order, int *levels, int *n) {
  HX_CALL(hx_pmg_known_levels(o, &((const pmg_vals *)vals)->g, order, levels, n));
  return HX_SUCCESS;
}

/* a restricted Schwarz smoother, or smoothing on one side of the V-cycle,
 * is not symmetric */
static int pmg_check_solver(const hx_opt *o, const void *vals, const char *solver) {
  const pmg_vals *v = vals;
  const hx_pmg_opts *g = &v->g;
  const hx_opt *sm = hx_opt_get(o, "smoother");
  if (g->cycle == HX_PMG_MULTIPLICATIVE && g->sides != HX_PMG_SIDES_BOTH) {
    const hx_opt *sd = hx_opt_get(o, "sides");
    return hx_opt_error(
        sd ? sd : o,
        "preconditioner.sides: %s (smoothing on one side of the V-cycle only) is not symmetric, "
        "and solver.type %s needs a symmetric preconditioner; use solver.type: fcg (flexible CG) "
        "or sides: both",
        sides_names[g->sides], solver);
  }
  const hx_smoother_class *in = hx_smoothers[g->inner];
  const hx_smoother_class *below = g->inner_below >= 0 ? hx_smoothers[g->inner_below] : in;
  const int bad_below = !below->symmetric && in->symmetric;
  if (in->symmetric && !bad_below) return HX_SUCCESS;
  /* the node that chose the smoother (the defaults are symmetric) */
  const char *key = bad_below ? "type_below" : "type";
  const hx_smoother_class *bad = bad_below ? below : in;
  const hx_opt *t = sm ? hx_opt_get(sm, key) : NULL;
  return hx_opt_error(t ? t : o,
                      "preconditioner.smoother.%s: %s (%s) is not symmetric, and solver.type %s needs a symmetric "
                      "preconditioner; use solver.type: fcg (flexible CG) or a symmetric smoother (asm, cheby-asm, "
                      "jacobi, cheby-jacobi)",
                      key, bad_below ? smoother_types_below[v->sm_type_below] : smoother_types[v->sm_type],
                      bad->what ? bad->what : bad->name, solver);
}

static int pmg_create(hx_disc d, const void *vals, hx_pc *pc) {
  HX_CALL(hx_pc_create_pmg(d, &((const pmg_vals *)vals)->g, pc));
  return HX_SUCCESS;
}

const hx_pc_class hx_pc_type_pmg = {.name = "pmg",
                                    .group = &pmg_group,
                                    .sub = {&hx_pc_coarse_group, &smoother_group},
                                    .sub_at = {AT(c), 0},
                                    .size = sizeof(pmg_vals),
                                    .defaults = pmg_defaults,
                                    .read = pmg_read,
                                    .write = pmg_write,
                                    .mem_per_node = pmg_mem_per_node,
                                    .levels = pmg_levels,
                                    .check_solver = pmg_check_solver,
                                    .create = pmg_create};
#undef AT
