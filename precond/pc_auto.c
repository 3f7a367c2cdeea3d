/* Type auto: Jacobi-PCG first, p-multigrid from the iterate once it pays.
 *
 * The solve starts with the Jacobi preconditioner (no setup to speak of,
 * its fused CG update). After each iteration the Krylov method hands over
 * the CG coefficients (hx_pc_ops.observe); from them the Lanczos
 * tridiagonal T_k of D^{-1} A gives an estimate of its condition number,
 * and the CG bound, or the rate the error has shown (the lesser), gives the
 * Jacobi iterations still needed. pmg's cost is
 * modelled in the same unit, a Jacobi-PCG iteration of this solve: its
 * setup, and its cycles (its iterations per 1e8 reduction, scaled to the
 * reduction still needed). When the Jacobi estimate exceeds pmg's, pmg is
 * built and the solve restarts from the iterate. Everything the decision
 * reads is global (CG coefficients, residual norms), so every rank decides
 * the same at the same iteration without a message, and the same case
 * decides the same on any machine. docs/preconditioner.md "type: auto".
 *
 * The estimate improves as the solve goes on: after k steps the Lanczos
 * extreme eigenvalues lie inside the spectrum (lambda_min over-estimated),
 * so kappa is under-estimated and the Jacobi estimate too low; it is
 * checked again every few iterations (the decision is cheap), so a slowly
 * converging solve still switches, later. A right-hand side that excites
 * few modes (one eigenfunction) keeps the estimate, and the solve, short. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pmg_cycle.h"

void hx_auto_opts_default(hx_auto_opts *o) {
  memset(o, 0, sizeof *o);
  hx_pmg_auto_opts_default(&o->pmg);
  o->start = HX_AUTO_START_MESH;
  o->pmg_order = 6;
  o->mesh_degree = 5;
  o->mesh_degree_below = 5;
  o->trial = 0;
  o->setup_cost = 150.0;
  o->cycle_cost = 17.0;
  o->pmg_iterations = 20.0;
  o->min_iterations = 20;
  o->asm_check = 10;
  o->asm_bias = 1.6;
  o->pmg_setup = 20.0;
  o->pmg_cycle = 5.0;
  o->pmg_gain = 0.65;
  o->smoother_stages = 1;
  o->schwarz_check = 3;
  o->schwarz_setup = 10.0;
  o->schwarz_cycle = 1.5;
  o->schwarz_gain = 3.0;
}

/* eigenvalues of T below x (Sturm count of the LDL^T pivots) */
static int sturm_below(int n, const double *d, const double *e2, double x) {
  int c = 0;
  double q = 1.0;
  for (int j = 0; j < n; j++) {
    q = d[j] - x - (j ? e2[j - 1] / q : 0.0);
    if (q == 0.0) q = -1e-300; /* x is an eigenvalue of the leading block: count it below */
    c += q < 0.0;
  }
  return c;
}

/* the j-th smallest eigenvalue (0-based) of T in [lo, hi] by bisection */
static double sturm_eig(int n, const double *d, const double *e2, int j, double lo, double hi) {
  for (int it = 0; it < 200 && hi - lo > 1e-15 * fabs(hi); it++) {
    const double mid = 0.5 * (lo + hi);
    if (sturm_below(n, d, e2, mid) > j)
      hi = mid;
    else
      lo = mid;
  }
  return 0.5 * (lo + hi);
}

int hx_auto_predict(int n, const double *alpha, const double *beta, double rel, double target,
                    const hx_auto_opts *o, hx_auto_pred *p) {
  memset(p, 0, sizeof *p);
  HX_CHECK(n >= 1 && alpha && beta && o, HX_ERR_ARG, "auto: a prediction needs at least one CG step");
  double *d, *e2;
  HX_CALL(HX_ALLOC(&d, n));
  int err = HX_ALLOC(&e2, n);
  if (err) {
    free(d);
    HX_CALL(err);
  }
  /* T_n of the preconditioned operator from the CG coefficients:
   * T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1}, T_j,j+1 = sqrt(beta_j)/alpha_j */
  double lo = INFINITY, hi = -INFINITY;
  for (int j = 0; j < n && !err; j++) {
    if (!(alpha[j] > 0) || !isfinite(alpha[j]) || !(beta[j] >= 0) || !isfinite(beta[j]))
      err = HX_ERROR(HX_ERR_NUMERIC, "auto: CG step %d has alpha = %g, beta = %g", j + 1, alpha[j], beta[j]);
    d[j] = 1.0 / alpha[j] + (j ? beta[j - 1] / alpha[j - 1] : 0.0);
    if (j + 1 < n) e2[j] = beta[j] / (alpha[j] * alpha[j]);
  }
  for (int j = 0; j < n && !err; j++) { /* Gershgorin */
    const double r = (j ? sqrt(e2[j - 1]) : 0.0) + (j + 1 < n ? sqrt(e2[j]) : 0.0);
    lo = fmin(lo, d[j] - r), hi = fmax(hi, d[j] + r);
  }
  if (!err) {
    lo = fmax(lo, 0.0);
    p->lmax = sturm_eig(n, d, e2, n - 1, lo, hi);
    p->lmin = sturm_eig(n, d, e2, 0, lo, p->lmax);
  }
  free(d), free(e2);
  HX_CALL(err);
  p->kappa = p->lmin > 0 ? p->lmax / p->lmin : INFINITY;
  /* 1. the CG bound: the error shrinks by rho = (sqrt(kappa) - 1) /
   * (sqrt(kappa) + 1) per iteration. It ignores how the right-hand side
   * sits in the spectrum: for a smooth one (the box's eigenfunction) it
   * says 800 iterations where 40 follow. */
  const double drop = rel > target && target > 0 ? log(rel / target) : 0.0;
  const double sk = sqrt(p->kappa);
  p->jacobi_bound = drop > 0 ? (isfinite(sk) ? drop / -log1p(-2.0 / (sk + 1.0)) : INFINITY) : 0.0;
  /* 2. the rate the A-norm error has shown: with rz_i = r_i.z_i, ||x_n -
   * x_j||_A^2 = sum_{i=j}^{n-1} alpha_i rz_i (Hestenes-Stiefel; rz_i / rz_0
   * the product of the betas before i, in logarithms), E_j its root, a
   * lower estimate of the error at j; the mean reduction from E_0 to
   * E_{n/2} extrapolated. On the box it follows the solve within 2-10x
   * after 20 iterations, on Kershaw the CG bound within 1.5x. */
  p->jacobi_rate = p->jacobi_bound;
  if (n >= 4 && drop > 0) {
    double lrz = 0.0, lmax = -INFINITY, e0 = 0.0, eh = 0.0;
    const int h = n / 2;
    for (int i = 0; i < n; i++) { /* the largest log(alpha_i rz_i), for scaling */
      lmax = fmax(lmax, log(alpha[i]) + lrz);
      lrz += log(fmax(beta[i], 1e-300));
    }
    lrz = 0.0;
    for (int i = 0; i < n; i++) {
      const double t = exp(log(alpha[i]) + lrz - lmax);
      e0 += t;
      if (i >= h) eh += t;
      lrz += log(fmax(beta[i], 1e-300));
    }
    const double rate = eh > 0 && e0 > 0 ? 0.5 * log(eh / e0) / (double)h : 0.0; /* log of the mean factor */
    p->jacobi_rate = rate < 0 ? drop / -rate : INFINITY;
  }
  /* the lesser: switching wrongly costs pmg's setup, staying a little
   * longer a few Jacobi iterations (the check repeats) */
  p->jacobi = fmin(p->jacobi_bound, p->jacobi_rate);
  p->pmg = o->setup_cost + o->cycle_cost * o->pmg_iterations * drop / log(1e8);
  return HX_SUCCESS;
}

static const char *const auto_starts[] = {"jacobi", "pmg", "asm", "mesh"}; /* HX_AUTO_START_* */

/* every level of g to its smoother `inner` (set up: its bound est_of[inner]
 * kept); auto's smoother stages and the smoother trial switch with it */
static void pmg_use_inner(pmg *g, hx_smooth_inner inner) {
  g->o.inner = inner;
  for (int l = 0; l < g->nl; l++) {
    pmg_level *L = &g->lv[l];
    L->inner = inner;
    L->est = L->est_of[inner];
    L->cheb.rho = g->o.eig_safety * L->est;
  }
}

/* the Schwarz smoother and its bound added to every level of g (set up with
 * Jacobi's), each level's setup time the max over ranks; g's smoother is
 * Schwarz from here on (collective) */
static int pmg_add_schwarz(pmg *g) {
  for (int l = 0; l < g->nl; l++) {
    hx_ev el = hx_ev_begin(&g->lv[l].ev_setup);
    HX_CALL(hx_pmg_level_smoother(g, l, HX_SMOOTH_ASM));
    hx_ev_end(&el, 0.0, 0.0);
    HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(g->lv[l].d)), &g->lv[l].ev_setup, 1));
  }
  g->o.inner = HX_SMOOTH_ASM;
  return HX_SUCCESS;
}

/* the stages of type auto: Jacobi-PCG, then pmg with Chebyshev-Jacobi
 * smoothing on every level, then (when the model says the Schwarz setup
 * pays) the same levels and coarse level with Chebyshev-Schwarz smoothing;
 * back to Chebyshev-Jacobi when the Schwarz rate disappoints */
enum { AU_JACOBI = 0, AU_ASM = 1, AU_PMGJ = 2, AU_PMGS = 3, AU_STAGES = 4 };
static const char *const au_names[AU_STAGES] = {"jacobi", "asm", "pmg-jacobi", "pmg-asm"};

typedef struct {
  int its;        /* iterations run in it (every solve) */
  int k0;         /* the Krylov run's k at its first iteration in the current run */
  double rel0;    /* rel after that iteration */
  double rate;    /* the residual's mean reduction per iteration (0: not measured) */
  double t_sum;   /* seconds of its timed iterations (this rank: each but the first of a run) */
  int timed;      /* their count */
  double setup_s; /* its setup (the max over ranks; pmg-asm: the Schwarz smoothers only) */
} au_stage;

typedef struct {
  hx_disc d;
  hx_auto_opts o;
  hx_pc jac; /* until the switch */
  hx_pc as;  /* two-level Schwarz (start: asm) until the switch */
  hx_pc mg;  /* pmg (its smoothers switched by the stages), or the smoother trial's pmg */
  int64_t n;
  /* the CG coefficients of the current Krylov run, and its relative residuals */
  double *alpha, *beta, *rel;
  int nk, cap;
  int next_check;
  hx_ev run; /* on ev_jacobi, open from the first step observed */
  int stage, decided; /* AU_*; 1 when no decision is left */
  au_stage st[AU_STAGES];
  double t_last; /* hx_wtime at the last observation (or after a setup inside one) */
  /* what was decided */
  int runs, observed, checks;
  int switched, switch_run, switch_k, switch_iteration;
  int schwarz_iteration, back_iteration; /* the Schwarz smoothers from, and back to Jacobi's (0: never) */
  hx_auto_pred at; /* the prediction at the switch, or the last one */
  /* the Schwarz decision, in pmg-jacobi iterations: the pmg-jacobi iterations still needed, the
   * Schwarz setup + iterations modelled, its iterations per 1e8 modelled; at the check in pmg-asm
   * its iterations still needed at the measured rate and pmg-jacobi's */
  double m_rem, s_model, s_its8, s_rem, m_rem_back;
  /* the asm decision, in asm iterations: asm's iterations still needed, pmg's modelled cost */
  double a_rem, p_model;
  int pmg_iteration; /* asm -> pmg (0: never) */
  /* start: mesh: the fraction of curved (not affine) elements, and the start it chose */
  double curved;
  int mesh_start;
  hx_ev_slot ev_jacobi; /* the Jacobi run up to the switch (switch_k - 1 iterations) */
  hx_ev_slot ev_switch; /* the pmg setup */
} pc_auto;

/* the pmg of the first pmg stage: the configured levels, coarse level and
 * precision, Chebyshev-Jacobi smoothing on every level (the smoother trial
 * instead with trial: true) */
static int auto_pmg_create(pc_auto *a, int stages) {
  if (a->o.trial) {
    HX_CALL(hx_pc_create_pmg_auto(a->d, &a->o.pmg, &a->mg));
  } else {
    hx_pmg_opts o = a->o.pmg.base;
    if (stages) o.inner = HX_SMOOTH_JACOBI, o.inner_below = -1, o.degree_below = 0;
    HX_CALL(hx_pc_create_pmg(a->d, &o, &a->mg));
  }
  HX_CALL(hx_pc_setup(a->mg));
  return HX_SUCCESS;
}

/* the pmg built and set up, timed on ev_switch (the max over ranks); with
 * the smoother stages (stages, no trial) it starts as pmg-jacobi with a
 * decision ahead, else it is the final pmg (collective) */
static int auto_pmg_build(pc_auto *a, int stages) {
  const int staged = stages && !a->o.trial;
  hx_ev ev = hx_ev_begin(&a->ev_switch);
  HX_CALL(auto_pmg_create(a, stages));
  hx_ev_end(&ev, 0.0, 0.0);
  HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(a->d)), &a->ev_switch, 1));
  a->stage = staged ? AU_PMGJ : AU_PMGS, a->decided = !staged;
  a->st[a->stage].setup_s = a->ev_switch.seconds;
  return HX_SUCCESS;
}

/* the Schwarz smoothers added to every level of the stages' pmg (collective) */
static int au_schwarz_setup(pc_auto *a) {
  hx_ev_slot s = {0};
  hx_ev ev = hx_ev_begin(&s);
  HX_CALL(pmg_add_schwarz((pmg *)hx_pc_context(a->mg)));
  hx_ev_end(&ev, 0.0, 0.0);
  HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(a->d)), &s, 1));
  a->st[AU_PMGS].setup_s = s.seconds;
  return HX_SUCCESS;
}

/* start: mesh: pmg at once (the type's smoothers) at orders >= pmg_order on
 * meshes whose elements are mostly curved, else asm (which may still go to
 * pmg after asm_check iterations). Where elements are boxes or
 * parallelepipeds the fast diagonalisation is the exact inverse of each
 * overlapping element's operator and one Schwarz sweep with the Q1 coarse
 * level needs few iterations; on curved elements it is an approximation,
 * and at high order the gap between the order and the Q1 level is wide:
 * there pmg's intermediate level and repeated smoothing pay (measured,
 * docs/preconditioner.md "Which preconditioner"). */
static int auto_mesh_start(pc_auto *a) {
  int32_t na, ns, ng;
  hx_ax_storage_counts(hx_disc_ax(a->d), &na, &ns, &ng);
  double c[2] = {(double)ns + ng, (double)na + ns + ng};
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_DOUBLE, MPI_SUM, hx_gs_comm(hx_disc_gs(a->d))));
  a->curved = c[1] > 0 ? c[0] / c[1] : 0.0;
  const int pmg_now = hx_disc_order(a->d) >= a->o.pmg_order && a->curved > 0.5;
  a->mesh_start = pmg_now ? HX_AUTO_START_PMG : HX_AUTO_START_ASM;
  hx_log(HX_LOG_NORMAL, "preconditioner auto: order %d, %.0f %% of the elements curved: %s\n",
         hx_disc_order(a->d), 100.0 * a->curved,
         pmg_now ? "pmg" : "two-level Schwarz first (pmg if its first iterations say it pays)");
  return HX_SUCCESS;
}

static int auto_setup(void *ctx) {
  pc_auto *a = ctx;
  if (a->o.start == HX_AUTO_START_MESH) {
    HX_CALL(auto_mesh_start(a));
    if (a->mesh_start == HX_AUTO_START_PMG) {
      a->o.pmg.base.degree = a->o.mesh_degree, a->o.pmg.base.degree_below = a->o.mesh_degree_below;
      HX_CALL(auto_pmg_build(a, 0));
      return HX_SUCCESS;
    }
  }
  if (a->o.start == HX_AUTO_START_ASM || a->o.start == HX_AUTO_START_MESH) {
    hx_asm_opts ao;
    hx_asm_opts_default(&ao);
    ao.prec = a->o.pmg.base.prec;
    HX_CALL(hx_pc_create_asm(a->d, &ao, &a->as));
    hx_ev_slot sl = {0};
    hx_ev ev = hx_ev_begin(&sl);
    HX_CALL(hx_pc_setup(a->as));
    hx_ev_end(&ev, 0.0, 0.0);
    HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(a->d)), &sl, 1));
    a->stage = AU_ASM, a->st[AU_ASM].setup_s = sl.seconds;
    return HX_SUCCESS;
  }
  if (a->o.start == HX_AUTO_START_PMG) {
    HX_CALL(auto_pmg_build(a, a->o.smoother_stages));
    return HX_SUCCESS;
  }
  HX_CALL(hx_pc_create_jacobi(hx_disc_op(a->d), &a->jac));
  HX_CALL(hx_pc_setup(a->jac));
  return HX_SUCCESS;
}

/* a new shift (hx_pc_set_shift): forwarded to what is in use (Jacobi
 * before the switch, pmg after it: the choice stays, and the smoother the
 * stages left unused is freed: its bound would be the old shift's; the
 * smoother trial's pmg cannot, its choice might change) */
static int auto_set_shift(void *ctx, double shift) {
  pc_auto *a = ctx;
  HX_CALL(hx_disc_set_shift(a->d, shift));
  if (a->mg && !a->o.trial) {
    pmg *g = (pmg *)hx_pc_context(a->mg);
    for (int l = 0; l < g->nl; l++)
      for (int s = 0; s < HX_SMOOTH_COUNT; s++)
        if (s != (int)g->lv[l].inner) HX_CALL(hx_pc_destroy(&g->lv[l].S[s]));
    a->decided = 1;
  }
  if (a->mg) HX_CALL(hx_pc_set_shift(a->mg, shift));
  if (a->as) HX_CALL(hx_pc_set_shift(a->as, shift));
  if (a->jac) HX_CALL(hx_pc_set_shift(a->jac, shift));
  return HX_SUCCESS;
}

static int auto_apply(void *ctx, const double *d_r, double *d_z) {
  pc_auto *a = ctx;
  HX_CALL(hx_pc_apply(a->mg ? a->mg : a->as ? a->as : a->jac, d_r, d_z));
  return HX_SUCCESS;
}

/* after the switch the fused form is pmg's apply between two vector
 * passes: the Krylov method's restart applies pmg apart (timed as the
 * preconditioner) */
static int auto_cg_update_off(void *ctx) { return ((pc_auto *)ctx)->mg || ((pc_auto *)ctx)->as; }

/* Jacobi's fused update; after the switch the three steps it stands for
 * (for a caller that fused before the switch and does not restart) */
static int auto_cg_update(void *ctx, const hx_pc_cg_step *u) {
  pc_auto *a = ctx;
  if (a->jac) {
    HX_CALL(hx_pc_cg_update(a->jac, u));
    return HX_SUCCESS;
  }
  HX_CALL(hx_array_cg_update_red(u->red, u->slot_rr, a->n, u->nred, u->x, u->r, u->p, u->w, u->alpha));
  HX_CALL(hx_pc_apply(a->mg ? a->mg : a->as, u->r, u->z));
  HX_CALL(hx_array_dot_red(u->red, u->slot_rz, u->nred, u->r, u->z));
  if (u->slot_zw >= 0) HX_CALL(hx_array_dot_red(u->red, u->slot_zw, u->nred, u->z, u->w));
  return HX_SUCCESS;
}

/* the stage's bookkeeping for one iteration: its count, its time (not the
 * first of a run: it holds the run's start), where its rate starts */
static void au_count(pc_auto *a, const hx_pc_cg_info *in, double now) {
  au_stage *s = &a->st[a->stage];
  s->its++;
  if (in->k == 1) {
    s->k0 = 1, s->rel0 = in->rel;
  } else if (a->t_last > 0) {
    s->t_sum += now - a->t_last, s->timed++;
  }
}

/* the residual's mean reduction per iteration in the stage's current run */
static double au_rate(const au_stage *s, const hx_pc_cg_info *in) {
  if (in->k <= s->k0 || !(s->rel0 > 0) || !(in->rel > 0)) return 0.0;
  const double r = pow(in->rel / s->rel0, 1.0 / (double)(in->k - s->k0));
  return r < 0.999 ? r : 0.999;
}

/* the run's CG coefficients and relative residuals, one more step */
static int au_store(pc_auto *a, const hx_pc_cg_info *in) {
  if (a->nk == a->cap) {
    const int cap = a->cap ? 2 * a->cap : 256;
    double *na = realloc(a->alpha, sizeof(double) * (size_t)cap);
    if (na) a->alpha = na;
    double *nb = na ? realloc(a->beta, sizeof(double) * (size_t)cap) : NULL;
    if (nb) a->beta = nb;
    double *nr = nb ? realloc(a->rel, sizeof(double) * (size_t)cap) : NULL;
    if (nr) a->rel = nr;
    HX_CHECK(na && nb && nr, HX_ERR_MEM, "out of memory (auto: %d CG coefficients)", cap);
    a->cap = cap;
  }
  a->alpha[a->nk] = in->alpha, a->beta[a->nk] = in->beta, a->rel[a->nk] = in->rel, a->nk++;
  return HX_SUCCESS;
}

/* Jacobi-PCG to pmg: the Lanczos prediction against pmg's modelled cost */
static int au_check_jacobi(pc_auto *a, const hx_pc_cg_info *in, int *restart) {
  if (in->k < a->next_check || !(in->rel > in->target)) return HX_SUCCESS;
  /* every 5 iterations to 100, then every 5 % (the Sturm counts cost k each) */
  a->next_check = in->k + (in->k < 100 ? 5 : in->k / 20);
  a->checks++;
  HX_CALL(hx_auto_predict(a->nk, a->alpha, a->beta, in->rel, in->target, &a->o, &a->at));
  hx_log(HX_LOG_VERBOSE,
         "preconditioner auto: iteration %d: kappa(D^-1 A) >= %.3e, Jacobi-PCG about %.0f more iterations "
         "(CG bound %.0f, error rate %.0f), pmg about %.0f Jacobi iterations' worth\n",
         in->k, a->at.kappa, a->at.jacobi, a->at.jacobi_bound, a->at.jacobi_rate, a->at.pmg);
  if (!(a->at.jacobi > a->at.pmg)) return HX_SUCCESS;
  /* switch: pmg set up (collective: every rank is here at the same step) */
  if (a->run.slot) hx_ev_end(&a->run, 0.0, 0.0);
  HX_CALL(auto_pmg_build(a, a->o.smoother_stages));
  a->switched = 1, a->switch_run = a->runs, a->switch_k = in->k, a->switch_iteration = a->observed;
  HX_CALL(hx_pc_destroy(&a->jac));
  hx_log(HX_LOG_NORMAL,
         "preconditioner auto: pmg from iteration %d (kappa(D^-1 A) >= %.3g: Jacobi-PCG about %.0f more "
         "iterations against pmg's %.0f; its setup %.3f s)\n",
         a->switch_iteration, a->at.kappa, a->at.jacobi, a->at.pmg, a->ev_switch.seconds);
  *restart = 1;
  return HX_SUCCESS;
}

/* asm to pmg (the type's own options: Chebyshev-Schwarz on every level),
 * decided once, after asm_check iterations of the first run: the asm
 * iterations still needed, asm_bias x the estimate from the residual's
 * mean reduction over the second half of the run (the first iterations of
 * two-level Schwarz may raise the residual; the rate after 10 iterations
 * is faster than the rest of the solve's, by 1.5-1.7x on Kershaw meshes),
 * against pmg's cost modelled in asm iterations: pmg_setup for its setup,
 * pmg_cycle per iteration, pmg_gain x n^0.74 iterations per 1e8 where asm
 * takes n (fitted on six meshes: docs/preconditioner.md). Read are global
 * residual norms and the options: every rank decides the same at the same
 * iteration, on any machine. A late switch costs more than either choice
 * (the asm iterations spent, then pmg's setup and all its iterations), so
 * there is one decision. */
static int au_check_asm(pc_auto *a, const hx_pc_cg_info *in, int *restart) {
  if (in->k < a->next_check || !(in->rel > in->target)) return HX_SUCCESS;
  a->checks++, a->decided = 1;
  const int h = in->k / 2; /* rel[i]: after iteration i + 1 */
  const double r = pow(in->rel / a->rel[h - 1], 1.0 / (double)(in->k - h));
  a->st[AU_ASM].rate = r < 0.999 ? r : 0.999;
  const double drop = log(in->rel / in->target), l8 = log(1e8);
  const double n8 = a->o.asm_bias * l8 / -log(a->st[AU_ASM].rate);
  a->a_rem = a->o.asm_bias * drop / -log(a->st[AU_ASM].rate);
  a->p_model = a->o.pmg_setup + a->o.pmg_cycle * a->o.pmg_gain * pow(n8, 0.74) * drop / l8;
  const int go = a->a_rem > a->p_model;
  hx_log(HX_LOG_NORMAL,
         "preconditioner auto: iteration %d: asm reduces the residual by %.3f per iteration: about %.0f more "
         "iterations; pmg modelled at %.0f asm iterations' worth (setup %.0f, %.1f iterations x %.1f): %s\n",
         a->observed, a->st[AU_ASM].rate, a->a_rem, a->p_model, a->o.pmg_setup,
         a->o.pmg_gain * pow(n8, 0.74) * drop / l8, a->o.pmg_cycle, go ? "pmg" : "asm kept");
  if (!go) return HX_SUCCESS;
  /* asm goes before pmg is built: the run's peak is the larger of the two,
   * not their sum (the iterate is PCG's; asm's figures stay in a->st) */
  HX_CALL(hx_pc_destroy(&a->as));
  HX_CALL(auto_pmg_build(a, 0));
  a->pmg_iteration = a->observed;
  hx_log(HX_LOG_NORMAL, "preconditioner auto: pmg from iteration %d (its setup %.3f s)\n", a->observed,
         a->ev_switch.seconds);
  *restart = 1;
  return HX_SUCCESS;
}

/* *due: 1 when a smoother stage's decision is due (schwarz_check
 * iterations into its run, the target not reached), with its rate measured */
static int au_smoother_due(pc_auto *a, au_stage *s, const hx_pc_cg_info *in, int *due) {
  *due = in->k >= s->k0 + a->o.schwarz_check && in->rel > in->target;
  if (!*due) return HX_SUCCESS;
  s->rate = au_rate(s, in);
  HX_CHECK(s->rate > 0, HX_ERR_NUMERIC, "preconditioner auto: pmg's residual %g after %g", in->rel, s->rel0);
  return HX_SUCCESS;
}

/* pmg-jacobi to pmg-asm, decided once, schwarz_check iterations into the
 * pmg-jacobi run: its measured rate gives the iterations it still needs;
 * the Schwarz smoothers' cost is modelled in pmg-jacobi iterations (their
 * setup schwarz_setup; schwarz_cycle per iteration; per 1e8 reduction
 * schwarz_gain x the square root of pmg-jacobi's iterations, the least of
 * the two). Everything read is global (the residual norms) or the options,
 * so every rank decides the same at the same iteration, on any machine. */
static int au_check_pmgj(pc_auto *a, const hx_pc_cg_info *in, int *restart) {
  au_stage *s = &a->st[AU_PMGJ];
  int due;
  HX_CALL(au_smoother_due(a, s, in, &due));
  if (!due) return HX_SUCCESS;
  const double drop = log(in->rel / in->target), l8 = log(1e8);
  const double m8 = l8 / -log(s->rate);
  a->m_rem = drop / -log(s->rate);
  a->s_its8 = fmin(m8, fmax(1.0, a->o.schwarz_gain * sqrt(m8)));
  a->s_model = a->o.schwarz_setup + a->o.schwarz_cycle * a->s_its8 * drop / l8;
  a->decided = 1;
  const int go = a->m_rem > a->s_model;
  hx_log(HX_LOG_NORMAL,
         "preconditioner auto: iteration %d: pmg with Chebyshev-Jacobi smoothing reduces the residual by %.3f "
         "per iteration: about %.0f more; the Schwarz smoothers modelled at %.0f of its iterations (setup %.0f, "
         "%.0f iterations x %.2f): %s\n",
         a->observed, s->rate, a->m_rem, a->s_model, a->o.schwarz_setup, a->s_its8 * drop / l8,
         a->o.schwarz_cycle, go ? "building them" : "kept");
  if (!go) return HX_SUCCESS;
  HX_CALL(au_schwarz_setup(a));
  a->stage = AU_PMGS, a->decided = 0, a->schwarz_iteration = a->observed;
  hx_log(HX_LOG_NORMAL, "preconditioner auto: Chebyshev-Schwarz smoothing from iteration %d (setup %.3f s)\n",
         a->observed, a->st[AU_PMGS].setup_s);
  *restart = 1;
  return HX_SUCCESS;
}

/* pmg-asm measured: back to pmg-jacobi (its smoothers kept) when the
 * Schwarz rate, at schwarz_cycle per iteration, would finish later than
 * pmg-jacobi's measured rate */
static int au_check_pmgs(pc_auto *a, const hx_pc_cg_info *in, int *restart) {
  au_stage *s = &a->st[AU_PMGS];
  int due;
  HX_CALL(au_smoother_due(a, s, in, &due));
  if (!due) return HX_SUCCESS;
  const double drop = log(in->rel / in->target);
  a->s_rem = a->o.schwarz_cycle * drop / -log(s->rate);
  a->m_rem_back = drop / -log(a->st[AU_PMGJ].rate);
  a->decided = 1;
  const int back = a->m_rem_back < a->s_rem;
  hx_log(HX_LOG_NORMAL,
         "preconditioner auto: iteration %d: Chebyshev-Schwarz reduces the residual by %.3f per iteration: "
         "about %.0f pmg-jacobi iterations' worth to go, against %.0f with Chebyshev-Jacobi: %s\n",
         a->observed, s->rate, a->s_rem, a->m_rem_back, back ? "back to Chebyshev-Jacobi" : "kept");
  if (!back) return HX_SUCCESS;
  pmg_use_inner((pmg *)hx_pc_context(a->mg), HX_SMOOTH_JACOBI);
  a->stage = AU_PMGJ, a->back_iteration = a->observed;
  *restart = 1;
  return HX_SUCCESS;
}

static int auto_observe(void *ctx, const hx_pc_cg_info *in, int *restart) {
  pc_auto *a = ctx;
  *restart = 0;
  const double now = hx_wtime();
  if (in->k == 1) {
    a->runs++;
    a->nk = 0;
    if (a->stage == AU_JACOBI) {
      a->next_check = a->o.min_iterations;
      a->run = hx_ev_begin(&a->ev_jacobi);
    } else if (a->stage == AU_ASM) {
      a->next_check = a->o.asm_check;
    }
  }
  a->observed++;
  au_count(a, in, now);
  /* the stage's decision (after the Jacobi switch every check waits for `decided`) */
  static int (*const check[AU_STAGES])(pc_auto *, const hx_pc_cg_info *, int *) = {
      au_check_jacobi, au_check_asm, au_check_pmgj, au_check_pmgs};
  int err = a->stage == AU_JACOBI || a->stage == AU_ASM ? au_store(a, in) : HX_SUCCESS;
  if (!err && (a->stage == AU_JACOBI || !a->decided)) err = check[a->stage](a, in, restart);
  a->t_last = hx_wtime();
  HX_CALL(err);
  return HX_SUCCESS;
}

static void auto_describe(void *ctx, char *buf, size_t len) {
  pc_auto *a = ctx;
  if (a->as) {
    char in[400];
    hx_pc_view(a->as, in, sizeof in);
    snprintf(buf, len, "auto(%s, pmg when the model says it pays)", in);
    return;
  }
  if (!a->mg) {
    snprintf(buf, len, "auto(jacobi-pcg, pmg when the estimate says it pays)");
    return;
  }
  char in[400];
  hx_pc_view(a->mg, in, sizeof in);
  if (a->switched || a->pmg_iteration)
    snprintf(buf, len, "auto(pmg from iteration %d: %s)", a->switched ? a->switch_iteration : a->pmg_iteration,
             in);
  else
    snprintf(buf, len, "auto(%s)", in);
}

/* the Jacobi phase: the decision, the model, what the switch measured */
static int au_report_jacobi(pc_auto *a, hx_opt *node) {
  hx_opt *m;
  HX_CALL(hx_pc_report_int(node, "switched", a->switched));
  if (a->switched) {
    HX_CALL(hx_pc_report_int(node, "switch_iteration", a->switch_iteration));
    HX_CALL(hx_pc_report_int(node, "switch_solve", a->switch_run));
  }
  HX_CALL(hx_pc_report_int(node, "checks", a->checks));
  HX_CALL(hx_pc_report_map(node, "estimate", &m));
  HX_CALL(hx_pc_report_real(m, "lambda_min", a->at.lmin));
  HX_CALL(hx_pc_report_real(m, "lambda_max", a->at.lmax));
  HX_CALL(hx_pc_report_real(m, "kappa", a->at.kappa));
  HX_CALL(hx_pc_report_real(m, "jacobi_iterations", a->at.jacobi));
  HX_CALL(hx_pc_report_real(m, "jacobi_cg_bound", a->at.jacobi_bound));
  HX_CALL(hx_pc_report_real(m, "jacobi_error_rate", a->at.jacobi_rate));
  HX_CALL(hx_pc_report_real(m, "pmg_cost", a->at.pmg));
  HX_CALL(hx_pc_report_map(node, "model", &m));
  HX_CALL(hx_pc_report_real(m, "setup_cost", a->o.setup_cost));
  HX_CALL(hx_pc_report_real(m, "cycle_cost", a->o.cycle_cost));
  HX_CALL(hx_pc_report_real(m, "pmg_iterations", a->o.pmg_iterations));
  HX_CALL(hx_pc_report_int(m, "min_iterations", a->o.min_iterations));
  if (a->switched) {
    /* the model's figures as measured here, for calibrating it */
    hx_pc_stats s;
    hx_pc_get_stats(a->mg, &s);
    const double cyc = s.applies ? s.t_apply / (double)s.applies : 0.0;
    HX_CALL(hx_pc_report_map(node, "measured", &m));
    HX_CALL(hx_pc_report_real(m, "jacobi_iteration_s", hx_ev_per(&a->ev_jacobi, a->switch_k - 1)));
    HX_CALL(hx_pc_report_real(m, "pmg_setup_s", a->ev_switch.seconds));
    HX_CALL(hx_pc_report_real(m, "pmg_apply_s", cyc));
  }
  return HX_SUCCESS;
}

/* one stage's entry in the report's `stages` list (rate where measured;
 * setup_s but for Jacobi-PCG, whose diagonal is the auto node's setup) */
static int au_report_stage(hx_opt *list, const char *name, const au_stage *s) {
  hx_opt *m;
  HX_CALL(hx_pc_report_map(list, NULL, &m));
  HX_CALL(hx_pc_report_text(m, "name", name));
  HX_CALL(hx_pc_report_int(m, "iterations", s->its));
  HX_CALL(hx_pc_report_real(m, "iteration_s", s->timed ? s->t_sum / s->timed : 0.0));
  if (s->rate > 0) HX_CALL(hx_pc_report_real(m, "rate", s->rate));
  if (strcmp(name, "jacobi")) HX_CALL(hx_pc_report_real(m, "setup_s", s->setup_s));
  return HX_SUCCESS;
}

/* the smoother stages of the pmg: the Schwarz decision and each stage's
 * measured figures (rank 0's seconds; the model's units for calibrating it) */
static int au_report_stages(pc_auto *a, hx_opt *node) {
  hx_opt *m, *list;
  const pmg *g = (const pmg *)hx_pc_context(a->mg);
  HX_CALL(hx_pc_report_text(node, "smoother", g->o.inner == HX_SMOOTH_ASM ? "cheby-asm" : "cheby-jacobi"));
  HX_CALL(hx_pc_report_map(node, "schwarz", &m));
  HX_CALL(hx_pc_report_text(m, "decision", a->schwarz_iteration ? (a->back_iteration ? "tried, left" : "taken")
                                           : a->m_rem > 0                ? "not paid"
                                                                         : "not reached"));
  if (a->schwarz_iteration) HX_CALL(hx_pc_report_int(m, "from_iteration", a->schwarz_iteration));
  if (a->back_iteration) HX_CALL(hx_pc_report_int(m, "back_iteration", a->back_iteration));
  HX_CALL(hx_pc_report_real(m, "pmg_jacobi_iterations_left", a->m_rem));
  HX_CALL(hx_pc_report_real(m, "schwarz_cost", a->s_model));
  HX_CALL(hx_pc_report_real(m, "schwarz_iterations_per_1e8", a->s_its8));
  HX_CALL(hx_pc_report_real(m, "schwarz_setup", a->o.schwarz_setup));
  HX_CALL(hx_pc_report_real(m, "schwarz_cycle", a->o.schwarz_cycle));
  HX_CALL(hx_pc_report_real(m, "schwarz_gain", a->o.schwarz_gain));
  HX_CALL(hx_pc_report_int(m, "schwarz_check", a->o.schwarz_check));
  HX_CALL(hx_pc_report_list(node, "stages", &list));
  for (int i = 0; i < AU_STAGES; i++)
    if (a->st[i].its || (i == AU_PMGJ && a->mg)) HX_CALL(au_report_stage(list, au_names[i], &a->st[i]));
  return HX_SUCCESS;
}

/* start: asm: the pmg decision, its model, and what each stage measured */
static int au_report_asm(pc_auto *a, hx_opt *node) {
  hx_opt *m, *list;
  HX_CALL(hx_pc_report_int(node, "switched", a->pmg_iteration > 0));
  if (a->pmg_iteration) HX_CALL(hx_pc_report_int(node, "switch_iteration", a->pmg_iteration));
  HX_CALL(hx_pc_report_int(node, "checks", a->checks));
  HX_CALL(hx_pc_report_map(node, "estimate", &m));
  HX_CALL(hx_pc_report_real(m, "asm_rate", a->st[AU_ASM].rate));
  HX_CALL(hx_pc_report_real(m, "asm_iterations", a->a_rem));
  HX_CALL(hx_pc_report_real(m, "pmg_cost", a->p_model));
  HX_CALL(hx_pc_report_map(node, "model", &m));
  HX_CALL(hx_pc_report_int(m, "asm_check", a->o.asm_check));
  HX_CALL(hx_pc_report_real(m, "asm_bias", a->o.asm_bias));
  HX_CALL(hx_pc_report_real(m, "pmg_setup", a->o.pmg_setup));
  HX_CALL(hx_pc_report_real(m, "pmg_cycle", a->o.pmg_cycle));
  HX_CALL(hx_pc_report_real(m, "pmg_gain", a->o.pmg_gain));
  HX_CALL(hx_pc_report_list(node, "stages", &list));
  HX_CALL(au_report_stage(list, "asm", &a->st[AU_ASM]));
  if (a->pmg_iteration) HX_CALL(au_report_stage(list, "pmg", &a->st[AU_PMGS]));
  return HX_SUCCESS;
}

/* the decisions, the models, what was measured, and the part in use
 * (jacobi, or the pmg) with its own figures */
static int auto_report(void *ctx, hx_opt *node) {
  pc_auto *a = ctx;
  HX_CALL(hx_pc_report_text(node, "start", auto_starts[a->o.start]));
  HX_CALL(hx_pc_report_text(node, "choice", a->mg ? "pmg" : a->as ? "asm" : "jacobi"));
  if (a->o.start == HX_AUTO_START_JACOBI) HX_CALL(au_report_jacobi(a, node));
  if (a->o.start == HX_AUTO_START_MESH) {
    HX_CALL(hx_pc_report_real(node, "curved_fraction", a->curved));
    HX_CALL(hx_pc_report_int(node, "pmg_order", a->o.pmg_order));
    HX_CALL(hx_pc_report_text(node, "mesh_start", auto_starts[a->mesh_start]));
    if (a->mesh_start == HX_AUTO_START_PMG) {
      HX_CALL(hx_pc_report_int(node, "mesh_degree", a->o.mesh_degree));
      HX_CALL(hx_pc_report_int(node, "mesh_degree_below", a->o.mesh_degree_below));
    }
  }
  if (a->o.start == HX_AUTO_START_ASM || a->mesh_start == HX_AUTO_START_ASM) HX_CALL(au_report_asm(a, node));
  /* the smoother stages run only in a pmg built as start: pmg or after Jacobi */
  if (a->mg && !a->o.trial && a->o.smoother_stages &&
      (a->o.start == HX_AUTO_START_PMG || a->o.start == HX_AUTO_START_JACOBI))
    HX_CALL(au_report_stages(a, node));
  hx_opt *part;
  hx_pc cur = a->mg ? a->mg : a->as ? a->as : a->jac;
  HX_CALL(hx_pc_report_map(node, a->mg ? "pmg" : a->as ? "asm" : "jacobi", &part));
  if (cur) HX_CALL(hx_pc_report_node(cur, part));
  return HX_SUCCESS;
}

static int auto_destroy(void *ctx) {
  pc_auto *a = ctx;
  int first = hx_pc_destroy(&a->jac);
  int err = hx_pc_destroy(&a->mg);
  if (err && !first) first = err;
  err = hx_pc_destroy(&a->as);
  if (err && !first) first = err;
  err = hx_disc_destroy(&a->d);
  if (err && !first) first = err;
  free(a->alpha), free(a->beta), free(a->rel), free(a);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

int hx_pc_create_auto(hx_disc d, const hx_auto_opts *o, hx_pc *pc) {
  *pc = NULL;
  HX_CHECK(o->start >= HX_AUTO_START_JACOBI && o->start <= HX_AUTO_START_MESH, HX_ERR_ARG, "auto: start %d",
           o->start);
  HX_CHECK(o->asm_check >= 2 && o->pmg_setup >= 0 && o->pmg_cycle > 0 && o->pmg_gain > 0, HX_ERR_INPUT,
           "preconditioner auto: asm_check %d below 2, or pmg_setup %g, pmg_cycle %g, pmg_gain %g not positive",
           o->asm_check, o->pmg_setup, o->pmg_cycle, o->pmg_gain);
  HX_CHECK(o->setup_cost >= 0 && o->cycle_cost >= 0 && o->pmg_iterations >= 0 && o->min_iterations >= 2,
           HX_ERR_INPUT, "preconditioner auto: negative costs, or min_iterations %d below 2",
           o->min_iterations);
  HX_CHECK(o->schwarz_setup >= 0 && o->schwarz_cycle > 0 && o->schwarz_gain > 0 && o->schwarz_check >= 1,
           HX_ERR_INPUT, "preconditioner auto: schwarz_setup %g, schwarz_cycle %g, schwarz_gain %g, schwarz_check %d",
           o->schwarz_setup, o->schwarz_cycle, o->schwarz_gain, o->schwarz_check);
  pc_auto *a;
  HX_CALL(HX_ALLOC(&a, 1));
  a->o = *o;
  a->d = d;
  a->n = hx_op_size(hx_disc_op(d));
  int err = hx_disc_reference(d);
  if (err) {
    free(a);
    HX_CALL(err);
  }
  /* Jacobi's fused update first (passes: x, p, r, w, diag read; x, r, z
   * written), pmg's apply after the switch */
  const hx_pc_ops ops = {.type = "auto",
                         .setup = auto_setup,
                         .apply = auto_apply,
                         .describe = auto_describe,
                         .report = auto_report,
                         .destroy = auto_destroy,
                         .passes = 3,
                         .cg_update = auto_cg_update,
                         .cg_update_passes = 8,
                         .cg_update_off = auto_cg_update_off,
                         .observe = auto_observe,
                         .set_shift = auto_set_shift};
  HX_CALL(hx_pc_create_shell(hx_disc_op(d), &ops, a, 0, NULL, pc));
  return HX_SUCCESS;
}

const char *hx_pc_auto_choice(hx_pc pc) {
  if (!pc || strcmp(hx_pc_type(pc), "auto")) return NULL;
  const pc_auto *a = hx_pc_context(pc);
  if (!a->mg) return a->as ? "asm" : a->jac ? "jacobi" : NULL;
  const char *trial = hx_pc_trial_choice(a->mg);
  if (trial) return trial;
  return a->o.smoother_stages ? au_names[a->stage] : "pmg";
}

/* ================================================================ smoother trial
 * (type pmg-trial: the pmg of auto with trial: true)
 * Candidates are pmg contexts (not hx_pc objects) that share the fine
 * discretisation; the Jacobi one is set up once and tried at each of its
 * degrees (the degree changes the polynomial only: rho bounds S A whatever
 * the degree). The trial is PCG on a pseudo-random right-hand side with the
 * fine FP64 operator and the candidate as preconditioner, as the solve
 * will run it; its rate is the mean reduction per iteration of sqrt(r.z)
 * after the first iteration (the first one removes what any smoother
 * removes), its time the max over ranks, so every rank chooses the same. */
enum { TRIAL_JACOBI = 0, TRIAL_ASM = 1, TRIAL_OBJECTS = 2 };
#define TRIAL_MAX_CANDIDATES 4
#define TRIAL_TOL 1e-8 /* the reduction the estimates are for (solver.tol's default) */

typedef struct {
  char name[32];
  int obj, degree;
  int status; /* 0 not tried (skipped), 1 tried, 2 chosen */
  int injected;
  hx_ev_slot ev_its; /* its timed iterations */
  double t_it, rate, est_its, est_solve;
} trial_cand;

typedef struct {
  hx_disc d;
  hx_pmg_auto_opts o;
  pmg *g; /* the levels, the coarse level, the smoothers of every candidate */
  hx_ev_slot ev_obj_setup[TRIAL_OBJECTS]; /* seconds: the max over ranks */
  trial_cand c[TRIAL_MAX_CANDIDATES];
  int nc, chosen;
  hx_ev_slot ev_trial; /* seconds: the max over ranks */
  char skipped[160];
} pmg_trial;

void hx_pmg_auto_opts_default(hx_pmg_auto_opts *o) {
  memset(o, 0, sizeof *o);
  hx_pmg_opts_default(&o->base);
  o->trial_iterations = 4;
  o->schwarz_above = 12;
}

static void pmg_set_degree(pmg *g, int degree) {
  g->o.degree = degree;
  for (int l = 0; l < g->nl; l++) g->lv[l].cheb.degree = degree;
}

static void pmg_reset_stats(pmg *g) {
  hx_ev_reset(&g->ev_cycle), hx_ev_reset(&g->ev_coarse), hx_ev_reset(&g->ev_copy);
  for (int l = 0; l < g->nl; l++) hx_ev_reset(&g->lv[l].ev_smooth), hx_ev_reset(&g->lv[l].ev_transfer);
}

/* HEXCG_AUTO_TIMINGS: "name=seconds[,name=seconds...]"; 1 and *t when
 * candidate `name` is listed */
static int trial_injected(const char *name, double *t) {
  const char *env = hx_env("HEXCG_AUTO_TIMINGS");
  if (!env) return 0;
  const size_t n = strlen(name);
  for (const char *s = env; s && *s;) {
    while (*s == ',' || *s == ' ') s++;
    if (!strncmp(s, name, n) && s[n] == '=') {
      char *end = NULL;
      const double v = strtod(s + n + 1, &end);
      if (end != s + n + 1 && v > 0 && isfinite(v)) {
        *t = v;
        return 1;
      }
    }
    s = strchr(s, ',');
  }
  return 0;
}

static int trial_dot(const hx_op op, MPI_Comm comm, const double *x, const double *y, double *r) {
  double loc = 0.0;
  HX_CALL(hx_array_dot_p(hx_op_backend(op), HX_F64, hx_op_owned(op), x, y, &loc));
  HX_MPI(MPI_Allreduce(&loc, r, 1, MPI_DOUBLE, MPI_SUM, comm));
  return HX_SUCCESS;
}

/* c->t_it, c->rate: its PCG iterations with g (set up) on the pseudo-random
 * masked right-hand side h_b; work: 4 backend FP64 vectors */
static int trial_time(pmg_trial *a, pmg *g, trial_cand *c, const double *h_b, double **w) {
  hx_op op = hx_disc_op(a->d);
  hx_backend b = hx_disc_backend(a->d);
  const MPI_Comm comm = hx_gs_comm(hx_disc_gs(a->d));
  const int64_t n = hx_op_size(op);
  double *r = w[0], *z = w[1], *p = w[2], *q = w[3];
  HX_CALL(hx_mem_to_device(b, r, h_b, sizeof(double) * (size_t)n));
  HX_CALL(hx_pmg_apply(g, r, z));
  HX_CALL(hx_array_copy_p(b, HX_F64, n, p, z));
  double rz, rz1 = 0.0;
  HX_CALL(trial_dot(op, comm, r, z, &rz));
  const int m = a->o.trial_iterations;
  double t_its[64];
  int done = 0;
  for (int it = 0; it < m; it++) {
    double pq, rzn;
    HX_CALL(hx_backend_sync(b));
    hx_ev ev = hx_ev_begin(&c->ev_its);
    HX_CALL(hx_op_apply(op, p, q, NULL));
    HX_CALL(trial_dot(op, comm, p, q, &pq));
    HX_CHECK(pq > 0 && isfinite(pq), HX_ERR_NUMERIC, "preconditioner auto: trial of %s: p.Ap = %g", c->name,
             pq);
    HX_CALL(hx_array_axpby_p(b, HX_F64, n, r, -rz / pq, q, 1.0));
    HX_CALL(hx_pmg_apply(g, r, z));
    HX_CALL(trial_dot(op, comm, r, z, &rzn));
    HX_CHECK(rzn >= 0 && isfinite(rzn), HX_ERR_NUMERIC, "preconditioner auto: trial of %s: r.z = %g", c->name,
             rzn);
    HX_CALL(hx_array_xpay_p(b, HX_F64, n, p, z, rzn / rz));
    HX_CALL(hx_backend_sync(b));
    t_its[done] = hx_ev_end(&ev, 0.0, 0.0);
    rz = rzn, done++;
    if (it == 0) rz1 = rz;
    if (!(rz > 0)) break;
  }
  /* each iteration's time the max over ranks, then the least of them: on a
   * shared host the mean follows the other processes' load (candidates
   * measured 2-4x apart between runs at load 14 on 2 cores), the least
   * iteration much less */
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, t_its, done, MPI_DOUBLE, MPI_MAX, comm));
  c->t_it = HUGE_VAL;
  for (int i = 0; i < done; i++)
    if (t_its[i] < c->t_it) c->t_it = t_its[i];
  c->injected = trial_injected(c->name, &c->t_it);
  /* per-iteration reduction of |r|_{M^-1} = sqrt(r.z) from iteration 1 to m */
  c->rate = done > 1 && rz1 > 0 ? pow(rz > 0 ? rz / rz1 : 1e-300, 0.5 / (double)(done - 1)) : 1.0;
  if (c->rate > 0.999) c->rate = 0.999;
  c->est_its = 1.0 + log(TRIAL_TOL) / log(c->rate);
  c->est_solve = c->est_its * c->t_it;
  c->status = 1;
  return HX_SUCCESS;
}

/* the smoother `which` of every level (the Jacobi one with the whole pmg
 * at first, the Schwarz one added to the same levels and coarse level) */
static int trial_obj_setup(pmg_trial *a, int which) {
  hx_ev ev = hx_ev_begin(&a->ev_obj_setup[which]);
  if (which == TRIAL_JACOBI) {
    hx_pmg_opts o = a->o.base;
    o.cycle = HX_PMG_MULTIPLICATIVE, o.sides = HX_PMG_SIDES_BOTH, o.kind = HX_CHEB_OPT_FOURTH;
    o.inner = HX_SMOOTH_JACOBI;
    o.inner_below = -1, o.degree_below = 0, o.degree = 3;
    HX_CALL(hx_pmg_new(a->d, &o, &a->g));
    HX_CALL(hx_pmg_setup(a->g));
  } else {
    HX_CALL(pmg_add_schwarz(a->g));
  }
  hx_ev_end(&ev, 0.0, 0.0);
  HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(a->d)), &a->ev_obj_setup[which], 1));
  return HX_SUCCESS;
}

/* every level to the smoother `which` (set up) at degree */
static void trial_use(pmg_trial *a, int which, int degree) {
  pmg_use_inner(a->g, which == TRIAL_JACOBI ? HX_SMOOTH_JACOBI : HX_SMOOTH_ASM);
  pmg_set_degree(a->g, degree);
}

static void trial_add(pmg_trial *a, int obj, int degree) {
  trial_cand *c = &a->c[a->nc++];
  memset(c, 0, sizeof *c);
  c->obj = obj, c->degree = degree;
  snprintf(c->name, sizeof c->name, "cheby-%s-%d", obj == TRIAL_JACOBI ? "jacobi" : "asm", degree);
  c->est_its = c->est_solve = HUGE_VAL;
}

static int trial_run_all(pmg_trial *a, double **w, double *h_b) {
  /* the Jacobi candidates first: almost no setup */
  HX_CALL(trial_obj_setup(a, TRIAL_JACOBI));
  /* warm-up: the first candidate's iterations on the random vector; their
   * residual, rid of the rough components every smoother removes at once
   * (on a random vector the first iterations of any candidate look fast:
   * 4 iterations predicted 38 of cheby-jacobi's 105 on Kershaw), is the
   * right-hand side every candidate is timed on */
  trial_cand warm = a->c[0];
  trial_use(a, warm.obj, warm.degree);
  HX_CALL(trial_time(a, a->g, &warm, h_b, w));
  HX_CALL(hx_mem_to_host(hx_disc_backend(a->d), h_b, w[0],
                         sizeof(double) * (size_t)hx_op_size(hx_disc_op(a->d))));
  double best_j = HUGE_VAL;
  for (int i = 0; i < a->nc; i++) {
    trial_cand *c = &a->c[i];
    if (c->obj != TRIAL_JACOBI) continue;
    trial_use(a, TRIAL_JACOBI, c->degree);
    HX_CALL(trial_time(a, a->g, c, h_b, w));
    if (c->est_its < best_j) best_j = c->est_its;
  }
  if (a->o.schwarz_above > 0 && best_j <= a->o.schwarz_above) {
    snprintf(a->skipped, sizeof a->skipped,
             "the Schwarz candidates: the Jacobi candidate's estimate, %.1f iterations, is within "
             "schwarz_above (%d)",
             best_j, a->o.schwarz_above);
    return HX_SUCCESS;
  }
  HX_CALL(trial_obj_setup(a, TRIAL_ASM));
  for (int i = 0; i < a->nc; i++) {
    trial_cand *c = &a->c[i];
    if (c->obj != TRIAL_ASM) continue;
    trial_use(a, TRIAL_ASM, c->degree);
    HX_CALL(trial_time(a, a->g, c, h_b, w));
  }
  return HX_SUCCESS;
}

static int trial_setup(void *ctx) {
  pmg_trial *a = (pmg_trial *)ctx;
  hx_ev ev = hx_ev_begin(&a->ev_trial);
  hx_op op = hx_disc_op(a->d);
  hx_backend b = hx_disc_backend(a->d);
  const int64_t n = hx_op_size(op);
  /* the trial's right-hand side: pseudo-random (seeded by the global ids),
   * masked, the same on any rank count */
  double *h_b = NULL, *w[4] = {NULL, NULL, NULL, NULL};
  int err = HX_ALLOC(&h_b, n > 0 ? n : 1);
  const int64_t *gid = hx_gs_global_ids(hx_disc_gs(a->d));
  for (int64_t i = 0; i < n && !err; i++) {
    uint64_t s = (uint64_t)gid[i] * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull;
    s ^= s >> 31, s *= 0xBF58476D1CE4E5B9ull, s ^= s >> 29;
    h_b[i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
  for (int i = 0; i < 4 && !err; i++)
    err = hx_mem_alloc(b, sizeof(double) * (size_t)(n > 0 ? n : 1), (void **)&w[i]);
  if (!err) err = hx_mem_to_device(b, w[0], h_b, sizeof(double) * (size_t)n);
  if (!err) err = hx_gs_apply_mask(hx_disc_gs(a->d), w[0]);
  if (!err) err = hx_mem_to_host(b, h_b, w[0], sizeof(double) * (size_t)n);
  if (!err) err = trial_run_all(a, w, h_b);
  for (int i = 0; i < 4; i++)
    if (w[i]) hx_mem_free(b, (void **)&w[i]);
  free(h_b);
  HX_CALL(err);
  /* the least estimated solve time (the setups are spent either way) */
  a->chosen = -1;
  for (int i = 0; i < a->nc; i++)
    if (a->c[i].status && (a->chosen < 0 || a->c[i].est_solve < a->c[a->chosen].est_solve)) a->chosen = i;
  HX_CHECK(a->chosen >= 0, HX_ERR_NUMERIC, "preconditioner auto: no candidate was tried");
  trial_cand *c = &a->c[a->chosen];
  c->status = 2;
  /* the other smoother's memory back before the solve */
  trial_use(a, c->obj, c->degree);
  for (int l = 0; l < a->g->nl; l++)
    for (int s = 0; s < HX_SMOOTH_COUNT; s++)
      if (s != (int)a->g->o.inner) HX_CALL(hx_pc_destroy(&a->g->lv[l].S[s]));
  pmg_reset_stats(a->g);
  hx_ev_end(&ev, 0.0, 0.0);
  HX_CALL(hx_ev_max_seconds(hx_gs_comm(hx_disc_gs(a->d)), &a->ev_trial, 1));
  for (int i = 0; i < a->nc; i++) {
    const trial_cand *ci = &a->c[i];
    if (ci->status)
      hx_log(HX_LOG_NORMAL,
             "preconditioner auto: %-16s %.3e s per iteration%s, rate %.3f, about %.0f iterations, "
             "%.3e s to 1e-8%s\n",
             ci->name, ci->t_it, ci->injected ? " (injected)" : "", ci->rate, ci->est_its, ci->est_solve,
             ci->status == 2 ? "  <- chosen" : "");
  }
  if (a->skipped[0]) hx_log(HX_LOG_NORMAL, "preconditioner auto: skipped %s\n", a->skipped);
  hx_log(HX_LOG_NORMAL, "preconditioner auto: chose %s after a %.3f s trial (setups included)\n", c->name,
         a->ev_trial.seconds);
  return HX_SUCCESS;
}

static int trial_apply(void *ctx, const double *d_r, double *d_z) {
  pmg_trial *a = (pmg_trial *)ctx;
  HX_CHECK(a->chosen >= 0, HX_ERR_ARG, "preconditioner auto: applied before its setup");
  HX_CALL(hx_pmg_apply(a->g, d_r, d_z));
  return HX_SUCCESS;
}

static void trial_describe(void *ctx, char *buf, size_t len) {
  pmg_trial *a = (pmg_trial *)ctx;
  if (a->chosen < 0) {
    snprintf(buf, len, "pmg-trial(cheby-jacobi or cheby-asm, chosen at setup)");
    return;
  }
  char in[400];
  hx_pmg_describe(a->g, in, sizeof in);
  snprintf(buf, len, "pmg-trial(%s: %s)", a->c[a->chosen].name, in);
}

/* the auto node: the choice, the trial and its candidates, and the chosen
 * pmg's own figures under `chosen` */
static int trial_report(void *ctx, hx_opt *node) {
  pmg_trial *a = (pmg_trial *)ctx;
  if (a->chosen < 0) return HX_SUCCESS;
  hx_opt *list, *m;
  HX_CALL(hx_pc_report_text(node, "choice", a->c[a->chosen].name));
  HX_CALL(hx_pc_report_real(node, "trial_s", a->ev_trial.seconds));
  HX_CALL(hx_pc_report_int(node, "trial_iterations", a->o.trial_iterations));
  HX_CALL(hx_pc_report_int(node, "schwarz_above", a->o.schwarz_above));
  if (a->skipped[0]) HX_CALL(hx_pc_report_text(node, "skipped", a->skipped));
  HX_CALL(hx_pc_report_list(node, "candidates", &list));
  for (int i = 0; i < a->nc; i++) {
    const trial_cand *c = &a->c[i];
    HX_CALL(hx_pc_report_map(list, NULL, &m));
    HX_CALL(hx_pc_report_text(m, "name", c->name));
    HX_CALL(hx_pc_report_text(m, "status", c->status == 2 ? "chosen" : c->status ? "tried" : "skipped"));
    if (!c->status) continue;
    HX_CALL(hx_pc_report_real(m, "smoother_setup_s", a->ev_obj_setup[c->obj].seconds));
    HX_CALL(hx_pc_report_real(m, "iteration_s", c->t_it));
    HX_CALL(hx_pc_report_text(m, "timing", c->injected ? "injected" : "measured"));
    HX_CALL(hx_pc_report_real(m, "rate", c->rate));
    HX_CALL(hx_pc_report_real(m, "estimated_iterations", c->est_its));
    HX_CALL(hx_pc_report_real(m, "estimated_solve_s", c->est_solve));
  }
  pmg *g = a->g;
  char desc[400];
  hx_pmg_describe(g, desc, sizeof desc);
  HX_CALL(hx_pc_report_map(node, "chosen", &m));
  HX_CALL(hx_pc_report_text(m, "description", desc));
  HX_CALL(hx_pmg_report(g, m));
  return HX_SUCCESS;
}

static int trial_destroy(void *ctx) {
  pmg_trial *a = (pmg_trial *)ctx;
  int first = HX_SUCCESS;
  if (a->g) first = hx_pmg_destroy(a->g);
  const int err = hx_disc_destroy(&a->d);
  if (err && !first) first = err;
  free(a);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

int hx_pc_create_pmg_auto(hx_disc d, const hx_pmg_auto_opts *o, hx_pc *pc) {
  *pc = NULL;
  HX_CHECK(o->trial_iterations >= 2 && o->trial_iterations <= 50, HX_ERR_INPUT,
           "preconditioner.trial_iterations: %d outside 2..50", o->trial_iterations);
  pmg_trial *a;
  HX_CALL(HX_ALLOC(&a, 1));
  memset(a, 0, sizeof *a);
  a->o = *o;
  a->chosen = -1;
  a->d = d;
  int err = hx_disc_reference(d);
  if (err) {
    free(a);
    HX_CALL(err);
  }
  trial_add(a, TRIAL_JACOBI, 3);
  trial_add(a, TRIAL_JACOBI, 5);
  trial_add(a, TRIAL_ASM, 3);
  const hx_pc_ops ops = {.type = "pmg-trial",
                         .setup = trial_setup,
                         .apply = trial_apply,
                         .describe = trial_describe,
                         .report = trial_report,
                         .destroy = trial_destroy,
                         .passes = 2 * 3 * 6};
  HX_CALL(hx_pc_create_shell(hx_disc_op(d), &ops, a, 0, NULL, pc));
  return HX_SUCCESS;
}

const char *hx_pc_trial_choice(hx_pc pc) {
  if (!pc || strcmp(hx_pc_type(pc), "pmg-trial")) return NULL;
  const pmg_trial *a = (const pmg_trial *)hx_pc_context(pc);
  return a->chosen >= 0 ? a->c[a->chosen].name : NULL;
}

/* ---------------------------------------------------------------- type auto */

typedef struct {
  hx_auto_opts au; /* its pmg's options: au.pmg.base */
  hx_pc_coarse_vals c;
} auto_vals;
#define AT(f) offsetof(auto_vals, f)
static const hx_opt_key auto_rows[] = {
    HX_PC_TYPE_KEY,
    HX_PC_ENUM(
        "start", AT(au.start), auto_starts, "mesh",
        "jacobi: Jacobi-PCG first, pmg from the iterate when the estimate says it pays; pmg: pmg at once; "
        "asm: two-level Schwarz first, pmg from the iterate when the model says it pays; mesh: pmg at once "
        "at orders >= pmg_order on mostly curved meshes, else as asm"),
    HX_PC_INT("pmg_order", AT(au.pmg_order), 1, 100, "start mesh: the least order at which curved meshes take pmg"),
    HX_PC_INT("mesh_degree", AT(au.mesh_degree), 1, HX_CHEB_OPT_DEGREE_MAX,
              "start mesh: the Chebyshev degree of that pmg's fine level"),
    HX_PC_INT("mesh_degree_below", AT(au.mesh_degree_below), 1, HX_CHEB_OPT_DEGREE_MAX,
              "start mesh: the Chebyshev degree of that pmg's levels below the fine one"),
    HX_PC_INT("asm_check", AT(au.asm_check), 2, 1000000,
              "start asm: asm iterations before the one decision"),
    HX_PC_DBL("asm_bias", AT(au.asm_bias), 0.1, 100.0, 0,
              "start asm, the model: asm's iterations still needed over the estimate from its rate so far"),
    HX_PC_DBL("pmg_setup", AT(au.pmg_setup), 0.0, 1e9, 0, "start asm, the model: pmg's setup, in asm iterations"),
    HX_PC_DBL("pmg_cycle", AT(au.pmg_cycle), 1e-3, 1e6, 0,
              "start asm, the model: one pmg iteration, in asm iterations"),
    HX_PC_DBL("pmg_gain", AT(au.pmg_gain), 1e-3, 1e3, 0,
              "start asm, the model: pmg iterations per 1e8 = pmg_gain x n^0.74, n: asm's"),
    HX_PC_DBL("setup_cost", AT(au.setup_cost), 0.0, 1e9, 0,
              "the model: pmg's setup, in Jacobi-PCG iterations"),
    HX_PC_DBL("cycle_cost", AT(au.cycle_cost), 0.0, 1e6, 0,
              "the model: one pmg iteration, in Jacobi-PCG iterations"),
    HX_PC_DBL("pmg_iterations", AT(au.pmg_iterations), 0.0, 1e6, 0,
              "the model: pmg iterations per 1e8 reduction"),
    HX_PC_INT("min_iterations", AT(au.min_iterations), 2, 1000000,
              "Jacobi-PCG iterations before the first estimate"),
    HX_PC_LEVELS_KEY("the orders of the pmg's levels"),
    {.key = "trial",
     .type = HX_OT_BOOL,
     .offset = AT(au.trial),
     .help = "the pmg's smoother chosen by timing candidates at its setup (trial_iterations, schwarz_above)"},
    HX_PC_INT("trial_iterations", AT(au.pmg.trial_iterations), 2, 50,
              "trial: PCG iterations timed per candidate"),
    HX_PC_INT(
        "schwarz_above", AT(au.pmg.schwarz_above), 0, 100000,
        "trial: try cheby-asm only when cheby-jacobi is estimated above this many iterations (0: always)"),
    {.key = "smoother_stages",
     .type = HX_OT_BOOL,
     .offset = AT(au.smoother_stages),
     .help = "the pmg starts with Chebyshev-Jacobi smoothing and adds the Schwarz smoothers when the model "
             "says they pay (false: type pmg's smoothers throughout)"},
    HX_PC_INT("schwarz_check", AT(au.schwarz_check), 1, 50,
              "smoother_stages: pmg iterations measured before each smoother decision"),
    HX_PC_DBL("schwarz_setup", AT(au.schwarz_setup), 0.0, 1e9, 0,
              "the model: the Schwarz smoothers' setup, in Chebyshev-Jacobi pmg iterations"),
    HX_PC_DBL("schwarz_cycle", AT(au.schwarz_cycle), 1e-3, 1e3, 0,
              "the model: a Chebyshev-Schwarz pmg iteration, in Chebyshev-Jacobi pmg iterations"),
    HX_PC_DBL("schwarz_gain", AT(au.schwarz_gain), 1e-3, 1e3, 0,
              "the model: Chebyshev-Schwarz iterations per 1e8 = schwarz_gain x sqrt(Chebyshev-Jacobi's)"),
    HX_PC_COARSE_KEY("the Q1 coarse level (BoomerAMG) of the pmg"),
    HX_PC_PREC_KEY(AT(au.pmg.base.prec)),
};
static const hx_opt_group auto_group = {"preconditioner", "type: auto", auto_rows, HX_NELEM(auto_rows)};

static void auto_defaults(void *vals) {
  auto_vals *v = vals;
  hx_auto_opts_default(&v->au);
  v->c = (hx_pc_coarse_vals){.solver = v->au.pmg.base.coarse, .co = v->au.pmg.base.coarse_opts};
}

static int auto_read(const hx_opt *o, void *vals) {
  auto_vals *v = vals;
  hx_pmg_opts *g = &v->au.pmg.base;
  HX_CALL(hx_pc_levels_read(o, g));
  HX_CALL(hx_pc_coarse_read(hx_opt_get(o, "coarse"), &v->c));
  g->coarse = v->c.solver, g->coarse_opts = v->c.co;
  return HX_SUCCESS;
}

static int auto_write(hx_opt *o, const void *vals) {
  const auto_vals *v = vals;
  HX_CALL(hx_opt_write_group(o, &auto_group, v));
  if (v->au.pmg.base.nlevels == 0) HX_CALL(hx_opt_set(o, "levels", "auto"));
  hx_opt *c;
  HX_CALL(hx_opt_submap(o, "coarse", &c));
  HX_CALL(hx_opt_write_group(c, &hx_pc_coarse_group, &v->c));
  return HX_SUCCESS;
}

/* its pmg (the Jacobi phase holds less) */
static double auto_mem_per_node(const void *vals, int p) {
  const auto_vals *v = vals;
  return hx_pmg_mem_per_node(&v->au.pmg.base, p, v->au.trial);
}

static int auto_levels(const hx_opt *o, const void *vals, int order, int *levels, int *n) {
  HX_CALL(hx_pmg_known_levels(o, &((const auto_vals *)vals)->au.pmg.base, order, levels, n));
  return HX_SUCCESS;
}

static int auto_create(hx_disc d, const void *vals, hx_pc *pc) {
  HX_CALL(hx_pc_create_auto(d, &((const auto_vals *)vals)->au, pc));
  return HX_SUCCESS;
}

const hx_pc_class hx_pc_type_auto = {.name = "auto",
                                     .group = &auto_group,
                                     .sub = {&hx_pc_coarse_group},
                                     .sub_at = {AT(c)},
                                     .size = sizeof(auto_vals),
                                     .defaults = auto_defaults,
                                     .read = auto_read,
                                     .write = auto_write,
                                     .mem_per_node = auto_mem_per_node,
                                     .levels = auto_levels,
                                     .create = auto_create};
#undef AT
