/* hexcg solver: the assembled operator object (A = M Z^T A_L Z M with the
 * Dirichlet mask M and the halo exchange overlapped with interior elements),
 * the preconditioner interface, and PCG with fused vector updates.
 *
 * G-vectors (hx_gs numbering, owned entries first) live in the backend's
 * memory (d_* pointers); h_* pointers are host memory. Functions marked
 * "collective" must be called on every rank of the gather-scatter's
 * communicator. */
#ifndef HX_SOLVER_H
#define HX_SOLVER_H

#include "hx_core.h"
#include "hx_kernels.h"

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
  HX_DIVERGED_INDEFINITE_PC = -4
} hx_reason;

/* "converged_rtol", "diverged_max_iterations", ... */
const char *hx_reason_name(hx_reason r);

/* ------------------------------------------------------------ operator */
typedef struct hx_op_s *hx_op;

/* The assembled operator y = M Z^T A_L Z x on G-vectors. Borrows gs and ax
 * (they must outlive op); the Dirichlet mask is the gs mask (hx_gs_set_mask,
 * may be unset: no Dirichlet nodes). overlap != 0: elements touching other
 * ranks first, start the exchange, interior elements, finish (needs the
 * handle's element flags; with 1 rank it changes nothing). Collective. */
int hx_op_create(hx_gs gs, hx_ax ax, int overlap, hx_op *op);
int hx_op_destroy(hx_op *op);
int64_t hx_op_size(hx_op op);   /* ng: local G-vector length */
int64_t hx_op_owned(hx_op op);  /* G entries counted in reductions */
hx_gs hx_op_gs(hx_op op);
hx_ax hx_op_ax(hx_op op);
hx_backend hx_op_backend(hx_op op);
/* y = A x (masked). If xy != NULL also x.y over all ranks, fused into the
 * element kernel (valid when x is consistent and masked). Collective. */
int hx_op_apply(hx_op op, const double *d_x, double *d_y, double *xy);
/* y = Z^T A_L Z x without the mask (for lifting Dirichlet data). Collective. */
int hx_op_apply_unmasked(hx_op op, const double *d_x, double *d_y);
/* The exact assembled diagonal of A (masked entries set to 1). Collective. */
int hx_op_diagonal(hx_op op, double *d_diag);
/* Timers of the phases of applies so far: element kernel, exchange (s). */
void hx_op_times(hx_op op, double *t_elem, double *t_exchange, double *t_gs);

/* ------------------------------------------------------------ preconditioner */
/* A preconditioner seen from the solver: z = M^{-1} r on G-vectors (masked
 * entries of z must be zero when those of r are). Must be SPD for PCG. */
typedef struct {
  const char *name;
  void *ctx;
  int (*apply)(void *ctx, const double *d_r, double *d_z);
  int (*destroy)(void *ctx);
  /* vector passes over memory of one apply (for the per-iteration count) */
  int passes;
} hx_pc;

/* z = r (no preconditioner) */
int hx_pc_identity(hx_op op, hx_pc *pc);
int hx_pc_destroy(hx_pc *pc);

/* ------------------------------------------------------------ problem setup */
/* Right-hand side of -div(kappa grad u) + lambda u = f with Dirichlet
 * lifting. h_f: host L-vector of f at the GLL nodes (NULL: f = 0); h_gd:
 * host L-vector of the Dirichlet values, read only where h_lflag (host
 * L-vector, the flags given to hx_gs_set_mask) is nonzero; a node with
 * several flagged copies gets their average (NULL: homogeneous). h_bn: host
 * L-vector of extra load added to the assembled right-hand side (Neumann
 * boundary integrals; NULL: none). Produces d_g (G): the lifting, equal to
 * the Dirichlet value on masked entries and 0 elsewhere; d_b (G):
 * M (Z^T (mass .* f + bn) - A g), masked. The solution is u = x + g where
 * A x = b. Collective. */
int hx_problem_rhs(hx_op op, const double *h_f, const double *h_gd, const int *h_lflag, const double *h_bn,
                   double *d_b, double *d_g);
/* A host L-vector from a device G-vector (scatter + copy). Not collective. */
int hx_op_to_l_host(hx_op op, const double *d_g, double *h_l);

/* ------------------------------------------------------------ PCG */
typedef struct {
  double rtol;        /* stop when ||r||_2 <= rtol * ||b||_2 (default 1e-8) */
  double atol;        /* ... or when ||r||_2 <= atol (default 0) */
  int max_iterations; /* default 500 */
  /* called on rank 0 and every other rank after each iteration (and for
   * iteration 0) with the true 2-norm of the residual; may be NULL */
  void (*monitor)(void *ctx, int iteration, double rnorm, double rel);
  void *monitor_ctx;
} hx_pcg_opts;

typedef struct {
  int iterations;
  hx_reason reason;
  double bnorm, r0norm, rnorm; /* ||b||, initial and final ||r|| (2-norms) */
  double rel;                  /* rnorm / bnorm (or rnorm when b = 0) */
  int allreduces_per_iteration;
  int vector_passes_per_iteration; /* G-vector passes outside the operator */
  double t_operator, t_precond, t_vector, t_reduction; /* seconds */
} hx_pcg_result;

void hx_pcg_opts_default(hx_pcg_opts *o);
/* Solve A x = b with PCG. d_x holds the initial guess (masked, consistent).
 * Per iteration: w = A p with p.w fused into the operator (1 allreduce);
 * x += alpha p, r -= alpha w with r.r fused (BS5); z = M^{-1} r; r.z; the
 * r.r and r.z partial sums share one allreduce; p = z + beta p. So 2
 * allreduces per iteration. Breakdown (NaN/Inf, p.Ap <= 0, r.z < 0) stops
 * with a reason, not an error. Collective. */
int hx_pcg_solve(hx_op op, const hx_pc *pc, const double *d_b, double *d_x, const hx_pcg_opts *opts,
                 hx_pcg_result *res);

#ifdef __cplusplus
}
#endif
#endif
