/* Fuzz target: the HDF5 files hexcg reads, solution.h5 as an initial guess
 * (hx_io_read_solution_at, as `solver.initial_guess` uses it) and history.h5
 * (hx_cmp_run_load, as `hexcg compare` uses it).
 *
 * Structure-aware: the input bytes do not become the file's bytes (that would
 * fuzz libhdf5's own parser, which is fuzzed upstream and which hexcg cannot
 * fix); they choose which objects a well-formed HDF5 file holds, with which
 * types, shapes and values (missing or extra attributes, arrays where scalars
 * belong, datasets of the wrong rank, length, type or declared size, element
 * ids that do not match the mesh, coordinates of another mesh). That is what
 * hexcg's own code must check. The file is written with libhdf5 and read back
 * through the program's entry point on MPI_COMM_SELF. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_compare.h"
#include "hx_fuzz.h"
#include "hx_io.h"

typedef struct {
  const uint8_t *d;
  size_t n, i;
  int odd; /* some choice made the file differ from what hexcg writes */
} bytes;

static unsigned u8(bytes *b) { return b->i < b->n ? b->d[b->i++] : 0; }
static uint32_t u32(bytes *b) {
  uint32_t v = 0;
  for (int k = 0; k < 4; k++) v = v << 8 | u8(b);
  return v;
}
static uint64_t u64(bytes *b) { return (uint64_t)u32(b) << 32 | u32(b); }
/* a choice among n; 0 (also when the input has run out) is what hexcg writes */
static unsigned pick(bytes *b, unsigned n) {
  const unsigned v = u8(b) % n;
  b->odd |= v != 0;
  return v;
}
static double f64(bytes *b) {
  uint64_t v = u64(b);
  double x;
  memcpy(&x, &v, sizeof x);
  return x;
}

#define MAXN 4096 /* values written per dataset at most (keeps one input fast) */

/* an attribute of rank 0 or 1 and a numeric or string type, chosen by b */
static void put_attr(hid_t obj, const char *name, int64_t want, bytes *b) {
  const unsigned how = pick(b, 8);
  if (how == 1) return; /* missing */
  hid_t sp = -1, t = -1;
  int64_t v[4] = {want, want, want, want};
  if (how == 2) v[0] = (int64_t)u64(b);
  if (how == 7) v[0] = want + (int8_t)u8(b);
  if (how == 0 || how == 2 || how == 7) {
    sp = H5Screate(H5S_SCALAR);
    t = how == 7 ? H5Tcopy(H5T_NATIVE_INT32) : H5Tcopy(H5T_NATIVE_INT64); /* 7: another width */
  } else if (how == 3) {
    hsize_t n = 1 + u8(b) % 4;
    sp = H5Screate_simple(1, &n, NULL);
    t = H5Tcopy(H5T_NATIVE_INT64);
  } else if (how == 4) {
    sp = H5Screate(H5S_SCALAR);
    t = H5Tcopy(H5T_NATIVE_DOUBLE);
    double x = (u8(b) & 1) ? f64(b) : (double)want;
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, &x);
    H5Aclose(a), H5Tclose(t), H5Sclose(sp);
    return;
  } else { /* 5, 6: text */
    sp = H5Screate(H5S_SCALAR);
    t = H5Tcopy(H5T_C_S1);
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)want);
    H5Tset_size(t, how == 5 ? strlen(s) + 1 : 1 + u8(b) % 200);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    char big[256] = "";
    memcpy(big, s, strlen(s));
    H5Awrite(a, t, big);
    H5Aclose(a), H5Tclose(t), H5Sclose(sp);
    return;
  }
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, v);
  H5Aclose(a), H5Tclose(t), H5Sclose(sp);
}

static void put_format(hid_t f, bytes *b) {
  const unsigned how = pick(b, 6);
  if (how == 1) return; /* missing */
  hid_t sp = H5Screate(H5S_SCALAR), t;
  char s[300] = "hexcg-solution-1";
  if (how == 2) { /* other text of any length */
    size_t n = u8(b);
    for (size_t i = 0; i < n && i < sizeof s - 1; i++) s[i] = (char)u8(b);
    s[n < sizeof s - 1 ? n : sizeof s - 1] = '\0';
  }
  if (how == 3) { /* a number */
    int64_t v = 1;
    t = H5Tcopy(H5T_NATIVE_INT64);
    hid_t a = H5Acreate2(f, "format", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a), H5Tclose(t), H5Sclose(sp);
    return;
  }
  if (how == 4) { /* variable-length text */
    t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    const char *p = s;
    hid_t a = H5Acreate2(f, "format", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, &p);
    H5Aclose(a), H5Tclose(t), H5Sclose(sp);
    return;
  }
  t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, how == 5 ? 1 + u8(b) : strlen(s) + 1); /* 5: a wider fixed size */
  char big[300] = "";
  memcpy(big, s, strlen(s) + 1);
  hid_t a = H5Acreate2(f, "format", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, big);
  H5Aclose(a), H5Tclose(t), H5Sclose(sp);
}

/* A dataset `name` meant to be [n0][n1] (n1 = 0: rank 1) of type mtype with
 * values from fill(i); b chooses: missing, as meant, another length, another
 * rank, another type, or declared huge but unwritten (chunked). */
static void put_dataset(hid_t f, const char *name, hsize_t n0, hsize_t n1, hid_t mtype, bytes *b,
                        double (*fill)(size_t i, void *ctx), void *ctx) {
  const unsigned how = pick(b, 8);
  if (how == 1) return; /* missing */
  int rank = n1 ? 2 : 1;
  hsize_t dims[3] = {n0, n1, 2};
  hid_t ftype = mtype;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int write = 1;
  if (how == 2) { /* a few rows more or fewer */
    const long long d = (long long)n0 + (int8_t)u8(b) % 8;
    dims[0] = d > 0 ? (hsize_t)d : 0;
  }
  if (how == 3) rank = rank == 1 ? 2 : (u8(b) & 1) ? 1 : 3;
  if (how == 4) ftype = (mtype == H5T_NATIVE_DOUBLE) ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE;
  if (how == 5) { /* declared far larger than any file holds: no data written */
    dims[0] = ((hsize_t)1 << (20 + u8(b) % 24)) + n0;
    hsize_t chunk[3] = {64, n1 ? n1 : 1, 2};
    H5Pset_chunk(dcpl, rank, chunk);
    write = 0;
  }
  if (how == 6 && dims[0] > 0) dims[0] = u8(b) % (dims[0] + 1);
  if (dims[0] > MAXN && write) dims[0] = MAXN;
  hsize_t total = 1;
  for (int k = 0; k < rank; k++) total *= dims[k];
  hid_t sp = H5Screate_simple(rank, dims, NULL);
  hid_t ds = H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (write && total > 0 && total <= 4 * MAXN) {
    double *v = malloc(sizeof(double) * total);
    if (!v) abort();
    for (hsize_t i = 0; i < total; i++) v[i] = fill(i, ctx);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    free(v);
  }
  H5Dclose(ds), H5Sclose(sp), H5Pclose(dcpl);
}

/* ---------------------------------------------------------------- solution.h5 */
typedef struct {
  int p, npe;
  int32_t E;
  int64_t gid[8];
  int perm[8];    /* row of the file that holds element e */
  int64_t ids[8]; /* element id of each row as written */
  double shift;   /* coordinates of the file: those of the mesh + shift */
  bytes *b;
} sol;

/* node k of element e of this "mesh": a point that differs per element */
static double coord(const sol *s, size_t e, size_t k, int c) {
  (void)s;
  return (double)(e * 1000 + k) + 0.25 * c;
}
static double fill_ids(size_t i, void *ctx) {
  const sol *s = ctx;
  return i < (size_t)s->E ? (double)s->ids[i] : (double)(i + 100);
}
static double fill_u(size_t i, void *ctx) {
  (void)ctx;
  return (double)i * 0.5;
}
static double fill_coords(size_t i, void *ctx) {
  const sol *s = ctx;
  const size_t node = i / 3, row = node / (size_t)s->npe, k = node % (size_t)s->npe;
  if (row >= (size_t)s->E) return 0;
  int e = 0;
  while (e < s->E && s->perm[e] != (int)row) e++;
  return coord(s, (size_t)e, k, (int)(i % 3)) + s->shift;
}

static void fuzz_solution(bytes *b) {
  sol s;
  memset(&s, 0, sizeof s);
  s.b = b;
  s.p = 1 + u8(b) % 3;
  s.npe = (s.p + 1) * (s.p + 1) * (s.p + 1);
  s.E = (int32_t)(1 + u8(b) % 8); /* a rank of a one-rank run has elements */
  const int64_t base = (int64_t)(u8(b) % 4) * 1000000000000LL;
  for (int e = 0; e < s.E; e++) s.gid[e] = base + 3 * e + 1, s.perm[e] = e;
  for (int e = s.E - 1; e > 0; e--) { /* rows in another order than the mesh's */
    int j = (int)(u8(b) % (unsigned)(e + 1)), t = s.perm[e];
    s.perm[e] = s.perm[j], s.perm[j] = t;
  }
  for (int e = 0; e < s.E; e++) s.ids[s.perm[e]] = s.gid[e];
  if (s.E && pick(b, 4) == 3) s.ids[u8(b) % s.E] = (int64_t)u64(b); /* an id not in the mesh */
  s.shift = pick(b, 4) == 3 ? 1e-3 : 0;                             /* coordinates of another mesh */
  const int fp = s.p, fE = s.E;

  char path[600];
  snprintf(path, sizeof path, "%s/solution.h5", hx_fuzz_dir());
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) abort();
  put_format(f, b);
  put_attr(f, "order", fp, b);
  put_attr(f, "num_elements", fE, b);
  hid_t g = H5Gcreate2(f, "/mesh", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(g);
  g = H5Gcreate2(f, "/fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(g);
  put_dataset(f, "/mesh/element_id", (hsize_t)s.E, 0, H5T_NATIVE_INT64, b, fill_ids, &s);
  put_dataset(f, "/fields/u", (hsize_t)s.E * (hsize_t)s.npe, 0, H5T_NATIVE_DOUBLE, b, fill_u, &s);
  put_dataset(f, "/mesh/coordinates", (hsize_t)s.E * (hsize_t)s.npe, 3, H5T_NATIVE_DOUBLE, b, fill_coords,
              &s);
  if (H5Fclose(f) < 0) abort();

  const size_t nl = (size_t)s.E * (size_t)s.npe;
  double *x = malloc(sizeof(double) * (nl ? nl : 1) * 4), *y = x + nl, *z = y + nl, *u = z + nl;
  if (!x) abort();
  for (int e = 0; e < s.E; e++)
    for (int k = 0; k < s.npe; k++) {
      const size_t n = (size_t)e * (size_t)s.npe + (size_t)k;
      x[n] = coord(&s, (size_t)e, (size_t)k, 0), y[n] = coord(&s, (size_t)e, (size_t)k, 1);
      z[n] = coord(&s, (size_t)e, (size_t)k, 2), u[n] = -1;
    }
  const int with_coords = u8(b) & 1;
  int err = with_coords ? hx_io_read_solution_at(MPI_COMM_SELF, path, s.p, s.E, s.gid, x, y, z, u)
                        : hx_io_read_solution(MPI_COMM_SELF, path, s.p, s.E, s.gid, u);
  if (!b->odd && err) {
    fprintf(stderr, "fuzz_h5: a solution file as hexcg writes it was refused:\n");
    hx_error_print(stderr, 0, 1);
    abort();
  }
  if (!err && !b->odd) {
    /* the file is as hexcg writes it: u must be the file's row of each element */
    for (int e = 0; e < s.E; e++)
      for (int k = 0; k < s.npe; k++)
        if (u[(size_t)e * s.npe + k] != fill_u((size_t)s.perm[e] * s.npe + k, &s)) {
          fprintf(stderr, "fuzz_h5: element %d node %d read %g\n", e, k, u[(size_t)e * s.npe + k]);
          abort();
        }
  }
  free(x);
  hx_fuzz_done(err, "hx_io_read_solution");
}

/* ---------------------------------------------------------------- history.h5 */
static double fill_hist(size_t i, void *ctx) {
  bytes *b = ctx;
  const unsigned k = u8(b);
  return k < 200 ? (double)i : k < 250 ? (double)(int8_t)u8(b) : f64(b);
}

static void fuzz_history(bytes *b) {
  char dir[600], path[700];
  snprintf(dir, sizeof dir, "%s/h5run", hx_fuzz_dir());
  mkdir(dir, 0700);
  snprintf(path, sizeof path, "%s/history.h5", dir);
  const hsize_t n = u8(b) % 64;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) abort();
  put_dataset(f, "iteration", n, 0, H5T_NATIVE_INT64, b, fill_hist, b);
  put_dataset(f, "residual", n, 0, H5T_NATIVE_DOUBLE, b, fill_hist, b);
  put_dataset(f, "rel_residual", n, 0, H5T_NATIVE_DOUBLE, b, fill_hist, b);
  put_dataset(f, "time_s", n, 0, H5T_NATIVE_DOUBLE, b, fill_hist, b);
  if (H5Fclose(f) < 0) abort();
  hx_cmp_run r;
  int err = hx_cmp_run_load(path, "RUN", &r);
  if (!err) hx_cmp_run_free(&r);
  hx_fuzz_done(err, "hx_cmp_run_load");
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hx_fuzz_init();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the harness's own failed calls are expected */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes b = {data, size, 0, 0};
  if (u8(&b) & 1)
    fuzz_history(&b);
  else
    fuzz_solution(&b);
  return 0;
}
