/* The Robin boundary term of the assembled operator (disc/robin.c,
 * hx_op_set_boundary_diag), on a 3x2x4 box over [0,2]x[0,1]x[-1,0], no
 * Dirichlet tag, lambda = 0, Robin alpha = 2 on xmin and alpha = 1 + x on
 * ymax (1-3 ranks; the shared nodes are where a wrong assembly shows):
 *  - the stiffness annihilates constants, so A 1 = R and the fused
 *    1.(A 1) = sum R = int alpha over the Robin faces = 2 * 1 + int_0^2 (1+x)
 *    dx * 1 = 6 (GLL is exact for the linear alpha): hx_op_apply's xy and
 *    hx_op_apply_red's slot, to 1e-13;
 *  - for a random consistent x: the fused x.(A x) equals the separate dot
 *    of x and A x (1e-13 relative: x.R.x is in the fused sum), and
 *    z.(A x) == x.(A z) (symmetric, 1e-13);
 *  - the assembled diagonal minus that of the same disc without Robin sums
 *    to 6 over the owned entries (1e-13);
 *  - a level made by hx_disc_create_order (p = 2) has its own term: its
 *    1.(A 1) is 6 too; the FP32 operator (hx_disc_op_prec) gives A 1 within
 *    float rounding of FP64's (max 1e-6 of max|A 1|), and did round (the
 *    values differ from FP64 by > 0 somewhere, or are exactly float);
 *  - the kernel alone (hx_array_diag_add_list_p, FP64 and FP32, its x.R.x
 *    over the first mred entries appended to a slot that holds a partial);
 *  - alpha negative at a node (alpha = x - 1 on ymax): hx_disc_create
 *    refuses with HX_ERR_INPUT naming the tag and the node on every rank
 *    (the lowest failing rank's message). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_test.h"

static double two(const void *c, double x, double y, double z) {
  (void)c, (void)x, (void)y, (void)z;
  return 2.0;
}
static double one_plus_x(const void *c, double x, double y, double z) {
  (void)c, (void)y, (void)z;
  return 1.0 + x;
}
static double x_minus_1(const void *c, double x, double y, double z) {
  (void)c, (void)y, (void)z;
  return x - 1.0;
}

static int fill(hx_backend b, int64_t n, double v, double *d) {
  double *h = malloc(sizeof(double) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) h[i] = v;
  HX_TCALL(hx_mem_to_device(b, d, h, sizeof(double) * (size_t)n));
  free(h);
  return 0;
}

static double gdot(hx_op op, const double *d_x, const double *d_y) {
  double s = 0.0;
  hx_array_dot(hx_op_backend(op), hx_op_owned(op), d_x, d_y, &s);
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

static int ones_energy(hx_disc d, double *xy) {
  hx_op op = hx_disc_op(d);
  const int64_t n = hx_op_size(op);
  hx_backend b = hx_disc_backend(d);
  double *x, *y;
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&x));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&y));
  HX_TCALL(fill(b, n, 1.0, x));
  HX_TCALL(hx_op_apply(op, x, y, xy));
  hx_mem_free(b, (void **)&x), hx_mem_free(b, (void **)&y);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_backend b;
  HX_TCALL(hx_test_backends(argc, argv, &b, NULL)); /* no device: a skip */
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hx_mesh m;
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = 3, mo.ny = 2, mo.nz = 4;
  mo.extent[0][1] = 2.0, mo.extent[2][0] = -1.0, mo.extent[2][1] = 0.0;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  int none[6] = {0, 0, 0, 0, 0, 0};
  hx_field ra[6] = {{two, NULL, NULL},        {NULL, NULL, NULL}, {NULL, NULL, NULL},
                    {one_plus_x, NULL, NULL}, {NULL, NULL, NULL}, {NULL, NULL, NULL}};
  hx_disc_opts o = hx_disc_opts_default();
  o.p = 4, o.dirichlet_tag = none, o.robin_alpha = ra;
  hx_disc d, d0, d2;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  hx_disc_opts o0 = o;
  o0.robin_alpha = NULL;
  HX_TCALL(hx_disc_create(m, b, &o0, &d0));
  HX_ASSERT(hx_disc_robin_l(d) != NULL && hx_disc_robin_l(d0) == NULL, "robin face weights");

  double xy;
  HX_TCALL(ones_energy(d, &xy));
  HX_ASSERT(fabs(xy - 6.0) < 1e-13 * 6, "1.(A 1) = %.17g, expected 6", xy);
  HX_TCALL(ones_energy(d0, &xy));
  HX_ASSERT(fabs(xy) < 1e-12, "without Robin 1.(A 1) = %.3e, expected 0", xy);
  HX_TCALL(hx_disc_create_order(d, 2, &d2));
  HX_TCALL(ones_energy(d2, &xy));
  HX_ASSERT(fabs(xy - 6.0) < 1e-13 * 6, "order-2 level: 1.(A 1) = %.17g, expected 6", xy);

  hx_op op = hx_disc_op(d);
  const int64_t n = hx_op_size(op), own = hx_op_owned(op);
  double *x, *z, *y, *w, *dg, *dg0;
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&x));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&z));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&y));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&w));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&dg));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n + 1), (void **)&dg0));
  /* hx_op_apply_red: the same 6 through a reduction slot */
  {
    hx_red red;
    HX_TCALL(hx_red_create(b, 2, n, &red));
    HX_TCALL(fill(b, n, 1.0, x));
    HX_TCALL(hx_op_apply_red(op, x, y, red, 1));
    double s[2];
    HX_TCALL(hx_red_fetch(red, 2, s));
    MPI_Allreduce(MPI_IN_PLACE, &s[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    HX_ASSERT(fabs(s[1] - 6.0) < 1e-13 * 6, "apply_red: 1.(A 1) = %.17g, expected 6", s[1]);
    hx_red_destroy(&red);
  }
  /* random consistent x, z (continuous fields from L-vectors of node functions) */
  {
    const int64_t nl = hx_disc_num_l(d);
    const double *X, *Y, *Z;
    hx_disc_coords(d, &X, &Y, &Z);
    double *hl = malloc(sizeof(double) * (size_t)nl);
    for (int64_t i = 0; i < nl; i++) hl[i] = sin(3 * X[i] + 1) * cos(2 * Y[i] - Z[i]) + X[i] * Z[i];
    HX_TCALL(hx_disc_from_l_host(d, hl, 0, x));
    for (int64_t i = 0; i < nl; i++) hl[i] = exp(0.3 * X[i]) * (1 + Y[i] * Y[i]) - Z[i];
    HX_TCALL(hx_disc_from_l_host(d, hl, 0, z));
    free(hl);
    double xax;
    HX_TCALL(hx_op_apply(op, x, y, &xax));
    const double sep = gdot(op, x, y);
    HX_ASSERT(fabs(xax - sep) <= 1e-13 * fabs(sep), "fused x.Ax %.17g, separate %.17g", xax, sep);
    HX_TCALL(hx_op_apply(op, z, w, NULL));
    const double zax = gdot(op, z, y), xaz = gdot(op, x, w);
    HX_ASSERT(fabs(zax - xaz) <= 1e-13 * fabs(zax), "z.Ax %.17g, x.Az %.17g", zax, xaz);
  }
  /* the diagonal */
  {
    HX_TCALL(hx_op_diagonal(op, dg));
    HX_TCALL(hx_op_diagonal(hx_disc_op(d0), dg0));
    HX_TCALL(hx_array_axpby(b, n, dg, -1.0, dg0, 1.0));
    HX_TCALL(fill(b, n, 1.0, x));
    const double s = gdot(op, x, dg);
    HX_ASSERT(fabs(s - 6.0) < 1e-13 * 6, "diagonal: Robin part sums to %.17g, expected 6", s);
  }
  /* FP32 */
  {
    hx_op op32;
    HX_TCALL(hx_disc_op_prec(d, HX_F32, &op32));
    float *xf, *yf;
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)(n + 1), (void **)&xf));
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * (size_t)(n + 1), (void **)&yf));
    HX_TCALL(fill(b, n, 1.0, x));
    HX_TCALL(hx_op_apply(op, x, y, NULL));
    HX_TCALL(hx_array_convert(b, n, HX_F32, xf, HX_F64, x));
    HX_TCALL(hx_op_apply_p(op32, xf, yf));
    HX_TCALL(hx_array_convert(b, n, HX_F64, w, HX_F32, yf));
    double *h64 = malloc(sizeof(double) * (size_t)(n + 1)), *h32 = malloc(sizeof(double) * (size_t)(n + 1));
    HX_TCALL(hx_mem_to_host(b, h64, y, sizeof(double) * (size_t)n));
    HX_TCALL(hx_mem_to_host(b, h32, w, sizeof(double) * (size_t)n));
    double mx = 0, df = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(h64[i])), df = fmax(df, fabs(h64[i] - h32[i]));
    MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &df, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    HX_ASSERT(mx > 0.01 && df <= 1e-6 * mx, "FP32 A 1: max diff %.3e of max %.3e", df, mx);
    free(h64), free(h32);
    hx_mem_free(b, (void **)&xf), hx_mem_free(b, (void **)&yf);
    (void)own;
  }
  /* the kernel alone (hx_array_diag_add_list_p): FP64 against a host loop
   * (1e-15 relative), x.R.x over the first mred entries only, appended
   * after a partial already in the slot; FP32 against FP64 (float rounding,
   * 1e-6 relative, and it did round); m = 0 appends 0 */
  {
    const int64_t nn = 1000, m = 37, mred = 20;
    int32_t hidx[37];
    double hr[37], *hx = malloc(sizeof(double) * nn), *hy = malloc(sizeof(double) * nn);
    for (int64_t j = 0; j < m; j++) hidx[j] = (int32_t)(7 + 26 * j), hr[j] = 0.5 + 0.01 * (double)j;
    for (int64_t i = 0; i < nn; i++) hx[i] = sin(0.1 * (double)i) + 1.5, hy[i] = cos(0.3 * (double)i);
    int32_t *didx;
    double *dr, *dx, *dy;
    float *fr, *fx, *fy;
    HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * m, (void **)&didx));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * m, (void **)&dr));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * nn, (void **)&dx));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * nn, (void **)&dy));
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * m, (void **)&fr));
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * nn, (void **)&fx));
    HX_TCALL(hx_mem_alloc(b, sizeof(float) * nn, (void **)&fy));
    HX_TCALL(hx_mem_to_device(b, didx, hidx, sizeof(int32_t) * m));
    HX_TCALL(hx_mem_to_device(b, dr, hr, sizeof(double) * m));
    HX_TCALL(hx_mem_to_device(b, dx, hx, sizeof(double) * nn));
    HX_TCALL(hx_mem_to_device(b, dy, hy, sizeof(double) * nn));
    HX_TCALL(hx_array_convert(b, m, HX_F32, fr, HX_F64, dr));
    HX_TCALL(hx_array_convert(b, nn, HX_F32, fx, HX_F64, dx));
    HX_TCALL(hx_array_convert(b, nn, HX_F32, fy, HX_F64, dy));
    hx_red red;
    HX_TCALL(hx_red_create(b, 2, nn, &red));
    HX_TCALL(hx_array_dot_red(red, 1, nn, dx, dx)); /* a partial already in slot 1 */
    HX_TCALL(hx_array_diag_add_list_p(b, HX_F64, m, mred, didx, dr, dx, dy, red, 1));
    HX_TCALL(hx_array_diag_add_list_p(b, HX_F32, m, mred, didx, fr, fx, fy, red, 0));
    double sl[2];
    HX_TCALL(hx_red_fetch(red, 2, sl));
    double xx = 0, xrx = 0;
    for (int64_t i = 0; i < nn; i++) xx += hx[i] * hx[i];
    for (int64_t j = 0; j < mred; j++) xrx += hr[j] * hx[hidx[j]] * hx[hidx[j]];
    HX_ASSERT(fabs(sl[1] - (xx + xrx)) <= 1e-14 * (xx + xrx), "slot: %.17g, expected %.17g", sl[1], xx + xrx);
    HX_ASSERT(fabs(sl[0] - xrx) <= 1e-6 * xrx && sl[0] != xrx, "FP32 x.R.x %.17g, FP64 %.17g", sl[0], xrx);
    double *gy = malloc(sizeof(double) * nn), *gf = malloc(sizeof(double) * nn);
    HX_TCALL(hx_mem_to_host(b, gy, dy, sizeof(double) * nn));
    HX_TCALL(hx_array_convert(b, nn, HX_F64, dx, HX_F32, fy));
    HX_TCALL(hx_mem_to_host(b, gf, dx, sizeof(double) * nn));
    for (int64_t j = 0; j < m; j++) hy[hidx[j]] += hr[j] * hx[hidx[j]];
    double e64 = 0, e32 = 0;
    for (int64_t i = 0; i < nn; i++) e64 = fmax(e64, fabs(gy[i] - hy[i])), e32 = fmax(e32, fabs(gf[i] - hy[i]));
    HX_ASSERT(e64 <= 1e-15 * 4 && e32 <= 1e-6 * 4 && e32 > 1e-10, "kernel: FP64 max diff %.3e, FP32 %.3e", e64,
              e32);
    HX_TCALL(hx_array_diag_add_list_p(b, HX_F64, 0, 0, NULL, NULL, NULL, NULL, red, 0));
    HX_TCALL(hx_red_fetch(red, 1, sl));
    HX_ASSERT(sl[0] == 0.0, "m = 0: slot %.3e", sl[0]);
    hx_red_destroy(&red);
    free(hx), free(hy), free(gy), free(gf);
    hx_mem_free(b, (void **)&didx), hx_mem_free(b, (void **)&dr), hx_mem_free(b, (void **)&dx);
    hx_mem_free(b, (void **)&dy), hx_mem_free(b, (void **)&fr), hx_mem_free(b, (void **)&fx);
    hx_mem_free(b, (void **)&fy);
  }
  /* alpha < 0 at a node */
  {
    hx_field bad[6] = {{NULL, NULL, NULL},      {NULL, NULL, NULL}, {NULL, NULL, NULL},
                       {x_minus_1, NULL, NULL}, {NULL, NULL, NULL}, {NULL, NULL, NULL}};
    hx_disc_opts ob = o;
    ob.robin_alpha = bad;
    hx_disc db = NULL;
    const int err = hx_disc_create(m, b, &ob, &db);
    HX_ASSERT(err == HX_ERR_INPUT && db == NULL, "negative alpha: error %d", err);
    HX_ASSERT(strstr(hx_error_message(), "alpha on boundary tag 'ymax' is") &&
                  strstr(hx_error_message(), "at the node ("),
              "message: %s", hx_error_message());
    hx_error_clear();
  }
  hx_mem_free(b, (void **)&x), hx_mem_free(b, (void **)&z), hx_mem_free(b, (void **)&y);
  hx_mem_free(b, (void **)&w), hx_mem_free(b, (void **)&dg), hx_mem_free(b, (void **)&dg0);
  HX_TCALL(hx_disc_destroy(&d2));
  HX_TCALL(hx_disc_destroy(&d0));
  HX_TCALL(hx_disc_destroy(&d));
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  if (rank == 0 && !hx_test_failures_) printf("robin operator ok\n");
  MPI_Finalize();
  return hx_test_result();
}
