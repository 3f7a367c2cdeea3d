/* Option trees with source positions (see hx_core.h), and "did you mean". */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

int hx_opt_check_keys(const hx_opt *map, const char *path, const char *const *keys, int n) {
  if (!map) return HX_SUCCESS;
  if (map->kind != HX_OPT_MAP) return hx_opt_error(map, "%s: expected a mapping (key: value pairs)", path);
  char allowed[1024];
  join(allowed, sizeof allowed, keys, n);
  for (int i = 0; i < map->n; i++) {
    const char *k = map->items[i]->key;
    int ok = 0;
    for (int j = 0; j < n && !ok; j++) ok = !strcmp(k, keys[j]);
    if (ok) continue;
    const char *near = hx_closest(k, keys, n);
    if (near)
      return hx_opt_error(map->items[i], "%s: unknown key '%s' (did you mean '%s'?); allowed: %s", path, k, near,
                          allowed);
    return hx_opt_error(map->items[i], "%s: unknown key '%s'; allowed: %s", path, k, allowed);
  }
  return HX_SUCCESS;
}

static const hx_opt *scalar(const hx_opt *map, const char *path, const char *key, const char *what, int *err) {
  *err = HX_SUCCESS;
  const hx_opt *v = hx_opt_get(map, key);
  if (!v) return NULL;
  if (v->kind != HX_OPT_SCALAR || !v->value[0]) {
    *err = hx_opt_error(v, "%s.%s: expected %s", path, key, what);
    return NULL;
  }
  return v;
}

int hx_opt_int(const hx_opt *map, const char *path, const char *key, long min, long max, int *out) {
  int err;
  const hx_opt *v = scalar(map, path, key, "an integer", &err);
  HX_CALL(err);
  if (!v) return HX_SUCCESS;
  char *end;
  errno = 0;
  const long x = strtol(v->value, &end, 10);
  if (*end || errno) return hx_opt_error(v, "%s.%s: expected an integer, got '%s'", path, key, v->value);
  if (x < min || x > max)
    return hx_opt_error(v, "%s.%s: %ld is out of range [%ld, %ld]", path, key, x, min, max);
  *out = (int)x;
  return HX_SUCCESS;
}

int hx_opt_double(const hx_opt *map, const char *path, const char *key, double min, double max, double *out) {
  int err;
  const hx_opt *v = scalar(map, path, key, "a number", &err);
  HX_CALL(err);
  if (!v) return HX_SUCCESS;
  char *end;
  errno = 0;
  const double x = strtod(v->value, &end);
  if (*end || errno || !isfinite(x)) return hx_opt_error(v, "%s.%s: expected a number, got '%s'", path, key, v->value);
  if (x < min || x > max) return hx_opt_error(v, "%s.%s: %g is out of range [%g, %g]", path, key, x, min, max);
  *out = x;
  return HX_SUCCESS;
}

int hx_opt_bool(const hx_opt *map, const char *path, const char *key, int *out) {
  int err;
  const hx_opt *v = scalar(map, path, key, "true or false", &err);
  HX_CALL(err);
  if (!v) return HX_SUCCESS;
  if (!strcmp(v->value, "true")) *out = 1;
  else if (!strcmp(v->value, "false")) *out = 0;
  else return hx_opt_error(v, "%s.%s: expected true or false, got '%s'", path, key, v->value);
  return HX_SUCCESS;
}

int hx_opt_enum(const hx_opt *map, const char *path, const char *key, const char *const *names, int n, int *out) {
  int err;
  const hx_opt *v = scalar(map, path, key, "a name", &err);
  HX_CALL(err);
  if (!v) return HX_SUCCESS;
  for (int i = 0; i < n; i++)
    if (!strcmp(v->value, names[i])) {
      *out = i;
      return HX_SUCCESS;
    }
  char allowed[1024];
  join(allowed, sizeof allowed, names, n);
  const char *near = hx_closest(v->value, names, n);
  if (near)
    return hx_opt_error(v, "%s.%s: unknown value '%s' (did you mean '%s'?); allowed: %s", path, key, v->value, near,
                        allowed);
  return hx_opt_error(v, "%s.%s: unknown value '%s'; allowed: %s", path, key, v->value, allowed);
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
