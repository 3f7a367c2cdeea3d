/* Partition report against an independent count (gather every rank's GLL
 * ids on rank 0: a node is shared when another rank holds the same id; two
 * ranks are neighbours when they share a node), on 1..4 ranks with both
 * partitioners; the 2-rank box split exactly in half; Jacobian and element
 * size ranges of the box (exact), Kershaw and deformed meshes (positive). */
#include "mesh_test.h"

typedef struct {
  int64_t id;
  int64_t rank;
} idr;
static int cmp_idr(const void *a, const void *b) {
  const idr *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}
static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int check_report(MPI_Comm comm, hx_mesh m, int p, const char *label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  hx_mesh_report rep;
  HX_TCALL(hx_mesh_partition_report(m, p, &rep));
  const int64_t n3 = (int64_t)(p + 1) * (p + 1) * (p + 1), nl = hx_mesh_num_elements(m) * n3;
  int64_t *ids = malloc(sizeof(int64_t) * (nl + 1));
  HX_TCALL(hx_mesh_gll_ids(m, p, ids));
  qsort(ids, (size_t)nl, sizeof *ids, cmp_i64);
  int64_t u = 0;
  for (int64_t i = 0; i < nl; i++)
    if (i == 0 || ids[i] != ids[i - 1]) ids[u++] = ids[i];
  int cnt = (int)u, *cnts = NULL, *disp = NULL;
  if (rank == 0) cnts = calloc(size, sizeof(int)), disp = calloc(size, sizeof(int));
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, comm);
  int64_t tot = 0, *all = NULL;
  if (rank == 0) {
    for (int r = 0; r < size; r++) disp[r] = (int)tot, tot += cnts[r];
    all = malloc(sizeof(int64_t) * (tot + 1));
  }
  MPI_Gatherv(ids, cnt, MPI_INT64_T, all, cnts, disp, MPI_INT64_T, 0, comm);
  if (rank == 0) {
    idr *t = malloc(sizeof(idr) * (tot + 1));
    for (int r = 0; r < size; r++)
      for (int i = 0; i < cnts[r]; i++) t[disp[r] + i].id = all[disp[r] + i], t[disp[r] + i].rank = r;
    qsort(t, (size_t)tot, sizeof *t, cmp_idr);
    int64_t *shared = calloc(size, sizeof(int64_t));
    char *nb = calloc((size_t)size * size, 1);
    for (int64_t i = 0; i < tot;) {
      int64_t j = i + 1;
      while (j < tot && t[j].id == t[i].id) j++;
      if (j - i > 1)
        for (int64_t a = i; a < j; a++) {
          shared[t[a].rank]++;
          for (int64_t b = i; b < j; b++)
            if (a != b) nb[t[a].rank * size + t[b].rank] = 1;
        }
      i = j;
    }
    int64_t esum = 0, emax = 0;
    for (int r = 0; r < size; r++) {
      int nn = 0;
      for (int s = 0; s < size; s++) nn += nb[r * size + s];
      HX_ASSERT(rep.shared_per_rank[r] == shared[r], "%s: rank %d shares %lld nodes, independent count %lld",
                label, r, (long long)rep.shared_per_rank[r], (long long)shared[r]);
      HX_ASSERT(rep.nbr_count_per_rank[r] == nn, "%s: rank %d has %d neighbour ranks, independent count %d",
                label, r, rep.nbr_count_per_rank[r], nn);
      esum += rep.elems_per_rank[r];
      if (rep.elems_per_rank[r] > emax) emax = rep.elems_per_rank[r];
    }
    HX_ASSERT(esum == hx_mesh_num_global_elements(m), "%s: elements per rank sum to %lld", label,
              (long long)esum);
    HX_ASSERT(fabs(rep.imbalance - emax / ((double)esum / size)) < 1e-12, "%s: imbalance %g", label,
              rep.imbalance);
    free(t), free(shared), free(nb), free(all), free(cnts), free(disp);
  }
  free(ids);
  hx_mesh_report_free(&rep);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  hx_mesh_box_opts o = mt_box(5, 4, 3);
  for (int part = 0; part < 2; part++) {
    o.partitioner = part ? HX_PART_METIS : HX_PART_RCB;
    hx_mesh m;
    HX_TCALL(hx_mesh_create_box(comm, &o, &m));
    check_report(comm, m, 3, part ? "metis 5x4x3" : "rcb 5x4x3");
    check_report(comm, m, 1, part ? "metis 5x4x3 p1" : "rcb 5x4x3 p1");
    hx_mesh_destroy(&m);
  }
  if (size == 2) {
    /* RCB halves a 4x2x2 box at x = 1/2: 8 elements each, one neighbour, a
     * plane of (2p+1)^2 shared nodes */
    hx_mesh_box_opts_default(&o);
    o.nx = 4, o.ny = 2, o.nz = 2;
    hx_mesh m;
    HX_TCALL(hx_mesh_create_box(comm, &o, &m));
    hx_mesh_report rep;
    HX_TCALL(hx_mesh_partition_report(m, 3, &rep));
    HX_ASSERT(rep.elems_min == 8 && rep.elems_max == 8 && rep.imbalance == 1.0, "halves: %lld..%lld",
              (long long)rep.elems_min, (long long)rep.elems_max);
    HX_ASSERT(rep.nbr_ranks == 1 && rep.shared_nodes == 49,
              "halves: %d neighbours, %lld shared (expected 1, 49)", rep.nbr_ranks,
              (long long)rep.shared_nodes);
    hx_mesh_report_free(&rep);
    hx_mesh_destroy(&m);
  }
  /* Jacobians: affine box det J = hx hy hz / 8 everywhere, edges hx..hz */
  {
    hx_mesh_box_opts_default(&o);
    o.nx = 4, o.ny = 2, o.nz = 5;
    o.extent[0][1] = 2.0, o.extent[2][0] = -1.0;
    hx_mesh m;
    HX_TCALL(hx_mesh_create_box(comm, &o, &m));
    double jmin, jmax, hmin, hmax, J = (0.5 * 0.5 * 0.4) / 8;
    HX_TCALL(hx_mesh_check_jacobian(m, 5, &jmin, &jmax, &hmin, &hmax));
    HX_ASSERT(fabs(jmin - J) < 1e-15 && fabs(jmax - J) < 1e-15, "box: det J %.17g..%.17g, expected %.17g",
              jmin, jmax, J);
    HX_ASSERT(fabs(hmin - 0.4) < 1e-15 && fabs(hmax - 0.5) < 1e-15, "box: h %g..%g", hmin, hmax);
    hx_mesh_destroy(&m);
  }
  /* Kershaw (eps 0.3 and 0.05) and the deformed box: positive at p = 1..7 */
  const double eps[2] = {0.3, 0.05};
  for (int k = 0; k < 3; k++) {
    hx_mesh_box_opts_default(&o);
    o.nx = 6, o.ny = 4, o.nz = 4;
    if (k < 2)
      o.kershaw_eps = eps[k];
    else
      o.deform = 1, o.deform_amplitude = 0.1, o.geom_order = 2;
    hx_mesh m;
    HX_TCALL(hx_mesh_create_box(comm, &o, &m));
    for (int p = 1; p <= 7; p += 2) {
      double jmin, jmax;
      HX_TCALL(hx_mesh_check_jacobian(m, p, &jmin, &jmax, NULL, NULL));
      HX_ASSERT(jmin > 0 && jmax >= jmin, "case %d p=%d: det J %g..%g", k, p, jmin, jmax);
      if (k < 2) {
        /* min det J of the Kershaw map: the smallest element is (eps h)^2 h / 8 scaled */
        HX_ASSERT(jmin < jmax * 0.99, "kershaw eps %g: det J not varying (%g..%g)", eps[k], jmin, jmax);
      }
    }
    hx_mesh_destroy(&m);
  }
  int fail = mt_all_ok(comm);
  MPI_Finalize();
  return fail;
}
