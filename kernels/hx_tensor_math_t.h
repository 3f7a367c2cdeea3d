/* Per-entry math of the element-wise tensor-product transfer for one value
 * type HX_REAL (see hx_tensor_math.h, which includes this file once per
 * instantiation with HX_REAL, HX_FN and HX_R defined; no include guard). The
 * float instantiation (hx_tensor_stage1_f32, ...) sums in float in the same
 * order as the double one. */

/* sum_{i<a} A[i] x[i*stride], in increasing i */
static inline HX_HD HX_REAL HX_FN(hx_tensor_dot)(int a, const HX_REAL *HX_RESTRICT A, const HX_REAL *HX_RESTRICT x,
                                                      int stride) {
  HX_REAL s = HX_R(0.0);
  for (int i = 0; i < a; i++) s += A[i] * x[i * stride];
  return s;
}

/* entry (r, j, k) of stage 1 (pt = r + c*(j + a*k)) */
static inline HX_HD HX_REAL HX_FN(hx_tensor_stage1)(int a, int c, const HX_REAL *HX_RESTRICT A,
                                            const HX_REAL *HX_RESTRICT in, int pt) {
  const int r = pt % c, jk = pt / c;
  return HX_FN(hx_tensor_dot)(a, A + r * a, in + a * jk, 1);
}

/* entry (r, q, k) of stage 2 (pt = r + c*(q + c*k)) from t1 */
static inline HX_HD HX_REAL HX_FN(hx_tensor_stage2)(int a, int c, const HX_REAL *HX_RESTRICT A,
                                            const HX_REAL *HX_RESTRICT t1, int pt) {
  const int r = pt % c, q = (pt / c) % c, k = pt / (c * c);
  return HX_FN(hx_tensor_dot)(a, A + q * a, t1 + r + c * a * k, c);
}

/* entry (r, q, s) of stage 3 (pt = r + c*(q + c*s)) from t2 */
static inline HX_HD HX_REAL HX_FN(hx_tensor_stage3)(int a, int c, const HX_REAL *HX_RESTRICT A,
                                            const HX_REAL *HX_RESTRICT t2, int pt) {
  const int rq = pt % (c * c), s = pt / (c * c);
  return HX_FN(hx_tensor_dot)(a, A + s * a, t2 + rq, c * c);
}

