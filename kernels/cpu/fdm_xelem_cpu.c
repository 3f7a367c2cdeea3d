/* Cross-element AVX2+FMA FDM box solves in FP32 (cpu/fdm_xelem_t.h): one
 * element per lane of 8, for box sizes m = 4..13 (p = 1..10; the m outputs
 * of a line accumulate in registers). hx_fdm_cpu_apply_f32 (cpu/fdm_cpu.c)
 * hands it the complete groups of 8 of a list and solves the rest with the
 * within-element kernel. Off with HEXCG_FDM_XELEM=0 (A/B runs, tests) and
 * with HEXCG_CPU_ISA=generic. Measured (docs/log/performance.md, "Cross-element
 * FDM"): FP32 p = 7 about 12 % fewer cycles than the within-element kernel,
 * whose lines of 10 are padded to 16 float lanes; in FP64 (4 lanes) the
 * same code gained nothing at p = 7 and 10 % at p = 3, so FP64 keeps the
 * within-element kernel. Where the CPU has AVX-512 (hx_cpu_avx512) the
 * grouped kernels take two groups in 16 lanes, with the AVX2 kernel's bits
 * (docs/fdm.md "AVX-512"). */
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
#define XTARGET "avx2,fma"
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

/* FP32, AVX-512: 16 lanes, two groups of 8 of the grouped layout at a time
 * (the grouped kernels only; the same arithmetic per lane as the AVX2 ones,
 * so the same bits) */
#undef XINL
#define XINL static inline __attribute__((always_inline, target(HX_AVX512_TARGET)))
#define XTARGET HX_AVX512_TARGET
#define XPAIR 1
#define XT float
#define XV __m512
#define XW 16
#define XN(name) name##_f32x16
#define XZERO() _mm512_setzero_ps()
#define XLOAD(p) _mm512_load_ps(p)
#define XSTORE(p, v) _mm512_store_ps(p, v)
#define XMUL(a, b) _mm512_mul_ps(a, b)
#define XFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define XADD(a, b) _mm512_add_ps(a, b)
#define XINVPOS(d) \
  _mm512_maskz_div_ps(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_GT_OQ), _mm512_set1_ps(1.0f), d)
#define XLOADU(p) _mm512_loadu_ps(p)
#define XSTOREU(p, v) _mm512_storeu_ps(p, v)
#define XGATHER(x, idx) (void)0 /* XPAIR_GATHER serves */
#define XPAIR_LOAD(a, b) hx_fdm_xelem_pair_load(a, b)
#define XPAIR_GATHER(x, ia, ib) hx_fdm_xelem_pair_gather(x, ia, ib)
/* lanes 0-7 at out + 8 pt (group g), lanes 8-15 at the next group's */
#define XSTORE_OUT(out, M, pt, v)                                                                   \
  do {                                                                                              \
    _mm256_storeu_ps((out) + (size_t)(pt)*8, _mm512_castps512_ps256(v));                            \
    _mm256_storeu_ps((out) + (size_t)(M) * (M) * (M)*8 + (size_t)(pt)*8,                            \
                     _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));             \
  } while (0)

/* 8 floats at a, 8 at b, as one vector */
XINL __m512 hx_fdm_xelem_pair_load(const float *a, const float *b) {
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_loadu_ps(a))),
                                             _mm256_castps_pd(_mm256_loadu_ps(b)), 1));
}

/* x[ia[0..8)], x[ib[0..8)], 0 where an index is < 0 (not read there) */
XINL __m512 hx_fdm_xelem_pair_gather(const float *x, const int32_t *ia, const int32_t *ib) {
#if defined(__clang__)
  /* as hx_fdm_xelem_gather8: clang 14 cannot split the gather in an OpenMP
   * region of a file built without the target's flags (the fuzz build) */
  float v[16];
  for (int l = 0; l < 8; l++) v[l] = ia[l] >= 0 ? x[ia[l]] : 0.0f, v[8 + l] = ib[l] >= 0 ? x[ib[l]] : 0.0f;
  return _mm512_loadu_ps(v);
#else
  const __m512i i = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)ia)),
                                       _mm256_loadu_si256((const __m256i *)ib), 1);
  const __mmask16 ok = _mm512_cmpgt_epi32_mask(i, _mm512_set1_epi32(-1));
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, i, x, 4);
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
  if (ng <= 0) return;
  if (hx_cpu_avx512()) {
    /* pairs of groups, an odd last one by the AVX2 kernel */
    hx_fdm_xelem_grouped_table_f32x16[m - 4](g0, ng, Sg, Lg, mapg, x, wg);
    if (!(ng & 1)) return;
    g0 += ng - 1, ng = 1;
  }
  hx_fdm_xelem_grouped_table_f32[m - 4](g0, ng, Sg, Lg, mapg, x, wg);
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
