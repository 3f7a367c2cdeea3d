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
#include "ax_impl.h"
#include "fdm_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#include "hx_avx2_tr.h"
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
#define XLOADU(p) _mm256_loadu_ps(p)
#define XSTOREU(p, v) _mm256_storeu_ps(p, v)
#define XGATHER(x, idx) hx_fdm_xelem_gather8(x, idx)
#define XTRANS(r) hx_avx2_tr8_ps(r)

/* x[idx[0..8)], 0 where idx < 0 (masked off: x is not read there) */
XINL __m256 hx_fdm_xelem_gather8(const float *x, const int32_t *idx) {
#if defined(__clang__)
  /* clang 14 aborts in its backend ("Do not know how to split the result")
   * on the masked gather inside a target("avx2") function of a file built
   * without -mavx2 (the fuzz build): eight scalar loads there */
  float v[8];
  for (int l = 0; l < 8; l++) v[l] = idx[l] >= 0 ? x[idx[l]] : 0.0f;
  return _mm256_loadu_ps(v);
#else
  const __m256i i = _mm256_loadu_si256((const __m256i *)idx);
  const __m256 ok = _mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(-1)));
  return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, i, ok, 4);
#endif
}

#include "fdm_xelem_t.h"

static int hx_fdm_xelem_on(int m) {
  static int on = -1;
  if (on < 0) {
    on = hx_ax_cpu_isa() && !hx_env_off("HEXCG_FDM_XELEM");
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

int hx_fdm_cpu_xelem_grouped_on(int m) { return hx_fdm_xelem_on(m); }

void hx_fdm_cpu_xelem_grouped_f32(int m, int32_t g0, int32_t ng, const float *Sg, const float *Lg,
                                  const int32_t *mapg, const float *x, float *wg) {
  if (ng > 0) hx_fdm_xelem_grouped_table_f32[m - 4](g0, ng, Sg, Lg, mapg, x, wg);
}
#else
int hx_fdm_cpu_xelem_grouped_on(int m) {
  (void)m;
  return 0;
}

void hx_fdm_cpu_xelem_grouped_f32(int m, int32_t g0, int32_t ng, const float *Sg, const float *Lg,
                                  const int32_t *mapg, const float *x, float *wg) {
  (void)m, (void)g0, (void)ng, (void)Sg, (void)Lg, (void)mapg, (void)x, (void)wg;
}

int32_t hx_fdm_cpu_xelem_f32(int m, int32_t nlist, const int32_t *list, const float *S, const float *L,
                             const float *u, float *w, const int32_t *map, const float *x) {
  (void)m, (void)nlist, (void)list, (void)S, (void)L, (void)u, (void)w, (void)map, (void)x;
  return 0;
}
#endif
