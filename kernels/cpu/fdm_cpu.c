/* CPU (OpenMP) loop of the FDM box solves: one element per iteration, the
 * whole-element math of hx_fdm_math.h instantiated for each box size m so
 * the compiler sees constant loop bounds, once generic and once for
 * AVX2+FMA (chosen at run time like the operator kernels, HEXCG_CPU_ISA). */
#include "../ax_impl.h"
#include "../backend_impl.h"
#include "../hx_fdm_math.h"

#define HX_FDM_CPU_LOOP(M, NAME, ATTR)                                                             \
  ATTR static void NAME(int32_t nlist, const int32_t *list, const double *S, const double *L,      \
                        const double *u, double *w) {                                              \
    const int64_t m3 = (int64_t)(M) * (M) * (M);                                                   \
    _Pragma("omp parallel") {                                                                      \
      double t[(M) * (M) * (M)];                                                                   \
      _Pragma("omp for schedule(static)") for (int32_t k = 0; k < nlist; k++) {                    \
        const int64_t e = list ? list[k] : k;                                                      \
        hx_fdm_elem_solve((M), S + e * 3 * (M) * (M), L + e * 3 * (M), u + e * m3, w + e * m3, t); \
      }                                                                                            \
    }                                                                                              \
  }

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HX_FDM_HAVE_AVX2 1
#define HX_FDM_DEFINE(M)                    \
  HX_FDM_CPU_LOOP(M, hx_fdm_cpu_loop_##M, ) \
  HX_FDM_CPU_LOOP(M, hx_fdm_cpu_avx2_##M, __attribute__((target("avx2,fma"))))
#else
#define HX_FDM_HAVE_AVX2 0
#define HX_FDM_DEFINE(M) HX_FDM_CPU_LOOP(M, hx_fdm_cpu_loop_##M, )
#endif
HX_FDM_DEFINE(4)
HX_FDM_DEFINE(5)
HX_FDM_DEFINE(6)
HX_FDM_DEFINE(7)
HX_FDM_DEFINE(8)
HX_FDM_DEFINE(9)
HX_FDM_DEFINE(10)
HX_FDM_DEFINE(11)
HX_FDM_DEFINE(12)
HX_FDM_DEFINE(13)
HX_FDM_DEFINE(14)
HX_FDM_DEFINE(15)
HX_FDM_DEFINE(16)
HX_FDM_DEFINE(17)
HX_FDM_DEFINE(18)
#undef HX_FDM_DEFINE
#undef HX_FDM_CPU_LOOP

typedef void (*hx_fdm_cpu_fn)(int32_t, const int32_t *, const double *, const double *, const double *,
                              double *);
#define HX_FDM_ROW(P) \
  { P##4, P##5, P##6, P##7, P##8, P##9, P##10, P##11, P##12, P##13, P##14, P##15, P##16, P##17, P##18 }
/* [isa][m-4]: isa 0 generic, 1 AVX2+FMA (the operator's choice, hx_ax_cpu_isa) */
static const hx_fdm_cpu_fn hx_fdm_cpu_table[1 + HX_FDM_HAVE_AVX2][HX_FDM_MMAX - 3] = {
    HX_FDM_ROW(hx_fdm_cpu_loop_),
#if HX_FDM_HAVE_AVX2
    HX_FDM_ROW(hx_fdm_cpu_avx2_),
#endif
};
#undef HX_FDM_ROW

int hx_fdm_cpu_apply(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                     const double *u, double *w) {
  if (m < 4 || m > HX_FDM_MMAX)
    return HX_ERROR(HX_ERR_ARG, "FDM box size m = %d outside 4..%d", m, HX_FDM_MMAX);
  static int isa = -1;
  if (isa < 0) isa = HX_FDM_HAVE_AVX2 ? hx_ax_cpu_isa() : 0;
  hx_fdm_cpu_table[isa][m - 4](nlist, list, S, L, u, w);
  return HX_SUCCESS;
}

void hx_fdm_cpu_wgather(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt,
                        const double *HX_RESTRICT x, double *HX_RESTRICT y) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) y[i] = hx_fdm_wgather_1(x, idx[i], wt[i]);
}
