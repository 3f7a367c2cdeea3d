/* The CPU element operator for one value type, written once (included by
 * cpu/ax_cpu.c once per precision, no include guard): HX_REAL the type,
 * HX_FN(name) the instantiation's names (plain for double, _f32 for float),
 * HX_R(x) every literal, HX_AXT_FMA(a, b, c) the type's fused multiply-add,
 * HX_AXT_SPLIT whether split records exist (FP64 only; the scaled affine
 * records, AFV, exist in both) and HX_AXT_OTF_VERTS
 * whether an on-the-fly record holds the 8 vertices (FP64: the map
 * coefficients are formed per element) or the 24 coefficients already
 * formed in double at setup (FP32), HX_AXT_HAND4 whether a hand-written
 * kernel replaces the AVX2 precomputed loop at n = 4 (n = 8 always has one);
 * undefined again at the end (HX_R stays). The double instantiation is the
 * FP64 code of before, bit for bit; the float one the former ax_f32_cpu.c. */

/* Arguments of one apply. */
typedef struct {
  int32_t nlist;
  const int32_t *list;  /* NULL: elements 0..nlist-1 */
  const HX_REAL *D;     /* D[i*n + m] = l_m'(t_i) */
  const HX_REAL *Dt;    /* Dt[m*n + i] = D[i*n + m] */
  const HX_REAL *t, *w; /* GLL points and weights */
  const HX_REAL *w3;    /* n^3 weight products w_i w_j w_k (float: (w_i w_j) w_k) */
  const HX_REAL *geo;
  const int64_t *eoff; /* precomputed: record offset (entries) << 2 | kind (HX_AXK_*) */
  const HX_REAL *eo;   /* FP32, n = 8: even-odd tables of D (0..31) and D^T (32..63) */
  int ncomp;           /* precomputed: 7, or 6 without the mass term */
  const int32_t *map;  /* NULL, or u is a G-vector read through map (fused scatter) */
  const HX_REAL *u;
  HX_REAL *out;
  double *part;
} HX_FN(hx_ax_cpu_args);

/* One element (the m-sums are innermost and unroll, n being a constant):
 *  1a. ut for the whole element, vectorised over the contiguous (i,j) plane:
 *      D[k][m] is invariant there, so its broadcasts leave the loop (the
 *      t-direction costs ~1 load per multiply-add instead of 2);
 *  1b. per node, vectorised over i: ur, us, the 6 factors (loaded, or
 *      rebuilt as w_q (mean + dev) from an affine or split record, or
 *      computed from the trilinear map when otf), fluxes f = G grad into
 *      fr, fs, ft (ft overwrites ut in place), and the mass term into out;
 *  2a. out += D^T contraction of ft, over the (i,j) plane;
 *  2b. out += D^T contractions of fr and fs, vectorised over i.
 * f selects fused multiply-adds in the contractions; gk the geometry
 * (HX_AXK_GEN, _AFF, _SPL, _AFV, HX_AXG_OTF). */
HX_AX_INLINE void HX_FN(hx_ax_cpu_elem)(const int n, const int gk, const int f, const HX_FN(hx_ax_cpu_args) * a,
                                        const HX_REAL *HX_RESTRICT geo, const HX_REAL *HX_RESTRICT u,
                                        HX_REAL *HX_RESTRICT out, HX_REAL *HX_RESTRICT fr,
                                        HX_REAL *HX_RESTRICT fs, HX_REAL *HX_RESTRICT ft) {
  const int n2 = n * n, n3 = n2 * n;
  const HX_REAL *HX_RESTRICT D = a->D, *HX_RESTRICT Dt = a->Dt;
  const HX_REAL *HX_RESTRICT t = a->t, *HX_RESTRICT w = a->w;
  const int otf = gk == HX_AXG_OTF;
  HX_REAL kappa = HX_R(0.0), lambda = HX_R(0.0);
#if HX_AXT_OTF_VERTS
  HX_REAL c[24];
  if (otf) HX_FN(hx_hex8_coeffs)(geo, c);
#else
  const HX_REAL *c = geo;
#endif
  if (otf) {
    kappa = geo[24];
    lambda = geo[25];
  }
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      HX_REAL s = HX_R(0.0);
      for (int m = 0; m < n; m++) s = HX_AXT_MADD(f, D[k * n + m], u[ij + n2 * m], s);
      ft[ij + n2 * k] = s;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        HX_REAL ur = HX_R(0.0), us = HX_R(0.0), ut = ft[q];
        for (int m = 0; m < n; m++) {
          ur = HX_AXT_MADD(f, Dt[m * n + i], u[m + n * j + n2 * k], ur);
          us = HX_AXT_MADD(f, D[j * n + m], u[i + n * m + n2 * k], us);
        }
        HX_REAL g[6], mm;
        if (otf) {
          HX_REAL J[9];
          HX_FN(hx_hex8_jacobian)(c, t[i], t[j], t[k], J);
          const HX_REAL wq = w[i] * w[j] * w[k];
          HX_FN(hx_geo_factors)(J, kappa * wq, lambda * wq, g, &mm);
        } else if (gk == HX_AXK_GEN) {
          const int cs = n3 + HX_AX_PAD;
          for (int cc = 0; cc < 6; cc++) g[cc] = geo[cc * cs + q];
          mm = a->ncomp == 7 ? geo[6 * cs + q] : HX_R(0.0);
        } else if (gk == HX_AXK_AFF) {
          HX_FN(hx_geo_affine_node)(geo, a->w3[q], a->ncomp, g, &mm);
        } else if (gk == HX_AXK_AFV) {
          const int cs = n3 + HX_AX_PAD;
          const HX_REAL *kq = geo + HX_AX_MEANS;
          const HX_REAL lq = a->ncomp == 7 ? kq[cs + q] : HX_R(0.0);
          HX_FN(hx_geo_scaled_node)(geo, a->w3[q], kq[q], lq, a->ncomp, g, &mm);
        } else {
#if HX_AXT_SPLIT
          hx_geo_split_node(geo, (const float *)(geo + HX_AX_MEANS) + q, hx_ax_cs32(n3), a->w3[q], a->ncomp, g,
                            &mm);
#endif
        }
        HX_FN(hx_apply_g)(g[0], g[1], g[2], g[3], g[4], g[5], ur, us, ut, fr + q, fs + q, ft + q);
        out[q] = mm * u[q];
      }
  for (int k = 0; k < n; k++)
    for (int ij = 0; ij < n2; ij++) {
      HX_REAL acc = out[ij + n2 * k];
      for (int m = 0; m < n; m++) acc = HX_AXT_MADD(f, D[m * n + k], ft[ij + n2 * m], acc);
      out[ij + n2 * k] = acc;
    }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * j + n2 * k;
        HX_REAL acc = out[q];
        for (int m = 0; m < n; m++) acc = HX_AXT_MADD(f, D[m * n + i], fr[m + n * j + n2 * k], acc);
        for (int m = 0; m < n; m++) acc = HX_AXT_MADD(f, D[m * n + j], fs[i + n * m + n2 * k], acc);
        out[q] = acc;
      }
}

/* u . w of one element in double (float: the exact products of floats): 8
 * fixed lanes, added in a fixed order (vectorises; deterministic). */
HX_AX_INLINE double HX_FN(hx_ax_cpu_dot)(const int n3, const HX_REAL *HX_RESTRICT u,
                                         const HX_REAL *HX_RESTRICT w) {
  double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  const int nb = n3 / 8 * 8;
  for (int q = 0; q < nb; q += 8)
    for (int l = 0; l < 8; l++) s[l] += (double)u[q + l] * (double)w[q + l];
  for (int q = nb; q < n3; q++) s[q - nb] += (double)u[q] * (double)w[q];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* The element's input values gathered from the G-vector into ub (the fused
 * scatter), with the scatter's 0 where the map is negative. */
HX_AX_INLINE const HX_REAL *HX_FN(hx_ax_cpu_u)(const size_t n3, const HX_FN(hx_ax_cpu_args) * a, const size_t e,
                                               HX_REAL *HX_RESTRICT ub) {
  /* the pointers in locals: through a, the stores to ub would reload them */
  const int32_t *HX_RESTRICT m = a->map + n3 * e;
  const HX_REAL *HX_RESTRICT g = a->u;
  for (size_t q = 0; q < n3; q++) ub[q] = m[q] >= 0 ? g[m[q]] : HX_R(0.0);
  return ub;
}

/* The generic loops of every order and mode; the hand-written AVX2 kernels
 * (FP64 n = 8, FP32 n = 4 and 8, in ax_cpu.c) take the place of theirs. */
#if HX_AX_HAVE_AVX2
#define HX_AXT_DEFINE(N)                                                 \
  HX_AX_CPU_LOOP(N, 0, 0, HX_FN(hx_ax_cpu_pre_##N), )                    \
  HX_AX_CPU_LOOP(N, 1, 0, HX_FN(hx_ax_cpu_otf_##N), )                    \
  HX_AX_CPU_LOOP(N, 0, 1, HX_FN(hx_ax_cpu_avx2_pre_##N), HX_AX_AVX2_ATTR) \
  HX_AX_CPU_LOOP(N, 1, 1, HX_FN(hx_ax_cpu_avx2_otf_##N), HX_AX_AVX2_ATTR)
#define HX_AXT_DEFINE_HAND(N)                         \
  HX_AX_CPU_LOOP(N, 0, 0, HX_FN(hx_ax_cpu_pre_##N), ) \
  HX_AX_CPU_LOOP(N, 1, 0, HX_FN(hx_ax_cpu_otf_##N), ) \
  HX_AX_CPU_LOOP(N, 1, 1, HX_FN(hx_ax_cpu_avx2_otf_##N), HX_AX_AVX2_ATTR)
#else
#define HX_AXT_DEFINE(N)                              \
  HX_AX_CPU_LOOP(N, 0, 0, HX_FN(hx_ax_cpu_pre_##N), ) \
  HX_AX_CPU_LOOP(N, 1, 0, HX_FN(hx_ax_cpu_otf_##N), )
#define HX_AXT_DEFINE_HAND(N) HX_AXT_DEFINE(N)
#endif

HX_AXT_DEFINE(2)
HX_AXT_DEFINE(3)
#if HX_AXT_HAND4
HX_AXT_DEFINE_HAND(4)
#else
HX_AXT_DEFINE(4)
#endif
HX_AXT_DEFINE(5)
HX_AXT_DEFINE(6)
HX_AXT_DEFINE(7)
HX_AXT_DEFINE_HAND(8)
HX_AXT_DEFINE(9)
HX_AXT_DEFINE(10)
HX_AXT_DEFINE(11)
HX_AXT_DEFINE(12)
HX_AXT_DEFINE(13)
HX_AXT_DEFINE(14)
HX_AXT_DEFINE(15)
HX_AXT_DEFINE(16)
#undef HX_AXT_DEFINE
#undef HX_AXT_DEFINE_HAND
#undef HX_REAL
#undef HX_FN
#undef HX_AXT_FMA
#undef HX_AXT_SPLIT
#undef HX_AXT_OTF_VERTS
#undef HX_AXT_HAND4
