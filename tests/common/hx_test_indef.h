/* An indefinite preconditioner (z = -r, so r.z < 0) with a right-hand side
 * of ones (masked) and a zero start on the device: what the breakdown tests
 * of the solvers (tests/solver/t500-solve.c, t540-cg.c) hand to
 * hx_pcg_solve. Header-only. */
#ifndef HX_TEST_INDEF_H
#define HX_TEST_INDEF_H

#include <stdlib.h>

#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_test.h"

static int hxt_neg_apply(void *ctx, const double *d_r, double *d_z) {
  hx_op op = (hx_op)ctx;
  HX_CALL(hx_array_axpby(hx_op_backend(op), hx_op_size(op), d_z, -1.0, d_r, 0.0));
  return HX_SUCCESS;
}

typedef struct {
  hx_backend b;
  double *db, *dx; /* b = masked ones, x = 0 (device G-vectors) */
  hx_pc neg;
} hxt_indef;

static int hxt_indef_create(hx_disc d, hxt_indef *t) {
  hx_op op = hx_disc_op(d);
  const int64_t ng = hx_op_size(op);
  t->b = hx_disc_backend(d);
  double *hb = malloc(sizeof(double) * ng);
  HX_TCALL(hx_mem_alloc(t->b, sizeof(double) * ng, (void **)&t->db));
  HX_TCALL(hx_mem_alloc(t->b, sizeof(double) * ng, (void **)&t->dx));
  for (int64_t i = 0; i < ng; i++) hb[i] = 1.0;
  HX_TCALL(hx_mem_to_device(t->b, t->db, hb, sizeof(double) * ng));
  free(hb);
  HX_TCALL(hx_gs_apply_mask(hx_disc_gs(d), t->db));
  HX_TCALL(hx_mem_zero(t->b, t->dx, sizeof(double) * ng));
  static const hx_pc_ops neg_ops = {.type = "negative", .apply = hxt_neg_apply, .passes = 2};
  HX_TCALL(hx_pc_create_shell(op, &neg_ops, op, 0, NULL, &t->neg));
  return 0;
}

static int hxt_indef_destroy(hxt_indef *t) {
  HX_TCALL(hx_pc_destroy(&t->neg));
  hx_mem_free(t->b, (void **)&t->db), hx_mem_free(t->b, (void **)&t->dx);
  return 0;
}

#endif
