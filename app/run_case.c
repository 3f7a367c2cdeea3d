/* The run driver of `hexcg run`: case -> mesh -> discretization -> PCG ->
 * output files (see app/hx_run.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_run.h"
#include "hx_solver.h"

/* what the case's preconditioner adds per GLL node (precond/ estimates it) */
static double pc_node_bytes(const hx_case *cs) {
  double b = 0.0;
  if (hx_pc_options_mem_per_node(cs->preconditioner.opts, cs->order, &b)) hx_error_clear(), b = 0.0;
  return b;
}

typedef struct {
  hx_history hist;
  hx_progress prog;
  double t0;
} run_monitor;

static void monitor_cb(void *ctx, int it, double rnorm, double rel) {
  run_monitor *m = (run_monitor *)ctx;
  if (m->hist) hx_history_append(m->hist, it, rnorm, rel, hx_wtime() - m->t0);
  if (m->prog) hx_progress_update(m->prog, it, rnorm, rel);
}

static double expr_fn(const void *ctx, double x, double y, double z) {
  return hx_expr_eval((const hx_expr *)ctx, x, y, z);
}

static double const_fn(const void *ctx, double x, double y, double z) {
  (void)x, (void)y, (void)z;
  return *(const double *)ctx;
}

hx_partitioner hx_run_partitioner(const hx_case *cs) {
  switch (cs->mesh.partitioner) {
    case HX_CASE_PART_METIS: return HX_PART_METIS;
    case HX_CASE_PART_RCB: break;
  }
  return HX_PART_RCB;
}

static int build_mesh(const hx_app_ctx *ctx, const hx_case *cs, hx_mesh *m) {
  const hx_partitioner part = hx_run_partitioner(cs);
  if (cs->mesh.type == HX_CASE_MESH_GMSH) {
    HX_CALL(hx_mesh_create_gmsh(ctx->comm, cs->mesh.file, part, m));
    return HX_SUCCESS;
  }
  hx_mesh_box_opts o;
  hx_mesh_box_opts_default(&o);
  o.nx = cs->mesh.elements[0], o.ny = cs->mesh.elements[1], o.nz = cs->mesh.elements[2];
  memcpy(o.extent, cs->mesh.extent, sizeof o.extent);
  o.kershaw_eps = cs->mesh.type == HX_CASE_MESH_KERSHAW ? cs->mesh.eps : 1.0;
  o.deform = cs->mesh.deform > 0;
  if (o.deform) o.deform_amplitude = cs->mesh.deform;
  o.partitioner = part;
  HX_CALL(hx_mesh_create_box(ctx->comm, &o, m));
  return HX_SUCCESS;
}

/* per mesh tag: index of the case boundary entry naming it, or -1 */
static int tag_entries(const hx_case *cs, hx_mesh m, int *entry) {
  const int nt = hx_mesh_num_tags(m);
  for (int t = 0; t < nt; t++) {
    entry[t] = -1;
    for (int bi = 0; bi < cs->problem.nboundary && entry[t] < 0; bi++)
      for (int k = 0; k < cs->problem.boundary[bi].ntags; k++)
        if (!strcmp(cs->problem.boundary[bi].tags[k], hx_mesh_tag_name(m, t))) entry[t] = bi;
  }
  return HX_SUCCESS;
}

typedef struct {
  const hx_case *cs;
  const hx_case_boundary *bc;
} bc_ctx;

static double bc_value(const hx_case *cs, const hx_case_boundary *bc, double x, double y, double z);
static double bc_fn(const void *ctx, double x, double y, double z) {
  const bc_ctx *c = (const bc_ctx *)ctx;
  return bc_value(c->cs, c->bc, x, y, z);
}

static double bc_value(const hx_case *cs, const hx_case_boundary *bc, double x, double y, double z) {
  switch (bc->value_kind) {
    case HX_BCV_NUMBER: return bc->value;
    case HX_BCV_EXPR: return hx_expr_eval(bc->expr, x, y, z);
    case HX_BCV_EXACT: return hx_expr_eval(cs->problem.exact, x, y, z);
  }
  return 0.0;
}

/* The objects and host arrays of one run, freed by run_case on every path,
 * and what the phases below hand each other. */
typedef struct {
  hx_app_ctx *ctx;
  const hx_case *cs;
  hx_run_result *res;
  hx_backend b;
  hx_mesh m;
  hx_disc d;
  hx_pc pc;
  run_monitor mon;
  int nt, nmat;                                            /* mesh tags and materials */
  hx_field *kfield, *lfield;           /* per material: expression coefficients (fn NULL: constant) */
  const char **ksrc, **lsrc;           /* per material: case position of the value (borrowed from cs) */
  double *kappa, *lambda, *hf, *hg, *hu, *hex, *hbn, *hu0; /* host arrays */
  int *entry, *dtag;
  hx_solve_result dr;
  double t_start, t_setup, t_io;
} run_state;

/* The backend (cuda: each rank takes the device of its node-local rank). */
static int phase_backend(run_state *st) {
  const hx_case *cs = st->cs;
  int ierr = hx_backend_create_comm(hx_case_backend_name(cs->backend), st->ctx->comm, &st->b);
  if (ierr == HX_ERR_NO_DEVICE) {
    /* the case asks for what this build or machine cannot do: an input
     * error (exit 2, outputs removed), with the fix */
    char why[1024];
    snprintf(why, sizeof why, "%s", hx_error_message());
    hx_error_clear();
    return HX_ERROR(HX_ERR_INPUT, "%s: backend: %s; use 'backend: cpu' (or --set backend=cpu)", cs->path,
                    why);
  }
  HX_CALL(ierr);
  HX_CALL(hx_backend_devices_describe(st->b, st->ctx->comm, st->res->devices, sizeof st->res->devices));
  if (st->res->devices[0]) hx_log(HX_LOG_NORMAL, "devices (rank -> GPU):\n%s", st->res->devices);
  return HX_SUCCESS;
}

/* The mesh, built or read and partitioned, checked against the case: its
 * size (Gmsh), tags, materials and Jacobians. */
static int phase_mesh(run_state *st) {
  const hx_case *cs = st->cs;
  hx_timer_start(HX_T_MESH);
  int ierr = build_mesh(st->ctx, cs, &st->m);
  hx_timer_stop(HX_T_MESH);
  HX_CALL(ierr);
  hx_mesh m = st->m;
  st->res->elements = hx_mesh_num_global_elements(m);
  if (cs->mesh.type == HX_CASE_MESH_GMSH) /* its size is known now */
    HX_CALL(hx_case_check_memory(st->ctx->comm, cs, st->res->elements, HX_CASE_MEM_RUN, pc_node_bytes(cs)));

  /* names the case must match: boundary tags and materials */
  const int nt = st->nt = hx_mesh_num_tags(m), nmat = st->nmat = hx_mesh_num_materials(m);
  const char **names;
  HX_CALL(HX_ALLOC(&names, (nt > nmat ? nt : nmat) + 1));
  for (int t = 0; t < nt; t++) names[t] = hx_mesh_tag_name(m, t);
  ierr = hx_case_check_tags(cs, nt, names);
  if (!ierr) {
    for (int i = 0; i < nmat; i++) names[i] = hx_mesh_material_name(m, i);
    ierr = hx_case_check_materials(cs, nmat, names);
  }
  free(names);
  HX_CALL(ierr);

  double jmin, jmax, hmin, hmax;
  HX_CALL(hx_mesh_check_jacobian(m, cs->order, &jmin, &jmax, &hmin, &hmax));
  hx_log(HX_LOG_VERBOSE, "mesh: %lld elements, Jacobian in [%.3e, %.3e], edge length in [%.3e, %.3e]\n",
         (long long)st->res->elements, jmin, jmax, hmin, hmax);
  return HX_SUCCESS;
}

/* Coefficients per material, Dirichlet tags, the discretisation. */
static int phase_disc(run_state *st) {
  const hx_case *cs = st->cs;
  hx_mesh m = st->m;
  const int nt = st->nt, nmat = st->nmat;
  HX_CALL(HX_ALLOC(&st->kappa, nmat + 1));
  HX_CALL(HX_ALLOC(&st->lambda, nmat + 1));
  HX_CALL(HX_ALLOC(&st->entry, nt + 1));
  HX_CALL(HX_ALLOC(&st->dtag, nt + 1));
  HX_CALL(HX_ALLOC(&st->kfield, nmat + 1));
  HX_CALL(HX_ALLOC(&st->lfield, nmat + 1));
  HX_CALL(HX_ALLOC(&st->ksrc, nmat + 1));
  HX_CALL(HX_ALLOC(&st->lsrc, nmat + 1));
  int nfield = 0, lambda_any = 0;
  for (int i = 0; i < nmat; i++) {
    /* kappa and lambda of material i: a number, or an expression that the
     * discretisation evaluates (and checks) at the GLL nodes of each level */
    for (int c = 0; c < 2; c++) {
      const char *mn = hx_mesh_material_name(m, i);
      const hx_expr *e = NULL;
      double *val = c ? &st->lambda[i] : &st->kappa[i];
      const int found = hx_case_coef_get(cs, c, mn, val, &e, c ? &st->lsrc[i] : &st->ksrc[i]) == 0;
      HX_CHECK(found, HX_ERR_INPUT, "%s: problem.%s gives no value for material '%s' of the mesh", cs->path,
               c ? "lambda" : "kappa", mn);
      if (e && hx_expr_is_constant(e)) *val = hx_expr_eval(e, 0.0, 0.0, 0.0), e = NULL;
      if (e) {
        hx_field *f = c ? &st->lfield[i] : &st->kfield[i];
        f->fn = expr_fn, f->ctx = e;
        nfield++;
      } else {
        const char *src = c ? st->lsrc[i] : st->ksrc[i];
        HX_CHECK(c ? *val >= 0.0 && isfinite(*val) : *val > 0.0 && isfinite(*val), HX_ERR_INPUT,
                 "%s: %s = %g must be %s", src ? src : cs->path, c ? "lambda" : "kappa", *val,
                 c ? "finite and >= 0" : "finite and > 0");
      }
      if (c) lambda_any |= e || *val > 0.0;
    }
  }
  HX_CALL(tag_entries(cs, m, st->entry));
  int ndirichlet = 0;
  for (int t = 0; t < nt; t++) {
    st->dtag[t] = st->entry[t] >= 0 && cs->problem.boundary[st->entry[t]].type == HX_BC_DIRICHLET;
    ndirichlet += st->dtag[t];
  }
  HX_CHECK(ndirichlet > 0 || lambda_any, HX_ERR_INPUT,
           "%s: pure Neumann problem (no Dirichlet boundary and lambda = 0): the operator is singular "
           "and hexcg does not solve it; give a Dirichlet boundary in problem.boundary or lambda > 0",
           cs->path);

  hx_disc_opts o = hx_disc_opts_default();
  o.p = cs->order, o.kappa = st->kappa, o.lambda = st->lambda, o.dirichlet_tag = st->dtag;
  o.geometry = cs->op.geometry ? HX_AX_GEO_SPLIT : HX_AX_GEO_FP64;
  if (nfield) {
    o.kappa_field = st->kfield, o.lambda_field = st->lfield;
    o.kappa_src = st->ksrc, o.lambda_src = st->lsrc;
  }
  hx_timer_start(HX_T_SETUP);
  const int ierr = hx_disc_create(m, st->b, &o, &st->d);
  hx_timer_stop(HX_T_SETUP);
  HX_CALL(ierr);
  st->t_setup = hx_timer_get(HX_T_MESH) + hx_disc_setup_time(st->d);
  return HX_SUCCESS;
}

/* The case's data at the GLL nodes: right-hand side, exact solution,
 * Dirichlet values, Neumann loads, the initial guess; values that are not
 * finite at some node are refused (case position and the node), agreed
 * across ranks before the next collective step. */
static int phase_data(run_state *st) {
  const hx_case *cs = st->cs;
  MPI_Comm comm = st->ctx->comm;
  hx_disc d = st->d;
  hx_mesh m = st->m;
  const int64_t nl = hx_disc_num_l(d);
  const double *X, *Y, *Z;
  hx_disc_coords(d, &X, &Y, &Z);
  HX_CALL(HX_ALLOC(&st->hf, nl));
  HX_CALL(HX_ALLOC(&st->hg, nl));
  HX_CALL(HX_ALLOC(&st->hu, nl));
  hx_expr_eval_array(cs->problem.rhs, (size_t)nl, X, Y, Z, st->hf);
  int ferr = hx_case_check_finite(cs, "problem.rhs", cs->problem.rhs, (size_t)nl, X, Y, Z, st->hf);
  if (cs->problem.exact) {
    HX_CALL(HX_ALLOC(&st->hex, nl));
    hx_expr_eval_array(cs->problem.exact, (size_t)nl, X, Y, Z, st->hex);
    if (!ferr)
      ferr = hx_case_check_finite(cs, "problem.exact", cs->problem.exact, (size_t)nl, X, Y, Z, st->hex);
  }
  HX_CALL(hx_io_agree_error(comm, ferr));
  char key[64];
  /* Dirichlet values per Dirichlet tag */
  for (int t = 0; t < st->nt; t++) {
    if (st->entry[t] < 0 || !st->dtag[t]) continue;
    bc_ctx c = {cs, &cs->problem.boundary[st->entry[t]]};
    hx_field g = {bc_fn, &c};
    HX_CALL(hx_disc_dirichlet_values(d, t, g, st->hg));
    snprintf(key, sizeof key, "problem.boundary.%d.value", st->entry[t]);
    if (!ferr) ferr = hx_case_check_finite(cs, key, c.bc->expr, (size_t)nl, X, Y, Z, st->hg);
  }
  HX_CALL(hx_io_agree_error(comm, ferr));
  /* Neumann loads: kappa du/dn = value on each Neumann tag */
  for (int t = 0; t < st->nt; t++) {
    if (st->entry[t] < 0 || st->dtag[t]) continue;
    const hx_case_boundary *bc = &cs->problem.boundary[st->entry[t]];
    HX_CHECK(bc->value_kind != HX_BCV_EXACT, HX_ERR_INPUT,
             "%s: boundary on tag '%s': a Neumann condition needs the flux kappa du/dn as its value "
             "(a number or an expression), not 'exact'",
             cs->path, hx_mesh_tag_name(m, t));
    if (bc->value_kind == HX_BCV_NUMBER && bc->value == 0.0) continue;
    if (!st->hbn) HX_CALL(HX_ALLOC(&st->hbn, nl));
    hx_field g = {bc->value_kind == HX_BCV_EXPR ? expr_fn : const_fn,
                  bc->value_kind == HX_BCV_EXPR ? (const void *)bc->expr : (const void *)&bc->value};
    HX_CALL(hx_disc_neumann_load(d, t, g, st->hbn));
    snprintf(key, sizeof key, "problem.boundary.%d.value", st->entry[t]);
    if (!ferr) ferr = hx_case_check_finite(cs, key, bc->expr, (size_t)nl, X, Y, Z, st->hbn);
  }
  HX_CALL(hx_io_agree_error(comm, ferr));
  if (cs->solver.initial_guess) {
    HX_CALL(HX_ALLOC(&st->hu0, nl));
    const double t = hx_wtime();
    HX_CALL(hx_io_read_solution_at(comm, cs->solver.initial_guess, cs->order, hx_disc_num_elements(d),
                                   hx_mesh_element_global_ids(m), X, Y, Z, st->hu0));
    st->t_io += hx_wtime() - t;
    HX_CALL(hx_io_agree_error(
        comm, hx_case_check_finite(cs, "solver.initial_guess", NULL, (size_t)nl, X, Y, Z, st->hu0)));
  }
  return HX_SUCCESS;
}

/* The preconditioner and PCG, with history and progress lines. */
static int phase_solve(run_state *st) {
  const hx_case *cs = st->cs;
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = cs->solver.tol;
  po.max_iterations = cs->solver.max_iterations;
  po.flexible = cs->solver.type == HX_CASE_SOLVER_FCG;
  po.single_reduction = cs->solver.type == HX_CASE_SOLVER_PCG1;
  po.monitor = monitor_cb;
  po.monitor_ctx = &st->mon;
  HX_CALL(hx_history_create(&st->mon.hist));
  HX_CALL(hx_progress_create(cs->output.progress_every, cs->output.progress_seconds, cs->solver.tol, stdout,
                             &st->mon.prog));
  st->mon.t0 = hx_wtime();
  hx_field exact = {cs->problem.exact ? expr_fn : NULL, cs->problem.exact};
  HX_CALL(hx_pc_create_from_options(st->d, cs->preconditioner.opts, &st->pc));
  HX_CALL(hx_solve(st->d, st->pc, st->hf, st->hg, st->hbn, exact, &po, st->hu0, st->hu, &st->dr));
  char pcview[512];
  hx_pc_view(st->pc, pcview, sizeof pcview);
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
  return HX_SUCCESS;
}

/* History and solution files. */
static int phase_output(run_state *st) {
  const hx_case *cs = st->cs;
  const double t = hx_wtime();
  if (cs->output.history) HX_CALL(hx_history_write(st->mon.hist, st->ctx->comm, cs->output.dir));
  if (cs->output.solution) {
    const double *X, *Y, *Z;
    hx_disc_coords(st->d, &X, &Y, &Z);
    HX_CALL(hx_io_write_solution(st->ctx->comm, cs->output.dir, cs->order, hx_disc_num_elements(st->d),
                                 hx_mesh_element_global_ids(st->m), X, Y, Z, st->hu, st->hex));
  }
  st->t_io += hx_wtime() - t;
  return HX_SUCCESS;
}

/* The figures of summary.yaml (max over ranks where they are times) and the
 * closing log lines. */
static int phase_report(run_state *st) {
  MPI_Comm comm = st->ctx->comm;
  hx_run_result *res = st->res;
  const hx_solve_result *dr = &st->dr;
  hx_disc d = st->d;
  const int32_t E = hx_disc_num_elements(d);
  double op_elem, op_exch, op_gs;
  hx_op_times(hx_disc_op(d), &op_elem, &op_exch, &op_gs);
  hx_pc_stats pst;
  hx_pc_get_stats(st->pc, &pst);
  hx_asm_stats ast;
  hx_asm_get_stats(st->pc, &ast);
  hx_pc_view(st->pc, res->pc_view, sizeof res->pc_view);
  res->pc_two_level = ast.applies > 0 && ast.coarse;
  res->pc_overlap = ast.overlap;
  double ploc[5] = {pst.t_setup, pst.applies ? pst.t_apply / (double)pst.applies : 0.0, ast.t_fine,
                    ast.t_coarse, ast.overlap_efficiency};
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, ploc, 5, MPI_DOUBLE, MPI_MAX, comm));
  res->pc_setup = ploc[0], res->pc_apply = ploc[1], res->pc_fine = ploc[2], res->pc_coarse = ploc[3];
  res->pc_overlap_efficiency = ploc[4];
  HX_CALL(hx_pc_report(st->pc, comm, &res->pc_report)); /* summary.yaml: preconditioner.report */
  {
    int32_t na, ns, ng;
    double bpe;
    hx_ax_storage_counts(hx_disc_ax(d), &na, &ns, &ng);
    hx_ax_cost(hx_disc_ax(d), &bpe, NULL);
    double c[4] = {na, ns, ng, bpe * E};
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, c, 4, MPI_DOUBLE, MPI_SUM, comm));
    res->op_affine = (int64_t)c[0], res->op_split = (int64_t)c[1], res->op_general = (int64_t)c[2];
    res->op_bytes_per_dof = c[3] / (double)(res->dofs > 0 ? res->dofs : 1);
    res->op_fp64_residuals = dr->pcg.replacements + dr->exact_residuals;
    res->op_refinements = dr->refinements;
    double te = dr->pcg.t_replace + dr->t_refine;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &te, 1, MPI_DOUBLE, MPI_MAX, comm));
    res->op_t_exact = te;
  }
  double loc[9] = {st->t_setup,
                   dr->pcg.t_operator,
                   dr->pcg.t_precond + dr->t_pc_setup,
                   dr->pcg.t_reduction,
                   op_exch,
                   st->t_io,
                   dr->t_solve,
                   hx_wtime() - st->t_start,
                   (double)hx_peak_rss_bytes()},
         glob[9];
  HX_MPI(MPI_Allreduce(loc, glob, 9, MPI_DOUBLE, MPI_MAX, comm));
  res->t_setup = glob[0], res->t_operator = glob[1], res->t_precond = glob[2], res->t_reduction = glob[3];
  res->t_exchange = glob[4], res->t_io = glob[5], res->t_solve = glob[6], res->t_total = glob[7];
  res->peak_mem_bytes = glob[8];

  const char *pct = hx_case_pc_type(st->cs);
  hx_log(HX_LOG_NORMAL,
         "PCG (%s): %d iterations, %s; per iteration: %d allreduces, %d vector passes over G-vectors "
         "(+ operator: scatter, element kernel, gather, exchange)\n",
         pct ? pct : "?", dr->pcg.iterations, hx_reason_name(dr->pcg.reason),
         dr->pcg.allreduces_per_iteration, dr->pcg.vector_passes_per_iteration);
  if (dr->pcg.iterations > 0)
    hx_log(HX_LOG_NORMAL,
           "time per iteration: %.3e s (operator %.3e, precond %.3e, vector %.3e, reductions %.3e; "
           "exchange %.3e, element kernel %.3e)\n",
           dr->t_solve / dr->pcg.iterations, dr->pcg.t_operator / dr->pcg.iterations,
           dr->pcg.t_precond / dr->pcg.iterations, dr->pcg.t_vector / dr->pcg.iterations,
           dr->pcg.t_reduction / dr->pcg.iterations, op_exch / (dr->pcg.iterations + 1),
           op_elem / (dr->pcg.iterations + 1));
  return HX_SUCCESS;
}

/* The phases in order; check_only: a dry run stops once the mesh is built
 * and valid. */
static int run(run_state *st, int check_only) {
  st->t_start = hx_wtime();
  st->res->ranks = st->ctx->size;
  snprintf(st->res->backend, sizeof st->res->backend, "%s", hx_case_backend_name(st->cs->backend));
  st->res->order = st->cs->order;
  HX_CALL(phase_backend(st));
  HX_CALL(phase_mesh(st));
  if (check_only) return HX_SUCCESS;
  HX_CALL(phase_disc(st));
  HX_CALL(phase_data(st));
  HX_CALL(phase_solve(st));
  HX_CALL(phase_output(st));
  HX_CALL(phase_report(st));
  return HX_SUCCESS;
}

static int run_case(hx_app_ctx *ctx, const hx_case *cs, int check_only, hx_run_result *res) {
  run_state st;
  memset(&st, 0, sizeof st);
  st.ctx = ctx, st.cs = cs, st.res = res;
  hx_timer_reset_all();
  int ierr = run(&st, check_only);
  free(st.kappa), free(st.lambda), free(st.entry), free(st.dtag);
  free(st.kfield), free(st.lfield), free(st.ksrc), free(st.lsrc);
  free(st.hf), free(st.hg), free(st.hbn), free(st.hu), free(st.hex), free(st.hu0);
  hx_pc_destroy(&st.pc);
  hx_history_destroy(&st.mon.hist);
  hx_progress_destroy(&st.mon.prog);
  hx_disc_destroy(&st.d);
  hx_mesh_destroy(&st.m);
  hx_backend_destroy(&st.b);
  if (ierr) hx_opt_free(&res->pc_report);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_run_case(hx_app_ctx *ctx, const hx_case *cs, hx_run_result *res) {
  HX_CALL(run_case(ctx, cs, 0, res));
  return HX_SUCCESS;
}

int hx_run_check(hx_app_ctx *ctx, const hx_case *cs) {
  hx_run_result res;
  memset(&res, 0, sizeof res);
  HX_CALL(run_case(ctx, cs, 1, &res));
  return HX_SUCCESS;
}
