/* The solve driver: right-hand side, preconditioner setup, PCG, solution
 * and error norms of one discrete problem (see hx_solver.h). */
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"

int hx_solve(hx_disc d, hx_pc pc, const double *h_f, const double *h_gd, const double *h_bn, hx_field exact,
             const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l, hx_solve_result *res) {
  memset(res, 0, sizeof *res);
  hx_backend b = hx_disc_backend(d);
  hx_op op = hx_disc_op(d);
  const int64_t nl = hx_disc_num_l(d);
  const int64_t ng = hx_op_size(op);
  const size_t gbytes = sizeof(double) * (size_t)ng;
  res->dofs = hx_disc_num_dofs(d);
  double *h_l, *d_b, *d_g, *d_x;
  HX_CALL(HX_ALLOC(&h_l, nl));
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)&d_b));
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)&d_g));
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)&d_x));

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
  HX_CALL(hx_mem_free(b, (void **)&d_b));
  HX_CALL(hx_mem_free(b, (void **)&d_g));
  HX_CALL(hx_mem_free(b, (void **)&d_x));
  free(h_l);
  return HX_SUCCESS;
}
