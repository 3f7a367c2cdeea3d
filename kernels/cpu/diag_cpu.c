/* CPU (OpenMP) extra diagonal on listed entries, FP64 and FP32: one
 * template (diag_cpu_t.h) on the shared per-entry math (hx_diag_math.h). */
#include "diag_impl.h"
#include "hx_diag_math.h"

#define HX_REAL double
#define HX_FN(name) name
#include "diag_cpu_t.h"
#undef HX_FN
#undef HX_REAL
#define HX_REAL float
#define HX_FN(name) name##_f32
#include "diag_cpu_t.h"
#undef HX_FN
#undef HX_REAL
