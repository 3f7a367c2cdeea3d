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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "precond_impl.h"

typedef struct {
  hx_disc d;
  hx_op op;  /* the FP64 operator (Jacobi's diagonal) */
  hx_op opc; /* the cycle's operator, in prec (op itself for FP64; owned by the disc) */
  hx_backend b;
  int64_t n, nown;
  int order;
  hx_precision prec; /* of the cycle on this level: vectors, opc, smoother */
  hx_pc jac;  /* inner S: Jacobi (in prec) */
  hx_fdm fdm; /* or Schwarz */
  hx_cheb cheb;
  double est;                /* eigenvalue estimate (before the safety factor) */
  void *bv, *x, *r, *dd, *t; /* rhs, correction, work (in prec) */
  double t_setup, t_smooth, t_transfer;
} pmg_level;

typedef struct {
  hx_disc d;
  hx_backend b;
  hx_pmg_opts o;
  hx_precision prec; /* of the cycle (preconditioner.precision) */
  int nl;
  pmg_level lv[HX_PMG_MAX_LEVELS];
  hx_coarse coarse;
  double *h_r, *h_z, *d_zc;
  int overlap;
  double t_coarse_setup;
  int64_t applies;
  double t_coarse, t_copy, t_total;
  hx_error_state thread_st; /* the coarse solve's error, re-raised by the caller */
  double thread_t;
} pmg;

static const char *const inner_names[] = {"jacobi", "asm", "ras"};
static const char *const kind_names[] = {"plain", "fourth", "opt-fourth", "first"};

void hx_pmg_opts_default(hx_pmg_opts *o) {
  memset(o, 0, sizeof *o);
  o->nlevels = 0; /* by order: hx_pmg_default_levels */
  o->cycle = HX_PMG_MULTIPLICATIVE;
  o->inner = HX_SMOOTH_ASM;
  o->kind = HX_CHEB_OPT_FOURTH;
  o->degree = 3;
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
  if (L->fdm) HX_CALL(hx_fdm_apply_p(L->fdm, L->prec, r, z));
  else HX_CALL(hx_pc_apply_p(L->jac, r, z));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ lifecycle */
static int pmg_destroy(void *ctx) {
  pmg *g = (pmg *)ctx;
  int first = HX_SUCCESS, err;
#define KEEP(e) \
  if ((err = (e)) && !first) first = err
  for (int l = 0; l < g->nl; l++) {
    pmg_level *L = &g->lv[l];
    KEEP(hx_pc_destroy(&L->jac));
    KEEP(hx_fdm_destroy(&L->fdm));
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

/* a masked pseudo-random G-vector of level L (the same global values on any
 * rank count: seeded by the global id) in the level's precision (rounded
 * from FP64), for the eigenvalue estimate */
static int random_start(pmg_level *L, void *d_v) {
  hx_gs gs = hx_disc_gs(L->d);
  const int64_t *gid = hx_gs_global_ids(gs);
  double *h;
  HX_CALL(HX_ALLOC(&h, L->n > 0 ? L->n : 1));
  for (int64_t i = 0; i < L->n; i++) {
    uint64_t s = (uint64_t)gid[i] * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    s ^= s >> 31, s *= 0xBF58476D1CE4E5B9ull, s ^= s >> 29;
    h[i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
  if (L->prec == HX_F32) {
    float *h32 = (float *)h; /* in place: entry i is read before float i is written */
    for (int64_t i = 0; i < L->n; i++) h32[i] = (float)h[i];
  }
  int err = hx_mem_to_device(L->b, d_v, h, hx_precision_size(L->prec) * (size_t)L->n);
  if (!err) err = hx_gs_apply_mask_p(gs, L->prec, d_v);
  free(h);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int level_setup(pmg *g, int l) {
  pmg_level *L = &g->lv[l];
  const double t0 = hx_wtime();
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
  HX_CALL(hx_disc_op_prec(L->d, L->prec, &L->opc));
  const size_t bytes = hx_precision_size(L->prec) * (size_t)(L->n > 0 ? L->n : 1);
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->bv));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->x));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->r));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->dd));
  HX_CALL(hx_mem_alloc(L->b, bytes, &L->t));
  if (g->o.inner == HX_SMOOTH_JACOBI) {
    /* the diagonal of the level's FP64 operator (the FP32 one differs from
     * it by rounding only), applied in the level's precision */
    HX_CALL(hx_pc_create_jacobi_prec(L->op, L->prec, &L->jac));
    HX_CALL(hx_pc_setup(L->jac));
  } else {
    const hx_fdm_opts fo = {.mesh = hx_disc_mesh(L->d),
                            .gs = hx_disc_gs(L->d),
                            .p = L->order,
                            .h_kappa = hx_disc_kappa(L->d),
                            .h_kappa_node = hx_disc_kappa_nodes(L->d),
                            .h_lambda = hx_disc_lambda(L->d),
                            .h_dirichlet_face = hx_disc_dirichlet_faces(L->d),
                            .weight = g->o.inner == HX_SMOOTH_RAS ? HX_FDM_WEIGHT_RAS : HX_FDM_WEIGHT_SQRT,
                            .overlap = 1,
                            .prec = L->prec};
    HX_CALL(hx_fdm_create(&fo, &L->fdm));
  }
  /* rho >= lambda_max(S A): a few Lanczos (CG) steps on a random vector, in
   * the cycle's precision with the operator and smoother the cycle applies;
   * the level's vectors serve as work (x holds the start vector) */
  const MPI_Comm comm = hx_gs_comm(hx_disc_gs(L->d));
  const int sym = g->o.inner != HX_SMOOTH_RAS;
  HX_CALL(random_start(L, L->x));
  HX_CALL(hx_eig_max_estimate(L->b, L->prec, L->n, L->nown, comm, lv_A, L, lv_S, L, sym, g->o.eig_steps, L->x,
                              L->bv, L->r, L->dd, L->t, &L->est));
  L->cheb = (hx_cheb){.kind = g->o.kind, .degree = g->o.degree, .rho = g->o.eig_safety * L->est,
                      .lower = g->o.lower, .prec = L->prec};
  double dt = hx_wtime() - t0;
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, hx_gs_comm(hx_disc_gs(L->d))));
  L->t_setup = dt;
  return HX_SUCCESS;
}

static int pmg_setup(void *ctx) {
  pmg *g = (pmg *)ctx;
  for (int l = 0; l < g->nl; l++) HX_CALL(level_setup(g, l));
  if (g->o.coarse) {
    pmg_level *L = &g->lv[g->nl - 1];
    const double t0 = hx_wtime();
    hx_coarse_opts co = g->o.coarse_opts; /* the level's Robin term and null space (coarse.c) */
    co.robin_l = hx_disc_robin_l(L->d), co.nullspace = hx_disc_nullspace(L->d);
    HX_CALL(hx_coarse_create(hx_disc_mesh(L->d), hx_disc_gs(L->d), hx_disc_ax(L->d), hx_disc_kappa(L->d),
                             hx_disc_lambda(L->d), hx_disc_dirichlet_l(L->d), &co, &g->coarse));
    g->t_coarse_setup = hx_wtime() - t0;
    HX_CALL(HX_ALLOC(&g->h_r, L->n > 0 ? L->n : 1));
    HX_CALL(HX_ALLOC(&g->h_z, L->n > 0 ? L->n : 1));
    HX_CALL(hx_mem_alloc(g->b, sizeof(double) * (size_t)(L->n > 0 ? L->n : 1), (void **)&g->d_zc));
    if (g->o.cycle == HX_PMG_ADDITIVE && g->o.overlap) {
      int provided = MPI_THREAD_SINGLE;
      HX_MPI(MPI_Query_thread(&provided));
      g->overlap = provided == MPI_THREAD_MULTIPLE;
      if (!g->overlap && hx_log_rank() == 0)
        hx_warn("preconditioner.overlap: the MPI library does not provide MPI_THREAD_MULTIPLE; the coarse "
                "solve of the additive cycle runs after the smoothing instead of beside it\n");
    }
  }
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ apply */
static int smooth(pmg_level *L, const void *b, void *x, int x_zero) {
  const double t0 = hx_wtime();
  HX_CALL(hx_cheb_apply(L->b, L->n, &L->cheb, lv_A, L, lv_S, L, b, x, x_zero, L->r, L->dd, L->t));
  L->t_smooth += hx_wtime() - t0;
  return HX_SUCCESS;
}

/* h_z = A0^{-1} h_r on the host (the Q1 level); an error is captured for
 * the joining thread (the error state is per thread), which re-raises it */
static void *coarse_thread(void *arg) {
  pmg *g = (pmg *)arg;
#ifdef _OPENMP
  omp_set_num_threads(1); /* the smoothing keeps the cores */
#endif
  const double t0 = hx_wtime();
  const int err = hx_coarse_apply(g->coarse, g->h_r, g->h_z);
  g->thread_st.code = HX_SUCCESS;
  if (err) {
    hx_error_capture(&g->thread_st);
    if (!g->thread_st.code) g->thread_st.code = err;
    hx_error_clear();
  }
  g->thread_t = hx_wtime() - t0;
  return NULL;
}

/* the last level's residual r (in its precision) to the host for the coarse
 * solve, widened (exactly) to FP64 first when it is FP32 */
static int coarse_in(pmg *g, pmg_level *L, const void *r) {
  const double t0 = hx_wtime();
  const double *src = (const double *)r;
  if (L->prec != HX_F64) {
    HX_CALL(hx_array_convert(L->b, L->n, HX_F64, g->d_zc, L->prec, r));
    src = g->d_zc;
  }
  HX_CALL(hx_mem_to_host(L->b, g->h_r, src, sizeof(double) * (size_t)L->n));
  g->t_copy += hx_wtime() - t0;
  return HX_SUCCESS;
}

/* x += the coarse solve's FP64 result (rounded to the level's precision in
 * its work vector t first when that is FP32) */
static int coarse_out(pmg *g, pmg_level *L, void *x) {
  const double t0 = hx_wtime();
  HX_CALL(hx_mem_to_device(L->b, g->d_zc, g->h_z, sizeof(double) * (size_t)L->n));
  const void *z = g->d_zc;
  if (L->prec != HX_F64) {
    HX_CALL(hx_array_convert(L->b, L->n, L->prec, L->t, HX_F64, g->d_zc));
    z = L->t;
  }
  HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, x, 1.0, z, 1.0));
  g->t_copy += hx_wtime() - t0;
  return HX_SUCCESS;
}

/* x += P0 A0^{-1} P0^T r on the last level; r on the backend */
static int coarse_correct(pmg *g, pmg_level *L, const void *r, void *x) {
  HX_CALL(coarse_in(g, L, r));
  coarse_thread(g);
  if (g->thread_st.code) return HX_ERROR_RERAISE(&g->thread_st);
  g->t_coarse += g->thread_t;
  HX_CALL(coarse_out(g, L, x));
  return HX_SUCCESS;
}

static int vcycle(pmg *g, int l, const void *b, void *x) {
  pmg_level *L = &g->lv[l];
  HX_CALL(smooth(L, b, x, 1));
  const int last = l == g->nl - 1;
  if (!last || g->coarse) {
    /* r = b - A x */
    HX_CALL(hx_op_apply_p(L->opc, x, L->r));
    HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, L->r, 1.0, b, -1.0));
    if (last) {
      HX_CALL(coarse_correct(g, L, L->r, x));
    } else {
      pmg_level *C = &g->lv[l + 1];
      double t0 = hx_wtime();
      HX_CALL(hx_disc_interpolate_transpose_p(C->d, L->d, L->prec, L->r, C->bv));
      L->t_transfer += hx_wtime() - t0;
      HX_CALL(vcycle(g, l + 1, C->bv, C->x));
      t0 = hx_wtime();
      HX_CALL(hx_disc_interpolate_p(C->d, L->d, L->prec, C->x, L->t));
      HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, x, 1.0, L->t, 1.0));
      L->t_transfer += hx_wtime() - t0;
    }
  }
  HX_CALL(smooth(L, b, x, 0));
  return HX_SUCCESS;
}

static int additive(pmg *g, const void *b, void *x) {
  const int nl = g->nl;
  /* restrict the residual down every level */
  const void *bl[HX_PMG_MAX_LEVELS];
  void *xl[HX_PMG_MAX_LEVELS];
  bl[0] = b, xl[0] = x;
  for (int l = 1; l < nl; l++) {
    const double t0 = hx_wtime();
    HX_CALL(hx_disc_interpolate_transpose_p(g->lv[l].d, g->lv[l - 1].d, g->prec, bl[l - 1], g->lv[l].bv));
    g->lv[l - 1].t_transfer += hx_wtime() - t0;
    bl[l] = g->lv[l].bv, xl[l] = g->lv[l].x;
  }
  pmg_level *C = &g->lv[nl - 1];
  pthread_t th;
  int started = 0;
  if (g->coarse) {
    HX_CALL(coarse_in(g, C, bl[nl - 1]));
    if (g->overlap) started = pthread_create(&th, NULL, coarse_thread, g) == 0;
  }
  int err = HX_SUCCESS;
  for (int l = 0; l < nl && !err; l++) err = smooth(&g->lv[l], bl[l], xl[l], 1);
  if (g->coarse) {
    if (started) pthread_join(th, NULL);
    else if (!err) coarse_thread(g);
    HX_CALL(err);
    if (g->thread_st.code) return HX_ERROR_RERAISE(&g->thread_st);
    g->t_coarse += g->thread_t;
    HX_CALL(coarse_out(g, C, xl[nl - 1]));
  }
  HX_CALL(err);
  /* sum the corrections upwards */
  for (int l = nl - 2; l >= 0; l--) {
    pmg_level *L = &g->lv[l];
    const double t0 = hx_wtime();
    HX_CALL(hx_disc_interpolate_p(g->lv[l + 1].d, L->d, g->prec, xl[l + 1], L->t));
    HX_CALL(hx_array_axpby_p(L->b, g->prec, L->n, xl[l], 1.0, L->t, 1.0));
    L->t_transfer += hx_wtime() - t0;
  }
  return HX_SUCCESS;
}

/* d_z = M^{-1} d_r; below FP64, r is rounded on entry (level 0's bv), the
 * cycle runs on the residual equation from x = 0 and the correction is
 * widened (exactly) on exit */
static int pmg_apply(void *ctx, const double *d_r, double *d_z) {
  pmg *g = (pmg *)ctx;
  pmg_level *L = &g->lv[0];
  const double t0 = hx_wtime();
  const void *b = d_r;
  void *x = d_z;
  if (g->prec != HX_F64) {
    HX_CALL(hx_array_convert(L->b, L->n, g->prec, L->bv, HX_F64, d_r));
    b = L->bv, x = L->x;
  }
  if (g->o.cycle == HX_PMG_ADDITIVE) HX_CALL(additive(g, b, x));
  else HX_CALL(vcycle(g, 0, b, x));
  if (g->prec != HX_F64) {
    HX_CALL(hx_mem_zero(L->b, d_z, sizeof(double) * (size_t)L->n));
    HX_CALL(hx_array_axpy_f32_to_f64(L->b, L->n, d_z, 1.0, (const float *)L->x));
  }
  HX_CALL(hx_backend_sync(g->b));
  g->applies++;
  g->t_total += hx_wtime() - t0;
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ view, stats */
static void pmg_describe(void *ctx, char *buf, size_t len) {
  pmg *g = (pmg *)ctx;
  char lv[96] = "";
  for (int l = 0; l < g->o.nlevels; l++) {
    const size_t off = strlen(lv);
    snprintf(lv + off, sizeof lv - off, "%s%d", l ? "-" : "", g->o.levels[l]);
  }
  char sm[64];
  if (g->o.kind == HX_CHEB_NONE) snprintf(sm, sizeof sm, "%s x%d", inner_names[g->o.inner], g->o.degree);
  else
    snprintf(sm, sizeof sm, "cheby-%s %s degree %d", inner_names[g->o.inner], kind_names[g->o.kind], g->o.degree);
  snprintf(buf, len, "pmg(levels %s, %s, smoother %s %s, coarse %s%s)", lv,
           g->o.cycle == HX_PMG_ADDITIVE ? "additive" : "multiplicative", sm, hx_precision_name(g->o.prec),
           g->o.coarse ? (g->o.coarse_opts.op == HX_COARSE_GALERKIN ? "q1 galerkin boomeramg" : "q1 fem boomeramg")
                       : "none",
           g->o.cycle == HX_PMG_ADDITIVE && g->o.coarse ? (g->overlap ? ", overlapped" : ", sequential") : "");
}

void hx_pmg_get_stats(hx_pc pc, hx_pmg_stats *s) {
  memset(s, 0, sizeof *s);
  if (!pc || strcmp(hx_pc_type(pc), "pmg")) return;
  pmg *g = (pmg *)hx_pc_context(pc);
  s->applies = g->applies;
  s->nlevels = g->nl;
  s->additive = g->o.cycle == HX_PMG_ADDITIVE;
  s->overlap = g->overlap;
  s->coarse = g->coarse != NULL;
  const double per = g->applies ? 1.0 / (double)g->applies : 0.0;
  double work = 0.0;
  for (int l = 0; l < g->nl && l < HX_PMG_STATS_LEVELS; l++) {
    const pmg_level *L = &g->lv[l];
    s->order[l] = L->order;
    s->t_setup[l] = L->t_setup;
    s->rho[l] = L->cheb.rho;
    s->t_smooth[l] = L->t_smooth * per;
    s->t_transfer[l] = L->t_transfer * per;
    work += s->t_smooth[l] + s->t_transfer[l];
  }
  s->t_coarse = g->t_coarse * per;
  s->t_coarse_copy = g->t_copy * per;
  s->t_coarse_setup = g->t_coarse_setup;
  s->t_total = g->t_total * per;
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
static int pmg_report(void *ctx, hx_opt *node) {
  pmg *g = (pmg *)ctx;
  const double per = g->applies ? 1.0 / (double)g->applies : 0.0;
  char sm[64];
  if (g->o.kind == HX_CHEB_NONE)
    snprintf(sm, sizeof sm, "%s x%d", inner_names[g->o.inner], g->o.degree);
  else
    snprintf(sm, sizeof sm, "cheby-%s %s degree %d", inner_names[g->o.inner], kind_names[g->o.kind],
             g->o.degree);
  hx_opt *levels, *m;
  HX_CALL(hx_pc_report_text(node, "precision", hx_precision_name(g->o.prec)));
  HX_CALL(hx_pc_report_text(node, "cycle", g->o.cycle == HX_PMG_ADDITIVE ? "additive" : "multiplicative"));
  HX_CALL(hx_pc_report_list(node, "levels", &levels));
  for (int l = 0; l < g->nl; l++) {
    const pmg_level *L = &g->lv[l];
    HX_CALL(hx_pc_report_map(levels, NULL, &m));
    HX_CALL(hx_pc_report_int(m, "order", L->order));
    HX_CALL(hx_pc_report_int(m, "dofs", hx_disc_num_dofs(L->d)));
    HX_CALL(hx_pc_report_text(m, "smoother", sm));
    HX_CALL(hx_pc_report_real(m, "eig_estimate", L->est));
    HX_CALL(hx_pc_report_real(m, "rho", L->cheb.rho));
    HX_CALL(hx_pc_report_real(m, "setup_s", L->t_setup));
    HX_CALL(hx_pc_report_real(m, "smooth_s", L->t_smooth * per));
    HX_CALL(hx_pc_report_real(m, "transfer_s", L->t_transfer * per));
  }
  if (g->coarse) {
    HX_CALL(hx_coarse_report(g->coarse, g->o.coarse_opts.op, node, &m));
    HX_CALL(hx_pc_report_real(m, "setup_s", g->t_coarse_setup));
    HX_CALL(hx_pc_report_real(m, "apply_s", g->t_coarse * per));
    HX_CALL(hx_pc_report_real(m, "copy_s", g->t_copy * per));
    if (g->o.cycle == HX_PMG_ADDITIVE)
      HX_CALL(hx_pc_report_text(m, "overlap", g->overlap ? "true" : "false"));
  }
  HX_CALL(hx_pc_report_real(node, "cycle_s", g->t_total * per));
  return HX_SUCCESS;
}

static int pmg_destroy_ctx(void *ctx) { return pmg_destroy(ctx); }

int hx_pc_create_pmg(hx_disc d, const hx_pmg_opts *o, hx_pc *pc) {
  *pc = NULL;
  pmg *g;
  HX_CALL(HX_ALLOC(&g, 1));
  g->d = d;
  g->b = hx_disc_backend(d);
  g->o = *o;
  g->prec = o->prec;
  const int p = hx_disc_order(d);
  if (g->o.nlevels == 0) g->o.nlevels = hx_pmg_default_levels(p, g->o.levels);
  int err = HX_SUCCESS;
  const int n = g->o.nlevels;
  if (n < 1 || n > HX_PMG_MAX_LEVELS || g->o.levels[0] != p || g->o.levels[n - 1] != 1)
    err = HX_ERROR(HX_ERR_INPUT, "pmg: levels must run from the order p = %d down to 1 (%d levels given)", p, n);
  for (int l = 1; l < n && !err; l++)
    if (g->o.levels[l] >= g->o.levels[l - 1])
      err = HX_ERROR(HX_ERR_INPUT, "pmg: levels must decrease (%d after %d)", g->o.levels[l], g->o.levels[l - 1]);
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
  /* passes per apply: the fine level's smoothing dominates, two smoothings
   * of `degree` steps, each an operator apply, an inner apply and ~6 vector passes */
  const hx_pc_ops ops = {.type = "pmg",
                         .setup = pmg_setup,
                         .apply = pmg_apply,
                         .describe = pmg_describe,
                         .report = pmg_report,
                         .destroy = pmg_destroy_ctx,
                         .passes = 2 * o->degree * 6,
                         .nonsymmetric = o->inner == HX_SMOOTH_RAS};
  err = hx_pc_create_shell(hx_disc_op(d), &ops, g, 0, NULL, pc);
  if (err) pmg_destroy(g);
  HX_CALL(err);
  return HX_SUCCESS;
}
