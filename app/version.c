/* hexcg --version: versions of hexcg and of every library it links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_app.h"
#include "hx_io.h"
#include "hx_kernels.h"
#include "hx_mesh.h"
#include "hx_precond.h"
#include "hx_build_info.h"
#include "hx_version_gen.h"

/* The MPI the code was compiled against, from the macros of its mpi.h (the
 * library found at run time can differ: an ABI-compatible MPICH, Intel MPI or
 * Cray MPICH swapped in through LD_LIBRARY_PATH or a module). */
static void mpi_built_with(char *buf, size_t len) {
#if defined(I_MPI_VERSION)
  snprintf(buf, len, "Intel MPI %s", I_MPI_VERSION);
#elif defined(MVAPICH2_VERSION)
  snprintf(buf, len, "MVAPICH2 %s", MVAPICH2_VERSION);
#elif defined(MPICH_VERSION)
  snprintf(buf, len, "MPICH %s", MPICH_VERSION);
#elif defined(OMPI_MAJOR_VERSION)
  snprintf(buf, len, "Open MPI %d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#else
  snprintf(buf, len, "%s", HX_BUILD_MPI);
#endif
}

static const char *thread_level_name(int l) {
  return l == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
         : l == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
         : l == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                      : "MPI_THREAD_SINGLE";
}

int hx_app_thread_request(void) {
  const char *e = hx_env("HEXCG_MPI_THREAD_LEVEL");
  if (!e || !e[0] || !strcmp(e, "multiple")) return MPI_THREAD_MULTIPLE;
  if (!strcmp(e, "serialized")) return MPI_THREAD_SERIALIZED;
  if (!strcmp(e, "funneled")) return MPI_THREAD_FUNNELED;
  if (!strcmp(e, "single")) return MPI_THREAD_SINGLE;
  return -1;
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
  printf("backends:  cpu (OpenMP, %d thread%s, %s kernels)", nthreads, nthreads == 1 ? "" : "s",
         hx_cpu_kernels_name());
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
  char isa[512];
  hx_cpu_isa_describe(isa, sizeof isa); /* which CPU kernels and why (kernels/cpu/isa_cpu.c) */
  printf("cpu kernels: %s\n", isa);

  MPI_Get_library_version(buf, &len);
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  printf("MPI:       %s\n", buf);
  char built[128];
  mpi_built_with(built, sizeof built);
  printf("           built with %s (MPI %d.%d, %s)\n", built, MPI_VERSION, MPI_SUBVERSION, HX_BUILD_MPI_COMPILER);
  const int req = hx_app_thread_request();
  printf("MPI threads: %s (requested %s%s)%s\n", thread_level_name(ctx->thread_level),
         thread_level_name(req < 0 ? MPI_THREAD_MULTIPLE : req), req == MPI_THREAD_MULTIPLE || req < 0 ? "" :
         ", HEXCG_MPI_THREAD_LEVEL",
         ctx->thread_level == MPI_THREAD_MULTIPLE ? "" : " - coarse/fine overlap will be serialised");
  hx_precond_hypre_version(buf, sizeof buf);
  printf("hypre:     %s (built with %s)\n", buf, HX_BUILD_HYPRE);
  hx_io_library_versions(buf, sizeof buf);
  printf("io:        %s\n", buf);
  printf("           built with HDF5 %s, libyaml %s, libmatheval %s\n", HX_BUILD_HDF5, HX_BUILD_YAML,
         HX_BUILD_MATHEVAL);
  hx_mesh_metis_version(buf, sizeof buf);
  printf("mesh:      %s\n", buf);
  printf("build:     %s, %s, %s\n", HX_BUILD_TYPE, HX_BUILD_COMPILER, HX_BUILD_CUDA);
  printf("malloc:    %s\n", hx_malloc_tune_info());
}
