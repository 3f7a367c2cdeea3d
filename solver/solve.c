/* The solve driver: right-hand side, preconditioner setup, PCG, solution
 * and error norms of one discrete problem (see hx_solver.h). */
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"

/* The steps of hx_solve on buffers the caller frees on every path. */
static int solve_steps(hx_disc d, hx_pc pc, const double *h_f, const double *h_gd, const double *h_bn,
                       hx_field exact, const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l,
                       hx_solve_result *res, double *h_l, double *d_b, double *d_g, double *d_x) {
  hx_backend b = hx_disc_backend(d);
  hx_op op = hx_disc_op(d);
  const int64_t nl = hx_disc_num_l(d);
  const int64_t ng = hx_op_size(op);
  const size_t gbytes = sizeof(double) * (size_t)ng;

  double t0 = hx_wtime();
  HX_CALL(hx_disc_rhs(d, h_f, h_gd, h_bn, d_b, d_g));
  /* initial guess of x = u0 - g on free nodes (masked), else 0 */
  HX_CALL(hx_mem_zero(b, d_x, gbytes));
  if (h_u0_l) HX_CALL(hx_disc_from_l_host(d, h_u0_l, 1, d_x));
  res->t_rhs = hx_wtime() - t0;

  t0 = hx_wtime();
  hx_timer_start(HX_T_PRECOND);
  int ierr = hx_pc_setup(pc);
  hx_timer_stop(HX_T_PRECOND);
  HX_CALL(ierr);
  res->t_pc_setup = hx_wtime() - t0;

  t0 = hx_wtime();
  hx_timer_start(HX_T_SOLVE);
  ierr = hx_pcg_solve(op, pc, d_b, d_x, opts, &res->pcg);
  hx_timer_stop(HX_T_SOLVE);
  res->t_solve = hx_wtime() - t0;
  HX_CALL(ierr);

  /* u = x + g */
  HX_CALL(hx_array_axpby(b, ng, d_x, 1.0, d_g, 1.0));
  HX_CALL(hx_op_to_l_host(op, d_x, h_l));
  if (exact.fn) {
    HX_CALL(hx_disc_error(d, h_l, exact, &res->err_l2, &res->err_max));
    res->exact_known = 1;
  }
  if (h_u_l) memcpy(h_u_l, h_l, sizeof(double) * (size_t)nl);
  return HX_SUCCESS;
}

int hx_solve(hx_disc d, hx_pc pc, const double *h_f, const double *h_gd, const double *h_bn, hx_field exact,
             const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l, hx_solve_result *res) {
  memset(res, 0, sizeof *res);
  hx_backend b = hx_disc_backend(d);
  const int64_t nl = hx_disc_num_l(d);
  const size_t gbytes = sizeof(double) * (size_t)(hx_op_size(hx_disc_op(d)) > 0 ? hx_op_size(hx_disc_op(d)) : 1);
  res->dofs = hx_disc_num_dofs(d);
  double *h_l = NULL, *d_b = NULL, *d_g = NULL, *d_x = NULL;
  int err = HX_ALLOC(&h_l, nl > 0 ? nl : 1);
  if (!err) err = hx_mem_alloc(b, gbytes, (void **)&d_b);
  if (!err) err = hx_mem_alloc(b, gbytes, (void **)&d_g);
  if (!err) err = hx_mem_alloc(b, gbytes, (void **)&d_x);
  if (!err) err = solve_steps(d, pc, h_f, h_gd, h_bn, exact, opts, h_u0_l, h_u_l, res, h_l, d_b, d_g, d_x);
  /* free everything on every path, keep the first error */
  double **bufs[3] = {&d_b, &d_g, &d_x};
  for (int i = 0; i < 3; i++) {
    const int e = hx_mem_free(b, (void **)bufs[i]);
    if (!err) err = e;
  }
  free(h_l);
  HX_CALL(err);
  return HX_SUCCESS;
}
