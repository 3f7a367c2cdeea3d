/* Per-node math of the spectral-element operator for one value type HX_REAL
 * (see hx_ax_math.h, which includes this file once per instantiation with
 * HX_REAL, the name macro HX_FN and the literal macro HX_R defined; no
 * include guard). Literals go through HX_R so that the float instantiation
 * computes in float and the double one is the original code, bit for bit. */

/* Trilinear map in monomial form: x_a(r,s,t) = c[a] + c[3+a] r + c[6+a] s +
 * c[9+a] t + c[12+a] rs + c[15+a] rt + c[18+a] st + c[21+a] rst, from the 8
 * vertices v[3*(a+2b+4c) + coord]. Exact arithmetic up to one rounding per
 * sum (the 1/8 scaling is exact). */
static inline HX_HD void HX_FN(hx_hex8_coeffs)(const HX_REAL *HX_RESTRICT v, HX_REAL *HX_RESTRICT c) {
  for (int m = 0; m < 24; m++) c[m] = HX_R(0.0);
  for (int q = 0; q < 8; q++) {
    const HX_REAL sa = (q & 1) ? HX_R(1.0) : HX_R(-1.0), sb = (q & 2) ? HX_R(1.0) : HX_R(-1.0),
                  sc = (q & 4) ? HX_R(1.0) : HX_R(-1.0);
    for (int a = 0; a < 3; a++) {
      const HX_REAL x = v[3 * q + a];
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
  for (int m = 0; m < 24; m++) c[m] *= HX_R(0.125);
}

/* Jacobian of the trilinear map with coefficients c at (r, s, t). */
static inline HX_HD void HX_FN(hx_hex8_jacobian)(const HX_REAL *HX_RESTRICT c, HX_REAL r, HX_REAL s,
                                                 HX_REAL t, HX_REAL *HX_RESTRICT J) {
  const HX_REAL rs = r * s, rt = r * t, st = s * t;
  for (int a = 0; a < 3; a++) {
    J[3 * a + 0] = c[3 + a] + c[12 + a] * s + c[15 + a] * t + c[21 + a] * st;
    J[3 * a + 1] = c[6 + a] + c[12 + a] * r + c[18 + a] * t + c[21 + a] * rt;
    J[3 * a + 2] = c[9 + a] + c[15 + a] * r + c[18 + a] * s + c[21 + a] * rs;
  }
}

/* 1D quadratic Lagrange basis on {-1, 0, 1} and its derivative at x. */
static inline HX_HD void HX_FN(hx_quad_basis)(HX_REAL x, HX_REAL *HX_RESTRICT q, HX_REAL *HX_RESTRICT dq) {
  q[0] = HX_R(0.5) * x * (x - HX_R(1.0));
  q[1] = HX_R(1.0) - x * x;
  q[2] = HX_R(0.5) * x * (x + HX_R(1.0));
  dq[0] = x - HX_R(0.5);
  dq[1] = HX_R(-2.0) * x;
  dq[2] = x + HX_R(0.5);
}

/* Jacobian of the triquadratic map with nodes v[3*(a+3b+9c) + coord] at (r, s, t). */
static inline HX_HD void HX_FN(hx_hex27_jacobian)(const HX_REAL *HX_RESTRICT v, HX_REAL r, HX_REAL s,
                                                  HX_REAL t, HX_REAL *HX_RESTRICT J) {
  HX_REAL qr[3], qs[3], qt[3], dr[3], ds[3], dt[3];
  HX_FN(hx_quad_basis)(r, qr, dr);
  HX_FN(hx_quad_basis)(s, qs, ds);
  HX_FN(hx_quad_basis)(t, qt, dt);
  for (int m = 0; m < 9; m++) J[m] = HX_R(0.0);
  for (int c = 0; c < 3; c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 3; a++) {
        const HX_REAL *x = v + 3 * (a + 3 * b + 9 * c);
        const HX_REAL nr = dr[a] * qs[b] * qt[c], ns = qr[a] * ds[b] * qt[c], nt = qr[a] * qs[b] * dt[c];
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
static inline HX_HD HX_REAL HX_FN(hx_geo_factors)(const HX_REAL *HX_RESTRICT J, HX_REAL wk, HX_REAL wl,
                                                  HX_REAL *HX_RESTRICT g, HX_REAL *HX_RESTRICT m) {
  /* adjugate: A[3*r + a] = |J| (J^{-1})_{r a} */
  const HX_REAL A0 = J[4] * J[8] - J[5] * J[7];
  const HX_REAL A1 = J[2] * J[7] - J[1] * J[8];
  const HX_REAL A2 = J[1] * J[5] - J[2] * J[4];
  const HX_REAL A3 = J[5] * J[6] - J[3] * J[8];
  const HX_REAL A4 = J[0] * J[8] - J[2] * J[6];
  const HX_REAL A5 = J[2] * J[3] - J[0] * J[5];
  const HX_REAL A6 = J[3] * J[7] - J[4] * J[6];
  const HX_REAL A7 = J[1] * J[6] - J[0] * J[7];
  const HX_REAL A8 = J[0] * J[4] - J[1] * J[3];
  const HX_REAL det = J[0] * A0 + J[1] * A3 + J[2] * A6;
  /* G = wk |J| (A/|J|)(A/|J|)^T = (wk/|J|) A A^T */
  const HX_REAL sc = wk / det;
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
static inline HX_HD void HX_FN(hx_apply_g)(HX_REAL g0, HX_REAL g1, HX_REAL g2, HX_REAL g3, HX_REAL g4,
                                           HX_REAL g5, HX_REAL ur, HX_REAL us, HX_REAL ut,
                                           HX_REAL *HX_RESTRICT fr, HX_REAL *HX_RESTRICT fs,
                                           HX_REAL *HX_RESTRICT ft) {
  *fr = g0 * ur + g1 * us + g2 * ut;
  *fs = g1 * ur + g3 * us + g4 * ut;
  *ft = g2 * ur + g4 * us + g5 * ut;
}

/* Factors of one node from an affine record m[0..6] (the 6 factors of G/w
 * and lambda |J|, constant over the element): g = wq m, *mm = wq m[6] (0 when
 * ncomp = 6). */
static inline HX_HD void HX_FN(hx_geo_affine_node)(const HX_REAL *HX_RESTRICT m, HX_REAL wq, int ncomp,
                                                   HX_REAL *HX_RESTRICT g, HX_REAL *HX_RESTRICT mm) {
  for (int c = 0; c < 6; c++) g[c] = wq * m[c];
  *mm = ncomp == 7 ? wq * m[6] : HX_R(0.0);
}

/* Factors of one node of an affine element whose coefficient varies (record
 * kind AFV, ax_impl.h): m[0..6] the affine record of the geometry alone
 * (kappa = lambda = 1), kq and lq the node's kappa and lambda:
 * g = (wq kq) m, *mm = (wq lq) m[6] (0 when ncomp = 6). The FP32 operator's
 * AFV record is the FP64 one rounded to float, so it runs the same math. */
static inline HX_HD void HX_FN(hx_geo_scaled_node)(const HX_REAL *HX_RESTRICT m, HX_REAL wq, HX_REAL kq,
                                                   HX_REAL lq, int ncomp, HX_REAL *HX_RESTRICT g,
                                                   HX_REAL *HX_RESTRICT mm) {
  const HX_REAL wk = wq * kq;
  for (int c = 0; c < 6; c++) g[c] = wk * m[c];
  *mm = ncomp == 7 ? (wq * lq) * m[6] : HX_R(0.0);
}
