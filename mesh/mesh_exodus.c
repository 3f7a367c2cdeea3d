/* Exodus II reader (rank 0), netCDF classic read directly and netCDF-4 through HDF5: HEX8, HEX20 and
 * HEX27 element blocks (each block a material), side sets as boundary tags,
 * node sets ignored with a note. Exodus node order is converted to tensor
 * order; a HEX20 element gets its 7 missing nodes (face centres, centre) from
 * its serendipity map, a HEX8 element in a file with quadratic blocks its 19
 * from its trilinear map. Errors name the file, the block / side set / variable
 * and the fix. docs/mesh.md "Exodus II files". */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_io.h"

#include "mesh_impl.h"

#define EXO_ERR(...) HX_ERROR(HX_ERR_INPUT, __VA_ARGS__)

/* ---------------------------------------------------------------- netCDF classic
 * The netCDF classic formats (CDF-1, CDF-2 64-bit offset, CDF-5), read
 * directly: Debian's libnetcdf links the serial HDF5, hexcg the MPI one, and
 * the two cannot share a process. The layout: "CDF" version, record count,
 * then the dimension, global attribute and variable lists; each non-record
 * variable's values lie big-endian at its begin offset. */
typedef struct {
  char name[128];
  uint64_t len;
} ncdim;
typedef struct {
  char name[128];
  int nd, dim[8];
  uint64_t shape[8]; /* the length along each dimension */
  int type;       /* NC type: 1 byte 2 char 3 short 4 int 5 float 6 double 10 int64 ... */
  uint64_t begin;
  int rec;        /* a record variable (first dimension the unlimited one): never read */
  char elem_type[64];
} ncvar;

typedef struct {
  const char *path;
  const uint8_t *buf;
  size_t len, pos;
  int ver; /* 1, 2 or 5 */
  int ndims, nvars;
  ncdim *dims;
  ncvar *vars;
  uint64_t len_name;
} exo;

static int hdr_err(const exo *x, const char *what) {
  return EXO_ERR("%s: byte offset %zu: the netCDF header ends or is corrupt in %s (a truncated or corrupt "
                 "Exodus II file; copy or write it again)",
                 x->path, x->pos, what);
}
static int rd_u(exo *x, int n, uint64_t *v, const char *what) {
  if (x->len - x->pos < (size_t)n) return hdr_err(x, what);
  uint64_t r = 0;
  for (int i = 0; i < n; i++) r = r << 8 | x->buf[x->pos + (size_t)i];
  x->pos += (size_t)n;
  *v = r;
  return HX_SUCCESS;
}
/* NON_NEG: 4 bytes (CDF-1/2) or 8 (CDF-5) */
static int rd_count(exo *x, uint64_t *v, const char *what) {
  HX_CALL(rd_u(x, x->ver == 5 ? 8 : 4, v, what));
  if (x->ver != 5 && *v > INT32_MAX) return hdr_err(x, what);
  if (*v > x->len) return hdr_err(x, what); /* nothing in a header is longer than the file */
  return HX_SUCCESS;
}
static int rd_name(exo *x, char *out, size_t n, const char *what) {
  uint64_t l;
  HX_CALL(rd_count(x, &l, what));
  const uint64_t pad = (l + 3) / 4 * 4;
  if (x->len - x->pos < pad) return hdr_err(x, what);
  size_t c = l < n - 1 ? (size_t)l : n - 1;
  memcpy(out, x->buf + x->pos, c);
  out[c] = 0;
  x->pos += (size_t)pad;
  return HX_SUCCESS;
}
static int type_size(int t) {
  switch (t) {
    case 1: case 2: case 7: return 1;
    case 3: case 8: return 2;
    case 4: case 5: case 9: return 4;
    case 6: case 10: case 11: return 8;
    default: return 0;
  }
}
/* an attribute list; with keep, the text attribute elem_type into keep */
static int rd_atts(exo *x, char *keep, size_t keepn, const char *what) {
  uint64_t tag = 0, n = 0;
  HX_CALL(rd_u(x, 4, &tag, what));
  HX_CALL(rd_count(x, &n, what));
  if (tag == 0 && n == 0) return HX_SUCCESS;
  if (tag != 0x0C) return hdr_err(x, what);
  for (uint64_t i = 0; i < n; i++) {
    char name[128];
    uint64_t t = 0, cnt = 0;
    HX_CALL(rd_name(x, name, sizeof name, what));
    HX_CALL(rd_u(x, 4, &t, what));
    HX_CALL(rd_count(x, &cnt, what));
    const int ts = type_size((int)t);
    if (!ts || cnt > x->len / (uint64_t)ts) return hdr_err(x, what);
    const uint64_t bytes = (cnt * (uint64_t)ts + 3) / 4 * 4;
    if (x->len - x->pos < bytes) return hdr_err(x, what);
    if (keep && t == 2 && !strcmp(name, "elem_type")) {
      size_t c = cnt < keepn - 1 ? (size_t)cnt : keepn - 1;
      memcpy(keep, x->buf + x->pos, c);
      keep[c] = 0;
    }
    x->pos += (size_t)bytes;
  }
  return HX_SUCCESS;
}

/* a list's head: its tag (want, or ABSENT with no items) and item count
 * (at least min_bytes each in the file) */
static int rd_list(exo *x, uint64_t want, uint64_t min_bytes, const char *what, uint64_t *n) {
  uint64_t tag = 0;
  HX_CALL(rd_u(x, 4, &tag, what));
  HX_CALL(rd_count(x, n, what));
  if (tag != want && !(tag == 0 && *n == 0)) return hdr_err(x, what);
  if (*n > x->len / min_bytes) return hdr_err(x, what);
  return HX_SUCCESS;
}

static int parse_header(exo *x) {
  if (x->len < 4 || memcmp(x->buf, "CDF", 3) || (x->buf[3] != 1 && x->buf[3] != 2 && x->buf[3] != 5))
    return EXO_ERR("%s: not an Exodus II file (no netCDF 'CDF' header; %zu bytes): mesh.type exodus reads "
                   "Exodus II .e/.exo files",
                   x->path, x->len);
  x->ver = x->buf[3];
  x->pos = 4;
  uint64_t nrec = 0, n = 0;
  HX_CALL(rd_count(x, &nrec, "the record count"));
  HX_CALL(rd_list(x, 0x0A, 8, "the dimension list", &n));
  x->ndims = (int)n;
  HX_CALL(HX_ALLOC(&x->dims, n + 1));
  for (uint64_t i = 0; i < n; i++) {
    HX_CALL(rd_name(x, x->dims[i].name, sizeof x->dims[i].name, "a dimension"));
    HX_CALL(rd_count(x, &x->dims[i].len, "a dimension"));
  }
  HX_CALL(rd_atts(x, NULL, 0, "the global attributes"));
  HX_CALL(rd_list(x, 0x0B, 16, "the variable list", &n));
  x->nvars = (int)n;
  HX_CALL(HX_ALLOC(&x->vars, n + 1));
  for (uint64_t i = 0; i < n; i++) {
    ncvar *v = &x->vars[i];
    uint64_t nd = 0, t = 0, vsize = 0, begin = 0;
    HX_CALL(rd_name(x, v->name, sizeof v->name, "a variable"));
    HX_CALL(rd_count(x, &nd, "a variable"));
    if (nd > 8) return hdr_err(x, "a variable's dimensions");
    v->nd = (int)nd;
    for (int d = 0; d < v->nd; d++) {
      uint64_t id;
      HX_CALL(rd_count(x, &id, "a variable's dimensions"));
      if (id >= (uint64_t)x->ndims) return hdr_err(x, "a variable's dimensions");
      v->dim[d] = (int)id;
      v->shape[d] = x->dims[id].len;
    }
    HX_CALL(rd_atts(x, v->elem_type, sizeof v->elem_type, "a variable's attributes"));
    HX_CALL(rd_u(x, 4, &t, "a variable"));
    if (!type_size((int)t)) return hdr_err(x, "a variable's type");
    v->type = (int)t;
    HX_CALL(rd_count(x, &vsize, "a variable"));
    HX_CALL(rd_u(x, x->ver == 1 ? 4 : 8, &begin, "a variable"));
    v->begin = begin;
    (void)vsize;
    v->rec = v->nd > 0 && x->dims[v->dim[0]].len == 0;
  }
  (void)nrec;
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- netCDF-4 (HDF5)
 * A netCDF-4 file is an HDF5 file, read by io/ (hx_io_nc4_read): the datasets
 * the mesh needs (coordinates, connectivity, ids, names, side sets; not the
 * time-dependent results) come laid out as a classic file's values would be
 * (big-endian int64 / double / char), so that everything after this reads
 * both kinds alike. */
static int h5_wanted(const char *n) {
  static const char *const pre[] = {"coord", "connect", "eb_prop1", "eb_names", "ss_prop1", "ss_names",
                                    "elem_ss", "side_ss"};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (!strncmp(n, pre[i], strlen(pre[i]))) return 1;
  return 0;
}

static int h5_load(exo *x) {
  hx_nc4_file f;
  HX_CALL(hx_io_nc4_read(x->path, h5_wanted, "elem_type", &f));
  int err = HX_ALLOC(&x->dims, f.ndims + 1);
  if (!err) err = HX_ALLOC(&x->vars, f.nvars + 1);
  if (err) {
    hx_io_nc4_free(&f);
    return err;
  }
  x->ndims = f.ndims, x->nvars = f.nvars;
  for (int i = 0; i < f.ndims; i++) {
    snprintf(x->dims[i].name, sizeof x->dims[i].name, "%s", f.dims[i].name);
    x->dims[i].len = f.dims[i].len;
  }
  for (int i = 0; i < f.nvars; i++) {
    ncvar *v = &x->vars[i];
    const hx_nc4_var *w = &f.vars[i];
    snprintf(v->name, sizeof v->name, "%s", w->name);
    snprintf(v->elem_type, sizeof v->elem_type, "%s", w->text_attr);
    v->nd = w->nd, v->type = w->type, v->rec = w->rec, v->begin = w->begin;
    for (int d = 0; d < w->nd && d < 8; d++) v->shape[d] = w->shape[d];
  }
  x->buf = f.data, x->len = f.len;
  f.data = NULL;
  hx_io_nc4_free(&f);
  return HX_SUCCESS;
}

/* length of dimension name, 0 (and *have = 0) if absent */
static int dim_len(const exo *x, const char *name, size_t *len, int *have) {
  *len = 0;
  if (have) *have = 0;
  for (int i = 0; i < x->ndims; i++)
    if (!strcmp(x->dims[i].name, name)) {
      *len = (size_t)x->dims[i].len;
      if (have) *have = 1;
      return HX_SUCCESS;
    }
  return HX_SUCCESS;
}

static int need_dim(const exo *x, const char *name, const char *what, size_t *len) {
  int have;
  HX_CALL(dim_len(x, name, len, &have));
  if (!have)
    return EXO_ERR("%s: the dimension %s (%s) is missing: not an Exodus II mesh file (write it with "
                   "Cubit, MOOSE or meshio's exodus writer)",
                   x->path, name, what);
  return HX_SUCCESS;
}

static const ncvar *find_var(const exo *x, const char *name) {
  for (int i = 0; i < x->nvars; i++)
    if (!strcmp(x->vars[i].name, name)) return &x->vars[i];
  return NULL;
}

/* the variable, its value count checked against expect (0: any) and its
 * values inside the file */
static int var_check(const exo *x, const char *name, const char *what, size_t expect, const ncvar **out) {
  const ncvar *v = find_var(x, name);
  if (!v)
    return EXO_ERR("%s: the variable %s (%s) is missing (a corrupt or incomplete Exodus II file)", x->path, name,
                   what);
  if (v->rec)
    return EXO_ERR("%s: the variable %s (%s) is a record (time) variable: not an Exodus II mesh layout", x->path,
                   name, what);
  uint64_t n = 1;
  for (int d = 0; d < v->nd; d++) { /* every value takes a byte at least: n <= the file's length */
    const uint64_t l = v->shape[d];
    if (l && n > x->len / l)
      return EXO_ERR("%s: the variable %s (%s) declares more values than the file has bytes: it is truncated "
                     "or corrupt (copy or write it again)",
                     x->path, name, what);
    n *= l;
  }
  if (expect && n != expect)
    return EXO_ERR("%s: the variable %s (%s) holds %llu values where the file's dimensions say %zu (counts "
                   "that do not agree: a corrupt file; write it again)",
                   x->path, name, what, (unsigned long long)n, expect);
  const uint64_t bytes = n * (uint64_t)type_size(v->type);
  if (v->begin == UINT64_MAX)
    return EXO_ERR("%s: the variable %s (%s) could not be read from the netCDF-4 file", x->path, name, what);
  if (v->begin > x->len || bytes > x->len - v->begin)
    return EXO_ERR("%s: the variable %s (%s) needs bytes %llu..%llu but the file has %zu: it is truncated "
                   "(copy or write it again)",
                   x->path, name, what, (unsigned long long)v->begin, (unsigned long long)(v->begin + bytes),
                   x->len);
  *out = v;
  return HX_SUCCESS;
}

static double val_at(const exo *x, const ncvar *v, size_t i, int64_t *iv) {
  const int ts = type_size(v->type);
  const uint8_t *p = x->buf + v->begin + i * (size_t)ts;
  uint64_t u = 0;
  for (int k = 0; k < ts; k++) u = u << 8 | p[k];
  double d;
  int64_t s;
  switch (v->type) {
    case 1: s = (int8_t)u, d = (double)s; break;
    case 3: s = (int16_t)u, d = (double)s; break;
    case 4: s = (int32_t)u, d = (double)s; break;
    case 10: s = (int64_t)u, d = (double)s; break;
    case 5: {
      uint32_t w = (uint32_t)u;
      float f;
      memcpy(&f, &w, 4);
      d = f, s = isfinite(d) && fabs(d) < 9e18 ? (int64_t)d : INT64_MIN;
      break;
    }
    case 6: memcpy(&d, &u, 8), s = isfinite(d) && fabs(d) < 9e18 ? (int64_t)d : INT64_MIN; break;
    default: s = u > (uint64_t)INT64_MAX ? INT64_MIN : (int64_t)u, d = (double)u; break;
  }
  if (iv) *iv = s;
  return d;
}

static int get_i64(const exo *x, const char *name, const char *what, size_t n, int64_t *v) {
  const ncvar *var;
  HX_CALL(var_check(x, name, what, n, &var));
  if (var->type == 2 || var->type == 5 || var->type == 6)
    return EXO_ERR("%s: the variable %s (%s) is not of an integer type (a corrupt file)", x->path, name, what);
  for (size_t i = 0; i < n; i++) val_at(x, var, i, &v[i]);
  return HX_SUCCESS;
}

static int get_f64(const exo *x, const char *name, const char *what, size_t n, double *v) {
  const ncvar *var;
  HX_CALL(var_check(x, name, what, n, &var));
  if (var->type == 2)
    return EXO_ERR("%s: the variable %s (%s) is text, not numbers (a corrupt file)", x->path, name, what);
  for (size_t i = 0; i < n; i++) {
    v[i] = val_at(x, var, i, NULL);
    if (!isfinite(v[i]))
      return EXO_ERR("%s: the variable %s (%s) holds a value that is not a finite number at entry %zu (a "
                     "corrupt file)",
                     x->path, name, what, i);
  }
  return HX_SUCCESS;
}

/* entity names of a names variable (eb_names, ss_names): row i into out[i]
 * (empty when absent or unreadable) */
static void get_names(const exo *x, const char *var, size_t n, char (*out)[64]) {
  for (size_t i = 0; i < n; i++) out[i][0] = 0;
  const ncvar *v;
  if (!find_var(x, var) || x->len_name == 0 || x->len_name > 4096) return;
  if (var_check(x, var, "names", n * (size_t)x->len_name, &v) || v->type != 2) {
    hx_error_clear();
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const char *s = (const char *)x->buf + v->begin + i * (size_t)x->len_name;
    size_t l = strnlen(s, (size_t)x->len_name);
    while (l > 0 && s[l - 1] == ' ') l--;
    if (l > 63) l = 63;
    memcpy(out[i], s, l);
    out[i][l] = 0;
    /* a name goes to messages, the case file and Gmsh output: printable, no blanks */
    for (size_t k = 0; k < l; k++)
      if (!isgraph((unsigned char)out[i][k])) out[i][k] = '_';
  }
}

/* Exodus -> tensor order. Corners: Exodus node i (0-based) at tensor a+2b+4c. */
static const int exo_corner_tensor8[8] = {0, 1, 3, 2, 4, 5, 7, 6};
/* HEX27 / HEX20 (first 20): (a, b, c) in {0,1,2}^3 of Exodus node i */
static const int exo_pos27[27][3] = {
    {0, 0, 0}, {2, 0, 0}, {2, 2, 0}, {0, 2, 0}, {0, 0, 2}, {2, 0, 2}, {2, 2, 2}, {0, 2, 2}, /* corners */
    {1, 0, 0}, {2, 1, 0}, {1, 2, 0}, {0, 1, 0},                                             /* bottom edges */
    {0, 0, 1}, {2, 0, 1}, {2, 2, 1}, {0, 2, 1},                                             /* vertical edges */
    {1, 0, 2}, {2, 1, 2}, {1, 2, 2}, {0, 1, 2},                                             /* top edges */
    {1, 1, 1},                                                                              /* centre */
    {1, 1, 0}, {1, 1, 2}, {0, 1, 1}, {2, 1, 1}, {1, 0, 1}, {1, 2, 1}};                      /* faces z-, z+, x-, x+, y-, y+ */
/* Exodus side s (1..6) -> hexcg face (0: r=-1, 1: r=+1, 2: s=-1, 3: s=+1, 4: t=-1, 5: t=+1) */
static const int exo_side_face[6] = {2, 1, 3, 0, 4, 5};

/* the 27 tensor-order nodes X (xyz) of an element from its nq file nodes
 * (8, 20 or 27) in Exodus order */
static void fill27(int nq, const double *src, double *X) {
  int have[27] = {0};
  if (nq == 8) {
    double c[8][3];
    for (int i = 0; i < 8; i++) memcpy(c[exo_corner_tensor8[i]], src + 3 * i, sizeof c[0]);
    for (int k = 0; k < 27; k++) { /* trilinear map at the 27 points */
      const double t[3] = {(k % 3) / 2.0, (k / 3 % 3) / 2.0, (k / 9) / 2.0};
      for (int d = 0; d < 3; d++) {
        double s = 0;
        for (int v = 0; v < 8; v++)
          s += c[v][d] * ((v & 1) ? t[0] : 1 - t[0]) * ((v & 2) ? t[1] : 1 - t[1]) * ((v & 4) ? t[2] : 1 - t[2]);
        X[3 * k + d] = s;
      }
    }
    return;
  }
  for (int i = 0; i < nq; i++) {
    const int k = exo_pos27[i][0] + 3 * exo_pos27[i][1] + 9 * exo_pos27[i][2];
    memcpy(X + 3 * k, src + 3 * i, 3 * sizeof(double));
    have[k] = 1;
  }
  if (nq == 27) return;
  /* HEX20: the serendipity map at the face centres (-1/4 the face's corners
   * + 1/2 its mid-edge nodes) and at the centre (-1/4 the corners + 1/4 the
   * mid-edge nodes) */
  for (int k = 0; k < 27; k++) {
    if (have[k]) continue;
    const int p[3] = {k % 3, k / 3 % 3, k / 9};
    double s[3] = {0, 0, 0};
    for (int j = 0; j < 27; j++) {
      if (!have[j]) continue;
      const int q[3] = {j % 3, j / 3 % 3, j / 9};
      int nmid = (q[0] == 1) + (q[1] == 1) + (q[2] == 1), match = 1;
      for (int d = 0; d < 3; d++) /* on the face / in the element */
        if (p[d] != 1 && q[d] != p[d]) match = 0;
      if (!match) continue;
      const double w = nmid == 0 ? -0.25 : (k == 13 ? 0.25 : 0.5);
      for (int d = 0; d < 3; d++) s[d] += w * X[3 * j + d];
    }
    memcpy(X + 3 * k, s, sizeof s);
  }
}

typedef struct {
  int64_t id, n;
  int nq; /* nodes per element in the file: 8, 20, 27 */
  char name[64];
} blk;

/* what read_file gathers on the way: the counts, the blocks, the node
 * coordinates and the corner node numbers */
typedef struct {
  size_t nnodes, nelem, nblk, nss, nns;
  blk *b;
  int64_t *ids, *conn;
  double *xyz;
  char (*names)[64];
  int64_t total; /* elements over all blocks */
  int quad;      /* some block is HEX20 or HEX27 */
} exo_read;

/* the dimensions, checked for a 3-D mesh and for counts a file can hold */
static int read_counts(exo *x, exo_read *r) {
  size_t ndim;
  HX_CALL(need_dim(x, "num_dim", "the space dimension", &ndim));
  if (ndim != 3)
    return EXO_ERR("%s: num_dim is %zu: hexcg reads 3-D meshes only (hexahedra in 3-D space)", x->path, ndim);
  HX_CALL(need_dim(x, "num_nodes", "the node count", &r->nnodes));
  HX_CALL(need_dim(x, "num_elem", "the element count", &r->nelem));
  HX_CALL(need_dim(x, "num_el_blk", "the element block count", &r->nblk));
  HX_CALL(dim_len(x, "num_side_sets", &r->nss, NULL));
  HX_CALL(dim_len(x, "num_node_sets", &r->nns, NULL));
  if (r->nnodes == 0 || r->nelem == 0 || r->nblk == 0)
    return EXO_ERR("%s: the file has %zu nodes, %zu elements in %zu blocks: no mesh to read", x->path, r->nnodes,
                   r->nelem, r->nblk);
  if (r->nelem > (size_t)INT64_MAX / 216 || r->nnodes > (size_t)INT64_MAX / 24 || r->nblk > 1000000 ||
      r->nss > 1000000)
    return EXO_ERR("%s: counts beyond what a file can hold (%zu nodes, %zu elements, %zu blocks, %zu side "
                   "sets): a corrupt file",
                   x->path, r->nnodes, r->nelem, r->nblk, r->nss);
  return HX_SUCCESS;
}

/* block i's name, element count and element type (HEX8, HEX20 or HEX27) */
static int read_block(exo *x, size_t i, int64_t id, const char *name, blk *b) {
  char dn[64], what[160];
  b->id = id;
  if (name[0])
    snprintf(b->name, sizeof b->name, "%s", name);
  else
    snprintf(b->name, sizeof b->name, "block_%lld", (long long)id);
  snprintf(what, sizeof what, "block %zu, id %lld, '%s'", i + 1, (long long)id, b->name);
  size_t n, nq;
  int have;
  snprintf(dn, sizeof dn, "num_el_in_blk%zu", i + 1);
  HX_CALL(dim_len(x, dn, &n, &have));
  if (!have || n == 0) { /* an empty block: no connectivity */
    b->n = 0, b->nq = 8;
    return HX_SUCCESS;
  }
  snprintf(dn, sizeof dn, "num_nod_per_el%zu", i + 1);
  HX_CALL(need_dim(x, dn, what, &nq));
  char vn[64], type[64] = "";
  snprintf(vn, sizeof vn, "connect%zu", i + 1);
  const ncvar *cv;
  HX_CALL(var_check(x, vn, what, n * nq, &cv));
  snprintf(type, sizeof type, "%s", cv->elem_type);
  for (char *c = type; *c; c++) *c = (char)toupper((unsigned char)*c);
  for (size_t l = strlen(type); l > 0 && (type[l - 1] == ' ' || type[l - 1] == 0); l--) type[l - 1] = 0;
  const int hex = !strncmp(type, "HEX", 3);
  if (!hex || (nq != 8 && nq != 20 && nq != 27))
    return EXO_ERR("%s: %s has %zu elements of type '%s' with %zu nodes each: hexcg needs an all-hex mesh "
                   "(HEX8, HEX20 or HEX27 blocks); convert or remesh that block with hexahedra (Cubit: "
                   "'block %lld element type hex8'), or remove it",
                   x->path, what, n, type[0] ? type : "(none)", nq, (long long)id);
  if ((!strcmp(type, "HEX20") && nq != 20) || (!strcmp(type, "HEX27") && nq != 27) ||
      (!strcmp(type, "HEX8") && nq != 8))
    return EXO_ERR("%s: %s says element type '%s' but has %zu nodes per element (num_nod_per_el%zu): a "
                   "corrupt file",
                   x->path, what, type, nq, i + 1);
  b->n = (int64_t)n, b->nq = (int)nq;
  return HX_SUCCESS;
}

/* every block, and their element total checked against num_elem */
static int read_blocks(exo *x, exo_read *r) {
  HX_CALL(get_i64(x, "eb_prop1", "the element block ids", r->nblk, r->ids));
  get_names(x, "eb_names", r->nblk, r->names);
  for (size_t i = 0; i < r->nblk; i++) {
    HX_CALL(read_block(x, i, r->ids[i], r->names[i], &r->b[i]));
    r->total += r->b[i].n;
    r->quad |= r->b[i].n > 0 && r->b[i].nq != 8;
  }
  if ((size_t)r->total != r->nelem)
    return EXO_ERR("%s: the element blocks hold %lld elements but num_elem says %zu (counts that do not agree: a "
                   "corrupt file)",
                   x->path, (long long)r->total, r->nelem);
  return HX_SUCCESS;
}

/* coordinates: coordx/y/z, or the older coord[3][num_nodes] */
static int read_coords(exo *x, exo_read *r) {
  const size_t nn = r->nnodes;
  double *tmp = NULL;
  int err = HX_ALLOC(&r->xyz, nn * 3);
  if (!err) err = HX_ALLOC(&tmp, nn * 3);
  if (!err && find_var(x, "coordx")) {
    const char *cn[3] = {"coordx", "coordy", "coordz"};
    for (int d = 0; d < 3 && !err; d++) err = get_f64(x, cn[d], "node coordinates", nn, tmp + d * nn);
  } else if (!err) {
    err = get_f64(x, "coord", "node coordinates", nn * 3, tmp);
  }
  for (size_t v = 0; !err && v < nn; v++)
    for (int d = 0; d < 3; d++) r->xyz[3 * v + d] = tmp[d * nn + v];
  free(tmp);
  return err;
}

/* block i's material: one per block name, blocks of the same name merged */
static int block_material(hx_gmesh *g, const blk *b, int *mi) {
  *mi = -1;
  for (int k = 0; k < g->nmat && *mi < 0; k++)
    if (!strcmp(g->mat_names[k], b->name)) *mi = k;
  if (*mi < 0 && b->n > 0) {
    HX_CALL(hx_strdup(b->name, &g->mat_names[g->nmat]));
    *mi = g->nmat++;
  }
  return HX_SUCCESS;
}

/* block i's elements from e0 on: nodes (27 per element where any block is
 * quadratic), corner node numbers, material and tags */
static int block_elements(exo *x, exo_read *r, size_t i, int64_t e0, int mi, hx_gmesh *g) {
  const blk *b = &r->b[i];
  char vn[64], what[160];
  snprintf(vn, sizeof vn, "connect%zu", i + 1);
  snprintf(what, sizeof what, "connectivity of block %zu, '%s'", i + 1, b->name);
  const int nq = b->nq, npe = g->npe;
  int64_t *c = NULL;
  int err = HX_ALLOC(&c, b->n * nq);
  if (!err) err = get_i64(x, vn, what, (size_t)(b->n * nq), c);
  for (int64_t l = 0; !err && l < b->n; l++) {
    const int64_t e = e0 + l;
    double src[27 * 3], X[27 * 3];
    for (int k = 0; k < nq; k++) {
      const int64_t nd = c[l * nq + k];
      if (nd < 1 || (size_t)nd > r->nnodes) {
        err = EXO_ERR("%s: element %lld of block %zu ('%s'; element %lld of the file) names node %lld, "
                      "outside the file's nodes 1..%zu (a corrupt or truncated file)",
                      x->path, (long long)(l + 1), i + 1, b->name, (long long)(e + 1), (long long)nd,
                      r->nnodes);
        break;
      }
      memcpy(src + 3 * k, r->xyz + 3 * (nd - 1), 3 * sizeof(double));
    }
    if (err) break;
    for (int k = 0; k < 8; k++) r->conn[e * 8 + exo_corner_tensor8[k]] = c[l * nq + k];
    if (npe == 8) {
      for (int k = 0; k < 8; k++) memcpy(&g->nodes[(e * 8 + exo_corner_tensor8[k]) * 3], src + 3 * k, 3 * sizeof(double));
    } else {
      fill27(nq, src, X);
      memcpy(&g->nodes[e * 27 * 3], X, sizeof X);
    }
    g->mat[e] = mi;
    g->etag[e] = e + 1;
    for (int f = 0; f < 6; f++) g->ftag[e * 6 + f] = -1;
  }
  free(c);
  return err;
}

/* the mesh's elements, block after block */
static int fill_elements(exo *x, exo_read *r, hx_gmesh *g) {
  const int64_t total = r->total;
  memset(g, 0, sizeof *g);
  snprintf(g->src, sizeof g->src, "%s", x->path);
  const int npe = r->quad ? 27 : 8;
  g->ne = total, g->npe = npe;
  HX_CALL(HX_ALLOC(&g->nodes, total * npe * 3));
  HX_CALL(HX_ALLOC(&g->vid, total * 8));
  HX_CALL(HX_ALLOC(&g->mat, total));
  HX_CALL(HX_ALLOC(&g->ftag, total * 6));
  HX_CALL(HX_ALLOC(&g->etag, total));
  HX_CALL(HX_ALLOC(&r->conn, total * 8)); /* corner node numbers, tensor order */
  HX_CALL(HX_ALLOC(&g->mat_names, r->nblk));
  int64_t e0 = 0;
  for (size_t i = 0; i < r->nblk; i++) {
    int mi;
    HX_CALL(block_material(g, &r->b[i], &mi));
    if (r->b[i].n == 0) continue;
    HX_CALL(block_elements(x, r, i, e0, mi, g));
    e0 += r->b[i].n;
  }
  return HX_SUCCESS;
}

/* vertices: the distinct corner node numbers */
static int number_vertices(const exo_read *r, hx_gmesh *g) {
  const int64_t n = r->total * 8;
  int64_t *vt = NULL;
  HX_CALL(HX_ALLOC(&vt, n));
  memcpy(vt, r->conn, sizeof *vt * (size_t)n);
  qsort(vt, (size_t)n, sizeof *vt, hx_mesh_cmp_key);
  int64_t nv = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || vt[i] != vt[i - 1]) vt[nv++] = vt[i];
  g->vtag = vt, g->nv = nv;
  for (int64_t i = 0; i < n; i++) {
    const int64_t *p = bsearch(&r->conn[i], vt, (size_t)nv, sizeof *vt, hx_mesh_cmp_key);
    g->vid[i] = p - vt;
  }
  return HX_SUCCESS;
}

/* side set s's tag number: one per name, sets of the same name merged */
static int side_set_tag(hx_gmesh *g, const char *nm, int *ti) {
  *ti = -1;
  for (int k = 0; k < g->ntags && *ti < 0; k++)
    if (!strcmp(g->tag_names[k], nm)) *ti = k;
  if (*ti < 0) {
    HX_CALL(hx_strdup(nm, &g->tag_names[g->ntags]));
    *ti = g->ntags++;
  }
  return HX_SUCCESS;
}

/* side set s's cnt sides as boundary quads (4 corner vertices) with tag ti */
static int side_set_quads(exo *x, size_t s, const char *what, size_t cnt, int ti, int64_t total, hx_gmesh *g) {
  int64_t *el = NULL, *sd = NULL;
  char v1[64], v2[64];
  snprintf(v1, sizeof v1, "elem_ss%zu", s + 1);
  snprintf(v2, sizeof v2, "side_ss%zu", s + 1);
  int err = HX_ALLOC(&el, cnt);
  if (!err) err = HX_ALLOC(&sd, cnt);
  if (!err) err = get_i64(x, v1, what, cnt, el);
  if (!err) err = get_i64(x, v2, what, cnt, sd);
  for (size_t k = 0; !err && k < cnt; k++) {
    if (el[k] < 1 || el[k] > total)
      err = EXO_ERR("%s: %s: entry %zu names element %lld, but the file has elements 1..%lld (a side set "
                    "naming elements that do not exist: fix or remove the side set)",
                    x->path, what, k + 1, (long long)el[k], (long long)total);
    else if (sd[k] < 1 || sd[k] > 6)
      err = EXO_ERR("%s: %s: entry %zu names side %lld of element %lld; a hexahedron has sides 1..6 (a "
                    "corrupt file)",
                    x->path, what, k + 1, (long long)sd[k], (long long)el[k]);
    if (err) break;
    const int f = exo_side_face[sd[k] - 1];
    for (int c = 0; c < 4; c++) g->bq_v[g->nbq * 4 + c] = g->vid[(el[k] - 1) * 8 + hx_hex_face_vert[f][c]];
    g->bq_tag[g->nbq++] = ti;
  }
  free(el);
  free(sd);
  return err;
}

/* side sets: boundary quads resolved by the topology */
static int read_side_sets(exo *x, exo_read *r, hx_gmesh *g) {
  const size_t nss = r->nss;
  const int64_t total = r->total;
  HX_CALL(get_i64(x, "ss_prop1", "the side set ids", nss, r->ids));
  get_names(x, "ss_names", nss, r->names);
  int64_t nq = 0;
  size_t *cnt = calloc(nss, sizeof *cnt);
  HX_CHECK(cnt != NULL, HX_ERR_MEM, "out of memory");
  int err = HX_SUCCESS;
  for (size_t s = 0; s < nss && !err; s++) {
    char dn[64];
    snprintf(dn, sizeof dn, "num_side_ss%zu", s + 1);
    err = dim_len(x, dn, &cnt[s], NULL);
    if (!err && cnt[s] > (size_t)total * 6)
      err = EXO_ERR("%s: side set %zu (%s) holds %zu sides, more than the %lld elements have (a corrupt file)",
                    x->path, s + 1, r->names[s], cnt[s], (long long)total);
    nq += (int64_t)cnt[s];
  }
  if (!err) err = HX_ALLOC(&g->bq_v, nq * 4 + 1);
  if (!err) err = HX_ALLOC(&g->bq_tag, nq + 1);
  if (!err) err = HX_ALLOC(&g->tag_names, nss);
  for (size_t s = 0; s < nss && !err; s++) {
    char nm[64], what[160];
    if (r->names[s][0])
      snprintf(nm, sizeof nm, "%s", r->names[s]);
    else
      snprintf(nm, sizeof nm, "sideset_%lld", (long long)r->ids[s]);
    int ti;
    err = side_set_tag(g, nm, &ti);
    if (err || cnt[s] == 0) continue;
    snprintf(what, sizeof what, "side set %zu, id %lld, '%s'", s + 1, (long long)r->ids[s], nm);
    err = side_set_quads(x, s, what, cnt[s], ti, total, g);
  }
  free(cnt);
  return err;
}

static int read_file(exo *x, hx_gmesh *g) {
  exo_read r = {0};
  HX_CALL(read_counts(x, &r));
  const size_t nblk = r.nblk, nss = r.nss;
  int err = HX_ALLOC(&r.b, nblk);
  if (!err) err = HX_ALLOC(&r.ids, nblk > nss ? nblk : nss + 1);
  if (!err) err = HX_ALLOC(&r.names, (nblk > nss ? nblk : nss) + 1);
  if (!err) err = read_blocks(x, &r);
  if (!err) err = read_coords(x, &r);
  if (!err) err = fill_elements(x, &r, g);
  if (!err) err = number_vertices(&r, g);
  if (!err && nss > 0) err = read_side_sets(x, &r, g);
  if (!err && r.nns > 0)
    hx_mesh_note("note: %s: %zu node set(s) ignored (hexcg takes boundary tags from side sets; docs/mesh.md)\n", x->path,
             r.nns);
  free(r.b);
  free(r.ids);
  free(r.conn);
  free(r.xyz);
  free(r.names);
  return err;
}

/* the whole file in memory (a mesh file's size bounds what it may declare) */
int hx_gmesh_read_exodus(const char *path, hx_gmesh *g) {
  memset(g, 0, sizeof *g);
  FILE *f = fopen(path, "rb");
  HX_CHECK(f != NULL, HX_ERR_INPUT, "%s: cannot open the Exodus II file: it does not exist or is not readable",
           path);
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0;
  int err = HX_SUCCESS;
  for (;;) {
    if (len == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      err = hx_realloc(cap, 1, &buf);
      if (err) break;
    }
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (r == 0) break;
  }
  if (!err && ferror(f)) err = EXO_ERR("%s: reading the file failed", path);
  fclose(f);
  exo x;
  memset(&x, 0, sizeof x);
  x.path = path, x.buf = buf, x.len = len;
  if (!err && len >= 8 && !memcmp(buf, "\x89HDF\r\n\x1a\n", 8)) { /* netCDF-4 */
    free(buf);
    buf = NULL, x.buf = NULL, x.len = 0;
    err = h5_load(&x);
    buf = (uint8_t *)x.buf;
  } else if (!err) {
    err = parse_header(&x);
  }
  if (!err) {
    for (int i = 0; i < x.ndims; i++)
      if (!strcmp(x.dims[i].name, "len_name")) x.len_name = x.dims[i].len;
    err = read_file(&x, g);
  }
  free(x.dims);
  free(x.vars);
  free(buf);
  if (err) {
    hx_gmesh_free(g);
    memset(g, 0, sizeof *g);
  }
  return err;
}
