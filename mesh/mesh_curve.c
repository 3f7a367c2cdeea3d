/* Exact curved element maps (docs/mesh.md "Curved elements"): the
 * transfinite (Gordon-Hall) blend of an element's curved edges and faces,
 * as Nek5000 builds its geometry, evaluated at any tensor points.
 *
 * X = trilinear map of the corners
 *   + sum over the 12 edges of (E_k(s) - chord_k(s)) times the linear blend
 *     of the two other reference coordinates (this alone is the transfinite
 *     map of the edges: each face is the 2-D blend of its 4 edges)
 *   + sum over the sphere faces of (F(u, v) - X(u, v)) times the linear
 *     blend of the normal coordinate (F - X vanishes on the face's edges, so
 *     faces do not disturb each other).
 * Edges: straight, 'm' (the quadratic through the midpoint), 'C' (the circle
 * arc, linear in angle; z linear), or on a sphere face: the chord projected
 * radially onto the sphere (a great-circle arc); a sphere face is its
 * bilinear corner patch projected radially. Two elements that share an edge
 * or face and carry the same curve compute the same points (the
 * parametrisations are symmetric in the edge's direction and the face's
 * orientation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

int hx_curve_any(const int8_t *ct) {
  for (int k = 0; k < HX_CURVE_NSLOT; k++)
    if (ct[k]) return 1;
  return 0;
}

/* the edge's end corners (tensor) and its axis */
static void edge_ends(int le, int *v0, int *v1, int *axis) {
  const int a = le & 1, b = (le >> 1) & 1;
  if (le < 4)
    *v0 = 2 * a + 4 * b, *v1 = *v0 + 1, *axis = 0;
  else if (le < 8)
    *v0 = a + 4 * b, *v1 = *v0 + 2, *axis = 1;
  else
    *v0 = a + 2 * b, *v1 = *v0 + 4, *axis = 2;
}

static void project(const double *c, double R, const double *Y, double *P) {
  const double d[3] = {Y[0] - c[0], Y[1] - c[1], Y[2] - c[2]};
  const double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  for (int k = 0; k < 3; k++) P[k] = l > 0 ? c[k] + R * d[k] / l : Y[k];
}

/* the sphere face (if any) that contains edge le */
static int sphere_face_of_edge(const int8_t *ct, int le) {
  int v0, v1, axis;
  edge_ends(le, &v0, &v1, &axis);
  for (int f = 0; f < 6; f++) {
    if (ct[12 + f] != 's' || f / 2 == axis) continue;
    const int d = f / 2, side = f % 2;
    if (((v0 >> d) & 1) == side) return f; /* the edge's fixed coordinate along d is the face's */
  }
  return -1;
}

/* point of edge le at reference coordinate s (ends exact) */
static void edge_point(const double *V, const int8_t *ct, const double *cp, int le, double s, double *P) {
  int v0, v1, axis;
  edge_ends(le, &v0, &v1, &axis);
  const double *A = &V[3 * v0], *B = &V[3 * v1];
  const double l0 = 0.5 * (1 - s), l1 = 0.5 * (1 + s);
  double chord[3];
  for (int k = 0; k < 3; k++) chord[k] = l0 * A[k] + l1 * B[k];
  const int sf = sphere_face_of_edge(ct, le);
  if (sf >= 0) {
    project(&cp[36 + 4 * sf], cp[36 + 4 * sf + 3], chord, P);
  } else if (ct[le] == 'm') {
    const double *M = &cp[3 * le];
    for (int k = 0; k < 3; k++) P[k] = chord[k] + (M[k] - 0.5 * (A[k] + B[k])) * (1 - s * s);
  } else if (ct[le] == 'C') {
    const double cx = cp[3 * le], cy = cp[3 * le + 1], R = cp[3 * le + 2];
    const double a0 = atan2(A[1] - cy, A[0] - cx), a1 = atan2(B[1] - cy, B[0] - cx);
    double da = a1 - a0;
    while (da > M_PI) da -= 2 * M_PI;
    while (da <= -M_PI) da += 2 * M_PI;
    const double th = a0 + l1 * da;
    P[0] = cx + R * cos(th), P[1] = cy + R * sin(th), P[2] = chord[2];
  } else {
    memcpy(P, chord, sizeof chord);
  }
  if (s == -1.0) memcpy(P, A, 3 * sizeof(double));
  if (s == 1.0) memcpy(P, B, 3 * sizeof(double));
}

void hx_curve_eval(const double *V, const int8_t *ct, const double *cp, int n, const double *t, double *xyz) {
  const int n2 = n * n;
  double L[16][2];
  for (int i = 0; i < n; i++) L[i][0] = 0.5 * (1 - t[i]), L[i][1] = 0.5 * (1 + t[i]);
  /* trilinear */
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double *X = &xyz[3 * (i + n * j + n2 * k)];
        X[0] = X[1] = X[2] = 0;
        for (int v = 0; v < 8; v++) {
          const double w = L[i][v & 1] * L[j][(v >> 1) & 1] * L[k][v >> 2];
          for (int c = 0; c < 3; c++) X[c] += w * V[3 * v + c];
        }
      }
  /* edges */
  for (int le = 0; le < 12; le++) {
    if (!ct[le] && sphere_face_of_edge(ct, le) < 0) continue;
    int v0, v1, axis;
    edge_ends(le, &v0, &v1, &axis);
    const int b1 = le & 1, b2 = (le >> 1) & 1; /* the other two coordinates' sides, in axis order */
    double dE[16][3];
    for (int q = 0; q < n; q++) {
      double P[3];
      edge_point(V, ct, cp, le, t[q], P);
      for (int c = 0; c < 3; c++) dE[q][c] = P[c] - (L[q][0] * V[3 * v0 + c] + L[q][1] * V[3 * v1 + c]);
    }
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          int q;
          double w;
          if (axis == 0)
            q = i, w = L[j][b1] * L[k][b2];
          else if (axis == 1)
            q = j, w = L[i][b1] * L[k][b2];
          else
            q = k, w = L[i][b1] * L[j][b2];
          double *X = &xyz[3 * (i + n * j + n2 * k)];
          for (int c = 0; c < 3; c++) X[c] += w * dE[q][c];
        }
  }
  /* sphere faces: all corrections from the edge-blended map, then added */
  double dF[6][16 * 16][3];
  int has[6] = {0, 0, 0, 0, 0, 0};
  for (int f = 0; f < 6; f++) {
    if (ct[12 + f] != 's') continue;
    has[f] = 1;
    const int d = f / 2, side = f % 2, fixed = side ? n - 1 : 0;
    const int du = d == 0 ? 1 : 0, dv = d == 2 ? 1 : 2;
    const int stride[3] = {1, n, n2};
    for (int b = 0; b < n; b++)
      for (int a = 0; a < n; a++) {
        /* bilinear corner patch at (a, b), projected */
        double Y[3] = {0, 0, 0}, P[3];
        for (int q = 0; q < 4; q++) {
          const int v = hx_hex_face_vert[f][q]; /* face-local corner (qa, qb) at qa + 2 qb */
          const double w = L[a][q & 1] * L[b][q >> 1];
          for (int c = 0; c < 3; c++) Y[c] += w * V[3 * v + c];
        }
        project(&cp[36 + 4 * f], cp[36 + 4 * f + 3], Y, P);
        const double *X = &xyz[3 * (fixed * stride[d] + a * stride[du] + b * stride[dv])];
        const int onedge = a == 0 || b == 0 || a == n - 1 || b == n - 1;
        for (int c = 0; c < 3; c++) dF[f][a + n * b][c] = onedge ? 0.0 : P[c] - X[c];
      }
  }
  for (int f = 0; f < 6; f++) {
    if (!has[f]) continue;
    const int d = f / 2, side = f % 2;
    const int du = d == 0 ? 1 : 0, dv = d == 2 ? 1 : 2;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const int idx[3] = {i, j, k};
          const double w = L[idx[d]][side];
          const double *D = dF[f][idx[du] + n * idx[dv]];
          double *X = &xyz[3 * (i + n * j + n2 * k)];
          for (int c = 0; c < 3; c++) X[c] += w * D[c];
        }
  }
}

void hx_curve_detj(int n, const double *D, const double *xyz, double *det) {
  const int n2 = n * n;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double J[3][3] = {{0}};
        for (int m = 0; m < n; m++) {
          const double dr = D[i * n + m], ds = D[j * n + m], dt = D[k * n + m];
          const double *Xr = &xyz[3 * (m + n * j + n2 * k)], *Xs = &xyz[3 * (i + n * m + n2 * k)],
                       *Xt = &xyz[3 * (i + n * j + n2 * m)];
          for (int c = 0; c < 3; c++) J[c][0] += dr * Xr[c], J[c][1] += ds * Xs[c], J[c][2] += dt * Xt[c];
        }
        det[i + n * j + n2 * k] = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                                  J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                                  J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
      }
}

/* ---------------------------------------------------------------- shared curves (rank 0) */
typedef struct {
  int64_t id, ref; /* global edge id, e*12 + local edge */
} edge_ref;
static int cmp_edge_ref(const void *pa, const void *pb) {
  const edge_ref *a = pa, *b = pb;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return (a->ref > b->ref) - (a->ref < b->ref);
}

static int same_curve(const int8_t *ta, const double *pa, const int8_t *tb, const double *pb, int np) {
  if (*ta != *tb) return 0;
  double scale = 1.0;
  for (int i = 0; i < np; i++) scale = fmax(scale, fmax(fabs(pa[i]), fabs(pb[i])));
  for (int i = 0; i < np; i++)
    if (fabs(pa[i] - pb[i]) > 1e-9 * scale) return 0;
  return 1;
}

int hx_gmesh_curve_sync(hx_gmesh *g) {
  if (!g->ctype) return HX_SUCCESS;
  const int64_t n = g->ne * 12;
  edge_ref *r = NULL;
  HX_CALL(HX_ALLOC(&r, n + 1));
  for (int64_t i = 0; i < n; i++) r[i].id = g->eid[i], r[i].ref = i;
  qsort(r, (size_t)n, sizeof *r, cmp_edge_ref);
  int64_t copied = 0;
  int err = HX_SUCCESS;
  for (int64_t i = 0, j; i < n && !err; i = j) {
    int64_t src = -1;
    for (j = i; j < n && r[j].id == r[i].id; j++)
      if (src < 0 && g->ctype[(r[j].ref / 12) * HX_CURVE_NSLOT + r[j].ref % 12]) src = r[j].ref;
    if (src < 0) continue;
    const int8_t *ts = &g->ctype[(src / 12) * HX_CURVE_NSLOT + src % 12];
    const double *ps = &g->cpar[(src / 12) * HX_CURVE_NPAR + 3 * (src % 12)];
    for (int64_t k = i; k < j && !err; k++) {
      const int64_t e = r[k].ref / 12;
      const int le = (int)(r[k].ref % 12);
      int8_t *t = &g->ctype[e * HX_CURVE_NSLOT + le];
      double *p = &g->cpar[e * HX_CURVE_NPAR + 3 * le];
      if (!*t) {
        *t = *ts, memcpy(p, ps, 3 * sizeof(double)), copied++;
      } else if (!same_curve(t, p, ts, ps, 3)) {
        err = HX_ERROR(
            HX_ERR_INPUT,
            "%s: elements %lld and %lld share an edge but give it different curved sides ('%c' "
            "(%g, %g, %g) and '%c' (%g, %g, %g)): the mesh would have a gap; give the edge one curve",
            g->src, (long long)(g->etag ? g->etag[src / 12] : src / 12),
            (long long)(g->etag ? g->etag[e] : e), *ts, ps[0], ps[1], ps[2], *t, p[0], p[1], p[2]);
      }
    }
  }
  hx_free_host(&r);
  HX_CALL(err);
  /* sphere faces: the neighbour across the face carries the same sphere */
  for (int64_t q = 0; q < g->ne * 6; q++) {
    const int64_t e = q / 6, e2 = g->nbr[q];
    const int f = (int)(q % 6);
    if (g->ctype[e * HX_CURVE_NSLOT + 12 + f] != 's' || e2 < 0) continue;
    const int f2 = g->nbrf[q];
    int8_t *t2 = &g->ctype[e2 * HX_CURVE_NSLOT + 12 + f2];
    const double *p = &g->cpar[e * HX_CURVE_NPAR + 36 + 4 * f];
    double *p2 = &g->cpar[e2 * HX_CURVE_NPAR + 36 + 4 * f2];
    if (!*t2) {
      *t2 = 's', memcpy(p2, p, 4 * sizeof(double)), copied++;
    } else if (!same_curve(t2, p2, &g->ctype[e * HX_CURVE_NSLOT + 12 + f], p, 4)) {
      HX_CHECK(0, HX_ERR_INPUT, "%s: elements %lld and %lld share a face but give it different sphere sides",
               g->src, (long long)(g->etag ? g->etag[e] : e), (long long)(g->etag ? g->etag[e2] : e2));
    }
  }
  if (copied && hx_log_rank() == 0 && hx_log_get_level() >= HX_LOG_NORMAL)
    fprintf(
        stderr,
        "note: %s: %lld curved side(s) given by one element only are applied to the neighbours that share "
        "them (else the mesh would have gaps)\n",
        g->src, (long long)copied);
  return HX_SUCCESS;
}
