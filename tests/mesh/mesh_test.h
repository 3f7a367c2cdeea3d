/* Helpers shared by the mesh tests (header-only). */
#ifndef HX_MESH_TEST_H
#define HX_MESH_TEST_H

#include "hx_mesh.h"
#include "hx_test.h"

/* one GLL node: global id and coordinates */
typedef struct {
  int64_t id;
  double x[3];
} mt_node;

static inline int mt_cmp_node(const void *pa, const void *pb) {
  const mt_node *a = pa, *b = pb;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  for (int d = 0; d < 3; d++)
    if (a->x[d] != b->x[d]) return a->x[d] < b->x[d] ? -1 : 1;
  return 0;
}

/* Collective: the folder dir emptied (made where missing) by rank 0 before
 * any rank goes on. */
static inline void mt_fresh_dir(MPI_Comm comm, const char *dir) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    if (system(cmd)) HX_ASSERT(0, "cannot create %s", dir);
  }
  MPI_Barrier(comm);
}

/* The default box options with nx x ny x nz elements. */
static inline hx_mesh_box_opts mt_box(int nx, int ny, int nz) {
  hx_mesh_box_opts o;
  hx_mesh_box_opts_default(&o);
  o.nx = nx, o.ny = ny, o.nz = nz;
  return o;
}

/* The corners of a hex8 in Gmsh's order as offsets (i, j, k) on a grid. */
static const int mt_gmsh_hex8_corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                             {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

/* Volume index of node (i, j) of face f at order p (see hx_mesh.h). */
static inline int mt_face_node(int f, int p, int i, int j) {
  int n = p + 1, a, b, c;
  switch (f) {
    case 0: a = 0, b = i, c = j; break;
    case 1: a = p, b = i, c = j; break;
    case 2: a = i, b = 0, c = j; break;
    case 3: a = i, b = p, c = j; break;
    case 4: a = i, b = j, c = 0; break;
    default: a = i, b = j, c = p; break;
  }
  return a + n * (b + n * c);
}

/* Gather every (id, x, y, z) of every rank on rank 0, sorted by id then
 * coordinates; *all and *n valid on rank 0 only (NULL / 0 elsewhere). */
static inline int mt_gather(hx_mesh m, int p, mt_node **all, int64_t *n) {
  MPI_Comm comm = hx_mesh_comm(m);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t n3 = (int64_t)(p + 1) * (p + 1) * (p + 1), nl = hx_mesh_num_elements(m) * n3;
  int64_t *gid = malloc(sizeof(int64_t) * (nl + 1));
  double *x = malloc(sizeof(double) * (nl + 1)), *y = malloc(sizeof(double) * (nl + 1)),
         *z = malloc(sizeof(double) * (nl + 1));
  HX_TCALL(hx_mesh_gll_ids(m, p, gid));
  HX_TCALL(hx_mesh_gll_coords(m, p, x, y, z));
  mt_node *loc = malloc(sizeof(mt_node) * (nl + 1));
  for (int64_t i = 0; i < nl; i++)
    loc[i].id = gid[i], loc[i].x[0] = x[i], loc[i].x[1] = y[i], loc[i].x[2] = z[i];
  free(gid), free(x), free(y), free(z);
  int cnt = (int)(nl * (int64_t)sizeof(mt_node)), *cnts = NULL, *disp = NULL;
  if (rank == 0) cnts = calloc(size, sizeof(int)), disp = calloc(size, sizeof(int));
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, comm);
  char *buf = NULL;
  int64_t tot = 0;
  if (rank == 0) {
    for (int r = 0; r < size; r++) disp[r] = (int)tot, tot += cnts[r];
    buf = malloc(tot + 1);
  }
  MPI_Gatherv(loc, cnt, MPI_BYTE, buf, cnts, disp, MPI_BYTE, 0, comm);
  free(loc), free(cnts), free(disp);
  *all = (mt_node *)buf;
  *n = rank == 0 ? tot / (int64_t)sizeof(mt_node) : 0;
  if (rank == 0) qsort(*all, (size_t)*n, sizeof(mt_node), mt_cmp_node);
  return 0;
}

/* From sorted nodes, keep one per id (the smallest coordinates) after
 * checking that all copies of an id agree to tol and that ids are exactly
 * 1..N. Returns N (or -1 after failed assertions). */
static inline int64_t mt_unique(mt_node *a, int64_t n, double tol) {
  int64_t u = 0;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    if (u > 0 && a[u - 1].id == a[i].id) {
      for (int d = 0; d < 3; d++)
        if (fabs(a[u - 1].x[d] - a[i].x[d]) > tol && bad++ < 5)
          HX_ASSERT(0, "id %lld has coordinates %.17g and %.17g (component %d)", (long long)a[i].id,
                    a[u - 1].x[d], a[i].x[d], d);
      continue;
    }
    if (a[i].id != u + 1 && bad++ < 5)
      HX_ASSERT(0, "ids are not 1..N: expected %lld, found %lld", (long long)(u + 1), (long long)a[i].id);
    a[u++] = a[i];
  }
  return bad ? -1 : u;
}

static inline int mt_all_ok(MPI_Comm comm) {
  int fail = hx_test_result(), any = 0;
  MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, comm);
  return any;
}

#endif
