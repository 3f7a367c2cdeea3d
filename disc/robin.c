/* Robin conditions kappa du/dn + alpha u = g (see hx_disc.h): the face
 * term int alpha u v with GLL quadrature on the mapped face is diagonal,
 * alpha(x) w_a w_b |dx/da x dx/db| at each face node (the weights of the
 * Neumann load). Each discretisation (every pmg level, the p = 1 coarse
 * space) evaluates alpha at its own nodes: an L-vector of the per-element
 * face weights (the Q1 coarse matrix adds it element by element), assembled
 * into a G-list (entries, values) that every operator of the disc adds after
 * its exchange (hx_op_set_boundary_diag). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "disc_impl.h"

int hx_disc_has_robin(const hx_disc_opts *o, int ntags) {
  if (!o->robin_alpha) return 0;
  for (int t = 0; t < ntags; t++)
    if (o->robin_alpha[t].fn) return 1;
  return 0;
}

/* (disc_impl.h) the face quadrature weights of the Robin term and the Neumann load */
void hx_disc_face_weights(hx_disc d, int32_t e, int f, const double *w, const double *D, int *fidx, double *fw) {
  const int p = d->p, n = p + 1;
  const double *X[3] = {d->x, d->y, d->z};
  int sa, sb;
  hx_mesh_face_nodes(p, f, fidx, &sa, &sb);
  for (int b = 0; b < n; b++)
    for (int a = 0; a < n; a++) {
      const int64_t l = (int64_t)e * d->n3 + fidx[a + n * b];
      double tu[3] = {0, 0, 0}, tv[3] = {0, 0, 0};
      for (int q = 0; q < n; q++) {
        const int64_t lu = l + (int64_t)(q - a) * sa, lv = l + (int64_t)(q - b) * sb;
        for (int r = 0; r < 3; r++) tu[r] += D[a * n + q] * X[r][lu], tv[r] += D[b * n + q] * X[r][lv];
      }
      const double cx = tu[1] * tv[2] - tu[2] * tv[1], cy = tu[2] * tv[0] - tu[0] * tv[2],
                   cz = tu[0] * tv[1] - tu[1] * tv[0];
      fw[a + n * b] = w[a] * w[b] * sqrt(cx * cx + cy * cy + cz * cz);
    }
}

int hx_disc_robin_setup(hx_disc d) {
  const int ntag = hx_mesh_num_tags(d->mesh);
  if (!hx_disc_has_robin(&d->opts, ntag)) return HX_SUCCESS;
  const int p = d->p, n = p + 1;
  double t[16], w[16], D[16 * 16], fw[16 * 16];
  int fidx[16 * 16];
  HX_CALL(hx_gll(n, t, w));
  HX_CALL(hx_lagrange_deriv(n, t, D));
  HX_CALL(HX_ALLOC(&d->robin_l, d->nl + 1));
  const int32_t *ftag = hx_mesh_face_tags(d->mesh);
  /* alpha >= 0 at every node (the first bad node is named; agreed over the
   * ranks below, before the collective assembly) */
  int bad = 0;
  char msg[512] = "";
  for (int32_t e = 0; e < d->E && !bad; e++)
    for (int f = 0; f < 6 && !bad; f++) {
      const int32_t tg = ftag[6 * e + f];
      if (tg < 0 || !d->opts.robin_alpha[tg].fn) continue;
      if (d->opts.dirichlet_tag ? d->opts.dirichlet_tag[tg] : 1) continue; /* Dirichlet wins */
      const hx_field al = d->opts.robin_alpha[tg];
      hx_disc_face_weights(d, e, f, w, D, fidx, fw);
      for (int q = 0; q < n * n; q++) {
        const int64_t l = (int64_t)e * d->n3 + fidx[q];
        const double a = al.fn(al.ctx, d->x[l], d->y[l], d->z[l]);
        if (!(a >= 0.0) || !isfinite(a)) {
          snprintf(msg, sizeof msg,
                   "Robin coefficient alpha on boundary tag '%s' is %g at the node (%.17g, %.17g, %.17g) "
                   "(order %d): alpha must be finite and >= 0",
                   hx_mesh_tag_name(d->mesh, tg), a, d->x[l], d->y[l], d->z[l], p);
          bad = 1;
          break;
        }
        d->robin_l[l] += a * fw[q];
      }
    }
  /* every rank reports the message of the lowest rank with a bad node */
  MPI_Comm comm = hx_mesh_comm(d->mesh);
  int rank, size, first;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Comm_size(comm, &size));
  first = bad ? rank : size;
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first < size) {
    HX_MPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm));
    return HX_ERROR(HX_ERR_INPUT, "%s", msg);
  }
  /* the assembled diagonal, consistent on every rank holding a node */
  const int64_t ng = hx_gs_num_local(d->gs);
  HX_CHECK(ng < INT32_MAX, HX_ERR_NOT_IMPL, "G-vector of %lld entries", (long long)ng);
  double *d_l = NULL, *d_g = NULL, *h_g = NULL;
  int err = HX_ALLOC(&h_g, ng + 1);
  if (!err) err = hx_mem_alloc(d->b, sizeof(double) * (size_t)(d->nl + 1), (void **)&d_l);
  if (!err) err = hx_mem_alloc(d->b, sizeof(double) * (size_t)(ng + 1), (void **)&d_g);
  if (!err) err = hx_mem_to_device(d->b, d_l, d->robin_l, sizeof(double) * (size_t)d->nl);
  if (!err) err = hx_gs_assemble(d->gs, d_l, d_g);
  if (!err) err = hx_mem_to_host(d->b, h_g, d_g, sizeof(double) * (size_t)ng);
  hx_mem_free(d->b, (void **)&d_l);
  hx_mem_free(d->b, (void **)&d_g);
  if (!err) {
    int64_t m = 0;
    for (int64_t g = 0; g < ng; g++) m += h_g[g] != 0.0;
    err = HX_ALLOC(&d->robin_idx, m + 1);
    if (!err) err = HX_ALLOC(&d->robin_r, m + 1);
    if (!err) {
      for (int64_t g = 0; g < ng; g++)
        if (h_g[g] != 0.0) d->robin_idx[d->nrobin] = (int32_t)g, d->robin_r[d->nrobin++] = h_g[g];
    }
  }
  free(h_g);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_disc_robin_attach(hx_disc d, hx_op op) {
  if (!d->robin_l) return HX_SUCCESS;
  HX_CALL(hx_op_set_boundary_diag(op, d->nrobin, d->robin_idx, d->robin_r));
  return HX_SUCCESS;
}

void hx_disc_robin_free(hx_disc d) {
  free(d->robin_l), free(d->robin_idx), free(d->robin_r);
  free((void *)d->opts.robin_alpha);
  d->robin_l = d->robin_r = NULL, d->robin_idx = NULL, d->nrobin = 0, d->opts.robin_alpha = NULL;
}

int hx_disc_robin_copy_opts(hx_disc d, const hx_disc_opts *o) {
  d->opts.robin_alpha = NULL;
  if (!o->robin_alpha) return HX_SUCCESS;
  const int ntag = hx_mesh_num_tags(d->mesh);
  hx_field *c;
  HX_CALL(HX_ALLOC(&c, ntag + 1));
  memcpy(c, o->robin_alpha, sizeof(hx_field) * (size_t)ntag);
  d->opts.robin_alpha = c;
  return HX_SUCCESS;
}

const double *hx_disc_robin_l(hx_disc d) { return d->robin_l; }
int hx_disc_nullspace(hx_disc d) { return d->opts.nullspace; }
