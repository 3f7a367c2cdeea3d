/* Block PCG: k independent systems A x_c = b_c iterated together on shared
 * applies (hx_pcg_solve_many, hx_solver.h). Each column runs the
 * arithmetic of hx_pcg_solve (plain PCG: the same updates, dots, fused
 * preconditioner update where the preconditioner has one, the same
 * stopping test) with its own scalars; what the columns share is the
 * operator (hx_op_apply_many_p: the element factors read once for all
 * active columns, one exchange message per neighbour), the preconditioner
 * (hx_pc_apply_many) and one allreduce per reduction point for all columns.
 * A column that stops drops out of the applies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"
#include "pcg_common.h"

typedef struct {
  double *r, *z, *p, *w;
  hx_red red;
  double rz, tol, rtol_abs, scale;
} bcol;

/* the operator times itself (HX_T_OPERATOR) */
#define BPCG_OP(acc, expr)        \
  do {                            \
    const double t_ = hx_wtime(); \
    const int e_ = (expr);        \
    (acc) += hx_wtime() - t_;     \
    HX_CALL(e_);                  \
  } while (0)

/* the sums loc[0..m) over the ranks, with one more entry for a pending
 * signal (as hx_pcg_solve's allreduce) */
static int bpcg_allreduce(MPI_Comm comm, double *loc, double *glob, int m, int *stop) {
  loc[m] = hx_signal_pending() ? 1.0 : 0.0;
  HX_MPI(MPI_Allreduce(loc, glob, m + 1, MPI_DOUBLE, MPI_SUM, comm));
  *stop = glob[m] > 0;
  return HX_SUCCESS;
}

static int bpcg_iterate(hx_op op, hx_pc pc, int k, const double *const *b, double *const *x,
                        const hx_pcg_opts *o, hx_pcg_result *res, bcol *v, int fuse, hx_pcg_result *tm) {
  hx_backend bk = hx_op_backend(op);
  MPI_Comm comm = hx_gs_comm(hx_op_gs(op));
  const int64_t n = hx_op_size(op), nown = hx_op_owned(op);
  int act[HX_AX_MANY_MAX], na = 0, stop = 0;
  const void *in[HX_AX_MANY_MAX];
  void *out[HX_AX_MANY_MAX];
  double loc[3 * HX_AX_MANY_MAX + 1], glob[3 * HX_AX_MANY_MAX + 1], pw[HX_AX_MANY_MAX];

  /* r = b - A x; z = M^{-1} r; b.b, r.r, r.z of every column in one allreduce */
  for (int c = 0; c < k; c++) in[c] = x[c], out[c] = v[c].w;
  BPCG_OP(tm->t_operator, hx_op_apply_many_p(op, k, in, out, NULL));
  for (int c = 0; c < k; c++) {
    PCG_TIMED(tm->t_vector, HX_T_VECTOR, hx_array_copy(bk, n, v[c].r, b[c]));
    PCG_TIMED(tm->t_vector, HX_T_VECTOR, hx_array_axpby(bk, n, v[c].r, -1.0, v[c].w, 1.0));
    in[c] = v[c].r, out[c] = v[c].z;
  }
  PCG_TIMED(tm->t_precond, HX_T_PRECOND, hx_pc_apply_many(pc, k, (const double *const *)in, (double *const *)out));
  for (int c = 0; c < k; c++) {
    PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v[c].red, 0, nown, b[c], b[c]));
    PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v[c].red, 1, nown, v[c].r, v[c].r));
    PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v[c].red, 2, nown, v[c].r, v[c].z));
    PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, hx_red_fetch(v[c].red, 3, loc + 3 * c));
  }
  PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, bpcg_allreduce(comm, loc, glob, 3 * k, &stop));
  for (int c = 0; c < k; c++) {
    hx_pcg_result *rc = &res[c];
    rc->bnorm = sqrt(glob[3 * c]);
    const double rnorm = sqrt(glob[3 * c + 1]);
    v[c].rz = glob[3 * c + 2];
    rc->r0norm = rc->rnorm = rnorm;
    v[c].scale = rc->bnorm > 0 ? rc->bnorm : 1.0;
    v[c].rtol_abs = o->rtol * rc->bnorm, v[c].tol = fmax(v[c].rtol_abs, o->atol);
    rc->rel = rnorm / v[c].scale;
    if ((rc->reason = pcg_check(rnorm, v[c].rz, v[c].tol, v[c].rtol_abs)) != HX_ITERATING) continue;
    if (stop) {
      rc->reason = HX_INTERRUPTED;
      continue;
    }
    HX_CALL(hx_array_copy(bk, n, v[c].p, v[c].z));
    act[na++] = c;
  }

  for (int it = 1; it <= o->max_iterations && na > 0; it++) {
    /* w = A p and p.w of the active columns */
    for (int a = 0; a < na; a++) in[a] = v[act[a]].p, out[a] = v[act[a]].w;
    BPCG_OP(tm->t_operator, hx_op_apply_many_p(op, na, in, out, pw));
    int nb = 0;
    for (int a = 0; a < na; a++) {
      const int c = act[a];
      if (!isfinite(pw[a]) || pw[a] <= 0.0) {
        res[c].reason = isfinite(pw[a]) ? HX_DIVERGED_INDEFINITE_MAT : HX_DIVERGED_NAN;
        continue;
      }
      pw[nb] = pw[a], act[nb++] = c;
    }
    na = nb;
    if (na == 0) break;
    /* x += alpha p; r -= alpha w; z = M^{-1} r; r.r -> slot 0, r.z -> 1 */
    for (int a = 0; a < na; a++) {
      bcol *cv = &v[act[a]];
      const double alpha = cv->rz / pw[a];
      if (fuse) {
        const hx_pc_cg_step u = {.nred = nown, .alpha = alpha, .x = x[act[a]], .p = cv->p, .r = cv->r, .w = cv->w,
                                 .z = cv->z, .red = cv->red, .slot_rr = 0, .slot_rz = 1, .slot_zw = -1};
        PCG_TIMED(tm->t_vector, HX_T_VECTOR, hx_pc_cg_update(pc, &u));
      } else {
        PCG_TIMED(tm->t_vector, HX_T_VECTOR,
                   hx_array_cg_update_red(cv->red, 0, n, nown, x[act[a]], cv->r, cv->p, cv->w, alpha));
      }
      in[a] = cv->r, out[a] = cv->z;
    }
    if (!fuse) {
      PCG_TIMED(tm->t_precond, HX_T_PRECOND,
                 hx_pc_apply_many(pc, na, (const double *const *)in, (double *const *)out));
      for (int a = 0; a < na; a++)
        PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, hx_array_dot_red(v[act[a]].red, 1, nown, v[act[a]].r, v[act[a]].z));
    }
    for (int a = 0; a < na; a++)
      PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, hx_red_fetch(v[act[a]].red, 2, loc + 2 * a));
    PCG_TIMED(tm->t_reduction, HX_T_REDUCTION, bpcg_allreduce(comm, loc, glob, 2 * na, &stop));
    nb = 0;
    for (int a = 0; a < na; a++) {
      const int c = act[a];
      hx_pcg_result *rc = &res[c];
      const double rnorm = sqrt(glob[2 * a]), rz_new = glob[2 * a + 1];
      rc->iterations = it;
      rc->rnorm = rnorm;
      rc->rel = rnorm / v[c].scale;
      if ((rc->reason = pcg_check(rnorm, rz_new, v[c].tol, v[c].rtol_abs)) != HX_ITERATING) continue;
      if (stop) {
        rc->reason = HX_INTERRUPTED;
        continue;
      }
      const double beta = rz_new / v[c].rz;
      v[c].rz = rz_new;
      PCG_TIMED(tm->t_vector, HX_T_VECTOR, hx_array_xpay(bk, n, v[c].p, v[c].z, beta)); /* p = z + beta p */
      act[nb++] = c;
    }
    na = nb;
  }
  for (int a = 0; a < na; a++) res[act[a]].reason = HX_DIVERGED_MAX_IT;
  return HX_SUCCESS;
}

int hx_pcg_solve_many(hx_op op, hx_pc pc, int k, const double *const *d_b, double *const *d_x,
                      const hx_pcg_opts *opts, hx_pcg_result *res) {
  hx_pcg_opts o;
  if (opts) o = *opts;
  else hx_pcg_opts_default(&o);
  HX_CHECK(op && pc && res, HX_ERR_ARG, "block PCG: NULL operator, preconditioner or results");
  HX_CHECK(k >= 0 && k <= HX_AX_MANY_MAX, HX_ERR_ARG, "block PCG: %d right-hand sides (0..%d at once)", k,
           HX_AX_MANY_MAX);
  HX_CHECK(k == 0 || (d_b && d_x), HX_ERR_ARG, "block PCG: NULL column arrays");
  HX_CHECK(o.rtol >= 0 && o.atol >= 0 && o.max_iterations >= 0, HX_ERR_ARG,
           "PCG options: tolerances and max_iterations must be >= 0");
  HX_CHECK(!o.flexible && !o.single_reduction && !o.exact_op && !o.nullspace, HX_ERR_ARG,
           "block PCG: plain PCG only (no flexible, single_reduction, exact_op or nullspace)");
  HX_CHECK(hx_pc_is_symmetric(pc), HX_ERR_ARG, "block PCG: the preconditioner must be symmetric");
  HX_CHECK(!hx_pc_observes(pc), HX_ERR_ARG,
           "block PCG: the preconditioner observes single runs (type auto); give it its final type");
  if (k == 0) return HX_SUCCESS;
  for (int c = 0; c < k; c++) {
    HX_CHECK(d_b[c] && d_x[c], HX_ERR_ARG, "block PCG: column %d is NULL", c);
    res[c] = (hx_pcg_result){0};
    res[c].reason = HX_ITERATING;
  }
  hx_backend b = hx_op_backend(op);
  const int fuse = !o.no_fuse && hx_pc_has_cg_update(pc);
  bcol v[HX_AX_MANY_MAX];
  hx_vec vec[4 * HX_AX_MANY_MAX];
  memset(v, 0, sizeof v);
  memset(vec, 0, sizeof vec);
  int ierr = HX_SUCCESS;
  for (int c = 0; c < k && !ierr; c++) {
    ierr = hx_red_create(b, 4, hx_op_size(op), &v[c].red);
    for (int i = 0; i < 4 && !ierr; i++) ierr = hx_vec_create(b, hx_op_size(op), &vec[4 * c + i]);
    if (!ierr) {
      v[c].r = hx_vec_data(vec[4 * c]), v[c].z = hx_vec_data(vec[4 * c + 1]);
      v[c].p = hx_vec_data(vec[4 * c + 2]), v[c].w = hx_vec_data(vec[4 * c + 3]);
    }
  }
  hx_pcg_result tm = {0};
  double t_op0, t_ex0, t_gs0;
  hx_op_times(op, &t_op0, &t_ex0, &t_gs0);
  if (!ierr) ierr = bpcg_iterate(op, pc, k, d_b, d_x, &o, res, v, fuse, &tm);
  double t_op1, t_ex1, t_gs1;
  hx_op_times(op, &t_op1, &t_ex1, &t_gs1);
  for (int c = 0; c < k; c++) {
    res[c].starts = 1;
    res[c].fused_pc_update = fuse;
    res[c].allreduces_per_iteration = 2;
    res[c].t_operator = tm.t_operator, res[c].t_precond = tm.t_precond;
    res[c].t_vector = tm.t_vector, res[c].t_reduction = tm.t_reduction;
    res[c].t_exchange = t_ex1 - t_ex0;
  }
  for (int i = 0; i < 4 * k; i++) {
    const int e = hx_vec_destroy(&vec[i]);
    if (!ierr) ierr = e;
  }
  for (int c = 0; c < k; c++) {
    const int e = hx_red_destroy(&v[c].red);
    if (!ierr) ierr = e;
  }
  HX_CALL(ierr);
  return HX_SUCCESS;
}
