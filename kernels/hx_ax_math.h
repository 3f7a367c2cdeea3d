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

/* Trilinear map in monomial form: x_a(r,s,t) = c[a] + c[3+a] r + c[6+a] s +
 * c[9+a] t + c[12+a] rs + c[15+a] rt + c[18+a] st + c[21+a] rst, from the 8
 * vertices v[3*(a+2b+4c) + coord]. Exact arithmetic up to one rounding per
 * sum (the 1/8 scaling is exact). */
static inline HX_HD void hx_hex8_coeffs(const double *HX_RESTRICT v, double *HX_RESTRICT c) {
  for (int m = 0; m < 24; m++) c[m] = 0.0;
  for (int q = 0; q < 8; q++) {
    const double sa = (q & 1) ? 1.0 : -1.0, sb = (q & 2) ? 1.0 : -1.0, sc = (q & 4) ? 1.0 : -1.0;
    for (int a = 0; a < 3; a++) {
      const double x = v[3 * q + a];
      c[a] += x;
      c[3 + a] += sa * x;
      c[6 + a] += sb * x;
      c[9 + a] += sc * x;
      c[12 + a] += sa * sb * x;
      c[15 + a] += sa * sc * x;
      c[18 + a] += sb * sc * x;
      c[21 + a] += sa * sb * sc * x;
    }
  }
  for (int m = 0; m < 24; m++) c[m] *= 0.125;
}

/* Jacobian of the trilinear map with coefficients c at (r, s, t). */
static inline HX_HD void hx_hex8_jacobian(const double *HX_RESTRICT c, double r, double s, double t,
                                          double *HX_RESTRICT J) {
  const double rs = r * s, rt = r * t, st = s * t;
  for (int a = 0; a < 3; a++) {
    J[3 * a + 0] = c[3 + a] + c[12 + a] * s + c[15 + a] * t + c[21 + a] * st;
    J[3 * a + 1] = c[6 + a] + c[12 + a] * r + c[18 + a] * t + c[21 + a] * rt;
    J[3 * a + 2] = c[9 + a] + c[15 + a] * r + c[18 + a] * s + c[21 + a] * rs;
  }
}

/* 1D quadratic Lagrange basis on {-1, 0, 1} and its derivative at x. */
static inline HX_HD void hx_quad_basis(double x, double *HX_RESTRICT q, double *HX_RESTRICT dq) {
  q[0] = 0.5 * x * (x - 1.0);
  q[1] = 1.0 - x * x;
  q[2] = 0.5 * x * (x + 1.0);
  dq[0] = x - 0.5;
  dq[1] = -2.0 * x;
  dq[2] = x + 0.5;
}

/* Jacobian of the triquadratic map with nodes v[3*(a+3b+9c) + coord] at (r, s, t). */
static inline HX_HD void hx_hex27_jacobian(const double *HX_RESTRICT v, double r, double s, double t,
                                           double *HX_RESTRICT J) {
  double qr[3], qs[3], qt[3], dr[3], ds[3], dt[3];
  hx_quad_basis(r, qr, dr);
  hx_quad_basis(s, qs, ds);
  hx_quad_basis(t, qt, dt);
  for (int m = 0; m < 9; m++) J[m] = 0.0;
  for (int c = 0; c < 3; c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 3; a++) {
        const double *x = v + 3 * (a + 3 * b + 9 * c);
        const double nr = dr[a] * qs[b] * qt[c], ns = qr[a] * ds[b] * qt[c], nt = qr[a] * qs[b] * dt[c];
        for (int d = 0; d < 3; d++) {
          J[3 * d + 0] += x[d] * nr;
          J[3 * d + 1] += x[d] * ns;
          J[3 * d + 2] += x[d] * nt;
        }
      }
}

/* Geometric factors at one node from its Jacobian J: g[0..5] (see the top of
 * this file) for wk = kappa * w, and *m = wl * |J| for wl = lambda * w (or
 * w alone for the plain lumped mass). Returns |J|; the factors are only
 * meaningful when it is positive (the caller checks at setup).
 * Flops: adjugate 27, det 5, wk/det 1, A A^T 30, scale 6, mass 1 = 70. */
static inline HX_HD double hx_geo_factors(const double *HX_RESTRICT J, double wk, double wl,
                                          double *HX_RESTRICT g, double *HX_RESTRICT m) {
  /* adjugate: A[3*r + a] = |J| (J^{-1})_{r a} */
  const double A0 = J[4] * J[8] - J[5] * J[7];
  const double A1 = J[2] * J[7] - J[1] * J[8];
  const double A2 = J[1] * J[5] - J[2] * J[4];
  const double A3 = J[5] * J[6] - J[3] * J[8];
  const double A4 = J[0] * J[8] - J[2] * J[6];
  const double A5 = J[2] * J[3] - J[0] * J[5];
  const double A6 = J[3] * J[7] - J[4] * J[6];
  const double A7 = J[1] * J[6] - J[0] * J[7];
  const double A8 = J[0] * J[4] - J[1] * J[3];
  const double det = J[0] * A0 + J[1] * A3 + J[2] * A6;
  /* G = wk |J| (A/|J|)(A/|J|)^T = (wk/|J|) A A^T */
  const double sc = wk / det;
  g[0] = sc * (A0 * A0 + A1 * A1 + A2 * A2);
  g[1] = sc * (A0 * A3 + A1 * A4 + A2 * A5);
  g[2] = sc * (A0 * A6 + A1 * A7 + A2 * A8);
  g[3] = sc * (A3 * A3 + A4 * A4 + A5 * A5);
  g[4] = sc * (A3 * A6 + A4 * A7 + A5 * A8);
  g[5] = sc * (A6 * A6 + A7 * A7 + A8 * A8);
  *m = wl * det;
  return det;
}

/* Flux at one node: f = G . (ur, us, ut) with the 6 symmetric factors. 15 flops. */
static inline HX_HD void hx_apply_g(double g0, double g1, double g2, double g3, double g4, double g5,
                                    double ur, double us, double ut, double *HX_RESTRICT fr,
                                    double *HX_RESTRICT fs, double *HX_RESTRICT ft) {
  *fr = g0 * ur + g1 * us + g2 * ut;
  *fs = g1 * ur + g3 * us + g4 * ut;
  *ft = g2 * ur + g4 * us + g5 * ut;
}

/* Flops of the model counts (docs/operator.md), per element of n^3 nodes:
 * gradient 6n^4, G 15n^3, transposed gradient 6n^4 + 2n^3 (sum of the three
 * directions), mass term 2n^3. On the fly adds, per node, the trilinear
 * Jacobian (3 + 9*6 = 57), the factors (70) and the weight products
 * kappa*w_i*w_j*w_k, lambda*w_i*w_j*w_k (4): 131. */
#define HX_AX_OTF_NODE_FLOPS 131.0

#endif
