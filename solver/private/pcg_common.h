/* Private to solver/: what the single-vector PCG (pcg.c) and the block PCG
 * (block_pcg.c) share: the stopping test and the timing of one step. */
#ifndef HX_PCG_COMMON_H
#define HX_PCG_COMMON_H

#include <math.h>

#include "hx_solver.h"

/* Reason to stop after a residual norm and r.z are known (HX_ITERATING: go on). */
static inline hx_reason pcg_check(double rnorm, double rz, double tol, double rtol_abs) {
  if (!isfinite(rnorm) || !isfinite(rz)) return HX_DIVERGED_NAN;
  if (rnorm <= tol) return rnorm <= rtol_abs ? HX_CONVERGED_RTOL : HX_CONVERGED_ATOL;
  if (rz <= 0.0) return HX_DIVERGED_INDEFINITE_PC;
  return HX_ITERATING;
}

/* Run expr timed into the process timer id and the result field acc. */
#define PCG_TIMED(acc, id, expr) \
  do {                              \
    const double t_ = hx_wtime();   \
    hx_timer_start(id);             \
    const int e_ = (expr);          \
    hx_timer_stop(id);              \
    (acc) += hx_wtime() - t_;       \
    HX_CALL(e_);                    \
  } while (0)

#endif
