/* CPU (OpenMP) loop of the FDM box solves: one element per iteration, the
 * whole-element math of hx_fdm_math.h instantiated for each box size m so
 * the compiler sees constant loop bounds, once generic and once for
 * AVX2+FMA (chosen at run time like the operator kernels, HEXCG_CPU_ISA),
 * each in double and in float (the FP32 Schwarz level: 8 float lanes in the
 * AVX2 solve, cpu/fdm_avx2_t.h). */
#include "ax_impl.h"
#include "backend_impl.h"
#include "fdm_impl.h"
#include "../hx_fdm_math.h"

/* The generic loop for value type T (math names with suffix SUF: empty
 * for double, _f32 for float); map != NULL: the input box of element e is
 * gathered as x[map[e m^3 + pt]] (0 where map < 0) instead of read from u. */
#define HX_FDM_CPU_LOOP(M, NAME, T, SUF)                                                             \
  static void NAME(int32_t nlist, const int32_t *list, const T *S, const T *L, const T *u, T *w,     \
                   const int32_t *map, const T *x) {                                                 \
    const int64_t m3 = (int64_t)(M) * (M) * (M);                                                     \
    _Pragma("omp parallel") {                                                                        \
      T t[(M) * (M) * (M)], U[(M) * (M) * (M)];                                                      \
      _Pragma("omp for schedule(static)") for (int32_t k = 0; k < nlist; k++) {                      \
        const int64_t e = list ? list[k] : k;                                                        \
        const T *ue = U;                                                                             \
        if (!map)                                                                                    \
          ue = u + e * m3;                                                                           \
        else {                                                                                       \
          for (int64_t pt = 0; pt < m3; pt++) U[pt] = hx_fdm_wgather_1##SUF(x, map[e * m3 + pt], 1); \
        }                                                                                            \
        hx_fdm_elem_solve##SUF((M), S + e * 3 * (M) * (M), L + e * 3 * (M), ue, w + e * m3, t);      \
      }                                                                                              \
    }                                                                                                \
  }

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HX_FDM_HAVE_AVX2 1
#include <immintrin.h>
#define HX_FDM_AVX2_FN static inline __attribute__((always_inline, target("avx2,fma")))

/* The AVX2+FMA element solve: the same six contractions and scaling as
 * hx_fdm_elem_solve, register-blocked. Inside the element the box lives in
 * two scratch boxes whose r lines are padded from M to P = 4 ceil(M/4)
 * entries (X[a + P (b + M c)], padding lanes 0), so every contraction runs
 * on whole 4-wide vectors:
 *  - r (fastest index): "right" products, out[l][0..P) = sum_q in[l][q]
 *    B[q][0..P), LB lines x P/4 vectors of accumulators, the line entries
 *    broadcast, B (S_r^T or S_r, padded to P columns) built per element;
 *  - s and t (strided index): "left" products, out[v + i rs] = sum_q
 *    A(i, q) in[v + q rs] over the vectors v of the box, RB rows x VB
 *    vectors of accumulators, the coefficients A(i, q) = S[i][q] or S[q][i]
 *    broadcast straight from S (no transposed copy needed);
 *  - the diagonal 1 / (L_r + L_s + L_t) is applied to the accumulators of
 *    the forward t contraction before they are stored.
 * Every output is a sum over q in increasing order (FMA: one rounding per
 * term), so results agree with the generic loop to round-off. The input box
 * is read unpadded (stride M) from u, or gathered through map from x
 * (fused scatter); the output is stored unpadded into w. */
#define HX_FDM_P(M) (((M) + 3) & ~3)
#ifndef HX_FDM_RB
/* accumulator blocks (measured at p = 7: left 4 x 3 and right 3 lines x 3
 * vectors 3.4-3.5 ms per 864 elements on one core; 5 x 2 and 4 lines 5.0) */
#define HX_FDM_RB(M) 4
#define HX_FDM_VB(M) 3
#define HX_FDM_LB(NA) ((NA) >= 5 ? 2 : (NA) >= 3 ? 3 : (NA) == 2 ? 5 : 8)
#endif

/* x rounded up to a multiple of the lanes; vector base offset of vector k
 * of a padded box: slab = 1 walks the vectors of the s direction (per t
 * plane c: NA vectors per b line), slab = 0 the flat vectors of the t
 * direction. */
#define HX_FDM_PW(M) ((((M) + HX_VW - 1) / HX_VW) * HX_VW)
#define HX_FDM_VBASE_W(slab, k, NA, M, P) \
  ((slab) ? ((k) / (NA)) * (M) * (P) + ((k) % (NA)) * HX_VW : HX_VW * (k))

/* FP64: 4 lanes */
#define HX_T double
#define HX_V __m256d
#define HX_VW 4
#define HX_AF(name) name
#define HX_VZERO() _mm256_setzero_pd()
#define HX_VLOAD(p) _mm256_load_pd(p)
#define HX_VBCAST(p) _mm256_broadcast_sd(p)
#define HX_VFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define HX_VSTORE(p, v) _mm256_store_pd(p, v)
#define HX_VADD(a, b) _mm256_add_pd(a, b)
#define HX_VSET1(x) _mm256_set1_pd(x)
#define HX_VMUL(a, b) _mm256_mul_pd(a, b)
#define HX_VINVPOS(d) \
  _mm256_and_pd(_mm256_div_pd(_mm256_set1_pd(1.0), d), _mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_GT_OQ))
#define HX_VSTOREN(o, v, n)                                    \
  do {                                                         \
    if ((n) == 4) {                                            \
      _mm256_storeu_pd(o, v);                                  \
    } else {                                                   \
      const __m128d lo = _mm256_castpd256_pd128(v);            \
      if ((n) == 1)                                            \
        _mm_store_sd(o, lo);                                   \
      else                                                     \
        _mm_storeu_pd(o, lo);                                  \
      if ((n) == 3) _mm_store_sd(o + 2, _mm256_extractf128_pd(v, 1)); \
    }                                                          \
  } while (0)
#include "fdm_avx2_t.h"

/* FP32: 8 lanes (the FP32 preconditioner) */
#define HX_T float
#define HX_V __m256
#define HX_VW 8
#define HX_AF(name) name##_f32
#define HX_VZERO() _mm256_setzero_ps()
#define HX_VLOAD(p) _mm256_load_ps(p)
#define HX_VBCAST(p) _mm256_broadcast_ss(p)
#define HX_VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define HX_VSTORE(p, v) _mm256_store_ps(p, v)
#define HX_VADD(a, b) _mm256_add_ps(a, b)
#define HX_VSET1(x) _mm256_set1_ps(x)
#define HX_VMUL(a, b) _mm256_mul_ps(a, b)
#define HX_VINVPOS(d) \
  _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d), _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_GT_OQ))
#define HX_VSTOREN(o, v, n)                                                                              \
  do {                                                                                                   \
    if ((n) == 8)                                                                                        \
      _mm256_storeu_ps(o, v);                                                                            \
    else                                                                                                 \
      _mm256_maskstore_ps(o, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), \
                          v);                                                                            \
  } while (0)
#include "fdm_avx2_t.h"

#else
#define HX_FDM_HAVE_AVX2 0
#endif
#define HX_FDM_DEFINE(M)                                 \
  HX_FDM_CPU_LOOP(M, hx_fdm_cpu_loop_##M, double, )      \
  HX_FDM_CPU_LOOP(M, hx_fdm_cpu_loop_##M##_f32, float, _f32)
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
                              double *, const int32_t *, const double *);
typedef void (*hx_fdm_cpu_fn_f32)(int32_t, const int32_t *, const float *, const float *, const float *, float *,
                                  const int32_t *, const float *);
#define HX_FDM_ROW(P, S)                                                                                     \
  {                                                                                                          \
    P##4##S, P##5##S, P##6##S, P##7##S, P##8##S, P##9##S, P##10##S, P##11##S, P##12##S, P##13##S, P##14##S, \
        P##15##S, P##16##S, P##17##S, P##18##S                                                               \
  }
/* [isa][m-4]: isa 0 generic, 1 AVX2+FMA (the operator's choice, hx_ax_cpu_isa) */
static const hx_fdm_cpu_fn hx_fdm_cpu_table[1 + HX_FDM_HAVE_AVX2][HX_FDM_MMAX - 3] = {
    HX_FDM_ROW(hx_fdm_cpu_loop_, ),
#if HX_FDM_HAVE_AVX2
    HX_FDM_ROW(hx_fdm_cpu_avx2_, ),
#endif
};
static const hx_fdm_cpu_fn_f32 hx_fdm_cpu_table_f32[1 + HX_FDM_HAVE_AVX2][HX_FDM_MMAX - 3] = {
    HX_FDM_ROW(hx_fdm_cpu_loop_, _f32),
#if HX_FDM_HAVE_AVX2
    HX_FDM_ROW(hx_fdm_cpu_avx2_, _f32),
#endif
};
#undef HX_FDM_ROW

static int hx_fdm_cpu_isa(void) {
  static int isa = -1;
  if (isa < 0) isa = HX_FDM_HAVE_AVX2 ? hx_ax_cpu_isa() : 0;
  return isa;
}

/* The elements of a list from position `done` on (after the cross-element
 * kernel took the complete groups): a list of at most 7 entries. */
static const int32_t *hx_fdm_cpu_rest(int32_t nlist, const int32_t *list, int32_t done, int32_t *buf) {
  if (list) return list + done;
  for (int32_t k = done; k < nlist; k++) buf[k - done] = k;
  return buf;
}

static int hx_fdm_cpu_run(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                          const double *u, double *w, const int32_t *map, const double *x) {
  if (m < 4 || m > HX_FDM_MMAX)
    return HX_ERROR(HX_ERR_ARG, "FDM box size m = %d outside 4..%d", m, HX_FDM_MMAX);
  hx_fdm_cpu_table[hx_fdm_cpu_isa()][m - 4](nlist, list, S, L, u, w, map, x);
  return HX_SUCCESS;
}

int hx_fdm_cpu_apply(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                     const double *u, double *w) {
  HX_CALL(hx_fdm_cpu_run(m, nlist, list, S, L, u, w, NULL, NULL));
  return HX_SUCCESS;
}

int hx_fdm_cpu_apply_map(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                         const int32_t *map, const double *x, double *w) {
  HX_CALL(hx_fdm_cpu_run(m, nlist, list, S, L, NULL, w, map, x));
  return HX_SUCCESS;
}

int hx_fdm_cpu_apply_f32(int m, int32_t nlist, const int32_t *list, const float *S, const float *L,
                         const float *u, float *w, const int32_t *map, const float *x) {
  if (m < 4 || m > HX_FDM_MMAX)
    return HX_ERROR(HX_ERR_ARG, "FDM box size m = %d outside 4..%d", m, HX_FDM_MMAX);
  const int32_t done = hx_fdm_cpu_xelem_f32(m, nlist, list, S, L, u, w, map, x);
  int32_t buf[8];
  if (nlist > done)
    hx_fdm_cpu_table_f32[hx_fdm_cpu_isa()][m - 4](nlist - done,
                                                  done ? hx_fdm_cpu_rest(nlist, list, done, buf) : list, S, L, u,
                                                  w, map, x);
  return HX_SUCCESS;
}

void hx_fdm_cpu_wgather(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt,
                        const double *HX_RESTRICT x, double *HX_RESTRICT y) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) y[i] = hx_fdm_wgather_1(x, idx[i], wt[i]);
}

void hx_fdm_cpu_wgather_mixed(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt, int to_f32,
                              const void *x, void *y) {
  if (to_f32) {
    const double *HX_RESTRICT xd = (const double *)x;
    float *HX_RESTRICT yf = (float *)y;
#pragma omp parallel for schedule(static) if (n > 4096)
    for (int64_t i = 0; i < n; i++) yf[i] = hx_fdm_wgather_1_to_f32(xd, idx[i], wt[i]);
  } else {
    const float *HX_RESTRICT xf = (const float *)x;
    double *HX_RESTRICT yd = (double *)y;
#pragma omp parallel for schedule(static) if (n > 4096)
    for (int64_t i = 0; i < n; i++) yd[i] = hx_fdm_wgather_1_from_f32(xf, idx[i], wt[i]);
  }
}

void hx_fdm_cpu_wgather_f32(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt,
                            const float *HX_RESTRICT x, float *HX_RESTRICT y) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) y[i] = hx_fdm_wgather_1_f32(x, idx[i], (float)wt[i]);
}

/* y[idx[i]] = the entry i of hx_fdm_wgather's forms read at x + i (the same
 * product and rounding); the idx are distinct, so the writes do not race */
#define HX_FDM_WSCATTER(XT, YT, ONE, W)                                  \
  do {                                                                   \
    const XT *HX_RESTRICT xs = (const XT *)x;                            \
    YT *HX_RESTRICT ys = (YT *)y;                                        \
    _Pragma("omp parallel for schedule(static) if (n > 4096)")           \
    for (int64_t i = 0; i < n; i++)                                      \
      if (idx[i] >= 0) ys[idx[i]] = ONE(xs + i, 0, W);                   \
  } while (0)

void hx_fdm_cpu_wscatter(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt, int kind,
                         const void *x, void *y) {
  switch (kind) {
    case 0: HX_FDM_WSCATTER(double, double, hx_fdm_wgather_1, wt[i]); break;
    case 1: HX_FDM_WSCATTER(float, double, hx_fdm_wgather_1_from_f32, wt[i]); break;
    case 2: HX_FDM_WSCATTER(double, float, hx_fdm_wgather_1_to_f32, wt[i]); break;
    default: HX_FDM_WSCATTER(float, float, hx_fdm_wgather_1_f32, (float)wt[i]); break;
  }
}
#undef HX_FDM_WSCATTER
