/* Fuzz target: Exodus II meshes (netCDF classic CDF-1/2/5, read by mesh/mesh_exodus.c) through
 * hx_mesh_create_exodus, the call `hexcg run` makes (here on MPI_COMM_SELF: the
 * reader, the topology and the one-part partition all run on rank 0). A mesh
 * that is accepted then gets its order-2 GLL numbering and Jacobian check,
 * the next things a run does with it; the numbering must give every element
 * its 8 corner ids within [0, global count) (an independent check of the
 * numbering on whatever topology the fuzzer built). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_fuzz.h"
#include "hx_mesh.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hx_fuzz_init();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* a netCDF-4 file is HDF5's to parse (fuzzed upstream, and by the h5 target's
   * structure-aware inputs here): only the netCDF classic path is fuzzed */
  if (size >= 8 && !memcmp(data, "\x89HDF\r\n\x1a\n", 8)) return 0;
  const char *path = hx_fuzz_write("mesh.e", data, size);
  hx_mesh m = NULL;
  int err = hx_mesh_create_exodus(MPI_COMM_SELF, path, HX_PART_RCB, 0, NULL, &m);
  if (!err) {
    err = hx_fuzz_mesh_checks(m, 1, "fuzz_exodus");
    hx_mesh_destroy(&m);
  }
  hx_fuzz_done(err, "hx_mesh_create_exodus");
  return 0;
}
