/* Private to app/ (and the integration tests): wires mesh -> gather-scatter
 * -> element operator -> assembled operator, the problem set-up and the
 * solve, independent of the case file. app/run_case.c drives it from a YAML
 * case; tests/solver drive it from C functions. */
#ifndef HX_DISC_H
#define HX_DISC_H

#include "hx_kernels.h"
#include "hx_mesh.h"
#include "hx_precond.h"
#include "hx_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* f(x, y, z) with a context (expressions, closures in tests) */
typedef double (*hx_point_fn)(const void *ctx, double x, double y, double z);
typedef struct {
  hx_point_fn fn;
  const void *ctx;
} hx_field;

typedef struct {
  hx_mesh mesh;      /* borrowed */
  hx_backend b;      /* borrowed */
  int p, n3;         /* order, (p+1)^3 */
  int32_t E;         /* local elements */
  int64_t nl;        /* E * n3 */
  int64_t *gid;      /* host L: global GLL ids */
  double *x, *y, *z; /* host L: node coordinates */
  int *dirichlet_l;  /* host L: 1 on nodes of Dirichlet faces */
  hx_gs gs;
  hx_ax ax;
  hx_op op;
  double t_setup;    /* seconds to build all of the above */
} hx_disc;

typedef struct {
  int p;
  hx_geo_mode geo;
  int overlap;              /* halo exchange overlapped with interior elements */
  const double *kappa;      /* per material index (hx_mesh_num_materials), NULL = 1 */
  const double *lambda;     /* per material index, NULL = 0 */
  const int *dirichlet_tag; /* per mesh tag index: 1 = Dirichlet; NULL = all tags Dirichlet */
} hx_disc_opts;

/* Element-local indices of the (p+1)^2 GLL nodes on face f (0: r=-1, 1: r=+1,
 * 2: s=-1, 3: s=+1, 4: t=-1, 5: t=+1) into idx[a + (p+1) b], a and b along
 * the face's two reference directions in increasing order (docs/mesh.md);
 * *stride_a, *stride_b (may be NULL): index steps along a and b. */
void hx_disc_face_nodes(int p, int f, int *idx, int *stride_a, int *stride_b);

/* Collective over the mesh's communicator. */
int hx_disc_create(hx_mesh mesh, hx_backend b, const hx_disc_opts *o, hx_disc **d);
int hx_disc_destroy(hx_disc **d);
/* host L-vector of a field at the GLL nodes */
int hx_disc_eval(const hx_disc *d, hx_field f, double *h_l);

typedef struct {
  hx_pcg_result pcg;
  int exact_known;
  double err_l2, err_max;
  int64_t dofs;             /* global unique GLL nodes */
  double t_rhs, t_pc_setup, t_solve;
} hx_disc_result;

/* Add the boundary load of a Neumann condition kappa du/dn = g on the faces
 * carrying mesh tag `tag` to h_bn (host L-vector): at each face GLL node
 * w_a w_b |dx/da x dx/db| g(x) (GLL quadrature on the mapped face). */
int hx_disc_neumann_load(const hx_disc *d, int tag, hx_field g, double *h_bn);

/* L2 and max norms of u - exact, with u given as a host L-vector: u is
 * interpolated to the GLL points of order q = min(p + 3, 15) (an
 * over-integrating rule, so the norm is not the superconvergent nodal one)
 * where the element map, |J| and the exact solution are evaluated. Collective. */
int hx_disc_error(const hx_disc *d, const double *h_u_l, hx_field exact, double *l2, double *linf);

/* Solve with right-hand side h_f (host L-vector of f at the GLL nodes, NULL:
 * 0), Dirichlet values h_gd (host L-vector, read on nodes of Dirichlet faces;
 * NULL: homogeneous), extra boundary load h_bn (host L-vector, NULL: none)
 * and optional exact solution (fn NULL: none); preconditioner by name;
 * h_u0_l (host L-vector, NULL = zero) is the initial guess of the full
 * solution u. On return h_u_l (host L-vector, may be NULL) holds u. A PCG
 * monitor may be given in opts. Collective. */
int hx_disc_solve(hx_disc *d, const double *h_f, const double *h_gd, const double *h_bn, hx_field exact,
                  const char *pc_name, const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l,
                  hx_disc_result *res);

#ifdef __cplusplus
}
#endif
#endif
