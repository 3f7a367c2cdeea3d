/* Global GLL numbering from the vertex/edge/face/element topology, mapped
 * GLL coordinates and Jacobian validation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

int64_t hx_mesh_num_global_gll(hx_mesh m, int p) {
  int64_t pm = p - 1;
  return m->nv_global + m->ned_global * pm + m->nf_global * pm * pm + m->ne_global * pm * pm * pm;
}

/* ids of one element's nodes (see hx_mesh.h and docs/mesh.md) */
static void element_ids(const hx_mesh m, int32_t e, int p, int64_t *out) {
  const int n = p + 1, pm = p - 1;
  const int64_t *vid = &m->vid[(size_t)e * 8], *eid = &m->eid[(size_t)e * 12], *fid = &m->fid[(size_t)e * 6];
  const int64_t base_e = 1 + m->nv_global, base_f = base_e + m->ned_global * pm,
                base_i = base_f + m->nf_global * pm * pm + m->gid[e] * pm * pm * pm;
  /* per face: origin corner and axis order of the canonical face frame */
  int fa0[6], fb0[6], fsw[6];
  for (int f = 0; f < 6; f++) {
    int64_t g[4];
    int o = 0;
    for (int c = 0; c < 4; c++) {
      g[c] = vid[hx_hex_face_vert[f][c]];
      if (g[c] < g[o]) o = c;
    }
    int a0 = o & 1, b0 = o >> 1;
    fa0[f] = a0, fb0[f] = b0;
    fsw[f] = !(g[(1 - a0) + 2 * b0] < g[a0 + 2 * (1 - b0)]);
  }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        int bi = i == 0 || i == p, bj = j == 0 || j == p, bk = k == 0 || k == p;
        int64_t id;
        int nb = bi + bj + bk;
        if (nb == 3) {
          id = 1 + vid[(i / p) + 2 * (j / p) + 4 * (k / p)];
        } else if (nb == 2) {
          int le, t, v0, v1;
          if (!bi) {
            int b = j / p, c = k / p;
            le = b + 2 * c, t = i - 1, v0 = 2 * b + 4 * c, v1 = v0 + 1;
          } else if (!bj) {
            int a = i / p, c = k / p;
            le = 4 + a + 2 * c, t = j - 1, v0 = a + 4 * c, v1 = v0 + 2;
          } else {
            int a = i / p, b = j / p;
            le = 8 + a + 2 * b, t = k - 1, v0 = a + 2 * b, v1 = v0 + 4;
          }
          int canon = vid[v0] < vid[v1] ? t : pm - 1 - t;
          id = base_e + eid[le] * pm + canon;
        } else if (nb == 1) {
          int f, iu, iv;
          if (bi)
            f = i == 0 ? 0 : 1, iu = j - 1, iv = k - 1;
          else if (bj)
            f = j == 0 ? 2 : 3, iu = i - 1, iv = k - 1;
          else
            f = k == 0 ? 4 : 5, iu = i - 1, iv = j - 1;
          int du = fa0[f] ? pm - 1 - iu : iu, dv = fb0[f] ? pm - 1 - iv : iv;
          int cu = fsw[f] ? dv : du, cv = fsw[f] ? du : dv;
          id = base_f + fid[f] * pm * pm + cu + pm * cv;
        } else {
          id = base_i + (i - 1) + pm * ((j - 1) + pm * (k - 1));
        }
        out[i + n * (j + n * k)] = id;
      }
}

int hx_mesh_gll_ids(hx_mesh m, int p, int64_t *gid) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  HX_CHECK(p >= 1 && p <= HX_MESH_MAX_P, HX_ERR_INPUT, "polynomial order must be in 1..%d, got %d",
           HX_MESH_MAX_P, p);
  HX_CHECK(gid != NULL || m->ne == 0, HX_ERR_ARG, "gid array is NULL");
  const size_t n3 = (size_t)(p + 1) * (p + 1) * (p + 1);
#pragma omp parallel for schedule(static)
  for (int32_t e = 0; e < m->ne; e++) element_ids(m, e, p, gid + (size_t)e * n3);
  return HX_SUCCESS;
}

int hx_mesh_gll_private(hx_mesh m, int p, uint8_t *priv) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  HX_CHECK(p >= 1 && p <= HX_MESH_MAX_P, HX_ERR_INPUT, "polynomial order must be in 1..%d, got %d",
           HX_MESH_MAX_P, p);
  HX_CHECK(priv != NULL || m->ne == 0, HX_ERR_ARG, "priv array is NULL");
  const int n = p + 1;
  const size_t n3 = (size_t)n * n * n;
#pragma omp parallel for schedule(static)
  for (int32_t e = 0; e < m->ne; e++) {
    /* a face's inner nodes are held by its two elements only (or one, on the boundary) */
    uint8_t face_local[6];
    for (int f = 0; f < 6; f++)
      face_local[f] = m->nbr[6 * (size_t)e + f] < 0 || m->nbr_rank[6 * (size_t)e + f] == m->rank;
    uint8_t *out = priv + (size_t)e * n3;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const int bi = i == 0 || i == p, bj = j == 0 || j == p, bk = k == 0 || k == p;
          uint8_t v;
          if (bi + bj + bk == 0)
            v = 1;
          else if (bi + bj + bk == 1)
            v = face_local[bi ? (i == p) : bj ? 2 + (j == p) : 4 + (k == p)];
          else
            v = 0;
          out[i + n * (j + n * k)] = v;
        }
  }
  return HX_SUCCESS;
}

typedef struct {
  int q, n;
  double B[16 * 3], D[16 * 3];
  double t[16], Dg[16 * 16]; /* GLL points and differentiation matrix (curved elements) */
} map_ctx;

static int map_setup(hx_mesh m, int p, map_ctx *c) {
  double t[16], w[16];
  c->n = p + 1;
  c->q = m->npe == 8 ? 2 : 3;
  HX_CALL(hx_gll(c->n, t, w));
  hx_map_basis(c->q, c->n, t, c->B, c->D);
  memcpy(c->t, t, sizeof(double) * (size_t)c->n);
  HX_CALL(hx_lagrange_deriv(c->n, c->t, c->Dg));
  return HX_SUCCESS;
}

static void corner_xyz(hx_mesh m, int32_t e, int v, double *X);

/* the element's exact curved map (mesh_curve.c), NULL if it is not curved */
static const int8_t *curved(hx_mesh m, int32_t e) {
  if (!m->ctype) return NULL;
  const int8_t *ct = &m->ctype[(size_t)e * HX_CURVE_NSLOT];
  return hx_curve_any(ct) ? ct : NULL;
}
static void curved_eval(hx_mesh m, int32_t e, const int8_t *ct, const map_ctx *c, double *xyz) {
  double V[24];
  for (int v = 0; v < 8; v++) corner_xyz(m, e, v, &V[3 * v]);
  hx_curve_eval(V, ct, &m->cpar[(size_t)e * HX_CURVE_NPAR], c->n, c->t, xyz);
}

int64_t hx_mesh_num_curved_elements(hx_mesh m) { return m ? m->ncurved : 0; }

int hx_mesh_gll_nodes(hx_mesh m, int p, double *xyz) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  const int n = p + 1, n3 = n * n * n;
  double *x = NULL, *y = NULL, *z = NULL;
  const size_t len = (size_t)m->ne * n3 + 1;
  int err = HX_ALLOC(&x, len);
  if (!err) err = HX_ALLOC(&y, len);
  if (!err) err = HX_ALLOC(&z, len);
  if (!err) err = hx_mesh_gll_coords(m, p, x, y, z);
  if (!err)
    for (size_t l = 0; l < len - 1; l++) xyz[3 * l] = x[l], xyz[3 * l + 1] = y[l], xyz[3 * l + 2] = z[l];
  hx_free_host(&x);
  hx_free_host(&y);
  hx_free_host(&z);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_mesh_gll_coords(hx_mesh m, int p, double *x, double *y, double *z) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  HX_CALL(hx_mesh_gll_coords_range(m, p, 0, m->ne, x, y, z));
  return HX_SUCCESS;
}

int hx_mesh_gll_coords_range(hx_mesh m, int p, int32_t e0, int32_t e1, double *x, double *y, double *z) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  HX_CHECK(e0 >= 0 && e0 <= e1 && e1 <= m->ne, HX_ERR_ARG, "element range [%d, %d) outside [0, %d)", (int)e0,
           (int)e1, (int)m->ne);
  HX_CHECK(p >= 1 && p <= HX_MESH_MAX_P, HX_ERR_INPUT, "polynomial order must be in 1..%d, got %d",
           HX_MESH_MAX_P, p);
  map_ctx c;
  HX_CALL(map_setup(m, p, &c));
  const int n3 = c.n * c.n * c.n;
  int err = HX_SUCCESS;
#pragma omp parallel
  {
    double *work = malloc(sizeof(double) * (hx_map_work_size(c.n) + 3 * (size_t)n3));
    if (!work) {
#pragma omp atomic write
      err = HX_ERR_MEM;
    } else {
      double *xyz = work + hx_map_work_size(c.n);
#pragma omp for schedule(static)
      for (int32_t e = e0; e < e1; e++) {
        const int8_t *ct = curved(m, e);
        if (ct)
          curved_eval(m, e, ct, &c, xyz);
        else
          hx_map_eval(c.q, &m->nodes[(size_t)e * m->npe * 3], c.n, c.B, c.D, xyz, NULL, work);
        size_t o = (size_t)(e - e0) * n3;
        for (int l = 0; l < n3; l++)
          x[o + l] = xyz[3 * l], y[o + l] = xyz[3 * l + 1], z[o + l] = xyz[3 * l + 2];
      }
      free(work);
    }
  }
  HX_CHECK(err == HX_SUCCESS, HX_ERR_MEM, "out of memory in the GLL coordinate workspace");
  return HX_SUCCESS;
}

static void corner_xyz(hx_mesh m, int32_t e, int v, double *X) {
  int q = m->npe == 8 ? 2 : 3, a = v & 1, b = (v >> 1) & 1, c = v >> 2;
  int node = a * (q - 1) + q * (b * (q - 1) + q * c * (q - 1));
  memcpy(X, &m->nodes[((size_t)e * m->npe + node) * 3], 3 * sizeof(double));
}

int hx_mesh_check_jacobian(hx_mesh m, int p, double *jmin, double *jmax, double *hmin, double *hmax) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  HX_CHECK(p >= 1 && p <= HX_MESH_MAX_P, HX_ERR_INPUT, "polynomial order must be in 1..%d, got %d",
           HX_MESH_MAX_P, p);
  map_ctx c;
  HX_CALL(map_setup(m, p, &c));
  const int n3 = c.n * c.n * c.n;
  double lmin[3] = {INFINITY, INFINITY, 0}, lmax[2] = {-INFINITY, -INFINITY}; /* J, h */
  int64_t bad = INT64_MAX;
  int32_t badl = -1, badnode = -1;
  double badj = 0;
  int err = HX_SUCCESS;
#pragma omp parallel
  {
    double *work = malloc(sizeof(double) * (hx_map_work_size(c.n) + 4 * (size_t)n3));
    double tj[2] = {INFINITY, -INFINITY}, th[2] = {INFINITY, -INFINITY};
    if (!work) {
#pragma omp atomic write
      err = HX_ERR_MEM;
    } else {
      double *det = work + hx_map_work_size(c.n);
#pragma omp for schedule(static)
      for (int32_t e = 0; e < m->ne; e++) {
        const int8_t *ct = curved(m, e);
        if (ct) {
          double *xyz = det + n3;
          curved_eval(m, e, ct, &c, xyz);
          hx_curve_detj(c.n, c.Dg, xyz, det);
        } else {
          hx_map_eval(c.q, &m->nodes[(size_t)e * m->npe * 3], c.n, c.B, c.D, NULL, det, work);
        }
        for (int l = 0; l < n3; l++) {
          if (det[l] < tj[0]) tj[0] = det[l];
          if (det[l] > tj[1]) tj[1] = det[l];
          if (!(det[l] > 0.0)) {
#pragma omp critical(hx_jac_bad)
            if (m->gid[e] < bad) bad = m->gid[e], badl = e, badnode = l, badj = det[l];
            break;
          }
        }
        for (int k = 0; k < 12; k++) {
          double A[3], B[3];
          corner_xyz(m, e, hx_hex_edge_vert[k][0], A);
          corner_xyz(m, e, hx_hex_edge_vert[k][1], B);
          double h = sqrt((A[0] - B[0]) * (A[0] - B[0]) + (A[1] - B[1]) * (A[1] - B[1]) +
                          (A[2] - B[2]) * (A[2] - B[2]));
          if (h < th[0]) th[0] = h;
          if (h > th[1]) th[1] = h;
        }
      }
      free(work);
    }
#pragma omp critical(hx_jac_red)
    {
      if (tj[0] < lmin[0]) lmin[0] = tj[0];
      if (tj[1] > lmax[0]) lmax[0] = tj[1];
      if (th[0] < lmin[1]) lmin[1] = th[0];
      if (th[1] > lmax[1]) lmax[1] = th[1];
    }
  }
  if (err) err = HX_ERROR(HX_ERR_MEM, "out of memory in the Jacobian workspace");
  int64_t gbad = INT64_MAX;
  if (!err) {
    HX_MPI(MPI_Allreduce(&bad, &gbad, 1, MPI_INT64_T, MPI_MIN, m->comm));
    if (gbad != INT64_MAX && gbad == bad) {
      char d[1024];
      size_t off = 0;
      for (int v = 0; v < 8 && off < sizeof d; v++) {
        double X[3];
        corner_xyz(m, badl, v, X);
        off += (size_t)snprintf(d + off, sizeof d - off, " %lld (%g, %g, %g)",
                                (long long)m->vid[(size_t)badl * 8 + v], X[0], X[1], X[2]);
      }
      int i = badnode % c.n, j = (badnode / c.n) % c.n, k = badnode / (c.n * c.n);
      err = HX_ERROR(HX_ERR_INPUT,
                     "non-positive Jacobian %g at GLL node (%d, %d, %d) of order %d in element %lld with "
                     "vertices (global 0-based ids)%s: the element is inverted or too distorted",
                     badj, i, j, k, p, (long long)gbad, d);
    }
  }
  HX_CALL(hx_mesh_agree(m->comm, err));
  double sendmin[2] = {lmin[0], lmin[1]}, sendmax[2] = {lmax[0], lmax[1]}, gmin[2], gmax[2];
  HX_MPI(MPI_Allreduce(sendmin, gmin, 2, MPI_DOUBLE, MPI_MIN, m->comm));
  HX_MPI(MPI_Allreduce(sendmax, gmax, 2, MPI_DOUBLE, MPI_MAX, m->comm));
  if (jmin) *jmin = gmin[0];
  if (jmax) *jmax = gmax[0];
  if (hmin) *hmin = gmin[1];
  if (hmax) *hmax = gmax[1];
  return HX_SUCCESS;
}
