/* The inner preconditioners S of pmg's smoothers (x += q(S A) S (b - A x),
 * cheby.c), each an hx_pc object in the level's precision made by its
 * smoother type's record; private/smoother_types.h lists the types.
 * jacobi: the assembled diagonal of the level's FP64 operator (the FP32
 * one differs from it by rounding only), applied in the level's precision
 * (jacobi.c). asm, ras: overlapping Schwarz by fast diagonalisation at the
 * level's order (fdm.c), weighted symmetrically (sqrt) or restricted. */
#include <stdlib.h>

#include "precond_impl.h"

static int jacobi_create(hx_disc d, hx_precision prec, hx_pc *S) {
  HX_CALL(hx_pc_create_jacobi_prec(hx_disc_op(d), prec, S));
  HX_CALL(hx_pc_setup(*S));
  return HX_SUCCESS;
}

/* bytes per node of the level (the diagonal and the Chebyshev vectors) */
static double jacobi_mem(int q) {
  (void)q;
  return 46.1;
}

const hx_smoother_class hx_smoother_jacobi = {
    .name = "jacobi", .symmetric = 1, .mem_per_node = jacobi_mem, .create = jacobi_create};

/* ---------------------------------------------------------------- Schwarz */
typedef struct {
  hx_disc d; /* referenced: the FDM borrows its mesh, gs and coefficients */
  hx_fdm f;
  hx_precision prec;
} schwarz;

static int schwarz_apply(void *ctx, const double *d_r, double *d_z) {
  schwarz *s = ctx;
  HX_CALL(hx_fdm_apply_p(s->f, s->prec, d_r, d_z));
  return HX_SUCCESS;
}

static int schwarz_destroy(void *ctx) {
  schwarz *s = ctx;
  int first = hx_fdm_destroy(&s->f);
  const int err = hx_disc_destroy(&s->d);
  if (err && !first) first = err;
  free(s);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

/* a new shift of the level (hx_pc_set_shift): the boxes' eigenvalues */
static int schwarz_set_shift(void *ctx, double shift) {
  schwarz *s = ctx;
  HX_CALL(hx_disc_set_shift(s->d, shift));
  HX_CALL(hx_fdm_set_lambda(s->f, hx_disc_lambda(s->d)));
  return HX_SUCCESS;
}

static int schwarz_create(hx_disc d, hx_precision prec, hx_fdm_weight weight, hx_pc *S) {
  *S = NULL;
  schwarz *s;
  HX_CALL(HX_ALLOC(&s, 1));
  *s = (schwarz){.prec = prec};
  int err = hx_fdm_create_on(d, weight, 1, prec, &s->f);
  if (!err && !(err = hx_disc_reference(d))) s->d = d;
  if (err) {
    schwarz_destroy(s);
    HX_CALL(err);
  }
  const hx_pc_ops ops = {.type = "schwarz",
                         .apply = schwarz_apply,
                         .destroy = schwarz_destroy,
                         .passes = 4,
                         .nonsymmetric = weight == HX_FDM_WEIGHT_RAS,
                         .prec = prec,
                         .set_shift = schwarz_set_shift};
  HX_CALL(hx_pc_create_shell(hx_disc_op(d), &ops, s, 0, NULL, S));
  HX_CALL(hx_pc_setup(*S));
  return HX_SUCCESS;
}

/* bytes per node of the level: the FDM boxes, ((q+3)/(q+1))^3 for the extended ones */
static double schwarz_mem(int q) {
  const double box = (q + 3.0) / (q + 1.0);
  return 35.0 * box * box * box;
}

static int asm_create(hx_disc d, hx_precision prec, hx_pc *S) {
  HX_CALL(schwarz_create(d, prec, HX_FDM_WEIGHT_SQRT, S));
  return HX_SUCCESS;
}
const hx_smoother_class hx_smoother_asm = {
    .name = "asm", .symmetric = 1, .mem_per_node = schwarz_mem, .create = asm_create};

static int ras_create(hx_disc d, hx_precision prec, hx_pc *S) {
  HX_CALL(schwarz_create(d, prec, HX_FDM_WEIGHT_RAS, S));
  return HX_SUCCESS;
}
const hx_smoother_class hx_smoother_ras = {.name = "ras",
                                           .what = "restricted Schwarz",
                                           .symmetric = 0,
                                           .mem_per_node = schwarz_mem,
                                           .create = ras_create};

#define HX_SMOOTHER(ID_, id_) &hx_smoother_##id_,
const hx_smoother_class *const hx_smoothers[HX_SMOOTH_COUNT] = {
#include "smoother_types.h"
};
#undef HX_SMOOTHER
