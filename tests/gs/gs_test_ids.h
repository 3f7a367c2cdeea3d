/* Helpers of the gather-scatter setup tests (t144-gs-setup, t145-gs-keyed):
 * a box's GLL ids cut into z-slabs with the local element order reversed
 * (first appearance differs from id order) and some ids 0, and host copies
 * of backend vectors. Header-only, static: one copy per test executable. */
#ifndef HX_GS_TEST_IDS_H
#define HX_GS_TEST_IDS_H
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int nx, ny, nz, p;
} cfg_t;

/* this rank's ids: elements of its z-slab, local order reversed, every 11th entry 0 */
static inline int64_t make_ids(const cfg_t *c, int rank, int size, int64_t **out) {
  const int64_t nel = (int64_t)c->nx * c->ny * c->nz, npe = (int64_t)(c->p + 1) * (c->p + 1) * (c->p + 1);
  const int64_t e0 = nel * rank / size, e1 = nel * (rank + 1) / size, ne = e1 - e0;
  int64_t *tmp = malloc(sizeof(int64_t) * (size_t)(ne * npe + 1)),
          *ids = malloc(sizeof(int64_t) * (size_t)(ne * npe + 1));
  hx_gs_box_ids(c->nx, c->ny, c->nz, c->p, e0, ne, tmp);
  for (int64_t a = 0; a < ne; a++)
    for (int64_t q = 0; q < npe; q++) {
      const int64_t i = a * npe + q;
      ids[i] = tmp[(ne - 1 - a) * npe + q];
      if (hx_test_mix64((uint64_t)ids[i] * 3 + (uint64_t)i) % 11 == 0) ids[i] = 0;
    }
  free(tmp);
  *out = ids;
  return ne * npe;
}

/* host copy of a backend G- or L-vector */
static inline double *host(hx_backend b, const double *d, int64_t n) {
  double *h = malloc(sizeof(double) * (size_t)(n + 1));
  if (n > 0) hx_mem_to_host(b, h, d, sizeof(double) * (size_t)n);
  return h;
}

/* per id q < nmax (the box's ids and 0): the lowest rank holding it, the
 * number of ranks holding it and of L entries with it, over all ranks (an
 * MPI_Allgather of every rank's ids); lowest_out and mult_out may be NULL */
static inline void holders(const cfg_t *c, const int64_t *ids, int64_t nl, int size, int **lowest_out, int **nhold_out,
                    int **mult_out, int64_t *nmax_out) {
  int cnt = (int)nl, *cnts = malloc(sizeof(int) * size), *displ = malloc(sizeof(int) * (size + 1));
  MPI_Allgather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, MPI_COMM_WORLD);
  displ[0] = 0;
  for (int r = 0; r < size; r++) displ[r + 1] = displ[r] + cnts[r];
  int64_t *all = malloc(sizeof(int64_t) * (size_t)(displ[size] + 1));
  MPI_Allgatherv(ids, cnt, MPI_INT64_T, all, cnts, displ, MPI_INT64_T, MPI_COMM_WORLD);
  const int64_t nmax =
      ((int64_t)c->nx * c->p + 1) * ((int64_t)c->ny * c->p + 1) * ((int64_t)c->nz * c->p + 1) + 1;
  int *lowest = malloc(sizeof(int) * (size_t)nmax), *nhold = calloc((size_t)nmax, sizeof(int));
  int *mult = calloc((size_t)nmax, sizeof(int)), *last = malloc(sizeof(int) * (size_t)nmax);
  for (int64_t q = 0; q < nmax; q++) lowest[q] = -1, last[q] = -1;
  for (int r = 0; r < size; r++)
    for (int i = displ[r]; i < displ[r + 1]; i++) {
      const int64_t q = all[i];
      if (!q) continue;
      mult[q]++;
      if (last[q] != r) nhold[q]++, last[q] = r;
      if (lowest[q] < 0) lowest[q] = r;
    }
  free(last), free(all), free(cnts), free(displ);
  *nhold_out = nhold, *nmax_out = nmax;
  if (lowest_out)
    *lowest_out = lowest;
  else
    free(lowest);
  if (mult_out)
    *mult_out = mult;
  else
    free(mult);
}

/* a and b equal: sizes, map, ids, multiplicities and their inverses;
 * assembly and scatter of the same random vector give the same bits */
static inline int check_same(hx_backend bk, hx_gs a, hx_gs b, const char *what, int p) {
  const int64_t nl = hx_gs_num_l(a), ng = hx_gs_num_local(a);
  HX_ASSERT(nl == hx_gs_num_l(b) && ng == hx_gs_num_local(b) && hx_gs_num_owned(a) == hx_gs_num_owned(b) &&
                hx_gs_num_shared(a) == hx_gs_num_shared(b) && hx_gs_num_global(a) == hx_gs_num_global(b),
            "p = %d %s: sizes differ", p, what);
  if (nl != hx_gs_num_l(b) || ng != hx_gs_num_local(b)) return 1;
  HX_ASSERT(!memcmp(hx_gs_map_host(a), hx_gs_map_host(b), sizeof(int32_t) * (size_t)nl),
            "p = %d %s: maps differ", p, what);
  HX_ASSERT(!memcmp(hx_gs_global_ids(a), hx_gs_global_ids(b), sizeof(int64_t) * (size_t)ng),
            "p = %d %s: ids differ", p, what);
  for (int inv = 0; inv < 2; inv++) {
    double *ma = host(bk, inv ? hx_gs_inv_multiplicity(a) : hx_gs_multiplicity(a), ng),
           *mb = host(bk, inv ? hx_gs_inv_multiplicity(b) : hx_gs_multiplicity(b), ng);
    HX_ASSERT(!memcmp(ma, mb, sizeof(double) * (size_t)ng), "p = %d %s: %smultiplicities differ", p, what,
              inv ? "inverse " : "");
    free(ma), free(mb);
  }
  double *hl = malloc(sizeof(double) * (size_t)(nl + 1)), *dl, *dg[2], *dz[2], *out[2][2];
  for (int64_t i = 0; i < nl; i++) hl[i] = (double)(hx_test_mix64((uint64_t)i * 7 + 1) >> 11) * 0x1p-53 - 0.5;
  HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(nl + 1), (void **)&dl));
  HX_TCALL(hx_mem_to_device(bk, dl, hl, sizeof(double) * (size_t)nl));
  hx_gs h[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(ng + 1), (void **)&dg[k]));
    HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(nl + 1), (void **)&dz[k]));
    HX_TCALL(hx_gs_assemble(h[k], dl, dg[k]));
    HX_TCALL(hx_gs_scatter(h[k], dg[k], dz[k]));
    out[k][0] = host(bk, dg[k], ng), out[k][1] = host(bk, dz[k], nl);
  }
  HX_ASSERT(!memcmp(out[0][0], out[1][0], sizeof(double) * (size_t)ng),
            "p = %d %s: assembled G-vectors differ", p, what);
  HX_ASSERT(!memcmp(out[0][1], out[1][1], sizeof(double) * (size_t)nl),
            "p = %d %s: scattered L-vectors differ", p, what);
  for (int k = 0; k < 2; k++) {
    free(out[k][0]), free(out[k][1]);
    hx_mem_free(bk, (void **)&dg[k]), hx_mem_free(bk, (void **)&dz[k]);
  }
  hx_mem_free(bk, (void **)&dl);
  free(hl);
  return 0;
}
#endif
