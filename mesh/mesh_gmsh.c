/* Gmsh reader (rank 0): MSH 2.2 ASCII, MSH 4.1 ASCII and binary; hex8 (5)
 * and hex27 (12) elements, quadrilaterals (3, 10, 16) in physical surfaces
 * for boundary tags, physical volumes for materials. Node order is
 * converted to tensor order. Errors name the file and line (ASCII) or byte
 * offset (binary). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mesh_impl.h"

typedef struct {
  const char *path;
  char *buf;
  size_t len, pos;
  int binary; /* the current data is binary */
  int dsize;  /* size_t width in binary files */
  int fbin;   /* the file is binary (for messages after parsing) */
  int force_dsize; /* > 0: read binary sizes with this width, whatever the header says */
} cur;

static long line_of(const cur *c, size_t pos) {
  long line = 1;
  for (size_t i = 0; i < pos && i < c->len; i++) line += c->buf[i] == '\n';
  return line;
}

#define CUR_ERR(c, ...) cur_err((c), __FILE__, __LINE__, __func__, __VA_ARGS__)
static int cur_err(const cur *c, const char *file, int line, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int cur_err(const cur *c, const char *file, int line, const char *func, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->binary || c->fbin)
    return hx_error_set(file, line, func, HX_ERR_INPUT, "%s: byte offset %zu (line %ld): %s", c->path, c->pos,
                        line_of(c, c->pos), msg);
  return hx_error_set(file, line, func, HX_ERR_INPUT, "%s:%ld: %s", c->path, line_of(c, c->pos), msg);
}

static void skip_ws(cur *c) {
  while (c->pos < c->len && (c->buf[c->pos] == ' ' || c->buf[c->pos] == '\t' || c->buf[c->pos] == '\n' ||
                             c->buf[c->pos] == '\r'))
    c->pos++;
}

/* peek the next whitespace-delimited token into tok (truncated to n-1) */
static int next_tok(cur *c, char *tok, size_t n, const char *what) {
  skip_ws(c);
  if (c->pos >= c->len) return CUR_ERR(c, "unexpected end of file, expected %s", what);
  size_t s = c->pos;
  while (c->pos < c->len && !strchr(" \t\r\n", c->buf[c->pos])) c->pos++;
  size_t l = c->pos - s < n - 1 ? c->pos - s : n - 1;
  memcpy(tok, c->buf + s, l);
  tok[l] = 0;
  c->pos = s; /* a peek: errors point at the token */
  return HX_SUCCESS;
}

static int expect(cur *c, const char *word) {
  char tok[128];
  HX_CALL(next_tok(c, tok, sizeof tok, word));
  skip_ws(c);
  size_t s = c->pos;
  while (c->pos < c->len && !strchr(" \t\r\n", c->buf[c->pos])) c->pos++;
  if (strcmp(tok, word)) {
    c->pos = s;
    return CUR_ERR(c, "expected '%s', found '%s'", word, tok);
  }
  return HX_SUCCESS;
}

static int get_i64(cur *c, int64_t *v, const char *what) {
  if (c->binary) return CUR_ERR(c, "internal: text read in binary data");
  skip_ws(c);
  if (c->pos >= c->len) return CUR_ERR(c, "unexpected end of file, expected %s (an integer)", what);
  char *end;
  errno = 0;
  long long x = strtoll(c->buf + c->pos, &end, 10);
  if (end == c->buf + c->pos || errno || (*end && !strchr(" \t\r\n", *end))) {
    char tok[64];
    next_tok(c, tok, sizeof tok, what);
    return CUR_ERR(c, "expected %s (an integer), found '%s'", what, tok);
  }
  c->pos = (size_t)(end - c->buf);
  *v = x;
  return HX_SUCCESS;
}

static int get_f64(cur *c, double *v, const char *what) {
  skip_ws(c);
  if (c->pos >= c->len) return CUR_ERR(c, "unexpected end of file, expected %s (a number)", what);
  char *end;
  double x = strtod(c->buf + c->pos, &end);
  if (end == c->buf + c->pos || (*end && !strchr(" \t\r\n", *end)) || !isfinite(x)) {
    char tok[64];
    next_tok(c, tok, sizeof tok, what);
    return CUR_ERR(c, "expected %s (a finite number), found '%s'", what, tok);
  }
  c->pos = (size_t)(end - c->buf);
  *v = x;
  return HX_SUCCESS;
}

/* binary scalars */
static int bin_bytes(cur *c, void *out, size_t n, const char *what) {
  if (c->len - c->pos < n || c->pos > c->len)
    return CUR_ERR(c, "file truncated: expected %zu more byte(s) for %s, %zu left", n, what, c->len - c->pos);
  memcpy(out, c->buf + c->pos, n);
  c->pos += n;
  return HX_SUCCESS;
}
/* int (4 bytes in binary) */
static int get_int(cur *c, int64_t *v, const char *what) {
  if (!c->binary) return get_i64(c, v, what);
  int32_t x = 0;
  HX_CALL(bin_bytes(c, &x, 4, what));
  *v = x;
  return HX_SUCCESS;
}
/* size_t (data-size bytes in binary) */
static int get_size(cur *c, int64_t *v, const char *what) {
  if (!c->binary) {
    HX_CALL(get_i64(c, v, what));
  } else if (c->dsize == 8) {
    uint64_t x = 0;
    HX_CALL(bin_bytes(c, &x, 8, what));
    if (x > (uint64_t)INT64_MAX) {
      c->pos -= 8;
      return CUR_ERR(c, "%s is %llu (negative as a signed number: %lld), more than any file can hold (corrupt file)",
                     what, (unsigned long long)x, (long long)(int64_t)x);
    }
    *v = (int64_t)x;
  } else {
    uint32_t x = 0;
    HX_CALL(bin_bytes(c, &x, 4, what));
    *v = x;
  }
  if (*v < 0) return CUR_ERR(c, "expected %s (a non-negative count), found %lld", what, (long long)*v);
  return HX_SUCCESS;
}
static int get_dbl(cur *c, double *v, const char *what) {
  if (!c->binary) return get_f64(c, v, what);
  HX_CALL(bin_bytes(c, v, 8, what));
  if (!isfinite(*v)) {
    c->pos -= 8;
    return CUR_ERR(c, "expected %s (a finite number), found %g", what, *v);
  }
  return HX_SUCCESS;
}

static int count_check(cur *c, int64_t n, int64_t per_item_bytes, const char *what) {
  /* a count cannot exceed what the rest of the file could hold */
  int64_t left = (int64_t)(c->len - c->pos);
  if (n < 0) return CUR_ERR(c, "%s count %lld is negative (corrupt file)", what, (long long)n);
  if (per_item_bytes > 0 && n > left / per_item_bytes + 1)
    return CUR_ERR(c, "%s count %lld is larger than the rest of the file allows (truncated or corrupt file)",
                   what, (long long)n);
  return HX_SUCCESS;
}

/* nodes per element for the Gmsh element types we may meet */
static int type_nodes(int64_t t) {
  static const int tab[] = {0, 2,  3,  4,  4,  8,  6,  5,  3,  6,  9,  10, 27, 18, 14, 1,
                            8, 20, 15, 13, 9,  10, 12, 15, 15, 21, 4,  5,  6,  20, 35, 56,
                            0, 0,  0,  0,  16, 25, 36, 12, 16, 20, 28, 45, 15, 21, 28, 36};
  if (t >= 1 && t < (int64_t)(sizeof tab / sizeof tab[0])) return tab[t];
  if (t == 92) return 64;
  if (t == 93) return 125;
  return 0;
}

typedef struct {
  int64_t tag;
  int64_t idx;
} tagidx;
/* t: n (tag, file order) sorted by tag. Among the tags given more than once,
 * the one whose second occurrence comes first in the file: *first and
 * *second (file order); 0 if every tag is unique. */
static int first_repeat(const tagidx *t, int64_t n, int64_t *first, int64_t *second) {
  int64_t bf = -1, bs = -1;
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && t[j].tag == t[i].tag) j++;
    if (j - i > 1) {
      int64_t m1 = INT64_MAX, m2 = INT64_MAX;
      for (int64_t k = i; k < j; k++) {
        if (t[k].idx < m1)
          m2 = m1, m1 = t[k].idx;
        else if (t[k].idx < m2)
          m2 = t[k].idx;
      }
      if (bs < 0 || m2 < bs) bs = m2, bf = m1;
    }
    i = j;
  }
  *first = bf, *second = bs;
  return bs >= 0;
}

/* "line 12" (ASCII) or "byte offset 345" (binary file) of pos, for messages
 * that name a second place besides the one CUR_ERR prefixes */
static void where_at(const cur *c, size_t pos, char *buf, size_t n) {
  if (c->fbin)
    snprintf(buf, n, "byte offset %zu", pos);
  else
    snprintf(buf, n, "line %ld", line_of(c, pos));
}

typedef struct {
  int dim;
  int64_t tag;
  char *name;
} physname;
typedef struct {
  int64_t tag, phys;
} entphys;

typedef struct {
  /* nodes */
  int64_t nn;
  tagidx *ntag; /* sorted after reading */
  double *nxyz;
  size_t *npos; /* nn: where each node's record (its tag) starts, for messages */
  /* hexes */
  int64_t nh, caph;
  int npe;
  int64_t *hnodes; /* nh*npe node tags, Gmsh order */
  int64_t *htag, *hphys;
  size_t *hpos;
  /* quads */
  int64_t nq, capq;
  int64_t *qnodes, *qphys, *qent; /* qent: the quad's geometric (elementary) surface */
  int64_t ignored[128];
  size_t ignored_pos[128];   /* the first element of each ignored type */
  size_t elems_pos, per_pos; /* the $Elements and $Periodic headers */
  /* names, entities */
  int nphys;
  physname *phys;
  int64_t nent[4];
  entphys *ent[4];
  /* $Periodic: (slave, master) node tag pairs */
  int have_per;
  int64_t nper, capper;
  int64_t *per;
  /* links that list no node pairs (Gmsh 4.8 writes these for transfinite
   * surfaces, MSH 2.2 and 4.1): resolved from the surfaces' quads or refused */
  int64_t nempty, capempty;
  struct empty_link {
    int dim, translation; /* translation: no affine, or an affine that only translates */
    int64_t st, mt;
    size_t pos;
  } * empty;
  int64_t nlinks2; /* surface links, empty or not */
  int64_t *qtags;  /* build's distinct boundary tags (make_groups), freed here on every path */
} rd;

static void rd_free(rd *r) {
  free(r->ntag), free(r->nxyz), free(r->npos), free(r->hnodes), free(r->htag), free(r->hphys), free(r->hpos);
  free(r->qnodes), free(r->qphys), free(r->qent);
  for (int i = 0; i < r->nphys; i++) free(r->phys[i].name);
  free(r->phys);
  for (int d = 0; d < 4; d++) free(r->ent[d]);
  free(r->per), free(r->empty), free(r->qtags);
}

static int read_physnames(cur *c, rd *r) {
  int64_t n;
  HX_CALL(get_i64(c, &n, "number of physical names"));
  HX_CALL(count_check(c, n, 6, "physical name"));
  HX_CALL(HX_ALLOC(&r->phys, n));
  for (int64_t i = 0; i < n; i++) {
    int64_t dim, tag;
    HX_CALL(get_i64(c, &dim, "physical dimension"));
    HX_CALL(get_i64(c, &tag, "physical tag"));
    skip_ws(c);
    if (c->pos >= c->len || c->buf[c->pos] != '"') return CUR_ERR(c, "expected a quoted physical name");
    size_t s = ++c->pos;
    while (c->pos < c->len && c->buf[c->pos] != '"' && c->buf[c->pos] != '\n') c->pos++;
    if (c->pos >= c->len || c->buf[c->pos] != '"')
      return CUR_ERR(c, "unterminated physical name (missing '\"')");
    size_t l = c->pos - s;
    c->pos++;
    physname *p = &r->phys[r->nphys++];
    p->dim = (int)dim, p->tag = tag;
    HX_CALL(hx_calloc(l + 1, 1, &p->name));
    memcpy(p->name, c->buf + s, l);
  }
  return expect(c, "$EndPhysicalNames");
}

static int read_entities(cur *c, rd *r) {
  int64_t cnt[4];
  for (int d = 0; d < 4; d++) HX_CALL(get_size(c, &cnt[d], "number of entities"));
  for (int d = 0; d < 4; d++) {
    HX_CALL(count_check(c, cnt[d], c->binary ? 28 : 8, "entity"));
    HX_CALL(HX_ALLOC(&r->ent[d], cnt[d]));
    r->nent[d] = cnt[d];
    for (int64_t i = 0; i < cnt[d]; i++) {
      int64_t tag, np, x;
      double v;
      HX_CALL(get_int(c, &tag, "entity tag"));
      for (int k = 0; k < (d == 0 ? 3 : 6); k++) HX_CALL(get_dbl(c, &v, "entity bounding box"));
      HX_CALL(get_size(c, &np, "number of physical tags"));
      HX_CALL(count_check(c, np, c->binary ? 4 : 2, "physical tag"));
      r->ent[d][i].tag = tag, r->ent[d][i].phys = 0;
      for (int64_t k = 0; k < np; k++) {
        HX_CALL(get_int(c, &x, "physical tag"));
        if (k == 0) r->ent[d][i].phys = x < 0 ? -x : x;
      }
      if (d > 0) {
        int64_t nb;
        HX_CALL(get_size(c, &nb, "number of bounding entities"));
        HX_CALL(count_check(c, nb, c->binary ? 4 : 2, "bounding entity"));
        for (int64_t k = 0; k < nb; k++) HX_CALL(get_int(c, &x, "bounding entity tag"));
      }
    }
  }
  c->binary = 0;
  return expect(c, "$EndEntities");
}

static int64_t ent_phys(const rd *r, int dim, int64_t tag) {
  if (dim < 0 || dim > 3) return 0;
  for (int64_t i = 0; i < r->nent[dim]; i++)
    if (r->ent[dim][i].tag == tag) return r->ent[dim][i].phys;
  return 0;
}

static int add_node(cur *c, rd *r, int64_t tag, int64_t k, size_t pos) {
  if (tag < 1) return CUR_ERR(c, "node tag must be >= 1, got %lld", (long long)tag);
  r->ntag[k].tag = tag, r->ntag[k].idx = k;
  r->npos[k] = pos;
  return HX_SUCCESS;
}

static int read_nodes22(cur *c, rd *r) {
  int64_t n;
  HX_CALL(get_i64(c, &n, "number of nodes"));
  HX_CALL(count_check(c, n, 8, "node"));
  HX_CALL(HX_ALLOC(&r->ntag, n));
  HX_CALL(HX_ALLOC(&r->nxyz, 3 * n));
  HX_CALL(HX_ALLOC(&r->npos, n));
  r->nn = n;
  for (int64_t k = 0; k < n; k++) {
    int64_t tag;
    skip_ws(c);
    const size_t pos = c->pos;
    HX_CALL(get_i64(c, &tag, "node tag"));
    HX_CALL(add_node(c, r, tag, k, pos));
    for (int d = 0; d < 3; d++) HX_CALL(get_f64(c, &r->nxyz[3 * k + d], "node coordinate"));
  }
  return expect(c, "$EndNodes");
}

/* MSH 4.1: a section's header "numBlocks numX minTag maxTag" (what: node,
 * element), checked against what the file can hold (per_item bytes at the
 * least) */
static int head41(cur *c, const char *what, int64_t per_item, int64_t *nb, int64_t *n) {
  char w[64];
  int64_t mn, mx;
  snprintf(w, sizeof w, "number of %s blocks", what);
  HX_CALL(get_size(c, nb, w));
  snprintf(w, sizeof w, "number of %ss", what);
  HX_CALL(get_size(c, n, w));
  snprintf(w, sizeof w, "minimum %s tag", what);
  HX_CALL(get_size(c, &mn, w));
  snprintf(w, sizeof w, "maximum %s tag", what);
  HX_CALL(get_size(c, &mx, w));
  return count_check(c, *n, per_item, what);
}

/* MSH 4.1: a block's header "entityDim entityTag X numXInBlock" (third: what
 * X is) */
static int block41(cur *c, const char *what, const char *third, int64_t *dim, int64_t *etag, int64_t *x,
                   int64_t *m) {
  char w[64];
  HX_CALL(get_int(c, dim, "entity dimension"));
  HX_CALL(get_int(c, etag, "entity tag"));
  HX_CALL(get_int(c, x, third));
  snprintf(w, sizeof w, "number of %ss in block", what);
  return get_size(c, m, w);
}

/* MSH 4.1: the end of a section of n items whose blocks held k */
static int end41(cur *c, const char *what, int64_t k, int64_t n, const char *end) {
  if (k != n)
    return CUR_ERR(c, "the %s blocks hold %lld %ss, the header announced %lld", what, (long long)k, what,
                   (long long)n);
  c->binary = 0;
  return expect(c, end);
}

static int read_nodes41(cur *c, rd *r) {
  int64_t nb, n;
  HX_CALL(head41(c, "node", c->binary ? 32 : 8, &nb, &n));
  HX_CALL(HX_ALLOC(&r->ntag, n));
  HX_CALL(HX_ALLOC(&r->nxyz, 3 * n));
  HX_CALL(HX_ALLOC(&r->npos, n));
  r->nn = n;
  int64_t k = 0;
  for (int64_t b = 0; b < nb; b++) {
    int64_t dim, etag, par, m;
    HX_CALL(block41(c, "node", "parametric flag", &dim, &etag, &par, &m));
    if (par)
      return CUR_ERR(c, "parametric node coordinates are not supported (save without Mesh.SaveParametric)");
    if (m > n - k)
      return CUR_ERR(c, "node block holds %lld nodes but the header announced %lld in all", (long long)m,
                     (long long)n);
    for (int64_t i = 0; i < m; i++) {
      int64_t tag;
      if (!c->binary) skip_ws(c);
      const size_t pos = c->pos;
      HX_CALL(get_size(c, &tag, "node tag"));
      HX_CALL(add_node(c, r, tag, k + i, pos));
    }
    for (int64_t i = 0; i < m; i++)
      for (int d = 0; d < 3; d++) HX_CALL(get_dbl(c, &r->nxyz[3 * (k + i) + d], "node coordinate"));
    k += m;
  }
  return end41(c, "node", k, n, "$EndNodes");
}

static int grow(int64_t need, int64_t *cap, size_t sz, void *pp) {
  if (need <= *cap) return HX_SUCCESS;
  int64_t nc = *cap ? *cap : 1024;
  while (nc < need) nc *= 2;
  HX_CALL(hx_realloc((size_t)nc, sz, pp));
  *cap = nc;
  return HX_SUCCESS;
}

/* one element: type, its node tags, physical tag */
static int add_element(cur *c, rd *r, int64_t etag, int64_t type, const int64_t *nodes, int64_t phys,
                       int64_t ent, size_t pos) {
  if (type == 5 || type == 12) {
    int npe = type == 5 ? 8 : 27;
    if (r->npe && r->npe != npe) {
      c->pos = pos;
      return CUR_ERR(c, "element %lld: mixing hex8 and hex27 elements is not supported", (long long)etag);
    }
    r->npe = npe;
    int64_t cap = r->caph;
    HX_CALL(grow(r->nh + 1, &cap, sizeof(int64_t) * npe, &r->hnodes));
    cap = r->caph;
    HX_CALL(grow(r->nh + 1, &cap, sizeof(int64_t), &r->htag));
    cap = r->caph;
    HX_CALL(grow(r->nh + 1, &cap, sizeof(int64_t), &r->hphys));
    cap = r->caph;
    HX_CALL(grow(r->nh + 1, &cap, sizeof(size_t), &r->hpos));
    r->caph = cap;
    memcpy(&r->hnodes[r->nh * npe], nodes, sizeof(int64_t) * npe);
    r->htag[r->nh] = etag, r->hphys[r->nh] = phys, r->hpos[r->nh] = pos;
    r->nh++;
  } else if ((type == 3 || type == 10 || type == 16) && phys > 0) {
    int64_t cap = r->capq;
    HX_CALL(grow(r->nq + 1, &cap, sizeof(int64_t) * 4, &r->qnodes));
    cap = r->capq;
    HX_CALL(grow(r->nq + 1, &cap, sizeof(int64_t), &r->qphys));
    cap = r->capq;
    HX_CALL(grow(r->nq + 1, &cap, sizeof(int64_t), &r->qent));
    r->capq = cap;
    memcpy(&r->qnodes[r->nq * 4], nodes, sizeof(int64_t) * 4);
    r->qent[r->nq] = ent;
    r->qphys[r->nq++] = phys;
  } else if (type != 3 && type != 10 && type != 16) {
    const int t = type < 128 && type > 0 ? (int)type : 0;
    if (!r->ignored[t]++) r->ignored_pos[t] = pos;
  }
  return HX_SUCCESS;
}

static int read_elements22(cur *c, rd *r) {
  int64_t n, nodes[128];
  HX_CALL(get_i64(c, &n, "number of elements"));
  HX_CALL(count_check(c, n, 8, "element"));
  for (int64_t k = 0; k < n; k++) {
    int64_t tag, type, nt, phys = 0, ent = 0, x;
    skip_ws(c);
    size_t pos = c->pos;
    HX_CALL(get_i64(c, &tag, "element tag"));
    HX_CALL(get_i64(c, &type, "element type"));
    HX_CALL(get_i64(c, &nt, "number of element tags"));
    if (nt < 0 || nt > 64)
      return CUR_ERR(c, "element %lld: bad number of tags %lld", (long long)tag, (long long)nt);
    for (int64_t i = 0; i < nt; i++) {
      HX_CALL(get_i64(c, &x, "element tag value"));
      if (i == 0) phys = x;
      if (i == 1) ent = x;
    }
    int nn = type_nodes(type);
    if (nn == 0) {
      c->pos = pos;
      return CUR_ERR(c, "element %lld has unknown Gmsh element type %lld", (long long)tag, (long long)type);
    }
    for (int i = 0; i < nn; i++) HX_CALL(get_i64(c, &nodes[i], "element node tag"));
    HX_CALL(add_element(c, r, tag, type, nodes, phys, ent, pos));
  }
  return expect(c, "$EndElements");
}

static int read_elements41(cur *c, rd *r) {
  int64_t nb, n, nodes[128];
  HX_CALL(head41(c, "element", c->binary ? 16 : 4, &nb, &n));
  int64_t k = 0;
  for (int64_t b = 0; b < nb; b++) {
    int64_t dim, etag, type, m;
    HX_CALL(block41(c, "element", "element type", &dim, &etag, &type, &m));
    int nn = type_nodes(type);
    if (nn == 0)
      return CUR_ERR(c, "unknown Gmsh element type %lld in element block %lld", (long long)type,
                     (long long)b);
    if (m > n - k)
      return CUR_ERR(c, "element block holds %lld elements but the header announced %lld in all",
                     (long long)m, (long long)n);
    HX_CALL(count_check(c, m, (int64_t)(c->binary ? 8 : 2) * (nn + 1), "element"));
    int64_t phys = ent_phys(r, (int)dim, etag);
    for (int64_t i = 0; i < m; i++) {
      int64_t tag;
      if (!c->binary) skip_ws(c);
      size_t pos = c->pos;
      HX_CALL(get_size(c, &tag, "element tag"));
      for (int j = 0; j < nn; j++) HX_CALL(get_size(c, &nodes[j], "element node tag"));
      HX_CALL(add_element(c, r, tag, type, nodes, phys, etag, pos));
    }
    k += m;
  }
  return end41(c, "element", k, n, "$EndElements");
}

/* $Periodic (MSH 2.2: links "dim slave master", an optional "Affine" line
 * of 16 numbers, the node pairs; MSH 4.1: links "dim slave master",
 * numAffine numbers, the node pairs; binary int/size_t as in Gmsh) */
static int read_periodic(cur *c, rd *r, int v41) {
  int64_t nl;
  HX_CALL(get_size(c, &nl, "number of periodic links"));
  HX_CALL(count_check(c, nl, c->binary ? 28 : 8, "periodic link"));
  for (int64_t l = 0; l < nl; l++) {
    int64_t dim, st, mt, na = 0, nn;
    double aff[16];
    int have_aff = 0;
    if (!c->binary) skip_ws(c);
    const size_t lpos = c->pos;
    HX_CALL(get_int(c, &dim, "periodic entity dimension"));
    HX_CALL(get_int(c, &st, "periodic entity tag"));
    HX_CALL(get_int(c, &mt, "periodic master entity tag"));
    if (dim < 0 || dim > 3)
      return CUR_ERR(c, "periodic link %lld: dimension %lld (expected 0..3)", (long long)l, (long long)dim);
    if (v41) {
      HX_CALL(get_size(c, &na, "number of affine values"));
      HX_CALL(count_check(c, na, c->binary ? 8 : 2, "affine value"));
      for (int64_t i = 0; i < na; i++) {
        double a;
        HX_CALL(get_dbl(c, &a, "affine value"));
        if (na == 16) aff[i] = a;
      }
      have_aff = na == 16;
    } else {
      char tok[32];
      HX_CALL(next_tok(c, tok, sizeof tok, "the number of periodic nodes or 'Affine'"));
      if (!strcmp(tok, "Affine")) {
        HX_CALL(expect(c, "Affine"));
        for (int i = 0; i < 16; i++) HX_CALL(get_f64(c, &aff[i], "affine value"));
        have_aff = 1;
      }
    }
    HX_CALL(get_size(c, &nn, "number of periodic nodes"));
    HX_CALL(count_check(c, nn, c->binary ? 2 * c->dsize : 4, "periodic node pair"));
    if (dim == 2) r->nlinks2++;
    if (nn == 0) {
      HX_CALL(grow(r->nempty + 1, &r->capempty, sizeof *r->empty, &r->empty));
      /* a translation: the 3x3 block is the identity (Gmsh writes the matrix row by row) */
      int tr = 1;
      for (int i = 0; i < 3 && have_aff; i++)
        for (int j = 0; j < 3; j++)
          if (fabs(aff[4 * i + j] - (i == j)) > 1e-12) tr = 0;
      r->empty[r->nempty].dim = (int)dim, r->empty[r->nempty].translation = tr;
      r->empty[r->nempty].st = st, r->empty[r->nempty].mt = mt, r->empty[r->nempty].pos = lpos;
      r->nempty++;
    }
    HX_CALL(grow(r->nper + nn, &r->capper, 2 * sizeof(int64_t), &r->per));
    for (int64_t i = 0; i < nn; i++) {
      int64_t a, b;
      HX_CALL(get_size(c, &a, "periodic node tag"));
      HX_CALL(get_size(c, &b, "periodic master node tag"));
      r->per[2 * r->nper] = a, r->per[2 * r->nper + 1] = b;
      r->nper++;
    }
  }
  c->binary = 0;
  r->have_per = 1;
  return expect(c, "$EndPeriodic");
}

static int skip_section(cur *c, const char *name) {
  char end[160];
  snprintf(end, sizeof end, "\n$End%s", name + 1);
  const char *p = NULL;
  for (size_t i = c->pos; i + strlen(end) <= c->len; i++)
    if (c->buf[i] == '\n' && !memcmp(c->buf + i, end, strlen(end))) {
      p = c->buf + i;
      break;
    }
  if (!p) return CUR_ERR(c, "section %s has no matching $End%s (truncated file?)", name, name + 1);
  c->pos = (size_t)(p - c->buf) + strlen(end);
  return HX_SUCCESS;
}

static const char *phys_name(const rd *r, int dim, int64_t tag) {
  for (int i = 0; i < r->nphys; i++)
    if (r->phys[i].dim == dim && r->phys[i].tag == tag) return r->phys[i].name;
  return NULL;
}

/* distinct sorted physical tags -> names */
static int make_groups(const rd *r, const int64_t *phys, int64_t n, int dim, int64_t **tags, int *ng,
                       char ***names) {
  int64_t *t;
  HX_CALL(HX_ALLOC(&t, n));
  if (n > 0) memcpy(t, phys, sizeof(int64_t) * n);
  qsort(t, (size_t)n, sizeof *t, hx_mesh_cmp_key);
  int64_t u = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || t[i] != t[i - 1]) t[u++] = t[i];
  *ng = (int)u;
  int err = HX_ALLOC(names, u);
  for (int64_t i = 0; !err && i < u; i++) {
    const char *nm = phys_name(r, dim, t[i]);
    char buf[64];
    if (!nm) {
      if (t[i] == 0)
        snprintf(buf, sizeof buf, "default");
      else
        snprintf(buf, sizeof buf, "%s_%lld", dim == 3 ? "volume" : "surface", (long long)t[i]);
      nm = buf;
    }
    err = hx_strdup(nm, &(*names)[i]);
  }
  if (err) {
    free(t);
    HX_CALL(err);
  }
  *tags = t;
  return HX_SUCCESS;
}

static int group_index(const int64_t *tags, int n, int64_t t) {
  const int64_t *p = bsearch(&t, tags, (size_t)n, sizeof *tags, hx_mesh_cmp_key);
  return p ? (int)(p - tags) : -1;
}

void hx_gmsh_node_maps(int map8[8], int map27[27]) {
  static const int gv[8][3] = {{0, 0, 0}, {2, 0, 0}, {2, 2, 0}, {0, 2, 0},
                               {0, 0, 2}, {2, 0, 2}, {2, 2, 2}, {0, 2, 2}};
  static const int ge[12][2] = {{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3},
                                {2, 6}, {3, 7}, {4, 5}, {4, 7}, {5, 6}, {6, 7}};
  static const int gf[6][4] = {{0, 3, 2, 1}, {0, 1, 5, 4}, {0, 4, 7, 3},
                               {1, 2, 6, 5}, {2, 3, 7, 6}, {4, 5, 6, 7}};
  int pos[27][3];
  for (int v = 0; v < 8; v++)
    for (int d = 0; d < 3; d++) pos[v][d] = gv[v][d];
  for (int e = 0; e < 12; e++)
    for (int d = 0; d < 3; d++) pos[8 + e][d] = (gv[ge[e][0]][d] + gv[ge[e][1]][d]) / 2;
  for (int f = 0; f < 6; f++)
    for (int d = 0; d < 3; d++)
      pos[20 + f][d] = (gv[gf[f][0]][d] + gv[gf[f][1]][d] + gv[gf[f][2]][d] + gv[gf[f][3]][d]) / 4;
  for (int d = 0; d < 3; d++) pos[26][d] = 1;
  for (int g = 0; g < 27; g++) map27[pos[g][0] + 3 * pos[g][1] + 9 * pos[g][2]] = g;
  for (int g = 0; g < 8; g++) map8[gv[g][0] / 2 + 2 * (gv[g][1] / 2) + 4 * (gv[g][2] / 2)] = g;
}

static int64_t find_node(const rd *r, int64_t tag) {
  tagidx key = {tag, 0};
  const tagidx *p = bsearch(&key, r->ntag, (size_t)r->nn, sizeof key, hx_mesh_cmp_key);
  return p ? p->idx : -1;
}

/* Gmsh element types that are 3-D but not hex8/hex27 (tetrahedra, prisms,
 * pyramids, higher-order and serendipity hexahedra) */
static const char *solid_name(int t) {
  switch (t) {
    case 4: case 11: case 29: case 30: case 31: return "tetrahedra";
    case 6: case 13: case 18: return "prisms";
    case 7: case 14: case 19: return "pyramids";
    case 17: case 92: case 93: return "hexahedra of an unsupported order (20, 64 or 125 nodes)";
    default: return NULL;
  }
}

/* The physical surface (index into the groups bt) that consists of exactly
 * the quads of geometric surface ent; -1 if its quads are untagged or
 * missing, or if their group holds other surfaces too. */
static int surface_group(const rd *r, const int64_t *bt, int ng, int64_t ent) {
  int64_t phys = 0;
  for (int64_t i = 0; i < r->nq; i++)
    if (r->qent[i] == ent) {
      if (phys && r->qphys[i] != phys) return -1;
      phys = r->qphys[i];
    }
  if (!phys) return -1;
  for (int64_t i = 0; i < r->nq; i++)
    if (r->qphys[i] == phys && r->qent[i] != ent) return -1;
  return group_index(bt, ng, phys);
}

/* $Periodic links that list no node pairs (Gmsh 4.8 writes them for
 * transfinite surfaces, in MSH 2.2 and 4.1, with the affine map but
 * without the nodes): a surface link whose two surfaces are each exactly one physical
 * surface, and whose map is a translation, becomes a tag pair matched by
 * translation (hx_gmesh_tag_pairs, like mesh.periodic: [[a, b]]); curve and
 * point links lie on the linked surfaces, whose matching takes all their
 * nodes. Anything else is recorded in g->per_unresolved, never ignored. */
static int resolve_empty_links(cur *c, rd *r, hx_gmesh *g, const int64_t *bt) {
  if (r->nempty == 0) return HX_SUCCESS;
  HX_CALL(hx_calloc((size_t)(2 * r->nempty), sizeof(char *), &g->file_pairs));
  for (int64_t l = 0; l < r->nempty; l++) {
    const long line = line_of(c, r->empty[l].pos);
    const int64_t st = r->empty[l].st, mt = r->empty[l].mt;
    char why[384] = "";
    int gs = -1, gm = -1;
    if (r->empty[l].dim != 2) {
      if (r->nlinks2 > 0) continue;
      snprintf(why, sizeof why, "it links %s %lld to %lld and the file has no surface link to take it from",
               r->empty[l].dim == 1 ? "curve" : "point", (long long)st, (long long)mt);
    } else if (!r->empty[l].translation) {
      snprintf(why, sizeof why,
               "its affine map is not a translation (only translational periodicity is supported)");
    } else {
      gs = surface_group(r, bt, g->ntags, st), gm = surface_group(r, bt, g->ntags, mt);
      if (gs < 0 || gm < 0)
        snprintf(why, sizeof why,
                 "geometric surface %lld is not exactly one physical surface of the file, so its nodes "
                 "cannot be found (give each periodic surface its own Physical Surface)",
                 (long long)(gs < 0 ? st : mt));
      else if (gs == gm)
        snprintf(why, sizeof why, "surfaces %lld and %lld are in the same physical surface", (long long)st,
                 (long long)mt);
    }
    if (why[0]) {
      if (!g->per_unresolved[0])
        snprintf(g->per_unresolved, sizeof g->per_unresolved,
                 "%s:%ld: the $Periodic link of surface %lld to %lld lists no node pairs and %s: the "
                 "periodicity cannot be taken from the file (and will not be ignored); name the two "
                 "surfaces in the case, mesh.periodic: [[a, b]], to match their nodes by translation, or "
                 "remove the section",
                 c->path, line, (long long)st, (long long)mt, why);
      continue;
    }
    const int k = g->nfile_pairs++;
    HX_CALL(hx_strdup(g->tag_names[gm], &g->file_pairs[2 * k]));
    HX_CALL(hx_strdup(g->tag_names[gs], &g->file_pairs[2 * k + 1]));
    hx_mesh_note(
        "note: %s:%ld: the $Periodic link of surface %lld to %lld lists no node pairs: matching "
        "the nodes of '%s' and '%s' by translation\n",
        c->path, line, (long long)st, (long long)mt, g->tag_names[gm], g->tag_names[gs]);
  }
  return HX_SUCCESS;
}

/* $Periodic: the pairs between element vertices (mid-nodes of hex27 and
 * nodes off the hexahedra follow from them) */
static int periodic_pairs(cur *c, const rd *r, hx_gmesh *g, int64_t nv) {
  HX_CALL(HX_ALLOC(&g->per, 2 * r->nper + 2));
  int64_t w = 0;
  for (int64_t i = 0; i < r->nper; i++) {
    const int64_t *a = bsearch(&r->per[2 * i], g->vtag, (size_t)nv, sizeof(int64_t), hx_mesh_cmp_key),
                  *b = bsearch(&r->per[2 * i + 1], g->vtag, (size_t)nv, sizeof(int64_t), hx_mesh_cmp_key);
    if (a && b) g->per[2 * w] = a - g->vtag, g->per[2 * w + 1] = b - g->vtag, w++;
  }
  g->nper = w;
  if (w == 0 && r->nper > 0) {
    c->pos = r->per_pos;
    return CUR_ERR(
        c,
        "the $Periodic section lists %lld node pair(s), none between vertices of hexahedra: the "
        "periodicity cannot be applied (and will not be ignored); remove the section or mesh the "
        "periodic surfaces of the volume",
        (long long)r->nper);
  }
  return HX_SUCCESS;
}

/* the file holds hexahedra, and nothing 3-D besides: solving on the
 * hexahedra alone would silently drop part of the domain */
static int check_solids(cur *c, const rd *r) {
  char solids[512] = "";
  size_t so = 0;
  for (int t = 0; t < 128; t++)
    if (r->ignored[t] && solid_name(t) && so < sizeof solids)
      so += (size_t)snprintf(solids + so, sizeof solids - so, "%s%lld %s (type %d)", so ? ", " : "",
                             (long long)r->ignored[t], solid_name(t), t);
  if (so) {
    /* at the first of them in the file */
    c->pos = c->len;
    for (int t = 0; t < 128; t++)
      if (r->ignored[t] && solid_name(t) && r->ignored_pos[t] < c->pos) c->pos = r->ignored_pos[t];
    c->binary = 0;
    return CUR_ERR(c,
                   "3-D elements that are not hexahedra: %s (the first here); hexcg needs an all-hex mesh "
                   "(Gmsh types 5 hex8 or 12 hex27; Mesh.RecombineAll=1 and Mesh.Recombine3DAll=1)",
                   solids);
  }
  if (r->nh == 0) {
    c->pos = r->elems_pos;
    c->binary = 0;
    return CUR_ERR(c,
                   "the file has no hexahedral elements (Gmsh types 5 hex8 or 12 hex27); "
                   "mesh with Mesh.RecombineAll=1 and Mesh.Recombine3DAll=1 or extrude recombined layers");
  }
  return HX_SUCCESS;
}

/* element tags and node tags are unique in a valid file (sorts r->ntag) */
static int check_unique_tags(cur *c, rd *r) {
  int64_t first, second;
  if (r->nh > 1) {
    tagidx *t = malloc(sizeof *t * (size_t)r->nh);
    HX_CHECK(t, HX_ERR_MEM, "out of memory");
    for (int64_t i = 0; i < r->nh; i++) t[i].tag = r->htag[i], t[i].idx = i;
    qsort(t, (size_t)r->nh, sizeof *t, hx_mesh_cmp_key);
    const int dup = first_repeat(t, r->nh, &first, &second);
    free(t);
    if (dup) {
      char w[64];
      where_at(c, r->hpos[first], w, sizeof w);
      c->pos = r->hpos[second];
      c->binary = 0;
      return CUR_ERR(c,
                     "element tag %lld is defined twice in $Elements (first at %s); element tags must be "
                     "unique",
                     (long long)r->htag[second], w);
    }
  }
  c->binary = 0;
  qsort(r->ntag, (size_t)r->nn, sizeof *r->ntag, hx_mesh_cmp_key);
  if (first_repeat(r->ntag, r->nn, &first, &second)) {
    char w[64];
    where_at(c, r->npos[first], w, sizeof w);
    c->pos = r->npos[second];
    int64_t tag = -1;
    for (int64_t i = 0; i < r->nn && tag < 0; i++)
      if (r->ntag[i].idx == second) tag = r->ntag[i].tag;
    return CUR_ERR(c, "node tag %lld is defined twice in $Nodes (first at %s); node tags must be unique",
                   (long long)tag, w);
  }
  return HX_SUCCESS;
}

/* vertices: the distinct corner node tags, in tag order (g->vtag, g->nv) */
static int number_vertices(const rd *r, hx_gmesh *g) {
  const int npe = r->npe;
  int64_t *vt;
  HX_CALL(HX_ALLOC(&vt, r->nh * 8));
  for (int64_t e = 0; e < r->nh; e++)
    for (int v = 0; v < 8; v++) vt[e * 8 + v] = r->hnodes[e * npe + v];
  qsort(vt, (size_t)(r->nh * 8), sizeof *vt, hx_mesh_cmp_key);
  int64_t nv = 0;
  for (int64_t i = 0; i < r->nh * 8; i++)
    if (i == 0 || vt[i] != vt[i - 1]) vt[nv++] = vt[i];
  g->nv = nv;
  g->vtag = vt;
  HX_CALL(hx_realloc((size_t)nv, sizeof *vt, &g->vtag));
  return HX_SUCCESS;
}

/* the elements: nodes in tensor order, vertex ids, tags */
static int fill_elements(cur *c, const rd *r, hx_gmesh *g) {
  const int npe = r->npe, q = npe == 8 ? 2 : 3;
  int map8[8], map27[27];
  hx_gmsh_node_maps(map8, map27);
  HX_CALL(HX_ALLOC(&g->nodes, r->nh * npe * 3));
  HX_CALL(HX_ALLOC(&g->vid, r->nh * 8));
  HX_CALL(HX_ALLOC(&g->mat, r->nh));
  HX_CALL(HX_ALLOC(&g->ftag, r->nh * 6));
  HX_CALL(HX_ALLOC(&g->etag, r->nh));
  for (int64_t e = 0; e < r->nh; e++) {
    g->etag[e] = r->htag[e];
    for (int t = 0; t < npe; t++) {
      int gi = npe == 8 ? map8[t] : map27[t];
      int64_t tag = r->hnodes[e * npe + gi];
      int64_t k = find_node(r, tag);
      if (k < 0) {
        c->pos = r->hpos[e];
        return CUR_ERR(c, "element %lld references node %lld, which is not in $Nodes", (long long)r->htag[e],
                       (long long)tag);
      }
      memcpy(&g->nodes[(e * npe + t) * 3], &r->nxyz[3 * k], 3 * sizeof(double));
    }
    for (int v = 0; v < 8; v++) {
      int a = v & 1, b = (v >> 1) & 1, cc = v >> 2;
      int t = a * (q - 1) + q * (b * (q - 1) + q * cc * (q - 1));
      int64_t tag = r->hnodes[e * npe + (npe == 8 ? map8[t] : map27[t])];
      const int64_t *p = bsearch(&tag, g->vtag, (size_t)g->nv, sizeof tag, hx_mesh_cmp_key);
      g->vid[e * 8 + v] = p - g->vtag;
    }
    for (int f = 0; f < 6; f++) g->ftag[e * 6 + f] = -1;
  }
  return HX_SUCCESS;
}

/* where each vertex's node record is, for the topology's messages
 * (check_coincident): one sweep of the file for all the lines */
static int vertex_lines(const cur *c, const rd *r, hx_gmesh *g) {
  const int64_t nv = g->nv;
  HX_CALL(HX_ALLOC(&g->vloc, nv));
  g->vloc_bin = c->fbin;
  tagidx *pv = NULL;
  HX_CALL(HX_ALLOC(&pv, nv));
  for (int64_t v = 0; v < nv; v++) pv[v].tag = (int64_t)r->npos[find_node(r, g->vtag[v])], pv[v].idx = v;
  if (!c->fbin) {
    qsort(pv, (size_t)nv, sizeof *pv, hx_mesh_cmp_key);
    long line = 1;
    size_t at = 0;
    for (int64_t i = 0; i < nv; i++) {
      for (; at < (size_t)pv[i].tag && at < c->len; at++) line += c->buf[at] == '\n';
      g->vloc[pv[i].idx] = line;
    }
  } else {
    for (int64_t v = 0; v < nv; v++) g->vloc[v] = pv[v].tag;
  }
  free(pv);
  return HX_SUCCESS;
}

/* boundary quads: corner node tags -> vertex ids; *off: the quads that do
 * not lie on hexahedra */
static int boundary_quads(rd *r, hx_gmesh *g, int64_t *off) {
  HX_CALL(make_groups(r, r->qphys, r->nq, 2, &r->qtags, &g->ntags, &g->tag_names));
  HX_CALL(HX_ALLOC(&g->bq_v, r->nq * 4));
  HX_CALL(HX_ALLOC(&g->bq_tag, r->nq));
  int64_t nq = 0;
  *off = 0;
  for (int64_t i = 0; i < r->nq; i++) {
    int ok = 1;
    for (int k = 0; k < 4; k++) {
      const int64_t *p = bsearch(&r->qnodes[i * 4 + k], g->vtag, (size_t)g->nv, sizeof(int64_t), hx_mesh_cmp_key);
      if (!p)
        ok = 0;
      else
        g->bq_v[nq * 4 + k] = p - g->vtag;
    }
    if (!ok) {
      ++*off;
      continue;
    }
    g->bq_tag[nq++] = group_index(r->qtags, g->ntags, r->qphys[i]);
  }
  g->nbq = nq;
  return HX_SUCCESS;
}

/* the notes on what the mesh leaves out */
static void note_ignored(const cur *c, const rd *r, int64_t off) {
  if (off)
    hx_mesh_note("note: %s: %lld tagged quadrilateral(s) do not lie on hexahedra and are ignored\n",
           c->path, (long long)off);
  int64_t nign = 0;
  for (int t = 0; t < 128; t++) nign += r->ignored[t];
  if (nign) {
    char list[512];
    size_t o = 0;
    for (int t = 0; t < 128 && o < sizeof list; t++)
      if (r->ignored[t])
        o += (size_t)snprintf(list + o, sizeof list - o, " %lld of type %d", (long long)r->ignored[t], t);
    hx_mesh_note("note: %s: ignored %lld element(s) that are neither hexahedra nor quadrilaterals:%s\n", c->path,
              (long long)nign, list);
  }
}

static int build(cur *c, rd *r, hx_gmesh *g) {
  HX_CALL(check_solids(c, r));
  HX_CALL(check_unique_tags(c, r));
  memset(g, 0, sizeof *g);
  snprintf(g->src, sizeof g->src, "%s", c->path);
  g->ne = r->nh, g->npe = r->npe;
  HX_CALL(number_vertices(r, g));
  HX_CALL(fill_elements(c, r, g));
  HX_CALL(vertex_lines(c, r, g));
  /* materials */
  int64_t *mt = NULL;
  HX_CALL(make_groups(r, r->hphys, r->nh, 3, &mt, &g->nmat, &g->mat_names));
  for (int64_t e = 0; e < r->nh; e++) g->mat[e] = group_index(mt, g->nmat, r->hphys[e]);
  free(mt);
  int64_t off = 0;
  HX_CALL(boundary_quads(r, g, &off));
  if (r->have_per) HX_CALL(periodic_pairs(c, r, g, g->nv));
  HX_CALL(resolve_empty_links(c, r, g, r->qtags));
  note_ignored(c, r, off);
  return HX_SUCCESS;
}

static int parse(cur *c, rd *r, hx_gmesh *g) {
  double version;
  int64_t ftype, dsize;
  HX_CALL(expect(c, "$MeshFormat"));
  HX_CALL(get_f64(c, &version, "MSH version"));
  HX_CALL(get_i64(c, &ftype, "file type (0 ASCII, 1 binary)"));
  HX_CALL(get_i64(c, &dsize, "data size"));
  int v41 = version == 4.1, v22 = version == 2.2;
  if (!v41 && !v22)
    return CUR_ERR(c, "unsupported MSH version %g (expected 2.2 or 4.1; save with Mesh.MshFileVersion)",
                   version);
  if (ftype != 0 && ftype != 1)
    return CUR_ERR(c, "file type must be 0 (ASCII) or 1 (binary), got %lld", (long long)ftype);
  if (ftype == 1 && v22)
    return CUR_ERR(c, "MSH 2.2 binary is not supported: save as MSH 2.2 ASCII or MSH 4.1");
  if (dsize != 8 && dsize != 4) return CUR_ERR(c, "data size must be 8 (or 4), got %lld", (long long)dsize);
  c->dsize = c->force_dsize > 0 ? c->force_dsize : (int)dsize;
  const int bin = ftype == 1;
  c->fbin = bin;
  if (bin) {
    while (c->pos < c->len && c->buf[c->pos] != '\n') c->pos++;
    c->pos++;
    c->binary = 1;
    int32_t one = 0;
    HX_CALL(bin_bytes(c, &one, 4, "the endianness check integer 1"));
    c->pos -= 4;
    if (one != 1)
      return CUR_ERR(
          c, "binary endianness check: expected the integer 1, read %d (other-endian or corrupt file)",
          (int)one);
    c->pos += 4;
    c->binary = 0;
  }
  HX_CALL(expect(c, "$EndMeshFormat"));
  int have_nodes = 0, have_elems = 0;
  for (;;) {
    skip_ws(c);
    if (c->pos >= c->len) break;
    char name[128];
    HX_CALL(next_tok(c, name, sizeof name, "a section"));
    const size_t start = c->pos; /* the section header, for messages about the section */
    if (name[0] != '$') return CUR_ERR(c, "expected a section name ($Nodes, $Elements...), found '%s'", name);
    HX_CALL(expect(c, name));
    if (!strcmp(name, "$PhysicalNames")) {
      if (r->phys) return CUR_ERR(c, "a second $PhysicalNames section");
      HX_CALL(read_physnames(c, r));
    } else if (!strcmp(name, "$Entities") && v41) {
      if (r->ent[0]) return CUR_ERR(c, "a second $Entities section");
      if (bin) c->pos++, c->binary = 1;
      HX_CALL(read_entities(c, r));
    } else if (!strcmp(name, "$Nodes")) {
      if (have_nodes) return CUR_ERR(c, "a second $Nodes section");
      have_nodes = 1;
      if (v22)
        HX_CALL(read_nodes22(c, r));
      else {
        if (bin) c->pos++, c->binary = 1;
        HX_CALL(read_nodes41(c, r));
      }
    } else if (!strcmp(name, "$Elements")) {
      if (!have_nodes) return CUR_ERR(c, "$Elements before $Nodes");
      if (have_elems) return CUR_ERR(c, "a second $Elements section");
      have_elems = 1;
      r->elems_pos = start;
      if (v22)
        HX_CALL(read_elements22(c, r));
      else {
        if (bin) c->pos++, c->binary = 1;
        HX_CALL(read_elements41(c, r));
      }
    } else if (!strcmp(name, "$Periodic")) {
      if (r->have_per) return CUR_ERR(c, "a second $Periodic section");
      r->per_pos = start;
      if (bin) c->pos++, c->binary = 1;
      HX_CALL(read_periodic(c, r, v41));
    } else if (!strcmp(name, "$PartitionedEntities")) {
      return CUR_ERR(c, "partitioned Gmsh files are not supported: save the mesh unpartitioned");
    } else {
      HX_CALL(skip_section(c, name));
    }
  }
  if (!have_nodes || !have_elems) {
    c->pos = c->len;
    return CUR_ERR(c, "file ended without a %s section (truncated file?)",
                   have_nodes ? "$Elements" : "$Nodes");
  }
  return build(c, r, g);
}

int hx_gmesh_read_gmsh(const char *path, hx_gmesh *g) {
  struct stat st;
  HX_CHECK(stat(path, &st) != 0 || !S_ISDIR(st.st_mode), HX_ERR_INPUT, "Gmsh file '%s' is a directory, not a file",
           path);
  FILE *f = fopen(path, "rb");
  HX_CHECK(f != NULL, HX_ERR_INPUT, "cannot open Gmsh file '%s': %s", path, strerror(errno));
  cur c;
  memset(&c, 0, sizeof c);
  c.path = path;
  int err = HX_SUCCESS;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    rewind(f);
    if (n >= 0) {
      err = hx_calloc((size_t)n + 1, 1, &c.buf);
      if (!err && fread(c.buf, 1, (size_t)n, f) != (size_t)n)
        err = HX_ERROR(HX_ERR_IO, "%s: read error", path);
      c.len = (size_t)n;
    } else {
      err = HX_ERROR(HX_ERR_IO, "%s: cannot determine the file size", path);
    }
  } else {
    err = HX_ERROR(HX_ERR_IO, "%s: cannot seek", path);
  }
  fclose(f);
  if (err) {
    free(c.buf);
    return err;
  }
  rd r;
  memset(&r, 0, sizeof r);
  memset(g, 0, sizeof *g);
  err = parse(&c, &r, g);
  rd_free(&r);
  if (err && c.fbin && (c.dsize == 4 || c.dsize == 8)) {
    /* a binary file whose header states the wrong data size fails somewhere
     * in its data with a message about that spot: if the other size reads
     * it, say what is wrong instead */
    char first[1024];
    snprintf(first, sizeof first, "%s", hx_error_message());
    const int said = c.dsize;
    cur c2 = c;
    c2.pos = 0, c2.binary = 0, c2.fbin = 0, c2.force_dsize = 12 - said;
    hx_gmesh_free(g);
    memset(&r, 0, sizeof r);
    memset(g, 0, sizeof *g);
    hx_error_clear();
    const int e2 = parse(&c2, &r, g);
    rd_free(&r);
    hx_error_clear();
    if (!e2)
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s: the $MeshFormat line says data size %d, but the binary data is written with %d-byte "
                     "sizes (Gmsh writes 8, its size_t); correct the header",
                     path, said, 12 - said);
    else
      err = HX_ERROR(HX_ERR_INPUT, "%s", first);
  }
  free(c.buf);
  if (err) {
    hx_gmesh_free(g);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  return HX_SUCCESS;
}
