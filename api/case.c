/* A solver from a case (hexcg_create_file, hexcg_create_yaml, and `hexcg
 * run` through hx_api_setup_case): the backend, the mesh built or read and
 * checked against the case, the case translated into problem/'s
 * description. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_api.h"

/* What the phases below hand each other. */
typedef struct {
  hexcg_solver *s;
  const hx_case *cs;
  hx_run_stats *res;
} run_state;

static double expr_fn(const void *ctx, double x, double y, double z) {
  return hx_expr_eval((const hx_expr *)ctx, x, y, z);
}
static void expr_fn_n(const void *ctx, size_t n, const double *x, const double *y, const double *z,
                      double *out) {
  hx_expr_eval_array((const hx_expr *)ctx, n, x, y, z, out);
}

hx_partitioner hx_api_partitioner(const hx_case *cs) {
  switch (cs->mesh.partitioner) {
    case HX_CASE_PART_METIS: return HX_PART_METIS;
    case HX_CASE_PART_RCB: break;
  }
  return HX_PART_RCB;
}

static int build_mesh(MPI_Comm comm, const hx_case *cs, hx_mesh *m) {
  const hx_partitioner part = hx_api_partitioner(cs);
  if (cs->mesh.type == HX_CASE_MESH_NEK) {
    HX_CALL(hx_mesh_create_nek(comm, cs->mesh.file, cs->mesh.field, part, m));
    return HX_SUCCESS;
  }
  if (cs->mesh.type == HX_CASE_MESH_EXODUS ||
      (cs->mesh.type == HX_CASE_MESH_GMSH && hx_mesh_path_is_exodus(cs->mesh.file))) {
    HX_CALL(hx_mesh_create_exodus(comm, cs->mesh.file, part, cs->mesh.nperiodic_pairs,
                                  (const char *const(*)[2])cs->mesh.periodic_pairs, m));
    return HX_SUCCESS;
  }
  if (cs->mesh.type == HX_CASE_MESH_GMSH) {
    HX_CALL(hx_mesh_create_gmsh_periodic(comm, cs->mesh.file, part, cs->mesh.nperiodic_pairs,
                                         (const char *const(*)[2])cs->mesh.periodic_pairs, m));
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
  memcpy(o.periodic, cs->mesh.periodic, sizeof o.periodic);
  HX_CALL(hx_mesh_create_box(comm, &o, m));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- case -> problem
 * The case's expressions as the problem's fields, its coefficients per
 * material and conditions per tag as the problem's description
 * (problem/hx_problem.h); the numerics are problem/'s. */
static double texpr_fn(const void *ctx, double x, double y, double z, double t) {
  return hx_expr_eval_t((const hx_expr *)ctx, x, y, z, t);
}
static void texpr_fn_n(const void *ctx, size_t n, const double *x, const double *y, const double *z, double t,
                       double *out) {
  hx_expr_eval_array_t((const hx_expr *)ctx, n, x, y, z, t, out);
}
static hx_tfield texpr(const hx_expr *e) {
  return e ? (hx_tfield){texpr_fn, e, texpr_fn_n} : (hx_tfield){NULL, NULL, NULL};
}

/* the problem's finiteness check: the case's positions (hx_case_check_finite) */
static int check_finite(void *ctx, const char *key, const void *src, size_t n, const double *x, const double *y,
                        const double *z, const double *v) {
  return hx_case_check_finite((const hx_case *)ctx, key, (const hx_expr *)src, n, x, y, z, v);
}

/* per mesh tag: index of the case boundary entry naming it, or -1 */
static void tag_entries(const hx_case *cs, hx_mesh m, int *entry) {
  const int nt = hx_mesh_num_tags(m);
  for (int t = 0; t < nt; t++) {
    entry[t] = -1;
    for (int bi = 0; bi < cs->problem.nboundary && entry[t] < 0; bi++)
      for (int k = 0; k < cs->problem.boundary[bi].ntags; k++)
        if (!strcmp(cs->problem.boundary[bi].tags[k], hx_mesh_tag_name(m, t))) entry[t] = bi;
  }
}

/* The description's arrays (freed by hx_api_case_arrays_free). */
typedef struct {
  hx_problem_coef *kappa, *lambda; /* per material */
  hx_problem_bc *bc;               /* per entry of problem.boundary */
  char (*key)[32];                 /* its "problem.boundary.N" */
  const hx_problem_bc **tag_bc;    /* per mesh tag */
  int *entry;
} case_problem;

void hx_api_case_arrays_free(void **p) {
  case_problem *cp = (case_problem *)*p;
  if (!cp) return;
  free(cp->kappa), free(cp->lambda), free(cp->bc), free(cp->key), free(cp->tag_bc), free(cp->entry);
  free(cp), *p = NULL;
}

/* kappa (c = 0) or lambda (c = 1) of material i: a number (a constant
 * expression evaluated), or an expression evaluated at the nodes */
static int case_coef(const hx_case *cs, hx_mesh m, int c, int i, hx_problem_coef *co) {
  const char *mn = hx_mesh_material_name(m, i);
  const hx_expr *e = NULL;
  const int found = hx_case_coef_get(cs, c, mn, &co->value, &e, &co->src) == 0;
  HX_CHECK(found, HX_ERR_INPUT, "%s: problem.%s gives no value for material '%s' of the mesh", cs->path,
           c ? "lambda" : "kappa", mn);
  if (e && hx_expr_is_constant(e)) co->value = hx_expr_eval(e, 0.0, 0.0, 0.0), e = NULL;
  if (e) co->field = (hx_field){expr_fn, e, NULL};
  return HX_SUCCESS;
}

/* entry bi of problem.boundary */
static void case_bc(const hx_case *cs, int bi, hx_problem_bc *pb, char *key, size_t len) {
  const hx_case_boundary *bc = &cs->problem.boundary[bi];
  snprintf(key, len, "problem.boundary.%d", bi);
  *pb = (hx_problem_bc){.type = bc->type, .value_exact = bc->value_kind == HX_BCV_EXACT, .value = bc->value,
                        .value_src = bc->expr, .alpha = bc->alpha, .key = key};
  if (bc->value_kind == HX_BCV_EXPR) pb->value_field = texpr(bc->expr);
  if (bc->alpha_expr) pb->alpha_field = (hx_field){expr_fn, bc->alpha_expr, NULL};
}

static int case_to_problem(const hx_case *cs, hx_mesh m, case_problem *cp, hx_problem_desc *pd) {
  const int nt = hx_mesh_num_tags(m), nmat = hx_mesh_num_materials(m), nb = cs->problem.nboundary;
  HX_CALL(HX_ALLOC(&cp->kappa, nmat + 1));
  HX_CALL(HX_ALLOC(&cp->lambda, nmat + 1));
  HX_CALL(HX_ALLOC(&cp->bc, nb + 1));
  HX_CALL(HX_ALLOC(&cp->key, nb + 1));
  HX_CALL(HX_ALLOC(&cp->tag_bc, nt + 1));
  HX_CALL(HX_ALLOC(&cp->entry, nt + 1));
  for (int i = 0; i < nmat; i++) {
    HX_CALL(case_coef(cs, m, 0, i, &cp->kappa[i]));
    HX_CALL(case_coef(cs, m, 1, i, &cp->lambda[i]));
  }
  for (int bi = 0; bi < nb; bi++) case_bc(cs, bi, &cp->bc[bi], cp->key[bi], sizeof cp->key[bi]);
  tag_entries(cs, m, cp->entry);
  for (int t = 0; t < nt; t++) cp->tag_bc[t] = cp->entry[t] >= 0 ? &cp->bc[cp->entry[t]] : NULL;
  *pd = hx_problem_desc_default();
  pd->origin = cs->path;
  pd->kappa = cp->kappa, pd->lambda = cp->lambda, pd->bc = cp->tag_bc;
  pd->rhs = texpr(cs->problem.rhs), pd->rhs_src = cs->problem.rhs, pd->rhs_key = "problem.rhs";
  pd->exact = texpr(cs->problem.exact), pd->exact_src = cs->problem.exact, pd->exact_key = "problem.exact";
  pd->geometry = cs->op.geometry ? HX_AX_GEO_SPLIT : HX_AX_GEO_FP64;
  pd->check_finite = check_finite, pd->check_ctx = (void *)cs;
  return HX_SUCCESS;
}

/* what the case's preconditioner adds per GLL node (precond/ estimates it) */
double hx_api_pc_node_bytes(hx_pc_config pcc, int order) {
  double b = 0.0;
  if (hx_pc_config_mem_per_node(pcc, order, &b)) hx_error_clear(), b = 0.0;
  return b;
}

/* The backend (cuda: each rank takes the device of its node-local rank). */
static int phase_backend(run_state *st) {
  const hx_case *cs = st->cs;
  int ierr = hx_backend_create_comm(hx_case_backend_name(cs->backend), st->s->comm, &st->s->b);
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
  HX_CALL(hx_backend_devices_describe(st->s->b, st->s->comm, st->res->devices, sizeof st->res->devices));
  if (st->res->devices[0]) hx_log(HX_LOG_NORMAL, "devices (rank -> GPU):\n%s", st->res->devices);
  return HX_SUCCESS;
}

/* 1 if an entry of problem.boundary names the tag */
static int case_names_tag(const hx_case *cs, const char *tag) {
  for (int bi = 0; bi < cs->problem.nboundary; bi++)
    for (int k = 0; k < cs->problem.boundary[bi].ntags; k++)
      if (!strcmp(cs->problem.boundary[bi].tags[k], tag)) return 1;
  return 0;
}

/* Boundary faces of a Gmsh file in no surface physical group (the mesh's
 * tag HX_MESH_UNTAGGED): said once (rank 0) unless the case gives them a
 * condition, so a forgotten physical group is not silent. */
static void untagged_note(const hx_case *cs, hx_mesh m) {
  int64_t nb = 0;
  const char *where = "";
  const int64_t nu = hx_mesh_untagged_faces(m, &nb, &where);
  if (nu == 0 || case_names_tag(cs, HX_MESH_UNTAGGED)) return;
  const int exo = cs->mesh.type == HX_CASE_MESH_EXODUS || hx_mesh_path_is_exodus(cs->mesh.file);
  hx_log(HX_LOG_NORMAL,
         "note: %s: %lld of %lld boundary faces carry no %s (the first: %s); they get the "
         "natural condition kappa du/dn = 0: give them a condition with tags: [%s] in problem.boundary, or "
         "put them in a %s\n",
         cs->mesh.file, (long long)nu, (long long)nb, exo ? "side set" : "surface physical tag", where,
         HX_MESH_UNTAGGED, exo ? "side set" : "physical group");
}

/* The mesh's tags that no entry of problem.boundary names get the natural
 * condition: said once (rank 0) and listed in summary.yaml (natural_tags),
 * so a tag left out of the case, or misspelt in the mesh, is not silent
 * (issue 54 point 6). Tags whose faces are all periodic have no boundary
 * left; `untagged` has its own note above. */
static void natural_note(const hx_case *cs, hx_mesh m, char *list, size_t len) {
  size_t off = 0;
  int n = 0;
  list[0] = '\0';
  for (int i = 0; i < hx_mesh_num_tags(m); i++) {
    const char *t = hx_mesh_tag_name(m, i);
    if (!t || !strcmp(t, HX_MESH_UNTAGGED) || hx_mesh_tag_is_periodic(m, i) || case_names_tag(cs, t)) continue;
    const int w = snprintf(list + off, off < len ? len - off : 0, "%s\"%s\"", n ? ", " : "", t);
    if (w < 0 || off + (size_t)w >= len) { /* too many to list: the log still counts them */
      if (off < len) list[off] = '\0';
      off = len;
    } else {
      off += (size_t)w;
    }
    n++;
  }
  if (n)
    hx_log(HX_LOG_NORMAL,
           "note: %d boundary tag%s of the mesh %s no condition in problem.boundary and get%s the natural "
           "condition kappa du/dn = 0: %s\n",
           n, n == 1 ? "" : "s", n == 1 ? "has" : "have", n == 1 ? "s" : "", list[0] ? list : "(too many to list)");
}

/* Every material of the mesh has a kappa and a lambda (a map in the case
 * may leave one out): refused here, with the map's position, before the
 * discretisation (and so by a dry run). The position is that of the map's
 * first value (parse_coef's "POS: problem.kappa.NAME"). */
static int check_material_coefs(const hx_case *cs, hx_mesh m, int nmat) {
  for (int c = 0; c < 2; c++) {
    const int nmap = c ? cs->problem.nlambda : cs->problem.nmaterials;
    if (nmap == 0) continue; /* one value for all */
    const char *key = c ? "lambda" : "kappa";
    for (int i = 0; i < nmat; i++) {
      const char *mn = hx_mesh_material_name(m, i);
      if (hx_case_coef_get(cs, c, mn, NULL, NULL, NULL) == 0) continue;
      const char *w = c ? cs->problem.lambda_materials[0].where : cs->problem.materials[0].where;
      char tail[64], pos[1024];
      snprintf(tail, sizeof tail, ": problem.%s", key);
      const char *cut = w ? strstr(w, tail) : NULL;
      snprintf(pos, sizeof pos, "%.*s", cut ? (int)(cut - w) : (int)strlen(cs->path), cut ? w : cs->path);
      return HX_ERROR(
          HX_ERR_INPUT,
          "%s: problem.%s gives no value for material '%s' of the mesh; add '%s: VALUE' to the map "
          "(or give one %s for all materials)",
          pos, key, mn, mn, key);
    }
  }
  return HX_SUCCESS;
}

/* The mesh, built or read and partitioned, checked against the case: its
 * size (Gmsh), tags, materials (and their coefficients) and Jacobians. */
static int phase_mesh(run_state *st) {
  const hx_case *cs = st->cs;
  hx_timer_start(HX_T_MESH);
  int ierr = build_mesh(st->s->comm, cs, &st->s->m);
  hx_timer_stop(HX_T_MESH);
  HX_CALL(ierr);
  hx_mesh m = st->s->m;
  st->res->elements = hx_mesh_num_global_elements(m);
  if (HX_CASE_MESH_FROM_FILE(cs->mesh.type)) /* its size is known now */
    HX_CALL(hx_case_check_memory(st->s->comm, cs, st->res->elements, HX_CASE_MEM_RUN, hx_api_pc_node_bytes(st->s->pcc, st->cs->order)));

  /* names the case must match: boundary tags and materials */
  const int nt = hx_mesh_num_tags(m), nmat = hx_mesh_num_materials(m);
  const char **names;
  HX_CALL(HX_ALLOC(&names, (nt > nmat ? nt : nmat) + 1));
  for (int t = 0; t < nt; t++) names[t] = hx_mesh_tag_name(m, t);
  ierr = hx_case_check_tags(cs, nt, names);
  if (!ierr) { /* no condition on a tag the mesh made periodic (a Gmsh $Periodic section) */
    int *per = NULL;
    ierr = HX_ALLOC(&per, nt + 1);
    for (int t = 0; t < nt && !ierr; t++) per[t] = hx_mesh_tag_is_periodic(m, t);
    if (!ierr) ierr = hx_case_check_periodic_tags(cs, nt, names, per);
    free(per);
  }
  if (!ierr) {
    for (int i = 0; i < nmat; i++) names[i] = hx_mesh_material_name(m, i);
    ierr = hx_case_check_materials(cs, nmat, names);
  }
  free(names);
  HX_CALL(ierr);
  HX_CALL(check_material_coefs(cs, m, nmat));
  untagged_note(cs, m);
  natural_note(cs, m, st->res->natural_tags, sizeof st->res->natural_tags);

  double jmin, jmax, hmin, hmax;
  HX_CALL(hx_mesh_check_jacobian(m, cs->order, &jmin, &jmax, &hmin, &hmax));
  hx_log(HX_LOG_VERBOSE, "mesh: %lld elements, Jacobian in [%.3e, %.3e], edge length in [%.3e, %.3e]\n",
         (long long)st->res->elements, jmin, jmax, hmin, hmax);
  return HX_SUCCESS;
}

/* The problem of the case on the mesh (after phase_mesh). */
static int phase_problem(run_state *st) {
  hx_problem_desc pd;
  case_problem *cp;
  HX_CALL(HX_ALLOC(&cp, 1));
  st->s->case_arrays = cp;
  HX_CALL(case_to_problem(st->cs, st->s->m, cp, &pd));
  HX_CALL(hx_problem_create(st->s->m, st->s->b, &pd, &st->s->prob));
  return HX_SUCCESS;
}


void hx_api_pcg_opts(const hx_case *cs, hx_pcg_opts *po) {
  hx_pcg_opts_default(po);
  po->rtol = cs->solver.tol;
  po->max_iterations = cs->solver.max_iterations;
  po->flexible = cs->solver.type == HX_CASE_SOLVER_FCG;
  po->single_reduction = cs->solver.type == HX_CASE_SOLVER_PCG1;
}

int hx_api_setup_case(hexcg_solver *s, const hx_case *cs, hx_run_stats *res) {
  hx_run_stats *own = NULL;
  if (!res) HX_CALL(HX_ALLOC(&own, 1));
  run_state st = {s, cs, res ? res : own};
  s->cs = cs, s->order = cs->order;
  int ierr = hx_pc_config_read(cs->preconditioner.opts, &s->pcc); /* the options, read once */
  if (!ierr) ierr = phase_backend(&st);
  if (!ierr) ierr = phase_mesh(&st);
  if (!ierr) ierr = phase_problem(&st);
  free(own);
  HX_CALL(ierr);
  hx_api_pcg_opts(cs, &s->po);
  s->exact = (hx_field){cs->problem.exact ? expr_fn : NULL, cs->problem.exact, cs->problem.exact ? expr_fn_n : NULL};
  s->exact_tf = texpr(cs->problem.exact);
  return HX_SUCCESS;
}

/* The case's checks before anything is built (hexcg run's and the
 * library's): precond/ validates its own options (positions in the case
 * file) and makes its defaults explicit for the effective case; pmg's
 * levels given as a list must start at the case's order; a non-symmetric
 * preconditioner under a CG that needs a symmetric one; sizes that cannot
 * fit in memory. Collective (the memory check). */
int hx_api_check_case(MPI_Comm comm, hx_case *cs) {
  int err = HX_SUCCESS;
  /* several right-hand sides are solved by block PCG, which needs a fixed
   * preconditioner: without a type the block solve's default, pmg, not the
   * single solve's auto (whose choice observes a single run) */
  if (cs->problem.nrhs > 1 && !hx_opt_get(cs->preconditioner.opts, "type")) {
    if (!cs->preconditioner.opts && !(cs->preconditioner.opts = hx_opt_new(HX_OPT_MAP, NULL, cs->path)))
      err = HX_ERROR(HX_ERR_MEM, "out of memory");
    if (!err) err = hx_opt_set(cs->preconditioner.opts, "type", "pmg");
  }
  if (!err) err = hx_pc_options_check(cs->preconditioner.opts);
  hx_pc_config pcc = NULL;
  if (!err) err = hx_pc_config_read(cs->preconditioner.opts, &pcc);
  if (!err) {
    int lv[HX_PC_LEVELS_MAX], n;
    err = hx_pc_config_levels(pcc, cs->order, lv, &n);
  }
  if (!err)
    err = hx_pc_config_check_solver(pcc, cs->solver.type == HX_CASE_SOLVER_FCG,
                                    hx_case_solver_name(cs->solver.type));
  double pc_node = 0.0;
  if (!err) err = hx_pc_config_mem_per_node(pcc, cs->order, &pc_node);
  hx_pc_config_free(&pcc);
  if (!err) err = hx_case_check_memory(comm, cs, 0, HX_CASE_MEM_RUN, pc_node);
  HX_CALL(err);
  return HX_SUCCESS;
}
