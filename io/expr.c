/* Expressions in x, y, z and t through libmatheval (see hx_io.h).
 * libmatheval knows the constants pi and e itself; every other identifier is
 * a variable, and only x, y, z and t are allowed. */
#include <math.h>
#include <matheval.h>
#include <stdlib.h>
#include <string.h>

#include "hx_io.h"

/* What may reach libmatheval. Its parser and simplifier recurse once per
 * operator and per parenthesis (a 400 KB "x+x+..." overflows the stack), and
 * its lexer echoes characters it does not know to stdout; real expressions
 * are a few hundred characters with a few dozen operators. */
#define HX_EXPR_MAX_CHARS 10000
#define HX_EXPR_MAX_OPERATORS 2000
#define HX_EXPR_MAX_DEPTH 100

/* HX_ERR_INPUT unless text is within the bounds above and made of the
 * characters libmatheval's lexer knows. */
static int expr_check_text(const char *text) {
  size_t len = strlen(text);
  HX_CHECK(len <= HX_EXPR_MAX_CHARS, HX_ERR_INPUT, "expression too long (%zu characters; at most %d)", len,
           HX_EXPR_MAX_CHARS);
  long ops = 0;
  int depth = 0, maxdepth = 0;
  for (const char *c = text; *c; c++) {
    unsigned char ch = (unsigned char)*c;
    if (strchr("+-*/^", ch)) ops++;
    if (ch == '(' && ++depth > maxdepth) maxdepth = depth;
    if (ch == ')') depth--;
    if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') && !(ch >= '0' && ch <= '9') &&
        !strchr("_ \t\n\r.+-*/^()", ch)) {
      if (ch >= 0x20 && ch < 0x7f)
        return HX_ERROR(HX_ERR_INPUT, "unexpected character '%c' in expression '%.200s'", ch, text);
      return HX_ERROR(HX_ERR_INPUT, "unexpected character (byte 0x%02x) in expression '%.200s'", ch, text);
    }
  }
  HX_CHECK(ops <= HX_EXPR_MAX_OPERATORS, HX_ERR_INPUT, "expression too long (%ld operators; at most %d)", ops,
           HX_EXPR_MAX_OPERATORS);
  HX_CHECK(maxdepth <= HX_EXPR_MAX_DEPTH, HX_ERR_INPUT,
           "expression too deeply nested (%d levels of parentheses; at most %d)", maxdepth, HX_EXPR_MAX_DEPTH);
  return HX_SUCCESS;
}

struct hx_expr_s {
  void *ev;   /* libmatheval evaluator */
  char *text; /* as given */
  int constant;
  int uses_t; /* t appears: evaluated with evaluator_evaluate (x, y, z, t) */
};

static char *var_names[] = {"x", "y", "z", "t"};

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

int hx_expr_create(const char *text, hx_expr **e) {
  *e = NULL;
  HX_CHECK(text, HX_ERR_ARG, "NULL expression text");
  const char *t = text;
  while (*t == ' ' || *t == '\t') t++;
  HX_CHECK(*t, HX_ERR_INPUT, "empty expression");
  HX_CALL(expr_check_text(text));
  /* libmatheval's parser needs a writable, newline-free string */
  char *buf = dupstr(text);
  HX_CHECK(buf, HX_ERR_MEM, "out of memory");
  for (char *c = buf; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  void *ev = evaluator_create(buf);
  free(buf);
  HX_CHECK(ev, HX_ERR_INPUT, "cannot parse expression '%s'", text);
  char **names = NULL;
  int count = 0;
  evaluator_get_variables(ev, &names, &count);
  int constant = 1, uses_t = 0;
  for (int i = 0; i < count; i++) {
    if (!strcmp(names[i], "x") || !strcmp(names[i], "y") || !strcmp(names[i], "z")) {
      constant = 0;
      continue;
    }
    if (!strcmp(names[i], "t")) {
      uses_t = 1;
      continue;
    }
    char bad[64];
    snprintf(bad, sizeof bad, "%s", names[i]);
    evaluator_destroy(ev);
    return HX_ERROR(HX_ERR_INPUT, "unknown variable '%s' in expression '%s' (allowed: x, y, z, t, pi, e)", bad,
                    text);
  }
  hx_expr *r = calloc(1, sizeof *r);
  if (r) r->text = dupstr(text);
  if (!r || !r->text) {
    evaluator_destroy(ev);
    if (r) free(r);
    return HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  r->ev = ev;
  r->constant = constant;
  r->uses_t = uses_t;
  *e = r;
  return HX_SUCCESS;
}

void hx_expr_destroy(hx_expr **e) {
  if (!e || !*e) return;
  evaluator_destroy((*e)->ev);
  free((*e)->text);
  free(*e);
  *e = NULL;
}

const char *hx_expr_text(const hx_expr *e) { return e ? e->text : ""; }
int hx_expr_is_constant(const hx_expr *e) { return e ? e->constant : 1; }

int hx_expr_uses_t(const hx_expr *e) { return e ? e->uses_t : 0; }

double hx_expr_eval_t(const hx_expr *e, double x, double y, double z, double t) {
  if (!e->uses_t) return evaluator_evaluate_x_y_z(e->ev, x, y, z);
  double v[4] = {x, y, z, t};
  return evaluator_evaluate(e->ev, 4, var_names, v);
}

double hx_expr_eval(const hx_expr *e, double x, double y, double z) { return hx_expr_eval_t(e, x, y, z, 0.0); }

void hx_expr_eval_array_t(const hx_expr *e, size_t n, const double *x, const double *y, const double *z,
                          double t, double *f) {
  if (!e->uses_t) {
    for (size_t i = 0; i < n; i++) f[i] = evaluator_evaluate_x_y_z(e->ev, x[i], y[i], z[i]);
    return;
  }
  double v[4] = {0, 0, 0, t};
  for (size_t i = 0; i < n; i++) {
    v[0] = x[i], v[1] = y[i], v[2] = z[i];
    f[i] = evaluator_evaluate(e->ev, 4, var_names, v);
  }
}

void hx_expr_eval_array(const hx_expr *e, size_t n, const double *x, const double *y, const double *z,
                        double *f) {
  hx_expr_eval_array_t(e, n, x, y, z, 0.0, f);
}
