/* The extra-diagonal per-entry math (hx_diag_math_t.h) for double (plain
 * names) and float (_f32), shared by cpu/diag_cpu.c and cuda/diag_cuda.cu. */
#ifndef HX_DIAG_MATH_H
#define HX_DIAG_MATH_H

#include "hx_hd.h"

#define HX_TEMPLATE "hx_diag_math_t.h"
#include "hx_instantiate.h"

#endif
