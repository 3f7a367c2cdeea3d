/* Rank -> device placement (hx_device_select, HEXCG_CUDA_DEVICE) and the
 * collective backend creation.
 *   --backend cpu:  the pure mapping (local rank mod devices, requests, errors),
 *                   the environment parsing, hx_backend_create_comm on every
 *                   rank (cpu: no device text; cuda without a device: every
 *                   rank gets HX_ERR_NO_DEVICE, none hangs).
 *   --backend cuda: (gpu) each rank's device is described on rank 0, one
 *                   line per rank, with a PCI bus id, and ranks_on_device
 *                   counts the node-local ranks with that bus id; skips (77)
 *                   without a device. */
#include <stdlib.h>

#include "hx_kernels.h"
#include "hx_test.h"

static void check_mapping(void) {
  int d;
  /* local rank mod visible devices */
  for (int nd = 1; nd <= 8; nd++)
    for (int lr = 0; lr < 20; lr++) {
      HX_ASSERT(hx_device_select(lr, nd, -1, &d) == HX_SUCCESS && d == lr % nd, "rank %d of %d devices -> %d",
                lr, nd, d);
    }
  /* 4 ranks on 4 GPUs: a bijection; 8 ranks on 4 GPUs: two each */
  int count[4] = {0, 0, 0, 0};
  for (int lr = 0; lr < 8; lr++) {
    hx_device_select(lr, 4, -1, &d);
    count[d]++;
  }
  for (int i = 0; i < 4; i++) HX_ASSERT(count[i] == 2, "device %d has %d of 8 ranks", i, count[i]);
  /* a request wins for every rank, if it exists */
  HX_ASSERT(hx_device_select(5, 4, 2, &d) == HX_SUCCESS && d == 2, "requested 2 -> %d", d);
  HX_ASSERT(hx_device_select(0, 4, 4, &d) == HX_ERR_INPUT && d == -1, "device 4 of 4 refused");
  HX_ASSERT(strstr(hx_error_message(), "HEXCG_CUDA_DEVICE") != NULL, "message names the variable: %s",
            hx_error_message());
  hx_error_clear();
  HX_ASSERT(hx_device_select(0, 0, -1, &d) == HX_ERR_NO_DEVICE, "no devices");
  hx_error_clear();
  HX_ASSERT(hx_device_select(-1, 2, -1, &d) == HX_ERR_ARG, "negative local rank");
  hx_error_clear();

  /* HEXCG_CUDA_DEVICE */
  int r;
  unsetenv("HEXCG_CUDA_DEVICE");
  HX_ASSERT(hx_device_requested(&r) == HX_SUCCESS && r == -1, "unset -> -1");
  setenv("HEXCG_CUDA_DEVICE", "", 1);
  HX_ASSERT(hx_device_requested(&r) == HX_SUCCESS && r == -1, "empty -> -1");
  setenv("HEXCG_CUDA_DEVICE", "3", 1);
  HX_ASSERT(hx_device_requested(&r) == HX_SUCCESS && r == 3, "3 -> %d", r);
  const char *bad[] = {"-1", "x", "1x", " 1", "99999"};
  for (int i = 0; i < 5; i++) {
    setenv("HEXCG_CUDA_DEVICE", bad[i], 1);
    HX_ASSERT(hx_device_requested(&r) == HX_ERR_INPUT && r == -1, "'%s' refused", bad[i]);
    hx_error_clear();
  }
  unsetenv("HEXCG_CUDA_DEVICE");
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  const char *backend = hx_test_backend_arg(argc, argv);
  char text[8192];
  hx_backend b = NULL;
  if (strcmp(backend, "cuda") != 0) {
    check_mapping();
    HX_ASSERT(hx_backend_create_comm(backend, MPI_COMM_WORLD, &b) == HX_SUCCESS && b, "cpu backend");
    HX_ASSERT(hx_backend_device(b) == NULL, "cpu has no device info");
    HX_ASSERT(
        hx_backend_devices_describe(b, MPI_COMM_WORLD, text, sizeof text) == HX_SUCCESS && text[0] == '\0',
        "cpu: no device text");
    hx_backend_destroy(&b);
    hx_device_info info;
    if (hx_cuda_query(&info) != HX_SUCCESS) { /* no device here: every rank is told, none hangs */
      hx_error_clear();
      int e = hx_backend_create_comm("cuda", MPI_COMM_WORLD, &b);
      HX_ASSERT(e == HX_ERR_NO_DEVICE && b == NULL, "cuda without a device: %d", e);
      hx_error_clear();
    }
  } else {
    hx_device_info info;
    if (hx_cuda_query(&info) != HX_SUCCESS) {
      if (rank == 0) printf("SKIP: no CUDA device (%s)\n", hx_error_message());
      MPI_Finalize();
      return HX_TEST_SKIP;
    }
    HX_ASSERT(hx_backend_create_comm("cuda", MPI_COMM_WORLD, &b) == HX_SUCCESS, "cuda backend: %s",
              hx_error_message());
    const hx_device_info *d = hx_backend_device(b);
    HX_ASSERT(d && d->pci_bus_id[0] && d->name[0], "device named");
    /* all ranks of the test run on one node: local rank == rank */
    HX_ASSERT(d && d->local_rank == rank && d->device == rank % d->count, "rank %d -> device %d of %d", rank,
              d ? d->device : -1, d ? d->count : 0);
    int expect = size / d->count + (rank % d->count < size % d->count);
    HX_ASSERT(d->ranks_on_device == expect, "ranks on device %d: %d, expected %d", d->device,
              d->ranks_on_device, expect);
    HX_ASSERT(hx_backend_devices_describe(b, MPI_COMM_WORLD, text, sizeof text) == HX_SUCCESS, "describe");
    if (rank == 0) {
      int lines = 0;
      for (const char *p = text; (p = strstr(p, "  - {rank: ")); p++) lines++;
      HX_ASSERT(lines == size, "%d device lines for %d ranks:\n%s", lines, size, text);
      HX_ASSERT(strstr(text, d->pci_bus_id) && strstr(text, "ranks_on_device"), "text:\n%s", text);
      printf("%s", text);
    }
    hx_backend_destroy(&b);
  }
  MPI_Finalize();
  return hx_test_result();
}
