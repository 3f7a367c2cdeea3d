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

/* the host arrays of one run, freed by run_case on every path */
typedef struct {
  double *kappa, *lambda, *hf, *hg, *hu, *hex, *hbn, *hu0;
  int *entry, *dtag;
} run_bufs;

static int run(hx_app_ctx *ctx, const hx_case *cs, int check_only, hx_run_result *res, hx_mesh *pm,
               hx_backend *pb, hx_disc *pd, hx_pc *pc, run_monitor *mon, run_bufs *rb) {
  const double t_start = hx_wtime();
  double t_setup = 0, t_io = 0;
  res->ranks = ctx->size;
  snprintf(res->backend, sizeof res->backend, "%s", hx_case_backend_name(cs->backend));
  res->order = cs->order;

  /* cuda: each rank takes the device of its node-local rank (kernels/) */
  int ierr = hx_backend_create_comm(hx_case_backend_name(cs->backend), ctx->comm, pb);
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
  HX_CALL(hx_backend_devices_describe(*pb, ctx->comm, res->devices, sizeof res->devices));
  if (res->devices[0]) hx_log(HX_LOG_NORMAL, "devices (rank -> GPU):\n%s", res->devices);
  hx_timer_start(HX_T_MESH);
  ierr = build_mesh(ctx, cs, pm);
  hx_timer_stop(HX_T_MESH);
  HX_CALL(ierr);
  hx_mesh m = *pm;
  res->elements = hx_mesh_num_global_elements(m);
  if (cs->mesh.type == HX_CASE_MESH_GMSH) /* its size is known now */
    HX_CALL(hx_case_check_memory(ctx->comm, cs, res->elements, HX_CASE_MEM_RUN, pc_node_bytes(cs)));

  /* names the case must match: boundary tags and materials */
  const int nt = hx_mesh_num_tags(m), nmat = hx_mesh_num_materials(m);
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
         (long long)res->elements, jmin, jmax, hmin, hmax);
  if (check_only) return HX_SUCCESS; /* a dry run: the mesh is built and valid */

  /* coefficients per material, Dirichlet tags */
  double *kappa, *lambda;
  int *entry, *dtag;
  HX_CALL(HX_ALLOC(&rb->kappa, nmat + 1));
  kappa = rb->kappa;
  HX_CALL(HX_ALLOC(&rb->lambda, nmat + 1));
  lambda = rb->lambda;
  HX_CALL(HX_ALLOC(&rb->entry, nt + 1));
  entry = rb->entry;
  HX_CALL(HX_ALLOC(&rb->dtag, nt + 1));
  dtag = rb->dtag;
  for (int i = 0; i < nmat; i++) {
    kappa[i] = hx_case_kappa(cs, hx_mesh_material_name(m, i));
    lambda[i] = cs->problem.lambda;
    HX_CHECK(kappa[i] > 0, HX_ERR_INPUT, "%s: problem.kappa gives no value for material '%s' of the mesh",
             cs->path, hx_mesh_material_name(m, i));
  }
  HX_CALL(tag_entries(cs, m, entry));
  int ndirichlet = 0;
  for (int t = 0; t < nt; t++) {
    dtag[t] = entry[t] >= 0 && cs->problem.boundary[entry[t]].type == HX_BC_DIRICHLET;
    ndirichlet += dtag[t];
  }
  HX_CHECK(ndirichlet > 0 || cs->problem.lambda > 0, HX_ERR_INPUT,
           "%s: pure Neumann problem (no Dirichlet boundary and lambda = 0): the operator is singular "
           "and hexcg does not solve it; give a Dirichlet boundary in problem.boundary or lambda > 0",
           cs->path);

  hx_disc_opts o = hx_disc_opts_default();
  o.p = cs->order, o.kappa = kappa, o.lambda = lambda, o.dirichlet_tag = dtag;
  o.geometry = cs->op.geometry ? HX_AX_GEO_SPLIT : HX_AX_GEO_FP64;
  hx_timer_start(HX_T_SETUP);
  ierr = hx_disc_create(m, *pb, &o, pd);
  hx_timer_stop(HX_T_SETUP);
  HX_CALL(ierr);
  hx_disc d = *pd;
  const int64_t nl = hx_disc_num_l(d);
  const int32_t E = hx_disc_num_elements(d);
  const double *X, *Y, *Z;
  hx_disc_coords(d, &X, &Y, &Z);
  t_setup = hx_timer_get(HX_T_MESH) + hx_disc_setup_time(d);

  /* right-hand side, Dirichlet values, Neumann loads at the GLL nodes */
  double *hf, *hg, *hbn = NULL, *hu, *hex = NULL, *hu0 = NULL;
  HX_CALL(HX_ALLOC(&rb->hf, nl));
  hf = rb->hf;
  HX_CALL(HX_ALLOC(&rb->hg, nl));
  hg = rb->hg;
  HX_CALL(HX_ALLOC(&rb->hu, nl));
  hu = rb->hu;
  hx_expr_eval_array(cs->problem.rhs, (size_t)nl, X, Y, Z, hf);
  /* data that is not finite at some node is refused (case position and the
   * node); ferr is agreed across ranks before the next collective step */
  int ferr = hx_case_check_finite(cs, "problem.rhs", cs->problem.rhs, (size_t)nl, X, Y, Z, hf);
  if (cs->problem.exact) {
    HX_CALL(HX_ALLOC(&rb->hex, nl));
    hex = rb->hex;
    hx_expr_eval_array(cs->problem.exact, (size_t)nl, X, Y, Z, hex);
    if (!ferr) ferr = hx_case_check_finite(cs, "problem.exact", cs->problem.exact, (size_t)nl, X, Y, Z, hex);
  }
  HX_CALL(hx_io_agree_error(ctx->comm, ferr));
  char key[64];
  /* Dirichlet values per Dirichlet tag */
  for (int t = 0; t < nt; t++) {
    if (entry[t] < 0 || !dtag[t]) continue;
    bc_ctx c = {cs, &cs->problem.boundary[entry[t]]};
    hx_field g = {bc_fn, &c};
    HX_CALL(hx_disc_dirichlet_values(d, t, g, hg));
    snprintf(key, sizeof key, "problem.boundary.%d.value", entry[t]);
    if (!ferr) ferr = hx_case_check_finite(cs, key, c.bc->expr, (size_t)nl, X, Y, Z, hg);
  }
  HX_CALL(hx_io_agree_error(ctx->comm, ferr));
  /* Neumann loads: kappa du/dn = value on each Neumann tag */
  for (int t = 0; t < nt; t++) {
    if (entry[t] < 0 || dtag[t]) continue;
    const hx_case_boundary *bc = &cs->problem.boundary[entry[t]];
    HX_CHECK(bc->value_kind != HX_BCV_EXACT, HX_ERR_INPUT,
             "%s: boundary on tag '%s': a Neumann condition needs the flux kappa du/dn as its value "
             "(a number or an expression), not 'exact'",
             cs->path, hx_mesh_tag_name(m, t));
    if (bc->value_kind == HX_BCV_NUMBER && bc->value == 0.0) continue;
    if (!hbn) HX_CALL(HX_ALLOC(&rb->hbn, nl));
    hbn = rb->hbn;
    hx_field g = {bc->value_kind == HX_BCV_EXPR ? expr_fn : const_fn,
                  bc->value_kind == HX_BCV_EXPR ? (const void *)bc->expr : (const void *)&bc->value};
    HX_CALL(hx_disc_neumann_load(d, t, g, hbn));
    snprintf(key, sizeof key, "problem.boundary.%d.value", entry[t]);
    if (!ferr) ferr = hx_case_check_finite(cs, key, bc->expr, (size_t)nl, X, Y, Z, hbn);
  }
  HX_CALL(hx_io_agree_error(ctx->comm, ferr));
  if (cs->solver.initial_guess) {
    HX_CALL(HX_ALLOC(&rb->hu0, nl));
    hu0 = rb->hu0;
    const double t = hx_wtime();
    HX_CALL(hx_io_read_solution_at(ctx->comm, cs->solver.initial_guess, cs->order, E,
                                   hx_mesh_element_global_ids(m), X, Y, Z, hu0));
    t_io += hx_wtime() - t;
    HX_CALL(hx_io_agree_error(
        ctx->comm, hx_case_check_finite(cs, "solver.initial_guess", NULL, (size_t)nl, X, Y, Z, hu0)));
  }

  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = cs->solver.tol;
  po.max_iterations = cs->solver.max_iterations;
  po.flexible = cs->solver.type == HX_CASE_SOLVER_FCG;
  po.single_reduction = cs->solver.type == HX_CASE_SOLVER_PCG1;
  po.monitor = monitor_cb;
  po.monitor_ctx = mon;
  HX_CALL(hx_history_create(&mon->hist));
  HX_CALL(hx_progress_create(cs->output.progress_every, cs->output.progress_seconds, cs->solver.tol, stdout,
                             &mon->prog));
  mon->t0 = hx_wtime();
  hx_field exact = {cs->problem.exact ? expr_fn : NULL, cs->problem.exact};
  hx_solve_result dr;
  HX_CALL(hx_pc_create_from_options(d, cs->preconditioner.opts, pc));
  HX_CALL(hx_solve(d, *pc, hf, hg, hbn, exact, &po, hu0, hu, &dr));
  char pcview[512];
  hx_pc_view(*pc, pcview, sizeof pcview);
  hx_log(HX_LOG_VERBOSE, "preconditioner: %s\n", pcview);
  hx_progress_finish(mon->prog, dr.pcg.iterations, dr.pcg.rnorm, dr.pcg.rel);
  t_setup += dr.t_rhs + dr.t_pc_setup;

  res->dofs = dr.dofs;
  res->iterations = dr.pcg.iterations;
  res->converged = dr.pcg.reason > 0;
  snprintf(res->reason, sizeof res->reason, "%s", hx_reason_name(dr.pcg.reason));
  res->residual0 = dr.pcg.r0norm;
  res->residual = dr.pcg.rnorm;
  res->rel_residual = dr.pcg.rel;
  res->exact_known = dr.exact_known;
  res->error_l2 = dr.err_l2;
  res->error_max = dr.err_max;

  /* outputs */
  double t = hx_wtime();
  if (cs->output.history) HX_CALL(hx_history_write(mon->hist, ctx->comm, cs->output.dir));
  if (cs->output.solution) {
    HX_CALL(hx_io_write_solution(ctx->comm, cs->output.dir, cs->order, E, hx_mesh_element_global_ids(m), X, Y,
                                 Z, hu, hex));
  }
  t_io += hx_wtime() - t;

  /* timers: max over ranks */
  double op_elem, op_exch, op_gs;
  hx_op_times(hx_disc_op(d), &op_elem, &op_exch, &op_gs);
  hx_pc_stats pst;
  hx_pc_get_stats(*pc, &pst);
  hx_asm_stats ast;
  hx_asm_get_stats(*pc, &ast);
  hx_pc_view(*pc, res->pc_view, sizeof res->pc_view);
  res->pc_two_level = ast.applies > 0 && ast.coarse;
  res->pc_overlap = ast.overlap;
  double ploc[5] = {pst.t_setup, pst.applies ? pst.t_apply / (double)pst.applies : 0.0, ast.t_fine,
                    ast.t_coarse, ast.overlap_efficiency};
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, ploc, 5, MPI_DOUBLE, MPI_MAX, ctx->comm));
  res->pc_setup = ploc[0], res->pc_apply = ploc[1], res->pc_fine = ploc[2], res->pc_coarse = ploc[3];
  res->pc_overlap_efficiency = ploc[4];
  {
    int32_t na, ns, ng;
    double bpe;
    hx_ax_storage_counts(hx_disc_ax(d), &na, &ns, &ng);
    hx_ax_cost(hx_disc_ax(d), &bpe, NULL);
    double c[4] = {na, ns, ng, bpe * E};
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, c, 4, MPI_DOUBLE, MPI_SUM, ctx->comm));
    res->op_affine = (int64_t)c[0], res->op_split = (int64_t)c[1], res->op_general = (int64_t)c[2];
    res->op_bytes_per_dof = c[3] / (double)(res->dofs > 0 ? res->dofs : 1);
    res->op_fp64_residuals = dr.pcg.replacements + dr.exact_residuals;
    res->op_refinements = dr.refinements;
    double te = dr.pcg.t_replace + dr.t_refine;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &te, 1, MPI_DOUBLE, MPI_MAX, ctx->comm));
    res->op_t_exact = te;
  }
  double loc[9] =
      {t_setup,    dr.pcg.t_operator,    dr.pcg.t_precond + dr.t_pc_setup, dr.pcg.t_reduction, op_exch, t_io,
       dr.t_solve, hx_wtime() - t_start, (double)hx_peak_rss_bytes()},
         glob[9];
  HX_MPI(MPI_Allreduce(loc, glob, 9, MPI_DOUBLE, MPI_MAX, ctx->comm));
  res->t_setup = glob[0], res->t_operator = glob[1], res->t_precond = glob[2], res->t_reduction = glob[3];
  res->t_exchange = glob[4], res->t_io = glob[5], res->t_solve = glob[6], res->t_total = glob[7];
  res->peak_mem_bytes = glob[8];

  hx_log(HX_LOG_NORMAL,
         "PCG (%s): %d iterations, %s; per iteration: %d allreduces, %d vector passes over G-vectors "
         "(+ operator: scatter, element kernel, gather, exchange)\n",
         hx_case_pc_type(cs), dr.pcg.iterations, hx_reason_name(dr.pcg.reason),
         dr.pcg.allreduces_per_iteration, dr.pcg.vector_passes_per_iteration);
  if (dr.pcg.iterations > 0)
    hx_log(HX_LOG_NORMAL,
           "time per iteration: %.3e s (operator %.3e, precond %.3e, vector %.3e, reductions %.3e; "
           "exchange %.3e, element kernel %.3e)\n",
           dr.t_solve / dr.pcg.iterations, dr.pcg.t_operator / dr.pcg.iterations,
           dr.pcg.t_precond / dr.pcg.iterations, dr.pcg.t_vector / dr.pcg.iterations,
           dr.pcg.t_reduction / dr.pcg.iterations, op_exch / (dr.pcg.iterations + 1),
           op_elem / (dr.pcg.iterations + 1));
  return HX_SUCCESS;
}

static int run_case(hx_app_ctx *ctx, const hx_case *cs, int check_only, hx_run_result *res) {
  hx_mesh m = NULL;
  hx_backend b = NULL;
  hx_disc d = NULL;
  hx_pc pc = NULL;
  run_monitor mon = {0};
  run_bufs rb = {0};
  hx_timer_reset_all();
  int ierr = run(ctx, cs, check_only, res, &m, &b, &d, &pc, &mon, &rb);
  free(rb.kappa), free(rb.lambda), free(rb.entry), free(rb.dtag);
  free(rb.hf), free(rb.hg), free(rb.hbn), free(rb.hu), free(rb.hex), free(rb.hu0);
  hx_pc_destroy(&pc);
  hx_history_destroy(&mon.hist);
  hx_progress_destroy(&mon.prog);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
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
