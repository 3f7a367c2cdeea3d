/* Gather-scatter on meshes from the mesh module (hx_mesh_gll_ids): a
 * deformed box partitioned by RCB and an unstructured all-hex cylinder made
 * by gmsh (that part is skipped, with a note, when gmsh is missing), at
 * several orders, on 1-4 ranks. The references are geometric, independent
 * of the ids: all GLL points of all ranks are gathered on every rank, and
 * the L entries at the same point (coordinates rounded to 1e-9) are counted.
 *  - n_global equals hx_mesh_num_global_gll and the number of distinct points;
 *  - the multiplicity of every L entry's node equals the number of L entries
 *    at its point over all ranks; sum of n_owned = n_global;
 *  - assembled coordinates / multiplicity give back every L entry's point;
 *  - the distributed dot of the all-ones vector is n_global exactly and the
 *    dot of x and y equals the serial one over the distinct points;
 *  - hx_mesh_gll_private's promise holds (every point of a node it flags is
 *    held by this rank alone) and hx_gs_create_private with its flags builds
 *    the handle hx_gs_create builds (sizes, ids, map, multiplicities), also
 *    on a periodic box, where the points cannot tell shared ids apart. */
#include <sys/stat.h>
#include <unistd.h>

#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_mesh.h"
#include "hx_test.h"
#include "hx_test_geo.h"

typedef struct {
  int64_t k[3];
  int64_t idx; /* global L index */
} pkey;

static int cmp_pkey(const void *a, const void *b) {
  const pkey *x = (const pkey *)a, *y = (const pkey *)b;
  for (int d = 0; d < 3; d++)
    if (x->k[d] != y->k[d]) return x->k[d] < y->k[d] ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* hx_gs_create_private with hx_mesh_gll_private's flags against hx_gs_create:
 * the same handle, and a smaller rendezvous (fewer ids through it) */
static int check_private(hx_backend b, hx_mesh m, int p, const char *label, const int64_t *ids,
                         const uint8_t *priv, hx_gs ref) {
  MPI_Comm comm = MPI_COMM_WORLD;
  const int n = p + 1;
  const int64_t nl = (int64_t)hx_mesh_num_elements(m) * n * n * n;
  hx_gs gs = NULL;
  HX_TCALL(hx_gs_create_private(b, comm, nl, ids, priv, &gs));
  const int64_t ng = hx_gs_num_local(ref);
  HX_ASSERT(hx_gs_num_local(gs) == ng && hx_gs_num_owned(gs) == hx_gs_num_owned(ref) &&
                hx_gs_num_shared(gs) == hx_gs_num_shared(ref) &&
                hx_gs_num_global(gs) == hx_gs_num_global(ref),
            "%s p=%d: private setup sizes %lld/%lld/%lld/%lld, plain %lld/%lld/%lld/%lld", label, p,
            (long long)hx_gs_num_local(gs), (long long)hx_gs_num_owned(gs), (long long)hx_gs_num_shared(gs),
            (long long)hx_gs_num_global(gs), (long long)ng, (long long)hx_gs_num_owned(ref),
            (long long)hx_gs_num_shared(ref), (long long)hx_gs_num_global(ref));
  if (hx_gs_num_local(gs) == ng) {
    int64_t bad = 0;
    for (int64_t r = 0; r < ng; r++) bad += hx_gs_global_ids(gs)[r] != hx_gs_global_ids(ref)[r];
    for (int64_t i = 0; i < nl; i++) bad += hx_gs_map_host(gs)[i] != hx_gs_map_host(ref)[i];
    double *ma = malloc(sizeof(double) * (size_t)(ng + 1)), *mb = malloc(sizeof(double) * (size_t)(ng + 1));
    HX_TCALL(hx_mem_to_host(b, ma, hx_gs_multiplicity(gs), (size_t)ng * 8));
    HX_TCALL(hx_mem_to_host(b, mb, hx_gs_multiplicity(ref), (size_t)ng * 8));
    for (int64_t r = 0; r < ng; r++) bad += ma[r] != mb[r];
    free(ma), free(mb);
    HX_ASSERT(bad == 0, "%s p=%d: %lld ids, map entries or multiplicities differ with the private flags",
              label, p, (long long)bad);
  }
  /* the flags must cover the element interiors at least (p >= 2) */
  int64_t nflag = 0;
  for (int64_t i = 0; i < nl; i++) nflag += priv[i] != 0;
  const int64_t inner = (int64_t)hx_mesh_num_elements(m) * (p - 1) * (p - 1) * (p - 1);
  HX_ASSERT(nflag >= inner, "%s p=%d: %lld L entries flagged private, fewer than the %lld interior ones",
            label, p, (long long)nflag, (long long)inner);
  HX_TCALL(hx_gs_destroy(&gs));
  return 0;
}

static int check_mesh(hx_backend b, hx_mesh m, int p, const char *label) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = p + 1;
  const int64_t nl = (int64_t)hx_mesh_num_elements(m) * n * n * n;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)(nl + 1));
  double *xyz[3];
  for (int d = 0; d < 3; d++) xyz[d] = malloc(sizeof(double) * (size_t)(nl + 1));
  HX_TCALL(hx_mesh_gll_ids(m, p, ids));
  HX_TCALL(hx_mesh_gll_coords(m, p, xyz[0], xyz[1], xyz[2]));
  hx_gs gs = NULL;
  HX_TCALL(hx_gs_create(b, comm, nl, ids, &gs));
  const int64_t ng = hx_gs_num_local(gs), nglob = hx_gs_num_global(gs);

  /* all points of all ranks, on every rank */
  int cnt = (int)nl, *cnts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  MPI_Allgather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, comm);
  int64_t tot = 0, off = 0;
  for (int r = 0; r < size; r++) displs[r] = (int)tot, tot += cnts[r];
  off = displs[rank];
  double *all[3];
  for (int d = 0; d < 3; d++) {
    all[d] = malloc(sizeof(double) * (size_t)(tot + 1));
    MPI_Allgatherv(xyz[d], cnt, MPI_DOUBLE, all[d], cnts, displs, MPI_DOUBLE, comm);
  }
  pkey *keys = malloc(sizeof(pkey) * (size_t)(tot + 1));
  for (int64_t i = 0; i < tot; i++) {
    for (int d = 0; d < 3; d++) keys[i].k[d] = (int64_t)llround(all[d][i] * 1e9);
    keys[i].idx = i;
  }
  qsort(keys, (size_t)tot, sizeof(pkey), cmp_pkey);
  /* the private flags of all ranks: a flagged entry's point has entries of its rank only */
  uint8_t *priv = malloc((size_t)(nl + 1)), *allpriv = malloc((size_t)(tot + 1));
  HX_TCALL(hx_mesh_gll_private(m, p, priv));
  MPI_Allgatherv(priv, cnt, MPI_UINT8_T, allpriv, cnts, displs, MPI_UINT8_T, comm);
  int64_t broken = 0;
  for (int64_t a = 0; a < tot;) {
    int64_t e = a + 1;
    while (e < tot && !memcmp(keys[e].k, keys[a].k, sizeof keys[a].k)) e++;
    int rmin = size, rmax = -1, flagged = 0;
    for (int64_t j = a; j < e; j++) {
      int r = 0;
      while (r + 1 < size && displs[r + 1] <= keys[j].idx) r++;
      rmin = r < rmin ? r : rmin, rmax = r > rmax ? r : rmax;
      flagged |= allpriv[keys[j].idx];
    }
    broken += flagged && rmin != rmax;
    a = e;
  }
  HX_ASSERT(broken == 0, "%s p=%d: %lld points flagged private are held by more than one rank", label, p,
            (long long)broken);
  check_private(b, m, p, label, ids, priv, gs);
  free(priv), free(allpriv);
  int *pmult = malloc(sizeof(int) * (size_t)(tot + 1)); /* per global L index */
  int64_t npts = 0;
  for (int64_t a = 0; a < tot;) {
    int64_t e = a + 1;
    while (e < tot && !memcmp(keys[e].k, keys[a].k, sizeof keys[a].k)) e++;
    for (int64_t j = a; j < e; j++) pmult[keys[j].idx] = (int)(e - a);
    npts++;
    a = e;
  }
  HX_ASSERT(nglob == hx_mesh_num_global_gll(m, p), "%s p=%d: n_global %lld, mesh says %lld", label, p,
            (long long)nglob, (long long)hx_mesh_num_global_gll(m, p));
  HX_ASSERT(nglob == npts, "%s p=%d: n_global %lld, distinct points %lld", label, p, (long long)nglob,
            (long long)npts);
  int64_t no = hx_gs_num_owned(gs), sno = 0;
  MPI_Allreduce(&no, &sno, 1, MPI_INT64_T, MPI_SUM, comm);
  HX_ASSERT(sno == nglob, "%s p=%d: sum of owned %lld != %lld", label, p, (long long)sno, (long long)nglob);

  void *dl = NULL, *dg = NULL, *dg2 = NULL;
  HX_TCALL(hx_mem_alloc(b, (size_t)(nl + 1) * 8, &dl));
  HX_TCALL(hx_mem_alloc(b, (size_t)(ng + 1) * 8, &dg));
  HX_TCALL(hx_mem_alloc(b, (size_t)(ng + 1) * 8, &dg2));
  double *hl = malloc(sizeof(double) * (size_t)(nl + 1)), *hg = malloc(sizeof(double) * (size_t)(ng + 1));

  /* multiplicity per L entry = L entries at that point, all ranks */
  HX_TCALL(hx_gs_scatter(gs, hx_gs_multiplicity(gs), (double *)dl));
  HX_TCALL(hx_mem_to_host(b, hl, dl, (size_t)nl * 8));
  int64_t bad = 0;
  for (int64_t i = 0; i < nl; i++) bad += hl[i] != (double)pmult[off + i];
  HX_ASSERT(bad == 0, "%s p=%d: %lld L entries with a wrong multiplicity", label, p, (long long)bad);

  /* assembled coordinates / multiplicity = the point of every copy */
  double worst = 0;
  for (int d = 0; d < 3; d++) {
    HX_TCALL(hx_mem_to_device(b, dl, xyz[d], (size_t)nl * 8));
    HX_TCALL(hx_gs_assemble(gs, (const double *)dl, (double *)dg));
    HX_TCALL(hx_array_pointwise_mult(b, ng, (double *)dg, (const double *)dg, hx_gs_inv_multiplicity(gs)));
    HX_TCALL(hx_gs_scatter(gs, (const double *)dg, (double *)dl));
    HX_TCALL(hx_mem_to_host(b, hl, dl, (size_t)nl * 8));
    for (int64_t i = 0; i < nl; i++) worst = fmax(worst, fabs(hl[i] - xyz[d][i]));
  }
  HX_ASSERT(worst < 1e-12, "%s p=%d: averaged coordinates differ from the points by %g", label, p, worst);

  /* dots: ones . ones = n_global exactly; x . y = serial dot over points */
  for (int64_t r = 0; r < ng; r++) hg[r] = 1.0;
  HX_TCALL(hx_mem_to_device(b, dg, hg, (size_t)ng * 8));
  double d1 = 0;
  HX_TCALL(hx_gs_dot(gs, (const double *)dg, (const double *)dg, &d1));
  HX_ASSERT(d1 == (double)nglob, "%s p=%d: ones.ones = %.17g != %lld", label, p, d1, (long long)nglob);
  for (int d = 0; d < 2; d++) {
    HX_TCALL(hx_mem_to_device(b, dl, xyz[d], (size_t)nl * 8));
    HX_TCALL(hx_gs_assemble(gs, (const double *)dl, d ? (double *)dg2 : (double *)dg));
    HX_TCALL(hx_array_pointwise_mult(b, ng, d ? (double *)dg2 : (double *)dg,
                                     d ? (const double *)dg2 : (const double *)dg,
                                     hx_gs_inv_multiplicity(gs)));
  }
  double dxy = 0;
  HX_TCALL(hx_gs_dot(gs, (const double *)dg, (const double *)dg2, &dxy));
  long double ref = 0, rabs = 0;
  for (int64_t a = 0; a < tot; a++)
    if (a == 0 || memcmp(keys[a].k, keys[a - 1].k, sizeof keys[a].k)) {
      int64_t i = keys[a].idx;
      ref += (long double)all[0][i] * all[1][i];
      rabs += fabsl((long double)all[0][i] * all[1][i]);
    }
  HX_ASSERT(fabs(dxy - (double)ref) <= 1e-12 * (double)rabs + 1e-14, "%s p=%d: x.y %.17g serial %.17g", label,
            p, dxy, (double)ref);

  hx_mem_free(b, &dl), hx_mem_free(b, &dg), hx_mem_free(b, &dg2);
  free(hl), free(hg), free(keys), free(pmult), free(cnts), free(displs), free(ids);
  for (int d = 0; d < 3; d++) free(xyz[d]), free(all[d]);
  HX_TCALL(hx_gs_destroy(&gs));
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  hx_backend b = NULL;
  /* no device: a skip */
  if (hx_test_backends(argc, argv, &b, NULL)) {
    hx_error_print(stderr, rank, 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* deformed box, RCB */
  {
    hx_mesh_box_opts o;
    hx_mesh_box_opts_default(&o);
    o.nx = 3, o.ny = 2, o.nz = 3;
    o.deform = 1;
    hx_mesh m = NULL;
    if (hx_mesh_create_box(MPI_COMM_WORLD, &o, &m)) {
      hx_error_print(stderr, rank, 1);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int p = 1; p <= 5; p += 2) check_mesh(b, m, p, "deformed box");
    hx_mesh_destroy(&m);
  }
  /* periodic box (x and z wrap): the private flags against the plain setup */
  {
    hx_mesh_box_opts o;
    hx_mesh_box_opts_default(&o);
    o.nx = 4, o.ny = 3, o.nz = 2;
    o.periodic[0] = o.periodic[2] = 1;
    hx_mesh m = NULL;
    if (hx_mesh_create_box(MPI_COMM_WORLD, &o, &m)) {
      hx_error_print(stderr, rank, 1);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int p = 1; p <= 4; p += 3) {
      const int n = p + 1;
      const int64_t nl = (int64_t)hx_mesh_num_elements(m) * n * n * n;
      int64_t *ids = malloc(sizeof(int64_t) * (size_t)(nl + 1));
      uint8_t *priv = malloc((size_t)(nl + 1));
      hx_gs ref = NULL;
      HX_TCALL(hx_mesh_gll_ids(m, p, ids));
      HX_TCALL(hx_mesh_gll_private(m, p, priv));
      HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, nl, ids, &ref));
      check_private(b, m, p, "periodic box", ids, priv, ref);
      HX_TCALL(hx_gs_destroy(&ref));
      free(ids), free(priv);
    }
    hx_mesh_destroy(&m);
  }
  /* gmsh cylinder (unstructured in the plane) */
  {
    char dir[64], msh[128];
    snprintf(dir, sizeof dir, "t141-np%d.d", size);
    snprintf(msh, sizeof msh, "%s/cyl.msh", dir);
    int ok = 1;
    if (rank == 0) {
      mkdir(dir, 0755);
      ok = system("command -v gmsh > /dev/null 2>&1") == 0 &&
           hx_test_gmsh(dir, "cyl.geo", hx_test_disk_geo, "-format msh22", "cyl.msh") == 0;
      if (!ok) printf("note: gmsh not available or failed: the Gmsh-mesh part is skipped\n");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) {
      hx_mesh m = NULL;
      if (hx_mesh_create_gmsh(MPI_COMM_WORLD, msh, HX_PART_RCB, &m)) {
        hx_error_print(stderr, rank, 1);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      for (int p = 2; p <= 4; p += 2) check_mesh(b, m, p, "gmsh cylinder");
      hx_mesh_destroy(&m);
    }
  }
  hx_backend_destroy(&b);
  return hx_test_mpi_finish(0);
}
