/* Private to precond/: the parts the two-level Schwarz preconditioner is made
 * of. The fine level (overlapping Schwarz by fast diagonalisation, fdm*.c)
 * and the coarse level (Q1 space on the mesh vertices with hypre BoomerAMG,
 * coarse*.c) are built from the mesh, the fine gather-scatter and the
 * element operator, so they do not depend on the preconditioner object layer
 * (pc*.c) that combines them. See DESIGN.md "Preconditioner: two-level
 * additive Schwarz" and docs/preconditioner.md. */
#ifndef HX_PRECOND_IMPL_H
#define HX_PRECOND_IMPL_H

#include <pthread.h>

#include "hx_kernels.h"
#include "hx_mesh.h"
#include "hx_precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over d's communicator. *fits = 1 when the operator's diagonal
 * lies in what a level held in float can take ([2^-60, 2^60]: kappa between
 * about 1e-40 and 1e40 on a unit box); else 0, and rank 0 warns that `who`'s
 * `part` runs in FP64. The FP32 Schwarz and Chebyshev levels under- or
 * overflow outside it ("r.Sr = 0" in the eigenvalue estimate, issue 32); the
 * residual is in range anyway (solver/solve.c scales b). pc_options.c. */
int hx_pc_f32_fits(hx_disc d, hx_backend b, const char *who, const char *part, int *fits);

/* ================================================================ fine level
 * z = W^{1/2} sum_s R_s^T A_s^{-1} R_s W^{1/2} r over the local elements s:
 * subdomain s = element s extended by one GLL layer across each face that has
 * a neighbour ((p+3)^3 box, the edge/corner regions of the extension and the
 * extension across boundary faces dropped, i.e. zero on input and discarded
 * on output), A_s = the separable box approximation
 * kappa_s (Kx (x) My (x) Mz + ...) + lambda_s Mx (x) My (x) Mz inverted by
 * fast diagonalisation. W = 1 (weight none) or 1 / (number of subdomains
 * covering the node) (weight sqrt: applied as W^{1/2} on both sides, so the
 * result stays symmetric). */
/* HX_FDM_WEIGHT_RAS: restricted Schwarz, z = W sum_s R_s^T A_s^{-1} R_s r
 * (weight on the output side only: not symmetric; for smoothers under
 * flexible CG). */
typedef enum { HX_FDM_WEIGHT_NONE = 0, HX_FDM_WEIGHT_SQRT = 1, HX_FDM_WEIGHT_RAS = 2 } hx_fdm_weight;

typedef struct {
  hx_mesh mesh;                 /* borrowed */
  hx_gs gs;                     /* fine gather-scatter of order p, its Dirichlet mask set (borrowed;
                                   the backend is hx_gs_backend(gs)) */
  int p;                        /* 1..15 */
  const double *h_kappa;        /* host, E: kappa per local element (> 0) */
  const double *h_lambda;       /* host, E: lambda per local element (>= 0), NULL = 0 */
  const int *h_dirichlet_face;  /* host, E*6: 1 on faces carrying a Dirichlet tag */
  hx_fdm_weight weight;
  int overlap;                  /* 1: elements touching other ranks first, exchange overlapped
                                   with the interior elements (as the operator) */
  hx_precision prec;            /* HX_F64 (0, the default) or HX_F32: eigenvectors, eigenvalues,
                                   the extended vectors, their exchange and the box solves in
                                   float (the weights stay double; the residual is rounded to
                                   float once on entry, the correction widened on exit) */
  const double *h_kappa_node;   /* host L, E (p+1)^3: kappa at the GLL nodes (hx_disc_kappa_nodes),
                                   or NULL: h_kappa alone (docs/fdm.md, "Coefficients") */
} hx_fdm_opts;

typedef struct hx_fdm_s *hx_fdm;

/* Collective over the gs communicator. Setup: box approximation, neighbour
 * widths, 1D extended matrices, eigenproblems (LAPACK dsygv), extended
 * exchange pattern. */
int hx_fdm_create(const hx_fdm_opts *o, hx_fdm *f);
/* The same on discretisation d (its mesh, gs, coefficients, Dirichlet
 * faces; d must outlive f). Collective. */
int hx_fdm_create_on(hx_disc d, hx_fdm_weight weight, int overlap, hx_precision prec, hx_fdm *f);
/* Collective. d_z = fine-level correction of d_r (fine G-vectors in the
 * backend's memory, d_r masked and consistent; d_z comes out masked and
 * consistent). d_r and d_z must not alias. */
int hx_fdm_apply(hx_fdm f, const double *d_r, double *d_z);
/* The same with fine vectors d_r, d_z in precision io (HX_F64 or HX_F32,
 * independent of the level's own precision: the weighted copies convert). */
int hx_fdm_apply_p(hx_fdm f, hx_precision io, const void *d_r, void *d_z);
hx_precision hx_fdm_precision(hx_fdm f);
/* Collective; accepts NULL; nulls *f. */
int hx_fdm_destroy(hx_fdm *f);
/* New lambda per element (host, E values, NULL = 0; the Helmholtz shift,
 * hx_pc_set_shift): the boxes' eigenvalues on the first direction again
 * (the eigenvectors, the kappa scaling and the exchange pattern do not
 * depend on lambda), the same bits as a new FDM with this lambda. Keeps
 * 8 * 3 (p+3) bytes per element on the host for it. Not collective. */
int hx_fdm_set_lambda(hx_fdm f, const double *h_lambda);

typedef struct {
  int64_t applies;
  double t_local;     /* seconds in the element solves */
  double t_exchange;  /* seconds in the overlap exchanges (not hidden) */
  double t_setup;     /* seconds of hx_fdm_create */
  double bytes_per_apply; /* model bytes of one apply (for GB/s figures) */
} hx_fdm_stats;
void hx_fdm_get_stats(hx_fdm f, hx_fdm_stats *s);
/* For tests: apply the box inverse of local element e on the backend to a
 * whole (p+3)^3 box h_u (host, points (a, b, c) at a + m*(b + m*c), m = p+3,
 * indices -1..p+1 stored at 0..m-1) into h_w (host); the edge/corner regions
 * are not masked. Not collective. */
int hx_fdm_box_solve(hx_fdm f, int32_t e, const double *h_u, double *h_w);
/* Length of the extended G-vector on this rank (fine nodes of the local
 * subdomains, ghost layers included). */
int64_t hx_fdm_num_extended(hx_fdm f);
/* 1 where the FP32 box solves run in the grouped layout (docs/fdm.md):
 * CPU with the cross-element kernel, HEXCG_FDM_GROUPED not 0 */
int hx_fdm_grouped(hx_fdm f);

/* ================================================================ coarse level
 * z = P A0^{-1} P^T r: P interpolates the trilinear (Q1) function given by
 * its values on the mesh vertices to the fine GLL nodes, P^T is its exact
 * transpose, A0^{-1} is a fixed number of BoomerAMG V-cycles (tolerance 0)
 * on the Q1 matrix A0 over the non-Dirichlet vertices (distributed
 * HYPRE_IJMatrix, one row per vertex, rows owned by the gs owner of the
 * vertex). */
typedef enum { HX_COARSE_FEM = 0, HX_COARSE_GALERKIN = 1 } hx_coarse_operator;

typedef struct {
  hx_coarse_operator op;   /* fem: Q1 rediscretisation; galerkin: P^T A P per element */
  int cycles;              /* V-cycles per apply (>= 1) */
  int coarsen_type;        /* HYPRE_BoomerAMGSetCoarsenType */
  int interp_type;         /* HYPRE_BoomerAMGSetInterpType */
  int relax_type;          /* HYPRE_BoomerAMGSetRelaxType: must be symmetric */
  int relax_sweeps;        /* HYPRE_BoomerAMGSetNumSweeps */
  double strong_threshold; /* HYPRE_BoomerAMGSetStrongThreshold */
  int agg_levels;          /* HYPRE_BoomerAMGSetAggNumLevels */
  int pmax;                /* HYPRE_BoomerAMGSetPMaxElmts */
  int max_levels;          /* HYPRE_BoomerAMGSetMaxLevels */
  int print_level;         /* HYPRE_BoomerAMGSetPrintLevel */
  /* set by the caller from the fine disc, not options (docs/coarse.md):
   * robin_l: host L-vector of the fine disc's Robin face weights
   * (hx_disc_robin_l, NULL: none), added to each element matrix as
   * sum_i robin_l[i] phi_u(i) phi_v(i) (P^T R P, FEM and Galerkin alike);
   * nullspace: the problem is pure Neumann (hx_disc_nullspace): one vertex
   * is pinned (its row removed, as a Dirichlet vertex) so A0 is SPD */
  const double *robin_l;
  int nullspace;
} hx_coarse_opts;

/* The documented defaults (docs/coarse.md). */
void hx_coarse_opts_default(hx_coarse_opts *o);

typedef struct hx_coarse_s *hx_coarse;

/* Collective over the mesh communicator. mesh, fine_gs and fine_ax (order
 * p, on the same local elements) are borrowed for the lifetime of c.
 * h_kappa / h_lambda: host, E per element (h_lambda NULL = 0; both are
 * read by the FEM operator only: Galerkin takes them from fine_ax). h_dirichlet_l:
 * host fine L-vector flags (1 on nodes of Dirichlet faces; a vertex is
 * Dirichlet when one of its fine copies is flagged on any rank). */
int hx_coarse_create(hx_mesh mesh, hx_gs fine_gs, hx_ax fine_ax, const double *h_kappa,
                     const double *h_lambda, const int *h_dirichlet_l, const hx_coarse_opts *o,
                     hx_coarse *c);
/* The same on discretisation d (its mesh, gs, element operator,
 * coefficients, Dirichlet nodes, Robin term and null space; d must outlive
 * c). Collective. */
int hx_coarse_create_on(hx_disc d, const hx_coarse_opts *o, hx_coarse *c);
/* New coefficients of the same fine level (the Helmholtz shift,
 * hx_pc_set_shift; arguments as hx_coarse_create's): the element matrices
 * again, A0 assembled anew into hypre and BoomerAMG set up again on it (the
 * method's own cost); the rows, the coarse gather-scatter and the transfers
 * stay. The same bits as a new level. Collective over the coarse
 * communicator. hx_coarse_set_shift_on: the same from discretisation d (the
 * one c was made on, after hx_disc_set_shift). */
int hx_coarse_set_lambda(hx_coarse c, hx_mesh mesh, hx_ax fine_ax, const double *h_kappa,
                         const double *h_lambda);
int hx_coarse_set_shift_on(hx_coarse c, hx_disc d);
/* Collective over the coarse level's own duplicated communicator (not the
 * fine one). h_r, h_z: fine G-vectors in HOST memory (h_r masked). h_z =
 * P A0^{-1} P^T h_r (masked). Uses only host memory, its own communicator
 * and its own buffers: it may run in a thread of its own while the fine
 * level runs on the backend (the caller checks MPI_THREAD_MULTIPLE and sets
 * that thread's OpenMP team size). */
int hx_coarse_apply(hx_coarse c, const double *h_r, double *h_z);
/* h_z += P A0^{-1} P^T h_r: the same terms, added to what h_z holds (the
 * bits of hx_coarse_apply into a buffer and z + buffer after it). asm on a
 * backend whose memory is the host's (hx_backend_host_memory) reads the
 * residual and adds into z in place: three fine G-vectors fewer. */
int hx_coarse_apply_add(hx_coarse c, const double *h_r, double *h_z);
int hx_coarse_destroy(hx_coarse *c);

/* The coarse solve h_z = A0^{-1} h_r beside other work (asm's fine level,
 * pmg's additive smoothing): hx_coarse_job_start starts it in a host thread
 * of its own (thread != 0 and the thread starts), hx_coarse_job_join waits
 * for it, or runs it then on the caller's thread. It runs with one OpenMP
 * thread (the other work keeps the cores; the caller's team size is put
 * back). join: the caller's own error err (nonzero: returned after the
 * join), else the solve's error re-raised; *t its seconds. */
typedef struct {
  hx_coarse c;
  const double *h_r;
  double *h_z;
  int started;
  pthread_t th;
  hx_error_state st; /* the error state is per thread: the join re-raises it */
  hx_ev_slot ev;     /* the solve, closed in the thread that ran it */
} hx_coarse_job;
void hx_coarse_job_start(hx_coarse_job *j, hx_coarse c, const double *h_r, double *h_z, int thread);
int hx_coarse_job_join(hx_coarse_job *j, int err, double *t);

typedef struct {
  int64_t rows_global;    /* coarse unknowns (non-Dirichlet vertices) */
  int64_t nnz_global;
  int amg_levels;
  double operator_complexity, grid_complexity;
  double t_assembly, t_amg_setup; /* seconds */
  int64_t applies;
  double t_restrict, t_solve, t_prolong; /* seconds over all applies */
} hx_coarse_stats;
void hx_coarse_get_stats(hx_coarse c, hx_coarse_stats *s);
/* The report tree's "coarse" node under node (hx_pc_report): order 1, the
 * solver (from op), rows and AMG levels of c; returns the node in *sub for the
 * caller's timings. */
int hx_coarse_report(hx_coarse c, hx_coarse_operator op, hx_opt *node, hx_opt **sub);

/* The coarse matrix A0 as a hypre HYPRE_ParCSRMatrix (cast it; NULL when
 * there are no coarse unknowns) and this rank's rows [*ilower, *iupper]
 * (may be empty: iupper = ilower - 1). For tests and diagnostics. */
void *hx_coarse_parcsr(hx_coarse c, int64_t *ilower, int64_t *iupper);
/* Coarse vectors outside the solve, for tests. A coarse R-vector holds one
 * value per owned coarse row (length iupper - ilower + 1, host).
 * h_c = P^T h_r (restriction of a host fine G-vector, not collective over
 * the fine gs: uses the coarse level's own communicator) and
 * h_z = P h_c (prolongation to a host fine G-vector, masked). Collective
 * over the coarse communicator. */
int hx_coarse_restrict(hx_coarse c, const double *h_r, double *h_c);
int hx_coarse_prolong(hx_coarse c, const double *h_c, double *h_z);
/* h_rows[E*8] (host): the global coarse row of each element vertex (tensor
 * order), -1 on Dirichlet vertices. Not collective. */
int hx_coarse_element_rows(hx_coarse c, int64_t *h_rows);

/* ---------------------------------------------------------------- hypre
 * HX_HYPRE(call): on a nonzero hypre error code record an HX_ERR_HYPRE
 * error naming the call with HYPRE_DescribeError's text and return it. The
 * error flag is cleared (HYPRE_ClearAllErrors) in every case; a code that is
 * only HYPRE_ERROR_CONV (BoomerAMG as a fixed preconditioner "did not
 * converge") is cleared and not reported. hypre's flag is process-wide. */
int hx_hypre_error(const char *file, int line, const char *func, int herr, const char *expr);
#define HX_HYPRE(call)                                                              \
  do {                                                                              \
    int hx_herr_ = (int)(call);                                                     \
    if (hx_herr_ != 0) {                                                            \
      int hx_hx_ = hx_hypre_error(__FILE__, __LINE__, __func__, hx_herr_, #call);   \
      if (hx_hx_ != HX_SUCCESS) return hx_hx_;                                      \
    }                                                                               \
  } while (0)
/* Reference-counted HYPRE_Init / HYPRE_Finalize (thread-safe): every
 * object holding hypre data acquires once at create and releases at destroy. */
int hx_hypre_acquire(void);
int hx_hypre_release(void);

/* ================================================================ two-level
 * (pc_asm.c) */
/* preconditioner.precision when the case does not say (asm and pmg):
 * docs/preconditioner.md "FP32 preconditioning" has the measurements. */
#define HX_PC_PRECISION_DEFAULT HX_F32

typedef struct {
  hx_fdm_weight weight;       /* overlap weights of the fine level */
  int overlap;                /* coarse level in a host thread beside the fine level: 1, 0, or
                                 HX_ASM_OVERLAP_AUTO (the default: overlapped when the fine
                                 level runs on a device, sequential on the CPU backends) */
  int halo_overlap;           /* fine level: exchange overlapped with interior elements */
  int coarse;                 /* 0: one-level Schwarz (coarse.solver: none) */
  hx_coarse_opts coarse_opts;
  hx_precision prec;          /* of the fine level (FDM); the coarse level stays FP64 */
} hx_asm_opts;
#define HX_ASM_OVERLAP_AUTO (-1)
void hx_asm_opts_default(hx_asm_opts *o);
/* d is referenced. Setup builds both levels. Collective. */
int hx_pc_create_asm(hx_disc d, const hx_asm_opts *o, hx_pc *pc);

/* ================================================================ smoothers
 * (cheby.c) Polynomial smoothers x += q(S A) S (b - A x) around an inner
 * preconditioner S, on backend G-vectors. A and S are callbacks
 * d_out = Op(d_in) (masked in, masked out), vectors in the smoother's
 * precision. */
typedef int (*hx_lin_fn)(void *ctx, const void *d_in, void *d_out);

typedef enum {
  HX_CHEB_NONE = 0,       /* damped Richardson: degree sweeps of x += 4/(3 rho) S (b - A x) */
  HX_CHEB_FOURTH = 1,     /* Lottes's 4th-kind Chebyshev */
  HX_CHEB_OPT_FOURTH = 2, /* 4th kind with Lottes's optimised weights beta_j (degree <= 7) */
  HX_CHEB_FIRST = 3       /* classical 1st kind on [lower * rho, rho] */
} hx_cheb_kind;
#define HX_CHEB_DEGREE_MAX 16
#define HX_CHEB_OPT_DEGREE_MAX 7

typedef struct {
  hx_cheb_kind kind;
  int degree;   /* 1..HX_CHEB_DEGREE_MAX (opt-fourth: 1..HX_CHEB_OPT_DEGREE_MAX) */
  double rho;   /* upper bound of the largest eigenvalue of S A */
  double lower; /* first kind: lambda_min = lower * rho */
  hx_precision prec; /* of the vectors (0: HX_F64) */
} hx_cheb;

/* Lottes's optimised 4th-kind weights beta_1..beta_k for degree k into
 * beta (k values). HX_ERR_ARG outside 1..HX_CHEB_OPT_DEGREE_MAX. */
int hx_cheb_opt_betas(int degree, double *beta);
/* x += q(S A) S (b - A x) of the kind and degree of c, in the precision of
 * c (vectors of n entries in backend memory; A and S take and give vectors
 * of that precision; one recurrence through the _p streaming ops, the
 * coefficients rounded to float by them for HX_F32). x_zero != 0: x is
 * zero on entry (it is overwritten, one A apply saved). r, d, t: work
 * vectors. Collective when A and S are. */
int hx_cheb_apply(hx_backend b, int64_t n, const hx_cheb *c, hx_lin_fn A, void *actx, hx_lin_fn S, void *sctx,
                  const void *d_b, void *d_x, int x_zero, void *d_r, void *d_d, void *d_t);
/* Estimate of the largest eigenvalue of S A from `steps` steps of
 * S-preconditioned CG on A x = v (the Lanczos tridiagonal from the CG
 * coefficients; symmetric S) or, with symmetric = 0, of power iteration
 * (2 * steps steps, ratio of A-norms), in precision prec (vectors and
 * callbacks in prec, dots accumulated in FP64). d_v: the start vector
 * (masked; it is not changed); work: 4 vectors of length n. Dots over the
 * first nown entries summed over comm. Collective. */
/* The start vector of the estimate on discretisation d: pseudo-random
 * (seeded by the global ids: the same global values on any rank count),
 * rounded to prec, masked. Not collective. */
int hx_eig_start_vector(hx_disc d, hx_precision prec, void *d_v);
int hx_eig_max_estimate(hx_backend b, hx_precision prec, int64_t n, int64_t nown, MPI_Comm comm, hx_lin_fn A,
                        void *actx, hx_lin_fn S, void *sctx, int symmetric, int steps, const void *d_v,
                        void *d_w0, void *d_w1, void *d_w2, void *d_w3, double *lmax);

/* ================================================================ p-multigrid
 * (pc_pmg.c) docs/preconditioner.md. */
/* The inner preconditioner S of a level's smoother: an hx_pc object of a
 * smoother type (smoother.c), one record each and one line in
 * smoother_types.h, which also makes the enum HX_SMOOTH_ID. */
#define HX_SMOOTHER(ID_, id_) HX_SMOOTH_##ID_,
typedef enum {
#include "smoother_types.h"
  HX_SMOOTH_COUNT
} hx_smooth_inner;
#undef HX_SMOOTHER
typedef struct {
  const char *name; /* smoother.type: name, or cheby-name in a Chebyshev polynomial */
  const char *what; /* for messages, NULL: none ("restricted Schwarz") */
  int symmetric;    /* S symmetric (else a solver that is not flexible refuses it) */
  double (*mem_per_node)(int q); /* bytes per node of a level of order q (memory check) */
  int (*create)(hx_disc d, hx_precision prec, hx_pc *S); /* level d's S in prec, set up */
} hx_smoother_class;
#define HX_SMOOTHER(ID_, id_) extern const hx_smoother_class hx_smoother_##id_;
#include "smoother_types.h"
#undef HX_SMOOTHER
extern const hx_smoother_class *const hx_smoothers[HX_SMOOTH_COUNT];
typedef enum { HX_PMG_MULTIPLICATIVE = 0, HX_PMG_ADDITIVE = 1 } hx_pmg_cycle;
/* where the V-cycle smooths: both ways (symmetric with a symmetric
 * smoother), or only on the way down (pre) or up (post): half the smoothing,
 * not symmetric (flexible CG) */
typedef enum { HX_PMG_SIDES_BOTH = 0, HX_PMG_SIDES_PRE = 1, HX_PMG_SIDES_POST = 2 } hx_pmg_sides;
#define HX_PMG_MAX_LEVELS HX_PC_LEVELS_MAX

typedef struct {
  int nlevels;                    /* orders levels[0] = p > ... > levels[nlevels-1] = 1 */
  int levels[HX_PMG_MAX_LEVELS];
  hx_pmg_cycle cycle;
  hx_smooth_inner inner;          /* inner preconditioner S of the smoother */
  hx_cheb_kind kind;              /* HX_CHEB_NONE: plain (damped) smoother */
  int degree;
  /* the levels below the fine one: inner_below < 0 (the default) smooths
   * them as the fine level, else with S = inner_below in kind_below;
   * degree_below 0: degree */
  int inner_below;
  hx_cheb_kind kind_below;
  int degree_below;
  hx_pmg_sides sides;             /* multiplicative cycle: pre and post, pre or post only */
  double lower;                   /* first kind: lambda_min / rho */
  int eig_steps;                  /* Lanczos (CG) steps of the estimate */
  double eig_safety;              /* rho = eig_safety * estimate */
  int coarse;                     /* 1: BoomerAMG on the Q1 level; 0: none */
  int overlap;                    /* additive cycle: coarse solve in a host thread */
  hx_coarse_opts coarse_opts;
  hx_precision prec;              /* HX_F32: the whole cycle in FP32, every smoother (pc_pmg.c) */
} hx_pmg_opts;
/* The inverse assembled diagonal of a Jacobi preconditioner after its setup
 * (a G-vector on its backend in the pc's precision; NULL for another type
 * or before setup). */
const void *hx_pc_jacobi_inv_diag(hx_pc pc);

void hx_pmg_opts_default(hx_pmg_opts *o);
/* The default schedule of orders for fine order p (1 <= p <= 15) into
 * levels; returns the number of levels. */
int hx_pmg_default_levels(int p, int *levels);
/* d is referenced. Setup builds every level. Collective. */
int hx_pc_create_pmg(hx_disc d, const hx_pmg_opts *o, hx_pc *pc);

/* ================================================================ smoother trial
 * (pc_auto.c) type auto with trial: true: at setup, pmg candidates (cheby-jacobi, then,
 * unless the Jacobi candidate already converges fast, cheby-asm) built on
 * d with base's levels, precision and coarse level, each timed over
 * trial_iterations PCG iterations on a pseudo-random right-hand side; the
 * one of least estimated solve time (seconds per iteration x iterations
 * for a 1e-8 reduction from the measured rate) is kept, the others freed.
 * schwarz_above: the Schwarz candidate is built only when the best Jacobi
 * candidate's estimate exceeds this many iterations (0: always). The
 * environment variable HEXCG_AUTO_TIMINGS ("name=seconds,name=seconds",
 * names as in the report: cheby-jacobi-3, cheby-asm-3, ...) replaces the
 * measured seconds per iteration of the named candidates (tests: a
 * reproducible choice). docs/preconditioner.md. */
typedef struct {
  hx_pmg_opts base;    /* levels, precision, coarse level of every candidate */
  int trial_iterations;
  int schwarz_above;
} hx_pmg_auto_opts;
void hx_pmg_auto_opts_default(hx_pmg_auto_opts *o);
/* The pmg of the trial's choice (type "pmg-trial"). */
int hx_pc_create_pmg_auto(hx_disc d, const hx_pmg_auto_opts *o, hx_pc *pc);
/* The candidate a set-up "pmg-trial" chose (cheby-jacobi-3, ...), or NULL. */
const char *hx_pc_trial_choice(hx_pc pc);

/* ================================================================ auto
 * (pc_auto.c) type auto: Jacobi-PCG first; when the Jacobi iterations
 * still needed, estimated from the condition number of the Lanczos
 * tridiagonal of the CG coefficients so far and from the error's rate,
 * exceed pmg's modelled cost,
 * pmg (pmg.base, or with trial the smoother trial of pmg) is set up and
 * the solve restarts from the iterate (hx_pc_ops.observe). Costs are in
 * Jacobi-PCG iterations of the solve: setup_cost for pmg's setup,
 * cycle_cost per pmg iteration, pmg_iterations per 1e8 reduction. The
 * first check after min_iterations, then every 5 iterations (5 % of k
 * beyond 100). start HX_AUTO_START_PMG: pmg from the setup (no Jacobi
 * phase). docs/preconditioner.md. */
enum { HX_AUTO_START_JACOBI = 0, HX_AUTO_START_PMG = 1, HX_AUTO_START_ASM = 2, HX_AUTO_START_MESH = 3 };
typedef struct {
  hx_pmg_auto_opts pmg; /* the pmg: its options (base) and the trial's */
  int start;
  int trial;
  double setup_cost, cycle_cost, pmg_iterations;
  int min_iterations;
  /* smoother_stages (without trial): the pmg starts with Chebyshev-Jacobi
   * smoothing on every level; schwarz_check iterations into it, its
   * measured rate against the Schwarz smoothers' modelled cost (in its own
   * iterations: schwarz_setup for their setup, schwarz_cycle per
   * iteration, schwarz_gain x sqrt(its iterations per 1e8) iterations per
   * 1e8) decides whether they are added to the same levels, once; their
   * measured rate after as many iterations whether they stay. 0: the pmg
   * of base's options throughout. */
  int smoother_stages;
  /* start HX_AUTO_START_ASM: two-level Schwarz (asm's defaults, this
   * precision) first; after asm_check iterations, once, asm's iterations
   * still needed (asm_bias x the estimate from its residual's rate over the
   * run's second half) against pmg's cost modelled in asm iterations (pmg_setup; per
   * iteration pmg_cycle; pmg_gain x n^0.74 iterations per 1e8 where asm
   * takes n): pmg of base's options from the iterate when it is less */
  int pmg_order; /* start HX_AUTO_START_MESH: pmg at once at orders >= this on mostly curved meshes */
  /* that pmg's Chebyshev degrees (fine level, the levels below): stronger
   * smoothing than type pmg's 3 pays on these meshes (NekRS's BPS5 count
   * and time, docs/preconditioner.md "type: auto") */
  int mesh_degree, mesh_degree_below;
  int asm_check;
  double asm_bias, pmg_setup, pmg_cycle, pmg_gain;
  int schwarz_check;
  double schwarz_setup, schwarz_cycle, schwarz_gain;
} hx_auto_opts;
void hx_auto_opts_default(hx_auto_opts *o);
int hx_pc_create_auto(hx_disc d, const hx_auto_opts *o, hx_pc *pc);
/* The prediction from n CG steps (alpha, beta of each) at relative
 * residual rel with the run's target: the extreme eigenvalues of the
 * Lanczos tridiagonal (Sturm bisection), kappa = lmax / lmin, the Jacobi
 * iterations for the reduction rel / target by the CG bound and by the
 * A-norm error's rate so far (the lesser is the estimate), and pmg's cost
 * in the model of o (same unit). Pure (tests call it). */
typedef struct {
  double lmin, lmax, kappa;
  double jacobi_bound; /* the CG bound with kappa */
  double jacobi_rate;  /* the A-norm error's rate so far, extrapolated */
  double jacobi, pmg;  /* the lesser of the two; pmg's cost */
} hx_auto_pred;
int hx_auto_predict(int n, const double *alpha, const double *beta, double rel, double target,
                    const hx_auto_opts *o, hx_auto_pred *p);

/* ================================================================ types
 * A preconditioner type is one record (its pc_*.c file) and one line in
 * pc_types.h; pc_options.c's factory loops over the records: the type key,
 * the keys of another type dropped, the reading into the type's own typed
 * options (vals, `size` bytes), the effective case, the memory estimate, the
 * levels, the solver check, hexcg keys and the create. docs/developer.md
 * "Add a preconditioner". */
#define HX_NELEM(a) ((int)(sizeof(a) / sizeof *(a)))
/* option rows, off_ = offsetof(the type's vals, field) */
#define HX_PC_ENUM(k_, off_, nm_, d_, h_)                                                            \
  {                                                                                                  \
    .key = k_, .type = HX_OT_ENUM, .offset = off_, .names = nm_, .nnames = HX_NELEM(nm_), .def = d_, \
    .help = h_                                                                                       \
  }
#define HX_PC_INT(k_, off_, lo_, hi_, h_) \
  { .key = k_, .type = HX_OT_INT, .offset = off_, .min = lo_, .max = hi_, .help = h_ }
#define HX_PC_DBL(k_, off_, lo_, hi_, fl_, h_) \
  { .key = k_, .type = HX_OT_DOUBLE, .offset = off_, .min = lo_, .max = hi_, .flags = fl_, .help = h_ }
/* row 0 of every type's group: the type key (read by the factory) */
#define HX_PC_TYPE_KEY \
  { .key = "type", .type = HX_OT_OTHER, .offset = HX_OPT_NOWHERE, .help = "the preconditioner" }
/* preconditioner.precision, in hx_precision order (HX_F64 = 0, HX_F32 = 1) */
extern const char *const hx_pc_precision_names[2];
#define HX_PC_PREC_KEY(off_)                                                                             \
  {                                                                                                      \
    .key = "precision", .type = HX_OT_ENUM, .offset = off_, .names = hx_pc_precision_names, .nnames = 2, \
    .help = "arithmetic of the preconditioner"                                                           \
  }
#define HX_PC_COARSE_KEY(help_)                                                                 \
  {                                                                                             \
    .key = "coarse", .type = HX_OT_GROUP, .offset = HX_OPT_NOWHERE, .sub = &hx_pc_coarse_group, \
    .help = (help_)                                                                             \
  }
#define HX_PC_LEVELS_KEY(help_)                                                    \
  {                                                                                \
    .key = "levels", .type = HX_OT_OTHER, .offset = HX_OPT_NOWHERE, .def = "auto", \
    .what = "auto or a list of decreasing orders ending in 1", .help = (help_)     \
  }

typedef struct hx_pc_class {
  const char *name;           /* the value of preconditioner.type */
  const hx_opt_group *group;  /* its keys under preconditioner: (row 0 HX_PC_TYPE_KEY) */
  const hx_opt_group *sub[2]; /* its sub-mappings' keys (hexcg keys lists each once) ... */
  size_t sub_at[2];           /* ... and where in vals each one's defaults lie */
  size_t size;                /* of its vals */
  void (*defaults)(void *vals);
  /* after the group's keys are read into vals: the rest (sub-mappings,
   * levels) and the checks across keys; NULL: none */
  int (*read)(const hx_opt *o, void *vals);
  /* every default made explicit in o (the effective case); NULL: none */
  int (*write)(hx_opt *o, const void *vals);
  /* bytes per fine GLL node at order p (hx_pc_options_mem_per_node); NULL: 0 */
  double (*mem_per_node)(const void *vals, int p);
  /* the orders known before the setup (hx_pc_options_levels); NULL: none */
  int (*levels)(const hx_opt *o, const void *vals, int order, int *levels, int *n);
  /* a solver that is not flexible: refuse what is not symmetric; NULL: symmetric */
  int (*check_solver)(const hx_opt *o, const void *vals, const char *solver);
  int (*create)(hx_disc d, const void *vals, hx_pc *pc);
} hx_pc_class;
#define HX_PC_TYPE(id_) extern const hx_pc_class hx_pc_type_##id_;
#include "pc_types.h"
#undef HX_PC_TYPE

/* the coarse: mapping of asm, pmg and auto (coarse.c): solver and options */
typedef struct {
  int solver; /* coarse.solver: 0 none, 1 boomeramg */
  hx_coarse_opts co;
} hx_pc_coarse_vals;
extern const hx_opt_group hx_pc_coarse_group;
/* Read (and check) a coarse: mapping c into *v (NULL: *v left alone). */
int hx_pc_coarse_read(const hx_opt *c, hx_pc_coarse_vals *v);
/* preconditioner.levels of o (pc_pmg.c): auto (g->nlevels 0) or a list. */
int hx_pc_levels_read(const hx_opt *o, hx_pmg_opts *g);
/* pmg's levels known before the setup and its memory per node (auto's
 * pmg too; trial: both smoothers at once). pc_pmg.c. */
int hx_pmg_known_levels(const hx_opt *o, const hx_pmg_opts *g, int order, int *levels, int *n);
double hx_pmg_mem_per_node(const hx_pmg_opts *g, int p, int trial);

/* ================================================================ cheby
 * (pc_cheby.c) The bound rho of lambda_max(D^-1 A) of a set-up type cheby
 * (0 for another type or before setup), for tests. */
double hx_pc_cheby_rho(hx_pc pc);

/* LAPACK's info after a call (precond/lapack.c): HX_SUCCESS for 0, else an
 * error naming the routine and what it was solving; a parameter that
 * LAPACK's error handler (replaced there: it would end the process with
 * status 0) refused is reported as an internal error */
int hx_lapack_check(const char *routine, int info, const char *what);

#ifdef __cplusplus
}
#endif
#endif
