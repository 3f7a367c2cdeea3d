/* Periodic identification on rank 0 (docs/mesh.md "Periodic meshes"):
 * periodic vertex correspondences (slave -> master) pair boundary faces;
 * the paired faces' vertices, edges and faces are merged (union-find,
 * smallest id first) and renumbered compactly, so that the global GLL
 * numbering (mesh_gll.c), the Q1 vertex numbering and the face neighbours
 * see one interior face. Coordinates stay per element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

typedef struct {
  int64_t s, m;
} vpair;
typedef struct {
  int64_t v[4]; /* sorted vertex ids */
  int64_t ref;  /* e*6 + f */
} bkey;

static int cmp_vpair(const void *pa, const void *pb) {
  const vpair *a = pa, *b = pb;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  return (a->m > b->m) - (a->m < b->m);
}
static int cmp_bkey(const void *pa, const void *pb) {
  const bkey *a = pa, *b = pb;
  for (int i = 0; i < 4; i++)
    if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
  return 0;
}
static void sort4v(int64_t *v) {
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int64_t t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
}

static int64_t uf_find(int64_t *p, int64_t a) {
  while (p[a] != a) p[a] = p[p[a]], a = p[a];
  return a;
}
static void uf_union(int64_t *p, int64_t a, int64_t b) {
  a = uf_find(p, a), b = uf_find(p, b);
  if (a < b)
    p[b] = a;
  else if (b < a)
    p[a] = b;
}

static void vertex_xyz(const hx_gmesh *g, int64_t e, int c, double *X) {
  const int q = g->npe == 8 ? 2 : 3;
  const int a = c & 1, b = (c >> 1) & 1, d = c >> 2;
  const int node = a * (q - 1) + q * (b * (q - 1) + q * d * (q - 1));
  memcpy(X, &g->nodes[(e * g->npe + node) * 3], 3 * sizeof(double));
}

/* coordinates of vertex v (a scan: for messages) */
static void vertex_of_xyz(const hx_gmesh *g, int64_t v, double *X) {
  for (int64_t e = 0; e < g->ne; e++)
    for (int c = 0; c < 8; c++)
      if (g->vid[e * 8 + c] == v) {
        vertex_xyz(g, e, c, X);
        return;
      }
}

/* local corner of element e holding vertex v, -1 if none */
static int corner_of(const hx_gmesh *g, int64_t e, int64_t v) {
  for (int c = 0; c < 8; c++)
    if (g->vid[e * 8 + c] == v) return c;
  return -1;
}
static int edge_of(int a, int b) {
  for (int k = 0; k < 12; k++)
    if ((hx_hex_edge_vert[k][0] == a && hx_hex_edge_vert[k][1] == b) ||
        (hx_hex_edge_vert[k][0] == b && hx_hex_edge_vert[k][1] == a))
      return k;
  return -1;
}

/* compact renumbering of the union-find classes, in the order of their
 * smallest member (keeps "a < b" between classes as between their roots) */
static int renumber(int64_t *parent, int64_t n, int64_t **newid, int64_t *count) {
  HX_CALL(HX_ALLOC(newid, n + 1));
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++)
    if (uf_find(parent, i) == i) (*newid)[i] = c++;
  for (int64_t i = 0; i < n; i++) (*newid)[i] = (*newid)[uf_find(parent, i)];
  *count = c;
  return HX_SUCCESS;
}

#define DESC 1024
#define HX_PERIODIC_TOL 1e-6 /* node matching of tag pairs, relative to the smallest edge */
#define MAXCAND 4

/* the state of one identification: the correspondences, the boundary faces
 * by vertex set, the face pairs and the union-find classes */
typedef struct {
  hx_gmesh *g;
  vpair *pr; /* slave -> master, sorted, distinct */
  int64_t np;
  bkey *bk; /* the boundary faces, sorted by vertex set */
  int64_t nb;
  int64_t *pf;         /* per face slot e*6+f: the paired slot, or -1 */
  int64_t *pmap;       /* per face slot: its corners' images (at the slave side), -1 at the image */
  int64_t *vp, *ep, *fp; /* union-find parents of vertices, edges, faces */
  int64_t npairs;
} per_state;

/* the distinct correspondences between different vertices, sorted */
static int sorted_pairs(per_state *P) {
  const hx_gmesh *g = P->g;
  HX_CALL(HX_ALLOC(&P->pr, g->nper));
  vpair *pr = P->pr;
  int64_t np = 0;
  for (int64_t i = 0; i < g->nper; i++) {
    const int64_t s = g->per[2 * i], m = g->per[2 * i + 1];
    if (s == m) continue;
    pr[np].s = s, pr[np].m = m, np++;
  }
  qsort(pr, (size_t)np, sizeof *pr, cmp_vpair);
  int64_t w = 0; /* drop duplicates */
  for (int64_t i = 0; i < np; i++)
    if (!w || pr[i].s != pr[w - 1].s || pr[i].m != pr[w - 1].m) pr[w++] = pr[i];
  P->np = w;
  return HX_SUCCESS;
}

/* boundary faces by their vertex set */
static int boundary_keys(per_state *P) {
  const hx_gmesh *g = P->g;
  const int64_t nf6 = g->ne * 6;
  int64_t nb = 0;
  for (int64_t q = 0; q < nf6; q++) nb += g->nbr[q] < 0;
  HX_CALL(HX_ALLOC(&P->bk, nb + 1));
  nb = 0;
  for (int64_t q = 0; q < nf6; q++) {
    P->pf[q] = -1;
    if (g->nbr[q] >= 0) continue;
    for (int c = 0; c < 4; c++) P->bk[nb].v[c] = g->vid[(q / 6) * 8 + hx_hex_face_vert[q % 6][c]];
    sort4v(P->bk[nb].v);
    P->bk[nb++].ref = q;
  }
  qsort(P->bk, (size_t)nb, sizeof *P->bk, cmp_bkey);
  P->nb = nb;
  return HX_SUCCESS;
}

/* the masters of vertex v (at most MAXCAND) */
static int masters_of(const per_state *P, int64_t v, int64_t *cand) {
  vpair key = {v, INT64_MIN};
  const int64_t lo = hx_lower_bound(P->pr, P->np, sizeof *P->pr, &key, cmp_vpair);
  int n = 0;
  for (int64_t j = lo; j < P->np && P->pr[j].s == v && n < MAXCAND; j++) cand[n++] = P->pr[j].m;
  return n;
}

/* the error for face slot q whose corners cv have partners cand that form
 * no boundary face */
static int no_image_face(const hx_gmesh *g, int64_t q, const int64_t cv[4], int64_t cand[4][MAXCAND]) {
  const int64_t e = q / 6;
  const int f = (int)(q % 6);
  char d[DESC];
  size_t off = 0;
  for (int c = 0; c < 4 && off < sizeof d; c++) {
    double A[3], B[3] = {0, 0, 0};
    vertex_xyz(g, e, hx_hex_face_vert[f][c], A);
    vertex_of_xyz(g, cand[c][0], B);
    off += (size_t)snprintf(d + off, sizeof d - off, "%s%lld (%g, %g, %g) -> %lld (%g, %g, %g)", c ? ", " : "",
                            (long long)(g->vtag ? g->vtag[cv[c]] : cv[c]), A[0], A[1], A[2],
                            (long long)(g->vtag ? g->vtag[cand[c][0]] : cand[c][0]), B[0], B[1], B[2]);
  }
  return HX_ERROR(HX_ERR_INPUT,
                  "%s: periodic: the four corners of boundary face %d of element %lld have periodic partners, "
                  "but the partners form no boundary face (the periodic surfaces are not meshed alike, or a "
                  "partner is wrong): %s",
                  g->src, f, (long long)(g->etag ? g->etag[e] : e), d);
}

/* boundary face slot q's image: a boundary face whose vertices are images of
 * q's four corners (their images into img); -1 where a corner has no partner */
static int face_image(const per_state *P, int64_t q, int64_t *hit, int64_t img[4]) {
  const hx_gmesh *g = P->g;
  const int64_t e = q / 6;
  const int f = (int)(q % 6);
  int64_t cv[4], cand[4][MAXCAND];
  int nc[4];
  *hit = -1;
  for (int c = 0; c < 4; c++) {
    cv[c] = g->vid[e * 8 + hx_hex_face_vert[f][c]];
    nc[c] = masters_of(P, cv[c], cand[c]);
    if (nc[c] == 0) return HX_SUCCESS;
  }
  for (int i0 = 0; i0 < nc[0] && *hit < 0; i0++)
    for (int i1 = 0; i1 < nc[1] && *hit < 0; i1++)
      for (int i2 = 0; i2 < nc[2] && *hit < 0; i2++)
        for (int i3 = 0; i3 < nc[3] && *hit < 0; i3++) {
          bkey key;
          int64_t m4[4] = {cand[0][i0], cand[1][i1], cand[2][i2], cand[3][i3]};
          memcpy(key.v, m4, sizeof m4);
          sort4v(key.v);
          const bkey *b = bsearch(&key, P->bk, (size_t)P->nb, sizeof *P->bk, cmp_bkey);
          if (b && b->ref != q) *hit = b->ref, memcpy(img, m4, sizeof m4);
        }
  if (*hit < 0) return no_image_face(g, q, cv, cand);
  return HX_SUCCESS;
}

/* pair the boundary faces whose four vertices map onto another boundary face */
static int pair_faces(per_state *P) {
  const hx_gmesh *g = P->g;
  const int64_t nf6 = g->ne * 6;
  for (int64_t q = 0; q < nf6; q++) {
    if (g->nbr[q] >= 0 || P->pf[q] >= 0) continue;
    int64_t hit, img[4] = {0, 0, 0, 0};
    HX_CALL(face_image(P, q, &hit, img));
    if (hit < 0) continue;
    if (P->pf[hit] >= 0 && P->pf[hit] != q) {
      char d[DESC];
      hx_gmesh_describe(g, hit / 6, d, sizeof d);
      return HX_ERROR(HX_ERR_INPUT, "%s: periodic: face %d of %s is the periodic image of two faces", g->src,
                      (int)(hit % 6), d);
    }
    P->pf[q] = hit, P->pf[hit] = q;
    memcpy(&P->pmap[q * 4], img, sizeof img);
    for (int c = 0; c < 4; c++) P->pmap[hit * 4 + c] = -1; /* the image side: mapping stored at q */
    P->npairs++;
  }
  return HX_SUCCESS;
}

/* merge the vertices, edges and faces of each pair */
static int merge_pairs(per_state *P) {
  const hx_gmesh *g = P->g;
  const int64_t nf6 = g->ne * 6;
  HX_CALL(HX_ALLOC(&P->vp, g->nv + 1));
  HX_CALL(HX_ALLOC(&P->ep, g->ned + 1));
  HX_CALL(HX_ALLOC(&P->fp, g->nf + 1));
  int64_t *vp = P->vp, *ep = P->ep, *fp = P->fp, *pf = P->pf, *pmap = P->pmap;
  for (int64_t i = 0; i < g->nv; i++) vp[i] = i;
  for (int64_t i = 0; i < g->ned; i++) ep[i] = i;
  for (int64_t i = 0; i < g->nf; i++) fp[i] = i;
  static const int cyc[4][2] = {{0, 1}, {1, 3}, {3, 2}, {2, 0}};
  for (int64_t q = 0; q < nf6; q++) {
    if (pf[q] < 0 || pmap[q * 4] < 0) continue;
    const int64_t e = q / 6, e2 = pf[q] / 6;
    const int f = (int)(q % 6);
    uf_union(fp, g->fid[q], g->fid[pf[q]]);
    int lc[4], lc2[4];
    for (int c = 0; c < 4; c++) {
      lc[c] = hx_hex_face_vert[f][c];
      lc2[c] = corner_of(g, e2, pmap[q * 4 + c]);
      uf_union(vp, g->vid[e * 8 + lc[c]], pmap[q * 4 + c]);
    }
    for (int k = 0; k < 4; k++) {
      const int k1 = edge_of(lc[cyc[k][0]], lc[cyc[k][1]]), k2 = edge_of(lc2[cyc[k][0]], lc2[cyc[k][1]]);
      if (k1 < 0 || k2 < 0) return HX_ERROR(HX_ERR_INTERNAL, "periodic: face edge not found (%d, %d)", k1, k2);
      uf_union(ep, g->eid[e * 12 + k1], g->eid[e2 * 12 + k2]);
    }
  }
  return HX_SUCCESS;
}

/* every correspondence between vertices realised by a face pair, and every
 * element left with 8 distinct vertices */
static int check_merge(const per_state *P) {
  const hx_gmesh *g = P->g;
  const vpair *pr = P->pr;
  int64_t *vp = P->vp;
  for (int64_t i = 0; i < P->np; i++)
    if (uf_find(vp, pr[i].s) != uf_find(vp, pr[i].m)) {
      double A[3] = {0, 0, 0}, B[3] = {0, 0, 0};
      int fa = 0, fb = 0;
      for (int64_t e = 0; e < g->ne && !(fa && fb); e++)
        for (int c = 0; c < 8; c++) {
          if (!fa && g->vid[e * 8 + c] == pr[i].s) vertex_xyz(g, e, c, A), fa = 1;
          if (!fb && g->vid[e * 8 + c] == pr[i].m) vertex_xyz(g, e, c, B), fb = 1;
        }
      return HX_ERROR(
          HX_ERR_INPUT,
          "%s: periodic: node %lld at (%g, %g, %g) corresponds to node %lld at (%g, %g, %g), but no "
          "boundary face through the first maps onto a boundary face through the second: the "
          "periodic surfaces are not meshed alike, a node lies off them, or the correspondence lists "
          "only some of their nodes (Gmsh omits those its subdivision adds: name the two surfaces "
          "in the case, mesh.periodic: [[a, b]], to match all their nodes by translation)",
          g->src, (long long)(g->vtag ? g->vtag[pr[i].s] : pr[i].s), A[0], A[1], A[2],
          (long long)(g->vtag ? g->vtag[pr[i].m] : pr[i].m), B[0], B[1], B[2]);
    }
  for (int64_t e = 0; e < g->ne; e++)
    for (int a = 0; a < 8; a++)
      for (int b = a + 1; b < 8; b++)
        if (uf_find(vp, g->vid[e * 8 + a]) == uf_find(vp, g->vid[e * 8 + b])) {
          char d[DESC];
          hx_gmesh_describe(g, e, d, sizeof d);
          return HX_ERROR(HX_ERR_INPUT,
                          "%s: periodic: the identification maps two vertices of %s onto each other: a "
                          "periodic direction needs at least 2 elements across it",
                          g->src, d);
        }
  return HX_SUCCESS;
}

/* tags of the paired faces: no longer boundary; a tag all of whose faces
 * are paired is periodic */
static int retag_faces(per_state *P) {
  hx_gmesh *g = P->g;
  int64_t *tot = NULL, *got = NULL;
  int err = HX_ALLOC(&tot, g->ntags + 1);
  if (!err) err = HX_ALLOC(&got, g->ntags + 1);
  if (!err && !g->tag_per) err = HX_ALLOC(&g->tag_per, g->ntags + 1);
  for (int64_t q = 0; !err && q < g->ne * 6; q++) {
    const int t = g->ftag[q];
    if (t < 0 || t >= g->ntags) continue;
    tot[t]++;
    if (P->pf[q] >= 0) got[t]++, g->ftag[q] = -1;
  }
  for (int t = 0; !err && t < g->ntags; t++) g->tag_per[t] = tot[t] > 0 && got[t] == tot[t];
  hx_free_host(&tot);
  hx_free_host(&got);
  return err;
}

/* the merged vertices, edges and faces numbered compactly */
static int renumber_all(per_state *P) {
  hx_gmesh *g = P->g;
  const int64_t ne = g->ne;
  int64_t *nv = NULL, *ned = NULL, *nfc = NULL;
  int64_t cv = 0, ced = 0, cf = 0;
  int err = renumber(P->vp, g->nv, &nv, &cv);
  if (!err) err = renumber(P->ep, g->ned, &ned, &ced);
  if (!err) err = renumber(P->fp, g->nf, &nfc, &cf);
  if (!err) {
    for (int64_t i = 0; i < ne * 8; i++) g->vid[i] = nv[g->vid[i]];
    for (int64_t i = 0; i < ne * 12; i++) g->eid[i] = ned[g->eid[i]];
    for (int64_t i = 0; i < ne * 6; i++) g->fid[i] = nfc[g->fid[i]];
    if (g->vtag) { /* a class keeps the file tag of its smallest member */
      for (int64_t i = 0; i < g->nv; i++)
        if (uf_find(P->vp, i) == i) g->vtag[nv[i]] = g->vtag[i];
    }
    g->nv = cv, g->ned = ced, g->nf = cf;
  }
  hx_free_host(&nv);
  hx_free_host(&ned);
  hx_free_host(&nfc);
  return err;
}

/* the paired faces become neighbours */
static int link_faces(per_state *P) {
  hx_gmesh *g = P->g;
  const int64_t *pf = P->pf;
  for (int64_t q = 0; q < g->ne * 6; q++) {
    if (pf[q] < 0) continue;
    const int64_t e2 = pf[q] / 6;
    const int o = hx_gmesh_face_orient(g, q / 6, (int)(q % 6), e2, (int)(pf[q] % 6));
    if (o < 0) {
      char d1[DESC], d2[DESC];
      hx_gmesh_describe(g, q / 6, d1, sizeof d1);
      hx_gmesh_describe(g, e2, d2, sizeof d2);
      return HX_ERROR(HX_ERR_INPUT, "%s: periodic: face %d of %s and face %d of %s are paired but %s", g->src,
                      (int)(q % 6), d1, (int)(pf[q] % 6), d2,
                      o == -2 ? "the map turns one inside out (a reflection, not a translation or rotation)"
                              : "their corners do not correspond cyclically");
    }
    g->nbr[q] = e2, g->nbrf[q] = (int8_t)(pf[q] % 6), g->nbro[q] = (int8_t)o;
  }
  return HX_SUCCESS;
}

int hx_gmesh_periodic(hx_gmesh *g) {
  if (g->nper == 0) return HX_SUCCESS;
  per_state P = {.g = g};
  int err = sorted_pairs(&P);
  if (!err) err = HX_ALLOC(&P.pf, g->ne * 6);
  if (!err) err = HX_ALLOC(&P.pmap, g->ne * 6 * 4);
  if (!err) err = boundary_keys(&P);
  if (!err) err = pair_faces(&P);
  if (!err) err = merge_pairs(&P);
  if (!err) err = check_merge(&P);
  if (!err) err = retag_faces(&P);
  if (!err) err = renumber_all(&P);
  if (!err) err = link_faces(&P);
  if (!err) g->nper_faces = P.npairs;
  hx_free_host(&P.pr);
  hx_free_host(&P.bk);
  hx_free_host(&P.pf);
  hx_free_host(&P.pmap);
  hx_free_host(&P.vp);
  hx_free_host(&P.ep);
  hx_free_host(&P.fp);
  return err;
}

/* ---------------------------------------------------------------- case tag pairs */
typedef struct {
  double x[3];
  int64_t v;
} vxyz;
static int cmp_vxyz(const void *pa, const void *pb) {
  const vxyz *a = pa, *b = pb;
  if (a->x[0] != b->x[0]) return a->x[0] < b->x[0] ? -1 : 1;
  return (a->v > b->v) - (a->v < b->v);
}

/* the distinct vertices of the faces tagged t, with coordinates; smallest edge of those faces into *h */
static int tag_vertices(const hx_gmesh *g, int t, const double *X, vxyz **out, int64_t *n, double *h) {
  char *seen = NULL;
  int64_t c = 0;
  *h = INFINITY;
  HX_CALL(hx_calloc((size_t)g->nv + 1, 1, &seen));
  for (int64_t q = 0; q < g->ne * 6; q++) {
    if (g->ftag[q] != t) continue;
    for (int k = 0; k < 4; k++) {
      static const int cyc[4][2] = {{0, 1}, {1, 3}, {3, 2}, {2, 0}};
      const int64_t a = g->vid[(q / 6) * 8 + hx_hex_face_vert[q % 6][cyc[k][0]]],
                    b = g->vid[(q / 6) * 8 + hx_hex_face_vert[q % 6][cyc[k][1]]];
      const double *A = &X[3 * a], *B = &X[3 * b];
      *h = fmin(*h, sqrt((A[0] - B[0]) * (A[0] - B[0]) + (A[1] - B[1]) * (A[1] - B[1]) +
                         (A[2] - B[2]) * (A[2] - B[2])));
      if (!seen[a]) seen[a] = 1, c++;
    }
  }
  int err = HX_ALLOC(out, c + 1);
  if (!err) {
    int64_t w = 0;
    for (int64_t v = 0; v < g->nv; v++)
      if (seen[v]) {
        (*out)[w].v = v;
        memcpy((*out)[w].x, &X[3 * v], sizeof(*out)[w].x);
        w++;
      }
  }
  hx_free_host(&seen);
  *n = c;
  return err;
}

int hx_gmesh_tag_pairs(hx_gmesh *g, int npairs, const char *const (*pairs)[2]) {
  double *X = NULL;
  vxyz *A = NULL, *B = NULL;
  int err = HX_ALLOC(&X, 3 * g->nv + 1);
  if (err) return err;
  for (int64_t e = 0; e < g->ne; e++)
    for (int c = 0; c < 8; c++) vertex_xyz(g, e, c, &X[3 * g->vid[e * 8 + c]]);
  for (int p = 0; p < npairs && !err; p++) {
    int t[2] = {-1, -1};
    for (int s = 0; s < 2; s++)
      for (int i = 0; i < g->ntags && t[s] < 0; i++)
        if (!strcmp(g->tag_names[i], pairs[p][s])) t[s] = i;
    for (int s = 0; s < 2 && !err; s++)
      if (t[s] < 0) {
        char list[1024];
        size_t off = 0;
        list[0] = 0;
        for (int i = 0; i < g->ntags && off < sizeof list; i++)
          off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", g->tag_names[i]);
        err = HX_ERROR(HX_ERR_INPUT,
                       "%s: periodic pair [%s, %s]: the mesh has no surface tag '%s' (it has: %s)", g->src,
                       pairs[p][0], pairs[p][1], pairs[p][s], g->ntags ? list : "none");
      }
    if (!err && t[0] == t[1])
      err = HX_ERROR(HX_ERR_INPUT, "%s: periodic pair [%s, %s]: a surface cannot be paired with itself",
                     g->src, pairs[p][0], pairs[p][1]);
    int64_t na = 0, nb = 0;
    double ha = 0, hb = 0;
    if (!err) err = tag_vertices(g, t[0], X, &A, &na, &ha);
    if (!err) err = tag_vertices(g, t[1], X, &B, &nb, &hb);
    if (!err && (na == 0 || nb == 0))
      err = HX_ERROR(HX_ERR_INPUT, "%s: periodic pair [%s, %s]: surface '%s' has no boundary faces", g->src,
                     pairs[p][0], pairs[p][1], pairs[p][na == 0 ? 0 : 1]);
    if (!err && na != nb)
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: periodic pair [%s, %s]: the surfaces have %lld and %lld nodes: they are not meshed "
                     "alike",
                     g->src, pairs[p][0], pairs[p][1], (long long)na, (long long)nb);
    if (!err) {
      /* the translation: between the centres of the two node sets' bounding boxes
       * (a single misplaced inner node does not move it) */
      double T[3], lo[2][3], hi[2][3];
      for (int k = 0; k < 3; k++) lo[0][k] = lo[1][k] = INFINITY, hi[0][k] = hi[1][k] = -INFINITY;
      for (int64_t i = 0; i < na; i++)
        for (int k = 0; k < 3; k++) {
          lo[0][k] = fmin(lo[0][k], A[i].x[k]), hi[0][k] = fmax(hi[0][k], A[i].x[k]);
          lo[1][k] = fmin(lo[1][k], B[i].x[k]), hi[1][k] = fmax(hi[1][k], B[i].x[k]);
        }
      for (int k = 0; k < 3; k++) T[k] = 0.5 * (lo[1][k] + hi[1][k]) - 0.5 * (lo[0][k] + hi[0][k]);
      const double tol = HX_PERIODIC_TOL * fmin(ha, hb);
      qsort(B, (size_t)nb, sizeof *B, cmp_vxyz);
      err = hx_realloc((size_t)(2 * (g->nper + na)), sizeof(int64_t), &g->per);
      for (int64_t i = 0; i < na && !err; i++) {
        const double Y[3] = {A[i].x[0] + T[0], A[i].x[1] + T[1], A[i].x[2] + T[2]};
        int64_t lo = 0, hi = nb;
        while (lo < hi) {
          int64_t mid = (lo + hi) / 2;
          if (B[mid].x[0] < Y[0] - tol)
            lo = mid + 1;
          else
            hi = mid;
        }
        int64_t hit = -1;
        for (int64_t j = lo; j < nb && B[j].x[0] <= Y[0] + tol && hit < 0; j++)
          if (fabs(B[j].x[1] - Y[1]) <= tol && fabs(B[j].x[2] - Y[2]) <= tol) hit = B[j].v;
        if (hit < 0) {
          err = HX_ERROR(
              HX_ERR_INPUT,
              "%s: periodic pair [%s, %s]: node %lld at (%.9g, %.9g, %.9g) of '%s' has no node of '%s' "
              "at its translate (%.9g, %.9g, %.9g) (translation (%.9g, %.9g, %.9g), tolerance %.3g "
              "= %g x the smallest edge on the surfaces): the surfaces are not meshed alike",
              g->src, pairs[p][0], pairs[p][1], (long long)(g->vtag ? g->vtag[A[i].v] : A[i].v), A[i].x[0],
              A[i].x[1], A[i].x[2], pairs[p][0], pairs[p][1], Y[0], Y[1], Y[2], T[0], T[1], T[2], tol,
              HX_PERIODIC_TOL);
          break;
        }
        g->per[2 * g->nper] = A[i].v, g->per[2 * g->nper + 1] = hit;
        g->nper++;
      }
    }
    hx_free_host(&A);
    hx_free_host(&B);
  }
  hx_free_host(&X);
  return err;
}
