/* solution.h5 / solution.xdmf written collectively from synthetic elements,
 * read back through the HDF5 API (datasets, attributes, connectivity in VTK
 * hexahedron order, element ids, ranks, error = u - exact), and the restart
 * reader on a different partition (other ranks, other order, a rank without
 * elements), plus its errors (order, element count, unknown element id),
 * each the same on every rank; a time series' mesh file, a float32 frame
 * and a checkpoint's state file (series_case). argv[1]: scratch folder
 * (left for t204.py). */
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hx_io.h"
#include "hx_test.h"

#define P 2
#define N (P + 1)
#define NPE (N * N * N)
#define NE 5

static double field(double x, double y, double z) { return x + 2 * y + 3 * z; }

/* Element g is the unit cube shifted by (g, 0, 0), nodes on a uniform grid. */
static void fill(int E, const int64_t *gid, double *x, double *y, double *z, double *u, double *ex) {
  for (int e = 0; e < E; e++)
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
          int q = e * NPE + i + N * (j + N * k);
          x[q] = (double)gid[e] + (double)i / P, y[q] = (double)j / P, z[q] = (double)k / P;
          ex[q] = field(x[q], y[q], z[q]);
          u[q] = ex[q] + 1e-3 * (double)gid[e];
        }
}

static int write_case(const char *dir, int E, const int64_t *gid, int with_exact) {
  double x[NE * NPE], y[NE * NPE], z[NE * NPE], u[NE * NPE], ex[NE * NPE];
  fill(E, gid, x, y, z, u, ex);
  HX_TCALL(hx_io_write_solution(MPI_COMM_WORLD, dir, P, E, gid, x, y, z, u, with_exact ? ex : NULL));
  return 0;
}

static int read_check(const char *path, int E, const int64_t *gid) {
  double u[NE * NPE + 1];
  HX_TCALL(hx_io_read_solution(MPI_COMM_WORLD, path, P, E, gid, u));
  double x[NE * NPE], y[NE * NPE], z[NE * NPE], uref[NE * NPE], ex[NE * NPE];
  fill(E, gid, x, y, z, uref, ex);
  int bad = 0;
  for (int q = 0; q < E * NPE; q++) bad += u[q] != uref[q];
  HX_ASSERT(bad == 0, "%d restart values differ (%s)", bad, path);
  return 0;
}

static void check_file(const char *dir, int size, int with_exact) {
  char path[1024];
  snprintf(path, sizeof path, "%s/solution.h5", dir);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  HX_ASSERT(f >= 0, "open %s", path);
  if (f < 0) return;
  int order = 0;
  int64_t ne = 0;
  hid_t a = H5Aopen(f, "order", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT, &order), H5Aclose(a);
  a = H5Aopen(f, "num_elements", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT64, &ne), H5Aclose(a);
  HX_ASSERT(order == P && ne == NE, "attributes order %d elements %lld", order, (long long)ne);
  const int C = NE * P * P * P;
  static double xyz[NE * NPE][3], u[NE * NPE], ex[NE * NPE], er[NE * NPE];
  static int64_t conn[NE * P * P * P][8], ids[NE];
  static int32_t rk[NE * P * P * P];
  struct {
    const char *name;
    hid_t type;
    void *buf;
    hsize_t d0, d1;
  } ds[] = {{"/mesh/coordinates", H5T_NATIVE_DOUBLE, xyz, NE * NPE, 3},
            {"/mesh/connectivity", H5T_NATIVE_INT64, conn, (hsize_t)C, 8},
            {"/mesh/element_id", H5T_NATIVE_INT64, ids, NE, 0},
            {"/fields/u", H5T_NATIVE_DOUBLE, u, NE * NPE, 0},
            {"/fields/rank", H5T_NATIVE_INT32, rk, (hsize_t)C, 0},
            {"/fields/exact", H5T_NATIVE_DOUBLE, ex, NE * NPE, 0},
            {"/fields/error", H5T_NATIVE_DOUBLE, er, NE * NPE, 0}};
  for (int i = 0; i < 7; i++) {
    H5E_auto2_t fn;
    void *cd;
    H5Eget_auto2(H5E_DEFAULT, &fn, &cd);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int exists = H5Lexists(f, ds[i].name, H5P_DEFAULT) > 0;
    H5Eset_auto2(H5E_DEFAULT, fn, cd);
    if (i >= 5) {
      HX_ASSERT(exists == with_exact, "%s present iff exact given", ds[i].name);
      if (!exists) continue;
    }
    hid_t d = H5Dopen2(f, ds[i].name, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int nd = H5Sget_simple_extent_dims(s, dims, NULL);
    HX_ASSERT(nd == (ds[i].d1 ? 2 : 1) && dims[0] == ds[i].d0 && dims[1] == ds[i].d1,
              "%s dims %d: %llu x %llu", ds[i].name, nd, (unsigned long long)dims[0],
              (unsigned long long)dims[1]);
    HX_ASSERT(H5Dread(d, ds[i].type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds[i].buf) >= 0, "read %s", ds[i].name);
    H5Sclose(s), H5Dclose(d);
  }
  H5Fclose(f);
  /* every node's value matches its coordinates and its element's id */
  int bad = 0;
  for (int e = 0; e < NE; e++)
    for (int q = 0; q < NPE; q++) {
      const double *c = xyz[e * NPE + q];
      double ref = field(c[0], c[1], c[2]);
      bad += fabs(u[e * NPE + q] - ref - 1e-3 * (double)ids[e]) > 1e-12;
      bad += c[0] < (double)ids[e] || c[0] > (double)ids[e] + 1;
      if (with_exact) bad += ex[e * NPE + q] != ref || er[e * NPE + q] != u[e * NPE + q] - ex[e * NPE + q];
    }
  HX_ASSERT(bad == 0, "%d node values inconsistent", bad);
  /* VTK hexahedron: 0-1 along +x, 0-3 along +y, 0-4 along +z, 2 = 1+3-0, cells of size 1/P */
  bad = 0;
  const double h = 1.0 / P;
  for (int cc = 0; cc < C; cc++) {
    const int64_t *v = conn[cc];
    for (int i = 0; i < 8; i++) bad += v[i] < 0 || v[i] >= NE * NPE || v[i] / NPE != cc / (P * P * P);
    if (bad) break;
    const double *c0 = xyz[v[0]];
    const double off[8][3] = {{0, 0, 0}, {h, 0, 0}, {h, h, 0}, {0, h, 0},
                              {0, 0, h}, {h, 0, h}, {h, h, h}, {0, h, h}};
    for (int i = 0; i < 8; i++)
      for (int d = 0; d < 3; d++) bad += fabs(xyz[v[i]][d] - c0[d] - off[i][d]) > 1e-12;
  }
  HX_ASSERT(bad == 0, "connectivity not in VTK hexahedron order (%d)", bad);
  /* element rows by rank (rank r's elements after those of ranks < r), ids a permutation */
  int seen[NE] = {0};
  for (int e = 0; e < NE; e++)
    if (ids[e] >= 0 && ids[e] < NE) seen[ids[e]]++;
  for (int g = 0; g < NE; g++) HX_ASSERT(seen[g] == 1, "element id %d appears %d times", g, seen[g]);
  for (int cc = 1; cc < C; cc++) HX_ASSERT(rk[cc] >= rk[cc - 1] && rk[cc] < size, "rank field ordered");
  snprintf(path, sizeof path, "%s/solution.xdmf", dir);
  HX_ASSERT(access(path, R_OK) == 0, "%s written", path);
  snprintf(path, sizeof path, "%s/solution.h5.tmp", dir);
  HX_ASSERT(access(path, F_OK) != 0, "no temporary file left");
}

/* A time series (issue 54): series/mesh.h5 and a float32 frame from the
 * interleaved partition A are in global-id order (row r is element r, on
 * any partition), the frame holds the element ids and u, no mesh; a state
 * file (a checkpoint's) holds the ids and u in float64 only; both read back
 * on partition B. */
static int series_case(const char *dir, int E, const int64_t *gid, int Eb, const int64_t *gb, int rank) {
  double x[NE * NPE], y[NE * NPE], z[NE * NPE], u[NE * NPE], ex[NE * NPE];
  fill(E, gid, x, y, z, u, ex);
  long long mb = 0, fb = 0;
  HX_TCALL(hx_io_write_series_mesh(MPI_COMM_WORLD, dir, 1, P, E, gid, x, y, z, &mb));
  HX_TCALL(hx_io_write_series_frame(MPI_COMM_WORLD, dir, "solution_000007.h5", "0123456789abcdef", HX_FIELD_U,
                                    1, P, E, gid, u, ex, &fb));
  HX_TCALL(hx_io_write_state_file(MPI_COMM_WORLD, dir, "u_0.h5", P, E, gid, u));
  char path[1200]; /* dir is at most 1100 characters */
  struct stat sb;
  snprintf(path, sizeof path, "%s/solution_000007.h5", dir);
  HX_ASSERT(stat(path, &sb) == 0 && sb.st_size == fb && fb > 0, "frame size %lld reported %lld",
            (long long)sb.st_size, fb);
  if (rank == 0) {
    static double xyz[NE * NPE][3];
    int64_t ids[NE], fids[NE];
    float fu[NE * NPE];
    snprintf(path, sizeof path, "%s/mesh.h5", dir);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/mesh/element_id", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids), H5Dclose(d);
    d = H5Dopen2(f, "/mesh/coordinates", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, xyz), H5Dclose(d);
    HX_ASSERT(H5Lexists(f, "/fields/rank", H5P_DEFAULT) > 0 && H5Lexists(f, "/fields/u", H5P_DEFAULT) == 0,
              "mesh.h5: the rank, no u");
    H5Fclose(f);
    for (int r = 0; r < NE; r++)
      HX_ASSERT(ids[r] == r && xyz[r * NPE][0] == (double)r, "mesh.h5 row %d: element %lld at x %g", r,
                (long long)ids[r], xyz[r * NPE][0]);
    snprintf(path, sizeof path, "%s/solution_000007.h5", dir);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    HX_ASSERT(H5Lexists(f, "/mesh/coordinates", H5P_DEFAULT) == 0 &&
                  H5Lexists(f, "/fields/exact", H5P_DEFAULT) == 0,
              "the frame: no coordinates, no exact");
    d = H5Dopen2(f, "/fields/u", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    HX_ASSERT(H5Tget_size(t) == 4, "the frame's u: %zu bytes a value", H5Tget_size(t));
    H5Tclose(t);
    H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, fu), H5Dclose(d);
    d = H5Dopen2(f, "/mesh/element_id", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, fids), H5Dclose(d);
    H5Fclose(f);
    int bad = 0;
    for (int r = 0; r < NE; r++) bad += fids[r] != r;
    for (int q = 0; q < NE * NPE; q++) { /* row r: element r, x = r + i/P */
      const int r = q / NPE, i = q % N, j = q / N % N, k = q / (N * N) % N;
      bad += fu[q] != (float)(field(r + (double)i / P, (double)j / P, (double)k / P) + 1e-3 * r);
    }
    HX_ASSERT(bad == 0, "the frame: %d values or ids out of global order", bad);
    snprintf(path, sizeof path, "%s/u_0.h5", dir);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    HX_ASSERT(H5Lexists(f, "/mesh/coordinates", H5P_DEFAULT) == 0 &&
                  H5Lexists(f, "/mesh/connectivity", H5P_DEFAULT) == 0 &&
                  H5Lexists(f, "/fields/rank", H5P_DEFAULT) == 0 &&
                  H5Lexists(f, "/fields/u", H5P_DEFAULT) > 0,
              "the state file: element ids and u only");
    H5Fclose(f);
  }
  /* read back on partition B: the state file bit for bit, the frame as float32 */
  snprintf(path, sizeof path, "%s/u_0.h5", dir);
  if (read_check(path, Eb, gb)) return 1;
  double ub[NE * NPE + 1], xb[NE * NPE], yb[NE * NPE], zb[NE * NPE], uref[NE * NPE], exb[NE * NPE];
  snprintf(path, sizeof path, "%s/solution_000007.h5", dir);
  HX_TCALL(hx_io_read_solution(MPI_COMM_WORLD, path, P, Eb, gb, ub));
  fill(Eb, gb, xb, yb, zb, uref, exb);
  int bad = 0;
  for (int q = 0; q < Eb * NPE; q++) bad += ub[q] != (double)(float)uref[q];
  HX_ASSERT(bad == 0, "the frame read back: %d values differ", bad);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  const char *scratch = argc > 1 ? argv[1] : "t204";
  char dA[1024], dB[1024], pA[1100], pB[1100];
  snprintf(dA, sizeof dA, "%s/exact", scratch);
  snprintf(dB, sizeof dB, "%s/noexact", scratch);
  snprintf(pA, sizeof pA, "%s/solution.h5", dA);
  snprintf(pB, sizeof pB, "%s/solution.h5", dB);
  if (rank == 0) mkdir(scratch, 0777), mkdir(dA, 0777), mkdir(dB, 0777);
  MPI_Barrier(MPI_COMM_WORLD);

  /* partition A (write): rank 0 {4, 1, 3}, rank 1 {0, 2}; one rank: all */
  int64_t a0[] = {4, 1, 3}, a1[] = {0, 2}, all[] = {4, 1, 3, 0, 2};
  const int64_t *ga = size == 1 ? all : rank == 0 ? a0 : rank == 1 ? a1 : NULL;
  int Ea = size == 1 ? 5 : rank == 0 ? 3 : rank == 1 ? 2 : 0;
  if (write_case(dA, Ea, ga, 1)) goto end;
  /* rank 0 holds every element, the others none */
  if (write_case(dB, rank == 0 ? 5 : 0, all, 0)) goto end;
  if (rank == 0) check_file(dA, size, 1), check_file(dB, size, 0);

  /* partition B (read): rank 0 {0, 2, 4} in order, rank 1 {3, 1}; one rank: all, reversed */
  int64_t b0[] = {0, 2, 4}, b1[] = {3, 1}, rev[] = {2, 0, 3, 1, 4};
  const int64_t *gb = size == 1 ? rev : rank == 0 ? b0 : rank == 1 ? b1 : NULL;
  int Eb = size == 1 ? 5 : rank == 0 ? 3 : rank == 1 ? 2 : 0;
  if (read_check(pA, Eb, gb)) goto end;
  if (read_check(pB, Eb, gb)) goto end;
  char dS[1100];
  snprintf(dS, sizeof dS, "%s/series", scratch);
  if (rank == 0) mkdir(dS, 0777);
  MPI_Barrier(MPI_COMM_WORLD);
  if (series_case(dS, Ea, ga, Eb, gb, rank)) goto end;

  /* errors: the same message on every rank */
  double u[6 * 4 * 4 * 4];
  int err = hx_io_read_solution(MPI_COMM_WORLD, pA, P + 1, Eb, gb, u);
  char msg[2048];
  snprintf(msg, sizeof msg,
           "%s: the initial guess has order %d, the case has order %d (same mesh and order needed)", pA, P,
           P + 1);
  HX_ASSERT(err == HX_ERR_INPUT && !strcmp(hx_error_message(), msg), "order mismatch: %s",
            hx_error_message());
  hx_error_clear();
  int64_t four[] = {0, 1, 2, 3};
  err = hx_io_read_solution(MPI_COMM_WORLD, pA, P, rank == 0 ? 4 : 0, four, u);
  snprintf(msg, sizeof msg,
           "%s: the initial guess has 5 elements, the mesh has 4 (same mesh and order needed)", pA);
  HX_ASSERT(err == HX_ERR_INPUT && !strcmp(hx_error_message(), msg), "element count: %s", hx_error_message());
  hx_error_clear();
  int64_t c_last[] = {0, 1, 2, 3, 99}, c0[] = {0, 1, 2}, c1[] = {3, 99};
  const int64_t *gc = size == 1 ? c_last : rank == 0 ? c0 : rank == 1 ? c1 : NULL;
  err = hx_io_read_solution(MPI_COMM_WORLD, pA, P, Eb, gc, u);
  snprintf(msg, sizeof msg, "%s: the initial guess has no element with global id 99 (a different mesh?)", pA);
  HX_ASSERT(err == HX_ERR_INPUT && !strcmp(hx_error_message(), msg), "rank %d unknown id: %s", rank,
            hx_error_message());
  hx_error_clear();
  err = hx_io_read_solution(MPI_COMM_WORLD, "no/such/solution.h5", P, Eb, gb, u);
  HX_ASSERT(err == HX_ERR_INPUT && strstr(hx_error_message(), "no/such/solution.h5: cannot open"),
            "missing file: %s", hx_error_message());
  hx_error_clear();
end:;
  return hx_test_mpi_finish(0);
}
