/* Preconditioned CG with fused vector updates (see hx_solver.h). */
#include <math.h>
#include <stdlib.h>

#include "hx_solver.h"

void hx_pcg_opts_default(hx_pcg_opts *o) {
  o->rtol = 1e-8;
  o->atol = 0.0;
  o->max_iterations = HX_MAX_ITERATIONS_DEFAULT;
  o->monitor = NULL;
  o->monitor_ctx = NULL;
  o->flexible = 0;
}

typedef struct {
  double *r, *z, *p, *w;
} pcg_work;

/* Run expr timed into the process timer id and the result field acc. */
#define PCG_TIMED(acc, id, expr)         \
  do {                                   \
    const double t_ = hx_wtime();        \
    hx_timer_start(id);                  \
    const int e_ = (expr);               \
    hx_timer_stop(id);                   \
    (acc) += hx_wtime() - t_;            \
    HX_CALL(e_);                         \
  } while (0)

/* Reason to stop after a residual norm and r.z are known (HX_ITERATING: go on). */
static hx_reason pcg_check(double rnorm, double rz, double tol, double rtol_abs) {
  if (!isfinite(rnorm) || !isfinite(rz)) return HX_DIVERGED_NAN;
  if (rnorm <= tol) return rnorm <= rtol_abs ? HX_CONVERGED_RTOL : HX_CONVERGED_ATOL;
  if (rz <= 0.0) return HX_DIVERGED_INDEFINITE_PC;
  return HX_ITERATING;
}

/* local dots + MPI_Allreduce of nloc partial sums */
static int pcg_allreduce(MPI_Comm comm, const double *loc, double *glob, int nloc) {
  HX_MPI(MPI_Allreduce(loc, glob, nloc, MPI_DOUBLE, MPI_SUM, comm));
  return HX_SUCCESS;
}

static int pcg_iterate(hx_op op, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *o,
                       hx_pcg_result *res, pcg_work *v) {
  hx_backend b = hx_op_backend(op);
  MPI_Comm comm = hx_gs_comm(hx_op_gs(op));
  const int64_t n = hx_op_size(op), nown = hx_op_owned(op);
  double loc[3], glob[3];

  /* r = b - A x; z = M^{-1} r; b.b, r.r, r.z in one allreduce */
  HX_CALL(hx_op_apply(op, d_x, v->w, NULL));
  PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_copy(b, n, v->r, d_b));
  PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_axpby(b, n, v->r, -1.0, v->w, 1.0));
  PCG_TIMED(res->t_precond, HX_T_PRECOND, hx_pc_apply(pc, v->r, v->z));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot(b, nown, d_b, d_b, &loc[0]));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot(b, nown, v->r, v->r, &loc[1]));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot(b, nown, v->r, v->z, &loc[2]));
  PCG_TIMED(res->t_reduction, HX_T_REDUCTION, pcg_allreduce(comm, loc, glob, 3));

  res->bnorm = sqrt(glob[0]);
  double rnorm = sqrt(glob[1]), rz = glob[2];
  res->r0norm = res->rnorm = rnorm;
  const double scale = res->bnorm > 0 ? res->bnorm : 1.0;
  const double rtol_abs = o->rtol * res->bnorm, tol = fmax(rtol_abs, o->atol);
  res->rel = rnorm / scale;
  if (o->monitor) o->monitor(o->monitor_ctx, 0, rnorm, res->rel);
  if ((res->reason = pcg_check(rnorm, rz, tol, rtol_abs)) != HX_ITERATING) return HX_SUCCESS;
  HX_CALL(hx_array_copy(b, n, v->p, v->z));

  for (int k = 1; k <= o->max_iterations; k++) {
    double pw;
    HX_CALL(hx_op_apply(op, v->p, v->w, &pw)); /* w = A p, p.w fused + allreduce 1 */
    if (!isfinite(pw) || pw <= 0.0) {
      res->reason = isfinite(pw) ? HX_DIVERGED_INDEFINITE_MAT : HX_DIVERGED_NAN;
      return HX_SUCCESS;
    }
    const double alpha = rz / pw;
    PCG_TIMED(res->t_vector, HX_T_VECTOR,
              hx_array_cg_update(b, n, nown, d_x, v->r, v->p, v->w, alpha, &loc[0])); /* BS5 */
    PCG_TIMED(res->t_precond, HX_T_PRECOND, hx_pc_apply(pc, v->r, v->z));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot(b, nown, v->r, v->z, &loc[1]));
    /* flexible: z_{k+1}.r_k = z_{k+1}.r_{k+1} + alpha z_{k+1}.w, so the
     * Polak-Ribiere numerator z_{k+1}.(r_{k+1} - r_k) = -alpha z_{k+1}.w */
    if (o->flexible) PCG_TIMED(res->t_reduction, HX_T_REDUCTION, hx_array_dot(b, nown, v->z, v->w, &loc[2]));
    PCG_TIMED(res->t_reduction, HX_T_REDUCTION,
              pcg_allreduce(comm, loc, glob, o->flexible ? 3 : 2)); /* r.r, r.z (, z.w) */
    rnorm = sqrt(glob[0]);
    const double rz_new = glob[1];
    res->iterations = k;
    res->rnorm = rnorm;
    res->rel = rnorm / scale;
    if (o->monitor) o->monitor(o->monitor_ctx, k, rnorm, res->rel);
    if ((res->reason = pcg_check(rnorm, rz_new, tol, rtol_abs)) != HX_ITERATING) return HX_SUCCESS;
    const double beta = o->flexible ? -alpha * glob[2] / rz : rz_new / rz;
    rz = rz_new;
    PCG_TIMED(res->t_vector, HX_T_VECTOR, hx_array_xpay(b, n, v->p, v->z, beta)); /* p = z + beta p */
  }
  res->reason = HX_DIVERGED_MAX_IT;
  return HX_SUCCESS;
}

int hx_pcg_solve(hx_op op, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *opts,
                 hx_pcg_result *res) {
  hx_pcg_opts o;
  if (opts) o = *opts;
  else hx_pcg_opts_default(&o);
  HX_CHECK(o.rtol >= 0 && o.atol >= 0 && o.max_iterations >= 0, HX_ERR_ARG,
           "PCG options: tolerances and max_iterations must be >= 0");
  HX_CHECK(pc, HX_ERR_ARG, "PCG needs a preconditioner (use hx_pc_create_identity for none)");
  if (!o.flexible && !hx_pc_is_symmetric(pc)) {
    char view[256];
    hx_pc_view(pc, view, sizeof view);
    return HX_ERROR(HX_ERR_INPUT,
                    "the preconditioner %s is not symmetric (restricted Schwarz smoothing): plain PCG needs a "
                    "symmetric one; use solver.type: fcg (flexible CG) or a symmetric smoother (asm, jacobi)",
                    view);
  }
  *res = (hx_pcg_result){0};
  res->reason = HX_ITERATING;
  res->allreduces_per_iteration = 2;
  /* cg_update 6 (x,p,r,w read; x,r written) + r.z 2 + xpay 3 + preconditioner */
  res->vector_passes_per_iteration = 11 + (o.flexible ? 2 : 0) + hx_pc_passes(pc);

  hx_backend b = hx_op_backend(op);
  /* the work vectors r, z, p, w (zero-initialised hx_vec of the backend) */
  hx_vec vec[4] = {NULL, NULL, NULL, NULL};
  pcg_work v = {0};
  double t_op0, t_ex0, t_gs0;
  hx_op_times(op, &t_op0, &t_ex0, &t_gs0);
  int ierr = HX_SUCCESS;
  for (int i = 0; i < 4 && !ierr; i++) ierr = hx_vec_create(b, hx_op_size(op), &vec[i]);
  if (!ierr) {
    v.r = hx_vec_data(vec[0]), v.z = hx_vec_data(vec[1]), v.p = hx_vec_data(vec[2]), v.w = hx_vec_data(vec[3]);
    ierr = pcg_iterate(op, pc, d_b, d_x, &o, res, &v);
  }
  double t_op1, t_ex1, t_gs1;
  hx_op_times(op, &t_op1, &t_ex1, &t_gs1);
  res->t_operator = (t_op1 - t_op0) + (t_ex1 - t_ex0) + (t_gs1 - t_gs0);
  for (int i = 0; i < 4; i++) {
    const int e = hx_vec_destroy(&vec[i]);
    if (!ierr) ierr = e;
  }
  HX_CALL(ierr);
  return HX_SUCCESS;
}
