/* Reading back two runs for `hexcg compare` (docs/regression.md): the keys
 * of an effective case.yaml as flat "a.b.c" = text pairs
 * (hx_case_keys_read), and the difference of two solution.h5 files, their
 * nodes matched by element id and checked by coordinates
 * (hx_solution_diff). libyaml and HDF5 stay inside io/. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h5_impl.h"

/* ---------------------------------------------------------------- case keys */
static int keys_push(hx_case_keys *k, const char *key, const char *value) {
  if (k->n == k->cap) {
    int nc = k->cap ? 2 * k->cap : 64;
    HX_CALL(hx_realloc((size_t)nc, sizeof(char *), &k->key));
    HX_CALL(hx_realloc((size_t)nc, sizeof(char *), &k->value));
    k->cap = nc;
  }
  k->key[k->n] = hx_io_strdup(key);
  k->value[k->n] = hx_io_strdup(value);
  HX_CHECK(k->key[k->n] && k->value[k->n], HX_ERR_MEM, "out of memory");
  k->n++;
  return HX_SUCCESS;
}

static int has_map(const hx_ynode *n) {
  if (n->kind == HX_YN_MAP) return 1;
  for (int i = 0; n->kind == HX_YN_SEQ && i < n->n; i++)
    if (has_map(n->vals[i])) return 1;
  return 0;
}

/* a scalar or a list of lists of scalars as flow text: "[[0, 1], [0, 2]]" */
static void flow(const hx_ynode *n, char *buf, size_t len, size_t *at) {
#define PUT(...) (*at += (size_t)snprintf(buf + (*at < len ? *at : len - 1), *at < len ? len - *at : 1, __VA_ARGS__))
  if (n->kind == HX_YN_SCALAR) {
    PUT("%s", n->value);
    return;
  }
  PUT("[");
  for (int i = 0; i < n->n; i++) {
    if (i) PUT(", ");
    flow(n->vals[i], buf, len, at);
  }
  PUT("]");
#undef PUT
}

static int flatten(const hx_ynode *n, const char *pre, hx_case_keys *k) {
  char key[512];
  if (n->kind == HX_YN_MAP) {
    for (int i = 0; i < n->n; i++) {
      snprintf(key, sizeof key, "%s%s%s", pre, pre[0] ? "." : "", n->keys[i]->value);
      HX_CALL(flatten(n->vals[i], key, k));
    }
    return HX_SUCCESS;
  }
  if (n->kind == HX_YN_SEQ && has_map(n)) { /* problem.boundary[0].type */
    for (int i = 0; i < n->n; i++) {
      snprintf(key, sizeof key, "%s[%d]", pre, i);
      HX_CALL(flatten(n->vals[i], key, k));
    }
    return HX_SUCCESS;
  }
  char val[4096];
  size_t at = 0;
  val[0] = 0;
  flow(n, val, sizeof val, &at);
  HX_CALL(keys_push(k, pre, val));
  return HX_SUCCESS;
}

int hx_case_keys_read(const char *path, hx_case_keys *k) {
  memset(k, 0, sizeof *k);
  char *text = NULL;
  size_t len = 0;
  HX_CALL(hx_io_read_file(path, "effective case", (size_t)16 << 20, 0, &text, &len));
  hx_ydoc doc = {NULL, NULL};
  int err = hx_ydoc_parse(&doc, text, len, path, 0);
  free(text);
  if (!err && (!doc.root || doc.root->kind != HX_YN_MAP))
    err = HX_ERROR(HX_ERR_INPUT, "%s: expected a YAML mapping (the effective case of a hexcg run)", path);
  if (!err) err = flatten(doc.root, "", k);
  hx_ydoc_free(&doc);
  if (err) hx_case_keys_free(k);
  HX_CALL(err);
  return HX_SUCCESS;
}

void hx_case_keys_free(hx_case_keys *k) {
  if (!k) return;
  for (int i = 0; i < k->n; i++) free(k->key[i]), free(k->value[i]);
  free(k->key), free(k->value);
  memset(k, 0, sizeof *k);
}

const char *hx_case_keys_get(const hx_case_keys *k, const char *key) {
  for (int i = 0; i < k->n; i++)
    if (!strcmp(k->key[i], key)) return k->value[i];
  return NULL;
}

/* ---------------------------------------------------------------- solutions */
typedef struct {
  long long E, npe;
  int p;
  int64_t *gid;
  double *xyz, *u;
} sol_file;

static void sol_free(sol_file *s) { free(s->gid), free(s->xyz), free(s->u); }

static int attr_i64(hid_t f, const char *path, const char *name, long long *v) {
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  HX_CHECK(a >= 0, HX_ERR_INPUT, "%s: not a hexcg solution file (no attribute '%s')", path, name);
  hid_t sp = H5Aget_space(a), t = H5Aget_type(a);
  const int one = sp >= 0 && t >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Tget_class(t) == H5T_INTEGER;
  int64_t x = 0;
  herr_t st = one ? H5Aread(a, H5T_NATIVE_INT64, &x) : -1;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  H5Aclose(a);
  HX_CHECK(st >= 0, HX_ERR_INPUT, "%s: attribute '%s' is not one integer", path, name);
  *v = (long long)x;
  return HX_SUCCESS;
}

/* dataset name of rows x cols values (cols 1: a 1D dataset), all of it */
static int read_ds(hid_t f, const char *path, const char *name, hid_t mtype, size_t esize, long long rows,
                   int cols, void **data) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  HX_CHECK(ds >= 0, HX_ERR_INPUT, "%s: no dataset %s (not a hexcg solution file?)", path, name);
  hid_t sp = H5Dget_space(ds);
  hsize_t dims[2] = {0, 0};
  const int nd = H5Sget_simple_extent_ndims(sp);
  if (nd == (cols > 1 ? 2 : 1)) H5Sget_simple_extent_dims(sp, dims, NULL);
  H5Sclose(sp);
  hid_t ft = H5Dget_type(ds);
  const size_t fsize = ft >= 0 ? H5Tget_size(ft) : 0;
  if (ft >= 0) H5Tclose(ft);
  const hsize_t want = (hsize_t)rows * (hsize_t)cols;
  int err = HX_SUCCESS;
  if (nd != (cols > 1 ? 2 : 1) || dims[0] != (hsize_t)rows || (cols > 1 && dims[1] != (hsize_t)cols))
    err = HX_ERROR(HX_ERR_INPUT, "%s: dataset %s has the wrong shape (expected %lld x %d)", path, name, rows,
                   cols);
  else if (!fsize || H5Dget_storage_size(ds) / fsize < want)
    err = HX_ERROR(HX_ERR_INPUT, "%s: dataset %s declares more values than the file holds", path, name);
  if (!err) err = hx_calloc((size_t)want + 1, esize, data);
  if (!err && want && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0)
    err = HX_ERROR(HX_ERR_INPUT, "%s: cannot read dataset %s", path, name);
  H5Dclose(ds);
  return err;
}

static int sol_read(const char *path, sol_file *s) {
  memset(s, 0, sizeof *s);
  H5E_auto2_t fn;
  void *cd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &cd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  int err = f < 0 ? HX_ERROR(HX_ERR_INPUT, "cannot open '%s' as an HDF5 file", path) : HX_SUCCESS;
  long long p = 0, E = 0;
  if (!err) err = attr_i64(f, path, "order", &p);
  if (!err) err = attr_i64(f, path, "num_elements", &E);
  if (!err && (p < 1 || p > 64 || E < 1 || E > (1LL << 40)))
    err = HX_ERROR(HX_ERR_INPUT, "%s: order %lld or num_elements %lld out of range", path, p, E);
  if (!err) {
    s->p = (int)p, s->E = E, s->npe = (p + 1) * (p + 1) * (p + 1);
    err = read_ds(f, path, "/mesh/element_id", H5T_NATIVE_INT64, sizeof(int64_t), E, 1, (void **)&s->gid);
  }
  if (!err)
    err = read_ds(f, path, "/mesh/coordinates", H5T_NATIVE_DOUBLE, sizeof(double), E * s->npe, 3,
                  (void **)&s->xyz);
  if (!err) err = read_ds(f, path, "/fields/u", H5T_NATIVE_DOUBLE, sizeof(double), E * s->npe, 1, (void **)&s->u);
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, fn, cd);
  if (err) sol_free(s);
  return err;
}

typedef struct {
  int64_t gid;
  long long row;
} gid_row;

int hx_solution_diff(const char *run, const char *base, hx_solution_diff_info *d) {
  memset(d, 0, sizeof *d);
  sol_file a, b;
  HX_CALL(sol_read(run, &a));
  int err = sol_read(base, &b);
  if (err) {
    sol_free(&a);
    HX_CALL(err);
  }
  gid_row *map = NULL;
  if (a.p != b.p || a.E != b.E) {
    snprintf(d->why_not, sizeof d->why_not, "order %d vs %d, %lld vs %lld elements", a.p, b.p, a.E, b.E);
    goto done;
  }
  err = hx_calloc((size_t)b.E, sizeof *map, &map);
  if (err) goto done;
  for (long long i = 0; i < b.E; i++) map[i].gid = b.gid[i], map[i].row = i;
  qsort(map, (size_t)b.E, sizeof *map, hx_io_cmp_key);
  double scale = 0, umax = 0, sdd = 0, suu = 0, dmax = 0;
  for (long long i = 0; i < b.E * b.npe * 3; i++) scale = fmax(scale, fabs(b.xyz[i]));
  for (long long i = 0; i < b.E * b.npe; i++) umax = fmax(umax, fabs(b.u[i]));
  const double tol = 1e-9 * scale; /* the writer stores the same computed points (restart's rule) */
  for (long long e = 0; e < a.E; e++) {
    gid_row key = {a.gid[e], 0};
    const gid_row *hit = bsearch(&key, map, (size_t)b.E, sizeof *map, hx_io_cmp_key);
    if (!hit) {
      snprintf(d->why_not, sizeof d->why_not, "element %lld of %s is not in %s (another mesh)",
               (long long)a.gid[e], run, base);
      goto done;
    }
    for (long long k = 0; k < a.npe; k++) {
      const long long ia = e * a.npe + k, ib = hit->row * b.npe + k;
      const double *xa = a.xyz + 3 * ia, *xb = b.xyz + 3 * ib;
      if (!(fabs(xa[0] - xb[0]) <= tol && fabs(xa[1] - xb[1]) <= tol && fabs(xa[2] - xb[2]) <= tol)) {
        snprintf(d->why_not, sizeof d->why_not,
                 "node %lld of element %lld is at (%.9g, %.9g, %.9g) in one and at (%.9g, %.9g, %.9g) in the "
                 "other (another mesh)",
                 k, (long long)a.gid[e], xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]);
        goto done;
      }
      const double du = a.u[ia] - b.u[ib];
      if (!isfinite(du)) {
        dmax = INFINITY, sdd = INFINITY;
      } else {
        dmax = fmax(dmax, fabs(du));
        sdd += du * du;
      }
      suu += b.u[ib] * b.u[ib];
    }
  }
  d->compared = 1;
  d->nodes = a.E * a.npe;
  d->max_abs = dmax;
  d->max_u = umax;
  d->rel_max = umax > 0 ? dmax / umax : (dmax > 0 ? INFINITY : 0);
  d->rel_l2 = suu > 0 ? sqrt(sdd / suu) : (sdd > 0 ? INFINITY : 0);
done:
  free(map);
  sol_free(&a), sol_free(&b);
  HX_CALL(err);
  return HX_SUCCESS;
}
