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

#include "problem_impl.h"

static void describe(const hx_mesh_component *c, char *buf, size_t len) {
  snprintf(buf, len, "%lld element%s from global element %lld, bounding box [%g, %g] x [%g, %g] x [%g, %g]",
           (long long)c->elements, c->elements == 1 ? "" : "s", (long long)c->first_element, c->lo[0],
           c->hi[0], c->lo[1], c->hi[1], c->lo[2], c->hi[2]);
}

/* the components logged (normal level when more than one) and listed in out */
static void report(const hx_mesh_component *c, int nc, hx_problem_components *out) {
  size_t off = 0;
  char what[256];
  out->yaml[0] = '\0';
  for (int k = 0; k < nc; k++) {
    describe(&c[k], what, sizeof what);
    const char *how = c[k].fixed ? "fixed (a Dirichlet face, a Robin face with alpha > 0 or lambda > 0)"
                      : nc == 1  ? "floating: pure Neumann, solved for the zero-mean solution"
                                 : "FLOATING (its constant is arbitrary)";
    if (k < HX_PROBLEM_COMPONENTS_LISTED)
      hx_log(nc > 1 ? HX_LOG_NORMAL : HX_LOG_VERBOSE, "mesh component %d of %d: %s; %s\n", k + 1, nc, what,
             how);
    if (k < HX_PROBLEM_COMPONENTS_LISTED && off < sizeof out->yaml)
      off += (size_t)snprintf(out->yaml + off, sizeof out->yaml - off,
                              "    - {first_element: %lld, elements: %lld, bbox: [%.17g, %.17g, %.17g, %.17g, "
                              "%.17g, %.17g], floating: %s}\n",
                              (long long)c[k].first_element, (long long)c[k].elements, c[k].lo[0], c[k].hi[0],
                              c[k].lo[1], c[k].hi[1], c[k].lo[2], c[k].hi[2], c[k].fixed ? "false" : "true");
  }
  if (nc > HX_PROBLEM_COMPONENTS_LISTED)
    hx_log(HX_LOG_NORMAL, "mesh components: %d more not listed\n", nc - HX_PROBLEM_COMPONENTS_LISTED);
  if (off >= sizeof out->yaml) out->yaml[0] = '\0'; /* cannot happen: 8 short lines */
}

int hx_problem_decide_components(hx_problem p, const int *fixed, hx_problem_components *out) {
  int nc = 0;
  hx_mesh_component *c = NULL;
  HX_CALL(hx_mesh_components(p->m, fixed, &nc, &c));
  int64_t nfloat = 0;
  int first_float = -1;
  for (int k = 0; k < nc; k++)
    if (!c[k].fixed) nfloat++, first_float = first_float < 0 ? k : first_float;
  hx_problem_components mine;
  if (!out) out = &mine;
  out->n = nc, out->floating = nfloat;
  report(c, nc, out);
  /* one component: the pure Neumann decision of the run stands (it floats exactly when singular) */
  const int bad = nc > 1 && nfloat > 0;
  char what[256];
  if (bad) describe(&c[first_float], what, sizeof what);
  free(c);
  HX_CHECK(!bad, HX_ERR_INPUT,
           "%s: the mesh has %d connected components (bodies that share no node) and %lld of them float: "
           "component %d (%s) has no Dirichlet face, no Robin face with alpha > 0 and lambda = 0 on all of "
           "it, so its solution is defined only up to a constant of its own, and hexcg removes one constant "
           "for the whole mesh only (docs/solver.md, \"Null space\"); give every body a Dirichlet or Robin "
           "(alpha > 0) condition on one of its boundary tags (problem.boundary), or lambda > 0 on its "
           "material (problem.lambda), or solve the bodies as separate cases",
           p->desc.origin, nc, (long long)nfloat, first_float + 1, what);
  return HX_SUCCESS;
}

int hx_problem_check_components(hx_problem p, double shift) {
  hx_mesh m = p->m;
  const int32_t E = hx_mesh_num_elements(m), *mat = hx_mesh_element_material(m);
  const int32_t *ftag = hx_mesh_face_tags(m);
  int *fixed = NULL, *tfix = NULL, *mfix = NULL;
  int err = HX_ALLOC(&fixed, E + 1);
  if (!err) err = HX_ALLOC(&tfix, p->nt + 1);
  if (!err) err = HX_ALLOC(&mfix, p->nmat + 1);
  for (int t = 0; !err && t < p->nt; t++) { /* a Dirichlet tag, or Robin with alpha > 0 (a field counts) */
    const hx_problem_bc *bc = &p->bcs[t];
    tfix[t] = p->has_bc[t] && (bc->type == HX_BC_DIRICHLET ||
                               (bc->type == HX_BC_ROBIN && (bc->alpha_field.fn || bc->alpha > 0)));
  }
  for (int i = 0; !err && i < p->nmat; i++) /* lambda > 0 (a field counts) */
    mfix[i] = shift > 0.0 || p->lambda[i].field.fn || p->lambda[i].value > 0.0;
  for (int32_t e = 0; !err && e < E; e++) {
    fixed[e] = mfix[mat[e]];
    for (int f = 0; f < 6; f++) fixed[e] |= ftag[6 * (int64_t)e + f] >= 0 && tfix[ftag[6 * (int64_t)e + f]];
  }
  if (!err) err = hx_problem_decide_components(p, fixed, NULL);
  free(fixed), free(tfix), free(mfix);
  HX_CALL(err);
  return HX_SUCCESS;
}
