/* Interpolation between two discretisations of the same mesh:
 *  - exact for polynomials of degree <= min(p, q) on affine elements (a
 *    cubic in x, y, z from order 3 to order 5 and back down to order 3);
 *  - the transpose: y.(I x) == (I^T y).x for random masked x, y, to
 *    1e-13 relative (1-3 ranks);
 *  - the FP32 transfers (hx_disc_interpolate_p with HX_F32) on the same
 *    data: the cubic reproduced to FP32 rounding, max error <= 2e-6 max|f|
 *    (the input rounded to float, 6e-8 relative, then three float
 *    contractions of length <= 6 with the GLL interpolation matrices, whose
 *    row sums of |l_i| are below 1.5 for these orders: about
 *    1.5^3 * (1 + 3 * 6) * 6e-8 = 4e-6 in the worst case, ~1e-7 typical;
 *    2e-6 of max|f| ~ 10 is 2e-5 absolute), and more than 1e-10 (it did
 *    round in float); the FP32 transpose against the FP32 prolongation,
 *    |y.(I x) - (I^T y).x| <= 1e-5 |x| |y| (float sums over ~1000 terms of
 *    products of entries <= 1.5^3: ~1e-6 typical). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_test.h"

static double cubic(const void *ctx, double x, double y, double z) {
  (void)ctx;
  return x * x * x + x * y * z + z * z - 2 * y + 0.5;
}

static int max_err(hx_disc d, const double *d_g, double *err) {
  const int64_t nl = hx_disc_num_l(d);
  double *ul = malloc(sizeof(double) * (size_t)nl), *fl = malloc(sizeof(double) * (size_t)nl);
  HX_TCALL(hx_op_to_l_host(hx_disc_op(d), d_g, ul));
  hx_field f = {cubic, NULL, NULL};
  HX_TCALL(hx_disc_eval(d, f, fl));
  double e = 0;
  for (int64_t i = 0; i < nl; i++) e = fmax(e, fabs(ul[i] - fl[i]));
  MPI_Allreduce(&e, err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  free(ul), free(fl);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_backend b;
  hx_mesh m;
  HX_TCALL(hx_test_backends(argc, argv, &b, NULL)); /* no device: a skip */
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = 3, mo.ny = 2, mo.nz = 4;
  mo.extent[0][1] = 2.0, mo.extent[2][0] = -1.0;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  int none[6] = {0, 0, 0, 0, 0, 0};
  for (int pass = 0; pass < 2; pass++) {
    hx_disc_opts o = hx_disc_opts_default();
    o.p = 3;
    if (pass == 0) o.dirichlet_tag = none; /* no mask: compare everywhere */
    hx_disc d3, d5;
    HX_TCALL(hx_disc_create(m, b, &o, &d3));
    HX_TCALL(hx_disc_create_order(d3, 5, &d5));
    HX_ASSERT(hx_disc_order(d5) == 5, "order");
    const int64_t n3 = hx_op_size(hx_disc_op(d3)), n5 = hx_op_size(hx_disc_op(d5));
    double *x3, *x5, *y3;
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n3, (void **)&x3));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n3, (void **)&y3));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n5, (void **)&x5));
    if (pass == 0) {
      double *fl = malloc(sizeof(double) * (size_t)hx_disc_num_l(d3)), err;
      hx_field f = {cubic, NULL, NULL};
      HX_TCALL(hx_disc_eval(d3, f, fl));
      HX_TCALL(hx_disc_from_l_host(d3, fl, 0, x3));
      HX_TCALL(hx_disc_interpolate(d3, d5, x3, x5));
      HX_TCALL(max_err(d5, x5, &err));
      HX_ASSERT(err < 1e-12, "cubic 3 -> 5: max error %.3e", err);
      HX_TCALL(hx_disc_interpolate(d5, d3, x5, y3));
      HX_TCALL(max_err(d3, y3, &err));
      HX_ASSERT(err < 1e-12, "cubic 5 -> 3: max error %.3e", err);
      /* FP32: 3 -> 5 -> 3 on float G-vectors */
      void *x3f, *x5f, *y3f;
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n3, &x3f));
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n3, &y3f));
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n5, &x5f));
      double fmaxabs = 0;
      for (int64_t i = 0; i < hx_disc_num_l(d3); i++) fmaxabs = fmax(fmaxabs, fabs(fl[i]));
      MPI_Allreduce(MPI_IN_PLACE, &fmaxabs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      HX_TCALL(hx_array_convert(b, n3, HX_F32, x3f, HX_F64, x3));
      HX_TCALL(hx_disc_interpolate_p(d3, d5, HX_F32, x3f, x5f));
      HX_TCALL(hx_array_convert(b, n5, HX_F64, x5, HX_F32, x5f));
      HX_TCALL(max_err(d5, x5, &err));
      HX_ASSERT(err <= 2e-6 * fmaxabs && err > 1e-10, "fp32 cubic 3 -> 5: max error %.3e (max|f| %.3g)", err,
                fmaxabs);
      HX_TCALL(hx_disc_interpolate_p(d5, d3, HX_F32, x5f, y3f));
      HX_TCALL(hx_array_convert(b, n3, HX_F64, y3, HX_F32, y3f));
      HX_TCALL(max_err(d3, y3, &err));
      HX_ASSERT(err <= 2e-6 * fmaxabs && err > 1e-10, "fp32 cubic 5 -> 3: max error %.3e (max|f| %.3g)", err,
                fmaxabs);
      HX_ASSERT(hx_disc_interpolate_p(d3, d5, (hx_precision)7, x3f, x5f) == HX_ERR_ARG, "unknown precision accepted");
      hx_error_clear();
      hx_mem_free(b, &x3f), hx_mem_free(b, &x5f), hx_mem_free(b, &y3f);
      free(fl);
    } else {
      /* transpose on random masked vectors (values from the global ids) */
      double *h3 = malloc(sizeof(double) * (size_t)n3), *h5 = malloc(sizeof(double) * (size_t)n5), *y5, *ix, *ity;
      const int64_t *g3 = hx_gs_global_ids(hx_disc_gs(d3)), *g5 = hx_gs_global_ids(hx_disc_gs(d5));
      for (int64_t i = 0; i < n3; i++) h3[i] = sin(1.7 * (double)g3[i]);
      for (int64_t i = 0; i < n5; i++) h5[i] = cos(0.3 * (double)g5[i]);
      HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n5, (void **)&y5));
      HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n5, (void **)&ix));
      HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n3, (void **)&ity));
      HX_TCALL(hx_mem_to_device(b, x3, h3, sizeof(double) * (size_t)n3));
      HX_TCALL(hx_mem_to_device(b, y5, h5, sizeof(double) * (size_t)n5));
      HX_TCALL(hx_gs_apply_mask(hx_disc_gs(d3), x3));
      HX_TCALL(hx_gs_apply_mask(hx_disc_gs(d5), y5));
      HX_TCALL(hx_disc_interpolate(d3, d5, x3, ix));
      HX_TCALL(hx_disc_interpolate_transpose(d3, d5, y5, ity));
      double a, c, yy, xx;
      HX_TCALL(hx_gs_dot(hx_disc_gs(d5), y5, ix, &a));
      HX_TCALL(hx_gs_dot(hx_disc_gs(d3), ity, x3, &c));
      HX_TCALL(hx_gs_dot(hx_disc_gs(d5), y5, y5, &yy));
      HX_TCALL(hx_gs_dot(hx_disc_gs(d3), x3, x3, &xx));
      HX_ASSERT(fabs(a - c) <= 1e-13 * sqrt(xx * yy) * 10, "transpose: y.(I x) = %.16e, (I^T y).x = %.16e", a, c);
      /* FP32: the transpose of the FP32 prolongation, and both close to FP64 */
      void *x3f, *y5f, *ixf, *ityf;
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n3, &x3f));
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n3, &ityf));
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n5, &y5f));
      HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)n5, &ixf));
      HX_TCALL(hx_array_convert(b, n3, HX_F32, x3f, HX_F64, x3));
      HX_TCALL(hx_array_convert(b, n5, HX_F32, y5f, HX_F64, y5));
      HX_TCALL(hx_disc_interpolate_p(d3, d5, HX_F32, x3f, ixf));
      HX_TCALL(hx_disc_interpolate_transpose_p(d3, d5, HX_F32, y5f, ityf));
      double a32, c32;
      HX_TCALL(hx_gs_dot_p(hx_disc_gs(d5), HX_F32, y5f, ixf, &a32));
      HX_TCALL(hx_gs_dot_p(hx_disc_gs(d3), HX_F32, ityf, x3f, &c32));
      HX_ASSERT(fabs(a32 - c32) <= 1e-5 * sqrt(xx * yy), "fp32 transpose: y.(I x) = %.9e, (I^T y).x = %.9e", a32,
                c32);
      HX_ASSERT(fabs(a32 - a) <= 1e-5 * sqrt(xx * yy), "fp32 y.(I x) = %.9e, fp64 %.9e", a32, a);
      hx_mem_free(b, &x3f), hx_mem_free(b, &ityf), hx_mem_free(b, &y5f), hx_mem_free(b, &ixf);
      hx_mem_free(b, (void **)&y5), hx_mem_free(b, (void **)&ix), hx_mem_free(b, (void **)&ity);
      free(h3), free(h5);
    }
    hx_mem_free(b, (void **)&x3), hx_mem_free(b, (void **)&x5), hx_mem_free(b, (void **)&y3);
    HX_TCALL(hx_disc_destroy(&d5));
    HX_TCALL(hx_disc_destroy(&d3));
  }
  HX_TCALL(hx_mesh_destroy(&m));
  HX_TCALL(hx_backend_destroy(&b));
  MPI_Finalize();
  return hx_test_result();
}
