/* Private to api/ and app/: the solver object behind hexcg.h and the
 * internal calls that both the public API and `hexcg run` (app/run_case.c)
 * make, so that the application and the library cannot drift apart:
 * hexcg_create_file / hexcg_create_yaml and `hexcg run` set up through
 * hx_api_setup_case and hx_api_build, hexcg_solve and `hexcg run` solve
 * through hx_api_solve, a new shift goes through hx_api_set_shift. */
#ifndef HX_API_H
#define HX_API_H

#include "hexcg.h"
#include "hx_core.h"
#include "hx_disc.h"
#include "hx_io.h"
#include "hx_mesh.h"
#include "hx_precond.h"
#include "hx_problem.h"
#include "hx_solver.h"

/* ------------------------------------------------------------ status */
/* hexcg.h's status of an hx error code */
int hx_api_status(int code);
/* A failed internal call: its message becomes hexcg_last_error's, the hx
 * error state is cleared; returns the status (HEXCG_OK for HX_SUCCESS). */
int hx_api_fail(int code);
/* An argument error: fmt with one %s (what) becomes the message. */
int hx_api_arg(const char *fmt, const char *what);
/* clears hexcg_last_error's message (a call that succeeds) */
void hx_api_clear(void);
/* A public call's first check: the solver exists (HEXCG_ERR_ARG naming fn). */
#define HX_API_CHECK_SOLVER(s, fn)                                                                 \
  do {                                                                                             \
    if (!(s) || !(s)->d) return hx_api_arg("%s: the solver is NULL (or its creation failed)", fn); \
  } while (0)

/* ------------------------------------------------------------ the solver */
/* What a description (hexcg_create) keeps: its compiled expressions and the
 * problem description's arrays (api/desc.c). */
typedef struct hx_api_desc_s hx_api_desc;

struct hexcg_solver_s {
  MPI_Comm comm; /* duplicated */
  int rank, size;
  int threads;   /* OpenMP threads per rank inside the calls */
  hx_log_level log;
  hx_case *own_case;  /* a case the solver loaded (hexcg_create_file / _yaml) */
  const hx_case *cs;  /* the case (NULL: a description) */
  hx_api_desc *desc;  /* a description's arrays (NULL: a case) */
  void *case_arrays;  /* the case's problem description arrays (api/case.c) */
  hx_backend b;
  hx_mesh m;
  hx_problem prob;
  hx_disc d;
  hx_pc pc;
  hx_pc_config pcc;
  int order;
  double shift;
  hx_pcg_opts po;      /* tolerance, limit, variant (no monitor) */
  double *g_user;      /* hexcg_set_dirichlet's values at the local nodes (NULL: the problem's) */
  hx_field exact;      /* the problem's exact solution at t = 0 (fn NULL: none) */
  hx_tfield exact_tf;  /* ... at any t (time stepping) */
};

/* The case's setup up to the problem (no discretisation yet): the backend,
 * the mesh built or read and partitioned and checked against the case (its
 * tags, materials, coefficients, Jacobians; the notes of untagged and
 * natural tags), the preconditioner options read, the problem; res (may be
 * NULL): its devices, elements and natural_tags. s is zeroed by the caller
 * with comm set. Collective. */
int hx_api_setup_case(hexcg_solver *s, const hx_case *cs, hx_run_stats *res);
/* The discretisation at order s->order with lambda + shift (hx_problem_disc),
 * then the preconditioner (created, set up at the first solve). Collective. */
int hx_api_build(hexcg_solver *s, double shift);
/* The shift in place (hx_disc_set_shift, hx_pc_set_shift) or, where the
 * preconditioner cannot (HX_ERR_UNSUPPORTED), the discretisation and
 * preconditioner made again. Collective. */
int hx_api_set_shift(hexcg_solver *s, double shift);
/* One solve on the solver's discretisation (hx_solve_take: the data arrays
 * *hf, *hg, *hbn are taken and freed). Collective. */
int hx_api_solve(hexcg_solver *s, double **hf, double **hg, double **hbn, hx_field exact, const hx_pcg_opts *po,
                 const double *hu0, double **hu, hx_solve_result *dr);
/* k right-hand sides at once by block PCG (hx_pcg_solve_many, in chunks
 * of HX_AX_MANY_MAX) on the solver's discretisation, from zero: host
 * L-vectors hf_l[k] (each column's f), hg and hbn (the Dirichlet values
 * and Neumann loads, shared by the columns); the solutions into the host
 * L-vectors hu_l[k] (allocated by the caller, hx_disc_num_l values each);
 * pr[k] each column's result (rnorm, rel: the true residual); err_l2[k],
 * err_max[k] against exact[c] (exact NULL, or exact[c].fn NULL: 0). The
 * solver's PCG options (s->po, no monitor). HX_ERR_UNSUPPORTED where the
 * configuration has no block path (pure Neumann, split geometry, auto,
 * fcg, pcg1). Collective. */
int hx_api_solve_many_l(hexcg_solver *s, int k, double *const *hf_l, const double *hg, const double *hbn,
                        const hx_field *exact, double *const *hu_l, hx_pcg_result *pr, double *err_l2,
                        double *err_max);
/* Frees what the solver holds (not s itself). Collective. */
void hx_api_free(hexcg_solver *s);
/* The case's checks before anything is built: the preconditioner's options
 * (positions in the file; their defaults made explicit), pmg's levels
 * against the order, the preconditioner against the solver variant, the
 * size against the memory. Collective. */
int hx_api_check_case(MPI_Comm comm, hx_case *cs);
/* frees the case's problem description arrays (s->case_arrays) */
void hx_api_case_arrays_free(void **p);
/* The case's solver options (tolerance, iteration limit, pcg / fcg / pcg1;
 * no monitor): the library's and hexcg run's. */
void hx_api_pcg_opts(const hx_case *cs, hx_pcg_opts *po);
/* The case's partitioner (mesh.partitioner). */
hx_partitioner hx_api_partitioner(const hx_case *cs);
/* What the case's preconditioner adds per GLL node (precond/ estimates it). */
double hx_api_pc_node_bytes(hx_pc_config pcc, int order);

/* ------------------------------------------------------------ threads */
/* Around every public call: the solver's threads per rank and log level
 * in, the caller's back out. */
typedef struct {
  int threads;
  hx_log_level log;
  int rank;
} hx_api_saved;
void hx_api_enter(const hexcg_solver *s, hx_api_saved *sv);
void hx_api_leave(const hx_api_saved *sv);

/* values at the local nodes (G, host) from an L-vector (one copy each) and back */
void hx_api_l_to_nodes(hx_gs gs, const double *l, double *g);
void hx_api_nodes_to_l(hx_gs gs, const double *g, double *l);

/* the description's setup (api/desc.c): the mesh from arrays, the problem */
int hx_api_setup_desc(hexcg_solver *s, const hexcg_problem *d);
void hx_api_desc_free(hx_api_desc **d);

#endif
