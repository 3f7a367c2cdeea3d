/* hexcg --version: versions of hexcg and of every library it links. */
#include <stdio.h>
#include <string.h>

#include "hx_app.h"
#include "hx_io.h"
#include "hx_kernels.h"
#include "hx_mesh.h"
#include "hx_precond.h"
#include "hx_version_gen.h"

static const char *thread_level_name(int l) {
  return l == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
         : l == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
         : l == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                      : "MPI_THREAD_SINGLE";
}

void hx_print_version(const hx_app_ctx *ctx) {
  if (ctx->rank != 0) return;
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  printf("hexcg %s (git %s)\n", HX_VERSION_FULL, HX_GIT_HASH);

  hx_backend cpu = NULL;
  int nthreads = 1;
  if (hx_backend_create("cpu", &cpu) == HX_SUCCESS) nthreads = hx_backend_num_threads(cpu);
  hx_backend_destroy(&cpu);
  printf("backends:  cpu (OpenMP, %d threads)", nthreads);
  if (hx_cuda_compiled()) {
    int rv = hx_cuda_runtime_version();
    hx_device_info info;
    if (hx_cuda_query(&info) == HX_SUCCESS)
      printf(", cuda (runtime %d.%d; device %d: %s, cc %d.%d, %.0f GiB)\n", rv / 1000, (rv % 1000) / 10,
             info.device, info.name, info.cc_major, info.cc_minor, info.mem_gib);
    else
      printf(", cuda (runtime %d.%d; %s)\n", rv / 1000, (rv % 1000) / 10, hx_error_message());
    hx_error_clear();
  } else {
    printf("; cuda: not compiled\n");
  }

  MPI_Get_library_version(buf, &len);
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  printf("MPI:       %s\n", buf);
  printf("MPI threads: %s (requested MPI_THREAD_MULTIPLE)%s\n", thread_level_name(ctx->thread_level),
         ctx->thread_level == MPI_THREAD_MULTIPLE ? "" : " - coarse/fine overlap will be serialised");
  hx_precond_hypre_version(buf, sizeof buf);
  printf("hypre:     %s\n", buf);
  hx_io_library_versions(buf, sizeof buf);
  printf("io:        %s\n", buf);
  hx_mesh_metis_version(buf, sizeof buf);
  printf("mesh:      %s\n", buf);
}
