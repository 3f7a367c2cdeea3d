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
    err = hx_fuzz_mesh_checks(m, 3, "fuzz_nek");
    hx_mesh_destroy(&m);
  }
  hx_fuzz_done(err, "hx_mesh_create_nek");
  return 0;
}
