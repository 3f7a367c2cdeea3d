/* What the mesh fuzz targets (gmsh, exodus, nek) check on a mesh a reader
 * accepted: the next things a run does with it, the order-2 GLL numbering and
 * the Jacobian check. The numbering must use exactly the ids 1..N (an
 * independent check of the numbering on whatever topology the fuzzer built);
 * a violation aborts, so the fuzzer reports it. */
#include <stdio.h>
#include <stdlib.h>

#include "hx_fuzz.h"
#include "hx_mesh.h"

int hx_fuzz_mesh_checks(hx_mesh m, int jac_order, const char *who) {
  const int p = 2, npe = (p + 1) * (p + 1) * (p + 1);
  const int32_t E = hx_mesh_num_elements(m);
  const int64_t N = hx_mesh_num_global_gll(m, p);
  int64_t *gid = malloc(sizeof(int64_t) * (size_t)(E > 0 ? E : 1) * npe);
  char *seen = calloc((size_t)(N > 0 ? N : 1) + 1, 1);
  if (!gid || !seen) abort();
  int err = hx_mesh_gll_ids(m, p, gid);
  for (int64_t i = 0; !err && i < (int64_t)E * npe; i++) {
    if (gid[i] < 1 || gid[i] > N) {
      fprintf(stderr, "%s: GLL id %lld of node %lld outside [1, %lld]\n", who, (long long)gid[i], (long long)i,
              (long long)N);
      abort();
    }
    seen[gid[i]] = 1;
  }
  for (int64_t k = 1; !err && k <= N; k++)
    if (!seen[k]) {
      fprintf(stderr, "%s: GLL id %lld of 1..%lld is not used\n", who, (long long)k, (long long)N);
      abort();
    }
  free(seen);
  free(gid);
  double jmin, jmax, hmin, hmax;
  if (!err) err = hx_mesh_check_jacobian(m, jac_order, &jmin, &jmax, &hmin, &hmax);
  return err;
}
