/* The CUDA device query never fails hard: it either describes a device or
 * answers HX_ERR_NO_DEVICE with a reason. In a build without CUDA, the name
 * "cuda" is known and refused as "not compiled in". */
#include "hx_kernels.h"
#include "hx_test.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_device_info info;
  int e = hx_cuda_query(&info);
  if (!hx_cuda_compiled()) {
    HX_ASSERT(e == HX_ERR_NO_DEVICE, "query without CUDA returns HX_ERR_NO_DEVICE, got %d", e);
    HX_ASSERT(strstr(hx_error_message(), "not compiled in") != NULL, "reason: %s", hx_error_message());
    hx_backend b;
    HX_ASSERT(hx_backend_create("cuda", &b) == HX_ERR_NO_DEVICE && b == NULL, "cuda refused");
  } else if (e == HX_SUCCESS) {
    HX_ASSERT(info.count >= 1 && info.name[0] != '\0', "device described");
    printf("device: %s (cc %d.%d, %.1f GiB, %d SMs)\n", info.name, info.cc_major, info.cc_minor,
           info.mem_gib, info.sm_count);
  } else {
    HX_ASSERT(e == HX_ERR_NO_DEVICE, "any CUDA failure maps to HX_ERR_NO_DEVICE, got %d", e);
    HX_ASSERT(strstr(hx_error_message(), "no usable CUDA device") != NULL, "reason: %s",
              hx_error_message());
    HX_ASSERT(hx_cuda_runtime_version() > 0, "runtime version known without a device");
    printf("no device (expected on CPU machines): %s\n", hx_error_message());
  }
  hx_error_clear();
  MPI_Finalize();
  return hx_test_result();
}
