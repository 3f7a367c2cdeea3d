/* CPU (OpenMP) FP32 element operator: the structure of the generic loop of
 * ax_cpu.c (one element per iteration, the order a compile-time constant per
 * function, sum factorisation in four passes) on float data, calling the
 * float instantiation of hx_ax_math.h, with the record kinds of ax_prec.c
 * (affine: 7 constants, g = w_q m; general: per-node floats) and the fused
 * scatter (u read through the L->G map). Instantiated for every order and
 * geometry mode, portable and with AVX2+FMA (8 floats per vector) on x86;
 * at n = 8 the AVX2 precomputed case is the hand-written kernel below (the
 * twin of ax_cpu.c's FP64 one: one row of 8 nodes per __m256). Element
 * partials u.w accumulate the float products in double. */
#include "prec_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define HX_AXF_INLINE static inline __attribute__((always_inline))
#else
#define HX_AXF_INLINE static inline
#endif

typedef struct {
  int32_t nlist;
  const int32_t *list; /* NULL: elements 0..nlist-1 */
  const float *D;      /* D[i*n + m] = l_m'(t_i) */
  const float *Dt;     /* Dt[m*n + i] = D[i*n + m] */
  const float *t, *w;  /* GLL points and weights */
  const float *w3;     /* n^3 weight products (float, (w_i w_j) w_k) */
  const float *geo;
  const int64_t *eoff; /* precomputed: record offset (floats) << 2 | kind */
  const float *eo;     /* n = 8: even-odd tables of D (0..31) and D^T (32..63) */
  int ncomp;
  const int32_t *map;  /* NULL, or u is a G-vector read through map */
  const float *u;
  float *out;
  double *part;
} hx_axf_args;

/* a*b + c in float, fused (one rounding) when f = 1 */
#define HX_MADDF(f, a, b, c) ((f) ? __builtin_fmaf((a), (b), (c)) : (a) * (b) + (c))

/* geometry kind of the element kernels besides HX_AXK_GEN, HX_AXK_AFF */
#define HX_AXFG_OTF 3

/* One element; the passes of hx_ax_cpu_elem (ax_cpu.c). gk: HX_AXK_GEN (per
 * node factors), HX_AXK_AFF (the 7 constants times w_q) or HX_AXFG_OTF (geo
 * holds the 24 map coefficients, already formed in double at setup, kappa,
 * lambda). */
HX_AXF_INLINE void hx_axf_elem(const int n, const int gk, const int f, const hx_axf_args *a,
                               const float *HX_RESTRICT geo, const float *HX_RESTRICT u,
                               float *HX_RESTRICT out, float *HX_RESTRICT fr, float *HX_RESTRICT fs,
                               float *HX_RESTRICT ft) {
  const int n2 = n * n, n3 = n2 * n;
  const float *HX_RESTRICT D = a->D, *HX_RESTRICT Dt = a->Dt;
  const float *HX_RESTRICT t = a->t, *HX_RESTRICT w = a->w;
  const int otf = gk == HX_AXFG_OTF;
  float kappa = 0.0f, lambda = 0.0f;
  if (otf) {
    kappa = geo[24];
    lambda = geo[25];
  }
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      float s = 0.0f;
      for (int m = 0; m < n; m++) s = HX_MADDF(f, D[k * n + m], u[ij + n2 * m], s);
      ft[ij + n2 * k] = s;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        float ur = 0.0f, us = 0.0f, ut = ft[q];
        for (int m = 0; m < n; m++) {
          ur = HX_MADDF(f, Dt[m * n + i], u[m + n * j + n2 * k], ur);
          us = HX_MADDF(f, D[j * n + m], u[i + n * m + n2 * k], us);
        }
        float g[6], mm;
        if (otf) {
          float J[9];
          hx_hex8_jacobian_f32(geo, t[i], t[j], t[k], J);
          const float wq = w[i] * w[j] * w[k];
          hx_geo_factors_f32(J, kappa * wq, lambda * wq, g, &mm);
        } else if (gk == HX_AXK_AFF) {
          hx_geo_affine_node_f32(geo, a->w3[q], a->ncomp, g, &mm);
        } else {
          const int cs = n3 + HX_AX_PAD;
          for (int cc = 0; cc < 6; cc++) g[cc] = geo[cc * cs + q];
          mm = a->ncomp == 7 ? geo[6 * cs + q] : 0.0f;
        }
        hx_apply_g_f32(g[0], g[1], g[2], g[3], g[4], g[5], ur, us, ut, fr + q, fs + q, ft + q);
        out[q] = mm * u[q];
      }
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      float acc = out[ij + n2 * k];
      for (int m = 0; m < n; m++) acc = HX_MADDF(f, D[m * n + k], ft[ij + n2 * m], acc);
      out[ij + n2 * k] = acc;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        float acc = out[q];
        for (int m = 0; m < n; m++) acc = HX_MADDF(f, D[m * n + i], fr[m + n * j + n2 * k], acc);
        for (int m = 0; m < n; m++) acc = HX_MADDF(f, D[m * n + j], fs[i + n * m + n2 * k], acc);
        out[q] = acc;
      }
}

/* u . w of one element in double (exact float products), 8 fixed lanes. */
HX_AXF_INLINE double hx_axf_dot(const int n3, const float *HX_RESTRICT u, const float *HX_RESTRICT w) {
  double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  const int nb = n3 / 8 * 8;
  for (int q = 0; q < nb; q += 8)
    for (int l = 0; l < 8; l++) s[l] += (double)u[q + l] * (double)w[q + l];
  for (int q = nb; q < n3; q++) s[q - nb] += (double)u[q] * (double)w[q];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* The element's input values: the L-vector slice, or (fused scatter) its
 * values gathered from the G-vector into ub (0 where the map is negative). */
HX_AXF_INLINE const float *hx_axf_u(const size_t n3, const hx_axf_args *a, const size_t e, float *HX_RESTRICT ub) {
  if (!a->map) return a->u + n3 * e;
  /* the pointers in locals: through a, the stores to ub would reload them */
  const int32_t *HX_RESTRICT m = a->map + n3 * e;
  const float *HX_RESTRICT g = a->u;
  for (size_t q = 0; q < n3; q++) ub[q] = m[q] >= 0 ? g[m[q]] : 0.0f;
  return ub;
}

/* Fused scatter: prefetch (into L2) the G-vector values of element en, the
 * first and last entry of each of its rows of n nodes (a row of the element
 * is contiguous or nearly so in the G-vector: at most two lines). Issued
 * while element e is gathered, so the lines arrive during e's compute;
 * without it the gather waits on the G-vector's misses. Used by the p = 7
 * AVX2 kernel (1 thread, 1000 elements, thread CPU time: 1.41-2.27 ->
 * 1.23-1.34 ms per apply); at p = 3 the generic loop is slower with it
 * (0.74 -> 0.80 ms for 4096 elements: 32 map loads and prefetches per 64
 * gathered values that were mostly cached already). */
HX_AXF_INLINE void hx_axf_pf_g(const int n, const size_t n3, const hx_axf_args *a, const size_t en) {
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

#define HX_AXF_CHUNK(N) ((N) * (N) * (N) >= 2048 ? 1 : 2048 / ((N) * (N) * (N)))

/* One element of the loop below: the record kind dispatched to a
 * specialised copy of the kernel. */
#define HX_AXF_ELEM(N, OTF, F, UE)                                                          \
  do {                                                                                      \
    if (OTF) {                                                                              \
      hx_axf_elem((N), HX_AXFG_OTF, (F), a, a->geo + HX_AX_OTF_STRIDE * e, UE, oe, fr, fs, ft); \
    } else {                                                                                \
      const int64_t eo = a->eoff[e];                                                        \
      if ((eo & 3) == HX_AXK_AFF)                                                           \
        hx_axf_elem((N), HX_AXK_AFF, (F), a, a->geo + (eo >> 2), UE, oe, fr, fs, ft);       \
      else                                                                                  \
        hx_axf_elem((N), HX_AXK_GEN, (F), a, a->geo + (eo >> 2), UE, oe, fr, fs, ft);       \
    }                                                                                       \
    if (a->part) a->part[k] = hx_axf_dot((int)n3, UE, oe);                                  \
  } while (0)

/* The per-order, per-mode loops. The fused and the plain input get separate
 * copies of the kernel: with one copy reading through a pointer that is
 * either the L-slice or the gather buffer, GCC's code for p = 3 ran 20-30%
 * slower (thread CPU time 0.72-0.77 against 0.56-0.58 ms per apply of 4096
 * elements). */
#define HX_AXF_LOOP(N, OTF, F, NAME, ATTR)                                                           \
  ATTR static void NAME(const hx_axf_args *a) {                                                      \
    const size_t n3 = (size_t)(N) * (N) * (N);                                                       \
    const int chunk = HX_AXF_CHUNK(N);                                                               \
    _Pragma("omp parallel for schedule(dynamic, chunk)") for (int32_t k = 0; k < a->nlist; k++) {    \
      float scr[4 * ((N) * (N) * (N) + HX_AX_PAD)]; /* fr, fs, ft, gathered u */                     \
      float *fr = scr, *fs = fr + n3 + HX_AX_PAD, *ft = fs + n3 + HX_AX_PAD, *ub = ft + n3 + HX_AX_PAD; \
      const size_t e = (size_t)(a->list ? a->list[k] : k);                                           \
      float *oe = a->out + n3 * e;                                                                   \
      if (a->map) {                                                                                  \
        const float *ue = hx_axf_u(n3, a, e, ub);                                                    \
        HX_AXF_ELEM(N, OTF, F, ue);                                                                  \
      } else {                                                                                       \
        HX_AXF_ELEM(N, OTF, F, a->u + n3 * e);                                                       \
      }                                                                                              \
    }                                                                                                \
  }

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HX_AXF_HAVE_AVX2 1
#define HX_AXF_AVX2_ATTR __attribute__((target("avx2,fma")))
#define HX_AXF_DEFINE(N)                                      \
  HX_AXF_LOOP(N, 0, 0, hx_axf_pre_##N, )                      \
  HX_AXF_LOOP(N, 1, 0, hx_axf_otf_##N, )                      \
  HX_AXF_LOOP(N, 0, 1, hx_axf_avx2_pre_##N, HX_AXF_AVX2_ATTR) \
  HX_AXF_LOOP(N, 1, 1, hx_axf_avx2_otf_##N, HX_AXF_AVX2_ATTR)
/* n = 8 precomputed, AVX2+FMA: hx_axf_avx2_pre_8 below */
#define HX_AXF_DEFINE_8                   \
  HX_AXF_LOOP(8, 0, 0, hx_axf_pre_8, )    \
  HX_AXF_LOOP(8, 1, 0, hx_axf_otf_8, )    \
  HX_AXF_LOOP(8, 1, 1, hx_axf_avx2_otf_8, HX_AXF_AVX2_ATTR)
/* n = 4 precomputed, AVX2+FMA: hx_axf_avx2_pre_4 (ax_f32_avx2_4.h) */
#define HX_AXF_DEFINE_4                   \
  HX_AXF_LOOP(4, 0, 0, hx_axf_pre_4, )    \
  HX_AXF_LOOP(4, 1, 0, hx_axf_otf_4, )    \
  HX_AXF_LOOP(4, 1, 1, hx_axf_avx2_otf_4, HX_AXF_AVX2_ATTR)
#include "ax_f32_avx2_8.h"
#include "ax_f32_avx2_4.h"
#else
#define HX_AXF_HAVE_AVX2 0
#define HX_AXF_DEFINE(N)                 \
  HX_AXF_LOOP(N, 0, 0, hx_axf_pre_##N, ) \
  HX_AXF_LOOP(N, 1, 0, hx_axf_otf_##N, )
#define HX_AXF_DEFINE_8 HX_AXF_DEFINE(8)
#define HX_AXF_DEFINE_4 HX_AXF_DEFINE(4)
#endif

HX_AXF_DEFINE(2)
HX_AXF_DEFINE(3)
HX_AXF_DEFINE_4
HX_AXF_DEFINE(5)
HX_AXF_DEFINE(6)
HX_AXF_DEFINE(7)
HX_AXF_DEFINE_8
HX_AXF_DEFINE(9)
HX_AXF_DEFINE(10)
HX_AXF_DEFINE(11)
HX_AXF_DEFINE(12)
HX_AXF_DEFINE(13)
HX_AXF_DEFINE(14)
HX_AXF_DEFINE(15)
HX_AXF_DEFINE(16)

typedef void (*hx_axf_fn)(const hx_axf_args *);
#define HX_AXF_ROW(M)                                                                                       \
  {                                                                                                         \
    hx_axf_##M##_2, hx_axf_##M##_3, hx_axf_##M##_4, hx_axf_##M##_5, hx_axf_##M##_6, hx_axf_##M##_7,         \
        hx_axf_##M##_8, hx_axf_##M##_9, hx_axf_##M##_10, hx_axf_##M##_11, hx_axf_##M##_12, hx_axf_##M##_13, \
        hx_axf_##M##_14, hx_axf_##M##_15, hx_axf_##M##_16                                                   \
  }
/* [isa][mode][p-1]: isa 0 generic, 1 AVX2+FMA (the choice of hx_ax_cpu_isa) */
static const hx_axf_fn hx_axf_table[1 + HX_AXF_HAVE_AVX2][2][HX_AX_PMAX] = {
    {HX_AXF_ROW(pre), HX_AXF_ROW(otf)},
#if HX_AXF_HAVE_AVX2
    {HX_AXF_ROW(avx2_pre), HX_AXF_ROW(avx2_otf)},
#endif
};

int hx_ax_cpu_apply_f32(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                        const float *u, float *w, double *part) {
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
  hx_axf_args a = {.nlist = nlist,
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
                   .part = part};
  const int isa = HX_AXF_HAVE_AVX2 ? ax->isa : 0;
  hx_axf_table[isa][ax->mode == HX_GEO_ONTHEFLY][ax->p - 1](&a);
  return HX_SUCCESS;
}
