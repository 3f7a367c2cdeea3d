/* hexcg io: case files (libyaml), expressions (libmatheval), HDF5/XDMF
 * solution output and restart input, residual histories, run summaries and
 * terminal progress lines. The only module that includes libyaml, libmatheval
 * and HDF5 headers. See docs/case-format.md for the case file.
 *
 * Errors in user input (case file, --set overrides, restart file that does
 * not match) are HX_ERR_INPUT and their message reads
 *   "case.yaml:LINE:COL: message"            (a position in the case file), or
 *   "--set key=value: message"                 (a command-line override).
 * All pointers are host memory.
 */
#ifndef HX_IO_H
#define HX_IO_H

#include "hx_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "HDF5 1.10.8 (parallel), libyaml 0.2.5" into buf. */
void hx_io_library_versions(char *buf, size_t len);

/* Not collective; call before MPI_Finalize. Closes the HDF5 library and
 * returns 0, or returns 1 (closing nothing) when HDF5 failed to close a file
 * earlier: HDF5's own cleanup inside MPI_Finalize would then crash, and the
 * caller should end with MPI_Abort (after printing its error). */
int hx_io_finalize(void);

/* ================================================================ expressions */
/* A compiled expression in x, y, z (and the time t) with the constants pi and e, '^' for powers
 * and the functions of libmatheval (sin cos tan exp log sqrt abs sinh cosh
 * tanh asin acos atan ...). Not thread-safe: evaluate one hx_expr from one
 * thread at a time. */
typedef struct hx_expr_s hx_expr;

/* Compile text. A syntax error or a variable other than x, y, z, t gives
 * HX_ERR_INPUT with a message naming the problem (without a file position;
 * the case loader adds it). */
int hx_expr_create(const char *text, hx_expr **e);
/* Frees *e and sets it to NULL; accepts NULL. */
void hx_expr_destroy(hx_expr **e);
/* The text the expression was compiled from. */
const char *hx_expr_text(const hx_expr *e);
/* 1 if the expression uses none of x, y, z (then hx_expr_eval is that
 * constant; it may still depend on t). */
int hx_expr_is_constant(const hx_expr *e);
/* 1 if the expression uses the time t. */
int hx_expr_uses_t(const hx_expr *e);
/* 1 if hexcg's own program gives the values (libmatheval parsed the text;
 * io/expr.c), 0 if libmatheval evaluates them: a function outside exp log
 * sqrt sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh erf abs,
 * or HEXCG_EXPR_MATHEVAL set. The values are libmatheval's either way. */
int hx_expr_is_compiled(const hx_expr *e);
/* e at (x, y, z) and t = 0. */
double hx_expr_eval(const hx_expr *e, double x, double y, double z);
/* e at (x, y, z) and time t. */
double hx_expr_eval_t(const hx_expr *e, double x, double y, double z, double t);
/* f[i] = e(x[i], y[i], z[i], t = 0) for i < n. */
void hx_expr_eval_array(const hx_expr *e, size_t n, const double *x, const double *y, const double *z,
                        double *f);
/* f[i] = e(x[i], y[i], z[i], t) for i < n. */
void hx_expr_eval_array_t(const hx_expr *e, size_t n, const double *x, const double *y, const double *z,
                          double t, double *f);

/* ================================================================ the case */
typedef enum {
  HX_CASE_MESH_BOX = 0,
  HX_CASE_MESH_KERSHAW = 1,
  HX_CASE_MESH_GMSH = 2,
  HX_CASE_MESH_EXODUS = 3,
  HX_CASE_MESH_NEK = 4 /* a NekRS / Nek5000 .re2 file */
} hx_case_mesh_type;
/* the most right-hand sides of a list problem.rhs (block PCG: docs/case-format.md) */
#define HX_CASE_RHS_MAX 64
/* a mesh read from mesh.file (not generated: gmsh, exodus, nek) */
#define HX_CASE_MESH_FROM_FILE(t) \
  ((t) == HX_CASE_MESH_GMSH || (t) == HX_CASE_MESH_EXODUS || (t) == HX_CASE_MESH_NEK)
/* hx_bc_type (HX_BC_DIRICHLET, HX_BC_NEUMANN, HX_BC_ROBIN) is problem/'s:
 * its self-contained first part, without linking problem/ */
#define HX_PROBLEM_BC_ONLY
#include "hx_problem.h"
#undef HX_PROBLEM_BC_ONLY
/* mesh.partitioner (the order of hx_partitioner in hx_mesh.h) */
typedef enum { HX_CASE_PART_RCB = 0, HX_CASE_PART_METIS = 1 } hx_case_partitioner;
/* solver.type: CG, flexible CG, single-reduction CG (hx_solver.h) */
typedef enum { HX_CASE_SOLVER_PCG = 0, HX_CASE_SOLVER_FCG = 1, HX_CASE_SOLVER_PCG1 = 2 } hx_case_solver;
/* backend (hx_backend_create takes the name: hx_case_backend_name) */
typedef enum { HX_CASE_BACKEND_CPU = 0, HX_CASE_BACKEND_CUDA = 1 } hx_case_backend;
/* time.initial: an expression in x, y, z, problem.exact at t = 0, or a solution.h5 */
typedef enum { HX_TIME_INIT_EXPR = 0, HX_TIME_INIT_EXACT = 1, HX_TIME_INIT_FILE = 2 } hx_time_initial;
/* What a boundary value is: a number, an expression, or the exact solution. */
typedef enum { HX_BCV_NUMBER = 0, HX_BCV_EXPR = 1, HX_BCV_EXACT = 2 } hx_bc_value_kind;

typedef struct {
  char *name;   /* material name (Gmsh volume physical group; "box" for box/kershaw) */
  double kappa; /* > 0 (when expr == NULL) */
  hx_expr *expr; /* kappa as an expression in x, y, z (owned), or NULL */
  char *where;   /* "case.yaml:LINE:COL: problem.kappa.NAME 'EXPR'" for messages (owned) */
} hx_case_material;

/* A lambda value of a material map (problem.lambda: {name: value}). */
typedef struct {
  char *name;
  double value;  /* >= 0 (when expr == NULL) */
  hx_expr *expr; /* or an expression (owned) */
  char *where;   /* as hx_case_material.where */
} hx_case_coef;

typedef struct {
  int ntags;
  char **tags;     /* boundary tag names (box/kershaw: xmin xmax ymin ymax zmin zmax) */
  hx_bc_type type; /* dirichlet: u = value; neumann: kappa du/dn = value;
                      robin: kappa du/dn + alpha u = value */
  hx_bc_value_kind value_kind;
  double value;  /* HX_BCV_NUMBER */
  hx_expr *expr; /* HX_BCV_EXPR (owned); HX_BCV_EXACT: borrows problem.exact; else NULL */
  double alpha;        /* robin: the coefficient when a number (>= 0) */
  hx_expr *alpha_expr; /* robin: the coefficient when an expression (owned; >= 0 checked at the
                          nodes by the run), else NULL */
} hx_case_boundary;

/* A validated case, after defaults and --set overrides. Plain data: read the
 * fields directly. Strings and expressions are owned by the case. */
typedef struct hx_case_s {
  char *path; /* the case file as given */
  char *name; /* its base name without .yaml ("poisson_box") */
  struct {
    hx_case_mesh_type type;
    int elements[3];     /* box, kershaw: elements per direction */
    double extent[3][2]; /* box, kershaw: [x|y|z][min|max]; default unit cube */
    double eps;          /* kershaw: in (0, 1]; 1 for box/gmsh */
    double deform;       /* box, kershaw: amplitude of the smooth deformation map, 0 = none */
    char *file;          /* gmsh, nek: path resolved against the case file's folder; else NULL */
    int field;           /* nek: the boundary field read (1 = the file's first; mesh.field) */
    hx_case_partitioner partitioner;
    int periodic[3];            /* box, kershaw: 1 = the axis wraps (mesh.periodic: [x, y]) */
    int nperiodic_pairs;        /* gmsh: surface tag pairs of mesh.periodic: [[a, b], ...] */
    char *(*periodic_pairs)[2]; /* nperiodic_pairs pairs {a, b} (owned) */
  } mesh;
  int order; /* 1..15 */
  struct {
    double kappa;   /* constant kappa (> 0) when nmaterials == 0 and kappa_expr == NULL */
    hx_expr *kappa_expr; /* problem.kappa as one expression (owned), or NULL */
    char *kappa_where;   /* "case.yaml:L:C: problem.kappa 'EXPR'" (owned; NULL: not given) */
    int nmaterials; /* > 0: kappa given per material */
    hx_case_material *materials;
    double lambda;  /* >= 0 (when nlambda == 0 and lambda_expr == NULL) */
    hx_expr *lambda_expr; /* problem.lambda as one expression (owned), or NULL */
    char *lambda_where;
    int nlambda;    /* > 0: lambda given per material */
    hx_case_coef *lambda_materials;
    hx_expr *rhs;   /* always set (problem.rhs is required) */
    hx_expr *exact; /* NULL when the case gives no exact solution */
    /* several right-hand sides (problem.rhs a list of 2..HX_CASE_RHS_MAX,
     * solved at once by block PCG): nrhs columns, rhs_list[nrhs] (owned;
     * rhs == rhs_list[0]); exact_list[nrhs] when problem.exact is a list
     * (exact == exact_list[0]), else NULL. One expression: nrhs = 1,
     * rhs_list = {rhs}, exact_list NULL. */
    int nrhs;
    hx_expr **rhs_list;
    hx_expr **exact_list;
    int nboundary;
    hx_case_boundary *boundary; /* tags not listed: homogeneous Neumann */
  } problem;
  struct {
    hx_case_solver type;
    double tol;          /* relative residual tolerance, in (0, 1) */
    int max_iterations;  /* >= 1 */
    char *initial_guess; /* solution.h5 of an earlier run (resolved path), or NULL */
    int projection;      /* previous solutions kept for the initial guess (0: off; docs/time.md) */
  } solver;
  struct {
    int enabled;        /* a time: section was given (docs/time.md) */
    int scheme;         /* 0 bdf1, 1 bdf2, 2 bdf3: the BDF order is scheme + 1 */
    double dt;          /* > 0 */
    double end;         /* time.end as given; 0 when time.steps was given */
    int steps;          /* steps to take (end / dt when end was given) */
    hx_time_initial initial_kind;
    hx_expr *initial;   /* HX_TIME_INIT_EXPR (owned); else NULL */
    char *initial_file; /* HX_TIME_INIT_FILE: a solution.h5 (resolved path); else NULL */
    int output_every;   /* steps between solution outputs (0: the last only) */
    int checkpoint_every; /* steps between checkpoints (0: at the end or on a signal only) */
    int error_every;      /* steps between error norms with problem.exact (0: output steps and the last) */
  } time;
  struct {
    /* the preconditioner: mapping as given (a scalar "preconditioner: X"
     * becomes {type: X}; absent: an empty mapping), with source positions.
     * io/ checks only that it is a mapping; precond/ validates its keys
     * (hx_pc_options_check) and fills in its defaults. */
    hx_opt *opts;
  } preconditioner;
  hx_case_backend backend;
  struct {
    int geometry; /* operator.geometry: 0 fp64, 1 split (hx_ax_geometry) */
  } op;
  struct {
    char *dir;               /* output folder (relative to the working directory) */
    int solution;            /* write solution.h5 + solution.xdmf */
    unsigned fields;         /* output.fields: HX_FIELD_* bits (the default resolved) */
    int precision;           /* output.precision: HX_OUTPUT_FP64 or HX_OUTPUT_FP32 */
    int format;              /* output.format: HX_OUTPUT_XDMF or HX_OUTPUT_VTKHDF */
    int history;             /* write history.csv + history.h5 */
    int progress_every;      /* progress line every N iterations (0: never) */
    double progress_seconds; /* ... or every S seconds (0: never) */
  } output;
  void *impl; /* private: the parsed YAML with positions, for later messages */
} hx_case;

/* output.fields (docs/case-format.md): the fields a solution output holds */
enum { HX_FIELD_U = 1, HX_FIELD_EXACT = 2, HX_FIELD_ERROR = 4, HX_FIELD_RANK = 8, HX_FIELD_ALL = 15 };
enum { HX_OUTPUT_FP64 = 0, HX_OUTPUT_FP32 = 1 };   /* output.precision */
enum { HX_OUTPUT_XDMF = 0, HX_OUTPUT_VTKHDF = 1 }; /* output.format */

/* Not collective. Read, parse and validate path; apply nsets overrides
 * "a.b=value" (value in YAML syntax: 3, 1e-10, [4, 4, 4], cuda, "x^2";
 * numeric components index lists: problem.boundary.0.type=neumann).
 * Bad input: HX_ERR_INPUT with a "path:LINE:COL: message". */
int hx_case_load(const char *path, int nsets, const char *const *sets, hx_case **cs);
/* Collective over comm: rank 0 reads and validates (including file checks),
 * the text is broadcast and every rank gets the same case, or the same error
 * (code and message) on every rank. path/sets must agree across ranks. */
int hx_case_load_comm(MPI_Comm comm, const char *path, int nsets, const char *const *sets, hx_case **cs);
/* As hx_case_load from text in memory; name is used in messages and as the
 * folder that relative file names resolve against (its dirname). */
int hx_case_load_string(const char *text, const char *name, int nsets, const char *const *sets,
                        int check_files, hx_case **cs);
/* Frees *cs and sets it to NULL; accepts NULL. */
void hx_case_destroy(hx_case **cs);
/* Replace output.dir (the --output option). */
int hx_case_set_output_dir(hx_case *cs, const char *dir);
/* Write the effective case (every key, defaults filled in) as YAML to path,
 * atomically (path.tmp, then rename). Loading it gives the same case. */
int hx_case_write_effective(const hx_case *cs, const char *path);
/* Print the effective setup (a short human-readable block) to out. */
void hx_case_print(const hx_case *cs, FILE *out);
/* Check the boundary tags named in the case against the mesh's tag names
 * (gmsh: call after reading the mesh; box/kershaw tags are checked at load).
 * An unknown tag gives HX_ERR_INPUT "case.yaml:LINE:COL: ..." at the tag. */
int hx_case_check_tags(const hx_case *cs, int ntags, const char *const *names);
/* A boundary condition on a tag whose faces are all periodic (periodic[i]
 * != 0, hx_mesh_tag_is_periodic: identified with their partners, no longer
 * boundary) is refused at the tag: it would act nowhere (box/kershaw axes
 * and gmsh tag pairs are checked at load; call after reading a gmsh mesh
 * for its $Periodic section). */
int hx_case_check_periodic_tags(const hx_case *cs, int ntags, const char *const *names, const int *periodic);
/* Same for the material names of a kappa map (box/kershaw: "box", checked at load). */
int hx_case_check_materials(const hx_case *cs, int nmat, const char *const *names);
/* Not collective. Every v[i] (i < n, values at the mesh nodes x, y, z) must
 * be finite; else HX_ERR_INPUT "case.yaml:LINE:COL: KEY: 'EXPR' is not finite
 * at the mesh node (x, y, z) (value v)" at the case key (dotted path:
 * "problem.rhs", "problem.boundary.1.value", "solver.initial_guess"); e (may
 * be NULL) is the expression the values came from. */
int hx_case_check_finite(const hx_case *cs, const char *key, const hx_expr *e, size_t n, const double *x,
                         const double *y, const double *z, const double *v);
/* What hx_case_check_memory estimates: a solve (hexcg run) or hexcg mesh. */
typedef enum { HX_CASE_MEM_RUN = 0, HX_CASE_MEM_MESH = 1 } hx_case_mem_use;
/* Collective. Refuse a case whose mesh and per-rank data at its order
 * cannot fit in the memory of the nodes (hx_mem_fit; formula in
 * docs/case-format.md, "Memory"): HX_ERR_INPUT "case.yaml:L:C:
 * mesh.elements: ... need about X of memory ..., more than the Y available"
 * (at mesh.file for a Gmsh mesh), the same on every rank. elements <= 0:
 * before the mesh is built (box/kershaw: mesh.elements; Gmsh: not known,
 * nothing checked); > 0: the global element count of the mesh just built
 * (its memory is in use already, only the rest is estimated). pc_node_bytes:
 * what the preconditioner adds per GLL node of a solve (precond/'s
 * hx_pc_options_mem_per_node; ignored for HX_CASE_MEM_MESH). */
int hx_case_check_memory(MPI_Comm comm, const hx_case *cs, int64_t elements, hx_case_mem_use use,
                         double pc_node_bytes);
/* The peak memory hexcg run is estimated to need on a rank holding El
 * elements of cs's mesh (its part of the mesh, its data, pc_node_bytes per
 * GLL node for the preconditioner, a time loop's arrays): the figure
 * hx_case_check_memory compares, summary.yaml's memory.estimate_per_rank_bytes. */
double hx_case_mem_estimate(const hx_case *cs, double El, double pc_node_bytes);
/* Collective: if any rank has code != 0, every rank returns the error (code
 * and message) of the lowest such rank. */
int hx_io_agree_error(MPI_Comm comm, int code);
/* kappa of material name (problem.kappa when no map is given); < 0 if the
 * map does not name it. */
double hx_case_kappa(const hx_case *cs, const char *material);
/* Coefficient c (0: kappa, 1: lambda) of a material: *value, *expr (NULL
 * when it is the number *value) and *where (case position and expression
 * for messages; NULL when the key is not given: the default). Returns 0, or
 * -1 when a material map of that key does not name the material. Any
 * output pointer may be NULL. */
int hx_case_coef_get(const hx_case *cs, int c, const char *material, double *value, const hx_expr **expr,
                     const char **where);
/* Names of enum values ("box", "dirichlet", "rcb", "pcg", "cpu"). */
const char *hx_case_mesh_type_name(hx_case_mesh_type t);
const char *hx_bc_type_name(hx_bc_type t);
const char *hx_case_partitioner_name(hx_case_partitioner p);
const char *hx_case_solver_name(hx_case_solver t);
const char *hx_case_backend_name(hx_case_backend b);
/* Print the case file's keys from the option tables (hexcg keys; the
 * preconditioner's are hx_pc_options_print_keys): names_only, the dotted
 * keys one per line, else with type, default and help. */
void hx_case_print_keys(int names_only, FILE *out);
/* An option tree from YAML text (a mapping; a plain scalar X gives
 * {type: X}, empty text an empty mapping), positions named after name: for
 * tests and tools that hand options to a module without a case file. */
int hx_opt_parse_yaml(const char *text, const char *name, hx_opt **opts);
/* The preconditioner type named in the case's tree; NULL when it names none
 * (hx_pc_options_check makes the default explicit). */
const char *hx_case_pc_type(const hx_case *cs);

/* ================================================================ output folder */
/* Collective. Create dir (and its parents) on rank 0. If dir exists and
 * force == 0: HX_ERR_INPUT "output directory 'dir' exists; use --force to
 * overwrite it" on every rank. With force, the previous hexcg outputs in it
 * (case.yaml, summary.yaml, solution.*, history.*) are removed. *created (may
 * be NULL) is set to 1 on every rank if the folder did not exist before. */
int hx_output_prepare_dir(MPI_Comm comm, const char *dir, int force, int *created);
/* Collective. Undo hx_output_prepare_dir after a late input error: remove
 * the hexcg outputs in dir, and dir itself if created != 0 and it is empty. */
int hx_output_discard_dir(MPI_Comm comm, const char *dir, int created);
/* A result set being written: hexcg run writes every file into a staging
 * folder (dir/.hexcg-new) and publishes the complete set at the end with one
 * rename (dir/.hexcg-current, a link to the set's generation folder
 * dir/.hexcg-sets/GEN; each result name dir/NAME is a link
 * .hexcg-current/NAME), so a failed or killed run leaves the previous
 * results as they were and every reader sees one whole set. Rank 0
 * holds a lock (flock on dir/.hexcg.lock) from open to close, so two runs
 * cannot mix their files in one folder. */
typedef struct hx_outdir_s *hx_outdir;
/* Collective. Create dir (and its parents) if missing, take the lock
 * (HX_ERR_INPUT "... is in use by another hexcg run" if held), refuse a dir
 * holding results of an earlier run (summary.yaml, solution.*, history.*;
 * a case.yaml alone is not one) unless force, and create the staging folder
 * (removing one a killed run left). Errors: HX_ERR_INPUT, the same on every rank. */
int hx_outdir_open(MPI_Comm comm, const char *dir, int force, hx_outdir *od);
/* The staging folder to write the new files into. */
const char *hx_outdir_stage(hx_outdir od);
/* 1 if dir held results of an earlier run when opened. */
int hx_outdir_had_results(hx_outdir od);
/* Collective. Commit the staged set as a whole: the staged files are synced,
 * the stage is renamed to a new generation dir/.hexcg-sets/GEN, the links
 * dir/NAME -> .hexcg-current/NAME of its names are made, and the commit point
 * is one rename of a new link over dir/.hexcg-current; then the links of
 * names the new set lacks and the old generation go (hexcg's own names; a
 * user's files in series/ are carried into the new set). A folder an older
 * hexcg wrote (the files themselves in dir) is made a generation first,
 * hard links, so no reader sees a change. Errors on rank 0 reach every rank;
 * an error leaves the old set the folder's. */
int hx_outdir_commit(hx_outdir od);
/* Not collective. The file a reader opens for the output NAME ("summary.yaml",
 * ...) of the result set in folder dir, into buf: dir/NAME (a link into the
 * current generation), or dir/.hexcg-new/NAME while an older hexcg's
 * committed stage is half moved in (its manifest exists and lists NAME, and
 * the file is still staged). Returns 1 if the set has NAME (the file
 * exists), 0 if not (a dangling link, or a committed manifest without NAME). */
int hx_outdir_resolve(const char *dir, const char *name, char *buf, size_t len);
/* The same for a path "DIR/NAME" (or "NAME" in the working folder). Paths
 * whose base name is not a hexcg output are returned as they are (1). */
int hx_outdir_resolve_path(const char *path, char *buf, size_t len);
/* Collective in effect (rank 0 works). Drop what is still staged, release
 * the lock and, without a commit, remove the folders open created. Accepts NULL. */
void hx_outdir_close(hx_outdir *od);
/* Not collective. Write len bytes to path atomically (path.tmp + rename). */
int hx_io_write_file_atomic(const char *path, const char *data, size_t len);

/* ================================================================ residual history */
typedef struct hx_history_s *hx_history;

int hx_history_create(hx_history *h);
void hx_history_destroy(hx_history *h);
/* Append one row (the solver calls it every iteration, iteration 0 = initial residual). */
int hx_history_append(hx_history h, int iteration, double residual, double rel_residual, double time_s);
int hx_history_size(hx_history h);
/* Time-dependent runs: the rows appended from now on belong to time step
 * `step` at time `time`; history.csv then starts with the columns step,time
 * and history.h5 has the datasets step (int64) and time (float64). */
void hx_history_set_step(hx_history h, int step, double time);
/* Row i (0-based); any output may be NULL. */
int hx_history_get(hx_history h, int i, int *iteration, double *residual, double *rel_residual,
                   double *time_s);
/* Collective (only rank 0 writes): dir/history.csv ("iteration,residual,
 * rel_residual,time_s") and dir/history.h5 (1D datasets iteration (int64),
 * residual, rel_residual, time_s (float64)), each written atomically. */
int hx_history_write(hx_history h, MPI_Comm comm, const char *dir);
/* Not collective. Read a history.h5 into a new history. Datasets that
 * declare more rows than the file stores, or iteration numbers outside
 * [0, HX_HISTORY_MAX_ITERATION], give HX_ERR_INPUT naming the file. */
int hx_history_read(const char *path, hx_history *h);
/* The largest iteration number a history file may hold (history.csv too):
 * far above any run, and iteration + 1 stays an int. */
#define HX_HISTORY_MAX_ITERATION 1000000000

/* ================================================================ solution files */
/* Collective. Write dir/solution.h5 (rank 0 creates its structure with
 * serial HDF5, then every rank pwrites its rows at the datasets' offsets;
 * rank r's elements follow those of ranks < r; no collective call inside a
 * library, so a failed system call on any rank cannot hang the others) and
 * dir/solution.xdmf (rank 0). Per rank: E_local elements with global ids
 * gid[E_local]; x, y, z, u and exact (NULL when unknown) hold E_local*(p+1)^3
 * values at the element-local GLL nodes, node (i,j,k) of element e at
 * e*n^3 + i + n*(j + n*k), n = p+1. Datasets:
 *   /mesh/coordinates   [N][3] float64, N = E*(p+1)^3 (E global)
 *   /mesh/connectivity  [E*p^3][8] int64, VTK hexahedron corner order, 0-based
 *   /mesh/element_id    [E] int64 (the gid of each element row)
 *   /fields/u, /fields/exact, /fields/error (= u - exact)   [N] float64
 *   /fields/rank        [E*p^3] int32 (writing rank of each sub-hex)
 * and root attributes order, num_elements, nodes_per_element, format. */
int hx_io_write_solution(MPI_Comm comm, const char *dir, int p, int32_t E_local, const int64_t *gid,
                         const double *x, const double *y, const double *z, const double *u,
                         const double *exact);
/* Collective. As hx_io_write_solution with the fields of output.fields
 * (HX_FIELD_*; u always; exact and error only where exact is given) in
 * float32 when fp32 (u, exact, error); *bytes (may be NULL): solution.h5's size. */
int hx_io_write_solution_opts(MPI_Comm comm, const char *dir, unsigned fields, int fp32, int p,
                              int32_t E_local, const int64_t *gid, const double *x, const double *y,
                              const double *z, const double *u, const double *exact, long long *bytes);
/* Collective. A state file dir/name for a checkpoint: /mesh/element_id and
 * /fields/u (float64) only, what hx_io_read_solution needs (no coordinates,
 * connectivity, rank; docs/time.md "Checkpoints"). */
int hx_io_write_state_file(MPI_Comm comm, const char *dir, const char *name, int p, int32_t E_local,
                           const int64_t *gid, const double *u);
/* A time series' mesh file in series/ (written once per run: the frames
 * hold no mesh; docs/time.md). */
#define HX_SERIES_MESH_NAME "mesh.h5"
/* Collective. dir/mesh.h5 of a time series: /mesh/coordinates,
 * /mesh/connectivity, /mesh/element_id and, when with_rank, /fields/rank, the
 * element rows in global-id order (the same file on any partition, so frames
 * of a restart on another rank count fit it); *bytes (may be NULL): its size. */
int hx_io_write_series_mesh(MPI_Comm comm, const char *dir, int with_rank, int p, int32_t E_local,
                            const int64_t *gid, const double *x, const double *y, const double *z,
                            long long *bytes);
/* Collective. One frame dir/name of a time series: /mesh/element_id and the
 * node fields of fields (HX_FIELD_U, _EXACT, _ERROR; float32 when fp32),
 * rows in global-id order as hx_io_write_series_mesh, the root attribute
 * run_id; no coordinates. *bytes (may be NULL): the file's size. */
int hx_io_write_series_frame(MPI_Comm comm, const char *dir, const char *name, const char *run_id,
                             unsigned fields, int fp32, int p, int32_t E_local, const int64_t *gid,
                             const double *u, const double *exact, long long *bytes);
/* output.format: vtkhdf (docs/case-format.md): solution.hdf, a VTKHDF 1.0
 * UnstructuredGrid that ParaView (5.11 on) opens, one Lagrange hexahedron
 * (VTK type 72) per element */
#define HX_VTKHDF_NAME "solution.hdf"
/* Collective. dir/name as a VTKHDF file: /VTKHDF/Points (the GLL nodes of
 * each element, the element rows in global-id order), Connectivity (VTK's
 * Lagrange node order), Offsets, Types, PointData u (exact, error as fields
 * asks, where exact is given; float32 when fp32; none when u is NULL: a
 * mesh file), CellData rank; written as solution.h5 is (rank 0 creates the
 * structure, every rank pwrites its rows). mesh_file not NULL: a frame of a
 * series whose mesh datasets (and rank) are HDF5 external links into
 * mesh_file (a file name in dir, written by this function with u NULL), so
 * the frame holds the point data only. *bytes (may be NULL): the file's size. */
#define HX_SERIES_VTK_MESH_NAME "mesh.hdf"
int hx_io_write_vtkhdf(MPI_Comm comm, const char *dir, const char *name, const char *mesh_file,
                       const char *run_id, unsigned fields, int fp32, int p, int32_t E_local,
                       const int64_t *gid, const double *x, const double *y, const double *z, const double *u,
                       const double *exact, long long *bytes);
/* Not collective (rank 0). dir/solution.hdf.series: ParaView's file-series
 * JSON naming the n VTKHDF frames files[i] (relative to dir) at times[i]. */
int hx_io_write_vtkhdf_series(const char *dir, int n, const char *const *files, const double *times);
/* Not collective. The run_id attribute of a solution file into buf ("" when
 * it has none: a file of a hexcg before issue 53 or a steady run's);
 * HX_ERR_INPUT when the file is not HDF5. */
int hx_io_solution_run_id(const char *path, char *buf, size_t len);
/* Not collective (rank 0). dir/solution.xdmf as one temporal collection of
 * the n solution files files[i] (names in dir, written by
 * hx_io_write_solution_file, all of the same mesh) at the times times[i]:
 * a mesh grid (topology and geometry of series/mesh.h5, hx_io_write_series_mesh;
 * the rank field there too when fields has HX_FIELD_RANK) and a
 * GridType="Collection" CollectionType="Temporal" grid whose grids include
 * it and carry <Time Value=...> and the fields (meshio's time-series layout;
 * ParaView and meshio.xdmf.TimeSeriesReader read it). */
int hx_io_write_solution_series(const char *dir, int p, long long E, unsigned fields, int fp32, int n,
                                const char *const *files, const double *times);
/* Collective. Read /fields/u from a solution.h5 written by
 * hx_io_write_solution (any number of ranks, any partition) into
 * u[E_local*(p+1)^3] for this rank's elements gid[E_local]. A different
 * order or global element count, or a missing element id, gives HX_ERR_INPUT
 * naming the file (same message on every rank). */
int hx_io_read_solution(MPI_Comm comm, const char *path, int p, int32_t E_local, const int64_t *gid,
                        double *u);
/* As hx_io_read_solution, and the file must be of this format
 * (hexcg-solution-1) and, when x is not NULL, its node coordinates those of
 * this mesh (x, y, z: this rank's E_local*(p+1)^3 GLL points, element by
 * element; within 1e-9 of the largest coordinate): else HX_ERR_INPUT naming
 * the file and the first node that differs. */
int hx_io_read_solution_at(MPI_Comm comm, const char *path, int p, int32_t E_local, const int64_t *gid,
                           const double *x, const double *y, const double *z, double *u);

/* ================================================================ checkpoints */
/* Time-dependent runs (docs/time.md). A checkpoint is the folder
 * DIR/checkpoint: checkpoint.yaml (format, step, time, levels, projection,
 * what the case and mesh were: mesh, order, problem, time.scheme, time.dt,
 * a hash of the GLL node coordinates, and a checksum per file) and the
 * solution files u_0.h5 (the newest level) .. and p_0.h5 .. (projection
 * vectors), each in the solution.h5 format. Written as DIR/checkpoint.new,
 * then renamed into place (the previous one is checkpoint.old meanwhile). */
/* Collective. A hash of the mesh's GLL nodes, the same on any partition. */
int hx_checkpoint_mesh_hash(MPI_Comm comm, int p, int32_t E_local, const int64_t *gid, const double *x,
                            const double *y, const double *z, uint64_t *hash);
/* Collective. An order-independent hash of bytes per element (data[E_local *
 * bytes], element e's at e * bytes) with the elements' global ids: the same
 * on any partition. */
int hx_checkpoint_hash_elements(MPI_Comm comm, int32_t E_local, const int64_t *gid, const void *data, size_t bytes,
                                uint64_t *hash);
/* The identity of a run's mesh in a checkpoint (issue 53, defect 12): the
 * GLL nodes' hash and, beyond it, hashes of the periodic pairs (the face
 * neighbours), the connectivity (the element vertex ids), the boundary tag
 * of each face (by name) and the material of each element (by name). */
#define HX_CK_MESH_PARTS 4
typedef struct {
  uint64_t nodes;                   /* hx_checkpoint_mesh_hash */
  uint64_t part[HX_CK_MESH_PARTS];  /* periodicity, connectivity, tags, materials */
  int have_nodes, have_parts;       /* a dry run has the parts, not the nodes */
} hx_checkpoint_mesh_id;
/* The length of a run id with its NUL: 16 hex digits (docs/time.md) */
#define HX_RUN_ID_LEN 40
/* Collective. Write DIR/checkpoint: nlev host L-vectors lev (newest first)
 * and nproj projection vectors at step / time, of the run run_id. */
int hx_checkpoint_write(MPI_Comm comm, const char *dir, const hx_case *cs, const hx_checkpoint_mesh_id *mid,
                        const char *run_id, int step,
                        double time, int nlev, const double *const *lev, int nproj, const double *const *proj,
                        int p, int32_t E_local, const int64_t *gid, const double *x, const double *y,
                        const double *z);
/* Not collective. A regular text file of at most max bytes read whole into
 * *text (malloc'd, NUL-terminated; *len its length when len != NULL);
 * missing_ok: a missing file gives *text = NULL and HX_SUCCESS. A FIFO,
 * device, folder or socket is refused without blocking (HX_ERR_INPUT naming
 * `what` and the path), as is a larger file or one holding NUL bytes. */
int hx_io_read_file(const char *path, const char *what, size_t max, int missing_ok, char **text, size_t *len);
/* Collective. What a dry run can check of --restart R without the GLL
 * nodes (issue 53, defect 14): a checkpoint exists (hx_checkpoint_find; its
 * folder in dir) and fits the case (format, scheme, dt, the case's hash,
 * levels, step within the case; the mesh's node hash only when the run
 * reads it). Its step and time in *step, *time. */
int hx_checkpoint_check(MPI_Comm comm, const char *restart, const hx_case *cs, const hx_checkpoint_mesh_id *mid,
                        char *dir, size_t len, int *step, double *time);
/* Collective. Rank 0 removes DIR/checkpoint.new, a checkpoint whose write a
 * kill interrupted (hexcg's own file names only, no symbolic link
 * followed); an error if it holds files hexcg does not write. */
int hx_checkpoint_clean(MPI_Comm comm, const char *dir);
/* Not collective. The checkpoint folder for --restart R: R/checkpoint, R
 * itself, or R/checkpoint.old (a kill between the renames), whichever holds
 * a checkpoint.yaml; else HX_ERR_INPUT. */
int hx_checkpoint_find(const char *restart, char *dir, size_t len);
/* Collective. Read the checkpoint folder dir into lev[0..*nlev) (at most
 * maxlev) and proj[0..*nproj) (0 when it holds more than maxproj). Any
 * problem is HX_ERR_INPUT naming the checkpoint, the same on every rank: not
 * a checkpoint, truncated, another case (the key that differs is named) or
 * mesh, a step beyond the case's last, a damaged or unreadable file. */
/* mid: this run's mesh (its parts checked when mid->have_parts); run_id
 * (HX_RUN_ID_LEN chars): the checkpoint's run id ("" when it has none: a
 * checkpoint of a hexcg before issue 53), on every rank. */
int hx_checkpoint_read(MPI_Comm comm, const char *dir, const hx_case *cs, const hx_checkpoint_mesh_id *mid, int p,
                       int32_t E_local, const int64_t *gid, const double *x, const double *y, const double *z,
                       int maxlev, double **lev, int maxproj, double **proj, int *step, double *time, int *nlev,
                       int *nproj, char *run_id);

/* ================================================================ run summary */
/* What a run reports (app/hx_run.h: hx_run_result). Global values unless noted. */
typedef struct {
  int ranks;
  int threads;      /* OpenMP threads per rank */
  char backend[16]; /* "cpu" | "cuda" */
  int64_t elements; /* global elements */
  int order;
  int64_t dofs; /* global unique GLL nodes */
  int iterations;
  int converged;       /* 1: tolerance reached */
  char reason[64];     /* "converged: rel_residual < tol", "max_iterations", ... */
  double residual0;    /* initial residual norm */
  double residual;     /* final residual norm */
  double rel_residual; /* residual / residual0 */
  int exact_known;     /* error_l2 / error_max are meaningful */
  double error_l2, error_max;
  /* pure Neumann (docs/solver.md "Null space"): the constant was projected
   * out; nullspace_defect: the removed part of the right-hand side relative
   * to its norm; exact_mean: the mass-weighted mean subtracted from the
   * exact solution for the error norms */
  int nullspace;
  double nullspace_defect, exact_mean;
#define HX_NULLSPACE_WARN 1e-6 /* a defect above this is warned about */
  /* several right-hand sides (problem.rhs a list): each column's figures
   * (ncolumns 0: one right-hand side); iterations above are the largest,
   * converged all, reason the first failing column's, the residuals the
   * column's with the largest final relative residual, the errors the
   * largest over the columns */
  int ncolumns;
  struct hx_run_column {
    int iterations, converged;
    char reason[64];
    double residual0, residual, rel_residual;
    int exact_known;
    double error_l2, error_max;
  } columns[HX_CASE_RHS_MAX];
  /* the mesh's connected components (problem/components.c, docs/solver.md
   * "Null space"): their number (0: not computed), how many float (no
   * Dirichlet face, no Robin alpha > 0, lambda = 0 on all of it), and one
   * YAML flow mapping per component ("    - {...}\n"), the first
   * HX_COMPONENTS_LISTED of them; summary.yaml has them when components > 1 */
  int64_t components, components_floating;
  char components_yaml[1600];
  /* the mesh's boundary tags no problem.boundary entry names (they get the
   * natural condition), as quoted names joined by ", "; "" if none */
  char natural_tags[1024];
#define HX_COMPONENTS_LISTED 8
  /* seconds per phase, all from the rank with the largest total (so they
   * add up): setup (mesh, discretisation, right-hand side, preconditioner
   * setup), solve, io and the rest of the run (other = total - setup - solve
   * - io: start-up, reading the case, writing the effective case) partition
   * total; operator, precond (its applies), vector and reduction partition
   * solve with what is left of it; exchange is a part of operator */
  double t_setup, t_operator, t_precond, t_vector, t_reduction, t_exchange, t_io, t_solve, t_total;
  double peak_mem_bytes; /* peak resident memory per rank, max over ranks */
  double mem_estimate_bytes; /* hx_case_mem_estimate of the rank with the most elements (0: not given) */
  /* the preconditioner (seconds: max over ranks) */
  char pc_view[256];       /* its tree, e.g. "asm(fdm, ...) + coarse(...)" */
  double pc_setup;         /* setup seconds */
  double pc_apply;         /* seconds per apply */
  int pc_two_level;        /* the fine/coarse figures below are meaningful */
  int pc_overlap;          /* coarse level overlapped with the fine level */
  double pc_fine, pc_coarse; /* seconds per apply of each level */
  double pc_overlap_efficiency; /* apply / max(fine, coarse) */
  /* the preconditioner's report tree (hx_pc_report, solver/hx_solver.h),
   * written as preconditioner.report; owned by whoever filled it (free with
   * hx_opt_free), NULL: none */
  hx_opt *pc_report;
  /* cuda: one YAML flow mapping per rank ("  - {rank: 0, host: ..., device: 0,
   * name: ..., pci_bus_id: ..., ranks_on_device: 1}\n"), "" otherwise */
  char devices[4096];
  /* the operator's storage of the geometric factors (operator.geometry, and
   * the global element counts of each record kind: docs/operator.md) */
  int64_t op_affine, op_split, op_general;
  double op_bytes_per_dof; /* model bytes of one element-kernel pass per unique DOF */
  /* split geometry: residuals computed with the FP64 operator (replacements
   * inside PCG and the checks after it), correction solves, their seconds
   * (hx_solve) */
  int op_fp64_residuals, op_refinements;
  double op_t_exact;
  /* a time-dependent run (case time: section, docs/time.md); iterations,
   * residuals and errors above are those of the last step */
  struct {
    int enabled;
    int first_step, last_step; /* the steps in steps.csv (a restart: the earlier segments' too) */
    double t_end;              /* the time reached */
    int64_t iterations;        /* over every step of this run */
    double iterations_mean;    /* per step */
    double gain_mean;          /* mean projection gain ||b - A x0|| / ||b|| */
    double saved;              /* iterations the projection saved over the steps, estimated (docs/time.md) */
    double t_proj;             /* seconds in the projection over the steps (steps.csv projection_s summed) */
    int complete;              /* --restart of a run already at its last step: nothing solved, nothing written */
    double t_step_first;       /* seconds of the first step (its preconditioner setup included) */
    double t_step_mean;        /* mean seconds of the steps after the first */
    int setups;                /* operator + preconditioner setups (BDF start-up order changes add them) */
    int interrupted;           /* a signal ended the run: checkpoint written (exit status 5) */
    int checkpoints;           /* checkpoints written */
    int outputs;               /* solutions written to solution.xdmf's temporal collection */
    long long frame_bytes;     /* bytes of one frame series/solution_N.h5 (0: none written by this run) */
    long long mesh_bytes;      /* bytes of series/mesh.h5 (written once) */
    char run_id[HX_RUN_ID_LEN];   /* the run's id: made by a fresh run, kept by its restarts (docs/time.md) */
    int data_failed;              /* the data were not finite at a step: the steps before it written */
    char data_error[2048];        /* ... and the message (exit status 2) */
  } time;
} hx_run_stats;

/* Not collective (call on rank 0). Write dir/summary.yaml atomically. version
 * and git_hash name this build of hexcg. */
int hx_summary_write(const char *dir, const hx_case *cs, const hx_run_stats *st, const char *version,
                     const char *git_hash);
/* Print the final summary table to out. */
void hx_summary_print(const hx_case *cs, const hx_run_stats *st, FILE *out);

/* ================================================================ progress lines */
typedef struct hx_progress_s *hx_progress;

/* Rank-0 progress printer: a line every every_it iterations (0: never) or
 * every every_s seconds (0: never), whichever comes first, to out (NULL:
 * stdout). tol (relative) is used to estimate the iterations left. Ranks
 * other than 0 (hx_log_rank) and HX_LOG_QUIET print nothing. */
int hx_progress_create(int every_it, double every_s, double tol, FILE *out, hx_progress *pr);
void hx_progress_destroy(hx_progress *pr);
/* Report iteration it with its residual and relative residual; prints when due.
 * Returns 1 if a line was printed. */
int hx_progress_update(hx_progress pr, int it, double residual, double rel_residual);
/* Always print a last line for iteration it (if anything was printed before or verbose). */
void hx_progress_finish(hx_progress pr, int it, double residual, double rel_residual);

/* ================================================================ reading summaries and bounds */
/* What hx_summary_read finds in a summary.yaml (io/summary_read.c; used by
 * `hexcg compare`). Fields the file does not give stay zero / "". */
typedef struct {
  hx_run_stats st;      /* ranks, backend, elements, order, dofs, iterations, converged, reason,
                           residual0/residual/rel_residual, exact_known + error_l2/error_max */
  char case_name[128];  /* case */
  char mesh_type[16];   /* mesh.type */
  char preconditioner[32]; /* solver.preconditioner */
  double tol;           /* solver.tol */
  int has_residuals;    /* solver.initial_residual/final_residual/final_rel_residual were given */
} hx_summary_info;

/* Not collective. Read a summary.yaml written by hx_summary_write. Required:
 * solver.{iterations, converged, reason} and error (null or {l2, max}); the
 * other keys are optional and unknown keys are ignored (newer writers). A
 * missing, malformed or incomplete file gives HX_ERR_INPUT naming it
 * ("path:LINE:COL: message" where a position is known). */
int hx_summary_read(const char *path, hx_summary_info *info);

/* Bounds a run must meet (regression cases, `hexcg compare --bounds`). */
typedef struct {
  int max_iterations;      /* < 0: no bound */
  double max_rel_residual; /* final residual / initial residual; < 0: no bound */
  double max_error_l2, max_error_max; /* < 0: no bound */
  int converged;           /* -1: no requirement; 0 or 1: the run's converged flag must equal it */
} hx_bounds;

/* Not collective. Read the `bounds:` mapping of the YAML file path (other
 * top-level keys are ignored): max_iterations (integer >= 0),
 * max_rel_residual, max_error_l2, max_error_max (numbers > 0), converged
 * (true/false). Unknown bound names and bad values give HX_ERR_INPUT
 * "path:LINE:COL: message". */
int hx_bounds_read(const char *path, hx_bounds *b);

/* The keys of an effective case.yaml as flat pairs (io/compare_read.c; used
 * by `hexcg compare`): a mapping's keys joined by '.', a list that holds
 * mappings by index ("problem.boundary[0].type"), any other value as its
 * text, a list as flow text ("mesh.elements" = "[3, 3, 3]"). */
typedef struct {
  int n, cap;
  char **key, **value;
} hx_case_keys;
/* Not collective. A missing or malformed file gives HX_ERR_INPUT naming it. */
int hx_case_keys_read(const char *path, hx_case_keys *k);
void hx_case_keys_free(hx_case_keys *k);
/* The value of key, or NULL when the case does not have it. */
const char *hx_case_keys_get(const hx_case_keys *k, const char *key);

/* How far apart the fields u of two solution.h5 files are. */
typedef struct {
  int compared;      /* 1: the same mesh and order, nodes matched */
  char why_not[320]; /* else why not (another order, element count, element id or node coordinate) */
  long long nodes;   /* element-local nodes compared (shared nodes count once per element) */
  double max_abs;    /* max |u_run - u_base| */
  double max_u;      /* max |u_base| */
  double rel_max;    /* max_abs / max_u */
  double rel_l2;     /* sqrt(sum (u_run - u_base)^2 / sum u_base^2) over the nodes */
} hx_solution_diff_info;
/* Not collective (serial HDF5). Compare /fields/u of the solution files run
 * and base (written by hx_io_write_solution on any number of ranks): the
 * elements matched by /mesh/element_id, each node's coordinates equal within
 * 1e-9 of the largest coordinate (else not compared, why_not says where). A
 * file that is not a readable hexcg solution gives HX_ERR_INPUT naming it. */
int hx_solution_diff(const char *run, const char *base, hx_solution_diff_info *d);

/* ---------------------------------------------------------------- netCDF-4 files
 * The dimensions and variables of a netCDF-4 (HDF5) file's root group, for the
 * Exodus II reader (mesh/mesh_exodus.c). Values of the variables that wanted()
 * accepts (all if NULL; never record variables) are in data, big-endian like
 * a netCDF classic file's: integers as 8-byte int64, floating point as 8-byte
 * double, characters as bytes. */
typedef struct {
  char name[128];
  uint64_t len; /* 0 for the unlimited dimension */
} hx_nc4_dim;
typedef struct {
  char name[128];
  int nd, rec;         /* rec: the first dimension is unlimited */
  int type;            /* netCDF type code of the values in data: 2 char, 6 double, 10 int64 */
  uint64_t shape[8];   /* nd lengths */
  char text_attr[64];  /* the text attribute named by hx_io_nc4_read's text_attr, "" if none */
  uint64_t begin;      /* offset of the values in data; UINT64_MAX: not read */
} hx_nc4_var;
typedef struct {
  int ndims, nvars;
  hx_nc4_dim *dims;
  hx_nc4_var *vars;
  uint8_t *data;
  size_t len;
} hx_nc4_file;
/* Not collective (serial HDF5 on the calling rank). HX_ERR_INPUT naming path if
 * HDF5 cannot open or read it. Free with hx_io_nc4_free. */
int hx_io_nc4_read(const char *path, int (*wanted)(const char *name), const char *text_attr, hx_nc4_file *f);
void hx_io_nc4_free(hx_nc4_file *f);

#ifdef __cplusplus
}
#endif
#endif
