/* Private to the element operator (kernels/ax.c, cpu/ax_cpu.c, cuda/ax_cuda.cu):
 * the hx_ax struct and the per-backend entry points. No CUDA headers here. */
#ifndef HX_AX_IMPL_H
#define HX_AX_IMPL_H

#include "backend_impl.h"
#include "hx_ax_math.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hx_ax_s {
  hx_backend b;  /* borrowed */
  int p, n, npe; /* order, points per direction, map nodes per element */
  int32_t E;
  hx_geo_mode mode;
  int isa;   /* CPU kernels: 0 generic, 1 AVX2+FMA (hx_ax_cpu_isa) */
  int ncomp; /* PRECOMPUTED: doubles per node, 7, or 6 when every lambda is 0
                (no mass term: the Poisson case moves 64 instead of 72 B/node) */
  /* host copies of the basis and the inputs */
  double t[HX_AX_NMAX], w[HX_AX_NMAX], D[HX_AX_NMAX * HX_AX_NMAX];
  double *h_nodes, *h_kappa, *h_lambda;
  /* backend memory */
  double *d_basis; /* [D (n*n, D[i*n+m] = l_m'(t_i)), t (n), w (n)] */
  double *d_geo;   /* PRECOMPUTED: E * ncomp * cs with cs = n^3 + HX_AX_PAD,
                      element e at e*ncomp*cs, component c (G_rr, G_rs, G_rt,
                      G_ss, G_st, G_tt, and lambda-mass if ncomp = 7) at
                      + c*cs + node; ONTHEFLY: E * HX_AX_OTF_STRIDE (24 vertex
                      coordinates in the input order, kappa, lambda) */
  double *d_part;  /* E per-element partials of u.w */
  /* precision (ax_prec.c): HX_F64, or HX_F32 with d_geo freed and the
   * float copies below used instead of d_basis / d_geo (same layouts, with
   * the ONTHEFLY record holding the 24 trilinear-map coefficients instead of
   * the vertices); d_part stays double */
  hx_precision prec;
  float *d_basis32, *d_geo32;
};

/* Offsets in d_basis. */
static inline int hx_ax_off_t(int n) { return n * n; }
static inline int hx_ax_off_w(int n) { return n * n + n; }

/* Per-backend apply of the listed elements (list == NULL: elements 0..nlist-1).
 * If part != NULL, part[k] = u_e . w_e for the k-th element handled (list
 * position, or element index when list == NULL). */
int hx_ax_cpu_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const double *u, double *w,
                    double *part);
/* CPU instruction-set instantiation to use (see ax_cpu.c) and its name */
int hx_ax_cpu_isa(void);
const char *hx_ax_cpu_isa_name(int isa);
/* multiply-add chains for iters iterations on every thread; returns flops done */
double hx_ax_cpu_peak_run(int isa, long iters);
#ifdef HEXCG_HAVE_CUDA
/* FP64 multiply-add chains on the device for about `seconds`; *gflops */
int hx_ax_cuda_peak(hx_backend b, double seconds, double *gflops);
int hx_ax_cuda_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const double *u, double *w,
                     double *part);
/* *result = sum of part[0..m-1] in a fixed order (deterministic); synchronises. */
int hx_ax_cuda_sum(hx_backend b, int32_t m, double *part, double *result);
#endif

#ifdef __cplusplus
}
#endif
#endif
