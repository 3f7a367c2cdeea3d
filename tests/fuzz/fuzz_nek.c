/* Fuzz target: NekRS / Nek5000 .re2 meshes (binary, both byte orders, curved
 * sides, boundary fields with periodic records) through hx_mesh_create_nek,
 * the call `hexcg run` makes (here on MPI_COMM_SELF: the
 * reader, the topology and the one-part partition all run on rank 0). A mesh
 * that is accepted then gets its order-2 GLL numbering and Jacobian check,
 * the next things a run does with it; the numbering must give every element
 * its 8 corner ids within [0, global count) (an independent check of the
 * numbering on whatever topology the fuzzer built). */
#include <stdio.h>
#include <stdlib.h>

#include "hx_fuzz.h"
#include "hx_mesh.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hx_fuzz_init();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = hx_fuzz_write("mesh.re2", data, size);
  hx_mesh m = NULL;
  int err = hx_mesh_create_nek(MPI_COMM_SELF, path, 1, HX_PART_RCB, &m);
  if (!err) {
    const int p = 2, npe = (p + 1) * (p + 1) * (p + 1);
    const int32_t E = hx_mesh_num_elements(m);
    const int64_t N = hx_mesh_num_global_gll(m, p);
    int64_t *gid = malloc(sizeof(int64_t) * (size_t)(E > 0 ? E : 1) * npe);
    if (!gid) abort();
    char *seen = calloc((size_t)(N > 0 ? N : 1) + 1, 1);
    if (!seen) abort();
    err = hx_mesh_gll_ids(m, p, gid);
    for (int64_t i = 0; !err && i < (int64_t)E * npe; i++) {
      if (gid[i] < 1 || gid[i] > N) {
        fprintf(stderr, "fuzz_nek: GLL id %lld of node %lld outside [1, %lld]\n", (long long)gid[i],
                (long long)i, (long long)N);
        abort();
      }
      seen[gid[i]] = 1;
    }
    for (int64_t k = 1; !err && k <= N; k++)
      if (!seen[k]) {
        fprintf(stderr, "fuzz_nek: GLL id %lld of 1..%lld is not used\n", (long long)k, (long long)N);
        abort();
      }
    free(seen);
    free(gid);
    double jmin, jmax, hmin, hmax;
    if (!err) err = hx_mesh_check_jacobian(m, 3, &jmin, &jmax, &hmin, &hmax); /* the curved map at order 3 */
    hx_mesh_destroy(&m);
  }
  hx_fuzz_done(err, "hx_mesh_create_nek");
  return 0;
}
