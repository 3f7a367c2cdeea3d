/* The solver of hexcg.h: creation from a case, destruction, the local
 * nodes, the solves, the shift and boundary data; the internal calls that
 * `hexcg run` makes too (hx_api.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_api.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------ internal calls */
int hx_api_build(hexcg_solver *s, double shift) {
  HX_CALL(hx_problem_disc(s->prob, s->order, shift, &s->d));
  s->shift = shift;
  HX_CALL(hx_problem_error(s->prob, hx_pc_create(s->d, s->pcc, &s->pc)));
  return HX_SUCCESS;
}

int hx_api_set_shift(hexcg_solver *s, double shift) {
  int err = hx_disc_set_shift(s->d, shift);
  if (!err) err = hx_pc_set_shift(s->pc, shift);
  if (!err) {
    s->shift = shift;
    return HX_SUCCESS;
  }
  if (err != HX_ERR_UNSUPPORTED) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  hx_log(HX_LOG_VERBOSE, "shift %g: %s; the operator and preconditioner are made again\n", shift, hx_error_message());
  hx_error_clear();
  hx_pc_destroy(&s->pc);
  hx_disc_destroy(&s->d);
  HX_CALL(hx_api_build(s, shift));
  return HX_SUCCESS;
}

int hx_api_solve(hexcg_solver *s, double **hf, double **hg, double **hbn, hx_field exact, const hx_pcg_opts *po,
                 const double *hu0, double **hu, hx_solve_result *dr) {
  HX_CALL(hx_problem_error(s->prob, hx_solve_take(s->d, s->pc, hf, hg, hbn, exact, po, hu0, hu, dr)));
  return HX_SUCCESS;
}

void hx_api_free(hexcg_solver *s) {
  free(s->g_user), s->g_user = NULL;
  hx_pc_destroy(&s->pc);
  hx_disc_destroy(&s->d);
  hx_problem_destroy(&s->prob);
  hx_api_case_arrays_free(&s->case_arrays);
  hx_api_desc_free(&s->desc);
  hx_pc_config_free(&s->pcc);
  hx_mesh_destroy(&s->m);
  hx_backend_destroy(&s->b);
  hx_case_destroy(&s->own_case);
}

void hx_api_enter(const hexcg_solver *s, hx_api_saved *sv) {
#ifdef _OPENMP
  sv->threads = omp_get_max_threads();
  if (s->threads > 0) omp_set_num_threads(s->threads);
#else
  sv->threads = 1;
#endif
  sv->log = hx_log_get_level();
  sv->rank = hx_log_rank();
  hx_log_init(s->rank, s->log);
  hx_api_clear();
}

void hx_api_leave(const hx_api_saved *sv) {
#ifdef _OPENMP
  omp_set_num_threads(sv->threads);
#endif
  hx_log_init(sv->rank, sv->log);
}

/* ------------------------------------------------------------ creation */
/* The solver's communicator, threads and log level from the options. */
static int solver_new(MPI_Comm comm, const hexcg_options *opt, hexcg_solver **out) {
  hexcg_options o = opt ? *opt : hexcg_options_default();
  HX_CHECK(o.threads >= 0, HX_ERR_ARG, "hexcg_options.threads = %d: give 0 (as hexcg run) or a positive count",
           o.threads);
  HX_CHECK(o.verbosity >= 0 && o.verbosity <= 2, HX_ERR_ARG, "hexcg_options.verbosity = %d: give 0, 1 or 2",
           o.verbosity);
  HX_CHECK(o.nset >= 0 && (o.nset == 0 || o.set), HX_ERR_ARG, "hexcg_options.nset = %d with set %s", o.nset,
           o.set ? "given" : "NULL");
  int flag = 0;
  MPI_Initialized(&flag);
  HX_CHECK(flag, HX_ERR_ARG, "MPI is not initialised: call MPI_Init_thread before hexcg (the library never does)");
  hexcg_solver *s;
  HX_CALL(HX_ALLOC(&s, 1));
  *out = s;
  s->comm = MPI_COMM_NULL;
  HX_MPI(MPI_Comm_dup(comm, &s->comm));
  HX_MPI(MPI_Comm_rank(s->comm, &s->rank));
  HX_MPI(MPI_Comm_size(s->comm, &s->size));
  s->log = o.verbosity == 0 ? HX_LOG_SILENT : o.verbosity == 1 ? HX_LOG_NORMAL : HX_LOG_VERBOSE;
  char warn[512];
  s->threads = o.threads > 0 ? o.threads : hx_threads_default(s->comm, warn, sizeof warn);
  if (o.threads == 0 && warn[0] && s->rank == 0 && o.verbosity > 0) printf("hexcg: warning: %s\n", warn);
  return HX_SUCCESS;
}

static void solver_free(hexcg_solver **ps) {
  hexcg_solver *s = *ps;
  if (!s) return;
  hx_api_free(s);
  if (s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
  free(s);
  *ps = NULL;
}

/* a loaded case: checked, set up, built (every rank agrees on the outcome) */
static int create_from_case(hexcg_solver *s, int load_err) {
  int err = load_err;
  if (!err) err = hx_api_check_case(s->comm, s->own_case);
  err = hx_error_agree(s->comm, err);
  if (!err) err = hx_error_agree(s->comm, hx_api_setup_case(s, s->own_case, NULL));
  if (!err) err = hx_error_agree(s->comm, hx_api_build(s, 0.0));
  return err;
}

/* What a creation sets up once the solver's communicator exists. */
typedef struct {
  int file;                /* a case file (else YAML text or a description) */
  const char *text, *name; /* the case's path or text, its name */
  const hexcg_problem *d;  /* a description (NULL: a case) */
  hexcg_options o;
} create_args;

static int create_setup(hexcg_solver *s, const create_args *a) {
  if (a->d) {
    int err = hx_error_agree(s->comm, hx_api_setup_desc(s, a->d));
    if (!err) err = hx_error_agree(s->comm, hx_api_build(s, 0.0));
    return err;
  }
  int err = a->file ? hx_case_load_comm(s->comm, a->text, a->o.nset, a->o.set, &s->own_case)
                    : hx_case_load_string(a->text, a->name ? a->name : "<string>", a->o.nset, a->o.set, 1,
                                          &s->own_case);
  return create_from_case(s, err);
}

/* the solver, its setup in its threads and log level; *out NULL on failure */
static int create(MPI_Comm comm, const create_args *a, const hexcg_options *opt, hexcg_solver **out) {
  hexcg_solver *s = NULL;
  int err = solver_new(comm, opt, &s);
  if (err) {
    solver_free(&s);
    return hx_api_fail(err);
  }
  hx_api_saved sv;
  hx_api_enter(s, &sv);
  err = create_setup(s, a);
  if (err) solver_free(&s);
  *out = s;
  const int st = hx_api_fail(err);
  hx_api_leave(&sv);
  return st;
}

int hexcg_create_file(MPI_Comm comm, const char *path, const hexcg_options *opt, hexcg_solver **s) {
  if (!s) return hx_api_arg("%s: the solver pointer is NULL", "hexcg_create_file");
  *s = NULL;
  if (!path) return hx_api_arg("%s is NULL", "hexcg_create_file: path");
  const create_args a = {1, path, NULL, NULL, opt ? *opt : hexcg_options_default()};
  return create(comm, &a, opt, s);
}

int hexcg_create_yaml(MPI_Comm comm, const char *yaml, const char *name, const hexcg_options *opt,
                      hexcg_solver **s) {
  if (!s) return hx_api_arg("%s: the solver pointer is NULL", "hexcg_create_yaml");
  *s = NULL;
  if (!yaml) return hx_api_arg("%s is NULL", "hexcg_create_yaml: yaml");
  const create_args a = {0, yaml, name, NULL, opt ? *opt : hexcg_options_default()};
  return create(comm, &a, opt, s);
}

int hexcg_create(MPI_Comm comm, const hexcg_problem *d, const hexcg_options *opt, hexcg_solver **s) {
  if (!s) return hx_api_arg("%s: the solver pointer is NULL", "hexcg_create");
  *s = NULL;
  if (!d) return hx_api_arg("%s: the description is NULL", "hexcg_create");
  const create_args a = {0, NULL, NULL, d, opt ? *opt : hexcg_options_default()};
  return create(comm, &a, opt, s);
}

int hexcg_destroy(hexcg_solver **s) {
  if (!s || !*s) return HEXCG_OK;
  hx_api_saved sv;
  hx_api_enter(*s, &sv);
  solver_free(s);
  hx_api_leave(&sv);
  return HEXCG_OK;
}

/* ------------------------------------------------------------ local nodes */

int hexcg_num_nodes(const hexcg_solver *s, int64_t *n, int64_t *n_owned, int64_t *n_global) {
  HX_API_CHECK_SOLVER(s, "hexcg_num_nodes");
  hx_gs gs = hx_disc_gs(s->d);
  if (n) *n = hx_gs_num_local(gs);
  if (n_owned) *n_owned = hx_gs_num_owned(gs);
  if (n_global) *n_global = hx_gs_num_global(gs);
  hx_api_clear();
  return HEXCG_OK;
}

int hexcg_node_info(const hexcg_solver *s, double *xyz, int64_t *global_id, int8_t *owned) {
  HX_API_CHECK_SOLVER(s, "hexcg_node_info");
  hx_gs gs = hx_disc_gs(s->d);
  const int64_t ng = hx_gs_num_local(gs), no = hx_gs_num_owned(gs);
  if (xyz) {
    const double *X, *Y, *Z;
    const int err = hx_disc_coords(s->d, &X, &Y, &Z);
    if (err) return hx_api_fail(err);
    const int32_t *map = hx_gs_map_host(gs);
    for (int64_t i = 0; i < hx_gs_num_l(gs); i++)
      if (map[i] >= 0) xyz[3 * map[i]] = X[i], xyz[3 * map[i] + 1] = Y[i], xyz[3 * map[i] + 2] = Z[i];
  }
  if (global_id) {
    const int64_t *ids = hx_gs_global_ids(gs);
    for (int64_t i = 0; i < ng; i++) global_id[i] = ids[i] - 1;
  }
  if (owned)
    for (int64_t i = 0; i < ng; i++) owned[i] = i < no;
  hx_api_clear();
  return HEXCG_OK;
}

int hexcg_node_dirichlet(const hexcg_solver *s, int8_t *flag) {
  HX_API_CHECK_SOLVER(s, "hexcg_node_dirichlet");
  if (!flag) return hx_api_arg("%s: flag is NULL", "hexcg_node_dirichlet");
  hx_gs gs = hx_disc_gs(s->d);
  const int64_t ng = hx_gs_num_local(gs), nm = hx_gs_num_masked(gs);
  memset(flag, 0, (size_t)ng);
  if (nm > 0) {
    int32_t *idx = NULL;
    int err = HX_ALLOC(&idx, nm);
    if (!err) err = hx_mem_to_host(s->b, idx, hx_gs_masked_idx(gs), sizeof(int32_t) * (size_t)nm);
    for (int64_t j = 0; !err && j < nm; j++) flag[idx[j]] = 1;
    free(idx);
    if (err) return hx_api_fail(err);
  }
  hx_api_clear();
  return HEXCG_OK;
}

int hexcg_describe(const hexcg_solver *s, int *order, int64_t *num_elements, char *pc, size_t len) {
  HX_API_CHECK_SOLVER(s, "hexcg_describe");
  if (order) *order = s->order;
  if (num_elements) *num_elements = hx_mesh_num_global_elements(s->m);
  if (pc && len) hx_pc_view(s->pc, pc, len);
  hx_api_clear();
  return HEXCG_OK;
}

/* ------------------------------------------------------------ settings */
int hexcg_set_dirichlet(hexcg_solver *s, const double *g) {
  HX_API_CHECK_SOLVER(s, "hexcg_set_dirichlet");
  if (!g) {
    free(s->g_user), s->g_user = NULL;
    hx_api_clear();
    return HEXCG_OK;
  }
  const int64_t ng = hx_gs_num_local(hx_disc_gs(s->d));
  if (!s->g_user && HX_ALLOC(&s->g_user, ng > 0 ? ng : 1)) return hx_api_fail(HX_ERR_MEM);
  memcpy(s->g_user, g, sizeof(double) * (size_t)ng);
  hx_api_clear();
  return HEXCG_OK;
}

int hexcg_set_tolerance(hexcg_solver *s, double rtol, int max_iterations) {
  HX_API_CHECK_SOLVER(s, "hexcg_set_tolerance");
  char what[96];
  if (!(rtol > 0.0 && rtol < 1.0) || max_iterations <= 0) {
    snprintf(what, sizeof what, "rtol %g, max_iterations %d", rtol, max_iterations);
    return hx_api_arg("hexcg_set_tolerance: %s: give 0 < rtol < 1 and max_iterations > 0", what);
  }
  s->po.rtol = rtol, s->po.max_iterations = max_iterations;
  hx_api_clear();
  return HEXCG_OK;
}

int hexcg_set_shift(hexcg_solver *s, double shift) {
  HX_API_CHECK_SOLVER(s, "hexcg_set_shift");
  if (!(shift >= 0.0) || !isfinite(shift)) {
    char what[64];
    snprintf(what, sizeof what, "%g", shift);
    return hx_api_arg("hexcg_set_shift: shift %s: give a finite shift >= 0", what);
  }
  hx_api_saved sv;
  hx_api_enter(s, &sv);
  int err = shift == s->shift ? HX_SUCCESS : hx_api_set_shift(s, shift);
  err = hx_error_agree(s->comm, err);
  const int st = hx_api_fail(err);
  hx_api_leave(&sv);
  return st;
}
