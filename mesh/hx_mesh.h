/* hexcg mesh: all-hex meshes (box / Kershaw generators, Gmsh reader),
 * validation, partitioning over MPI ranks, distribution, global GLL
 * numbering. See docs/mesh.md.
 *
 * An hx_mesh is the rank-local part of a distributed hex mesh. Creation is
 * collective: rank 0 generates or reads the global mesh, validates its
 * topology, numbers vertices/edges/faces, partitions the elements and sends
 * each rank its elements; afterwards no rank keeps global-size arrays. All
 * pointers returned by accessors are host memory owned by the mesh (valid
 * until hx_mesh_destroy).
 *
 * Conventions
 * - Reference coordinates (r, s, t) in [-1, 1]^3.
 * - Element nodes in TENSOR order: hex8 vertex (a, b, c) in {0,1}^3 at index
 *   a + 2b + 4c (a along r, b along s, c along t); hex27 node (a, b, c) in
 *   {0,1,2}^3 at index a + 3b + 9c (1 = mid-point). Coordinates xyz
 *   interleaved per node.
 * - Faces: 0: r=-1, 1: r=+1, 2: s=-1, 3: s=+1, 4: t=-1, 5: t=+1. A face has
 *   local coordinates (u, v) = the two remaining reference coordinates in
 *   order (face 0/1: (s, t); 2/3: (r, t); 4/5: (r, s)).
 * - Face-neighbour orientation (3 bits): a node (i, j) (i along u, j along v,
 *   0..p) of face f of element e is node (i', j') of face nbr_face of the
 *   neighbour with (ii, jj) = (o & 1) ? (j, i) : (i, j),
 *   i' = (o & 2) ? p - ii : ii, j' = (o & 4) ? p - jj : jj.
 * - Local GLL node (i, j, k) of local element e, order p, n = p + 1: index
 *   e*n^3 + i + n*(j + n*k), i along r, j along s, k along t.
 * - Global GLL ids are 1-based and compact: 1..N with N = V + Ed (p-1) +
 *   F (p-1)^2 + E (p-1)^3 (V vertices, Ed edges, F faces, E elements); they
 *   depend only on the global mesh, not on the number of ranks or the
 *   partitioner.
 */
#ifndef HX_MESH_H
#define HX_MESH_H

#include "hx_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hx_mesh_s *hx_mesh; /* the rank-local part of a distributed hex mesh */

typedef enum { HX_PART_RCB = 0, HX_PART_METIS = 1 } hx_partitioner;

/* Options of the box generator (fill with hx_mesh_box_opts_default first). */
typedef struct {
  int nx, ny, nz;          /* elements per direction (>= 1) */
  double extent[3][2];     /* [x|y|z][min|max] */
  double kershaw_eps;      /* Kershaw parameter in (0, 1]; 1 = no Kershaw map. eps < 1
                              needs nx % 6 == 0, ny and nz even */
  int deform;              /* 1: apply the smooth deformation map (docs/mesh.md) */
  double deform_amplitude; /* amplitude a of the deformation map (default 0.05) */
  int geom_order;          /* 1: hex8 elements (default), 2: hex27 (map at mid-nodes) */
  hx_partitioner partitioner;
  int periodic[3]; /* 1: the axis wraps (faces min and max identified; needs >= 2 elements
                      along it; Kershaw eps < 1: y and z only, docs/mesh.md) */
} hx_mesh_box_opts;

/* Defaults: 4x4x4 elements on the unit cube, eps 1, no deformation, hex8, RCB. */
void hx_mesh_box_opts_default(hx_mesh_box_opts *opts);
/* The Kershaw map of the unit cube (DESIGN.md, docs/mesh.md): x in [0,1]^3 -> X. */
void hx_mesh_kershaw_map(double eps, const double x[3], double X[3]);
/* "rcb" / "metis" (NULL if out of range) and the inverse (HX_ERR_INPUT if unknown). */
const char *hx_partitioner_name(hx_partitioner p);
int hx_partitioner_parse(const char *name, hx_partitioner *p);

/* Collective over comm. Box / Kershaw mesh; opts matter on rank 0 only.
 * Boundary tags xmin xmax ymin ymax zmin zmax, one material "box". */
int hx_mesh_create_box(MPI_Comm comm, const hx_mesh_box_opts *opts, hx_mesh *m);
/* Collective over comm. Gmsh file (MSH 2.2 ASCII, 4.1 ASCII or binary;
 * elements hex8 and hex27), read on rank 0; path matters on rank 0 only.
 * Surface physical groups become boundary tags (boundary faces in none: the
 * tag HX_MESH_UNTAGGED), volume physical groups materials. Errors name the file and line (or byte offset). */
int hx_mesh_create_gmsh(MPI_Comm comm, const char *path, hx_partitioner part, hx_mesh *m);
/* Collective. As hx_mesh_create_gmsh, plus npairs periodic pairs of surface
 * tag names {a, b} (matter on rank 0 only): the nodes of a are matched to
 * those of b by the translation between the two surfaces (docs/mesh.md
 * "Periodic meshes": tolerance 1e-6 of the smallest element edge). The
 * file's $Periodic section is honoured in both functions. */
int hx_mesh_create_gmsh_periodic(MPI_Comm comm, const char *path, hx_partitioner part, int npairs,
                                 const char *const (*pairs)[2], hx_mesh *m);
/* Collective. Exodus II file (netCDF classic CDF-1/2/5 or netCDF-4), read on rank 0:
 * HEX8, HEX20 and HEX27 blocks (any number; each block a material named by
 * its block name or block_<id>), side sets as boundary tags (by name or
 * sideset_<id>), node sets ignored; npairs periodic tag pairs as for Gmsh.
 * Errors name the file, the block or side set and the fix (docs/mesh.md
 * "Exodus II files"). */
int hx_mesh_create_exodus(MPI_Comm comm, const char *path, hx_partitioner part, int npairs,
                          const char *const (*pairs)[2], hx_mesh *m);
/* 1 if path names an Exodus II file by its extension (.e, .exo, .ex2, .g, any case). */
int hx_mesh_path_is_exodus(const char *path);
/* Collective. Writes the mesh as a Gmsh MSH 2.2 ASCII file (rank 0 writes
 * path): hex8, or hex27 with the nodes of hx_mesh_gll_coords(m, 2, ...) when
 * any element's map is not trilinear (*curved = 1; may be NULL); a surface
 * physical group per boundary tag (the pseudo tag HX_MESH_UNTAGGED left out)
 * and a volume physical group per material, elements in global order, so
 * that hx_mesh_create_gmsh reads back the same mesh. Periodic
 * identifications are not written (docs/mesh.md "Converting a mesh"). */
int hx_mesh_write_gmsh(hx_mesh m, const char *path, int *curved);
/* Collective. NekRS / Nek5000 .re2 file (docs/mesh.md "Nek5000 / NekRS
 * .re2"), read on rank 0: hex elements with their exact curved sides ('m',
 * 'C', 's': hx_mesh_gll_coords evaluates the curved map), boundary field
 * `field` (1 = the first section) with each code a boundary tag, 'P' records
 * as periodic face pairs; materials "fluid" (and "solid" beyond the header's
 * fluid element count). Errors name the file, byte offset and record. */
int hx_mesh_create_nek(MPI_Comm comm, const char *path, int field, hx_partitioner part, hx_mesh *m);
/* A mesh given as arrays (the library API's hexcg_mesh, api/hexcg.h, field for
 * field; docs/mesh.md "Meshes given as arrays"). Host memory, read on rank 0
 * only (other ranks may pass zeros and NULLs), copied: the caller keeps it.
 * Indices are 0-based. */
typedef struct {
  int64_t num_vertices;
  const double *xyz; /* 3 num_vertices, interleaved x y z */
  int64_t num_elements;
  /* 8 num_elements vertex indices per hexahedron in the order of VTK's
   * VTK_HEXAHEDRON and Gmsh's hex8: the bottom face counter-clockwise seen
   * from inside (0 1 2 3), then the top face above it (4 5 6 7) */
  const int64_t *hex;
  /* per element its material's index (NULL: all 0) into material_names
   * (num_materials names; 0 and NULL: one material "body") */
  const int32_t *material;
  int num_materials;
  const char *const *material_names;
  /* boundary faces: num_faces quads of 4 vertex indices (any order around
   * the quad) with a tag index into tag_names (num_tags names, none called
   * HX_MESH_UNTAGGED); the boundary faces in no quad form the tag
   * HX_MESH_UNTAGGED, as for a Gmsh file */
  int64_t num_faces;
  const int64_t *face_vertices; /* 4 num_faces */
  const int32_t *face_tag;      /* num_faces */
  int num_tags;
  const char *const *tag_names;
} hx_mesh_arrays;
/* Collective. The mesh of the arrays *a (a matters on rank 0 only), checked,
 * partitioned and distributed as a mesh file is: vertices used by no element
 * are dropped (element global ids are the array's element indices). Bad input
 * (an index out of range, a NULL array with a count > 0, a count < 0, a
 * coordinate not finite, a repeated material or tag name, a quad that is not
 * a boundary face of exactly one element, an inverted element, ...) is
 * HX_ERR_INPUT on every rank with a message naming "mesh arrays", the
 * argument, the index and value, and the fix. */
int hx_mesh_create_arrays(MPI_Comm comm, const hx_mesh_arrays *a, hx_partitioner part, hx_mesh *m);
/* Collective (frees the duplicated communicator). Frees the mesh, sets *m =
 * NULL; accepts NULL. */
int hx_mesh_destroy(hx_mesh *m);

/* Wall-clock seconds of the creation phases (rank 0's for the first three;
 * distribute and validate: max over ranks). */
typedef struct {
  double build;    /* generate or read the global mesh */
  double topology; /* corner Jacobians, edge/face numbering, neighbours, conformity */
  double partition;
  double distribute;
  double validate; /* Jacobians at the order-2 GLL nodes */
} hx_mesh_times;
hx_mesh_times hx_mesh_get_times(hx_mesh m);

/* ---------------------------------------------------------------- accessors (local, host) */
MPI_Comm hx_mesh_comm(hx_mesh m); /* a duplicate of the creation communicator */
int32_t hx_mesh_num_elements(hx_mesh m);
int64_t hx_mesh_num_global_elements(hx_mesh m);
int64_t hx_mesh_num_global_vertices(hx_mesh m);
int64_t hx_mesh_num_global_edges(hx_mesh m);
int64_t hx_mesh_num_global_faces(hx_mesh m);
/* Global element ids (0-based, the generator's/file's element order), ascending. E entries. */
const int64_t *hx_mesh_element_global_ids(hx_mesh m);
int hx_mesh_nodes_per_element(hx_mesh m); /* 8 (hex8) or 27 (hex27) */
/* E * npe * 3: node coordinates, tensor order, xyz interleaved. */
const double *hx_mesh_element_nodes(hx_mesh m);
/* E * 8 global vertex ids (0-based), tensor order (the p=1 coarse space). */
const int64_t *hx_mesh_element_vertex_ids(hx_mesh m);
/* E material index into hx_mesh_material_name. */
const int32_t *hx_mesh_element_material(hx_mesh m);
int hx_mesh_num_materials(hx_mesh m);
const char *hx_mesh_material_name(hx_mesh m, int i);
/* E * 6 boundary tag index per face, -1 = not on a tagged boundary (interior
 * and periodic faces; every boundary face of a box or Gmsh mesh has a tag). */
const int32_t *hx_mesh_face_tags(hx_mesh m);
int hx_mesh_num_tags(hx_mesh m);
const char *hx_mesh_tag_name(hx_mesh m, int i); /* box: xmin xmax ymin ymax zmin zmax */
/* Index of the tag called name, or -1. */
int hx_mesh_find_tag(hx_mesh m, const char *name);
/* 1 if every face of tag i was identified periodically (the tag has no
 * boundary faces left: a boundary condition on it would act nowhere). */
int hx_mesh_tag_is_periodic(hx_mesh m, int i);
/* The pseudo tag of a Gmsh file's boundary faces that are in no surface
 * physical group (docs/mesh.md "Untagged boundary faces"): the last tag,
 * present only if there are such faces; a physical group of this name is
 * refused when there are. */
#define HX_MESH_UNTAGGED "untagged"
/* Number of boundary faces (global) that form the tag HX_MESH_UNTAGGED, 0 if
 * none (always 0 for a box mesh, whose boundary faces are all tagged). Faces
 * made periodic are not boundary faces and never count. *nboundary (may be
 * NULL): all boundary faces of a Gmsh mesh (0 for a box); *where (may be NULL):
 * the first one, "face F of file element E, centre (x, y, z)" ("" if none). */
int64_t hx_mesh_untagged_faces(hx_mesh m, int64_t *nboundary, const char **where);
/* Number of periodic face pairs (global; 0 for a non-periodic mesh). Periodic
 * faces are interior faces: face neighbours and GLL ids cross them. */
int64_t hx_mesh_num_periodic_faces(hx_mesh m);
/* E*6 each: global id of the neighbour across each face, its face index and
 * the orientation (see above); -1 where the face is on the boundary. */
int hx_mesh_face_neighbors(hx_mesh m, const int64_t **nbr_elem, const int8_t **nbr_face,
                           const int8_t **orient);
/* E*6: rank owning the face neighbour, -1 on the boundary. */
const int32_t *hx_mesh_face_neighbor_ranks(hx_mesh m);

/* Element-local indices of the (p+1)^2 GLL nodes on face f (0: r=-1, 1: r=+1,
 * 2: s=-1, 3: s=+1, 4: t=-1, 5: t=+1) into idx[a + (p+1) b], a and b along
 * the face's two reference directions in increasing order; *stride_a,
 * *stride_b (may be NULL): index steps along a and b. */
void hx_mesh_face_nodes(int p, int f, int *idx, int *stride_a, int *stride_b);

/* ---------------------------------------------------------------- GLL numbering, geometry */
/* Collective. Global GLL ids for order p (1..15) into caller-allocated
 * gid[E*(p+1)^3]; ids >= 1, identical for any rank count / partitioner. */
int hx_mesh_gll_ids(hx_mesh m, int p, int64_t *gid);
/* Not collective. priv[E*(p+1)^3], in the order of hx_mesh_gll_ids: 1 where
 * no other rank holds the node's id (hx_gs_create_private), 0 where one may:
 * an element's interior nodes and the inner nodes of a face whose neighbour
 * is on this rank or that has none are 1; edge and vertex nodes are 0 (the
 * elements around an edge or vertex are not all face neighbours). */
int hx_mesh_gll_private(hx_mesh m, int p, uint8_t *priv);
/* Number of unique global GLL nodes at order p (the largest id). */
int64_t hx_mesh_num_global_gll(hx_mesh m, int p);
/* Number of elements (global) with an exact curved map (.re2 curved sides);
 * their geometry is that map, not the 8 corners of hx_mesh_element_nodes. */
int64_t hx_mesh_num_curved_elements(hx_mesh m);
/* Collective. Mapped GLL points (trilinear / triquadratic element map, or the
 * exact curved map of a curved element, at the GLL nodes of order p) into
 * caller-allocated x, y, z of E*(p+1)^3 each. */
int hx_mesh_gll_coords(hx_mesh m, int p, double *x, double *y, double *z);
/* The same interleaved (xyz per node) into xyz[E*(p+1)^3*3]: the element map
 * as an order-p isoparametric one (hx_ax_create with npe = (p+1)^3). */
int hx_mesh_gll_nodes(hx_mesh m, int p, double *xyz);
/* The same for the local elements [e0, e1) only, into arrays of
 * (e1-e0)*(p+1)^3 entries (bit for bit the entries of hx_mesh_gll_coords):
 * for callers that do not keep whole coordinate arrays. Not collective. */
int hx_mesh_gll_coords_range(hx_mesh m, int p, int32_t e0, int32_t e1, double *x, double *y, double *z);
/* Collective. Jacobian determinant of the element map at every GLL node of
 * order p; fails (HX_ERR_INPUT, same message on every rank) if one is <= 0,
 * naming the element and its vertices. Global min/max of det J, and of the
 * element size (length of the 12 element edges, corner to corner), any may be NULL. */
int hx_mesh_check_jacobian(hx_mesh m, int p, double *jmin, double *jmax, double *hmin, double *hmax);

/* ---------------------------------------------------------------- partition report */
typedef struct {
  int nranks;
  int64_t elems_min, elems_max; /* elements per rank */
  double elems_avg, imbalance;  /* imbalance = max / average */
  int nbr_ranks;                /* this rank: ranks sharing at least one GLL node */
  int nbr_ranks_max;            /* max over ranks */
  int64_t shared_nodes;         /* this rank: local unique GLL nodes also on another rank */
  int64_t shared_nodes_min, shared_nodes_max;
  int64_t *elems_per_rank;  /* nranks entries on rank 0, NULL elsewhere */
  int *nbr_count_per_rank;  /* nranks entries on rank 0 */
  int64_t *shared_per_rank; /* nranks entries on rank 0 */
} hx_mesh_report;

/* Collective. Partition report at order p; free with hx_mesh_report_free. */
int hx_mesh_partition_report(hx_mesh m, int p, hx_mesh_report *rep);
void hx_mesh_report_free(hx_mesh_report *rep);
/* Rank 0 prints the report (one line per rank if verbose). */
void hx_mesh_report_print(const hx_mesh_report *rep, FILE *out, int verbose);

/* "METIS 5.1.0" into buf. */
void hx_mesh_metis_version(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
