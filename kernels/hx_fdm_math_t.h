/* Per-element math of the FDM box solve for one value type HX_REAL (see
 * hx_fdm_math.h, which includes this file once per instantiation with
 * HX_REAL, the name macro HX_FN and the literal macro HX_R defined; no
 * include guard). The double instantiation is the original code, bit for
 * bit; the float one computes in float (the FP32 preconditioner). */

/* sum_{q<m} a[q*sa] * x[q*sx], in increasing q */
HX_FDM_INLINE HX_HD HX_REAL HX_FN(hx_fdm_dot)(int m, const HX_REAL *HX_RESTRICT a, int sa, const HX_REAL *HX_RESTRICT x,
                                      int sx) {
  HX_REAL s = HX_R(0.0);
  for (int q = 0; q < m; q++) s += a[q * sa] * x[q * sx];
  return s;
}

/* 1 / (lr + ls + lt), 0 when the sum is not positive (the zero mode of a
 * pure-Neumann box with lambda = 0: pseudo-inverse) */
HX_FDM_INLINE HX_HD HX_REAL HX_FN(hx_fdm_inv_diag)(HX_REAL lr, HX_REAL ls, HX_REAL lt) {
  const HX_REAL d = lr + ls + lt;
  return d > HX_R(0.0) ? HX_R(1.0) / d : HX_R(0.0);
}

/* One 1D contraction over the whole box along direction d, forward
 * (out[i] = sum_q S[i*m + q] in[q]) or back (out[a] = sum_q S[q*m + a] in[q]).
 * The coefficients are first copied to T[q*m + i] (coefficient of in[q] in
 * out[i]), then whole contiguous runs of the box are updated per term
 * (vectorisable), every point still summed over q = 0..m-1 in increasing
 * order, as hx_fdm_dot does. in and out must not alias. */
HX_FDM_INLINE HX_HD void HX_FN(hx_fdm_contract)(int m, int d, int back, const HX_REAL *HX_RESTRICT S,
                                         const HX_REAL *HX_RESTRICT in, HX_REAL *HX_RESTRICT out) {
  HX_REAL T[HX_FDM_MMAX * HX_FDM_MMAX];
  for (int q = 0; q < m; q++)
    for (int i = 0; i < m; i++) T[q * m + i] = back ? S[q * m + i] : S[i * m + q];
  if (d == 0) {
    for (int bc = 0; bc < m * m; bc++) {
      HX_REAL *HX_RESTRICT y = out + m * bc;
      const HX_REAL *HX_RESTRICT x = in + m * bc;
      for (int i = 0; i < m; i++) y[i] = HX_R(0.0) + T[i] * x[0];
      for (int q = 1; q < m; q++)
        for (int i = 0; i < m; i++) y[i] += T[q * m + i] * x[q];
    }
    return;
  }
  const int len = d == 1 ? m : m * m, nouter = d == 1 ? m : 1;
  for (int o = 0; o < nouter; o++)
    for (int i = 0; i < m; i++) {
      HX_REAL *HX_RESTRICT y = out + (int64_t)o * m * len + i * len;
      const HX_REAL *HX_RESTRICT x = in + (int64_t)o * m * len;
      for (int v = 0; v < len; v++) y[v] = HX_R(0.0) + T[i] * x[v];
      for (int q = 1; q < m; q++) {
        const HX_REAL sv = T[q * m + i];
        const HX_REAL *HX_RESTRICT xq = x + q * len;
        for (int v = 0; v < len; v++) y[v] += sv * xq[v];
      }
    }
}

/* Whole-element box solve w = A_box^{-1} u on one thread (CPU). S3: the 3
 * matrices of the element, L3: its 3 m eigenvalues, t: m^3 scratch. u and
 * w must not alias; u is not modified. */
HX_FDM_INLINE HX_HD void HX_FN(hx_fdm_elem_solve)(int m, const HX_REAL *HX_RESTRICT S3, const HX_REAL *HX_RESTRICT L3,
                                           const HX_REAL *HX_RESTRICT u, HX_REAL *HX_RESTRICT w,
                                           HX_REAL *HX_RESTRICT t) {
  const int m2 = m * m;
  HX_FN(hx_fdm_contract)(m, 0, 0, S3, u, t);
  HX_FN(hx_fdm_contract)(m, 1, 0, S3 + m2, t, w);
  HX_FN(hx_fdm_contract)(m, 2, 0, S3 + 2 * m2, w, t);
  for (int c = 0; c < m; c++)
    for (int b = 0; b < m; b++)
      for (int a = 0; a < m; a++) t[a + m * (b + m * c)] *= HX_FN(hx_fdm_inv_diag)(L3[a], L3[m + b], L3[2 * m + c]);
  HX_FN(hx_fdm_contract)(m, 2, 1, S3 + 2 * m2, t, w);
  HX_FN(hx_fdm_contract)(m, 1, 1, S3 + m2, w, t);
  HX_FN(hx_fdm_contract)(m, 0, 1, S3, t, w);
}

/* y = w * x[idx] (0 where idx < 0): the weighted copies between the fine and
 * the extended G-vectors */
HX_FDM_INLINE HX_HD HX_REAL HX_FN(hx_fdm_wgather_1)(const HX_REAL *HX_RESTRICT x, int idx, HX_REAL w) {
  return idx >= 0 ? w * x[idx] : HX_R(0.0);
}

