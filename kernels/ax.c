/* Element-level spectral-element operator: setup (geometric factors on the
 * host), dispatch to cpu/ax_cpu.c or cuda/ax_cuda.cu, diagonal and lumped
 * mass. The math is in hx_ax_math.h and docs/operator.md. */
#include "ax_impl.h"
#include "isa_impl.h"
#include "stream_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Geometric factors of element e on the host: g[c*n^3 + node] for the 6
 * factors (c = 0..5) and the lambda-weighted mass (c = 6); mass[node] =
 * w_i w_j w_k |J| when mass != NULL. Curved elements (and every element
 * with affine detection off): the same HX_HD functions as the on-the-fly
 * kernels, in the same order of operations; affine elements: the factors of
 * the centre times w_q, as the affine record and kernel compute them. A
 * non-positive (or non-finite) Jacobian determinant is HX_ERR_INPUT. */
static int hx_ax_elem_affine(const struct hx_ax_s *ax, int32_t e, double *J0);

/* Jacobian (J[3*comp + dir]) at GLL node (i, j, k) of an isoparametric map
 * given by its values v (xyz interleaved) at the n^3 GLL nodes: the
 * derivative of its degree n-1 interpolant (D: D[a*n + b] = l_b'(t_a)) */
static void hx_iso_jacobian(int n, const double *D, const double *v, int i, int j, int k, double *J) {
  for (int m = 0; m < 9; m++) J[m] = 0.0;
  for (int m = 0; m < n; m++) {
    const double dr = D[i * n + m], ds = D[j * n + m], dt = D[k * n + m];
    const double *Xr = &v[3 * (m + n * (j + n * k))], *Xs = &v[3 * (i + n * (m + n * k))],
                 *Xt = &v[3 * (i + n * (j + n * m))];
    for (int c = 0; c < 3; c++) J[3 * c] += dr * Xr[c], J[3 * c + 1] += ds * Xs[c], J[3 * c + 2] += dt * Xt[c];
  }
}

int hx_ax_elem_factors(const struct hx_ax_s *ax, int32_t e, double *g, double *mass) {
  const int n = ax->n, n3 = n * n * n;
  const double *v = ax->h_nodes + (size_t)e * ax->npe * 3;
  const double kappa = ax->h_kappa[e], lambda = ax->h_lambda[e];
  /* per-node coefficients (variable within the element): node values */
  const double *kn = ax->h_var && (ax->h_var[e] & 1) ? ax->h_kn + (size_t)e * n3 : NULL;
  const double *ln = ax->h_var && (ax->h_var[e] & 2) ? ax->h_ln + (size_t)e * n3 : NULL;
  double J0[9];
  if (ax->affine && hx_ax_elem_affine(ax, e, J0)) {
    /* affine: the factors of the centre times the weights, |J| constant; with
     * a varying coefficient (the AFV record and kernel) the geometry's factors
     * scaled per node by w_q kappa_q and w_q lambda_q (hx_geo_scaled_node),
     * else as the affine record and kernel compute them (hx_geo_affine_node) */
    const int var = kn || ln;
    double g0[7], m0 = 0.0;
    const double det = var ? hx_geo_factors(J0, 1.0, 1.0, g0, &g0[6]) : hx_geo_factors(J0, kappa, lambda, g0, &m0);
    HX_CHECK(det > 0.0 && isfinite(det), HX_ERR_INPUT,
             "element %d (local index): non-positive Jacobian determinant %g (affine element of order %d: "
             "inverted or degenerate)",
             (int)e, det, ax->p);
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const int q = i + n * (j + n * k);
          const double wq = ax->w[i] * ax->w[j] * ax->w[k];
          if (var) {
            double gq[6], mq;
            hx_geo_scaled_node(g0, wq, kn ? kn[q] : kappa, ln ? ln[q] : lambda, 7, gq, &mq);
            for (int cc = 0; cc < 6; cc++) g[cc * n3 + q] = gq[cc];
            g[6 * n3 + q] = mq;
          } else {
            for (int cc = 0; cc < 6; cc++) g[cc * n3 + q] = wq * g0[cc];
            g[6 * n3 + q] = wq * m0;
          }
          if (mass) mass[q] = wq * det;
        }
    return HX_SUCCESS;
  }
  double c[24];
  if (ax->npe == 8) hx_hex8_coeffs(v, c);
  const int iso = ax->npe != 8 && ax->npe != 27; /* the map's values at the n^3 GLL nodes */
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * (j + n * k);
        double J[9], gq[6], m;
        if (iso)
          hx_iso_jacobian(n, ax->D, v, i, j, k, J);
        else if (ax->npe == 8)
          hx_hex8_jacobian(c, ax->t[i], ax->t[j], ax->t[k], J);
        else
          hx_hex27_jacobian(v, ax->t[i], ax->t[j], ax->t[k], J);
        const double wq = ax->w[i] * ax->w[j] * ax->w[k];
        const double kq = kn ? kn[q] : kappa, lq = ln ? ln[q] : lambda;
        const double det = hx_geo_factors(J, kq * wq, lq * wq, gq, &m);
        HX_CHECK(det > 0.0 && isfinite(det), HX_ERR_INPUT,
                 "element %d (local index): non-positive Jacobian determinant %g at GLL node "
                 "(%d,%d,%d) of order %d (inverted or degenerate element)",
                 (int)e, det, i, j, k, ax->p);
        for (int cc = 0; cc < 6; cc++) g[cc * n3 + q] = gq[cc];
        g[6 * n3 + q] = m;
        if (mass) mass[q] = wq * det;
      }
  return HX_SUCCESS;
}

/* Is element e affine (a parallelepiped)? The Jacobian of a hex8 map is of
 * degree <= 1 and of a hex27 map <= 2 in each reference variable, so it is
 * constant iff it takes the same value at the 27 points {-1,0,1}^3; tested
 * to HX_AX_AFFINE_TOL relative to its largest entry at the centre. J0: the
 * Jacobian at the centre. */
static int hx_ax_elem_affine(const struct hx_ax_s *ax, int32_t e, double *J0) {
  if (ax->npe != 8 && ax->npe != 27) return 0; /* isoparametric (curved) maps are stored per node */
  const double *v = ax->h_nodes + (size_t)e * ax->npe * 3;
  double c[24];
  if (ax->npe == 8) {
    hx_hex8_coeffs(v, c);
    hx_hex8_jacobian(c, 0.0, 0.0, 0.0, J0);
  } else {
    hx_hex27_jacobian(v, 0.0, 0.0, 0.0, J0);
  }
  double scale = 0.0;
  for (int m = 0; m < 9; m++) scale = fmax(scale, fabs(J0[m]));
  for (int q = 0; q < 27; q++) {
    const double r = q % 3 - 1.0, s = (q / 3) % 3 - 1.0, t = q / 9 - 1.0;
    double J[9];
    if (ax->npe == 8)
      hx_hex8_jacobian(c, r, s, t, J);
    else
      hx_hex27_jacobian(v, r, s, t, J);
    for (int m = 0; m < 9; m++)
      if (!(fabs(J[m] - J0[m]) <= HX_AX_AFFINE_TOL * scale)) return 0;
  }
  return 1;
}

static void hx_ax_free_all(struct hx_ax_s *ax) {
  if (!ax) return;
  hx_mem_free(ax->b, (void **)&ax->d_basis);
  hx_mem_free(ax->b, (void **)&ax->d_geo);
  hx_mem_free(ax->b, (void **)&ax->d_part);
  hx_mem_free(ax->b, (void **)&ax->d_partk);
  hx_mem_free(ax->b, (void **)&ax->d_basis32);
  hx_mem_free(ax->b, (void **)&ax->d_geo32);
  hx_mem_free(ax->b, (void **)&ax->d_eoff);
  free(ax->h_nodes);
  free(ax->h_kappa);
  free(ax->h_lambda);
  free(ax->h_kn);
  free(ax->h_ln);
  free(ax->h_var);
  free(ax);
}

/* Per-node coefficients (hx_ax_opts h_kappa_node / h_lambda_node): checked
 * and copied; an element whose node values are all equal keeps the
 * per-element path (h_kappa[e] = that value: affine compression and the
 * on-the-fly record unchanged), the others are flagged in h_var (bit 0
 * kappa, bit 1 lambda) and stored per node. */
static int hx_ax_node_coefs(struct hx_ax_s *ax, const double *kn, const double *ln) {
  const int n3 = ax->n * ax->n * ax->n;
  const int32_t E = ax->E;
  if (!kn && !ln) return HX_SUCCESS;
  const double *src[2] = {kn, ln};
  double **dst[2] = {&ax->h_kn, &ax->h_ln}, *per[2] = {ax->h_kappa, ax->h_lambda};
  HX_CALL(HX_ALLOC(&ax->h_var, (size_t)E + 1));
  for (int c = 0; c < 2; c++) {
    if (!src[c]) continue;
    HX_CALL(HX_ALLOC(dst[c], (size_t)E * n3 + 1));
    if (E > 0) memcpy(*dst[c], src[c], (size_t)E * n3 * sizeof(double));
    for (int32_t e = 0; e < E; e++) {
      const double *v = src[c] + (size_t)e * n3;
      int same = 1;
      for (int q = 0; q < n3; q++) {
        HX_CHECK(c ? v[q] >= 0.0 && isfinite(v[q]) : v[q] > 0.0 && isfinite(v[q]), HX_ERR_INPUT,
                 "element %d (local index), GLL node %d: %s = %g must be %s", (int)e, q, c ? "lambda" : "kappa",
                 v[q], c ? "non-negative" : "positive");
        same &= v[q] == v[0];
      }
      per[c][e] = v[0];
      if (!same) ax->h_var[e] |= (unsigned char)(1 << c);
    }
  }
  for (int32_t e = 0; e < E; e++)
    HX_CHECK(!(ax->h_var[e] && ax->mode == HX_GEO_ONTHEFLY), HX_ERR_INPUT,
             "element %d (local index): kappa or lambda varies within the element, and on-the-fly geometry "
             "(operator.geo: onthefly) takes one value per element; use precomputed factors",
             (int)e);
  return HX_SUCCESS;
}

static int hx_ax_setup(struct hx_ax_s *ax, const double *h_nodes, const double *h_kappa,
                       const double *h_lambda, const double *h_kappa_node, const double *h_lambda_node) {
  const int n = ax->n, n3 = n * n * n;
  const int32_t E = ax->E;
  HX_CALL(hx_gll(n, ax->t, ax->w));
  HX_CALL(hx_lagrange_deriv(n, ax->t, ax->D));
  /* host copies */
  HX_CALL(HX_ALLOC(&ax->h_nodes, (size_t)E * ax->npe * 3 + 1));
  HX_CALL(HX_ALLOC(&ax->h_kappa, (size_t)E + 1));
  HX_CALL(HX_ALLOC(&ax->h_lambda, (size_t)E + 1));
  if (E > 0) {
    memcpy(ax->h_nodes, h_nodes, (size_t)E * ax->npe * 3 * sizeof(double));
    if (h_kappa) memcpy(ax->h_kappa, h_kappa, (size_t)E * sizeof(double));
    else
      for (int32_t e = 0; e < E; e++) ax->h_kappa[e] = 1.0; /* replaced by the node values */
    if (h_lambda) memcpy(ax->h_lambda, h_lambda, (size_t)E * sizeof(double));
  }
  HX_CALL(hx_ax_node_coefs(ax, h_kappa_node, h_lambda_node));
  for (int32_t e = 0; e < E; e++) {
    HX_CHECK(ax->h_kappa[e] > 0.0 && isfinite(ax->h_kappa[e]), HX_ERR_INPUT,
             "element %d (local index): kappa = %g must be positive", (int)e, ax->h_kappa[e]);
    HX_CHECK(ax->h_lambda[e] >= 0.0 && isfinite(ax->h_lambda[e]), HX_ERR_INPUT,
             "element %d (local index): lambda = %g must be non-negative", (int)e, ax->h_lambda[e]);
    for (int m = 0; m < ax->npe * 3; m++)
      HX_CHECK(isfinite(ax->h_nodes[(size_t)e * ax->npe * 3 + m]), HX_ERR_INPUT,
               "element %d (local index): non-finite node coordinate", (int)e);
  }
  /* basis on the backend */
  double basis[HX_AX_NMAX * HX_AX_NMAX + 2 * HX_AX_NMAX + HX_AX_NMAX * HX_AX_NMAX * HX_AX_NMAX];
  memcpy(basis, ax->D, (size_t)n * n * sizeof(double));
  memcpy(basis + hx_ax_off_t(n), ax->t, (size_t)n * sizeof(double));
  memcpy(basis + hx_ax_off_w(n), ax->w, (size_t)n * sizeof(double));
  for (int k = 0; k < n; k++) /* the product in hx_ax_elem_factors' order */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) basis[hx_ax_off_w3(n) + i + n * (j + n * k)] = ax->w[i] * ax->w[j] * ax->w[k];
  const size_t nb = (size_t)n * n + 2 * (size_t)n + (size_t)n3;
  HX_CALL(hx_mem_alloc(ax->b, nb * sizeof(double), (void **)&ax->d_basis));
  HX_CALL(hx_mem_to_device(ax->b, ax->d_basis, basis, nb * sizeof(double)));
  HX_CALL(hx_mem_alloc(ax->b, ((size_t)E + 1) * sizeof(double), (void **)&ax->d_part));

  /* factors of every element: validates the Jacobian in both modes */
  const size_t per = 7 * (size_t)n3;
  ax->ncomp = 6;
  for (int32_t e = 0; e < E; e++)
    if (ax->h_lambda[e] != 0.0 || (ax->h_var && (ax->h_var[e] & 2))) ax->ncomp = 7;
  if (ax->mode == HX_GEO_PRECOMPUTED) {
    /* kinds and record offsets, then the records (docs/operator.md):
     * GEN ncomp blocks of cs doubles (padding zeroed), AFF HX_AX_MEANS
     * doubles, SPL HX_AX_MEANS doubles + ncomp blocks of cs32 floats */
    const size_t cs = (size_t)n3 + HX_AX_PAD, cs32 = (size_t)hx_ax_cs32(n3);
    const size_t len_gen = (size_t)ax->ncomp * cs, len_spl = HX_AX_MEANS + ((size_t)ax->ncomp * cs32 + 1) / 2;
    const size_t len_afv = HX_AX_MEANS + (ax->ncomp == 7 ? 2 : 1) * cs;
    int64_t *eoff = NULL;
    double *h_geo = NULL, *g = NULL, *J0 = NULL;
    HX_CALL(HX_ALLOC(&eoff, (size_t)E + 1));
    int ierr = HX_ALLOC(&J0, 9 * (size_t)E + 1);
    int64_t off = 0;
    for (int32_t e = 0; e < E && !ierr; e++) {
      int kind = ax->geometry == HX_AX_GEO_SPLIT ? HX_AXK_SPL : HX_AXK_GEN;
      const int var = ax->h_var && ax->h_var[e];
      if (ax->affine && hx_ax_elem_affine(ax, e, J0 + 9 * (size_t)e)) kind = var ? HX_AXK_AFV : HX_AXK_AFF;
      eoff[e] = off << 2 | kind;
      ax->nkind[kind]++;
      off += kind == HX_AXK_AFF   ? HX_AX_MEANS
             : kind == HX_AXK_AFV ? (int64_t)len_afv
             : kind == HX_AXK_SPL ? (int64_t)len_spl
                                  : (int64_t)len_gen;
    }
    ax->geo_len = off;
    if (!ierr) ierr = HX_ALLOC(&g, per);
    if (!ierr) ierr = HX_ALLOC(&h_geo, (size_t)off + 1);
    for (int32_t e = 0; e < E && !ierr; e++) {
      ierr = hx_ax_elem_factors(ax, e, g, NULL); /* validates every element */
      if (ierr) break;
      double *rec = h_geo + (eoff[e] >> 2);
      const int kind = (int)(eoff[e] & 3);
      if (kind == HX_AXK_GEN) {
        for (int c = 0; c < ax->ncomp; c++) memcpy(rec + c * cs, g + (size_t)c * n3, (size_t)n3 * sizeof(double));
      } else if (kind == HX_AXK_AFF) {
        double m0;
        hx_geo_factors(J0 + 9 * (size_t)e, ax->h_kappa[e], ax->h_lambda[e], rec, &m0);
        rec[6] = m0;
      } else if (kind == HX_AXK_AFV) {
        /* the geometry alone, then kappa (and lambda) per node */
        double m0;
        hx_geo_factors(J0 + 9 * (size_t)e, 1.0, 1.0, rec, &m0);
        rec[6] = m0;
        const double *kn = ax->h_var[e] & 1 ? ax->h_kn + (size_t)e * n3 : NULL;
        const double *ln = ax->h_var[e] & 2 ? ax->h_ln + (size_t)e * n3 : NULL;
        for (int q = 0; q < n3; q++) {
          rec[HX_AX_MEANS + q] = kn ? kn[q] : ax->h_kappa[e];
          if (ax->ncomp == 7) rec[HX_AX_MEANS + cs + q] = ln ? ln[q] : ax->h_lambda[e];
        }
      } else {
        /* G_q / w_q: the geometric part, smooth over a curved element (G_q
         * itself varies with the weights by 3 orders of magnitude at p = 7) */
        float *dev = (float *)(rec + HX_AX_MEANS);
        const double *w3 = basis + hx_ax_off_w3(n);
        for (int c = 0; c < ax->ncomp; c++) {
          double sum = 0.0;
          for (int q = 0; q < n3; q++) sum += g[(size_t)c * n3 + q] / w3[q];
          const double mean = sum / n3;
          rec[c] = mean;
          for (int q = 0; q < n3; q++) dev[c * cs32 + q] = (float)(g[(size_t)c * n3 + q] / w3[q] - mean);
        }
      }
    }
    free(g);
    free(J0);
    if (!ierr) ierr = hx_mem_alloc(ax->b, ((size_t)off + 1) * sizeof(double), (void **)&ax->d_geo);
    if (!ierr && off > 0) ierr = hx_mem_to_device(ax->b, ax->d_geo, h_geo, (size_t)off * sizeof(double));
    if (!ierr) ierr = hx_mem_alloc(ax->b, ((size_t)E + 1) * sizeof(int64_t), (void **)&ax->d_eoff);
    if (!ierr && E > 0) ierr = hx_mem_to_device(ax->b, ax->d_eoff, eoff, (size_t)E * sizeof(int64_t));
    free(h_geo);
    free(eoff);
    HX_CALL(ierr);
  } else {
    double *g = NULL, *h_geo = NULL;
    HX_CALL(HX_ALLOC(&g, per));
    int ierr = HX_ALLOC(&h_geo, (size_t)E * HX_AX_OTF_STRIDE + 1);
    for (int32_t e = 0; e < E && !ierr; e++) {
      ierr = hx_ax_elem_factors(ax, e, g, NULL);
      double *o = h_geo + (size_t)e * HX_AX_OTF_STRIDE;
      memcpy(o, ax->h_nodes + (size_t)e * 24, 24 * sizeof(double));
      o[24] = ax->h_kappa[e];
      o[25] = ax->h_lambda[e];
    }
    const size_t bytes = (size_t)E * HX_AX_OTF_STRIDE * sizeof(double);
    if (!ierr) ierr = hx_mem_alloc(ax->b, bytes, (void **)&ax->d_geo);
    if (!ierr) ierr = hx_mem_to_device(ax->b, ax->d_geo, h_geo, bytes);
    free(g);
    free(h_geo);
    HX_CALL(ierr);
  }
  return HX_SUCCESS;
}

hx_ax_opts hx_ax_opts_default(void) {
  return (hx_ax_opts){.mode = HX_GEO_PRECOMPUTED, .geometry = HX_AX_GEO_FP64, .affine = 1};
}

/* the FP64 operator (the factors in double; an FP32 one is made from it) */
static int hx_ax_build(hx_backend b, int p, int32_t E, int npe, const double *h_nodes, const double *h_kappa,
                       const double *h_lambda, const hx_ax_opts *opts, hx_ax *out) {
  const hx_ax_opts o = opts ? *opts : hx_ax_opts_default();
  const hx_geo_mode mode = o.mode;
  HX_CHECK(o.geometry == HX_AX_GEO_FP64 || o.geometry == HX_AX_GEO_SPLIT, HX_ERR_ARG, "unknown geometry storage %d",
           (int)o.geometry);
  HX_CHECK(!(o.geometry == HX_AX_GEO_SPLIT && mode == HX_GEO_ONTHEFLY), HX_ERR_ARG,
           "split geometry storage needs precomputed factors (on the fly stores no factors)");
  *out = NULL;
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(p >= 1 && p <= HX_AX_PMAX, HX_ERR_ARG, "order p = %d outside 1..%d", p, HX_AX_PMAX);
  HX_CHECK(E >= 0, HX_ERR_ARG, "negative element count %d", (int)E);
  HX_CHECK(npe == 8 || npe == 27 || npe == (p + 1) * (p + 1) * (p + 1), HX_ERR_ARG,
           "npe = %d: element maps have 8 (hex8), 27 (hex27) or (p+1)^3 (the map at the GLL nodes) nodes", npe);
  HX_CHECK(mode == HX_GEO_PRECOMPUTED || mode == HX_GEO_ONTHEFLY, HX_ERR_ARG, "unknown geometry mode %d",
           (int)mode);
  HX_CHECK(!(mode == HX_GEO_ONTHEFLY && npe != 8), HX_ERR_ARG,
           "on-the-fly geometry needs trilinear (hex8) elements; hex27 and GLL-node maps need HX_GEO_PRECOMPUTED");
  HX_CHECK(E == 0 || (h_nodes && (h_kappa || o.h_kappa_node)), HX_ERR_ARG, "node coordinates or kappa are NULL");
  const int n = p + 1;
  HX_CHECK((int64_t)E * n * n * n < ((int64_t)1 << 31), HX_ERR_ARG,
           "E*(p+1)^3 = %lld L-vector entries exceed the int32 local index range", (long long)E * n * n * n);
  struct hx_ax_s *ax = NULL;
  HX_CALL(HX_ALLOC(&ax, 1));
  ax->b = b;
  ax->p = p;
  ax->n = n;
  ax->npe = npe;
  ax->E = E;
  ax->mode = mode;
  ax->geometry = o.geometry;
  ax->affine = o.affine != 0;
  ax->isa = hx_ax_cpu_isa();
  ax->avx512 = hx_cpu_avx512_order(p);
  int ierr = hx_ax_setup(ax, h_nodes, h_kappa, h_lambda, o.h_kappa_node, o.h_lambda_node);
  if (ierr) {
    hx_ax_free_all(ax);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  *out = ax;
  return HX_SUCCESS;
}

/* The one constructor: hx_ax_create, hx_ax_create_opts and hx_ax_create_prec
 * are its inline forms (hx_kernels.h, hx_kernels_prec.h). */
int hx_ax_create_opts_prec(hx_backend b, int p, int32_t E, int npe, const double *h_nodes, const double *h_kappa,
                           const double *h_lambda, const hx_ax_opts *opts, hx_precision prec, hx_ax *out) {
  HX_CHECK(out, HX_ERR_ARG, "output handle is NULL");
  *out = NULL;
  HX_CHECK_PREC(prec);
  hx_ax ax = NULL;
  HX_CALL(hx_ax_build(b, p, E, npe, h_nodes, h_kappa, h_lambda, opts, &ax));
  if (prec == HX_F32) {
    int ierr = hx_ax_make_f32(ax);
    if (ierr) {
      hx_ax_destroy(&ax);
      return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    }
  }
  *out = ax;
  return HX_SUCCESS;
}

int hx_ax_destroy(hx_ax *pax) {
  if (!pax || !*pax) return HX_SUCCESS;
  hx_ax_free_all(*pax);
  *pax = NULL;
  return HX_SUCCESS;
}

int hx_ax_set_lambda(hx_ax ax, const double *h_lambda, const double *h_lambda_node) {
  HX_CHECK(ax, HX_ERR_ARG, "element operator is NULL");
  hx_ax_opts o = hx_ax_opts_default();
  o.mode = ax->mode, o.geometry = ax->geometry, o.affine = ax->affine;
  /* kappa as stored: the per-element copy (node values' first entry where
   * they were given, which the constructor writes there again) and the
   * node values */
  o.h_kappa_node = ax->h_kn, o.h_lambda_node = h_lambda_node;
  hx_ax fresh = NULL;
  HX_CALL(hx_ax_create_opts_prec(ax->b, ax->p, ax->E, ax->npe, ax->h_nodes, ax->h_kappa, h_lambda, &o,
                                 ax->prec, &fresh));
  /* the new contents into the caller's handle, the old ones freed with fresh's */
  const struct hx_ax_s old = *ax;
  *ax = *fresh;
  *fresh = old;
  hx_ax_free_all(fresh);
  return HX_SUCCESS;
}

int hx_ax_order(hx_ax ax) { return ax->p; }
int32_t hx_ax_num_elements(hx_ax ax) { return ax->E; }
int64_t hx_ax_num_nodes(hx_ax ax) { return (int64_t)ax->E * ax->n * ax->n * ax->n; }
hx_geo_mode hx_ax_geo_mode(hx_ax ax) { return ax->mode; }
hx_backend hx_ax_backend(hx_ax ax) { return ax->b; }
hx_ax_geometry hx_ax_geometry_of(hx_ax ax) { return ax->geometry; }
const char *hx_ax_geometry_name(hx_ax_geometry g) { return g == HX_AX_GEO_SPLIT ? "split" : "fp64"; }
void hx_ax_storage_counts(hx_ax ax, int32_t *n_affine, int32_t *n_split, int32_t *n_general) {
  if (n_affine) *n_affine = ax->nkind[HX_AXK_AFF] + ax->nkind[HX_AXK_AFV];
  if (n_split) *n_split = ax->nkind[HX_AXK_SPL];
  if (n_general) *n_general = ax->mode == HX_GEO_PRECOMPUTED ? ax->nkind[HX_AXK_GEN] : ax->E;
}

/* The apply: ax_prec.c (hx_ax_apply_prec, both precisions). */

int hx_ax_diagonal(hx_ax ax, double *h_diag) {
  HX_CHECK(ax && h_diag, HX_ERR_ARG, "NULL argument");
  const int n = ax->n, n3 = n * n * n;
  double *g = NULL;
  HX_CALL(HX_ALLOC(&g, 7 * (size_t)n3 + 2 * (size_t)n * n + n));
  const double *D = ax->D;
  double *D2 = g + 7 * (size_t)n3, *dd = D2 + (size_t)n * n; /* D_mi^2 (row m), D_ii */
  for (int m = 0; m < n * n; m++) D2[m] = D[m] * D[m];
  for (int i = 0; i < n; i++) dd[i] = D[i * n + i];
  for (int32_t e = 0; e < ax->E; e++) {
    int ierr = hx_ax_elem_factors(ax, e, g, NULL);
    if (ierr) {
      free(g);
      return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    }
    double *d = h_diag + (size_t)e * n3;
    /* d_q = sum_m D_mi^2 g0(m,j,k) + D_mj^2 g3(i,m,k) + D_mk^2 g5(i,j,m)
     *     + 2 (D_ii D_jj g1 + D_ii D_kk g2 + D_jj D_kk g4)_q + g6_q,
     * along i innermost (unit stride in g3, g5 and d) */
    const double *g0 = g, *g1 = g + n3, *g2 = g + 2 * n3, *g3 = g + 3 * n3, *g4 = g + 4 * n3,
                 *g5 = g + 5 * n3, *g6 = g + 6 * n3;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++) {
        double *dl = d + n * (j + n * k);
        const double *g1l = g1 + n * (j + n * k), *g2l = g2 + n * (j + n * k), *g4l = g4 + n * (j + n * k),
                     *g6l = g6 + n * (j + n * k);
        const double dj = dd[j], dk = dd[k];
        for (int i = 0; i < n; i++)
          dl[i] = 2.0 * (dd[i] * dj * g1l[i] + dd[i] * dk * g2l[i] + dj * dk * g4l[i]) + g6l[i];
        for (int m = 0; m < n; m++) {
          const double *d2m = D2 + m * n, *g3l = g3 + n * (m + n * k), *g5l = g5 + n * (j + n * m);
          const double a = g0[m + n * (j + n * k)], bj = d2m[j], ck = d2m[k];
          for (int i = 0; i < n; i++) dl[i] += d2m[i] * a + bj * g3l[i] + ck * g5l[i];
        }
      }
  }
  free(g);
  return HX_SUCCESS;
}

int hx_ax_mass(hx_ax ax, double *h_mass) {
  HX_CHECK(ax && h_mass, HX_ERR_ARG, "NULL argument");
  const int n3 = ax->n * ax->n * ax->n;
  double *g = NULL;
  HX_CALL(HX_ALLOC(&g, 7 * (size_t)n3));
  for (int32_t e = 0; e < ax->E; e++) {
    int ierr = hx_ax_elem_factors(ax, e, g, h_mass + (size_t)e * n3);
    if (ierr) {
      free(g);
      return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    }
  }
  free(g);
  return HX_SUCCESS;
}

void hx_ax_cost(hx_ax ax, double *bytes_per_elem, double *flops_per_elem) {
  const double n = ax->n, n3 = n * n * n, n4 = n3 * n;
  /* read u, write w (8 bytes each per node; 4 in FP32) + geometry */
  const double ws = ax->prec == HX_F32 ? 4.0 : 8.0;
  double bytes = 2.0 * ws * n3;
  double flops = 12.0 * n4 + 19.0 * n3;
  if (ax->mode == HX_GEO_PRECOMPUTED && ax->prec == HX_F32) {
    /* FP32 records (prec_impl.h): affine elements a record of constants,
     * scaled affine ones (AFV) the constants plus kappa (and lambda when
     * ncomp = 7) per node, every other kind (split included) per-node
     * floats; the multiplies as in FP64 below */
    const double E = ax->E > 0 ? ax->E : 1, fa = ax->nkind[HX_AXK_AFF] / E, fv = ax->nkind[HX_AXK_AFV] / E;
    const double nv = ax->ncomp == 7 ? 2.0 : 1.0;
    bytes +=
        fa * ws * HX_AX_MEANS + (1.0 - fa - fv) * ws * ax->ncomp * n3 + fv * ws * (HX_AX_MEANS + nv * n3);
    flops += (fa * ax->ncomp + fv * (ax->ncomp + nv)) * n3;
    if (ax->ncomp == 6) flops -= 2.0 * n3; /* no mass term */
  } else if (ax->mode == HX_GEO_PRECOMPUTED) {
    /* the mean over the elements of the storage: GEN 8 ncomp n^3, AFF 8 * 8
     * (+ 6 multiplies per node by w_q), SPL 8 * 8 + 4 ncomp n^3 (+ 2 ncomp
     * per node: the conversion's add and the w_q multiply) */
    const double E = ax->E > 0 ? ax->E : 1;
    const double fa = ax->nkind[HX_AXK_AFF] / E, fs = ax->nkind[HX_AXK_SPL] / E, fg = ax->nkind[HX_AXK_GEN] / E;
    /* AFV: 8 * 8 + 8 (kappa, and lambda when ncomp = 7) per node; the
     * affine multiplies plus one (w_q kappa_q) or two per node */
    const double fv = ax->nkind[HX_AXK_AFV] / E, nv = ax->ncomp == 7 ? 2.0 : 1.0;
    bytes += fg * 8.0 * ax->ncomp * n3 + fa * 8.0 * HX_AX_MEANS + fs * (8.0 * HX_AX_MEANS + 4.0 * ax->ncomp * n3) +
             fv * (8.0 * HX_AX_MEANS + 8.0 * nv * n3);
    flops += (fa * ax->ncomp + fs * 2.0 * ax->ncomp + fv * (ax->ncomp + nv)) * n3;
    if (ax->ncomp == 6) flops -= 2.0 * n3; /* no mass term */
  } else {
    bytes += ws * HX_AX_OTF_STRIDE;
    flops += HX_AX_OTF_NODE_FLOPS * n3 + 24.0 * 8 * 2; /* + map coefficients per element */
  }
  if (bytes_per_elem) *bytes_per_elem = bytes;
  if (flops_per_elem) *flops_per_elem = flops;
}

int hx_ax_peak_gflops(hx_backend b, double seconds, double *gflops) {
  HX_CHECK(b && gflops && seconds > 0.0, HX_ERR_ARG, "bad arguments");
  HX_CUDA_DISPATCH(b, hx_ax_cuda_peak(b, seconds, gflops));
  const int isa = hx_cpu_avx512() ? 2 : hx_ax_cpu_isa();
  /* double the run until it lasts >= seconds/4 (a fork/join costs up to
   * ~10 ms on a loaded machine, so short runs measure overhead), then the
   * best rate of 3 runs of that length: a peak is a maximum, and on a shared
   * machine single runs are sometimes descheduled. */
  long iters = 4096;
  double best = 0.0;
  for (;;) {
    const double t0 = hx_wtime();
    const double f = hx_ax_cpu_peak_run(isa, iters);
    const double dt = hx_wtime() - t0;
    if (dt >= 0.25 * seconds || iters > (1L << 40)) {
      best = dt > 0.0 ? f / dt : 0.0;
      break;
    }
    iters *= 2;
  }
  for (int trial = 0; trial < 3; trial++) {
    const double t0 = hx_wtime();
    const double f = hx_ax_cpu_peak_run(isa, iters);
    const double dt = hx_wtime() - t0;
    if (dt > 0.0 && f / dt > best) best = f / dt;
  }
  HX_CHECK(best > 0.0, HX_ERR_INTERNAL, "the FP64 peak loop took no measurable time");
  *gflops = best * 1e-9;
  return HX_SUCCESS;
}
