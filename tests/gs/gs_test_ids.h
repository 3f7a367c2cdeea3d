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
#endif
