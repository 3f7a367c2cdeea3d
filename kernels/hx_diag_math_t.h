/* Per-entry math of an extra diagonal on listed G entries (a Robin
 * boundary term, hx_array_diag_add_list_p), written once for a type HX_REAL
 * (instantiated by hx_diag_math.h; no include guard). The update is in
 * HX_REAL; the contribution to x.R.x is accumulated in double. */

/* y + r x */
static inline HX_HD HX_REAL HX_FN(hx_diag_add_1)(HX_REAL y, HX_REAL r, HX_REAL x) { return y + r * x; }
/* r x^2 in double */
static inline HX_HD double HX_FN(hx_diag_xrx_1)(HX_REAL r, HX_REAL x) {
  return (double)r * ((double)x * (double)x);
}
