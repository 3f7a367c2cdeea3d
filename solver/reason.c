#include "hx_solver.h"

const char *hx_reason_name(hx_reason r) {
  switch (r) {
    case HX_CONVERGED_RTOL: return "converged_rtol";
    case HX_CONVERGED_ATOL: return "converged_atol";
    case HX_ITERATING: return "iterating";
    case HX_DIVERGED_MAX_IT: return "diverged_max_iterations";
    case HX_DIVERGED_NAN: return "diverged_nan";
    case HX_DIVERGED_INDEFINITE_MAT: return "diverged_indefinite_operator";
    case HX_DIVERGED_INDEFINITE_PC: return "diverged_indefinite_preconditioner";
    case HX_DIVERGED_STAGNATION: return "diverged_stagnation";
    case HX_INTERRUPTED: return "interrupted";
  }
  return "unknown";
}
