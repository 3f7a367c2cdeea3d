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
  int avx512; /* the AVX-512 kernels at this order (hx_cpu_avx512_order at create time) */
  int ncomp; /* PRECOMPUTED: doubles per node, 7, or 6 when every lambda is 0
                (no mass term: the Poisson case moves 64 instead of 72 B/node) */
  /* host copies of the basis and the inputs */
  double t[HX_AX_NMAX], w[HX_AX_NMAX], D[HX_AX_NMAX * HX_AX_NMAX];
  double *h_nodes, *h_kappa, *h_lambda;
  /* per-node coefficients (hx_ax_opts h_kappa_node / h_lambda_node, E n^3
   * each, NULL when not given) and, per element, bit 0 / bit 1 set where
   * kappa / lambda varies over its nodes (h_var NULL: nothing varies). A
   * flagged element is stored per node (GEN or SPL, never AFF). */
  double *h_kn, *h_ln;
  unsigned char *h_var;
  /* backend memory */
  double *d_basis; /* [D (n*n, D[i*n+m] = l_m'(t_i)), t (n), w (n)] */
  double *d_geo;   /* PRECOMPUTED: E * ncomp * cs with cs = n^3 + HX_AX_PAD,
                      element e at e*ncomp*cs, component c (G_rr, G_rs, G_rt,
                      G_ss, G_st, G_tt, and lambda-mass if ncomp = 7) at
                      + c*cs + node; ONTHEFLY: E * HX_AX_OTF_STRIDE (24 vertex
                      coordinates in the input order, kappa, lambda) */
  double *d_part;  /* E per-element partials of u.w */
  double *d_partk; /* hx_ax_apply_many_prec's partials, partk_len doubles (grown on demand) */
  size_t partk_len;
  /* precision (ax_prec.c): HX_F64, or HX_F32 with d_geo freed and the
   * float copies below used instead of d_basis / d_geo (same layouts, with
   * the ONTHEFLY record holding the 24 trilinear-map coefficients instead of
   * the vertices); d_part stays double */
  hx_precision prec;
  float *d_basis32, *d_geo32;
  /* PRECOMPUTED storage per element (docs/operator.md, "Affine and split
   * storage"): d_eoff[e] = (offset in doubles of the element's record in
   * d_geo) << 2 | kind (HX_AXK_*). */
  hx_ax_geometry geometry; /* fp64 or split for the curved elements */
  int affine;              /* affine elements detected (1) or stored general (0) */
  int32_t nkind[4];        /* elements of each kind */
  int64_t geo_len;         /* doubles in d_geo */
  int64_t *d_eoff;         /* E (+1) */
};

/* Record kinds of the precomputed storage (low 2 bits of d_eoff):
 *  GEN: ncomp blocks of cs = n^3 + HX_AX_PAD doubles (G_rr..G_tt, lambda-mass);
 *  AFF: HX_AX_MEANS doubles: the 7 factors of G/w_q (constant on an affine
 *       element: kappa |J| J^-1 J^-T and lambda |J|), the 8th zero;
 *  SPL: HX_AX_MEANS doubles: the element means of G/w_q (and lambda |J|),
 *       then ncomp blocks of hx_ax_cs32(n^3) floats: the FP32 deviations
 *       G_q/w_q - mean. The kernels use g = w_q (mean + dev) (AFF: w_q mean). */
#define HX_AXK_GEN 0
#define HX_AXK_AFF 1
#define HX_AXK_SPL 2
/*  AFV: an affine element with a coefficient that varies over its nodes:
 *       HX_AX_MEANS doubles, the affine record of the geometry alone
 *       (kappa = lambda = 1: G/w_q and |J|), then cs = n^3 + HX_AX_PAD
 *       doubles of kappa per node and, when ncomp = 7, cs of lambda per node
 *       (hx_geo_scaled_node: g = (w_q kappa_q) mean, mass (w_q lambda_q) |J|):
 *       one or two doubles per node instead of the general ncomp. The
 *       FP32 operator stores the same record in floats (ax_prec.c). */
#define HX_AXK_AFV 3
#define HX_AX_MEANS 8
/* float stride of a deviation block: n^3 + 16 rounded up to 8 floats (32 B) */
static inline HX_HD int hx_ax_cs32(int n3) { return (n3 + 16 + 7) / 8 * 8; }
/* Relative tolerance of the affine test: every entry of the Jacobian at the
 * 27 points {-1,0,1}^3 within tol * max|J(0)| of J(0). */
#define HX_AX_AFFINE_TOL 1e-12

/* Offsets in d_basis. */
static inline int hx_ax_off_t(int n) { return n * n; }
static inline int hx_ax_off_w(int n) { return n * n + n; }
/* n^3 weight products w_i w_j w_k (node order), after w (CPU kernels) */
static inline int hx_ax_off_w3(int n) { return n * n + 2 * n; }

/* General FP64 factors of element e on the host (ax.c): g[c*n^3 + node],
 * c = 0..5 the factors, 6 the lambda-mass; mass[node] = w |J| if not NULL. */
/* ax_prec.c: replace the FP64 backend data of a new operator by its FP32
 * storage (prec_impl.h "operator, FP32 storage") */
int hx_ax_make_f32(struct hx_ax_s *ax);
int hx_ax_elem_factors(const struct hx_ax_s *ax, int32_t e, double *g, double *mass);

/* Per-backend apply of the listed elements (list == NULL: elements 0..nlist-1).
 * If part != NULL, part[k] = u_e . w_e for the k-th element handled (list
 * position, or element index when list == NULL). map != NULL: u is a
 * G-vector and the element reads u_e[q] = u[map[e n^3 + q]] (0 where
 * map < 0: the scatter fused into the kernel). */
int hx_cpu_ax_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                    const double *u, double *w, double *part);
/* The cross-element AVX2 kernel (cpu/ax_xelem_cpu.c): same contract as
 * hx_cpu_ax_apply; returns 1 when it applied the list, 0 when it does not
 * serve this operator (order, mode, ISA, or HEXCG_AX_XELEM=0), to be done by
 * the one-element kernels. With 1, *nrest > 0 list positions (*rest,
 * malloc'd, the caller frees) hold split elements it left to the
 * one-element kernel. */
int hx_ax_xelem_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                      const double *u, double *w, double *part, int32_t *nrest, int32_t **rest);
/* 1 if the cross-element kernel serves order p with the ISA that
 * hx_ax_cpu_isa() selects (precomputed geometry, HEXCG_AX_XELEM unset or not 0) */
int hx_ax_xelem_serves(int p);
/* CPU instruction-set instantiation to use (see ax_cpu.c) and its name */
int hx_ax_cpu_isa(void);
const char *hx_ax_cpu_isa_name(int isa);
/* 1 where the AVX-512 kernels chosen for all orders at once run beside the
 * AVX2 ones (cpu/isa_cpu.c; per order: hx_cpu_avx512_order, isa_impl.h);
 * their target attribute */
int hx_cpu_avx512(void);
#define HX_AVX512_TARGET "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"
/* multiply-add chains for iters iterations on every thread (isa 0 generic,
 * 1 AVX2+FMA, 2 AVX-512); returns flops done */
double hx_ax_cpu_peak_run(int isa, long iters);
#ifdef HEXCG_HAVE_CUDA
/* FP64 multiply-add chains on the device for about `seconds`; *gflops */
int hx_ax_cuda_peak(hx_backend b, double seconds, double *gflops);
/* *result = sum of part[0..m-1] in a fixed order (deterministic); synchronises. */
int hx_ax_cuda_sum(hx_backend b, int32_t m, double *part, double *result);
/* The same sum left in device memory at d_dst (queued, no wait). */
int hx_ax_cuda_sum_to(hx_backend b, int32_t m, double *part, double *d_dst);
#endif

#ifdef __cplusplus
}
#endif
#endif
