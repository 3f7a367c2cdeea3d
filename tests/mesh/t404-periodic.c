/* Periodic meshes (docs/mesh.md "Periodic meshes") on 1..3 ranks:
 * - box with periodic x / x,y / x,y,z (hex8 and deformed hex27) and a
 *   Kershaw mesh periodic in y, z: ids exactly 1..N with N = prod over axes
 *   of (n p) on a periodic axis and (n p + 1) otherwise; all copies of an
 *   id are the same point modulo the periods; the number of distinct points
 *   modulo the periods is N (no two points share an id, no point has two);
 *   the (id, wrapped point) set is the one of a single-rank mesh;
 * - every face across a periodic axis has a face neighbour, the periodic
 *   tags carry no face any more, and on > 1 rank some element has its
 *   periodic neighbour on another rank;
 * - bad input: one element along a periodic axis, periodic x on a Kershaw
 *   mesh: HX_ERR_INPUT with the reason. */
#include "mesh_test.h"

typedef struct {
  int64_t id;
  long long w[3]; /* the point modulo the periods, in 1e-9 units */
} wnode;

static int cmp_w(const void *pa, const void *pb) {
  const wnode *a = pa, *b = pb;
  for (int d = 0; d < 3; d++)
    if (a->w[d] != b->w[d]) return a->w[d] < b->w[d] ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}
static int mt_cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}
#define HX_TCALL_V(expr)                                        \
  do {                                                          \
    if ((expr) != HX_SUCCESS) {                                 \
      HX_ASSERT(0, "%s failed: %s", #expr, hx_error_message()); \
      hx_error_clear();                                         \
      return;                                                   \
    }                                                           \
  } while (0)
static int cmp_idw(const void *pa, const void *pb) {
  const wnode *a = pa, *b = pb;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  for (int d = 0; d < 3; d++)
    if (a->w[d] != b->w[d]) return a->w[d] < b->w[d] ? -1 : 1;
  return 0;
}

static long long wrap(double x, double lo, double hi, int per) {
  if (per) {
    const double L = hi - lo;
    double t = fmod(x - lo, L);
    if (t < 0) t += L;
    if (fabs(t - L) < 1e-9 * L) t = 0;
    x = lo + t;
  }
  return llround(x * 1e9);
}

/* the sorted (id, wrapped point) set of every copy on rank 0; *n copies */
static int gather_wrapped(hx_mesh m, int p, const hx_mesh_box_opts *o, wnode **out, int64_t *n) {
  mt_node *all = NULL;
  int64_t na = 0;
  HX_TCALL(mt_gather(m, p, &all, &na));
  *out = malloc(sizeof(wnode) * (na + 1));
  for (int64_t i = 0; i < na; i++) {
    (*out)[i].id = all[i].id;
    for (int d = 0; d < 3; d++)
      (*out)[i].w[d] = wrap(all[i].x[d], o->extent[d][0], o->extent[d][1], o->periodic[d]);
  }
  free(all);
  *n = na;
  qsort(*out, (size_t)na, sizeof(wnode), cmp_idw);
  return 0;
}

/* on rank 0: ids 1..N, each id one point modulo the periods, each such point one id */
static void check_wrapped(const wnode *w, int64_t nw, int64_t Nexp, const char *label, int p) {
  /* ids 1..N, each id one wrapped point */
  int64_t u = 0, bad = 0;
  for (int64_t i = 0; i < nw; i++) {
    if (i > 0 && w[i].id == w[i - 1].id) {
      if (memcmp(w[i].w, w[i - 1].w, sizeof w[i].w) && bad++ < 3)
        HX_ASSERT(0, "%s p=%d: id %lld at wrapped (%lld %lld %lld) and (%lld %lld %lld)e-9", label, p,
                  (long long)w[i].id, w[i].w[0], w[i].w[1], w[i].w[2], w[i - 1].w[0], w[i - 1].w[1],
                  w[i - 1].w[2]);
      continue;
    }
    u++;
    if (w[i].id != u && bad++ < 3) HX_ASSERT(0, "%s p=%d: ids not 1..N at %lld", label, p, (long long)u);
  }
  HX_ASSERT(u == Nexp, "%s p=%d: %lld distinct ids, expected %lld", label, p, (long long)u, (long long)Nexp);
  /* each wrapped point one id */
  wnode *c = malloc(sizeof(wnode) * (nw + 1));
  memcpy(c, w, sizeof(wnode) * nw);
  qsort(c, (size_t)nw, sizeof(wnode), cmp_w);
  int64_t pts = 0;
  for (int64_t i = 0; i < nw; i++) {
    if (i > 0 && !memcmp(c[i].w, c[i - 1].w, sizeof c[i].w)) {
      if (c[i].id != c[i - 1].id && bad++ < 3)
        HX_ASSERT(0, "%s p=%d: point (%lld %lld %lld)e-9 has ids %lld and %lld", label, p, c[i].w[0],
                  c[i].w[1], c[i].w[2], (long long)c[i - 1].id, (long long)c[i].id);
      continue;
    }
    pts++;
  }
  HX_ASSERT(pts == Nexp, "%s p=%d: %lld distinct points modulo the periods, expected %lld", label, p,
            (long long)pts, (long long)Nexp);
  free(c);
}

static int run_box(MPI_Comm comm, int rank, hx_mesh_box_opts o, int p, const char *label) {
  const int ne[3] = {o.nx, o.ny, o.nz};
  int64_t Nexp = 1;
  for (int d = 0; d < 3; d++) Nexp *= (int64_t)ne[d] * p + (o.periodic[d] ? 0 : 1);
  hx_mesh m;
  HX_TCALL(hx_mesh_create_box(comm, &o, &m));
  HX_ASSERT(hx_mesh_num_global_gll(m, p) == Nexp, "%s p=%d: %lld global GLL nodes, expected %lld", label, p,
            (long long)hx_mesh_num_global_gll(m, p), (long long)Nexp);
  /* faces: every face across a periodic axis has a neighbour; periodic tags carry nothing */
  const int32_t E = hx_mesh_num_elements(m), *ft = hx_mesh_face_tags(m), *nr = hx_mesh_face_neighbor_ranks(m);
  const int64_t *nbr;
  hx_mesh_face_neighbors(m, &nbr, NULL, NULL);
  int64_t missing = 0, tagged = 0, remote = 0;
  for (int32_t e = 0; e < E; e++)
    for (int f = 0; f < 6; f++) {
      if (!o.periodic[f / 2]) continue;
      missing += nbr[6 * e + f] < 0;
      tagged += ft[6 * e + f] >= 0;
      remote += nr[6 * e + f] != rank && nr[6 * e + f] >= 0;
    }
  HX_ASSERT(missing == 0 && tagged == 0, "%s: %lld faces across periodic axes without neighbour, %lld tagged",
            label, (long long)missing, (long long)tagged);
  int64_t nper = 0, npexp = 0;
  for (int d = 0; d < 3; d++) {
    const int tmin = hx_mesh_find_tag(m, (const char *[]){"xmin", "ymin", "zmin"}[d]);
    HX_ASSERT(hx_mesh_tag_is_periodic(m, tmin) == o.periodic[d] &&
                  hx_mesh_tag_is_periodic(m, tmin + 1) == o.periodic[d],
              "%s: tag %s periodic flag %d", label, hx_mesh_tag_name(m, tmin),
              hx_mesh_tag_is_periodic(m, tmin));
    if (o.periodic[d]) npexp += (int64_t)ne[(d + 1) % 3] * ne[(d + 2) % 3];
  }
  nper = hx_mesh_num_periodic_faces(m);
  HX_ASSERT(nper == npexp, "%s: %lld periodic face pairs, expected %lld", label, (long long)nper,
            (long long)npexp);
  int size;
  MPI_Comm_size(comm, &size);
  int64_t rsum = 0;
  MPI_Allreduce(&remote, &rsum, 1, MPI_INT64_T, MPI_SUM, comm);
  if (size > 1) HX_ASSERT(rsum > 0, "%s: no periodic neighbour on another rank on %d ranks", label, size);

  wnode *w = NULL;
  int64_t nw = 0;
  HX_TCALL(gather_wrapped(m, p, &o, &w, &nw));
  hx_mesh ms = NULL;
  wnode *ref = NULL;
  int64_t nref = 0;
  if (rank == 0) {
    check_wrapped(w, nw, Nexp, label, p);
    /* the same as on one rank */
    HX_TCALL(hx_mesh_create_box(MPI_COMM_SELF, &o, &ms));
    HX_TCALL(gather_wrapped(ms, p, &o, &ref, &nref));
    HX_ASSERT(nref == nw && !memcmp(ref, w, sizeof(wnode) * nw),
              "%s p=%d: (id, point) set differs from 1 rank", label, p);
    hx_mesh_destroy(&ms);
  }
  free(w), free(ref);
  hx_mesh_destroy(&m);
  return mt_all_ok(comm);
}

static void expect_fail(MPI_Comm comm, hx_mesh_box_opts o, const char *what, const char *want) {
  hx_mesh m = NULL;
  int err = hx_mesh_create_box(comm, &o, &m);
  HX_ASSERT(err == HX_ERR_INPUT, "%s: expected HX_ERR_INPUT, got %d", what, err);
  HX_ASSERT(strstr(hx_error_message(), want), "%s: message '%s' lacks '%s'", what, hx_error_message(), want);
  HX_ASSERT(m == NULL, "%s: a mesh was returned", what);
  hx_error_clear();
}

/* ---------------------------------------------------------------- Gmsh files */
static char dir[64];

/* A structured channel [0, Lx] x [0, 1]^2 of nx x ny x nz hex8 with the
 * surfaces left (x = 0), right, front, back, bottom, top and the volume
 * fluid, as MSH 2.2 (fmt 22) or 4.1 ASCII (fmt 41). per: 0 no $Periodic;
 * 1 one link right -> left listing every node of right; 2 (4.1 only) Gmsh's
 * layout: links for the 4 corner points, the 4 edges' inner nodes and the
 * surface's inner nodes; 3 as 1 with one wrong partner. shift != 0 moves
 * the node (Lx, 1/ny, 1/nz) of right by shift / ny in y. */
static int write_channel(const char *path, int fmt, int nx, int ny, int nz, double Lx, int per,
                         double shift) {
  FILE *f = fopen(path, "w");
  if (!f) return 1;
#define NID(i, j, k) (3 * ((i) + (nx + 1) * ((j) + (ny + 1) * (k))) + 5)
  const int nn = (nx + 1) * (ny + 1) * (nz + 1), nh = nx * ny * nz;
  const int nq = 2 * (ny * nz + nx * nz + nx * ny);
  static const char *names[7] = {"left", "right", "front", "back", "bottom", "top", "fluid"};
  fprintf(f, "$MeshFormat\n%s 0 8\n$EndMeshFormat\n$PhysicalNames\n7\n", fmt == 22 ? "2.2" : "4.1");
  for (int i = 0; i < 7; i++) fprintf(f, "%d %d \"%s\"\n", i < 6 ? 2 : 3, i + 1, names[i]);
  fprintf(f, "$EndPhysicalNames\n");
  if (fmt == 41) {
    fprintf(f, "$Entities\n0 0 6 1\n");
    for (int s = 1; s <= 6; s++) fprintf(f, "%d 0 0 0 %g 1 1 1 %d 0\n", s, Lx, s);
    fprintf(f, "1 0 0 0 %g 1 1 1 7 6 1 2 3 4 5 6\n$EndEntities\n", Lx);
  }
  double(*X)[3] = malloc(sizeof(double[3]) * nn);
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        double *x = X[i + (nx + 1) * (j + (ny + 1) * k)];
        x[0] = Lx * i / nx, x[1] = (double)j / ny, x[2] = (double)k / nz;
        if (i == nx && j == 1 && k == 1) x[1] += shift / ny;
      }
  if (fmt == 22) {
    fprintf(f, "$Nodes\n%d\n", nn);
    for (int v = 0; v < nn; v++) fprintf(f, "%d %.17g %.17g %.17g\n", 3 * v + 5, X[v][0], X[v][1], X[v][2]);
    fprintf(f, "$EndNodes\n$Elements\n%d\n", nq + nh);
  } else {
    fprintf(f, "$Nodes\n1 %d 5 %d\n3 1 0 %d\n", nn, 3 * (nn - 1) + 5, nn);
    for (int v = 0; v < nn; v++) fprintf(f, "%d\n", 3 * v + 5);
    for (int v = 0; v < nn; v++) fprintf(f, "%.17g %.17g %.17g\n", X[v][0], X[v][1], X[v][2]);
    fprintf(f, "$EndNodes\n$Elements\n7 %d 1 %d\n", nq + nh, nq + nh);
  }
  free(X);
  int et = 1;
  /* quads per surface: s = 2d + side; (a, b) over the other two axes */
  for (int s = 0; s < 6; s++) {
    const int d = s / 2, side = s % 2, n[3] = {nx, ny, nz}, d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2;
    if (fmt == 41) fprintf(f, "2 %d 3 %d\n", s + 1, n[d1] * n[d2]);
    for (int b = 0; b < n[d2]; b++)
      for (int a = 0; a < n[d1]; a++) {
        int c[4][3];
        const int da[4] = {0, 1, 1, 0}, db[4] = {0, 0, 1, 1};
        for (int q = 0; q < 4; q++) c[q][d] = side ? n[d] : 0, c[q][d1] = a + da[q], c[q][d2] = b + db[q];
        if (fmt == 22)
          fprintf(f, "%d 3 2 %d %d", et++, s + 1, s + 1);
        else
          fprintf(f, "%d", et++);
        for (int q = 0; q < 4; q++) fprintf(f, " %d", NID(c[q][0], c[q][1], c[q][2]));
        fprintf(f, "\n");
      }
  }
  if (fmt == 41) fprintf(f, "3 1 5 %d\n", nh);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        if (fmt == 22)
          fprintf(f, "%d 5 2 7 1", et++);
        else
          fprintf(f, "%d", et++);
        const int(*g)[3] = mt_gmsh_hex8_corner;
        for (int q = 0; q < 8; q++) fprintf(f, " %d", NID(i + g[q][0], j + g[q][1], k + g[q][2]));
        fprintf(f, "\n");
      }
  fprintf(f, "$EndElements\n");
  if (per) {
    const char *aff = fmt == 22 ? "" : "0\n";
    if (per != 2) {
      fprintf(f, "$Periodic\n1\n2 2 1\n%s%d\n", aff, (ny + 1) * (nz + 1));
      for (int k = 0; k <= nz; k++)
        for (int j = 0; j <= ny; j++) {
          int jm = j, km = k;
          if (per == 3 && j == 1 && k == 1) jm = 2; /* a wrong partner */
          fprintf(f, "%d %d\n", NID(nx, j, k), NID(0, jm, km));
        }
    } else { /* points, curves (inner nodes), the surface (inner nodes) */
      fprintf(f, "$Periodic\n9\n");
      const int cj[4] = {0, ny, ny, 0}, ck[4] = {0, 0, nz, nz};
      for (int c = 0; c < 4; c++)
        fprintf(f, "0 %d %d\n0\n1\n%d %d\n", 10 + c, 20 + c, NID(nx, cj[c], ck[c]), NID(0, cj[c], ck[c]));
      for (int c = 0; c < 4; c++) {
        const int alongj = c % 2 == 0, m = alongj ? ny : nz;
        fprintf(f, "1 %d %d\n0\n%d\n", 30 + c, 40 + c, m - 1);
        for (int t = 1; t < m; t++) {
          const int j = alongj ? t : (c == 1 ? ny : 0), k = alongj ? (c == 0 ? 0 : nz) : t;
          fprintf(f, "%d %d\n", NID(nx, j, k), NID(0, j, k));
        }
      }
      fprintf(f, "2 2 1\n0\n%d\n", (ny - 1) * (nz - 1));
      for (int k = 1; k < nz; k++)
        for (int j = 1; j < ny; j++) fprintf(f, "%d %d\n", NID(nx, j, k), NID(0, j, k));
    }
    fprintf(f, "$EndPeriodic\n");
  }
#undef NID
  fclose(f);
  return 0;
}

/* the wrapped check of a Gmsh channel periodic in x; expected DOFs given */
static int check_channel(hx_mesh m, int p, double Lx, int64_t Nexp, const char *label) {
  int rank;
  MPI_Comm_rank(hx_mesh_comm(m), &rank);
  HX_ASSERT(hx_mesh_num_global_gll(m, p) == Nexp, "%s p=%d: %lld GLL nodes, expected %lld", label, p,
            (long long)hx_mesh_num_global_gll(m, p), (long long)Nexp);
  hx_mesh_box_opts o;
  hx_mesh_box_opts_default(&o);
  o.extent[0][1] = Lx, o.periodic[0] = 1;
  wnode *w = NULL;
  int64_t nw = 0;
  HX_TCALL(gather_wrapped(m, p, &o, &w, &nw));
  if (rank == 0) check_wrapped(w, nw, Nexp, label, p);
  free(w);
  const int tl = hx_mesh_find_tag(m, "left"), tr = hx_mesh_find_tag(m, "right"),
            tb = hx_mesh_find_tag(m, "bottom");
  HX_ASSERT(
      hx_mesh_tag_is_periodic(m, tl) && hx_mesh_tag_is_periodic(m, tr) && !hx_mesh_tag_is_periodic(m, tb),
      "%s: periodic flags left %d right %d bottom %d", label, hx_mesh_tag_is_periodic(m, tl),
      hx_mesh_tag_is_periodic(m, tr), hx_mesh_tag_is_periodic(m, tb));
  return 0;
}

static int gmsh_fail(MPI_Comm comm, const char *path, int np, const char *const (*pairs)[2], const char *what,
                     const char *want) {
  hx_mesh m = NULL;
  int err = hx_mesh_create_gmsh_periodic(comm, path, HX_PART_RCB, np, pairs, &m);
  HX_ASSERT(err == HX_ERR_INPUT, "%s: expected HX_ERR_INPUT, got %d", what, err);
  HX_ASSERT(strstr(hx_error_message(), want), "%s: message '%s' lacks '%s'", what, hx_error_message(), want);
  HX_ASSERT(m == NULL, "%s: a mesh was returned", what);
  hx_error_clear();
  return 0;
}

/* write_channel's file dir/name (its path in path), written by rank 0 and
 * seen by every rank of comm */
static void channel_file(MPI_Comm comm, int rank, const char *name, int fmt, int nx, int ny, int nz,
                         double Lx, int per, double shift, char *path, size_t size) {
  snprintf(path, size, "%s/%s", dir, name);
  if (rank == 0) write_channel(path, fmt, nx, ny, nz, Lx, per, shift);
  MPI_Barrier(comm);
}

static void test_gmsh_files(MPI_Comm comm, int rank) {
  const int nx = 4, ny = 3, nz = 2;
  const double Lx = 2.0;
  const char *const rl[1][2] = {{"right", "left"}};
  char path[512];
  struct {
    int fmt, per;
    const char *name;
  } files[4] = {
      {22, 1, "ch22.msh"}, {41, 1, "ch41.msh"}, {41, 2, "ch41-gmsh-links.msh"}, {22, 0, "ch22-plain.msh"}};
  for (int i = 0; i < 4; i++) {
    channel_file(comm, rank, files[i].name, files[i].fmt, nx, ny, nz, Lx, files[i].per, 0.0, path,
                 sizeof path);
    for (int pairs = 0; pairs < 2; pairs++) {
      if (files[i].per == 0 && !pairs) continue; /* plain: periodic only through the case pair */
      hx_mesh m;
      if (hx_mesh_create_gmsh_periodic(comm, path, HX_PART_RCB, pairs, rl, &m)) {
        HX_ASSERT(0, "%s (pairs %d): %s", files[i].name, pairs, hx_error_message());
        hx_error_clear();
        continue;
      }
      HX_ASSERT(hx_mesh_num_periodic_faces(m) == ny * nz, "%s: %lld periodic face pairs", files[i].name,
                (long long)hx_mesh_num_periodic_faces(m));
      char label[128];
      snprintf(label, sizeof label, "%s%s", files[i].name, pairs ? " + case pair [right, left]" : "");
      for (int p = 1; p <= 3; p += 2)
        check_channel(m, p, Lx, (int64_t)(nx * p) * (ny * p + 1) * (nz * p + 1), label);
      hx_mesh_destroy(&m);
    }
  }
  /* the same channel re-saved by Gmsh as 4.1 binary and as 2.2: Gmsh's own $Periodic writers */
  const char *resaved[2][2] = {{"chg41b.msh", "-format msh41 -bin"}, {"chg22.msh", "-format msh22"}};
  for (int i = 0; i < 2; i++) {
    int rc = 0;
    snprintf(path, sizeof path, "%s/%s", dir, resaved[i][0]);
    if (rank == 0) {
      char cmd[1600];
      snprintf(cmd, sizeof cmd,
               "gmsh -v 0 -nt 1 -0 %s/ch41.msh %s -o %s > %s/gmsh.log 2>&1; grep -aq Periodic %s", dir,
               resaved[i][1], path, dir, path);
      rc = system(cmd);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    HX_ASSERT(rc == 0, "gmsh did not re-save %s with a $Periodic section", resaved[i][0]);
    hx_mesh m;
    if (rc || hx_mesh_create_gmsh(comm, path, HX_PART_METIS, &m)) {
      HX_ASSERT(rc, "%s: %s", resaved[i][0], hx_error_message());
      hx_error_clear();
      continue;
    }
    for (int p = 1; p <= 3; p += 2)
      check_channel(m, p, Lx, (int64_t)(nx * p) * (ny * p + 1) * (nz * p + 1), resaved[i][0]);
    hx_mesh_destroy(&m);
  }
  /* without $Periodic and without a pair: not periodic */
  {
    snprintf(path, sizeof path, "%s/ch22-plain.msh", dir);
    hx_mesh m;
    HX_TCALL_V(hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m));
    HX_ASSERT(hx_mesh_num_global_gll(m, 2) == (int64_t)(nx * 2 + 1) * (ny * 2 + 1) * (nz * 2 + 1) &&
                  hx_mesh_num_periodic_faces(m) == 0,
              "plain channel: %lld GLL nodes", (long long)hx_mesh_num_global_gll(m, 2));
    hx_mesh_destroy(&m);
  }
  /* bad input */
  channel_file(comm, rank, "ch22-wrong.msh", 22, nx, ny, nz, Lx, 3, 0.0, path, sizeof path);
  gmsh_fail(
      comm, path, 0, NULL, "wrong $Periodic partner",
      "but the partners form no boundary face (the periodic surfaces are not meshed alike, or a partner is "
      "wrong): 17 (2, 0, 0) -> 5 (0, 0, 0), 32 (2, 0.333333, 0) -> 20 (0, 0.333333, 0), 77 (2, 0, 0.5) -> 65 "
      "(0, 0, 0.5), 92 (2, 0.333333, 0.5) -> 95 (0, 0.666667, 0.5)");
  channel_file(comm, rank, "ch41-shifted.msh", 41, nx, ny, nz, Lx, 0, 0.25, path, sizeof path);
  gmsh_fail(
      comm, path, 1, rl, "shifted node, case pair",
      "periodic pair [right, left]: node 92 at (2, 0.416666667, 0.5) of 'right' has no node of 'left' at its "
      "translate (0, 0.416666667, 0.5)");
  snprintf(path, sizeof path, "%s/ch22-plain.msh", dir);
  const char *const unk[1][2] = {{"right", "lefty"}}, *const self[1][2] = {{"left", "left"}};
  gmsh_fail(comm, path, 1, unk, "unknown tag",
            "periodic pair [right, lefty]: the mesh has no surface tag 'lefty' (it has: left, right");
  gmsh_fail(comm, path, 1, self, "self pair", "a surface cannot be paired with itself");
}

/* A real Gmsh mesh (all-hex by subdivision) of a periodic box: Gmsh lists
 * the nodes of the tetrahedral mesh in $Periodic but not those subdivision
 * adds, so the file alone is refused (not silently solved as non-periodic);
 * with the case pair [right, left] it is periodic and has exactly the
 * non-periodic count minus the GLL nodes of the surface right. */
static void test_gmsh_real(MPI_Comm comm, int rank) {
  char geo[128], msh[128], plain[128], cmd[1024];
  snprintf(geo, sizeof geo, "%s/sub.geo", dir);
  snprintf(msh, sizeof msh, "%s/sub22.msh", dir);
  snprintf(plain, sizeof plain, "%s/sub22-plain.msh", dir);
  int rc = 0;
  if (rank == 0) {
    FILE *f = fopen(geo, "w");
    fputs(
        "SetFactory(\"OpenCASCADE\");\nBox(1) = {0, 0, 0, 2, 1, 1};\nMeshSize{:} = 0.6;\n"
        "Periodic Surface{2} = {1} Translate{2, 0, 0};\nMesh.SubdivisionAlgorithm = 2;\n"
        "Physical Volume(\"fluid\") = {1};\nPhysical Surface(\"left\") = {1};\n"
        "Physical Surface(\"right\") = {2};\nPhysical Surface(\"walls\") = {3, 4, 5, 6};\n",
        f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "gmsh -v 0 -nt 1 -3 %s -format msh22 -o %s > %s/gmsh.log 2>&1; grep -q '^.Periodic' %s && "
             "awk '/^\\$Periodic/{s=1} !s{print} /^\\$EndPeriodic/{s=0}' %s > %s",
             geo, msh, dir, msh, msh, plain);
    rc = system(cmd);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  HX_ASSERT(rc == 0, "gmsh wrote no periodic mesh (%d): see %s/gmsh.log", rc, dir);
  if (rc) return;
  const int p = 3;
  hx_mesh m0, m1, m2 = NULL;
  /* the file alone: refused with the hint (Gmsh 4.8 lists only the nodes before subdivision), or, where
   * Gmsh lists them all, periodic with the same count as with the pair: never silently non-periodic */
  int err = hx_mesh_create_gmsh(comm, msh, HX_PART_RCB, &m2);
  if (err)
    HX_ASSERT(strstr(hx_error_message(), "mesh.periodic: [[a, b]], to match all their nodes by translation"),
              "Gmsh subdivision $Periodic: %s", hx_error_message());
  hx_error_clear();
  const char *const rl[1][2] = {{"right", "left"}};
  HX_TCALL_V(hx_mesh_create_gmsh(comm, plain, HX_PART_METIS, &m0));
  HX_TCALL_V(hx_mesh_create_gmsh_periodic(comm, msh, HX_PART_METIS, 1, rl, &m1));
  /* distinct GLL ids on the faces tagged right, in the non-periodic mesh */
  const int n = p + 1, n3 = n * n * n, tr = hx_mesh_find_tag(m0, "right");
  const int32_t E = hx_mesh_num_elements(m0), *ft = hx_mesh_face_tags(m0);
  int64_t *gid = malloc(sizeof(int64_t) * ((size_t)E * n3 + 1)),
          *ids = malloc(sizeof(int64_t) * ((size_t)E * 6 * n * n + 1));
  hx_mesh_gll_ids(m0, p, gid);
  int idx[16 * 16], cnt = 0;
  for (int32_t e = 0; e < E; e++)
    for (int f = 0; f < 6; f++) {
      if (ft[6 * e + f] != tr) continue;
      hx_mesh_face_nodes(p, f, idx, NULL, NULL);
      for (int q = 0; q < n * n; q++) ids[cnt++] = gid[(size_t)e * n3 + idx[q]];
    }
  int size;
  MPI_Comm_size(comm, &size);
  int *cn = malloc(sizeof(int) * size), *dp = malloc(sizeof(int) * size), tot = 0;
  MPI_Gather(&cnt, 1, MPI_INT, cn, 1, MPI_INT, 0, comm);
  if (rank == 0)
    for (int r = 0; r < size; r++) dp[r] = tot, tot += cn[r];
  int64_t *all = malloc(sizeof(int64_t) * (tot + 1));
  MPI_Gatherv(ids, cnt, MPI_INT64_T, all, cn, dp, MPI_INT64_T, 0, comm);
  if (rank == 0) {
    qsort(all, (size_t)tot, sizeof(int64_t), mt_cmp_i64);
    int64_t u = 0;
    for (int i = 0; i < tot; i++) u += i == 0 || all[i] != all[i - 1];
    const int64_t N0 = hx_mesh_num_global_gll(m0, p), N1 = hx_mesh_num_global_gll(m1, p);
    HX_ASSERT(u > 0 && N1 == N0 - u, "Gmsh periodic box: %lld GLL nodes, expected %lld - %lld = %lld",
              (long long)N1, (long long)N0, (long long)u, (long long)(N0 - u));
    if (m2)
      HX_ASSERT(hx_mesh_num_global_gll(m2, p) == N1,
                "Gmsh periodic box from $Periodic alone: %lld GLL nodes, %lld "
                "with the case pair",
                (long long)hx_mesh_num_global_gll(m2, p), (long long)N1);
  }
  hx_mesh_destroy(&m2);
  free(gid), free(ids), free(cn), free(dp), free(all);
  hx_mesh_destroy(&m0);
  hx_mesh_destroy(&m1);
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  hx_mesh_box_opts o = mt_box(4, 3, 2);
  o.extent[0][0] = -1, o.extent[0][1] = 2;
  o.extent[1][0] = 0, o.extent[1][1] = 0.5;
  const int ps[3] = {1, 2, 4};
  const int axes[3][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  for (int a = 0; a < 3; a++)
    for (int i = 0; i < 3; i++) {
      memcpy(o.periodic, axes[a], sizeof o.periodic);
      char label[64];
      snprintf(label, sizeof label, "box 4x3x2 periodic %s", a == 0 ? "x" : a == 1 ? "x,y" : "x,y,z");
      run_box(comm, rank, o, ps[i], label);
    }
  /* two elements along a periodic axis, the smallest allowed */
  hx_mesh_box_opts t = o;
  t.nx = 2, t.ny = 2, t.nz = 3;
  t.periodic[0] = t.periodic[1] = t.periodic[2] = 1;
  run_box(comm, rank, t, 3, "box 2x2x3 fully periodic");
  t.partitioner = HX_PART_METIS; /* the dual graph has two faces between one pair of elements */
  run_box(comm, rank, t, 2, "box 2x2x3 fully periodic, metis");
  /* deformed hex27: the deformation keeps the faces flat and moves opposite nodes alike */
  hx_mesh_box_opts d;
  hx_mesh_box_opts_default(&d);
  d.nx = 4, d.ny = 3, d.nz = 3, d.deform = 1, d.deform_amplitude = 0.08, d.geom_order = 2;
  d.periodic[0] = d.periodic[2] = 1;
  run_box(comm, rank, d, 3, "deformed hex27 box periodic x,z");
  /* Kershaw: y and z are compatible */
  hx_mesh_box_opts k;
  hx_mesh_box_opts_default(&k);
  k.nx = 6, k.ny = 4, k.nz = 4, k.kershaw_eps = 0.3;
  k.periodic[1] = k.periodic[2] = 1;
  run_box(comm, rank, k, 3, "Kershaw 6x4x4 periodic y,z");

  /* bad input */
  hx_mesh_box_opts b = o;
  b.periodic[0] = 0, b.periodic[1] = 0, b.periodic[2] = 1, b.nz = 1;
  expect_fail(comm, b, "one element along z", "periodic z: needs at least 2 elements along z (got 1)");
  k.periodic[0] = 1;
  expect_fail(comm, k, "Kershaw periodic x", "periodic x on a Kershaw mesh (eps 0.3 < 1)");
  snprintf(dir, sizeof dir, "t404-np%d.d", size);
  mt_fresh_dir(comm, dir);
  test_gmsh_files(comm, rank);
  test_gmsh_real(comm, rank);
  MPI_Finalize();
  return hx_test_result();
}
