/* Expressions in x, y, z and t through libmatheval (see hx_io.h).
 * libmatheval knows the constants pi and e itself; every other identifier is
 * a variable, and only x, y, z and t are allowed.
 *
 * libmatheval parses and checks the text; the values come from a program of
 * our own compiled from the same text with libmatheval's grammar (below:
 * '^' left-associative and above unary minus, which is above '*' and '/')
 * and run over blocks of points, one operation at a time over the block:
 * libmatheval walks its tree and looks every variable up by name for every
 * point, 2-8x slower over arrays (1.5-3x at single points), which was most of a small run's time outside
 * setup and solve (the right-hand side, the exact solution, the error norm at (p+4)^3 points per element).
 * The program is kept only if it gives libmatheval's values at sample points; a text it does not cover (the
 * functions outside the table below) is evaluated by libmatheval. */
#include <math.h>
#include <matheval.h>
#include <stdint.h>
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
  /* a '.' that starts no number (a lone '.', "x.", "1..2") matches none of
   * libmatheval's tokens: its lexer's default rule then echoes it to stdout,
   * under --quiet too (issue 53, defect 19), before the parse fails */
  for (const char *c = text; *c;) {
    if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_') {
      while ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_') c++;
    } else if ((*c >= '0' && *c <= '9') || (*c == '.' && c[1] >= '0' && c[1] <= '9')) {
      while (*c >= '0' && *c <= '9') c++;
      if (*c == '.') c++;
      while (*c >= '0' && *c <= '9') c++;
    } else if (*c == '.') {
      return HX_ERROR(HX_ERR_INPUT, "a '.' that is not part of a number at character %d of expression '%.200s'",
                      (int)(c - text) + 1, text);
    } else {
      c++;
    }
  }
  HX_CHECK(ops <= HX_EXPR_MAX_OPERATORS, HX_ERR_INPUT, "expression too long (%ld operators; at most %d)", ops,
           HX_EXPR_MAX_OPERATORS);
  HX_CHECK(maxdepth <= HX_EXPR_MAX_DEPTH, HX_ERR_INPUT,
           "expression too deeply nested (%d levels of parentheses; at most %d)", maxdepth, HX_EXPR_MAX_DEPTH);
  return HX_SUCCESS;
}

/* ------------------------------------------------ the compiled program */
typedef enum { OP_X, OP_Y, OP_Z, OP_T, OP_C, OP_NEG, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_FN } op_kind;
typedef struct {
  op_kind kind;
  double c;             /* OP_C */
  double (*fn)(double); /* OP_FN */
} expr_op;

/* the functions the program evaluates (libmatheval's of the same name call
 * the same libm functions); any other name leaves the text to libmatheval */
static const struct {
  const char *name;
  double (*fn)(double);
} expr_fns[] = {{"exp", exp},   {"log", log},   {"sqrt", sqrt},   {"sin", sin},     {"cos", cos},
                {"tan", tan},   {"asin", asin}, {"acos", acos},   {"atan", atan},   {"sinh", sinh},
                {"cosh", cosh}, {"tanh", tanh}, {"asinh", asinh}, {"acosh", acosh}, {"atanh", atanh},
                {"erf", erf},   {"abs", fabs}};

typedef struct {
  const char *s;
  expr_op *ops;
  int n, cap, sp, depth, bad;
} expr_parser;

static void ps_skip(expr_parser *P) {
  while (*P->s == ' ' || *P->s == '\t' || *P->s == '\n' || *P->s == '\r') P->s++;
}

static void ps_emit(expr_parser *P, op_kind k, double c, double (*fn)(double)) {
  if (P->bad) return;
  if (P->n == P->cap) {
    int cap = P->cap ? 2 * P->cap : 32;
    expr_op *o = realloc(P->ops, sizeof *o * (size_t)cap);
    if (!o) {
      P->bad = 1;
      return;
    }
    P->ops = o, P->cap = cap;
  }
  P->ops[P->n++] = (expr_op){k, c, fn};
  /* the stack: a push adds one slot, a binary operation frees one */
  if (k <= OP_C) {
    if (++P->sp > P->depth) P->depth = P->sp;
  } else if (k >= OP_ADD && k <= OP_POW) {
    P->sp--;
  }
}

static void ps_sum(expr_parser *P);

/* '(' sum ')', P->s at the '(' */
static void ps_parens(expr_parser *P) {
  P->s++;
  ps_sum(P);
  ps_skip(P);
  if (*P->s != ')') {
    P->bad = 1;
    return;
  }
  P->s++;
}

static void ps_primary(expr_parser *P) {
  ps_skip(P);
  const char *s = P->s;
  if (*s == '(') {
    ps_parens(P);
    return;
  }
  if ((*s >= '0' && *s <= '9') || *s == '.') { /* digits [. digits] [e[+-]digits], as libmatheval's lexer */
    const char *q = s;
    while (*q >= '0' && *q <= '9') q++;
    if (*q == '.') q++;
    while (*q >= '0' && *q <= '9') q++;
    if ((*q == 'e' || *q == 'E') &&
        ((q[1] >= '0' && q[1] <= '9') || ((q[1] == '+' || q[1] == '-') && q[2] >= '0' && q[2] <= '9'))) {
      q += 2;
      while (*q >= '0' && *q <= '9') q++;
    }
    char buf[64];
    if (q - s >= (long)sizeof buf || q == s + (*s == '.')) {
      P->bad = 1;
      return;
    }
    memcpy(buf, s, (size_t)(q - s));
    buf[q - s] = 0;
    ps_emit(P, OP_C, strtod(buf, NULL), NULL);
    P->s = q;
    return;
  }
  if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_') {
    const char *q = s;
    while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_') q++;
    const size_t len = (size_t)(q - s);
    P->s = q;
    ps_skip(P);
    if (*P->s == '(') {
      for (size_t k = 0; k < sizeof expr_fns / sizeof expr_fns[0]; k++)
        if (strlen(expr_fns[k].name) == len && !strncmp(expr_fns[k].name, s, len)) {
          ps_parens(P);
          ps_emit(P, OP_FN, 0.0, expr_fns[k].fn);
          return;
        }
      P->bad = 1; /* a function the program does not have */
      return;
    }
    if (len == 1 && (*s == 'x' || *s == 'y' || *s == 'z' || *s == 't'))
      ps_emit(P, *s == 'x' ? OP_X : *s == 'y' ? OP_Y : *s == 'z' ? OP_Z : OP_T, 0.0, NULL);
    else if (len == 2 && !strncmp(s, "pi", 2))
      ps_emit(P, OP_C, M_PI, NULL);
    else if (len == 1 && *s == 'e')
      ps_emit(P, OP_C, M_E, NULL);
    else
      P->bad = 1;
    return;
  }
  P->bad = 1;
}

static void ps_neg(expr_parser *P);

/* a ^ b ^ c = (a ^ b) ^ c; the exponent may carry unary minuses, which then
 * take the rest of the chain: 2^-3^2 = 2^(-(3^2)) */
static void ps_pow_chain(expr_parser *P) {
  ps_primary(P);
  for (;;) {
    if (P->bad) return;
    ps_skip(P);
    if (*P->s != '^') return;
    P->s++;
    ps_skip(P);
    if (*P->s == '-') {
      ps_neg(P);
      ps_emit(P, OP_POW, 0.0, NULL);
      return;
    }
    ps_primary(P);
    ps_emit(P, OP_POW, 0.0, NULL);
  }
}

static void ps_neg(expr_parser *P) {
  ps_skip(P);
  if (*P->s == '-') {
    P->s++;
    ps_neg(P);
    ps_emit(P, OP_NEG, 0.0, NULL);
    return;
  }
  ps_pow_chain(P);
}

/* a left-associative level: operand (c0|c1 operand)*, op0 for c0, op1 for c1 */
static void ps_left(expr_parser *P, void (*operand)(expr_parser *), char c0, op_kind op0, char c1,
                    op_kind op1) {
  operand(P);
  for (;;) {
    if (P->bad) return;
    ps_skip(P);
    const char c = *P->s;
    if (c != c0 && c != c1) return;
    P->s++;
    operand(P);
    ps_emit(P, c == c0 ? op0 : op1, 0.0, NULL);
  }
}

static void ps_prod(expr_parser *P) { ps_left(P, ps_neg, '*', OP_MUL, '/', OP_DIV); }
static void ps_sum(expr_parser *P) { ps_left(P, ps_prod, '+', OP_ADD, '-', OP_SUB); }

/* points per block of the program's evaluation */
enum { EXPR_BLOCK = 64 };

static void prog_eval(const expr_op *ops, int nops, int depth, size_t n, const double *x, const double *y,
                      const double *z, double t, double *f) {
  double local[8 * EXPR_BLOCK], *S = depth <= 8 ? local : malloc(sizeof(double) * EXPR_BLOCK * (size_t)depth);
  if (!S) { /* no memory for the stack: NaN rather than a wrong value */
    for (size_t i = 0; i < n; i++) f[i] = NAN;
    return;
  }
  for (size_t i0 = 0; i0 < n; i0 += EXPR_BLOCK) {
    const int nb = n - i0 < EXPR_BLOCK ? (int)(n - i0) : EXPR_BLOCK;
    double *top = S - EXPR_BLOCK; /* the top slot */
    for (int k = 0; k < nops; k++) {
      const expr_op *o = &ops[k];
      double *a = top - EXPR_BLOCK, *b = top; /* the operands of a binary operation */
      switch (o->kind) {
        case OP_X: memcpy(top += EXPR_BLOCK, x + i0, sizeof(double) * (size_t)nb); break;
        case OP_Y: memcpy(top += EXPR_BLOCK, y + i0, sizeof(double) * (size_t)nb); break;
        case OP_Z: memcpy(top += EXPR_BLOCK, z + i0, sizeof(double) * (size_t)nb); break;
        case OP_T:
          top += EXPR_BLOCK;
          for (int j = 0; j < nb; j++) top[j] = t;
          break;
        case OP_C:
          top += EXPR_BLOCK;
          for (int j = 0; j < nb; j++) top[j] = o->c;
          break;
        case OP_NEG:
          for (int j = 0; j < nb; j++) b[j] = -b[j];
          break;
        case OP_FN:
          for (int j = 0; j < nb; j++) b[j] = o->fn(b[j]);
          break;
        case OP_ADD:
          for (int j = 0; j < nb; j++) a[j] += b[j];
          top = a;
          break;
        case OP_SUB:
          for (int j = 0; j < nb; j++) a[j] -= b[j];
          top = a;
          break;
        case OP_MUL:
          for (int j = 0; j < nb; j++) a[j] *= b[j];
          top = a;
          break;
        case OP_DIV:
          for (int j = 0; j < nb; j++) a[j] /= b[j];
          top = a;
          break;
        case OP_POW:
          for (int j = 0; j < nb; j++) a[j] = pow(a[j], b[j]);
          top = a;
          break;
      }
    }
    memcpy(f + i0, S, sizeof(double) * (size_t)nb);
  }
  if (S != local) free(S);
}

/* the program at one point: the same operations on scalars */
static double prog_eval1(const expr_op *ops, int nops, int depth, double x, double y, double z, double t) {
  double local[32], *S = depth <= 32 ? local : malloc(sizeof(double) * (size_t)depth);
  if (!S) return NAN;
  S[0] = NAN; /* an empty program (never kept) gives NaN */
  int sp = -1;
  for (int k = 0; k < nops; k++) {
    const expr_op *o = &ops[k];
    switch (o->kind) {
      case OP_X: S[++sp] = x; break;
      case OP_Y: S[++sp] = y; break;
      case OP_Z: S[++sp] = z; break;
      case OP_T: S[++sp] = t; break;
      case OP_C: S[++sp] = o->c; break;
      case OP_NEG: S[sp] = -S[sp]; break;
      case OP_FN: S[sp] = o->fn(S[sp]); break;
      case OP_ADD: S[sp - 1] += S[sp], sp--; break;
      case OP_SUB: S[sp - 1] -= S[sp], sp--; break;
      case OP_MUL: S[sp - 1] *= S[sp], sp--; break;
      case OP_DIV: S[sp - 1] /= S[sp], sp--; break;
      case OP_POW: S[sp - 1] = pow(S[sp - 1], S[sp]), sp--; break;
    }
  }
  const double v = S[0];
  if (S != local) free(S);
  return v;
}

struct hx_expr_s {
  void *ev;   /* libmatheval evaluator */
  char *text; /* as given */
  int constant;
  int uses_t;   /* t appears: evaluated with evaluator_evaluate (x, y, z, t) */
  expr_op *ops; /* the compiled program, or NULL: libmatheval evaluates */
  int nops, depth;
};

static char *var_names[] = {"x", "y", "z", "t"};

/* libmatheval's value at one point (the reference of the program) */
static double matheval_at(void *ev, double x, double y, double z, double t) {
  double v[4] = {x, y, z, t};
  return evaluator_evaluate(ev, 4, var_names, v);
}

/* The program for r->text, kept when it parses completely with the
 * functions of the table and agrees with libmatheval at sample points
 * (bit for bit is expected: the same operations in the same order; 1e-13
 * relative allows for libmatheval's folding of constant subexpressions). */
static void expr_compile(hx_expr *r) {
  if (hx_env("HEXCG_EXPR_MATHEVAL")) return; /* libmatheval alone, for comparisons */
  expr_parser P = {r->text, NULL, 0, 0, 0, 0, 0};
  ps_sum(&P);
  ps_skip(&P);
  if (P.bad || *P.s || P.sp != 1 || P.n == 0) {
    free(P.ops);
    return;
  }
  static const double pts[][4] = {{0.0, 0.0, 0.0, 0.0},     {1.0, 1.0, 1.0, 1.0},     {0.3, 0.7, 0.11, 0.5},
                                  {-0.45, 2.5, -1.3, 3.0},  {0.125, -0.75, 0.9, 0.2}, {7.0, -3.0, 0.01, 10.0},
                                  {-2.25, -0.5, 4.0, 0.05}, {0.5, 0.25, 0.125, 1.5}};
  for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
    double v = 0.0;
    prog_eval(P.ops, P.n, P.depth, 1, &pts[k][0], &pts[k][1], &pts[k][2], pts[k][3], &v);
    const double v1 = prog_eval1(P.ops, P.n, P.depth, pts[k][0], pts[k][1], pts[k][2], pts[k][3]);
    const double ref = matheval_at(r->ev, pts[k][0], pts[k][1], pts[k][2], pts[k][3]);
    /* an infinite reference must be met exactly: inf <= 1e-13 * inf would
     * accept any value (libmatheval folds 0^z to 0, so 0^z^-1 is inf for it
     * everywhere while the program gives 1 where z = 0) */
    const int same =
        (isnan(v) && isnan(ref)) || v == ref || (isfinite(ref) && fabs(v - ref) <= 1e-13 * fabs(ref));
    if (!same || !((isnan(v) && isnan(v1)) || v == v1)) {
      free(P.ops);
      return;
    }
  }
  r->ops = P.ops, r->nops = P.n, r->depth = P.depth;
  /* what the program reads decides what the expression depends on (the
   * variables libmatheval reports are those of its simplified tree) */
  r->constant = 1, r->uses_t = 0;
  for (int i = 0; i < P.n; i++) {
    if (P.ops[i].kind == OP_X || P.ops[i].kind == OP_Y || P.ops[i].kind == OP_Z) r->constant = 0;
    if (P.ops[i].kind == OP_T) r->uses_t = 1;
  }
}

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
  expr_compile(r);
  *e = r;
  return HX_SUCCESS;
}

void hx_expr_destroy(hx_expr **e) {
  if (!e || !*e) return;
  evaluator_destroy((*e)->ev);
  free((*e)->ops);
  free((*e)->text);
  free(*e);
  *e = NULL;
}

const char *hx_expr_text(const hx_expr *e) { return e ? e->text : ""; }
int hx_expr_is_constant(const hx_expr *e) { return e ? e->constant : 1; }
int hx_expr_is_compiled(const hx_expr *e) { return e && e->ops != NULL; }

int hx_expr_uses_t(const hx_expr *e) { return e ? e->uses_t : 0; }

double hx_expr_eval_t(const hx_expr *e, double x, double y, double z, double t) {
  if (e->ops) return prog_eval1(e->ops, e->nops, e->depth, x, y, z, t);
  if (!e->uses_t) return evaluator_evaluate_x_y_z(e->ev, x, y, z);
  double v[4] = {x, y, z, t};
  return evaluator_evaluate(e->ev, 4, var_names, v);
}

double hx_expr_eval(const hx_expr *e, double x, double y, double z) { return hx_expr_eval_t(e, x, y, z, 0.0); }

void hx_expr_eval_array_t(const hx_expr *e, size_t n, const double *x, const double *y, const double *z,
                          double t, double *f) {
  if (e->ops) {
    prog_eval(e->ops, e->nops, e->depth, n, x, y, z, t, f);
    return;
  }
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
