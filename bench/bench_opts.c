/* The benchmarks' argument parser: one table of options per benchmark. */
#include "bench_opts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_core.h"

/* the allowed range of a number as text: "1..15", "[0, 100]", "(0, 60]" */
static void range_text(const hx_bench_opt *o, char *buf, size_t len) {
  if (o->type == HX_BOPT_INT || o->type == HX_BOPT_LONG)
    snprintf(buf, len, "%lld..%lld", (long long)o->lo, (long long)o->hi);
  else
    snprintf(buf, len, "%c%g, %g%c", o->open & HX_BOPT_OPEN_LO ? '(' : '[', o->lo, o->hi,
             o->open & HX_BOPT_OPEN_HI ? ')' : ']');
}

static int parse_integer(const char *cmd, const hx_bench_opt *o, const char *v, long *out) {
  char *end = NULL;
  errno = 0;
  const long x = strtol(v, &end, 10);
  HX_CHECK(end != v && *end == '\0' && errno == 0, HX_ERR_INPUT, "%s: %s: '%s' is not an integer", cmd,
           o->name, v);
  char r[64];
  range_text(o, r, sizeof r);
  HX_CHECK((double)x >= o->lo && (double)x <= o->hi, HX_ERR_INPUT, "%s: %s %ld: allowed %s", cmd, o->name, x,
           r);
  *out = x;
  return HX_SUCCESS;
}

static int parse_real(const char *cmd, const hx_bench_opt *o, const char *v, double *out) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  HX_CHECK(end != v && errno == 0, HX_ERR_INPUT, "%s: %s: '%s' is not a %s", cmd, o->name, v,
           o->type == HX_BOPT_BYTES ? "byte count" : "number");
  if (o->type == HX_BOPT_BYTES) {
    if (*end == 'K' || *end == 'k')
      x *= 1024.0, end++;
    else if (*end == 'M' || *end == 'm')
      x *= 1048576.0, end++;
    else if (*end == 'G' || *end == 'g')
      x *= 1073741824.0, end++;
    if (*end == 'B' || *end == 'b') end++;
  }
  HX_CHECK(*end == '\0' && isfinite(x), HX_ERR_INPUT, "%s: %s: '%s' is not a %s", cmd, o->name, v,
           o->type == HX_BOPT_BYTES ? "byte count (suffixes: K, M, G)" : "number");
  const int lo_ok = o->open & HX_BOPT_OPEN_LO ? x > o->lo : x >= o->lo;
  const int hi_ok = o->open & HX_BOPT_OPEN_HI ? x < o->hi : x <= o->hi;
  char r[64];
  range_text(o, r, sizeof r);
  HX_CHECK(lo_ok && hi_ok, HX_ERR_INPUT, "%s: %s %s: allowed %s%s", cmd, o->name, v, r,
           o->type == HX_BOPT_BYTES ? " bytes" : "");
  *out = x;
  return HX_SUCCESS;
}

/* one value v of option o into o->dest */
static int parse_value(const char *cmd, const hx_bench_opt *o, const char *v) {
  switch (o->type) {
    case HX_BOPT_FLAG: *(int *)o->dest = 1; return HX_SUCCESS;
    case HX_BOPT_INT: {
      long x;
      HX_CALL(parse_integer(cmd, o, v, &x));
      *(int *)o->dest = (int)x;
      return HX_SUCCESS;
    }
    case HX_BOPT_LONG: HX_CALL(parse_integer(cmd, o, v, (long *)o->dest)); return HX_SUCCESS;
    case HX_BOPT_REAL:
    case HX_BOPT_BYTES: HX_CALL(parse_real(cmd, o, v, (double *)o->dest)); return HX_SUCCESS;
    case HX_BOPT_STRING: *(const char **)o->dest = v; return HX_SUCCESS;
    case HX_BOPT_CHOICE: {
      const char *s = o->choices;
      const size_t n = strlen(v);
      while (s && *s) {
        const char *e = strchr(s, ',');
        const size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && !strncmp(s, v, n)) {
          *(const char **)o->dest = v; /* argv or the default: NUL-terminated, lives on */
          break;
        }
        s = e ? e + 1 : NULL;
      }
      if (!s || !*s) {
        char allowed[256];
        snprintf(allowed, sizeof allowed, "%s", o->choices);
        for (char *c = allowed; *c; c++)
          if (*c == ',') *c = '|';
        return HX_ERROR(HX_ERR_INPUT, "%s: %s '%s': allowed %s", cmd, o->name, v, allowed);
      }
      return HX_SUCCESS;
    }
    case HX_BOPT_CUSTOM: HX_CALL(o->parse(cmd, o->name, v, o->dest)); return HX_SUCCESS;
  }
  return HX_ERROR(HX_ERR_INTERNAL, "%s: %s: unknown option type %d", cmd, o->name, (int)o->type);
}

int hx_bench_parse(const hx_bench_cmd *c, int argc, char **argv, int *help) {
  *help = 0;
  for (int k = 0; k < c->nopt; k++) {
    const hx_bench_opt *o = &c->opt[k];
    if (o->type == HX_BOPT_FLAG) *(int *)o->dest = 0;
    if (!o->def) continue;
    const int e = parse_value(c->name, o, o->def);
    HX_CHECK(e == HX_SUCCESS, HX_ERR_INTERNAL, "%s: the default '%s' of %s does not parse", c->name, o->def,
             o->name);
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      *help = 1;
      return HX_SUCCESS;
    }
    const hx_bench_opt *o = NULL;
    for (int k = 0; k < c->nopt && !o; k++)
      if (!strcmp(a, c->opt[k].name)) o = &c->opt[k];
    if (!o) {
      if (strncmp(a, "-", 1))
        return HX_ERROR(HX_ERR_INPUT, "%s: unexpected argument '%s' (see 'hexcg %s --help')", c->name, a,
                        c->name);
      return HX_ERROR(HX_ERR_INPUT, "%s: unknown option '%s' (see 'hexcg %s --help')", c->name, a, c->name);
    }
    if (o->type == HX_BOPT_FLAG) {
      HX_CALL(parse_value(c->name, o, NULL));
      continue;
    }
    HX_CHECK(i + 1 < argc, HX_ERR_INPUT, "%s: option %s needs a value (see 'hexcg %s --help')", c->name, a,
             c->name);
    HX_CALL(parse_value(c->name, o, argv[++i]));
  }
  return HX_SUCCESS;
}

/* print text wrapped at `width` columns, continuation lines indented by
 * `indent`, the first line starting at column `col` */
static void wrap(FILE *out, const char *text, int col, int indent, int width) {
  const char *s = text;
  int first = 1;
  while (*s) {
    while (*s == ' ') s++;
    const char *e = s;
    while (*e && *e != ' ') e++;
    const int w = (int)(e - s);
    if (!w) break;
    if (!first && col + 1 + w > width) {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
      first = 1;
    }
    if (!first) fputc(' ', out), col++;
    fprintf(out, "%.*s", w, s);
    col += w, first = 0;
    s = e;
  }
}

static const char *type_meta(const hx_bench_opt *o) {
  switch (o->type) {
    case HX_BOPT_INT:
    case HX_BOPT_LONG: return "N";
    case HX_BOPT_REAL: return "X";
    case HX_BOPT_BYTES: return "BYTES";
    case HX_BOPT_STRING: return "TEXT";
    default: return "VALUE";
  }
}

void hx_bench_usage(const hx_bench_cmd *c, FILE *out) {
  enum { COL = 26, WIDTH = 100 };
  fprintf(out, "usage: hexcg %s [OPTIONS]\n", c->name);
  if (c->synopsis) {
    wrap(out, c->synopsis, 0, 0, WIDTH);
    fputc('\n', out);
  }
  fprintf(out, "options:\n");
  for (int k = 0; k < c->nopt; k++) {
    const hx_bench_opt *o = &c->opt[k];
    char left[128];
    if (o->type == HX_BOPT_FLAG)
      snprintf(left, sizeof left, "  %s", o->name);
    else if (o->type == HX_BOPT_CHOICE && !o->meta) {
      char m[96];
      snprintf(m, sizeof m, "%s", o->choices);
      for (char *s = m; *s; s++)
        if (*s == ',') *s = '|';
      snprintf(left, sizeof left, "  %s %s", o->name, m);
    } else
      snprintf(left, sizeof left, "  %s %s", o->name, o->meta ? o->meta : type_meta(o));
    int col = fprintf(out, "%s", left);
    if (col + 1 >= COL) {
      fprintf(out, "\n");
      col = 0;
    }
    fprintf(out, "%*s", COL - col, "");
    char text[1024];
    if (o->def && o->type != HX_BOPT_FLAG)
      snprintf(text, sizeof text, "%s (default %s)", o->help ? o->help : "", o->def);
    else
      snprintf(text, sizeof text, "%s", o->help ? o->help : "");
    wrap(out, text, COL, COL, WIDTH);
    fputc('\n', out);
  }
  fprintf(out, "%-*s%s\n", (int)COL, "  --help, -h", "this text");
  if (c->epilog) {
    wrap(out, c->epilog, 0, 0, WIDTH);
    fputc('\n', out);
  }
}

int hx_bench_args(const hx_app_ctx *ctx, const hx_bench_cmd *c, int argc, char **argv, int *status) {
  int help = 0;
  const int ierr = hx_bench_parse(c, argc, argv, &help);
  if (ierr) {
    *status = hx_app_fail(ctx, ierr, 1);
    return 1;
  }
  if (help) {
    if (ctx->rank == 0) hx_bench_usage(c, stdout);
    *status = 0;
    return 1;
  }
  *status = 0;
  return 0;
}

int hx_bench_box_mesh(MPI_Comm comm, const char *mesh, int n, hx_mesh *m) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = n;
  if (!strcmp(mesh, "kershaw")) mo.kershaw_eps = 0.3;
  HX_CALL(hx_mesh_create_box(comm, &mo, m));
  return HX_SUCCESS;
}
