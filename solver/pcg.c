/* Preconditioned CG with fused vector updates (see hx_solver.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"
#include "pcg_common.h"

void hx_pcg_opts_default(hx_pcg_opts *o) {
  o->rtol = 1e-8;
  o->atol = 0.0;
  o->max_iterations = HX_MAX_ITERATIONS_DEFAULT;
  o->monitor = NULL;
  o->monitor_ctx = NULL;
  o->flexible = 0;
  o->single_reduction = 0;
  o->no_fuse = 0;
  o->exact_op = NULL;
  o->replace_drop = 1e-3;
  o->nullspace = 0;
}

typedef struct {
  double *r, *z, *p, *w, *s; /* s: A p by recurrence (single reduction only) */
  hx_red red;                /* the iteration's local sums, read together */
  int fuse;                  /* use the preconditioner's fused CG update */
  double *ones;              /* nullspace: the constant G-vector (else NULL) */
  hx_backend b;
  double nglob;              /* nullspace: global owned G entries */
  MPI_Comm comm;
  int k0;      /* iterations before this (re)start */
  int restart; /* the preconditioner changed: restart from x */
} pcg_work;

/* After iteration k (of this run) with step alpha and next beta: tell pc
 * (hx_pc_observe); 1 in *stop when it changed and the run must restart. */
static int pcg_observe(hx_pcg_result *res, pcg_work *v, hx_pc pc, int k, double alpha, double beta,
                       double target, int *stop) {
  const hx_pc_cg_info in = {.k = k, .alpha = alpha, .beta = beta, .rel = res->rel, .target = target};
  PCG_TIMED(res->t_precond, HX_T_PRECOND, hx_pc_observe(pc, &in, &v->restart));
  *stop = v->restart;
  return HX_SUCCESS;
}

/* The sums of nloc values over the ranks. With stop != NULL one more entry
 * carries whether a signal reached this rank (hx_signal_pending), so all
 * ranks learn of it at the same iteration for no extra message; the other
 * sums are unchanged. */
static int pcg_allreduce(MPI_Comm comm, const double *loc, double *glob, int nloc, int *stop) {
  if (!stop) {
    HX_MPI(MPI_Allreduce(loc, glob, nloc, MPI_DOUBLE, MPI_SUM, comm));
    return HX_SUCCESS;
  }
  double l[8], g[8];
  HX_CHECK(nloc < 8, HX_ERR_INTERNAL, "pcg_allreduce: %d values", nloc);
  memcpy(l, loc, sizeof(double) * (size_t)nloc);
  l[nloc] = hx_signal_pending() ? 1.0 : 0.0;
  HX_MPI(MPI_Allreduce(l, g, nloc + 1, MPI_DOUBLE, MPI_SUM, comm));
  memcpy(glob, g, sizeof(double) * (size_t)nloc);
  *stop = g[nloc] > 0;
  return HX_SUCCESS;
}

/* nullspace: z -= (1.z / N) 1 (one blocking dot and allreduce) */
static int project_const(hx_backend b, const pcg_work *v, int64_t n, int64_t nown, double *z) {
  if (!v->ones) return HX_SUCCESS;
  double s;
  HX_CALL(hx_array_dot(b, nown, z, v->ones, &s));
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, v->comm));
  HX_CALL(hx_array_axpby(b, n, z, -s / v->nglob, v->ones, 1.0));
  return HX_SUCCESS;
}

/* z = M^{-1} r with the constant projected out (nullspace) */
static int pc_apply_proj(hx_pcg_result *res, const pcg_work *v, hx_backend b, int64_t n, int64_t nown, hx_pc pc,
                         const double *r, double *z) {
  PCG_TIMED(res->t_precond, HX_T_PRECOND, hx_pc_apply(pc, r, z));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, project_const(b, v, n, nown, z));
  return HX_SUCCESS;
}

/* The step of pcg_step with the residual replaced: x += alpha p;
 * r = b - A_exact x; z = M^{-1} r and the same local sums (unfused). */
static int pcg_step_replace(const hx_pcg_opts *o, hx_pcg_result *res, pcg_work *v, int64_t n, int64_t nown,
                            const double *d_b, double *d_x, const double *w, double alpha, hx_pc pc) {
  hx_backend b = hx_op_backend(o->exact_op);
  const double t0 = hx_wtime();
  HX_CALL(hx_array_axpby(b, n, d_x, alpha, v->p, 1.0));
  HX_CALL(hx_op_apply(o->exact_op, d_x, v->r, NULL));
  HX_CALL(hx_array_axpby(b, n, v->r, 1.0, d_b, -1.0));
  HX_CALL(hx_array_dot_red(v->red, 0, nown, v->r, v->r));
  res->t_replace += hx_wtime() - t0;
  res->replacements++;
  HX_CALL(pc_apply_proj(res, v, b, n, nown, pc, v->r, v->z));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 1, nown, v->r, v->z));
  if (o->flexible) PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 2, nown, v->z, w));
  return HX_SUCCESS;
}

/* x += alpha p; r -= alpha w; z = M^{-1} r; the local sums r.r -> slot 0,
 * r.z -> 1 and (flexible) z.w -> 2 of v->red, not yet fetched. With a
 * fused preconditioner update one pass, else BS5, the apply and the dots. */
static int pcg_step(const hx_pcg_opts *o, hx_pcg_result *res, pcg_work *v, int64_t n, int64_t nown,
                    double *d_x, const double *w, double alpha, hx_pc pc) {
  if (v->fuse) {
    const hx_pc_cg_step u = {.nred = nown,
                             .alpha = alpha,
                             .x = d_x,
                             .p = v->p,
                             .r = v->r,
                             .w = w,
                             .z = v->z,
                             .red = v->red,
                             .slot_rr = 0,
                             .slot_rz = 1,
                             .slot_zw = o->flexible ? 2 : -1};
    PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_pc_cg_update(pc, &u));
    return HX_SUCCESS;
  }
  PCG_TIMED(res->t_vector, HX_T_VECTOR,
            hx_array_cg_update_red(v->red, 0, n, nown, d_x, v->r, v->p, w, alpha)); /* BS5 */
  HX_CALL(pc_apply_proj(res, v, v->b, n, nown, pc, v->r, v->z));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 1, nown, v->r, v->z));
  /* flexible: z_{k+1}.r_k = z_{k+1}.r_{k+1} + alpha z_{k+1}.w, so the
   * Polak-Ribiere numerator z_{k+1}.(r_{k+1} - r_k) = -alpha z_{k+1}.w */
  if (o->flexible) PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 2, nown, v->z, w));
  return HX_SUCCESS;
}

/* The start of a run: r = b - A x, z = M^{-1} r (projected). */
static int pcg_residual(hx_op op, hx_pc pc, const double *d_b, const double *d_x, hx_pcg_result *res,
                        pcg_work *v) {
  hx_backend b = hx_op_backend(op);
  const int64_t n = hx_op_size(op), nown = hx_op_owned(op);
  HX_CALL(hx_op_apply(op, d_x, v->w, NULL));
  PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_copy(b, n, v->r, d_b));
  PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_axpby(b, n, v->r, -1.0, v->w, 1.0));
  HX_CALL(pc_apply_proj(res, v, b, n, nown, pc, v->r, v->z));
  return HX_SUCCESS;
}

/* From the global sums b.b (glob[0]) and r.r (glob[1]) of a run's start:
 * res's bnorm, r0norm (a restart keeps the first run's), rnorm and rel, the
 * monitor's step 0 (not on a restart); the residual norm, the scale of the
 * relative norms and the tolerances. */
static void pcg_first_norms(const hx_pcg_opts *o, hx_pcg_result *res, const pcg_work *v, const double *glob,
                            double *rnorm, double *scale, double *tol, double *rtol_abs) {
  res->bnorm = sqrt(glob[0]);
  *rnorm = sqrt(glob[1]);
  if (!v->k0) res->r0norm = *rnorm;
  res->rnorm = *rnorm;
  *scale = res->bnorm > 0 ? res->bnorm : 1.0;
  *rtol_abs = o->rtol * res->bnorm, *tol = fmax(*rtol_abs, o->atol);
  res->rel = *rnorm / *scale;
  if (o->monitor && !v->k0) o->monitor(o->monitor_ctx, 0, *rnorm, res->rel);
}

static int pcg_iterate(hx_op op, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *o,
                       hx_pcg_result *res, pcg_work *v) {
  hx_backend b = hx_op_backend(op);
  MPI_Comm comm = hx_gs_comm(hx_op_gs(op));
  const int64_t n = hx_op_size(op), nown = hx_op_owned(op);
  double loc[3], glob[3];

  /* r = b - A x; z = M^{-1} r; b.b, r.r, r.z in one allreduce */
  HX_CALL(pcg_residual(op, pc, d_b, d_x, res, v));
  /* one host wait for the three sums (the blocking dots waited three times) */
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 0, nown, d_b, d_b));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 1, nown, v->r, v->r));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 2, nown, v->r, v->z));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_red_fetch(v->red, 3, loc));
  int stop = 0;
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, pcg_allreduce(comm, loc, glob, 3, &stop));

  double rnorm, scale, tol, rtol_abs;
  pcg_first_norms(o, res, v, glob, &rnorm, &scale, &tol, &rtol_abs);
  double rz = glob[2];
  if ((res->reason = pcg_check(rnorm, rz, tol, rtol_abs)) != HX_ITERATING) return HX_SUCCESS;
  if (stop) return res->reason = HX_INTERRUPTED, HX_SUCCESS;
  HX_CALL(hx_array_copy(b, n, v->p, v->z));

  /* residual replacement: the norm at the last one (the initial residual
   * is exact) and whether the next step replaces */
  double r_replaced = rnorm;
  int replace = 0;
  for (int k = 1; v->k0 + k <= o->max_iterations; k++) {
    /* w = A p, p.w fused into the element kernel and left in slot 0 (free:
     * fetched last iteration); one host wait for it, allreduce 1 */
    double pw, pw_loc;
    HX_CALL(hx_op_apply_red(op, v->p, v->w, v->red, 0));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_red_fetch(v->red, 1, &pw_loc));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, pcg_allreduce(comm, &pw_loc, &pw, 1, NULL));
    if (!isfinite(pw) || pw <= 0.0) {
      res->reason = isfinite(pw) ? HX_DIVERGED_INDEFINITE_MAT : HX_DIVERGED_NAN;
      return HX_SUCCESS;
    }
    const double alpha = rz / pw;
    /* x += alpha p; r -= alpha w; z = M^{-1} r; local r.r, r.z (, z.w) left
     * in the slots of v->red: one host wait for all of them below */
    const int nloc = o->flexible ? 3 : 2;
    if (replace) HX_CALL(pcg_step_replace(o, res, v, n, nown, d_b, d_x, v->w, alpha, pc));
    else HX_CALL(pcg_step(o, res, v, n, nown, d_x, v->w, alpha, pc));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_red_fetch(v->red, nloc, loc));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, pcg_allreduce(comm, loc, glob, nloc, &stop)); /* r.r, r.z (, z.w) */
    rnorm = sqrt(glob[0]);
    const double rz_new = glob[1];
    res->iterations = v->k0 + k;
    res->rnorm = rnorm;
    res->rel = rnorm / scale;
    if (o->monitor) o->monitor(o->monitor_ctx, v->k0 + k, rnorm, res->rel);
    if ((res->reason = pcg_check(rnorm, rz_new, tol, rtol_abs)) != HX_ITERATING) return HX_SUCCESS;
    if (stop) return res->reason = HX_INTERRUPTED, HX_SUCCESS;
    if (replace) r_replaced = rnorm;
    replace = o->exact_op && rnorm <= o->replace_drop * r_replaced;
    const double beta = o->flexible ? -alpha * glob[2] / rz : rz_new / rz;
    HX_CALL(pcg_observe(res, v, pc, k, alpha, beta, tol / scale, &stop));
    if (stop) return HX_SUCCESS;
    rz = rz_new;
    PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_xpay(b, n, v->p, v->z, beta)); /* p = z + beta p */
  }
  res->reason = HX_DIVERGED_MAX_IT;
  return HX_SUCCESS;
}

/* Single-reduction PCG (Chronopoulos & Gear 1989, preconditioned form as in
 * Ghysels & Vanroose 2014, Alg. 2): with u = M^{-1} r and w = A u, the
 * scalars of one iteration, gamma = r.u and delta = w.u, come from the same
 * vectors, so r.r, r.u and w.u share one allreduce; p.Ap is not reduced but
 * follows from delta - beta gamma / alpha_old, and s = A p is carried by the
 * recurrence s = w + beta s (no second operator apply). */
static int pcg1_iterate(hx_op op, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *o,
                        hx_pcg_result *res, pcg_work *v) {
  hx_backend b = hx_op_backend(op);
  MPI_Comm comm = hx_gs_comm(hx_op_gs(op));
  const int64_t n = hx_op_size(op), nown = hx_op_owned(op);
  double loc[4], glob[4];
  double *u = v->z;

  /* r = b - A x; u = M^{-1} r; w = A u; b.b, r.r, r.u, w.u in one allreduce */
  HX_CALL(pcg_residual(op, pc, d_b, d_x, res, v));
  HX_CALL(hx_op_apply(op, u, v->w, NULL));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 0, nown, d_b, d_b));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 1, nown, v->r, v->r));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 2, nown, v->r, u));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 3, nown, v->w, u));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_red_fetch(v->red, 4, loc));
  int stop = 0;
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, pcg_allreduce(comm, loc, glob, 4, &stop));

  double rnorm, scale, tol, rtol_abs;
  pcg_first_norms(o, res, v, glob, &rnorm, &scale, &tol, &rtol_abs);
  double gamma = glob[2], delta = glob[3];
  if ((res->reason = pcg_check(rnorm, gamma, tol, rtol_abs)) != HX_ITERATING) return HX_SUCCESS;
  if (stop) return res->reason = HX_INTERRUPTED, HX_SUCCESS;
  double alpha = gamma / delta; /* p = u: p.Ap = u.Au = delta */
  if (!isfinite(delta) || delta <= 0.0) {
    res->reason = isfinite(delta) ? HX_DIVERGED_INDEFINITE_MAT : HX_DIVERGED_NAN;
    return HX_SUCCESS;
  }
  HX_CALL(hx_array_copy(b, n, v->p, u));
  HX_CALL(hx_array_copy(b, n, v->s, v->w));

  for (int k = 1; v->k0 + k <= o->max_iterations; k++) {
    /* x += alpha p; r -= alpha s; u = M^{-1} r; r.r -> 0, r.u -> 1 */
    HX_CALL(pcg_step(o, res, v, n, nown, d_x, v->s, alpha, pc));
    HX_CALL(hx_op_apply(op, u, v->w, NULL)); /* w = A u: no reduction of its own */
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v->red, 2, nown, v->w, u));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_red_fetch(v->red, 3, loc));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, pcg_allreduce(comm, loc, glob, 3, &stop)); /* the one allreduce */
    rnorm = sqrt(glob[0]);
    const double gamma_new = glob[1];
    delta = glob[2];
    res->iterations = v->k0 + k;
    res->rnorm = rnorm;
    res->rel = rnorm / scale;
    if (o->monitor) o->monitor(o->monitor_ctx, v->k0 + k, rnorm, res->rel);
    if ((res->reason = pcg_check(rnorm, gamma_new, tol, rtol_abs)) != HX_ITERATING) return HX_SUCCESS;
    if (stop) return res->reason = HX_INTERRUPTED, HX_SUCCESS;
    const double beta = gamma_new / gamma;
    HX_CALL(pcg_observe(res, v, pc, k, alpha, beta, tol / scale, &stop));
    if (stop) return HX_SUCCESS;
    /* p_new = u + beta p: p_new.A p_new = u.Au + 2 beta u.Ap + beta^2 p.Ap
     * = delta - beta gamma_new / alpha (u.Ap = -gamma_new / alpha, from
     * r_new = r - alpha A p and the A-conjugacy of the directions) */
    const double pap = delta - beta * gamma_new / alpha;
    if (!isfinite(pap) || pap <= 0.0) {
      res->reason = isfinite(pap) ? HX_DIVERGED_INDEFINITE_MAT : HX_DIVERGED_NAN;
      return HX_SUCCESS;
    }
    alpha = gamma_new / pap;
    gamma = gamma_new;
    PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_xpay(b, n, v->p, u, beta));    /* p = u + beta p */
    PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_xpay(b, n, v->s, v->w, beta)); /* s = w + beta s */
  }
  res->reason = HX_DIVERGED_MAX_IT;
  return HX_SUCCESS;
}

/* Whether the preconditioner's fused CG update is used (now: type auto
 * drops it at its switch) and the per-iteration counts that follow. PCG:
 * cg_update 6 (x,p,r,w read; x,r written) + preconditioner + r.z 2 (+ z.w 2
 * flexible), or the fused pass; then xpay 3. pcg1: the same update, w.u 2,
 * two xpays 6. */
static void pcg_counts(const hx_pcg_opts *o, hx_pc pc, hx_pcg_result *res) {
  const int fuse = !o->no_fuse && !o->nullspace && hx_pc_has_cg_update(pc);
  res->fused_pc_update = fuse;
  if (o->single_reduction) {
    res->allreduces_per_iteration = 1 + (o->nullspace != 0);
    res->vector_passes_per_iteration = (fuse ? hx_pc_cg_update_passes(pc) : 8 + hx_pc_passes(pc)) + 2 + 6;
  } else {
    res->allreduces_per_iteration = 2 + (o->nullspace != 0);
    res->vector_passes_per_iteration =
        (fuse ? hx_pc_cg_update_passes(pc) : 8 + (o->flexible ? 2 : 0) + hx_pc_passes(pc)) + 3;
  }
}

int hx_pcg_solve(hx_op op, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *opts,
                 hx_pcg_result *res) {
  hx_pcg_opts o;
  if (opts) o = *opts;
  else hx_pcg_opts_default(&o);
  HX_CHECK(o.rtol >= 0 && o.atol >= 0 && o.max_iterations >= 0, HX_ERR_ARG,
           "PCG options: tolerances and max_iterations must be >= 0");
  HX_CHECK(!o.exact_op || (o.replace_drop > 0 && o.replace_drop < 1), HX_ERR_ARG,
           "PCG options: replace_drop = %g must be in (0, 1)", o.replace_drop);
  HX_CHECK(!o.exact_op || hx_op_size(o.exact_op) == hx_op_size(op), HX_ERR_ARG,
           "PCG options: exact_op has %lld entries, the operator %lld", (long long)hx_op_size(o.exact_op),
           (long long)hx_op_size(op));
  HX_CHECK(pc, HX_ERR_ARG, "PCG needs a preconditioner (use hx_pc_create_identity for none)");
  HX_CHECK(!(o.flexible && o.single_reduction), HX_ERR_ARG,
           "PCG options: flexible and single_reduction exclude each other");
  if (!o.flexible && !hx_pc_is_symmetric(pc)) {
    char view[256];
    hx_pc_view(pc, view, sizeof view);
    return HX_ERROR(HX_ERR_INPUT,
                    "the preconditioner %s is not symmetric (restricted Schwarz smoothing): %s needs a "
                    "symmetric one; use solver.type: fcg (flexible CG) or a symmetric smoother (asm, jacobi)",
                    view, o.single_reduction ? "single-reduction CG (pcg1)" : "plain PCG");
  }
  *res = (hx_pcg_result){0};
  res->reason = HX_ITERATING;

  hx_backend b = hx_op_backend(op);
  /* the work vectors r, z, p, w, s (zero-initialised hx_vec of the backend) */
  const int nvec = o.single_reduction ? 5 : 4;
  hx_vec vec[5] = {NULL, NULL, NULL, NULL, NULL};
  pcg_work v = {0};
  double t_op0, t_ex0, t_gs0;
  hx_op_times(op, &t_op0, &t_ex0, &t_gs0);
  int ierr = hx_red_create(b, 4, hx_op_size(op), &v.red);
  for (int i = 0; i < nvec && !ierr; i++) ierr = hx_vec_create(b, hx_op_size(op), &vec[i]);
  hx_vec ones = NULL;
  v.comm = hx_gs_comm(hx_op_gs(op));
  v.b = b;
  if (!ierr && o.nullspace) {
    double nl = (double)hx_op_owned(op);
    ierr = hx_vec_create(b, hx_op_size(op), &ones);
    if (!ierr) ierr = hx_vec_set_value(ones, 1.0);
    if (!ierr && MPI_Allreduce(&nl, &v.nglob, 1, MPI_DOUBLE, MPI_SUM, v.comm) != MPI_SUCCESS)
      ierr = HX_ERROR(HX_ERR_MPI, "MPI failed counting the G entries");
    if (!ierr) v.ones = hx_vec_data(ones);
  }
  if (!ierr) {
    v.r = hx_vec_data(vec[0]), v.z = hx_vec_data(vec[1]), v.p = hx_vec_data(vec[2]), v.w = hx_vec_data(vec[3]);
    v.s = o.single_reduction ? hx_vec_data(vec[4]) : NULL;
    /* a preconditioner that changed (hx_pc_ops.observe) restarts the run
     * from the iterate, the count going on */
    do {
      v.restart = 0;
      v.k0 = res->iterations;
      res->starts++;
      /* the preconditioner may have changed its fused form (type auto) */
      pcg_counts(&o, pc, res);
      v.fuse = res->fused_pc_update;
      ierr = o.single_reduction ? pcg1_iterate(op, pc, d_b, d_x, &o, res, &v)
                                : pcg_iterate(op, pc, d_b, d_x, &o, res, &v);
    } while (!ierr && v.restart);
  }
  double t_op1, t_ex1, t_gs1;
  hx_op_times(op, &t_op1, &t_ex1, &t_gs1);
  res->t_operator = (t_op1 - t_op0) + (t_ex1 - t_ex0) + (t_gs1 - t_gs0);
  res->t_exchange = t_ex1 - t_ex0;
  for (int i = 0; i < nvec; i++) {
    const int e = hx_vec_destroy(&vec[i]);
    if (!ierr) ierr = e;
  }
  const int e1 = hx_vec_destroy(&ones);
  if (!ierr) ierr = e1;
  const int e = hx_red_destroy(&v.red);
  if (!ierr) ierr = e;
  HX_CALL(ierr);
  return HX_SUCCESS;
}
