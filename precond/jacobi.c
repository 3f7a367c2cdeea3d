/* Jacobi preconditioner with the exact assembled diagonal, in FP64 or FP32:
 * the diagonal is assembled and inverted in FP64 and, for FP32, rounded to
 * float once; the apply is the pointwise product in the pc's precision. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

typedef struct {
  hx_op op;
  hx_backend b;
  int64_t n;
  hx_precision prec;
  void *d_inv;       /* 1/diag(A) in prec */
  double dmin, dmax; /* range of this rank's assembled diagonal (after setup) */
} jacobi;

static int jacobi_apply(void *ctx, const double *d_r, double *d_z) {
  jacobi *j = (jacobi *)ctx;
  HX_CALL(hx_array_pointwise_mult_p(j->b, j->prec, j->n, d_z, d_r, j->d_inv));
  return HX_SUCCESS;
}

/* the hook of hx_pc_ops: the CG update and z = r / diag in one pass */
static int jacobi_cg_update(void *ctx, const hx_pc_cg_step *u) {
  jacobi *j = (jacobi *)ctx;
  HX_CALL(hx_array_cg_update_diag_red(u->red, u->slot_rr, u->slot_rz, u->slot_zw, j->n, u->nred, u->x, u->r,
                                      u->p, u->w, (const double *)j->d_inv, u->z, u->alpha));
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
  double *d_diag = NULL, *h = NULL;
  HX_CALL(hx_mem_alloc(j->b, bytes ? bytes : 8, (void **)&d_diag));
  int err = HX_ALLOC(&h, j->n > 0 ? j->n : 1);
  if (!err) err = hx_op_diagonal_host(j->op, d_diag, h);
  const int64_t *gid = hx_gs_global_ids(hx_op_gs(j->op));
  j->dmin = INFINITY, j->dmax = -INFINITY;
  for (int64_t i = 0; i < j->n && !err; i++) {
    if (!(h[i] > 0.0) || !isfinite(h[i]))
      err = HX_ERROR(HX_ERR_NUMERIC, "Jacobi: assembled diagonal at global node %lld is %g (must be > 0)",
                     (long long)gid[i], h[i]);
    j->dmin = fmin(j->dmin, h[i]), j->dmax = fmax(j->dmax, h[i]);
    h[i] = 1.0 / h[i];
  }
  if (!err) err = hx_mem_to_device(j->b, d_diag, h, bytes);
  free(h);
  if (!err && j->prec == HX_F64) {
    j->d_inv = d_diag, d_diag = NULL;
  } else if (!err) {
    err = hx_mem_alloc(j->b, hx_precision_size(j->prec) * (size_t)(j->n > 0 ? j->n : 1), &j->d_inv);
    if (!err) err = hx_array_convert(j->b, j->n, j->prec, j->d_inv, HX_F64, d_diag);
  }
  const int ferr = hx_mem_free(j->b, (void **)&d_diag);
  HX_CALL(err);
  HX_CALL(ferr);
  return HX_SUCCESS;
}

/* a new shift of the operator (hx_pc_set_shift): the diagonal again */
static int jacobi_set_shift(void *ctx, double shift) {
  (void)shift;
  jacobi *j = (jacobi *)ctx;
  HX_CALL(hx_mem_free(j->b, &j->d_inv));
  HX_CALL(jacobi_setup(j));
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

const void *hx_pc_jacobi_inv_diag(hx_pc pc) {
  if (!pc || strcmp(hx_pc_type(pc), "jacobi")) return NULL;
  return ((const jacobi *)hx_pc_context(pc))->d_inv;
}

int hx_pc_create_jacobi_prec(hx_op op, hx_precision prec, hx_pc *pc) {
  *pc = NULL;
  HX_CHECK(prec == HX_F64 || prec == HX_F32, HX_ERR_ARG, "Jacobi: unknown precision %d", (int)prec);
  jacobi *j;
  HX_CALL(HX_ALLOC(&j, 1));
  *j = (jacobi){.op = op, .b = hx_op_backend(op), .n = hx_op_size(op), .prec = prec};
  const hx_pc_ops ops = {.type = "jacobi",
                         .setup = jacobi_setup,
                         .apply = jacobi_apply,
                         .report = jacobi_report,
                         .destroy = jacobi_destroy,
                         .passes = 3 /* read r and 1/diag, write z */,
                         .cg_update = prec == HX_F64 ? jacobi_cg_update : NULL,
                         .cg_update_passes = 8 /* read x, p, r, w, 1/diag; write x, r, z */,
                         .prec = prec,
                         .set_shift = jacobi_set_shift};
  HX_CALL(hx_pc_create_shell(op, &ops, j, 0, NULL, pc));
  return HX_SUCCESS;
}

int hx_pc_create_jacobi(hx_op op, hx_pc *pc) {
  HX_CALL(hx_pc_create_jacobi_prec(op, HX_F64, pc));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- types none and jacobi */
static const hx_opt_key none_rows[] = {HX_PC_TYPE_KEY};
static const hx_opt_group none_group = {"preconditioner", NULL, none_rows, HX_NELEM(none_rows)};
static int none_create(hx_disc d, const void *vals, hx_pc *pc) {
  (void)vals;
  HX_CALL(hx_pc_create_identity(hx_disc_op(d), pc));
  return HX_SUCCESS;
}
const hx_pc_class hx_pc_type_none = {.name = "none", .group = &none_group, .create = none_create};

typedef struct {
  int prec; /* hx_precision */
} jacobi_vals;
static const hx_opt_key jacobi_rows[] = {HX_PC_TYPE_KEY, HX_PC_PREC_KEY(offsetof(jacobi_vals, prec))};
static const hx_opt_group jacobi_group = {"preconditioner", "type: jacobi", jacobi_rows,
                                          HX_NELEM(jacobi_rows)};

static void jacobi_defaults(void *vals) { ((jacobi_vals *)vals)->prec = HX_F64; }

static int jacobi_read(const hx_opt *o, void *vals) {
  if (((const jacobi_vals *)vals)->prec != HX_F32) return HX_SUCCESS;
  /* Jacobi is one multiplication per entry on the FP64 vectors CG hands
   * it: nothing to gain in FP32 */
  return hx_opt_error(
      hx_opt_get(o, "precision"),
      "preconditioner.precision: type jacobi has no FP32 variant (one multiplication per "
      "entry, bound by CG's FP64 vectors); remove the key, write fp64, or use type asm or pmg");
}

static int jacobi_create(hx_disc d, const void *vals, hx_pc *pc) {
  (void)vals;
  HX_CALL(hx_pc_create_jacobi(hx_disc_op(d), pc));
  return HX_SUCCESS;
}

const hx_pc_class hx_pc_type_jacobi = {.name = "jacobi",
                                       .group = &jacobi_group,
                                       .size = sizeof(jacobi_vals),
                                       .defaults = jacobi_defaults,
                                       .read = jacobi_read,
                                       .create = jacobi_create};
