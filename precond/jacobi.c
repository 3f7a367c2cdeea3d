/* Jacobi preconditioner with the exact assembled diagonal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

typedef struct {
  hx_op op;
  hx_backend b;
  int64_t n;
  double *d_inv;
  double dmin, dmax; /* range of this rank's assembled diagonal (after setup) */
} jacobi;

static int jacobi_apply(void *ctx, const double *d_r, double *d_z) {
  jacobi *j = (jacobi *)ctx;
  HX_CALL(hx_array_pointwise_mult(j->b, j->n, d_z, d_r, j->d_inv));
  return HX_SUCCESS;
}

/* the hook of hx_pc_ops: the CG update and z = r / diag in one pass */
static int jacobi_cg_update(void *ctx, const hx_pc_cg_step *u) {
  jacobi *j = (jacobi *)ctx;
  HX_CALL(hx_array_cg_update_diag_red(u->red, u->slot_rr, u->slot_rz, u->slot_zw, j->n, u->nred, u->x, u->r,
                                      u->p, u->w, j->d_inv, u->z, u->alpha));
  return HX_SUCCESS;
}

static int jacobi_destroy(void *ctx) {
  jacobi *j = (jacobi *)ctx;
  const int err = hx_mem_free(j->b, (void **)&j->d_inv);
  free(j);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int jacobi_setup(void *ctx) {
  jacobi *j = (jacobi *)ctx;
  const size_t bytes = sizeof(double) * (size_t)(j->n);
  HX_CALL(hx_mem_alloc(j->b, bytes ? bytes : 8, (void **)&j->d_inv));
  HX_CALL(hx_op_diagonal(j->op, j->d_inv));
  double *h;
  HX_CALL(HX_ALLOC(&h, j->n > 0 ? j->n : 1));
  int err = hx_mem_to_host(j->b, h, j->d_inv, bytes);
  const int64_t *gid = hx_gs_global_ids(hx_op_gs(j->op));
  j->dmin = INFINITY, j->dmax = -INFINITY;
  for (int64_t i = 0; i < j->n && !err; i++) {
    if (!(h[i] > 0.0) || !isfinite(h[i]))
      err = HX_ERROR(HX_ERR_NUMERIC, "Jacobi: assembled diagonal at global node %lld is %g (must be > 0)",
                     (long long)gid[i], h[i]);
    j->dmin = fmin(j->dmin, h[i]), j->dmax = fmax(j->dmax, h[i]);
    h[i] = 1.0 / h[i];
  }
  if (!err) err = hx_mem_to_device(j->b, j->d_inv, h, bytes);
  free(h);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* the report tree's jacobi node (hx_pc_ops.report): its unknowns and the
 * range of the assembled diagonal, over all ranks (collective) */
static int jacobi_report(void *ctx, hx_opt *node) {
  jacobi *j = (jacobi *)ctx;
  const MPI_Comm comm = hx_gs_comm(hx_op_gs(j->op));
  int64_t n = hx_op_owned(j->op);
  double range[2] = {-j->dmin, j->dmax}; /* max of both */
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_SUM, comm));
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_DOUBLE, MPI_MAX, comm));
  HX_CALL(hx_pc_report_text(node, "diagonal", "assembled"));
  HX_CALL(hx_pc_report_int(node, "dofs", n));
  if (j->d_inv) {
    HX_CALL(hx_pc_report_real(node, "diagonal_min", -range[0]));
    HX_CALL(hx_pc_report_real(node, "diagonal_max", range[1]));
  }
  return HX_SUCCESS;
}

const double *hx_pc_jacobi_inv_diag(hx_pc pc) {
  if (!pc || strcmp(hx_pc_type(pc), "jacobi")) return NULL;
  return ((const jacobi *)hx_pc_context(pc))->d_inv;
}

int hx_pc_create_jacobi(hx_op op, hx_pc *pc) {
  jacobi *j;
  HX_CALL(HX_ALLOC(&j, 1));
  *j = (jacobi){.op = op, .b = hx_op_backend(op), .n = hx_op_size(op)};
  const hx_pc_ops ops = {.type = "jacobi",
                         .setup = jacobi_setup,
                         .apply = jacobi_apply,
                         .report = jacobi_report,
                         .destroy = jacobi_destroy,
                         .passes = 3 /* read r and 1/diag, write z */,
                         .cg_update = jacobi_cg_update,
                         .cg_update_passes = 8 /* read x, p, r, w, 1/diag; write x, r, z */};
  const int err = hx_pc_create_shell(op, &ops, j, 0, NULL, pc);
  if (err) jacobi_destroy(j);
  HX_CALL(err);
  return HX_SUCCESS;
}
