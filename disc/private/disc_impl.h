/* Private to disc/: the discretisation struct. */
#ifndef HX_DISC_IMPL_H
#define HX_DISC_IMPL_H

#include "hx_disc.h"

struct hx_disc_s {
  int refs;
  hx_mesh mesh;       /* borrowed */
  hx_backend b;       /* borrowed */
  hx_disc_opts opts;  /* copied, with copies of its arrays */
  int p, n3;          /* order, (p+1)^3 */
  int32_t E;          /* local elements */
  int64_t nl;         /* E * n3 */
  int64_t *gid;       /* host L: global GLL ids */
  double *x, *y, *z;  /* host L: node coordinates */
  int *dirichlet_l;   /* host L: 1 on nodes of Dirichlet faces */
  int *dirichlet_face;/* host E*6: 1 on Dirichlet faces */
  double *kappa, *lambda; /* host E: coefficients per element (fields: the GLL-weighted mean) */
  double *kn, *ln;        /* host L: coefficients at the nodes, NULL without a field */
  hx_gs gs;
  hx_ax ax;
  hx_op op;
  double t_setup;     /* seconds to build all of the above */
  /* transfers between orders (interp.c), allocated at first use, freed with
   * the disc: backend scratch L- and G-vectors of this order (room for nl, ng
 * entries of the widest precision transferred so far), and per target
   * order q the 1D interpolation matrix from this order to q and its
   * transpose ([q][0]: (q+1) x (p+1), [q][1]: (p+1) x (q+1), row-major) */
  double *d_xl, *d_xg;
  size_t xl_bytes, xg_bytes; /* their sizes (entries of the widest precision asked for) */
  double *d_tr[HX_ORDER_MAX + 1][2];
  /* FP32 (hx_disc_op_prec, hx_disc_interpolate_p): the element operator and
   * the assembled operator built at first use, the float interpolation
   * matrices (as d_tr) and 1/multiplicity of this order's G-vector */
  hx_ax ax32;
  hx_op op32;
  float *d_tr32[HX_ORDER_MAX + 1][2];
  float *d_invm32;
  /* hx_disc_op_exact: the FP64-geometry operator of a split-geometry disc
   * (on the fly from the vertices for hex8, else precomputed), built at
   * first use; op_exact is op itself when no rank stores split elements */
  hx_ax ax_exact;
  hx_op op_exact;
  /* Robin (robin.c): host L-vector of the face weights alpha w_a w_b |.|
   * at this order (NULL: no Robin tag) and its assembled G-list (strictly
   * increasing local G indices, values) given to every operator of d */
  double *robin_l;
  int64_t nrobin;
  int32_t *robin_idx;
  double *robin_r;
};

/* robin.c: 1 if the options name a Robin tag */
int hx_disc_has_robin(const hx_disc_opts *o, int ntags);
/* copy o->robin_alpha into d->opts (d->mesh set) */
int hx_disc_robin_copy_opts(hx_disc d, const hx_disc_opts *o);
/* the face weights and G-list of d (after its gs); checks alpha >= 0 at the
 * nodes (HX_ERR_INPUT naming the node, agreed over the ranks). Collective. */
int hx_disc_robin_setup(hx_disc d);
/* hx_op_set_boundary_diag(op, ...) with d's G-list (nothing without Robin) */
int hx_disc_robin_attach(hx_disc d, hx_op op);
/* frees the Robin arrays and the copied alpha table */
void hx_disc_robin_free(hx_disc d);

/* operator.c: the element operator of op changed in place (hx_ax_set_lambda):
 * its model counts are read again */
void hx_op_ax_changed(hx_op op);

/* frees the transfer scratch and matrices of d (interp.c); first error */
int hx_disc_transfer_free(hx_disc d);

/* w_a w_b |dx/da x dx/db| at the n*n GLL nodes of face f of element e (in
 * the order of hx_mesh_face_nodes; the tangents from the nodes on the face's
 * lines through each node), with w, D the GLL weights and derivative matrix
 * of order d->p; fidx gets the element-local node indices (disc/robin.c). */
void hx_disc_face_weights(hx_disc d, int32_t e, int f, const double *w, const double *D, int *fidx, double *fw);

#endif
