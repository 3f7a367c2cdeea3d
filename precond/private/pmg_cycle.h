/* Private to precond/: pmg's levels and cycle (pc_pmg.c), for the smoother
 * trial of type auto (pc_auto.c), which builds pmg contexts, switches their
 * levels' smoothers and times them. */
#ifndef HX_PMG_CYCLE_H
#define HX_PMG_CYCLE_H

#include "precond_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  hx_disc d;
  hx_op op;  /* the FP64 operator (Jacobi's diagonal) */
  hx_op opc; /* the cycle's operator, in prec (op itself for FP64; owned by the disc) */
  hx_backend b;
  int64_t n, nown;
  int order;
  hx_precision prec;     /* of the cycle on this level: vectors, opc, smoother */
  hx_smooth_inner inner; /* this level's S (hx_pmg_opts inner, or inner_below below the fine level) */
  hx_pc S[HX_SMOOTH_COUNT]; /* the inner S of each smoother type the level holds (in prec; the
                               smoother trial holds two), inner's applied */
  hx_cheb cheb;
  double est;                     /* eigenvalue estimate (before the safety factor) */
  double est_of[HX_SMOOTH_COUNT]; /* the same of each S the level holds */
  void *bv, *x, *r, *dd, *t; /* rhs, correction, work (in prec) */
  hx_ev_slot ev_setup;              /* the level's setup (seconds: the max over ranks) */
  hx_ev_slot ev_smooth, ev_transfer; /* per apply: the smoothing, the transfers to and from the next level */
} pmg_level;

typedef struct {
  hx_disc d;
  hx_backend b;
  hx_pmg_opts o;
  hx_precision prec; /* of the cycle (preconditioner.precision) */
  hx_precision req;  /* the precision asked for (prec: FP64 where FP32 does not fit) */
  int nl;
  pmg_level lv[HX_PMG_MAX_LEVELS];
  hx_coarse coarse;
  double *h_r, *h_z, *d_zc;
  int overlap;
  hx_ev_slot ev_coarse_setup;
  hx_ev_slot ev_cycle; /* whole applies (its count: the applies) */
  hx_ev_slot ev_coarse, ev_copy; /* the coarse solve (in its thread: added at the join), its host copies */
  struct pmg_many_s *many; /* the k-column work of hx_pmg_apply_many (pmg_many.c; NULL until used) */
} pmg;

/* a pmg context on d (referenced) with options o, levels checked, not set up */
int hx_pmg_new(hx_disc d, const hx_pmg_opts *o, pmg **out);
/* the hx_pc_ops of type pmg on a context */
int hx_pmg_setup(void *ctx);
int hx_pmg_apply(void *ctx, const double *d_r, double *d_z);
/* hx_pc_ops.apply_many of type pmg (pmg_many.c): the multiplicative cycle on
 * k columns with the smoothers' operator applies batched; the same bits as
 * k hx_pmg_apply */
int hx_pmg_apply_many(void *ctx, int k, const double *const *d_r, double *const *d_z);
/* x += P0 A0^{-1} P0^T r on the last level L (r, x on the backend, in L's
 * precision; t: a work vector of L's size and precision): r widened to FP64
 * on the host, the coarse solve, the result rounded back and added */
int hx_pmg_coarse_correct(pmg *g, pmg_level *L, const void *r, void *x, void *t);
/* frees the k-column work (hx_pmg_destroy) */
void hx_pmg_many_free(pmg *g);
void hx_pmg_describe(void *ctx, char *buf, size_t len);
int hx_pmg_report(void *ctx, hx_opt *node);
int hx_pmg_destroy(void *ctx);
/* hx_pc_ops.set_shift: every level's disc, inner preconditioners and
 * Chebyshev bound, and the Q1 level, at the new shift */
int hx_pmg_set_shift(void *ctx, double shift);
/* level l's smoother around S = inner (built unless it exists: a level may
 * hold a Jacobi and a Schwarz S), its eigenvalue bound and polynomial; the
 * level is inner's from here on */
int hx_pmg_level_smoother(pmg *g, int l, hx_smooth_inner inner);

#ifdef __cplusplus
}
#endif
#endif
