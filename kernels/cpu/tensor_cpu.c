/* CPU element-wise tensor-product transfer: one element per OpenMP
 * iteration, the two intermediate arrays on the thread's stack (at most
 * 16^3 values each); the FP32 loop is the same with the float instantiation
 * of the math. Per-entry math: ../hx_tensor_math.h.
 *
 * Cross-element path (issue 34 item 1): for a, c <= 8 points per direction
 * with AVX2, groups of 8 (FP32) or 4 (FP64) consecutive elements go through
 * the three stages together, one element per vector lane. With the generic
 * loop below the p = 7 -> 3 -> 1 transfers of a p-multigrid cycle cost 2.2
 * fine-level operator applies: each 4-8 term dot is a scalar chain with run
 * time bounds. Each lane performs exactly the operations of hx_tensor_dot
 * (s = 0, then s = s + A[i] x[i] in increasing i, multiply and add rounded
 * separately: -std=c11 does not contract, and the intrinsics are not
 * fused), so the results are bit for bit those of the generic loop and the
 * CUDA kernel. HEXCG_TENSOR_XELEM=0 selects the generic loop (tests). */
#include "../hx_tensor_math.h"
#include "backend_impl.h"

#include <stdlib.h>
#include <string.h>

/* The three stages as nested loops over the entries (no division per entry:
 * with a and c known only at run time, the index arithmetic of
 * hx_tensor_stage1..3 cost more than their 4-8 term dots); each entry is the
 * same hx_tensor_dot on the same operands as hx_tensor_stage1..3 compute,
 * so the values are bit for bit those of the CUDA kernel. */
#define HX_TENSOR3_LOOP(T, DOT)                                                                      \
  const int a3 = a * a * a, c3 = c * c * c;                                                          \
  _Pragma("omp parallel for schedule(static)") for (int32_t e = 0; e < E; e++) {                     \
    T t1[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];                                          \
    T t2[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];                                          \
    const T *ie = in + (int64_t)e * a3;                                                              \
    T *oe = out + (int64_t)e * c3;                                                                   \
    for (int jk = 0; jk < a * a; jk++)                                                               \
      for (int r = 0; r < c; r++) t1[r + c * jk] = DOT(a, A + r * a, ie + a * jk, 1);               \
    for (int k = 0; k < a; k++)                                                                      \
      for (int q = 0; q < c; q++)                                                                    \
        for (int r = 0; r < c; r++) t2[r + c * (q + c * k)] = DOT(a, A + q * a, t1 + r + c * a * k, c); \
    for (int s = 0; s < c; s++)                                                                      \
      for (int rq = 0; rq < c * c; rq++) oe[rq + c * c * s] = DOT(a, A + s * a, t2 + rq, c * c);    \
  }                                                                                                  \
  return HX_SUCCESS

static int hx_tensor3_generic(int a, int c, int32_t E, const double *A, const double *in, double *out) {
  HX_TENSOR3_LOOP(double, hx_tensor_dot);
}

static int hx_tensor3_generic_f32(int a, int c, int32_t E, const float *A, const float *in, float *out) {
  HX_TENSOR3_LOOP(float, hx_tensor_dot_f32);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#include "hx_avx2_tr.h"
#define HX_TX_HAVE 1
#define HX_TX_ATTR __attribute__((target("avx2,fma")))
#define HX_TX_INLINE static inline __attribute__((always_inline, target("avx2,fma")))
/* largest a and c of the cross-element path; scratch of 512 vectors each */
#define HX_TX_NMAX 8



/* The kernel for one value type: V the vector, L its lanes, VZ/VSET1/VADD/
 * VMUL its operations, TR the L x L transpose, SFX the names' suffix. */
#define HX_TX_DEFINE(T, V, L, VZ, VSET1, VADD, VMUL, VLOAD, VSTORE, TR, SFX)                              \
  /* y[o*sy] = sum_{i<A_} Av[o*A_ + i] x[i*sx] for o < c, in increasing i from 0 */                      \
  HX_TX_INLINE void hx_tx_line##SFX(const int A_, const int c, const V *HX_RESTRICT Av,                  \
                                    const V *HX_RESTRICT x, const int sx, V *HX_RESTRICT y, const int sy) { \
    V xv[HX_TX_NMAX];                                                                                     \
    for (int i = 0; i < A_; i++) xv[i] = x[i * sx];                                                       \
    for (int o = 0; o < c; o++) {                                                                         \
      V s = VZ();                                                                                         \
      for (int i = 0; i < A_; i++) s = VADD(s, VMUL(Av[o * A_ + i], xv[i]));                              \
      y[o * sy] = s;                                                                                      \
    }                                                                                                     \
  }                                                                                                       \
  /* one group of L elements e0 .. e0+nv-1 (the spare lanes repeat the last) */                          \
  HX_TX_INLINE void hx_tx_group##SFX(const int A_, const int c, const V *HX_RESTRICT Av, const T *in,     \
                                     T *out, const int64_t e0, const int nv, V *HX_RESTRICT X,            \
                                     V *HX_RESTRICT T1, V *HX_RESTRICT T2) {                              \
    const int a3 = A_ * A_ * A_, c3 = c * c * c, ab = a3 / (L) * (L), cb = c3 / (L) * (L);                \
    const T *ie[L];                                                                                       \
    T *oe[L];                                                                                             \
    for (int l = 0; l < (L); l++) {                                                                       \
      const int64_t e = e0 + (l < nv ? l : nv - 1);                                                       \
      ie[l] = in + e * a3, oe[l] = out + e * c3;                                                          \
    }                                                                                                     \
    for (int q = 0; q < ab; q += (L)) {                                                                   \
      for (int l = 0; l < (L); l++) X[q + l] = VLOAD(ie[l] + q);                                          \
      TR(X + q);                                                                                          \
    }                                                                                                     \
    for (int q = ab; q < a3; q++)                                                                         \
      for (int l = 0; l < (L); l++) ((T *)(X + q))[l] = ie[l][q];                                         \
    for (int jk = 0; jk < A_ * A_; jk++) hx_tx_line##SFX(A_, c, Av, X + A_ * jk, 1, T1 + c * jk, 1);      \
    for (int k = 0; k < A_; k++)                                                                          \
      for (int r = 0; r < c; r++)                                                                         \
        hx_tx_line##SFX(A_, c, Av, T1 + r + c * A_ * k, c, T2 + r + c * c * k, c);                        \
    /* stage 3 into X (free again; c^3 <= 512 vectors) */                                                 \
    for (int rq = 0; rq < c * c; rq++) hx_tx_line##SFX(A_, c, Av, T2 + rq, c * c, X + rq, c * c);         \
    for (int q = 0; q < cb; q += (L)) {                                                                   \
      TR(X + q);                                                                                          \
      for (int l = 0; l < nv; l++) VSTORE(oe[l] + q, X[q + l]);                                           \
    }                                                                                                     \
    for (int q = cb; q < c3; q++)                                                                         \
      for (int l = 0; l < nv; l++) oe[l][q] = ((const T *)(X + q))[l];                                    \
  }                                                                                                       \
  /* A broadcast, in a helper: clang outlines the OpenMP region into a       \
   * function without the target attribute and refuses AVX values built     \
   * directly inside it */                                                   \
  HX_TX_INLINE void hx_tx_bcast##SFX(const int nn, const T *A, V *Av) {      \
    for (int i = 0; i < nn; i++) Av[i] = VSET1(A[i]);                        \
  }                                                                          \
  /* every group; the switch inside the parallel region, so that each case's \
   * inlined group sees a literal a (the region is outlined before inlining) */ \
  HX_TX_ATTR static void hx_tx_apply##SFX(int a, int c, int32_t E, const T *A, const T *in, T *out) {     \
    const int32_t ng = (E + (L) - 1) / (L);                                                               \
    _Pragma("omp parallel") {                                                                             \
      __attribute__((aligned(32))) V Av[HX_TX_NMAX * HX_TX_NMAX];                                         \
      __attribute__((aligned(32))) V X[HX_TX_NMAX * HX_TX_NMAX * HX_TX_NMAX];                             \
      __attribute__((aligned(32))) V T1[HX_TX_NMAX * HX_TX_NMAX * HX_TX_NMAX];                            \
      __attribute__((aligned(32))) V T2[HX_TX_NMAX * HX_TX_NMAX * HX_TX_NMAX];                            \
      hx_tx_bcast##SFX(c * a, A, Av);                                                                     \
      _Pragma("omp for schedule(static)") for (int32_t g = 0; g < ng; g++) {                              \
        const int64_t e0 = (int64_t)g * (L);                                                              \
        const int nv = E - e0 < (L) ? (int)(E - e0) : (L);                                                \
        switch (a) {                                                                                      \
          case 2: hx_tx_group##SFX(2, c, Av, in, out, e0, nv, X, T1, T2); break;                          \
          case 3: hx_tx_group##SFX(3, c, Av, in, out, e0, nv, X, T1, T2); break;                          \
          case 4: hx_tx_group##SFX(4, c, Av, in, out, e0, nv, X, T1, T2); break;                          \
          case 5: hx_tx_group##SFX(5, c, Av, in, out, e0, nv, X, T1, T2); break;                          \
          case 6: hx_tx_group##SFX(6, c, Av, in, out, e0, nv, X, T1, T2); break;                          \
          case 7: hx_tx_group##SFX(7, c, Av, in, out, e0, nv, X, T1, T2); break;                          \
          default: hx_tx_group##SFX(8, c, Av, in, out, e0, nv, X, T1, T2); break;                         \
        }                                                                                                 \
      }                                                                                                   \
    }                                                                                                     \
  }

HX_TX_INLINE __m256 hx_tx_loadu_ps(const float *p) { return _mm256_loadu_ps(p); }
HX_TX_INLINE void hx_tx_storeu_ps(float *p, __m256 v) { _mm256_storeu_ps(p, v); }
HX_TX_INLINE __m256d hx_tx_loadu_pd(const double *p) { return _mm256_loadu_pd(p); }
HX_TX_INLINE void hx_tx_storeu_pd(double *p, __m256d v) { _mm256_storeu_pd(p, v); }
HX_TX_DEFINE(float, __m256, 8, _mm256_setzero_ps, _mm256_set1_ps, _mm256_add_ps, _mm256_mul_ps, hx_tx_loadu_ps,
             hx_tx_storeu_ps, hx_avx2_tr8_ps, _f32)
HX_TX_DEFINE(double, __m256d, 4, _mm256_setzero_pd, _mm256_set1_pd, _mm256_add_pd, _mm256_mul_pd,
             hx_tx_loadu_pd, hx_tx_storeu_pd, hx_avx2_tr4_pd, _f64)

/* 1 if the cross-element path takes a -> c (AVX2+FMA CPU, 2 <= a <= 8,
 * 1 <= c <= 8, HEXCG_TENSOR_XELEM not 0) */
static int hx_tx_serves(int a, int c) {
  if (a < 2 || a > HX_TX_NMAX || c < 1 || c > HX_TX_NMAX) return 0;
  if (hx_env_off("HEXCG_TENSOR_XELEM")) return 0;
  static int ok = -1;
  if (ok < 0) {
    __builtin_cpu_init();
    ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  return ok;
}
#else
#define HX_TX_HAVE 0
#endif

int hx_cpu_tensor3(int a, int c, int32_t E, const double *A, const double *in, double *out) {
#if HX_TX_HAVE
  if (hx_tx_serves(a, c)) {
    hx_tx_apply_f64(a, c, E, A, in, out);
    return HX_SUCCESS;
  }
#endif
  return hx_tensor3_generic(a, c, E, A, in, out);
}

int hx_cpu_tensor3_f32(int a, int c, int32_t E, const float *A, const float *in, float *out) {
#if HX_TX_HAVE
  if (hx_tx_serves(a, c)) {
    hx_tx_apply_f32(a, c, E, A, in, out);
    return HX_SUCCESS;
  }
#endif
  return hx_tensor3_generic_f32(a, c, E, A, in, out);
}
