/* CPU (OpenMP) element operator: one element per loop iteration, sum
 * factorisation, the order fixed at compile time. Each order p = 1..15 and
 * each geometry mode gets its own function (HX_AX_CPU_DEFINE below), inside
 * which the always-inlined element kernel sees n as a literal constant, so
 * the small contractions unroll and vectorise. Per-node math: hx_ax_math.h. */
#include "../ax_impl.h"

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
  const double *geo;
  int ncomp; /* precomputed: 7, or 6 without the mass term */
  const double *u;
  double *out;
  double *part;
} hx_ax_cpu_args;

/* a*b + c, fused (one rounding) in the FMA instantiations (f = 1). */
#define HX_MADD(f, a, b, c) ((f) ? __builtin_fma((a), (b), (c)) : (a) * (b) + (c))

/* One element (the m-sums are innermost and unroll, n being a constant):
 *  1a. ut for the whole element, vectorised over the contiguous (i,j) plane:
 *      D[k][m] is invariant there, so its broadcasts leave the loop (the
 *      t-direction costs ~1 load per multiply-add instead of 2);
 *  1b. per node, vectorised over i: ur, us, the 6 factors (loaded, or
 *      computed from the trilinear map when otf), fluxes f = G grad into
 *      fr, fs, ft (ft overwrites ut in place), and the mass term into out;
 *  2a. out += D^T contraction of ft, over the (i,j) plane;
 *  2b. out += D^T contractions of fr and fs, vectorised over i.
 * f selects fused multiply-adds in the contractions. */
HX_AX_INLINE void hx_ax_cpu_elem(const int n, const int otf, const int f, const hx_ax_cpu_args *a,
                                 const double *HX_RESTRICT geo, const double *HX_RESTRICT u,
                                 double *HX_RESTRICT out, double *HX_RESTRICT fr, double *HX_RESTRICT fs,
                                 double *HX_RESTRICT ft) {
  const int n2 = n * n, n3 = n2 * n;
  const double *HX_RESTRICT D = a->D, *HX_RESTRICT Dt = a->Dt;
  const double *HX_RESTRICT t = a->t, *HX_RESTRICT w = a->w;
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
        } else {
          const int cs = n3 + HX_AX_PAD;
          for (int cc = 0; cc < 6; cc++) g[cc] = geo[cc * cs + q];
          mm = a->ncomp == 7 ? geo[6 * cs + q] : 0.0;
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

/* Elements per dynamically scheduled chunk (~2048 nodes): balances threads
 * that the OS deschedules on a shared machine; results do not depend on it. */
#define HX_AX_CHUNK(N) ((N) * (N) * (N) >= 2048 ? 1 : 2048 / ((N) * (N) * (N)))

/* The per-order, per-mode loops: N is a literal in each, so the scratch
 * arrays have a constant size and the inlined kernel a constant n. ISA is
 * the instantiation (generic, or AVX2+FMA on x86 with GCC/clang). */
#define HX_AX_CPU_LOOP(N, OTF, F, NAME, ATTR)                                                          \
  ATTR static void NAME(const hx_ax_cpu_args *a) {                                                     \
    const size_t n3 = (size_t)(N) * (N) * (N);                                                         \
    const size_t gs = (OTF) ? HX_AX_OTF_STRIDE : (size_t)a->ncomp * (n3 + HX_AX_PAD);                  \
    const int chunk = HX_AX_CHUNK(N);                                                                  \
    _Pragma("omp parallel for schedule(dynamic, chunk)") for (int32_t k = 0; k < a->nlist; k++) {      \
      double scr[3 * ((N) * (N) * (N) + HX_AX_PAD)]; /* fr, fs, ft, padded */                          \
      double *fr = scr, *fs = fr + n3 + HX_AX_PAD, *ft = fs + n3 + HX_AX_PAD;                          \
      const size_t e = (size_t)(a->list ? a->list[k] : k);                                             \
      hx_ax_cpu_elem((N), (OTF), (F), a, a->geo + gs * e, a->u + n3 * e, a->out + n3 * e, fr, fs, ft); \
      if (a->part) a->part[k] = hx_ax_cpu_dot((int)n3, a->u + n3 * e, a->out + n3 * e);                \
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
#else
#define HX_AX_HAVE_AVX2 0
#define HX_AX_CPU_DEFINE(N)                    \
  HX_AX_CPU_LOOP(N, 0, 0, hx_ax_cpu_pre_##N, ) \
  HX_AX_CPU_LOOP(N, 1, 0, hx_ax_cpu_otf_##N, )
#endif

HX_AX_CPU_DEFINE(2)
HX_AX_CPU_DEFINE(3)
HX_AX_CPU_DEFINE(4)
HX_AX_CPU_DEFINE(5)
HX_AX_CPU_DEFINE(6)
HX_AX_CPU_DEFINE(7)
HX_AX_CPU_DEFINE(8)
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

int hx_ax_cpu_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const double *u, double *w,
                    double *part) {
  const int n = ax->n;
  double Dt[HX_AX_NMAX * HX_AX_NMAX];
  for (int i = 0; i < n; i++)
    for (int m = 0; m < n; m++) Dt[m * n + i] = ax->D[i * n + m];
  hx_ax_cpu_args a = {nlist,
                      list,
                      ax->d_basis,
                      Dt,
                      ax->d_basis + hx_ax_off_t(n),
                      ax->d_basis + hx_ax_off_w(n),
                      ax->d_geo,
                      ax->ncomp,
                      u,
                      w,
                      part};
  hx_ax_cpu_table[ax->isa][ax->mode == HX_GEO_ONTHEFLY][ax->p - 1](&a);
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
