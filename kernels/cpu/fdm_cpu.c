/* CPU (OpenMP) loop of the FDM box solves: one element per iteration, the
 * whole-element math of hx_fdm_math.h instantiated for each box size m so
 * the compiler sees constant loop bounds. */
#include "../backend_impl.h"
#include "../hx_fdm_math.h"

#define HX_FDM_CPU_LOOP(M)                                                                              \
  static void hx_fdm_cpu_loop_##M(int32_t nlist, const int32_t *list, const double *S, const double *L, \
                                  const double *u, double *w) {                                         \
    const int64_t m3 = (int64_t)(M) * (M) * (M);                                                        \
    _Pragma("omp parallel") {                                                                           \
      double t[(M) * (M) * (M)];                                                                        \
      _Pragma("omp for schedule(static)") for (int32_t k = 0; k < nlist; k++) {                         \
        const int64_t e = list ? list[k] : k;                                                           \
        hx_fdm_elem_solve((M), S + e * 3 * (M) * (M), L + e * 3 * (M), u + e * m3, w + e * m3, t);      \
      }                                                                                                 \
    }                                                                                                   \
  }
HX_FDM_CPU_LOOP(4)
HX_FDM_CPU_LOOP(5)
HX_FDM_CPU_LOOP(6)
HX_FDM_CPU_LOOP(7)
HX_FDM_CPU_LOOP(8)
HX_FDM_CPU_LOOP(9)
HX_FDM_CPU_LOOP(10)
HX_FDM_CPU_LOOP(11)
HX_FDM_CPU_LOOP(12)
HX_FDM_CPU_LOOP(13)
HX_FDM_CPU_LOOP(14)
HX_FDM_CPU_LOOP(15)
HX_FDM_CPU_LOOP(16)
HX_FDM_CPU_LOOP(17)
HX_FDM_CPU_LOOP(18)
#undef HX_FDM_CPU_LOOP

int hx_fdm_cpu_apply(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                     const double *u, double *w) {
  switch (m) {
#define HX_FDM_CASE(M) \
  case M: hx_fdm_cpu_loop_##M(nlist, list, S, L, u, w); break;
    HX_FDM_CASE(4)
    HX_FDM_CASE(5)
    HX_FDM_CASE(6)
    HX_FDM_CASE(7)
    HX_FDM_CASE(8)
    HX_FDM_CASE(9)
    HX_FDM_CASE(10)
    HX_FDM_CASE(11)
    HX_FDM_CASE(12)
    HX_FDM_CASE(13)
    HX_FDM_CASE(14)
    HX_FDM_CASE(15)
    HX_FDM_CASE(16)
    HX_FDM_CASE(17)
    HX_FDM_CASE(18)
#undef HX_FDM_CASE
    default: return HX_ERROR(HX_ERR_ARG, "FDM box size m = %d outside 4..%d", m, HX_FDM_MMAX);
  }
  return HX_SUCCESS;
}

void hx_fdm_cpu_wgather(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt,
                        const double *HX_RESTRICT x, double *HX_RESTRICT y) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) y[i] = hx_fdm_wgather_1(x, idx[i], wt[i]);
}
