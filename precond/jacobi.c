/* Jacobi preconditioner with the exact assembled diagonal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_precond.h"

typedef struct {
  hx_backend b;
  int64_t n;
  double *d_inv;
} hx_jacobi;

static int jacobi_apply(void *ctx, const double *d_r, double *d_z) {
  hx_jacobi *j = (hx_jacobi *)ctx;
  HX_CALL(hx_array_pointwise_mult(j->b, j->n, d_z, d_r, j->d_inv));
  return HX_SUCCESS;
}

static int jacobi_destroy(void *ctx) {
  hx_jacobi *j = (hx_jacobi *)ctx;
  HX_CALL(hx_mem_free(j->b, (void **)&j->d_inv));
  free(j);
  return HX_SUCCESS;
}

int hx_pc_jacobi(hx_op op, hx_pc *pc) {
  memset(pc, 0, sizeof *pc);
  hx_jacobi *j;
  HX_CALL(HX_ALLOC(&j, 1));
  j->b = hx_op_backend(op);
  j->n = hx_op_size(op);
  const size_t bytes = sizeof(double) * (size_t)(j->n);
  HX_CALL(hx_mem_alloc(j->b, bytes, (void **)&j->d_inv));
  HX_CALL(hx_op_diagonal(op, j->d_inv));
  double *h;
  HX_CALL(HX_ALLOC(&h, j->n));
  HX_CALL(hx_mem_to_host(j->b, h, j->d_inv, bytes));
  const int64_t *gid = hx_gs_global_ids(hx_op_gs(op));
  for (int64_t i = 0; i < j->n; i++) {
    if (!(h[i] > 0.0) || !isfinite(h[i])) {
      double v = h[i];
      free(h);
      jacobi_destroy(j);
      return HX_ERROR(HX_ERR_NUMERIC, "Jacobi: assembled diagonal at global node %lld is %g (must be > 0)",
                      (long long)gid[i], v);
    }
    h[i] = 1.0 / h[i];
  }
  HX_CALL(hx_mem_to_device(j->b, j->d_inv, h, bytes));
  free(h);
  pc->name = "jacobi";
  pc->ctx = j;
  pc->apply = jacobi_apply;
  pc->destroy = jacobi_destroy;
  pc->passes = 3; /* read r and 1/diag, write z */
  return HX_SUCCESS;
}

int hx_pc_create(const char *name, hx_op op, hx_pc *pc) {
  if (!strcmp(name, "jacobi")) return hx_pc_jacobi(op, pc);
  if (!strcmp(name, "none")) return hx_pc_identity(op, pc);
  return HX_ERROR(HX_ERR_INPUT, "unknown preconditioner '%s' (allowed: jacobi, none)", name);
}
