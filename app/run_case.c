/* The run driver of `hexcg run`: case -> mesh -> problem (the case
 * translated: problem/) -> discretization -> PCG -> output files (see
 * app/hx_run.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_problem.h"
#include "hx_run.h"
#include "hx_solver.h"

void hx_run_monitor_cb(void *ctx, int it, double rnorm, double rel) {
  hx_run_monitor *m = (hx_run_monitor *)ctx;
  if (m->hist) hx_history_append(m->hist, it, rnorm, rel, hx_wtime() - m->t0);
  if (m->prog) hx_progress_update(m->prog, it, rnorm, rel);
}

void hx_run_pcg_opts(const hx_case *cs, hx_run_monitor *mon, hx_pcg_opts *po) {
  hx_api_pcg_opts(cs, po);
  po->monitor = hx_run_monitor_cb;
  po->monitor_ctx = mon;
}

/* an expression at a time t (time-dependent runs) */
double hx_run_texpr_fn(const void *ctx, double x, double y, double z) {
  const hx_run_texpr *c = (const hx_run_texpr *)ctx;
  return hx_expr_eval_t(c->e, x, y, z, c->t);
}
void hx_run_texpr_fn_n(const void *ctx, size_t n, const double *x, const double *y, const double *z,
                       double *out) {
  const hx_run_texpr *c = (const hx_run_texpr *)ctx;
  hx_expr_eval_array_t(c->e, n, x, y, z, c->t, out);
}


/* The objects and host arrays of one run, freed by run_case on every path,
 * and what the phases below hand each other. */
typedef struct {
  hx_app_ctx *ctx;
  const hx_case *cs;
  hx_run_result *res;
  hexcg_solver s;      /* the library's solver (api/): backend, mesh, problem, disc, preconditioner */
  hx_run_monitor mon;
  double *hf, *hg, *hu, *hex, *hbn, *hu0; /* host arrays */
  hx_solve_result dr;
  double t_start, t_setup, t_io;
  double time;  /* time-dependent runs: the time phase_data evaluates the data at */
  double shift; /* ... and what the Helmholtz coefficient gets added (beta0 / dt) */
  const char *restart, *final_dir; /* hx_run_case_time */
  int pc_reported;                 /* report_pc done */
  hx_checkpoint_mesh_id *mid;      /* a dry run of --restart: the mesh's identity (NULL: not wanted) */
  hx_run_columns cols;             /* several right-hand sides (k 0: one; app/run_columns.c) */
} run_state;

/* The discretisation with lambda + st->shift (problem/: coefficients,
 * Dirichlet and Robin tags, the null space, the components) and the
 * preconditioner, through the library's call (api/). */
_Static_assert(HX_COMPONENTS_LISTED == HX_PROBLEM_COMPONENTS_LISTED &&
                   sizeof(((hx_run_result *)0)->components_yaml) == sizeof(((hx_problem_components *)0)->yaml),
               "summary.yaml's component list is problem/'s");
static int phase_disc(run_state *st) {
  HX_CALL(hx_api_build(&st->s, st->shift)); /* the disc and the preconditioner (set up at the solve) */
  const hx_problem_components *pc = hx_problem_get_components(st->s.prob);
  st->res->components = pc->n, st->res->components_floating = pc->floating;
  memcpy(st->res->components_yaml, pc->yaml, sizeof pc->yaml);
  st->t_setup = hx_timer_get(HX_T_MESH) + hx_disc_setup_time(st->s.d);
  return HX_SUCCESS;
}

/* The case's data at the GLL nodes at st->time (problem/: right-hand side,
 * exact solution checked, Dirichlet values, Neumann loads), the initial
 * guess; values that are not finite at some node are refused (case
 * position and the node), agreed across ranks before the next collective
 * step. */
static int phase_data(run_state *st) {
  const hx_case *cs = st->cs;
  MPI_Comm comm = st->ctx->comm;
  hx_disc d = st->s.d;
  /* a time loop evaluates the exact solution where it writes it */
  const int flags = cs->problem.exact && !cs->time.enabled ? HX_PROBLEM_DATA_EXACT : 0;
  HX_CALL(hx_problem_data(st->s.prob, d, st->time, flags, &st->hf, &st->hg, &st->hbn));
  if (cs->problem.nrhs > 1) HX_CALL(hx_run_columns_data(comm, cs, d, &st->hf, &st->cols)); /* steady only */
  if (cs->solver.initial_guess && !cs->time.enabled) {
    const int64_t nl = hx_disc_num_l(d);
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
    HX_CALL(HX_ALLOC(&st->hu0, nl));
    const double t = hx_wtime();
    HX_CALL(hx_io_read_solution_at(comm, cs->solver.initial_guess, cs->order, hx_disc_num_elements(d),
                                   hx_mesh_element_global_ids(st->s.m), X, Y, Z, st->hu0));
    st->t_io += hx_wtime() - t;
    HX_CALL(hx_io_agree_error(
        comm, hx_case_check_finite(cs, "solver.initial_guess", NULL, (size_t)nl, X, Y, Z, st->hu0)));
  }
  /* a steady run needs the coordinates again only for its output (computed
   * again there); a time loop evaluates its data at every step */
  if (!cs->time.enabled) hx_disc_coords_release(d);
  return HX_SUCCESS;
}

/* Several right-hand sides: block PCG on the columns (no monitor: no
 * history, no progress lines); the solution of column 0 is st->hu. */
static int solve_columns(run_state *st) {
  HX_CALL(hx_run_columns_solve(&st->s, st->cs, &st->cols, st->hg, st->hbn, &st->dr, st->res));
  st->hu = st->cols.hu[0], st->cols.hu[0] = NULL;
  st->t_setup += st->dr.t_pc_setup;
  st->res->dofs = st->dr.dofs;
  return HX_SUCCESS;
}

/* The preconditioner and PCG, with history and progress lines. */
static int phase_solve(run_state *st) {
  const hx_case *cs = st->cs;
  if (st->cols.k) return solve_columns(st);
  hx_pcg_opts po;
  hx_run_pcg_opts(cs, &st->mon, &po);
  HX_CALL(hx_history_create(&st->mon.hist));
  HX_CALL(hx_progress_create(cs->output.progress_every, cs->output.progress_seconds, cs->solver.tol, stdout,
                             &st->mon.prog));
  st->mon.t0 = hx_wtime();
  /* the data arrays are freed once the right-hand side is formed and the
   * solution's array is allocated after PCG: the preconditioner's setup and
   * PCG, where the peak is, run without them */
  HX_CALL(hx_api_solve(&st->s, &st->hf, &st->hg, &st->hbn, st->s.exact, &po, st->hu0, &st->hu, &st->dr));
  char pcview[512];
  hx_pc_view(st->s.pc, pcview, sizeof pcview);
  hx_log(HX_LOG_VERBOSE, "preconditioner: %s\n", pcview);
  const hx_solve_result *dr = &st->dr;
  hx_progress_finish(st->mon.prog, dr->pcg.iterations, dr->pcg.rnorm, dr->pcg.rel);
  st->t_setup += dr->t_rhs + dr->t_pc_setup;

  hx_run_result *res = st->res;
  res->dofs = dr->dofs;
  res->iterations = dr->pcg.iterations;
  res->converged = dr->pcg.reason > 0;
  snprintf(res->reason, sizeof res->reason, "%s", hx_reason_name(dr->pcg.reason));
  res->residual0 = dr->pcg.r0norm;
  res->residual = dr->pcg.rnorm;
  res->rel_residual = dr->pcg.rel;
  res->exact_known = dr->exact_known;
  res->error_l2 = dr->err_l2;
  res->error_max = dr->err_max;
  res->nullspace = dr->nullspace;
  res->nullspace_defect = dr->nullspace_defect, res->exact_mean = dr->exact_mean;
  if (dr->nullspace) {
    hx_log(HX_LOG_NORMAL,
           "null space: pure Neumann, the constant projected out of the right-hand side and the "
           "preconditioned residuals; data defect |1.b|/(sqrt(N) |b|) = %.3e; solution shifted to zero mean\n",
           dr->nullspace_defect);
    if (dr->nullspace_defect > HX_NULLSPACE_WARN && hx_log_rank() == 0)
      hx_warn("the data of this pure Neumann problem are not compatible: the right-hand side has a part "
              "%.3e of its norm along the constant (more than %g), which was removed; check that int f + "
              "int_boundary g = 0 (docs/solver.md, \"Null space\")\n",
              dr->nullspace_defect, HX_NULLSPACE_WARN);
  }
  return HX_SUCCESS;
}

/* The solution file (and its exact solution, NULL: none) in dir. */
static int write_solution(run_state *st, const char *dir, const double *X, const double *Y, const double *Z,
                          const double *hu, const double *hex) {
  const hx_case *cs = st->cs;
  const int fp32 = cs->output.precision == HX_OUTPUT_FP32;
  if (cs->output.format == HX_OUTPUT_VTKHDF) /* one Lagrange hexahedron per element (ParaView) */
    HX_CALL(hx_io_write_vtkhdf(st->ctx->comm, dir, HX_VTKHDF_NAME, NULL, NULL, cs->output.fields, fp32,
                               cs->order, hx_disc_num_elements(st->s.d), hx_mesh_element_global_ids(st->s.m),
                               X, Y, Z, hu, hex, NULL));
  else
    HX_CALL(hx_io_write_solution_opts(st->ctx->comm, dir, cs->output.fields, fp32, cs->order,
                                      hx_disc_num_elements(st->s.d), hx_mesh_element_global_ids(st->s.m), X,
                                      Y, Z, hu, hex, NULL));
  return HX_SUCCESS;
}

/* History and solution files. */
static int phase_output(run_state *st) {
  const hx_case *cs = st->cs;
  const double t = hx_wtime();
  if (cs->output.history && st->mon.hist)
    HX_CALL(hx_history_write(st->mon.hist, st->ctx->comm, cs->output.dir));
  if (cs->output.solution) {
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(st->s.d, &X, &Y, &Z));
    if (cs->problem.exact && !st->hex) { /* the exact solution beside it (checked finite in phase_data) */
      const int64_t nl = hx_disc_num_l(st->s.d);
      HX_CALL(HX_ALLOC(&st->hex, nl > 0 ? nl : 1));
      hx_expr_eval_array_t(cs->problem.exact, (size_t)nl, X, Y, Z, st->time, st->hex);
    }
    HX_CALL(write_solution(st, cs->output.dir, X, Y, Z, st->hu, st->hex));
    if (st->cols.k) { /* every column in series/, solution.xdmf their collection (st->hex: work) */
      if (!st->hex) HX_CALL(HX_ALLOC(&st->hex, hx_disc_num_l(st->s.d) > 0 ? hx_disc_num_l(st->s.d) : 1));
      HX_CALL(hx_run_columns_output(st->ctx->comm, cs, st->s.m, st->s.d, &st->cols, st->hu, st->hex));
    }
  }
  st->t_io += hx_wtime() - t;
  return HX_SUCCESS;
}

/* The preconditioner's figures of summary.yaml (final once the solve is
 * done: a steady run takes them and frees the preconditioner before its
 * output, which then does not add its buffers to the preconditioner's
 * memory). */
static int report_pc(run_state *st) {
  if (st->pc_reported) return HX_SUCCESS;
  MPI_Comm comm = st->ctx->comm;
  hx_run_result *res = st->res;
  hx_pc_stats pst;
  hx_pc_get_stats(st->s.pc, &pst);
  hx_asm_stats ast;
  hx_asm_get_stats(st->s.pc, &ast);
  hx_pc_view(st->s.pc, res->pc_view, sizeof res->pc_view);
  res->pc_two_level = ast.applies > 0 && ast.coarse;
  res->pc_overlap = ast.overlap;
  double ploc[5] = {pst.t_setup, pst.applies ? pst.t_apply / (double)pst.applies : 0.0, ast.t_fine,
                    ast.t_coarse, ast.overlap_efficiency};
  HX_CALL(hx_reduce_max(comm, ploc, 5));
  res->pc_setup = ploc[0], res->pc_apply = ploc[1], res->pc_fine = ploc[2], res->pc_coarse = ploc[3];
  res->pc_overlap_efficiency = ploc[4];
  HX_CALL(hx_pc_report(st->s.pc, comm, &res->pc_report)); /* summary.yaml: preconditioner.report */
  st->pc_reported = 1;
  return HX_SUCCESS;
}

/* The figures of summary.yaml (max over ranks where they are times) and the
 * closing log lines. */
static int phase_report(run_state *st) {
  MPI_Comm comm = st->ctx->comm;
  hx_run_result *res = st->res;
  const hx_solve_result *dr = &st->dr;
  hx_disc d = st->s.d;
  const int32_t E = hx_disc_num_elements(d);
  HX_CALL(report_pc(st));
  {
    int32_t na, ns, ng;
    double bpe;
    hx_ax_storage_counts(hx_disc_ax(d), &na, &ns, &ng);
    hx_ax_cost(hx_disc_ax(d), &bpe, NULL);
    double c[4] = {na, ns, ng, bpe * E};
    HX_CALL(hx_reduce_sum(comm, c, 4));
    res->op_affine = (int64_t)c[0], res->op_split = (int64_t)c[1], res->op_general = (int64_t)c[2];
    res->op_bytes_per_dof = c[3] / (double)(res->dofs > 0 ? res->dofs : 1);
    res->op_fp64_residuals = dr->pcg.replacements + dr->exact_residuals;
    res->op_refinements = dr->refinements;
    double te = dr->pcg.t_replace + dr->t_refine;
    HX_CALL(hx_reduce_max(comm, &te, 1));
    res->op_t_exact = te;
  }
  /* the phases of the rank whose run took longest: one rank's times add up
   * (maxima over ranks of each phase need not); the peak memory is the
   * maximum over ranks */
  double loc[9] = {st->t_setup,        dr->pcg.t_operator, dr->pcg.t_precond, dr->pcg.t_vector, dr->pcg.t_reduction,
                   dr->pcg.t_exchange, st->t_io,           dr->t_solve,       hx_wtime() - st->t_start};
  HX_CALL(hx_reduce_slowest(comm, loc[8], loc, 9, NULL));
  res->t_setup = loc[0], res->t_operator = loc[1], res->t_precond = loc[2], res->t_vector = loc[3];
  res->t_reduction = loc[4], res->t_exchange = loc[5], res->t_io = loc[6], res->t_solve = loc[7];
  res->t_total = loc[8];
  double peak = (double)hx_peak_rss_bytes();
  HX_CALL(hx_reduce_max(comm, &peak, 1));
  res->peak_mem_bytes = peak;
  { /* the case check's estimate for the rank with the most elements, beside it */
    double el = (double)E;
    HX_CALL(hx_reduce_max(comm, &el, 1));
    res->mem_estimate_bytes =
        hx_case_mem_estimate(st->cs, el, hx_api_pc_node_bytes(st->s.pcc, st->cs->order));
  }

  const char *pct = hx_case_pc_type(st->cs);
  hx_log(HX_LOG_NORMAL,
         "PCG (%s): %d iterations, %s; per iteration: %d allreduces, %d vector passes over G-vectors "
         "(+ operator: scatter, element kernel, gather, exchange)\n",
         pct ? pct : "?", dr->pcg.iterations, hx_reason_name(dr->pcg.reason),
         dr->pcg.allreduces_per_iteration, dr->pcg.vector_passes_per_iteration);
  /* every PCG start (each solve, each time step, a restart of auto) applies
   * the preconditioner once before its first iteration (a time step of 0
   * iterations still makes it): the per-apply figure counts them, the time
   * per iteration carries them (issue 54 point 5) */
  const int starts = dr->pcg.starts > 0 ? dr->pcg.starts : 1;
  const double applies = (double)dr->pcg.iterations + starts;
  if (dr->pcg.iterations > 0)
    hx_log(HX_LOG_NORMAL,
           "time per iteration: %.3e s (the solve's time / %d iterations, %d PCG start%s included: each a residual "
           "and a preconditioner apply); per iteration: operator %.3e (exchange %.3e), vector %.3e, reductions "
           "%.3e; preconditioner %.3e per apply (%.0f applies)\n",
           dr->t_solve / dr->pcg.iterations, dr->pcg.iterations, starts, starts == 1 ? "" : "s",
           dr->pcg.t_operator / dr->pcg.iterations, dr->pcg.t_exchange / dr->pcg.iterations,
           dr->pcg.t_vector / dr->pcg.iterations, dr->pcg.t_reduction / dr->pcg.iterations,
           dr->pcg.t_precond / applies, applies);
  return HX_SUCCESS;
}

/* The time loop's callbacks (hx_run_time_env): the data at time t, and the
 * operator and preconditioner with another shift. */
static int time_eval(void *arg, double t) {
  run_state *st = (run_state *)arg;
  st->time = t;
  HX_CALL(phase_data(st));
  return HX_SUCCESS;
}

/* A new shift: the discretisation's and the preconditioner's changed in
 * place (bit for bit what a new setup at that shift holds: problem/'s
 * discs add the shift themselves); where the preconditioner type cannot
 * (HX_ERR_UNSUPPORTED: auto's smoother trial, FP32 choices that the shift
 * would change) both are made again. */
static int time_reshift(void *arg, double shift) {
  run_state *st = (run_state *)arg;
  HX_CALL(hx_api_set_shift(&st->s, shift));
  st->shift = shift;
  return HX_SUCCESS;
}

/* A time-dependent run after the mesh: the operator with the shift of the
 * first step's BDF order, the time loop (app/run_time.c), the report. */
static int run_time(run_state *st, const char *restart, const char *final_dir) {
  hx_run_time_env env;
  memset(&env, 0, sizeof env);
  env.ctx = st->ctx, env.cs = st->cs, env.res = st->res, env.restart = restart, env.final_dir = final_dir;
  env.m = st->s.m, env.d = &st->s.d, env.pc = &st->s.pc;
  env.eval = time_eval, env.reshift = time_reshift, env.arg = st;
  env.hf = &st->hf, env.hg = &st->hg, env.hbn = &st->hbn, env.hex = &st->hex;
  env.t_io = &st->t_io, env.dr = &st->dr;
  /* the order of the first step: exact start-up data, or a restart, may give
   * the full order at once; hx_run_time reshifts if not */
  const hx_case *cs = st->cs;
  const int k = cs->time.scheme + 1;
  st->shift = env.shift = hx_run_bdf_shift(cs->time.initial_kind == HX_TIME_INIT_EXACT || restart ? k : 1, cs->time.dt);
  HX_CALL(phase_disc(st));
  env.setups = 1;
  HX_CALL(hx_run_time(&env));
  if (st->res->time.complete) return HX_SUCCESS; /* --restart of a finished run: nothing to report */
  if (env.solved == 0) st->pc_reported = 1; /* outputs rebuilt from a checkpoint: the preconditioner never ran */
  st->t_setup += st->dr.t_pc_setup;
  HX_CALL(phase_report(st));
  return HX_SUCCESS;
}

/* A dry run (hexcg run --dry-run) after the mesh: the checks the setup
 * makes before the first iteration that the case alone does not show,
 * made without building the discretisation (a dry run must stay cheap:
 * on a login node, for a case sized for the job): kappa > 0 and lambda >=
 * 0 at the GLL nodes of the order and of pmg's coarse order 1 and given
 * levels (the orders the run evaluates them at; the middle orders of
 * levels: auto only the run checks), the components. The materials'
 * coefficients and pmg's levels against the order are checked before
 * (phase_mesh, app/cmd_run.c). */
static int check_setup(run_state *st) {
  const hx_case *cs = st->cs;
  if (cs->time.enabled) /* lambda + beta0/dt of the first step */
    st->shift =
        hx_run_bdf_shift(cs->time.initial_kind == HX_TIME_INIT_EXACT ? cs->time.scheme + 1 : 1, cs->time.dt);
  HX_CALL(hx_problem_check_coefs(st->s.prob, cs->order, st->shift));
  int lv[HX_PC_LEVELS_MAX], n = 0;
  HX_CALL(hx_pc_config_levels(st->s.pcc, cs->order, lv, &n));
  for (int i = 1; i < n; i++) HX_CALL(hx_problem_check_coefs(st->s.prob, lv[i], st->shift));
  HX_CALL(hx_problem_check_components(st->s.prob, st->shift)); /* several bodies, one floating */
  return HX_SUCCESS;
}

/* The phases in order; check_only: a dry run stops after the mesh and
 * check_setup. */
static int run(run_state *st, int check_only) {
  st->t_start = hx_wtime();
  st->res->ranks = st->ctx->size;
  snprintf(st->res->backend, sizeof st->res->backend, "%s", hx_case_backend_name(st->cs->backend));
  st->res->order = st->cs->order;
  /* the backend, the mesh checked against the case, the problem: the
   * library's setup (api/case.c) */
  HX_CALL(hx_api_setup_case(&st->s, st->cs, st->res));
  if (check_only) {
    HX_CALL(check_setup(st));
    if (st->mid) HX_CALL(hx_run_mesh_parts(st->ctx->comm, st->s.m, st->mid));
    return HX_SUCCESS;
  }
  if (st->cs->time.enabled) return run_time(st, st->restart, st->final_dir);
  HX_CALL(phase_disc(st));
  HX_CALL(phase_data(st));
  HX_CALL(phase_solve(st));
  HX_CALL(report_pc(st));
  HX_CALL(hx_pc_destroy(&st->s.pc));
  HX_CALL(phase_output(st));
  HX_CALL(phase_report(st));
  return HX_SUCCESS;
}

static int run_case(hx_app_ctx *ctx, const hx_case *cs, int check_only, hx_run_result *res, const char *restart,
                    const char *final_dir, hx_checkpoint_mesh_id *mid) {
  run_state st;
  memset(&st, 0, sizeof st);
  st.ctx = ctx, st.cs = cs, st.res = res, st.restart = restart, st.final_dir = final_dir, st.mid = mid;
  st.s.comm = ctx->comm, st.s.rank = ctx->rank, st.s.size = ctx->size;
  hx_timer_reset_all();
  int ierr = run(&st, check_only);
  free(st.hf), free(st.hg), free(st.hbn), free(st.hu), free(st.hex), free(st.hu0);
  hx_run_columns_free(&st.cols);
  hx_history_destroy(&st.mon.hist);
  hx_progress_destroy(&st.mon.prog);
  hx_api_free(&st.s);
  if (ierr) hx_opt_free(&res->pc_report);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_run_case(hx_app_ctx *ctx, const hx_case *cs, hx_run_result *res) {
  HX_CALL(run_case(ctx, cs, 0, res, NULL, NULL, NULL));
  return HX_SUCCESS;
}

int hx_run_case_time(hx_app_ctx *ctx, const hx_case *cs, const char *restart, const char *final_dir,
                     hx_run_result *res) {
  HX_CALL(run_case(ctx, cs, 0, res, restart, final_dir, NULL));
  return HX_SUCCESS;
}

int hx_run_check(hx_app_ctx *ctx, const hx_case *cs, hx_checkpoint_mesh_id *mid) {
  hx_run_result res;
  memset(&res, 0, sizeof res);
  HX_CALL(run_case(ctx, cs, 1, &res, NULL, NULL, mid));
  return HX_SUCCESS;
}
