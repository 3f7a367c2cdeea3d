/* BDF1/2/3 time stepping (time/hx_time.h, docs/time.md): the order rise at
 * start-up, the effective right-hand side, the projected solve of each
 * step, and when to write a frame or a checkpoint and when to stop. The
 * writing itself is the caller's (hx_time_io). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_time.h"

/* BDFq: (beta0 u^{n+1} - sum_j alpha_j u^{n+1-j}) / dt (DESIGN.md) */
static const double bdf_beta0[HX_TIME_BDF_MAX] = {1.0, 1.5, 11.0 / 6.0};
static const double bdf_alpha[HX_TIME_BDF_MAX][HX_TIME_BDF_MAX] = {
    {1.0, 0, 0}, {2.0, -0.5, 0}, {3.0, -1.5, 1.0 / 3.0}};

double hx_time_bdf_beta0(int q) { return q >= 1 && q <= HX_TIME_BDF_MAX ? bdf_beta0[q - 1] : 0.0; }
double hx_time_bdf_alpha(int q, int j) {
  return q >= 1 && q <= HX_TIME_BDF_MAX && j >= 1 && j <= q ? bdf_alpha[q - 1][j - 1] : 0.0;
}
double hx_time_bdf_shift(int q, double dt) { return hx_time_bdf_beta0(q) / dt; }

/* The iterations the projected guess saved on a step, estimated: the solve
 * reduced its residual by rnorm / r0norm in `iterations` steps, a mean
 * contraction rho per iteration; the guess had already reduced ||b|| by the
 * gain, which at that rate takes log(gain) / log(rho) iterations. 0 without
 * a gain (< 1) or a contraction to measure. */
static double iterations_saved(const hx_pcg_result *r, double gain) {
  if (!(gain > 0.0 && gain < 1.0) || r->iterations <= 0 || !(r->r0norm > 0.0) || !(r->rnorm > 0.0)) return 0.0;
  const double rho = pow(r->rnorm / r->r0norm, 1.0 / r->iterations);
  return rho > 0.0 && rho < 1.0 ? log(gain) / log(rho) : 0.0;
}

/* The stepper's state, freed by hx_time_run on every path. */
typedef struct {
  const hx_time_opts *o;
  const hx_time_problem *p;
  const hx_time_io *io;
  hx_time_result *r;
  int k, K, N;
  double dt;
  int64_t nl;
  double *lev[HX_TIME_BDF_MAX]; /* u^n, u^{n-1}, ... (newest first) */
  double *unew, *feff;
  double **pbuf; /* host copies of the projection vectors (K), allocated at the first checkpoint or restart */
  int nlev;      /* levels held */
  int last_out;  /* the step of the last frame (-1: none) */
  hx_proj pj;
  hx_solve_result dr;
} tstep;

/* the order of the next step: it rises by one per level held up to k */
static int next_order(const tstep *S) { return S->nlev < S->k ? S->nlev : S->k; }

/* a new (empty) projection basis for the current operator */
static int new_proj(tstep *S) {
  if (!S->K) return HX_SUCCESS;
  hx_proj_destroy(&S->pj);
  HX_CALL(hx_proj_create(hx_disc_op(S->r->d), S->K, &S->pj));
  return HX_SUCCESS;
}

static int pbuf_alloc(tstep *S, int n) {
  for (int i = 0; i < n; i++)
    if (!S->pbuf[i])
      HX_CHECK(S->pbuf[i] = malloc(sizeof(double) * (size_t)(S->nl > 0 ? S->nl : 1)), HX_ERR_MEM, "out of memory");
  return HX_SUCCESS;
}

static int checkpoint(tstep *S, int step) {
  if (!S->io->checkpoint) return HX_SUCCESS;
  /* the basis belongs to the operator of the current shift: when the next
   * step's order rises (BDF start-up) the run drops it, so must a restart */
  const int np = hx_time_bdf_shift(next_order(S), S->dt) == S->r->shift ? hx_proj_size(S->pj) : 0;
  HX_CALL(pbuf_alloc(S, np));
  for (int i = 0; i < np; i++) HX_CALL(hx_proj_get(S->pj, i, S->pbuf[i]));
  const hx_time_state st = {step, step * S->dt, S->nlev, (const double *const *)S->lev, np,
                            (const double *const *)S->pbuf};
  HX_CALL(S->io->checkpoint(S->io->ctx, &st));
  return HX_SUCCESS;
}

/* the frame of step `step` (once per step) */
static int output(tstep *S, int step, const double *u) {
  if (!S->io->output || S->last_out == step) return HX_SUCCESS;
  HX_CALL(S->io->output(S->io->ctx, step, step * S->dt, u, S->feff));
  S->last_out = step;
  return HX_SUCCESS;
}

/* the levels at the start: a checkpoint's (restart) or the initial
 * condition at t = 0 and, with an exact start-up, the exact solution at t =
 * dt .. (k-1) dt; *n0: the step reached */
static int start(tstep *S, int *n0) {
  const hx_time_opts *o = S->o;
  *n0 = 0;
  if (o->restart) {
    HX_CHECK(S->io->resume, HX_ERR_ARG, "a restart needs the resume callback");
    HX_CALL(pbuf_alloc(S, S->K));
    hx_time_resume rs = {S->k, S->K, S->lev, S->pbuf, 0, 0, 0, -1, 0};
    HX_CALL(S->io->resume(S->io->ctx, &rs));
    S->nlev = rs.nlev, *n0 = rs.step, S->last_out = rs.last_output;
    S->r->complete = rs.complete;
    if (rs.nproj > 0 && S->pj) HX_CALL(hx_proj_set(S->pj, rs.nproj, (const double *const *)S->pbuf));
    return HX_SUCCESS;
  }
  HX_CALL(S->p->initial(S->p->ctx, 0, 0.0, S->lev[0]));
  S->nlev = 1;
  if (!o->exact_startup) return HX_SUCCESS;
  for (int j = 1; j < S->k && j <= S->N; j++) {
    for (int i = S->nlev; i > 0; i--) {
      double *tmp = S->lev[i];
      S->lev[i] = S->lev[i - 1], S->lev[i - 1] = tmp;
    }
    HX_CALL(S->p->initial(S->p->ctx, j, j * S->dt, S->lev[0]));
    S->nlev++, *n0 = j;
  }
  return HX_SUCCESS;
}

/* the data of step n into *a and the effective right-hand side into feff;
 * *stop = 1: the data are not finite after a solved step (the run stops
 * there, r->data_*) */
static int step_data(tstep *S, int n, double t, int q, hx_time_data *a, int *stop) {
  const hx_time_opts *o = S->o;
  memset(a, 0, sizeof *a);
  a->exact_due = (o->output_every > 0 && n % o->output_every == 0) || n == S->N ||
                 (o->error_every > 0 && n % o->error_every == 0);
  a->work = S->unew; /* free until the solve */
  const int err = S->p->data(S->p->ctx, t, a);
  if (err == HX_ERR_INPUT) {
    char msg[sizeof S->r->data_error];
    snprintf(msg, sizeof msg, "%s", hx_error_message());
    hx_error_clear();
    if (S->r->solved == 0)
      return HX_ERROR(HX_ERR_INPUT, "%s, at step %d (t = %.12g); nothing of this run is written", msg, n, t);
    snprintf(S->r->data_error, sizeof S->r->data_error, "%s", msg);
    S->r->data_failed = 1, S->r->data_step = n, S->r->data_t = t;
    *stop = 1;
    return HX_SUCCESS;
  }
  HX_CALL(err);
  const double *f = a->f;
  for (int64_t i = 0; i < S->nl; i++) {
    double s = 0;
    for (int j = 0; j < q; j++) s += bdf_alpha[q - 1][j] * S->lev[j][i];
    S->feff[i] = (f ? f[i] : 0.0) + s / S->dt;
  }
  return HX_SUCCESS;
}

/* the solve of step n into unew, from the newest level or the projection */
static int step_solve(tstep *S, int n, double t, const hx_time_data *a) {
  hx_time_result *r = S->r;
  if (S->io->solve_begin) HX_CALL(S->io->solve_begin(S->io->ctx, n, t, 0));
  HX_CALL(hx_solve_proj(r->d, r->pc, S->pj, S->feff, a->g, a->bn, a->exact, S->o->pcg, S->lev[0], S->unew, &S->dr));
  if (S->dr.pcg.reason != HX_INTERRUPTED) return HX_SUCCESS;
  /* a signal stopped the solve on every rank at the same iteration. The
   * step is finished: first a checkpoint of the state before it (the
   * interrupted solve changed neither the levels nor the projection basis),
   * so a kill while it finishes loses nothing; then the step again from its
   * start with the signal deferred, which gives the bits of a run without
   * the signal. A second signal ends the process. */
  HX_CALL(checkpoint(S, n - 1));
  hx_log(HX_LOG_NORMAL, "signal during step %d: checkpoint of step %d written; finishing step %d\n", n, n - 1, n);
  if (S->io->solve_begin) HX_CALL(S->io->solve_begin(S->io->ctx, n, t, 1));
  hx_signals_defer(1);
  int err = hx_solve_proj(r->d, r->pc, S->pj, S->feff, a->g, a->bn, a->exact, S->o->pcg, S->lev[0], S->unew, &S->dr);
  hx_signals_defer(0);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* a step's solve into the totals */
static void add_totals(hx_solve_result *tot, const hx_solve_result *dr) {
  tot->pcg.iterations += dr->pcg.iterations;
  tot->pcg.t_operator += dr->pcg.t_operator, tot->pcg.t_precond += dr->pcg.t_precond;
  tot->pcg.t_vector += dr->pcg.t_vector, tot->pcg.t_reduction += dr->pcg.t_reduction;
  tot->pcg.t_exchange += dr->pcg.t_exchange;
  tot->pcg.replacements += dr->pcg.replacements, tot->pcg.t_replace += dr->pcg.t_replace;
  tot->t_rhs += dr->t_rhs, tot->t_pc_setup += dr->t_pc_setup, tot->t_solve += dr->t_solve;
  tot->pcg.starts += dr->pcg.starts;
  tot->refinements += dr->refinements, tot->exact_residuals += dr->exact_residuals, tot->t_refine += dr->t_refine;
  tot->pcg.reason = dr->pcg.reason, tot->pcg.bnorm = dr->pcg.bnorm, tot->pcg.r0norm = dr->pcg.r0norm;
  tot->pcg.rnorm = dr->pcg.rnorm, tot->pcg.rel = dr->pcg.rel;
  tot->pcg.allreduces_per_iteration = dr->pcg.allreduces_per_iteration;
  tot->pcg.vector_passes_per_iteration = dr->pcg.vector_passes_per_iteration;
  if (dr->exact_known) tot->exact_known = 1, tot->err_l2 = dr->err_l2, tot->err_max = dr->err_max;
  tot->dofs = dr->dofs;
}

/* the solved step n: the new level, its row, its log line, the totals */
static int step_done(tstep *S, int n, double t, int q, int np_before, double ts) {
  const hx_solve_result *dr = &S->dr;
  double *old = S->lev[S->k - 1];
  for (int j = S->k - 1; j > 0; j--) S->lev[j] = S->lev[j - 1];
  S->lev[0] = S->unew, S->unew = old;
  if (S->nlev < S->k) S->nlev++;
  const double sec = hx_wtime() - ts;
  const double gain = dr->pcg.bnorm > 0 ? dr->pcg.r0norm / dr->pcg.bnorm : 0.0;
  const double saved = iterations_saved(&dr->pcg, gain);
  double mx[2] = {sec, dr->t_proj}; /* the step's and the projection's seconds: the slowest rank's */
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_DOUBLE, MPI_MAX, S->o->comm));
  const hx_time_step row = {n, q, t, dr, np_before, gain, saved, mx[0], mx[1]};
  if (S->io->step) HX_CALL(S->io->step(S->io->ctx, &row));
  char e1[32] = "";
  if (dr->exact_known) snprintf(e1, sizeof e1, "%.17g", dr->err_l2);
  hx_log(HX_LOG_NORMAL, "step %d  t = %-10.6g BDF%d  %4d iterations  rel %.2e  gain %.2e (~%.1f saved)%s%s  %.3f s\n",
         n, t, q, dr->pcg.iterations, dr->pcg.rel, gain, saved, dr->exact_known ? "  error " : "",
         dr->exact_known ? e1 : "", mx[0]);
  add_totals(&S->r->total, dr);
  S->r->solved++;
  S->r->last_step = n, S->r->t_end = t;
  return HX_SUCCESS;
}

/* step n: order, shift, data, solve, row; *stop: the run ends after it */
static int step(tstep *S, int n, int *stop) {
  hx_time_result *r = S->r;
  const double ts = hx_wtime();
  const int q = next_order(S);
  const double shift = hx_time_bdf_shift(q, S->dt);
  if (shift != r->shift) { /* BDF start-up: the order rose, so did beta0 */
    HX_CHECK(S->p->set_shift, HX_ERR_ARG, "the order rises at step %d: the problem needs set_shift", n);
    HX_CALL(S->p->set_shift(S->p->ctx, shift, &r->d, &r->pc));
    r->shift = shift, r->setups++;
    HX_CALL(new_proj(S));
  }
  const double t = n * S->dt;
  hx_time_data a;
  HX_CALL(step_data(S, n, t, q, &a, stop));
  if (*stop) return HX_SUCCESS;
  const int np_before = hx_proj_size(S->pj);
  HX_CALL(step_solve(S, n, t, &a));
  HX_CALL(step_done(S, n, t, q, np_before, ts));
  if (S->dr.pcg.reason < 0) { /* not converged: stop, report */
    r->failed = 1, *stop = 1;
    return HX_SUCCESS;
  }
  const hx_time_opts *o = S->o;
  if ((o->output_every > 0 && n % o->output_every == 0) || n == S->N) HX_CALL(output(S, n, S->lev[0]));
  if (o->checkpoint_every > 0 && n % o->checkpoint_every == 0 && n < S->N) HX_CALL(checkpoint(S, n));
  /* a signal between solves: every rank stops after the same step */
  int sig = hx_signal_pending();
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, o->comm));
  if (sig && n < S->N) r->interrupted = 1, *stop = 1;
  if (!*stop && S->io->stop && S->io->stop(S->io->ctx) && n < S->N) r->interrupted = 1, *stop = 1;
  return HX_SUCCESS;
}

static int run(tstep *S) {
  const hx_time_opts *o = S->o;
  hx_time_result *r = S->r;
  HX_CHECK(o->scheme >= 1 && o->scheme <= HX_TIME_BDF_MAX, HX_ERR_ARG, "BDF order %d: 1..%d", o->scheme,
           HX_TIME_BDF_MAX);
  HX_CHECK(o->dt > 0 && o->steps >= 0 && o->projection >= 0 && o->d && o->pcg && S->p->data && S->p->initial,
           HX_ERR_ARG, "hx_time_run: dt > 0, steps >= 0, a discretisation, solver options and the data callbacks");
  S->nl = hx_disc_num_l(o->d);
  const size_t bytes = sizeof(double) * (size_t)(S->nl > 0 ? S->nl : 1);
  for (int i = 0; i < S->k; i++) HX_CHECK(S->lev[i] = malloc(bytes), HX_ERR_MEM, "out of memory");
  HX_CHECK((S->unew = malloc(bytes)) && (S->feff = malloc(bytes)), HX_ERR_MEM, "out of memory");
  HX_CHECK(S->pbuf = calloc((size_t)(S->K > 0 ? S->K : 1), sizeof(double *)), HX_ERR_MEM, "out of memory");
  HX_CALL(new_proj(S));
  int n0 = 0;
  HX_CALL(start(S, &n0));
  r->first_step = n0 + 1, r->last_step = n0, r->t_end = n0 * S->dt;
  if (r->complete) return HX_SUCCESS;
  /* a fresh run's first frame: the initial state at t = 0 (the oldest level:
   * after an exact start-up the newer ones are at dt .. (k-1) dt) */
  if (!o->restart && o->output_every > 0) HX_CALL(output(S, 0, S->lev[S->nlev - 1]));
  int stop = 0;
  for (int n = n0 + 1; n <= S->N && !stop; n++) HX_CALL(step(S, n, &stop));
  /* the outputs so far: the last completed step's solution and a checkpoint
   * (after a restart at the case's last step: the outputs rebuilt from it) */
  const int last = r->last_step;
  if (!r->failed && last > 0 && (r->solved > 0 || n0 > 0)) {
    if (S->last_out != last && (r->solved > 0 || n0 >= S->N)) HX_CALL(output(S, last, S->lev[0]));
    HX_CALL(checkpoint(S, last));
  }
  return HX_SUCCESS;
}

int hx_time_run(const hx_time_opts *o, const hx_time_problem *p, const hx_time_io *io, hx_time_result *r) {
  HX_CHECK(o && p && io && r, HX_ERR_ARG, "hx_time_run: NULL argument");
  memset(r, 0, sizeof *r);
  r->d = o->d, r->pc = o->pc, r->shift = o->shift;
  tstep S;
  memset(&S, 0, sizeof S);
  S.o = o, S.p = p, S.io = io, S.r = r;
  S.k = o->scheme, S.K = o->projection, S.N = o->steps, S.dt = o->dt;
  S.last_out = -1;
  const int err = run(&S);
  for (int i = 0; i < HX_TIME_BDF_MAX; i++) free(S.lev[i]);
  for (int i = 0; S.pbuf && i < S.K; i++) free(S.pbuf[i]);
  free(S.pbuf), free(S.unew), free(S.feff);
  hx_proj_destroy(&S.pj);
  HX_CALL(err);
  return HX_SUCCESS;
}
