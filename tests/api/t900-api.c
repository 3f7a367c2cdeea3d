/* The library API (api/hexcg.h) as a user sees it: only hexcg.h is
 * included. Modes (argv[1]):
 *   solve   a case from YAML: the solution against the exact one, many solves
 *           on one setup equal fresh solvers, a new shift against a fresh
 *           solver with that lambda, boundary data changed between solves
 *           (harmonic 1 + x + 2y, exact in the space), the caller's OpenMP
 *           threads restored
 *   errors  status codes with messages instead of exits: a bad case, a
 *           missing file, NULL arguments, a NaN right-hand side, bad
 *           settings; the solver still works after an error
 *   twice   the library used twice in one process and two solvers alive
 *           at once (interleaved solves equal lone ones)
 *   many    hexcg_solve_many: each column equals its single solve (same
 *           iterations), columns that converge at different iterations,
 *           k = 1 bit for bit, k beyond the operator's block (66 columns)
 *   desc    a description: a box given as arrays, kappa per material,
 *           Dirichlet + Neumann + Robin by tag name, f as an expression and
 *           as a callback; the same answer as the YAML case; bad
 *           descriptions refused with their message
 *   time    hexcg_time_run of a heat problem: BDF2 against the exact
 *           solution, the monitor per step, a monitor that stops the run
 * Each runs on 1 and 2 ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "hexcg.h"

static int g_fail = 0, g_rank = 0;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "[%d] %s:%d: check failed: %s\n  ", g_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                               \
      fprintf(stderr, "\n");                                                      \
      g_fail++;                                                                   \
    }                                                                             \
  } while (0)

/* a call that must succeed; on failure the message and return 1 */
#define OK(expr)                                                                                   \
  do {                                                                                             \
    int st_ = (expr);                                                                              \
    if (st_ != HEXCG_OK) {                                                                         \
      fprintf(stderr, "[%d] %s:%d: %s: %s: %s\n", g_rank, __FILE__, __LINE__, #expr, hexcg_status_name(st_), \
              hexcg_last_error());                                                                 \
      g_fail++;                                                                                    \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static const double PI = 3.14159265358979323846;

/* the sine problem: -lap u + lambda u = (3 pi^2 + lambda) u on the unit cube */
static char *sine_case(int nel, int order, double lambda, const char *pc) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "mesh: {type: box, elements: [%d, %d, %d]}\n"
           "order: %d\n"
           "problem:\n"
           "  lambda: %.17g\n"
           "  rhs: \"(3*pi^2 + %.17g)*sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n"
           "  exact: \"sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n"
           "  boundary:\n"
           "    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}\n"
           "solver: {tol: 1.0e-10}\n"
           "preconditioner: {type: %s}\n",
           nel, nel, nel, order, lambda, lambda, pc);
  return buf;
}

static double sine(const double *p) { return sin(PI * p[0]) * sin(PI * p[1]) * sin(PI * p[2]); }

/* max over owned nodes and ranks of |a - b| */
static double maxdiff(int64_t n, const double *a, const double *b) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

typedef struct {
  int64_t n, nown, nglob;
  double *xyz;
} nodes;

static int get_nodes(hexcg_solver *s, nodes *nd) {
  OK(hexcg_num_nodes(s, &nd->n, &nd->nown, &nd->nglob));
  nd->xyz = malloc(sizeof(double) * 3 * (size_t)(nd->n + 1));
  OK(hexcg_node_info(s, nd->xyz, NULL, NULL));
  return 0;
}

/* a solve with the given f (NULL: the case's) into a new array */
static double *solve_new(hexcg_solver *s, int64_t n, const double *f, hexcg_result *r) {
  double *u = malloc(sizeof(double) * (size_t)(n + 1));
  const int st = hexcg_solve(s, f, u, r);
  if (st) {
    fprintf(stderr, "[%d] hexcg_solve: %s\n", g_rank, hexcg_last_error());
    g_fail++;
  }
  return u;
}

/* ------------------------------------------------------------ solve */
static int mode_solve(void) {
  hexcg_options o = hexcg_options_default();
  o.threads = 1;
#ifdef _OPENMP
  omp_set_num_threads(3);
#endif
  hexcg_solver *s = NULL;
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(4, 4, 0.0, "pmg"), "sine", &o, &s));
  nodes nd;
  if (get_nodes(s, &nd)) return 1;
  int64_t *gid = malloc(sizeof(int64_t) * (size_t)(nd.n + 1));
  int8_t *own = malloc((size_t)nd.n + 1);
  OK(hexcg_node_info(s, NULL, gid, own));
  CHECK(nd.nglob == 17 * 17 * 17, "global nodes %lld, want 17^3", (long long)nd.nglob);
  int64_t nown = 0, gmax = -1;
  for (int64_t i = 0; i < nd.n; i++) nown += own[i], gmax = gid[i] > gmax ? gid[i] : gmax;
  MPI_Allreduce(MPI_IN_PLACE, &nown, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &gmax, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  CHECK(nown == nd.nglob && gmax == nd.nglob - 1, "owned %lld, max id %lld of %lld nodes", (long long)nown,
        (long long)gmax, (long long)nd.nglob);

  /* the case's own data: the error against the exact solution, two ways */
  hexcg_result r;
  double *u = solve_new(s, nd.n, NULL, &r);
  double *ex = malloc(sizeof(double) * (size_t)(nd.n + 1));
  for (int64_t i = 0; i < nd.n; i++) ex[i] = sine(nd.xyz + 3 * i);
  const double e = maxdiff(nd.n, u, ex);
  CHECK(r.converged && r.error_known && r.error_max < 1e-4 && e < 1e-4 && r.error_l2 > 0.0,
        "converged %d, error at the nodes %g (library: %g)", r.converged, e, r.error_max);
#ifdef _OPENMP
  CHECK(omp_get_max_threads() == 3, "the caller's threads: %d, want 3", omp_get_max_threads());
#endif

  /* many right-hand sides on one setup equal fresh solvers */
  double *f = malloc(sizeof(double) * (size_t)(nd.n + 1));
  for (int c = 1; c <= 3; c++) {
    for (int64_t i = 0; i < nd.n; i++) f[i] = (1.0 + c * nd.xyz[3 * i]) * 3 * PI * PI * ex[i];
    double *a = solve_new(s, nd.n, f, &r);
    CHECK(!r.error_known, "a caller's f has no exact solution");
    hexcg_solver *s2 = NULL;
    OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(4, 4, 0.0, "pmg"), "sine", &o, &s2));
    hexcg_result r2;
    double *b = solve_new(s2, nd.n, f, &r2);
    CHECK(maxdiff(nd.n, a, b) == 0.0 && r.iterations == r2.iterations, "solve %d on one setup differs from a fresh one by %g",
          c, maxdiff(nd.n, a, b));
    hexcg_destroy(&s2);
    free(a), free(b);
  }

  /* a new shift: the sine again with lambda = 40, as a fresh solver with lambda 40 */
  OK(hexcg_set_shift(s, 40.0));
  for (int64_t i = 0; i < nd.n; i++) f[i] = (3 * PI * PI + 40.0) * ex[i];
  double *a = solve_new(s, nd.n, f, &r);
  hexcg_solver *s3 = NULL;
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(4, 4, 40.0, "pmg"), "sine40", &o, &s3));
  hexcg_result r3;
  double *b = solve_new(s3, nd.n, NULL, &r3);
  CHECK(maxdiff(nd.n, a, b) < 1e-9 && maxdiff(nd.n, a, ex) < 1e-3,
        "shift 40 in place vs a fresh lambda 40: %g; error %g", maxdiff(nd.n, a, b), maxdiff(nd.n, a, ex));
  hexcg_destroy(&s3);
  free(a), free(b);
  OK(hexcg_set_shift(s, 0.0));

  /* boundary data changed between solves: u = 1 + x + 2y is in the space */
  double *g = malloc(sizeof(double) * (size_t)(nd.n + 1)), *lin = malloc(sizeof(double) * (size_t)(nd.n + 1));
  for (int64_t i = 0; i < nd.n; i++) lin[i] = g[i] = 1.0 + nd.xyz[3 * i] + 2.0 * nd.xyz[3 * i + 1], f[i] = 0.0;
  OK(hexcg_set_dirichlet(s, g));
  a = solve_new(s, nd.n, f, &r);
  CHECK(maxdiff(nd.n, a, lin) < 1e-8, "harmonic 1 + x + 2y: error %g", maxdiff(nd.n, a, lin));
  OK(hexcg_set_dirichlet(s, NULL));
  b = solve_new(s, nd.n, NULL, &r);
  CHECK(maxdiff(nd.n, b, u) == 0.0, "the case's data again: %g from the first solve", maxdiff(nd.n, b, u));
  free(a), free(b), free(g), free(lin);

  OK(hexcg_destroy(&s));
  CHECK(s == NULL, "destroy nulls the pointer");
  free(u), free(ex), free(f), free(gid), free(own), free(nd.xyz);
  return 0;
}

/* ------------------------------------------------------------ errors */
static int mode_errors(void) {
  hexcg_solver *s = (hexcg_solver *)&g_fail; /* not NULL: creation must set it */
  int st = hexcg_create_yaml(MPI_COMM_WORLD, "mesh: {type: box, elements: [2, 2, 2]}\norder: 3\nproblme: {}\n",
                             "bad.yaml", NULL, &s);
  CHECK(st == HEXCG_ERR_INPUT && s == NULL, "a misspelt key: %s", hexcg_status_name(st));
  CHECK(strstr(hexcg_last_error(), "bad.yaml") && strstr(hexcg_last_error(), "problme"),
        "the message names the case and the key: '%s'", hexcg_last_error());
  st = hexcg_create_file(MPI_COMM_WORLD, "/nonexistent/case.yaml", NULL, &s);
  CHECK(st != HEXCG_OK && s == NULL && strstr(hexcg_last_error(), "/nonexistent/case.yaml"),
        "a missing file: %s '%s'", hexcg_status_name(st), hexcg_last_error());
  hexcg_options o = hexcg_options_default();
  o.verbosity = 7;
  st = hexcg_create_yaml(MPI_COMM_WORLD, sine_case(2, 3, 0, "pmg"), NULL, &o, &s);
  CHECK(st == HEXCG_ERR_ARG && strstr(hexcg_last_error(), "verbosity"), "verbosity 7: '%s'", hexcg_last_error());
  st = hexcg_solve(NULL, NULL, NULL, NULL);
  CHECK(st == HEXCG_ERR_ARG && strstr(hexcg_last_error(), "hexcg_solve"), "a NULL solver: '%s'", hexcg_last_error());

  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(2, 3, 0, "jacobi"), NULL, NULL, &s));
  nodes nd;
  if (get_nodes(s, &nd)) return 1;
  double *f = calloc(2 * (size_t)nd.n + 1, sizeof(double)), *u = calloc(2 * (size_t)nd.n + 1, sizeof(double));
  st = hexcg_solve(s, f, NULL, NULL);
  CHECK(st == HEXCG_ERR_ARG && strstr(hexcg_last_error(), "u is NULL"), "u NULL: '%s'", hexcg_last_error());
  /* a NaN on the last rank only: every rank gets the error */
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (g_rank == size - 1) f[nd.n / 2] = NAN;
  st = hexcg_solve(s, f, u, NULL);
  CHECK(st == HEXCG_ERR_INPUT && strstr(hexcg_last_error(), "not finite"), "NaN in f: %s '%s'", hexcg_status_name(st),
        hexcg_last_error());
  st = hexcg_solve_many(s, 2, f, u, NULL);
  CHECK(st == HEXCG_ERR_INPUT || st == HEXCG_ERR_ARG, "NaN in F: %s", hexcg_status_name(st));
  st = hexcg_set_shift(s, -1.0);
  CHECK(st == HEXCG_ERR_ARG && strstr(hexcg_last_error(), "shift"), "shift -1: '%s'", hexcg_last_error());
  st = hexcg_set_tolerance(s, 2.0, 10);
  CHECK(st == HEXCG_ERR_ARG, "rtol 2: %s", hexcg_status_name(st));
  st = hexcg_solve_many(s, -1, NULL, u, NULL);
  CHECK(st == HEXCG_ERR_ARG, "k = -1: %s", hexcg_status_name(st));
  /* after the errors the solver still solves */
  hexcg_result r;
  OK(hexcg_solve(s, NULL, u, &r));
  CHECK(r.converged && r.error_max < 1e-2 && hexcg_last_error()[0] == 0, "after errors: %d, %g, '%s'", r.converged,
        r.error_max, hexcg_last_error());
  /* a solve that does not converge is a result, not an error */
  OK(hexcg_set_tolerance(s, 1e-12, 2));
  OK(hexcg_solve(s, NULL, u, &r));
  CHECK(!r.converged && r.iterations == 2 && !strcmp(r.reason, "diverged_max_iterations"), "2 iterations: %d %d %s",
        r.converged, r.iterations, r.reason);
  CHECK(!strcmp(hexcg_status_name(HEXCG_ERR_INPUT), "HEXCG_ERR_INPUT"), "status names");
  int ma = -1;
  CHECK(hexcg_version(&ma, NULL, NULL)[0] && ma >= 0, "version");
  OK(hexcg_destroy(&s));
  OK(hexcg_destroy(&s)); /* NULL: nothing */
  free(f), free(u), free(nd.xyz);
  return 0;
}

/* ------------------------------------------------------------ twice */
static int mode_twice(void) {
  double *first = NULL;
  int64_t n0 = 0;
  for (int round = 0; round < 2; round++) { /* the library used twice */
    hexcg_solver *s = NULL;
    OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(3, 3, 0.0, "asm"), NULL, NULL, &s));
    int64_t n;
    OK(hexcg_num_nodes(s, &n, NULL, NULL));
    hexcg_result r;
    double *u = solve_new(s, n, NULL, &r);
    if (round == 0) {
      first = u, n0 = n;
    } else {
      CHECK(n == n0 && maxdiff(n, u, first) == 0.0, "the second use differs: %g", maxdiff(n, u, first));
      free(u);
    }
    OK(hexcg_destroy(&s));
  }
  /* two solvers alive at once (orders 3 and 5), interleaved */
  hexcg_solver *a = NULL, *b = NULL;
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(3, 3, 0.0, "asm"), NULL, NULL, &a));
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(3, 5, 0.0, "pmg"), NULL, NULL, &b));
  int64_t na, nb;
  OK(hexcg_num_nodes(a, &na, NULL, NULL));
  OK(hexcg_num_nodes(b, &nb, NULL, NULL));
  hexcg_result ra, rb;
  double *ua = solve_new(a, na, NULL, &ra), *ub = solve_new(b, nb, NULL, &rb);
  double *ua2 = solve_new(a, na, NULL, &ra);
  CHECK(na == n0 && maxdiff(na, ua, first) == 0.0 && maxdiff(na, ua2, first) == 0.0,
        "interleaved with another solver: %g", maxdiff(na, ua, first));
  CHECK(rb.converged && rb.error_max < ra.error_max, "order 5 (%g) more accurate than 3 (%g)", rb.error_max,
        ra.error_max);
  OK(hexcg_destroy(&a));
  double *ub2 = solve_new(b, nb, NULL, &rb);
  CHECK(maxdiff(nb, ub, ub2) == 0.0, "after the other solver's end: %g", maxdiff(nb, ub, ub2));
  OK(hexcg_destroy(&b));
  free(first), free(ua), free(ub), free(ua2), free(ub2);
  return 0;
}

/* ------------------------------------------------------------ many */
static uint64_t mix(uint64_t x) {
  x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

static int mode_many(void) {
  hexcg_solver *s = NULL;
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(4, 4, 0.0, "jacobi"), NULL, NULL, &s));
  nodes nd;
  if (get_nodes(s, &nd)) return 1;
  int64_t *gid = malloc(sizeof(int64_t) * (size_t)(nd.n + 1));
  OK(hexcg_node_info(s, NULL, gid, NULL));
  const int k = 4;
  double *F = malloc(sizeof(double) * (size_t)(k * nd.n + 1)), *U = malloc(sizeof(double) * (size_t)(k * nd.n + 1));
  /* columns: the sine (converges fast), noise by global id (slow), x, a scaled sine */
  for (int64_t i = 0; i < nd.n; i++) {
    const double *p = nd.xyz + 3 * i;
    F[i] = 3 * PI * PI * sine(p);
    F[nd.n + i] = (double)(mix((uint64_t)gid[i] + 7) % 1000) / 500.0 - 1.0;
    F[2 * nd.n + i] = p[0];
    F[3 * nd.n + i] = 1e3 * sine(p) * (1 + p[2]);
  }
  hexcg_result rm[4], r1;
  OK(hexcg_solve_many(s, k, F, U, rm));
  for (int c = 0; c < k; c++) {
    double *u = solve_new(s, nd.n, F + c * nd.n, &r1);
    double nu = maxdiff(nd.n, u, U + c * nd.n) / fmax(1e-300, maxdiff(nd.n, u, F) * 0 + 1.0);
    double un = 0.0;
    for (int64_t i = 0; i < nd.n; i++) un = fmax(un, fabs(u[i]));
    MPI_Allreduce(MPI_IN_PLACE, &un, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(rm[c].block == 1 && rm[c].converged && nu <= 1e-8 * un && rm[c].iterations == r1.iterations,
          "column %d: block %d, differs from its single solve by %g (|u| %g), iterations %d vs %d", c, rm[c].block,
          nu, un, rm[c].iterations, r1.iterations);
    CHECK(rm[c].rel_residual <= 1e-10 * 1.0001, "column %d: true residual %g", c, rm[c].rel_residual);
    free(u);
  }
  CHECK(rm[0].iterations < rm[1].iterations, "columns converge at different iterations: %d, %d",
        rm[0].iterations, rm[1].iterations);
  /* k = 1 is the single solve, bit for bit */
  OK(hexcg_solve_many(s, 1, F + nd.n, U, rm));
  double *u = solve_new(s, nd.n, F + nd.n, &r1);
  CHECK(maxdiff(nd.n, u, U) == 0.0 && rm[0].iterations == r1.iterations, "k = 1: %g", maxdiff(nd.n, u, U));
  free(u);
  OK(hexcg_destroy(&s));
  free(F), free(U), free(gid), free(nd.xyz);

  /* 66 columns: beyond the operator's block of 64 (a small problem) */
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(2, 2, 0.0, "jacobi"), NULL, NULL, &s));
  if (get_nodes(s, &nd)) return 1;
  const int K = 66;
  F = malloc(sizeof(double) * (size_t)(K * nd.n + 1)), U = malloc(sizeof(double) * (size_t)(K * nd.n + 1));
  for (int c = 0; c < K; c++)
    for (int64_t i = 0; i < nd.n; i++) F[c * nd.n + i] = (1.0 + c) * (1.0 + nd.xyz[3 * i] * (c % 5));
  hexcg_result *rk = malloc(sizeof(hexcg_result) * K);
  OK(hexcg_solve_many(s, K, F, U, rk));
  for (int c = 0; c < K; c += 13) {
    double *v = solve_new(s, nd.n, F + c * nd.n, &r1);
    CHECK(maxdiff(nd.n, v, U + c * nd.n) <= 1e-8 * (1.0 + c) && rk[c].block, "column %d of 66: %g", c,
          maxdiff(nd.n, v, U + c * nd.n));
    free(v);
  }
  OK(hexcg_destroy(&s));
  free(F), free(U), free(rk), free(nd.xyz);
  return 0;
}

/* ------------------------------------------------------------ desc */
/* the unit cube as n^3 boxes given as arrays: vertices in reverse order,
 * VTK corner order; tags: "walls" (x and y faces), "bottom" (z = 0), "top"
 * (z = 1); materials "left" (x < 1/2) and "right" */
typedef struct {
  double *xyz;
  int64_t *hex, *fv;
  int32_t *mat, *ftag;
  int64_t nv, ne, nf;
} box_arrays;

static void box_make(int n, box_arrays *b) {
  const int m = n + 1;
  b->nv = (int64_t)m * m * m, b->ne = (int64_t)n * n * n, b->nf = 6 * (int64_t)n * n;
  b->xyz = malloc(sizeof(double) * 3 * b->nv);
  b->hex = malloc(sizeof(int64_t) * 8 * b->ne);
  b->mat = malloc(sizeof(int32_t) * b->ne);
  b->fv = malloc(sizeof(int64_t) * 4 * b->nf);
  b->ftag = malloc(sizeof(int32_t) * b->nf);
#define VID(i, j, k) (b->nv - 1 - ((int64_t)(i) + m * ((int64_t)(j) + m * (k))))
  for (int k = 0; k < m; k++)
    for (int j = 0; j < m; j++)
      for (int i = 0; i < m; i++) {
        double *p = b->xyz + 3 * VID(i, j, k);
        p[0] = (double)i / n, p[1] = (double)j / n, p[2] = (double)k / n;
      }
  int64_t e = 0, f = 0;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++, e++) {
        const int64_t c[8] = {VID(i, j, k),         VID(i + 1, j, k),         VID(i + 1, j + 1, k),
                              VID(i, j + 1, k),     VID(i, j, k + 1),         VID(i + 1, j, k + 1),
                              VID(i + 1, j + 1, k + 1), VID(i, j + 1, k + 1)};
        memcpy(b->hex + 8 * e, c, sizeof c);
        b->mat[e] = 2 * i < n ? 0 : 1;
      }
  for (int a = 0; a < n; a++)
    for (int c = 0; c < n; c++) {
      const int64_t q[6][4] = {
          {VID(0, a, c), VID(0, a + 1, c), VID(0, a + 1, c + 1), VID(0, a, c + 1)},
          {VID(n, a, c), VID(n, a + 1, c), VID(n, a + 1, c + 1), VID(n, a, c + 1)},
          {VID(a, 0, c), VID(a + 1, 0, c), VID(a + 1, 0, c + 1), VID(a, 0, c + 1)},
          {VID(a, n, c), VID(a + 1, n, c), VID(a + 1, n, c + 1), VID(a, n, c + 1)},
          {VID(a, c, 0), VID(a + 1, c, 0), VID(a + 1, c + 1, 0), VID(a, c + 1, 0)},
          {VID(a, c, n), VID(a + 1, c, n), VID(a + 1, c + 1, n), VID(a, c + 1, n)}};
      for (int s = 0; s < 6; s++, f++) {
        memcpy(b->fv + 4 * f, q[s], sizeof q[s]);
        b->ftag[f] = s < 4 ? 0 : s - 3;
      }
    }
#undef VID
}

static double f_callback(void *ctx, double x, double y, double z, double t) {
  (void)t;
  return *(const double *)ctx * sin(PI * x) * sin(PI * y) * sin(PI * z);
}

static int mode_desc(void) {
  box_arrays ba;
  memset(&ba, 0, sizeof ba);
  if (g_rank == 0) box_make(4, &ba);
  const char *mats[] = {"left", "right"}, *tags[] = {"walls", "bottom", "top"};
  hexcg_mesh mesh = {ba.nv, ba.xyz, ba.ne, ba.hex, ba.mat, 2, mats, ba.nf, ba.fv, ba.ftag, 3, tags};
  /* u = sin sin sin with kappa 1 everywhere: Dirichlet on the walls and the
   * bottom, Robin kappa du/dn + 2 u = -pi sin(pi x) sin(pi y) on top (du/dn = -pi ...
   * at z = 1 where u = 0) */
  hexcg_field kappa[2] = {hexcg_field_value(1.0), hexcg_field_expr("1 + 0*x")};
  hexcg_field lambda[2] = {hexcg_field_value(0.0), hexcg_field_value(0.0)};
  hexcg_bc bcs[3] = {{"walls", HEXCG_BC_DIRICHLET, hexcg_field_value(0.0), {0, NULL, NULL, NULL}},
                     {"bottom", HEXCG_BC_DIRICHLET, hexcg_field_expr("sin(pi*x)*sin(pi*y)*sin(pi*z)"), {0, NULL, NULL, NULL}},
                     {"top", HEXCG_BC_ROBIN, hexcg_field_expr("-pi*sin(pi*x)*sin(pi*y)"), hexcg_field_value(2.0)}};
  hexcg_problem p;
  memset(&p, 0, sizeof p);
  p.mesh = &mesh, p.order = 4, p.num_coefs = 2, p.kappa = kappa, p.lambda = lambda;
  p.f = hexcg_field_expr("3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)");
  p.num_bcs = 3, p.bcs = bcs, p.exact = hexcg_field_expr("sin(pi*x)*sin(pi*y)*sin(pi*z)");
  p.tol = 1e-10;
  hexcg_solver *s = NULL;
  OK(hexcg_create(MPI_COMM_WORLD, &p, NULL, &s));
  hexcg_result r;
  nodes nd;
  if (get_nodes(s, &nd)) return 1;
  double *u = solve_new(s, nd.n, NULL, &r);
  CHECK(r.converged && r.error_known && r.error_max < 1e-3, "description: converged %d, error %g", r.converged,
        r.error_max);
  /* the same problem from a YAML case with all-Dirichlet data: nearly the same field */
  hexcg_solver *y = NULL;
  OK(hexcg_create_yaml(MPI_COMM_WORLD, sine_case(4, 4, 0.0, "pmg"), NULL, NULL, &y));
  hexcg_result ry;
  int64_t ny, nglob_y, nglob;
  OK(hexcg_num_nodes(y, &ny, NULL, &nglob_y));
  OK(hexcg_num_nodes(s, NULL, NULL, &nglob));
  double *uy = solve_new(y, ny, NULL, &ry);
  CHECK(nglob == nglob_y && fabs(r.error_l2 - ry.error_l2) < 0.5 * ry.error_l2 + 1e-6,
        "arrays vs box: %lld vs %lld nodes, errors %g vs %g", (long long)nglob, (long long)nglob_y, r.error_l2,
        ry.error_l2);
  hexcg_destroy(&y);
  free(uy);
  hexcg_destroy(&s);

  /* f as a callback: f = 2 * 3 pi^2 sin..., Dirichlet 0 everywhere: u = 2 sin sin sin */
  double two = 2.0 * 3 * PI * PI;
  hexcg_bc zero[3] = {{"walls", HEXCG_BC_DIRICHLET, hexcg_field_value(0.0), {0, NULL, NULL, NULL}},
                      {"bottom", HEXCG_BC_DIRICHLET, hexcg_field_value(0.0), {0, NULL, NULL, NULL}},
                      {"top", HEXCG_BC_DIRICHLET, hexcg_field_value(0.0), {0, NULL, NULL, NULL}}};
  p.bcs = zero, p.num_coefs = 0, p.exact = hexcg_field_expr("2*sin(pi*x)*sin(pi*y)*sin(pi*z)");
  p.f = (hexcg_field){0.0, NULL, f_callback, &two};
  p.preconditioner = "asm";
  OK(hexcg_create(MPI_COMM_WORLD, &p, NULL, &s));
  double *u2 = solve_new(s, nd.n, NULL, &r);
  CHECK(r.converged && r.error_max < 2e-3, "callback f: %d %g", r.converged, r.error_max);
  free(u2);
  hexcg_destroy(&s);

  /* bad descriptions: refused with a message naming the field */
  hexcg_bc bad = {"side", HEXCG_BC_DIRICHLET, hexcg_field_value(0.0), {0, NULL, NULL, NULL}};
  p.bcs = &bad, p.num_bcs = 1;
  int st = hexcg_create(MPI_COMM_WORLD, &p, NULL, &s);
  CHECK(st == HEXCG_ERR_INPUT && s == NULL && strstr(hexcg_last_error(), "'side'"), "unknown tag: '%s'",
        hexcg_last_error());
  p.bcs = zero, p.num_bcs = 3, p.order = 0;
  st = hexcg_create(MPI_COMM_WORLD, &p, NULL, &s);
  CHECK(st == HEXCG_ERR_INPUT && strstr(hexcg_last_error(), "order"), "order 0: '%s'", hexcg_last_error());
  p.order = 3, p.f = hexcg_field_expr("sin(pi*x");
  st = hexcg_create(MPI_COMM_WORLD, &p, NULL, &s);
  CHECK(st == HEXCG_ERR_INPUT && strstr(hexcg_last_error(), "hexcg_problem.f"), "bad expression: '%s'",
        hexcg_last_error());
  p.f = hexcg_field_value(1.0);
  if (g_rank == 0) ba.hex[8 * 3 + 2] = ba.nv + 5;
  st = hexcg_create(MPI_COMM_WORLD, &p, NULL, &s);
  CHECK(st == HEXCG_ERR_INPUT && strstr(hexcg_last_error(), "hex[") && strstr(hexcg_last_error(), "mesh arrays"),
        "a vertex index out of range: '%s'", hexcg_last_error());
  free(u), free(nd.xyz);
  free(ba.xyz), free(ba.hex), free(ba.mat), free(ba.fv), free(ba.ftag);
  return 0;
}

/* ------------------------------------------------------------ time */
typedef struct {
  int calls, stop_at;
  double last_t;
} mon_state;

static int monitor(void *ctx, int step, double t, const double *u, const hexcg_result *r) {
  mon_state *m = (mon_state *)ctx;
  (void)u;
  m->calls++, m->last_t = t;
  if (!r->converged) g_fail++;
  return m->stop_at > 0 && step >= m->stop_at;
}

static int mode_time(void) {
  const char *heat = "mesh: {type: box, elements: [3, 3, 3]}\n"
                     "order: 5\n"
                     "problem:\n"
                     "  rhs: \"(3*pi^2 - 1)*exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n"
                     "  exact: \"exp(-t)*sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n"
                     "  boundary:\n"
                     "    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}\n"
                     "solver: {tol: 1.0e-10}\n"
                     "time: {scheme: bdf2, dt: 0.1, steps: 5, initial: exact}\n";
  hexcg_solver *s = NULL;
  OK(hexcg_create_yaml(MPI_COMM_WORLD, heat, "heat", NULL, &s));
  nodes nd;
  if (get_nodes(s, &nd)) return 1;
  double *u = malloc(sizeof(double) * (size_t)(nd.n + 1)), *ex = malloc(sizeof(double) * (size_t)(nd.n + 1));
  hexcg_result r;
  double *u_before = solve_new(s, nd.n, NULL, &r); /* the steady solve before any time run */
  double err[2];
  for (int q = 0; q < 2; q++) { /* dt and dt/2: BDF2's second order */
    mon_state ms = {0, 0, 0.0};
    hexcg_time t = {2, 0.1 / (1 << q), 5 << q, 0, NULL, monitor, &ms};
    hexcg_time_result tr;
    OK(hexcg_time_run(s, &t, u, &tr));
    for (int64_t i = 0; i < nd.n; i++) ex[i] = exp(-0.5) * sine(nd.xyz + 3 * i);
    err[q] = maxdiff(nd.n, u, ex);
    CHECK(tr.steps == (5 << q) && fabs(tr.t - 0.5) < 1e-12 && ms.calls == tr.steps && !tr.failed &&
              tr.last.error_known && fabs(tr.last.error_max - err[q]) <= 0.5 * err[q],
          "time run %d: %d steps to t = %g, monitor %d, error %g (library %g)", q, tr.steps, tr.t, ms.calls, err[q],
          tr.last.error_max);
  }
  const double rate = log2(err[0] / err[1]);
  CHECK(rate > 1.7 && rate < 2.4, "BDF2 rate %g (errors %g, %g)", rate, err[0], err[1]);
  /* the monitor stops the run after step 3 */
  mon_state ms = {0, 3, 0.0};
  hexcg_time t = {1, 0.05, 10, -1, NULL, monitor, &ms};
  hexcg_time_result tr;
  OK(hexcg_time_run(s, &t, u, &tr));
  CHECK(tr.steps == 3 && ms.calls == 3 && fabs(tr.t - 0.15) < 1e-12, "stopped: %d steps, t %g", tr.steps, tr.t);
  /* after time stepping the steady solver is what it was (shift restored) */
  OK(hexcg_solve(s, NULL, u, &r));
  CHECK(r.converged && maxdiff(nd.n, u, u_before) == 0.0, "steady after time: %d, differs by %g", r.converged,
        maxdiff(nd.n, u, u_before));
  free(u_before);
  hexcg_time bad = {5, 0.1, 3, 0, NULL, NULL, NULL};
  const int st = hexcg_time_run(s, &bad, u, &tr);
  CHECK(st == HEXCG_ERR_INPUT && strstr(hexcg_last_error(), "scheme"), "scheme 5: '%s'", hexcg_last_error());
  OK(hexcg_destroy(&s));
  free(u), free(ex), free(nd.xyz);
  return 0;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  const char *mode = argc > 1 ? argv[1] : "";
  int rc = 0;
  if (!strcmp(mode, "solve")) rc = mode_solve();
  else if (!strcmp(mode, "errors")) rc = mode_errors();
  else if (!strcmp(mode, "twice")) rc = mode_twice();
  else if (!strcmp(mode, "many")) rc = mode_many();
  else if (!strcmp(mode, "desc")) rc = mode_desc();
  else if (!strcmp(mode, "time")) rc = mode_time();
  else fprintf(stderr, "usage: t900-api solve|errors|twice|many|desc|time\n"), rc = 2;
  int fail = rc || g_fail, any = 0;
  MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  if (g_rank == 0) printf("t900-api %s: %s\n", mode, any ? "FAILED" : "ok");
  return any;
}
