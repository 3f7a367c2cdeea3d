/* CPU (OpenMP) element operator, FP64 and FP32: one element per loop
 * iteration, sum factorisation, the order fixed at compile time. The
 * generic kernel and loops are written once for a value type (ax_cpu_t.h,
 * included below for double and for float); each order p = 1..15, each
 * geometry mode and each instruction set gets its own function, inside which
 * the always-inlined element kernel sees n as a literal constant, so the
 * small contractions unroll and vectorise. The hand-written AVX2+FMA kernels
 * (FP64 n = 8 below, FP32 n = 8 and n = 4 in ax_f32_avx2_8.h,
 * ax_f32_4_t.h) take the place of their generic loops behind the same
 * tables; where the AVX-512 kernels are chosen (cpu/isa_cpu.c) the FP64 n = 8
 * (ax_avx512_8.h) and FP32 n = 4 (ax_f32_4_t.h's second instantiation)
 * ones take theirs. Per-node math: hx_ax_math.h. FP32: the record kinds of ax_prec.c
 * (affine: 7 constants, g = w_q m; scaled affine: the same plus kappa (and
 * lambda) per node, g = (w_q kappa_q) m; general: per-node floats; on the
 * fly: the 24 map coefficients formed in double at setup), element partials
 * u.w accumulating the float products in double. */
#include "prec_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define HX_AX_INLINE static inline __attribute__((always_inline))
#else
#define HX_AX_INLINE static inline
#endif

/* Geometry kinds of the element kernels: the four precomputed records and
 * on the fly. */
#define HX_AXG_OTF 4

/* Elements per dynamically scheduled chunk (~2048 nodes): balances threads
 * that the OS deschedules on a shared machine; results do not depend on it. */
#define HX_AX_CHUNK(N) ((N) * (N) * (N) >= 2048 ? 1 : 2048 / ((N) * (N) * (N)))

/* a*b + c, fused (one rounding) in the FMA instantiations (f = 1), in the
 * instantiation's type */
#define HX_AXT_MADD(f, a, b, c) ((f) ? HX_AXT_FMA((a), (b), (c)) : (a) * (b) + (c))

/* One element of the loops below: the record kind dispatched to a
 * specialised copy of the kernel. */
#define HX_AX_CPU_ELEM(N, OTF, F, UE)                                                                    \
  do {                                                                                                   \
    if (OTF) {                                                                                           \
      HX_FN(hx_ax_cpu_elem)((N), HX_AXG_OTF, (F), a, a->geo + HX_AX_OTF_STRIDE * e, UE, oe, fr, fs, ft); \
    } else {                                                                                             \
      const int64_t eo = a->eoff[e];                                                                     \
      if ((eo & 3) == HX_AXK_AFF)                                                                        \
        HX_FN(hx_ax_cpu_elem)((N), HX_AXK_AFF, (F), a, a->geo + (eo >> 2), UE, oe, fr, fs, ft);          \
      else if (HX_AXT_SPLIT && (eo & 3) == HX_AXK_SPL)                                                   \
        HX_FN(hx_ax_cpu_elem)((N), HX_AXK_SPL, (F), a, a->geo + (eo >> 2), UE, oe, fr, fs, ft);          \
      else if ((eo & 3) == HX_AXK_AFV)                                                                   \
        HX_FN(hx_ax_cpu_elem)((N), HX_AXK_AFV, (F), a, a->geo + (eo >> 2), UE, oe, fr, fs, ft);          \
      else                                                                                               \
        HX_FN(hx_ax_cpu_elem)((N), HX_AXK_GEN, (F), a, a->geo + (eo >> 2), UE, oe, fr, fs, ft);          \
    }                                                                                                    \
    if (a->part) a->part[k] = HX_FN(hx_ax_cpu_dot)((int)n3, UE, oe);                                     \
  } while (0)

/* The per-order, per-mode loops: N is a literal in each, so the scratch
 * arrays have a constant size and the inlined kernel a constant n. ATTR is
 * the instantiation (generic, or AVX2+FMA on x86 with GCC/clang). The fused
 * and the plain input get separate copies of the kernel: with one copy
 * reading through a pointer that is either the L-slice or the gather
 * buffer, GCC's FP32 code for p = 3 ran 20-30% slower (thread CPU time
 * 0.72-0.77 against 0.56-0.58 ms per apply of 4096 elements). */
#define HX_AX_CPU_LOOP(N, OTF, F, NAME, ATTR)                                                              \
  ATTR static void NAME(const HX_FN(hx_ax_cpu_args) * a) {                                                 \
    const size_t n3 = (size_t)(N) * (N) * (N);                                                             \
    const int chunk = HX_AX_CHUNK(N);                                                                      \
    _Pragma("omp parallel for schedule(dynamic, chunk)") for (int32_t k = 0; k < a->nlist; k++) {          \
      HX_REAL scr[4 * ((N) * (N) * (N) + HX_AX_PAD)]; /* fr, fs, ft, gathered u, padded */                 \
      HX_REAL *fr = scr, *fs = fr + n3 + HX_AX_PAD, *ft = fs + n3 + HX_AX_PAD, *ub = ft + n3 + HX_AX_PAD;  \
      const size_t e = (size_t)(a->list ? a->list[k] : k);                                                 \
      HX_REAL *oe = a->out + n3 * e;                                                                       \
      if (a->map) {                                                                                        \
        const HX_REAL *ue = HX_FN(hx_ax_cpu_u)(n3, a, e, ub);                                              \
        HX_AX_CPU_ELEM(N, OTF, F, ue);                                                                     \
      } else {                                                                                             \
        HX_AX_CPU_ELEM(N, OTF, F, a->u + n3 * e);                                                          \
      }                                                                                                    \
    }                                                                                                      \
  }

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HX_AX_HAVE_AVX2 1
#define HX_AX_AVX2_ATTR __attribute__((target("avx2,fma")))
#else
#define HX_AX_HAVE_AVX2 0
#endif

/* the two instantiations of ax_cpu_t.h (which undefines its parameters) */
#define HX_R(x) ((HX_REAL)(x))
#define HX_REAL double
#define HX_FN(name) name
#define HX_AXT_FMA __builtin_fma
#define HX_AXT_SPLIT 1
#define HX_AXT_OTF_VERTS 1
#define HX_AXT_HAND4 0
#include "ax_cpu_t.h"
#define HX_REAL float
#define HX_FN(name) name##_f32
#define HX_AXT_FMA __builtin_fmaf
#define HX_AXT_SPLIT 0
#define HX_AXT_OTF_VERTS 0
#define HX_AXT_HAND4 HX_AX_HAVE_AVX2
#include "ax_cpu_t.h"
#undef HX_R

#if HX_AX_HAVE_AVX2
/* n = 8 precomputed, AVX2+FMA: explicit intrinsics (hx_ax_cpu_avx2_pre_8
 * below) instead of the generic loop: even-odd contractions in all three
 * directions, planes software-pipelined, the next element prefetched. At
 * p = 7 on 2 cores: 7.3-8.5 ms per apply of 3906 elements before, 5.6-6.3
 * after; in L2 on one core 2.1 -> 1.4 us per element. The r direction
 * even-odd too (it was register-blocked, 16 multiply-adds a line): 9-25%
 * less per apply streaming from memory (docs/log/performance.md, 2026-12-01). */
#include <immintrin.h>
#define HX_AX_AVX2_FN static inline __attribute__((always_inline, target("avx2,fma")))

/* C[i][.] (+)= sum_m A[i][m] B[m*rs + .] for the 8 rows i of a centro-
 * antisymmetric 8 x 8 A (A[7-i][7-m] = -A[i][m], true of the GLL D and D^T,
 * up to round-off) and nv vectors of 4 columns, by the even-odd
 * decomposition:
 * with E_m = B_m + B_{7-m}, O_m = B_m - B_{7-m} (m < 4), P_i = sum_m pe[4i+m]
 * E_m, Q_i = sum_m po[4i+m] O_m (pe, po = (A[i][m] +- A[i][7-m]) / 2, i < 4),
 * C_i = P_i + Q_i and C_{7-i} = Q_i - P_i: half the multiply-adds.
 * pe, po are stored broadcast (pe[16i + 4m + lane], 4 equal lanes): the
 * coefficient is a memory operand of the multiply-add, where a broadcast
 * would take a floating-point pipe of its own on Zen 3 (one per
 * multiply-add here; 2-4% of the apply at p = 7). */
HX_AX_AVX2_FN void hx_ax_avx2_left8eo(const double *HX_RESTRICT pe, const double *HX_RESTRICT po,
                                      const double *HX_RESTRICT B, const int rs, const int nv,
                                      const double *C, double *Co, const int acc) {
#pragma GCC unroll 1
  for (int v = 0; v < 4 * nv; v += 4) {
    const double *HX_RESTRICT Pe = pe, *HX_RESTRICT Po = po;
    __asm__("" : "+r"(Pe), "+r"(Po));
    __m256d P[4], Q[4];
    for (int m = 0; m < 4; m++) {
      const __m256d b0 = _mm256_loadu_pd(B + m * rs + v), b1 = _mm256_loadu_pd(B + (7 - m) * rs + v);
      const __m256d E = _mm256_add_pd(b0, b1), O = _mm256_sub_pd(b0, b1);
      for (int i = 0; i < 4; i++) {
        if (m == 0) {
          P[i] = _mm256_mul_pd(_mm256_load_pd(Pe + 16 * i), E);
          Q[i] = _mm256_mul_pd(_mm256_load_pd(Po + 16 * i), O);
        } else {
          P[i] = _mm256_fmadd_pd(_mm256_load_pd(Pe + 16 * i + 4 * m), E, P[i]);
          Q[i] = _mm256_fmadd_pd(_mm256_load_pd(Po + 16 * i + 4 * m), O, Q[i]);
        }
      }
    }
    for (int i = 0; i < 4; i++) {
      __m256d lo = _mm256_add_pd(Q[i], P[i]), hi = _mm256_sub_pd(Q[i], P[i]);
      if (acc) {
        lo = _mm256_add_pd(_mm256_loadu_pd(C + i * rs + v), lo);
        hi = _mm256_add_pd(_mm256_loadu_pd(C + (7 - i) * rs + v), hi);
      }
      _mm256_storeu_pd(Co + i * rs + v, lo);
      _mm256_storeu_pd(Co + (7 - i) * rs + v, hi);
    }
  }
}

/* C[l][i] (+)= sum_m A[i][m] U[8l + m] for the 8 lines l of 8 contiguous
 * entries (one (i,j) plane), A centro-antisymmetric as above, by the
 * even-odd decomposition along the line: E_m, O_m = U[l][m] +- U[l][7-m]
 * from two scalar broadcasts, P = sum_m E_m ce_m and Q = sum_m O_m co_m with
 * the column vectors ce_m[i] = pe[i][m], co_m[i] = po[i][m] (ct[4m + i],
 * ct[16 + 4m + i]; pe, po as above); C[l][0..3] = P + Q and C[l][7..4] =
 * Q - P. 8 multiply-adds a line where the plain product takes 16: 5-15%
 * of the apply at p = 7 (in L1, one core). */
HX_AX_AVX2_FN void hx_ax_avx2_right8eo(const double *HX_RESTRICT ct, const double *HX_RESTRICT U,
                                       double *HX_RESTRICT C, const int acc) {
  __m256d ce[4], co[4];
  for (int m = 0; m < 4; m++) {
    ce[m] = _mm256_load_pd(ct + 4 * m);
    co[m] = _mm256_load_pd(ct + 16 + 4 * m);
  }
#pragma GCC unroll 2
  for (int l = 0; l < 8; l++) {
    const double *HX_RESTRICT x = U + 8 * l;
    __m256d P = _mm256_setzero_pd(), Q = _mm256_setzero_pd();
    for (int m = 0; m < 4; m++) {
      const __m256d a = _mm256_broadcast_sd(x + m), b = _mm256_broadcast_sd(x + 7 - m);
      const __m256d E = _mm256_add_pd(a, b), O = _mm256_sub_pd(a, b);
      P = m ? _mm256_fmadd_pd(E, ce[m], P) : _mm256_mul_pd(E, ce[m]);
      Q = m ? _mm256_fmadd_pd(O, co[m], Q) : _mm256_mul_pd(O, co[m]);
    }
    __m256d lo = _mm256_add_pd(Q, P), hi = _mm256_permute4x64_pd(_mm256_sub_pd(Q, P), 0x1B);
    if (acc) {
      lo = _mm256_add_pd(_mm256_loadu_pd(C + 8 * l), lo);
      hi = _mm256_add_pd(_mm256_loadu_pd(C + 8 * l + 4), hi);
    }
    _mm256_storeu_pd(C + 8 * l, lo);
    _mm256_storeu_pd(C + 8 * l + 4, hi);
  }
}

/* The even-odd tables of the n = 8 kernel from D: with pe, po(A)[i][m] =
 * (A[i][m] +- A[i][7-m]) / 2 (i, m < 4), tb[0..127] = pe, po(D) broadcast
 * (hx_ax_avx2_left8eo's layout), tb[128..255] = pe, po(D^T) broadcast,
 * tb[256..287] = pe, po(D) by columns (hx_ax_avx2_right8eo's layout),
 * tb[288..319] = pe, po(D^T) by columns. */
static void hx_ax_avx2_tables(const double *D, double *tb) {
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < 4; i++)
      for (int m = 0; m < 4; m++) {
        /* A = D (t = 0) or D^T (t = 1) */
        const double a0 = t ? D[8 * m + i] : D[8 * i + m], a1 = t ? D[8 * (7 - m) + i] : D[8 * i + 7 - m];
        const double pe = 0.5 * (a0 + a1), po = 0.5 * (a0 - a1);
        for (int ln = 0; ln < 4; ln++) {
          tb[128 * t + 4 * (4 * i + m) + ln] = pe;
          tb[128 * t + 64 + 4 * (4 * i + m) + ln] = po;
        }
        tb[256 + 32 * t + 4 * m + i] = pe;
        tb[256 + 32 * t + 16 + 4 * m + i] = po;
      }
}

/* Software prefetch of the factors and u of the element HX_AX_PF_DIST list
 * positions ahead, one plane per plane of the current element (one line per
 * stream every 8 nodes), into L2 (_MM_HINT_T1; into L1 it evicts the current
 * element). Without it the memory and compute phases of an element barely
 * overlap on two cores: ~10% of the time at p = 7. */
#define HX_AX_PF_DIST 1
#define HX_AX_PF_HINT _MM_HINT_T1

/* One n = 8 element, precomputed factors:
 *  1. ut of the whole element into ft (8 x 8 by 8 x 64 product, even-odd);
 *  2. per k-plane: ur and us of the plane, the
 *     fluxes (hx_apply_g's order, not fused), out = M u, then the D^T
 *     contractions of fr and fs, which stay within the plane (fr, fs are
 *     plane-sized scratch);
 *  3. out += D^T contraction of ft over the whole element (even-odd).
 * All contractions are even-odd; tb holds their tables (hx_ax_avx2_tables). */
HX_AX_AVX2_FN void hx_ax_avx2_pre8_elem(const int gk, const int ncomp, const double *HX_RESTRICT tb,
                                        const double *HX_RESTRICT w3, const double *HX_RESTRICT geo,
                                        const double *HX_RESTRICT u, double *HX_RESTRICT out,
                                        double *HX_RESTRICT ft, const int kind_next, const double *geo_next,
                                        const double *u_next, const int32_t *map_next) {
  const int cs = 512 + HX_AX_PAD, cs32 = hx_ax_cs32(512);
  const float *dev = (const float *)(geo + HX_AX_MEANS);
  /* software-pipelined over the planes: the gradients of plane k, then
   * the transposed r, s contractions of plane k-1 (independent work for the
   * out-of-order core while the fluxes of plane k wait), then the fluxes of
   * plane k; fr, fs double-buffered */
  __attribute__((aligned(32))) double fr[2][64], fs[2][64];
  /* the 7 means of a split record, broadcast once per element into a stack
   * table: in the flux loop they are one aligned load each at a fixed offset
   * (broadcasting from geo there kept 7 pointers in stack slots, reloaded
   * every 4 nodes, the loop being short of registers with the deviations;
   * -5% in cache at p = 7). The affine loop keeps its broadcasts (hoisted:
   * the table made it 4% slower). */
  __attribute__((aligned(32))) double mb[7][4];
  if (gk == HX_AXK_SPL)
    for (int cc = 0; cc < 7; cc++) _mm256_store_pd(mb[cc], _mm256_broadcast_sd(geo + cc));
  hx_ax_avx2_left8eo(tb, tb + 64, u, 64, 16, ft, ft, 0);
#pragma GCC unroll 1
  for (int k = 0; k <= 8; k++) {
    const int b = k & 1;
    if (k < 8) {
      hx_ax_avx2_right8eo(tb + 256, u + 64 * k, fr[b], 0);
      hx_ax_avx2_left8eo(tb, tb + 64, u + 64 * k, 8, 2, fs[b], fs[b], 0);
    }
    if (k > 0) {
      hx_ax_avx2_right8eo(tb + 288, fr[b ^ 1], out + 64 * (k - 1), ncomp == 7);
      hx_ax_avx2_left8eo(tb + 128, tb + 192, fs[b ^ 1], 8, 2, out + 64 * (k - 1), out + 64 * (k - 1), 1);
    }
    if (k == 8) break;
    const double *HX_RESTRICT uk = u + 64 * k;
    const double *HX_RESTRICT gk0 = geo + 64 * k;
    double *HX_RESTRICT ok = out + 64 * k, *HX_RESTRICT tk = ft + 64 * k;
    double *HX_RESTRICT ur = fr[b], *HX_RESTRICT us = fs[b];
#pragma GCC unroll 1
    for (int q = 0; q < 64; q += 4) {
      if (!(q & 4)) {
        const double *pg = geo_next + 64 * k + q;
        if (kind_next == HX_AXK_GEN) {
          for (int cc = 0; cc < 6; cc++) _mm_prefetch((const char *)(pg + cc * cs), HX_AX_PF_HINT);
          if (ncomp == 7) _mm_prefetch((const char *)(pg + 6 * cs), HX_AX_PF_HINT);
        } else if (kind_next == HX_AXK_SPL && !(q & 8)) {
          const float *pd = (const float *)(geo_next + HX_AX_MEANS) + 64 * k + q;
          for (int cc = 0; cc < ncomp; cc++) _mm_prefetch((const char *)(pd + cc * cs32), HX_AX_PF_HINT);
        }
        if (u_next) _mm_prefetch((const char *)(u_next + 64 * k + q), HX_AX_PF_HINT);
        if (map_next && !(q & 8)) _mm_prefetch((const char *)(map_next + 64 * k + q), HX_AX_PF_HINT);
      }
      const __m256d vr = _mm256_load_pd(ur + q), vs = _mm256_load_pd(us + q), vt = _mm256_loadu_pd(tk + q);
      if (gk == HX_AXK_GEN) {
        const __m256d g0 = _mm256_loadu_pd(gk0 + q), g1 = _mm256_loadu_pd(gk0 + cs + q);
        const __m256d g2 = _mm256_loadu_pd(gk0 + 2 * cs + q), g3 = _mm256_loadu_pd(gk0 + 3 * cs + q);
        const __m256d g4 = _mm256_loadu_pd(gk0 + 4 * cs + q), g5 = _mm256_loadu_pd(gk0 + 5 * cs + q);
        _mm256_store_pd(ur + q, _mm256_fmadd_pd(g2, vt, _mm256_fmadd_pd(g1, vs, _mm256_mul_pd(g0, vr))));
        _mm256_store_pd(us + q, _mm256_fmadd_pd(g4, vt, _mm256_fmadd_pd(g3, vs, _mm256_mul_pd(g1, vr))));
        _mm256_storeu_pd(tk + q, _mm256_fmadd_pd(g5, vt, _mm256_fmadd_pd(g4, vs, _mm256_mul_pd(g2, vr))));
        if (ncomp == 7) /* out = M u; without it the r contraction writes out first */
          _mm256_storeu_pd(ok + q, _mm256_mul_pd(_mm256_loadu_pd(gk0 + 6 * cs + q), _mm256_loadu_pd(uk + q)));
        continue;
      }
      /* affine / split: G = w_q (mean + dev); w_q is folded into the
       * gradient (three products instead of six) */
      const __m256d wv = _mm256_loadu_pd(w3 + 64 * k + q);
      /* AFV: the node's kappa scales w_q (hx_geo_scaled_node: (w_q kappa_q) m) */
      const __m256d wk = gk == HX_AXK_AFV ? _mm256_mul_pd(wv, _mm256_loadu_pd(geo + HX_AX_MEANS + 64 * k + q)) : wv;
      const __m256d wr = _mm256_mul_pd(wk, vr), ws = _mm256_mul_pd(wk, vs), wt = _mm256_mul_pd(wk, vt);
      __m256d m[7];
      for (int cc = 0; cc < 7; cc++) {
        m[cc] = gk == HX_AXK_SPL ? _mm256_load_pd(mb[cc]) : _mm256_broadcast_sd(geo + cc);
        if (gk == HX_AXK_SPL && (cc < 6 || ncomp == 7))
          m[cc] = _mm256_add_pd(m[cc], _mm256_cvtps_pd(_mm_loadu_ps(dev + cc * cs32 + 64 * k + q)));
      }
      _mm256_store_pd(ur + q, _mm256_fmadd_pd(m[2], wt, _mm256_fmadd_pd(m[1], ws, _mm256_mul_pd(m[0], wr))));
      _mm256_store_pd(us + q, _mm256_fmadd_pd(m[4], wt, _mm256_fmadd_pd(m[3], ws, _mm256_mul_pd(m[1], wr))));
      _mm256_storeu_pd(tk + q, _mm256_fmadd_pd(m[5], wt, _mm256_fmadd_pd(m[4], ws, _mm256_mul_pd(m[2], wr))));
      if (ncomp == 7 && gk == HX_AXK_AFV) /* (w_q lambda_q) |J| u */
        _mm256_storeu_pd(ok + q, _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(wv, _mm256_loadu_pd(geo + HX_AX_MEANS + cs +
                                                                                                 64 * k + q)),
                                                             m[6]),
                                               _mm256_loadu_pd(uk + q)));
      else if (ncomp == 7)
        _mm256_storeu_pd(ok + q, _mm256_mul_pd(m[6], _mm256_mul_pd(wv, _mm256_loadu_pd(uk + q))));
    }
  }
  hx_ax_avx2_left8eo(tb + 128, tb + 192, ft, 64, 16, out, out, 1);
}

/* The loop over the elements of an n = 8 FP64 kernel with precomputed
 * factors (AVX2 here, AVX-512 in ax_avx512_8.h): per-thread tables (TBN
 * doubles built by TABLES from D, on the stack frame next to ft), the next
 * element's record and input prefetched by ELEM, one instance of ELEM per
 * record kind and ncomp (6: the out planes are first written by the
 * transposed r contraction, no zero stores). */
#define HX_AX_PRE8_LOOP(NAME, ATTR, TBN, TABLES, ELEM)                                           \
  ATTR static void NAME(const hx_ax_cpu_args *a) {                                                \
    const size_t n3 = 512;                                                                        \
    const int chunk = HX_AX_CHUNK(8);                                                             \
    _Pragma("omp parallel") {                                                                     \
      __attribute__((aligned(64))) double ft[512], tb[TBN], ub[512];                              \
      TABLES(a->D, tb);                                                                           \
      _Pragma("omp for schedule(dynamic, chunk)") for (int32_t k = 0; k < a->nlist; k++) {        \
        const size_t e = (size_t)(a->list ? a->list[k] : k);                                      \
        const size_t en = k + HX_AX_PF_DIST < a->nlist                                            \
                              ? (size_t)(a->list ? a->list[k + HX_AX_PF_DIST] : k + HX_AX_PF_DIST) \
                              : e;                                                                \
        const int64_t eo = a->eoff[e], eon = a->eoff[en];                                         \
        const double *ge = a->geo + (eo >> 2), *gn = a->geo + (eon >> 2);                         \
        const double *ue = a->map ? hx_ax_cpu_u(n3, a, e, ub) : a->u + n3 * e;                    \
        const double *un = a->map ? NULL : a->u + n3 * en;                                        \
        const int32_t *mn = a->map ? a->map + n3 * en : NULL;                                     \
        double *oe = a->out + n3 * e;                                                             \
        const int kn = (int)(eon & 3), kind = (int)(eo & 3), nc = a->ncomp == 6 ? 6 : 7;          \
        if (nc == 6 && kind == HX_AXK_AFF) ELEM(HX_AXK_AFF, 6, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn); \
        else if (nc == 6 && kind == HX_AXK_SPL) ELEM(HX_AXK_SPL, 6, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn); \
        else if (nc == 6 && kind == HX_AXK_AFV) ELEM(HX_AXK_AFV, 6, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn); \
        else if (nc == 6) ELEM(HX_AXK_GEN, 6, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn);        \
        else if (kind == HX_AXK_AFF) ELEM(HX_AXK_AFF, 7, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn); \
        else if (kind == HX_AXK_SPL) ELEM(HX_AXK_SPL, 7, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn); \
        else if (kind == HX_AXK_AFV) ELEM(HX_AXK_AFV, 7, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn); \
        else ELEM(HX_AXK_GEN, 7, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn);                      \
        if (a->part) a->part[k] = hx_ax_cpu_dot((int)n3, ue, oe);                                 \
      }                                                                                           \
    }                                                                                             \
  }
HX_AX_PRE8_LOOP(hx_ax_cpu_avx2_pre_8, HX_AX_AVX2_ATTR, 320, hx_ax_avx2_tables, hx_ax_avx2_pre8_elem)

/* Fused scatter: prefetch (into L2) the G-vector values of element en, the
 * first and last entry of each of its rows of n nodes (a row of the element
 * is contiguous or nearly so in the G-vector: at most two lines). Issued
 * while element e is gathered, so the lines arrive during e's compute;
 * without it the gather waits on the G-vector's misses. Used by the p = 7
 * AVX2 kernel (1 thread, 1000 elements, thread CPU time: 1.41-2.27 ->
 * 1.23-1.34 ms per apply); at p = 3 the generic loop is slower with it
 * (0.74 -> 0.80 ms for 4096 elements: 32 map loads and prefetches per 64
 * gathered values that were mostly cached already). */
HX_AX_INLINE void hx_axf_pf_g(const int n, const size_t n3, const hx_ax_cpu_args_f32 *a, const size_t en) {
#if defined(__GNUC__)
  const int32_t *HX_RESTRICT m = a->map + n3 * en;
  const float *HX_RESTRICT g = a->u;
  for (size_t r = 0; r < n3; r += (size_t)n) {
    const int32_t i0 = m[r], i1 = m[r + (size_t)n - 1];
    if (i0 >= 0) __builtin_prefetch(g + i0, 0, 2);
    if (i1 >= 0) __builtin_prefetch(g + i1, 0, 2);
  }
#else
  (void)n, (void)n3, (void)a, (void)en;
#endif
}

#include "ax_f32_avx2_8.h"
/* the FP32 n = 4 kernel: AVX2 (two rows per vector) and AVX-512 (a plane) */
#define Q4W 8
#define Q4V __m256
#define Q4N(name) name##_avx2
#define Q4KERNEL hx_ax_cpu_avx2_pre_4_f32
#define Q4FN HX_AXF_AVX2_FN
#define Q4ATTR HX_AX_AVX2_ATTR
#define Q4LOAD _mm256_load_ps
#define Q4LOADU _mm256_loadu_ps
#define Q4STORE _mm256_store_ps
#define Q4STOREU _mm256_storeu_ps
#define Q4MUL _mm256_mul_ps
#define Q4ADD _mm256_add_ps
#define Q4FMA _mm256_fmadd_ps
#define Q4ZERO _mm256_setzero_ps
#define Q4BCAST1 _mm256_broadcast_ss
#define Q4BCAST4(p) _mm256_broadcast_ps((const __m128 *)(p))
#define Q4PERM(x, m) _mm256_permute_ps((x), (m)*0x55)
#include "ax_f32_4_t.h"
#define Q4W 16
#define Q4V __m512
#define Q4N(name) name##_avx512
#define Q4KERNEL hx_ax_cpu_avx512_pre_4_f32
#define Q4FN static inline __attribute__((always_inline, target(HX_AVX512_TARGET)))
#define Q4ATTR __attribute__((target(HX_AVX512_TARGET)))
#define Q4LOAD _mm512_load_ps
#define Q4LOADU _mm512_loadu_ps
#define Q4STORE _mm512_store_ps
#define Q4STOREU _mm512_storeu_ps
#define Q4MUL _mm512_mul_ps
#define Q4ADD _mm512_add_ps
#define Q4FMA _mm512_fmadd_ps
#define Q4ZERO _mm512_setzero_ps
#define Q4BCAST1(p) _mm512_set1_ps(*(p))
#define Q4BCAST4(p) _mm512_broadcast_f32x4(_mm_loadu_ps(p))
#define Q4PERM(x, m) _mm512_permute_ps((x), (m)*0x55)
#include "ax_f32_4_t.h"
#include "ax_avx512_8.h"
#endif

/* [isa][mode][p-1]: isa 0 generic, 1 AVX2+FMA (the choice of hx_ax_cpu_isa) */
#define HX_AX_FN_ROW(M, S)                                                                                    \
  {                                                                                                           \
    hx_ax_cpu_##M##_2##S, hx_ax_cpu_##M##_3##S, hx_ax_cpu_##M##_4##S, hx_ax_cpu_##M##_5##S,                   \
        hx_ax_cpu_##M##_6##S, hx_ax_cpu_##M##_7##S, hx_ax_cpu_##M##_8##S, hx_ax_cpu_##M##_9##S,               \
        hx_ax_cpu_##M##_10##S, hx_ax_cpu_##M##_11##S, hx_ax_cpu_##M##_12##S, hx_ax_cpu_##M##_13##S,           \
        hx_ax_cpu_##M##_14##S, hx_ax_cpu_##M##_15##S, hx_ax_cpu_##M##_16##S                                   \
  }
typedef void (*hx_ax_cpu_fn)(const hx_ax_cpu_args *);
typedef void (*hx_ax_cpu_fn_f32)(const hx_ax_cpu_args_f32 *);
static const hx_ax_cpu_fn hx_ax_cpu_table[1 + HX_AX_HAVE_AVX2][2][HX_AX_PMAX] = {
    {HX_AX_FN_ROW(pre, ), HX_AX_FN_ROW(otf, )},
#if HX_AX_HAVE_AVX2
    {HX_AX_FN_ROW(avx2_pre, ), HX_AX_FN_ROW(avx2_otf, )},
#endif
};
static const hx_ax_cpu_fn_f32 hx_ax_cpu_table_f32[1 + HX_AX_HAVE_AVX2][2][HX_AX_PMAX] = {
    {HX_AX_FN_ROW(pre, _f32), HX_AX_FN_ROW(otf, _f32)},
#if HX_AX_HAVE_AVX2
    {HX_AX_FN_ROW(avx2_pre, _f32), HX_AX_FN_ROW(avx2_otf, _f32)},
#endif
};

/* Instruction set of the CPU kernels: AVX2+FMA where the CPU has it, unless
 * the environment variable HEXCG_CPU_ISA=generic asks for the portable
 * instantiation (tests run both). The AVX-512 kernels come on top of the
 * AVX2 ones where cpu/isa_cpu.c chooses them (hx_cpu_avx512_order). */
int hx_ax_cpu_isa(void) {
#if HX_AX_HAVE_AVX2
  const char *env = hx_env("HEXCG_CPU_ISA");
  if (env && !strcmp(env, "generic")) return 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
#else
  return 0;
#endif
}

const char *hx_ax_cpu_isa_name(int isa) { return isa ? "avx2+fma" : "generic"; }

/* The elements that the cross-element kernel left (n of them, at the list
 * positions rest), for the one-element kernel on their sublist (sub: their
 * element numbers; subpart: room for their partials where part is given). */
typedef struct {
  int32_t n, *rest, *sub;
  double *subpart;
  int err;
} rest_list;

/* After the cross-element kernel (served: it ran): 1 when nothing is left
 * to do (r->err says whether that is an error: out of memory for the
 * sublist), else 0 with *nlist and *list the elements left; what: the kind
 * of element left, for the message. */
static int rest_take(rest_list *r, int served, int32_t *nlist, const int32_t **list, const double *part,
                     const char *what) {
  r->err = HX_SUCCESS;
  if (!served) return 0;
  if (r->n == 0) return 1;
  if (!(r->sub = malloc(sizeof(int32_t) * (size_t)r->n)) ||
      (part && !(r->subpart = malloc(sizeof(double) * (size_t)r->n)))) {
    free(r->rest), free(r->sub);
    r->err = HX_ERROR(HX_ERR_MEM, "operator: out of memory for a list of %d %s elements", (int)r->n, what);
    return 1;
  }
  for (int32_t j = 0; j < r->n; j++) r->sub[j] = *list ? (*list)[r->rest[j]] : r->rest[j];
  *nlist = r->n, *list = r->sub;
  return 0;
}

/* The sublist's partials put back at their list positions; the lists freed. */
static void rest_done(rest_list *r, double *part) {
  if (r->sub && part)
    for (int32_t j = 0; j < r->n; j++) part[r->rest[j]] = r->subpart[j];
  free(r->rest), free(r->sub), free(r->subpart);
}

int hx_cpu_ax_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                    const double *u, double *w, double *part) {
  /* p = 2..6 AVX2: 4 elements at once, except split records */
  /* the split elements by the one-element kernel on their sublist, their
   * partials put back at their list positions */
  rest_list rl = {0};
  if (rest_take(&rl, hx_ax_xelem_apply(ax, nlist, list, map, u, w, part, &rl.n, &rl.rest), &nlist, &list, part,
                "split"))
    return rl.err;
  const int n = ax->n;
  double Dt[HX_AX_NMAX * HX_AX_NMAX];
  for (int i = 0; i < n; i++)
    for (int m = 0; m < n; m++) Dt[m * n + i] = ax->D[i * n + m];
  hx_ax_cpu_args a = {.nlist = nlist,
                      .list = list,
                      .D = ax->d_basis,
                      .Dt = Dt,
                      .t = ax->d_basis + hx_ax_off_t(n),
                      .w = ax->d_basis + hx_ax_off_w(n),
                      .w3 = ax->d_basis + hx_ax_off_w3(n),
                      .geo = ax->d_geo,
                      .eoff = ax->d_eoff,
                      .ncomp = ax->ncomp,
                      .map = map,
                      .u = u,
                      .out = w,
                      .part = rl.sub ? rl.subpart : part};
#if HX_AX_HAVE_AVX2
  if (ax->avx512 && ax->p == 7 && ax->mode == HX_GEO_PRECOMPUTED)
    hx_ax_cpu_avx512_pre_8(&a);
  else
#endif
    hx_ax_cpu_table[ax->isa][ax->mode == HX_GEO_ONTHEFLY][ax->p - 1](&a);
  rest_done(&rl, part);
  return HX_SUCCESS;
}

int hx_cpu_ax_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                        const float *u, float *w, double *part) {
  /* p = 1, 2, 4, 5, 6 AVX2, precomputed: 8 elements at once (the same
   * bits), except the general records at p = 4 and 5 */
  rest_list rl = {0};
  if (rest_take(&rl, hx_ax_xelem_apply_f32(ax, nlist, list, map, u, w, part, &rl.n, &rl.rest), &nlist, &list,
                part, "general"))
    return rl.err;
  const int n = ax->n;
  const float *basis = ax->d_basis32;
  float Dt[HX_AX_NMAX * HX_AX_NMAX], eo[64];
  for (int i = 0; i < n; i++)
    for (int m = 0; m < n; m++) Dt[m * n + i] = basis[i * n + m];
  if (n == 8) /* even-odd tables from the double D, rounded once */
    for (int i = 0; i < 4; i++)
      for (int m = 0; m < 4; m++) {
        const double *D = ax->D;
        eo[4 * i + m] = (float)(0.5 * (D[8 * i + m] + D[8 * i + 7 - m]));
        eo[16 + 4 * i + m] = (float)(0.5 * (D[8 * i + m] - D[8 * i + 7 - m]));
        eo[32 + 4 * i + m] = (float)(0.5 * (D[8 * m + i] + D[8 * (7 - m) + i]));
        eo[48 + 4 * i + m] = (float)(0.5 * (D[8 * m + i] - D[8 * (7 - m) + i]));
      }
  hx_ax_cpu_args_f32 a = {.nlist = nlist,
                   .list = list,
                   .D = basis,
                   .Dt = Dt,
                   .t = basis + hx_ax_off_t(n),
                   .w = basis + hx_ax_off_w(n),
                   .w3 = basis + hx_ax_off_w3_f32(n),
                   .geo = ax->d_geo32,
                   .eoff = ax->d_eoff,
                   .eo = eo,
                   .ncomp = ax->ncomp,
                   .map = map,
                   .u = u,
                   .out = w,
                   .part = rl.sub ? rl.subpart : part};
#if HX_AX_HAVE_AVX2
  if (ax->avx512 && ax->p == 3 && ax->mode == HX_GEO_PRECOMPUTED)
    hx_ax_cpu_avx512_pre_4_f32(&a);
  else
#endif
    hx_ax_cpu_table_f32[ax->isa][ax->mode == HX_GEO_ONTHEFLY][ax->p - 1](&a);
  rest_done(&rl, part);
  return HX_SUCCESS;
}

/* 32 independent multiply-add chains per thread (vectorised by the
 * compiler): register resident, so the loop runs at the FP64 peak that the
 * instantiation's code generation can reach. */
#define HX_AX_PEAK(NAME, F, ATTR)                                         \
  ATTR static double NAME(long iters) {                                   \
    double flops = 0.0, sink = 0.0;                                       \
    _Pragma("omp parallel reduction(+ : flops, sink)") {                  \
      double x[32];                                                       \
      for (int l = 0; l < 32; l++) x[l] = 1.0 + 1e-3 * l;                 \
      const double m = 0.9999999, c = 1e-7;                               \
      for (long it = 0; it < iters; it++)                                 \
        for (int l = 0; l < 32; l++) x[l] = F ? __builtin_fma(x[l], m, c) : x[l] * m + c;        \
      for (int l = 0; l < 32; l++) sink += x[l];                          \
      flops += 64.0 * (double)iters;                                      \
    }                                                                     \
    if (sink == 12345.678) flops += 1.0; /* keep the result observable */ \
    return flops;                                                         \
  }
HX_AX_PEAK(hx_ax_cpu_peak_generic, 0, )
#if HX_AX_HAVE_AVX2
HX_AX_PEAK(hx_ax_cpu_peak_avx2, 1, HX_AX_AVX2_ATTR)

/* AVX-512: 64 chains in 8 vectors (8 in flight hide the latency of two
 * multiply-add pipes), one thread's part (no vector crosses the OpenMP
 * region: clang outlines the region without the target's features) */
__attribute__((target(HX_AVX512_TARGET), noinline)) static double hx_ax_cpu_peak_avx512_thread(long iters) {
  __m512d x[8];
  for (int l = 0; l < 8; l++) x[l] = _mm512_set1_pd(1.0 + 1e-3 * l);
  const __m512d m = _mm512_set1_pd(0.9999999), c = _mm512_set1_pd(1e-7);
  for (long it = 0; it < iters; it++)
    for (int l = 0; l < 8; l++) x[l] = _mm512_fmadd_pd(x[l], m, c);
  double sink = 0.0;
  for (int l = 0; l < 8; l++) sink += _mm512_reduce_add_pd(x[l]);
  return sink;
}

static double hx_ax_cpu_peak_avx512(long iters) {
  double flops = 0.0, sink = 0.0;
#pragma omp parallel reduction(+ : flops, sink)
  {
    sink += hx_ax_cpu_peak_avx512_thread(iters);
    flops += 128.0 * (double)iters;
  }
  if (sink == 12345.678) flops += 1.0;
  return flops;
}
#endif

/* isa: 0 generic, 1 AVX2+FMA, 2 AVX-512 */
double hx_ax_cpu_peak_run(int isa, long iters) {
#if HX_AX_HAVE_AVX2
  if (isa == 2) return hx_ax_cpu_peak_avx512(iters);
  if (isa) return hx_ax_cpu_peak_avx2(iters);
#endif
  (void)isa;
  return hx_ax_cpu_peak_generic(iters);
}

/* The operator on nk columns at once (hx_ax_apply_many_prec): the element
 * list in chunks of about HX_AXM_CHUNK_NODES nodes; one thread takes a chunk
 * and applies it to every column in turn with the one-vector code of this
 * file (hx_cpu_ax_apply on the chunk's sublist: the same kernels, so each
 * column gets the bits of its own single apply), while the chunk's
 * geometric records stay in that core's cache: they come from memory once
 * for the nk columns instead of nk times. The one-vector code's OpenMP
 * region is nested in this one and so runs on the calling thread (nested
 * regions are inactive unless OMP_MAX_ACTIVE_LEVELS asks otherwise). At
 * p = 7 a chunk of 16 elements holds ~400 KB of factors: within one core's
 * L2. */
#define HX_AXM_CHUNK_NODES 8192
#define HX_AX_MANY(NAME, T, ONE)                                                                                 \
  int NAME(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map, int nk,             \
           const T *const *u, T *const *w, double *part) {                                                       \
    const int n3 = ax->n * ax->n * ax->n;                                                                        \
    const int32_t chunk = n3 >= HX_AXM_CHUNK_NODES ? 1 : HX_AXM_CHUNK_NODES / n3;                                \
    const int32_t nchunk = (nlist + chunk - 1) / chunk;                                                          \
    int32_t *iota = NULL;                                                                                        \
    if (!list) {                                                                                                 \
      iota = malloc(sizeof(int32_t) * (size_t)(nlist > 0 ? nlist : 1));                                          \
      if (!iota) return HX_ERROR(HX_ERR_MEM, "operator: out of memory for a list of %d elements", (int)nlist);   \
      for (int32_t k = 0; k < nlist; k++) iota[k] = k;                                                           \
      list = iota;                                                                                               \
    }                                                                                                            \
    int err = HX_SUCCESS;                                                                                        \
    _Pragma("omp parallel for schedule(dynamic, 1)") for (int32_t ch = 0; ch < nchunk; ch++) {                   \
      const int32_t k0 = ch * chunk, m = nlist - k0 < chunk ? nlist - k0 : chunk;                                \
      for (int c = 0; c < nk; c++) {                                                                             \
        const int e = ONE(ax, m, list + k0, map, u[c], w[c], part ? part + (size_t)c * nlist + k0 : NULL);       \
        if (e) {                                                                                                 \
          _Pragma("omp atomic write") err = e;                                                                   \
        }                                                                                                        \
      }                                                                                                          \
    }                                                                                                            \
    free(iota);                                                                                                  \
    if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);                                           \
    return HX_SUCCESS;                                                                                           \
  }
HX_AX_MANY(hx_cpu_ax_apply_many, double, hx_cpu_ax_apply)
HX_AX_MANY(hx_cpu_ax_apply_many_f32, float, hx_cpu_ax_apply_f32)
