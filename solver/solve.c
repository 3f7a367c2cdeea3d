/* The solve driver: right-hand side, preconditioner setup, PCG, solution
 * and error norms of one discrete problem (see hx_solver.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"

/* The monitor of a correction solve: its iterations continue the count of
 * the solves before it; its iteration 0 (the residual the outer loop has
 * already reported) is not passed on. */
typedef struct {
  const hx_pcg_opts *o;
  int base;
  double scale_inv; /* 1 / ||b|| of the outer problem */
} refine_monitor;

static void refine_monitor_cb(void *ctx, int it, double rnorm, double rel) {
  const refine_monitor *m = (const refine_monitor *)ctx;
  (void)rel;
  if (it > 0 && m->o->monitor)
    m->o->monitor(m->o->monitor_ctx, m->base + it, rnorm, rnorm * m->scale_inv);
}

/* Split geometry: the Krylov solve ran on the operator with FP32
 * deviations, whose solution differs from the FP64 problem's by ~1e-8
 * relative in the residual. Here r = b - A64 x with the FP64 operator opx
 * (b is the FP64 right-hand side, hx_disc_rhs); while ||r|| is above the
 * tolerance, solve A_split d = r with the same PCG to half the tolerance
 * and add d (iterative refinement: each step shrinks the gap by the
 * operator's relative perturbation). res->pcg then reports the true FP64
 * residual. Stops when the tolerance is met, the iteration budget is spent
 * or a step does not halve the true residual (the tolerance is below what
 * the FP64 operator itself attains). Entered after PCG stopped at its
 * iteration limit, it only reports the FP64 residual. */
static int refine(hx_op op, hx_op opx, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *opts,
                  hx_solve_result *res, double *d_r, double *d_d) {
  hx_backend b = hx_op_backend(op);
  MPI_Comm comm = hx_gs_comm(hx_op_gs(op));
  const int64_t ng = hx_op_size(op), nown = hx_op_owned(op);
  const size_t gbytes = sizeof(double) * (size_t)ng;
  hx_pcg_result *R = &res->pcg;
  const double rtol_abs = opts->rtol * R->bnorm, tol = fmax(rtol_abs, opts->atol);
  const double scale = R->bnorm > 0 ? R->bnorm : 1.0;
  double prev = INFINITY;
  for (;;) {
    double t0 = hx_wtime();
    HX_CALL(hx_op_apply(opx, d_x, d_r, NULL));
    HX_CALL(hx_array_axpby(b, ng, d_r, 1.0, d_b, -1.0)); /* r = b - A64 x */
    double rr;
    HX_CALL(hx_array_dot(b, nown, d_r, d_r, &rr));
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &rr, 1, MPI_DOUBLE, MPI_SUM, comm));
    res->t_refine += hx_wtime() - t0;
    if (opx != op) res->exact_residuals++; /* the split geometry's FP64 residuals (the summary's count) */
    const double rn = sqrt(rr);
    R->rnorm = rn, R->rel = rn / scale;
    if (R->reason < 0) return HX_SUCCESS; /* PCG stopped without converging: report, keep its reason */
    if (!isfinite(rn)) {
      R->reason = HX_DIVERGED_NAN;
      return HX_SUCCESS;
    }
    if (rn <= tol) {
      R->reason = rn <= rtol_abs ? HX_CONVERGED_RTOL : HX_CONVERGED_ATOL;
      return HX_SUCCESS;
    }
    if (rn > 0.5 * prev) {
      R->reason = HX_DIVERGED_STAGNATION;
      return HX_SUCCESS;
    }
    if (R->iterations >= opts->max_iterations) {
      R->reason = HX_DIVERGED_MAX_IT;
      return HX_SUCCESS;
    }
    prev = rn;
    hx_pcg_opts o = *opts;
    refine_monitor m = {opts, R->iterations, 1.0 / scale};
    o.rtol = 0.0, o.atol = 0.5 * tol;
    o.max_iterations = opts->max_iterations - R->iterations;
    o.monitor = refine_monitor_cb, o.monitor_ctx = &m;
    hx_pcg_result c;
    HX_CALL(hx_mem_zero(b, d_d, gbytes));
    HX_CALL(hx_pcg_solve(op, pc, d_r, d_d, &o, &c));
    R->iterations += c.iterations;
    R->t_operator += c.t_operator, R->t_precond += c.t_precond;
    R->t_vector += c.t_vector, R->t_reduction += c.t_reduction, R->t_exchange += c.t_exchange;
    R->replacements += c.replacements, R->t_replace += c.t_replace;
    R->starts += c.starts;
    res->refinements++;
    if (c.reason < 0 && c.reason != HX_DIVERGED_MAX_IT) {
      R->reason = c.reason;
      return HX_SUCCESS;
    }
    HX_CALL(hx_array_axpby(b, ng, d_x, 1.0, d_d, 1.0));
  }
}

/* Scale-safe norms: ||b||^2 of a problem scaled far from 1 (kappa ~ 1e-155
 * with the data to match, or everything times 1e-200) underflows to 0 or
 * overflows, and PCG then stops at iteration 0 "converged" with a wrong
 * answer. Such a b is scaled by a power of two s (exact: the iterates are
 * s times those of the unscaled problem, bit for bit where those do not
 * under- or overflow) so that ||s b|| is about 1; s = 1, and nothing
 * changes, when ||b|| is within [2^-40, 2^40] or b = 0: the FP32
 * preconditioners hold r in float, whose range is far narrower than
 * double's (a b of 1e-50 rounded to 0 there). */
static int rhs_scale(hx_backend b, MPI_Comm comm, int64_t ng, int64_t nown, double *d_b, double *s) {
  *s = 1.0;
  double bb;
  HX_CALL(hx_array_dot(b, nown, d_b, d_b, &bb));
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &bb, 1, MPI_DOUBLE, MPI_SUM, comm));
  /* the common case untouched; NaN data is PCG's to report (diverged_nan) */
  if ((bb >= 0x1p-80 && bb <= 0x1p80) || isnan(bb)) return HX_SUCCESS;
  int e = 0;
  if (bb == 0 || !isfinite(bb)) {
    /* every square underflowed (|b_i| < 2^-537: times 2^600 they no longer do,
     * and a nonzero one is then at least 2^-474) or overflowed */
    e = bb == 0 ? 600 : -600;
    HX_CALL(hx_array_axpby(b, ng, d_b, ldexp(1.0, e), d_b, 0.0));
    HX_CALL(hx_array_dot(b, nown, d_b, d_b, &bb));
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &bb, 1, MPI_DOUBLE, MPI_SUM, comm));
    if (bb == 0) { /* b = 0: undo (exact) */
      HX_CALL(hx_array_axpby(b, ng, d_b, ldexp(1.0, -e), d_b, 0.0));
      return HX_SUCCESS;
    }
  }
  if (!(isfinite(bb) && bb > 0)) { /* inf data: PCG reports it */
    *s = ldexp(1.0, e);
    return HX_SUCCESS;
  }
  /* ||b|| into [1, 2), the scale kept representable */
  int f = -ilogb(sqrt(bb));
  if (e + f > 1000) f = 1000 - e;
  if (e + f < -1000) f = -1000 - e;
  HX_CALL(hx_array_axpby(b, ng, d_b, ldexp(1.0, f), d_b, 0.0));
  *s = ldexp(1.0, e + f);
  return HX_SUCCESS;
}

typedef struct {
  const hx_pcg_opts *o;
  double inv; /* 1 / s */
} scaled_monitor;

/* ---- null space (pure Neumann, hx_disc_nullspace; docs/solver.md) ---- */
/* b -= (1.b / N) 1 over the G-vector; *defect = |1.b| / (sqrt(N) ||b||)
 * (0 when b = 0): the removed part relative to b */
static int project_rhs(hx_disc d, double *d_b, double *defect) {
  hx_op op = hx_disc_op(d);
  hx_backend b = hx_disc_backend(d);
  const int64_t ng = hx_op_size(op), nown = hx_op_owned(op);
  hx_vec ones;
  HX_CALL(hx_vec_create(b, ng, &ones));
  double loc[3] = {0, 0, (double)nown}, glob[3];
  int err = hx_vec_set_value(ones, 1.0);
  if (!err) err = hx_array_dot(b, nown, d_b, hx_vec_data(ones), &loc[0]);
  if (!err) err = hx_array_dot(b, nown, d_b, d_b, &loc[1]);
  if (!err && MPI_Allreduce(loc, glob, 3, MPI_DOUBLE, MPI_SUM, hx_gs_comm(hx_op_gs(op))) != MPI_SUCCESS)
    err = HX_ERROR(HX_ERR_MPI, "MPI failed in the null-space projection");
  if (!err && glob[2] > 0) {
    err = hx_array_axpby(b, ng, d_b, -glob[0] / glob[2], hx_vec_data(ones), 1.0);
    *defect = glob[1] > 0 ? fabs(glob[0]) / (sqrt(glob[2]) * sqrt(glob[1])) : 0.0;
  }
  const int e2 = hx_vec_destroy(&ones);
  HX_CALL(err ? err : e2);
  return HX_SUCCESS;
}

/* sum_l mass_l v_l / sum_l mass_l over all ranks: the mass-weighted mean
 * of a continuous field given as an L-vector (GLL quadrature); v NULL:
 * the field f at the nodes */
static int mass_mean(hx_disc d, const double *mass, const double *v, hx_field f, double *mean) {
  const int64_t nl = hx_disc_num_l(d);
  const double *X = NULL, *Y = NULL, *Z = NULL;
  if (!v) HX_CALL(hx_disc_coords(d, &X, &Y, &Z)); /* the field at the nodes */
  double loc[2] = {0, 0}, glob[2];
  for (int64_t i = 0; i < nl; i++) {
    const double u = v ? v[i] : f.fn(f.ctx, X[i], Y[i], Z[i]);
    loc[0] += mass[i] * u, loc[1] += mass[i];
  }
  HX_MPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, hx_mesh_comm(hx_disc_mesh(d))));
  *mean = glob[1] > 0 ? glob[0] / glob[1] : 0.0;
  return HX_SUCCESS;
}

typedef struct {
  hx_field f;
  double shift;
} shifted_field;

static double shifted_fn(const void *ctx, double x, double y, double z) {
  const shifted_field *s = ctx;
  return s->f.fn(s->f.ctx, x, y, z) - s->shift;
}

static void scaled_monitor_cb(void *ctx, int it, double rnorm, double rel) {
  const scaled_monitor *m = ctx;
  m->o->monitor(m->o->monitor_ctx, it, rnorm * m->inv, rel);
}

/* frees the taken data (hx_solve_take; own NULL: nothing) */
static void data_free(double **own[3]) {
  if (!own) return;
  for (int i = 0; i < 3; i++)
    if (own[i]) free(*own[i]), *own[i] = NULL;
}

/* The steps of hx_solve on buffers the caller frees on every path; opx is
 * hx_disc_op_exact(d) (d_r, d_d: its refinement's vectors when it is not
 * hx_disc_op(d)). *ph_l: the solution's host L-vector (the caller's h_u_l
 * when it gave one, so no second L-vector is held), or NULL: allocated here
 * after the preconditioner's setup and PCG (a run's peak is inside PCG:
 * 8 bytes per L entry less there), the caller frees it. */
static int solve_steps(hx_disc d, hx_pc pc, hx_proj pj, const double *h_f, const double *h_gd, const double *h_bn,
                       double **own[3], hx_field exact, const hx_pcg_opts *opts, const double *h_u0_l,
                       hx_solve_result *res, hx_op opx, double **ph_l, double *d_b, double *d_g, double **pd_x,
                       double **pd_r, double **pd_d, double **pd_x0) {
  hx_backend b = hx_disc_backend(d);
  hx_op op = hx_disc_op(d);
  const int64_t nl = hx_disc_num_l(d);
  const int64_t ng = hx_op_size(op);
  const size_t gbytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);

  double t0 = hx_wtime();
  HX_CALL(hx_disc_rhs(d, h_f, h_gd, h_bn, d_b, d_g));
  data_free(own); /* what the right-hand side was formed from */
  res->nullspace = hx_disc_nullspace(d);
  if (res->nullspace) HX_CALL(project_rhs(d, d_b, &res->nullspace_defect));
  double t_rhs = hx_wtime() - t0;

  /* the preconditioner's setup before the iterate and the refinement's and
   * projection's vectors exist: its temporaries (the Schwarz levels' own
   * gather-scatter setup) were the peak of a pmg run */
  t0 = hx_wtime();
  hx_timer_start(HX_T_PRECOND);
  int ierr = hx_pc_setup(pc);
  hx_timer_stop(HX_T_PRECOND);
  HX_CALL(ierr);
  res->t_pc_setup = hx_wtime() - t0;

  t0 = hx_wtime();
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)pd_x));
  /* *pd_r, *pd_d: the true residual's check and correction, after PCG */
  if (pj) HX_CALL(hx_mem_alloc(b, gbytes, (void **)pd_x0));       /* the guess, for hx_proj_update */
  double *d_x = *pd_x, *d_x0 = *pd_x0;
  /* initial guess of x = u0 - g on free nodes (masked), else 0 */
  HX_CALL(hx_mem_zero(b, d_x, gbytes));
  if (h_u0_l) HX_CALL(hx_disc_from_l_host(d, h_u0_l, 1, d_x));
  /* projection onto the earlier solutions (hx_proj_guess) */
  double tp = hx_wtime();
  if (pj && hx_proj_size(pj) > 0) HX_CALL(hx_proj_guess(pj, d_b, d_x));
  res->t_proj = pj ? hx_wtime() - tp : 0.0;
  /* what hx_proj_update subtracts: the projected guess, or 0 for the first
   * vector (then x itself is appended: a guess from outside span(X) would
   * leave it out of the span) */
  if (pj && hx_proj_size(pj) > 0) HX_CALL(hx_array_copy(b, ng, d_x0, d_x));
  if (pj && hx_proj_size(pj) == 0) HX_CALL(hx_mem_zero(b, d_x0, gbytes));
  res->t_rhs = t_rhs + (hx_wtime() - t0);

  t0 = hx_wtime();
  hx_timer_start(HX_T_SOLVE);
  /* split geometry: PCG on the split operator with residual replacement by
   * the FP64 one, then the check (and correction) of the final residual */
  hx_pcg_opts po = *opts;
  if (opx != op) po.exact_op = opx;
  po.nullspace = res->nullspace;
  /* a right-hand side far from unit size is solved scaled (rhs_scale) */
  double s = 1.0;
  ierr = rhs_scale(b, hx_gs_comm(hx_op_gs(op)), ng, hx_op_owned(op), d_b, &s);
  scaled_monitor sm = {opts, 1.0 / s};
  if (!ierr && s != 1.0) {
    ierr = hx_array_axpby(b, ng, d_x, s, d_x, 0.0);
    po.atol *= s;
    if (opts->monitor) po.monitor = scaled_monitor_cb, po.monitor_ctx = &sm;
  }
  if (!ierr) ierr = hx_pcg_solve(op, pc, d_b, d_x, &po, &res->pcg);
  /* converged: check the true residual b - A x and correct; stopped at the
   * iteration limit: report it (a breakdown's vectors are not worth one).
   * Every geometry: PCG's recursive residual drifts from the true one, and
   * a tolerance near round-off "converged" on it while b - A x was 70x
   * larger (Kershaw p = 5, tol 1e-14), or at 9e-31 with a true 3e-15 (issue
   * 53, defect 2): now the true value is reported, and a tolerance below
   * what the arithmetic reaches ends in diverged_stagnation. The two
   * vectors are made after PCG's own are gone (not at the run's peak). */
  if (!ierr && (res->pcg.reason > 0 || res->pcg.reason == HX_DIVERGED_MAX_IT)) {
    if (!*pd_r) ierr = hx_mem_alloc(b, gbytes, (void **)pd_r);
    if (!ierr && !*pd_d) ierr = hx_mem_alloc(b, gbytes, (void **)pd_d);
    if (!ierr) ierr = refine(op, opx, pc, d_b, d_x, &po, res, *pd_r, *pd_d);
  }
  if (!ierr && s != 1.0) {
    ierr = hx_array_axpby(b, ng, d_x, 1.0 / s, d_x, 0.0);
    res->pcg.bnorm /= s, res->pcg.r0norm /= s, res->pcg.rnorm /= s;
    res->rhs_scale = s;
  }
  hx_timer_stop(HX_T_SOLVE);
  res->t_solve = hx_wtime() - t0;
  HX_CALL(ierr);
  tp = hx_wtime();
  if (pj && res->pcg.reason > 0) HX_CALL(hx_proj_update(pj, d_x0, d_x));
  if (pj) res->t_proj += hx_wtime() - tp;

  /* u = x + g */
  HX_CALL(hx_array_axpby(b, ng, d_x, 1.0, d_g, 1.0));
  if (!*ph_l) HX_CALL(HX_ALLOC(ph_l, nl > 0 ? nl : 1));
  double *h_l = *ph_l;
  HX_CALL(hx_op_to_l_host(op, d_x, h_l));
  shifted_field sh = {exact, 0.0};
  if (res->nullspace) {
    /* the zero-mean solution; the exact one shifted the same way */
    double *mass, mean = 0.0;
    HX_CALL(HX_ALLOC(&mass, nl > 0 ? nl : 1));
    int err = hx_ax_mass(hx_disc_ax(d), mass);
    if (!err) err = mass_mean(d, mass, h_l, exact, &mean);
    for (int64_t i = 0; !err && i < nl; i++) h_l[i] -= mean;
    if (!err && exact.fn) err = mass_mean(d, mass, NULL, exact, &sh.shift);
    free(mass);
    HX_CALL(err);
    res->exact_mean = sh.shift;
    if (exact.fn) exact = (hx_field){shifted_fn, &sh, NULL};
  }
  if (exact.fn) {
    HX_CALL(hx_disc_error(d, h_l, exact, &res->err_l2, &res->err_max));
    res->exact_known = 1;
  }
  return HX_SUCCESS;
}

static int solve_all(hx_disc d, hx_pc pc, hx_proj pj, const double *h_f, const double *h_gd, const double *h_bn,
                     double **own[3], hx_field exact, const hx_pcg_opts *opts, const double *h_u0_l, double **ph_l,
                     hx_solve_result *res);

int hx_solve(hx_disc d, hx_pc pc, const double *h_f, const double *h_gd, const double *h_bn, hx_field exact,
             const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l, hx_solve_result *res) {
  HX_CALL(hx_solve_proj(d, pc, NULL, h_f, h_gd, h_bn, exact, opts, h_u0_l, h_u_l, res));
  return HX_SUCCESS;
}

int hx_solve_take(hx_disc d, hx_pc pc, double **h_f, double **h_gd, double **h_bn, hx_field exact,
                  const hx_pcg_opts *opts, const double *h_u0_l, double **h_u_l, hx_solve_result *res) {
  double **own[3] = {h_f, h_gd, h_bn};
  HX_CALL(solve_all(d, pc, NULL, h_f ? *h_f : NULL, h_gd ? *h_gd : NULL, h_bn ? *h_bn : NULL, own, exact, opts,
                    h_u0_l, h_u_l, res));
  return HX_SUCCESS;
}

int hx_solve_proj(hx_disc d, hx_pc pc, hx_proj pj, const double *h_f, const double *h_gd, const double *h_bn,
                  hx_field exact, const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l,
                  hx_solve_result *res) {
  double *h_l = h_u_l; /* NULL: solve_steps allocates one for the error norms */
  const int err = solve_all(d, pc, pj, h_f, h_gd, h_bn, NULL, exact, opts, h_u0_l, &h_l, res);
  if (h_l != h_u_l) free(h_l);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int solve_all(hx_disc d, hx_pc pc, hx_proj pj, const double *h_f, const double *h_gd, const double *h_bn,
                     double **own[3], hx_field exact, const hx_pcg_opts *opts, const double *h_u0_l, double **ph_l,
                     hx_solve_result *res) {
  memset(res, 0, sizeof *res);
  res->rhs_scale = 1.0;
  hx_backend b = hx_disc_backend(d);
  const size_t gbytes = sizeof(double) * (size_t)(hx_op_size(hx_disc_op(d)) > 0 ? hx_op_size(hx_disc_op(d)) : 1);
  res->dofs = hx_disc_num_dofs(d);
  double *d_b = NULL, *d_g = NULL, *d_x = NULL, *d_r = NULL, *d_d = NULL, *d_x0 = NULL;
  int err = hx_mem_alloc(b, gbytes, (void **)&d_b);
  if (!err) err = hx_mem_alloc(b, gbytes, (void **)&d_g);
  hx_op opx = NULL; /* not op: the split geometry's FP64 operator */
  if (!err) err = hx_disc_op_exact(d, &opx);
  /* d_x, d_r, d_d, d_x0: allocated after the preconditioner's setup */
  if (!err)
    err = solve_steps(d, pc, pj, h_f, h_gd, h_bn, own, exact, opts, h_u0_l, res, opx, ph_l, d_b, d_g, &d_x, &d_r,
                      &d_d, &d_x0);
  data_free(own); /* on the paths that did not get to the right-hand side */
  /* free everything on every path, keep the first error */
  double **bufs[6] = {&d_b, &d_g, &d_x, &d_r, &d_d, &d_x0};
  for (int i = 0; i < 6; i++) {
    const int e = hx_mem_free(b, (void **)bufs[i]);
    if (!err) err = e;
  }
  HX_CALL(err);
  return HX_SUCCESS;
}
