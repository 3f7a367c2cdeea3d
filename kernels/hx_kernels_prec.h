/* hexcg kernels: precision as a parameter (included from hx_kernels.h).
 *
 * For an FP32 preconditioner under FP64 CG: the streaming ops, the
 * gather-scatter (its _p functions: gs/hx_gs.h) and the element operator
 * take a precision, HX_F64 (double)
 * or HX_F32 (float), and conversion kernels move vectors across the
 * preconditioner boundary. Data pointers are `void *` in the backend's
 * memory and hold n entries of the given precision.
 *
 * Rules shared by every function below:
 *  - HX_F64 calls the existing double function (hx_array_axpby,
 *    hx_gs_gather, hx_ax_apply...): the same bits, always.
 *  - HX_F32: scalars (a, b, beta) are rounded to float and the arithmetic
 *    is float; reductions (dot, norm2sq, u.w of the operator) accumulate the
 *    exact products of floats in double, over the same deterministic
 *    HX_REDUCE_CHUNK chunks / element order as the FP64 ones.
 *  - The per-entry, per-row and per-node math is one set of HX_HD functions
 *    instantiated for float and double (hx_*_math_t.h), called by the CPU
 *    loops and the CUDA kernels alike.
 *  - An unknown precision is HX_ERR_ARG. Nothing here is collective unless
 *    it says so.
 */
#ifndef HX_KERNELS_PREC_H
#define HX_KERNELS_PREC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HX_F64 = 0, HX_F32 = 1 } hx_precision;

/* Bytes per entry: 8 (HX_F64), 4 (HX_F32), 0 for an unknown value. */
size_t hx_precision_size(hx_precision prec);
/* "fp64", "fp32" ("unknown" otherwise). */
const char *hx_precision_name(hx_precision prec);
/* Parse "fp64"/"f64"/"double" or "fp32"/"f32"/"float"; HX_ERR_INPUT otherwise. */
int hx_precision_parse(const char *s, hx_precision *prec);

/* ------------------------------------------------------------ conversion
 * d_dst[i] = d_src[i] converted (n entries, backend memory). F64 -> F32
 * rounds to nearest (even), overflowing to +-inf; F32 -> F64 is exact;
 * equal precisions copy. d_dst and d_src must not overlap. Queued on the
 * backend stream (asynchronous on cuda). */
int hx_array_convert(hx_backend b, int64_t n, hx_precision dst_prec, void *d_dst, hx_precision src_prec,
                     const void *d_src);
/* d_y[i] += a * (double)d_x[i], computed in FP64 (the widening is exact):
 * the FP32 correction added back into an FP64 vector. d_x is float. */
int hx_array_axpy_f32_to_f64(hx_backend b, int64_t n, double *d_y, double a, const float *d_x);

/* ------------------------------------------------------------ streaming */
int hx_array_copy_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, const void *d_x); /* y = x */
/* y = a x + bb y */
int hx_array_axpby_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, double a, const void *d_x,
                     double bb);
/* *result = x . y (local, deterministic; FP64 accumulation); synchronous */
int hx_array_dot_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, const void *d_y,
                   double *result);
/* *result = x . x (local, deterministic; FP64 accumulation); synchronous */
int hx_array_norm2sq_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, double *result);
/* p = z + beta p */
int hx_array_xpay_p(hx_backend b, hx_precision prec, int64_t n, void *d_p, const void *d_z, double beta);
/* y = x .* z (y == x or y == z allowed) */
int hx_array_pointwise_mult_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, const void *d_x,
                              const void *d_z);

/* An extra diagonal on m listed entries (the Robin boundary term of the
 * assembled operator, disc/operator.c): y[idx[j]] += r[j] * x[idx[j]] for
 * j < m (d_idx: int32, distinct entries; d_r, d_x, d_y in prec; x and y must
 * not alias). red != NULL: sum_{j<mred} r_j x_{idx_j}^2 (products and sum in
 * double, a fixed order: one thread on the cpu, one block on cuda) appended
 * as one partial to slot k of red (hx_red_fetch), computed from x before y
 * is updated; red == NULL: no sum. m == 0 appends 0. Queued on b's default
 * queue (no host wait). kernels/diag.c. */
int hx_array_diag_add_list_p(hx_backend b, hx_precision prec, int64_t m, int64_t mred, const int32_t *d_idx,
                             const void *d_r, const void *d_x, void *d_y, hx_red red, int k);

/* ------------------------------------------------------------ operator
 * hx_ax_create with a precision. HX_F64 is hx_ax_create. HX_F32: the factors
 * are computed in double on the host exactly as for HX_F64 (same checks,
 * same errors), then stored rounded to float. PRECOMPUTED: the per-element
 * records of the FP64 operator (same affine detection, docs/operator.md):
 * an affine element stores its 7 constants (G/w_q, lambda |J|) as floats
 * and the kernel forms g = w_q m in float, any other element (the FP64
 * "split" kind included) ncomp floats per node. ONTHEFLY: the 24
 * trilinear-map coefficients, kappa and lambda per element, rounded to float
 * after the coefficients were formed in double, so the element's offset
 * from the origin costs no precision. The basis (D, t, w) is rounded to
 * float; apply runs the float instantiation of the shared math (and on x86
 * CPUs with AVX2+FMA at p = 7 a hand-written 8-wide kernel). hx_ax_diagonal
 * and hx_ax_mass stay FP64 (host, computed from the double inputs).
 * hx_ax_apply / hx_ax_apply_list on an HX_F32 operator are HX_ERR_ARG: use
 * the _p forms. hx_ax_storage_counts reports the FP32 kinds (no split).
 * hx_ax_create_prec(b, p, E, npe, h_nodes, h_kappa, h_lambda, mode, prec, &ax)
 * is the inline form of hx_ax_create_opts_prec with the defaults and mode. */
/* the same with the options of hx_ax_create_opts (opts->affine = 0: every
 * element stored general, the tests' reference; opts->geometry only matters
 * for HX_F64) */
int hx_ax_create_opts_prec(hx_backend b, int p, int32_t E, int npe, const double *h_nodes, const double *h_kappa,
                           const double *h_lambda, const hx_ax_opts *opts, hx_precision prec, hx_ax *ax);
hx_precision hx_ax_precision(hx_ax ax);
/* The operator's one apply, every hx_ax_apply* name is an inline form of it:
 * d_w = A_L d_u on the nlist elements of d_list (backend memory, int32,
 * distinct; NULL when nlist = E: every element; entries of d_w of other
 * elements are untouched). prec: the precision of d_u and d_w, which must be
 * the operator's (HX_ERR_ARG otherwise). d_map NULL: d_u is an L-vector;
 * else d_u is a G-vector read through the L->G map d_map (backend memory, E
 * n^3 int32; element e reads u_e[q] = d_u[d_map[e n^3 + q]], 0 where the map
 * is negative), the same bits as a scatter then the apply. The sum of the
 * element u.w in FP64 (element partials in list order on the cpu backends,
 * from float products in double for HX_F32; a fixed tree on cuda): to *uw
 * when uw != NULL (synchronous), or, with red != NULL (uw NULL), appended as
 * one partial to slot k of red (no host wait; hx_red_fetch). Without a sum
 * the cuda launch is asynchronous on the backend's stream. */
int hx_ax_apply_prec(hx_ax ax, hx_precision prec, int32_t nlist, const int32_t *d_list, const int32_t *d_map,
                     const void *d_u, void *d_w, double *uw, hx_red red, int k);
/* The operator on nk columns at once (the block solve): d_w[c] = A_L d_u[c]
 * for c < nk on the nlist elements of d_list, each element's geometric
 * factors read once for all columns (host arrays of nk backend pointers of
 * precision prec; d_map as in hx_ax_apply_prec); uw != NULL (host, nk):
 * column c's sum of the element u.w, the value hx_ax_apply_prec gives it
 * (cpu: the same bits). Each column gets the bits of its single apply. On
 * cuda the launches are queued per column. 0 <= nk <= HX_AX_MANY_MAX. */
#define HX_AX_MANY_MAX 64
int hx_ax_apply_many_prec(hx_ax ax, hx_precision prec, int nk, int32_t nlist, const int32_t *d_list,
                          const int32_t *d_map, const void *const *d_u, void *const *d_w, double *uw);
static inline int hx_ax_create_prec(hx_backend b, int p, int32_t E, int npe, const double *h_nodes,
                                    const double *h_kappa, const double *h_lambda, hx_geo_mode mode,
                                    hx_precision prec, hx_ax *ax) {
  hx_ax_opts o = hx_ax_opts_default();
  o.mode = mode;
  return hx_ax_create_opts_prec(b, p, E, npe, h_nodes, h_kappa, h_lambda, &o, prec, ax);
}
/* d_w = A_L d_u in the operator's precision (d_u, d_w: L-vectors of that
 * precision), on every element / on a list / through the L->G map. */
static inline int hx_ax_apply_p(hx_ax ax, const void *d_u, void *d_w, double *uw) {
  return hx_ax_apply_prec(ax, ax ? hx_ax_precision(ax) : HX_F64, ax ? hx_ax_num_elements(ax) : 0, NULL, NULL, d_u,
                          d_w, uw, NULL, 0);
}
static inline int hx_ax_apply_list_p(hx_ax ax, int32_t nlist, const int32_t *d_list, const void *d_u, void *d_w,
                                     double *uw) {
  return hx_ax_apply_prec(ax, ax ? hx_ax_precision(ax) : HX_F64, nlist, d_list, NULL, d_u, d_w, uw, NULL, 0);
}
static inline int hx_ax_apply_list_g_p(hx_ax ax, int32_t nlist, const int32_t *d_list, const int32_t *d_map,
                                       const void *d_u, void *d_w, double *uw) {
  return hx_ax_apply_prec(ax, ax ? hx_ax_precision(ax) : HX_F64, nlist, d_list, d_map, d_u, d_w, uw, NULL, 0);
}

/* ------------------------------------------------------------ tensor transfers
 * hx_tensor3_apply with a precision: d_A, d_in, d_out all in prec (HX_F32:
 * the same three contractions summed in float in the same order). */
int hx_tensor3_apply_p(hx_backend b, hx_precision prec, int a, int c, int32_t E, const void *d_A, const void *d_in,
                       void *d_out);

/* ------------------------------------------------------------ FDM box solves
 * (the FP32 Schwarz of precond/fdm.c; kernels/fdm.c, cpu/fdm_cpu.c: AVX2
 * eight lanes, cuda/fdm_cuda.cu; math hx_fdm_math.h instantiated for float).
 * hx_fdm_elem_apply_list / hx_fdm_elem_apply_map with a precision: d_S, d_L,
 * the boxes d_u / d_w and the G-vector d_x all in prec. */
int hx_fdm_elem_apply_list_p(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list,
                             const void *d_S, const void *d_L, const void *d_u, void *d_w);
int hx_fdm_elem_apply_map_p(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list,
                            const void *d_S, const void *d_L, const int32_t *d_map, const void *d_x, void *d_w);
/* d_y[i] = d_w[i] * d_x[d_idx[i]] (0 where d_idx[i] < 0), d_x in xprec, d_y
 * in yprec, the weights double. F64 -> F32 (entry): the product in double,
 * rounded to float once; F32 -> F64 (exit): the exact widening times the
 * weight in double; F32 -> F32: the weight rounded to float, product in
 * float; F64 -> F64 is hx_fdm_wgather. */
int hx_fdm_wgather_p(hx_backend b, int64_t n, const int32_t *d_idx, const double *d_w, hx_precision xprec,
                     const void *d_x, hx_precision yprec, void *d_y);
/* Its transpose: d_y[0..ny) = 0, then d_y[d_idx[i]] = d_w[i] * d_x[i] for
 * i < n where d_idx[i] >= 0 (d_idx takes distinct values), each entry the
 * same product with the same rounding as hx_fdm_wgather_p's. */
int hx_fdm_wscatter_p(hx_backend b, int64_t ny, int64_t n, const int32_t *d_idx, const double *d_w,
                      hx_precision xprec, const void *d_x, hx_precision yprec, void *d_y);

/* FP32 box solves in the grouped layout (CPU cross-element kernel; see
 * docs/fdm.md "Grouped layout"): groups of 8 elements, one per vector lane;
 * group g's extended boxes interleaved [point][lane] at g (p+3)^3 8 of the
 * map (extended L -> G, -1: no node) and of w, its eigenvectors and
 * eigenvalues interleaved [entry][lane] at g 3 (p+3)^2 8 of Sg and
 * g 3 (p+3) 8 of Lg (a lane without an element: zero S and L, its outputs
 * are 0). Solves groups [g0, g0 + ng): w = box solve of x[map].
 * hx_fdm_grouped_f32_available: whether this backend and order have it
 * (CPU, AVX2, p + 3 <= 13, HEXCG_FDM_XELEM not 0). */
int hx_fdm_grouped_f32_available(hx_backend b, int p);
int hx_fdm_elem_apply_grouped_f32(hx_backend b, int p, int32_t g0, int32_t ng, const float *d_Sg,
                                  const float *d_Lg, const int32_t *d_mapg, const float *d_x, float *d_wg);

#ifdef __cplusplus
}
#endif
#endif
