/* CPU (OpenMP) gather-scatter loops, FP64 and FP32: one template
 * (gs_cpu_t.h) instantiated for double (plain names) and float (_f32). The
 * template's path is relative to kernels/hx_instantiate.h, which includes it. */
#include "gs_impl.h"

#define HX_TEMPLATE "../gs/cpu/gs_cpu_t.h"
#include "hx_instantiate.h"
