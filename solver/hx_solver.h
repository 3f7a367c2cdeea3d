/* hexcg solver: PCG with fused updates, the convergence monitor, the
 * operator object (Ax with Dirichlet mask and halo exchange). */
#ifndef HX_SOLVER_H
#define HX_SOLVER_H

#include "hx_core.h"
#include "hx_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why an iteration stopped (PETSc's KSPConvergedReason): > 0 converged,
 * < 0 diverged or broke down, 0 still iterating. Not an error code. */
typedef enum {
  HX_CONVERGED_RTOL = 1,
  HX_CONVERGED_ATOL = 2,
  HX_ITERATING = 0,
  HX_DIVERGED_MAX_IT = -1,
  HX_DIVERGED_NAN = -2,
  HX_DIVERGED_INDEFINITE_MAT = -3,
  HX_DIVERGED_INDEFINITE_PC = -4
} hx_reason;

/* "converged_rtol", "diverged_max_iterations", ... */
const char *hx_reason_name(hx_reason r);

#ifdef __cplusplus
}
#endif
#endif
