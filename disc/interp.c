/* Interpolation between two discretisations of the same mesh and its
 * transpose (see hx_disc.h), on the backend: the G-vector is scattered to
 * the L-vector of its order, each element is mapped by the tensor product of
 * the 1D Lagrange interpolation matrix between the two orders' GLL points
 * (hx_tensor3_apply: CPU and CUDA share the per-entry math), and the target
 * G-vector is the average over the copies of each node (the copies agree up
 * to rounding; the average makes every rank agree bit for bit). The
 * transpose scales by the inverse multiplicity before the scatter and sums
 * the copies (assembly), so it is exactly the transpose of the prolongation
 * on G-vectors. Nothing is staged through the host; the scratch vectors and
 * the matrices are allocated at the first transfer and kept in the discs.
 * Written once for both precisions: the _p forms take the precision of the
 * G-vectors and run every step in it (HX_F32: the matrices and
 * 1/multiplicity rounded to float, the float gather-scatter and tensor
 * kernel); the FP64 functions are their HX_F64 instances. */
#include <stdlib.h>
#include <string.h>

#include "disc_impl.h"

/* backend scratch L- and G-vectors of d with room for entries of prec (a
 * disc that only the FP32 cycle transfers holds floats, half the bytes; an
 * FP64 transfer later makes them larger) */
static int scratch(hx_disc d, hx_precision prec) {
  const size_t es = hx_precision_size(prec);
  const int64_t ng = hx_gs_num_local(d->gs);
  const size_t bl = es * (size_t)(d->nl > 0 ? d->nl : 1), bg = es * (size_t)(ng > 0 ? ng : 1);
  if (d->xl_bytes < bl) {
    HX_CALL(hx_mem_free(d->b, (void **)&d->d_xl));
    d->xl_bytes = 0;
    HX_CALL(hx_mem_alloc(d->b, bl, (void **)&d->d_xl));
    d->xl_bytes = bl;
  }
  if (d->xg_bytes < bg) {
    HX_CALL(hx_mem_free(d->b, (void **)&d->d_xg));
    d->xg_bytes = 0;
    HX_CALL(hx_mem_alloc(d->b, bg, (void **)&d->d_xg));
    d->xg_bytes = bg;
  }
  return HX_SUCCESS;
}

/* the interpolation matrix from `from`'s order to `to`'s (transpose = 0:
 * n x m) or its transpose (m x n), in backend memory and precision prec,
 * cached in `from` (the float one rounded from the double one) */
static int matrix(hx_disc from, hx_disc to, int transpose, hx_precision prec, const void **d_A) {
  const int m = from->p + 1, n = to->p + 1;
  double **slot = &from->d_tr[to->p][transpose];
  if (!*slot) {
    double tm[HX_ORDER_MAX + 1], wm[HX_ORDER_MAX + 1], tn[HX_ORDER_MAX + 1], wn[HX_ORDER_MAX + 1];
    double I[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)], A[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)];
    HX_CALL(hx_gll(m, tm, wm));
    HX_CALL(hx_gll(n, tn, wn));
    HX_CALL(hx_lagrange_interp(m, tm, n, tn, I)); /* I[a*m + i] = l_i(tn_a) */
    for (int a = 0; a < n; a++)
      for (int i = 0; i < m; i++) A[transpose ? i * n + a : a * m + i] = I[a * m + i];
    HX_CALL(hx_mem_alloc(from->b, sizeof(double) * (size_t)(m * n), (void **)slot));
    HX_CALL(hx_mem_to_device(from->b, *slot, A, sizeof(double) * (size_t)(m * n)));
  }
  float **slot32 = &from->d_tr32[to->p][transpose];
  if (prec == HX_F32 && !*slot32) {
    HX_CALL(hx_mem_alloc(from->b, sizeof(float) * (size_t)(m * n), (void **)slot32));
    HX_CALL(hx_array_convert(from->b, m * n, HX_F32, *slot32, HX_F64, *slot));
  }
  *d_A = prec == HX_F32 ? (const void *)*slot32 : (const void *)*slot;
  return HX_SUCCESS;
}

/* 1/multiplicity of d's G-vector in precision prec (float: rounded, kept) */
static int invm(hx_disc d, hx_precision prec, const void **d_w) {
  if (prec == HX_F32 && !d->d_invm32) {
    const int64_t ng = hx_gs_num_local(d->gs);
    HX_CALL(hx_mem_alloc(d->b, sizeof(float) * (size_t)(ng > 0 ? ng : 1), (void **)&d->d_invm32));
    HX_CALL(hx_array_convert(d->b, ng, HX_F32, d->d_invm32, HX_F64, hx_gs_inv_multiplicity(d->gs)));
  }
  *d_w = prec == HX_F32 ? (const void *)d->d_invm32 : (const void *)hx_gs_inv_multiplicity(d->gs);
  return HX_SUCCESS;
}

/* frees what the transfers of d allocated (hx_disc_destroy) */
int hx_disc_transfer_free(hx_disc d) {
  int first = hx_mem_free(d->b, (void **)&d->d_xl), err;
  if ((err = hx_mem_free(d->b, (void **)&d->d_xg)) && !first) first = err;
  d->xl_bytes = d->xg_bytes = 0;
  if ((err = hx_mem_free(d->b, (void **)&d->d_invm32)) && !first) first = err;
  for (int q = 0; q <= HX_ORDER_MAX; q++)
    for (int t = 0; t < 2; t++) {
      if ((err = hx_mem_free(d->b, (void **)&d->d_tr[q][t])) && !first) first = err;
      if ((err = hx_mem_free(d->b, (void **)&d->d_tr32[q][t])) && !first) first = err;
    }
  return first;
}

static int check_pair(hx_disc from, hx_disc to) {
  HX_CHECK(from && to && from->mesh == to->mesh && from->b == to->b && from->E == to->E, HX_ERR_ARG,
           "interpolation needs two discretisations of the same mesh and backend");
  return HX_SUCCESS;
}

/* the checks and cached data of one transfer from -> to in prec */
static int transfer_prep(hx_disc from, hx_disc to, int transpose, hx_precision prec, const void **d_A,
                         const void **d_w) {
  HX_CHECK(prec == HX_F64 || prec == HX_F32, HX_ERR_ARG, "interpolation: unknown precision %d", (int)prec);
  HX_CALL(check_pair(from, to));
  HX_CALL(scratch(from, prec));
  HX_CALL(scratch(to, prec));
  HX_CALL(matrix(from, to, transpose, prec, d_A));
  HX_CALL(invm(to, prec, d_w));
  return HX_SUCCESS;
}

int hx_disc_interpolate_p(hx_disc from, hx_disc to, hx_precision prec, const void *d_x, void *d_y) {
  const void *d_A = NULL, *d_w = NULL;
  HX_CALL(transfer_prep(from, to, 0, prec, &d_A, &d_w));
  HX_CALL(hx_gs_scatter_p(from->gs, prec, d_x, from->d_xl));
  HX_CALL(hx_tensor3_apply_p(from->b, prec, from->p + 1, to->p + 1, from->E, d_A, from->d_xl, to->d_xl));
  HX_CALL(hx_gs_assemble_p(to->gs, prec, to->d_xl, d_y));
  HX_CALL(hx_array_pointwise_mult_p(to->b, prec, hx_gs_num_local(to->gs), d_y, d_y, d_w));
  HX_CALL(hx_gs_apply_mask_p(to->gs, prec, d_y));
  return HX_SUCCESS;
}

int hx_disc_interpolate_transpose_p(hx_disc from, hx_disc to, hx_precision prec, const void *d_y, void *d_x) {
  const void *d_A = NULL, *d_w = NULL;
  HX_CALL(transfer_prep(from, to, 1, prec, &d_A, &d_w));
  HX_CALL(hx_array_pointwise_mult_p(to->b, prec, hx_gs_num_local(to->gs), to->d_xg, d_y, d_w));
  HX_CALL(hx_gs_scatter_p(to->gs, prec, to->d_xg, to->d_xl));
  HX_CALL(hx_tensor3_apply_p(from->b, prec, to->p + 1, from->p + 1, from->E, d_A, to->d_xl, from->d_xl));
  HX_CALL(hx_gs_assemble_p(from->gs, prec, from->d_xl, d_x));
  HX_CALL(hx_gs_apply_mask_p(from->gs, prec, d_x));
  return HX_SUCCESS;
}

int hx_disc_interpolate(hx_disc from, hx_disc to, const double *d_x, double *d_y) {
  HX_CALL(hx_disc_interpolate_p(from, to, HX_F64, d_x, d_y));
  return HX_SUCCESS;
}

int hx_disc_interpolate_transpose(hx_disc from, hx_disc to, const double *d_y, double *d_x) {
  HX_CALL(hx_disc_interpolate_transpose_p(from, to, HX_F64, d_y, d_x));
  return HX_SUCCESS;
}
