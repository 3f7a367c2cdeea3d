/* CPU (OpenMP) element operator: one element per loop iteration, sum
 * factorisation, the order fixed at compile time. Each order p = 1..15 and
 * each geometry mode gets its own function (HX_AX_CPU_DEFINE below), inside
 * which the always-inlined element kernel sees n as a literal constant, so
 * the small contractions unroll and vectorise. Per-node math: hx_ax_math.h. */
#include "ax_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define HX_AX_INLINE static inline __attribute__((always_inline))
#else
#define HX_AX_INLINE static inline
#endif

/* Arguments of one apply. */
typedef struct {
  int32_t nlist;
  const int32_t *list; /* NULL: elements 0..nlist-1 */
  const double *D;     /* D[i*n + m] = l_m'(t_i) */
  const double *Dt;    /* Dt[m*n + i] = D[i*n + m] */
  const double *t, *w; /* GLL points and weights */
  const double *w3;    /* n^3 weight products w_i w_j w_k */
  const double *geo;
  const int64_t *eoff; /* precomputed: record offset << 2 | kind (HX_AXK_*) */
  int ncomp;           /* precomputed: 7, or 6 without the mass term */
  const int32_t *map;  /* NULL, or u is a G-vector read through map (fused scatter) */
  const double *u;
  double *out;
  double *part;
} hx_ax_cpu_args;

/* a*b + c, fused (one rounding) in the FMA instantiations (f = 1). */
#define HX_MADD(f, a, b, c) ((f) ? __builtin_fma((a), (b), (c)) : (a) * (b) + (c))

/* Geometry kinds of the element kernels: the three precomputed records and
 * on the fly. */
#define HX_AXG_OTF 3

/* One element (the m-sums are innermost and unroll, n being a constant):
 *  1a. ut for the whole element, vectorised over the contiguous (i,j) plane:
 *      D[k][m] is invariant there, so its broadcasts leave the loop (the
 *      t-direction costs ~1 load per multiply-add instead of 2);
 *  1b. per node, vectorised over i: ur, us, the 6 factors (loaded, or
 *      rebuilt as w_q (mean + dev) from an affine or split record, or
 *      computed from the trilinear map when otf), fluxes f = G grad into
 *      fr, fs, ft (ft overwrites ut in place), and the mass term into out;
 *  2a. out += D^T contraction of ft, over the (i,j) plane;
 *  2b. out += D^T contractions of fr and fs, vectorised over i.
 * f selects fused multiply-adds in the contractions; gk the geometry
 * (HX_AXK_GEN, _AFF, _SPL, HX_AXG_OTF). */
HX_AX_INLINE void hx_ax_cpu_elem(const int n, const int gk, const int f, const hx_ax_cpu_args *a,
                                 const double *HX_RESTRICT geo, const double *HX_RESTRICT u,
                                 double *HX_RESTRICT out, double *HX_RESTRICT fr, double *HX_RESTRICT fs,
                                 double *HX_RESTRICT ft) {
  const int n2 = n * n, n3 = n2 * n;
  const double *HX_RESTRICT D = a->D, *HX_RESTRICT Dt = a->Dt;
  const double *HX_RESTRICT t = a->t, *HX_RESTRICT w = a->w;
  const int otf = gk == HX_AXG_OTF;
  double c[24], kappa = 0.0, lambda = 0.0;
  if (otf) {
    hx_hex8_coeffs(geo, c);
    kappa = geo[24];
    lambda = geo[25];
  }
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      double s = 0.0;
      for (int m = 0; m < n; m++) s = HX_MADD(f, D[k * n + m], u[ij + n2 * m], s);
      ft[ij + n2 * k] = s;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        double ur = 0.0, us = 0.0, ut = ft[q];
        for (int m = 0; m < n; m++) {
          ur = HX_MADD(f, Dt[m * n + i], u[m + n * j + n2 * k], ur);
          us = HX_MADD(f, D[j * n + m], u[i + n * m + n2 * k], us);
        }
        double g[6], mm;
        if (otf) {
          double J[9];
          hx_hex8_jacobian(c, t[i], t[j], t[k], J);
          const double wq = w[i] * w[j] * w[k];
          hx_geo_factors(J, kappa * wq, lambda * wq, g, &mm);
        } else if (gk == HX_AXK_GEN) {
          const int cs = n3 + HX_AX_PAD;
          for (int cc = 0; cc < 6; cc++) g[cc] = geo[cc * cs + q];
          mm = a->ncomp == 7 ? geo[6 * cs + q] : 0.0;
        } else if (gk == HX_AXK_AFF) {
          hx_geo_affine_node(geo, a->w3[q], a->ncomp, g, &mm);
        } else {
          hx_geo_split_node(geo, (const float *)(geo + HX_AX_MEANS) + q, hx_ax_cs32(n3), a->w3[q], a->ncomp, g,
                            &mm);
        }
        hx_apply_g(g[0], g[1], g[2], g[3], g[4], g[5], ur, us, ut, fr + q, fs + q, ft + q);
        out[q] = mm * u[q];
      }
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      double acc = out[ij + n2 * k];
      for (int m = 0; m < n; m++) acc = HX_MADD(f, D[m * n + k], ft[ij + n2 * m], acc);
      out[ij + n2 * k] = acc;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        double acc = out[q];
        for (int m = 0; m < n; m++) acc = HX_MADD(f, D[m * n + i], fr[m + n * j + n2 * k], acc);
        for (int m = 0; m < n; m++) acc = HX_MADD(f, D[m * n + j], fs[i + n * m + n2 * k], acc);
        out[q] = acc;
      }
}

/* u . w of one element: 8 fixed lanes, added in a fixed order (vectorises;
 * deterministic). */
HX_AX_INLINE double hx_ax_cpu_dot(const int n3, const double *HX_RESTRICT u, const double *HX_RESTRICT w) {
  double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  const int nb = n3 / 8 * 8;
  for (int q = 0; q < nb; q += 8)
    for (int l = 0; l < 8; l++) s[l] += u[q + l] * w[q + l];
  for (int q = nb; q < n3; q++) s[q - nb] += u[q] * w[q];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* The element's input values: the L-vector slice, or (fused scatter) its
 * values gathered from the G-vector into ub, with the scatter's 0 where the
 * map is negative. */
HX_AX_INLINE const double *hx_ax_cpu_u(const size_t n3, const hx_ax_cpu_args *a, const size_t e,
                                       double *HX_RESTRICT ub) {
  if (!a->map) return a->u + n3 * e;
  const int32_t *HX_RESTRICT m = a->map + n3 * e;
  for (size_t q = 0; q < n3; q++) ub[q] = m[q] >= 0 ? a->u[m[q]] : 0.0;
  return ub;
}

/* Elements per dynamically scheduled chunk (~2048 nodes): balances threads
 * that the OS deschedules on a shared machine; results do not depend on it. */
#define HX_AX_CHUNK(N) ((N) * (N) * (N) >= 2048 ? 1 : 2048 / ((N) * (N) * (N)))

/* The per-order, per-mode loops: N is a literal in each, so the scratch
 * arrays have a constant size and the inlined kernel a constant n. ISA is
 * the instantiation (generic, or AVX2+FMA on x86 with GCC/clang). */
#define HX_AX_CPU_LOOP(N, OTF, F, NAME, ATTR)                                                          \
  ATTR static void NAME(const hx_ax_cpu_args *a) {                                                     \
    const size_t n3 = (size_t)(N) * (N) * (N);                                                         \
    const int chunk = HX_AX_CHUNK(N);                                                                  \
    _Pragma("omp parallel for schedule(dynamic, chunk)") for (int32_t k = 0; k < a->nlist; k++) {      \
      double scr[4 * ((N) * (N) * (N) + HX_AX_PAD)]; /* fr, fs, ft, gathered u, padded */              \
      double *fr = scr, *fs = fr + n3 + HX_AX_PAD, *ft = fs + n3 + HX_AX_PAD, *ub = ft + n3 + HX_AX_PAD; \
      const size_t e = (size_t)(a->list ? a->list[k] : k);                                             \
      const double *ue = hx_ax_cpu_u(n3, a, e, ub), *ge;                                               \
      double *oe = a->out + n3 * e;                                                                    \
      if (OTF) {                                                                                       \
        ge = a->geo + HX_AX_OTF_STRIDE * e;                                                            \
        hx_ax_cpu_elem((N), HX_AXG_OTF, (F), a, ge, ue, oe, fr, fs, ft);                               \
      } else {                                                                                         \
        const int64_t eo = a->eoff[e];                                                                 \
        ge = a->geo + (eo >> 2);                                                                       \
        if ((eo & 3) == HX_AXK_AFF)                                                                    \
          hx_ax_cpu_elem((N), HX_AXK_AFF, (F), a, ge, ue, oe, fr, fs, ft);                             \
        else if ((eo & 3) == HX_AXK_SPL)                                                               \
          hx_ax_cpu_elem((N), HX_AXK_SPL, (F), a, ge, ue, oe, fr, fs, ft);                             \
        else                                                                                           \
          hx_ax_cpu_elem((N), HX_AXK_GEN, (F), a, ge, ue, oe, fr, fs, ft);                             \
      }                                                                                                \
      if (a->part) a->part[k] = hx_ax_cpu_dot((int)n3, ue, oe);                                        \
    }                                                                                                  \
  }

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HX_AX_HAVE_AVX2 1
#define HX_AX_AVX2_ATTR __attribute__((target("avx2,fma")))
#define HX_AX_CPU_DEFINE(N)                                        \
  HX_AX_CPU_LOOP(N, 0, 0, hx_ax_cpu_pre_##N, )                     \
  HX_AX_CPU_LOOP(N, 1, 0, hx_ax_cpu_otf_##N, )                     \
  HX_AX_CPU_LOOP(N, 0, 1, hx_ax_cpu_avx2_pre_##N, HX_AX_AVX2_ATTR) \
  HX_AX_CPU_LOOP(N, 1, 1, hx_ax_cpu_avx2_otf_##N, HX_AX_AVX2_ATTR)
/* n = 8 precomputed, AVX2+FMA: explicit intrinsics (hx_ax_cpu_avx2_pre_8
 * below) instead of the generic loop: even-odd contractions in all three
 * directions, planes software-pipelined, the next element prefetched. At
 * p = 7 on 2 cores: 7.3-8.5 ms per apply of 3906 elements before, 5.6-6.3
 * after; in L2 on one core 2.1 -> 1.4 us per element. The r direction
 * even-odd too (it was register-blocked, 16 multiply-adds a line): 9-25%
 * less per apply streaming from memory (docs/performance.md, 2026-12-01). */
#define HX_AX_CPU_DEFINE_8                   \
  HX_AX_CPU_LOOP(8, 0, 0, hx_ax_cpu_pre_8, ) \
  HX_AX_CPU_LOOP(8, 1, 0, hx_ax_cpu_otf_8, ) \
  HX_AX_CPU_LOOP(8, 1, 1, hx_ax_cpu_avx2_otf_8, HX_AX_AVX2_ATTR)
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
      const __m256d wr = _mm256_mul_pd(wv, vr), ws = _mm256_mul_pd(wv, vs), wt = _mm256_mul_pd(wv, vt);
      __m256d m[7];
      for (int cc = 0; cc < 7; cc++) {
        m[cc] = gk == HX_AXK_SPL ? _mm256_load_pd(mb[cc]) : _mm256_broadcast_sd(geo + cc);
        if (gk == HX_AXK_SPL && (cc < 6 || ncomp == 7))
          m[cc] = _mm256_add_pd(m[cc], _mm256_cvtps_pd(_mm_loadu_ps(dev + cc * cs32 + 64 * k + q)));
      }
      _mm256_store_pd(ur + q, _mm256_fmadd_pd(m[2], wt, _mm256_fmadd_pd(m[1], ws, _mm256_mul_pd(m[0], wr))));
      _mm256_store_pd(us + q, _mm256_fmadd_pd(m[4], wt, _mm256_fmadd_pd(m[3], ws, _mm256_mul_pd(m[1], wr))));
      _mm256_storeu_pd(tk + q, _mm256_fmadd_pd(m[5], wt, _mm256_fmadd_pd(m[4], ws, _mm256_mul_pd(m[2], wr))));
      if (ncomp == 7) _mm256_storeu_pd(ok + q, _mm256_mul_pd(m[6], _mm256_mul_pd(wv, _mm256_loadu_pd(uk + q))));
    }
  }
  hx_ax_avx2_left8eo(tb + 128, tb + 192, ft, 64, 16, out, out, 1);
}

HX_AX_AVX2_ATTR static void hx_ax_cpu_avx2_pre_8(const hx_ax_cpu_args *a) {
  const size_t n3 = 512;
  const int chunk = HX_AX_CHUNK(8);
#pragma omp parallel
  {
    /* per-thread even-odd tables (on the stack frame, next to ft) */
    __attribute__((aligned(64))) double ft[512], tb[320];
    hx_ax_avx2_tables(a->D, tb);
    __attribute__((aligned(64))) double ub[512];
#pragma omp for schedule(dynamic, chunk)
    for (int32_t k = 0; k < a->nlist; k++) {
      const size_t e = (size_t)(a->list ? a->list[k] : k);
      const size_t en = k + HX_AX_PF_DIST < a->nlist
                            ? (size_t)(a->list ? a->list[k + HX_AX_PF_DIST] : k + HX_AX_PF_DIST)
                            : e;
      const int64_t eo = a->eoff[e], eon = a->eoff[en];
      const double *ge = a->geo + (eo >> 2), *gn = a->geo + (eon >> 2);
      const double *ue = hx_ax_cpu_u(n3, a, e, ub);
      const double *un = a->map ? NULL : a->u + n3 * en;
      const int32_t *mn = a->map ? a->map + n3 * en : NULL;
      double *oe = a->out + n3 * e;
      const int kn = (int)(eon & 3);
      /* one instance per record kind and ncomp (6: the out planes are
       * first written by the transposed r contraction, no zero stores) */
#define HX_AX_AVX2_ELEM(K, NC) hx_ax_avx2_pre8_elem(K, NC, tb, a->w3, ge, ue, oe, ft, kn, gn, un, mn)
      const int kind = (int)(eo & 3);
      if (a->ncomp == 6) {
        if (kind == HX_AXK_AFF) HX_AX_AVX2_ELEM(HX_AXK_AFF, 6);
        else if (kind == HX_AXK_SPL) HX_AX_AVX2_ELEM(HX_AXK_SPL, 6);
        else HX_AX_AVX2_ELEM(HX_AXK_GEN, 6);
      } else {
        if (kind == HX_AXK_AFF) HX_AX_AVX2_ELEM(HX_AXK_AFF, 7);
        else if (kind == HX_AXK_SPL) HX_AX_AVX2_ELEM(HX_AXK_SPL, 7);
        else HX_AX_AVX2_ELEM(HX_AXK_GEN, 7);
      }
#undef HX_AX_AVX2_ELEM
      if (a->part) a->part[k] = hx_ax_cpu_dot((int)n3, ue, oe);
    }
  }
}
#else
#define HX_AX_HAVE_AVX2 0
#define HX_AX_CPU_DEFINE(N)                    \
  HX_AX_CPU_LOOP(N, 0, 0, hx_ax_cpu_pre_##N, ) \
  HX_AX_CPU_LOOP(N, 1, 0, hx_ax_cpu_otf_##N, )
#define HX_AX_CPU_DEFINE_8 HX_AX_CPU_DEFINE(8)
#endif

HX_AX_CPU_DEFINE(2)
HX_AX_CPU_DEFINE(3)
HX_AX_CPU_DEFINE(4)
HX_AX_CPU_DEFINE(5)
HX_AX_CPU_DEFINE(6)
HX_AX_CPU_DEFINE(7)
HX_AX_CPU_DEFINE_8
HX_AX_CPU_DEFINE(9)
HX_AX_CPU_DEFINE(10)
HX_AX_CPU_DEFINE(11)
HX_AX_CPU_DEFINE(12)
HX_AX_CPU_DEFINE(13)
HX_AX_CPU_DEFINE(14)
HX_AX_CPU_DEFINE(15)
HX_AX_CPU_DEFINE(16)

typedef void (*hx_ax_cpu_fn)(const hx_ax_cpu_args *);
#define HX_AX_FN_ROW(M)                                                                                    \
  {                                                                                                        \
    hx_ax_cpu_##M##_2, hx_ax_cpu_##M##_3, hx_ax_cpu_##M##_4, hx_ax_cpu_##M##_5, hx_ax_cpu_##M##_6,         \
        hx_ax_cpu_##M##_7, hx_ax_cpu_##M##_8, hx_ax_cpu_##M##_9, hx_ax_cpu_##M##_10, hx_ax_cpu_##M##_11,   \
        hx_ax_cpu_##M##_12, hx_ax_cpu_##M##_13, hx_ax_cpu_##M##_14, hx_ax_cpu_##M##_15, hx_ax_cpu_##M##_16 \
  }
/* [isa][mode][p-1]: isa 0 generic, 1 AVX2+FMA */
static const hx_ax_cpu_fn hx_ax_cpu_table[1 + HX_AX_HAVE_AVX2][2][HX_AX_PMAX] = {
    {HX_AX_FN_ROW(pre), HX_AX_FN_ROW(otf)},
#if HX_AX_HAVE_AVX2
    {HX_AX_FN_ROW(avx2_pre), HX_AX_FN_ROW(avx2_otf)},
#endif
};

/* Instruction set of the CPU kernels: AVX2+FMA where the CPU has it, unless
 * the environment variable HEXCG_CPU_ISA=generic asks for the portable
 * instantiation (tests run both). */
int hx_ax_cpu_isa(void) {
#if HX_AX_HAVE_AVX2
  const char *env = getenv("HEXCG_CPU_ISA");
  if (env && !strcmp(env, "generic")) return 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
#else
  return 0;
#endif
}

const char *hx_ax_cpu_isa_name(int isa) { return isa ? "avx2+fma" : "generic"; }

int hx_ax_cpu_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                    const double *u, double *w, double *part) {
  /* p = 2..6 AVX2: 4 elements at once, except split records */
  int32_t nrest = 0, *rest = NULL, *sub = NULL;
  double *subpart = NULL;
  if (hx_ax_xelem_apply(ax, nlist, list, map, u, w, part, &nrest, &rest)) {
    if (nrest == 0) return HX_SUCCESS;
    /* the split elements by the one-element kernel on their sublist, their
     * partials put back at their list positions */
    if (!(sub = malloc(sizeof(int32_t) * (size_t)nrest)) ||
        (part && !(subpart = malloc(sizeof(double) * (size_t)nrest)))) {
      free(rest), free(sub);
      return HX_ERROR(HX_ERR_MEM, "operator: out of memory for a list of %d split elements", (int)nrest);
    }
    for (int32_t j = 0; j < nrest; j++) sub[j] = list ? list[rest[j]] : rest[j];
    nlist = nrest, list = sub;
  }
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
                      .part = sub ? subpart : part};
  hx_ax_cpu_table[ax->isa][ax->mode == HX_GEO_ONTHEFLY][ax->p - 1](&a);
  if (sub && part)
    for (int32_t j = 0; j < nrest; j++) part[rest[j]] = subpart[j];
  free(rest), free(sub), free(subpart);
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
        for (int l = 0; l < 32; l++) x[l] = HX_MADD(F, x[l], m, c);       \
      for (int l = 0; l < 32; l++) sink += x[l];                          \
      flops += 64.0 * (double)iters;                                      \
    }                                                                     \
    if (sink == 12345.678) flops += 1.0; /* keep the result observable */ \
    return flops;                                                         \
  }
HX_AX_PEAK(hx_ax_cpu_peak_generic, 0, )
#if HX_AX_HAVE_AVX2
HX_AX_PEAK(hx_ax_cpu_peak_avx2, 1, HX_AX_AVX2_ATTR)
#endif

double hx_ax_cpu_peak_run(int isa, long iters) {
#if HX_AX_HAVE_AVX2
  if (isa) return hx_ax_cpu_peak_avx2(iters);
#endif
  (void)isa;
  return hx_ax_cpu_peak_generic(iters);
}
