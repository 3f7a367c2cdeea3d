/* hexcg solver: Krylov methods (PCG with fused vector updates) on the
 * assembled operator of disc/ (hx_op), the preconditioner object they call,
 * and the driver that solves one discrete problem.
 *
 * G-vectors (hx_gs numbering, owned entries first) live in the backend's
 * memory (d_* pointers); h_* pointers are host memory. Functions marked
 * "collective" must be called on every rank of the gather-scatter's
 * communicator. */
#ifndef HX_SOLVER_H
#define HX_SOLVER_H

#include "hx_core.h"
#include "hx_kernels.h"
#include "hx_disc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why an iteration stopped (PETSc's KSPConvergedReason): > 0 converged,
 * < 0 diverged or broke down, 0 still iterating. Not an error code. */
typedef enum {
  HX_CONVERGED_RTOL = 1,
  HX_CONVERGED_ATOL = 2,
  HX_ITERATING = 0,
  HX_DIVERGED_MAX_IT = -1,
  HX_DIVERGED_NAN = -2,
  HX_DIVERGED_INDEFINITE_MAT = -3,
  HX_DIVERGED_INDEFINITE_PC = -4,
  /* the split geometry's FP64 residual check (hx_solve): a correction step
   * did not halve the true residual, the tolerance is below what the FP64
   * operator attains */
  HX_DIVERGED_STAGNATION = -5,
  /* a signal (SIGINT, SIGTERM, SIGUSR1) reached a rank: every rank stopped
   * at the same iteration (the flag rides on the residual's allreduce) */
  HX_INTERRUPTED = -6
} hx_reason;

/* "converged_rtol", "diverged_max_iterations", ... */
const char *hx_reason_name(hx_reason r);

/* ------------------------------------------------------------ preconditioner */
/* A preconditioner object z = M^{-1} r on G-vectors of an operator
 * (opaque, reference counted; PETSc's PC): create -> setup (once, the
 * expensive part) -> apply (many times) -> destroy. Implementations (Jacobi,
 * Schwarz, p-multigrid: precond/) fill an hx_pc_ops table and a
 * context; a preconditioner may hold others as children (references are
 * taken) for view, stats and report. Masked entries of z must be zero
 * when those of r are; M must be SPD for PCG. */
typedef struct hx_pc_s *hx_pc;

/* Per-part figures of a preconditioner's applies (its own, not its children's). */
typedef struct {
  int64_t applies;
  double t_apply;   /* seconds in apply (children included) */
  double t_setup;   /* seconds in setup */
} hx_pc_stats;

/* One CG step fused with a preconditioner's apply (hx_pc_ops.cg_update):
 *   x += alpha p;  r -= alpha w;  z = M^{-1} r (the updated r);
 * and the local sums over the first nred entries (owned G-vector entries)
 * of r.r, r.z and, when slot_zw >= 0, z.w, left in slots of red for the
 * caller's hx_red_fetch (not reduced over ranks). All vectors are backend
 * memory of the operator's size; none aliases another. */
typedef struct {
  int64_t nred;
  double alpha;
  double *x;
  const double *p;
  double *r;
  const double *w;
  double *z;
  hx_red red;
  int slot_rr, slot_rz, slot_zw;
} hx_pc_cg_step;

/* What a Krylov method tells its preconditioner after each iteration
 * (hx_pc_ops.observe): the CG coefficients of the step (global, the same
 * on every rank), from which the Lanczos tridiagonal of M^{-1} A follows,
 * and where the residual stands. k counts the iterations since this
 * Krylov run (re)started: k = 1 begins a new Lanczos sequence. */
typedef struct {
  int k;
  double alpha, beta; /* x += alpha p; p = z + beta p */
  double rel;         /* ||r|| / ||b|| after the step */
  double target;      /* the rel at which the run stops */
} hx_pc_cg_info;

typedef struct {
  const char *type; /* "jacobi", "asm", ... */
  /* the expensive part of creation (may be NULL) */
  int (*setup)(void *ctx);
  /* d_z = M^{-1} d_r (backend memory; d_r and d_z do not alias). d_r may
   * still be in the making on the backend's default queue when apply is
   * called (the CG update is queued without a host wait, cuda): work on the
   * default queue is ordered after it; an apply that reads d_r from another
   * queue or thread must first order itself after the default queue
   * (hx_event_record on it + hx_queue_wait_event, or hx_backend_sync). */
  int (*apply)(void *ctx, const double *d_r, double *d_z);
  /* one-line description of this node into buf, e.g. "asm(fdm, weight=none)";
   * children are printed by hx_pc_view (may be NULL: the type) */
  void (*describe)(void *ctx, char *buf, size_t len);
  /* this node's own figures, added to the map `node` of the report tree
   * with the hx_pc_report_* helpers (below): after type, description,
   * setup_s, applies and apply_s, before the children's parts. Keys ending
   * in _s are seconds of this rank (hx_pc_report takes the max over ranks);
   * any other figure must already be global (the callback is collective
   * over the preconditioner's communicator and may reduce). May be NULL. */
  int (*report)(void *ctx, hx_opt *node);
  int (*destroy)(void *ctx);
  /* vector passes over memory of one apply (for the per-iteration count) */
  int passes;
  /* nonzero: M is not symmetric (restricted Schwarz smoothing, ...): plain
   * PCG refuses it, flexible CG (hx_pcg_opts.flexible) takes it */
  int nonsymmetric;
  /* optional hook: the CG update and this apply in one pass over memory
   * (Jacobi: r -= alpha w; z = r / diag; r.r; r.z together), the same
   * numbers as hx_array_cg_update_red + apply + hx_array_dot_red; the
   * Krylov methods call it instead of the three (NULL: no fused form) */
  int (*cg_update)(void *ctx, const hx_pc_cg_step *u);
  /* vector passes of one cg_update (x, p, r, w, the PC's data read; x, r, z written) */
  int cg_update_passes;
  /* optional (NULL: cg_update always in use): nonzero while cg_update has
   * no fused form to offer (type auto after its switch to pmg), so the
   * Krylov method, at its next (re)start, applies the preconditioner apart
   * and times it as such (not as a vector update) */
  int (*cg_update_off)(void *ctx);
  /* precision of the vectors apply takes (0, HX_F64: doubles, hx_pc_apply;
   * HX_F32: d_r, d_z point to floats, cast back by the type; applied with
   * hx_pc_apply_p; cg_update is FP64 only) */
  hx_precision prec;
  /* optional (NULL: none): called by PCG and pcg1 after each iteration that
   * did not stop the run, on every rank with the same info (collective
   * where the preconditioner's own work is). Setting *restart = 1 says the
   * preconditioner has changed (type auto: Jacobi replaced by pmg): the
   * Krylov method restarts from its iterate, r = b - A x recomputed, the
   * iteration count and the monitor going on (hx_pcg_solve). */
  int (*observe)(void *ctx, const hx_pc_cg_info *info, int *restart);
  /* optional (NULL: apply per column): d_z[c] = M^{-1} d_r[c] for c < nk
   * (host arrays of nk backend pointers, FP64), the same as nk applies, the
   * work shared where the type can (the block solve, hx_pc_apply_many) */
  int (*apply_many)(void *ctx, int nk, const double *const *d_r, double *const *d_z);
  /* optional (NULL: the type cannot; hx_pc_set_shift says
   * HX_ERR_UNSUPPORTED): the Helmholtz shift changed to `shift`
   * (hx_disc_set_shift, made by the caller on the discretisation the
   * preconditioner was made for): bring what setup built from the operator
   * up to date, bit for bit what a new preconditioner set up at this shift
   * holds. Called only after setup. Collective. */
  int (*set_shift)(void *ctx, double shift);
} hx_pc_ops;

/* Create a preconditioner from an operations table (copied) and a context
 * (taken: destroyed with ops->destroy, also when this fails). children: n preconditioners the new
 * one holds (references are added) for view/stats. op is borrowed. */
int hx_pc_create_shell(hx_op op, const hx_pc_ops *ops, void *ctx, int nchildren, hx_pc *children, hx_pc *pc);
int hx_pc_reference(hx_pc pc);
/* Drops a reference; frees on the last; accepts NULL; nulls *pc; returns the
 * first error met while freeing. */
int hx_pc_destroy(hx_pc *pc);
/* Run the setup once (a second call does nothing). Collective. */
int hx_pc_setup(hx_pc pc);
/* The preconditioner of an operator whose Helmholtz shift changed in place:
 * call hx_disc_set_shift(d, shift) on the discretisation pc was made for
 * first, then this. The types that can (hx_pc_ops.set_shift: none, jacobi,
 * cheby, asm, pmg, auto; docs/preconditioner.md "Changing the shift") update their
 * diagonals, eigenvalue bounds, boxes, levels and coarse matrix in place,
 * with the same bits as a preconditioner made and set up anew on the
 * shifted discretisation; the seconds count as setup (none, the identity,
 * holds nothing of the operator and succeeds). The others return
 * HX_ERR_UNSUPPORTED, and pc stays as it was: the caller
 * makes a new one. So does a type whose setup would now decide otherwise
 * (FP32 levels that no longer fit, pmg's trial). Before setup nothing is
 * built: nothing to do. On another error pc is unusable: destroy it.
 * Collective. */
int hx_pc_set_shift(hx_pc pc, double shift);
/* d_z = M^{-1} d_r. Sets up first if needed. Collective. HX_ERR_ARG for a
 * preconditioner that is not FP64 (hx_pc_apply_p). */
int hx_pc_apply(hx_pc pc, const double *d_r, double *d_z);
/* The same with vectors (backend memory) in the precision of pc. */
int hx_pc_apply_p(hx_pc pc, const void *d_r, void *d_z);
/* d_z[c] = M^{-1} d_r[c] for c < nk (host arrays of nk backend FP64
 * G-vectors): the type's apply_many where it has one, else hx_pc_apply per
 * column; counted as nk applies. Sets up first if needed. Collective. */
int hx_pc_apply_many(hx_pc pc, int nk, const double *const *d_r, double *const *d_z);
/* 1 when pc has an observe hook (hx_pc_ops.observe: type auto), else 0. */
int hx_pc_observes(hx_pc pc);
hx_precision hx_pc_precision(hx_pc pc);
/* 1 when pc has a fused CG update (hx_pc_ops.cg_update) in use now
 * (hx_pc_ops.cg_update_off), else 0. */
int hx_pc_has_cg_update(hx_pc pc);
/* The fused CG update of pc (HX_ERR_ARG when it has none); counted as an
 * apply in the stats, its time (update included) in the apply time. Sets up
 * first if needed. Collective where the apply is. */
int hx_pc_cg_update(hx_pc pc, const hx_pc_cg_step *u);
const char *hx_pc_type(hx_pc pc);
int hx_pc_passes(hx_pc pc);
int hx_pc_cg_update_passes(hx_pc pc); /* hx_pc_ops.cg_update_passes (0: no fused update) */
void *hx_pc_context(hx_pc pc);
/* The tree in one line: "asm(fdm) + coarse(boomeramg)"-style, children in
 * parentheses after the node's own description. */
void hx_pc_view(hx_pc pc, char *buf, size_t len);
void hx_pc_get_stats(hx_pc pc, hx_pc_stats *s);
/* 0 when this preconditioner or one of its parts declares itself not
 * symmetric (hx_pc_ops.nonsymmetric), else 1. */
int hx_pc_is_symmetric(hx_pc pc);
/* The report tree of pc (host memory, an hx_opt map, core/hx_core.h; free
 * with hx_opt_free): for each node type, description (as hx_pc_view's),
 * setup_s (seconds of its setup, children included), applies, apply_s
 * (seconds per apply), the type's own figures (hx_pc_ops.report: pmg's
 * levels, asm's fine and coarse level, jacobi's diagonal), and parts: a list
 * of the children's trees. Every key ending in _s holds the max over the
 * ranks of comm. Collective over comm; every rank gets the same tree.
 * summary.yaml carries it as preconditioner.report (docs/case-format.md). */
int hx_pc_report(hx_pc pc, MPI_Comm comm, hx_opt **tree);
/* hx_pc_ops.observe of pc (nothing when it has none; *restart = 0 then). */
int hx_pc_observe(hx_pc pc, const hx_pc_cg_info *info, int *restart);
/* The report of pc (its node and its children, as in hx_pc_report's tree)
 * into the map node, without the reduction over ranks: for a type whose
 * parts are made after its creation (auto's pmg) to put them in its own
 * report callback. Not collective unless pc's report callbacks are. */
int hx_pc_report_node(hx_pc pc, hx_opt *node);
/* Helpers for hx_pc_ops.report: add key to the map `map` with an integer, a
 * real (%.6e), a text value, or a new empty map or list (*sub; key NULL:
 * append to the list `map`). HX_ERR_MEM, or HX_ERR_ARG for a wrong node. */
int hx_pc_report_int(hx_opt *map, const char *key, int64_t v);
int hx_pc_report_real(hx_opt *map, const char *key, double v);
int hx_pc_report_text(hx_opt *map, const char *key, const char *v);
int hx_pc_report_map(hx_opt *map, const char *key, hx_opt **sub);
int hx_pc_report_list(hx_opt *map, const char *key, hx_opt **sub);

/* z = r (no preconditioner) */
int hx_pc_create_identity(hx_op op, hx_pc *pc);

/* ------------------------------------------------------------ PCG */
typedef struct {
  double rtol;        /* stop when ||r||_2 <= rtol * ||b||_2 (default 1e-8) */
  double atol;        /* ... or when ||r||_2 <= atol (default 0) */
  int max_iterations; /* default HX_MAX_ITERATIONS_DEFAULT */
  /* called on rank 0 and every other rank after each iteration (and for
   * iteration 0) with the true 2-norm of the residual; may be NULL */
  void (*monitor)(void *ctx, int iteration, double rnorm, double rel);
  void *monitor_ctx;
  /* flexible CG (Notay 2000; solver.type fcg): beta in the Polak-Ribiere
   * form z_{k+1}.(r_{k+1} - r_k) / (z_k.r_k), for preconditioners that are
   * not symmetric or vary between applies. 0 (default): plain PCG, which
   * refuses a non-symmetric preconditioner. */
  int flexible;
  /* single-reduction CG (Chronopoulos & Gear 1989; solver.type pcg1): one
   * allreduce per iteration (r.r, r.z, w.z with w = A z) instead of two,
   * for any symmetric positive definite preconditioner; the same iterates
   * as PCG in exact arithmetic (docs/solver.md: cost and stability). Not
   * with flexible. */
  int single_reduction;
  /* 1: do not use the preconditioner's fused CG update even when it has
   * one (hx_pc_ops.cg_update; tests compare the two paths) */
  int no_fuse;
  /* residual replacement (van der Vorst & Ye 2000) against an operator
   * close to op (the FP64 one of a split-geometry disc, hx_disc_op_exact;
   * same gather-scatter and mask): once the residual has dropped by
   * replace_drop since the last replacement, the next iteration computes
   * r = b - exact_op x instead of the recurrence, so the recursive residual
   * tracks the exact operator's (op's deviation enters only through the
   * steps since). NULL (default): none. Not with single_reduction (ignored). */
  hx_op exact_op;
  double replace_drop; /* default 1e-3 */
  /* 1: the operator's null space is the constant (pure Neumann; the mask
   * must be empty): after each preconditioner apply z -= (1.z / N) 1 over
   * the owned G entries (Euclidean, N the global G count), before r.z, so
   * the directions stay orthogonal to the constant; costs one allreduce per
   * iteration and turns off the preconditioner's fused CG update. b must
   * already be orthogonal to 1 (hx_solve projects it). Default 0. */
  int nullspace;
} hx_pcg_opts;

typedef struct {
  int iterations;
  hx_reason reason;
  double bnorm, r0norm, rnorm; /* ||b||, initial and final ||r|| (2-norms) */
  double rel;                  /* rnorm / bnorm (or rnorm when b = 0) */
  int allreduces_per_iteration;
  int vector_passes_per_iteration; /* G-vector passes outside the operator */
  int fused_pc_update;             /* 1: the preconditioner's fused CG update was used */
  double t_operator, t_precond, t_vector, t_reduction; /* seconds */
  double t_exchange;  /* seconds of the operator's halo exchange in these iterations (a part of t_operator) */
  int replacements;   /* residuals recomputed with opts.exact_op */
  double t_replace;   /* seconds in them (exact_op applies and the update) */
  /* runs of the iteration from a residual (1, plus a restart when the
   * preconditioner changed; summed over correction solves and time steps by
   * their drivers): each applies the operator (pcg1: twice) and the
   * preconditioner once before its first iteration, so the preconditioner's
   * applies are iterations + starts (a run of 0 iterations still makes one) */
  int starts;
} hx_pcg_result;

void hx_pcg_opts_default(hx_pcg_opts *o);
/* Solve A x = b with PCG (or flexible CG: opts->flexible, one more dot
 * product z.w in the second allreduce; or single-reduction CG:
 * opts->single_reduction). d_x holds the initial guess (masked, consistent).
 * PCG per iteration: w = A p with p.w fused into the operator (1 allreduce);
 * x += alpha p, r -= alpha w with r.r fused (BS5); z = M^{-1} r; r.z (with a
 * preconditioner that has a fused CG update, Jacobi, these three are one
 * pass); the r.r and r.z partial sums stay in backend memory and are read
 * together (one host wait) for one allreduce; p = z + beta p. So 2
 * allreduces per iteration (1 for single_reduction). Breakdown (NaN/Inf,
 * p.Ap <= 0, r.z < 0) stops with a reason, not an error. Collective. */
int hx_pcg_solve(hx_op op, hx_pc pc, const double *d_b, double *d_x, const hx_pcg_opts *opts,
                 hx_pcg_result *res);
/* Block PCG (solver/block_pcg.c): k independent systems A x_c = b_c (host
 * arrays of k backend G-vectors; x_c holds the initial guess and gets the
 * solution), iterated together on shared applies: the operator on the
 * active columns at once (hx_op_apply_many_p), the preconditioner through
 * hx_pc_apply_many, one allreduce per reduction point for all columns.
 * Each column has its own scalars and stopping test (opts->rtol, atol,
 * max_iterations as hx_pcg_solve) and drops out of the applies when it
 * stops; res[c] (k entries) gets its iterations, reason and norms, and the
 * block run's seconds (the same in every entry). Each column does the
 * arithmetic of hx_pcg_solve (plain PCG, the fused preconditioner update
 * where pc has one): on one or two ranks it gets the bits of its single
 * solve. Plain PCG only (flexible, single_reduction, exact_op, nullspace
 * and a monitor are not taken: HX_ERR_ARG for the first four, the monitor
 * is not called); not with a preconditioner that observes runs (type auto).
 * 0 <= k <= HX_AX_MANY_MAX. Collective. */
int hx_pcg_solve_many(hx_op op, hx_pc pc, int k, const double *const *d_b, double *const *d_x,
                      const hx_pcg_opts *opts, hx_pcg_result *res);


/* ------------------------------------------------------------ solve driver */
typedef struct {
  hx_pcg_result pcg;
  int exact_known;
  double err_l2, err_max;
  int64_t dofs;             /* global unique GLL nodes */
  double t_rhs, t_pc_setup, t_solve;
  /* split geometry (hx_disc_op_exact differs from the Krylov operator):
   * correction solves run after the first, FP64 residuals computed after
   * PCG (the check before each and the last), their seconds; pcg.rnorm is
   * then the last of these residuals */
  int refinements, exact_residuals;
  double t_refine;
  /* the power of two the right-hand side was scaled by for the Krylov solve
   * (1: none; a ||b|| outside [2^-300, 2^300]: scale-safe norms); the
   * reported norms are those of the unscaled problem */
  double rhs_scale;
  /* pure Neumann (hx_disc_nullspace): the constant projected out of b, z
   * (and so of the iterates); nullspace_defect = |1.b| / (sqrt(N) ||b||),
   * the part of the data's right-hand side removed (0 for compatible data
   * up to rounding); the solution is shifted to zero mass-weighted mean and
   * the error norms compare with exact - (its mass-weighted mean) */
  int nullspace;
  double nullspace_defect, exact_mean;
  /* hx_solve_proj: seconds in the projection (hx_proj_guess, a part of
   * t_rhs, and hx_proj_update after the solve, in neither); 0 without pj */
  double t_proj;
} hx_solve_result;

/* Solve the problem of discretisation d with right-hand side h_f (host
 * L-vector of f at the GLL nodes, NULL: 0), Dirichlet values h_gd (host
 * L-vector, read on nodes of Dirichlet faces; NULL: homogeneous), extra
 * boundary load h_bn (host L-vector, NULL: none) and optional exact solution
 * (fn NULL: none) by PCG preconditioned with pc (set up here if it was not,
 * timed as t_pc_setup); h_u0_l (host L-vector, NULL = zero) is the initial
 * guess of the full solution u. On return h_u_l (host L-vector, may be NULL)
 * holds u. A PCG monitor may be given in opts. With the split geometry the
 * PCG runs on the split operator and is then refined against the FP64 one
 * (hx_disc_op_exact) until ||b - A64 x|| meets the tolerance: res->pcg's
 * iterations count every correction solve, its rnorm / rel / reason are
 * those of the FP64 residual (docs/solver.md). Collective. */
int hx_solve(hx_disc d, hx_pc pc, const double *h_f, const double *h_gd, const double *h_bn, hx_field exact,
             const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l, hx_solve_result *res);
/* As hx_solve, taking the data: *h_f, *h_gd and *h_bn (malloc'ed, each may
 * be NULL) are freed and set to NULL as soon as the right-hand side is
 * formed, so they are not held through the preconditioner's setup and PCG
 * (24 bytes per L entry: a steady run needs them no longer). Freed on every
 * path, also on an error. The solution: into *h_u_l when it is not NULL,
 * else into an L-vector allocated after the preconditioner's setup and PCG
 * (a run's peak is inside PCG) and left in *h_u_l for the caller
 * to free (also on an error after it was allocated). Collective. */
int hx_solve_take(hx_disc d, hx_pc pc, double **h_f, double **h_gd, double **h_bn, hx_field exact,
                  const hx_pcg_opts *opts, const double *h_u0_l, double **h_u_l, hx_solve_result *res);

/* ------------------------------------------------------------ projection */
/* Projection of the initial guess onto earlier solutions (Fischer 1998,
 * docs/time.md): X = [x_1 .. x_k], k <= K, backend G-vectors of op,
 * A-orthonormal (x_i . A x_j = delta_ij). For a sequence of solves with
 * the same operator and slowly changing right-hand sides. */
typedef struct hx_proj_s *hx_proj;

/* K >= 1 vectors of op's size. Not collective. */
int hx_proj_create(hx_op op, int K, hx_proj *pj);
void hx_proj_destroy(hx_proj *pj); /* accepts NULL */
/* Forget every vector (the operator changed). */
void hx_proj_reset(hx_proj pj);
int hx_proj_size(hx_proj pj);     /* k */
int hx_proj_capacity(hx_proj pj); /* K */
/* d_x = sum_i (x_i . d_b) x_i (0 when k = 0): the A-norm best
 * approximation of A^{-1} b in span(X); k dot products, one allreduce.
 * Collective. */
int hx_proj_guess(hx_proj pj, const double *d_b, double *d_x);
/* After a solve from d_x0 (the guess) to d_x: dx = d_x - d_x0 is
 * A-orthonormalised against X (classical Gram-Schmidt in the A inner
 * product, a second pass if the first lost more than half its A-norm) and
 * appended; a dx already in span(X) is dropped. When X is full it restarts
 * from the latest solution alone (x / ||x||_A). 2 or 3 operator applies.
 * Collective. */
int hx_proj_update(hx_proj pj, const double *d_x0, const double *d_x);
/* Vector i < k as a host L-vector (checkpoints), and k vectors back from
 * such L-vectors: the same bits as before (one copy per node is taken, not
 * an average). Not collective. */
int hx_proj_get(hx_proj pj, int i, double *h_l);
int hx_proj_set(hx_proj pj, int k, const double *const *h_l);

/* As hx_solve, with the initial guess projected by pj (NULL: hx_solve
 * itself): with k > 0 vectors the guess is hx_proj_guess of the
 * right-hand side (h_u0_l is then not used), else h_u0_l; after the solve
 * the correction updates pj (hx_proj_update). res->pcg.r0norm / bnorm is
 * the projection's gain ||b - A x0|| / ||b||. Collective. */
int hx_solve_proj(hx_disc d, hx_pc pc, hx_proj pj, const double *h_f, const double *h_gd, const double *h_bn,
                  hx_field exact, const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l,
                  hx_solve_result *res);

#ifdef __cplusplus
}
#endif
#endif
