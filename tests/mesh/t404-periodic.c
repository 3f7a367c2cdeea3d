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
    for (int d = 0; d < 3; d++) (*out)[i].w[d] = wrap(all[i].x[d], o->extent[d][0], o->extent[d][1], o->periodic[d]);
  }
  free(all);
  *n = na;
  qsort(*out, (size_t)na, sizeof(wnode), cmp_idw);
  return 0;
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
    HX_ASSERT(hx_mesh_tag_is_periodic(m, tmin) == o.periodic[d] && hx_mesh_tag_is_periodic(m, tmin + 1) == o.periodic[d],
              "%s: tag %s periodic flag %d", label, hx_mesh_tag_name(m, tmin), hx_mesh_tag_is_periodic(m, tmin));
    if (o.periodic[d]) npexp += (int64_t)ne[(d + 1) % 3] * ne[(d + 2) % 3];
  }
  nper = hx_mesh_num_periodic_faces(m);
  HX_ASSERT(nper == npexp, "%s: %lld periodic face pairs, expected %lld", label, (long long)nper, (long long)npexp);
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
          HX_ASSERT(0, "%s p=%d: point (%lld %lld %lld)e-9 has ids %lld and %lld", label, p, c[i].w[0], c[i].w[1],
                    c[i].w[2], (long long)c[i - 1].id, (long long)c[i].id);
        continue;
      }
      pts++;
    }
    HX_ASSERT(pts == Nexp, "%s p=%d: %lld distinct points modulo the periods, expected %lld", label, p,
              (long long)pts, (long long)Nexp);
    free(c);
    /* the same as on one rank */
    HX_TCALL(hx_mesh_create_box(MPI_COMM_SELF, &o, &ms));
    HX_TCALL(gather_wrapped(ms, p, &o, &ref, &nref));
    HX_ASSERT(nref == nw && !memcmp(ref, w, sizeof(wnode) * nw), "%s p=%d: (id, point) set differs from 1 rank",
              label, p);
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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  (void)argc, (void)argv;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hx_log_init(rank, HX_LOG_QUIET);
  MPI_Comm comm = MPI_COMM_WORLD;
  hx_mesh_box_opts o;
  hx_mesh_box_opts_default(&o);
  o.nx = 4, o.ny = 3, o.nz = 2;
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
  MPI_Finalize();
  return hx_test_result();
}
