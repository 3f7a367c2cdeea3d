/* The reader of hx_mesh_create_arrays: a mesh given as arrays (the library
 * API's hexcg_mesh) checked argument by argument and copied into an
 * hx_gmesh on rank 0, which then takes the file readers' path (topology,
 * untagged faces, partition, distribution). Messages begin "mesh arrays: ",
 * name the argument, the index and value, and the fix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

#define SRC "mesh arrays"
/* a count beyond this cannot be allocated anyway (2^40 vertices or elements) */
#define MAX_COUNT ((int64_t)1 << 40)

static int check_count(const char *name, int64_t n, const char *what) {
  HX_CHECK(n >= 0, HX_ERR_INPUT, SRC ": %s = %lld is negative; give the number of %s (0 or more)", name,
           (long long)n, what);
  HX_CHECK(n <= MAX_COUNT, HX_ERR_INPUT, SRC ": %s = %lld is too large (at most %lld %s)", name, (long long)n,
           (long long)MAX_COUNT, what);
  return HX_SUCCESS;
}

static int check_ptr(const char *name, const void *p, const char *count, int64_t n) {
  HX_CHECK(p != NULL || n == 0, HX_ERR_INPUT,
           SRC ": %s is NULL but %s is %lld; give the array or set %s to 0", name, count, (long long)n,
           count);
  return HX_SUCCESS;
}

/* the counts and the pointers they need */
static int check_sizes(const hx_mesh_arrays *a) {
  HX_CALL(check_count("num_vertices", a->num_vertices, "vertices"));
  HX_CALL(check_count("num_elements", a->num_elements, "hexahedra"));
  HX_CALL(check_count("num_faces", a->num_faces, "boundary quads"));
  HX_CALL(check_count("num_materials", a->num_materials, "material names"));
  HX_CALL(check_count("num_tags", a->num_tags, "tag names"));
  HX_CHECK(a->num_elements > 0, HX_ERR_INPUT, SRC ": num_elements is 0; give at least one hexahedron");
  HX_CALL(check_ptr("xyz", a->xyz, "num_vertices", a->num_vertices));
  HX_CALL(check_ptr("hex", a->hex, "num_elements", a->num_elements));
  HX_CALL(check_ptr("material_names", a->material_names, "num_materials", a->num_materials));
  HX_CALL(check_ptr("face_vertices", a->face_vertices, "num_faces", a->num_faces));
  HX_CALL(check_ptr("face_tag", a->face_tag, "num_faces", a->num_faces));
  HX_CALL(check_ptr("tag_names", a->tag_names, "num_tags", a->num_tags));
  return HX_SUCCESS;
}

/* names[0..n): set, not empty, distinct; tags: not the pseudo tag's name */
static int check_names(const char *arr, int n, const char *const *names, int tags) {
  for (int i = 0; i < n; i++) {
    HX_CHECK(names[i] != NULL, HX_ERR_INPUT, SRC ": %s[%d] is NULL; give every name", arr, i);
    HX_CHECK(names[i][0] != '\0', HX_ERR_INPUT, SRC ": %s[%d] is empty; give every name", arr, i);
    HX_CHECK(!tags || strcmp(names[i], HX_MESH_UNTAGGED), HX_ERR_INPUT,
             SRC ": %s[%d] = '%s' is the name of the boundary faces in no quad; rename the tag", arr, i,
             names[i]);
    for (int j = 0; j < i; j++)
      HX_CHECK(strcmp(names[i], names[j]), HX_ERR_INPUT,
               SRC ": %s[%d] = '%s' repeats %s[%d]; names must be distinct (merge the two or rename one)",
               arr, i, names[i], arr, j);
  }
  return HX_SUCCESS;
}

/* coordinates finite, hex and quad vertex indices, material and tag indices in range */
static int check_values(const hx_mesh_arrays *a) {
  const int64_t nv = a->num_vertices;
  for (int64_t i = 0; i < 3 * nv; i++)
    HX_CHECK(isfinite(a->xyz[i]), HX_ERR_INPUT,
             SRC ": xyz[3*%lld+%d] = %g (vertex %lld) is not finite; give finite coordinates",
             (long long)(i / 3), (int)(i % 3), a->xyz[i], (long long)(i / 3));
  for (int64_t i = 0; i < 8 * a->num_elements; i++)
    HX_CHECK(a->hex[i] >= 0 && a->hex[i] < nv, HX_ERR_INPUT,
             SRC ": hex[8*%lld+%d] = %lld is not a vertex index (num_vertices %lld; indices are 0-based)",
             (long long)(i / 8), (int)(i % 8), (long long)a->hex[i], (long long)nv);
  const int nmat = a->num_materials > 0 ? a->num_materials : 1;
  for (int64_t e = 0; a->material && e < a->num_elements; e++)
    HX_CHECK(
        a->material[e] >= 0 &&
                a->material[e]<
                    nmat, HX_ERR_INPUT, SRC ": material[%lld] = %d but num_materials is %d (indices 0..%d%s)",
                    (long long)e, (int)a->material[e], a->num_materials, nmat - 1, a->num_materials> 0
            ? ""
            : ": with no material names every element is in \"body\"");
  for (int64_t i = 0; i < 4 * a->num_faces; i++)
    HX_CHECK(a->face_vertices[i] >= 0 && a->face_vertices[i] < nv, HX_ERR_INPUT,
             SRC
             ": face_vertices[4*%lld+%d] = %lld is not a vertex index (num_vertices %lld; indices are "
             "0-based)",
             (long long)(i / 4), (int)(i % 4), (long long)a->face_vertices[i], (long long)nv);
  for (int64_t q = 0; q < a->num_faces; q++)
    HX_CHECK(a->face_tag[q] >= 0 && a->face_tag[q] < a->num_tags, HX_ERR_INPUT,
             SRC ": face_tag[%lld] = %d but num_tags is %d; give a tag index into tag_names", (long long)q,
             (int)a->face_tag[q], a->num_tags);
  HX_CALL(check_names("material_names", a->num_materials, a->material_names, 0));
  HX_CALL(check_names("tag_names", a->num_tags, a->tag_names, 1));
  return HX_SUCCESS;
}

/* vertices: those of the elements, numbered in the arrays' order (g->vtag:
 * the array index of each); *newid[v]: the new id of array vertex v, -1 if unused */
static int number_vertices(const hx_mesh_arrays *a, hx_gmesh *g, int64_t **newid) {
  int64_t *id;
  HX_CALL(HX_ALLOC(&id, a->num_vertices + 1));
  for (int64_t v = 0; v < a->num_vertices; v++) id[v] = -1;
  for (int64_t i = 0; i < 8 * a->num_elements; i++) id[a->hex[i]] = 0;
  int64_t nv = 0;
  for (int64_t v = 0; v < a->num_vertices; v++)
    if (id[v] == 0) id[v] = nv++;
  int err = HX_ALLOC(&g->vtag, nv);
  for (int64_t v = 0; !err && v < a->num_vertices; v++)
    if (id[v] >= 0) g->vtag[id[v]] = v;
  if (err) {
    free(id);
    HX_CALL(err);
  }
  g->nv = nv;
  *newid = id;
  return HX_SUCCESS;
}

/* the elements: corners in tensor order (hx_gmsh_node_maps: VTK's order is Gmsh's) */
static int fill_elements(const hx_mesh_arrays *a, const int64_t *newid, hx_gmesh *g) {
  const int64_t ne = a->num_elements;
  int map8[8], map27[27];
  hx_gmsh_node_maps(map8, map27);
  HX_CALL(HX_ALLOC(&g->nodes, ne * 8 * 3));
  HX_CALL(HX_ALLOC(&g->vid, ne * 8));
  HX_CALL(HX_ALLOC(&g->mat, ne));
  HX_CALL(HX_ALLOC(&g->ftag, ne * 6));
  HX_CALL(HX_ALLOC(&g->etag, ne));
  for (int64_t e = 0; e < ne; e++) {
    g->etag[e] = e;
    for (int t = 0; t < 8; t++) {
      const int64_t v = a->hex[e * 8 + map8[t]];
      g->vid[e * 8 + t] = newid[v];
      memcpy(&g->nodes[(e * 8 + t) * 3], &a->xyz[3 * v], 3 * sizeof(double));
    }
    g->mat[e] = a->material ? a->material[e] : 0;
    for (int f = 0; f < 6; f++) g->ftag[e * 6 + f] = -1;
  }
  return HX_SUCCESS;
}

static int copy_names(int n, const char *const *src, char ***dst) {
  HX_CALL(HX_ALLOC(dst, n + 1));
  for (int i = 0; i < n; i++) HX_CALL(hx_strdup(src[i], &(*dst)[i]));
  return HX_SUCCESS;
}

/* a face's 4 vertex ids, sorted, and where it comes from (element face e*6+f, or a quad) */
typedef struct {
  int64_t v[4];
  int64_t ref;
} face_key;

static int cmp_face_key(const void *pa, const void *pb) {
  const face_key *a = pa, *b = pb;
  for (int k = 0; k < 4; k++)
    if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
  return 0;
}

static void sort4(int64_t *v) {
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      const int64_t t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
}

/* quad q against the sorted element faces r[0..n): the boundary face of one
 * element; claim[i] (the quad that tagged face i, -1) catches a face given twice
 * with different tags */
static int check_quad(const hx_mesh_arrays *a, int64_t q, const face_key *key, const face_key *r, int64_t n,
                      int64_t *claim) {
  const int64_t *fv = &a->face_vertices[4 * q];
  int64_t i = hx_lower_bound(r, n, sizeof *r, key, cmp_face_key), j = i;
  while (j < n && !cmp_face_key(&r[j], key)) j++;
  HX_CHECK(j > i, HX_ERR_INPUT,
           SRC
           ": face_vertices[4*%lld..4*%lld+3] = (%lld, %lld, %lld, %lld) is not a face of any element; give "
           "the 4 corner vertices of a boundary face",
           (long long)q, (long long)q, (long long)fv[0], (long long)fv[1], (long long)fv[2],
           (long long)fv[3]);
  HX_CHECK(
      j == i + 1, HX_ERR_INPUT,
      SRC
      ": face_vertices[4*%lld..4*%lld+3] = (%lld, %lld, %lld, %lld) is a face of elements %lld and %lld, "
      "not a boundary face; only boundary faces take a tag (remove the quad)",
      (long long)q, (long long)q, (long long)fv[0], (long long)fv[1], (long long)fv[2], (long long)fv[3],
      (long long)(r[i].ref / 6), (long long)(r[i + 1].ref / 6));
  const int64_t p = claim[i];
  HX_CHECK(p < 0 || a->face_tag[p] == a->face_tag[q], HX_ERR_INPUT,
           SRC
           ": face_vertices quads %lld and %lld are the same face (of element %lld) with tags '%s' and '%s'; "
           "give each boundary face one tag",
           (long long)p, (long long)q, (long long)(r[i].ref / 6), a->tag_names[a->face_tag[p]],
           a->tag_names[a->face_tag[q]]);
  claim[i] = q;
  return HX_SUCCESS;
}

/* the quads: each the boundary face of exactly one element, one tag per face */
static int fill_quads(const hx_mesh_arrays *a, const int64_t *newid, hx_gmesh *g) {
  const int64_t nq = a->num_faces, n = g->ne * 6;
  if (nq == 0) return HX_SUCCESS;
  HX_CALL(HX_ALLOC(&g->bq_v, nq * 4));
  HX_CALL(HX_ALLOC(&g->bq_tag, nq));
  face_key *r = NULL;
  int64_t *claim = NULL;
  int err = HX_ALLOC(&r, n);
  if (!err) err = HX_ALLOC(&claim, n);
  for (int64_t i = 0; !err && i < n; i++) {
    for (int k = 0; k < 4; k++) r[i].v[k] = g->vid[(i / 6) * 8 + hx_hex_face_vert[i % 6][k]];
    sort4(r[i].v);
    r[i].ref = i, claim[i] = -1;
  }
  if (!err) qsort(r, (size_t)n, sizeof *r, cmp_face_key);
  for (int64_t q = 0; !err && q < nq; q++) {
    face_key key = {{0, 0, 0, 0}, q};
    for (int k = 0; k < 4; k++) {
      const int64_t v = newid[a->face_vertices[4 * q + k]];
      key.v[k] = v; /* -1: on no element, so on no face */
      g->bq_v[4 * q + k] = v;
    }
    sort4(key.v);
    err = check_quad(a, q, &key, r, n, claim);
    g->bq_tag[q] = a->face_tag[q];
  }
  g->nbq = nq;
  free(r);
  free(claim);
  return err;
}

int hx_gmesh_read_arrays(const hx_mesh_arrays *a, hx_gmesh *g) {
  memset(g, 0, sizeof *g);
  snprintf(g->src, sizeof g->src, "%s", SRC);
  HX_CHECK(a != NULL, HX_ERR_ARG, SRC ": the arrays are NULL on rank 0; give the mesh there");
  HX_CALL(check_sizes(a));
  HX_CALL(check_values(a));
  int64_t *newid = NULL;
  HX_CALL(number_vertices(a, g, &newid));
  g->ne = a->num_elements, g->npe = 8;
  int err = fill_elements(a, newid, g);
  if (!err) {
    static const char *const body[1] = {"body"};
    g->nmat = a->num_materials > 0 ? a->num_materials : 1;
    err = copy_names(g->nmat, a->num_materials > 0 ? a->material_names : body, &g->mat_names);
  }
  if (!err) {
    g->ntags = a->num_tags;
    err = copy_names(g->ntags, a->tag_names, &g->tag_names);
  }
  if (!err) err = fill_quads(a, newid, g);
  free(newid);
  return err;
}
