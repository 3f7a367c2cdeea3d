/* Private to mesh/: the global mesh built on rank 0 and the local mesh
 * struct. */
#ifndef HX_MESH_IMPL_H
#define HX_MESH_IMPL_H

#include "hx_mesh.h"

#define HX_MESH_MAX_P 15

/* The whole mesh, on rank 0 only, between generation/reading and
 * distribution. */
typedef struct {
  int64_t ne;    /* elements */
  int npe;       /* 8 or 27 */
  double *nodes; /* ne*npe*3, tensor order */
  int64_t nv;    /* vertices (element corners), ids 0..nv-1 */
  int64_t *vid;  /* ne*8 */
  int32_t *mat;  /* ne */
  int32_t *ftag; /* ne*6, -1 */
  int nmat, ntags;
  char **mat_names, **tag_names;
  /* tagged quads from a file, resolved onto element faces by the topology */
  int64_t nbq;
  int64_t *bq_v;   /* nbq*4 vertex ids */
  int32_t *bq_tag; /* nbq */
  /* topology (hx_gmesh_topology) */
  int64_t ned, nf;
  int64_t *eid; /* ne*12 */
  int64_t *fid; /* ne*6 */
  int64_t *nbr; /* ne*6 */
  int8_t *nbrf, *nbro;
  /* optional file numbering for messages (NULL: print 0-based ids) */
  int64_t *etag; /* ne: file element tags */
  int64_t *vtag; /* nv: file node tags of the vertices */
  int64_t *vloc; /* nv or NULL: line (ASCII file) or byte offset (vloc_bin) of each vertex's node
                    record, for check_coincident (stale after hx_gmesh_periodic renumbers) */
  int vloc_bin;
  /* periodic vertex correspondences (slave, master), from the generator, the
   * file's $Periodic section or the case's tag pairs; resolved by
   * hx_gmesh_periodic after the topology */
  int64_t nper;
  int64_t *per;       /* nper*2 vertex ids */
  int64_t nper_faces; /* face pairs identified */
  /* $Periodic links without node pairs, resolved to surface tag pairs
   * (2*nfile_pairs names: the master's tag, then the slave's) that
   * build_rank0 matches by translation like the case's pairs; a link that
   * cannot be resolved leaves its reason (file:line: ...) in per_unresolved */
  int nfile_pairs;
  char **file_pairs;
  char per_unresolved[1024];
  int32_t *tag_per;   /* ntags or NULL: 1 = every face of the tag became periodic */
  /* boundary faces of a Gmsh file in no surface physical group (hx_gmesh_untagged,
   * after the periodicity): the pseudo tag HX_MESH_UNTAGGED */
  int64_t nuntagged, nboundary;
  char untagged_where[256]; /* the first one, for the note */
  /* exact curved geometry (Nek .re2 curved sides, mesh_curve.c): NULL if no
   * element is curved; else per element HX_CURVE_NSLOT types (0 = straight)
   * and HX_CURVE_NPAR parameters (see HX_CURVE_NSLOT) */
  int8_t *ctype;
  double *cpar;
  int nek; /* read from a .re2 file (hx_gmesh_nek_interior) */
  /* partition */
  int32_t *part; /* ne */
  char src[512]; /* "box 8x8x8" or the file name, for messages */
} hx_gmesh;

struct hx_mesh_s {
  MPI_Comm comm;
  int rank, size;
  int32_t ne;
  int npe;
  int64_t ne_global, nv_global, ned_global, nf_global;
  int64_t *gid;  /* ne */
  double *nodes; /* ne*npe*3 */
  int64_t *vid;  /* ne*8 */
  int64_t *eid;  /* ne*12 */
  int64_t *fid;  /* ne*6 */
  int32_t *mat;  /* ne */
  int32_t *ftag; /* ne*6 */
  int64_t *nbr;  /* ne*6 */
  int8_t *nbrf, *nbro;
  int32_t *nbr_rank; /* ne*6 */
  int nmat, ntags;
  char **mat_names, **tag_names;
  int32_t *tag_per;   /* ntags: 1 = the tag's faces are all periodic (no longer boundary) */
  int64_t nper_faces; /* periodic face pairs (global) */
  int8_t *ctype;      /* ne*HX_CURVE_NSLOT or NULL (no curved element in the mesh) */
  double *cpar;       /* ne*HX_CURVE_NPAR or NULL */
  int64_t ncurved;    /* curved elements (global) */
  int64_t nuntagged, nboundary; /* hx_mesh_untagged_faces */
  char untagged_where[256];
  hx_mesh_times times;
};

/* Curved elements (mesh_curve.c): slots 0..11 the edges in the order of
 * hx_mesh_gll_ids (along r: b + 2c; along s: 4 + a + 2c; along t: 8 + a + 2b),
 * type 'm' (parameters 3k..3k+2: the midpoint) or 'C' (the circle's centre x,
 * y and radius: an arc in the x-y plane between the edge's ends, linear in
 * angle, z linear); slots 12..17 the faces (hx_mesh.h's numbering), type 's'
 * (parameters 36 + 4f..: centre x, y, z, radius). */
#define HX_CURVE_NSLOT 18
#define HX_CURVE_NPAR 60
/* 1 if the element's slots hold a curve */
int hx_curve_any(const int8_t *ct);
/* The element's exact map (Gordon-Hall blend of its curved edges and faces
 * over the trilinear map of its 8 tensor-order corners V) at the n^3 tensor
 * points t: xyz[3*node + c] */
void hx_curve_eval(const double *V, const int8_t *ct, const double *cp, int n, const double *t, double *xyz);
/* det J at the n^3 GLL points of the degree n-1 interpolant of xyz (D: the
 * GLL differentiation matrix, n*n) */
void hx_curve_detj(int n, const double *D, const double *xyz, double *det);
int hx_gmesh_read_nek(const char *path, int field, hx_gmesh *g);
/* after the topology, before the periodic merge: a curved edge or sphere
 * face given by one element only is given to every element that shares it
 * (different curves on one edge: HX_ERR_INPUT naming both elements) */
int hx_gmesh_curve_sync(hx_gmesh *g);
/* .re2 (after the topology): boundary codes on faces between two elements
 * (a fluid field's codes at the solid) are dropped with a note */
void hx_gmesh_nek_interior(hx_gmesh *g);

/* tables (mesh_topo.c) */
extern const int hx_hex_edge_vert[12][2];
extern const int hx_hex_face_vert[6][4]; /* face-local corner (a,b) at a + 2b */

void hx_gmesh_free(hx_gmesh *g);
int hx_gmesh_box(const hx_mesh_box_opts *o, hx_gmesh *g);
/* Gmsh's node order against the tensor order (mesh_gmsh.c): map8[t] and
 * map27[t] are the Gmsh indices of tensor node t of a hex8 / hex27 (the
 * reader and the --convert writer share them). */
void hx_gmsh_node_maps(int map8[8], int map27[27]);
/* A note about a mesh file on stderr (rank 0, not with --quiet): stdout
 * stays for results (the readers' notes: ignored sections, node sets, ...). */
void hx_mesh_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int hx_gmesh_read_gmsh(const char *path, hx_gmesh *g);
int hx_gmesh_read_exodus(const char *path, hx_gmesh *g); /* mesh_exodus.c */
/* hx_mesh_arrays -> g, every argument checked (mesh_arrays.c; src "mesh arrays") */
int hx_gmesh_read_arrays(const hx_mesh_arrays *a, hx_gmesh *g);
/* corner Jacobians, edges, faces, neighbours, conformity, boundary quads */
int hx_gmesh_topology(hx_gmesh *g);
/* orientation of face f1 of e1 against face f2 of e2 (hx_mesh.h), -1 if
 * not the same quadrilateral, -2 if both elements lie on the same side */
int hx_gmesh_face_orient(const hx_gmesh *g, int64_t e1, int f1, int64_t e2, int f2);
/* merge the faces paired by g->per (mesh_periodic.c); no-op without pairs */
int hx_gmesh_periodic(hx_gmesh *g);
/* after hx_gmesh_periodic: the boundary faces of a Gmsh file in no surface
 * physical group become the last tag, HX_MESH_UNTAGGED (none: no tag);
 * refuses a physical group of that name when there are such faces */
int hx_gmesh_untagged(hx_gmesh *g);
/* box: the periodic correspondences of opts->periodic (mesh_box.c) */
int hx_gmesh_box_periodic(const hx_mesh_box_opts *o, hx_gmesh *g);
/* gmsh: the correspondences of the case's tag pairs, matched by translation */
int hx_gmesh_tag_pairs(hx_gmesh *g, int npairs, const char *const (*pairs)[2]);
int hx_gmesh_partition(hx_gmesh *g, int nparts, hx_partitioner part);
/* collective: rank 0 sends g's elements (g ignored elsewhere) */
int hx_mesh_distribute(MPI_Comm comm, hx_gmesh *g, hx_mesh *m);
/* collective: agree on an error. code is this rank's status; if any rank
 * failed, the lowest failing rank's message is set on every rank and its code
 * returned everywhere. */
int hx_mesh_agree(MPI_Comm comm, int code);
/* "element 12 (file tag 40) with vertices 3 (x,y,z) ..." into buf */
void hx_gmesh_describe(const hx_gmesh *g, int64_t e, char *buf, size_t len);
void hx_gmesh_describe_face(const hx_gmesh *g, int64_t e, int f, char *buf, size_t len);
/* names */
int hx_strdup(const char *s, char **out);
void hx_free_names(int n, char ***names);

/* geometry (mesh_geom.c): 1D basis of the element map (q = 2 or 3 equispaced
 * nodes) at n points t: B[i*q + a], D[i*q + a] */
void hx_map_basis(int q, int n, const double *t, double *B, double *D);
/* Element map at the n^3 tensor points; xyz (n^3*3) and/or detJ (n^3), may be
 * NULL. work: at least hx_map_work_size(n) doubles. */
size_t hx_map_work_size(int n);
void hx_map_eval(int q, const double *X, int n, const double *B, const double *D, double *xyz, double *detJ,
                 double *work);

/* The first of base[0..n) (n records of size bytes, sorted by cmp) that is
 * not below key; n where all are (std::lower_bound). */
static inline int64_t hx_lower_bound(const void *base, int64_t n, size_t size, const void *key,
                                     int (*cmp)(const void *, const void *)) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (cmp((const char *)base + (size_t)mid * size, key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The qsort and bsearch order of records that begin with an int64_t key
 * (an int64_t array, or structs whose first member is the key): by the key. */
static inline int hx_mesh_cmp_key(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

#endif
