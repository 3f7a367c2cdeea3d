/* hexcg problem: what is solved on a mesh, apart from how. An hx_problem
 * owns the coefficients of -div(kappa grad u) + lambda u = f per material
 * (numbers, or fields evaluated at the GLL nodes), the boundary conditions
 * per mesh tag (Dirichlet, Neumann, Robin), the right-hand side and the
 * exact solution as functions of (x, y, z, t); it makes the discretisation
 * of an order with a shift added to lambda (the BDF time loop's beta0/dt),
 * decides the null space there (pure Neumann, a coefficient expression 0 at
 * every node, the connected components with a floating body), and fills
 * the data arrays at a time t (f, Dirichlet values, Neumann loads) with
 * their finiteness checks. The description is plain C data: app/ fills it
 * from a YAML case (app/run_case.c), a library user from arrays and
 * callbacks. problem/ depends on core, kernels, gs, mesh and disc; not on io.
 *
 * The first part of this header (the boundary-condition type) is
 * self-contained: io/hx_io.h includes it alone (HX_PROBLEM_BC_ONLY defined)
 * to map the case's names to it, without linking problem/. */
#ifndef HX_PROBLEM_BC_H
#define HX_PROBLEM_BC_H
/* dirichlet: u = value; neumann: kappa du/dn = value; robin: kappa du/dn +
 * alpha u = value */
typedef enum { HX_BC_DIRICHLET = 0, HX_BC_NEUMANN = 1, HX_BC_ROBIN = 2 } hx_bc_type;
#endif

#if !defined(HX_PROBLEM_H) && !defined(HX_PROBLEM_BC_ONLY)
#define HX_PROBLEM_H

#include "hx_disc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ the description */
/* f(x, y, z, t) with a context: a time-dependent field. fn_n (optional,
 * NULL: fn per point) gives the same values at n points. */
typedef double (*hx_tpoint_fn)(const void *ctx, double x, double y, double z, double t);
typedef void (*hx_tpoints_fn)(const void *ctx, size_t n, const double *x, const double *y, const double *z,
                              double t, double *out);
typedef struct {
  hx_tpoint_fn fn; /* NULL: none (the right-hand side 0, no exact solution) */
  const void *ctx;
  hx_tpoints_fn fn_n;
} hx_tfield;

/* A coefficient of one material: the number value, or (field.fn != NULL)
 * a field evaluated at the GLL nodes of every discretisation (each pmg
 * level sees it at its own nodes). src: where it came from, for messages
 * ("case.yaml:5:10: problem.kappa '1 - x'"; NULL: the description's
 * origin). kappa must be finite and > 0, lambda finite and >= 0 at every
 * node: checked by hx_problem_disc (hx_problem_check without building). */
typedef struct {
  double value;
  hx_field field;
  const char *src;
} hx_problem_coef;

/* The condition on one mesh tag. */
typedef struct {
  hx_bc_type type;
  /* the value (u, or kappa du/dn (+ alpha u)) at (x, y, z, t): value_exact
   * = 1: the exact solution (Dirichlet only; a Neumann or Robin tag with it
   * is refused by hx_problem_data); else value_field, or (fn NULL) the
   * number value */
  int value_exact;
  double value;
  hx_tfield value_field;
  const void *value_src; /* handed to the finiteness check (hx_problem_desc.check_finite) */
  /* robin: alpha(x, y, z) >= 0 (checked at the nodes of every level):
   * alpha_field, or (fn NULL) the number alpha */
  double alpha;
  hx_field alpha_field;
  /* the condition's name in messages: "KEY.value", "KEY.alpha"
   * ("problem.boundary.2"; NULL: "boundary") */
  const char *key;
} hx_problem_bc;

/* The finiteness check of data values (may be NULL: the default message
 * "ORIGIN: KEY: not finite at the mesh node (x, y, z) (value v)"): return
 * HX_SUCCESS, or an HX_ERR_INPUT error naming key (the dotted name:
 * "problem.rhs", "problem.exact", "problem.boundary.1.value") and, where
 * the caller knows it, the position src came from. Not collective (the
 * problem agrees the result across ranks). */
typedef int (*hx_problem_check_fn)(void *ctx, const char *key, const void *src, size_t n, const double *x,
                                   const double *y, const double *z, const double *v);

typedef struct {
  const char *origin; /* messages start with it (the case file's path); NULL: "problem" */
  /* per material index (hx_mesh_num_materials entries; NULL: kappa 1, lambda 0) */
  const hx_problem_coef *kappa;
  const hx_problem_coef *lambda;
  /* per mesh tag index (hx_mesh_num_tags entries; NULL array or entry: the
   * natural condition kappa du/dn = 0). Several tags may point to one. */
  const hx_problem_bc *const *bc;
  hx_tfield rhs;       /* f(x, y, z, t) */
  hx_tfield exact;     /* the exact solution (fn NULL: none) */
  const void *rhs_src, *exact_src; /* handed to check_finite */
  const char *rhs_key, *exact_key; /* NULL: "rhs", "exact" */
  hx_ax_geometry geometry;         /* the operator's curved-element factors (hx_disc_opts.geometry) */
  hx_problem_check_fn check_finite;
  void *check_ctx;
} hx_problem_desc;
/* Defaults: no coefficients (kappa 1, lambda 0), natural conditions
 * everywhere, f = 0, no exact solution, FP64 geometry, default messages. */
hx_problem_desc hx_problem_desc_default(void);

/* ------------------------------------------------------------ the problem */
typedef struct hx_problem_s *hx_problem;

/* Not collective. Copies the description (its arrays of coefficients and
 * conditions); borrows m, b, the fields' contexts and the strings: they
 * must outlive p and every disc made from it. */
int hx_problem_create(hx_mesh m, hx_backend b, const hx_problem_desc *desc, hx_problem *p);
/* Accepts NULL / *p == NULL; nulls *p. Destroy the discs made from p first. */
void hx_problem_destroy(hx_problem *p);

/* Collective. The discretisation of order with lambda + shift (shift >= 0:
 * a time loop's beta0/dt; 0 for a steady solve): the coefficients at the
 * nodes, the Dirichlet and Robin tags, the null space. A constant kappa
 * <= 0 or lambda < 0 is HX_ERR_INPUT at its src. Null space: no Dirichlet
 * tag, no Robin alpha > 0, lambda = 0 and shift 0 (a field counts as > 0);
 * a lambda or alpha field 0 at every node is found after the first build
 * (max over ranks) and the discretisation made again with the null space,
 * with a note (log, rank 0). The connected components are decided at the
 * first call (hx_problem_components): several with a floating one are
 * HX_ERR_INPUT naming it and the fix. A Robin alpha < 0 at a node is
 * HX_ERR_INPUT at the condition's key (hx_problem_error). The disc adds
 * the shift itself (hx_disc_opts.shift), so a new shift is changed in place
 * by hx_disc_set_shift on the disc made here (then hx_pc_set_shift on the
 * preconditioner made from it), bit for bit what a new call with that
 * shift gives; where either refuses (HX_ERR_UNSUPPORTED) a new call (a new
 * disc: destroy the old one and what was made from it first; each call's
 * coefficient fields are kept until p is destroyed). */
int hx_problem_disc(hx_problem p, int order, double shift, hx_disc *d);
/* 1 if the last hx_problem_disc decided the null space (pure Neumann). */
int hx_problem_singular(hx_problem p);
/* An error of a disc made from p, or of the levels made from it (a
 * preconditioner's hx_disc_create_order): a Robin alpha < 0 at a node
 * becomes "ORIGIN: KEY.alpha: <disc's message>; give an alpha >= 0 on the
 * whole boundary"; any other code is returned unchanged. */
int hx_problem_error(hx_problem p, int ierr);

/* The mesh's connected components as hx_problem_disc decided them (n = 0:
 * not yet): the count, the floating ones, and the first
 * HX_PROBLEM_COMPONENTS_LISTED as YAML flow lines for a summary ("    -
 * {first_element: ..., elements: ..., bbox: [...], floating: ...}"). */
#define HX_PROBLEM_COMPONENTS_LISTED 8
typedef struct {
  int n;
  int64_t floating;
  char yaml[1600];
} hx_problem_components;
const hx_problem_components *hx_problem_get_components(hx_problem p);

/* Collective. What hx_problem_disc would refuse, checked without building
 * the discretisation (a dry run): kappa > 0 and lambda + shift >= 0 of the
 * coefficient fields at the GLL nodes of order, element by element (the
 * lowest failing rank's message on every rank). */
int hx_problem_check_coefs(hx_problem p, int order, double shift);
/* Collective. The components check from the description alone: an element
 * is fixed by a face of a Dirichlet tag or of a Robin tag with alpha > 0,
 * or by lambda + shift > 0 on its material (a field counts as > 0). */
int hx_problem_check_components(hx_problem p, double shift);

/* ------------------------------------------------------------ the data at t */
enum {
  HX_PROBLEM_DATA_EXACT = 1 /* also check the exact solution finite at the nodes (steady runs) */
};
/* Collective. The data of d (made by hx_problem_disc) at time t into host
 * L-vectors (hx_disc_num_l entries; allocated here when NULL, kept
 * otherwise): *hf = f, *hg = the Dirichlet values (Dirichlet tags' nodes;
 * the rest untouched), *hbn = the Neumann and Robin loads (zeroed, then
 * summed; allocated at the first tag with a load: stays NULL when there is
 * none). Values that are not finite are refused through check_finite, agreed
 * across ranks before the next step. */
int hx_problem_data(hx_problem p, hx_disc d, double t, int flags, double **hf, double **hg, double **hbn);

#ifdef __cplusplus
}
#endif

#endif
