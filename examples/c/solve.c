/* solve.c: the C example of docs/library.md, built against an installed
 * hexcg (examples/c/CMakeLists.txt, or `mpicc solve.c $(pkg-config --cflags
 * --libs hexcg)`).
 *
 * Poisson on the unit cube, 4^3 elements at order 3, exact solution
 * sin(pi x) sin(pi y) sin(pi z), Dirichlet data from it. Solved twice: with
 * the case's own source term (f = NULL), then with f computed here at the
 * nodes from hexcg_node_info's coordinates; both must converge with an L2
 * error under 1e-3 and give the same answer. Exit status 0 only if all do.
 *   mpiexec -n 2 ./solve
 */
#include <hexcg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const CASE_YAML =
    "mesh: {type: box, elements: [4, 4, 4], extent: [[0, 1], [0, 1], [0, 1]]}\n"
    "order: 3\n"
    "problem:\n"
    "  kappa: 1.0\n"
    "  rhs: \"3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n"
    "  exact: \"sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n"
    "  boundary:\n"
    "    - {tags: [xmin, xmax, ymin, ymax, zmin, zmax], type: dirichlet, value: exact}\n"
    "solver: {type: pcg, tol: 1.0e-10, max_iterations: 500}\n";

/* a failed call: its message on rank 0 */
static int failed(int rank, const char *what, int status) {
  if (rank == 0)
    fprintf(stderr, "solve: %s failed: %s: %s\n", what, hexcg_status_name(status), hexcg_last_error());
  return 1;
}

/* the first solve's figures checked and printed (rank 0); 0 if they pass */
static int check(int rank, const hexcg_result *r) {
  int ok = r->converged && r->error_known && r->error_l2 < 1e-3;
  if (rank == 0)
    printf("case f: %s, %d iterations, residual %.3e, error L2 %.3e max %.3e%s\n", r->reason, r->iterations,
           r->residual, r->error_l2, r->error_max,
           ok ? "" : "  <- FAILED (converged, L2 error < 1e-3 expected)");
  return ok ? 0 : 1;
}

/* f = 3 pi^2 sin(pi x) sin(pi y) sin(pi z) at the local nodes, the second
 * solve, and its answer against the first one's (u1) and the exact solution
 * over every rank (a caller's f has no error norms in hexcg_result: the
 * problem's exact solution is its own f's) */
static int solve_own_f(hexcg_solver *s, int rank, int64_t n, const double *u1) {
  const double pi = acos(-1.0);
  double *xyz = malloc(3 * (size_t)n * sizeof *xyz);
  double *f = malloc((size_t)n * sizeof *f);
  double *ex = malloc((size_t)n * sizeof *ex);
  double *u = malloc((size_t)n * sizeof *u);
  int bad = !xyz || !f || !ex || !u;
  if (bad) fprintf(stderr, "solve: rank %d: out of memory for %lld nodes\n", rank, (long long)n);
  int st = bad ? HEXCG_OK : hexcg_node_info(s, xyz, NULL, NULL);
  if (st != HEXCG_OK) bad = failed(rank, "hexcg_node_info", st);
  for (int64_t i = 0; !bad && i < n; i++) {
    const double *p = xyz + 3 * i;
    ex[i] = sin(pi * p[0]) * sin(pi * p[1]) * sin(pi * p[2]);
    f[i] = 3 * pi * pi * ex[i];
  }
  /* every rank takes part in the collective calls, whatever it found */
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  hexcg_result r;
  if (!bad && (st = hexcg_solve(s, f, u, &r)) != HEXCG_OK) bad = failed(rank, "hexcg_solve (own f)", st);
  double d[2] = {0, 0}; /* max |u - exact|, max |u - u1| */
  for (int64_t i = 0; !bad && i < n; i++) {
    d[0] = fmax(d[0], fabs(u[i] - ex[i]));
    d[1] = fmax(d[1], fabs(u[i] - u1[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (!bad) {
    int ok = r.converged && d[0] < 1e-3 && d[1] < 1e-7;
    if (rank == 0)
      printf("own f: %s, %d iterations, residual %.3e, error max %.3e, max |u - u(case f)| %.3e%s\n",
             r.reason, r.iterations, r.residual, d[0], d[1],
             ok ? "" : "  <- FAILED (converged, < 1e-3, < 1e-7 expected)");
    bad = !ok;
  }
  free(xyz), free(f), free(ex), free(u);
  return bad;
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("hexcg %s\n", hexcg_version(NULL, NULL, NULL));

  hexcg_solver *s = NULL;
  int64_t n = 0, n_owned = 0, n_global = 0;
  double *u1 = NULL;
  hexcg_result r;
  int bad = 0, st = hexcg_create_yaml(MPI_COMM_WORLD, CASE_YAML, "solve.c", NULL, &s);
  if (st != HEXCG_OK) bad = failed(rank, "hexcg_create_yaml", st);
  if (!bad && (st = hexcg_num_nodes(s, &n, &n_owned, &n_global)) != HEXCG_OK)
    bad = failed(rank, "hexcg_num_nodes", st);
  if (!bad && rank == 0) printf("%lld nodes\n", (long long)n_global);
  if (!bad && !(u1 = malloc((size_t)n * sizeof *u1))) {
    fprintf(stderr, "solve: out of memory for %lld nodes\n", (long long)n);
    bad = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!bad && (st = hexcg_solve(s, NULL, u1, &r)) != HEXCG_OK) bad = failed(rank, "hexcg_solve (case f)", st);
  if (!bad) bad = check(rank, &r);
  if (!bad) bad = solve_own_f(s, rank, n, u1);

  if ((st = hexcg_destroy(&s)) != HEXCG_OK) bad = failed(rank, "hexcg_destroy", st);
  free(u1);
  MPI_Finalize();
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
