/* Cross-element AVX2+FMA FDM box solves in FP32 (cpu/fdm_xelem_t.h): one
 * element per lane of 8, for box sizes m = 4..13 (p = 1..10; the m outputs
 * of a line accumulate in registers). hx_fdm_cpu_apply_f32 (cpu/fdm_cpu.c)
 * hands it the complete groups of 8 of a list and solves the rest with the
 * within-element kernel. Off with HEXCG_FDM_XELEM=0 (A/B runs, tests) and
 * with HEXCG_CPU_ISA=generic. Measured (docs/performance.md, "Cross-element
 * FDM"): FP32 p = 7 about 12 % fewer cycles than the within-element kernel,
 * whose lines of 10 are padded to 16 float lanes; in FP64 (4 lanes) the
 * same code gained nothing at p = 7 and 10 % at p = 3, so FP64 keeps the
 * within-element kernel. */
#include "../ax_impl.h"
#include "../fdm_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define HX_FDM_XELEM_MMAX 13
#define XINL static inline __attribute__((always_inline, target("avx2,fma")))

/* FP32: 8 lanes */
#define XT float
#define XV __m256
#define XW 8
#define XN(name) name##_f32
#define XZERO() _mm256_setzero_ps()
#define XLOAD(p) _mm256_load_ps(p)
#define XSTORE(p, v) _mm256_store_ps(p, v)
#define XMUL(a, b) _mm256_mul_ps(a, b)
#define XFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define XADD(a, b) _mm256_add_ps(a, b)
#define XINVPOS(d) \
  _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d), _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_GT_OQ))
#include "fdm_xelem_t.h"

static int hx_fdm_xelem_on(int m) {
  static int on = -1;
  if (on < 0) {
    const char *env = getenv("HEXCG_FDM_XELEM");
    on = hx_ax_cpu_isa() && !(env && !strcmp(env, "0"));
  }
  return on && m >= 4 && m <= HX_FDM_XELEM_MMAX;
}

int32_t hx_fdm_cpu_xelem_f32(int m, int32_t nlist, const int32_t *list, const float *S, const float *L,
                             const float *u, float *w, const int32_t *map, const float *x) {
  if (!hx_fdm_xelem_on(m) || nlist < 8) return 0;
  const int32_t ng = nlist / 8;
  hx_fdm_xelem_table_f32[m - 4](ng, list, S, L, u, w, map, x);
  return ng * 8;
}
#else
int32_t hx_fdm_cpu_xelem_f32(int m, int32_t nlist, const int32_t *list, const float *S, const float *L,
                             const float *u, float *w, const int32_t *map, const float *x) {
  (void)m, (void)nlist, (void)list, (void)S, (void)L, (void)u, (void)w, (void)map, (void)x;
  return 0;
}
#endif
