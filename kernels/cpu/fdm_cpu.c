/* CPU (OpenMP) loop of the FDM box solves: one element per iteration, the
 * whole-element math of hx_fdm_math.h instantiated for each box size m so
 * the compiler sees constant loop bounds, once generic and once for
 * AVX2+FMA (chosen at run time like the operator kernels, HEXCG_CPU_ISA). */
#include "../ax_impl.h"
#include "../backend_impl.h"
#include "../fdm_impl.h"
#include "../hx_fdm_math.h"

/* The generic loop; map != NULL: the input box of element e is gathered
 * as x[map[e m^3 + pt]] (0 where map < 0) instead of read from u. */
#define HX_FDM_CPU_LOOP(M, NAME, ATTR)                                                            \
  ATTR static void NAME(int32_t nlist, const int32_t *list, const double *S, const double *L,     \
                        const double *u, double *w, const int32_t *map, const double *x) {        \
    const int64_t m3 = (int64_t)(M) * (M) * (M);                                                  \
    _Pragma("omp parallel") {                                                                     \
      double t[(M) * (M) * (M)], U[(M) * (M) * (M)];                                              \
      _Pragma("omp for schedule(static)") for (int32_t k = 0; k < nlist; k++) {                   \
        const int64_t e = list ? list[k] : k;                                                     \
        const double *ue = U;                                                                     \
        if (!map)                                                                                 \
          ue = u + e * m3;                                                                        \
        else {                                                                                    \
          for (int64_t pt = 0; pt < m3; pt++) U[pt] = hx_fdm_wgather_1(x, map[e * m3 + pt], 1.0); \
        }                                                                                         \
        hx_fdm_elem_solve((M), S + e * 3 * (M) * (M), L + e * 3 * (M), ue, w + e * m3, t);        \
      }                                                                                           \
    }                                                                                             \
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

/* Store the first n (1..4) lanes of v at o. */
HX_FDM_AVX2_FN void hx_fdm_avx2_store_n(double *o, __m256d v, const int n) {
  if (n == 4) {
    _mm256_storeu_pd(o, v);
  } else {
    const __m128d lo = _mm256_castpd256_pd128(v);
    if (n == 1)
      _mm_store_sd(o, lo);
    else
      _mm_storeu_pd(o, lo);
    if (n == 3) _mm_store_sd(o + 2, _mm256_extractf128_pd(v, 1));
  }
}

/* Lines l0 .. l0+LB-1: out[l ldo + 0..] = sum_{q<Q} in[l ldi + q] B[q P + 0..P).
 * nout: lanes stored per line (P, or M for the final unpadded output). */
HX_FDM_AVX2_FN void hx_fdm_avx2_right_blk(const int LB, const int P, const int Q, const int ldi,
                                          const int ldo, const int nout, const double *HX_RESTRICT in,
                                          const double *HX_RESTRICT B, double *HX_RESTRICT out) {
  const int NA = P / 4;
  __m256d c[8][5];
  for (int l = 0; l < LB; l++)
    for (int v = 0; v < NA; v++) c[l][v] = _mm256_setzero_pd();
  for (int q = 0; q < Q; q++) {
    __m256d b[5];
    for (int v = 0; v < NA; v++) b[v] = _mm256_load_pd(B + q * P + 4 * v);
    for (int l = 0; l < LB; l++) {
      const __m256d x = _mm256_broadcast_sd(in + l * ldi + q);
      for (int v = 0; v < NA; v++) c[l][v] = _mm256_fmadd_pd(x, b[v], c[l][v]);
    }
  }
  for (int l = 0; l < LB; l++)
    for (int v = 0; v < NA; v++) {
      const int n = nout - 4 * v;
      if (n > 0) hx_fdm_avx2_store_n(out + l * ldo + 4 * v, c[l][v], n < 4 ? n : 4);
    }
}

/* All M*M lines of a box. */
HX_FDM_AVX2_FN void hx_fdm_avx2_right(const int M, const int ldi, const int ldo, const int nout,
                                      const double *HX_RESTRICT in, const double *HX_RESTRICT B,
                                      double *HX_RESTRICT out) {
  const int P = HX_FDM_P(M), NA = P / 4;
  const int LB = HX_FDM_LB(NA);
  const int nl = M * M, nfull = nl / LB * LB;
#pragma GCC unroll 1
  for (int l = 0; l < nfull; l += LB)
    hx_fdm_avx2_right_blk(LB, P, M, ldi, ldo, nout, in + l * ldi, B, out + l * ldo);
  if (nl - nfull)
    hx_fdm_avx2_right_blk(nl - nfull, P, M, ldi, ldo, nout, in + nfull * ldi, B, out + nfull * ldo);
}

/* Vector base offset of vector k of a padded box: slab = 1 walks the vectors
 * of the s direction (per t plane c: NA vectors per b line), slab = 0 the
 * flat vectors of the t direction. */
#define HX_FDM_VBASE(slab, k, NA, M, P) ((slab) ? ((k) / (NA)) * (M) * (P) + ((k) % (NA)) * 4 : 4 * (k))

/* Rows i0 .. i0+RB-1 and vectors k0 .. k0+VB-1:
 * out[base_k + i rs] = sum_{q<M} A[i ai + q aq] in[base_k + q rs], times
 * the inverse diagonal for the forward t contraction (diag: Lr padded to P,
 * Ls, Lt). */
HX_FDM_AVX2_FN void hx_fdm_avx2_left_blk(const int M, const int slab, const int RB, const int VB,
                                         const int rs, const int ai, const int aq, const int i0, const int k0,
                                         const double *HX_RESTRICT A, const double *HX_RESTRICT in,
                                         double *HX_RESTRICT out, const int diag,
                                         const double *HX_RESTRICT Lr, const double *HX_RESTRICT Ls,
                                         const double *HX_RESTRICT Lt) {
  const int P = HX_FDM_P(M), NA = P / 4;
  int base[4];
  for (int v = 0; v < VB; v++) base[v] = HX_FDM_VBASE(slab, k0 + v, NA, M, P);
  __m256d c[6][4];
  for (int r = 0; r < RB; r++)
    for (int v = 0; v < VB; v++) c[r][v] = _mm256_setzero_pd();
  const double *HX_RESTRICT Ai = A + i0 * ai;
  for (int q = 0; q < M; q++) {
    __m256d b[4];
    for (int v = 0; v < VB; v++) b[v] = _mm256_load_pd(in + base[v] + q * rs);
    for (int r = 0; r < RB; r++) {
      const __m256d a = _mm256_broadcast_sd(Ai + r * ai + q * aq);
      for (int v = 0; v < VB; v++) c[r][v] = _mm256_fmadd_pd(a, b[v], c[r][v]);
    }
  }
  for (int r = 0; r < RB; r++)
    for (int v = 0; v < VB; v++) {
      __m256d y = c[r][v];
      if (diag) {
        const int bb = base[v] / P, a0 = base[v] % P;
        const __m256d d = _mm256_add_pd(_mm256_load_pd(Lr + a0), _mm256_set1_pd(Ls[bb] + Lt[i0 + r]));
        const __m256d inv = _mm256_and_pd(_mm256_div_pd(_mm256_set1_pd(1.0), d),
                                          _mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_GT_OQ));
        y = _mm256_mul_pd(y, inv);
      }
      _mm256_store_pd(out + base[v] + (i0 + r) * rs, y);
    }
}

/* A whole left contraction: M rows, M*NA vectors. */
HX_FDM_AVX2_FN void hx_fdm_avx2_left(const int M, const int slab, const int rs, const int ai, const int aq,
                                     const double *HX_RESTRICT A, const double *HX_RESTRICT in,
                                     double *HX_RESTRICT out, const int diag, const double *HX_RESTRICT Lr,
                                     const double *HX_RESTRICT Ls, const double *HX_RESTRICT Lt) {
  const int P = HX_FDM_P(M), NV = M * (P / 4);
  const int RB = HX_FDM_RB(M), VB = HX_FDM_VB(M);
  const int rfull = M / RB * RB, vfull = NV / VB * VB;
#pragma GCC unroll 1
  for (int k = 0; k < vfull; k += VB) {
#pragma GCC unroll 1
    for (int i = 0; i < rfull; i += RB)
      hx_fdm_avx2_left_blk(M, slab, RB, VB, rs, ai, aq, i, k, A, in, out, diag, Lr, Ls, Lt);
    if (M - rfull)
      hx_fdm_avx2_left_blk(M, slab, M - rfull, VB, rs, ai, aq, rfull, k, A, in, out, diag, Lr, Ls, Lt);
  }
  if (NV - vfull) {
#pragma GCC unroll 1
    for (int i = 0; i < rfull; i += RB)
      hx_fdm_avx2_left_blk(M, slab, RB, NV - vfull, rs, ai, aq, i, vfull, A, in, out, diag, Lr, Ls, Lt);
    if (M - rfull)
      hx_fdm_avx2_left_blk(M, slab, M - rfull, NV - vfull, rs, ai, aq, rfull, vfull, A, in, out, diag, Lr, Ls,
                           Lt);
  }
}

/* Per-thread work space of the AVX2 solve (aligned; P*M*M doubles per box). */
typedef struct {
  double *X, *Y;   /* two padded boxes */
  double *BT, *BR; /* M x P: S_r^T and S_r, padded with zero columns */
  double *Lr;      /* P: L_r, padded with 1 */
  double *U;       /* M^3: the gathered input box (fused scatter) */
} hx_fdm_avx2_ws;

/* One element: w = A_box^{-1} u. u: the unpadded input box, or NULL to
 * gather it as x[map[pt]] (0 where map < 0) into ws->U first. */
HX_FDM_AVX2_FN void hx_fdm_avx2_elem(const int M, const double *HX_RESTRICT S3, const double *HX_RESTRICT L3,
                                     const double *HX_RESTRICT u, const int32_t *HX_RESTRICT map,
                                     const double *HX_RESTRICT x, double *HX_RESTRICT w,
                                     const hx_fdm_avx2_ws *ws) {
  const int P = HX_FDM_P(M), M2 = M * M;
  const double *HX_RESTRICT Sr = S3, *HX_RESTRICT Ss = S3 + M2, *HX_RESTRICT St = S3 + 2 * M2;
  double *HX_RESTRICT X = ws->X, *HX_RESTRICT Y = ws->Y, *HX_RESTRICT BT = ws->BT, *HX_RESTRICT BR = ws->BR;
  double *HX_RESTRICT Lr = ws->Lr;
  for (int q = 0; q < M; q++)
    for (int i = 0; i < P; i++) {
      BT[q * P + i] = i < M ? Sr[i * M + q] : 0.0;
      BR[q * P + i] = i < M ? Sr[q * M + i] : 0.0;
    }
  for (int i = 0; i < P; i++) Lr[i] = i < M ? L3[i] : 1.0;
  if (!u) {
    double *HX_RESTRICT U = ws->U;
    for (int pt = 0; pt < M2 * M; pt++) {
      const int32_t g = map[pt];
      U[pt] = g >= 0 ? x[g] : 0.0;
    }
    u = U;
  }
  /* forward r, s, t (with the scaling), back t, s, r */
  hx_fdm_avx2_right(M, M, P, P, u, BT, X);
  hx_fdm_avx2_left(M, 1, P, M, 1, Ss, X, Y, 0, Lr, L3 + M, L3 + 2 * M);
  hx_fdm_avx2_left(M, 0, M * P, M, 1, St, Y, X, 1, Lr, L3 + M, L3 + 2 * M);
  hx_fdm_avx2_left(M, 0, M * P, 1, M, St, X, Y, 0, Lr, L3 + M, L3 + 2 * M);
  hx_fdm_avx2_left(M, 1, P, 1, M, Ss, Y, X, 0, Lr, L3 + M, L3 + 2 * M);
  hx_fdm_avx2_right(M, P, M, M, X, BR, w);
}

/* Prefetch the operator data and the input (box, or map) of element en
 * into L2, one line per 8 doubles (16 ints), as the operator kernel does. */
HX_FDM_AVX2_FN void hx_fdm_avx2_prefetch(const int M, const int64_t en, const double *S, const double *L,
                                         const double *u, const int32_t *map) {
  const int64_t m3 = (int64_t)M * M * M;
  const double *s = S + en * 3 * M * M;
  for (int i = 0; i < 3 * M * M; i += 8) _mm_prefetch((const char *)(s + i), _MM_HINT_T1);
  _mm_prefetch((const char *)(L + en * 3 * M), _MM_HINT_T1);
  if (map)
    for (int64_t i = 0; i < m3; i += 16) _mm_prefetch((const char *)(map + en * m3 + i), _MM_HINT_T1);
  else
    for (int64_t i = 0; i < m3; i += 8) _mm_prefetch((const char *)(u + en * m3 + i), _MM_HINT_T1);
}

#define HX_FDM_AVX2_LOOP(M)                                                                             \
  __attribute__((target("avx2,fma"))) static void hx_fdm_cpu_avx2_##M(                                  \
      int32_t nlist, const int32_t *list, const double *S, const double *L, const double *u, double *w, \
      const int32_t *map, const double *x) {                                                            \
    const int64_t m3 = (int64_t)(M) * (M) * (M);                                                        \
    _Pragma("omp parallel") {                                                                           \
      __attribute__((aligned(64))) double X[HX_FDM_P(M) * (M) * (M)], Y[HX_FDM_P(M) * (M) * (M)];       \
      __attribute__((aligned(64))) double BT[(M)*HX_FDM_P(M)], BR[(M)*HX_FDM_P(M)], Lr[HX_FDM_P(M)];    \
      __attribute__((aligned(64))) double U[(M) * (M) * (M)];                                           \
      const hx_fdm_avx2_ws ws = {X, Y, BT, BR, Lr, U};                                                  \
      _Pragma("omp for schedule(dynamic, 4)") for (int32_t k = 0; k < nlist; k++) {                     \
        const int64_t e = list ? list[k] : k;                                                           \
        if (k + 1 < nlist) hx_fdm_avx2_prefetch((M), list ? list[k + 1] : k + 1, S, L, u, map);         \
        hx_fdm_avx2_elem((M), S + e * 3 * (M) * (M), L + e * 3 * (M), map ? NULL : u + e * m3,          \
                         map ? map + e * m3 : NULL, x, w + e * m3, &ws);                                \
      }                                                                                                 \
    }                                                                                                   \
  }
#define HX_FDM_DEFINE(M)                    \
  HX_FDM_CPU_LOOP(M, hx_fdm_cpu_loop_##M, ) \
  HX_FDM_AVX2_LOOP(M)
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
                              double *, const int32_t *, const double *);
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

static int hx_fdm_cpu_run(int m, int32_t nlist, const int32_t *list, const double *S, const double *L,
                          const double *u, double *w, const int32_t *map, const double *x) {
  if (m < 4 || m > HX_FDM_MMAX)
    return HX_ERROR(HX_ERR_ARG, "FDM box size m = %d outside 4..%d", m, HX_FDM_MMAX);
  static int isa = -1;
  if (isa < 0) isa = HX_FDM_HAVE_AVX2 ? hx_ax_cpu_isa() : 0;
  hx_fdm_cpu_table[isa][m - 4](nlist, list, S, L, u, w, map, x);
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

void hx_fdm_cpu_wgather(int64_t n, const int32_t *HX_RESTRICT idx, const double *HX_RESTRICT wt,
                        const double *HX_RESTRICT x, double *HX_RESTRICT y) {
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) y[i] = hx_fdm_wgather_1(x, idx[i], wt[i]);
}
