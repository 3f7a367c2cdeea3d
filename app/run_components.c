/* The null space per connected component of the mesh (issue 53, defect 4;
 * docs/solver.md "Null space"). A mesh of several bodies (a Gmsh file with
 * two disjoint boxes) has one constant in the operator's null space per
 * floating body: one with no Dirichlet face, no Robin face with alpha > 0
 * and lambda = 0 on all of it. The solver removes one constant, that of the
 * whole mesh (PCG's projection, the right-hand side's, the zero-mean shift,
 * the coarse space's single pinned vertex), so such a body's level was
 * arbitrary: the solve "converged" to u = 0 where the answer is 5. Several
 * components with a floating one are refused (HX_ERR_INPUT, exit 2) naming
 * the component and the fix; one floating component that is the whole
 * mesh is the pure Neumann problem, solved as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_run.h"

static void describe(const hx_mesh_component *c, char *buf, size_t len) {
  snprintf(buf, len, "%lld element%s from global element %lld, bounding box [%g, %g] x [%g, %g] x [%g, %g]",
           (long long)c->elements, c->elements == 1 ? "" : "s", (long long)c->first_element, c->lo[0],
           c->hi[0], c->lo[1], c->hi[1], c->lo[2], c->hi[2]);
}

/* The components of m with the elements marked in fixed, logged, put in
 * res and refused when several with a floating one. Collective. */
static int decide(const hx_case *cs, hx_mesh m, const int *fixed, hx_run_result *res) {
  int nc = 0;
  hx_mesh_component *c = NULL;
  HX_CALL(hx_mesh_components(m, fixed, &nc, &c));
  int64_t nfloat = 0;
  int first_float = -1;
  for (int k = 0; k < nc; k++)
    if (!c[k].fixed) nfloat++, first_float = first_float < 0 ? k : first_float;
  res->components = nc, res->components_floating = nfloat;
  res->components_yaml[0] = '\0';
  size_t off = 0;
  char what[256];
  for (int k = 0; k < nc; k++) {
    describe(&c[k], what, sizeof what);
    const char *how = c[k].fixed ? "fixed (a Dirichlet face, a Robin face with alpha > 0 or lambda > 0)"
                      : nc == 1  ? "floating: pure Neumann, solved for the zero-mean solution"
                                 : "FLOATING (its constant is arbitrary)";
    if (k < HX_COMPONENTS_LISTED)
      hx_log(nc > 1 ? HX_LOG_NORMAL : HX_LOG_VERBOSE, "mesh component %d of %d: %s; %s\n", k + 1, nc, what,
             how);
    if (k < HX_COMPONENTS_LISTED && off < sizeof res->components_yaml)
      off +=
          (size_t)snprintf(res->components_yaml + off, sizeof res->components_yaml - off,
                           "    - {first_element: %lld, elements: %lld, bbox: [%.17g, %.17g, %.17g, %.17g, "
                           "%.17g, %.17g], floating: %s}\n",
                           (long long)c[k].first_element, (long long)c[k].elements, c[k].lo[0], c[k].hi[0],
                           c[k].lo[1], c[k].hi[1], c[k].lo[2], c[k].hi[2], c[k].fixed ? "false" : "true");
  }
  if (nc > HX_COMPONENTS_LISTED)
    hx_log(HX_LOG_NORMAL, "mesh components: %d more not listed\n", nc - HX_COMPONENTS_LISTED);
  if (off >= sizeof res->components_yaml) res->components_yaml[0] = '\0'; /* cannot happen: 8 short lines */
  /* one component: the pure Neumann decision of the run stands (it floats exactly when singular) */
  const int bad = nc > 1 && nfloat > 0;
  if (bad) describe(&c[first_float], what, sizeof what);
  free(c);
  HX_CHECK(!bad, HX_ERR_INPUT,
           "%s: the mesh has %d connected components (bodies that share no node) and %lld of them float: "
           "component %d (%s) has no Dirichlet face, no Robin face with alpha > 0 and lambda = 0 on all of "
           "it, so its solution is defined only up to a constant of its own, and hexcg removes one constant "
           "for the whole mesh only (docs/solver.md, \"Null space\"); give every body a Dirichlet or Robin "
           "(alpha > 0) condition on one of its boundary tags (problem.boundary), or lambda > 0 on its "
           "material (problem.lambda), or solve the bodies as separate cases",
           cs->path, nc, (long long)nfloat, first_float + 1, what);
  return HX_SUCCESS;
}

int hx_run_components(const hx_case *cs, hx_mesh m, hx_disc d, hx_run_result *res) {
  int *fixed = NULL;
  int err = HX_ALLOC(&fixed, hx_disc_num_elements(d) + 1);
  if (!err) err = hx_disc_fixed_elements(d, fixed);
  if (!err) err = decide(cs, m, fixed, res);
  free(fixed);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_run_components_check(const hx_case *cs, hx_mesh m, double shift) {
  const int32_t E = hx_mesh_num_elements(m), *mat = hx_mesh_element_material(m);
  const int32_t *ftag = hx_mesh_face_tags(m);
  const int nt = hx_mesh_num_tags(m), nmat = hx_mesh_num_materials(m);
  int *fixed = NULL, *tfix = NULL, *mfix = NULL;
  int err = HX_ALLOC(&fixed, E + 1);
  if (!err) err = HX_ALLOC(&tfix, nt + 1);
  if (!err) err = HX_ALLOC(&mfix, nmat + 1);
  for (int t = 0; !err && t < nt; t++) /* a Dirichlet tag, or Robin with alpha > 0 (an expression counts) */
    for (int bi = 0; bi < cs->problem.nboundary; bi++) {
      const hx_case_boundary *bc = &cs->problem.boundary[bi];
      for (int k = 0; k < bc->ntags; k++)
        if (!strcmp(bc->tags[k], hx_mesh_tag_name(m, t)))
          tfix[t] |=
              bc->type == HX_BC_DIRICHLET || (bc->type == HX_BC_ROBIN && (bc->alpha_expr || bc->alpha > 0));
    }
  for (int i = 0; !err && i < nmat; i++) { /* lambda > 0 (an expression counts) */
    double v = 0.0;
    const hx_expr *e = NULL;
    const char *src = NULL;
    if (hx_case_coef_get(cs, 1, hx_mesh_material_name(m, i), &v, &e, &src)) hx_error_clear(), v = 0.0;
    mfix[i] = shift > 0.0 || (e && !hx_expr_is_constant(e)) || (e ? hx_expr_eval(e, 0, 0, 0) : v) > 0.0;
  }
  for (int32_t e = 0; !err && e < E; e++) {
    fixed[e] = mfix[mat[e]];
    for (int f = 0; f < 6; f++) fixed[e] |= ftag[6 * (int64_t)e + f] >= 0 && tfix[ftag[6 * (int64_t)e + f]];
  }
  hx_run_result res;
  memset(&res, 0, sizeof res);
  if (!err) err = decide(cs, m, fixed, &res);
  free(fixed), free(tfix), free(mfix);
  HX_CALL(err);
  return HX_SUCCESS;
}
