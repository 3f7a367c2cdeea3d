/* Option trees with source positions, the option tables' typed readers (one
 * rule per type for every group: see hx_core.h) and "did you mean". */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hx_core.h"

static char *dupstr(const char *s) {
  if (!s) return NULL;
  const size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

hx_opt *hx_opt_new(hx_opt_kind kind, const char *value, const char *where) {
  hx_opt *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->kind = kind;
  o->where = dupstr(where ? where : "<default>");
  if (kind == HX_OPT_SCALAR) o->value = dupstr(value ? value : "");
  if (!o->where || (kind == HX_OPT_SCALAR && !o->value)) hx_opt_free(&o);
  return o;
}

int hx_opt_push(hx_opt *parent, const char *key, hx_opt *val) {
  HX_CHECK(parent && val && parent->kind != HX_OPT_SCALAR, HX_ERR_ARG, "option node is not a map or list");
  HX_CHECK((parent->kind == HX_OPT_MAP) == (key != NULL), HX_ERR_ARG, "map entries need a key, list items none");
  hx_opt **items = realloc(parent->items, sizeof *items * (size_t)(parent->n + 1));
  HX_CHECK(items, HX_ERR_MEM, "out of memory");
  parent->items = items;
  if (key) {
    free(val->key);
    HX_CHECK(val->key = dupstr(key), HX_ERR_MEM, "out of memory");
  }
  parent->items[parent->n++] = val;
  return HX_SUCCESS;
}

hx_opt *hx_opt_get(const hx_opt *map, const char *key) {
  if (!map || map->kind != HX_OPT_MAP) return NULL;
  for (int i = 0; i < map->n; i++)
    if (!strcmp(map->items[i]->key, key)) return map->items[i];
  return NULL;
}

int hx_opt_remove(hx_opt *map, const char *key) {
  if (!map || map->kind != HX_OPT_MAP) return 0;
  for (int i = 0; i < map->n; i++)
    if (!strcmp(map->items[i]->key, key)) {
      hx_opt_free(&map->items[i]);
      memmove(map->items + i, map->items + i + 1, sizeof *map->items * (size_t)(map->n - i - 1));
      map->n--;
      return 1;
    }
  return 0;
}

void hx_opt_free(hx_opt **po) {
  if (!po || !*po) return;
  hx_opt *o = *po;
  for (int i = 0; i < o->n; i++) hx_opt_free(&o->items[i]);
  free(o->items), free(o->key), free(o->value), free(o->where), free(o);
  *po = NULL;
}

hx_opt *hx_opt_copy(const hx_opt *o) {
  if (!o) return NULL;
  hx_opt *c = hx_opt_new(o->kind, o->value, o->where);
  if (!c) return NULL;
  c->quoted = o->quoted;
  if (o->key && !(c->key = dupstr(o->key))) goto fail;
  for (int i = 0; i < o->n; i++) {
    hx_opt *ci = hx_opt_copy(o->items[i]);
    if (!ci) goto fail;
    if (hx_opt_push(c, o->items[i]->key, ci)) {
      hx_opt_free(&ci);
      hx_error_clear();
      goto fail;
    }
  }
  return c;
fail:
  hx_opt_free(&c);
  return NULL;
}

int hx_opt_error(const hx_opt *o, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return HX_ERROR(HX_ERR_INPUT, "%s: %s", o && o->where ? o->where : "<options>", msg);
}

static void join(char *buf, size_t len, const char *const *names, int n) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && off < len; i++) off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", names[i]);
}

/* ---------------------------------------------------------------- option tables */
#define GROUP_MAX_KEYS 64

static void full_key(const hx_opt_group *g, const char *key, char *buf, size_t len) {
  if (g->path && g->path[0])
    snprintf(buf, len, "%s.%s", g->path, key);
  else
    snprintf(buf, len, "%s", key);
}

static int verror(const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int verror(const char *where, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return HX_ERROR(HX_ERR_INPUT, "%s: %s", where ? where : "<options>", msg);
}

const hx_opt_key *hx_opt_group_find(const hx_opt_group *g, const char *key) {
  for (int i = 0; i < g->n; i++)
    if (!strcmp(g->keys[i].key, key)) return &g->keys[i];
  return NULL;
}

int hx_opt_unknown_key(const hx_opt_group *g, const char *key, const char *where) {
  const char *names[GROUP_MAX_KEYS];
  const int n = g->n < GROUP_MAX_KEYS ? g->n : GROUP_MAX_KEYS;
  for (int i = 0; i < n; i++) names[i] = g->keys[i].key;
  char allowed[1024], in[160] = "";
  join(allowed, sizeof allowed, names, n);
  if (g->path && g->path[0]) snprintf(in, sizeof in, " in %s", g->path);
  const char *near = hx_closest(key, names, n);
  if (near)
    return verror(where, "unknown key '%s'%s (did you mean '%s'?); allowed keys: %s", key, in, near, allowed);
  return verror(where, "unknown key '%s'%s; allowed keys: %s", key, in, allowed);
}

static const char *what_of(const hx_opt_key *k, char *buf, size_t len) {
  switch (k->type) {
    case HX_OT_BOOL: return k->flags & HX_OPT_AUTO ? "true, false or auto" : "true or false";
    case HX_OT_INT: return "an integer";
    case HX_OT_DOUBLE: return "a number";
    case HX_OT_ENUM:
      snprintf(buf, len, "one of: ");
      join(buf + strlen(buf), len - strlen(buf), k->names, k->nnames);
      return buf;
    case HX_OT_TEXT: return "a text";
    case HX_OT_GROUP: return "a mapping";
    case HX_OT_OTHER: return k->what ? k->what : "a value";
  }
  return "a value";
}

/* a decimal number: no hex floats, no 'nan'/'inf' words, finite */
static int to_double(const char *s, double *d) {
  char *end = NULL;
  errno = 0;
  *d = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(*d)) return 0;
  for (const char *c = s; *c; c++)
    if (!strchr("0123456789+-.eE", *c)) return 0;
  return 1;
}

int hx_opt_is_number(const char *s, double *d) { return s && to_double(s, d); }

static void range_text(const hx_opt_key *k, char *buf, size_t len) {
  const int lo = isfinite(k->min), hi = isfinite(k->max);
  if (lo && hi)
    snprintf(buf, len, "in %c%g, %g%c", k->flags & HX_OPT_MIN_OPEN ? '(' : '[', k->min, k->max,
             k->flags & HX_OPT_MAX_OPEN ? ')' : ']');
  else if (lo)
    snprintf(buf, len, "%s %g", k->flags & HX_OPT_MIN_OPEN ? ">" : ">=", k->min);
  else if (hi)
    snprintf(buf, len, "%s %g", k->flags & HX_OPT_MAX_OPEN ? "<" : "<=", k->max);
  else
    buf[0] = '\0';
}

int hx_opt_parse(const hx_opt_key *k, const char *path, const hx_opt_val *v, void *dst) {
  char what[512];
  const char *w = what_of(k, what, sizeof what);
  if (k->type == HX_OT_GROUP || k->type == HX_OT_OTHER)
    return HX_ERROR(HX_ERR_ARG, "%s: option rows of this type are read by their module", path);
  if (v->kind != HX_OPT_SCALAR)
    return verror(v->where, "%s: expected %s, got %s", path, w,
                  v->kind == HX_OPT_MAP ? "a mapping" : "a list");
  const char *s = v->text ? v->text : "";
  if (!s[0] && !v->quoted) return verror(v->where, "%s: no value given (expected %s)", path, w);
  switch (k->type) {
    case HX_OT_BOOL: {
      int b;
      if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        b = 1;
      else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        b = 0;
      else if (k->flags & HX_OPT_AUTO && !strcmp(s, "auto"))
        b = k->auto_value;
      else
        return verror(v->where, "%s: expected %s, got '%s'", path, w, s);
      *(int *)dst = b;
      return HX_SUCCESS;
    }
    case HX_OT_INT: {
      char *end = NULL;
      errno = 0;
      const long x = strtol(s, &end, 10);
      if (end == s || *end || errno == ERANGE)
        return verror(v->where, "%s: expected an integer, got '%s'", path, s);
      if ((double)x < k->min || (double)x > k->max) {
        const long lo = (long)k->min, hi = (long)k->max;
        if (k->max >= 2147483647.0 && (double)x < k->min)
          return verror(v->where, "%s: must be >= %ld, got %ld", path, lo, x);
        if (k->max >= 2147483647.0) return verror(v->where, "%s: must be at most %ld, got %ld", path, hi, x);
        return verror(v->where, "%s: must be in %ld..%ld, got %ld", path, lo, hi, x);
      }
      *(int *)dst = (int)x;
      return HX_SUCCESS;
    }
    case HX_OT_DOUBLE: {
      double x;
      if (!to_double(s, &x)) return verror(v->where, "%s: expected a number, got '%s'", path, s);
      const int below = k->flags & HX_OPT_MIN_OPEN ? !(x > k->min) : !(x >= k->min);
      const int above = k->flags & HX_OPT_MAX_OPEN ? !(x < k->max) : !(x <= k->max);
      if (below || above) {
        char r[128];
        range_text(k, r, sizeof r);
        return verror(v->where, "%s: must be %s, got %g", path, r, x);
      }
      *(double *)dst = x;
      return HX_SUCCESS;
    }
    case HX_OT_ENUM: {
      for (int i = 0; i < k->nnames; i++)
        if (!strcmp(s, k->names[i])) {
          *(int *)dst = i;
          return HX_SUCCESS;
        }
      char allowed[1024];
      join(allowed, sizeof allowed, k->names, k->nnames);
      const char *near = hx_closest(s, k->names, k->nnames);
      if (near)
        return verror(v->where, "%s: unknown value '%s' (did you mean '%s'?); allowed: %s", path, s, near,
                      allowed);
      return verror(v->where, "%s: unknown value '%s'; allowed: %s", path, s, allowed);
    }
    case HX_OT_TEXT: {
      if (!s[0]) return verror(v->where, "%s: must not be empty", path);
      char *d = dupstr(s);
      HX_CHECK(d, HX_ERR_MEM, "out of memory");
      free(*(char **)dst);
      *(char **)dst = d;
      return HX_SUCCESS;
    }
    default: break;
  }
  return HX_ERROR(HX_ERR_ARG, "%s: unknown option type", path);
}

int hx_opt_parse_default(const hx_opt_key *k, void *dst) {
  HX_CHECK(k->def, HX_ERR_ARG, "option %s has no default", k->key);
  const hx_opt_val v = {HX_OPT_SCALAR, k->def, 1, "<default>"};
  HX_CALL(hx_opt_parse(k, k->key, &v, dst));
  return HX_SUCCESS;
}

void hx_fmt_double(char *buf, size_t len, double v) {
  if (!isfinite(v)) { /* YAML's spelling of the special values */
    snprintf(buf, len, "%s", isnan(v) ? ".nan" : v > 0 ? ".inf" : "-.inf");
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* keep a '.' in the mantissa so YAML 1.1 readers see a float: 1.0, 1.0e-10 */
  if (!strchr(buf, '.') && strlen(buf) + 3 < len) {
    char *e = strpbrk(buf, "eE");
    const size_t at = e ? (size_t)(e - buf) : strlen(buf);
    memmove(buf + at + 2, buf + at, strlen(buf + at) + 1);
    buf[at] = '.', buf[at + 1] = '0';
  }
}

void hx_opt_format(const hx_opt_key *k, const void *src, char *buf, size_t len) {
  switch (k->type) {
    case HX_OT_BOOL: {
      const int b = *(const int *)src;
      snprintf(buf, len, "%s", k->flags & HX_OPT_AUTO && b == k->auto_value ? "auto" : b ? "true" : "false");
      return;
    }
    case HX_OT_INT: snprintf(buf, len, "%d", *(const int *)src); return;
    case HX_OT_DOUBLE: hx_fmt_double(buf, len, *(const double *)src); return;
    case HX_OT_ENUM: {
      const int i = *(const int *)src;
      snprintf(buf, len, "%s", i >= 0 && i < k->nnames ? k->names[i] : "?");
      return;
    }
    case HX_OT_TEXT: snprintf(buf, len, "%s", *(char *const *)src ? *(char *const *)src : ""); return;
    default: snprintf(buf, len, "%s", ""); return;
  }
}

void hx_opt_describe(const hx_opt_key *k, char *buf, size_t len) {
  char r[128];
  switch (k->type) {
    case HX_OT_BOOL:
      snprintf(buf, len, "%s", k->flags & HX_OPT_AUTO ? "true|false|auto" : "true|false");
      return;
    case HX_OT_INT:
      if (k->max >= 2147483647.0)
        snprintf(buf, len, "integer >= %ld", (long)k->min);
      else
        snprintf(buf, len, "integer in %ld..%ld", (long)k->min, (long)k->max);
      return;
    case HX_OT_DOUBLE:
      range_text(k, r, sizeof r);
      snprintf(buf, len, "number%s%s", r[0] ? " " : "", r);
      return;
    case HX_OT_ENUM: {
      size_t off = 0;
      buf[0] = '\0';
      for (int i = 0; i < k->nnames && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "", k->names[i]);
      return;
    }
    case HX_OT_TEXT: snprintf(buf, len, "text"); return;
    case HX_OT_GROUP: snprintf(buf, len, "mapping"); return;
    case HX_OT_OTHER: snprintf(buf, len, "%s", k->what ? k->what : "value"); return;
  }
}

static int typed(const hx_opt_key *k) {
  return k->type != HX_OT_GROUP && k->type != HX_OT_OTHER && k->offset != HX_OPT_NOWHERE;
}

int hx_opt_read_group(const hx_opt *map, const hx_opt_group *g, void *base) {
  char path[256];
  if (map && map->kind != HX_OPT_MAP)
    return verror(map->where, "%s: expected a mapping (key: value entries), got %s", g->path,
                  map->kind == HX_OPT_LIST ? "a list" : "a value");
  for (int i = 0; map && i < map->n; i++)
    if (!hx_opt_group_find(g, map->items[i]->key))
      HX_CALL(hx_opt_unknown_key(g, map->items[i]->key, map->items[i]->where));
  for (int r = 0; r < g->n; r++) {
    const hx_opt_key *k = &g->keys[r];
    if (!typed(k)) continue;
    void *dst = (char *)base + k->offset;
    const hx_opt *v = hx_opt_get(map, k->key);
    full_key(g, k->key, path, sizeof path);
    if (v) {
      const hx_opt_val val = {v->kind, v->value, v->quoted, v->where};
      HX_CALL(hx_opt_parse(k, path, &val, dst));
    } else if (k->flags & HX_OPT_REQUIRED) {
      return verror(map ? map->where : NULL, "missing required key '%s'", path);
    } else if (k->def) {
      HX_CALL(hx_opt_parse_default(k, dst));
    }
  }
  return HX_SUCCESS;
}

int hx_opt_write_group(hx_opt *map, const hx_opt_group *g, const void *base) {
  char buf[64];
  for (int r = 0; r < g->n; r++) {
    const hx_opt_key *k = &g->keys[r];
    if (!typed(k) || k->type == HX_OT_TEXT) continue;
    hx_opt_format(k, (const char *)base + k->offset, buf, sizeof buf);
    HX_CALL(hx_opt_set(map, k->key, buf));
  }
  return HX_SUCCESS;
}

void hx_opt_print_keys(const hx_opt_group *g, const void *base, int first, int names_only, FILE *out) {
  char path[256], type[512], def[96];
  for (int r = first; r < g->n; r++) {
    const hx_opt_key *k = &g->keys[r];
    full_key(g, k->key, path, sizeof path);
    if (names_only) {
      fprintf(out, "%s\n", path);
      continue;
    }
    hx_opt_describe(k, type, sizeof type);
    if (k->flags & HX_OPT_REQUIRED)
      snprintf(def, sizeof def, "required");
    else if (k->def)
      snprintf(def, sizeof def, "default %s", k->def);
    else if (base && typed(k)) {
      char v[64];
      hx_opt_format(k, (const char *)base + k->offset, v, sizeof v);
      snprintf(def, sizeof def, "default %s", v);
    } else
      def[0] = '\0';
    fprintf(out, "%-34s %s%s%s%s%s%s\n    %s\n", path, type, def[0] ? ", " : "", def, g->when ? " (" : "",
            g->when ? g->when : "", g->when ? ")" : "", k->help ? k->help : "");
  }
}

int hx_opt_submap(hx_opt *map, const char *key, hx_opt **sub) {
  hx_opt *s = hx_opt_get(map, key);
  if (!s) {
    HX_CHECK(s = hx_opt_new(HX_OPT_MAP, NULL, NULL), HX_ERR_MEM, "out of memory");
    const int err = hx_opt_push(map, key, s);
    if (err) {
      hx_opt_free(&s);
      HX_CALL(err);
    }
  }
  HX_CHECK(s->kind == HX_OPT_MAP, HX_ERR_INPUT, "%s: %s: expected a mapping", s->where, key);
  *sub = s;
  return HX_SUCCESS;
}

int hx_opt_set(hx_opt *map, const char *key, const char *value) {
  const char *dot = strchr(key, '.');
  if (dot) {
    char head[256];
    const size_t len = (size_t)(dot - key);
    HX_CHECK(len < sizeof head, HX_ERR_ARG, "option key too long");
    memcpy(head, key, len);
    head[len] = '\0';
    hx_opt *sub;
    HX_CALL(hx_opt_submap(map, head, &sub));
    HX_CALL(hx_opt_set(sub, dot + 1, value));
    return HX_SUCCESS;
  }
  hx_opt *v = hx_opt_get(map, key);
  if (v && v->kind == HX_OPT_SCALAR) {
    char *nv = dupstr(value);
    HX_CHECK(nv, HX_ERR_MEM, "out of memory");
    free(v->value);
    v->value = nv;
    return HX_SUCCESS;
  }
  HX_CHECK(!v, HX_ERR_ARG, "option %s is not a scalar", key);
  HX_CHECK(v = hx_opt_new(HX_OPT_SCALAR, value, NULL), HX_ERR_MEM, "out of memory");
  const int err = hx_opt_push(map, key, v);
  if (err) hx_opt_free(&v);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* a scalar as YAML text: quoted when it would not read back as the same string */
static void write_scalar(const char *s, FILE *out) {
  int plain = s[0] != '\0' && !strchr(":#{}[],&*!|>'\"%@`", s[0]) && !strstr(s, ": ") && !strstr(s, " #") &&
              s[strlen(s) - 1] != ' ' && s[0] != ' ' && s[0] != '-';
  if (plain) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (const char *c = s; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', out);
    fputc(*c, out);
  }
  fputc('"', out);
}

void hx_opt_write_yaml(const hx_opt *o, int indent, FILE *out) {
  if (!o) return;
  for (int i = 0; i < o->n; i++) {
    const hx_opt *c = o->items[i];
    fprintf(out, "%*s", indent, "");
    if (o->kind == HX_OPT_MAP) fprintf(out, "%s:", c->key);
    else fputs("-", out);
    if (c->kind == HX_OPT_SCALAR) {
      fputc(' ', out);
      write_scalar(c->value, out);
      fputc('\n', out);
    } else if (c->n == 0) {
      fputs(c->kind == HX_OPT_MAP ? " {}\n" : " []\n", out);
    } else {
      fputc('\n', out);
      hx_opt_write_yaml(c, indent + 2, out);
    }
  }
}

int hx_edit_distance(const char *a, const char *b) {
  const size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 64;
  int d[64][64];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
      /* adjacent transposition counts as one edit */
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
        c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[la][lb];
}

const char *hx_closest(const char *s, const char *const *names, int n) {
  const char *best = NULL;
  int bd = 1 << 30;
  for (int i = 0; i < n; i++) {
    const int d = hx_edit_distance(s, names[i]);
    if (d < bd) bd = d, best = names[i];
  }
  const size_t len = strlen(s);
  const int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
  return bd <= limit ? best : NULL;
}

const char *hx_python(void) {
  const char *env = hx_env("HEXCG_PYTHON");
  if (env && env[0]) return env;
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}
