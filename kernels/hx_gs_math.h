/* Gather-scatter per-row / per-entry math shared by kernels/cpu/gs_cpu.c and
 * kernels/cuda/gs_cuda.cu (HX_HD: plain C that also compiles as CUDA C++).
 * The CPU loops and the CUDA kernels call exactly these functions, so both
 * backends sum and combine in the same order and give the same bits. */
#ifndef HX_GS_MATH_H
#define HX_GS_MATH_H

#include <stdint.h>

#include "hx_hd.h"

/* The functions are written once for a value type HX_REAL in
 * hx_gs_math_t.h and instantiated for double (hx_gs_row_sum, ...: the FP64
 * gather-scatter) and float (hx_gs_row_sum_f32, ...: the FP32 one, same
 * order of operations). Under C++ (the CUDA kernels, templated on the type)
 * the float instantiation also exists under the plain names, as overloads. */
#define HX_TEMPLATE "hx_gs_math_t.h"
#include "hx_instantiate.h"

#endif
