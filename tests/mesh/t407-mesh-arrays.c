/* hx_mesh_create_arrays (issue 50) on 1..n ranks: a 3x2x2 box given as
 * arrays with shuffled vertices and elements, each element's corners turned
 * by one of the 24 rotations of the cube and the quads' corners in any order
 * around them, six tags and two materials, is the box of hx_mesh_create_box:
 * the same element, vertex and GLL counts at p = 3, consistent GLL ids, the
 * same set of GLL node coordinates per tag and per material (left column /
 * the rest), the same Jacobians. A randomly perturbed vertex set with no
 * quads and no materials passes the Jacobian check, its boundary faces all
 * "untagged", its material "body". Every bad input is HX_ERR_INPUT on every
 * rank with a message naming "mesh arrays", the argument, index and value. */
#include <math.h>

#include "mesh_test.h"

enum { NX = 3, NY = 2, NZ = 2, P = 3 };
#define NV ((NX + 1) * (NY + 1) * (NZ + 1))
#define NE (NX * NY * NZ)
#define NQ (2 * (NX * NY + NX * NZ + NY * NZ))

typedef struct {
  double xyz[3 * NV];
  int64_t hex[8 * NE];
  int32_t mat[NE];
  int64_t fv[4 * NQ];
  int32_t ftag[NQ];
  int64_t vperm[NV], eperm[NE]; /* lattice vertex / element -> array index */
  hx_mesh_arrays a;
} box_arrays;

/* the box's tag names in the arrays' own order, the two materials */
static const char *const tag_names[6] = {"zmax", "xmin", "ymax", "zmin", "xmax", "ymin"};
static const char *const box_tags[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
static const char *const mat_names[2] = {"left", "right"};

static int lat(int i, int j, int k) { return i + (NX + 1) * (j + (NY + 1) * k); }

static void shuffle(int64_t n, uint64_t seed, int64_t *perm) {
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    const int64_t j = (int64_t)(hx_test_mix64(seed + (uint64_t)i) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
}

/* rotation r (0..23) of the unit cube: corner offset o -> g with g[d] = o[pm[d]]
 * or 1 - o[pm[d]] (fl[d]), determinant +1 */
static void rotation(int r, int pm[3], int fl[3]) {
  static const int perms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  int k = 0;
  for (int p = 0; p < 6; p++)
    for (int f = 0; f < 8; f++) {
      const int sign = (p < 3 ? 1 : -1) * ((f & 1) ? -1 : 1) * ((f & 2) ? -1 : 1) * ((f & 4) ? -1 : 1);
      if (sign < 0 || k++ != r) continue;
      for (int d = 0; d < 3; d++) pm[d] = perms[p][d], fl[d] = (f >> d) & 1;
      return;
    }
}

static void point(box_arrays *b) {
  b->a.xyz = b->xyz, b->a.hex = b->hex, b->a.material = b->mat, b->a.face_vertices = b->fv;
  b->a.face_tag = b->ftag;
}

/* the boundary quads of the lattice, corners starting anywhere, either way round */
static void box_quads(box_arrays *b) {
  const int n[3] = {NX, NY, NZ};
  int q = 0;
  for (int s = 0; s < 6; s++) {
    const int d = s / 2, d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2;
    int t = 0;
    while (strcmp(tag_names[t], box_tags[s])) t++;
    for (int bb = 0; bb < n[d2]; bb++)
      for (int aa = 0; aa < n[d1]; aa++, q++) {
        static const int da[4] = {0, 1, 1, 0}, db[4] = {0, 0, 1, 1};
        for (int c = 0; c < 4; c++) {
          const int cc = (q % 2) ? (q + 4 - c) % 4 : (q + c) % 4;
          int x[3];
          x[d] = (s % 2) ? n[d] : 0, x[d1] = aa + da[cc], x[d2] = bb + db[cc];
          b->fv[4 * q + c] = b->vperm[lat(x[0], x[1], x[2])];
        }
        b->ftag[q] = t;
      }
  }
}

/* The box [0,1]^3 of NX x NY x NZ elements as arrays; deform: vertices moved
 * by up to 0.1 of the smallest element edge (1/3) */
static void box_make(box_arrays *b, int deform) {
  memset(b, 0, sizeof *b);
  shuffle(NV, 1000, b->vperm);
  shuffle(NE, 2000, b->eperm);
  for (int k = 0; k <= NZ; k++)
    for (int j = 0; j <= NY; j++)
      for (int i = 0; i <= NX; i++) {
        const int v = lat(i, j, k);
        const double x[3] = {(double)i / NX, (double)j / NY, (double)k / NZ};
        for (int d = 0; d < 3; d++)
          b->xyz[3 * b->vperm[v] + d] = x[d] + (deform ? 0.1 / 3 * hx_test_key_rand(3u * v + d) : 0.0);
      }
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        const int el = i + NX * (j + NY * k);
        const int64_t e = b->eperm[el];
        int pm[3], fl[3];
        rotation((int)(hx_test_mix64(77u + el) % 24), pm, fl);
        for (int c = 0; c < 8; c++) {
          const int *o = mt_gmsh_hex8_corner[c];
          int g[3];
          for (int d = 0; d < 3; d++) g[d] = fl[d] ? 1 - o[pm[d]] : o[pm[d]];
          b->hex[8 * e + c] = b->vperm[lat(i + g[0], j + g[1], k + g[2])];
        }
        b->mat[e] = i == 0 ? 0 : 1;
      }
  box_quads(b);
  b->a.num_vertices = NV, b->a.num_elements = NE, b->a.num_faces = NQ;
  b->a.num_materials = 2, b->a.material_names = mat_names;
  b->a.num_tags = 6, b->a.tag_names = tag_names;
  point(b);
}

/* ---------------------------------------------------------------- node sets */
typedef struct {
  int64_t q[3];
} qpt;

static int cmp_qpt_lex(const void *pa, const void *pb) {
  const qpt *a = pa, *b = pb;
  for (int d = 0; d < 3; d++)
    if (a->q[d] != b->q[d]) return a->q[d] < b->q[d] ? -1 : 1;
  return 0;
}

enum { SEL_MAT, SEL_LEFT, SEL_TAG };

/* is local element e selected (SEL_MAT: in material which; SEL_LEFT: its
 * centre in the left column x < 1/3, which = 0, or not, which = 1)? */
static int elem_selected(hx_mesh m, int32_t e, int mode, int which) {
  if (mode == SEL_MAT) return hx_mesh_element_material(m)[e] == which;
  double cx = 0;
  for (int c = 0; c < 8; c++) cx += hx_mesh_element_nodes(m)[(e * 8 + c) * 3] / 8;
  return (cx < 1.0 / NX) == (which == 0);
}

/* The GLL nodes at order P (coordinates rounded to 1e-9) of the selected
 * elements or tag faces of every rank: sorted and distinct on rank 0. */
static int node_set(hx_mesh m, int mode, int which, qpt **out, int64_t *nout) {
  enum { N = P + 1, N3 = N * N * N };
  const int32_t ne = hx_mesh_num_elements(m);
  double *x = malloc(sizeof(double) * (ne * N3 + 1)), *y = malloc(sizeof(double) * (ne * N3 + 1)),
         *z = malloc(sizeof(double) * (ne * N3 + 1));
  qpt *loc = malloc(sizeof(qpt) * (ne * N3 * 6 + 1));
  HX_TCALL(hx_mesh_gll_coords(m, P, x, y, z));
  int64_t nl = 0;
  int idx[N3];
  for (int32_t e = 0; e < ne; e++)
    for (int f = 0; f < 6; f++) {
      int cnt = N * N;
      if (mode == SEL_TAG) {
        if (hx_mesh_face_tags(m)[e * 6 + f] != which) continue;
        hx_mesh_face_nodes(P, f, idx, NULL, NULL);
      } else {
        if (f > 0 || !elem_selected(m, e, mode, which)) continue;
        for (int i = 0; i < N3; i++) idx[i] = i;
        cnt = N3;
      }
      for (int i = 0; i < cnt; i++) {
        const int64_t k = (int64_t)e * N3 + idx[i];
        loc[nl].q[0] = llround(x[k] * 1e9), loc[nl].q[1] = llround(y[k] * 1e9),
        loc[nl].q[2] = llround(z[k] * 1e9);
        nl++;
      }
    }
  free(x), free(y), free(z);
  MPI_Comm comm = hx_mesh_comm(m);
  int rank, size, cnt = (int)(nl * (int64_t)sizeof(qpt)), *cnts = NULL, *disp = NULL;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) cnts = calloc(size, sizeof(int)), disp = calloc(size, sizeof(int));
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, comm);
  int64_t tot = 0;
  for (int r = 0; rank == 0 && r < size; r++) disp[r] = (int)tot, tot += cnts[r];
  qpt *all = malloc((size_t)tot + 1);
  MPI_Gatherv(loc, cnt, MPI_BYTE, all, cnts, disp, MPI_BYTE, 0, comm);
  free(loc), free(cnts), free(disp);
  int64_t n = tot / (int64_t)sizeof(qpt), u = 0;
  qsort(all, (size_t)n, sizeof(qpt), cmp_qpt_lex);
  for (int64_t i = 0; i < n; i++)
    if (u == 0 || cmp_qpt_lex(&all[u - 1], &all[i])) all[u++] = all[i];
  *out = all, *nout = u;
  return 0;
}

/* rank 0: the two sets are equal and not empty */
static void same_set(hx_mesh a, int amode, int awhich, hx_mesh b, int bmode, int bwhich, const char *what) {
  qpt *sa = NULL, *sb = NULL;
  int64_t na = 0, nb = 0;
  node_set(a, amode, awhich, &sa, &na);
  node_set(b, bmode, bwhich, &sb, &nb);
  int rank;
  MPI_Comm_rank(hx_mesh_comm(a), &rank);
  if (rank == 0) {
    HX_ASSERT(na > 0 && na == nb, "%s: %lld GLL nodes from the arrays, %lld from the box", what,
              (long long)na, (long long)nb);
    HX_ASSERT(na != nb || !memcmp(sa, sb, sizeof(qpt) * (size_t)na), "%s: the GLL node coordinates differ",
              what);
  }
  free(sa), free(sb);
}

/* ---------------------------------------------------------------- the box as arrays */
static int compare_box(MPI_Comm comm, box_arrays *b) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  hx_mesh_box_opts o = mt_box(NX, NY, NZ);
  hx_mesh box = NULL, arr = NULL;
  HX_TCALL(hx_mesh_create_box(comm, &o, &box));
  HX_TCALL(hx_mesh_create_arrays(comm, rank == 0 ? &b->a : NULL, HX_PART_RCB, &arr)); /* NULL off rank 0 */
  HX_ASSERT(hx_mesh_num_global_elements(arr) == NE, "%lld elements",
            (long long)hx_mesh_num_global_elements(arr));
  HX_ASSERT(hx_mesh_num_global_vertices(arr) == NV, "%lld vertices",
            (long long)hx_mesh_num_global_vertices(arr));
  HX_ASSERT(hx_mesh_num_global_gll(arr, P) == hx_mesh_num_global_gll(box, P) &&
                hx_mesh_num_global_gll(arr, P) == (NX * P + 1) * (NY * P + 1) * (NZ * P + 1),
            "GLL nodes at p = %d: arrays %lld, box %lld", P, (long long)hx_mesh_num_global_gll(arr, P),
            (long long)hx_mesh_num_global_gll(box, P));
  mt_node *all = NULL;
  int64_t n = 0;
  HX_TCALL(mt_gather(arr, P, &all, &n)); /* every copy of a GLL id at the same point, ids 1..N */
  if (rank == 0) HX_ASSERT(mt_unique(all, n, 1e-12) == hx_mesh_num_global_gll(box, P), "GLL ids not 1..N");
  free(all);
  HX_ASSERT(hx_mesh_num_tags(arr) == 6 && hx_mesh_untagged_faces(arr, NULL, NULL) == 0,
            "%d tags, %lld untagged", hx_mesh_num_tags(arr),
            (long long)hx_mesh_untagged_faces(arr, NULL, NULL));
  for (int t = 0; t < 6; t++) {
    const int ta = hx_mesh_find_tag(arr, box_tags[t]), tb = hx_mesh_find_tag(box, box_tags[t]);
    HX_ASSERT(ta >= 0 && tb >= 0, "tag %s: %d in the arrays' mesh, %d in the box", box_tags[t], ta, tb);
    same_set(arr, SEL_TAG, ta, box, SEL_TAG, tb, box_tags[t]);
  }
  HX_ASSERT(hx_mesh_num_materials(arr) == 2 && !strcmp(hx_mesh_material_name(arr, 0), "left") &&
                !strcmp(hx_mesh_material_name(arr, 1), "right"),
            "materials: %d", hx_mesh_num_materials(arr));
  same_set(arr, SEL_MAT, 0, box, SEL_LEFT, 0, "material left");
  same_set(arr, SEL_MAT, 1, box, SEL_LEFT, 1, "material right");
  double ja[4], jb[4];
  HX_TCALL(hx_mesh_check_jacobian(arr, P, &ja[0], &ja[1], &ja[2], &ja[3]));
  HX_TCALL(hx_mesh_check_jacobian(box, P, &jb[0], &jb[1], &jb[2], &jb[3]));
  HX_ASSERT(ja[0] > 0, "det J min %g", ja[0]);
  for (int k = 0; k < 4; k++)
    HX_ASSERT(hx_test_reldiff(ja[k], jb[k], 1e-300) < 1e-12, "Jacobian/size %d: %.17g vs the box's %.17g", k,
              ja[k], jb[k]);
  hx_mesh_destroy(&arr);
  hx_mesh_destroy(&box);
  return 0;
}

/* perturbed vertices, no quads, no materials (a zeroed struct off rank 0), METIS */
static int deformed(MPI_Comm comm, box_arrays *b) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  box_make(b, 1);
  b->a.num_faces = 0, b->a.face_vertices = NULL, b->a.face_tag = NULL, b->a.num_tags = 0,
  b->a.tag_names = NULL;
  b->a.material = NULL, b->a.num_materials = 0, b->a.material_names = NULL;
  hx_mesh_arrays zero;
  memset(&zero, 0, sizeof zero);
  hx_mesh m = NULL;
  HX_TCALL(hx_mesh_create_arrays(comm, rank == 0 ? &b->a : &zero, HX_PART_METIS, &m));
  double jmin = 0, jmax = 0;
  HX_TCALL(hx_mesh_check_jacobian(m, P, &jmin, &jmax, NULL, NULL));
  HX_ASSERT(jmin > 0 && jmax > jmin * (1 + 1e-3), "deformed: det J in [%g, %g] (positive, not constant)",
            jmin, jmax);
  HX_ASSERT(hx_mesh_num_global_gll(m, P) == (NX * P + 1) * (NY * P + 1) * (NZ * P + 1),
            "deformed: %lld GLL nodes", (long long)hx_mesh_num_global_gll(m, P));
  int64_t nb = 0;
  const int64_t nu = hx_mesh_untagged_faces(m, &nb, NULL);
  HX_ASSERT(nu == NQ && nb == NQ, "untagged %lld of %lld boundary faces (want %d)", (long long)nu,
            (long long)nb, NQ);
  HX_ASSERT(hx_mesh_num_tags(m) == 1 && !strcmp(hx_mesh_tag_name(m, 0), HX_MESH_UNTAGGED), "tags: %d",
            hx_mesh_num_tags(m));
  HX_ASSERT(hx_mesh_num_materials(m) == 1 && !strcmp(hx_mesh_material_name(m, 0), "body"), "materials: %d",
            hx_mesh_num_materials(m));
  hx_mesh_destroy(&m);
  return 0;
}

/* ---------------------------------------------------------------- bad input */
typedef struct {
  const char *label;
  const char *want[2]; /* substrings of the message besides "mesh arrays: " */
} bad_case;

static const bad_case cases[] = {
    {"hex index", {"hex[8*5+3] = 99 is not a vertex index (num_vertices 36", ""}},
    {"material index", {"material[5] = 3 but num_materials is 2", ""}},
    {"xyz NULL", {"xyz is NULL but num_vertices is 36", ""}},
    {"hex NULL", {"hex is NULL but num_elements is 12", ""}},
    {"face_tag NULL", {"face_tag is NULL but num_faces is 32", ""}},
    {"face_vertices NULL", {"face_vertices is NULL but num_faces is 32", ""}},
    {"tag_names NULL", {"tag_names is NULL but num_tags is 6", ""}},
    {"material_names NULL", {"material_names is NULL but num_materials is 2", ""}},
    {"negative vertices", {"num_vertices = -1 is negative", ""}},
    {"negative faces", {"num_faces = -2 is negative", ""}},
    {"negative tags", {"num_tags = -1 is negative", ""}},
    {"no elements", {"num_elements is 0", "at least one hexahedron"}},
    {"NaN", {"xyz[3*7+1] = nan (vertex 7) is not finite", ""}},
    {"inf", {"xyz[3*0+2] = inf (vertex 0) is not finite", ""}},
    {"repeated material", {"material_names[1] = 'left' repeats material_names[0]", ""}},
    {"repeated tag", {"tag_names[5] = 'zmax' repeats tag_names[0]", ""}},
    {"NULL tag name", {"tag_names[2] is NULL", ""}},
    {"reserved tag name", {"tag_names[1] = 'untagged'", "rename the tag"}},
    {"face_tag index", {"face_tag[2] = 6 but num_tags is 6", ""}},
    {"quad vertex index", {"face_vertices[4*3+1] = -2 is not a vertex index", ""}},
    {"quad on no face", {"face_vertices[4*0..4*0+3] = (", "is not a face of any element"}},
    {"interior quad", {"face_vertices[4*0..4*0+3] = (", "not a boundary face"}},
    {"face tagged twice", {"quads 0 and 1 are the same face", "tags 'xmin' and 'ymax'"}},
    {"inverted element", {"non-positive Jacobian", "element 4 "}},
    {"material without names", {"material[7] = 1 but num_materials is 0", "\"body\""}},
    {"degenerate element", {"degenerate element", "element 3 "}},
};

static const char *dup_mat[2] = {"left", "left"};
static const char *dup_tag[6] = {"zmax", "xmin", "ymax", "zmin", "xmax", "zmax"};
static const char *null_tag[6] = {"zmax", "xmin", NULL, "zmin", "xmax", "ymin"};
static const char *res_tag[6] = {"zmax", "untagged", "ymax", "zmin", "xmax", "ymin"};

/* case k applied to the good arrays b */
static void mutate(box_arrays *b, int k) {
  hx_mesh_arrays *a = &b->a;
  switch (k) {
    case 0: b->hex[8 * 5 + 3] = 99; break;
    case 1: b->mat[5] = 3; break;
    case 2: a->xyz = NULL; break;
    case 3: a->hex = NULL; break;
    case 4: a->face_tag = NULL; break;
    case 5: a->face_vertices = NULL; break;
    case 6: a->tag_names = NULL; break;
    case 7: a->material_names = NULL; break;
    case 8: a->num_vertices = -1; break;
    case 9: a->num_faces = -2; break;
    case 10: a->num_tags = -1; break;
    case 11: a->num_elements = 0; break;
    case 12: b->xyz[3 * 7 + 1] = NAN; break;
    case 13: b->xyz[3 * 0 + 2] = INFINITY; break;
    case 14: a->material_names = dup_mat; break;
    case 15: a->tag_names = dup_tag; break;
    case 16: a->tag_names = null_tag; break;
    case 17: a->tag_names = res_tag; break;
    case 18: b->ftag[2] = 6; break;
    case 19: b->fv[4 * 3 + 1] = -2; break;
    case 20: b->fv[4 * 0 + 2] = b->vperm[lat(1, 1, 1)]; break;
    case 21:
      for (int c = 0; c < 4; c++) b->fv[c] = b->vperm[lat(1, c == 1 || c == 2, c >= 2)];
      break;
    case 22:
      for (int c = 0; c < 4; c++) b->fv[4 + c] = b->fv[3 - c];
      b->ftag[1] = 2; /* quad 0 is xmin (tag 1) */
      break;
    case 23:
      for (int c = 0; c < 4; c++) {
        const int64_t t = b->hex[8 * 4 + c];
        b->hex[8 * 4 + c] = b->hex[8 * 4 + 4 + c], b->hex[8 * 4 + 4 + c] = t;
      }
      break;
    case 24:
      a->num_materials = 0, a->material_names = NULL;
      for (int e = 0; e < NE; e++) b->mat[e] = e == 7;
      break;
    default: b->hex[8 * 3 + 1] = b->hex[8 * 3 + 0], a->num_faces = 0; break;
  }
}

static int bad_inputs(MPI_Comm comm, box_arrays *b) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int ncase = (int)(sizeof cases / sizeof cases[0]);
  for (int k = 0; k < ncase; k++) {
    box_make(b, 0);
    mutate(b, k);
    hx_mesh m = NULL;
    const int err = hx_mesh_create_arrays(comm, rank == 0 ? &b->a : NULL, HX_PART_RCB, &m);
    const char *msg = hx_error_message();
    HX_ASSERT(err == HX_ERR_INPUT && m == NULL, "%s: expected HX_ERR_INPUT, got %s (%s)", cases[k].label,
              hx_error_name(err), msg);
    HX_ASSERT(strstr(msg, "mesh arrays: ") != NULL, "%s: message lacks 'mesh arrays: ':\n  %s",
              cases[k].label, msg);
    for (int w = 0; w < 2; w++)
      HX_ASSERT(strstr(msg, cases[k].want[w]) != NULL, "%s: message lacks '%s':\n  %s", cases[k].label,
                cases[k].want[w], msg);
    hx_mesh_destroy(&m);
  }
  hx_mesh m = NULL;
  const int err = hx_mesh_create_arrays(comm, NULL, HX_PART_RCB, &m);
  HX_ASSERT(err == HX_ERR_ARG && m == NULL && strstr(hx_error_message(), "arrays are NULL on rank 0"),
            "NULL arrays on rank 0: %s (%s)", hx_error_name(err), hx_error_message());
  return 0;
}

static int run(void) {
  box_arrays *b = calloc(1, sizeof *b);
  int rc = 0;
  box_make(b, 0);
  rc |= compare_box(MPI_COMM_WORLD, b);
  rc |= deformed(MPI_COMM_WORLD, b);
  rc |= bad_inputs(MPI_COMM_WORLD, b);
  free(b);
  return rc;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  return hx_test_mpi_finish(run());
}
