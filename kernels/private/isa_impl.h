/* Private to the CPU kernels: which of the AVX-512 and AVX2 kernels run
 * (cpu/isa_cpu.c; docs/operator.md "Which AVX-512 kernels run"). The public view is
 * hx_cpu_isa_choice (hx_kernels.h). */
#ifndef HX_ISA_IMPL_H
#define HX_ISA_IMPL_H

#include "hx_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Orders of the FP64 operator with an AVX-512 kernel beside the AVX2 one:
 * p = 2..6 the cross-element kernel (8 elements per vector against 4: every
 * lane does the same operations, so the same bits), p = 7 the within-element
 * kernel (its r contraction sums in another order: round-off differences).
 * The start-up probe decides the orders up to HX_ISA_PROBE_PMAX; p = 7 the
 * table by CPU, so that every rank and every run (a restart) on a CPU model
 * takes the same kernel where the choice could change the bits. */
#define HX_ISA_PMIN 2
#define HX_ISA_PMAX 7
#define HX_ISA_PROBE_PMAX 6
/* AVX-512 is taken where its best time is at most (1 + HX_ISA_MARGIN)
 * times AVX2's: the spread of the best of the probe's rounds on a shared
 * machine (docs/log/performance.md, "the probe") */
#define HX_ISA_MARGIN 0.05

/* The probe's decision, a pure function: t512[p] and t2[p] (p = 0..HX_ISA_PMAX)
 * the best seconds of the AVX-512 and the AVX2 kernel at order p (<= 0 or
 * NaN: not measured). Returns the bit mask (bit p) of the measured orders
 * where AVX-512 is not slower than AVX2 by more than margin (relative);
 * *ratio (may be NULL) is the geometric mean of t512/t2 over the measured
 * orders (0 when none), *overall (may be NULL) 1 when that mean is within
 * the margin too (the kernels chosen for all orders at once). */
unsigned hx_cpu_isa_decide(const double *t512, const double *t2, double margin, int *overall, double *ratio);

/* A row of the table by CPU: vendor (cpuid's 12 characters), family (-1:
 * any), models model_lo..model_hi, avx512 (1: the AVX-512 kernels at the
 * orders the table decides), and where the row's figures come from. */
typedef struct {
  const char *vendor;
  int family, model_lo, model_hi, avx512;
  const char *evidence;
} hx_isa_row;
/* The first row that matches (never NULL: the last row is the default, AVX2). */
const hx_isa_row *hx_cpu_isa_row(const char *vendor, int family, int model);

/* 1 where the FP64 operator at order p runs its AVX-512 kernel (the choice
 * at create time, hx_ax_build); 0 at orders without one. */
int hx_cpu_avx512_order(int p);

#ifdef __cplusplus
}
#endif
#endif
