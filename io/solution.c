/* solution.h5 + solution.xdmf, and the restart reader. Layout: see
 * hx_io_write_solution in hx_io.h.
 *
 * The writer keeps parallel HDF5 and MPI-IO out of every path on which a
 * system call can fail: rank 0 alone creates the file's whole structure with
 * serial HDF5 (contiguous datasets allocated at creation, no fill, the
 * attributes) and closes it; every rank then writes its rows at the
 * datasets' file offsets with plain pwrite, and the ranks agree on the
 * errors. A failed call on any rank returns to hexcg, never to a barrier
 * inside a library: with parallel HDF5 a failed metadata pwrite on one rank
 * inside H5Fflush left the others in HDF5's sync-point barrier, and a failed
 * close in ROMIO's create probe left them in its MPI_Bcast (both hangs,
 * docs/reliability.md). */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_impl.h"

#define HX_SOLUTION_FORMAT "hexcg-solution-1"

static int write_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t st = a >= 0 ? H5Awrite(a, mtype, v) : -1;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  HX_CHECK(st >= 0, HX_ERR_IO, "HDF5: cannot write attribute '%s'", name);
  return HX_SUCCESS;
}

static int write_attr_str(hid_t obj, const char *name, const char *s) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(s) + 1);
  int err = write_attr(obj, name, t, t, s);
  H5Tclose(t);
  return err;
}

/* The Topology and Geometry of a solution file h5 (its name in the folder). */
#define P(...) len += (size_t)snprintf(b + len, len < cap ? cap - len : 0, __VA_ARGS__)
static size_t xdmf_mesh(char *b, size_t cap, size_t len, const char *ind, const char *h5, int p, long long E) {
  long long n = p + 1, npe = n * n * n, N = E * npe, C = E * (long long)p * p * p;
  P("%s<Topology TopologyType=\"Hexahedron\" NumberOfElements=\"%lld\">\n"
    "%s  <DataItem Dimensions=\"%lld 8\" NumberType=\"Int\" Precision=\"8\" "
    "Format=\"HDF\">%s:/mesh/connectivity</DataItem>\n"
    "%s</Topology>\n%s<Geometry GeometryType=\"XYZ\">\n"
    "%s  <DataItem Dimensions=\"%lld 3\" NumberType=\"Float\" Precision=\"8\" "
    "Format=\"HDF\">%s:/mesh/coordinates</DataItem>\n"
    "%s</Geometry>\n",
    ind, C, ind, C, h5, ind, ind, ind, N, h5, ind);
  return len;
}

/* The fields u (exact, error) and rank of a solution file h5. */
static size_t xdmf_fields(char *b, size_t cap, size_t len, const char *ind, const char *h5, int p, long long E,
                          int has_exact) {
  long long n = p + 1, npe = n * n * n, N = E * npe, C = E * (long long)p * p * p;
  const char *fields[] = {"u", "exact", "error"};
  for (int i = 0; i < (has_exact ? 3 : 1); i++)
    P("%s<Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n"
      "%s  <DataItem Dimensions=\"%lld\" NumberType=\"Float\" Precision=\"8\" "
      "Format=\"HDF\">%s:/fields/%s</DataItem>\n"
      "%s</Attribute>\n",
      ind, fields[i], ind, N, h5, fields[i], ind);
  P("%s<Attribute Name=\"rank\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
    "%s  <DataItem Dimensions=\"%lld\" NumberType=\"Int\" Precision=\"4\" "
    "Format=\"HDF\">%s:/fields/rank</DataItem>\n"
    "%s</Attribute>\n",
    ind, ind, C, h5, ind);
  return len;
}

static int write_xdmf(const char *dir, int p, long long E, int has_exact) {
  size_t cap = 4096, len = 0;
  char *b = malloc(cap);
  HX_CHECK(b, HX_ERR_MEM, "out of memory");
  /* the order goes in a comment, not an <Information> element: meshio reads
   * the text of one as its own field-data XML and refuses an empty one, and
   * readers ignore comments (solution.h5 holds it as an attribute) */
  P("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n"
    "    <Grid Name=\"hexcg\" GridType=\"Uniform\">\n"
    "      <!-- hexcg solution, order %d -->\n",
    p);
  len = xdmf_mesh(b, cap, len, "      ", "solution.h5", p, E);
  len = xdmf_fields(b, cap, len, "      ", "solution.h5", p, E, has_exact);
  P("    </Grid>\n  </Domain>\n</Xdmf>\n");
  int err = len < cap ? HX_SUCCESS : HX_ERROR(HX_ERR_INTERNAL, "XDMF text too long");
  char path[4200];
  snprintf(path, sizeof path, "%s/solution.xdmf", dir);
  if (!err) err = hx_io_write_file_atomic(path, b, len);
  free(b);
  return err;
}

int hx_io_write_solution_series(const char *dir, int p, long long E, int has_exact, int n,
                                const char *const *files, const double *times) {
  HX_CHECK(n >= 1, HX_ERR_ARG, "an empty time series");
  size_t cap = 4096 + (size_t)n * 2048, len = 0;
  char *b = malloc(cap);
  HX_CHECK(b, HX_ERR_MEM, "out of memory");
  /* the layout of meshio's XDMF time series (a mesh grid, then the temporal
   * collection whose grids include its topology and geometry), which
   * meshio.xdmf.TimeSeriesReader and ParaView read */
  P("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
    "  <Domain>\n    <Grid Name=\"mesh\" GridType=\"Uniform\">\n"
    "      <!-- hexcg time series, order %d, %d outputs -->\n",
    p, n);
  len = xdmf_mesh(b, cap, len, "      ", files[0], p, E);
  P("    </Grid>\n    <Grid Name=\"hexcg\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
  for (int i = 0; i < n; i++) {
    P("      <Grid Name=\"hexcg\" GridType=\"Uniform\">\n"
      "        <xi:include xpointer=\"xpointer(//Grid[@Name=&quot;mesh&quot;]/*[self::Topology or "
      "self::Geometry])\"/>\n"
      "        <Time Value=\"%.17g\"/>\n",
      times[i]);
    len = xdmf_fields(b, cap, len, "        ", files[i], p, E, has_exact);
    P("      </Grid>\n");
  }
  P("    </Grid>\n  </Domain>\n</Xdmf>\n");
  int err = len < cap ? HX_SUCCESS : HX_ERROR(HX_ERR_INTERNAL, "XDMF text too long");
  char path[4200];
  snprintf(path, sizeof path, "%s/solution.xdmf", dir);
  if (!err) err = hx_io_write_file_atomic(path, b, len);
  free(b);
  HX_CALL(err);
  return HX_SUCCESS;
}
#undef P

/* The datasets of a solution file, in file order. */
enum { DS_COORD, DS_CONN, DS_GID, DS_U, DS_EXACT, DS_ERROR, DS_RANK, DS_N };
static const char *const ds_name[DS_N] = {"/mesh/coordinates", "/mesh/connectivity", "/mesh/element_id",
                                          "/fields/u",         "/fields/exact",      "/fields/error",
                                          "/fields/rank"};

typedef struct {
  long long rows, cols; /* global shape; cols 1: a 1-d dataset */
  size_t esize;         /* bytes per value */
  hid_t type;           /* native: the file holds the bytes of memory, HDF5 converts for readers */
} ds_shape;

static void ds_shapes(int p, long long E, ds_shape s[DS_N]) {
  const long long n = p + 1, npe = n * n * n, cpe = (long long)p * p * p;
  s[DS_COORD] = (ds_shape){E * npe, 3, sizeof(double), H5T_NATIVE_DOUBLE};
  s[DS_CONN] = (ds_shape){E * cpe, 8, sizeof(int64_t), H5T_NATIVE_INT64};
  s[DS_GID] = (ds_shape){E, 1, sizeof(int64_t), H5T_NATIVE_INT64};
  s[DS_U] = s[DS_EXACT] = s[DS_ERROR] = (ds_shape){E * npe, 1, sizeof(double), H5T_NATIVE_DOUBLE};
  s[DS_RANK] = (ds_shape){E * cpe, 1, sizeof(int32_t), H5T_NATIVE_INT32};
}

/* Rank 0, serial HDF5: tmp with every dataset allocated (contiguous, early,
 * never filled) and the root attributes; off[d] the file offset of dataset
 * d's first byte (-1: not written). Closed on every path. */
static int create_structure(const char *path, const char *tmp, int p, long long E, int has_exact,
                            const char *run_id, long long off[DS_N]) {
  ds_shape s[DS_N];
  ds_shapes(p, E, s);
  for (int d = 0; d < DS_N; d++) off[d] = -1;
  hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    char why[512];
    hx_h5_reason(why, sizeof why);
    HX_CALL(HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", tmp, why));
  }
  int err = HX_SUCCESS;
  hid_t g1 = H5Gcreate2(f, "mesh", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g2 = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g1 < 0 || g2 < 0) err = hx_h5_write_error(path, "creating the groups");
  if (g1 >= 0) H5Gclose(g1);
  if (g2 >= 0) H5Gclose(g2);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  for (int d = 0; !err && d < DS_N; d++) {
    if (!has_exact && (d == DS_EXACT || d == DS_ERROR)) continue;
    hsize_t dims[2] = {(hsize_t)s[d].rows, (hsize_t)s[d].cols};
    hid_t fs = H5Screate_simple(s[d].cols > 1 ? 2 : 1, dims, NULL);
    hid_t ds = H5Dcreate2(f, ds_name[d], s[d].type, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    haddr_t a = ds >= 0 ? H5Dget_offset(ds) : HADDR_UNDEF;
    char what[128];
    snprintf(what, sizeof what, "dataset %s", ds_name[d]);
    if (ds < 0)
      err = hx_h5_write_error(path, what);
    else if (a != HADDR_UNDEF)
      off[d] = (long long)a;
    else if (s[d].rows > 0)
      err = HX_ERROR(HX_ERR_IO, "cannot write '%s': HDF5 gave no file offset (%s)", path, what);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(fs);
  }
  H5Pclose(dcpl);
  if (!err) {
    int npe = (p + 1) * (p + 1) * (p + 1);
    int64_t E64 = E;
    err = write_attr(f, "order", H5T_STD_I32LE, H5T_NATIVE_INT, &p);
    if (!err) err = write_attr(f, "num_elements", H5T_STD_I64LE, H5T_NATIVE_INT64, &E64);
    if (!err) err = write_attr(f, "nodes_per_element", H5T_STD_I32LE, H5T_NATIVE_INT, &npe);
    if (!err) err = write_attr(f, "has_exact", H5T_STD_I32LE, H5T_NATIVE_INT, &has_exact);
    if (!err) err = write_attr_str(f, "format", HX_SOLUTION_FORMAT);
    /* a time series file: the run it belongs to (a restart carries only its own run's, issue 53) */
    if (!err && run_id && run_id[0]) err = write_attr_str(f, "run_id", run_id);
  }
  HX_CALL(hx_h5_close(f, path, tmp, err));
  return HX_SUCCESS;
}

/* pwrite all of buf at off (short writes continued, EINTR retried) */
static int pwrite_all(int fd, const void *buf, size_t len, off_t off) {
  const char *b = (const char *)buf;
  while (len > 0) {
    ssize_t w = pwrite(fd, b, len < ((size_t)1 << 30) ? len : ((size_t)1 << 30), off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return -1;
    }
    b += w, len -= (size_t)w, off += w;
  }
  return 0;
}

/* Not collective. This rank's rows of every dataset into tmp (created by rank
 * 0) at the offsets off: rank r's elements follow those of ranks < r. */
static int write_rows(const char *path, const char *tmp, const long long off[DS_N], int rank, int p,
                      int32_t El, long long E, long long eoff, const int64_t *gid, const double *x,
                      const double *y, const double *z, const double *u, const double *exact) {
  const long long n = p + 1, npe = n * n * n, cpe = (long long)p * p * p;
  const size_t Nl = (size_t)El * (size_t)npe, Cl = (size_t)El * (size_t)cpe;
  ds_shape s[DS_N];
  ds_shapes(p, E, s);
  if (El == 0) return HX_SUCCESS;
  double *buf = NULL;
  int64_t *conn = NULL;
  int32_t *rk = NULL;
  HX_CALL(hx_calloc(Nl * 3, sizeof(double), &buf));
  int err = hx_calloc(Cl * 8, sizeof(int64_t), &conn);
  if (!err) err = hx_calloc(Cl, sizeof(int32_t), &rk);
  int fd = err ? -1 : open(tmp, O_WRONLY | O_CLOEXEC);
  if (!err && fd < 0) err = HX_ERROR(HX_ERR_IO, "cannot open '%s' for writing: %s", tmp, strerror(errno));
    /* dataset d, starting at element row r0 of this rank (in units of the dataset's rows per element) */
#define PUT(d, per_elem, data)                                                                              \
  do {                                                                                                      \
    if (!err && off[d] >= 0) {                                                                              \
      const size_t rowb = (size_t)s[d].cols * s[d].esize;                                                   \
      const off_t at = (off_t)off[d] + (off_t)(eoff * (per_elem)) * (off_t)rowb;                            \
      if (pwrite_all(fd, (data), (size_t)El * (size_t)(per_elem)*rowb, at) != 0)                            \
        err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (dataset %s)", path, strerror(errno), ds_name[d]); \
    }                                                                                                       \
  } while (0)
  if (!err) {
    for (size_t i = 0; i < Nl; i++) buf[3 * i] = x[i], buf[3 * i + 1] = y[i], buf[3 * i + 2] = z[i];
    PUT(DS_COORD, npe, buf);
  }
  if (!err) {
    /* sub-hex (a,b,c) of element e: VTK hexahedron corners */
    for (long long e = 0; e < El; e++)
      for (int c = 0; c < p; c++)
        for (int bb = 0; bb < p; bb++)
          for (int a = 0; a < p; a++) {
            int64_t base = (eoff + e) * npe;
            int64_t *h = conn + 8 * (e * cpe + a + p * (bb + (long long)p * c));
#define NODE(i, j, k) (base + (i) + n * ((j) + n * (k)))
            h[0] = NODE(a, bb, c), h[1] = NODE(a + 1, bb, c), h[2] = NODE(a + 1, bb + 1, c),
            h[3] = NODE(a, bb + 1, c);
            h[4] = NODE(a, bb, c + 1), h[5] = NODE(a + 1, bb, c + 1), h[6] = NODE(a + 1, bb + 1, c + 1),
            h[7] = NODE(a, bb + 1, c + 1);
#undef NODE
          }
    PUT(DS_CONN, cpe, conn);
  }
  PUT(DS_GID, 1, gid);
  PUT(DS_U, npe, u);
  if (exact) {
    PUT(DS_EXACT, npe, exact);
    for (size_t i = 0; i < Nl; i++) buf[i] = u[i] - exact[i];
    PUT(DS_ERROR, npe, buf);
  }
  for (size_t i = 0; i < Cl && rk; i++) rk[i] = rank;
  PUT(DS_RANK, cpe, rk);
#undef PUT
  /* each rank's own data reaches the disk (on a distributed file system
   * rank 0's fsync at the commit covers its own writes only) */
  if (!err && fd >= 0 && fdatasync(fd) != 0)
    err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (syncing the rows)", path, strerror(errno));
  if (fd >= 0 && close(fd) != 0 && !err)
    err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (closing the file)", path, strerror(errno));
  free(buf), free(conn), free(rk);
  return err;
}

int hx_io_write_solution(MPI_Comm comm, const char *dir, int p, int32_t E_local, const int64_t *gid,
                         const double *x, const double *y, const double *z, const double *u,
                         const double *exact) {
  HX_CALL(hx_io_write_solution_file(comm, dir, "solution.h5", 1, p, E_local, gid, x, y, z, u, exact));
  return HX_SUCCESS;
}

static int write_file(MPI_Comm comm, const char *dir, const char *name, int xdmf, const char *run_id, int p,
                      int32_t E_local, const int64_t *gid, const double *x, const double *y, const double *z,
                      const double *u, const double *exact);

int hx_io_write_solution_file(MPI_Comm comm, const char *dir, const char *name, int xdmf, int p, int32_t E_local,
                              const int64_t *gid, const double *x, const double *y, const double *z,
                              const double *u, const double *exact) {
  HX_CALL(write_file(comm, dir, name, xdmf, NULL, p, E_local, gid, x, y, z, u, exact));
  return HX_SUCCESS;
}

int hx_io_write_series_file(MPI_Comm comm, const char *dir, const char *name, const char *run_id, int p,
                            int32_t E_local, const int64_t *gid, const double *x, const double *y, const double *z,
                            const double *u, const double *exact) {
  HX_CALL(write_file(comm, dir, name, 0, run_id, p, E_local, gid, x, y, z, u, exact));
  return HX_SUCCESS;
}

int hx_io_solution_run_id(const char *path, char *buf, size_t len) {
  buf[0] = 0;
  H5E_auto2_t efn;
  void *ecd;
  H5Eget_auto2(H5E_DEFAULT, &efn, &ecd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int err = HX_SUCCESS;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) err = HX_ERROR(HX_ERR_INPUT, "cannot read '%s' as HDF5", path);
  if (!err && H5Aexists(f, "run_id") > 0) {
    hid_t a = H5Aopen(f, "run_id", H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
    char tmp[128] = "";
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t) && H5Tget_size(t) < sizeof tmp) {
      hid_t mt = H5Tcopy(t);
      if (H5Aread(a, mt, tmp) >= 0) snprintf(buf, len, "%.*s", (int)H5Tget_size(t), tmp);
      H5Tclose(mt);
    }
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
  }
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, efn, ecd);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int write_file(MPI_Comm comm, const char *dir, const char *name, int xdmf, const char *run_id, int p,
                      int32_t E_local, const int64_t *gid, const double *x, const double *y, const double *z,
                      const double *u, const double *exact) {
  int rank = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_CHECK(p >= 1 && p <= 31 && E_local >= 0, HX_ERR_ARG, "bad order %d or element count %d", p,
           (int)E_local);
  int has_exact = exact != NULL, all_exact = 0, any_exact = 0;
  HX_MPI(MPI_Allreduce(&has_exact, &all_exact, 1, MPI_INT, MPI_MIN, comm));
  HX_MPI(MPI_Allreduce(&has_exact, &any_exact, 1, MPI_INT, MPI_MAX, comm));
  HX_CHECK(all_exact == any_exact, HX_ERR_ARG, "exact given on some ranks only");
  long long El = E_local, eoff = 0, E = 0;
  HX_MPI(MPI_Exscan(&El, &eoff, 1, MPI_LONG_LONG, MPI_SUM, comm));
  if (rank == 0) eoff = 0;
  HX_MPI(MPI_Allreduce(&El, &E, 1, MPI_LONG_LONG, MPI_SUM, comm));

  char path[4200], tmp[4210];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  long long off[DS_N];
  int err = HX_SUCCESS;
  if (rank == 0) {
    /* HDF5 does not recover from a full disk (a failed flush leaves the
     * file half-closed): check the space first, with a margin for the
     * metadata */
    const double n3 = (double)(p + 1) * (p + 1) * (p + 1), c3 = (double)p * p * p;
    double bytes = (double)E * (n3 * 8 * (exact ? 6 : 4) + c3 * (8 * 8 + 4) + 8);
    bytes += 65536 + 0.01 * bytes;
    err = hx_io_reserve_space(path, tmp, bytes);
    /* our messages name the file and the reason; HDF5's own stack is not printed */
    H5E_auto2_t efn;
    void *ecd;
    H5Eget_auto2(H5E_DEFAULT, &efn, &ecd);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!err) err = create_structure(path, tmp, p, E, has_exact, run_id, off);
    H5Eset_auto2(H5E_DEFAULT, efn, ecd);
  }
  err = hx_io_bcast_error(comm, 0, err);
  if (!err) HX_MPI(MPI_Bcast(off, DS_N, MPI_LONG_LONG, 0, comm));
  /* plain system calls only: every rank reaches the agreement */
  if (!err)
    err = hx_io_agree_error(comm,
                            write_rows(path, tmp, off, rank, p, E_local, E, eoff, gid, x, y, z, u, exact));
  if (rank == 0) {
    if (!err && rename(tmp, path) != 0)
      err = HX_ERROR(HX_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (err) remove(tmp);
    if (!err && xdmf) err = write_xdmf(dir, p, E, exact != NULL);
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- restart */
typedef struct {
  int64_t gid, row;
} gid_row;

static int cmp_gid(const void *a, const void *b) {
  int64_t x = ((const gid_row *)a)->gid, y = ((const gid_row *)b)->gid;
  return x < y ? -1 : x > y;
}

typedef struct {
  int64_t row;
  int32_t e;
} row_e;

static int cmp_row(const void *a, const void *b) {
  int64_t x = ((const row_e *)a)->row, y = ((const row_e *)b)->row;
  return x < y ? -1 : x > y;
}

/* A root attribute that must be one integer: H5Aread writes as many values
 * as the attribute holds, so its shape and class are checked first. */
static int read_attr_i64(hid_t f, const char *path, const char *name, int64_t *v) {
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  HX_CHECK(a >= 0, HX_ERR_INPUT, "%s: not a hexcg solution file (no attribute '%s')", path, name);
  hid_t sp = H5Aget_space(a), t = H5Aget_type(a);
  const int one =
      sp >= 0 && t >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Tget_class(t) == H5T_INTEGER;
  herr_t st = one ? H5Aread(a, H5T_NATIVE_INT64, v) : -1;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  H5Aclose(a);
  HX_CHECK(one, HX_ERR_INPUT, "%s: attribute '%s' is not one integer", path, name);
  HX_CHECK(st >= 0, HX_ERR_INPUT, "%s: cannot read attribute '%s'", path, name);
  return HX_SUCCESS;
}

/* Collective. The node coordinates of the file's rows want[0..El) (sorted
 * by row) must be those of this rank's elements: within 1e-9 of the largest
 * coordinate magnitude (the writer stores the same computed points). */
static int check_coords(MPI_Comm comm, hid_t f, const char *path, long long npe, int32_t El, const row_e *want,
                        const int64_t *gid, const double *x, const double *y, const double *z) {
  const size_t nl = (size_t)El * (size_t)npe;
  double *c = NULL, scale = 0;
  int err = hx_calloc(nl * 3 + 1, sizeof(double), &c);
  err = hx_io_agree_error(comm, err);
  if (err) return err;
  for (size_t i = 0; i < nl; i++) scale = fmax(scale, fmax(fabs(x[i]), fmax(fabs(y[i]), fabs(z[i]))));
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, comm));
  hid_t ds = H5Dopen2(f, "/mesh/coordinates", H5P_DEFAULT), fs = -1, ms = -1, dx = -1;
  hsize_t dims[2] = {0, 0};
  if (ds < 0) {
    err = HX_ERROR(HX_ERR_INPUT, "%s: no dataset /mesh/coordinates", path);
  } else {
    fs = H5Dget_space(ds);
    if (H5Sget_simple_extent_ndims(fs) != 2 || (H5Sget_simple_extent_dims(fs, dims, NULL), dims[1] != 3))
      err = HX_ERROR(HX_ERR_INPUT, "%s: /mesh/coordinates has the wrong shape", path);
  }
  err = hx_io_agree_error(comm, err);
  if (!err) {
    H5Sselect_none(fs);
    for (int32_t i = 0; i < El;) {
      int32_t j = i + 1;
      while (j < El && want[j].row == want[j - 1].row + 1) j++;
      hsize_t start[2] = {(hsize_t)(want[i].row * npe), 0}, count[2] = {(hsize_t)((j - i) * npe), 3};
      if (start[0] + count[0] > dims[0]) {
        err = HX_ERROR(HX_ERR_INPUT, "%s: /mesh/coordinates has the wrong size", path);
        break;
      }
      H5Sselect_hyperslab(fs, H5S_SELECT_OR, start, NULL, count, NULL);
      i = j;
    }
    hsize_t m[2] = {nl, 3};
    ms = H5Screate_simple(2, m, NULL);
    if (El == 0 || err) H5Sselect_none(ms), H5Sselect_none(fs);
    dx = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dx, H5FD_MPIO_INDEPENDENT);
    if (H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, dx, c) < 0 && !err)
      err = HX_ERROR(HX_ERR_IO, "%s: cannot read /mesh/coordinates", path);
  }
  const double tol = 1e-9 * scale;
  for (int32_t i = 0; !err && i < El; i++)
    for (long long k = 0; k < npe && !err; k++) {
      const double *a = c + 3 * ((size_t)i * (size_t)npe + (size_t)k);
      const size_t n = (size_t)want[i].e * (size_t)npe + (size_t)k;
      if (fabs(a[0] - x[n]) <= tol && fabs(a[1] - y[n]) <= tol && fabs(a[2] - z[n]) <= tol) continue;
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: the initial guess is on another mesh: node %lld of element %lld is at (%.9g, %.9g, "
                     "%.9g) there and at (%.9g, %.9g, %.9g) here (same mesh and order needed)",
                     path, k, (long long)gid[want[i].e], a[0], a[1], a[2], x[n], y[n], z[n]);
    }
  if (dx >= 0) H5Pclose(dx);
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (ds >= 0) H5Dclose(ds);
  free(c);
  return hx_io_agree_error(comm, err);
}

/* the root attribute format must be HX_SOLUTION_FORMAT */
static int check_format(hid_t f, const char *path) {
  hid_t a = H5Aopen(f, "format", H5P_DEFAULT);
  HX_CHECK(a >= 0, HX_ERR_INPUT, "%s: not a hexcg solution file (no attribute 'format')", path);
  hid_t t = H5Aget_type(a);
  char buf[64] = "";
  int err = HX_SUCCESS;
  if (t < 0 || H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0 || H5Tget_size(t) >= sizeof buf) {
    err = HX_ERROR(HX_ERR_INPUT, "%s: attribute 'format' is not a short text (expected '%s')", path,
                   HX_SOLUTION_FORMAT);
  } else {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, sizeof buf);
    if (H5Aread(a, mt, buf) < 0) err = HX_ERROR(HX_ERR_INPUT, "%s: cannot read attribute 'format'", path);
    H5Tclose(mt);
    buf[sizeof buf - 1] = 0;
  }
  if (t >= 0) H5Tclose(t);
  H5Aclose(a);
  HX_CALL(err);
  for (char *c = buf; *c; c++)
    if (*c < 32 || *c > 126) *c = '?';
  HX_CHECK(!strcmp(buf, HX_SOLUTION_FORMAT), HX_ERR_INPUT,
           "%s: format '%s' is not '%s' (a file of another program or of another hexcg version)", path, buf,
           HX_SOLUTION_FORMAT);
  return HX_SUCCESS;
}

static int read_body(MPI_Comm comm, hid_t f, const char *path, int p, int32_t El, const int64_t *gid,
                     const double *x, const double *y, const double *z, double *u) {
  const long long n = p + 1, npe = n * n * n;
  int64_t fp = 0, fE = 0;
  long long E = 0, el = El;
  HX_MPI(MPI_Allreduce(&el, &E, 1, MPI_LONG_LONG, MPI_SUM, comm));
  int err = check_format(f, path);
  if (!err) err = read_attr_i64(f, path, "order", &fp);
  if (!err) err = read_attr_i64(f, path, "num_elements", &fE);
  if (!err && fp != p)
    err = HX_ERROR(HX_ERR_INPUT,
                   "%s: the initial guess has order %lld, the case has order %d (same mesh and order needed)",
                   path, (long long)fp, p);
  if (!err && fE != E)
    err = HX_ERROR(HX_ERR_INPUT,
                   "%s: the initial guess has %lld elements, the mesh has %lld (same mesh and order needed)",
                   path, (long long)fE, E);
  HX_CALL(hx_io_agree_error(comm, err));

  gid_row *map = NULL;
  row_e *want = NULL;
  int64_t *ids = NULL;
  double *tmp = NULL;
  hid_t ds = -1, fs = -1, ms = -1, dx = -1;
  err = hx_calloc((size_t)E, sizeof(int64_t), &ids);
  if (!err) err = hx_calloc((size_t)E, sizeof(gid_row), &map);
  if (!err) err = hx_calloc((size_t)El, sizeof(row_e), &want);
  if (!err) err = hx_calloc((size_t)El * (size_t)npe, sizeof(double), &tmp);
  err = hx_io_agree_error(comm, err);
  if (err) goto done;
  /* every rank reads the element ids (E int64; H5S_ALL reads the whole
   * dataset, so its shape is checked first) */
  ds = H5Dopen2(f, "/mesh/element_id", H5P_DEFAULT);
  if (ds < 0) {
    err = HX_ERROR(HX_ERR_INPUT, "%s: no dataset /mesh/element_id", path);
  } else {
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[1] = {0};
    if (H5Sget_simple_extent_ndims(sp) != 1 ||
        (H5Sget_simple_extent_dims(sp, dims, NULL), dims[0] != (hsize_t)E))
      err = HX_ERROR(HX_ERR_INPUT, "%s: /mesh/element_id does not hold num_elements = %lld ids", path, E);
    if (sp >= 0) H5Sclose(sp);
    if (!err && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) < 0)
      err = HX_ERROR(HX_ERR_INPUT, "%s: cannot read /mesh/element_id", path);
    H5Dclose(ds), ds = -1;
  }
  for (long long i = 0; !err && i < E; i++) map[i].gid = ids[i], map[i].row = i;
  if (!err) qsort(map, (size_t)E, sizeof *map, cmp_gid);
  for (long long i = 1; !err && i < E; i++)
    if (map[i].gid == map[i - 1].gid)
      err = HX_ERROR(HX_ERR_INPUT, "%s: /mesh/element_id holds element %lld twice (rows %lld and %lld)", path,
                     (long long)map[i].gid, (long long)map[i - 1].row, (long long)map[i].row);
  for (int32_t e = 0; !err && e < El; e++) {
    gid_row key = {gid[e], 0};
    gid_row *hit = bsearch(&key, map, (size_t)E, sizeof *map, cmp_gid);
    if (!hit)
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: the initial guess has no element with global id %lld (a different mesh?)", path,
                     (long long)gid[e]);
    else
      want[e].row = hit->row, want[e].e = e;
  }
  err = hx_io_agree_error(comm, err);
  if (err) goto done;
  qsort(want, (size_t)El, sizeof *want, cmp_row);
  ds = H5Dopen2(f, "/fields/u", H5P_DEFAULT);
  if (ds >= 0) {
    fs = H5Dget_space(ds);
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(fs) != 1 ||
        (H5Sget_simple_extent_dims(fs, dims, NULL), dims[0] != (hsize_t)(E * npe)))
      err = HX_ERROR(HX_ERR_INPUT, "%s: /fields/u has the wrong size", path);
  } else {
    err = HX_ERROR(HX_ERR_INPUT, "%s: no dataset /fields/u", path);
  }
  err = hx_io_agree_error(comm, err);
  if (err) goto done;
  H5Sselect_none(fs);
  for (int32_t i = 0; i < El;) { /* runs of consecutive rows */
    int32_t j = i + 1;
    while (j < El && want[j].row == want[j - 1].row + 1) j++;
    hsize_t start = (hsize_t)(want[i].row * npe), count = (hsize_t)((j - i) * npe);
    H5Sselect_hyperslab(fs, H5S_SELECT_OR, &start, NULL, &count, NULL);
    i = j;
  }
  hsize_t nl = (hsize_t)El * (hsize_t)npe;
  ms = H5Screate_simple(1, &nl, NULL);
  if (El == 0) H5Sselect_none(ms);
  dx = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dx, H5FD_MPIO_INDEPENDENT);
  if (H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, dx, tmp) < 0)
    err = HX_ERROR(HX_ERR_IO, "%s: cannot read /fields/u", path);
  for (int32_t i = 0; !err && i < El; i++)
    memcpy(u + (size_t)want[i].e * (size_t)npe, tmp + (size_t)i * (size_t)npe, sizeof(double) * (size_t)npe);
  err = hx_io_agree_error(comm, err);
  if (!err && x) err = check_coords(comm, f, path, npe, El, want, gid, x, y, z);
done:
  if (dx >= 0) H5Pclose(dx);
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (ds >= 0) H5Dclose(ds);
  free(ids), free(map), free(want), free(tmp);
  return err;
}

int hx_io_read_solution(MPI_Comm comm, const char *path, int p, int32_t E_local, const int64_t *gid,
                        double *u) {
  HX_CALL(hx_io_read_solution_at(comm, path, p, E_local, gid, NULL, NULL, NULL, u));
  return HX_SUCCESS;
}

int hx_io_read_solution_at(MPI_Comm comm, const char *path, int p, int32_t E_local, const int64_t *gid,
                           const double *x, const double *y, const double *z, double *u) {
  H5E_auto2_t fn;
  void *cd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &cd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  /* the file of the folder's result set (a half-moved committed set: its new file) */
  char rpath[4300], mpio[4320];
  hx_outdir_resolve_path(path, rpath, sizeof rpath);
  hid_t f = hx_h5_mpio_name(rpath, mpio, sizeof mpio) ? H5Fopen(mpio, H5F_ACC_RDONLY, fapl) : -1;
  H5Pclose(fapl);
  char why[512] = "";
  if (f < 0) hx_h5_reason(why, sizeof why);
  int err = f >= 0 ? HX_SUCCESS : HX_ERROR(HX_ERR_INPUT, "%s: cannot open as an HDF5 file (%s)", path, why);
  err = hx_io_agree_error(comm, err);
  if (!err) err = read_body(comm, f, path, p, E_local, gid, x, y, z, u);
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, fn, cd);
  HX_CALL(err);
  return HX_SUCCESS;
}
