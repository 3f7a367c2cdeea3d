/* The connected components of a mesh and which of them float (issue 53,
 * defect 4; see hx_disc.h). Elements are joined when they share a vertex
 * of the global Q1 numbering (hx_mesh_element_vertex_ids: periodic
 * identification included), which is exactly when they share a GLL node
 * and so are coupled by the operator. Each rank first joins its own
 * elements (union-find over its G entries of a host gather-scatter of the
 * vertex ids), labels each local piece with the smallest global element id
 * in it, then the labels are made consistent across ranks by exchanges
 * with min over the shared vertices until no label changes: the rounds
 * are bounded by the number of ranks a component crosses in a chain, not
 * by its size in elements. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"

static int32_t uf_find(int32_t *parent, int32_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

static void uf_union(int32_t *parent, int32_t a, int32_t b) {
  a = uf_find(parent, a), b = uf_find(parent, b);
  if (a != b) parent[a < b ? b : a] = a < b ? a : b;
}

enum { NREC = 10 }; /* label, elements, fixed, lo[3], hi[3], (pad) */

static int cmp_rec(const void *a, const void *b) {
  const double x = ((const double *)a)[0], y = ((const double *)b)[0];
  return (x > y) - (x < y);
}

/* The labels (smallest global element id of the component) per local element. */
static int element_labels(hx_mesh m, MPI_Comm comm, double *elab) {
  const int32_t E = hx_mesh_num_elements(m);
  const int64_t *vid = hx_mesh_element_vertex_ids(m), *gid = hx_mesh_element_global_ids(m);
  hx_backend hb = NULL;
  hx_gs gs = NULL;
  int64_t *ids = NULL;
  int32_t *parent = NULL;
  double *lab = NULL, *d_lab = NULL;
  int err = hx_backend_create("host", &hb);
  if (!err) err = HX_ALLOC(&ids, (int64_t)E * 8 + 1);
  for (int64_t i = 0; !err && i < (int64_t)E * 8; i++) ids[i] = vid[i] + 1; /* gs ids are 1-based */
  if (!err) err = hx_gs_create(hb, comm, (int64_t)E * 8, ids, &gs);
  const int64_t ng = err ? 0 : hx_gs_num_local(gs);
  const int32_t *map = err ? NULL : hx_gs_map_host(gs);
  if (!err) err = HX_ALLOC(&parent, ng + 1);
  if (!err) err = HX_ALLOC(&lab, ng + 1);
  if (!err) err = hx_mem_alloc(hb, sizeof(double) * (size_t)(ng + 1), (void **)&d_lab);
  if (!err) {
    for (int64_t g = 0; g < ng; g++) parent[g] = (int32_t)g, lab[g] = DBL_MAX;
    for (int32_t e = 0; e < E; e++)
      for (int v = 1; v < 8; v++) uf_union(parent, map[8 * (int64_t)e], map[8 * (int64_t)e + v]);
    for (int32_t e = 0; e < E; e++) {
      const int32_t r = uf_find(parent, map[8 * (int64_t)e]);
      lab[r] = fmin(lab[r], (double)gid[e]);
    }
    for (int64_t g = 0; g < ng; g++) lab[g] = lab[uf_find(parent, (int32_t)g)];
  }
  for (int changed = 1; !err && changed;) {
    err = hx_mem_to_device(hb, d_lab, lab, sizeof(double) * (size_t)ng);
    if (!err) err = hx_gs_exchange(gs, d_lab, HX_GS_MIN);
    if (!err) err = hx_mem_to_host(hb, lab, d_lab, sizeof(double) * (size_t)ng);
    int loc = 0;
    for (int64_t g = 0; !err && g < ng; g++) { /* a smaller label from another rank: the whole local piece */
      const int32_t r = uf_find(parent, (int32_t)g);
      if (lab[g] < lab[r]) lab[r] = lab[g], loc = 1;
    }
    for (int64_t g = 0; !err && g < ng; g++) lab[g] = lab[uf_find(parent, (int32_t)g)];
    if (!err && MPI_Allreduce(&loc, &changed, 1, MPI_INT, MPI_LOR, comm) != MPI_SUCCESS)
      err = HX_ERROR(HX_ERR_MPI, "MPI_Allreduce of the component labels failed");
  }
  for (int32_t e = 0; !err && e < E; e++) elab[e] = lab[map[8 * (int64_t)e]];
  if (hb) hx_mem_free(hb, (void **)&d_lab);
  hx_gs_destroy(&gs);
  hx_backend_destroy(&hb);
  free(ids), free(parent), free(lab);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_mesh_components(hx_mesh m, const int *h_fixed, int *ncomp, hx_mesh_component **comps) {
  *ncomp = 0, *comps = NULL;
  MPI_Comm comm = hx_mesh_comm(m);
  const int32_t E = hx_mesh_num_elements(m);
  const int npe = hx_mesh_nodes_per_element(m);
  const double *xyz = hx_mesh_element_nodes(m);
  double *elab = NULL, *rec = NULL, *all = NULL;
  int *counts = NULL, *displs = NULL, size = 1, nloc = 0, last = 0;
  int err = HX_ALLOC(&elab, E + 1);
  if (!err) err = element_labels(m, comm, elab);
  /* one record per local piece of a component (a component may have several on a rank) */
  if (!err) err = HX_ALLOC(&rec, (int64_t)NREC * (E + 1));
  for (int32_t e = 0; !err && e < E; e++) {
    int k = last < nloc && rec[NREC * last] == elab[e] ? last : 0; /* runs of one component: O(E) */
    while (k < nloc && rec[NREC * k] != elab[e]) k++;              /* else few components per rank */
    last = k;
    double *r = rec + NREC * k;
    if (k == nloc) {
      nloc++;
      r[0] = elab[e], r[1] = 0.0, r[2] = 0.0;
      for (int c = 0; c < 3; c++) r[3 + c] = DBL_MAX, r[6 + c] = -DBL_MAX;
      r[9] = 0.0;
    }
    r[1] += 1.0;
    if (h_fixed && h_fixed[e]) r[2] = 1.0;
    for (int q = 0; q < npe; q++)
      for (int c = 0; c < 3; c++) {
        const double x = xyz[((int64_t)e * npe + q) * 3 + c];
        r[3 + c] = fmin(r[3 + c], x), r[6 + c] = fmax(r[6 + c], x);
      }
  }
  if (!err && MPI_Comm_size(comm, &size) != MPI_SUCCESS) err = HX_ERROR(HX_ERR_MPI, "MPI_Comm_size failed");
  if (!err) err = HX_ALLOC(&counts, size);
  if (!err) err = HX_ALLOC(&displs, size);
  int n = NREC * nloc, total = 0;
  if (!err && MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm) != MPI_SUCCESS)
    err = HX_ERROR(HX_ERR_MPI, "MPI_Allgather of the component counts failed");
  for (int i = 0; !err && i < size; i++) displs[i] = total, total += counts[i];
  if (!err) err = HX_ALLOC(&all, total + 1);
  if (!err && MPI_Allgatherv(rec, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, comm) != MPI_SUCCESS)
    err = HX_ERROR(HX_ERR_MPI, "MPI_Allgatherv of the components failed");
  /* merge the pieces of each label: the same result on every rank */
  const int nrec = total / NREC;
  if (!err) qsort(all, (size_t)nrec, sizeof(double) * NREC, cmp_rec);
  int nc = 0;
  for (int i = 0; !err && i < nrec; i++) nc += i == 0 || all[NREC * i] != all[NREC * (i - 1)];
  hx_mesh_component *c = NULL;
  if (!err) err = HX_ALLOC(&c, nc + 1);
  for (int i = 0, k = -1; !err && i < nrec; i++) {
    const double *r = all + NREC * i;
    if (i == 0 || r[0] != all[NREC * (i - 1)]) {
      k++;
      c[k].first_element = (int64_t)r[0];
      for (int d = 0; d < 3; d++) c[k].lo[d] = DBL_MAX, c[k].hi[d] = -DBL_MAX;
    }
    c[k].elements += (int64_t)r[1];
    c[k].fixed |= r[2] != 0.0;
    for (int d = 0; d < 3; d++)
      c[k].lo[d] = fmin(c[k].lo[d], r[3 + d]), c[k].hi[d] = fmax(c[k].hi[d], r[6 + d]);
  }
  free(elab), free(rec), free(all), free(counts), free(displs);
  if (err) {
    free(c);
    HX_CALL(err);
  }
  *ncomp = nc, *comps = c;
  return HX_SUCCESS;
}

int hx_disc_fixed_elements(hx_disc d, int *h_fixed) {
  const int32_t E = hx_disc_num_elements(d);
  const int p = hx_disc_order(d), n3 = (p + 1) * (p + 1) * (p + 1);
  const int *df = hx_disc_dirichlet_faces(d);
  const double *lam = hx_disc_lambda(d), *rl = hx_disc_robin_l(d);
  for (int32_t e = 0; e < E; e++) {
    int f = lam && lam[e] > 0.0;
    for (int k = 0; !f && df && k < 6; k++) f = df[6 * (int64_t)e + k] != 0;
    for (int q = 0; !f && rl && q < n3; q++) f = rl[(int64_t)e * n3 + q] > 0.0;
    h_fixed[e] = f;
  }
  return HX_SUCCESS;
}
