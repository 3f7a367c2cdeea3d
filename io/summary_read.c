/* Reading back what hexcg writes about a run: summary.yaml (hx_summary_read)
 * and the `bounds:` mapping of a regression case (hx_bounds_read). Used by
 * `hexcg compare`; libyaml stays inside io/ (io/yaml_tree.c). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io_impl.h"

/* Read a whole (small) text file; HX_ERR_INPUT naming it when it cannot be
 * read or is not a regular text file (hx_io_read_file) */
static int sr_read_file(const char *path, const char *what, char **text, size_t *len) {
  return hx_io_read_file(path, what, (size_t)16 << 20, 0, text, len);
}

static const char *sr_kind(const hx_ynode *v) {
  return v->kind == HX_YN_MAP ? "a mapping" : v->kind == HX_YN_SEQ ? "a list" : "a value";
}

static int sr_scalar(const hx_ynode *v, const char *key, const char *what) {
  if (v->kind != HX_YN_SCALAR) return hx_yerror(v, "%s: expected %s, got %s", key, what, sr_kind(v));
  if (!v->value[0] && !v->quoted) return hx_yerror(v, "%s: no value given (expected %s)", key, what);
  return HX_SUCCESS;
}

/* A number; also the words nan/inf (YAML .nan/.inf, and "nan.0" as older
 * writers print a NaN), since a diverged run may report them. */
static int sr_double(const hx_ynode *v, const char *key, double *d) {
  HX_CALL(sr_scalar(v, key, "a number"));
  const char *s = v->value;
  int neg = 0;
  if (*s == '+' || *s == '-') neg = *s == '-', s++;
  if (*s == '.') s++;
  if (!strncasecmp(s, "nan", 3) && (!s[3] || !strcmp(s + 3, ".0"))) {
    *d = NAN;
    return HX_SUCCESS;
  }
  if ((!strncasecmp(s, "inf", 3) && (!s[3] || !strcmp(s + 3, ".0"))) || !strcasecmp(s, "infinity")) {
    *d = neg ? -INFINITY : INFINITY;
    return HX_SUCCESS;
  }
  char *end = NULL;
  errno = 0;
  *d = strtod(v->value, &end);
  int ok = end != v->value && !*end && errno != ERANGE;
  for (const char *c = v->value; ok && *c; c++)
    if (!strchr("0123456789+-.eE", *c)) ok = 0;
  if (!ok) return hx_yerror(v, "%s: expected a number, got '%s'", key, v->value);
  return HX_SUCCESS;
}

static int sr_int64(const hx_ynode *v, const char *key, long long lo, long long *out) {
  HX_CALL(sr_scalar(v, key, "an integer"));
  char *end = NULL;
  errno = 0;
  long long x = strtoll(v->value, &end, 10);
  if (end == v->value || *end || errno == ERANGE)
    return hx_yerror(v, "%s: expected an integer, got '%s'", key, v->value);
  if (x < lo) return hx_yerror(v, "%s: must be >= %lld, got %lld", key, lo, x);
  *out = x;
  return HX_SUCCESS;
}

static int sr_int(const hx_ynode *v, const char *key, long long lo, int *out) {
  long long x = 0;
  HX_CALL(sr_int64(v, key, lo, &x));
  if (x > 2147483647LL) return hx_yerror(v, "%s: %lld is too large", key, x);
  *out = (int)x;
  return HX_SUCCESS;
}

static int sr_bool(const hx_ynode *v, const char *key, int *out) {
  HX_CALL(sr_scalar(v, key, "true or false"));
  if (!strcasecmp(v->value, "true"))
    *out = 1;
  else if (!strcasecmp(v->value, "false"))
    *out = 0;
  else
    return hx_yerror(v, "%s: expected true or false, got '%s'", key, v->value);
  return HX_SUCCESS;
}

static int sr_string(const hx_ynode *v, const char *key, char *buf, size_t len) {
  if (v->kind != HX_YN_SCALAR) return hx_yerror(v, "%s: expected a text, got %s", key, sr_kind(v));
  snprintf(buf, len, "%s", v->value);
  return HX_SUCCESS;
}

static int sr_map(const hx_ynode *v, const char *key) {
  if (v->kind != HX_YN_MAP) return hx_yerror(v, "%s: expected a mapping, got %s", key, sr_kind(v));
  return HX_SUCCESS;
}

static int sr_is_null(const hx_ynode *v) {
  return v->kind == HX_YN_SCALAR && !v->quoted &&
         (!v->value[0] || !strcmp(v->value, "null") || !strcmp(v->value, "~") || !strcmp(v->value, "Null") ||
          !strcmp(v->value, "NULL"));
}

/* A required key of map m ("solver" section named sec). */
static int sr_need(const hx_ynode *m, const char *sec, const char *key, hx_ynode **v) {
  *v = hx_ynode_get(m, key, NULL);
  if (!*v) {
    if (sec) return hx_yerror(m, "missing required key '%s.%s'", sec, key);
    return hx_yerror(m, "missing required key '%s'", key);
  }
  return HX_SUCCESS;
}

static int summary_from_tree(const hx_ynode *root, hx_summary_info *in) {
  hx_run_stats *st = &in->st;
  hx_ynode *v, *s;
  HX_CALL(sr_map(root, "summary"));
  if ((v = hx_ynode_get(root, "case", NULL)))
    HX_CALL(sr_string(v, "case", in->case_name, sizeof in->case_name));
  if ((v = hx_ynode_get(root, "ranks", NULL))) HX_CALL(sr_int(v, "ranks", 1, &st->ranks));
  if ((v = hx_ynode_get(root, "backend", NULL)))
    HX_CALL(sr_string(v, "backend", st->backend, sizeof st->backend));
  if ((v = hx_ynode_get(root, "mesh", NULL))) {
    HX_CALL(sr_map(v, "mesh"));
    if ((s = hx_ynode_get(v, "type", NULL)))
      HX_CALL(sr_string(s, "mesh.type", in->mesh_type, sizeof in->mesh_type));
    if ((s = hx_ynode_get(v, "elements", NULL))) {
      long long e = 0;
      HX_CALL(sr_int64(s, "mesh.elements", 0, &e));
      st->elements = (int64_t)e;
    }
  }
  if ((v = hx_ynode_get(root, "order", NULL))) HX_CALL(sr_int(v, "order", 1, &st->order));
  if ((v = hx_ynode_get(root, "dofs", NULL))) {
    long long d = 0;
    HX_CALL(sr_int64(v, "dofs", 0, &d));
    st->dofs = (int64_t)d;
  }

  hx_ynode *sol = NULL;
  HX_CALL(sr_need(root, NULL, "solver", &sol));
  HX_CALL(sr_map(sol, "solver"));
  HX_CALL(sr_need(sol, "solver", "iterations", &v));
  HX_CALL(sr_int(v, "solver.iterations", 0, &st->iterations));
  HX_CALL(sr_need(sol, "solver", "converged", &v));
  HX_CALL(sr_bool(v, "solver.converged", &st->converged));
  HX_CALL(sr_need(sol, "solver", "reason", &v));
  HX_CALL(sr_string(v, "solver.reason", st->reason, sizeof st->reason));
  if ((v = hx_ynode_get(sol, "preconditioner", NULL)))
    HX_CALL(sr_string(v, "solver.preconditioner", in->preconditioner, sizeof in->preconditioner));
  if ((v = hx_ynode_get(sol, "tol", NULL))) HX_CALL(sr_double(v, "solver.tol", &in->tol));
  hx_ynode *r0 = hx_ynode_get(sol, "initial_residual", NULL), *r = hx_ynode_get(sol, "final_residual", NULL),
           *rr = hx_ynode_get(sol, "final_rel_residual", NULL);
  if (r0 || r || rr) {
    if (!(r0 && r && rr))
      return hx_yerror(sol, "solver: initial_residual, final_residual and final_rel_residual go together");
    HX_CALL(sr_double(r0, "solver.initial_residual", &st->residual0));
    HX_CALL(sr_double(r, "solver.final_residual", &st->residual));
    HX_CALL(sr_double(rr, "solver.final_rel_residual", &st->rel_residual));
    in->has_residuals = 1;
  }

  hx_ynode *er = NULL;
  HX_CALL(sr_need(root, NULL, "error", &er));
  if (sr_is_null(er)) {
    st->exact_known = 0;
  } else {
    HX_CALL(sr_map(er, "error"));
    HX_CALL(sr_need(er, "error", "l2", &v));
    HX_CALL(sr_double(v, "error.l2", &st->error_l2));
    HX_CALL(sr_need(er, "error", "max", &v));
    HX_CALL(sr_double(v, "error.max", &st->error_max));
    st->exact_known = 1;
  }
  return HX_SUCCESS;
}

/* Parse the file into doc; an empty document is an error naming the file. */
static int sr_parse(const char *path, const char *what, hx_ydoc *doc) {
  char *text = NULL;
  size_t len = 0;
  HX_CALL(sr_read_file(path, what, &text, &len));
  int err = hx_ydoc_parse(doc, text, len, path, 0);
  free(text);
  HX_CALL(err);
  HX_CHECK(doc->root, HX_ERR_INPUT, "%s: empty file (expected a YAML mapping)", path);
  return HX_SUCCESS;
}

int hx_summary_read(const char *path, hx_summary_info *info) {
  memset(info, 0, sizeof *info);
  hx_ydoc doc = {NULL, NULL};
  int err = sr_parse(path, "summary file", &doc);
  if (!err) err = summary_from_tree(doc.root, info);
  hx_ydoc_free(&doc);
  if (err) memset(info, 0, sizeof *info);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int bounds_from_tree(const hx_ynode *root, const char *path, hx_bounds *b) {
  static const char *const keys[] = {"max_iterations", "max_rel_residual", "max_error_l2", "max_error_max",
                                     "converged"};
  const int nkeys = (int)(sizeof keys / sizeof keys[0]);
  HX_CALL(sr_map(root, "the file"));
  hx_ynode *m = hx_ynode_get(root, "bounds", NULL);
  HX_CHECK(m, HX_ERR_INPUT,
           "%s: no 'bounds:' mapping (keys: max_iterations, max_rel_residual, "
           "max_error_l2, max_error_max, converged)",
           path);
  HX_CALL(sr_map(m, "bounds"));
  if (m->n == 0) return hx_yerror(m, "bounds: empty, give at least one bound");
  for (int i = 0; i < m->n; i++) {
    const hx_ynode *k = m->keys[i], *v = m->vals[i];
    char key[96];
    snprintf(key, sizeof key, "bounds.%s", k->value);
    if (!strcmp(k->value, "max_iterations")) {
      HX_CALL(sr_int(v, key, 0, &b->max_iterations));
    } else if (!strcmp(k->value, "converged")) {
      HX_CALL(sr_bool(v, key, &b->converged));
    } else {
      double *dst = !strcmp(k->value, "max_rel_residual") ? &b->max_rel_residual
                    : !strcmp(k->value, "max_error_l2")   ? &b->max_error_l2
                    : !strcmp(k->value, "max_error_max")  ? &b->max_error_max
                                                          : NULL;
      if (!dst) {
        const char *near = hx_closest(k->value, keys, nkeys);
        if (near) return hx_yerror(k, "%s: unknown bound (did you mean '%s'?)", key, near);
        return hx_yerror(k,
                         "%s: unknown bound; known: max_iterations, max_rel_residual, max_error_l2, "
                         "max_error_max, converged",
                         key);
      }
      HX_CALL(sr_double(v, key, dst));
      if (!(*dst > 0) || isinf(*dst))
        return hx_yerror(v, "%s: must be a finite number > 0, got '%s'", key, v->value);
    }
  }
  return HX_SUCCESS;
}

int hx_bounds_read(const char *path, hx_bounds *b) {
  b->max_iterations = -1;
  b->max_rel_residual = b->max_error_l2 = b->max_error_max = -1.0;
  b->converged = -1;
  hx_ydoc doc = {NULL, NULL};
  int err = sr_parse(path, "bounds file", &doc);
  if (!err) err = bounds_from_tree(doc.root, path, b);
  hx_ydoc_free(&doc);
  HX_CALL(err);
  return HX_SUCCESS;
}
