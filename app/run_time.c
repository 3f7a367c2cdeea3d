/* The time loop of `hexcg run` for a case with a time: section
 * (docs/time.md): BDF1/2/3 for du/dt - div(kappa grad u) + lambda u = f(x, t),
 * each step the Helmholtz solve of the run's operator (built once with
 * lambda + beta0/dt by run_case.c) with the initial guess projected on the
 * earlier solutions; steps.csv, the per-step history, the temporal
 * collection, checkpoints, signals and --restart. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_app.h"
#include "hx_precond.h"
#include "hx_run.h"

#define HX_BDF_MAX 3

/* BDFq: (beta0 u^{n+1} - sum_j alpha_j u^{n+1-j}) / dt (DESIGN.md) */
static const double bdf_beta0[HX_BDF_MAX] = {1.0, 1.5, 11.0 / 6.0};
static const double bdf_alpha[HX_BDF_MAX][HX_BDF_MAX] = {{1.0, 0, 0}, {2.0, -0.5, 0}, {3.0, -1.5, 1.0 / 3.0}};

double hx_run_bdf_shift(int q, double dt) { return bdf_beta0[q - 1] / dt; }


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

/* growing text (steps.csv) */
typedef struct {
  char *b;
  size_t n, cap;
} tbuf;
static int tb_printf(tbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tb_printf(tbuf *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->b ? t->b + t->n : NULL, t->b ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) return HX_ERROR(HX_ERR_INTERNAL, "format error");
    if (t->b && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return HX_SUCCESS;
    }
    size_t cap = t->cap ? 2 * t->cap : 65536;
    while (cap < t->n + (size_t)k + 1) cap *= 2;
    char *nb = realloc(t->b, cap);
    HX_CHECK(nb, HX_ERR_MEM, "out of memory");
    t->b = nb, t->cap = cap;
  }
}

/* The loop's state, freed by hx_run_time on every path. */
typedef struct {
  hx_run_time_env *env;
  const hx_case *cs;
  MPI_Comm comm;
  int k, K;                     /* BDF order, projection capacity */
  int64_t nl;
  double *lev[HX_BDF_MAX];      /* u^n, u^{n-1}, ... (host L-vectors, newest first) */
  double *unew, *feff, *pbuf[64]; /* pbuf: allocated at the first checkpoint */
  int nlev;                     /* levels held */
  hx_proj pj;
  hx_run_monitor mon;
  tbuf steps;
  char **files;                 /* the temporal collection: series/ file names and times */
  double *times;
  int nout, capout, last_out;
  uint64_t mesh_hash;
  const char *ckdir;            /* where checkpoints go */
  int checkpoints;
} tloop;

static int ensure_proj(tloop *L) {
  if (!L->K) return HX_SUCCESS;
  hx_proj_destroy(&L->pj);
  HX_CALL(hx_proj_create(hx_disc_op(*L->env->d), L->K, &L->pj));
  return HX_SUCCESS;
}

static int write_checkpoint(tloop *L, int step) {
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  const int np = hx_proj_size(L->pj);
  for (int i = 0; i < np; i++) {
    if (!L->pbuf[i]) HX_CHECK(L->pbuf[i] = malloc(sizeof(double) * (size_t)(L->nl > 0 ? L->nl : 1)), HX_ERR_MEM,
                              "out of memory");
    HX_CALL(hx_proj_get(L->pj, i, L->pbuf[i]));
  }
  const double t = hx_wtime();
  HX_CALL(hx_checkpoint_write(L->comm, L->ckdir, L->cs, L->mesh_hash, step, step * L->cs->time.dt, L->nlev,
                              (const double *const *)L->lev, np, (const double *const *)L->pbuf, L->cs->order,
                              hx_disc_num_elements(d), hx_mesh_element_global_ids(L->env->m), X, Y, Z));
  *L->env->t_io += hx_wtime() - t;
  L->checkpoints++;
  hx_log(HX_LOG_VERBOSE, "checkpoint: step %d written to %s/checkpoint\n", step, L->ckdir);
  return HX_SUCCESS;
}

/* the newest level into series/solution_STEP.h5 (the stage's series folder) */
static int write_output(tloop *L, int step) {
  const hx_case *cs = L->cs;
  if (!cs->output.solution || L->last_out == step) return HX_SUCCESS;
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  char sdir[4200], name[64];
  snprintf(sdir, sizeof sdir, "%s/series", cs->output.dir);
  int err = HX_SUCCESS;
  if (L->env->ctx->rank == 0 && L->nout == 0 && mkdir(sdir, 0777) != 0 && errno != EEXIST)
    err = HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", sdir, strerror(errno));
  HX_CALL(hx_io_agree_error(L->comm, err));
  snprintf(name, sizeof name, "solution_%06d.h5", step);
  /* the exact solution at this step's time, if known (feff is free between steps) */
  if (cs->problem.exact) hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, step * cs->time.dt, L->feff);
  const double t0 = hx_wtime();
  HX_CALL(hx_io_write_solution_file(L->comm, sdir, name, 0, cs->order, hx_disc_num_elements(d),
                                    hx_mesh_element_global_ids(L->env->m), X, Y, Z, L->lev[0],
                                    cs->problem.exact ? L->feff : NULL));
  *L->env->t_io += hx_wtime() - t0;
  if (L->nout == L->capout) {
    int cap = L->capout ? 2 * L->capout : 64;
    HX_CALL(hx_realloc((size_t)cap, sizeof(char *), &L->files));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &L->times));
    L->capout = cap;
  }
  size_t n = strlen(name) + 8;
  HX_CHECK(L->files[L->nout] = malloc(n), HX_ERR_MEM, "out of memory");
  snprintf(L->files[L->nout], n, "series/%s", name);
  L->times[L->nout++] = step * cs->time.dt;
  L->last_out = step;
  return HX_SUCCESS;
}

/* u at t = 0 into lev[0] (and the exact start-up levels); returns the step reached */
static int initial_levels(tloop *L, int *n0) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_disc d = *env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  *n0 = 0;
  if (env->restart) {
    char dir[4300];
    HX_CALL(hx_checkpoint_find(env->restart, dir, sizeof dir));
    for (int i = 0; i < L->K; i++)
      if (!L->pbuf[i]) HX_CHECK(L->pbuf[i] = malloc(sizeof(double) * (size_t)(L->nl > 0 ? L->nl : 1)), HX_ERR_MEM,
                                "out of memory");
    int step = 0, nlev = 0, np = 0;
    double t = 0;
    const double t0 = hx_wtime();
    HX_CALL(hx_checkpoint_read(L->comm, dir, cs, L->mesh_hash, cs->order, hx_disc_num_elements(d),
                               hx_mesh_element_global_ids(env->m), X, Y, Z, L->k, L->lev, L->K, L->pbuf, &step, &t,
                               &nlev, &np));
    *env->t_io += hx_wtime() - t0;
    L->nlev = nlev, *n0 = step;
    if (np > 0 && L->pj) HX_CALL(hx_proj_set(L->pj, np, (const double *const *)L->pbuf));
    hx_log(HX_LOG_NORMAL, "restart: step %d (t = %g) from %s, %d level%s, %d projection vector%s\n", step, t, dir,
           nlev, nlev > 1 ? "s" : "", np, np == 1 ? "" : "s");
    return HX_SUCCESS;
  }
  switch (cs->time.initial_kind) {
    case HX_TIME_INIT_EXPR: hx_expr_eval_array_t(cs->time.initial, (size_t)L->nl, X, Y, Z, 0.0, L->lev[0]); break;
    case HX_TIME_INIT_EXACT: hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, 0.0, L->lev[0]); break;
    case HX_TIME_INIT_FILE: {
      const double t0 = hx_wtime();
      HX_CALL(hx_io_read_solution_at(L->comm, cs->time.initial_file, cs->order, hx_disc_num_elements(d),
                                     hx_mesh_element_global_ids(env->m), X, Y, Z, L->lev[0]));
      *env->t_io += hx_wtime() - t0;
      break;
    }
  }
  HX_CALL(hx_io_agree_error(
      L->comm, hx_case_check_finite(cs, "time.initial", cs->time.initial, (size_t)L->nl, X, Y, Z, L->lev[0])));
  L->nlev = 1;
  /* with the exact solution known, BDFk starts from it at t = dt .. (k-1) dt:
   * the full order (and its operator) from the first solved step */
  if (cs->time.initial_kind == HX_TIME_INIT_EXACT && L->k > 1) {
    for (int j = 1; j < L->k && j <= cs->time.steps; j++) {
      for (int i = L->nlev; i > 0; i--) {
        double *tmp = L->lev[i];
        L->lev[i] = L->lev[i - 1], L->lev[i - 1] = tmp;
      }
      hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, j * cs->time.dt, L->lev[0]);
      L->nlev++, *n0 = j;
    }
  }
  return HX_SUCCESS;
}

static int loop(tloop *L) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_run_result *res = env->res;
  const double dt = cs->time.dt;
  const int N = cs->time.steps;
  hx_disc d = *env->d;
  L->nl = hx_disc_num_l(d);
  const size_t bytes = sizeof(double) * (size_t)(L->nl > 0 ? L->nl : 1);
  for (int i = 0; i < L->k; i++) HX_CHECK(L->lev[i] = malloc(bytes), HX_ERR_MEM, "out of memory");
  HX_CHECK((L->unew = malloc(bytes)) && (L->feff = malloc(bytes)), HX_ERR_MEM, "out of memory");
  /* L->pbuf (host copies of the projection vectors) only when a checkpoint is read or written */
  {
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
    HX_CALL(hx_checkpoint_mesh_hash(L->comm, cs->order, hx_disc_num_elements(d), hx_mesh_element_global_ids(env->m),
                                    X, Y, Z, &L->mesh_hash));
  }
  HX_CALL(ensure_proj(L));
  int n0 = 0;
  HX_CALL(initial_levels(L, &n0));

  hx_pcg_opts po;
  hx_run_pcg_opts(cs, &L->mon, &po);
  HX_CALL(hx_history_create(&L->mon.hist));
  HX_CALL(hx_progress_create(0, 0, cs->solver.tol, stdout, &L->mon.prog)); /* one line per step instead */
  L->mon.t0 = hx_wtime();
  HX_CALL(tb_printf(&L->steps,
                    "step,time,order,iterations,initial_residual,final_residual,rel_residual,error_l2,error_max,"
                    "projection_vectors,projection_gain,iterations_saved,seconds\n"));

  hx_solve_result *tot = env->dr, dr;
  memset(tot, 0, sizeof *tot);
  res->time.enabled = 1;
  res->time.first_step = n0 + 1;
  res->time.last_step = n0;
  res->time.t_end = n0 * dt;
  int done = 0, interrupted = 0, failed = 0;
  double gain_sum = 0, saved_sum = 0, t_after = 0;
  for (int n = n0 + 1; n <= N; n++) {
    const double ts = hx_wtime();
    const int q = L->nlev < L->k ? L->nlev : L->k;
    const double shift = hx_run_bdf_shift(q, dt);
    if (shift != env->shift) { /* BDF start-up: the order rose, so did beta0 */
      HX_CALL(env->reshift(env->arg, shift));
      env->shift = shift, env->setups++;
      d = *env->d;
      HX_CALL(ensure_proj(L));
    }
    const double t = n * dt;
    HX_CALL(env->eval(env->arg, t));
    const double *hf = *env->hf;
    for (int64_t i = 0; i < L->nl; i++) {
      double s = 0;
      for (int j = 0; j < q; j++) s += bdf_alpha[q - 1][j] * L->lev[j][i];
      L->feff[i] = hf[i] + s / dt;
    }
    hx_history_set_step(L->mon.hist, n, t);
    /* the error norms (an over-integrated quadrature of the exact solution: a
     * large part of a cheap step) every error_every steps, at output steps
     * and at the last */
    const int out_due = (cs->time.output_every > 0 && n % cs->time.output_every == 0) || n == N;
    const int err_due = (cs->time.error_every > 0 && n % cs->time.error_every == 0) || out_due;
    hx_run_texpr ex = {cs->problem.exact, t};
    hx_field exact = {cs->problem.exact && err_due ? hx_run_texpr_fn : NULL, &ex};
    const int np_before = hx_proj_size(L->pj);
    HX_CALL(hx_solve_proj(d, *env->pc, L->pj, L->feff, *env->hg, *env->hbn, exact, &po, L->lev[0], L->unew, &dr));
    if (dr.pcg.reason == HX_INTERRUPTED) { /* a signal: the step is dropped, the last one is checkpointed */
      interrupted = 1;
      break;
    }
    /* the new level */
    double *old = L->lev[L->k - 1];
    for (int j = L->k - 1; j > 0; j--) L->lev[j] = L->lev[j - 1];
    L->lev[0] = L->unew, L->unew = old;
    if (L->nlev < L->k) L->nlev++;
    const double sec = hx_wtime() - ts;
    const double gain = dr.pcg.bnorm > 0 ? dr.pcg.r0norm / dr.pcg.bnorm : 0.0;
    const double saved = iterations_saved(&dr.pcg, gain);
    double smax = sec;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &smax, 1, MPI_DOUBLE, MPI_MAX, L->comm));
    char e1[32] = "", e2[32] = "";
    if (dr.exact_known) snprintf(e1, sizeof e1, "%.17g", dr.err_l2), snprintf(e2, sizeof e2, "%.17g", dr.err_max);
    HX_CALL(tb_printf(&L->steps, "%d,%.17g,%d,%d,%.17g,%.17g,%.17g,%s,%s,%d,%.17g,%.3f,%.6g\n", n, t, q,
                      dr.pcg.iterations, dr.pcg.r0norm, dr.pcg.rnorm, dr.pcg.rel, e1, e2, np_before, gain, saved, smax));
    hx_log(HX_LOG_NORMAL, "step %d  t = %-10.6g BDF%d  %4d iterations  rel %.2e  gain %.2e (~%.1f saved)%s%s  %.3f s\n",
           n, t, q, dr.pcg.iterations, dr.pcg.rel, gain, saved, dr.exact_known ? "  error " : "",
           dr.exact_known ? e1 : "", smax);
    /* totals */
    tot->pcg.iterations += dr.pcg.iterations;
    tot->pcg.t_operator += dr.pcg.t_operator, tot->pcg.t_precond += dr.pcg.t_precond;
    tot->pcg.t_vector += dr.pcg.t_vector, tot->pcg.t_reduction += dr.pcg.t_reduction;
    tot->pcg.t_exchange += dr.pcg.t_exchange;
    tot->pcg.replacements += dr.pcg.replacements, tot->pcg.t_replace += dr.pcg.t_replace;
    tot->t_rhs += dr.t_rhs, tot->t_pc_setup += dr.t_pc_setup, tot->t_solve += dr.t_solve;
    tot->refinements += dr.refinements, tot->exact_residuals += dr.exact_residuals, tot->t_refine += dr.t_refine;
    tot->pcg.reason = dr.pcg.reason, tot->pcg.bnorm = dr.pcg.bnorm, tot->pcg.r0norm = dr.pcg.r0norm;
    tot->pcg.rnorm = dr.pcg.rnorm, tot->pcg.rel = dr.pcg.rel;
    tot->pcg.allreduces_per_iteration = dr.pcg.allreduces_per_iteration;
    tot->pcg.vector_passes_per_iteration = dr.pcg.vector_passes_per_iteration;
    if (dr.exact_known) tot->exact_known = 1, tot->err_l2 = dr.err_l2, tot->err_max = dr.err_max;
    tot->dofs = dr.dofs;
    gain_sum += gain, saved_sum += saved;
    if (done == 0) res->time.t_step_first = smax;
    else t_after += smax;
    done++;
    res->time.last_step = n, res->time.t_end = t;
    if (dr.pcg.reason < 0) { /* not converged: stop, report */
      failed = 1;
      break;
    }
    if (out_due) HX_CALL(write_output(L, n));
    if (cs->time.checkpoint_every > 0 && n % cs->time.checkpoint_every == 0 && n < N) HX_CALL(write_checkpoint(L, n));
    /* a signal between solves: every rank stops after the same step */
    int sig = hx_signal_pending();
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, L->comm));
    if (sig && n < N) {
      interrupted = 1;
      break;
    }
  }
  /* the outputs so far: the last completed step's solution and a checkpoint */
  const int last = res->time.last_step;
  if (!failed && last > 0) {
    if (done > 0 || n0 > 0) {
      if (L->last_out != last && done > 0) HX_CALL(write_output(L, last));
      HX_CALL(write_checkpoint(L, last));
    }
  }
  const double t0 = hx_wtime();
  if (cs->output.solution && L->nout > 0) {
    int err = env->ctx->rank != 0 ? HX_SUCCESS
                                  : hx_io_write_solution_series(cs->output.dir, cs->order,
                                                                (long long)hx_mesh_num_global_elements(env->m),
                                                                cs->problem.exact != NULL, L->nout,
                                                                (const char *const *)L->files, L->times);
    HX_CALL(hx_io_agree_error(L->comm, err));
  }
  if (cs->output.history) HX_CALL(hx_history_write(L->mon.hist, L->comm, cs->output.dir));
  {
    int err = HX_SUCCESS;
    if (env->ctx->rank == 0) {
      char p[4200];
      snprintf(p, sizeof p, "%s/steps.csv", cs->output.dir);
      err = hx_io_write_file_atomic(p, L->steps.b, L->steps.n);
    }
    HX_CALL(hx_io_agree_error(L->comm, err));
  }
  *env->t_io += hx_wtime() - t0;

  /* summary.yaml: the last step's solve, the totals */
  res->dofs = hx_disc_num_dofs(*env->d);
  res->iterations = done ? tot->pcg.iterations : 0;
  res->converged = !failed && !interrupted;
  snprintf(res->reason, sizeof res->reason, "%s",
           interrupted ? "interrupted" : failed ? hx_reason_name(tot->pcg.reason) : done ? hx_reason_name(tot->pcg.reason) : "converged_rtol");
  res->residual0 = tot->pcg.r0norm, res->residual = tot->pcg.rnorm, res->rel_residual = tot->pcg.rel;
  res->exact_known = tot->exact_known, res->error_l2 = tot->err_l2, res->error_max = tot->err_max;
  res->time.iterations = tot->pcg.iterations;
  res->time.iterations_mean = done ? (double)tot->pcg.iterations / done : 0.0;
  res->time.gain_mean = done ? gain_sum / done : 0.0;
  res->time.saved = saved_sum;
  res->time.t_step_mean = done > 1 ? t_after / (done - 1) : 0.0;
  res->time.setups = env->setups;
  res->time.interrupted = interrupted;
  res->time.checkpoints = L->checkpoints;
  res->time.outputs = L->nout;
  return HX_SUCCESS;
}

int hx_run_time(hx_run_time_env *env) {
  tloop L;
  memset(&L, 0, sizeof L);
  L.env = env, L.cs = env->cs, L.comm = env->ctx->comm;
  L.k = env->cs->time.scheme + 1;
  L.K = env->cs->solver.projection;
  L.ckdir = env->final_dir ? env->final_dir : env->cs->output.dir;
  L.last_out = -1;
  int err = loop(&L);
  for (int i = 0; i < HX_BDF_MAX; i++) free(L.lev[i]);
  for (int i = 0; i < 64; i++) free(L.pbuf[i]);
  free(L.unew), free(L.feff), free(L.steps.b);
  for (int i = 0; i < L.nout; i++) free(L.files[i]);
  free(L.files), free(L.times);
  hx_proj_destroy(&L.pj);
  hx_history_destroy(&L.mon.hist);
  hx_progress_destroy(&L.mon.prog);
  HX_CALL(err);
  return HX_SUCCESS;
}
