/* Per-entry math of the streaming kernels (the vector ops, BS3, BS5 and the
 * CG helpers), shared by kernels/cpu/stream_cpu.c and
 * kernels/cuda/stream_cuda.cu: the template hx_stream_math_t.h for double
 * (plain names) and float (_f32; under C++ also overloads of the plain
 * names, for the CUDA kernels templated on the type), and the conversion
 * helpers that mix the two. Plain C that also compiles as CUDA C++ (see
 * hx_hd.h). */
#ifndef HX_STREAM_MATH_H
#define HX_STREAM_MATH_H

#include "hx_hd.h"

/* The chunk reductions keep 8 independent partial sums (s[j] takes entries
 * i = j mod 8 from the chunk start) and add them in a fixed tree: enough
 * independent additions in flight to run at cache bandwidth on a CPU, and a
 * fixed order, so the result is deterministic. */
#define HX_NACC 8
static inline HX_HD double hx_acc_sum(const double *s) {
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

#define HX_TEMPLATE "hx_stream_math_t.h"
#include "hx_instantiate.h"

/* y + a x with x widened exactly: the FP32 correction added into FP64 */
static inline HX_HD double hx_axpy_f32_to_f64_1(double y, double a, float x) { return y + a * (double)x; }

#endif
