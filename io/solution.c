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
#include <sys/stat.h>
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

/* The Topology and Geometry of a mesh file h5 (its name in the folder). */
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

/* The node fields of fields (HX_FIELD_*) in file h5 (float32 when fp32) and
 * the cell field rank in file rank_h5. */
static size_t xdmf_fields(char *b, size_t cap, size_t len, const char *ind, const char *h5,
                          const char *rank_h5, int p, long long E, unsigned fields, int fp32) {
  long long n = p + 1, npe = n * n * n, N = E * npe, C = E * (long long)p * p * p;
  const char *names[] = {"u", "exact", "error"};
  const unsigned bits[] = {HX_FIELD_U, HX_FIELD_EXACT, HX_FIELD_ERROR};
  for (int i = 0; i < 3; i++)
    if (fields & bits[i])
      P("%s<Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        "%s  <DataItem Dimensions=\"%lld\" NumberType=\"Float\" Precision=\"%d\" "
        "Format=\"HDF\">%s:/fields/%s</DataItem>\n"
        "%s</Attribute>\n",
        ind, names[i], ind, N, fp32 ? 4 : 8, h5, names[i], ind);
  if (fields & HX_FIELD_RANK)
    P("%s<Attribute Name=\"rank\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
      "%s  <DataItem Dimensions=\"%lld\" NumberType=\"Int\" Precision=\"4\" "
      "Format=\"HDF\">%s:/fields/rank</DataItem>\n"
      "%s</Attribute>\n",
      ind, ind, C, rank_h5, ind);
  return len;
}

static int write_xdmf(const char *dir, int p, long long E, unsigned fields, int fp32) {
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
  len = xdmf_fields(b, cap, len, "      ", "solution.h5", "solution.h5", p, E, fields, fp32);
  P("    </Grid>\n  </Domain>\n</Xdmf>\n");
  int err = hx_io_write_text(dir, "solution.xdmf", b, len, cap, "XDMF text");
  return err;
}

/* the node fields a frame file holds and whether they are float32 (a frame
 * carried from an earlier segment of another output.fields or precision is
 * described as it is); the case's when the file cannot be read */
static void frame_fields(const char *dir, const char *file, unsigned *fields, int *fp32) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  H5E_auto2_t efn;
  void *ecd;
  H5Eget_auto2(H5E_DEFAULT, &efn, &ecd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f >= 0) {
    const char *names[] = {"/fields/u", "/fields/exact", "/fields/error"};
    const unsigned bits[] = {HX_FIELD_U, HX_FIELD_EXACT, HX_FIELD_ERROR};
    unsigned have = *fields & HX_FIELD_RANK;
    for (int i = 0; i < 3; i++) {
      if (H5Lexists(f, "/fields", H5P_DEFAULT) <= 0 || H5Lexists(f, names[i], H5P_DEFAULT) <= 0) continue;
      have |= bits[i];
      hid_t d = H5Dopen2(f, names[i], H5P_DEFAULT), t = d >= 0 ? H5Dget_type(d) : -1;
      if (t >= 0) *fp32 = H5Tget_size(t) == 4, H5Tclose(t);
      if (d >= 0) H5Dclose(d);
    }
    *fields = have;
    H5Fclose(f);
  }
  H5Eset_auto2(H5E_DEFAULT, efn, ecd);
}

int hx_io_write_solution_series(const char *dir, int p, long long E, unsigned fields, int fp32, int n,
                                const char *const *files, const double *times) {
  HX_CHECK(n >= 1, HX_ERR_ARG, "an empty time series");
  size_t cap = 4096 + (size_t)n * 2048, len = 0;
  char *b = malloc(cap);
  HX_CHECK(b, HX_ERR_MEM, "out of memory");
  /* the layout of meshio's XDMF time series (a mesh grid, then the temporal
   * collection whose grids include its topology and geometry), which
   * meshio.xdmf.TimeSeriesReader and ParaView read; the mesh (and the rank,
   * constant in time) is in series/mesh.h5 alone, the frames hold the fields */
  const char *mesh = "series/" HX_SERIES_MESH_NAME;
  P("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
    "  <Domain>\n    <Grid Name=\"mesh\" GridType=\"Uniform\">\n"
    "      <!-- hexcg time series, order %d, %d outputs -->\n",
    p, n);
  len = xdmf_mesh(b, cap, len, "      ", mesh, p, E);
  P("    </Grid>\n    <Grid Name=\"hexcg\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
  for (int i = 0; i < n; i++) {
    P("      <Grid Name=\"hexcg\" GridType=\"Uniform\">\n"
      "        <xi:include xpointer=\"xpointer(//Grid[@Name=&quot;mesh&quot;]/*[self::Topology or "
      "self::Geometry])\"/>\n"
      "        <Time Value=\"%.17g\"/>\n",
      times[i]);
    unsigned ff = fields;
    int f32 = fp32;
    frame_fields(dir, files[i], &ff, &f32);
    len = xdmf_fields(b, cap, len, "        ", files[i], mesh, p, E, ff, f32);
    P("      </Grid>\n");
  }
  P("    </Grid>\n  </Domain>\n</Xdmf>\n");
  int err = hx_io_write_text(dir, "solution.xdmf", b, len, cap, "XDMF text");
  HX_CALL(err);
  return HX_SUCCESS;
}
#undef P

/* The datasets of a solution file, in file order. */
enum { DS_COORD, DS_CONN, DS_GID, DS_U, DS_EXACT, DS_ERROR, DS_RANK, DS_N };
static const char *const ds_name[DS_N] = {"/mesh/coordinates", "/mesh/connectivity", "/mesh/element_id",
                                          "/fields/u",         "/fields/exact",      "/fields/error",
                                          "/fields/rank"};
#define DSB(d) (1u << (d))

/* What one file holds and how. */
typedef struct {
  unsigned ds;        /* DSB(d): dataset d is written */
  int fp32;           /* u, exact, error as float32 (output.precision) */
  int sorted;         /* element rows in global-id order (any partition writes the same file) */
  int xdmf;           /* dir/solution.xdmf for this file alone */
  unsigned fields;    /* ... its fields (HX_FIELD_*) */
  const char *run_id; /* root attribute run_id (NULL or "": none) */
  long long bytes;    /* out: the file's size */
} wspec;

typedef struct {
  long long rows, cols; /* global shape; cols 1: a 1-d dataset */
  size_t esize;         /* bytes per value */
  hid_t type;           /* native: the file holds the bytes of memory, HDF5 converts for readers */
} ds_shape;

static void ds_shapes(int p, long long E, int fp32, ds_shape s[DS_N]) {
  const long long n = p + 1, npe = n * n * n, cpe = (long long)p * p * p;
  s[DS_COORD] = (ds_shape){E * npe, 3, sizeof(double), H5T_NATIVE_DOUBLE};
  s[DS_CONN] = (ds_shape){E * cpe, 8, sizeof(int64_t), H5T_NATIVE_INT64};
  s[DS_GID] = (ds_shape){E, 1, sizeof(int64_t), H5T_NATIVE_INT64};
  s[DS_U] = s[DS_EXACT] = s[DS_ERROR] = fp32 ? (ds_shape){E * npe, 1, sizeof(float), H5T_NATIVE_FLOAT}
                                             : (ds_shape){E * npe, 1, sizeof(double), H5T_NATIVE_DOUBLE};
  s[DS_RANK] = (ds_shape){E * cpe, 1, sizeof(int32_t), H5T_NATIVE_INT32};
}

/* Rank 0, serial HDF5: tmp created (truncated) in *f. */
static int create_tmp(const char *tmp, hid_t *f) {
  *f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (*f < 0) {
    char why[512];
    hx_h5_reason(why, sizeof why);
    HX_CALL(HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", tmp, why));
  }
  return HX_SUCCESS;
}

/* The creation properties of a dataset whose rows the ranks write
 * themselves: contiguous, allocated early, never filled. */
static hid_t contiguous_dcpl(void) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  return dcpl;
}

/* Dataset name of file f (dims[0] rows, of dims[1] columns where ndim is
 * 2) allocated with dcpl, *off its file offset (none where HDF5 gives an
 * empty one none); what names it in the messages about path. */
static int alloc_dataset(hid_t f, const char *path, const char *name, const char *what, hid_t type, int ndim,
                         const hsize_t dims[2], hid_t dcpl, long long *off) {
  int err = HX_SUCCESS;
  hid_t fs = H5Screate_simple(ndim, dims, NULL);
  hid_t ds = H5Dcreate2(f, name, type, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  haddr_t a = ds >= 0 ? H5Dget_offset(ds) : HADDR_UNDEF;
  if (ds < 0)
    err = hx_h5_write_error(path, what);
  else if (a != HADDR_UNDEF)
    *off = (long long)a;
  else if (dims[0] > 0)
    err = HX_ERROR(HX_ERR_IO, "cannot write '%s': HDF5 gave no file offset (dataset %s)", path, name);
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(fs);
  return err;
}

/* Rank 0, serial HDF5: tmp with every dataset of w allocated (contiguous,
 * early, never filled) and the root attributes; off[d] the file offset of
 * dataset d's first byte (-1: not written). Closed on every path. */
static int create_structure(const char *path, const char *tmp, int p, long long E, const wspec *w,
                            long long off[DS_N]) {
  ds_shape s[DS_N];
  ds_shapes(p, E, w->fp32, s);
  for (int d = 0; d < DS_N; d++) off[d] = -1;
  hid_t f;
  HX_CALL(create_tmp(tmp, &f));
  int err = HX_SUCCESS;
  hid_t g1 = H5Gcreate2(f, "mesh", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g2 = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g1 < 0 || g2 < 0) err = hx_h5_write_error(path, "creating the groups");
  if (g1 >= 0) H5Gclose(g1);
  if (g2 >= 0) H5Gclose(g2);
  hid_t dcpl = contiguous_dcpl();
  for (int d = 0; !err && d < DS_N; d++) {
    if (!(w->ds & DSB(d))) continue;
    hsize_t dims[2] = {(hsize_t)s[d].rows, (hsize_t)s[d].cols};
    char what[128];
    snprintf(what, sizeof what, "dataset %s", ds_name[d]);
    err = alloc_dataset(f, path, ds_name[d], what, s[d].type, s[d].cols > 1 ? 2 : 1, dims, dcpl, &off[d]);
  }
  H5Pclose(dcpl);
  if (!err) {
    int npe = (p + 1) * (p + 1) * (p + 1);
    int has_exact = (w->ds & DSB(DS_EXACT)) != 0;
    int64_t E64 = E;
    err = write_attr(f, "order", H5T_STD_I32LE, H5T_NATIVE_INT, &p);
    if (!err) err = write_attr(f, "num_elements", H5T_STD_I64LE, H5T_NATIVE_INT64, &E64);
    if (!err) err = write_attr(f, "nodes_per_element", H5T_STD_I32LE, H5T_NATIVE_INT, &npe);
    if (!err) err = write_attr(f, "has_exact", H5T_STD_I32LE, H5T_NATIVE_INT, &has_exact);
    if (!err) err = write_attr_str(f, "format", HX_SOLUTION_FORMAT);
    /* a time series file: the run it belongs to (a restart carries only its own run's, issue 53) */
    if (!err && w->run_id && w->run_id[0]) err = write_attr_str(f, "run_id", w->run_id);
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

/* Collective. row[e]: the file row of local element e, its global id's
 * place among all the ids (the same file on any partition). */
static int sorted_rows(MPI_Comm comm, int32_t El, const int64_t *gid, long long E, int64_t *row) {
  int size = 1;
  HX_MPI(MPI_Comm_size(comm, &size));
  int *cnt = NULL, *dsp = NULL, n = (int)El;
  int64_t *all = NULL;
  int err = hx_calloc((size_t)size, sizeof(int), &cnt);
  if (!err) err = hx_calloc((size_t)size, sizeof(int), &dsp);
  if (!err) err = hx_calloc((size_t)E + 1, sizeof(int64_t), &all);
  err = hx_io_agree_error(comm, err);
  if (!err) {
    HX_MPI(MPI_Allgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, comm));
    for (int r = 1; r < size; r++) dsp[r] = dsp[r - 1] + cnt[r - 1];
    HX_MPI(MPI_Allgatherv(gid, n, MPI_INT64_T, all, cnt, dsp, MPI_INT64_T, comm));
    qsort(all, (size_t)E, sizeof *all, hx_io_cmp_key);
    for (int32_t e = 0; e < El; e++) {
      const int64_t *hit = bsearch(&gid[e], all, (size_t)E, sizeof *all, hx_io_cmp_key);
      row[e] = hit ? hit - all : 0;
    }
  }
  free(cnt), free(dsp), free(all);
  return err;
}

/* Rank 0: the written file tmp renamed to path (*bytes: its size), or
 * removed after an error (err: the error so far); the error. */
static int publish_tmp(const char *tmp, const char *path, int err, long long *bytes) {
  struct stat sb;
  if (!err && stat(tmp, &sb) == 0) *bytes = (long long)sb.st_size;
  if (!err && rename(tmp, path) != 0)
    err = HX_ERROR(HX_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
  if (err) remove(tmp);
  return err;
}

/* create_structure's and vtk_structure's arguments for make_structure */
typedef struct {
  const char *path, *tmp;
  int p;
  long long E;
  const wspec *w;
} h5_make;
static int create_structure(const char *path, const char *tmp, int p, long long E, const wspec *w,
                            long long off[DS_N]);
static int h5_create(const void *ctx, long long *off) {
  const h5_make *m = ctx;
  return create_structure(m->path, m->tmp, m->p, m->E, m->w, off);
}
typedef struct {
  const char *path, *tmp;
  int p;
  long long E;
  unsigned fields;
  int fp32;
  const char *run_id, *mesh_file;
} vtk_make;
static int vtk_structure(const char *path, const char *tmp, int p, long long E, unsigned fields, int fp32,
                         const char *run_id, const char *mesh_file, long long *off);
static int vtk_create(const void *ctx, long long *off) {
  const vtk_make *m = ctx;
  return vtk_structure(m->path, m->tmp, m->p, m->E, m->fields, m->fp32, m->run_id, m->mesh_file, off);
}

/* The file's structure made by rank 0: bytes reserved first (HDF5 does
 * not recover from a full disk: a failed flush leaves the file half-closed;
 * a margin for the metadata added), then create(ctx, off) with HDF5's own
 * error stack silenced (our messages name the file and the reason). Every
 * rank: rank 0's outcome, and the noff dataset offsets it wrote to off. */
static int make_structure(MPI_Comm comm, int rank, const char *path, const char *tmp, double bytes,
                          int (*create)(const void *ctx, long long *off), const void *ctx, long long *off,
                          int noff) {
  int err = HX_SUCCESS;
  if (rank == 0) {
    err = hx_io_reserve_space(path, tmp, bytes + 65536 + 0.01 * bytes);
    H5E_auto2_t efn;
    void *ecd;
    H5Eget_auto2(H5E_DEFAULT, &efn, &ecd);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!err) err = create(ctx, off);
    H5Eset_auto2(H5E_DEFAULT, efn, ecd);
  }
  err = hx_io_bcast_error(comm, 0, err);
  if (!err) HX_MPI(MPI_Bcast(off, noff, MPI_LONG_LONG, 0, comm));
  return err;
}

/* tmp (made by rank 0) opened for this rank's rows in *fd. */
static int open_rows(const char *tmp, int *fd) {
  *fd = open(tmp, O_WRONLY | O_CLOEXEC);
  if (*fd < 0) return HX_ERROR(HX_ERR_IO, "cannot open '%s' for writing: %s", tmp, strerror(errno));
  return HX_SUCCESS;
}

/* The rows written at fd synced and fd closed (-1: none); err: the error
 * so far, kept before any of these. Each rank's own data reaches the disk
 * (on a distributed file system rank 0's fsync at the commit covers its own
 * writes only). */
static int close_rows(int fd, const char *path, int err) {
  if (!err && fd >= 0 && fdatasync(fd) != 0)
    err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (syncing the rows)", path, strerror(errno));
  if (fd >= 0 && close(fd) != 0 && !err)
    err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (closing the file)", path, strerror(errno));
  return err;
}

/* One dataset's rows of this rank's El elements (eb bytes each) into the
 * file open at fd, the dataset starting at off: local element e at file row
 * row[e], a run of elements whose rows follow each other in one write. */
static int put_rows(int fd, const char *path, const char *ds, long long off, int32_t El, const int64_t *row,
                    size_t eb, const void *data) {
  for (int32_t i = 0; i < El;) {
    int32_t j = i + 1;
    while (j < El && row[j] == row[j - 1] + 1) j++;
    if (pwrite_all(fd, (const char *)data + (size_t)i * eb, (size_t)(j - i) * eb, (off_t)off + (off_t)row[i] * (off_t)eb) !=
        0)
      return HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (dataset %s)", path, strerror(errno), ds);
    i = j;
  }
  return HX_SUCCESS;
}

/* Not collective. This rank's rows of every dataset of w into tmp (created by
 * rank 0) at the offsets off: local element e at file row row[e]. */
static int write_rows(const char *path, const char *tmp, const long long off[DS_N], const wspec *w, int rank,
                      int p, int32_t El, long long E, const int64_t *row, const int64_t *gid, const double *x,
                      const double *y, const double *z, const double *u, const double *exact) {
  const long long n = p + 1, npe = n * n * n, cpe = (long long)p * p * p;
  const size_t Nl = (size_t)El * (size_t)npe, Cl = (size_t)El * (size_t)cpe;
  ds_shape s[DS_N];
  ds_shapes(p, E, w->fp32, s);
  if (El == 0) return HX_SUCCESS;
  double *buf = NULL;
  float *fb = NULL;
  int64_t *conn = NULL;
  int32_t *rk = NULL;
  int err = hx_calloc(Nl * 3, sizeof(double), &buf);
  if (!err && w->fp32) err = hx_calloc(Nl, sizeof(float), &fb);
  if (!err && (w->ds & DSB(DS_CONN))) err = hx_calloc(Cl * 8, sizeof(int64_t), &conn);
  if (!err && (w->ds & DSB(DS_RANK))) err = hx_calloc(Cl, sizeof(int32_t), &rk);
  int fd = -1;
  if (!err) err = open_rows(tmp, &fd);
    /* dataset d: runs of elements whose rows follow each other, per_elem rows each */
#define PUT(d, per_elem, data)                                                                         \
  do {                                                                                                 \
    if (!err && off[d] >= 0 && (w->ds & DSB(d)))                                                       \
      err = put_rows(fd, path, ds_name[d], off[d], El, row, (size_t)(per_elem) * ((size_t)s[d].cols * s[d].esize), \
                     (data));                                                                          \
  } while (0)
    /* a node field, converted to float32 when asked */
#define PUT_FIELD(d, v)                                      \
  do {                                                       \
    if (w->fp32) {                                           \
      for (size_t i = 0; i < Nl; i++) fb[i] = (float)(v)[i]; \
      PUT(d, npe, fb);                                       \
    } else {                                                 \
      PUT(d, npe, (v));                                      \
    }                                                        \
  } while (0)
  if (!err && (w->ds & DSB(DS_COORD))) {
    for (size_t i = 0; i < Nl; i++) buf[3 * i] = x[i], buf[3 * i + 1] = y[i], buf[3 * i + 2] = z[i];
    PUT(DS_COORD, npe, buf);
  }
  if (!err && conn) {
    /* sub-hex (a,b,c) of element e: VTK hexahedron corners */
    for (long long e = 0; e < El; e++)
      for (int c = 0; c < p; c++)
        for (int bb = 0; bb < p; bb++)
          for (int a = 0; a < p; a++) {
            int64_t base = row[e] * npe;
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
  if (w->ds & DSB(DS_U)) PUT_FIELD(DS_U, u);
  if (exact && (w->ds & DSB(DS_EXACT))) PUT_FIELD(DS_EXACT, exact);
  if (exact && (w->ds & DSB(DS_ERROR))) {
    for (size_t i = 0; i < Nl; i++) buf[i] = u[i] - exact[i];
    PUT_FIELD(DS_ERROR, buf);
  }
  for (size_t i = 0; i < Cl && rk; i++) rk[i] = rank;
  if (rk) PUT(DS_RANK, cpe, rk);
#undef PUT_FIELD
#undef PUT
  err = close_rows(fd, path, err);
  free(buf), free(fb), free(conn), free(rk);
  return err;
}

/* Collective, the writers' start: this rank (*rank), the order and element
 * count checked, and whether exact is given (*any: on every rank or on
 * none; some ranks only is an argument error). */
static int writer_start(MPI_Comm comm, int p, int32_t E_local, const double *exact, int *rank, int *any) {
  *rank = 0;
  HX_MPI(MPI_Comm_rank(comm, rank));
  HX_CHECK(p >= 1 && p <= 31 && E_local >= 0, HX_ERR_ARG, "bad order %d or element count %d", p,
           (int)E_local);
  int has = exact != NULL, all = 0;
  *any = 0;
  HX_MPI(MPI_Allreduce(&has, &all, 1, MPI_INT, MPI_MIN, comm));
  HX_MPI(MPI_Allreduce(&has, any, 1, MPI_INT, MPI_MAX, comm));
  HX_CHECK(all == *any, HX_ERR_ARG, "exact given on some ranks only");
  return HX_SUCCESS;
}

/* Collective: the file's element count *E and this rank's rows (*row,
 * E_local + 1 entries, free() it): by global element id (sorted) or in rank
 * order. */
static int file_rows(MPI_Comm comm, int32_t E_local, const int64_t *gid, int sorted, long long *E,
                     int64_t **row) {
  long long El = E_local, eoff = 0;
  int rank = 0;
  *row = NULL, *E = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Exscan(&El, &eoff, 1, MPI_LONG_LONG, MPI_SUM, comm));
  if (rank == 0) eoff = 0;
  HX_MPI(MPI_Allreduce(&El, E, 1, MPI_LONG_LONG, MPI_SUM, comm));
  HX_CALL(hx_io_agree_error(comm, hx_calloc((size_t)El + 1, sizeof(int64_t), row)));
  int err = HX_SUCCESS;
  if (sorted)
    err = sorted_rows(comm, E_local, gid, *E, *row);
  else
    for (long long e = 0; e < El; e++) (*row)[e] = eoff + e;
  if (err) {
    free(*row);
    *row = NULL;
    HX_CALL(err);
  }
  return HX_SUCCESS;
}

/* Collective. dir/name as w says (rank 0 creates, every rank writes its rows). */
static int write_file(MPI_Comm comm, const char *dir, const char *name, wspec *w, int p, int32_t E_local,
                      const int64_t *gid, const double *x, const double *y, const double *z, const double *u,
                      const double *exact) {
  int rank, any_exact;
  HX_CALL(writer_start(comm, p, E_local, exact, &rank, &any_exact));
  if (!any_exact)
    w->ds &= ~(DSB(DS_EXACT) | DSB(DS_ERROR)), w->fields &= ~(unsigned)(HX_FIELD_EXACT | HX_FIELD_ERROR);
  long long E;
  int64_t *row;
  int err = HX_SUCCESS;
  HX_CALL(file_rows(comm, E_local, gid, w->sorted, &E, &row));

  char path[4200], tmp[4210];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  long long off[DS_N];
  ds_shape s[DS_N];
  ds_shapes(p, E, w->fp32, s);
  double need = 0;
  for (int d = 0; d < DS_N; d++)
    if (w->ds & DSB(d)) need += (double)s[d].rows * (double)s[d].cols * (double)s[d].esize;
  const h5_make hm = {path, tmp, p, E, w};
  err = make_structure(comm, rank, path, tmp, need, h5_create, &hm, off, DS_N);
  /* plain system calls only: every rank reaches the agreement */
  if (!err)
    err = hx_io_agree_error(comm,
                            write_rows(path, tmp, off, w, rank, p, E_local, E, row, gid, x, y, z, u, exact));
  free(row);
  long long bytes = 0;
  if (rank == 0) {
    err = publish_tmp(tmp, path, err, &bytes);
    if (!err && w->xdmf) err = write_xdmf(dir, p, E, w->fields, w->fp32);
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  HX_MPI(MPI_Bcast(&bytes, 1, MPI_LONG_LONG, 0, comm));
  w->bytes = bytes;
  return HX_SUCCESS;
}

/* the datasets of the node fields in fields */
static unsigned field_ds(unsigned fields) {
  return (fields & HX_FIELD_U ? DSB(DS_U) : 0) | (fields & HX_FIELD_EXACT ? DSB(DS_EXACT) : 0) |
         (fields & HX_FIELD_ERROR ? DSB(DS_ERROR) : 0);
}

int hx_io_write_solution(MPI_Comm comm, const char *dir, int p, int32_t E_local, const int64_t *gid,
                         const double *x, const double *y, const double *z, const double *u,
                         const double *exact) {
  HX_CALL(hx_io_write_solution_opts(comm, dir, HX_FIELD_ALL, 0, p, E_local, gid, x, y, z, u, exact, NULL));
  return HX_SUCCESS;
}

int hx_io_write_solution_opts(MPI_Comm comm, const char *dir, unsigned fields, int fp32, int p,
                              int32_t E_local, const int64_t *gid, const double *x, const double *y,
                              const double *z, const double *u, const double *exact, long long *bytes) {
  /* the mesh and the element ids always: the file is the restart input of a later run */
  wspec w = {.ds = DSB(DS_COORD) | DSB(DS_CONN) | DSB(DS_GID) | DSB(DS_U) | field_ds(fields) |
                   (fields & HX_FIELD_RANK ? DSB(DS_RANK) : 0),
             .fp32 = fp32,
             .xdmf = 1,
             .fields = fields | HX_FIELD_U};
  HX_CALL(write_file(comm, dir, "solution.h5", &w, p, E_local, gid, x, y, z, u, exact));
  if (bytes) *bytes = w.bytes;
  return HX_SUCCESS;
}

int hx_io_write_state_file(MPI_Comm comm, const char *dir, const char *name, int p, int32_t E_local,
                           const int64_t *gid, const double *u) {
  wspec w = {.ds = DSB(DS_GID) | DSB(DS_U)};
  HX_CALL(write_file(comm, dir, name, &w, p, E_local, gid, NULL, NULL, NULL, u, NULL));
  return HX_SUCCESS;
}

int hx_io_write_series_mesh(MPI_Comm comm, const char *dir, int with_rank, int p, int32_t E_local,
                            const int64_t *gid, const double *x, const double *y, const double *z,
                            long long *bytes) {
  wspec w = {.ds = DSB(DS_COORD) | DSB(DS_CONN) | DSB(DS_GID) | (with_rank ? DSB(DS_RANK) : 0), .sorted = 1};
  HX_CALL(write_file(comm, dir, HX_SERIES_MESH_NAME, &w, p, E_local, gid, x, y, z, NULL, NULL));
  if (bytes) *bytes = w.bytes;
  return HX_SUCCESS;
}

int hx_io_write_series_frame(MPI_Comm comm, const char *dir, const char *name, const char *run_id,
                             unsigned fields, int fp32, int p, int32_t E_local, const int64_t *gid,
                             const double *u, const double *exact, long long *bytes) {
  wspec w = {
      .ds = DSB(DS_GID) | field_ds(fields), .fp32 = fp32, .sorted = 1, .fields = fields, .run_id = run_id};
  HX_CALL(write_file(comm, dir, name, &w, p, E_local, gid, NULL, NULL, NULL, u, exact));
  if (bytes) *bytes = w.bytes;
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- VTKHDF */
/* VTK's place of the node (i,j,k) of a Lagrange hexahedron of order p
 * (VTK_LAGRANGE_HEXAHEDRON; vtkHigherOrderHexahedron::PointIndexFromIJK of
 * VTK 9): the corners, the edge nodes (edges 0-3 at k = 0, 4-7 at k = p,
 * then the four edges along k at (0,0), (p,0), (p,p), (0,p): the
 * corners' order, as VTK 9's Lagrange cells have it; VTK 8's had the last
 * two swapped, and code copied from it still does), the face
 * nodes (faces i = 0, i = p, j = 0, j = p, k = 0, k = p), the interior. */
static int vtk_lagrange_index(int i, int j, int k, int p) {
  const int ib = i == 0 || i == p, jb = j == 0 || j == p, kb = k == 0 || k == p, nb = ib + jb + kb, q = p - 1;
  if (nb == 3) return (i ? (j ? 2 : 1) : (j ? 3 : 0)) + (k ? 4 : 0);
  int off = 8;
  if (nb == 2) {
    if (!ib) return off + (i - 1) + (j ? 2 * q : 0) + (k ? 4 * q : 0);
    if (!jb) return off + (j - 1) + (i ? q : 3 * q) + (k ? 4 * q : 0);
    return off + 8 * q + (k - 1) + q * (i ? (j ? 2 : 1) : (j ? 3 : 0)); /* VTK >= 9: as the corners */
  }
  off += 12 * q;
  if (nb == 1) {
    if (ib) return off + (j - 1) + q * (k - 1) + (i ? q * q : 0);
    off += 2 * q * q;
    if (jb) return off + (i - 1) + q * (k - 1) + (j ? q * q : 0);
    off += 2 * q * q;
    return off + (i - 1) + q * (j - 1) + (k ? q * q : 0);
  }
  off += 6 * q * q;
  return off + (i - 1) + q * ((j - 1) + q * (k - 1));
}

enum { VD_POINTS, VD_CONN, VD_U, VD_EXACT, VD_ERROR, VD_RANK, VD_N };
static const char *const vd_name[VD_N] = {"/VTKHDF/Points",          "/VTKHDF/Connectivity",
                                          "/VTKHDF/PointData/u",     "/VTKHDF/PointData/exact",
                                          "/VTKHDF/PointData/error", "/VTKHDF/CellData/rank"};

/* one int64 dataset of n values v (rank 0, at creation) */
static int vtk_small(hid_t f, const char *path, const char *name, hsize_t n, const int64_t *v, hid_t ftype,
                     hid_t mtype) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t ds = H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t st = ds >= 0 ? H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) : -1;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  if (st < 0) return hx_h5_write_error(path, name);
  return HX_SUCCESS;
}

/* Rank 0: the VTKHDF structure (UnstructuredGrid 1.0, one partition) with
 * the small datasets written and the large ones allocated; off[d] their file
 * offsets (-1: not in the file). mesh_file (not NULL: a frame of a series):
 * the mesh datasets and the rank are HDF5 external links into that file (a
 * name relative to this file's folder, where HDF5 looks for it), and this
 * file holds the point data only. */
static int vtk_structure(const char *path, const char *tmp, int p, long long E, unsigned fields, int fp32,
                         const char *run_id, const char *mesh_file, long long *off /* VD_N */) {
  const long long npe = (long long)(p + 1) * (p + 1) * (p + 1);
  for (int d = 0; d < VD_N; d++) off[d] = -1;
  hid_t f;
  HX_CALL(create_tmp(tmp, &f));
  int err = HX_SUCCESS;
  const char *groups[] = {"/VTKHDF", "/VTKHDF/PointData", "/VTKHDF/CellData"};
  for (int g = 0; g < 3 && !err; g++) {
    hid_t gi = H5Gcreate2(f, groups[g], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (gi < 0) err = hx_h5_write_error(path, groups[g]);
    if (!err && g == 0) { /* Version [1, 0], Type "UnstructuredGrid" (fixed length, ASCII) */
      hsize_t two = 2;
      int64_t ver[2] = {1, 0};
      hid_t sp = H5Screate_simple(1, &two, NULL);
      hid_t a = H5Acreate2(gi, "Version", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
      if (a < 0 || H5Awrite(a, H5T_NATIVE_INT64, ver) < 0) err = hx_h5_write_error(path, "attribute Version");
      if (a >= 0) H5Aclose(a);
      H5Sclose(sp);
      const char *type = "UnstructuredGrid";
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, strlen(type));
      H5Tset_strpad(t, H5T_STR_NULLPAD);
      sp = H5Screate(H5S_SCALAR);
      a = err ? -1 : H5Acreate2(gi, "Type", t, sp, H5P_DEFAULT, H5P_DEFAULT);
      if (!err && (a < 0 || H5Awrite(a, t, type) < 0)) err = hx_h5_write_error(path, "attribute Type");
      if (a >= 0) H5Aclose(a);
      H5Sclose(sp), H5Tclose(t);
    }
    if (gi >= 0) H5Gclose(gi);
  }
  if (mesh_file) { /* a lean frame: the mesh (and the rank) of the series' mesh file */
    const char *linked[] = {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds",
                            "Offsets",        "Types",         "Points",
                            "Connectivity",   "CellData/rank"};
    char obj[64];
    for (int i = 0; i < 8 && !err; i++) {
      if (i == 7 && !(fields & HX_FIELD_RANK)) break;
      snprintf(obj, sizeof obj, "/VTKHDF/%s", linked[i]);
      if (H5Lcreate_external(mesh_file, obj, f, obj, H5P_DEFAULT, H5P_DEFAULT) < 0)
        err = hx_h5_write_error(path, obj);
    }
  }
  if (!mesh_file) { /* a whole file: the mesh datasets here */
    int64_t one[3] = {E * npe, E, E * npe};
    if (!err) err = vtk_small(f, path, "/VTKHDF/NumberOfPoints", 1, &one[0], H5T_STD_I64LE, H5T_NATIVE_INT64);
    if (!err) err = vtk_small(f, path, "/VTKHDF/NumberOfCells", 1, &one[1], H5T_STD_I64LE, H5T_NATIVE_INT64);
    if (!err)
      err =
          vtk_small(f, path, "/VTKHDF/NumberOfConnectivityIds", 1, &one[2], H5T_STD_I64LE, H5T_NATIVE_INT64);
    int64_t *v = NULL;
    if (!err) err = hx_calloc((size_t)E + 1, sizeof(int64_t), &v);
    if (!err) {
      for (long long e = 0; e <= E; e++) v[e] = e * npe;
      err = vtk_small(f, path, "/VTKHDF/Offsets", (hsize_t)E + 1, v, H5T_STD_I64LE, H5T_NATIVE_INT64);
    }
    if (!err) {
      uint8_t *ty = (uint8_t *)v;                   /* E bytes fit in E + 1 int64 */
      for (long long e = 0; e < E; e++) ty[e] = 72; /* VTK_LAGRANGE_HEXAHEDRON */
      hsize_t n = (hsize_t)E;
      hid_t sp = H5Screate_simple(1, &n, NULL);
      hid_t ds = H5Dcreate2(f, "/VTKHDF/Types", H5T_STD_U8LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, ty) < 0)
        err = hx_h5_write_error(path, "dataset /VTKHDF/Types");
      if (ds >= 0) H5Dclose(ds);
      H5Sclose(sp);
    }
    free(v);
  }
  hid_t dcpl = contiguous_dcpl();
  const unsigned want[VD_N] = {!mesh_file,
                               !mesh_file,
                               fields & HX_FIELD_U,
                               fields & HX_FIELD_EXACT,
                               fields & HX_FIELD_ERROR,
                               !mesh_file && (fields & HX_FIELD_RANK)};
  for (int d = 0; d < VD_N && !err; d++) {
    if (!want[d]) continue;
    hsize_t dims[2] = {(hsize_t)(d == VD_RANK ? E : E * npe), 3};
    hid_t type = d == VD_POINTS ? H5T_NATIVE_DOUBLE
                 : d == VD_CONN ? H5T_NATIVE_INT64
                 : d == VD_RANK ? H5T_NATIVE_INT32
                 : fp32         ? H5T_NATIVE_FLOAT
                                : H5T_NATIVE_DOUBLE;
    err = alloc_dataset(f, path, vd_name[d], vd_name[d], type, d == VD_POINTS ? 2 : 1, dims, dcpl, &off[d]);
  }
  H5Pclose(dcpl);
  /* hexcg's own marks beside /VTKHDF (readers of VTKHDF ignore them) */
  if (!err) err = write_attr(f, "order", H5T_STD_I32LE, H5T_NATIVE_INT, &p);
  if (!err) err = write_attr_str(f, "format", "hexcg-vtkhdf-1");
  if (!err && run_id && run_id[0]) err = write_attr_str(f, "run_id", run_id);
  HX_CALL(hx_h5_close(f, path, tmp, err));
  return HX_SUCCESS;
}

/* Not collective: this rank's rows (element e at row[e]) into tmp. */
static int vtk_rows(const char *path, const char *tmp, const long long off[VD_N], int fp32, int rank, int p,
                    int32_t El, const int64_t *row, const double *x, const double *y, const double *z,
                    const double *u, const double *exact) {
  if (El == 0) return HX_SUCCESS;
  const int n = p + 1;
  const size_t npe = (size_t)n * n * n, Nl = (size_t)El * npe;
  double *buf = NULL;
  float *fb = NULL;
  int64_t *conn = NULL;
  int *perm = NULL; /* VTK node m of an element: the local node perm[m] */
  int32_t *rk = NULL;
  int err = hx_calloc(Nl * 3, sizeof(double), &buf);
  if (!err) err = hx_calloc(Nl, sizeof(float), &fb);
  if (!err) err = hx_calloc(Nl, sizeof(int64_t), &conn);
  if (!err) err = hx_calloc(npe, sizeof(int), &perm);
  if (!err) err = hx_calloc((size_t)El, sizeof(int32_t), &rk);
  int fd = -1;
  if (!err) err = open_rows(tmp, &fd);
#define VPUT(d, per_elem, rowb, data)                                                                  \
  do {                                                                                                 \
    if (!err && off[d] >= 0)                                                                           \
      err = put_rows(fd, path, vd_name[d], off[d], El, row, (size_t)(per_elem) * (rowb), (data));       \
  } while (0)
#define VFIELD(d, v)                                         \
  do {                                                       \
    if (off[d] < 0) {                                        \
    } else if (fp32) {                                       \
      for (size_t i = 0; i < Nl; i++) fb[i] = (float)(v)[i]; \
      VPUT(d, npe, sizeof(float), fb);                       \
    } else {                                                 \
      VPUT(d, npe, sizeof(double), (v));                     \
    }                                                        \
  } while (0)
  if (!err) {
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) perm[vtk_lagrange_index(i, j, k, p)] = i + n * (j + n * k);
    if (off[VD_POINTS] >= 0)
      for (size_t i = 0; i < Nl; i++) buf[3 * i] = x[i], buf[3 * i + 1] = y[i], buf[3 * i + 2] = z[i];
    VPUT(VD_POINTS, npe, 3 * sizeof(double), buf);
    for (int32_t e = 0; e < El; e++)
      for (size_t m = 0; m < npe; m++) conn[(size_t)e * npe + m] = row[e] * (int64_t)npe + perm[m];
    VPUT(VD_CONN, npe, sizeof(int64_t), conn);
    VFIELD(VD_U, u);
    if (exact) {
      VFIELD(VD_EXACT, exact);
      for (size_t i = 0; i < Nl; i++) buf[i] = u[i] - exact[i];
      VFIELD(VD_ERROR, buf);
    }
    for (int32_t e = 0; e < El; e++) rk[e] = rank;
    VPUT(VD_RANK, 1, sizeof(int32_t), rk);
  }
#undef VFIELD
#undef VPUT
  err = close_rows(fd, path, err);
  free(buf), free(fb), free(conn), free(perm), free(rk);
  return err;
}

int hx_io_write_vtkhdf(MPI_Comm comm, const char *dir, const char *name, const char *mesh_file,
                       const char *run_id, unsigned fields, int fp32, int p, int32_t E_local,
                       const int64_t *gid, const double *x, const double *y, const double *z, const double *u,
                       const double *exact, long long *bytes) {
  int rank, any_exact;
  HX_CALL(writer_start(comm, p, E_local, exact, &rank, &any_exact));
  if (!any_exact) fields &= ~(unsigned)(HX_FIELD_EXACT | HX_FIELD_ERROR), exact = NULL;
  long long E;
  int64_t *row;
  int err = HX_SUCCESS;
  HX_CALL(file_rows(comm, E_local, gid, 1, &E, &row));
  char path[4200], tmp[4210];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  long long off[VD_N];
  const double npe = (double)(p + 1) * (p + 1) * (p + 1);
  const int nf = !!(fields & HX_FIELD_U) + !!(fields & HX_FIELD_EXACT) + !!(fields & HX_FIELD_ERROR);
  const vtk_make vm = {path, tmp, p, E, fields, fp32, run_id, mesh_file};
  err = make_structure(comm, rank, path, tmp, (double)E * (npe * (24 + 8 + nf * (fp32 ? 4 : 8)) + 8 + 1 + 4),
                       vtk_create, &vm, off, VD_N);
  if (!err)
    err = hx_io_agree_error(comm, vtk_rows(path, tmp, off, fp32, rank, p, E_local, row, x, y, z, u, exact));
  free(row);
  long long size = 0;
  if (rank == 0) {
    err = publish_tmp(tmp, path, err, &size);
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  HX_MPI(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm));
  if (bytes) *bytes = size;
  return HX_SUCCESS;
}

int hx_io_write_vtkhdf_series(const char *dir, int n, const char *const *files, const double *times) {
  HX_CHECK(n >= 1, HX_ERR_ARG, "an empty time series");
  size_t cap = 256 + (size_t)n * 4400, len = 0;
  char *b = malloc(cap);
  HX_CHECK(b, HX_ERR_MEM, "out of memory");
  /* ParaView's file-series JSON (the VTKHDF reader of ParaView 5.11 reads no
   * transient /VTKHDF/Steps: one file per frame, named with its time) */
  len += (size_t)snprintf(b + len, cap - len, "{\n  \"file-series-version\": \"1.0\",\n  \"files\": [\n");
  for (int i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(b + len, cap - len, "    { \"name\": \"%s\", \"time\": %.17g }%s\n", files[i],
                            times[i], i + 1 < n ? "," : "");
  if (len < cap) len += (size_t)snprintf(b + len, cap - len, "  ]\n}\n");
  int err = hx_io_write_text(dir, HX_VTKHDF_NAME ".series", b, len, cap, "series text");
  HX_CALL(err);
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

/* ---------------------------------------------------------------- restart */
typedef struct {
  int64_t gid, row;
} gid_row;

typedef struct {
  int64_t row;
  int32_t e;
} row_e;

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
  if (!err) qsort(map, (size_t)E, sizeof *map, hx_io_cmp_key);
  for (long long i = 1; !err && i < E; i++)
    if (map[i].gid == map[i - 1].gid)
      err = HX_ERROR(HX_ERR_INPUT, "%s: /mesh/element_id holds element %lld twice (rows %lld and %lld)", path,
                     (long long)map[i].gid, (long long)map[i - 1].row, (long long)map[i].row);
  for (int32_t e = 0; !err && e < El; e++) {
    gid_row key = {gid[e], 0};
    gid_row *hit = bsearch(&key, map, (size_t)E, sizeof *map, hx_io_cmp_key);
    if (!hit)
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: the initial guess has no element with global id %lld (a different mesh?)", path,
                     (long long)gid[e]);
    else
      want[e].row = hit->row, want[e].e = e;
  }
  err = hx_io_agree_error(comm, err);
  if (err) goto done;
  qsort(want, (size_t)El, sizeof *want, hx_io_cmp_key);
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
  /* the coordinates, where the file has them (a checkpoint's state files do
   * not: checkpoint.yaml's mesh_nodes_hash identifies its mesh) */
  if (!err && x && H5Lexists(f, "/mesh/coordinates", H5P_DEFAULT) > 0)
    err = check_coords(comm, f, path, npe, El, want, gid, x, y, z);
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
