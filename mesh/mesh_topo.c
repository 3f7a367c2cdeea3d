/* Topology of the global mesh on rank 0: element sanity (distinct corners,
 * positive corner Jacobians), global edge and face numbering, face
 * neighbours with orientation, conformity checks, boundary quads -> tags. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

const int hx_hex_edge_vert[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3},
                                     {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
const int hx_hex_face_vert[6][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 1, 4, 5},
                                    {2, 3, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}};
/* handedness of (u, v, outward normal) per face */
static const int face_sign[6] = {-1, 1, 1, -1, -1, 1};

/* tensor index of corner (a,b,c) in a q^3 node array */
static int corner_node(int q, int v) {
  int a = v & 1, b = (v >> 1) & 1, c = v >> 2;
  return a * (q - 1) + q * (b * (q - 1) + q * c * (q - 1));
}

void hx_gmesh_describe(const hx_gmesh *g, int64_t e, char *buf, size_t len) { hx_gmesh_describe_face(g, e, -1, buf, len); }

/* with face f >= 0, "with vertices" lists that face's 4 corners: the
 * messages read "face F of element E ... with vertices ..." */
void hx_gmesh_describe_face(const hx_gmesh *g, int64_t e, int f, char *buf, size_t len) {
  size_t off = 0;
  int q = g->npe == 8 ? 2 : 3;
  if (g->etag)
    off += (size_t)snprintf(buf + off, len - off, "element %lld (file element tag %lld) with vertices",
                            (long long)e, (long long)g->etag[e]);
  else
    off += (size_t)snprintf(buf + off, len - off, "element %lld with vertices", (long long)e);
  for (int c = 0; c < (f >= 0 ? 4 : 8) && off < len; c++) {
    const int v = f >= 0 ? hx_hex_face_vert[f][(const int[]){0, 1, 3, 2}[c]] : c; /* around the face */
    int64_t id = g->vid[e * 8 + v];
    const double *x = &g->nodes[(e * g->npe + corner_node(q, v)) * 3];
    off += (size_t)snprintf(buf + off, len - off, " %lld (%g, %g, %g)",
                            (long long)(g->vtag ? g->vtag[id] : id), x[0], x[1], x[2]);
  }
}

static int64_t vtag_of(const hx_gmesh *g, int64_t v) { return g->vtag ? g->vtag[v] : v; }

typedef struct {
  uint64_t k; /* sort key: the smaller vertex id */
  int64_t v[2];
  int64_t ref;
} edge_rec;
typedef struct {
  uint64_t k; /* sort key: the smallest vertex id */
  int64_t v[4];
  int64_t ref;
} face_rec;

/* The order of the key, then the nv vertex ids: 0 where they are equal. */
static inline int cmp_kv(uint64_t ka, const int64_t *va, uint64_t kb, const int64_t *vb, int nv) {
  if (ka != kb) return ka < kb ? -1 : 1;
  for (int i = 0; i < nv; i++)
    if (va[i] != vb[i]) return va[i] < vb[i] ? -1 : 1;
  return 0;
}
static int cmp_edge(const void *pa, const void *pb) {
  const edge_rec *a = pa, *b = pb;
  const int c = cmp_kv(a->k, a->v, b->k, b->v, 2);
  return c ? c : a->ref < b->ref ? -1 : a->ref > b->ref;
}
static int cmp_face_key(const void *pa, const void *pb) {
  const face_rec *a = pa, *b = pb;
  return cmp_kv(a->k, a->v, b->k, b->v, 4);
}
static int cmp_face(const void *pa, const void *pb) {
  const face_rec *a = pa, *b = pb;
  const int c = cmp_kv(a->k, a->v, b->k, b->v, 4);
  return c ? c : a->ref < b->ref ? -1 : a->ref > b->ref;
}
/* Sort n records of size sz whose first member is a uint64_t key < nb: a
 * counting sort on the key, then cmp on the (short) runs of equal keys. */
static int sort_records(void *base, int64_t n, size_t sz, uint64_t nb,
                        int (*cmp)(const void *, const void *)) {
  if (n < 2) return HX_SUCCESS;
  int64_t *cnt = NULL;
  char *tmp = NULL;
  int err = HX_ALLOC(&cnt, nb + 1);
  if (!err) err = hx_calloc((size_t)n, sz, &tmp);
  if (err) goto done;
  for (int64_t i = 0; i < n; i++) {
    uint64_t k;
    memcpy(&k, (char *)base + (size_t)i * sz, sizeof k);
    if (k >= nb) {
      err = HX_ERROR(HX_ERR_INTERNAL, "sort key %llu out of range %llu", (unsigned long long)k,
                     (unsigned long long)nb);
      goto done;
    }
    cnt[k + 1]++;
  }
  for (uint64_t b = 0; b < nb; b++) cnt[b + 1] += cnt[b];
  for (int64_t i = 0; i < n; i++) {
    uint64_t k;
    memcpy(&k, (char *)base + (size_t)i * sz, sizeof k);
    memcpy(tmp + (size_t)(cnt[k]++) * sz, (char *)base + (size_t)i * sz, sz);
  }
  memcpy(base, tmp, (size_t)n * sz);
  /* cnt[k] is now the end of bucket k */
  for (uint64_t b = 0, start = 0; b < nb; b++) {
    int64_t end = cnt[b];
    if (end - (int64_t)start > 1) qsort((char *)base + start * sz, (size_t)(end - (int64_t)start), sz, cmp);
    start = (uint64_t)end;
  }
done:
  hx_free_host(&cnt);
  hx_free_host(&tmp);
  return err;
}

static void sort4(int64_t *v) {
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int64_t t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
}

/* Orientation of face f1 of element e1 relative to face f2 of e2 (see
 * hx_mesh.h). Returns 0..7, -1 if the corner cycles differ (not the same
 * quadrilateral), -2 if both elements lie on the same side. */
int hx_gmesh_face_orient(const hx_gmesh *g, int64_t e1, int f1, int64_t e2, int f2) {
  int64_t g1[4], g2[4];
  int pos[4];
  for (int c = 0; c < 4; c++) g1[c] = g->vid[e1 * 8 + hx_hex_face_vert[f1][c]];
  for (int c = 0; c < 4; c++) g2[c] = g->vid[e2 * 8 + hx_hex_face_vert[f2][c]];
  for (int c = 0; c < 4; c++) {
    pos[c] = -1;
    for (int d = 0; d < 4; d++)
      if (g2[d] == g1[c]) pos[c] = d;
    if (pos[c] < 0) return -1;
  }
  int fu = pos[0] & 1, fv = pos[0] >> 1;
  int sw = (pos[1] >> 1) != fv;
  int o = sw | (fu << 1) | (fv << 2);
  for (int c = 0; c < 4; c++) {
    int i = c & 1, j = c >> 1;
    int ii = sw ? j : i, jj = sw ? i : j;
    int ip = fu ? 1 - ii : ii, jp = fv ? 1 - jj : jj;
    if (pos[c] != ip + 2 * jp) return -1;
  }
  int det = ((sw + fu + fv) & 1) ? -1 : 1;
  if (det != -face_sign[f1] * face_sign[f2]) return -2;
  return o;
}

static int same_vertex_set(const hx_gmesh *g, int64_t a, int64_t b) {
  int64_t va[8], vb[8];
  memcpy(va, &g->vid[a * 8], sizeof va);
  memcpy(vb, &g->vid[b * 8], sizeof vb);
  for (int i = 1; i < 8; i++)
    for (int j = i; j > 0 && va[j - 1] > va[j]; j--) {
      int64_t t = va[j];
      va[j] = va[j - 1], va[j - 1] = t;
    }
  for (int i = 1; i < 8; i++)
    for (int j = i; j > 0 && vb[j - 1] > vb[j]; j--) {
      int64_t t = vb[j];
      vb[j] = vb[j - 1], vb[j - 1] = t;
    }
  return !memcmp(va, vb, sizeof va);
}

#define DESC_LEN 1024

static int check_elements(hx_gmesh *g) {
  const int q = g->npe == 8 ? 2 : 3;
  double t[2] = {-1.0, 1.0}, B[6], D[6];
  hx_map_basis(q, 2, t, B, D);
  int64_t bad = -1, badv = -1;
  double badj = 0;
  int64_t rep = -1;
#pragma omp parallel
  {
    double work[256], det[8];
#pragma omp for schedule(static)
    for (int64_t e = 0; e < g->ne; e++) {
      const int64_t *v = &g->vid[e * 8];
      int dup = 0;
      for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8; j++) dup |= v[i] == v[j];
      if (dup) {
#pragma omp critical(hx_topo_rep)
        if (rep < 0 || e < rep) rep = e;
        continue;
      }
      hx_map_eval(q, &g->nodes[e * g->npe * 3], 2, B, D, NULL, det, work);
      for (int c = 0; c < 8; c++)
        if (!(det[c] > 0.0)) {
#pragma omp critical(hx_topo_bad)
          if (bad < 0 || e < bad) bad = e, badv = c, badj = det[c];
          break;
        }
    }
  }
  char d[DESC_LEN];
  if (rep >= 0) {
    hx_gmesh_describe(g, rep, d, sizeof d);
    return HX_ERROR(HX_ERR_INPUT, "%s: degenerate element: %s (a vertex appears twice)", g->src, d);
  }
  if (bad >= 0) {
    hx_gmesh_describe(g, bad, d, sizeof d);
    return HX_ERROR(HX_ERR_INPUT,
                    "%s: non-positive Jacobian %g at corner %lld of %s (inverted or tangled element; "
                    "check the node ordering)",
                    g->src, badj, (long long)badv, d);
  }
  return HX_SUCCESS;
}

static int number_edges(hx_gmesh *g) {
  const int64_t n = g->ne * 12;
  edge_rec *r;
  HX_CALL(HX_ALLOC(&r, n));
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < g->ne; e++)
    for (int k = 0; k < 12; k++) {
      int64_t a = g->vid[e * 8 + hx_hex_edge_vert[k][0]], b = g->vid[e * 8 + hx_hex_edge_vert[k][1]];
      edge_rec *x = &r[e * 12 + k];
      x->v[0] = a < b ? a : b, x->v[1] = a < b ? b : a, x->ref = e * 12 + k;
      x->k = (uint64_t)x->v[0];
    }
  int err = sort_records(r, n, sizeof *r, (uint64_t)g->nv, cmp_edge);
  if (err) {
    hx_free_host(&r);
    return err;
  }
  HX_CALL(HX_ALLOC(&g->eid, n));
  int64_t id = -1;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || r[i].v[0] != r[i - 1].v[0] || r[i].v[1] != r[i - 1].v[1]) id++;
    g->eid[r[i].ref] = id;
  }
  g->ned = id + 1;
  hx_free_host(&r);
  return HX_SUCCESS;
}

static void face_normal(const hx_gmesh *g, int64_t e, int f, double *nrm, double *ctr, double *h) {
  const int q = g->npe == 8 ? 2 : 3;
  double X[4][3];
  for (int c = 0; c < 4; c++)
    memcpy(X[c], &g->nodes[(e * g->npe + corner_node(q, hx_hex_face_vert[f][c])) * 3], sizeof X[c]);
  double d1[3], d2[3];
  for (int k = 0; k < 3; k++) d1[k] = X[3][k] - X[0][k], d2[k] = X[2][k] - X[1][k];
  /* (u, v) cross product points along face_sign * outward */
  nrm[0] = d1[1] * d2[2] - d1[2] * d2[1];
  nrm[1] = d1[2] * d2[0] - d1[0] * d2[2];
  nrm[2] = d1[0] * d2[1] - d1[1] * d2[0];
  double l = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
  for (int k = 0; k < 3; k++) nrm[k] *= (l > 0 ? face_sign[f] / l : 0.0);
  for (int k = 0; k < 3; k++) ctr[k] = 0.25 * (X[0][k] + X[1][k] + X[2][k] + X[3][k]);
  *h = sqrt(0.5 * l);
}

/* be: the m boundary-face edge records (ref = e*6+f), sorted by vertex */
static int check_facing(hx_gmesh *g, const edge_rec *be, int64_t m) {
  /* (vertex, face) incidences from the edge records: both end points */
  edge_rec *vf = NULL;
  HX_CALL(HX_ALLOC(&vf, 2 * m));
  for (int64_t i = 0; i < m; i++) {
    vf[2 * i].v[0] = be[i].v[0], vf[2 * i].v[1] = be[i].ref, vf[2 * i].ref = 0;
    vf[2 * i + 1].v[0] = be[i].v[1], vf[2 * i + 1].v[1] = be[i].ref, vf[2 * i + 1].ref = 0;
    vf[2 * i].k = (uint64_t)vf[2 * i].v[0], vf[2 * i + 1].k = (uint64_t)vf[2 * i + 1].v[0];
  }
  int err = sort_records(vf, 2 * m, sizeof *vf, (uint64_t)g->nv, cmp_edge);
  for (int64_t i = 0; i < 2 * m && !err;) {
    int64_t j = i + 1;
    while (j < 2 * m && vf[j].v[0] == vf[i].v[0]) j++;
    for (int64_t a = i; a < j && !err; a++) {
      if (a > i && vf[a].v[1] == vf[a - 1].v[1]) continue;
      for (int64_t b = a + 1; b < j && !err; b++) {
        int64_t ra = vf[a].v[1], rb = vf[b].v[1];
        if (ra == rb || ra / 6 == rb / 6) continue;
        double na[3], nb[3], ca[3], cb[3], ha, hb;
        face_normal(g, ra / 6, (int)(ra % 6), na, ca, &ha);
        face_normal(g, rb / 6, (int)(rb % 6), nb, cb, &hb);
        double dot = na[0] * nb[0] + na[1] * nb[1] + na[2] * nb[2];
        double off = fabs((cb[0] - ca[0]) * na[0] + (cb[1] - ca[1]) * na[1] + (cb[2] - ca[2]) * na[2]);
        double h = ha < hb ? ha : hb, H = ha > hb ? ha : hb;
        double dc = sqrt((cb[0] - ca[0]) * (cb[0] - ca[0]) + (cb[1] - ca[1]) * (cb[1] - ca[1]) +
                         (cb[2] - ca[2]) * (cb[2] - ca[2]));
        /* coplanar, opposite, and overlapping (centres closer than 3/4 of the
         * larger face's size; faces touching along an edge are 1 size apart) */
        if (dot < -0.999 && off < 1e-6 * h && dc < 0.75 * H) {
          char d1[DESC_LEN], d2[DESC_LEN];
          hx_gmesh_describe_face(g, ra / 6, (int)(ra % 6), d1, sizeof d1);
          hx_gmesh_describe_face(g, rb / 6, (int)(rb % 6), d2, sizeof d2);
          err = HX_ERROR(HX_ERR_INPUT,
                         "%s: non-conforming faces: face %d of %s and face %d of %s touch face to face "
                         "(at vertex %lld) without sharing all four vertices: a hanging node or unmerged "
                         "duplicate nodes",
                         g->src, (int)(ra % 6), d1, (int)(rb % 6), d2, (long long)vtag_of(g, vf[i].v[0]));
        }
      }
    }
    i = j;
  }
  free(vf);
  return err;
}

/* Boundary faces that overlap face to face without sharing a vertex (small
 * hexes shifted on a big face, two hexes offset by half a face) or lie
 * across a thin gap: check_facing only looks at faces with a common vertex.
 * The boundary faces are bucketed in a uniform grid of about their mean size
 * (each in every cell its box covers), and each pair sharing a cell is
 * tested once: antiparallel normals, planes closer than OVERLAP_GAP of the
 * smaller face's size, and interiors that overlap in the plane by more than
 * OVERLAP_EPS of it (separating-axis test of the two corner quadrilaterals;
 * faces that meet only along an edge or at a corner pass). */
#define OVERLAP_GAP 1e-3
#define OVERLAP_EPS 1e-4
typedef struct {
  double X[4][3]; /* corners in cyclic order */
  double n[3], c[3], h, lo[3], hi[3];
  int64_t ref;
} bface;
typedef struct {
  uint64_t k;
  int64_t f;
} bcell;

static int cmp_bcell(const void *pa, const void *pb) {
  const bcell *a = pa, *b = pb;
  return a->k < b->k ? -1 : a->k > b->k ? 1 : (a->f > b->f) - (a->f < b->f);
}

/* the interiors of the two quads, projected on the plane of a, overlap by more than eps */
static int quads_overlap(const bface *a, const bface *b, double eps) {
  double t1[3], t2[3];
  const double *n = a->n;
  /* a frame of the plane: t1 orthogonal to n, t2 = n x t1 */
  if (fabs(n[0]) < 0.9) t1[0] = 0, t1[1] = n[2], t1[2] = -n[1];
  else t1[0] = -n[2], t1[1] = 0, t1[2] = n[0];
  double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int k = 0; k < 3; k++) t1[k] /= l;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
  double P[2][4][2];
  const bface *q[2] = {a, b};
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < 4; c++) {
      double d[3] = {q[s]->X[c][0] - a->c[0], q[s]->X[c][1] - a->c[1], q[s]->X[c][2] - a->c[2]};
      P[s][c][0] = d[0] * t1[0] + d[1] * t1[1] + d[2] * t1[2];
      P[s][c][1] = d[0] * t2[0] + d[1] * t2[1] + d[2] * t2[2];
    }
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < 4; c++) {
      const double *u = P[s][c], *v = P[s][(c + 1) % 4];
      double ax[2] = {v[1] - u[1], u[0] - v[0]};
      double al = sqrt(ax[0] * ax[0] + ax[1] * ax[1]);
      if (al == 0) continue;
      ax[0] /= al, ax[1] /= al;
      double mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY};
      for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++) {
          double pr = P[t][k][0] * ax[0] + P[t][k][1] * ax[1];
          mn[t] = fmin(mn[t], pr), mx[t] = fmax(mx[t], pr);
        }
      if (fmin(mx[0], mx[1]) - fmax(mn[0], mn[1]) <= eps) return 0;
    }
  return 1;
}

static int check_overlap(hx_gmesh *g) {
  const int q = g->npe == 8 ? 2 : 3;
  static const int cyc[4] = {0, 1, 3, 2};
  int64_t nb = 0;
  for (int64_t i = 0; i < g->ne * 6; i++) nb += g->nbr[i] < 0;
  if (nb < 2) return HX_SUCCESS;
  bface *bf = NULL;
  bcell *cell = NULL;
  HX_CALL(HX_ALLOC(&bf, nb));
  double glo[3] = {INFINITY, INFINITY, INFINITY}, ghi[3] = {-INFINITY, -INFINITY, -INFINITY}, hsum = 0;
  int64_t m = 0;
  for (int64_t e = 0; e < g->ne; e++)
    for (int f = 0; f < 6; f++) {
      if (g->nbr[e * 6 + f] >= 0) continue;
      bface *b = &bf[m++];
      b->ref = e * 6 + f;
      for (int c = 0; c < 4; c++)
        memcpy(b->X[c], &g->nodes[(e * g->npe + corner_node(q, hx_hex_face_vert[f][cyc[c]])) * 3],
               sizeof b->X[c]);
      face_normal(g, e, f, b->n, b->c, &b->h);
      for (int k = 0; k < 3; k++) {
        b->lo[k] = fmin(fmin(b->X[0][k], b->X[1][k]), fmin(b->X[2][k], b->X[3][k])) - OVERLAP_GAP * b->h;
        b->hi[k] = fmax(fmax(b->X[0][k], b->X[1][k]), fmax(b->X[2][k], b->X[3][k])) + OVERLAP_GAP * b->h;
        glo[k] = fmin(glo[k], b->lo[k]), ghi[k] = fmax(ghi[k], b->hi[k]);
      }
      hsum += b->h;
    }
  /* the cell size: the mean face size, grown until the insertions stay below
   * 16 per face and the grid fits 21 bits per axis */
  double cs = hsum / (double)nb;
  int64_t nins = 0, dim[3];
  for (;;) {
    int fits = 1;
    for (int k = 0; k < 3; k++) {
      double d = floor((ghi[k] - glo[k]) / cs) + 1;
      fits &= d < (double)(1 << 21);
      dim[k] = (int64_t)fmin(d, (double)(1 << 21));
    }
    nins = 0;
    for (int64_t i = 0; i < nb && fits; i++) {
      int64_t c = 1;
      for (int k = 0; k < 3; k++)
        c *= (int64_t)floor((bf[i].hi[k] - glo[k]) / cs) - (int64_t)floor((bf[i].lo[k] - glo[k]) / cs) + 1;
      nins += c;
    }
    if (fits && nins <= 16 * nb) break;
    cs *= 2;
  }
  int err = HX_ALLOC(&cell, nins);
  int64_t w = 0;
  for (int64_t i = 0; i < nb && !err; i++) {
    int64_t a[3], z[3];
    for (int k = 0; k < 3; k++)
      a[k] = (int64_t)floor((bf[i].lo[k] - glo[k]) / cs), z[k] = (int64_t)floor((bf[i].hi[k] - glo[k]) / cs);
    for (int64_t x = a[0]; x <= z[0]; x++)
      for (int64_t y = a[1]; y <= z[1]; y++)
        for (int64_t t = a[2]; t <= z[2]; t++)
          cell[w].k = (uint64_t)(x + dim[0] * (y + dim[1] * t)), cell[w++].f = i;
  }
  if (!err) qsort(cell, (size_t)w, sizeof *cell, cmp_bcell);
  for (int64_t i = 0; i < w && !err;) {
    int64_t j = i + 1;
    while (j < w && cell[j].k == cell[i].k) j++;
    for (int64_t s = i; s < j && !err; s++)
      for (int64_t t = s + 1; t < j && !err; t++) {
        const bface *A = &bf[cell[s].f], *B = &bf[cell[t].f];
        if (A->ref / 6 == B->ref / 6) continue;
        if (A->n[0] * B->n[0] + A->n[1] * B->n[1] + A->n[2] * B->n[2] > -0.99) continue;
        /* test each pair once: in the cell holding the low corner of the boxes' intersection */
        int64_t lc[3];
        for (int k = 0; k < 3; k++) lc[k] = (int64_t)floor((fmax(A->lo[k], B->lo[k]) - glo[k]) / cs);
        uint64_t own = (uint64_t)(lc[0] + dim[0] * (lc[1] + dim[1] * lc[2]));
        if (own != cell[i].k) continue;
        double h = fmin(A->h, B->h);
        double gap = fabs((B->c[0] - A->c[0]) * A->n[0] + (B->c[1] - A->c[1]) * A->n[1] +
                          (B->c[2] - A->c[2]) * A->n[2]);
        if (gap > OVERLAP_GAP * h || !quads_overlap(A, B, OVERLAP_EPS * h)) continue;
        char d1[DESC_LEN], d2[DESC_LEN], how[64] = "";
        if (gap > 1e-6 * h) snprintf(how, sizeof how, " across a gap of %.3g", gap);
        hx_gmesh_describe_face(g, A->ref / 6, (int)(A->ref % 6), d1, sizeof d1);
        hx_gmesh_describe_face(g, B->ref / 6, (int)(B->ref % 6), d2, sizeof d2);
        err = HX_ERROR(HX_ERR_INPUT,
                       "%s: non-conforming faces: face %d of %s (centre (%g, %g, %g)) and face %d of %s "
                       "(centre (%g, %g, %g)) overlap face to face%s without sharing their vertices, so "
                       "they would be solved as two insulated walls: hexcg needs a conforming mesh (merge "
                       "the nodes, e.g. Gmsh's Coherence, or mesh the interface conformingly)",
                       g->src, (int)(A->ref % 6), d1, A->c[0], A->c[1], A->c[2], (int)(B->ref % 6), d2, B->c[0],
                       B->c[1], B->c[2], how);
      }
    i = j;
  }
  hx_free_host(&cell);
  hx_free_host(&bf);
  return err;
}

/* vertices at the same location with different ids (unmerged nodes): the
 * vertices are bucketed in cells of the tolerance's size, sorted by cell,
 * and each is compared with those of the 27 cells around it */
typedef struct {
  int64_t q[3];
  int64_t v;
} vcell;
static int cmp_vcell(const void *pa, const void *pb) {
  const vcell *a = pa, *b = pb;
  for (int d = 0; d < 3; d++)
    if (a->q[d] != b->q[d]) return a->q[d] < b->q[d] ? -1 : 1;
  return a->v < b->v ? -1 : a->v > b->v;
}
static int check_coincident(hx_gmesh *g, double *tol_out) {
  const int q = g->npe == 8 ? 2 : 3;
  double *X = NULL;
  vcell *c = NULL;
  HX_CALL(HX_ALLOC(&X, g->nv * 3));
  double hmin = INFINITY, xmax = 0;
  int64_t he = -1, vmax = 0, vbad = -1;
  int err = HX_SUCCESS;
  for (int64_t e = 0; e < g->ne; e++)
    for (int v = 0; v < 8; v++) {
      const int64_t vi = g->vid[e * 8 + v];
      double *x = &X[vi * 3];
      memcpy(x, &g->nodes[(e * g->npe + corner_node(q, v)) * 3], 3 * sizeof(double));
      for (int d = 0; d < 3; d++) {
        if (!isfinite(x[d]) && vbad < 0) vbad = vi;
        if (fabs(x[d]) > xmax) xmax = fabs(x[d]), vmax = vi;
      }
    }
  if (vbad >= 0) {
    const double *x = &X[vbad * 3];
    err = HX_ERROR(HX_ERR_INPUT, "%s: vertex %lld at (%g, %g, %g) has a coordinate that is not finite", g->src,
                   (long long)vtag_of(g, vbad), x[0], x[1], x[2]);
    goto done;
  }
  if (xmax > HX_MESH_COORD_MAX) {
    const double *x = &X[vmax * 3];
    err = HX_ERROR(HX_ERR_INPUT,
                   "%s: vertex %lld at (%g, %g, %g) is outside the supported coordinates |x|, |y|, |z| <= %g "
                   "(the geometric factors and norms would overflow); rescale the mesh",
                   g->src, (long long)vtag_of(g, vmax), x[0], x[1], x[2], HX_MESH_COORD_MAX);
    goto done;
  }
  for (int64_t e = 0; e < g->ne; e++)
    for (int k = 0; k < 12; k++) {
      const double *A = &X[g->vid[e * 8 + hx_hex_edge_vert[k][0]] * 3],
                   *B = &X[g->vid[e * 8 + hx_hex_edge_vert[k][1]] * 3];
      /* scaled, so that neither tiny nor huge edges under- or overflow */
      double m = 0, h = 0;
      for (int d = 0; d < 3; d++) m = fmax(m, fabs(A[d] - B[d]));
      if (m > 0)
        for (int d = 0; d < 3; d++) h += ((A[d] - B[d]) / m) * ((A[d] - B[d]) / m);
      h = m * sqrt(h);
      if (h < hmin) hmin = h, he = e;
    }
  const double tol = 1e-8 * hmin;
  *tol_out = tol;
  if (!(hmin > 0) || !(hmin >= HX_MESH_EDGE_MIN) || !(tol > 1e-15 * xmax)) {
    char d[DESC_LEN];
    hx_gmesh_describe(g, he, d, sizeof d);
    if (!(hmin > 0))
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: %s has an edge of length 0 (coincident vertices or a degenerate element)", g->src, d);
    else if (!(hmin >= HX_MESH_EDGE_MIN))
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: %s has an edge of length %g, below the smallest supported element size %g (the "
                     "geometric factors and norms would underflow); rescale the mesh",
                     g->src, d, hmin, HX_MESH_EDGE_MIN);
    else
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: %s has an edge of length %g, too short against coordinates of magnitude %g: double "
                     "precision resolves edges down to 1e-7 of the coordinates (move the mesh towards the "
                     "origin, or coincident vertices?)",
                     g->src, d, hmin, xmax);
    goto done;
  }
  err = HX_ALLOC(&c, g->nv);
  if (err) goto done;
  for (int64_t v = 0; v < g->nv; v++) {
    c[v].v = v;
    for (int d = 0; d < 3; d++) c[v].q[d] = (int64_t)floor(X[v * 3 + d] / tol);
  }
  qsort(c, (size_t)g->nv, sizeof *c, cmp_vcell);
  for (int64_t i = 0; i < g->nv && !err; i++)
    for (int dx = -1; dx <= 1 && !err; dx++)
      for (int dy = -1; dy <= 1 && !err; dy++) {
        vcell key = {{c[i].q[0] + dx, c[i].q[1] + dy, c[i].q[2] - 1}, -1};
        const int64_t lo = hx_lower_bound(c, g->nv, sizeof *c, &key, cmp_vcell);
        for (int64_t j = lo;
             j < g->nv && c[j].q[0] == key.q[0] && c[j].q[1] == key.q[1] && c[j].q[2] <= c[i].q[2] + 1; j++) {
          if (c[j].v <= c[i].v) continue;
          const double *A = &X[c[i].v * 3], *B = &X[c[j].v * 3];
          if (fabs(A[0] - B[0]) <= tol && fabs(A[1] - B[1]) <= tol && fabs(A[2] - B[2]) <= tol) {
            char at[96] = ""; /* where the two node records are in the file */
            if (g->vloc) {
              int64_t la = g->vloc[c[i].v], lb = g->vloc[c[j].v];
              if (la > lb) {
                int64_t t = la;
                la = lb, lb = t;
              }
              snprintf(at, sizeof at, " (%s %lld and %lld)", g->vloc_bin ? "byte offsets" : "lines",
                       (long long)la, (long long)lb);
            }
            err = HX_ERROR(
                HX_ERR_INPUT,
                "%s: vertices %lld and %lld%s are at the same point (%g, %g, %g): duplicated nodes "
                "(merge them, e.g. Gmsh's Coherence)",
                g->src, (long long)vtag_of(g, c[i].v), (long long)vtag_of(g, c[j].v), at, A[0], A[1], A[2]);
            break;
          }
        }
      }
done:
  hx_free_host(&X);
  hx_free_host(&c);
  return err;
}

static int number_faces(hx_gmesh *g) {
  const int64_t n = g->ne * 6;
  face_rec *r = NULL;
  edge_rec *be = NULL;
  int err = HX_SUCCESS;
  char d1[DESC_LEN], d2[DESC_LEN];
  HX_CALL(HX_ALLOC(&r, n));
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < g->ne; e++)
    for (int f = 0; f < 6; f++) {
      face_rec *x = &r[e * 6 + f];
      for (int c = 0; c < 4; c++) x->v[c] = g->vid[e * 8 + hx_hex_face_vert[f][c]];
      sort4(x->v);
      x->ref = e * 6 + f;
      x->k = (uint64_t)x->v[0];
    }
  err = sort_records(r, n, sizeof *r, (uint64_t)g->nv, cmp_face);
  if (!err) err = HX_ALLOC(&g->fid, n);
  if (!err) err = HX_ALLOC(&g->nbr, n);
  if (!err) err = HX_ALLOC(&g->nbrf, n);
  if (!err) err = HX_ALLOC(&g->nbro, n);
  if (err) goto done;
  int64_t id = -1, nbnd = 0;
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && !cmp_face_key(&r[i], &r[j])) j++;
    id++;
    for (int64_t k = i; k < j; k++) {
      g->fid[r[k].ref] = id;
      g->nbr[r[k].ref] = -1, g->nbrf[r[k].ref] = -1, g->nbro[r[k].ref] = -1;
    }
    int64_t e1 = r[i].ref / 6, f1 = r[i].ref % 6;
    if (j - i > 2) {
      int64_t e3 = r[i + 2].ref / 6;
      hx_gmesh_describe(g, e1, d1, sizeof d1);
      hx_gmesh_describe(g, e3, d2, sizeof d2);
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: face (vertices %lld %lld %lld %lld) is shared by %lld elements (at most 2 "
                     "allowed), among them %s and %s",
                     g->src, (long long)vtag_of(g, r[i].v[0]), (long long)vtag_of(g, r[i].v[1]),
                     (long long)vtag_of(g, r[i].v[2]), (long long)vtag_of(g, r[i].v[3]), (long long)(j - i),
                     d1, d2);
      goto done;
    }
    if (j - i == 2) {
      int64_t e2 = r[i + 1].ref / 6, f2 = r[i + 1].ref % 6;
      if (same_vertex_set(g, e1, e2)) {
        hx_gmesh_describe(g, e1, d1, sizeof d1);
        hx_gmesh_describe(g, e2, d2, sizeof d2);
        err = HX_ERROR(HX_ERR_INPUT, "%s: duplicated element: %s and %s have the same vertices", g->src, d1,
                       d2);
        goto done;
      }
      int o12 = hx_gmesh_face_orient(g, e1, (int)f1, e2, (int)f2),
          o21 = hx_gmesh_face_orient(g, e2, (int)f2, e1, (int)f1);
      if (o12 < 0 || o21 < 0) {
        hx_gmesh_describe_face(g, e1, (int)f1, d1, sizeof d1);
        hx_gmesh_describe_face(g, e2, (int)f2, d2, sizeof d2);
        if (o12 == -1 || o21 == -1)
          err = HX_ERROR(HX_ERR_INPUT,
                         "%s: non-conforming face: face %d of %s and face %d of %s have the same 4 "
                         "vertices but different edges",
                         g->src, (int)f1, d1, (int)f2, d2);
        else
          err = HX_ERROR(HX_ERR_INPUT,
                         "%s: elements overlap: face %d of %s and face %d of %s are shared but both "
                         "elements lie on the same side of it (inverted or duplicated element)",
                         g->src, (int)f1, d1, (int)f2, d2);
        goto done;
      }
      g->nbr[e1 * 6 + f1] = e2, g->nbrf[e1 * 6 + f1] = (int8_t)f2, g->nbro[e1 * 6 + f1] = (int8_t)o12;
      g->nbr[e2 * 6 + f2] = e1, g->nbrf[e2 * 6 + f2] = (int8_t)f1, g->nbro[e2 * 6 + f2] = (int8_t)o21;
    } else {
      nbnd++;
    }
    i = j;
  }
  g->nf = id + 1;

  /* conformity: every edge of the boundary (unmatched) faces is used by an
   * even number of them; a hanging node or a gap leaves an odd count */
  err = HX_ALLOC(&be, nbnd * 4);
  if (err) goto done;
  int64_t m = 0;
  for (int64_t e = 0; e < g->ne; e++)
    for (int f = 0; f < 6; f++) {
      if (g->nbr[e * 6 + f] >= 0) continue;
      static const int cyc[4][2] = {{0, 1}, {1, 3}, {3, 2}, {2, 0}};
      for (int k = 0; k < 4; k++) {
        int64_t a = g->vid[e * 8 + hx_hex_face_vert[f][cyc[k][0]]];
        int64_t b = g->vid[e * 8 + hx_hex_face_vert[f][cyc[k][1]]];
        be[m].v[0] = a < b ? a : b, be[m].v[1] = a < b ? b : a, be[m].ref = e * 6 + f;
        be[m].k = (uint64_t)be[m].v[0];
        m++;
      }
    }
  err = sort_records(be, m, sizeof *be, (uint64_t)g->nv, cmp_edge);
  if (err) goto done;
  for (int64_t i = 0; i < m;) {
    int64_t j = i + 1;
    while (j < m && be[j].v[0] == be[i].v[0] && be[j].v[1] == be[i].v[1]) j++;
    if ((j - i) % 2) {
      int64_t e = be[i].ref / 6;
      hx_gmesh_describe(g, e, d1, sizeof d1);
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: non-conforming mesh: the edge (%lld, %lld) of boundary face %d of %s is used "
                     "by %lld boundary face(s) (expected an even number): a hanging node, a gap or a "
                     "face matched by different vertices",
                     g->src, (long long)vtag_of(g, be[i].v[0]), (long long)vtag_of(g, be[i].v[1]),
                     (int)(be[i].ref % 6), d1, (long long)(j - i));
      goto done;
    }
    i = j;
  }

  /* faces meeting face to face without sharing all their vertices (a
   * hanging node or a T-junction): boundary faces sharing a vertex with
   * opposite, coplanar outward normals */
  err = check_facing(g, be, m);
  if (!err) err = check_overlap(g);
  if (err) goto done;

  /* tagged quads from the file */
  int64_t unmatched = 0;
  for (int64_t b = 0; b < g->nbq; b++) {
    face_rec key;
    memcpy(key.v, &g->bq_v[b * 4], sizeof key.v);
    sort4(key.v);
    key.k = (uint64_t)key.v[0];
    face_rec *hit = bsearch(&key, r, (size_t)n, sizeof *r, cmp_face_key);
    if (!hit) {
      unmatched++;
      continue;
    }
    while (hit > r && !cmp_face_key(hit - 1, &key)) hit--;
    for (; hit < r + n && !cmp_face_key(hit, &key); hit++) g->ftag[hit->ref] = g->bq_tag[b];
  }
  if (unmatched)
    hx_log(HX_LOG_NORMAL,
           "note: %s: %lld tagged boundary quadrilateral(s) match no element face and are ignored\n", g->src,
           (long long)unmatched);
done:
  hx_free_host(&r);
  hx_free_host(&be);
  return err;
}

int hx_gmesh_untagged(hx_gmesh *g) {
  g->nuntagged = 0, g->untagged_where[0] = '\0';
  if (!g->etag) return HX_SUCCESS; /* generated meshes tag every boundary face */
  int64_t n = 0, nb = 0, first = -1;
  for (int64_t i = 0; i < g->ne * 6; i++) {
    if (g->nbr[i] >= 0) continue; /* interior, periodic faces included */
    nb++;
    if (g->ftag[i] < 0 && !n++) first = i;
  }
  g->nboundary = nb;
  if (!n) return HX_SUCCESS;
  double nrm[3], c[3], h;
  face_normal(g, first / 6, (int)(first % 6), nrm, c, &h);
  snprintf(g->untagged_where, sizeof g->untagged_where, "face %d of file element %lld, centre (%g, %g, %g)",
           (int)(first % 6), (long long)g->etag[first / 6], c[0], c[1], c[2]);
  for (int t = 0; t < g->ntags; t++)
    HX_CHECK(strcmp(g->tag_names[t], HX_MESH_UNTAGGED), HX_ERR_INPUT,
             "%s: a surface physical group is named '%s', the name hexcg gives the boundary faces in no "
             "physical group, and %lld boundary face(s) are in none (the first: %s): rename the group, or "
             "put those faces in a physical group too",
             g->src, HX_MESH_UNTAGGED, (long long)n, g->untagged_where);
  HX_CALL(hx_realloc((size_t)g->ntags + 1, sizeof *g->tag_names, &g->tag_names));
  g->tag_names[g->ntags] = NULL;
  HX_CALL(hx_strdup(HX_MESH_UNTAGGED, &g->tag_names[g->ntags]));
  if (g->tag_per) {
    HX_CALL(hx_realloc((size_t)g->ntags + 2, sizeof *g->tag_per, &g->tag_per));
    g->tag_per[g->ntags] = 0;
  }
  for (int64_t i = 0; i < g->ne * 6; i++)
    if (g->nbr[i] < 0 && g->ftag[i] < 0) g->ftag[i] = g->ntags;
  g->ntags++;
  g->nuntagged = n;
  return HX_SUCCESS;
}

/* hex27: the curved nodes of what two elements share must be the same points
 * in both. The GLL numbering takes a shared face's or edge's nodes from its
 * vertex ids alone, so two elements whose mid-edge or face-centre nodes of a
 * shared face (same 4 corners) differ would be glued along two different
 * curved surfaces: the solve runs, wrong (issue 53 defect 3). A face's
 * biquadratic map is fixed by its 9 nodes (an edge's by its 3), so comparing
 * the nodes is comparing the element maps, hence the GLL points, at every
 * order. Checked on the whole mesh on rank 0, before partitioning and before
 * the periodic faces (which are translated copies) are merged, so the answer
 * does not depend on the number of ranks. tol: check_coincident's. */
static double dist3(const double *a, const double *b) {
  double m = 0, h = 0;
  for (int d = 0; d < 3; d++) m = fmax(m, fabs(a[d] - b[d]));
  if (m > 0)
    for (int d = 0; d < 3; d++) h += ((a[d] - b[d]) / m) * ((a[d] - b[d]) / m);
  return m * sqrt(h);
}

static int check_curved_nodes(hx_gmesh *g, double tol) {
  if (g->npe != 27) return HX_SUCCESS; /* hex8: a face's map is fixed by its shared corners */
  int fidx[6][9];
  for (int f = 0; f < 6; f++) hx_mesh_face_nodes(2, f, fidx[f], NULL, NULL);
  char d1[DESC_LEN], d2[DESC_LEN];
  /* faces, each interior pair once (its element with the smaller id first) */
  for (int64_t e = 0; e < g->ne; e++)
    for (int f = 0; f < 6; f++) {
      const int64_t e2 = g->nbr[e * 6 + f];
      if (e2 <= e) continue;
      const int f2 = g->nbrf[e * 6 + f], o = g->nbro[e * 6 + f];
      double worst = 0;
      int wi = 0, wj = 0, wk = 0;
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
          int ii = (o & 1) ? j : i, jj = (o & 1) ? i : j;
          int ip = (o & 2) ? 2 - ii : ii, jp = (o & 4) ? 2 - jj : jj;
          double dd = dist3(&g->nodes[(e * 27 + fidx[f][i + 3 * j]) * 3],
                            &g->nodes[(e2 * 27 + fidx[f2][ip + 3 * jp]) * 3]);
          if (dd > worst) worst = dd, wi = i, wj = j, wk = fidx[f2][ip + 3 * jp];
        }
      if (!(worst > tol)) continue;
      const double *A = &g->nodes[(e * 27 + fidx[f][wi + 3 * wj]) * 3], *B = &g->nodes[(e2 * 27 + wk) * 3];
      hx_gmesh_describe_face(g, e, f, d1, sizeof d1);
      hx_gmesh_describe_face(g, e2, f2, d2, sizeof d2);
      return HX_ERROR(HX_ERR_INPUT,
                      "%s: shared face with different curved nodes: face %d of %s and face %d of %s share "
                      "their 4 vertices, but the face's %s node is at (%.10g, %.10g, %.10g) in the first "
                      "element and at (%.10g, %.10g, %.10g) in the second: distance %.3g, tolerance %.3g "
                      "(1e-8 of the shortest element edge). The elements would be glued along two different "
                      "surfaces and the solution would be wrong; make the curved nodes of the shared face "
                      "agree (the same node tags, or coordinates, for its mid-edge and centre nodes)",
                      g->src, f, d1, f2, d2, wi == 1 && wj == 1 ? "centre" : "mid-edge", A[0], A[1], A[2],
                      B[0], B[1], B[2], worst, tol);
    }
  /* edges (elements that share only an edge, or a vertex ring around it):
   * each element's mid-edge node against the first element's on that edge */
  int64_t *ref = NULL;
  HX_CALL(HX_ALLOC(&ref, g->ned));
  for (int64_t i = 0; i < g->ned; i++) ref[i] = -1;
  int err = HX_SUCCESS;
  for (int64_t e = 0; e < g->ne && !err; e++)
    for (int k = 0; k < 12 && !err; k++) {
      const int64_t id = g->eid[e * 12 + k];
      const int va = hx_hex_edge_vert[k][0], vb = hx_hex_edge_vert[k][1];
      const int mid =
          ((va & 1) + (vb & 1)) + 3 * (((va >> 1) & 1) + ((vb >> 1) & 1)) + 9 * ((va >> 2) + (vb >> 2));
      if (ref[id] < 0) {
        ref[id] = e * 27 + mid;
        continue;
      }
      const double *A = &g->nodes[ref[id] * 3], *B = &g->nodes[(e * 27 + mid) * 3];
      const double dd = dist3(A, B);
      if (!(dd > tol)) continue;
      const int64_t e1 = ref[id] / 27, a = g->vid[e * 8 + va], b = g->vid[e * 8 + vb];
      hx_gmesh_describe(g, e1, d1, sizeof d1);
      hx_gmesh_describe(g, e, d2, sizeof d2);
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: shared edge with different curved nodes: %s and %s share the edge from vertex "
                     "%lld to vertex %lld, but its mid-edge node is at (%.10g, %.10g, %.10g) in the first "
                     "element and at (%.10g, %.10g, %.10g) in the second: distance %.3g, tolerance %.3g "
                     "(1e-8 of the shortest element edge). The elements would be glued along two different "
                     "curves and the solution would be wrong; make the curved nodes of the shared edge "
                     "agree (the same node tag, or coordinates, for its mid-edge node)",
                     g->src, d1, d2, (long long)vtag_of(g, a), (long long)vtag_of(g, b), A[0], A[1], A[2],
                     B[0], B[1], B[2], dd, tol);
    }
  hx_free_host(&ref);
  return err;
}

int hx_gmesh_topology(hx_gmesh *g) {
  double tol = 0;
  HX_CHECK(g->ne > 0, HX_ERR_INPUT, "%s: the mesh has no hexahedral elements", g->src);
  HX_CALL(check_elements(g));
  HX_CALL(check_coincident(g, &tol));
  HX_CALL(number_edges(g));
  HX_CALL(number_faces(g));
  HX_CALL(check_curved_nodes(g, tol));
  return HX_SUCCESS;
}

void hx_gmesh_free(hx_gmesh *g) {
  if (!g) return;
  hx_free_host(&g->nodes);
  hx_free_host(&g->vid);
  hx_free_host(&g->mat);
  hx_free_host(&g->ftag);
  hx_free_names(g->nmat, &g->mat_names);
  hx_free_names(g->ntags, &g->tag_names);
  hx_free_host(&g->bq_v);
  hx_free_host(&g->bq_tag);
  hx_free_host(&g->eid);
  hx_free_host(&g->fid);
  hx_free_host(&g->nbr);
  hx_free_host(&g->nbrf);
  hx_free_host(&g->nbro);
  hx_free_host(&g->etag);
  hx_free_host(&g->vtag);
  hx_free_host(&g->vloc);
  hx_free_host(&g->part);
  hx_free_host(&g->per);
  hx_free_host(&g->tag_per);
  hx_free_host(&g->ctype);
  hx_free_host(&g->cpar);
  hx_free_names(2 * g->nfile_pairs, &g->file_pairs);
  g->nfile_pairs = 0;
  g->nmat = g->ntags = 0;
}
