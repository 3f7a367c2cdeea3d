/* Problem setup: right-hand side with Dirichlet lifting, error norms. */
#include <math.h>
#include <stdlib.h>

#include "hx_disc.h"

int hx_op_to_l_host(hx_op op, const double *d_g, double *h_l) {
  hx_backend b = hx_op_backend(op);
  hx_gs gs = hx_op_gs(op);
  const int64_t nl = hx_gs_num_l(gs);
  double *d_l;
  HX_CALL(hx_mem_alloc(b, sizeof(double) * (size_t)nl, (void **)&d_l));
  HX_CALL(hx_gs_scatter(gs, d_g, d_l));
  HX_CALL(hx_mem_to_host(b, h_l, d_l, sizeof(double) * (size_t)nl));
  HX_CALL(hx_mem_free(b, (void **)&d_l));
  return HX_SUCCESS;
}

int hx_problem_rhs(hx_op op, const double *h_f, const double *h_gd, const int *h_lflag, const double *h_bn,
                   double *d_b, double *d_g) {
  hx_backend b = hx_op_backend(op);
  hx_gs gs = hx_op_gs(op);
  const int64_t nl = hx_gs_num_l(gs), ng = hx_gs_num_local(gs);
  double *h_l, *d_l, *d_w, *h_g;
  HX_CALL(HX_ALLOC(&h_l, nl));
  HX_CALL(HX_ALLOC(&h_g, ng));
  HX_CALL(hx_mem_alloc(b, sizeof(double) * (size_t)nl, (void **)&d_l));
  HX_CALL(hx_mem_alloc(b, sizeof(double) * (size_t)ng, (void **)&d_w));

  /* b_f = Z^T (mass .* f), assembled over ranks */
  if (h_f) {
    HX_CALL(hx_ax_mass(hx_op_ax(op), h_l));
    for (int64_t i = 0; i < nl; i++) h_l[i] *= h_f[i];
  } else {
    for (int64_t i = 0; i < nl; i++) h_l[i] = 0.0;
  }
  if (h_bn)
    for (int64_t i = 0; i < nl; i++) h_l[i] += h_bn[i];
  HX_CALL(hx_mem_to_device(b, d_l, h_l, sizeof(double) * (size_t)nl));
  HX_CALL(hx_gs_assemble(gs, d_l, d_b));

  /* g = average of the Dirichlet values over the flagged copies of each
   * node (copies in elements whose face there is not Dirichlet carry no
   * value), kept on masked entries only */
  HX_CALL(hx_mem_zero(b, d_g, sizeof(double) * (size_t)ng));
  const double *d_mask = hx_gs_mask(gs);
  /* the operator's gather-scatter keeps its maps (its scatter reads them) */
  const int32_t *map = hx_gs_map_host(gs);
  if (h_gd && h_lflag && d_mask) {
    HX_CHECK(map, HX_ERR_ARG, "right-hand side: the gather-scatter's maps were dropped");
    double *h_cnt;
    HX_CALL(HX_ALLOC(&h_cnt, ng));
    /* the local sums through the host's scatter map (in L order, as the
     * gather adds), over the flagged copies only; then over the ranks */
    for (int64_t i = 0; i < nl; i++)
      if (h_lflag[i] && map[i] >= 0) h_g[map[i]] += h_gd[i], h_cnt[map[i]] += 1.0;
    HX_CALL(hx_mem_to_device(b, d_g, h_g, sizeof(double) * (size_t)ng));
    HX_CALL(hx_mem_to_device(b, d_w, h_cnt, sizeof(double) * (size_t)ng));
    HX_CALL(hx_gs_exchange(gs, d_g, HX_GS_ADD));
    HX_CALL(hx_gs_exchange(gs, d_w, HX_GS_ADD));
    HX_CALL(hx_mem_to_host(b, h_g, d_g, sizeof(double) * (size_t)ng));
    HX_CALL(hx_mem_to_host(b, h_cnt, d_w, sizeof(double) * (size_t)ng));
    for (int64_t i = 0; i < ng; i++) h_g[i] = h_cnt[i] > 0 ? h_g[i] / h_cnt[i] : 0.0;
    free(h_cnt);
    HX_CALL(hx_mem_to_device(b, d_g, h_g, sizeof(double) * (size_t)ng));
    /* b -= A g (unmasked operator) */
    HX_CALL(hx_op_apply_unmasked(op, d_g, d_w));
    HX_CALL(hx_array_axpby(b, ng, d_b, -1.0, d_w, 1.0));
  }
  HX_CALL(hx_gs_apply_mask(gs, d_b));
  HX_CALL(hx_mem_free(b, (void **)&d_l));
  HX_CALL(hx_mem_free(b, (void **)&d_w));
  free(h_l), free(h_g);
  return HX_SUCCESS;
}
