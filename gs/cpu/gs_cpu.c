/* CPU (OpenMP) gather-scatter loops, FP64 and FP32: one template
 * (gs_cpu_t.h) instantiated for double (plain names) and float (_f32). */
#include "gs_impl.h"

#define HX_R(x) ((HX_REAL)(x))
#define HX_REAL double
#define HX_FN(name) name
#include "gs_cpu_t.h"
#undef HX_FN
#undef HX_REAL
#define HX_REAL float
#define HX_FN(name) name##_f32
#include "gs_cpu_t.h"
#undef HX_FN
#undef HX_REAL
#undef HX_R
