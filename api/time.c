/* hexcg_time_run: BDF time stepping of the solver's problem through
 * time/'s hx_time_run, the data at each step's time from the problem, the
 * initial condition and the monitor at the local nodes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_api.h"
#include "hx_time.h"

typedef struct {
  hexcg_solver *s;
  const hexcg_time *t;
  double *hf, *hg, *hbn; /* the data at the step's time (L) */
  double *un;            /* a solution at the nodes (the monitor's, the result's) */
  double *u_out;         /* the caller's final solution (may be NULL) */
  double exact_t;        /* the exact field's time */
  hexcg_result last;
  int steps, iterations, stop;
} tctx;

/* the exact solution at tc->exact_t (an hx_field of the problem's hx_tfield) */
static double exact_at(const void *ctx, double x, double y, double z) {
  const tctx *tc = (const tctx *)ctx;
  return tc->s->exact_tf.fn(tc->s->exact_tf.ctx, x, y, z, tc->exact_t);
}

static int data_cb(void *ctx, double t, hx_time_data *a) {
  tctx *tc = (tctx *)ctx;
  hexcg_solver *s = tc->s;
  HX_CALL(hx_problem_data(s->prob, s->d, t, 0, &tc->hf, &tc->hg, &tc->hbn));
  if (s->g_user) hx_api_nodes_to_l(hx_disc_gs(s->d), s->g_user, tc->hg);
  a->f = tc->hf, a->g = tc->hg, a->bn = tc->hbn;
  a->exact = (hx_field){NULL, NULL, NULL};
  if (a->exact_due && s->exact_tf.fn && !s->g_user) {
    tc->exact_t = t;
    a->exact = (hx_field){exact_at, tc, NULL};
  }
  return HX_SUCCESS;
}

static int shift_cb(void *ctx, double shift, hx_disc *d, hx_pc *pc) {
  hexcg_solver *s = ((tctx *)ctx)->s;
  HX_CALL(hx_api_set_shift(s, shift));
  *d = s->d, *pc = s->pc;
  return HX_SUCCESS;
}

/* level 0: the caller's u0, else the exact solution at t = 0, else 0 */
static int initial_cb(void *ctx, int level, double t, double *u) {
  tctx *tc = (tctx *)ctx;
  hexcg_solver *s = tc->s;
  const int64_t nl = hx_disc_num_l(s->d);
  HX_CHECK(level == 0, HX_ERR_INTERNAL, "hexcg_time_run: no exact start-up");
  if (tc->t->u0) {
    hx_api_nodes_to_l(hx_disc_gs(s->d), tc->t->u0, u);
  } else if (s->exact_tf.fn) {
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(s->d, &X, &Y, &Z));
    for (int64_t i = 0; i < nl; i++) u[i] = s->exact_tf.fn(s->exact_tf.ctx, X[i], Y[i], Z[i], t);
  } else {
    memset(u, 0, sizeof(double) * (size_t)nl);
  }
  return HX_SUCCESS;
}

static int step_cb(void *ctx, const hx_time_step *st) {
  tctx *tc = (tctx *)ctx;
  const hx_solve_result *dr = st->solve;
  hexcg_result *r = &tc->last;
  memset(r, 0, sizeof *r);
  r->iterations = dr->pcg.iterations, r->converged = dr->pcg.reason > 0;
  snprintf(r->reason, sizeof r->reason, "%s", hx_reason_name(dr->pcg.reason));
  r->residual0 = dr->pcg.r0norm, r->residual = dr->pcg.rnorm, r->rel_residual = dr->pcg.rel;
  r->error_known = dr->exact_known, r->error_l2 = dr->err_l2, r->error_max = dr->err_max;
  r->seconds = st->seconds;
  tc->steps = st->step, tc->iterations += dr->pcg.iterations;
  return HX_SUCCESS;
}

/* every solved step (and the last): the monitor, agreed stop; the result */
static int output_cb(void *ctx, int step, double t, const double *u, double *work) {
  (void)work;
  tctx *tc = (tctx *)ctx;
  hexcg_solver *s = tc->s;
  if (step == 0) return HX_SUCCESS;
  hx_api_l_to_nodes(hx_disc_gs(s->d), u, tc->un);
  if (tc->u_out) memcpy(tc->u_out, tc->un, sizeof(double) * (size_t)hx_gs_num_local(hx_disc_gs(s->d)));
  if (tc->t->monitor) {
    int stop = tc->t->monitor(tc->t->ctx, step, t, tc->un, &tc->last) != 0;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, s->comm));
    tc->stop = stop;
  }
  return HX_SUCCESS;
}

static int stop_cb(void *ctx) { return ((tctx *)ctx)->stop; }

static int check_time(const hexcg_time *t) {
  HX_CHECK(t->scheme >= 0 && t->scheme <= HX_TIME_BDF_MAX, HX_ERR_INPUT,
           "hexcg_time.scheme = %d: give the BDF order 1, 2 or 3 (0: 2)", t->scheme);
  HX_CHECK(t->dt > 0.0 && isfinite(t->dt), HX_ERR_INPUT, "hexcg_time.dt = %g: give a time step > 0", t->dt);
  HX_CHECK(t->steps >= 1, HX_ERR_INPUT, "hexcg_time.steps = %d: give at least 1 step", t->steps);
  HX_CHECK(t->projection >= -1, HX_ERR_INPUT,
           "hexcg_time.projection = %d: give the solutions kept (0: 8; -1: off)", t->projection);
  return HX_SUCCESS;
}

static int time_steps(hexcg_solver *s, const hexcg_time *t, tctx *tc, hexcg_time_result *r) {
  HX_CALL(check_time(t));
  const int64_t ng = hx_gs_num_local(hx_disc_gs(s->d));
  if (t->u0) {
    int64_t bad = -1;
    for (int64_t i = 0; i < ng && bad < 0; i++)
      if (!isfinite(t->u0[i])) bad = i;
    HX_CHECK(bad < 0, HX_ERR_INPUT, "hexcg_time.u0[%lld] = %g on rank %d is not finite: give finite values",
             (long long)bad, bad >= 0 ? t->u0[bad] : 0.0, s->rank);
  }
  HX_CALL(HX_ALLOC(&tc->un, ng > 0 ? ng : 1));
  hx_time_opts o;
  memset(&o, 0, sizeof o);
  o.comm = s->comm;
  o.scheme = t->scheme ? t->scheme : 2;
  o.dt = t->dt, o.steps = t->steps;
  o.projection = t->projection == 0 ? 8 : t->projection < 0 ? 0 : t->projection;
  o.output_every = 1; /* every step to the monitor (and the last to u) */
  const double shift0 = hx_time_bdf_shift(1, t->dt);
  HX_CALL(hx_api_set_shift(s, shift0));
  o.d = s->d, o.pc = s->pc, o.shift = shift0, o.pcg = &s->po;
  const hx_time_problem p = {tc, data_cb, shift_cb, initial_cb};
  hx_time_io io;
  memset(&io, 0, sizeof io);
  io.ctx = tc, io.step = step_cb, io.output = output_cb, io.stop = stop_cb;
  hx_time_result tr;
  HX_CALL(hx_time_run(&o, &p, &io, &tr));
  r->steps = tr.solved, r->t = tr.t_end, r->iterations = tc->iterations, r->failed = tr.failed;
  r->last = tc->last;
  return HX_SUCCESS;
}

int hexcg_time_run(hexcg_solver *s, const hexcg_time *t, double *u, hexcg_time_result *r) {
  HX_API_CHECK_SOLVER(s, "hexcg_time_run");
  if (!t) return hx_api_arg("%s: the time options are NULL", "hexcg_time_run");
  hx_api_saved sv;
  hx_api_enter(s, &sv);
  hexcg_time_result res;
  memset(&res, 0, sizeof res);
  tctx tc;
  memset(&tc, 0, sizeof tc);
  tc.s = s, tc.t = t, tc.u_out = u;
  const double shift = s->shift;
  int err = hx_error_agree(s->comm, time_steps(s, t, &tc, &res));
  /* the caller's shift again (also after a failure, when the solver still stands) */
  if (s->d && s->shift != shift) {
    const int e = hx_error_agree(s->comm, hx_api_set_shift(s, shift));
    if (!err) err = e;
  }
  free(tc.hf), free(tc.hg), free(tc.hbn), free(tc.un);
  if (r) *r = res;
  const int st = hx_api_fail(err);
  hx_api_leave(&sv);
  return st;
}
