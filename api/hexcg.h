/* hexcg.h: the library API of hexcg (libhexcg), the one header a user includes.
 *
 * hexcg solves  -div(kappa grad u) + lambda u = f  on an all-hex mesh at
 * polynomial order p on Gauss-Lobatto-Legendre nodes, with preconditioned CG
 * (docs/solver.md); boundary conditions per boundary tag: Dirichlet u = g,
 * Neumann kappa du/dn = g, Robin kappa du/dn + alpha u = g. A solver is set up
 * once (mesh, partition, operator, preconditioner) and then solves any number
 * of right-hand sides, one at a time (hexcg_solve) or several at once
 * (hexcg_solve_many). docs/library.md is the guide, with a C and a Python
 * example.
 *
 * Conventions
 * - Every function returns a hexcg_status (HEXCG_OK = 0) unless it says
 *   otherwise; on failure hexcg_last_error() gives the message (names the
 *   file, line and key, or the argument, and the fix). The library never
 *   exits, aborts, prints to stderr on its own, or calls MPI_Init /
 *   MPI_Finalize: MPI must be initialised by the caller (MPI_THREAD_MULTIPLE
 *   lets the coarse solve overlap the fine one; less is accepted and
 *   serialises them) and stay so until every solver is destroyed.
 * - "Collective" functions must be called by every rank of the solver's
 *   communicator, in the same order; they return the same status on every
 *   rank (an error found on one rank is agreed, with that rank's message).
 * - Vectors are on the host, one double per local node: a rank's local
 *   nodes are the distinct GLL nodes of its elements (hexcg_num_nodes);
 *   nodes on a partition boundary are local to several ranks, owned by one
 *   (hexcg_node_info). Input values at shared nodes must agree between the
 *   ranks (the owner's value is used); output values agree.
 * - Threads: during its calls the library runs its OpenMP loops with the
 *   threads per rank of hexcg_options.threads (0: the rule of `hexcg run`,
 *   the node's cores shared among its ranks, or OMP_NUM_THREADS) and
 *   restores the caller's setting before it returns.
 * - Solvers are independent: several may be alive at once, on the same or
 *   different communicators; calls on one solver must not run concurrently
 *   from several threads.
 */
#ifndef HEXCG_H
#define HEXCG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API's version (hexcg_version gives the library's at run time). */
#define HEXCG_API_VERSION_MAJOR 0
#define HEXCG_API_VERSION_MINOR 1

/* ------------------------------------------------------------ status */
typedef enum {
  HEXCG_OK = 0,
  HEXCG_ERR_INPUT = 1,       /* the case, the description or the data are wrong (the message says where) */
  HEXCG_ERR_ARG = 2,         /* a wrong argument: NULL, a wrong size, a call out of order */
  HEXCG_ERR_MEMORY = 3,      /* an allocation failed */
  HEXCG_ERR_IO = 4,          /* a file could not be read or written */
  HEXCG_ERR_MPI = 5,         /* an MPI call failed */
  HEXCG_ERR_DEVICE = 6,      /* the backend (GPU) failed or is not available */
  HEXCG_ERR_NUMERIC = 7,     /* a numerical failure in the setup (not a solve that did not converge) */
  HEXCG_ERR_UNSUPPORTED = 8, /* the request is valid but this solver cannot do it (the message says why) */
  HEXCG_ERR_INTERNAL = 9     /* a bug in hexcg: please report it with the message */
} hexcg_status;

/* The message of the last failed call on the calling thread ("" if none);
 * valid until the next call of this library on the thread. */
const char *hexcg_last_error(void);
/* "HEXCG_ERR_INPUT", ... (never NULL) */
const char *hexcg_status_name(int status);
/* The library's version ("0.1.0 (git 1a2b3c4)") and its numbers. */
const char *hexcg_version(int *major, int *minor, int *patch);

/* ------------------------------------------------------------ options */
typedef struct {
  /* OpenMP threads per rank inside hexcg's calls; 0 (default): as
   * `hexcg run` (OMP_NUM_THREADS if set, else the node's cores shared among
   * the ranks on it) */
  int threads;
  /* 0 (default): the library prints nothing; 1: rank 0 prints what
   * `hexcg run` prints (notes, the solve's summary line) on stdout; 2: and
   * its --verbose lines */
  int verbosity;
  /* case files only: "KEY=VALUE" settings applied to the case as
   * `hexcg run --set` does (e.g. "solver.tol=1e-10", "order=5"); nset
   * entries */
  int nset;
  const char *const *set;
} hexcg_options;

/* The defaults above (threads 0, verbosity 0, no settings). */
hexcg_options hexcg_options_default(void);

/* ------------------------------------------------------------ creation */
typedef struct hexcg_solver_s hexcg_solver;

/* A solver from a case file (docs/case-format.md; the same file `hexcg run`
 * takes: mesh, order, problem, solver, preconditioner, backend, time;
 * output: is ignored) or from a case given as YAML text (name: what
 * messages call it, e.g. "case"; NULL: "<string>"). opt: NULL for the
 * defaults. On success *s is the solver; on failure *s is NULL and the
 * message names the file, line and key. Collective over comm (duplicated:
 * the caller may free comm afterwards). The file is read on rank 0 and its
 * text broadcast (path matters there); yaml is parsed on every rank (give
 * every rank the same text). A time: section is allowed (its expressions
 * may use t; hexcg_time_run takes its own time options). */
int hexcg_create_file(MPI_Comm comm, const char *path, const hexcg_options *opt, hexcg_solver **s);
int hexcg_create_yaml(MPI_Comm comm, const char *yaml, const char *name, const hexcg_options *opt,
                      hexcg_solver **s);

/* ---- a programmatic description ---- */

/* A scalar field of the position: a number, an expression of x, y, z (and t
 * in a time run; the syntax of the case file: "sin(pi*x)*exp(-t)"), or a
 * function called at the nodes (ctx passed through; the function must not
 * call hexcg). Exactly one of expr and fn is used: expr when it is not
 * NULL, else fn when it is not NULL, else value. */
typedef struct {
  double value;
  const char *expr;
  double (*fn)(void *ctx, double x, double y, double z, double t);
  void *ctx;
} hexcg_field;

/* hexcg_field with a number / an expression */
hexcg_field hexcg_field_value(double v);
hexcg_field hexcg_field_expr(const char *expr);

typedef enum {
  HEXCG_BC_DIRICHLET = 0, /* u = value */
  HEXCG_BC_NEUMANN = 1,   /* kappa du/dn = value (0: the natural condition of an untagged face) */
  HEXCG_BC_ROBIN = 2      /* kappa du/dn + alpha u = value */
} hexcg_bc_type;

typedef struct {
  const char *tag; /* a boundary tag of the mesh */
  hexcg_bc_type type;
  hexcg_field value;
  hexcg_field alpha; /* Robin only */
} hexcg_bc;

/* The mesh as arrays, read on rank 0 only (other ranks may pass zeros and
 * NULLs): hexcg checks, partitions and distributes it as it does a mesh
 * file. Vertex indices are 0-based. */
typedef struct {
  int64_t num_vertices;
  const double *xyz; /* 3 num_vertices, interleaved x y z */
  int64_t num_elements;
  /* 8 num_elements vertex indices per hexahedron in the order of VTK's
   * VTK_HEXAHEDRON and Gmsh's hex8: the bottom face counter-clockwise seen
   * from inside (0 1 2 3), then the top face above it (4 5 6 7) */
  const int64_t *hex;
  /* per element its material's index (NULL: all 0) into material_names
   * (num_materials names; 0 and NULL: one material "body") */
  const int32_t *material;
  int num_materials;
  const char *const *material_names;
  /* boundary faces: num_faces quads of 4 vertex indices (any order around
   * the quad) with a tag index into tag_names (num_tags names); a boundary
   * face in no quad gets the tag "untagged" */
  int64_t num_faces;
  const int64_t *face_vertices; /* 4 num_faces */
  const int32_t *face_tag;      /* num_faces */
  int num_tags;
  const char *const *tag_names;
} hexcg_mesh;

/* A problem without a case file. */
typedef struct {
  const hexcg_mesh *mesh;
  int order;          /* p, 1..15 */
  /* per material (mesh->num_materials entries, or 1 for all; NULL: kappa 1, lambda 0) */
  int num_coefs;
  const hexcg_field *kappa;  /* > 0 at every node */
  const hexcg_field *lambda; /* >= 0 at every node */
  hexcg_field f;             /* the source term (hexcg_solve with f = NULL uses it) */
  /* boundary conditions per tag (tags named nowhere: Neumann 0) */
  int num_bcs;
  const hexcg_bc *bcs;
  /* the exact solution, if known: solve results then give the error norms
   * (expr NULL and fn NULL: unknown) */
  hexcg_field exact;
  /* the preconditioner and solver, as in a case file: "pmg" (the default
   * when NULL: it has the block path of hexcg_solve_many; a case file's
   * default is "auto"), "asm", "jacobi", "cheby", "auto"; tolerance
   * (relative, NULL 0: 1e-8) and iteration limit (0: 10000) */
  const char *preconditioner;
  double tol;
  int max_iterations;
  const char *backend; /* "cpu" (NULL), "cuda" */
} hexcg_problem;

/* A solver from a description (d and what it points to are copied; the
 * field contexts are borrowed and must outlive the solver). Collective. */
int hexcg_create(MPI_Comm comm, const hexcg_problem *d, const hexcg_options *opt, hexcg_solver **s);

/* Frees everything; accepts NULL and *s == NULL; sets *s = NULL. Collective. */
int hexcg_destroy(hexcg_solver **s);

/* ------------------------------------------------------------ local nodes */
/* The number of local nodes n of this rank (the length of every vector),
 * of those owned here, and of all nodes over the ranks (the global DOFs). */
int hexcg_num_nodes(const hexcg_solver *s, int64_t *n, int64_t *n_owned, int64_t *n_global);
/* Per local node (each array NULL or n entries): its coordinates xyz
 * (3 n, interleaved), its global number (0 .. n_global - 1, the same on
 * every rank holding the node, independent of the number of ranks), and
 * owned (1 on the rank that owns it, else 0). Not collective. */
int hexcg_node_info(const hexcg_solver *s, double *xyz, int64_t *global_id, int8_t *owned);
/* Per local node, 1 where a Dirichlet condition holds (the solution there is
 * the boundary value), else 0. Not collective. */
int hexcg_node_dirichlet(const hexcg_solver *s, int8_t *flag);
/* The solver's order, global element count, and its preconditioner as a
 * line ("pmg: levels 7 3 1, ..."; len bytes with the terminating 0). */
int hexcg_describe(const hexcg_solver *s, int *order, int64_t *num_elements, char *preconditioner, size_t len);

/* ------------------------------------------------------------ solving */
typedef struct {
  int iterations;
  int converged;           /* 1: the tolerance was met */
  char reason[32];         /* "converged_rtol", "diverged_max_iterations", ... (docs/solver.md) */
  double residual0;        /* ||b - A x0|| */
  double residual;         /* the final ||b - A x|| (the true residual) */
  double rel_residual;     /* residual / ||b|| */
  /* the problem has an exact solution and its own data were solved (f NULL,
   * no hexcg_set_dirichlet, shift 0): the errors of the solution against
   * it (L2 and max over the GLL nodes), else error_known 0 */
  int error_known;
  double error_l2, error_max;
  double seconds;          /* this solve's wall time (the slowest rank's) */
  int block;               /* hexcg_solve_many: 1 if the column was solved in the block, 0 alone */
} hexcg_result;

/* Solve once: f (n values at the local nodes; NULL: the problem's own f, from
 * the case or the description) is the source term, the Dirichlet values are
 * the problem's (or those of hexcg_set_dirichlet), u (n values) gets the
 * solution. r (may be NULL) gets the figures. A solve that does not
 * converge is not an error (r->converged = 0); a non-finite value in f is
 * HEXCG_ERR_INPUT naming the node. Collective. */
int hexcg_solve(hexcg_solver *s, const double *f, double *u, hexcg_result *r);
/* k right-hand sides at once: F and U hold k columns of n values (column c
 * at F + c n); r (NULL or k entries) per column. The operator's element
 * data are read once for all columns, one message per neighbour carries all
 * of them, and each column stops on its own test; each column's answer
 * equals its hexcg_solve to the tolerance. k = 1 is hexcg_solve. Where the
 * solver's configuration has no block path (preconditioner auto, a pure
 * Neumann problem, the split geometry), the columns are solved one by one
 * (r[c].block = 0). k >= 0; F may be NULL (every column the problem's own
 * f). Collective. */
int hexcg_solve_many(hexcg_solver *s, int k, const double *F, double *U, hexcg_result *r);

/* Dirichlet values for the next solves: g (n values; read where
 * hexcg_node_dirichlet is 1), copied; NULL: the problem's own again.
 * Not collective. */
int hexcg_set_dirichlet(hexcg_solver *s, const double *g);
/* A Helmholtz shift: the next solves use lambda + shift (>= 0): the
 * operator and preconditioner are updated in place where the preconditioner
 * can (pmg, asm, jacobi, cheby), else rebuilt. Collective. */
int hexcg_set_shift(hexcg_solver *s, double shift);
/* The solver's tolerance (relative, > 0) and iteration limit (> 0) for the
 * next solves. Not collective (give every rank the same). */
int hexcg_set_tolerance(hexcg_solver *s, double rtol, int max_iterations);

/* ------------------------------------------------------------ time stepping */
/* Step du/dt - div(kappa grad u) + lambda u = f(x, t) with BDF (docs/time.md)
 * from t = 0 to steps dt, the data (f, the boundary values) taken at each
 * step's time from the case or description. */
typedef struct {
  int scheme;     /* BDF order 1..3 (0: 2) */
  double dt;      /* > 0 */
  int steps;      /* >= 1 */
  int projection; /* solutions kept for the projected initial guess (0: 8; -1: off) */
  /* the initial condition at the local nodes (n values) or NULL: the
   * problem's exact solution at t = 0 if it has one, else 0 */
  const double *u0;
  /* called after each step on every rank with the solution at the local
   * nodes (valid during the call); a non-zero return stops the run (the
   * status is then HEXCG_OK and r->steps says how far it went) */
  int (*monitor)(void *ctx, int step, double t, const double *u, const hexcg_result *r);
  void *ctx;
} hexcg_time;

typedef struct {
  int steps;      /* the steps solved */
  double t;       /* the time reached */
  int iterations; /* over every step */
  int failed;     /* 1: a step did not converge (the run stopped there) */
  hexcg_result last; /* the last step's solve (error norms at t when the exact solution is known) */
} hexcg_time_result;

/* Runs the steps; u (n values, may be NULL) gets the solution at the end.
 * The solver's shift becomes the scheme's beta0 / dt (restored to the
 * previous shift before it returns). Collective. */
int hexcg_time_run(hexcg_solver *s, const hexcg_time *t, double *u, hexcg_time_result *r);

#ifdef __cplusplus
}
#endif
#endif
