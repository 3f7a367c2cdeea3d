/* Partitioners on rank 0: recursive coordinate bisection of the element
 * centroids (default) and METIS k-way on the element dual graph (faces). */
#ifdef HEXCG_HAVE_METIS
#include <metis.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

const char *hx_partitioner_name(hx_partitioner p) {
  switch (p) {
    case HX_PART_RCB: return "rcb";
    case HX_PART_METIS: return "metis";
    default: return NULL;
  }
}

int hx_partitioner_parse(const char *name, hx_partitioner *p) {
  if (name && !strcmp(name, "rcb"))
    *p = HX_PART_RCB;
  else if (name && !strcmp(name, "metis"))
    *p = HX_PART_METIS;
  else
    return HX_ERROR(HX_ERR_INPUT, "unknown partitioner '%s' (expected rcb or metis)", name ? name : "(null)");
  return HX_SUCCESS;
}

typedef struct {
  double c;
  int64_t e;
} rcb_key;

static int cmp_key(const void *pa, const void *pb) {
  const rcb_key *a = pa, *b = pb;
  if (a->c != b->c) return a->c < b->c ? -1 : 1;
  return a->e < b->e ? -1 : a->e > b->e;
}

/* elements idx[0..n) go to parts [p0, p0 + np) */
static void rcb(const double *cen, int64_t *idx, int64_t n, int p0, int np, int32_t *part, rcb_key *tmp) {
  if (np <= 1 || n == 0) {
    for (int64_t i = 0; i < n; i++) part[idx[i]] = p0;
    return;
  }
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (int64_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      double c = cen[idx[i] * 3 + d];
      if (c < lo[d]) lo[d] = c;
      if (c > hi[d]) hi[d] = c;
    }
  int dim = 0;
  for (int d = 1; d < 3; d++)
    if (hi[d] - lo[d] > hi[dim] - lo[dim]) dim = d;
  for (int64_t i = 0; i < n; i++) tmp[i].c = cen[idx[i] * 3 + dim], tmp[i].e = idx[i];
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_key);
  for (int64_t i = 0; i < n; i++) idx[i] = tmp[i].e;
  int nl = np / 2;
  int64_t nleft = (int64_t)((double)n * nl / np + 0.5);
  rcb(cen, idx, nleft, p0, nl, part, tmp);
  rcb(cen, idx + nleft, n - nleft, p0 + nl, np - nl, part, tmp);
}

static int part_rcb(hx_gmesh *g, int nparts) {
  double *cen = NULL;
  int64_t *idx = NULL;
  rcb_key *tmp = NULL;
  int err = HX_ALLOC(&cen, g->ne * 3);
  if (!err) err = HX_ALLOC(&idx, g->ne);
  if (!err) err = HX_ALLOC(&tmp, g->ne);
  if (!err) {
    const int q = g->npe == 8 ? 2 : 3;
    for (int64_t e = 0; e < g->ne; e++) {
      idx[e] = e;
      for (int v = 0; v < 8; v++) {
        int a = v & 1, b = (v >> 1) & 1, c = v >> 2;
        int node = a * (q - 1) + q * (b * (q - 1) + q * c * (q - 1));
        for (int d = 0; d < 3; d++) cen[e * 3 + d] += 0.125 * g->nodes[(e * g->npe + node) * 3 + d];
      }
    }
    rcb(cen, idx, g->ne, 0, nparts, g->part, tmp);
  }
  hx_free_host(&cen);
  hx_free_host(&idx);
  hx_free_host(&tmp);
  return err;
}

#ifndef HEXCG_HAVE_METIS
static int part_metis(hx_gmesh *g, int nparts) {
  (void)nparts;
  return HX_ERROR(HX_ERR_INPUT,
                  "%s: mesh.partitioner metis: this hexcg was built without METIS (HEXCG_METIS=OFF, or METIS not "
                  "found at configure time); use mesh.partitioner: rcb (the default), or rebuild with METIS "
                  "(-DMETIS_ROOT=<prefix>, docs/cluster.md)",
                  g->src);
}
#else
static int part_metis(hx_gmesh *g, int nparts) {
  HX_CHECK(g->ne < (int64_t)INT32_MAX / 6, HX_ERR_INPUT,
           "%s: %lld elements are too many for METIS with 32-bit indices; use the rcb partitioner", g->src,
           (long long)g->ne);
  idx_t nv = (idx_t)g->ne, ncon = 1, np = nparts, objval = 0;
  idx_t *xadj = NULL, *adj = NULL, *part = NULL;
  int err = HX_ALLOC(&xadj, g->ne + 1);
  if (!err) err = HX_ALLOC(&adj, g->ne * 6);
  if (!err) err = HX_ALLOC(&part, g->ne);
  if (!err) {
    idx_t k = 0;
    for (int64_t e = 0; e < g->ne; e++) {
      xadj[e] = k;
      for (int f = 0; f < 6; f++) {
        const int64_t nb = g->nbr[e * 6 + f];
        int dup = nb < 0; /* a periodic mesh with 2 elements across has two faces to one neighbour */
        for (idx_t j = xadj[e]; j < k && !dup; j++) dup = adj[j] == (idx_t)nb;
        if (!dup) adj[k++] = (idx_t)nb;
      }
    }
    xadj[g->ne] = k;
    idx_t opt[METIS_NOPTIONS];
    METIS_SetDefaultOptions(opt);
    opt[METIS_OPTION_SEED] = 4242;
    opt[METIS_OPTION_NUMBERING] = 0;
    opt[METIS_OPTION_CONTIG] = 0;
    int rc =
        METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &np, NULL, NULL, opt, &objval, part);
    if (rc != METIS_OK)
      err = HX_ERROR(HX_ERR_LIB, "%s: METIS_PartGraphKway failed (status %d) for %lld elements, %d parts",
                     g->src, rc, (long long)g->ne, nparts);
    else
      for (int64_t e = 0; e < g->ne; e++) g->part[e] = (int32_t)part[e];
  }
  hx_free_host(&xadj);
  hx_free_host(&adj);
  hx_free_host(&part);
  return err;
}
#endif

int hx_gmesh_partition(hx_gmesh *g, int nparts, hx_partitioner p) {
  HX_CHECK(nparts >= 1, HX_ERR_ARG, "number of parts must be >= 1, got %d", nparts);
  HX_CHECK(g->ne >= nparts, HX_ERR_INPUT,
           "%s: the mesh has %lld elements, fewer than the %d MPI ranks; use fewer ranks or a finer mesh",
           g->src, (long long)g->ne, nparts);
  HX_CALL(HX_ALLOC(&g->part, g->ne));
  if (nparts == 1) return HX_SUCCESS;
  if (p == HX_PART_RCB)
    HX_CALL(part_rcb(g, nparts));
  else if (p == HX_PART_METIS)
    HX_CALL(part_metis(g, nparts));
  else
    return HX_ERROR(HX_ERR_ARG, "unknown partitioner %d", (int)p);
  for (int64_t e = 0; e < g->ne; e++)
    HX_CHECK(g->part[e] >= 0 && g->part[e] < nparts, HX_ERR_INTERNAL, "partition of element %lld is %d",
             (long long)e, (int)g->part[e]);
  return HX_SUCCESS;
}
