/* The discretisation of one order on one mesh (see hx_disc.h): GLL ids,
 * coordinates, boundary flags, gather-scatter, element and assembled
 * operators; field evaluation, Neumann loads, error norms. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "disc_impl.h"

hx_disc_opts hx_disc_opts_default(void) {
  return (hx_disc_opts){.p = 1, .geo = HX_GEO_PRECOMPUTED, .overlap = 1};
}

/* copy n entries of src (NULL stays NULL) */
static int copy_array(const void *src, size_t size, int n, void **dst) {
  *dst = NULL;
  if (!src) return HX_SUCCESS;
  *dst = malloc(size * (size_t)(n > 0 ? n : 1));
  HX_CHECK(*dst, HX_ERR_MEM, "out of memory");
  memcpy(*dst, src, size * (size_t)n);
  return HX_SUCCESS;
}

/* a field of the options for material mt of coefficient c (0 kappa, 1 lambda), or NULL */
static const hx_field *coef_field(const hx_disc_opts *o, int c, int32_t mt) {
  const hx_field *f = c ? o->lambda_field : o->kappa_field;
  return f && f[mt].fn ? &f[mt] : NULL;
}

/* At most 1e250: the operator's entries are the coefficient times geometric
 * factors (~p^2 / h) summed over nodes; past ~1e300 they overflowed and the
 * run ended in internal messages ("assembled diagonal ... is -nan",
 * "r.Sr = 0", issue 53, defect 18). 1e250 leaves 58 orders of headroom. */
#define HX_COEF_MAX 1e250
int hx_disc_coef_valid(int c, double v) { return isfinite(v) && v <= HX_COEF_MAX && (c ? v >= 0.0 : v > 0.0); }

int hx_disc_coef_node_error(int c, double v, double x, double y, double z, long long gid,
                            const char *material, int p, const char *where) {
  const char *name = c ? "lambda" : "kappa";
  return HX_ERROR(
      HX_ERR_INPUT,
      "%s%s%s = %g at the GLL node (%.6g, %.6g, %.6g) (element %lld, material '%s', order %d): %s must "
      "be %s at every node of the mesh%s",
      where ? where : "", where ? ": " : "", name, v, x, y, z, gid, material, p, name,
      c ? "finite, >= 0 and <= 1e250" : "finite, > 0 and <= 1e250",
      isfinite(v) && v > HX_COEF_MAX ? " (beyond it the operator's entries leave the double range: divide kappa, "
                                       "lambda and the data by one factor)"
                                     : "");
}

/* Coefficients at the GLL nodes (d->kn, d->ln) where a material has a
 * field: evaluated and checked at every node (kappa > 0, lambda >= 0,
 * finite), then the per-element GLL-weighted means (d->kappa, d->lambda). */
static int eval_coefficients(hx_disc d, int c0, int c1) {
  const hx_disc_opts *o = &d->opts;
  const int n = d->p + 1, n3 = d->n3, nmat = hx_mesh_num_materials(d->mesh);
  const int32_t *mat = hx_mesh_element_material(d->mesh);
  double t[HX_ORDER_MAX + 1], w[HX_ORDER_MAX + 1];
  HX_CALL(hx_gll(n, t, w));
  double **dst[2] = {&d->kn, &d->ln}, *per[2] = {d->kappa, d->lambda};
  for (int c = c0; c <= c1; c++) {
    int any = 0;
    for (int mt = 0; mt < nmat; mt++) any |= coef_field(o, c, mt) != NULL;
    if (!any) continue;
    if (!*dst[c]) HX_CALL(HX_ALLOC(dst[c], d->nl + 1));
    double *v = *dst[c];
    const double add = c ? o->shift : 0.0; /* lambda + shift at the nodes */
    int64_t bad = -1; /* first refused node (L index) */
    for (int32_t e = 0; e < d->E; e++) {
      const hx_field *f = coef_field(o, c, mat[e]);
      double sum = 0.0, wsum = 0.0;
      for (int q = 0; q < n3; q++) {
        const int64_t l = (int64_t)e * n3 + q;
        v[l] = f ? (add != 0.0 ? f->fn(f->ctx, d->x[l], d->y[l], d->z[l]) + add
                               : f->fn(f->ctx, d->x[l], d->y[l], d->z[l]))
                 : per[c][e];
        if (bad < 0 && !hx_disc_coef_valid(c, v[l])) bad = l;
        const double wq = w[q % n] * w[(q / n) % n] * w[q / (n * n)];
        sum += wq * v[l], wsum += wq;
      }
      per[c][e] = sum / wsum;
    }
    /* every rank returns the error (the setup is collective) */
    int nbad = bad >= 0;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_INT, MPI_SUM, hx_mesh_comm(d->mesh)));
    if (bad >= 0) {
      const int32_t e = (int32_t)(bad / n3);
      const char *const *src = c ? o->lambda_src : o->kappa_src;
      const char *where = src && src[mat[e]] ? src[mat[e]] : NULL;
      HX_CALL(hx_disc_coef_node_error(c, v[bad], d->x[bad], d->y[bad], d->z[bad],
                                      (long long)hx_mesh_element_global_ids(d->mesh)[e],
                                      hx_mesh_material_name(d->mesh, mat[e]), d->p, where));
    }
    HX_CHECK(nbad == 0, HX_ERR_INPUT, "%s: invalid at a GLL node of another rank", c ? "lambda" : "kappa");
  }
  return HX_SUCCESS;
}

/* The element map the operator sees: the mesh's 8/27 nodes, or, on a mesh
 * with exact curved elements, the map at the order-p GLL nodes (npe =
 * (p+1)^3, an isoparametric map: hx_ax_create). *owned: free it after use. */
static int disc_geometry(hx_mesh mesh, int p, int *npe, const double **nodes, double **owned) {
  *owned = NULL;
  *npe = hx_mesh_nodes_per_element(mesh);
  *nodes = hx_mesh_element_nodes(mesh);
  if (hx_mesh_num_curved_elements(mesh) == 0) return HX_SUCCESS;
  const int n = p + 1;
  HX_CALL(HX_ALLOC(owned, (size_t)hx_mesh_num_elements(mesh) * n * n * n * 3 + 1));
  const int err = hx_mesh_gll_nodes(mesh, p, *owned);
  if (err) {
    hx_free_host(owned);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *npe = n * n * n, *nodes = *owned;
  return HX_SUCCESS;
}

/* lambda per element from the material table, plus the shift */
static void lambda_elements(hx_disc d) {
  const hx_disc_opts *o = &d->opts;
  const int32_t *mat = hx_mesh_element_material(d->mesh);
  for (int32_t e = 0; e < d->E; e++) {
    const double l = o->lambda ? o->lambda[mat[e]] : 0.0;
    d->lambda[e] = o->shift != 0.0 ? l + o->shift : l;
  }
}

int hx_disc_create(hx_mesh mesh, hx_backend b, const hx_disc_opts *o, hx_disc *out) {
  *out = NULL;
  HX_CHECK(o->p >= HX_ORDER_MIN && o->p <= HX_ORDER_MAX, HX_ERR_INPUT, "order %d out of range %d..%d", o->p,
           HX_ORDER_MIN, HX_ORDER_MAX);
  const double t0 = hx_wtime();
  hx_disc d;
  HX_CALL(HX_ALLOC(&d, 1));
  d->refs = 1;
  d->mesh = mesh, d->b = b, d->p = o->p;
  d->opts = *o;
  d->opts.robin_alpha = NULL; /* copied below (hx_disc_robin_copy_opts) */
  const int n = o->p + 1, nmat = hx_mesh_num_materials(mesh), ntag = hx_mesh_num_tags(mesh);
  d->n3 = n * n * n;
  d->E = hx_mesh_num_elements(mesh);
  d->nl = (int64_t)d->E * d->n3;
  int err = copy_array(o->kappa, sizeof(double), nmat, (void **)&d->opts.kappa);
  if (!err) err = copy_array(o->lambda, sizeof(double), nmat, (void **)&d->opts.lambda);
  if (!err) err = copy_array(o->dirichlet_tag, sizeof(int), ntag, (void **)&d->opts.dirichlet_tag);
  if (!err) err = hx_disc_robin_copy_opts(d, o);
  if (!err) err = copy_array(o->kappa_field, sizeof(hx_field), nmat, (void **)&d->opts.kappa_field);
  if (!err) err = copy_array(o->lambda_field, sizeof(hx_field), nmat, (void **)&d->opts.lambda_field);
  if (!err) err = copy_array(o->kappa_src, sizeof(char *), nmat, (void **)&d->opts.kappa_src);
  if (!err) err = copy_array(o->lambda_src, sizeof(char *), nmat, (void **)&d->opts.lambda_src);
  /* the gather-scatter first, from the ids alone: its setup (the
   * rendezvous) has the largest temporaries of the discretisation, so
   * nothing else of the L side is allocated yet; the ids go once it has
   * what it needs of them (hx_gs_global_ids) */
  if (!err) err = HX_ALLOC(&d->gid, d->nl);
  if (!err) err = hx_mesh_gll_ids(mesh, o->p, d->gid);
  /* the ids no other rank holds (element interiors, faces with no remote
   * neighbour: 70-85 % of them) stay out of the rendezvous */
  uint8_t *priv = NULL;
  if (!err && !hx_env_off("HEXCG_GS_PRIVATE")) {
    err = HX_ALLOC(&priv, d->nl + 1);
    if (!err) err = hx_mesh_gll_private(mesh, o->p, priv);
  }
  if (!err) err = hx_gs_create_private(b, hx_mesh_comm(mesh), d->nl, d->gid, priv, &d->gs);
  free(priv);
  free(d->gid), d->gid = NULL;
  if (!err) err = HX_ALLOC(&d->dirichlet_l, d->nl);
  if (!err) err = HX_ALLOC(&d->dirichlet_face, 6 * (size_t)d->E);
  if (!err) err = HX_ALLOC(&d->kappa, d->E);
  if (!err) err = HX_ALLOC(&d->lambda, d->E);
  if (err) goto fail;
  {
    /* the GLL coordinates only where a coefficient field or a Robin term
     * is evaluated at the nodes (most discs, pmg's levels among them, need
     * none: hx_disc_coords computes them when asked) */
    int need_xyz = hx_disc_has_robin(o, ntag);
    for (int mt = 0; mt < nmat; mt++) need_xyz |= coef_field(o, 0, mt) || coef_field(o, 1, mt);
    if (need_xyz && (err = hx_disc_coords(d, NULL, NULL, NULL))) goto fail;
  }

  /* Dirichlet flags: every node of a face carrying a Dirichlet tag */
  const int32_t *ftag = hx_mesh_face_tags(mesh);
  int fidx[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)];
  for (int32_t e = 0; e < d->E; e++)
    for (int f = 0; f < 6; f++) {
      const int32_t t = ftag[6 * e + f];
      if (t < 0 || (o->dirichlet_tag && !o->dirichlet_tag[t])) continue;
      d->dirichlet_face[6 * e + f] = 1;
      hx_mesh_face_nodes(o->p, f, fidx, NULL, NULL);
      for (int q = 0; q < n * n; q++) d->dirichlet_l[(int64_t)e * d->n3 + fidx[q]] = 1;
    }

  /* per-element coefficients from the material table */
  const int32_t *mat = hx_mesh_element_material(mesh);
  for (int32_t e = 0; e < d->E; e++) d->kappa[e] = o->kappa ? o->kappa[mat[e]] : 1.0;
  lambda_elements(d);
  if ((err = eval_coefficients(d, 0, 1))) goto fail;
  if ((err = hx_gs_set_mask(d->gs, d->dirichlet_l))) goto fail;
  {
    hx_ax_opts ao = hx_ax_opts_default();
    ao.mode = o->geo;
    ao.geometry = o->geometry;
    ao.h_kappa_node = d->kn;
    ao.h_lambda_node = d->ln;
    int gnpe;
    const double *gnodes;
    double *gown = NULL;
    if ((err = disc_geometry(mesh, o->p, &gnpe, &gnodes, &gown))) goto fail;
    if (gown) ao.mode = HX_GEO_PRECOMPUTED; /* curved elements: factors from the exact map, stored per node */
    err = hx_ax_create_opts(b, o->p, d->E, gnpe, gnodes, d->kappa, d->lambda, &ao, &d->ax);
    free(gown);
    if (err) goto fail;
  }
  if ((err = hx_op_create(d->gs, d->ax, o->overlap, &d->op))) goto fail;
  if ((err = hx_disc_robin_setup(d)) || (err = hx_disc_robin_attach(d, d->op))) goto fail;
  /* the coordinates (24 bytes per L entry) are recomputed from the mesh
   * when asked for again (hx_disc_coords): most discs (pmg's levels) never do */
  hx_disc_coords_release(d);
  d->t_setup = hx_wtime() - t0;
  *out = d;
  return HX_SUCCESS;
fail:
  hx_disc_destroy(&d);
  return hx_error_trace(__FILE__, __LINE__, __func__, err);
}

int hx_disc_create_order(hx_disc d, int p, hx_disc *dp) {
  hx_disc_opts o = d->opts;
  o.p = p;
  HX_CALL(hx_disc_create(d->mesh, d->b, &o, dp));
  return HX_SUCCESS;
}

int hx_disc_set_shift(hx_disc d, double shift) {
  HX_CHECK(d, HX_ERR_ARG, "discretisation is NULL");
  HX_CHECK(isfinite(shift) && shift >= 0.0, HX_ERR_ARG, "shift %g: must be finite and >= 0", shift);
  if (shift == d->opts.shift) return HX_SUCCESS;
  if (d->opts.nullspace)
    return HX_ERROR(
        HX_ERR_UNSUPPORTED,
        "the discretisation has the constants as its null space: a shift changes that, make a new "
        "discretisation");
  d->opts.shift = shift;
  lambda_elements(d);
  /* node values where a material's lambda is a field: at the coordinates,
   * as hx_disc_create evaluates them */
  int field = 0;
  for (int mt = 0; mt < hx_mesh_num_materials(d->mesh); mt++) field |= coef_field(&d->opts, 1, mt) != NULL;
  if (field) {
    const int had = d->x != NULL;
    HX_CALL(hx_disc_coords(d, NULL, NULL, NULL));
    const int err = eval_coefficients(d, 1, 1);
    if (!had) hx_disc_coords_release(d);
    HX_CALL(err);
  }
  hx_ax axs[3] = {d->ax, d->ax32, d->ax_exact};
  hx_op ops[3] = {d->op, d->op32, d->op_exact != d->op ? d->op_exact : NULL};
  for (int k = 0; k < 3; k++) {
    if (axs[k]) HX_CALL(hx_ax_set_lambda(axs[k], d->lambda, d->ln));
    if (ops[k]) hx_op_ax_changed(ops[k]);
  }
  return HX_SUCCESS;
}

double hx_disc_shift(hx_disc d) { return d->opts.shift; }

int hx_disc_reference(hx_disc d) {
  HX_CHECK(d, HX_ERR_ARG, "discretisation is NULL");
  d->refs++;
  return HX_SUCCESS;
}

int hx_disc_destroy(hx_disc *pd) {
  if (!pd || !*pd) return HX_SUCCESS;
  hx_disc d = *pd;
  *pd = NULL;
  if (--d->refs > 0) return HX_SUCCESS;
  int first = d->op_exact != d->op ? hx_op_destroy(&d->op_exact) : HX_SUCCESS, err;
  d->op_exact = NULL;
  if ((err = hx_op_destroy(&d->op)) && !first) first = err;
  if ((err = hx_op_destroy(&d->op32)) && !first) first = err;
  if ((err = hx_ax_destroy(&d->ax_exact)) && !first) first = err;
  if ((err = hx_ax_destroy(&d->ax32)) && !first) first = err;
  if ((err = hx_disc_transfer_free(d)) && !first) first = err;
  if ((err = hx_ax_destroy(&d->ax)) && !first) first = err;
  if ((err = hx_gs_destroy(&d->gs)) && !first) first = err;
  free(d->gid), free(d->x), free(d->y), free(d->z), free(d->dirichlet_l), free(d->dirichlet_face);
  free(d->kappa), free(d->lambda), free(d->kn), free(d->ln);
  hx_disc_robin_free(d);
  free((void *)d->opts.kappa), free((void *)d->opts.lambda), free((void *)d->opts.dirichlet_tag);
  free((void *)d->opts.kappa_field), free((void *)d->opts.lambda_field);
  free((void *)d->opts.kappa_src), free((void *)d->opts.lambda_src);
  free(d);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

hx_mesh hx_disc_mesh(hx_disc d) { return d->mesh; }
hx_backend hx_disc_backend(hx_disc d) { return d->b; }
int hx_disc_order(hx_disc d) { return d->p; }
int32_t hx_disc_num_elements(hx_disc d) { return d->E; }
int64_t hx_disc_num_l(hx_disc d) { return d->nl; }
int64_t hx_disc_num_dofs(hx_disc d) { return hx_gs_num_global(d->gs); }
hx_gs hx_disc_gs(hx_disc d) { return d->gs; }
hx_ax hx_disc_ax(hx_disc d) { return d->ax; }
hx_op hx_disc_op(hx_disc d) { return d->op; }

int hx_disc_op_prec(hx_disc d, hx_precision prec, hx_op *op) {
  *op = NULL;
  HX_CHECK(d, HX_ERR_ARG, "discretisation is NULL");
  if (prec == HX_F64) {
    *op = d->op;
    return HX_SUCCESS;
  }
  HX_CHECK(prec == HX_F32, HX_ERR_ARG, "unknown precision %d", (int)prec);
  if (!d->op32) {
    if (!d->ax32) {
      hx_ax_opts ao = hx_ax_opts_default();
      ao.mode = d->opts.geo;
      ao.h_kappa_node = d->kn;
      ao.h_lambda_node = d->ln;
      int gnpe;
      const double *gnodes;
      double *gown = NULL;
      HX_CALL(disc_geometry(d->mesh, d->p, &gnpe, &gnodes, &gown));
      if (gown) ao.mode = HX_GEO_PRECOMPUTED;
      const int err = hx_ax_create_opts_prec(d->b, d->p, d->E, gnpe, gnodes, d->kappa, d->lambda, &ao, HX_F32, &d->ax32);
      free(gown);
      HX_CALL(err);
    }
    HX_CALL(hx_op_create_shared(d->gs, d->ax32, d->opts.overlap, d->op, &d->op32));
    HX_CALL(hx_disc_robin_attach(d, d->op32));
  }
  *op = d->op32;
  return HX_SUCCESS;
}
double hx_disc_setup_time(hx_disc d) { return d->t_setup; }
/* the coordinates, computed again from the mesh if released (bit for bit
 * the same: the same map at the same points) */
static int coords_ensure(hx_disc d) {
  if (d->x) return HX_SUCCESS;
  int err = HX_ALLOC(&d->x, d->nl > 0 ? d->nl : 1);
  if (!err) err = HX_ALLOC(&d->y, d->nl > 0 ? d->nl : 1);
  if (!err) err = HX_ALLOC(&d->z, d->nl > 0 ? d->nl : 1);
  if (!err) err = hx_mesh_gll_coords(d->mesh, d->p, d->x, d->y, d->z);
  if (err) hx_disc_coords_release(d);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_disc_coords(hx_disc d, const double **x, const double **y, const double **z) {
  const int err = coords_ensure(d);
  if (x) *x = d->x;
  if (y) *y = d->y;
  if (z) *z = d->z;
  HX_CALL(err);
  return HX_SUCCESS;
}

void hx_disc_coords_release(hx_disc d) {
  if (!d) return;
  free(d->x), free(d->y), free(d->z);
  d->x = d->y = d->z = NULL;
}
const int *hx_disc_dirichlet_l(hx_disc d) { return d->dirichlet_l; }
const int *hx_disc_dirichlet_faces(hx_disc d) { return d->dirichlet_face; }
const double *hx_disc_kappa(hx_disc d) { return d->kappa; }
const double *hx_disc_lambda(hx_disc d) { return d->lambda; }
const double *hx_disc_kappa_nodes(hx_disc d) { return d->kn; }
const double *hx_disc_lambda_nodes(hx_disc d) { return d->ln; }

int hx_disc_op_exact(hx_disc d, hx_op *op) {
  *op = NULL;
  HX_CHECK(d, HX_ERR_ARG, "discretisation is NULL");
  if (!d->op_exact) {
    int32_t na, ns, ng;
    hx_ax_storage_counts(d->ax, &na, &ns, &ng);
    long long nsplit = ns;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &nsplit, 1, MPI_LONG_LONG, MPI_SUM, hx_gs_comm(d->gs)));
    if (nsplit == 0) {
      d->op_exact = d->op;
    } else {
      int npe;
      const double *gnodes;
      double *gown = NULL;
      HX_CALL(disc_geometry(d->mesh, d->p, &npe, &gnodes, &gown));
      hx_ax_opts ao = hx_ax_opts_default();
      /* on the fly takes per-element coefficients only: with node values,
       * FP64 factors stored per node */
      ao.mode = npe == 8 && !d->kn && !d->ln ? HX_GEO_ONTHEFLY : HX_GEO_PRECOMPUTED;
      ao.geometry = HX_AX_GEO_FP64;
      ao.h_kappa_node = d->kn;
      ao.h_lambda_node = d->ln;
      const int err = hx_ax_create_opts(d->b, d->p, d->E, npe, gnodes, d->kappa, d->lambda, &ao, &d->ax_exact);
      free(gown);
      HX_CALL(err);
      HX_CALL(hx_op_create_shared(d->gs, d->ax_exact, d->opts.overlap, d->op, &d->op_exact));
      HX_CALL(hx_disc_robin_attach(d, d->op_exact));
    }
  }
  *op = d->op_exact;
  return HX_SUCCESS;
}

int hx_disc_rhs(hx_disc d, const double *h_f, const double *h_gd, const double *h_bn, double *d_b, double *d_g) {
  /* the lifting's A g with the FP64 geometry (split: the discrete problem
   * is the FP64 one, hx_solve corrects towards it) */
  hx_op op;
  HX_CALL(hx_disc_op_exact(d, &op));
  HX_CALL(hx_problem_rhs(op, h_f, h_gd, d->dirichlet_l, h_bn, d_b, d_g));
  return HX_SUCCESS;
}

int hx_disc_from_l_host(hx_disc d, const double *h_l, int mask, double *d_x) {
  const int64_t ng = hx_gs_num_local(d->gs);
  double *d_l;
  HX_CALL(hx_mem_alloc(d->b, sizeof(double) * (size_t)d->nl, (void **)&d_l));
  int err = hx_mem_to_device(d->b, d_l, h_l, sizeof(double) * (size_t)d->nl);
  if (!err) err = hx_gs_assemble(d->gs, d_l, d_x);
  if (!err) err = hx_array_pointwise_mult(d->b, ng, d_x, d_x, hx_gs_inv_multiplicity(d->gs));
  if (!err && mask) err = hx_gs_apply_mask(d->gs, d_x);
  const int err2 = hx_mem_free(d->b, (void **)&d_l);
  HX_CALL(err ? err : err2);
  return HX_SUCCESS;
}

int hx_disc_eval(hx_disc d, hx_field f, double *h_l) {
  HX_CHECK(f.fn, HX_ERR_ARG, "field has no function");
  HX_CALL(coords_ensure(d));
  for (int64_t i = 0; i < d->nl; i++) h_l[i] = f.fn(f.ctx, d->x[i], d->y[i], d->z[i]);
  return HX_SUCCESS;
}

int hx_disc_dirichlet_values(hx_disc d, int tag, hx_field g, double *h_gd) {
  HX_CHECK(g.fn, HX_ERR_ARG, "field has no function");
  HX_CALL(coords_ensure(d));
  const int n = d->p + 1;
  const int32_t *ftag = hx_mesh_face_tags(d->mesh);
  int fidx[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)];
  for (int32_t e = 0; e < d->E; e++)
    for (int f = 0; f < 6; f++) {
      if (ftag[6 * e + f] != tag) continue;
      hx_mesh_face_nodes(d->p, f, fidx, NULL, NULL);
      for (int q = 0; q < n * n; q++) {
        const int64_t l = (int64_t)e * d->n3 + fidx[q];
        h_gd[l] = g.fn(g.ctx, d->x[l], d->y[l], d->z[l]);
      }
    }
  return HX_SUCCESS;
}

int hx_disc_neumann_load(hx_disc d, int tag, hx_field g, double *h_bn) {
  const int p = d->p, n = p + 1;
  double t[16], w[16], D[16 * 16];
  HX_CALL(coords_ensure(d));
  HX_CALL(hx_gll(n, t, w));
  HX_CALL(hx_lagrange_deriv(n, t, D));
  const int32_t *ftag = hx_mesh_face_tags(d->mesh);
  int fidx[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)];
  double fw[(HX_ORDER_MAX + 1) * (HX_ORDER_MAX + 1)];
  for (int32_t e = 0; e < d->E; e++)
    for (int f = 0; f < 6; f++) {
      if (ftag[6 * e + f] != tag) continue;
      hx_disc_face_weights(d, e, f, w, D, fidx, fw);
      for (int q = 0; q < n * n; q++) {
        const int64_t l = (int64_t)e * d->n3 + fidx[q];
        h_bn[l] += fw[q] * g.fn(g.ctx, d->x[l], d->y[l], d->z[l]);
      }
    }
  return HX_SUCCESS;
}

int hx_disc_error(hx_disc d, const double *h_u, hx_field exact, double *l2, double *linf) {
  const int p = d->p, n = p + 1;
  const int q = p + 3 < HX_ORDER_MAX ? p + 3 : HX_ORDER_MAX, m = q + 1, m3 = m * m * m;
  double tn[16], wn[16], tm[16], wm[16], I[16 * 16], Dm[16 * 16];
  HX_CALL(hx_gll(n, tn, wn));
  HX_CALL(hx_gll(m, tm, wm));
  HX_CALL(hx_lagrange_interp(n, tn, m, tm, I)); /* I[a*n + i] = l_i(tm_a) */
  HX_CALL(hx_lagrange_deriv(m, tm, Dm));
  /* the order-q points of a chunk of elements at a time (whole arrays of
   * them were 24 (q+1)^3 bytes per element, at p = 7 more than all the
   * solver's vectors together: this was the peak of a Jacobi run) */
  enum { CHUNK = 64 };
  double *X, *Y, *Z, *t1, *t2, *uq, *EX = NULL;
  const int64_t nq = (int64_t)CHUNK * m3;
  if (exact.fn_n) HX_CALL(HX_ALLOC(&EX, nq)); /* the exact solution at a chunk's points */
  HX_CALL(HX_ALLOC(&X, nq));
  HX_CALL(HX_ALLOC(&Y, nq));
  HX_CALL(HX_ALLOC(&Z, nq));
  HX_CALL(HX_ALLOC(&t1, m * n * n));
  HX_CALL(HX_ALLOC(&t2, m * m * n));
  HX_CALL(HX_ALLOC(&uq, m3));
  /* scale-safe: when the sum of squares under- or overflows (a problem
   * scaled by 1e-200 had an L2 error of 0.0 while its error was 100 %), a
   * second pass sums (err 2^sx)^2 with 2^sx the power of two that brings the
   * largest error near 1 (applied with ldexp: for a subnormal largest error,
   * at a 1e-305 scale, 2^sx itself is not representable and the norms were
   * NaN); the first pass alone decides every other case */
  int sx = 0; /* the second pass's scale is 2^sx */
  double glob[2];
  MPI_Comm comm = hx_mesh_comm(d->mesh);
  for (int pass = 0; pass < 2; pass++) {
    double loc[2] = {0.0, 0.0};
    for (int32_t e = 0; e < d->E; e++) {
      const int32_t ec = e % CHUNK; /* e's place in the chunk of coordinates */
      if (ec == 0) {
        const int32_t e1 = e + CHUNK < d->E ? e + CHUNK : d->E;
        const int cerr = hx_mesh_gll_coords_range(d->mesh, q, e, e1, X, Y, Z);
        if (cerr) {
          free(X), free(Y), free(Z), free(t1), free(t2), free(uq), free(EX);
          HX_CALL(cerr);
        }
        if (EX) exact.fn_n(exact.ctx, (size_t)(e1 - e) * (size_t)m3, X, Y, Z, EX);
      }
      const double *ue = h_u + (int64_t)e * d->n3;
      /* u at the order-q points: three 1D interpolations */
      for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
          for (int a = 0; a < m; a++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += I[a * n + i] * ue[i + n * (j + n * k)];
            t1[a + m * (j + n * k)] = s;
          }
      for (int k = 0; k < n; k++)
        for (int b = 0; b < m; b++)
          for (int a = 0; a < m; a++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += I[b * n + j] * t1[a + m * (j + n * k)];
            t2[a + m * (b + m * k)] = s;
          }
      for (int c = 0; c < m; c++)
        for (int b = 0; b < m; b++)
          for (int a = 0; a < m; a++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += I[c * n + k] * t2[a + m * (b + m * k)];
            uq[a + m * (b + m * c)] = s;
          }
      const double *xe[3] = {X + (int64_t)ec * m3, Y + (int64_t)ec * m3, Z + (int64_t)ec * m3};
      for (int c = 0; c < m; c++)
        for (int b = 0; b < m; b++)
          for (int a = 0; a < m; a++) {
            const int id = a + m * (b + m * c);
            double J[3][3];
            for (int r = 0; r < 3; r++) {
              double da = 0, db = 0, dc = 0;
              for (int l = 0; l < m; l++) {
                da += Dm[a * m + l] * xe[r][l + m * (b + m * c)];
                db += Dm[b * m + l] * xe[r][a + m * (l + m * c)];
                dc += Dm[c * m + l] * xe[r][a + m * (b + m * l)];
              }
              J[r][0] = da, J[r][1] = db, J[r][2] = dc;
            }
            const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                               J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                               J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
            double err = uq[id] - (EX ? EX[(int64_t)ec * m3 + id]
                                      : exact.fn(exact.ctx, xe[0][id], xe[1][id], xe[2][id]));
            if (sx) err = ldexp(err, sx);
            loc[0] += wm[a] * wm[b] * wm[c] * fabs(det) * err * err;
            loc[1] = fmax(loc[1], fabs(err));
          }
    }
    HX_MPI(MPI_Allreduce(&loc[0], &glob[0], 1, MPI_DOUBLE, MPI_SUM, comm));
    HX_MPI(MPI_Allreduce(&loc[1], &glob[1], 1, MPI_DOUBLE, MPI_MAX, comm));
    if (pass || !(glob[1] > 0 && isfinite(glob[1])) || (glob[0] >= 0x1p-900 && glob[0] <= 0x1p900)) break;
    sx = -ilogb(glob[1]);
  }
  *l2 = ldexp(sqrt(glob[0]), -sx);
  glob[1] = ldexp(glob[1], -sx);
  *linf = isnan(glob[0]) ? NAN : glob[1]; /* fmax drops NaN; the sum keeps it */
  free(X), free(Y), free(Z), free(t1), free(t2), free(uq), free(EX);
  return HX_SUCCESS;
}

