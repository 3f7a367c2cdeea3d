/* The element operator with a precision parameter (hx_kernels_prec.h):
 * hx_ax_create_prec builds the FP64 operator (ax.c: factors in double, input
 * checks), then for HX_F32 replaces the backend data by float copies; the
 * apply dispatches to the float instantiations in cpu/ax_cpu.c and
 * cuda/ax_cuda.cu. */
#include "prec_impl.h"

#include <stdlib.h>

/* Round n doubles to float and upload them to a new backend array. */
static int hx_ax_upload_f32(hx_backend b, const double *h, size_t n, float **d_out) {
  float *hf = NULL;
  HX_CALL(HX_ALLOC(&hf, n + 1));
  for (size_t i = 0; i < n; i++) hf[i] = (float)h[i];
  int ierr = hx_mem_alloc(b, n * sizeof(float), (void **)d_out);
  if (!ierr && n > 0) ierr = hx_mem_to_device(b, *d_out, hf, n * sizeof(float));
  free(hf);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_ax_make_f32(struct hx_ax_s *ax) {
  const int n = ax->n, n3 = n * n * n;
  const size_t E = (size_t)ax->E;
  /* basis [D, t, w, w3]; w3 multiplied in float, (w_i w_j) w_k */
  double basis[HX_AX_NMAX * HX_AX_NMAX + 2 * HX_AX_NMAX + HX_AX_NMAX * HX_AX_NMAX * HX_AX_NMAX];
  for (int q = 0; q < n * n; q++) basis[q] = ax->D[q];
  for (int i = 0; i < n; i++) basis[hx_ax_off_t(n) + i] = ax->t[i], basis[hx_ax_off_w(n) + i] = ax->w[i];
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const float wi = (float)ax->w[i], wj = (float)ax->w[j], wk = (float)ax->w[k];
        const float w3 = wi * wj * wk;
        basis[hx_ax_off_w3_f32(n) + i + n * (j + n * k)] = w3; /* exact in double, exact back */
      }
  HX_CALL(hx_ax_upload_f32(ax->b, basis, (size_t)n * n + 2 * (size_t)n + (size_t)n3, &ax->d_basis32));
  /* geometry */
  size_t len;
  double *h = NULL;
  int64_t *eoff = NULL;
  if (ax->mode == HX_GEO_PRECOMPUTED) {
    /* the FP64 records' kinds (same affine detection); affine (AFF) and
     * scaled affine (AFV) records are the FP64 ones rounded to float (the 7
     * constants; AFV then kappa and lambda per node, the same layout in
     * floats), general and split ones become ncomp blocks of n^3 + HX_AX_PAD
     * floats of the FP64 per-node factors */
    const size_t cs = (size_t)n3 + HX_AX_PAD, pk = (size_t)ax->ncomp * cs;
    const size_t len_afv = HX_AX_MEANS + (ax->ncomp == 7 ? 2 : 1) * cs;
    double *g = NULL, *geo64 = NULL;
    int64_t *eoff64 = NULL;
    HX_CALL(HX_ALLOC(&eoff, E + 1));
    int ierr = HX_ALLOC(&eoff64, E + 1);
    if (!ierr && E > 0) ierr = hx_mem_to_host(ax->b, eoff64, ax->d_eoff, E * sizeof(int64_t));
    if (!ierr && ax->nkind[HX_AXK_AFF] + ax->nkind[HX_AXK_AFV] > 0) {
      ierr = HX_ALLOC(&geo64, (size_t)ax->geo_len + 1);
      if (!ierr) ierr = hx_mem_to_host(ax->b, geo64, ax->d_geo, (size_t)ax->geo_len * sizeof(double));
    }
    size_t off = 0;
    for (size_t e = 0; e < E && !ierr; e++) {
      const int k64 = (int)(eoff64[e] & 3);
      const int kind = k64 == HX_AXK_AFF || k64 == HX_AXK_AFV ? k64 : HX_AXK_GEN;
      eoff[e] = (int64_t)off << 2 | kind;
      off += kind == HX_AXK_AFF ? HX_AX_MEANS : kind == HX_AXK_AFV ? len_afv : pk;
    }
    len = off;
    if (!ierr) ierr = HX_ALLOC(&h, len + 1);
    if (!ierr) ierr = HX_ALLOC(&g, 7 * (size_t)n3);
    for (size_t e = 0; e < E && !ierr; e++) {
      double *rec = h + (eoff[e] >> 2);
      const int kind = (int)(eoff[e] & 3);
      if (kind == HX_AXK_AFF || kind == HX_AXK_AFV) {
        const double *r64 = geo64 + (eoff64[e] >> 2);
        const size_t rl = kind == HX_AXK_AFF ? HX_AX_MEANS : len_afv;
        for (size_t c = 0; c < rl; c++) rec[c] = r64[c];
      } else {
        ierr = hx_ax_elem_factors(ax, (int32_t)e, g, NULL);
        for (int c = 0; c < ax->ncomp && !ierr; c++)
          for (int q = 0; q < n3; q++) rec[c * cs + q] = g[(size_t)c * n3 + q];
      }
    }
    free(g);
    free(geo64);
    free(eoff64);
    if (ierr) {
      free(h);
      free(eoff);
      return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    }
  } else {
    /* the map coefficients in double (differences of the vertex coordinates
     * taken before rounding), then kappa, lambda */
    len = E * HX_AX_OTF_STRIDE;
    HX_CALL(HX_ALLOC(&h, len + 1));
    for (size_t e = 0; e < E; e++) {
      double *o = h + e * HX_AX_OTF_STRIDE;
      hx_hex8_coeffs(ax->h_nodes + e * 24, o);
      o[24] = ax->h_kappa[e];
      o[25] = ax->h_lambda[e];
    }
  }
  int ierr = hx_ax_upload_f32(ax->b, h, len, &ax->d_geo32);
  free(h);
  if (!ierr) ierr = hx_mem_free(ax->b, (void **)&ax->d_geo);
  if (!ierr && eoff && E > 0) ierr = hx_mem_to_device(ax->b, ax->d_eoff, eoff, E * sizeof(int64_t));
  free(eoff);
  HX_CALL(ierr);
  if (ax->mode != HX_GEO_PRECOMPUTED) HX_CALL(hx_mem_free(ax->b, (void **)&ax->d_eoff));
  /* split elements are general in FP32 */
  ax->nkind[HX_AXK_GEN] += ax->nkind[HX_AXK_SPL];
  ax->nkind[HX_AXK_SPL] = 0;
  ax->geo_len = (int64_t)len;
  ax->prec = HX_F32;
  return HX_SUCCESS;
}

hx_precision hx_ax_precision(hx_ax ax) { return ax->prec; }

/* cuda: the element pass, then its partial sums to the host (uw) or to a
 * reduction slot (d_slot, backend memory: no host wait) */
HX_CUDA_ONLY(static int ax_cuda_apply_sums(hx_ax ax, int32_t nlist, const int32_t *d_list, const int32_t *d_map,
                                           const void *d_u, void *d_w, double *part, double *uw, double *d_slot) {
  HX_CALL(HX_CUDA_P(ax->prec, ax_apply, ax, nlist, d_list, d_map, d_u, d_w, part));
  if (uw) HX_CALL(hx_ax_cuda_sum(ax->b, nlist, part, uw));
  if (d_slot) HX_CALL(hx_ax_cuda_sum_to(ax->b, nlist, part, d_slot));
  return HX_SUCCESS;
})

/* The one apply: every hx_ax_apply* name is an inline form of it
 * (hx_kernels.h, hx_kernels_prec.h). The element u.w sum: on the cpu
 * backends the element partials summed in list order, to *uw or to the
 * slot (host memory there). */
int hx_ax_apply_prec(hx_ax ax, hx_precision prec, int32_t nlist, const int32_t *d_list, const int32_t *d_map,
                     const void *d_u, void *d_w, double *uw, hx_red red, int k) {
  if (uw) *uw = 0.0;
  HX_CHECK(ax, HX_ERR_ARG, "operator handle is NULL");
  HX_CHECK(prec == ax->prec, HX_ERR_ARG, "%s apply of an %s operator (use hx_ax_apply_p)",
           prec == HX_F64 ? "FP64" : "FP32", ax->prec == HX_F64 ? "FP64" : "FP32");
  HX_CHECK(nlist >= 0 && nlist <= ax->E, HX_ERR_ARG, "list of %d elements for an operator on %d", (int)nlist,
           (int)ax->E);
  HX_CHECK(nlist == 0 || d_list || nlist == ax->E, HX_ERR_ARG, "element list is NULL");
  HX_CHECK(!red || (red->b == ax->b && !uw), HX_ERR_ARG, "reduction set on another backend, or with uw");
  double *d_slot = NULL;
  if (red) HX_CALL(hx_red_next_part(red, k, &d_slot));
  double *part = uw || d_slot ? ax->d_part : NULL;
  if (nlist == 0) {
    if (d_slot) {
      HX_CUDA_DISPATCH(ax->b, hx_mem_zero(ax->b, d_slot, sizeof(double)));
      *d_slot = 0.0; /* the slots are host memory on the cpu backends */
    }
    return HX_SUCCESS;
  }
  HX_CHECK(d_u && d_w, HX_ERR_ARG, "NULL vector");
  const size_t es = hx_precision_size(prec), nl = (size_t)hx_ax_num_nodes(ax);
  HX_KERNEL_DISPATCH(ax->b, "operator", ax_cuda_apply_sums(ax, nlist, d_list, d_map, d_u, d_w, part, uw, d_slot),
                     HX_CALL(HX_CPU_P(prec, ax_apply, ax, nlist, d_list, d_map, d_u, d_w, part)),
                     HX_KARG(d_list, d_list ? (size_t)nlist : 0, sizeof(int32_t), "element list"),
                     HX_KARG(d_map, d_map ? nl : 0, sizeof(int32_t), "L->G map"),
                     HX_KARG(d_u, d_map ? 1 : nl, es, "u"), HX_KARG(d_w, nl, es, "w"));
  if (part) {
    double s = 0.0;
    for (int32_t i = 0; i < nlist; i++) s += part[i];
    if (uw) *uw = s;
    if (d_slot) *d_slot = s;
  }
  return HX_SUCCESS;
}

/* The operator on nk columns at once (hx_kernels_prec.h): the checks of
 * hx_ax_apply_prec for every column, one kernel pass over the elements for
 * all of them, then each column's sum of the element u.w in list order
 * (cpu; a fixed tree per column on cuda): the bits of nk single applies. */
int hx_ax_apply_many_prec(hx_ax ax, hx_precision prec, int nk, int32_t nlist, const int32_t *d_list,
                          const int32_t *d_map, const void *const *d_u, void *const *d_w, double *uw) {
  HX_CHECK(ax, HX_ERR_ARG, "operator handle is NULL");
  HX_CHECK(nk >= 0 && nk <= HX_AX_MANY_MAX, HX_ERR_ARG, "%d columns: the k-vector apply takes 0..%d", nk,
           HX_AX_MANY_MAX);
  HX_CHECK(prec == ax->prec, HX_ERR_ARG, "%s apply of an %s operator", prec == HX_F64 ? "FP64" : "FP32",
           ax->prec == HX_F64 ? "FP64" : "FP32");
  HX_CHECK(nlist >= 0 && nlist <= ax->E, HX_ERR_ARG, "list of %d elements for an operator on %d", (int)nlist,
           (int)ax->E);
  HX_CHECK(nlist == 0 || d_list || nlist == ax->E, HX_ERR_ARG, "element list is NULL");
  HX_CHECK(nk == 0 || (d_u && d_w), HX_ERR_ARG, "NULL column array");
  if (uw)
    for (int c = 0; c < nk; c++) uw[c] = 0.0;
  if (nk == 0 || nlist == 0) return HX_SUCCESS;
  const size_t es = hx_precision_size(prec), nl = (size_t)hx_ax_num_nodes(ax);
  hx_karg args[2 + 2 * HX_AX_MANY_MAX];
  size_t na = 0;
  args[na++] = HX_KARG(d_list, d_list ? (size_t)nlist : 0, sizeof(int32_t), "element list");
  args[na++] = HX_KARG(d_map, d_map ? nl : 0, sizeof(int32_t), "L->G map");
  for (int c = 0; c < nk; c++) {
    HX_CHECK(d_u[c] && d_w[c], HX_ERR_ARG, "operator: column %d is NULL", c);
    args[na++] = HX_KARG(d_u[c], d_map ? 1 : nl, es, "u column");
    args[na++] = HX_KARG(d_w[c], nl, es, "w column");
  }
  HX_CALL(hx_kernel_args(ax->b, "operator (k vectors)", na, args));
  double *part = NULL;
  if (uw) {
    const size_t need = (size_t)nk * (size_t)nlist;
    if (ax->partk_len < need) {
      HX_CALL(hx_mem_free(ax->b, (void **)&ax->d_partk));
      ax->partk_len = 0;
      HX_CALL(hx_mem_alloc(ax->b, need * sizeof(double), (void **)&ax->d_partk));
      ax->partk_len = need;
    }
    part = ax->d_partk;
  }
  if (hx_backend_get_kind(ax->b) == HX_BACKEND_CUDA) {
    HX_CUDA_ONLY(HX_CALL(prec == HX_F64 ? hx_cuda_ax_apply_many(ax, nlist, d_list, d_map, nk, (const double *const *)d_u,
                                                                (double *const *)d_w, part)
                                        : hx_cuda_ax_apply_many_f32(ax, nlist, d_list, d_map, nk,
                                                                    (const float *const *)d_u, (float *const *)d_w,
                                                                    part));
                 if (uw) for (int c = 0; c < nk; c++)
                     HX_CALL(hx_ax_cuda_sum(ax->b, nlist, part + (size_t)c * nlist, &uw[c]));
                 return HX_SUCCESS;)
  }
  HX_MC_SCOPE(ax->b);
  HX_CALL(prec == HX_F64 ? hx_cpu_ax_apply_many(ax, nlist, d_list, d_map, nk, (const double *const *)d_u,
                                                (double *const *)d_w, part)
                         : hx_cpu_ax_apply_many_f32(ax, nlist, d_list, d_map, nk, (const float *const *)d_u,
                                                    (float *const *)d_w, part));
  if (part)
    for (int c = 0; c < nk; c++) {
      double s = 0.0;
      for (int32_t i = 0; i < nlist; i++) s += part[(size_t)c * nlist + i];
      uw[c] = s;
    }
  return HX_SUCCESS;
}
