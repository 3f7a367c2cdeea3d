/* Private to kernels/: per-backend entry points of the precision-parametrised
 * kernels (hx_kernels_prec.h): the FP32 streaming ops and conversions
 * (stream_prec.c -> cpu/stream_cpu.c, cuda/stream_cuda.cu) and the FP32
 * element operator (ax_prec.c -> cpu/ax_cpu.c, cuda/ax_cuda.cu); the FP32
 * gather-scatter loops are gs/'s (gs_impl.h). No CUDA headers here. Sizes are checked by the
 * callers (n >= 1 unless said otherwise). */
#ifndef HX_PREC_IMPL_H
#define HX_PREC_IMPL_H

#include "ax_impl.h"
#include "stream_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- streaming, CPU (cpu/stream_cpu.c: the float instantiation of
 * cpu/stream_cpu_t.h; the double one is declared in backend_impl.h and
 * stream_impl.h). hx_cpu_convert: f32 -> f64, hx_cpu_convert_f32: f64 -> f32
 * (round to nearest). ---- */
int hx_cpu_convert(int64_t n, double *y, const float *x);
int hx_cpu_convert_f32(int64_t n, float *y, const double *x);
void hx_cpu_axpy_f32_to_f64(int64_t n, double *y, double a, const float *x);

/* ---- operator, FP32 storage (ax_prec.c) ----
 * ax->d_basis32: [D (n*n), t (n), w (n), w3 (n^3)] as float, w3[q] = w_i w_j
 * w_k multiplied in float in that order (the CUDA kernel forms the same
 * products). PRECOMPUTED: ax->d_geo32 holds one record per element and
 * ax->d_eoff[e] = (offset in floats) << 2 | kind, with the kinds of the FP64
 * operator (same detection) except that split elements are general:
 *  HX_AXK_GEN: ncomp blocks of n^3 + HX_AX_PAD floats (the FP64 factors G_q,
 *              lambda-mass, rounded to float);
 *  HX_AXK_AFF: HX_AX_MEANS floats: the 7 constants of the FP64 affine record
 *              (G/w_q, lambda |J|) rounded to float, the 8th zero;
 *  HX_AXK_AFV: the FP64 scaled affine record rounded to float: HX_AX_MEANS
 *              floats (the geometry alone), then n^3 + HX_AX_PAD floats of
 *              kappa per node and, when ncomp = 7, as many of lambda.
 * ONTHEFLY: HX_AX_OTF_STRIDE floats per element (map coefficients, kappa,
 * lambda). */
static inline int hx_ax_off_w3_f32(int n) { return n * n + 2 * n; }
/* The cross-element FP32 kernel (cpu/ax_xelem_f32_cpu.c): same contract;
 * returns 1 when it applied the list, 0 when it does not serve this operator
 * (order, mode, ISA, HEXCG_AX_XELEM=0, or no scratch memory), to be done by
 * the one-element kernels. With 1, *nrest > 0 list positions (*rest,
 * malloc'd, the caller frees) hold general records it left to the
 * one-element kernels (p = 4 and 5, where those were as fast). Results are
 * bit for bit those of the one-element generic loop. */
int hx_ax_xelem_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                          const float *u, float *w, double *part, int32_t *nrest, int32_t **rest);
/* 1 if it serves order p with the ISA that hx_ax_cpu_isa() selects
 * (precomputed geometry, HEXCG_AX_XELEM unset or not 0) */
int hx_ax_xelem_serves_f32(int p);

#ifdef HEXCG_HAVE_CUDA
/* ---- CUDA (cuda/stream_cuda.cu: the float launchers of its templated
 * kernels; ax_cuda.cu), queued on q; the reductions wait and return the host
 * value ---- */
int hx_cuda_convert(hx_queue q, int64_t n, double *y, const float *x);
int hx_cuda_convert_f32(hx_queue q, int64_t n, float *y, const double *x);
int hx_cuda_axpy_f32_to_f64(hx_queue q, int64_t n, double *y, double a, const float *x);
#endif

#ifdef __cplusplus
}
#endif
#endif
