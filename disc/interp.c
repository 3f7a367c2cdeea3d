/* Interpolation between two discretisations of the same mesh and its
 * transpose (see hx_disc.h). Element-wise tensor-product 1D Lagrange
 * interpolation between the GLL points of the two orders, on host copies of
 * the L-vectors; the G-vector of the target is the average over the copies
 * of each node (the copies agree up to rounding, the average makes every
 * rank agree bit for bit). */
#include <stdlib.h>
#include <string.h>

#include "disc_impl.h"

/* out_e = (Iz x Iy x Ix) in_e for one element: in has m^3 values, out n^3,
 * I[a*m + i] (n x m), t1/t2 work of n*m*m and n*n*m. transpose: out (m^3)
 * = (I^T x I^T x I^T) in (n^3). */
static void tensor3(int n, int m, const double *I, const double *in, double *out, double *t1, double *t2,
                    int transpose) {
  /* the contraction maps size a -> b per direction */
  const int a = transpose ? n : m, b = transpose ? m : n;
#define MAT(r, c) (transpose ? I[(c) * m + (r)] : I[(r) * m + (c)])
  for (int k = 0; k < a; k++)
    for (int j = 0; j < a; j++)
      for (int r = 0; r < b; r++) {
        double s = 0;
        for (int i = 0; i < a; i++) s += MAT(r, i) * in[i + a * (j + a * k)];
        t1[r + b * (j + a * k)] = s;
      }
  for (int k = 0; k < a; k++)
    for (int r = 0; r < b; r++)
      for (int q = 0; q < b; q++) {
        double s = 0;
        for (int j = 0; j < a; j++) s += MAT(r, j) * t1[q + b * (j + a * k)];
        t2[q + b * (r + b * k)] = s;
      }
  for (int r = 0; r < b; r++)
    for (int j = 0; j < b; j++)
      for (int q = 0; q < b; q++) {
        double s = 0;
        for (int k = 0; k < a; k++) s += MAT(r, k) * t2[q + b * (j + b * k)];
        out[q + b * (j + b * r)] = s;
      }
#undef MAT
}

/* host L-vector of the G-vector d_g of d (optionally times 1/multiplicity) */
static int g_to_l_host(hx_disc d, const double *d_g, int scale, double *h_l) {
  const int64_t ng = hx_gs_num_local(d->gs);
  double *h_g = NULL, *h_m = NULL;
  int err = HX_ALLOC(&h_g, ng > 0 ? ng : 1);
  if (!err && scale) err = HX_ALLOC(&h_m, ng > 0 ? ng : 1);
  if (!err) err = hx_mem_to_host(d->b, h_g, d_g, sizeof(double) * (size_t)ng);
  if (!err && scale) err = hx_mem_to_host(d->b, h_m, hx_gs_inv_multiplicity(d->gs), sizeof(double) * (size_t)ng);
  if (!err) {
    const int32_t *map = hx_gs_map_host(d->gs);
    for (int64_t i = 0; i < d->nl; i++) h_l[i] = map[i] < 0 ? 0.0 : h_g[map[i]] * (scale ? h_m[map[i]] : 1.0);
  }
  free(h_g), free(h_m);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* L-vector of `to` from the L-vector of `from`, element by element */
static int map_elements(hx_disc from, hx_disc to, const double *in, double *out, int transpose) {
  const int m = from->p + 1, n = to->p + 1;
  double tm[HX_ORDER_MAX + 1], wm[HX_ORDER_MAX + 1], tn[HX_ORDER_MAX + 1], wn[HX_ORDER_MAX + 1];
  double I[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)];
  HX_CALL(hx_gll(m, tm, wm));
  HX_CALL(hx_gll(n, tn, wn));
  HX_CALL(hx_lagrange_interp(m, tm, n, tn, I)); /* I[a*m + i] = l_i(tn_a) */
  const int big = m > n ? m : n;
  double *t1, *t2;
  HX_CALL(HX_ALLOC(&t1, big * big * big));
  const int err = HX_ALLOC(&t2, big * big * big);
  if (err) free(t1);
  HX_CALL(err);
  for (int32_t e = 0; e < from->E; e++) {
    if (!transpose)
      tensor3(n, m, I, in + (int64_t)e * from->n3, out + (int64_t)e * to->n3, t1, t2, 0);
    else
      tensor3(n, m, I, in + (int64_t)e * to->n3, out + (int64_t)e * from->n3, t1, t2, 1);
  }
  free(t1), free(t2);
  return HX_SUCCESS;
}

static int check_pair(hx_disc from, hx_disc to) {
  HX_CHECK(from && to && from->mesh == to->mesh && from->b == to->b && from->E == to->E, HX_ERR_ARG,
           "interpolation needs two discretisations of the same mesh and backend");
  return HX_SUCCESS;
}

int hx_disc_interpolate(hx_disc from, hx_disc to, const double *d_x, double *d_y) {
  HX_CALL(check_pair(from, to));
  double *lf = NULL, *lt = NULL;
  int err = HX_ALLOC(&lf, from->nl > 0 ? from->nl : 1);
  if (!err) err = HX_ALLOC(&lt, to->nl > 0 ? to->nl : 1);
  if (!err) err = g_to_l_host(from, d_x, 0, lf);
  if (!err) err = map_elements(from, to, lf, lt, 0);
  if (!err) err = hx_disc_from_l_host(to, lt, 1, d_y);
  free(lf), free(lt);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_disc_interpolate_transpose(hx_disc from, hx_disc to, const double *d_y, double *d_x) {
  HX_CALL(check_pair(from, to));
  double *lf = NULL, *lt = NULL, *d_l = NULL;
  int err = HX_ALLOC(&lf, from->nl > 0 ? from->nl : 1);
  if (!err) err = HX_ALLOC(&lt, to->nl > 0 ? to->nl : 1);
  if (!err) err = g_to_l_host(to, d_y, 1, lt);
  if (!err) err = map_elements(from, to, lt, lf, 1);
  if (!err) err = hx_mem_alloc(from->b, sizeof(double) * (size_t)(from->nl > 0 ? from->nl : 1), (void **)&d_l);
  if (!err) err = hx_mem_to_device(from->b, d_l, lf, sizeof(double) * (size_t)from->nl);
  if (!err) err = hx_gs_assemble(from->gs, d_l, d_x);
  if (!err) err = hx_gs_apply_mask(from->gs, d_x);
  const int err2 = hx_mem_free(from->b, (void **)&d_l);
  free(lf), free(lt);
  HX_CALL(err ? err : err2);
  return HX_SUCCESS;
}
