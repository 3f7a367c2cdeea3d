/* hexcg disc: the discretisation of -div(kappa grad u) + lambda u = f at one
 * order p on one mesh. An hx_disc owns the global GLL numbering of the
 * local elements, their node coordinates, the gather-scatter with the
 * Dirichlet mask, the element operator, the assembled operator (hx_op), the
 * boundary data (Dirichlet face flags per element, Dirichlet values and
 * Neumann loads as L-vectors, the Robin face weights and the operator's
 * boundary diagonal: disc/robin.c), the right-hand side with Dirichlet lifting,
 * the error norms, and interpolation between two discretisations of
 * different order on the same mesh. precond/ creates discretisations of
 * lower order from the same mesh and options (p-multigrid levels, the p = 1
 * coarse space); solver/ iterates on the hx_op.
 *
 * G-vectors (hx_gs numbering, owned entries first) live in the backend's
 * memory (d_* pointers); h_* pointers are host memory. Functions marked
 * "collective" must be called on every rank of the mesh communicator. */
#ifndef HX_DISC_H
#define HX_DISC_H

#include "hx_core.h"
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ operator */
typedef struct hx_op_s *hx_op;

/* The assembled operator y = M Z^T A_L Z x on G-vectors. Borrows gs and ax
 * (they must outlive op); the Dirichlet mask is the gs mask (hx_gs_set_mask,
 * may be unset: no Dirichlet nodes). overlap != 0: elements touching other
 * ranks first, start the exchange, interior elements, finish (needs the
 * handle's element flags; with 1 rank it changes nothing). Collective. */
int hx_op_create(hx_gs gs, hx_ax ax, int overlap, hx_op *op);
/* The same, sharing the L-vector work space of share (an operator on the
 * same gs; NULL: a work space of its own): operators that are never applied
 * at the same time (those of one disc: FP64, FP32, FP64 geometry) need one
 * work space between them. The space lives until its last operator is
 * destroyed, in any order. Collective. */
int hx_op_create_shared(hx_gs gs, hx_ax ax, int overlap, hx_op share, hx_op *op);
int hx_op_destroy(hx_op *op);
int64_t hx_op_size(hx_op op);   /* ng: local G-vector length */
int64_t hx_op_owned(hx_op op);  /* G entries counted in reductions */
hx_gs hx_op_gs(hx_op op);
hx_ax hx_op_ax(hx_op op);
hx_backend hx_op_backend(hx_op op);
/* y = A x (masked). If xy != NULL also x.y over all ranks, fused into the
 * element kernel (valid when x is consistent and masked). FP64 operators
 * only (this and the two below; HX_ERR_ARG otherwise: hx_op_apply_p).
 * Collective. */
int hx_op_apply(hx_op op, const double *d_x, double *d_y, double *xy);
/* y = A x (masked) with the local x.y left as partial sums in slot k of red
 * (hx_red_fetch, then an MPI sum, gives x.y): no host wait on cuda, the
 * same bits as hx_op_apply's xy on the cpu backends. Collective (exchange). */
int hx_op_apply_red(hx_op op, const double *d_x, double *d_y, hx_red red, int k);
/* y = Z^T A_L Z x without the mask (for lifting Dirichlet data). Collective. */
int hx_op_apply_unmasked(hx_op op, const double *d_x, double *d_y);
/* The exact assembled diagonal of A (masked entries set to 1). Collective. */
int hx_op_diagonal(hx_op op, double *d_diag);
/* The same into host memory h_diag (ng doubles); d_work: backend memory of
 * ng doubles, overwritten. Collective. */
int hx_op_diagonal_host(hx_op op, double *d_work, double *h_diag);
/* An operator whose element operator is FP32 (hx_ax_create_prec with
 * HX_F32) is created with hx_op_create too (its L-vector work space holds
 * the floats). Precision of op: that of its element operator. */
hx_precision hx_op_precision(hx_op op);
/* y = M Z^T A_L Z x in the precision of op (d_x, d_y: G-vectors of that
 * precision; HX_F64 is hx_op_apply without the dot): scatter, element
 * operator, gather, exchange in that precision, with the boundary/interior
 * split overlapping the exchange as hx_op_apply. Collective. */
int hx_op_apply_p(hx_op op, const void *d_x, void *d_y);
/* The assembled operator on nk columns at once (the block solve): d_y[c] =
 * the masked apply of d_x[c] for c < nk (host arrays of nk backend G-vectors
 * in op's precision, 0 <= nk <= HX_AX_MANY_MAX), each element's factors
 * read once for all columns (hx_ax_apply_many_prec) and one exchange
 * message per neighbour (hx_gs_exchange_many_p); xy != NULL (host, nk,
 * FP64 operators only): the global x.y of each column, as hx_op_apply's.
 * Each column gets the bits of its hx_op_apply_p (the sums: of
 * hx_op_apply's xy on up to two ranks; the allreduce of nk values may add
 * in another order on more). Collective. */
int hx_op_apply_many_p(hx_op op, int nk, const void *const *d_x, void *const *d_y, double *xy);
/* An extra diagonal on m G entries (a Robin boundary term, disc/robin.c):
 * every apply adds y[idx[j]] += r[j] x[idx[j]] after the exchange (before
 * the mask), the fused x.y includes sum r_j x_j^2 over the owned listed
 * entries, and hx_op_diagonal adds r. h_idx: host, strictly increasing local
 * G indices; h_r: host, the assembled values (the same on every rank holding
 * a node). Copied (to the backend, in the precision of op); replaces an
 * earlier call's; m = 0 removes it. Not collective. */
int hx_op_set_boundary_diag(hx_op op, int64_t m, const int32_t *h_idx, const double *h_r);
/* Timers of the phases of applies so far: element kernel, exchange (s). */
void hx_op_times(hx_op op, double *t_elem, double *t_exchange, double *t_gs);

/* ------------------------------------------------------------ right-hand side */
/* Right-hand side of -div(kappa grad u) + lambda u = f with Dirichlet
 * lifting. h_f: host L-vector of f at the GLL nodes (NULL: f = 0); h_gd:
 * host L-vector of the Dirichlet values, read only where h_lflag (host
 * L-vector, the flags given to hx_gs_set_mask) is nonzero; a node with
 * several flagged copies gets their average (NULL: homogeneous). h_bn: host
 * L-vector of extra load added to the assembled right-hand side (Neumann
 * boundary integrals; NULL: none). Produces d_g (G): the lifting, equal to
 * the Dirichlet value on masked entries and 0 elsewhere; d_b (G):
 * M (Z^T (mass .* f + bn) - A g), masked. The solution is u = x + g where
 * A x = b. Collective. */
int hx_problem_rhs(hx_op op, const double *h_f, const double *h_gd, const int *h_lflag, const double *h_bn,
                   double *d_b, double *d_g);
/* A host L-vector from a device G-vector (scatter + copy). Not collective. */
int hx_op_to_l_host(hx_op op, const double *d_g, double *h_l);

/* ------------------------------------------------------------ discretisation */
/* f(x, y, z) with a context (expressions, closures in tests) */
typedef double (*hx_point_fn)(const void *ctx, double x, double y, double z);
/* out[i] = fn(ctx, x[i], y[i], z[i]) for i < n, the same values */
typedef void (*hx_points_fn)(const void *ctx, size_t n, const double *x, const double *y, const double *z,
                             double *out);
typedef struct {
  hx_point_fn fn;
  const void *ctx;
  hx_points_fn fn_n; /* optional (NULL: fn per point): used where many points are at hand */
} hx_field;

typedef struct {
  int p;                    /* order, HX_ORDER_MIN..HX_ORDER_MAX */
  hx_geo_mode geo;          /* geometric factors precomputed or on the fly */
  hx_ax_geometry geometry;  /* precomputed factors of curved elements: fp64 or split */
  int overlap;              /* halo exchange overlapped with interior elements */
  const double *kappa;      /* per material index (hx_mesh_num_materials), NULL = 1 */
  const double *lambda;     /* per material index, NULL = 0 */
  const int *dirichlet_tag; /* per mesh tag index: 1 = Dirichlet; NULL = all tags Dirichlet */
  /* Robin kappa du/dn + alpha u = g (disc/robin.c): per mesh tag index, the
   * coefficient alpha(x) >= 0 of a Robin tag (fn NULL: not Robin; a tag
   * that is also Dirichlet stays Dirichlet); NULL: no Robin tag. The array
   * is copied, the fields' ctx are borrowed (they must outlive the disc and
   * every disc made from it by hx_disc_create_order). g enters the load as
   * a Neumann value (hx_disc_neumann_load). */
  const hx_field *robin_alpha;
  /* 1: the operator's null space is the constants (pure Neumann or fully
   * periodic Poisson: no Dirichlet tag, lambda = 0, no Robin alpha > 0; the
   * caller decides). Solvers and preconditioners read it (hx_disc_nullspace)
   * and project the constant out (docs/solver.md "Null space"). */
  int nullspace;
  /* --- variable coefficients (issue 29) ---
   * Per material index (hx_mesh_num_materials entries): a field evaluated
   * at the GLL nodes of every discretisation made from these options (so
   * each pmg level and the p = 1 coarse space sees the coefficient at its
   * own nodes); an entry with fn == NULL, or a NULL array, is the
   * material's constant kappa[] / lambda[] above. kappa must be > 0 and
   * finite, lambda >= 0 and finite at every node: a violation is
   * HX_ERR_INPUT naming *_src[material] (when given: where the value came
   * from, e.g. "case.yaml:5:10: problem.kappa \"1 - x\""), the value, the
   * node's coordinates and element. The field contexts and the src strings
   * are borrowed: they must outlive every disc made from these options
   * (the arrays themselves are copied). Per element, hx_disc_kappa /
   * hx_disc_lambda then give the GLL-weighted mean over the reference
   * element, sum_q w_q c_q / sum_q w_q (the FDM boxes, the FEM coarse
   * matrix; docs/fdm.md, docs/coarse.md). */
  const hx_field *kappa_field;
  const hx_field *lambda_field;
  const char *const *kappa_src;
  const char *const *lambda_src;
  /* The Helmholtz shift (a BDF step's beta0 / dt; default 0): added to
   * lambda, the constant of a material (lambda[mt] + shift) and a field's
   * value at every node (fn(x) + shift) alike, before the element means
   * are taken. hx_disc_set_shift changes it in place. */
  double shift;
} hx_disc_opts;

/* Defaults: p = 1, precomputed geometry, overlap on, kappa 1, lambda 0, every tag Dirichlet. */
hx_disc_opts hx_disc_opts_default(void);

/* A discretisation (opaque, reference counted: hx_disc_reference adds a
 * reference, hx_disc_destroy drops one and frees on the last). It borrows
 * mesh and b: both must outlive it. */
typedef struct hx_disc_s *hx_disc;

/* A coefficient's value at a node: kappa (c = 0) must be finite and > 0,
 * lambda (c = 1) finite and >= 0. hx_disc_coef_node_error: the input
 * error that refuses value v at the GLL node (x, y, z) of element gid
 * (global id) of the material at order p; where: the case position and
 * expression (NULL: none). What hx_disc_create checks at every node, and
 * what a dry run checks without building the discretisation. */
int hx_disc_coef_valid(int c, double v);
int hx_disc_coef_node_error(int c, double v, double x, double y, double z, long long gid,
                            const char *material, int p, const char *where);

/* Collective over the mesh's communicator. Copies the options (and the
 * arrays they point to). */
int hx_disc_create(hx_mesh mesh, hx_backend b, const hx_disc_opts *o, hx_disc *d);
/* The same mesh, backend, coefficients and boundary conditions at order p
 * (p-multigrid levels, the p = 1 coarse space). Collective. */
int hx_disc_create_order(hx_disc d, int p, hx_disc *dp);
int hx_disc_reference(hx_disc d);
/* The shift in place (hx_disc_opts.shift; a time run's BDF order rise):
 * lambda per element and at the nodes, the element operators (hx_disc_op,
 * and those of hx_disc_op_prec and hx_disc_op_exact made so far) become
 * bit for bit what hx_disc_create with that shift makes; the gather-scatter,
 * the masks, the Robin term and the transfers stay, and every handle (op,
 * ax) stays valid. Discs made from d before (hx_disc_create_order) are not
 * changed: the preconditioner that made them shifts them (hx_pc_set_shift);
 * those made after take the new shift. Nothing when shift is the current
 * one. A disc with the null space flag refuses (HX_ERR_UNSUPPORTED: a
 * shift > 0 removes the null space, make a new disc); shift must be finite
 * and >= 0 (HX_ERR_ARG). On another error the disc is in an undefined
 * state: destroy it. Not collective unless lambda has a field (the node
 * check agrees over the ranks). */
int hx_disc_set_shift(hx_disc d, double shift);
/* The shift of d (hx_disc_opts.shift or the last hx_disc_set_shift). */
double hx_disc_shift(hx_disc d);
/* Collective (frees the gather-scatter); accepts NULL / *d == NULL; nulls *d;
 * returns the first error met while freeing everything. */
int hx_disc_destroy(hx_disc *d);

hx_mesh hx_disc_mesh(hx_disc d);
hx_backend hx_disc_backend(hx_disc d);
int hx_disc_order(hx_disc d);
int32_t hx_disc_num_elements(hx_disc d);
int64_t hx_disc_num_l(hx_disc d);          /* E (p+1)^3: L-vector length */
int64_t hx_disc_num_dofs(hx_disc d);       /* global unique GLL nodes */
hx_gs hx_disc_gs(hx_disc d);
hx_ax hx_disc_ax(hx_disc d);
hx_op hx_disc_op(hx_disc d);
/* The assembled operator of d in precision prec: HX_F64 is hx_disc_op(d);
 * HX_F32 is an operator on the same gather-scatter (mask, overlap split)
 * with an FP32 element operator (hx_ax_create_prec) on the same nodes,
 * kappa, lambda and geometry mode, created at the first call and kept until
 * d is destroyed (memory: the FP32 geometric factors, ncomp floats per node
 * when precomputed (6 or 7: about half of the FP64 factors), plus the
 * operator's two L-vectors and element lists, 16 bytes per node). Collective
 * at the first call for HX_F32 (every rank must ask). */
int hx_disc_op_prec(hx_disc d, hx_precision prec, hx_op *op);
double hx_disc_setup_time(hx_disc d);      /* seconds hx_disc_create took */
/* host L-vectors of the node coordinates (owned by d). They are not kept
 * after hx_disc_create: the first call computes them from the mesh (bit for
 * bit those of hx_mesh_gll_coords), and they stay until
 * hx_disc_coords_release or the disc's end; HX_ERR_MEM (the pointers NULL)
 * if they cannot be allocated. hx_disc_eval, hx_disc_dirichlet_values and
 * hx_disc_neumann_load compute them the same way. */
int hx_disc_coords(hx_disc d, const double **x, const double **y, const double **z);
/* frees the coordinates (24 bytes per L entry) until they are asked for again */
void hx_disc_coords_release(hx_disc d);
/* host, L-vector: 1 on nodes of Dirichlet faces */
const int *hx_disc_dirichlet_l(hx_disc d);
/* host, E*6: 1 on faces carrying a Dirichlet tag */
const int *hx_disc_dirichlet_faces(hx_disc d);
/* host, E each: kappa and lambda per local element (with a field: the
 * element's GLL-weighted mean, see hx_disc_opts) */
const double *hx_disc_kappa(hx_disc d);
const double *hx_disc_lambda(hx_disc d);
/* host L-vectors of kappa and lambda at the GLL nodes, given to the element
 * operator; NULL when the coefficient is a constant per material (no field
 * in the options). */
const double *hx_disc_kappa_nodes(hx_disc d);
const double *hx_disc_lambda_nodes(hx_disc d);

/* host L-vector of a field at the GLL nodes. Not collective. */
int hx_disc_eval(hx_disc d, hx_field f, double *h_l);

/* Dirichlet values g(x) at the GLL nodes of the faces carrying mesh tag
 * `tag`, written into h_gd (host L-vector; other entries untouched). */
int hx_disc_dirichlet_values(hx_disc d, int tag, hx_field g, double *h_gd);

/* Add the boundary load of a Neumann condition kappa du/dn = g on the faces
 * carrying mesh tag `tag` to h_bn (host L-vector): at each face GLL node
 * w_a w_b |dx/da x dx/db| g(x) (GLL quadrature on the mapped face). */
int hx_disc_neumann_load(hx_disc d, int tag, hx_field g, double *h_bn);

/* Robin (disc/robin.c). Every operator of d (hx_disc_op, hx_disc_op_prec,
 * hx_disc_op_exact) adds the face term alpha w_a w_b |dx/da x dx/db| of the
 * Robin faces at this order's nodes to its apply and its diagonal. Host
 * L-vector of those per-element face weights (summed over the Robin faces
 * of each element; the Q1 coarse matrix adds them element by element), or
 * NULL when no tag is Robin. */
const double *hx_disc_robin_l(hx_disc d);
/* The options' nullspace flag (the same on every level made from d). */
int hx_disc_nullspace(hx_disc d);

/* ------------------------------------------------------------ connected components
 * (disc/disc_components.c; docs/solver.md "Null space"). One connected
 * component of the mesh: elements joined through shared vertices of the
 * global numbering (periodic identification included), across ranks. */
typedef struct {
  int64_t first_element; /* its smallest global element id (0-based, the mesh's element order): its name */
  int64_t elements;      /* global element count */
  double lo[3], hi[3];   /* bounding box of its elements' nodes */
  int fixed;             /* 1: some element of it has h_fixed != 0 */
} hx_mesh_component;
/* The connected components of m, sorted by first_element, the same array on
 * every rank (*comps: free() it). h_fixed (host, one per local element, may
 * be NULL: none fixed): marks the elements that fix the constant (a
 * Dirichlet face, lambda > 0, a Robin face weight > 0); a component with
 * none floats (its constants are in the operator's null space). Collective. */
int hx_mesh_components(hx_mesh m, const int *h_fixed, int *ncomp, hx_mesh_component **comps);
/* h_fixed[e] = 1 where local element e has a Dirichlet face, a lambda
 * (element mean, hx_disc_lambda) > 0 or a Robin face weight > 0 at some
 * node of d's order, else 0. Not collective. */
int hx_disc_fixed_elements(hx_disc d, int *h_fixed);

/* The operator of d with FP64 geometric factors: hx_disc_op(d) itself unless
 * d was created with geometry split and some rank stores split elements;
 * then an operator built at first use (and kept) whose factors are FP64:
 * recomputed on the fly from the 8 vertices for hex8 meshes (no stored
 * factors), stored per node for hex27. The reference of the split
 * geometry's residual check (hx_solve). Collective at the first call. */
int hx_disc_op_exact(hx_disc d, hx_op *op);

/* Right-hand side and lifting of this discretisation (hx_problem_rhs with
 * hx_disc_op_exact and the Dirichlet flags). Collective. */
int hx_disc_rhs(hx_disc d, const double *h_f, const double *h_gd, const double *h_bn, double *d_b,
                double *d_g);

/* d_x (G) from a host L-vector holding a continuous field: every copy of a
 * node holds the same value (their average is taken), masked entries zeroed
 * when mask != 0. Collective. */
int hx_disc_from_l_host(hx_disc d, const double *h_l, int mask, double *d_x);

/* L2 and max norms of u - exact, with u given as a host L-vector: u is
 * interpolated to the GLL points of order q = min(p + 3, HX_ORDER_MAX) (an
 * over-integrating rule, so the norm is not the superconvergent nodal one)
 * where the element map, |J| and the exact solution are evaluated. Collective. */
int hx_disc_error(hx_disc d, const double *h_u_l, hx_field exact, double *l2, double *linf);

/* Interpolation between two discretisations of the same mesh (orders q of
 * `from` and p of `to`, any q, p): d_y = I d_x, the tensor-product 1D
 * Lagrange interpolation from the q+1 to the p+1 GLL points of each element
 * of the continuous field x (G-vector of `from`), written to the G-vector
 * d_y of `to` and masked with its Dirichlet mask. Exact for fields that are
 * polynomials of degree <= min(p, q) per element. Runs on the backend
 * (nothing staged through the host); the first call between two orders
 * allocates scratch vectors and the matrix, kept until the discs are
 * destroyed, so calls on the same disc must not run concurrently.
 * Collective. */
int hx_disc_interpolate(hx_disc from, hx_disc to, const double *d_x, double *d_y);
/* The transpose (restriction of a residual, a dual quantity): d_x = I^T d_y
 * with d_y a G-vector of `to` and d_x one of `from` (masked), so that
 * y.(I x) == (I^T y).x over the owned entries. Collective. */
int hx_disc_interpolate_transpose(hx_disc from, hx_disc to, const double *d_y, double *d_x);
/* The same two transfers with G-vectors in precision prec (HX_F64: the
 * functions above). HX_F32: scatter, tensor transfer (hx_tensor3_apply_p,
 * the 1D matrices rounded to float), gather, exchange, the multiplicity
 * scaling (1/multiplicity rounded to float) and the mask all in float. The
 * FP32 transpose is the exact transpose of the FP32 prolongation up to float
 * rounding of the sums. The scratch is shared with the FP64 transfers (not
 * concurrent); the float matrices and 1/multiplicity are kept in the discs
 * (at most 2 * 16^2 floats per pair of orders and 4 bytes per G entry).
 * Collective. */
int hx_disc_interpolate_p(hx_disc from, hx_disc to, hx_precision prec, const void *d_x, void *d_y);
int hx_disc_interpolate_transpose_p(hx_disc from, hx_disc to, hx_precision prec, const void *d_y, void *d_x);

#ifdef __cplusplus
}
#endif
#endif
