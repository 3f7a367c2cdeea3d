/* Per-node math of the spectral-element operator, shared by the CPU backend,
 * the CUDA kernels and the host setup (HX_HD: __host__ __device__ under nvcc).
 *
 * Conventions (docs/operator.md):
 *  - J[3*a + b] = dx_a / dxi_b (row a = physical coordinate, column b =
 *    reference direction r, s, t), row-major 3x3.
 *  - The 6 symmetric factors of a node, in the order
 *      g[0..5] = G_rr, G_rs, G_rt, G_ss, G_st, G_tt,
 *    are G = kappa w |J| J^{-1} J^{-T} (w = w_i w_j w_k, the GLL weight
 *    product); the mass weight is lambda w |J|.
 *  - hex8 vertex (a,b,c) in {0,1}^3 is node a + 2b + 4c; hex27 node (a,b,c)
 *    in {0,1,2}^3 (reference coordinates -1, 0, 1) is a + 3b + 9c; xyz
 *    interleaved per node.
 */
#ifndef HX_AX_MATH_H
#define HX_AX_MATH_H

#include "hx_hd.h"

/* Largest supported order and points per direction. */
#define HX_AX_PMAX 15
#define HX_AX_NMAX 16
/* Doubles per element of the on-the-fly geometry: 8 trilinear map
 * coefficients x 3 coordinates, kappa, lambda. */
#define HX_AX_OTF_STRIDE 26
/* Padding (doubles) after each n^3 block of precomputed factors and of the
 * CPU scratch arrays: without it, at n = 8 (and 16) all the streams of an
 * element sit exactly 4 KiB apart and collide in the same L1 cache sets. */
#define HX_AX_PAD 8

/* The functions below are written once for a value type HX_REAL in
 * hx_ax_math_t.h and instantiated for double (hx_hex8_coeffs,
 * hx_hex8_jacobian, hx_quad_basis, hx_hex27_jacobian, hx_geo_factors,
 * hx_apply_g, hx_geo_affine_node, hx_geo_scaled_node: the FP64 operator and
 * the host setup) and for float (the same
 * names with _f32: the FP32 operator). Under C++ (the CUDA kernels, templated
 * on the type) the float instantiation also exists under the plain names, as
 * overloads. */
#define HX_TEMPLATE "hx_ax_math_t.h"
#include "hx_instantiate.h"

/* Factors of one node from a split record: the affine record m[0..6]
 * (hx_geo_affine_node, hx_ax_math_t.h) plus FP32 deviations dev[c * cs32]
 * of the node (dev already offset to the node): g = wq (m + dev) in FP64;
 * with dev = 0 this is the affine result bit for bit (m + 0 = m). */
static inline HX_HD void hx_geo_split_node(const double *HX_RESTRICT m, const float *HX_RESTRICT dev, int cs32,
                                           double wq, int ncomp, double *HX_RESTRICT g, double *HX_RESTRICT mm) {
  for (int c = 0; c < 6; c++) g[c] = wq * (m[c] + (double)dev[c * cs32]);
  *mm = ncomp == 7 ? wq * (m[6] + (double)dev[6 * cs32]) : 0.0;
}

/* Flops of the model counts (docs/operator.md), per element of n^3 nodes:
 * gradient 6n^4, G 15n^3, transposed gradient 6n^4 + 2n^3 (sum of the three
 * directions), mass term 2n^3. On the fly adds, per node, the trilinear
 * Jacobian (3 + 9*6 = 57), the factors (70) and the weight products
 * kappa*w_i*w_j*w_k, lambda*w_i*w_j*w_k (4): 131. */
#define HX_AX_OTF_NODE_FLOPS 131.0

#endif
