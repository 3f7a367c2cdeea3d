/* A YAML document tree with positions, built from libyaml's event stream,
 * and the --set override mechanism. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "io_impl.h"

char *hx_io_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void hx_ynode_where(const hx_ynode *n, char *buf, size_t len) {
  if (!n || !n->src) {
    snprintf(buf, len, "<case>");
  } else if (n->src->is_set) {
    snprintf(buf, len, "%s", n->src->name);
  } else {
    snprintf(buf, len, "%s:%d:%d", n->src->name, n->line, n->col);
  }
}

int hx_yerror(const hx_ynode *n, const char *fmt, ...) {
  char where[1024], msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  hx_ynode_where(n, where, sizeof where);
  return HX_ERROR(HX_ERR_INPUT, "%s: %s", where, msg);
}

void hx_ynode_free(hx_ynode *n) {
  if (!n) return;
  for (int i = 0; i < n->n; i++) {
    if (n->keys) hx_ynode_free(n->keys[i]);
    hx_ynode_free(n->vals[i]);
  }
  free(n->keys);
  free(n->vals);
  free(n->value);
  free(n);
}

void hx_ydoc_free(hx_ydoc *doc) {
  hx_ynode_free(doc->root);
  doc->root = NULL;
  while (doc->srcs) {
    hx_ysrc *s = doc->srcs;
    doc->srcs = s->next;
    free(s->name);
    free(s);
  }
}

hx_ynode *hx_ynode_get(const hx_ynode *map, const char *key, hx_ynode **key_node) {
  if (key_node) *key_node = NULL;
  if (!map || map->kind != HX_YN_MAP) return NULL;
  for (int i = 0; i < map->n; i++)
    if (!strcmp(map->keys[i]->value, key)) {
      if (key_node) *key_node = map->keys[i];
      return map->vals[i];
    }
  return NULL;
}

static hx_ynode *node_new(hx_ynode_kind kind, const yaml_mark_t *m, const hx_ysrc *src) {
  hx_ynode *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->kind = kind;
  n->line = (int)m->line + 1;
  n->col = (int)m->column + 1;
  n->src = src;
  return n;
}

static int node_push(hx_ynode *parent, hx_ynode *key, hx_ynode *val) {
  if (parent->n == parent->cap) {
    int cap = parent->cap ? 2 * parent->cap : 8;
    HX_CALL(hx_realloc((size_t)cap, sizeof(hx_ynode *), &parent->vals));
    if (parent->kind == HX_YN_MAP) HX_CALL(hx_realloc((size_t)cap, sizeof(hx_ynode *), &parent->keys));
    parent->cap = cap;
  }
  if (parent->kind == HX_YN_MAP) parent->keys[parent->n] = key;
  parent->vals[parent->n++] = val;
  return HX_SUCCESS;
}

typedef struct {
  yaml_parser_t p;
  const hx_ysrc *src;
} ctx_t;

static int syntax_error(ctx_t *c) {
  yaml_parser_t *p = &c->p;
  int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
  const char *prob = p->problem ? p->problem : "invalid YAML";
  if (c->src->is_set)
    return HX_ERROR(HX_ERR_INPUT, "%s: YAML syntax error in the value: %s", c->src->name, prob);
  if (p->context)
    return HX_ERROR(HX_ERR_INPUT, "%s:%d:%d: YAML syntax error: %s %s started at line %d, column %d",
                    c->src->name, line, col, prob, p->context, (int)p->context_mark.line + 1,
                    (int)p->context_mark.column + 1);
  return HX_ERROR(HX_ERR_INPUT, "%s:%d:%d: YAML syntax error: %s", c->src->name, line, col, prob);
}

static int next_event(ctx_t *c, yaml_event_t *ev) {
  if (!yaml_parser_parse(&c->p, ev)) return syntax_error(c);
  return HX_SUCCESS;
}

static int where_error(const ctx_t *c, const yaml_mark_t *m, const char *msg) {
  if (c->src->is_set) return HX_ERROR(HX_ERR_INPUT, "%s: %s", c->src->name, msg);
  return HX_ERROR(HX_ERR_INPUT, "%s:%d:%d: %s", c->src->name, (int)m->line + 1, (int)m->column + 1, msg);
}

/* Parse one node whose first event is ev (consumed). */
static int parse_node(ctx_t *c, yaml_event_t *ev, hx_ynode **out, int depth) {
  *out = NULL;
  if (depth > 64) return where_error(c, &ev->start_mark, "YAML nesting too deep");
  if (ev->type == YAML_ALIAS_EVENT)
    return where_error(c, &ev->start_mark, "YAML aliases (*name) are not supported in case files");
  if (ev->type == YAML_SCALAR_EVENT) {
    hx_ynode *n = node_new(HX_YN_SCALAR, &ev->start_mark, c->src);
    HX_CHECK(n, HX_ERR_MEM, "out of memory");
    n->value = hx_io_strdup((const char *)ev->data.scalar.value);
    n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    if (!n->value) {
      hx_ynode_free(n);
      return HX_ERROR(HX_ERR_MEM, "out of memory");
    }
    *out = n;
    return HX_SUCCESS;
  }
  int is_map = ev->type == YAML_MAPPING_START_EVENT;
  if (!is_map && ev->type != YAML_SEQUENCE_START_EVENT)
    return where_error(c, &ev->start_mark, "unexpected YAML content");
  hx_ynode *n = node_new(is_map ? HX_YN_MAP : HX_YN_SEQ, &ev->start_mark, c->src);
  HX_CHECK(n, HX_ERR_MEM, "out of memory");
  int err = HX_SUCCESS;
  for (;;) {
    yaml_event_t e;
    if ((err = next_event(c, &e))) break;
    if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&e);
      break;
    }
    hx_ynode *key = NULL, *val = NULL;
    if (is_map) {
      if (e.type != YAML_SCALAR_EVENT) {
        err = where_error(c, &e.start_mark, "mapping keys must be plain names");
        yaml_event_delete(&e);
        break;
      }
      err = parse_node(c, &e, &key, depth + 1);
      yaml_event_delete(&e);
      if (err) break;
      hx_ynode *kn = NULL;
      if (hx_ynode_get(n, key->value, &kn)) {
        char msg[512];
        snprintf(msg, sizeof msg, "duplicate key '%s' (first given at line %d)", key->value, kn->line);
        yaml_mark_t m = {0, (size_t)(key->line - 1), (size_t)(key->col - 1)};
        err = where_error(c, &m, msg);
        hx_ynode_free(key);
        break;
      }
      if ((err = next_event(c, &e))) {
        hx_ynode_free(key);
        break;
      }
    }
    err = parse_node(c, &e, &val, depth + 1);
    yaml_event_delete(&e);
    if (!err) err = node_push(n, key, val);
    if (err) {
      hx_ynode_free(key);
      hx_ynode_free(val);
      break;
    }
  }
  if (err) {
    hx_ynode_free(n);
    return err;
  }
  *out = n;
  return HX_SUCCESS;
}

static hx_ysrc *add_src(hx_ydoc *doc, const char *name, int is_set) {
  hx_ysrc *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->name = hx_io_strdup(name);
  if (!s->name) {
    free(s);
    return NULL;
  }
  s->is_set = is_set;
  s->next = doc->srcs;
  doc->srcs = s;
  return s;
}

/* Parse text into *root using source src. */
static int parse_text(const hx_ysrc *src, const char *text, size_t len, hx_ynode **root) {
  *root = NULL;
  ctx_t c;
  c.src = src;
  HX_CHECK(yaml_parser_initialize(&c.p), HX_ERR_MEM, "cannot initialise libyaml");
  yaml_parser_set_input_string(&c.p, (const unsigned char *)text, len);
  int err = HX_SUCCESS, ndocs = 0;
  for (;;) {
    yaml_event_t e;
    if ((err = next_event(&c, &e))) break;
    yaml_event_type_t t = e.type;
    if (t == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&e);
      break;
    }
    if (t == YAML_DOCUMENT_START_EVENT && ++ndocs > 1) {
      err = where_error(&c, &e.start_mark, "a case file holds one YAML document; found a second one");
      yaml_event_delete(&e);
      break;
    }
    if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT ||
        t == YAML_ALIAS_EVENT) {
      err = parse_node(&c, &e, root, 0);
      yaml_event_delete(&e);
      if (err) break;
      continue;
    }
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&c.p);
  if (err) {
    hx_ynode_free(*root);
    *root = NULL;
  }
  return err;
}

int hx_ydoc_parse(hx_ydoc *doc, const char *text, size_t len, const char *srcname, int is_set) {
  hx_ysrc *src = add_src(doc, srcname, is_set);
  HX_CHECK(src, HX_ERR_MEM, "out of memory");
  HX_CALL(parse_text(src, text, len, &doc->root));
  return HX_SUCCESS;
}

static int is_index(const char *s, long *idx) {
  if (!*s) return 0;
  for (const char *c = s; *c; c++)
    if (*c < '0' || *c > '9') return 0;
  *idx = strtol(s, NULL, 10);
  return 1;
}

int hx_ydoc_apply_set(hx_ydoc *doc, const char *set) {
  char name[1200];
  snprintf(name, sizeof name, "--set %s", set);
  hx_ysrc *src = add_src(doc, name, 1);
  HX_CHECK(src, HX_ERR_MEM, "out of memory");
  const char *eq = strchr(set, '=');
  HX_CHECK(eq && eq != set, HX_ERR_INPUT, "%s: expected KEY=VALUE, e.g. --set solver.tol=1e-10", name);
  size_t klen = (size_t)(eq - set);
  /* strtok would skip empty segments: "a..b", ".a", "a." name no key */
  int empty = set[0] == '.' || set[klen - 1] == '.';
  for (size_t i = 1; i < klen && !empty; i++) empty = set[i] == '.' && set[i - 1] == '.';
  HX_CHECK(!empty, HX_ERR_INPUT, "%s: empty key in '%.*s' (keys are separated by single dots: problem.rhs)", name,
           (int)klen, set);
  char *path = malloc(klen + 1);
  HX_CHECK(path, HX_ERR_MEM, "out of memory");
  memcpy(path, set, klen);
  path[klen] = '\0';
  const char *vtext = eq + 1;
  hx_ynode *val = NULL;
  int err = parse_text(src, vtext, strlen(vtext), &val);
  if (err) {
    free(path);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  if (!val) { /* "key=" : an empty value */
    yaml_mark_t m = {0, 0, 0};
    val = node_new(HX_YN_SCALAR, &m, src);
    if (val) val->value = hx_io_strdup("");
    if (!val || !val->value) {
      hx_ynode_free(val);
      free(path);
      return HX_ERROR(HX_ERR_MEM, "out of memory");
    }
  }
  /* KEY=null (or ~, unquoted): remove the key, so its default applies */
  const int drop = val && val->kind == HX_YN_SCALAR && !val->quoted &&
                   (!strcmp(val->value, "null") || !strcmp(val->value, "Null") || !strcmp(val->value, "NULL") ||
                    !strcmp(val->value, "~"));
  if (!doc->root) {
    yaml_mark_t m = {0, 0, 0};
    doc->root = node_new(HX_YN_MAP, &m, src);
    if (!doc->root) err = HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  hx_ynode *cur = doc->root;
  char *save = NULL, *tok = err ? NULL : strtok_r(path, ".", &save);
  char done_path[1200] = "";
  while (!err && tok) {
    char *nexttok = strtok_r(NULL, ".", &save);
    long idx = 0;
    hx_ynode **slot = NULL;
    if (cur->kind == HX_YN_MAP) {
      int at = -1;
      for (int i = 0; i < cur->n; i++)
        if (!strcmp(cur->keys[i]->value, tok)) slot = &cur->vals[i], at = i;
      if (drop && !slot) {
        size_t dl = strlen(done_path);
        snprintf(done_path + dl, sizeof done_path - dl, "%s%s", dl ? "." : "", tok);
        err = HX_ERROR(HX_ERR_INPUT, "%s: the case has no key '%s' to remove (a key the case does not set has "
                       "its default already; 'hexcg keys' lists them)", name, done_path);
        break;
      }
      if (drop && !nexttok) { /* remove the entry */
        hx_ynode_free(cur->keys[at]);
        hx_ynode_free(cur->vals[at]);
        memmove(cur->keys + at, cur->keys + at + 1, sizeof *cur->keys * (size_t)(cur->n - at - 1));
        memmove(cur->vals + at, cur->vals + at + 1, sizeof *cur->vals * (size_t)(cur->n - at - 1));
        cur->n--;
        break;
      }
      if (!slot) { /* a new key: created as given (validation reports unknown keys) */
        yaml_mark_t m = {0, 0, 0};
        hx_ynode *k = node_new(HX_YN_SCALAR, &m, src);
        hx_ynode *v = nexttok ? node_new(HX_YN_MAP, &m, src) : NULL;
        if (k) k->value = hx_io_strdup(tok);
        if (!k || !k->value || (nexttok && !v)) {
          hx_ynode_free(k), hx_ynode_free(v);
          err = HX_ERROR(HX_ERR_MEM, "out of memory");
          break;
        }
        if ((err = node_push(cur, k, v))) {
          hx_ynode_free(k), hx_ynode_free(v);
          break;
        }
        slot = &cur->vals[cur->n - 1];
      }
    } else if (cur->kind == HX_YN_SEQ && is_index(tok, &idx)) {
      if (idx >= cur->n) {
        err = HX_ERROR(HX_ERR_INPUT, "%s: index %ld is out of range for '%s' (%d entr%s)", name, idx,
                       done_path, cur->n, cur->n == 1 ? "y" : "ies");
        break;
      }
      if (drop && !nexttok) { /* remove the list entry */
        hx_ynode_free(cur->vals[idx]);
        memmove(cur->vals + idx, cur->vals + idx + 1, sizeof *cur->vals * (size_t)(cur->n - idx - 1));
        cur->n--;
        break;
      }
      slot = &cur->vals[idx];
    } else {
      err =
          HX_ERROR(HX_ERR_INPUT, "%s: '%s' is %s, it has no key '%s'", name,
                   done_path[0] ? done_path : "the case", cur->kind == HX_YN_SEQ ? "a list" : "a value", tok);
      break;
    }
    size_t dl = strlen(done_path);
    snprintf(done_path + dl, sizeof done_path - dl, "%s%s", dl ? "." : "", tok);
    if (!nexttok) {
      hx_ynode_free(*slot);
      *slot = val;
      val = NULL;
    } else if (!*slot || (*slot)->kind == HX_YN_SCALAR) {
      if (*slot && (*slot)->value[0]) {
        err = HX_ERROR(HX_ERR_INPUT, "%s: '%s' is a value, it has no key '%s'", name, done_path, nexttok);
        break;
      }
      /* an empty value ("mesh:") becomes a mapping */
      hx_ynode_free(*slot);
      yaml_mark_t m = {0, 0, 0};
      *slot = node_new(HX_YN_MAP, &m, src);
      if (!*slot) err = HX_ERROR(HX_ERR_MEM, "out of memory");
    }
    cur = *slot;
    tok = nexttok;
  }
  free(path);
  hx_ynode_free(val);
  return err ? hx_error_trace(__FILE__, __LINE__, __func__, err) : HX_SUCCESS;
}
