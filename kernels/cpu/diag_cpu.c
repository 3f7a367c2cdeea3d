/* CPU (OpenMP) extra diagonal on listed entries, FP64 and FP32: one
 * template (diag_cpu_t.h) on the shared per-entry math (hx_diag_math.h). */
#include "backend_impl.h"
#include "hx_diag_math.h"

/* the template's path is relative to hx_instantiate.h (kernels/) */
#define HX_TEMPLATE "cpu/diag_cpu_t.h"
#include "hx_instantiate.h"
