/* Global GLL numbering of box meshes on 1..4 ranks with both partitioners:
 * - ids are exactly 1..N with N = (nx p+1)(ny p+1)(nz p+1);
 * - all copies of an id have the same coordinates;
 * - the point set equals the analytic tensor GLL grid of the box;
 * - the (id, coordinates) set equals the one of a single-rank mesh;
 * - Kershaw (eps = 0.3) meshes: same ids, coordinates = Kershaw map of the
 *   box points (exact for trilinear elements), positive Jacobians. */
#include "mesh_test.h"

static int cmp_pt(const void *pa, const void *pb) {
  const long long *a = pa, *b = pb;
  for (int d = 0; d < 3; d++)
    if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
  return 0;
}

/* the analytic GLL grid of the box vs the unique mesh points */
static void check_grid(const hx_mesh_box_opts *o, int p, const mt_node *u, int64_t N) {
  double t[16], w[16];
  hx_gll(p + 1, t, w);
  int nn[3] = {o->nx * p + 1, o->ny * p + 1, o->nz * p + 1};
  long long *a = malloc(sizeof(long long) * 3 * N), *b = malloc(sizeof(long long) * 3 * N);
  int64_t k = 0;
  for (int K = 0; K < nn[2]; K++)
    for (int J = 0; J < nn[1]; J++)
      for (int I = 0; I < nn[0]; I++) {
        int idx[3] = {I, J, K}, ne[3] = {o->nx, o->ny, o->nz};
        for (int d = 0; d < 3; d++) {
          int e = idx[d] / p, i = idx[d] % p;
          if (e == ne[d]) e--, i = p;
          double h = (o->extent[d][1] - o->extent[d][0]) / ne[d];
          double x = o->extent[d][0] + h * (e + 0.5 * (1.0 + t[i]));
          a[3 * k + d] = llround(x * 1e9);
        }
        k++;
      }
  for (int64_t i = 0; i < N; i++)
    for (int d = 0; d < 3; d++) b[3 * i + d] = llround(u[i].x[d] * 1e9);
  qsort(a, (size_t)N, 3 * sizeof(long long), cmp_pt);
  qsort(b, (size_t)N, 3 * sizeof(long long), cmp_pt);
  int64_t bad = 0;
  for (int64_t i = 0; i < N; i++)
    if (cmp_pt(&a[3 * i], &b[3 * i]) && bad++ < 3)
      HX_ASSERT(0, "p=%d: point %lld: mesh (%lld %lld %lld)e-9 analytic (%lld %lld %lld)e-9", p, (long long)i,
                b[3 * i], b[3 * i + 1], b[3 * i + 2], a[3 * i], a[3 * i + 1], a[3 * i + 2]);
  free(a), free(b);
}

static int run_case(MPI_Comm comm, int rank, hx_mesh_box_opts o, int p, const char *label) {
  /* single-rank reference */
  mt_node *ref = NULL, *box = NULL;
  int64_t nref = 0, nbox = 0, Nref = 0, Nbox = 0;
  const int64_t Nexp = (int64_t)(o.nx * p + 1) * (o.ny * p + 1) * (o.nz * p + 1);
  if (rank == 0) {
    hx_mesh ms;
    HX_TCALL(hx_mesh_create_box(MPI_COMM_SELF, &o, &ms));
    HX_TCALL(mt_gather(ms, p, &ref, &nref));
    Nref = mt_unique(ref, nref, 1e-13);
    HX_ASSERT(Nref == Nexp, "%s p=%d: %lld unique ids, expected %lld", label, p, (long long)Nref,
              (long long)Nexp);
    HX_ASSERT(hx_mesh_num_global_gll(ms, p) == Nexp, "%s: num_global_gll %lld", label,
              (long long)hx_mesh_num_global_gll(ms, p));
    hx_mesh_destroy(&ms);
    if (o.kershaw_eps == 1.0 && !o.deform) check_grid(&o, p, ref, Nref);
    if (o.kershaw_eps != 1.0) {
      /* the box with the same elements has the same ids */
      hx_mesh_box_opts ob = o;
      ob.kershaw_eps = 1.0;
      HX_TCALL(hx_mesh_create_box(MPI_COMM_SELF, &ob, &ms));
      HX_TCALL(mt_gather(ms, p, &box, &nbox));
      Nbox = mt_unique(box, nbox, 1e-13);
      hx_mesh_destroy(&ms);
      HX_ASSERT(Nbox == Nref, "box %lld vs kershaw %lld ids", (long long)Nbox, (long long)Nref);
      int bad = 0;
      for (int64_t i = 0; i < Nref && i < Nbox; i++) {
        double X[3];
        hx_mesh_kershaw_map(o.kershaw_eps, box[i].x, X);
        for (int d = 0; d < 3; d++)
          if (fabs(X[d] - ref[i].x[d]) > 1e-14 && bad++ < 3)
            HX_ASSERT(0, "%s p=%d id %lld: mesh %.17g, Kershaw map of the box point %.17g", label, p,
                      (long long)ref[i].id, ref[i].x[d], X[d]);
      }
      free(box);
    }
  }
  for (int part = 0; part < 2; part++) {
    o.partitioner = part ? HX_PART_METIS : HX_PART_RCB;
    hx_mesh m;
    HX_TCALL(hx_mesh_create_box(comm, &o, &m));
    int64_t nl = hx_mesh_num_elements(m), ng = 0;
    MPI_Allreduce(&nl, &ng, 1, MPI_INT64_T, MPI_SUM, comm);
    HX_ASSERT(ng == (int64_t)o.nx * o.ny * o.nz, "elements over ranks %lld", (long long)ng);
    mt_node *all = NULL;
    int64_t n = 0;
    HX_TCALL(mt_gather(m, p, &all, &n));
    if (rank == 0) {
      int64_t N = mt_unique(all, n, 1e-13);
      HX_ASSERT(N == Nexp, "%s p=%d %s: %lld unique ids, expected %lld", label, p, part ? "metis" : "rcb",
                (long long)N, (long long)Nexp);
      int bad = 0;
      for (int64_t i = 0; i < N && i < Nref; i++)
        for (int d = 0; d < 3; d++)
          if (all[i].x[d] != ref[i].x[d] && bad++ < 3)
            HX_ASSERT(0, "%s p=%d %s: id %lld coordinate %d: %.17g here, %.17g on one rank", label, p,
                      part ? "metis" : "rcb", (long long)all[i].id, d, all[i].x[d], ref[i].x[d]);
    }
    free(all);
    hx_mesh_destroy(&m);
  }
  free(ref);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  hx_mesh_box_opts o = mt_box(3, 4, 5);
  o.extent[0][0] = -1, o.extent[0][1] = 2;
  o.extent[1][0] = 0, o.extent[1][1] = 0.5;
  o.extent[2][0] = 0.25, o.extent[2][1] = 1.5;
  const int ps[4] = {1, 2, 3, 5};
  for (int i = 0; i < 4; i++)
    if (run_case(MPI_COMM_WORLD, rank, o, ps[i], "box 3x4x5")) break;
  /* hex27 geometry, deformed */
  hx_mesh_box_opts d;
  hx_mesh_box_opts_default(&d);
  d.nx = 4, d.ny = 3, d.nz = 2, d.deform = 1, d.deform_amplitude = 0.08, d.geom_order = 2;
  run_case(MPI_COMM_WORLD, rank, d, 4, "deformed hex27 box 4x3x2");
  /* the Kershaw map: identity at eps = 1; hand-computed values at eps = 0.3
   * (layer 0 uses left(e, y) = 1 - right(e, 1 - y), layer 5 right(e, y)) */
  {
    hx_test_rng rng = {99};
    double worst = 0;
    for (int i = 0; i < 1000; i++) {
      double x[3], X[3];
      for (int d = 0; d < 3; d++) x[d] = 0.5 * (hx_test_rand(&rng) + 1);
      hx_mesh_kershaw_map(1.0, x, X);
      for (int d = 0; d < 3; d++) worst = fmax(worst, fabs(X[d] - x[d]));
    }
    HX_ASSERT(worst <= 2.3e-16, "Kershaw map at eps = 1 moves points by %g", worst);
    const double x0[3] = {0.1, 0.25, 0.75}, x5[3] = {0.95, 0.25, 0.75}, x2[3] = {2.5 / 6, 0.25, 0.75};
    double X[3];
    hx_mesh_kershaw_map(0.3, x0, X);
    HX_ASSERT(fabs(X[0] - 0.1) < 1e-15 && fabs(X[1] - 0.075) < 1e-15 && fabs(X[2] - 0.575) < 1e-15,
              "Kershaw layer 0: (%.17g %.17g %.17g), expected (0.1 0.075 0.575)", X[0], X[1], X[2]);
    hx_mesh_kershaw_map(0.3, x5, X);
    HX_ASSERT(fabs(X[1] - 0.425) < 1e-15 && fabs(X[2] - 0.925) < 1e-15,
              "Kershaw layer 5: (%.17g %.17g), expected (0.425 0.925)", X[1], X[2]);
    /* layer 2 at s = 1/2: blend(right, left, 1/4) */
    hx_mesh_kershaw_map(0.3, x2, X);
    double r = 0.425, l = 0.075;
    HX_ASSERT(fabs(X[1] - (r + (l - r) * 0.25)) < 1e-15, "Kershaw layer 2: %.17g, expected %.17g", X[1],
              r + (l - r) * 0.25);
  }
  /* Kershaw */
  hx_mesh_box_opts k;
  hx_mesh_box_opts_default(&k);
  k.nx = 6, k.ny = 4, k.nz = 2, k.kershaw_eps = 0.3;
  run_case(MPI_COMM_WORLD, rank, k, 3, "kershaw 6x4x2");
  int fail = mt_all_ok(MPI_COMM_WORLD);
  MPI_Finalize();
  return fail;
}
