/* Case files: load (libyaml tree), apply --set overrides, validate into an
 * hx_case, write the effective case, print the setup. Every user error is
 * HX_ERR_INPUT "file:LINE:COL: message" (see docs/case-format.md). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_impl.h"

typedef struct {
  hx_ydoc doc;
  char *dir;       /* folder of the case file ("." if none) */
  int check_files; /* check that referenced files exist */
} case_impl;

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define STR_(x) #x
#define STR(x) STR_(x)
#define INF HUGE_VAL

/* enum fields are read through int pointers (hx_opt_parse) */
_Static_assert(sizeof(hx_case_mesh_type) == sizeof(int) && sizeof(hx_bc_type) == sizeof(int) &&
                   sizeof(hx_case_partitioner) == sizeof(int) && sizeof(hx_case_solver) == sizeof(int) &&
                   sizeof(hx_case_backend) == sizeof(int),
               "case enums are int-sized");

static const char *const geometries[] = {"fp64", "split"}; /* hx_ax_geometry order */
static const char *const mesh_types[] = {"box", "kershaw", "gmsh", "exodus", "nek"};
static const char *const partitioners[] = {"rcb", "metis"};
static const char *const bc_types[] = {"dirichlet", "neumann", "robin"};
static const char *const solver_types[] = {"pcg", "fcg", "pcg1"}; /* fcg: flexible CG, pcg1: single-reduction CG (solver/) */
static const char *const backends[] = {"cpu", "cuda"};
static const char *const time_schemes[] = {"bdf1", "bdf2", "bdf3"}; /* BDF order = index + 1 */
static const char *const box_tags[] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
static const char *const box_materials[] = {"box"};
static const char *const out_precisions[] = {"fp64", "fp32"}; /* HX_OUTPUT_FP64, HX_OUTPUT_FP32 */
static const char *const out_formats[] = {"xdmf", "vtkhdf"};  /* HX_OUTPUT_XDMF, HX_OUTPUT_VTKHDF */
static const char *const out_fields[] = {"u", "exact", "error", "rank"}; /* HX_FIELD_* bit i */

/* ---------------------------------------------------------------- the option tables */
/* One row per key (core/hx_core.h, "option tables"): the typed rows are read
 * by the core readers (read_key below) and written by write_rows; OTHER rows
 * (lists, expressions, file names, the preconditioner's own tree) by the
 * loaders and writers of this file. docs/case-format.md documents every row
 * (tests/app/check_keys_doc.py). */
#define AT(f) offsetof(hx_case, f)
#define ENUM_ROW(k, f, nm, fl, d, h)                                                                        \
  {                                                                                                         \
    .key = k, .type = HX_OT_ENUM, .offset = AT(f), .names = nm, .nnames = NELEM(nm), .flags = fl, .def = d, \
    .help = h                                                                                               \
  }
#define OTHER_ROW(k, fl, d, w, h) \
  { .key = k, .type = HX_OT_OTHER, .offset = HX_OPT_NOWHERE, .flags = fl, .def = d, .what = w, .help = h }
#define GROUP_ROW(k, fl, g, h) \
  { .key = k, .type = HX_OT_GROUP, .offset = HX_OPT_NOWHERE, .flags = fl, .sub = &g, .help = h }
#define INT_ROW(k, f, lo, hi, fl, d, h) \
  { .key = k, .type = HX_OT_INT, .offset = AT(f), .min = lo, .max = hi, .flags = fl, .def = d, .help = h }
#define DBL_ROW(k, f, lo, hi, fl, d, h) \
  { .key = k, .type = HX_OT_DOUBLE, .offset = AT(f), .min = lo, .max = hi, .flags = fl, .def = d, .help = h }
#define BOOL_ROW(k, f, d, h) \
  { .key = k, .type = HX_OT_BOOL, .offset = AT(f), .def = d, .help = h }
#define INT_MAXV 2147483647.0

static const hx_opt_key mesh_rows[] = {
    ENUM_ROW("type", mesh.type, mesh_types, HX_OPT_REQUIRED, NULL,
             "generated box, Kershaw-deformed box, a Gmsh file, an Exodus II file or a NekRS/Nek5000 .re2 file"),
    OTHER_ROW("elements", 0, NULL, "[nx, ny, nz] or one integer, each 1..100000",
              "box/kershaw (required): elements per direction"),
    OTHER_ROW("extent", 0, "[[0, 1], [0, 1], [0, 1]]", "[[xmin, xmax], [ymin, ymax], [zmin, zmax]]",
              "box/kershaw: the domain"),
    DBL_ROW("eps", mesh.eps, 0, 1, HX_OPT_MIN_OPEN, "0.3", "kershaw only: the deformation (1 = none)"),
    OTHER_ROW("file", 0, NULL, "a file name",
              "gmsh, exodus, nek (required): MSH 2.2/4.1, Exodus II or .re2 file, relative to the case file's folder"),
    ENUM_ROW("partitioner", mesh.partitioner, partitioners, 0, "rcb",
             "how elements are split over the MPI ranks"),
    DBL_ROW("deform", mesh.deform, 0, 0.1, 0, "0.0",
            "box/kershaw only: smooth deformation amplitude (at most 0.1: the map stays invertible)"),
    OTHER_ROW("periodic", 0, "[]", "box/kershaw: a list of axes [x, y, z]; gmsh: [[tag, tag], ...]",
              "axes that wrap / surface pairs identified by translation (docs/mesh.md)"),
    INT_ROW("field", mesh.field, 1, 1000, 0, "1",
            "nek only: the .re2 boundary field whose codes become the boundary tags (1 = the first)"),
};
static const hx_opt_group mesh_group = {"mesh", NULL, mesh_rows, NELEM(mesh_rows)};

static const hx_opt_key bnd_rows[] = {
    OTHER_ROW("tags", HX_OPT_REQUIRED, NULL, "a list of tag names, or one name", "where the condition holds"),
    {.key = "type",
     .type = HX_OT_ENUM,
     .offset = offsetof(hx_case_boundary, type),
     .names = bc_types,
     .nnames = NELEM(bc_types),
     .flags = HX_OPT_REQUIRED,
     .help = "u = value, kappa du/dn = value, or (robin) kappa du/dn + alpha u = value"},
    OTHER_ROW("value", 0, "0", "a number, an expression or exact", "exact: problem.exact (dirichlet only)"),
    OTHER_ROW("alpha", 0, NULL, "a number >= 0 or an expression in x, y, z (>= 0 at every node)",
              "robin only (required there): the coefficient of u"),
};
static const hx_opt_group bnd_group = {"problem.boundary", "each list entry", bnd_rows, NELEM(bnd_rows)};

static const hx_opt_key problem_rows[] = {
    OTHER_ROW("kappa", 0, "1.0",
              "number > 0, an expression in x, y, z, or a mapping material -> number or expression",
              "diffusion coefficient; > 0 at every GLL node"),
    OTHER_ROW("lambda", 0, "0.0",
              "number >= 0, an expression in x, y, z, or a mapping material -> number or expression",
              "the Helmholtz term; >= 0 at every GLL node"),
    OTHER_ROW("rhs", HX_OPT_REQUIRED, NULL, "an expression in x, y, z", "f(x, y, z)"),
    OTHER_ROW("exact", 0, NULL, "an expression in x, y, z", "the exact solution, if known"),
    {.key = "boundary",
     .type = HX_OT_OTHER,
     .offset = HX_OPT_NOWHERE,
     .what = "a list of entries",
     .sub = &bnd_group,
     .help = "boundary conditions (tags not listed: homogeneous Neumann)"},
};
static const hx_opt_group problem_group = {"problem", NULL, problem_rows, NELEM(problem_rows)};

static const hx_opt_key guess_rows[] = {
    OTHER_ROW("file", HX_OPT_REQUIRED, NULL, "a solution.h5 file name", "relative to the working directory"),
};
static const hx_opt_group guess_group = {"solver.initial_guess", NULL, guess_rows, NELEM(guess_rows)};

static const hx_opt_key solver_rows[] = {
    ENUM_ROW("type", solver.type, solver_types, 0, "pcg", "CG, flexible CG, or single-reduction CG"),
    DBL_ROW("tol", solver.tol, 0, 1, HX_OPT_MIN_OPEN | HX_OPT_MAX_OPEN, "1.0e-8",
            "relative residual tolerance"),
    INT_ROW("max_iterations", solver.max_iterations, 1, INT_MAXV, 0, STR(HX_MAX_ITERATIONS_DEFAULT),
            "iteration limit"),
    {.key = "initial_guess",
     .type = HX_OT_OTHER,
     .offset = HX_OPT_NOWHERE,
     .what = "{file: PATH} or PATH",
     .sub = &guess_group,
     .help = "start from the solution.h5 of an earlier run"},
    INT_ROW("projection", solver.projection, 0, 64, 0, NULL,
            "previous solutions kept to project the initial guess on (0: off; default 8 with a time "
            "section, else 0)"),
};
static const hx_opt_group solver_group = {"solver", NULL, solver_rows, NELEM(solver_rows)};

static const hx_opt_key operator_rows[] = {
    ENUM_ROW("geometry", op.geometry, geometries, 0, "fp64",
             "geometric factors in FP64, or split FP64 mean + FP32"),
};
static const hx_opt_group operator_group = {"operator", NULL, operator_rows, NELEM(operator_rows)};

static const hx_opt_key output_rows[] = {
    {.key = "dir",
     .type = HX_OT_TEXT,
     .offset = AT(output.dir),
     .help = "output folder, relative to the working directory (default out/<case name>)"},
    BOOL_ROW("solution", output.solution, "true", "write solution.h5 + solution.xdmf"),
    BOOL_ROW("history", output.history, "true", "write history.csv + history.h5"),
    OTHER_ROW("fields", 0, NULL, "a list of u, exact, error, rank",
              "the fields of the solution output (default: [u, exact, error, rank] for a steady run, exact "
              "and error with problem.exact only; [u] with a time section: docs/time.md)"),
    ENUM_ROW("precision", output.precision, out_precisions, 0, "fp64",
             "u, exact and error in the solution files as float64 or float32 (the mesh stays float64)"),
    ENUM_ROW("format", output.format, out_formats, 0, "xdmf",
             "solution.h5 + solution.xdmf (p^3 linear sub-hexahedra per element), or solution.hdf (VTKHDF: one "
             "Lagrange hexahedron per element; docs/case-format.md)"),
    INT_ROW("progress_every", output.progress_every, 0, INT_MAXV, 0, "50",
            "progress line every N iterations (0: never)"),
    DBL_ROW("progress_seconds", output.progress_seconds, 0, INF, 0, "10.0",
            "... or every S seconds (0: never)"),
};
static const hx_opt_group output_group = {"output", NULL, output_rows, NELEM(output_rows)};

static const hx_opt_key time_rows[] = {
    ENUM_ROW("scheme", time.scheme, time_schemes, 0, "bdf2",
             "BDF order 1, 2 or 3 (the first steps started by lower orders, docs/time.md)"),
    DBL_ROW("dt", time.dt, 0, INF, HX_OPT_REQUIRED | HX_OPT_MIN_OPEN, NULL, "the time step"),
    DBL_ROW("end", time.end, 0, INF, HX_OPT_MIN_OPEN, NULL,
            "the final time, a multiple of dt (give end or steps)"),
    INT_ROW("steps", time.steps, 1, INT_MAXV, 0, NULL, "the number of steps (give end or steps)"),
    OTHER_ROW("initial", 0, "exact (0 without problem.exact)", "an expression in x, y, z, exact, or a .h5 file",
              "u at t = 0: an expression, problem.exact at t = 0, or the solution.h5 of a run"),
    INT_ROW("output_every", time.output_every, 0, INT_MAXV, 0, "0",
            "steps between solution outputs (0: the last step only; the last is always written)"),
    INT_ROW("checkpoint_every", time.checkpoint_every, 0, INT_MAXV, 0, "0",
            "steps between checkpoints (0: at the end and on a signal only)"),
    INT_ROW("error_every", time.error_every, 0, INT_MAXV, 0, "1",
            "steps between error norms with problem.exact (0: the output steps and the last only)"),
};
static const hx_opt_group time_group = {"time", NULL, time_rows, NELEM(time_rows)};

static const hx_opt_key top_rows[] = {
    GROUP_ROW("mesh", HX_OPT_REQUIRED, mesh_group, "the mesh"),
    INT_ROW("order", order, HX_ORDER_MIN, HX_ORDER_MAX, HX_OPT_REQUIRED, NULL,
            "polynomial order p ((p+1)^3 GLL nodes per element)"),
    GROUP_ROW("problem", HX_OPT_REQUIRED, problem_group, "the equation and its boundary conditions"),
    GROUP_ROW("solver", 0, solver_group, "the Krylov solver"),
    OTHER_ROW("preconditioner", 0, NULL, "a mapping (type: ...) or a type name",
              "checked by the preconditioner module (keys below)"),
    ENUM_ROW("backend", backend, backends, 0, "cpu", "where the solve runs"),
    GROUP_ROW("output", 0, output_group, "what is written"),
    GROUP_ROW("operator", 0, operator_group, "storage of the operator"),
    GROUP_ROW("time", 0, time_group, "time stepping: du/dt - div(kappa grad u) + lambda u = f (docs/time.md)"),
};
static const hx_opt_group top_group = {"", NULL, top_rows, NELEM(top_rows)};

/* every group, in the order hexcg keys lists them */
static const hx_opt_group *const all_groups[] = {&top_group,    &mesh_group,    &problem_group,
                                                 &bnd_group,    &solver_group,  &guess_group,
                                                 &output_group, &operator_group, &time_group};

void hx_case_print_keys(int names_only, FILE *out) {
  for (int i = 0; i < NELEM(all_groups); i++) hx_opt_print_keys(all_groups[i], NULL, 0, names_only, out);
}

const char *hx_case_mesh_type_name(hx_case_mesh_type t) {
  return (int)t >= 0 && (int)t < NELEM(mesh_types) ? mesh_types[t] : "?";
}
const char *hx_bc_type_name(hx_bc_type t) {
  return (int)t >= 0 && (int)t < NELEM(bc_types) ? bc_types[t] : "?";
}
const char *hx_case_partitioner_name(hx_case_partitioner p) {
  return (int)p >= 0 && (int)p < NELEM(partitioners) ? partitioners[p] : "?";
}
const char *hx_case_solver_name(hx_case_solver t) {
  return (int)t >= 0 && (int)t < NELEM(solver_types) ? solver_types[t] : "?";
}
const char *hx_case_backend_name(hx_case_backend b) {
  return (int)b >= 0 && (int)b < NELEM(backends) ? backends[b] : "?";
}
const char *hx_case_pc_type(const hx_case *cs) {
  const hx_opt *t = hx_opt_get(cs->preconditioner.opts, "type");
  return t && t->kind == HX_OPT_SCALAR ? t->value : NULL;
}

/* ---------------------------------------------------------------- typed values */
static void join_names(char *buf, size_t len, const char *const *names, int n) {
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", i ? ", " : "", names[i]);
  }
}

static const char *kind_name(const hx_ynode *v) {
  return v->kind == HX_YN_MAP ? "a mapping" : v->kind == HX_YN_SEQ ? "a list" : "a value";
}

/* v as the core readers see it */
static int parse_node(const hx_opt_key *k, const char *path, const hx_ynode *v, void *dst) {
  char where[1024];
  hx_ynode_where(v, where, sizeof where);
  const hx_opt_kind kind = v->kind == HX_YN_MAP   ? HX_OPT_MAP
                           : v->kind == HX_YN_SEQ ? HX_OPT_LIST
                                                  : HX_OPT_SCALAR;
  const hx_opt_val val = {kind, v->kind == HX_YN_SCALAR ? v->value : NULL, v->quoted, where};
  HX_CALL(hx_opt_parse(k, path, &val, dst));
  return HX_SUCCESS;
}

/* the value of an OTHER row: a scalar, given (the same rule as the typed rows) */
static int want_scalar(const hx_ynode *v, const char *key, const char *what) {
  if (v->kind != HX_YN_SCALAR) return hx_yerror(v, "%s: expected %s, got %s", key, what, kind_name(v));
  if (!v->value[0] && !v->quoted) return hx_yerror(v, "%s: no value given (expected %s)", key, what);
  return HX_SUCCESS;
}

/* items of the lists mesh.elements and mesh.extent, kappa per material */
static const hx_opt_key elements_item = {.key = "elements", .type = HX_OT_INT, .min = 1, .max = 100000};
static const hx_opt_key extent_item = {.key = "extent", .type = HX_OT_DOUBLE, .min = -INF, .max = INF};
/* at most 1e250: past ~1e300 the operator's entries overflowed (disc/disc.c,
 * hx_disc_coef_valid, issue 53) */
static const hx_opt_key kappa_value = {
    .key = "kappa", .type = HX_OT_DOUBLE, .min = 0, .max = 1e250, .flags = HX_OPT_MIN_OPEN};
static const hx_opt_key lambda_value = {.key = "lambda", .type = HX_OT_DOUBLE, .min = 0, .max = 1e250};

static int want_map(const hx_ynode *v, const char *key) {
  if (v->kind != HX_YN_MAP)
    return hx_yerror(v, "%s: expected a mapping (key: value entries), got %s", key, kind_name(v));
  return HX_SUCCESS;
}

static int missing(const hx_ynode *parent, const char *key) {
  return hx_yerror(parent, "missing required key '%s'", key);
}

/* Unknown keys of map (against the rows of g, path as given). */
static int check_keys(const hx_ynode *map, const hx_opt_group *g) {
  for (int i = 0; i < map->n; i++) {
    if (hx_opt_group_find(g, map->keys[i]->value)) continue;
    char where[1024];
    hx_ynode_where(map->keys[i], where, sizeof where);
    HX_CALL(hx_opt_unknown_key(g, map->keys[i]->value, where));
  }
  return HX_SUCCESS;
}

/* One row of g from map into base: the value given, else its default (rows
 * with def), else an error for HX_OPT_REQUIRED rows; *node (may be NULL) is
 * the value node or NULL. */
static int read_key(const hx_ynode *map, const hx_opt_group *g, const char *key, void *base,
                    hx_ynode **node) {
  const hx_opt_key *k = hx_opt_group_find(g, key);
  HX_CHECK(k && k->offset != HX_OPT_NOWHERE, HX_ERR_INTERNAL, "no typed option row %s.%s", g->path, key);
  char path[256];
  snprintf(path, sizeof path, "%s%s%s", g->path, g->path[0] ? "." : "", key);
  hx_ynode *v = hx_ynode_get(map, key, NULL);
  if (node) *node = v;
  void *dst = (char *)base + k->offset;
  if (v)
    HX_CALL(parse_node(k, path, v, dst));
  else if (k->flags & HX_OPT_REQUIRED)
    return missing(map, path);
  else if (k->def)
    HX_CALL(hx_opt_parse_default(k, dst));
  return HX_SUCCESS;
}

/* check_keys, then every typed row of g (read_key). */
static int read_group(const hx_ynode *map, const hx_opt_group *g, void *base) {
  if (map) HX_CALL(check_keys(map, g));
  for (int r = 0; r < g->n; r++) {
    const hx_opt_key *k = &g->keys[r];
    if (k->type != HX_OT_OTHER && k->type != HX_OT_GROUP) HX_CALL(read_key(map, g, k->key, base, NULL));
  }
  return HX_SUCCESS;
}

static int compile_expr(const hx_ynode *v, const char *key, hx_expr **e) {
  HX_CALL(want_scalar(v, key, "an expression in x, y, z"));
  int err = hx_expr_create(v->value, e);
  if (err == HX_ERR_INPUT) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hx_error_message());
    hx_error_clear();
    return hx_yerror(v, "%s: %s", key, msg);
  }
  HX_CALL(err);
  return HX_SUCCESS;
}

/* Box/kershaw: the expression must be finite at the corners, edge and face
 * mid-points and centre of the domain (catches 1/x, log(x), sqrt(x-2)). */
static int check_finite(const hx_case *cs, const hx_ynode *v, const char *key, const hx_expr *e) {
  if (HX_CASE_MESH_FROM_FILE(cs->mesh.type) || !e) return HX_SUCCESS;
  for (int c = 0; c < 27; c++) {
    double p[3];
    for (int d = 0, cc = c; d < 3; d++, cc /= 3)
      p[d] = cs->mesh.extent[d][0] + 0.5 * (cc % 3) * (cs->mesh.extent[d][1] - cs->mesh.extent[d][0]);
    double f = hx_expr_eval(e, p[0], p[1], p[2]);
    if (!isfinite(f))
      return hx_yerror(v, "%s: '%s' is not finite at (%g, %g, %g) in the domain (value %g)", key,
                       hx_expr_text(e), p[0], p[1], p[2], f);
  }
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- paths */
static char *path_join_abs(const char *base, const char *file) {
  char cwd[4096];
  size_t need = strlen(file) + strlen(base) + 4;
  if (file[0] == '/') return hx_io_strdup(file);
  int base_abs = base[0] == '/';
  if (!base_abs) {
    if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
    need += strlen(cwd);
  }
  char *r = malloc(need);
  if (!r) return NULL;
  const char *b = base;
  if (!strcmp(b, ".")) b = "";
  if (base_abs)
    snprintf(r, need, "%s/%s", b, file);
  else if (b[0])
    snprintf(r, need, "%s/%s/%s", cwd, b, file);
  else
    snprintf(r, need, "%s/%s", cwd, file);
  return r;
}

/* v holds the file name as given; path is what it resolved to. */
static int check_readable(const hx_ynode *v, const char *key, const char *path, const char *rel) {
  if (access(path, R_OK) != 0) {
    int e = errno;
    if (v->value[0] == '/') return hx_yerror(v, "%s: cannot read '%s': %s", key, v->value, strerror(e));
    return hx_yerror(v, "%s: cannot read '%s' (relative to %s): %s", key, v->value, rel, strerror(e));
  }
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (v->value[0] == '/') return hx_yerror(v, "%s: '%s' is a directory, not a file", key, v->value);
    return hx_yerror(v, "%s: '%s' (relative to %s) is a directory, not a file", key, v->value, rel);
  }
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- sections */
/* mesh.periodic: box/kershaw axes, or gmsh surface tag pairs */
static int load_periodic(hx_case *cs, const hx_ynode *mesh) {
  const hx_ynode *v = hx_ynode_get(mesh, "periodic", NULL);
  if (!v) return HX_SUCCESS;
  const int gmsh = HX_CASE_MESH_FROM_FILE(cs->mesh.type);
  const char *want = gmsh ? "a list of surface tag pairs [[a, b], ...] (the file's $Periodic section is read "
                            "by itself)"
                          : "a list of axes, e.g. [x, y]";
  if (v->kind != HX_YN_SEQ) return hx_yerror(v, "mesh.periodic: expected %s", want);
  if (!gmsh) {
    for (int i = 0; i < v->n; i++) {
      const hx_ynode *a = v->vals[i];
      if (a->kind != HX_YN_SCALAR) return hx_yerror(a, "mesh.periodic: expected %s", want);
      const int d = !strcmp(a->value, "x") ? 0 : !strcmp(a->value, "y") ? 1 : !strcmp(a->value, "z") ? 2 : -1;
      if (d < 0) return hx_yerror(a, "mesh.periodic: unknown axis '%s' (expected x, y or z)", a->value);
      if (cs->mesh.periodic[d]) return hx_yerror(a, "mesh.periodic: axis %s is given twice", a->value);
      cs->mesh.periodic[d] = 1;
      if (cs->mesh.elements[d] < 2)
        return hx_yerror(
            a,
            "mesh.periodic: axis %s needs at least 2 elements along it (mesh.elements gives %d): "
            "with one its two faces would be the same face",
            a->value, cs->mesh.elements[d]);
      if (d == 0 && cs->mesh.type == HX_CASE_MESH_KERSHAW && cs->mesh.eps < 1.0)
        return hx_yerror(
            a,
            "mesh.periodic: x cannot wrap on a kershaw mesh (eps %g < 1): the Kershaw map bends the "
            "face x = 0 by its left profile and x = 1 by its right one, so they are not translates "
            "of each other; y and z can (or use eps 1)",
            cs->mesh.eps);
    }
    return HX_SUCCESS;
  }
  HX_CALL(hx_calloc((size_t)v->n + 1, sizeof *cs->mesh.periodic_pairs, &cs->mesh.periodic_pairs));
  for (int i = 0; i < v->n; i++) {
    const hx_ynode *a = v->vals[i];
    if (a->kind != HX_YN_SEQ || a->n != 2 || a->vals[0]->kind != HX_YN_SCALAR ||
        a->vals[1]->kind != HX_YN_SCALAR)
      return hx_yerror(a, "mesh.periodic: expected %s; entry %d is not a pair of tag names", want, i);
    if (!strcmp(a->vals[0]->value, a->vals[1]->value))
      return hx_yerror(a, "mesh.periodic: the pair [%s, %s] names one surface twice", a->vals[0]->value,
                       a->vals[1]->value);
    for (int s = 0; s < 2; s++) {
      for (int j = 0; j < i; j++)
        for (int t = 0; t < 2; t++)
          if (!strcmp(cs->mesh.periodic_pairs[j][t], a->vals[s]->value))
            return hx_yerror(a->vals[s], "mesh.periodic: tag '%s' is already in pair %d", a->vals[s]->value,
                             j);
      cs->mesh.periodic_pairs[i][s] = hx_io_strdup(a->vals[s]->value);
      HX_CHECK(cs->mesh.periodic_pairs[i][s], HX_ERR_MEM, "out of memory");
    }
    cs->mesh.nperiodic_pairs = i + 1;
  }
  return HX_SUCCESS;
}

static int load_mesh(hx_case *cs, case_impl *im, const hx_ynode *root) {
  hx_ynode *mesh = hx_ynode_get(root, "mesh", NULL);
  if (!mesh) return missing(root, "mesh");
  HX_CALL(want_map(mesh, "mesh"));
  HX_CALL(check_keys(mesh, &mesh_group));
  hx_ynode *v, *k = NULL;
  HX_CALL(read_key(mesh, &mesh_group, "type", cs, NULL));
  {
    /* a .re2 file is read as the nek mesh it is, whatever file type was named */
    const hx_ynode *fv = hx_ynode_get(mesh, "file", NULL);
    const size_t lf = fv && fv->kind == HX_YN_SCALAR && fv->value ? strlen(fv->value) : 0;
    if (cs->mesh.type == HX_CASE_MESH_GMSH && lf > 4 && !strcmp(fv->value + lf - 4, ".re2"))
      cs->mesh.type = HX_CASE_MESH_NEK;
  }
  int gen = !HX_CASE_MESH_FROM_FILE(cs->mesh.type);
  /* keys that do not belong to this mesh type */
  static const char *const gen_only[] = {"elements", "extent", "deform"};
  for (int i = 0; i < NELEM(gen_only) && !gen; i++)
    if (hx_ynode_get(mesh, gen_only[i], &k))
      return hx_yerror(k, "mesh.%s: not used by a %s mesh (only by box and kershaw)", gen_only[i],
                       hx_case_mesh_type_name(cs->mesh.type));
  if (gen && hx_ynode_get(mesh, "file", &k)) return hx_yerror(k, "mesh.file: only used by a gmsh, exodus or nek mesh");
  cs->mesh.field = 1;
  if (cs->mesh.type != HX_CASE_MESH_NEK && hx_ynode_get(mesh, "field", &k))
    return hx_yerror(k, "mesh.field: only used by a nek mesh (the .re2 boundary field to read)");
  if (cs->mesh.type == HX_CASE_MESH_NEK) HX_CALL(read_key(mesh, &mesh_group, "field", cs, NULL));
  if (cs->mesh.type == HX_CASE_MESH_NEK && hx_ynode_get(mesh, "periodic", &k))
    return hx_yerror(k, "mesh.periodic: not used by a nek mesh (the .re2 file's 'P' boundary records pair the "
                        "periodic faces)");
  if (cs->mesh.type != HX_CASE_MESH_KERSHAW && hx_ynode_get(mesh, "eps", &k))
    return hx_yerror(k, "mesh.eps: only used by a kershaw mesh");

  for (int d = 0; d < 3; d++) cs->mesh.extent[d][0] = 0.0, cs->mesh.extent[d][1] = 1.0;
  cs->mesh.eps = 1.0;
  if (gen) {
    v = hx_ynode_get(mesh, "elements", NULL);
    if (!v) return missing(mesh, "mesh.elements");
    if (v->kind == HX_YN_SCALAR) {
      int nel = 0;
      HX_CALL(parse_node(&elements_item, "mesh.elements", v, &nel));
      for (int d = 0; d < 3; d++) cs->mesh.elements[d] = nel;
    } else {
      if (v->kind != HX_YN_SEQ || v->n != 3)
        return hx_yerror(v, "mesh.elements: expected a list of 3 positive integers [nx, ny, nz]");
      for (int d = 0; d < 3; d++)
        HX_CALL(parse_node(&elements_item, "mesh.elements", v->vals[d], &cs->mesh.elements[d]));
    }
    v = hx_ynode_get(mesh, "extent", NULL);
    if (v) {
      const char *ext_msg = "mesh.extent: expected [[xmin, xmax], [ymin, ymax], [zmin, zmax]]";
      if (v->kind != HX_YN_SEQ || v->n != 3) return hx_yerror(v, "%s", ext_msg);
      for (int d = 0; d < 3; d++) {
        const hx_ynode *r = v->vals[d];
        if (r->kind != HX_YN_SEQ || r->n != 2) return hx_yerror(r, "%s", ext_msg);
        HX_CALL(parse_node(&extent_item, "mesh.extent", r->vals[0], &cs->mesh.extent[d][0]));
        HX_CALL(parse_node(&extent_item, "mesh.extent", r->vals[1], &cs->mesh.extent[d][1]));
        if (!(cs->mesh.extent[d][0] < cs->mesh.extent[d][1]))
          return hx_yerror(r, "mesh.extent: the %c range must have min < max, got [%g, %g]", "xyz"[d],
                           cs -> mesh.extent[d][0], cs->mesh.extent[d][1]);
        const double lo = cs->mesh.extent[d][0], hi = cs->mesh.extent[d][1];
        const double w = (hi - lo) / cs->mesh.elements[d];
        if (!(fabs(lo) <= HX_MESH_COORD_MAX && fabs(hi) <= HX_MESH_COORD_MAX))
          return hx_yerror(r,
                           "mesh.extent: the %c range [%.9g, %.9g] is outside the supported coordinates |%c| <= %g "
                           "(the geometric factors and norms would overflow); rescale the problem",
                           "xyz"[d], lo, hi, "xyz"[d], HX_MESH_COORD_MAX);
        if (!(w >= HX_MESH_EDGE_MIN))
          return hx_yerror(r,
                           "mesh.extent: the %c range [%.9g, %.9g] gives elements %g wide, below the smallest "
                           "supported element size %g (the geometric factors and norms would underflow); "
                           "rescale the problem",
                           "xyz"[d], lo, hi, w, HX_MESH_EDGE_MIN);
        if (!(w >= 1e-7 * fmax(fabs(lo), fabs(hi))))
          return hx_yerror(r,
                           "mesh.extent: the %c range [%.9g, %.9g] gives elements %g wide, too narrow against "
                           "coordinates of magnitude %.9g: double precision resolves down to 1e-7 of the "
                           "coordinates (move the domain towards the origin)",
                           "xyz"[d], lo, hi, w, fmax(fabs(lo), fabs(hi)));
      }
    }
    HX_CALL(read_key(mesh, &mesh_group, "deform", cs, NULL));
  }
  if (cs->mesh.type == HX_CASE_MESH_KERSHAW) {
    HX_CALL(read_key(mesh, &mesh_group, "eps", cs, NULL));
    const int *e = cs->mesh.elements;
    if (cs->mesh.eps < 1.0 && (e[0] % 6 || e[1] % 2 || e[2] % 2))
      return hx_yerror(
          hx_ynode_get(mesh, "elements", NULL),
          "mesh.elements: a kershaw mesh needs nx divisible by 6 and ny, nz even, got [%d, %d, %d]", e[0],
          e[1], e[2]);
  }
  if (!gen) {
    v = hx_ynode_get(mesh, "file", NULL);
    if (!v) return missing(mesh, "mesh.file");
    HX_CALL(want_scalar(v, "mesh.file", "a file name"));
    cs->mesh.file = path_join_abs(im->dir, v->value);
    HX_CHECK(cs->mesh.file, HX_ERR_MEM, "out of memory");
    if (im->check_files) HX_CALL(check_readable(v, "mesh.file", cs->mesh.file, "the case file's folder"));
  }
  HX_CALL(read_key(mesh, &mesh_group, "partitioner", cs, NULL));
  HX_CALL(load_periodic(cs, mesh));
  return HX_SUCCESS;
}

static int load_tags(hx_case *cs, const hx_ynode *tv, const char *key, hx_case_boundary *b) {
  const hx_ynode *const *items = (const hx_ynode *const *)&tv;
  int n = 1;
  if (tv->kind == HX_YN_SEQ) items = (const hx_ynode *const *)tv->vals, n = tv->n;
  if (tv->kind == HX_YN_MAP || n == 0) return hx_yerror(tv, "%s: expected a list of boundary tag names", key);
  HX_CALL(hx_calloc((size_t)n, sizeof(char *), &b->tags));
  b->ntags = n;
  for (int i = 0; i < n; i++) {
    HX_CALL(want_scalar(items[i], key, "a boundary tag name"));
    b->tags[i] = hx_io_strdup(items[i]->value);
    HX_CHECK(b->tags[i], HX_ERR_MEM, "out of memory");
  }
  (void)cs;
  return HX_SUCCESS;
}

/* The tag nodes of boundary entry b, in order (a single scalar counts as a list of one). */
static const hx_ynode *tag_node(const hx_case *cs, int b, int t) {
  const case_impl *im = cs->impl;
  const hx_ynode *prob = hx_ynode_get(im->doc.root, "problem", NULL);
  const hx_ynode *bl = hx_ynode_get(prob, "boundary", NULL);
  if (!bl || bl->kind != HX_YN_SEQ || b >= bl->n) return prob;
  const hx_ynode *tv = hx_ynode_get(bl->vals[b], "tags", NULL);
  if (tv && tv->kind == HX_YN_SEQ && t < tv->n) return tv->vals[t];
  return tv ? tv : bl->vals[b];
}

int hx_case_check_tags(const hx_case *cs, int ntags, const char *const *names) {
  for (int b = 0; b < cs->problem.nboundary; b++) {
    const hx_case_boundary *bd = &cs->problem.boundary[b];
    for (int t = 0; t < bd->ntags; t++) {
      int ok = 0;
      for (int i = 0; i < ntags && !ok; i++) ok = !strcmp(bd->tags[t], names[i]);
      if (ok) continue;
      char list[1024];
      join_names(list, sizeof list, names, ntags);
      const char *near = hx_closest(bd->tags[t], names, ntags);
      const char *mt = hx_case_mesh_type_name(cs->mesh.type);
      if (near)
        return hx_yerror(
            tag_node(cs, b, t),
            "problem.boundary[%d].tags: unknown boundary tag '%s' (did you mean '%s'?); the %s mesh has: %s",
            b, bd->tags[t], near, mt, list);
      return hx_yerror(tag_node(cs, b, t),
                       "problem.boundary[%d].tags: unknown boundary tag '%s'; the %s mesh has: %s", b,
                       bd->tags[t], mt, list);
    }
  }
  return HX_SUCCESS;
}

int hx_case_check_periodic_tags(const hx_case *cs, int ntags, const char *const *names, const int *periodic) {
  for (int b = 0; b < cs->problem.nboundary; b++) {
    const hx_case_boundary *bd = &cs->problem.boundary[b];
    for (int t = 0; t < bd->ntags; t++)
      for (int i = 0; i < ntags; i++)
        if (periodic[i] && !strcmp(bd->tags[t], names[i]))
          return hx_yerror(
              tag_node(cs, b, t),
              "problem.boundary[%d].tags: '%s' is periodic (mesh.periodic%s): its faces are "
              "identified with their partners and are no longer boundary, so a %s condition on it "
              "would act nowhere; remove the tag from problem.boundary or the periodicity",
              b, bd->tags[t],
              HX_CASE_MESH_FROM_FILE(cs->mesh.type) && !cs->mesh.nperiodic_pairs
                  ? ", or the mesh file's $Periodic section"
                  : "",
              hx_bc_type_name(bd->type));
  }
  return HX_SUCCESS;
}

/* The node at a dotted path ("problem.boundary.2.value"), or the deepest
 * node on the way (the root at worst). */
static const hx_ynode *node_at(const hx_case *cs, const char *path) {
  const case_impl *im = cs->impl;
  const hx_ynode *n = im->doc.root;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && n; k = strtok_r(NULL, ".", &save)) {
    const hx_ynode *next = NULL;
    if (n->kind == HX_YN_SEQ) {
      int i = atoi(k);
      next = i >= 0 && i < n->n ? n->vals[i] : NULL;
    } else {
      next = hx_ynode_get(n, k, NULL);
    }
    if (!next) break;
    n = next;
  }
  return n;
}

double hx_case_mem_estimate(const hx_case *cs, double El, double pc_node_bytes) {
  const int levels = cs->time.enabled ? cs->time.scheme + 1 : 0;
  /* elements that are not affine store geometric factors per node: about
   * 36 bytes per L entry more at the peak (Kershaw p = 3, 2 ranks) */
  const int curved = cs->mesh.type != HX_CASE_MESH_BOX || cs->mesh.deform > 0;
  const double node = (pc_node_bytes > 0 ? pc_node_bytes : 0.0) + (curved ? 36.0 : 0.0);
  return El * HX_MEM_MESH_LOCAL_ELEM + hx_mem_run_bytes(El, cs->order, node, levels, cs->solver.projection);
}

int hx_case_check_memory(MPI_Comm comm, const hx_case *cs, int64_t elements, hx_case_mem_use use,
                         double pc_node_bytes) {
  int rank = 0, size = 1;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Comm_size(comm, &size));
  const int gmsh = HX_CASE_MESH_FROM_FILE(cs->mesh.type), built = elements > 0;
  double E = (double)elements;
  if (!built) {
    if (gmsh) return HX_SUCCESS; /* known once the file is read */
    E = (double)cs->mesh.elements[0] * cs->mesh.elements[1] * cs->mesh.elements[2];
  }
  /* this rank's share of a balanced partition, the global mesh on rank 0
   * while it is built (not once it exists) */
  const double El = floor(E / size) + (rank < fmod(E, size) ? 1 : 0), n = cs->order + 1.0;
  const double rank0 = built ? 0.0 : E * HX_MEM_MESH_GLOBAL_ELEM;
  /* a rank of El elements: its part of the mesh (in use already once built) and its data */
  double per, per_max;
  if (use == HX_CASE_MEM_RUN) {
    per = hx_case_mem_estimate(cs, El, pc_node_bytes) - (built ? El * HX_MEM_MESH_LOCAL_ELEM : 0.0);
    per_max = hx_case_mem_estimate(cs, ceil(E / size), pc_node_bytes) -
              (built ? ceil(E / size) * HX_MEM_MESH_LOCAL_ELEM : 0.0);
  } else {
    per = El * ((built ? 0.0 : HX_MEM_MESH_LOCAL_ELEM) + HX_MEM_MESHCMD_NODE * n * n * n);
    per_max = ceil(E / size) * ((built ? 0.0 : HX_MEM_MESH_LOCAL_ELEM) + HX_MEM_MESHCMD_NODE * n * n * n);
  }
  hx_mem_fit_info fi;
  HX_CALL(hx_mem_fit(comm, rank0, per, &fi));
  if (fi.fits) return HX_SUCCESS;
  char why[512];
  hx_mem_fit_describe(&fi, rank0, per_max, why, sizeof why);
  const hx_ynode *at = node_at(cs, gmsh ? "mesh.file" : "mesh.elements");
  return hx_yerror(at, "%s: %.0f elements at order %d %s; see \"Memory\" in docs/case-format.md",
                   gmsh ? "mesh.file" : "mesh.elements", E, cs->order, why);
}

int hx_case_check_finite(const hx_case *cs, const char *key, const hx_expr *e, size_t n, const double *x,
                         const double *y, const double *z, const double *v) {
  for (size_t i = 0; i < n; i++) {
    if (isfinite(v[i])) continue;
    const hx_ynode *at = node_at(cs, key);
    if (!at) return HX_ERROR(HX_ERR_INPUT, "%s: %s: not finite at the mesh node (%.17g, %.17g, %.17g) (value %g)",
                             cs->path, key, x[i], y[i], z[i], v[i]);
    if (!e)
      return hx_yerror(at, "%s: not finite at the mesh node (%.17g, %.17g, %.17g) (value %g)", key, x[i], y[i],
                       z[i], v[i]);
    double f = hx_expr_eval(e, x[i], y[i], z[i]);
    return hx_yerror(at, "%s: '%.200s' is not finite at the mesh node (%.17g, %.17g, %.17g) (value %g)", key,
                     hx_expr_text(e), x[i], y[i], z[i], isfinite(f) ? v[i] : f);
  }
  return HX_SUCCESS;
}

int hx_case_check_materials(const hx_case *cs, int nmat, const char *const *names) {
  const case_impl *im = cs->impl;
  for (int c = 0; c < 2; c++) {
    const char *key = c ? "lambda" : "kappa";
    const hx_ynode *kv = hx_ynode_get(hx_ynode_get(im->doc.root, "problem", NULL), key, NULL);
    const int nm_ = c ? cs->problem.nlambda : cs->problem.nmaterials;
    for (int m = 0; m < nm_; m++) {
      const char *nm = c ? cs->problem.lambda_materials[m].name : cs->problem.materials[m].name;
      int ok = 0;
      for (int i = 0; i < nmat && !ok; i++) ok = !strcmp(nm, names[i]);
      if (ok) continue;
      const hx_ynode *at = kv;
      if (kv && kv->kind == HX_YN_MAP && m < kv->n) at = kv->keys[m];
      char list[1024];
      join_names(list, sizeof list, names, nmat);
      const char *near = hx_closest(nm, names, nmat);
      if (near)
        return hx_yerror(at, "problem.%s: unknown material '%s' (did you mean '%s'?); the mesh has: %s", key, nm,
                         near, list);
      return hx_yerror(at, "problem.%s: unknown material '%s'; the mesh has: %s", key, nm, list);
    }
  }
  return HX_SUCCESS;
}

double hx_case_kappa(const hx_case *cs, const char *material) {
  if (cs->problem.nmaterials == 0) return cs->problem.kappa;
  for (int m = 0; m < cs->problem.nmaterials; m++)
    if (material && !strcmp(material, cs->problem.materials[m].name)) return cs->problem.materials[m].kappa;
  return -1.0;
}

/* Coefficients are fixed for the whole run: the operator and its
 * preconditioner are built once and reused across the steps of a time:
 * run (docs/time.md), so a kappa, lambda or Robin alpha in t would be
 * evaluated at t = 0 without a word. */
static int refuse_t_coef(const hx_ynode *v, const char *key, const hx_expr *e) {
  if (!e || !hx_expr_uses_t(e)) return HX_SUCCESS;
  return hx_yerror(v,
                   "%s: the expression '%s' uses t, but a coefficient (kappa, lambda, robin alpha) may not depend "
                   "on time: the operator and the preconditioner are built once per run (docs/time.md); give an "
                   "expression in x, y, z",
                   key, hx_expr_text(e));
}

/* A coefficient value (c = 0 kappa, 1 lambda): a number (range checked
 * here), or an expression in x, y, z (finite in the domain; the sign is
 * checked at every GLL node when the discretisation evaluates it, naming
 * *where). */
static int parse_coef(const hx_case *cs, const hx_ynode *v, const char *key, int c, double *value, hx_expr **expr,
                      char **where) {
  double num;
  HX_CALL(want_scalar(v, key, "a number or an expression in x, y, z"));
  *expr = NULL;
  if (!v->quoted && hx_opt_is_number(v->value, &num)) {
    HX_CALL(parse_node(c ? &lambda_value : &kappa_value, key, v, value));
  } else {
    HX_CALL(compile_expr(v, key, expr));
    HX_CALL(refuse_t_coef(v, key, *expr));
    HX_CALL(check_finite(cs, v, key, *expr));
    *value = 0.0;
  }
  char pos[1024], buf[1536];
  hx_ynode_where(v, pos, sizeof pos);
  if (*expr)
    snprintf(buf, sizeof buf, "%s: %s '%.200s'", pos, key, hx_expr_text(*expr));
  else
    snprintf(buf, sizeof buf, "%s: %s", pos, key);
  *where = hx_io_strdup(buf);
  HX_CHECK(*where, HX_ERR_MEM, "out of memory");
  return HX_SUCCESS;
}

static const hx_case_coef *lambda_entry(const hx_case *cs, const char *material) {
  for (int m = 0; m < cs->problem.nlambda; m++)
    if (material && !strcmp(material, cs->problem.lambda_materials[m].name)) return &cs->problem.lambda_materials[m];
  return NULL;
}

int hx_case_coef_get(const hx_case *cs, int c, const char *material, double *value, const hx_expr **expr,
                     const char **where) {
  double v = 0.0;
  const hx_expr *e = NULL;
  const char *w = NULL;
  if (c == 0 && cs->problem.nmaterials == 0) {
    v = cs->problem.kappa, e = cs->problem.kappa_expr, w = cs->problem.kappa_where;
  } else if (c == 0) {
    int found = 0;
    for (int m = 0; m < cs->problem.nmaterials && !found; m++)
      if (material && !strcmp(material, cs->problem.materials[m].name)) {
        const hx_case_material *mm = &cs->problem.materials[m];
        v = mm->kappa, e = mm->expr, w = mm->where, found = 1;
      }
    if (!found) return -1;
  } else if (cs->problem.nlambda == 0) {
    v = cs->problem.lambda, e = cs->problem.lambda_expr, w = cs->problem.lambda_where;
  } else {
    const hx_case_coef *mm = lambda_entry(cs, material);
    if (!mm) return -1;
    v = mm->value, e = mm->expr, w = mm->where;
  }
  if (value) *value = v;
  if (expr) *expr = e;
  if (where) *where = w;
  return 0;
}

/* problem.rhs or problem.exact: one expression, or (a list) n of them,
 * each compiled and checked finite; *list (n owned, allocated) */
static int load_expr_list(const hx_case *cs, const hx_ynode *v, const char *key, int *n, hx_expr ***list) {
  const int seq = v->kind == HX_YN_SEQ;
  *n = seq ? v->n : 1;
  if (seq && (v->n < 2 || v->n > HX_CASE_RHS_MAX))
    return hx_yerror(v,
                     "%s: a list of %d expressions; give one expression, or a list of 2 to %d (one per "
                     "right-hand side, solved at once by block PCG)",
                     key, v->n, HX_CASE_RHS_MAX);
  HX_CALL(hx_calloc((size_t)*n, sizeof(hx_expr *), list));
  char k[64];
  for (int i = 0; i < *n; i++) {
    const hx_ynode *e = seq ? v->vals[i] : v;
    if (seq)
      snprintf(k, sizeof k, "%s[%d]", key, i);
    else
      snprintf(k, sizeof k, "%s", key);
    HX_CALL(compile_expr(e, k, &(*list)[i]));
    HX_CALL(check_finite(cs, e, k, (*list)[i]));
  }
  return HX_SUCCESS;
}

/* problem.rhs (required) and problem.exact: one expression each, or lists
 * (several right-hand sides; exact's of the same length, or absent) */
static int load_rhs(hx_case *cs, const hx_ynode *pr) {
  const hx_ynode *v = hx_ynode_get(pr, "rhs", NULL);
  if (!v) return missing(pr, "problem.rhs");
  HX_CALL(load_expr_list(cs, v, "problem.rhs", &cs->problem.nrhs, &cs->problem.rhs_list));
  cs->problem.rhs = cs->problem.rhs_list[0];
  if (!(v = hx_ynode_get(pr, "exact", NULL))) return HX_SUCCESS;
  const int n = cs->problem.nrhs, ne = v->kind == HX_YN_SEQ ? v->n : 1;
  if (n > 1 && ne != n)
    return hx_yerror(v,
                     "problem.exact: %s of %d, but problem.rhs lists %d right-hand sides; give a list of %d "
                     "expressions (column i's exact solution), or leave problem.exact out",
                     v->kind == HX_YN_SEQ ? "a list" : "one expression instead of a list", ne, n, n);
  if (n == 1) {
    HX_CALL(compile_expr(v, "problem.exact", &cs->problem.exact));
    HX_CALL(check_finite(cs, v, "problem.exact", cs->problem.exact));
    return HX_SUCCESS;
  }
  int m = 0;
  HX_CALL(load_expr_list(cs, v, "problem.exact", &m, &cs->problem.exact_list));
  cs->problem.exact = cs->problem.exact_list[0];
  return HX_SUCCESS;
}

static int load_problem(hx_case *cs, const hx_ynode *root) {
  hx_ynode *pr = hx_ynode_get(root, "problem", NULL), *v;
  if (!pr) return missing(root, "problem");
  HX_CALL(want_map(pr, "problem"));
  HX_CALL(check_keys(pr, &problem_group));
  cs->problem.kappa = 1.0;
  cs->problem.lambda = 0.0;
  for (int c = 0; c < 2; c++) {
    const char *name = c ? "lambda" : "kappa";
    if (!(v = hx_ynode_get(pr, name, NULL))) continue;
    char key[320];
    snprintf(key, sizeof key, "problem.%s", name);
    if (v->kind == HX_YN_MAP) {
      if (v->n == 0) return hx_yerror(v, "%s: the material map is empty", key);
      if (c) {
        HX_CALL(hx_calloc((size_t)v->n, sizeof(hx_case_coef), &cs->problem.lambda_materials));
      } else {
        HX_CALL(hx_calloc((size_t)v->n, sizeof(hx_case_material), &cs->problem.materials));
      }
      for (int i = 0; i < v->n; i++) {
        char *nm = hx_io_strdup(v->keys[i]->value);
        HX_CHECK(nm, HX_ERR_MEM, "out of memory");
        snprintf(key, sizeof key, "problem.%s.%s", name, nm);
        if (c) {
          hx_case_coef *m = &cs->problem.lambda_materials[i];
          cs->problem.nlambda = i + 1;
          m->name = nm;
          HX_CALL(parse_coef(cs, v->vals[i], key, c, &m->value, &m->expr, &m->where));
        } else {
          hx_case_material *m = &cs->problem.materials[i];
          cs->problem.nmaterials = i + 1;
          m->name = nm;
          HX_CALL(parse_coef(cs, v->vals[i], key, c, &m->kappa, &m->expr, &m->where));
        }
      }
    } else {
      if (v->kind != HX_YN_SCALAR)
        return hx_yerror(v, "%s: expected a number, an expression in x, y, z, or a map from material name to "
                         "number or expression",
                         key);
      if (c) {
        HX_CALL(parse_coef(cs, v, key, c, &cs->problem.lambda, &cs->problem.lambda_expr, &cs->problem.lambda_where));
      } else {
        HX_CALL(parse_coef(cs, v, key, c, &cs->problem.kappa, &cs->problem.kappa_expr, &cs->problem.kappa_where));
      }
    }
  }
  HX_CALL(load_rhs(cs, pr));

  hx_ynode *bl = hx_ynode_get(pr, "boundary", NULL);
  if (bl) {
    if (bl->kind != HX_YN_SEQ)
      return hx_yerror(bl,
                       "problem.boundary: expected a list of {tags: [...], type: ..., value: ...} entries");
    HX_CALL(hx_calloc((size_t)bl->n, sizeof(hx_case_boundary), &cs->problem.boundary));
    for (int b = 0; b < bl->n; b++) {
      hx_ynode *e = bl->vals[b];
      hx_case_boundary *bd = &cs->problem.boundary[b];
      cs->problem.nboundary = b + 1;
      char key[160], sect[64];
      snprintf(sect, sizeof sect, "problem.boundary[%d]", b);
      hx_opt_group entry = bnd_group; /* messages name the entry */
      entry.path = sect;
      HX_CALL(want_map(e, sect));
      HX_CALL(check_keys(e, &entry));
      snprintf(key, sizeof key, "%s.tags", sect);
      if (!(v = hx_ynode_get(e, "tags", NULL))) return missing(e, key);
      HX_CALL(load_tags(cs, v, key, bd));
      HX_CALL(read_key(e, &entry, "type", bd, NULL));
      snprintf(key, sizeof key, "%s.alpha", sect);
      if ((v = hx_ynode_get(e, "alpha", NULL))) {
        if (bd->type != HX_BC_ROBIN)
          return hx_yerror(v, "%s: alpha is only for robin boundaries (type: robin), this one is %s", key,
                           bc_types[bd->type]);
        HX_CALL(want_scalar(v, key, "a number >= 0 or an expression in x, y, z"));
        if (hx_opt_is_number(v->value, &bd->alpha)) {
          if (!(bd->alpha >= 0.0) || !isfinite(bd->alpha))
            return hx_yerror(v, "%s: %s is negative; the Robin coefficient must be >= 0 (alpha = 0 is Neumann)",
                             key, v->value);
        } else {
          HX_CALL(compile_expr(v, key, &bd->alpha_expr));
          HX_CALL(refuse_t_coef(v, key, bd->alpha_expr));
          HX_CALL(check_finite(cs, v, key, bd->alpha_expr));
        }
      } else if (bd->type == HX_BC_ROBIN) {
        return hx_yerror(e,
                         "%s: a robin boundary needs alpha (kappa du/dn + alpha u = value): add "
                         "'alpha: <number >= 0 or expression>' to the entry",
                         key);
      }
      snprintf(key, sizeof key, "%s.value", sect);
      bd->value_kind = HX_BCV_NUMBER;
      if ((v = hx_ynode_get(e, "value", NULL))) {
        HX_CALL(want_scalar(v, key, "a number, an expression or 'exact'"));
        if (!strcmp(v->value, "exact")) {
          if (!cs->problem.exact) return hx_yerror(v, "%s: 'exact' needs problem.exact", key);
          if (bd->type != HX_BC_DIRICHLET)
            return hx_yerror(v, "%s: 'exact' is only supported on dirichlet boundaries", key);
          bd->value_kind = HX_BCV_EXACT;
          bd->expr = cs->problem.exact;
        } else if (!hx_opt_is_number(v->value, &bd->value)) {
          HX_CALL(compile_expr(v, key, &bd->expr));
          bd->value_kind = HX_BCV_EXPR;
          HX_CALL(check_finite(cs, v, key, bd->expr));
        }
      }
    }
    /* a tag in two entries is ambiguous */
    for (int b = 0; b < cs->problem.nboundary; b++)
      for (int t = 0; t < cs->problem.boundary[b].ntags; t++)
        for (int b2 = 0; b2 <= b; b2++)
          for (int t2 = 0; t2 < (b2 == b ? t : cs->problem.boundary[b2].ntags); t2++)
            if (!strcmp(cs->problem.boundary[b].tags[t], cs->problem.boundary[b2].tags[t2]))
              return hx_yerror(tag_node(cs, b, t),
                               "problem.boundary[%d].tags: tag '%s' is already given in problem.boundary[%d]",
                               b, cs->problem.boundary[b].tags[t], b2);
  }
  {
    /* no condition on a periodic tag (box axes, gmsh pairs; a gmsh $Periodic section: after reading) */
    int per[NELEM(box_tags)], np = cs->mesh.nperiodic_pairs;
    for (int t = 0; t < NELEM(box_tags); t++)
      per[t] = !HX_CASE_MESH_FROM_FILE(cs->mesh.type) && cs->mesh.periodic[t / 2];
    HX_CALL(hx_case_check_periodic_tags(cs, NELEM(box_tags), box_tags, per));
    for (int i = 0; i < np; i++) {
      const int one[2] = {1, 1};
      HX_CALL(hx_case_check_periodic_tags(cs, 2, (const char *const *)cs->mesh.periodic_pairs[i], one));
    }
  }
  /* no dirichlet boundary and lambda = 0 (and no robin alpha > 0): pure
   * Neumann, solved for the zero-mean solution (docs/solver.md, "Null space") */
  if (!HX_CASE_MESH_FROM_FILE(cs->mesh.type)) {
    HX_CALL(hx_case_check_tags(cs, NELEM(box_tags), box_tags));
    HX_CALL(hx_case_check_materials(cs, NELEM(box_materials), box_materials));
  }
  return HX_SUCCESS;
}

static int load_solver(hx_case *cs, case_impl *im, const hx_ynode *root) {
  hx_ynode *s = hx_ynode_get(root, "solver", NULL), *v;
  if (s) HX_CALL(want_map(s, "solver"));
  HX_CALL(read_group(s, &solver_group, cs));
  if ((v = hx_ynode_get(s, "initial_guess", NULL))) {
    if (v->kind == HX_YN_MAP) {
      HX_CALL(check_keys(v, &guess_group));
      hx_ynode *f = hx_ynode_get(v, "file", NULL);
      if (!f) return missing(v, "solver.initial_guess.file");
      v = f;
    }
    HX_CALL(want_scalar(v, "solver.initial_guess.file", "a solution.h5 file name"));
    cs->solver.initial_guess = path_join_abs(".", v->value);
    HX_CHECK(cs->solver.initial_guess, HX_ERR_MEM, "out of memory");
    if (im->check_files)
      HX_CALL(
          check_readable(v, "solver.initial_guess.file", cs->solver.initial_guess, "the working directory"));
  }
  return HX_SUCCESS;
}

/* The time: section (docs/time.md); after load_problem (time.initial may be exact). */
static int load_time(hx_case *cs, case_impl *im, const hx_ynode *root) {
  hx_ynode *s = hx_ynode_get(root, "time", NULL), *v, *ve = NULL, *vs = NULL;
  if (!s) return HX_SUCCESS;
  HX_CALL(want_map(s, "time"));
  cs->time.enabled = 1;
  HX_CALL(read_group(s, &time_group, cs));
  if (cs->solver.initial_guess)
    return hx_yerror(node_at(cs, "solver.initial_guess"),
                     "solver.initial_guess: a time-dependent run starts from time.initial; give the "
                     "solution.h5 there (time.initial: FILE.h5)");
  ve = hx_ynode_get(s, "end", NULL), vs = hx_ynode_get(s, "steps", NULL);
  if (ve && vs) return hx_yerror(vs, "time: give either end or steps, not both");
  if (!ve && !vs) return hx_yerror(s, "time: missing required key 'time.end' or 'time.steps'");
  if (ve) {
    const double n = floor(cs->time.end / cs->time.dt + 0.5);
    if (!(n >= 1 && n <= INT_MAXV) || fabs(n * cs->time.dt - cs->time.end) > 1e-9 * cs->time.end)
      return hx_yerror(ve, "time.end: %g is not a whole number (>= 1) of steps of dt = %g; give time.steps or "
                           "an end that is a multiple of dt",
                       cs->time.end, cs->time.dt);
    cs->time.steps = (int)n;
  } else {
    cs->time.end = 0.0;
  }
  /* t = n dt for every step, and the BDF shift beta0 / dt, in the double
   * range (issue 53: dt 1e308 with 10 steps wrote infinite times, exit 0) */
  {
    const double t_last = (double)cs->time.steps * cs->time.dt;
    if (!isfinite(t_last) || !isfinite(11.0 / (6.0 * cs->time.dt)))
      return hx_yerror(hx_ynode_get(s, "dt", NULL),
                       "time.dt: %g with %d steps: the time axis (t up to %g) or the BDF shift 1/dt leaves the "
                       "double range; give a dt between 1e-300 and 1e300 with a finite end",
                       cs->time.dt, cs->time.steps, t_last);
  }
  cs->time.initial_kind = cs->problem.exact ? HX_TIME_INIT_EXACT : HX_TIME_INIT_EXPR;
  v = hx_ynode_get(s, "initial", NULL);
  if (v) HX_CALL(want_scalar(v, "time.initial", "an expression in x, y, z, exact, or a .h5 file"));
  if (v && !strcmp(v->value, "exact")) {
    if (!cs->problem.exact) return hx_yerror(v, "time.initial: 'exact' needs problem.exact");
  } else if (v && strlen(v->value) > 3 && !strcmp(v->value + strlen(v->value) - 3, ".h5")) {
    cs->time.initial_kind = HX_TIME_INIT_FILE;
    cs->time.initial_file = path_join_abs(".", v->value);
    HX_CHECK(cs->time.initial_file, HX_ERR_MEM, "out of memory");
    if (im->check_files) HX_CALL(check_readable(v, "time.initial", cs->time.initial_file, "the working directory"));
  } else if (v || !cs->problem.exact) {
    cs->time.initial_kind = HX_TIME_INIT_EXPR;
    if (v)
      HX_CALL(compile_expr(v, "time.initial", &cs->time.initial));
    else
      HX_CALL(hx_expr_create("0", &cs->time.initial));
    if (hx_expr_uses_t(cs->time.initial))
      return hx_yerror(v, "time.initial: the initial value is at t = 0; give an expression in x, y, z only");
    HX_CALL(check_finite(cs, v ? v : s, "time.initial", cs->time.initial));
  }
  return HX_SUCCESS;
}

/* Without a time: section an expression in t has no time to take. */
static int check_no_t(const hx_case *cs) {
  if (cs->time.enabled) return HX_SUCCESS;
  const hx_expr *e[2] = {cs->problem.rhs, cs->problem.exact};
  const char *k[2] = {"problem.rhs", "problem.exact"};
  char key[64];
  for (int i = 0; i < 2 + cs->problem.nboundary; i++) {
    const hx_expr *x = i < 2 ? e[i] : cs->problem.boundary[i - 2].expr;
    if (i >= 2 && cs->problem.boundary[i - 2].value_kind != HX_BCV_EXPR) continue;
    if (i >= 2) snprintf(key, sizeof key, "problem.boundary.%d.value", i - 2);
    if (x && hx_expr_uses_t(x))
      return hx_yerror(node_at(cs, i < 2 ? k[i] : key),
                       "%s: the expression '%s' uses t, which needs a time: section (docs/time.md); "
                       "without one give an expression in x, y, z",
                       i < 2 ? k[i] : key, hx_expr_text(x));
  }
  return HX_SUCCESS;
}

/* The option tree of a YAML node, with its positions (a scalar X becomes
 * {type: X}; NULL gives an empty mapping). */
static int opt_convert(const hx_ynode *n, hx_opt **out) {
  char where[1024];
  hx_ynode_where(n, where, sizeof where);
  const hx_opt_kind kind = n->kind == HX_YN_MAP ? HX_OPT_MAP : n->kind == HX_YN_SEQ ? HX_OPT_LIST : HX_OPT_SCALAR;
  hx_opt *o = hx_opt_new(kind, n->value, where);
  HX_CHECK(o, HX_ERR_MEM, "out of memory");
  o->quoted = n->quoted;
  for (int i = 0; i < n->n && kind != HX_OPT_SCALAR; i++) {
    hx_opt *c = NULL;
    int err = opt_convert(n->vals[i], &c);
    if (!err) err = hx_opt_push(o, kind == HX_OPT_MAP ? n->keys[i]->value : NULL, c);
    if (err) {
      hx_opt_free(&c);
      hx_opt_free(&o);
      return hx_error_trace(__FILE__, __LINE__, __func__, err);
    }
  }
  *out = o;
  return HX_SUCCESS;
}

static int opt_from_ynode(const hx_ynode *n, hx_opt **out) {
  *out = NULL;
  if (!n) {
    HX_CHECK(*out = hx_opt_new(HX_OPT_MAP, NULL, NULL), HX_ERR_MEM, "out of memory");
    return HX_SUCCESS;
  }
  if (n->kind == HX_YN_SEQ) return hx_yerror(n, "preconditioner: expected a mapping (type: ...) or a type name");
  hx_opt *o = NULL;
  HX_CALL(opt_convert(n, &o));
  if (o->kind == HX_OPT_SCALAR) {
    hx_opt *m = hx_opt_new(HX_OPT_MAP, NULL, o->where);
    int err = m ? hx_opt_push(m, "type", o) : HX_ERROR(HX_ERR_MEM, "out of memory");
    if (err) {
      hx_opt_free(&m);
      hx_opt_free(&o);
      HX_CALL(err);
    }
    o = m;
  }
  *out = o;
  return HX_SUCCESS;
}

int hx_opt_parse_yaml(const char *text, const char *name, hx_opt **out) {
  *out = NULL;
  hx_ydoc doc = {0};
  int err = hx_ydoc_parse(&doc, text, strlen(text), name, 0);
  if (!err) err = opt_from_ynode(doc.root, out);
  hx_ydoc_free(&doc);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* output.fields: a list of u, exact, error, rank (0 when not given: the
 * default is resolved in validate, once the time section is known) */
static int load_fields(hx_case *cs, const hx_ynode *out) {
  const hx_ynode *v = out ? hx_ynode_get(out, "fields", NULL) : NULL;
  cs->output.fields = 0;
  if (!v) return HX_SUCCESS;
  const char *want = "a list of u, exact, error, rank (e.g. [u, error])";
  if (v->kind == HX_YN_SCALAR) return hx_yerror(v, "output.fields: expected %s, got '%s'", want, v->value);
  if (v->kind != HX_YN_SEQ) return hx_yerror(v, "output.fields: expected %s", want);
  if (v->n == 0)
    return hx_yerror(v,
                     "output.fields: the list is empty (expected %s; output.solution: false writes no "
                     "solution)",
                     want);
  for (int i = 0; i < v->n; i++) {
    const hx_ynode *a = v->vals[i];
    if (a->kind != HX_YN_SCALAR)
      return hx_yerror(a, "output.fields: entry %d is not a name (expected %s)", i, want);
    int f = -1;
    for (int k = 0; k < NELEM(out_fields); k++)
      if (!strcmp(a->value, out_fields[k])) f = k;
    if (f < 0)
      return hx_yerror(a, "output.fields: unknown field '%s' (the choices: u, exact, error, rank)", a->value);
    if (cs->output.fields & (1u << f)) return hx_yerror(a, "output.fields: '%s' is given twice", a->value);
    if ((f == 1 || f == 2) && !cs->problem.exact)
      return hx_yerror(
          a, "output.fields: '%s' needs problem.exact (the case gives no exact solution); remove it",
          a->value);
    cs->output.fields |= 1u << f;
  }
  return HX_SUCCESS;
}

static int load_rest(hx_case *cs, const hx_ynode *root) {
  hx_ynode *s;
  HX_CALL(opt_from_ynode(hx_ynode_get(root, "preconditioner", NULL), &cs->preconditioner.opts));
  HX_CALL(read_key(root, &top_group, "backend", cs, NULL));
  if ((s = hx_ynode_get(root, "operator", NULL))) HX_CALL(want_map(s, "operator"));
  HX_CALL(read_group(s, &operator_group, cs));
  if ((s = hx_ynode_get(root, "output", NULL))) HX_CALL(want_map(s, "output"));
  HX_CALL(read_group(s, &output_group, cs));
  HX_CALL(load_fields(cs, s));
  if (!cs->output.dir) {
    size_t n = strlen(cs->name) + 8;
    cs->output.dir = malloc(n);
    HX_CHECK(cs->output.dir, HX_ERR_MEM, "out of memory");
    snprintf(cs->output.dir, n, "out/%s", cs->name);
  }
  return HX_SUCCESS;
}

/* Several right-hand sides are one steady block PCG solve from a zero
 * initial guess with shared boundary data: what does not fit is refused. */
static int check_rhs_list(const hx_case *cs) {
  const int n = cs->problem.nrhs;
  if (n < 2) return HX_SUCCESS;
  const hx_ynode *rhs = node_at(cs, "problem.rhs");
  if (cs->time.enabled)
    return hx_yerror(
        rhs,
        "problem.rhs: a list of %d right-hand sides with a time: section; several right-hand sides "
        "are for steady runs: remove the time: section, or give one expression",
        n);
  if (cs->solver.type != HX_CASE_SOLVER_PCG)
    return hx_yerror(node_at(cs, "solver.type"),
                     "solver.type: %s with a list of %d right-hand sides; the block solve is plain PCG: give "
                     "solver.type: pcg (or leave it out), or one right-hand side",
                     hx_case_solver_name(cs->solver.type), n);
  const char *pct = hx_case_pc_type(cs);
  if (pct && !strcmp(pct, "auto"))
    return hx_yerror(
        node_at(cs, "preconditioner.type"),
        "preconditioner: auto with a list of %d right-hand sides; the block solve is plain PCG with "
        "a fixed preconditioner: name one (pmg, the default with a list, asm or jacobi)",
        n);
  if (cs->solver.initial_guess)
    return hx_yerror(
        node_at(cs, "solver.initial_guess"),
        "solver.initial_guess with a list of %d right-hand sides; the block solve starts from zero: "
        "remove solver.initial_guess, or give one right-hand side",
        n);
  if (cs->solver.projection > 0)
    return hx_yerror(
        node_at(cs, "solver.projection"),
        "solver.projection with a list of %d right-hand sides; the block solve projects nothing: "
        "remove solver.projection, or give one right-hand side",
        n);
  for (int b = 0; b < cs->problem.nboundary; b++)
    if (cs->problem.boundary[b].value_kind == HX_BCV_EXACT) {
      char key[64];
      snprintf(key, sizeof key, "problem.boundary.%d.value", b);
      return hx_yerror(
          node_at(cs, key),
          "problem.boundary[%d].value: exact with a list of %d right-hand sides; the columns share "
          "their boundary data: give the value as a number or an expression in x, y, z",
          b, n);
    }
  return HX_SUCCESS;
}

static int validate(hx_case *cs, case_impl *im) {
  const hx_ynode *root = im->doc.root;
  if (!root)
    return HX_ERROR(HX_ERR_INPUT, "%s:1:1: the case file is empty (expected mesh, order, problem, ...)",
                    cs->path);
  if (root->kind != HX_YN_MAP)
    return hx_yerror(root,
                     "expected a mapping of sections (mesh, order, problem, ...) at the top level, got %s",
                     kind_name(root));
  HX_CALL(check_keys(root, &top_group));
  HX_CALL(load_mesh(cs, im, root));
  HX_CALL(read_key(root, &top_group, "order", cs, NULL));
  HX_CALL(load_problem(cs, root));
  cs->solver.projection = -1; /* not given: resolved below */
  HX_CALL(load_solver(cs, im, root));
  HX_CALL(load_rest(cs, root));
  HX_CALL(load_time(cs, im, root));
  HX_CALL(check_no_t(cs));
  HX_CALL(check_rhs_list(cs));
  if (cs->solver.projection < 0) cs->solver.projection = cs->time.enabled ? 8 : 0;
  /* output.fields not given: every field of a steady run; a time series is lean (docs/time.md) */
  if (!cs->output.fields)
    cs->output.fields = cs->time.enabled ? HX_FIELD_U
                                         : HX_FIELD_U | HX_FIELD_RANK |
                                               (cs->problem.exact ? HX_FIELD_EXACT | HX_FIELD_ERROR : 0);
  cs->output.fields |= HX_FIELD_U; /* always: the solution, and a later run's input */
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- create / destroy */
void hx_case_destroy(hx_case **csp) {
  if (!csp || !*csp) return;
  hx_case *cs = *csp;
  free(cs->path);
  hx_opt_free(&cs->preconditioner.opts);
  free(cs->name);
  free(cs->mesh.file);
  for (int i = 0; i < cs->mesh.nperiodic_pairs; i++)
    free(cs->mesh.periodic_pairs[i][0]), free(cs->mesh.periodic_pairs[i][1]);
  free(cs->mesh.periodic_pairs);
  for (int m = 0; m < cs->problem.nmaterials; m++) {
    free(cs->problem.materials[m].name), free(cs->problem.materials[m].where);
    hx_expr_destroy(&cs->problem.materials[m].expr);
  }
  free(cs->problem.materials);
  for (int m = 0; m < cs->problem.nlambda; m++) {
    free(cs->problem.lambda_materials[m].name), free(cs->problem.lambda_materials[m].where);
    hx_expr_destroy(&cs->problem.lambda_materials[m].expr);
  }
  free(cs->problem.lambda_materials);
  hx_expr_destroy(&cs->problem.kappa_expr), hx_expr_destroy(&cs->problem.lambda_expr);
  free(cs->problem.kappa_where), free(cs->problem.lambda_where);
  for (int b = 0; b < cs->problem.nboundary; b++) {
    hx_case_boundary *bd = &cs->problem.boundary[b];
    for (int t = 0; t < bd->ntags; t++) free(bd->tags[t]);
    free(bd->tags);
    if (bd->value_kind == HX_BCV_EXPR) hx_expr_destroy(&bd->expr);
    hx_expr_destroy(&bd->alpha_expr);
  }
  free(cs->problem.boundary);
  for (int i = 0; i < cs->problem.nrhs; i++) { /* rhs and exact are their lists' first entries */
    if (cs->problem.rhs_list) hx_expr_destroy(&cs->problem.rhs_list[i]), cs->problem.rhs = NULL;
    if (cs->problem.exact_list) hx_expr_destroy(&cs->problem.exact_list[i]), cs->problem.exact = NULL;
  }
  free(cs->problem.rhs_list), free(cs->problem.exact_list);
  hx_expr_destroy(&cs->problem.rhs);
  hx_expr_destroy(&cs->problem.exact);
  free(cs->solver.initial_guess);
  hx_expr_destroy(&cs->time.initial);
  free(cs->time.initial_file);
  free(cs->output.dir);
  case_impl *im = cs->impl;
  if (im) {
    hx_ydoc_free(&im->doc);
    free(im->dir);
    free(im);
  }
  free(cs);
  *csp = NULL;
}

static int case_new(const char *name, int check_files, hx_case **out) {
  hx_case *cs = calloc(1, sizeof *cs);
  HX_CHECK(cs, HX_ERR_MEM, "out of memory");
  case_impl *im = calloc(1, sizeof *im);
  cs->impl = im;
  cs->path = hx_io_strdup(name);
  if (!im || !cs->path) {
    hx_case_destroy(&cs);
    return HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  im->check_files = check_files;
  const char *slash = strrchr(name, '/');
  const char *base = slash ? slash + 1 : name;
  im->dir = slash ? malloc((size_t)(slash - name) + 2) : hx_io_strdup(".");
  if (im->dir && slash) {
    size_t n = slash == name ? 1 : (size_t)(slash - name);
    memcpy(im->dir, name, n);
    im->dir[n] = '\0';
  }
  cs->name = hx_io_strdup(base);
  if (!im->dir || !cs->name) {
    hx_case_destroy(&cs);
    return HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  char *dot = strrchr(cs->name, '.');
  if (dot && dot != cs->name && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"))) *dot = '\0';
  *out = cs;
  return HX_SUCCESS;
}

int hx_case_load_string(const char *text, const char *name, int nsets, const char *const *sets,
                        int check_files, hx_case **out) {
  *out = NULL;
  hx_case *cs = NULL;
  HX_CALL(case_new(name, check_files, &cs));
  case_impl *im = cs->impl;
  int err = hx_ydoc_parse(&im->doc, text, strlen(text), name, 0);
  for (int i = 0; i < nsets && !err; i++) err = hx_ydoc_apply_set(&im->doc, sets[i]);
  if (!err) err = validate(cs, im);
  if (err) {
    hx_case_destroy(&cs);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = cs;
  return HX_SUCCESS;
}

static int read_text(const char *path, char **text) {
  *text = NULL;
  FILE *f = fopen(path, "rb");
  HX_CHECK(f, HX_ERR_INPUT, "cannot read case file '%s': %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  int err = buf ? HX_SUCCESS : HX_ERROR(HX_ERR_MEM, "out of memory");
  while (!err) {
    if (len + 1 >= cap) {
      char *nb = cap < ((size_t)64 << 20) ? realloc(buf, cap * 2) : NULL;
      if (!nb) {
        err = HX_ERROR(HX_ERR_INPUT, "case file '%s' is too large", path);
        break;
      }
      buf = nb, cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - 1 - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f)) err = HX_ERROR(HX_ERR_INPUT, "cannot read case file '%s': %s", path, strerror(errno));
      break;
    }
  }
  fclose(f);
  if (err) {
    free(buf);
    return err;
  }
  buf[len] = '\0';
  if (strlen(buf) != len) {
    free(buf);
    return HX_ERROR(HX_ERR_INPUT, "%s: not a text file (contains NUL bytes)", path);
  }
  *text = buf;
  return HX_SUCCESS;
}

int hx_case_load(const char *path, int nsets, const char *const *sets, hx_case **cs) {
  *cs = NULL;
  char *text = NULL;
  HX_CALL(read_text(path, &text));
  int err = hx_case_load_string(text, path, nsets, sets, 1, cs);
  free(text);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_case_load_comm(MPI_Comm comm, const char *path, int nsets, const char *const *sets, hx_case **cs) {
  *cs = NULL;
  int rank = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  char *text = NULL;
  int err = HX_SUCCESS;
  if (rank == 0) {
    err = read_text(path, &text);
    if (!err) err = hx_case_load_string(text, path, nsets, sets, 1, cs);
  }
  err = hx_io_bcast_error(comm, 0, err);
  if (err) {
    free(text);
    hx_case_destroy(cs);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  long long len = rank == 0 ? (long long)strlen(text) : 0;
  HX_MPI(MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm));
  if (rank != 0) {
    text = malloc((size_t)len + 1);
    HX_CHECK(text, HX_ERR_MEM, "out of memory");
    text[len] = '\0';
  }
  if (len > 0) HX_MPI(MPI_Bcast(text, (int)len, MPI_CHAR, 0, comm));
  if (rank != 0) err = hx_case_load_string(text, path, nsets, sets, 0, cs);
  free(text);
  /* rank 0 validated the same text; agree anyway */
  int any = err, anyall = 0;
  MPI_Allreduce(&any, &anyall, 1, MPI_INT, MPI_MAX, comm);
  if (anyall) {
    hx_case_destroy(cs);
    if (!err) err = HX_ERROR(HX_ERR_INTERNAL, "case '%s' validated on rank 0 but not on another rank", path);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  return HX_SUCCESS;
}

int hx_case_set_output_dir(hx_case *cs, const char *dir) {
  HX_CHECK(dir && dir[0], HX_ERR_INPUT, "--output: the folder name must not be empty");
  char *d = hx_io_strdup(dir);
  HX_CHECK(d, HX_ERR_MEM, "out of memory");
  free(cs->output.dir);
  cs->output.dir = d;
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- effective case */
typedef struct {
  char *buf;
  size_t len, cap;
  int err;
} sbuf;

static void sb_printf(sbuf *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *s, const char *fmt, ...) {
  if (s->err) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      s->err = 1;
      return;
    }
    if (s->buf && s->len + (size_t)n < s->cap) {
      s->len += (size_t)n;
      return;
    }
    size_t cap = (s->cap ? s->cap * 2 : 4096) + (size_t)n;
    char *nb = realloc(s->buf, cap);
    if (!nb) {
      s->err = 1;
      return;
    }
    s->buf = nb, s->cap = cap;
  }
}

/* A double-quoted YAML string. */
static void sb_quoted(sbuf *s, const char *str) {
  sb_printf(s, "\"");
  for (const char *c = str; *c; c++) {
    if (*c == '"' || *c == '\\')
      sb_printf(s, "\\%c", *c);
    else if (*c == '\n')
      sb_printf(s, "\\n");
    else if (*c == '\t')
      sb_printf(s, "\\t");
    else if ((unsigned char)*c < 0x20)
      sb_printf(s, "\\x%02x", (unsigned char)*c);
    else
      sb_printf(s, "%c", *c);
  }
  sb_printf(s, "\"");
}

/* Keys that the effective case leaves out: those of another mesh type,
 * and optional values not given. */
static int row_written(const hx_case *cs, const hx_opt_group *g, const hx_opt_key *k) {
  const int gmsh = HX_CASE_MESH_FROM_FILE(cs->mesh.type);
  if (g == &mesh_group) {
    if (!strcmp(k->key, "elements") || !strcmp(k->key, "extent") || !strcmp(k->key, "deform")) return !gmsh;
    if (!strcmp(k->key, "eps")) return cs->mesh.type == HX_CASE_MESH_KERSHAW;
    if (!strcmp(k->key, "file")) return gmsh;
    if (!strcmp(k->key, "field")) return cs->mesh.type == HX_CASE_MESH_NEK;
  }
  if (g == &problem_group && !strcmp(k->key, "exact")) return cs->problem.exact != NULL;
  if (g == &solver_group && !strcmp(k->key, "initial_guess")) return cs->solver.initial_guess != NULL;
  if (g == &top_group && !strcmp(k->key, "time")) return cs->time.enabled;
  if (g == &time_group && !strcmp(k->key, "end")) return cs->time.end > 0;
  if (g == &time_group && !strcmp(k->key, "steps")) return !(cs->time.end > 0);
  return 1;
}

/* The value of an OTHER row (after "key:"). */
static int write_other(const hx_case *cs, const hx_opt_group *g, const hx_opt_key *k, int indent, sbuf *s) {
  char a[40], b[40];
  if (g == &mesh_group && !strcmp(k->key, "elements")) {
    sb_printf(s, " [%d, %d, %d]\n", cs->mesh.elements[0], cs->mesh.elements[1], cs->mesh.elements[2]);
  } else if (g == &mesh_group && !strcmp(k->key, "extent")) {
    sb_printf(s, " [");
    for (int d = 0; d < 3; d++) {
      hx_fmt_double(a, sizeof a, cs->mesh.extent[d][0]);
      hx_fmt_double(b, sizeof b, cs->mesh.extent[d][1]);
      sb_printf(s, "%s[%s, %s]", d ? ", " : "", a, b);
    }
    sb_printf(s, "]\n");
  } else if (g == &mesh_group && !strcmp(k->key, "periodic")) {
    sb_printf(s, " [");
    if (!HX_CASE_MESH_FROM_FILE(cs->mesh.type)) {
      for (int d = 0, c = 0; d < 3; d++)
        if (cs->mesh.periodic[d]) sb_printf(s, "%s%c", c++ ? ", " : "", 'x' + d);
    } else {
      for (int i = 0; i < cs->mesh.nperiodic_pairs; i++) {
        sb_printf(s, "%s[", i ? ", " : "");
        sb_quoted(s, cs->mesh.periodic_pairs[i][0]);
        sb_printf(s, ", ");
        sb_quoted(s, cs->mesh.periodic_pairs[i][1]);
        sb_printf(s, "]");
      }
    }
    sb_printf(s, "]\n");
  } else if (g == &mesh_group && !strcmp(k->key, "file")) {
    sb_printf(s, " ");
    sb_quoted(s, cs->mesh.file);
    sb_printf(s, "\n");
  } else if (g == &problem_group && (!strcmp(k->key, "kappa") || !strcmp(k->key, "lambda"))) {
    const int c = !strcmp(k->key, "lambda");
    const int nm = c ? cs->problem.nlambda : cs->problem.nmaterials;
    if (!nm) {
      const hx_expr *e = c ? cs->problem.lambda_expr : cs->problem.kappa_expr;
      if (e) {
        sb_printf(s, " ");
        sb_quoted(s, hx_expr_text(e));
        sb_printf(s, "\n");
      } else {
        hx_fmt_double(a, sizeof a, c ? cs->problem.lambda : cs->problem.kappa);
        sb_printf(s, " %s\n", a);
      }
    } else {
      sb_printf(s, "\n");
      for (int m = 0; m < nm; m++) {
        const char *name = c ? cs->problem.lambda_materials[m].name : cs->problem.materials[m].name;
        const hx_expr *e = c ? cs->problem.lambda_materials[m].expr : cs->problem.materials[m].expr;
        sb_printf(s, "%*s", indent + 2, "");
        sb_quoted(s, name);
        sb_printf(s, ": ");
        if (e) {
          sb_quoted(s, hx_expr_text(e));
        } else {
          hx_fmt_double(a, sizeof a, c ? cs->problem.lambda_materials[m].value : cs->problem.materials[m].kappa);
          sb_printf(s, "%s", a);
        }
        sb_printf(s, "\n");
      }
    }
  } else if (g == &problem_group && (!strcmp(k->key, "rhs") || !strcmp(k->key, "exact"))) {
    const int r = !strcmp(k->key, "rhs");
    hx_expr *const *list = r ? cs->problem.rhs_list : cs->problem.exact_list;
    if (cs->problem.nrhs > 1 && list) { /* several right-hand sides: a flow list */
      for (int i = 0; i < cs->problem.nrhs; i++) {
        sb_printf(s, "%s", i ? ", " : " [");
        sb_quoted(s, hx_expr_text(list[i]));
      }
      sb_printf(s, "]\n");
    } else {
      sb_printf(s, " ");
      sb_quoted(s, hx_expr_text(r ? cs->problem.rhs : cs->problem.exact));
      sb_printf(s, "\n");
    }
  } else if (g == &problem_group && !strcmp(k->key, "boundary")) {
    sb_printf(s, "%s\n", cs->problem.nboundary ? "" : " []");
    for (int i = 0; i < cs->problem.nboundary; i++) {
      const hx_case_boundary *bd = &cs->problem.boundary[i];
      sb_printf(s, "%*s- tags: [", indent + 2, "");
      for (int t = 0; t < bd->ntags; t++) {
        sb_printf(s, "%s", t ? ", " : "");
        sb_quoted(s, bd->tags[t]);
      }
      sb_printf(s, "]\n%*stype: %s\n%*svalue: ", indent + 4, "", hx_bc_type_name(bd->type), indent + 4, "");
      if (bd->value_kind == HX_BCV_EXACT)
        sb_printf(s, "exact");
      else if (bd->value_kind == HX_BCV_EXPR)
        sb_quoted(s, hx_expr_text(bd->expr));
      else {
        hx_fmt_double(a, sizeof a, bd->value);
        sb_printf(s, "%s", a);
      }
      sb_printf(s, "\n");
      if (bd->type == HX_BC_ROBIN) {
        sb_printf(s, "%*salpha: ", indent + 4, "");
        if (bd->alpha_expr)
          sb_quoted(s, hx_expr_text(bd->alpha_expr));
        else {
          hx_fmt_double(a, sizeof a, bd->alpha);
          sb_printf(s, "%s", a);
        }
        sb_printf(s, "\n");
      }
    }
  } else if (g == &output_group && !strcmp(k->key, "fields")) {
    sb_printf(s, " [");
    for (int f = 0, c = 0; f < NELEM(out_fields); f++)
      if (cs->output.fields & (1u << f)) sb_printf(s, "%s%s", c++ ? ", " : "", out_fields[f]);
    sb_printf(s, "]\n");
  } else if (g == &solver_group && !strcmp(k->key, "initial_guess")) {
    sb_printf(s, " {file: ");
    sb_quoted(s, cs->solver.initial_guess);
    sb_printf(s, "}\n");
  } else if (g == &time_group && !strcmp(k->key, "initial")) {
    sb_printf(s, " ");
    if (cs->time.initial_kind == HX_TIME_INIT_EXACT)
      sb_printf(s, "exact");
    else
      sb_quoted(s, cs->time.initial_kind == HX_TIME_INIT_FILE ? cs->time.initial_file : hx_expr_text(cs->time.initial));
    sb_printf(s, "\n");
  } else if (g == &top_group && !strcmp(k->key, "preconditioner")) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    HX_CHECK(f, HX_ERR_MEM, "out of memory formatting the effective case");
    hx_opt_write_yaml(cs->preconditioner.opts, indent + 2, f);
    fclose(f);
    sb_printf(s, "%s\n%s", cs->preconditioner.opts && cs->preconditioner.opts->n ? "" : " {}",
              buf ? buf : "");
    free(buf);
  } else {
    return HX_ERROR(HX_ERR_INTERNAL, "effective case: no writer for %s.%s", g->path, k->key);
  }
  return HX_SUCCESS;
}

/* Every row of g, in table order: typed values by the core formatter,
 * groups nested, the rest by write_other. */
static int write_rows(const hx_case *cs, const hx_opt_group *g, int indent, sbuf *s) {
  char v[128];
  for (int r = 0; r < g->n; r++) {
    const hx_opt_key *k = &g->keys[r];
    if (!row_written(cs, g, k)) continue;
    sb_printf(s, "%*s%s:", indent, "", k->key);
    if (k->type == HX_OT_GROUP) {
      sb_printf(s, "\n");
      HX_CALL(write_rows(cs, k->sub, indent + 2, s));
    } else if (k->type == HX_OT_OTHER) {
      HX_CALL(write_other(cs, g, k, indent, s));
    } else if (k->type == HX_OT_TEXT) {
      sb_printf(s, " ");
      sb_quoted(s, *(char *const *)((const char *)cs + k->offset));
      sb_printf(s, "\n");
    } else {
      hx_opt_format(k, (const char *)cs + k->offset, v, sizeof v);
      sb_printf(s, " %s\n", v);
    }
  }
  return HX_SUCCESS;
}

static int case_yaml(const hx_case *cs, sbuf *s) {
  /* the case file's name as a quoted string: a newline in it broke this
   * comment line and so the documented rerun (issue 32) */
  sb_printf(s, "# effective case of ");
  sb_quoted(s, cs->path);
  sb_printf(s, " (defaults and overrides applied)\n");
  HX_CALL(write_rows(cs, &top_group, 0, s));
  HX_CHECK(!s->err, HX_ERR_MEM, "out of memory formatting the effective case");
  return HX_SUCCESS;
}

int hx_case_write_effective(const hx_case *cs, const char *path) {
  sbuf s = {0};
  int err = case_yaml(cs, &s);
  if (!err) err = hx_io_write_file_atomic(path, s.buf, s.len);
  free(s.buf);
  HX_CALL(err);
  return HX_SUCCESS;
}

void hx_case_print(const hx_case *cs, FILE *out) {
  fprintf(out, "case         %s (%s)\n", cs->name, cs->path);
  if (HX_CASE_MESH_FROM_FILE(cs->mesh.type)) {
    fprintf(out, "mesh         %s %s", hx_case_mesh_type_name(cs->mesh.type), cs->mesh.file);
    if (cs->mesh.type == HX_CASE_MESH_NEK) fprintf(out, ", field %d", cs->mesh.field);
    for (int i = 0; i < cs->mesh.nperiodic_pairs; i++)
      fprintf(out, "%s[%s, %s]", i ? ", " : ", periodic ", cs->mesh.periodic_pairs[i][0],
              cs->mesh.periodic_pairs[i][1]);
    fprintf(out, ", partitioner %s\n", hx_case_partitioner_name(cs->mesh.partitioner));
  } else {
    fprintf(out, "mesh         %s %d x %d x %d on [%g, %g] x [%g, %g] x [%g, %g]",
            hx_case_mesh_type_name(cs->mesh.type), cs->mesh.elements[0], cs->mesh.elements[1],
            cs->mesh.elements[2], cs->mesh.extent[0][0], cs->mesh.extent[0][1], cs->mesh.extent[1][0],
            cs->mesh.extent[1][1], cs->mesh.extent[2][0], cs->mesh.extent[2][1]);
    if (cs->mesh.type == HX_CASE_MESH_KERSHAW) fprintf(out, ", eps %g", cs->mesh.eps);
    if (cs->mesh.deform > 0) fprintf(out, ", deform %g", cs->mesh.deform);
    for (int d = 0, c = 0; d < 3; d++)
      if (cs->mesh.periodic[d]) fprintf(out, "%s%c", c++ ? " " : ", periodic ", 'x' + d);
    fprintf(out, ", partitioner %s\n", hx_case_partitioner_name(cs->mesh.partitioner));
  }
  fprintf(out, "order        %d\n", cs->order);
  fprintf(out, "problem     ");
  for (int c = 0; c < 2; c++) {
    const char *name = c ? "lambda" : "kappa";
    const int nm = c ? cs->problem.nlambda : cs->problem.nmaterials;
    if (nm) {
      fprintf(out, "%s %s per material:", c ? "," : "", name);
      for (int m = 0; m < nm; m++) {
        const hx_expr *e = c ? cs->problem.lambda_materials[m].expr : cs->problem.materials[m].expr;
        const char *mn = c ? cs->problem.lambda_materials[m].name : cs->problem.materials[m].name;
        if (e)
          fprintf(out, " %s='%s'", mn, hx_expr_text(e));
        else
          fprintf(out, " %s=%g", mn, c ? cs->problem.lambda_materials[m].value : cs->problem.materials[m].kappa);
      }
    } else {
      const hx_expr *e = c ? cs->problem.lambda_expr : cs->problem.kappa_expr;
      if (e)
        fprintf(out, "%s %s '%s'", c ? "," : "", name, hx_expr_text(e));
      else
        fprintf(out, "%s %s %g", c ? "," : "", name, c ? cs->problem.lambda : cs->problem.kappa);
    }
  }
  fprintf(out, "\n");
  for (int i = 0; i < cs->problem.nrhs; i++) {
    const hx_expr *ex = cs->problem.exact_list ? cs->problem.exact_list[i] : i ? NULL : cs->problem.exact;
    char lab[16] = "rhs";
    if (cs->problem.nrhs > 1) snprintf(lab, sizeof lab, "rhs[%d]", i);
    fprintf(out, "  %-10s %s\n", lab, hx_expr_text(cs->problem.rhs_list[i]));
    if (ex) fprintf(out, "  %-10s %s\n", cs->problem.nrhs > 1 ? "  exact" : "exact", hx_expr_text(ex));
  }
  for (int i = 0; i < cs->problem.nboundary; i++) {
    const hx_case_boundary *bd = &cs->problem.boundary[i];
    fprintf(out, "  boundary  ");
    for (int t = 0; t < bd->ntags; t++) fprintf(out, " %s", bd->tags[t]);
    fprintf(out, ": %s, ", hx_bc_type_name(bd->type));
    if (bd->type == HX_BC_ROBIN) {
      if (bd->alpha_expr) fprintf(out, "alpha %s, ", hx_expr_text(bd->alpha_expr));
      else fprintf(out, "alpha %g, ", bd->alpha);
    }
    if (bd->value_kind == HX_BCV_EXACT)
      fprintf(out, "exact\n");
    else if (bd->value_kind == HX_BCV_EXPR)
      fprintf(out, "%s\n", hx_expr_text(bd->expr));
    else
      fprintf(out, "%g\n", bd->value);
  }
  fprintf(out, "solver       %s, tol %g, max %d iterations, preconditioner %s\n",
          hx_case_solver_name(cs->solver.type), cs->solver.tol, cs->solver.max_iterations,
          hx_case_pc_type(cs) ? hx_case_pc_type(cs) : "(default)");
  if (cs->solver.initial_guess) fprintf(out, "  initial    %s\n", cs->solver.initial_guess);
  if (cs->solver.projection) fprintf(out, "  projection %d previous solutions\n", cs->solver.projection);
  if (cs->time.enabled)
    fprintf(out, "time         %s, dt %g, %d steps (t = 0 .. %g), initial %s\n", time_schemes[cs->time.scheme],
            cs->time.dt, cs->time.steps, cs->time.steps * cs->time.dt,
            cs->time.initial_kind == HX_TIME_INIT_EXACT  ? "exact"
            : cs->time.initial_kind == HX_TIME_INIT_FILE ? cs->time.initial_file
                                                         : hx_expr_text(cs->time.initial));
  fprintf(out, "backend      %s\n", hx_case_backend_name(cs->backend));
  char fields[64] = "";
  static const char *const fname[] = {"u", "exact", "error", "rank"};
  for (int i = 0; i < 4; i++)
    if (cs->output.fields & (1u << i))
      snprintf(fields + strlen(fields), sizeof fields - strlen(fields), "%s%s", fields[0] ? " " : "", fname[i]);
  fprintf(out, "output       %s (solution %s: %s, %s, fields %s; history %s)\n", cs->output.dir,
          cs->output.solution ? "yes" : "no", cs->output.format == HX_OUTPUT_VTKHDF ? "vtkhdf" : "xdmf",
          cs->output.precision == HX_OUTPUT_FP32 ? "fp32" : "fp64", fields, cs->output.history ? "yes" : "no");
}
