/* NekRS / Nek5000 .re2 reader (rank 0; docs/mesh.md "Nek5000 / NekRS .re2").
 *
 * The binary format as Nek5000 writes it: an 80-byte ASCII header
 * "#v002 <nelgt> <ndim> <nelgv> ...", a 4-byte float 6.54321 that tells the
 * byte order, then in words of 8 bytes (4 for "#v001"):
 *   per element: group, x1..x8, y1..y8, z1..z8 (Nek's preprocessor vertex
 *     order: 1-4 counter-clockwise at t = -1, 5-8 above them);
 *   the curved sides: a count, then per record element, edge or face, 5
 *     parameters and the type ('m' edge midpoint, 'C' circle arc of signed
 *     radius, 's' sphere face of centre and radius);
 *   one boundary section per field: a count, then per record element, face,
 *     5 parameters and the code ("W", "v", "P", "SYM", ...; for "P" the
 *     parameters are the connected element and face).
 * Vertices are shared by coordinate (per-element corners within 1e-6 of the
 * smallest element edge are one vertex); Nek's vertex, edge and face
 * numbering is converted to the tensor order of hx_mesh.h. Errors name the
 * file, the byte offset and the record. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mesh_impl.h"

#define NEK_TOL 1e-6 /* vertex merging and P-pair matching, relative to the smallest edge */

/* Nek preprocessor vertex (0-based) of tensor vertex t (an involution: also
 * the tensor vertex of a preprocessor vertex); face and edge maps */
static const int nek_vert_of_tensor[8] = {0, 1, 3, 2, 4, 5, 7, 6};
static const int nek_face_to_hx[6] = {2, 1, 3, 0, 4, 5};
static int nek_face_of_hx(int f) {
  static const int inv[6] = {3, 1, 0, 2, 4, 5};
  return inv[f];
}
static const int nek_edge_to_hx[12] = {0, 5, 1, 4, 2, 7, 3, 6, 8, 9, 11, 10};
/* Nek edge k (0-based) runs from preprocessor vertex a to b */
static const int nek_edge_vert[12][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6},
                                         {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};

typedef struct {
  const char *path;
  const unsigned char *buf;
  size_t len, pos;
  int swap; /* the file's byte order is not the machine's */
  int wdsz; /* 8 (#v002, #v003) or 4 (#v001) */
} nrd;

#define NEK_ERR(c, ...) nek_err((c), __FILE__, __LINE__, __func__, __VA_ARGS__)
static int nek_err(const nrd *c, const char *file, int line, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int nek_err(const nrd *c, const char *file, int line, const char *func, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hx_error_set(file, line, func, HX_ERR_INPUT, "%s: byte offset %zu: %s", c->path, c->pos, msg);
}

/* one word at byte offset off (no bounds check: the caller checked) */
static double word_at(const nrd *c, size_t off) {
  unsigned char b[8];
  memcpy(b, c->buf + off, (size_t)c->wdsz);
  if (c->swap)
    for (int i = 0; i < c->wdsz / 2; i++) {
      unsigned char t = b[i];
      b[i] = b[c->wdsz - 1 - i], b[c->wdsz - 1 - i] = t;
    }
  if (c->wdsz == 8) {
    double d;
    memcpy(&d, b, 8);
    return d;
  }
  float f;
  memcpy(&f, b, 4);
  return f;
}

/* nwords words at the cursor into w (the cursor moves past them) */
static int words(nrd *c, int nwords, double *w, const char *what) {
  const size_t need = (size_t)nwords * (size_t)c->wdsz;
  if (c->pos > c->len || c->len - c->pos < need)
    return NEK_ERR(
        c, "file truncated: %s needs %zu byte(s), %zu left (an incomplete file, or a count that lies)", what,
        need, c->pos <= c->len ? c->len - c->pos : 0);
  for (int i = 0; i < nwords; i++) w[i] = word_at(c, c->pos + (size_t)i * (size_t)c->wdsz);
  c->pos += need;
  return HX_SUCCESS;
}

/* a count word: a non-negative integer that the rest of the file can hold
 * (rec_words words per item) */
static int count_word(nrd *c, int rec_words, int64_t *n, const char *what) {
  double w = 0;
  HX_CALL(words(c, 1, &w, what));
  const size_t left = c->len - c->pos, rec = (size_t)rec_words * (size_t)c->wdsz;
  if (!(w >= 0 && w == floor(w) && w < 9e15)) {
    c->pos -= (size_t)c->wdsz;
    return NEK_ERR(c,
                   "%s is %g, not a non-negative integer (a corrupt file, or one written in another format)",
                   what, w);
  }
  if ((double)left / (double)rec < w) {
    c->pos -= (size_t)c->wdsz;
    return NEK_ERR(
        c, "%s is %.0f but only %zu byte(s) (%zu record(s)) follow: the count lies or the file is truncated",
        what, w, left, left / rec);
  }
  *n = (int64_t)w;
  return HX_SUCCESS;
}

/* a record's type word as a trimmed string (the first up to 3 printable characters, as Nek reads them) */
static void type_string(const nrd *c, size_t off, char out[8]) {
  int k = 0;
  for (int i = 0; i < c->wdsz && i < 7; i++) {
    unsigned char ch = c->buf[off + (size_t)i];
    if (ch < 33 || ch > 126) break;
    out[k++] = (char)ch;
  }
  out[k] = 0;
}

static void corner_xyz(const hx_gmesh *g, int64_t e, int v, double X[3]) {
  memcpy(X, &g->nodes[(e * 8 + v) * 3], 3 * sizeof(double));
}
static double dist3(const double *a, const double *b) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* ---------------------------------------------------------------- vertices by coordinate */
typedef struct {
  int64_t k[3]; /* cell */
  int64_t i;    /* e*8 + v */
} cellpt;
static int cmp_cell(const void *pa, const void *pb) {
  const cellpt *a = pa, *b = pb;
  for (int d = 0; d < 3; d++)
    if (a->k[d] != b->k[d]) return a->k[d] < b->k[d] ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}
static int64_t ufind(int64_t *p, int64_t a) {
  while (p[a] != a) p[a] = p[p[a]], a = p[a];
  return a;
}

static int merge_vertices(hx_gmesh *g, double *hmin_out) {
  const int64_t n = g->ne * 8;
  double hmin = INFINITY, lo = INFINITY, hi = -INFINITY;
  for (int64_t e = 0; e < g->ne; e++)
    for (int k = 0; k < 12; k++) {
      double A[3], B[3];
      corner_xyz(g, e, hx_hex_edge_vert[k][0], A);
      corner_xyz(g, e, hx_hex_edge_vert[k][1], B);
      hmin = fmin(hmin, dist3(A, B));
    }
  for (int64_t i = 0; i < n * 3; i++) lo = fmin(lo, g->nodes[i]), hi = fmax(hi, g->nodes[i]);
  *hmin_out = hmin;
  HX_CHECK(hmin > 0 && isfinite(hmin), HX_ERR_INPUT,
           "%s: an element has an edge of length %g (two of its corners coincide): a degenerate element",
           g->src, hmin);
  const double tol = NEK_TOL * hmin;
  HX_CHECK((hi - lo) / tol < 1e15, HX_ERR_INPUT,
           "%s: the smallest element edge (%g) is too small against the extent of the mesh (%g) to tell "
           "vertices apart",
           g->src, hmin, hi - lo);
  cellpt *pt = NULL;
  int64_t *par = NULL;
  int err = HX_ALLOC(&pt, n);
  if (!err) err = HX_ALLOC(&par, n);
  if (err) goto done;
  for (int64_t i = 0; i < n; i++) {
    par[i] = i;
    pt[i].i = i;
    for (int d = 0; d < 3; d++) pt[i].k[d] = (int64_t)floor((g->nodes[i * 3 + d] - lo) / tol);
  }
  qsort(pt, (size_t)n, sizeof *pt, cmp_cell);
  for (int64_t i = 0; i < n; i++) {
    const double *X = &g->nodes[pt[i].i * 3];
    for (int dx = -1; dx <= 1; dx++)
      for (int dy = -1; dy <= 1; dy++)
        for (int dz = -1; dz <= 1; dz++) {
          cellpt key = {{pt[i].k[0] + dx, pt[i].k[1] + dy, pt[i].k[2] + dz}, -1};
          const int64_t a = hx_lower_bound(pt, n, sizeof *pt, &key, cmp_cell);
          for (int64_t j = a;
               j < n && pt[j].k[0] == key.k[0] && pt[j].k[1] == key.k[1] && pt[j].k[2] == key.k[2]; j++) {
            const double *Y = &g->nodes[pt[j].i * 3];
            if (fabs(X[0] - Y[0]) <= tol && fabs(X[1] - Y[1]) <= tol && fabs(X[2] - Y[2]) <= tol) {
              int64_t ra = ufind(par, pt[i].i), rb = ufind(par, pt[j].i);
              if (ra < rb)
                par[rb] = ra;
              else if (rb < ra)
                par[ra] = rb;
            }
          }
        }
  }
  /* compact ids in order of the first corner that holds them */
  err = HX_ALLOC(&g->vid, n);
  if (err) goto done;
  int64_t nv = 0;
  for (int64_t i = 0; i < n; i++) pt[i].i = -1; /* reused as root -> id */
  for (int64_t i = 0; i < n; i++) {
    int64_t r = ufind(par, i);
    if (pt[r].i < 0) pt[r].i = nv++;
    g->vid[i] = pt[r].i;
  }
  g->nv = nv;
done:
  hx_free_host(&pt);
  hx_free_host(&par);
  return err;
}

/* ---------------------------------------------------------------- curved sides */
/* 'C': the arc's centre from Nek's arcsrf: the edge from preprocessor vertex
 * a to b, radius R (signed: R > 0 puts the centre on the left of a -> b in
 * the x-y plane) */
static int arc_centre(nrd *c, int64_t rec, int64_t e, int edge, const double *A, const double *B, double R,
                      double out[3]) {
  const double gap = hypot(B[0] - A[0], B[1] - A[1]), len = dist3(A, B);
  if (!(gap > 1e-6 * len))
    return NEK_ERR(
        c,
        "curved-side record %lld: the 'C' arc on edge %d of element %lld: the edge's ends (%g, %g, %g) and "
        "(%g, %g, %g) coincide in the x-y plane, where Nek's arcs lie (a 'C' side belongs on an edge "
        "that is not parallel to z)",
        (long long)rec + 1, edge + 1, (long long)e + 1, A[0], A[1], A[2], B[0], B[1], B[2]);
  if (!(fabs(2.0 * R) > gap * 1.00001) || !isfinite(R))
    return NEK_ERR(
        c,
        "curved-side record %lld: the 'C' arc on edge %d of element %lld has radius %g, but its end "
        "points are %g apart in the x-y plane: no circle of that radius joins them (the radius must "
        "exceed half the chord)",
        (long long)rec + 1, edge + 1, (long long)e + 1, R, gap);
  const double xs = B[1] - A[1], ys = A[0] - B[0], xys = hypot(xs, ys);
  const double dth = fabs(asin(0.5 * gap / R));
  const double mx = 0.5 * (A[0] + B[0]), my = 0.5 * (A[1] + B[1]);
  out[0] = mx - xs / xys * R * cos(dth);
  out[1] = my - ys / xys * R * cos(dth);
  out[2] = fabs(R);
  return HX_SUCCESS;
}

/* The record of 8 words at c->pos (what: its kind, for messages) into w,
 * and its type or code string (in the last word) into ty; c->pos stays at
 * the record. */
static int record_at(nrd *c, const char *what, double w[8], char ty[8]) {
  const size_t at = c->pos;
  HX_CALL(words(c, 8, w, what));
  type_string(c, at + 7 * (size_t)c->wdsz, ty);
  c->pos = at;
  return HX_SUCCESS;
}

/* 1 where v is a whole number in 1..hi (an element, face or side number). */
static int whole_in(double v, double hi) { return v >= 1 && v <= hi && v == floor(v); }

static int read_curves(nrd *c, hx_gmesh *g, int64_t nelgt) {
  int64_t ncurve;
  HX_CALL(count_word(c, 8, &ncurve, "the number of curved-side records"));
  if (ncurve == 0) return HX_SUCCESS;
  HX_CALL(hx_calloc((size_t)nelgt * HX_CURVE_NSLOT, 1, &g->ctype));
  HX_CALL(HX_ALLOC(&g->cpar, (size_t)nelgt * HX_CURVE_NPAR));
  for (int64_t r = 0; r < ncurve; r++) {
    const size_t at = c->pos;
    double w[8];
    char ty[8];
    HX_CALL(record_at(c, "a curved-side record", w, ty));
    if (!whole_in(w[0], (double)nelgt))
      return NEK_ERR(
          c,
          "curved-side record %lld (type '%s') names element %g, but the file has elements 1..%lld "
          "(a record for an element that does not exist)",
          (long long)r + 1, ty, w[0], (long long)nelgt);
    const int64_t e = (int64_t)w[0] - 1;
    const double side = w[1];
    if (ty[1] || (ty[0] != 'm' && ty[0] != 'C' && ty[0] != 's'))
      return NEK_ERR(
          c,
          "curved-side record %lld: element %lld side %g has curve type '%s', which hexcg does not read "
          "(supported: 'm' edge midpoint, 'C' circle arc, 's' sphere face)",
          (long long)r + 1, (long long)e + 1, side, ty);
    const int is_face = ty[0] == 's';
    const int nside = is_face ? 6 : 12;
    if (!(side >= 1 && side <= nside && side == floor(side)))
      return NEK_ERR(c, "curved-side record %lld: element %lld: %s %g of a '%s' record is outside 1..%d",
                     (long long)r + 1, (long long)e + 1, is_face ? "face" : "edge", side, ty, nside);
    const int k = (int)side - 1;
    for (int i = 2; i < 7; i++)
      if (!isfinite(w[i]))
        return NEK_ERR(c, "curved-side record %lld: element %lld: parameter %d is not a finite number",
                       (long long)r + 1, (long long)e + 1, i - 1);
    int8_t *ct = &g->ctype[e * HX_CURVE_NSLOT];
    double *cp = &g->cpar[e * HX_CURVE_NPAR];
    if (is_face) {
      const int f = nek_face_to_hx[k];
      if (!(w[5] > 0))
        return NEK_ERR(c, "curved-side record %lld: element %lld face %d: sphere radius %g is not positive",
                       (long long)r + 1, (long long)e + 1, k + 1, w[5]);
      for (int q = 0; q < 4; q++) { /* the face's corners must lie on the sphere */
        double X[3];
        corner_xyz(g, e, hx_hex_face_vert[f][q], X);
        const double d = dist3(X, &w[2]);
        if (fabs(d - w[5]) > 1e-6 * w[5])
          return NEK_ERR(
              c,
              "curved-side record %lld: element %lld face %d ('s', centre (%g, %g, %g), radius %g): its "
              "corner (%g, %g, %g) is %g from the centre, not on the sphere (a wrong face number, or "
              "a wrong centre)",
              (long long)r + 1, (long long)e + 1, k + 1, w[2], w[3], w[4], w[5], X[0], X[1], X[2], d);
      }
      ct[12 + f] = 's';
      memcpy(&cp[36 + 4 * f], &w[2], 4 * sizeof(double));
    } else {
      const int le = nek_edge_to_hx[k];
      double A[3], B[3];
      memcpy(A, &g->nodes[(e * 8 + nek_vert_of_tensor[nek_edge_vert[k][0]]) * 3], sizeof A);
      memcpy(B, &g->nodes[(e * 8 + nek_vert_of_tensor[nek_edge_vert[k][1]]) * 3], sizeof B);
      ct[le] = ty[0];
      if (ty[0] == 'm') {
        memcpy(&cp[3 * le], &w[2], 3 * sizeof(double));
      } else {
        c->pos = at;
        HX_CALL(arc_centre(c, r, e, k, A, B, w[2], &cp[3 * le]));
      }
    }
    c->pos = at + 8 * (size_t)c->wdsz;
  }
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- boundary sections */
static int tag_index(hx_gmesh *g, const char *name, int32_t *t) {
  for (int i = 0; i < g->ntags; i++)
    if (!strcmp(g->tag_names[i], name)) {
      *t = i;
      return HX_SUCCESS;
    }
  HX_CALL(hx_realloc((size_t)g->ntags + 1, sizeof *g->tag_names, &g->tag_names));
  g->tag_names[g->ntags] = NULL;
  HX_CALL(hx_strdup(name, &g->tag_names[g->ntags]));
  *t = g->ntags++;
  return HX_SUCCESS;
}

/* a P record: face hf of e and face hf2 of e2 must be translates; their
 * corners become periodic vertex pairs (the face of the larger e*6+f is the
 * slave, so that the two records of a pair give the same pairs) */
static int periodic_record(nrd *c, hx_gmesh *g, int64_t rec, int64_t e, int kf, int64_t e2, int kf2,
                           double hmin) {
  const int hf = nek_face_to_hx[kf], hf2 = nek_face_to_hx[kf2];
  if (e == e2 && hf == hf2)
    return NEK_ERR(
        c, "boundary record %lld: the periodic ('P') face %d of element %lld names itself as its partner",
        (long long)rec + 1, kf + 1, (long long)e + 1);
  double A[4][3], B[4][3], ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0}, T[3];
  for (int q = 0; q < 4; q++) {
    corner_xyz(g, e, hx_hex_face_vert[hf][q], A[q]);
    corner_xyz(g, e2, hx_hex_face_vert[hf2][q], B[q]);
    for (int d = 0; d < 3; d++) ca[d] += 0.25 * A[q][d], cb[d] += 0.25 * B[q][d];
  }
  for (int d = 0; d < 3; d++) T[d] = cb[d] - ca[d];
  const double tol = 10 * NEK_TOL * hmin;
  int match[4];
  for (int q = 0; q < 4; q++) {
    match[q] = -1;
    for (int s = 0; s < 4 && match[q] < 0; s++) {
      const double Y[3] = {A[q][0] + T[0], A[q][1] + T[1], A[q][2] + T[2]};
      if (dist3(Y, B[s]) <= tol) match[q] = s;
    }
    if (match[q] < 0)
      return NEK_ERR(
          c,
          "boundary record %lld: the periodic ('P') face %d of element %lld and face %d of element %lld "
          "that it names are not translates of each other: corner (%g, %g, %g) moved by the "
          "translation between the face centres (%g, %g, %g) meets no corner of the other face "
          "(tolerance %g); pair faces that map by a translation",
          (long long)rec + 1, kf + 1, (long long)e + 1, kf2 + 1, (long long)e2 + 1, A[q][0], A[q][1], A[q][2],
          T[0], T[1], T[2], tol);
  }
  HX_CALL(hx_realloc((size_t)(2 * (g->nper + 4)), sizeof(int64_t), &g->per));
  const int slave_first = e * 6 + hf > e2 * 6 + hf2;
  for (int q = 0; q < 4; q++) {
    const int64_t a = g->vid[e * 8 + hx_hex_face_vert[hf][q]],
                  b = g->vid[e2 * 8 + hx_hex_face_vert[hf2][match[q]]];
    g->per[2 * g->nper] = slave_first ? a : b;
    g->per[2 * g->nper + 1] = slave_first ? b : a;
    g->nper++;
  }
  return HX_SUCCESS;
}

static int read_fields(nrd *c, hx_gmesh *g, int64_t nelgt, int field, double hmin, int *nfields) {
  int fld = 0;
  int64_t napplied = 0, nper_rec = 0;
  while (c->pos < c->len) {
    fld++;
    char what[64];
    snprintf(what, sizeof what, "the number of boundary records of field %d", fld);
    int64_t nbc;
    HX_CALL(count_word(c, 8, &nbc, what));
    for (int64_t r = 0; r < nbc; r++) {
      const size_t at = c->pos;
      double w[8];
      char ty[8];
      HX_CALL(record_at(c, "a boundary record", w, ty));
      if (!whole_in(w[0], (double)nelgt))
        return NEK_ERR(
            c,
            "boundary record %lld of field %d (code '%s') names element %g, but the file has elements "
            "1..%lld",
            (long long)r + 1, fld, ty, w[0], (long long)nelgt);
      if (!whole_in(w[1], 6))
        return NEK_ERR(c, "boundary record %lld of field %d: element %.0f: face %g is outside 1..6",
                       (long long)r + 1, fld, w[0], w[1]);
      const int64_t e = (int64_t)w[0] - 1;
      const int kf = (int)w[1] - 1;
      if (fld == field && ty[0] && strcmp(ty, "E")) {
        if (!strcmp(ty, "P")) {
          if (!whole_in(w[2], (double)nelgt))
            return NEK_ERR(
                c,
                "boundary record %lld of field %d: the periodic ('P') face %d of element %lld points at "
                "element %g, which does not exist (the file has elements 1..%lld)",
                (long long)r + 1, fld, kf + 1, (long long)e + 1, w[2], (long long)nelgt);
          if (!whole_in(w[3], 6))
            return NEK_ERR(
                c,
                "boundary record %lld of field %d: the periodic ('P') face %d of element %lld points at "
                "face %g of element %.0f, outside 1..6",
                (long long)r + 1, fld, kf + 1, (long long)e + 1, w[3], w[2]);
          HX_CALL(periodic_record(c, g, r, e, kf, (int64_t)w[2] - 1, (int)w[3] - 1, hmin));
          nper_rec++;
        } else {
          int32_t t = -1;
          HX_CALL(tag_index(g, ty, &t));
          g->ftag[e * 6 + nek_face_to_hx[kf]] = t;
          napplied++;
        }
      }
      c->pos = at + 8 * (size_t)c->wdsz;
    }
    if (c->len - c->pos < (size_t)c->wdsz && c->pos < c->len)
      return NEK_ERR(
          c, "%zu byte(s) after the last boundary section: a truncated section count (a corrupt file)",
          c->len - c->pos);
  }
  *nfields = fld;
  (void)napplied, (void)nper_rec;
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- the file */
static int parse(nrd *c, int field, hx_gmesh *g) {
  if (c->len < 84) {
    c->pos = c->len;
    return NEK_ERR(
        c,
        "file truncated: a .re2 file starts with an 80-byte header and a 4-byte byte-order marker, "
        "this one has %zu byte(s)",
        c->len);
  }
  char hdr[81];
  memcpy(hdr, c->buf, 80);
  hdr[80] = 0;
  for (int i = 0; i < 80; i++)
    if (!hdr[i]) hdr[i] = ' ';
  if (!strncmp(hdr, "#v002", 5) || !strncmp(hdr, "#v003", 5))
    c->wdsz = 8;
  else if (!strncmp(hdr, "#v001", 5))
    c->wdsz = 4;
  else {
    char shown[12];
    int k = 0;
    for (int i = 0; i < 5; i++) shown[k++] = hdr[i] >= 32 && hdr[i] < 127 ? hdr[i] : '?';
    shown[k] = 0;
    return NEK_ERR(
        c,
        "not a binary .re2 mesh: the header starts '%s', expected '#v001', '#v002' or '#v003' (an ASCII "
        ".rea mesh must be converted with Nek5000's reatore2 first)",
        shown);
  }
  long long nelgt = -1, nelgv = -1;
  int ndim = 0;
  if (sscanf(hdr + 5, "%lld %d %lld", &nelgt, &ndim, &nelgv) != 3)
    return NEK_ERR(
        c, "the header '%.40s' does not give the element count, the dimension and the fluid element count",
        hdr);
  if (ndim != 3)
    return NEK_ERR(c, "the header gives dimension %d: hexcg reads 3-D (hexahedral) .re2 meshes only", ndim);
  if (nelgt < 1 || nelgv < 0 || nelgv > nelgt)
    return NEK_ERR(c, "the header gives %lld element(s), %lld of them fluid: expected 1 <= fluid <= total",
                   nelgt, nelgv);
  c->pos = 80;
  float tagf;
  unsigned char tb[4];
  memcpy(tb, c->buf + 80, 4);
  memcpy(&tagf, tb, 4);
  c->swap = 0;
  if (fabs(tagf - 6.54321f) > 1e-5) {
    unsigned char sb[4] = {tb[3], tb[2], tb[1], tb[0]};
    memcpy(&tagf, sb, 4);
    c->swap = 1;
    if (fabs(tagf - 6.54321f) > 1e-5)
      return NEK_ERR(
          c,
          "the byte-order marker (bytes %02x %02x %02x %02x) is the float 6.54321 in neither byte order: "
          "not a .re2 file, or a corrupt one",
          tb[0], tb[1], tb[2], tb[3]);
  }
  c->pos = 84;
  const size_t erec = 25 * (size_t)c->wdsz;
  if ((c->len - c->pos) / erec < (size_t)nelgt)
    return NEK_ERR(
        c,
        "the header gives %lld element(s) (%zu bytes each) but only %zu byte(s) follow: the count lies or "
        "the file is truncated",
        nelgt, erec, c->len - c->pos);
  memset(g, 0, sizeof *g);
  snprintf(g->src, sizeof g->src, "%s", c->path);
  g->ne = nelgt, g->npe = 8, g->nek = 1;
  HX_CALL(HX_ALLOC(&g->nodes, (size_t)nelgt * 24));
  HX_CALL(HX_ALLOC(&g->mat, nelgt));
  HX_CALL(HX_ALLOC(&g->ftag, nelgt * 6));
  HX_CALL(HX_ALLOC(&g->etag, nelgt));
  for (int64_t e = 0; e < nelgt; e++) {
    double w[25];
    HX_CALL(words(c, 25, w, "an element record"));
    for (int v = 0; v < 8; v++) {
      const int nv = nek_vert_of_tensor[v];
      for (int d = 0; d < 3; d++) {
        const double x = w[1 + 8 * d + nv];
        if (!isfinite(x)) {
          c->pos -= erec;
          return NEK_ERR(c, "element %lld: coordinate %c of vertex %d is not a finite number",
                         (long long)e + 1, "xyz"[d], nv + 1);
        }
        g->nodes[(e * 8 + v) * 3 + d] = x;
      }
    }
    g->mat[e] = e < nelgv ? 0 : 1;
    g->etag[e] = e + 1;
    for (int f = 0; f < 6; f++) g->ftag[e * 6 + f] = -1;
  }
  g->nmat = nelgv < nelgt ? 2 : 1;
  HX_CALL(HX_ALLOC(&g->mat_names, g->nmat));
  HX_CALL(hx_strdup("fluid", &g->mat_names[0]));
  if (g->nmat == 2) HX_CALL(hx_strdup("solid", &g->mat_names[1]));
  double hmin;
  HX_CALL(merge_vertices(g, &hmin));
  HX_CALL(read_curves(c, g, nelgt));
  int nfields = 0;
  HX_CALL(read_fields(c, g, nelgt, field, hmin, &nfields));
  if (field > nfields && !(field == 1 && nfields == 0))
    return HX_ERROR(
        HX_ERR_INPUT,
        "%s: mesh.field is %d but the file has %d boundary field(s) (1 = the first, the velocity's in "
        "Nek5000): choose one of 1..%d",
        c->path, field, nfields, nfields);
  if (nfields == 0)
    hx_mesh_note("note: %s: the file has no boundary section: every boundary face is '%s'\n", c->path,
             HX_MESH_UNTAGGED);
  return HX_SUCCESS;
}

void hx_gmesh_nek_interior(hx_gmesh *g) {
  int64_t n = 0, first = -1;
  const char *name = "";
  for (int64_t q = 0; q < g->ne * 6; q++)
    if (g->ftag[q] >= 0 && g->nbr[q] >= 0) {
      if (!n++) first = q, name = g->tag_names[g->ftag[q]];
      g->ftag[q] = -1;
    }
  if (n)
    hx_mesh_note(
        "note: %s: %lld boundary code(s) of the field sit on faces between two elements (the first: '%s' on "
        "face %d of element %lld; e.g. a fluid field's codes where the fluid meets the solid): ignored, "
        "hexcg solves on every element\n",
        g->src, (long long)n, name, nek_face_of_hx((int)(first % 6)) + 1, (long long)(first / 6) + 1);
}

int hx_gmesh_read_nek(const char *path, int field, hx_gmesh *g) {
  memset(g, 0, sizeof *g);
  HX_CHECK(field >= 1, HX_ERR_INPUT, "%s: mesh.field is %d: boundary fields are numbered from 1", path,
           field);
  struct stat st;
  HX_CHECK(stat(path, &st) != 0 || !S_ISDIR(st.st_mode), HX_ERR_INPUT,
           ".re2 file '%s' is a directory, not a file", path);
  FILE *f = fopen(path, "rb");
  HX_CHECK(f != NULL, HX_ERR_INPUT, "cannot open .re2 file '%s': %s", path, strerror(errno));
  nrd c;
  memset(&c, 0, sizeof c);
  c.path = path;
  unsigned char *buf = NULL;
  int err = HX_SUCCESS;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0) err = HX_ERROR(HX_ERR_IO, "%s: cannot determine the file size", path);
  if (!err) {
    rewind(f);
    err = hx_calloc((size_t)n + 1, 1, &buf);
  }
  if (!err && fread(buf, 1, (size_t)n, f) != (size_t)n) err = HX_ERROR(HX_ERR_IO, "%s: read error", path);
  fclose(f);
  if (!err) {
    c.buf = buf, c.len = (size_t)n;
    err = parse(&c, field, g);
  }
  free(buf);
  if (err) hx_gmesh_free(g);
  return err;
}
