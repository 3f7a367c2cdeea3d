/* The geometry every consumer sees on a .re2 mesh with curved sides
 * (driven by check_nek.py, which writes the meshes and knows the exact
 * values): for p = 1..pmax one line "p VOLUME AREA" with
 * - VOLUME: the sum of the operator's lumped mass (hx_ax built from the
 *   mesh's map at the order-p GLL nodes, hx_mesh_gll_nodes, as the
 *   discretisation builds it), i.e. the integral of 1 by GLL quadrature of
 *   the isoparametric map;
 * - AREA: the area of the boundary tag TAG by GLL quadrature on the faces'
 *   nodes of hx_mesh_gll_coords (|dX/du x dX/dv| w_a w_b, the derivatives
 *   of the order-p interpolant).
 * usage: t406-nek-geom FILE.re2 TAG PMAX */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hx_kernels.h"
#include "hx_mesh.h"
#include "hx_test.h"

static double tag_area(hx_mesh m, int p, int tag, const double *x, const double *y, const double *z) {
  const int n = p + 1, n3 = n * n * n;
  double t[16], w[16], D[256];
  if (hx_gll(n, t, w) || hx_lagrange_deriv(n, t, D)) return NAN;
  const int32_t *ft = hx_mesh_face_tags(m);
  int idx[256], sa, sb;
  double area = 0;
  for (int32_t e = 0; e < hx_mesh_num_elements(m); e++)
    for (int f = 0; f < 6; f++) {
      if (ft[6 * e + f] != tag) continue;
      hx_mesh_face_nodes(p, f, idx, &sa, &sb);
      const double *X[3] = {x + (size_t)e * n3, y + (size_t)e * n3, z + (size_t)e * n3};
      for (int b = 0; b < n; b++)
        for (int a = 0; a < n; a++) {
          double du[3] = {0, 0, 0}, dv[3] = {0, 0, 0};
          for (int m2 = 0; m2 < n; m2++)
            for (int c = 0; c < 3; c++) {
              du[c] += D[a * n + m2] * X[c][idx[m2 + n * b]];
              dv[c] += D[b * n + m2] * X[c][idx[a + n * m2]];
            }
          const double cr[3] = {du[1] * dv[2] - du[2] * dv[1], du[2] * dv[0] - du[0] * dv[2],
                                du[0] * dv[1] - du[1] * dv[0]};
          area += w[a] * w[b] * sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
        }
      (void)sa, (void)sb;
    }
  return area;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  if (argc != 4) {
    fprintf(stderr, "usage: t406-nek-geom FILE.re2 TAG PMAX\n");
    MPI_Finalize();
    return 2;
  }
  const int pmax = atoi(argv[3]);
  hx_mesh m = NULL;
  HX_TCALL(hx_mesh_create_nek(MPI_COMM_WORLD, argv[1], 1, HX_PART_RCB, &m));
  const int tag = hx_mesh_find_tag(m, argv[2]);
  HX_ASSERT(tag >= 0, "%s: no tag '%s'", argv[1], argv[2]);
  hx_backend b = NULL;
  HX_TCALL(hx_backend_create("cpu", &b));
  const int32_t E = hx_mesh_num_elements(m);
  for (int p = 1; p <= pmax; p++) {
    const int n = p + 1, n3 = n * n * n;
    double *xyz = calloc((size_t)E * n3 * 3 + 1, sizeof(double)),
           *mass = calloc((size_t)E * n3 + 1, sizeof(double));
    double *x = calloc((size_t)E * n3 + 1, sizeof(double)), *y = calloc((size_t)E * n3 + 1, sizeof(double)),
           *z = calloc((size_t)E * n3 + 1, sizeof(double)), *kappa = calloc((size_t)E + 1, sizeof(double));
    HX_ASSERT(xyz && mass && x && y && z && kappa, "out of memory");
    for (int32_t e = 0; e < E; e++) kappa[e] = 1.0;
    HX_TCALL(hx_mesh_gll_nodes(m, p, xyz));
    HX_TCALL(hx_mesh_gll_coords(m, p, x, y, z));
    for (size_t l = 0; l < (size_t)E * n3; l++)
      HX_ASSERT(xyz[3 * l] == x[l] && xyz[3 * l + 1] == y[l] && xyz[3 * l + 2] == z[l],
                "hx_mesh_gll_nodes differs from hx_mesh_gll_coords at entry %zu", l);
    hx_ax ax = NULL;
    HX_TCALL(hx_ax_create(b, p, E, n3, xyz, kappa, NULL, HX_GEO_PRECOMPUTED, &ax));
    HX_TCALL(hx_ax_mass(ax, mass));
    double loc[2] = {0, tag_area(m, p, tag, x, y, z)}, glob[2];
    for (size_t l = 0; l < (size_t)E * n3; l++) loc[0] += mass[l];
    MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d %.17g %.17g\n", p, glob[0], glob[1]);
    hx_ax_destroy(&ax);
    free(xyz), free(mass), free(x), free(y), free(z), free(kappa);
  }
  hx_backend_destroy(&b);
  hx_mesh_destroy(&m);
  MPI_Finalize();
  return hx_test_result();
}
