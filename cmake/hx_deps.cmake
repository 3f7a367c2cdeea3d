# hexcg's dependencies, found from whatever the machine provides (docs/cluster.md):
#   MPI      find_package(MPI): any MPI-3 implementation; choose one with
#            -DMPI_C_COMPILER=<its mpicc> (and -DMPIEXEC_EXECUTABLE=<its mpiexec>)
#   hypre    cmake/hx_hypre.cmake: HYPREConfig.cmake or a prefix (HYPRE_ROOT)
#   HDF5     find_package(HDF5), parallel: HDF5_ROOT or -DHDF5_C_COMPILER_EXECUTABLE=<h5pcc>
#   libyaml, libmatheval   pkg-config (yaml-0.1, libmatheval), else a prefix on
#            CMAKE_PREFIX_PATH or LIBYAML_ROOT / MATHEVAL_ROOT
#   METIS, LAPACK, OpenMP  CMAKE_PREFIX_PATH / METIS_ROOT, BLA_VENDOR
# Every library that links MPI must link this build's (cmake/hx_mpi_abi.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/hx_mpi_abi.cmake)

# ---------------------------------------------------------------- MPI
find_package(MPI COMPONENTS C)
if(NOT MPI_C_FOUND)
  message(FATAL_ERROR
    "hexcg: no MPI found. hexcg needs an MPI-3 implementation (MPICH, Open MPI, Intel MPI, Cray MPICH, "
    "MVAPICH...). Load one (module load openmpi / spack load mpich) so that its mpicc is on PATH, or name "
    "it: -DMPI_C_COMPILER=/path/to/mpicc. Debian 12: scripts/bootstrap.sh installs MPICH.")
endif()
if(MPI_C_VERSION VERSION_LESS 3.0)
  message(FATAL_ERROR "hexcg: the MPI found (${MPI_C_COMPILER}) implements MPI ${MPI_C_VERSION}; hexcg needs "
                      "MPI 3.0 or later (non-blocking collectives). Choose another with -DMPI_C_COMPILER=.")
endif()
if(NOT MPIEXEC_EXECUTABLE)
  message(FATAL_ERROR "hexcg: MPI found (${MPI_C_COMPILER}) but no launcher (mpiexec, mpirun, srun) for the "
                      "tests: pass -DMPIEXEC_EXECUTABLE=/path/to/mpiexec.")
endif()
# the implementation and its version, from the macros of its mpi.h (no MPI
# program is run: a login node may not run one)
set(HX_MPI_VENDOR "MPI")
set(HX_MPI_LIBRARY "")
set(_hx_mpi_h "")
foreach(_d IN LISTS MPI_C_HEADER_DIR MPI_C_INCLUDE_DIRS)
  if(NOT _hx_mpi_h AND EXISTS "${_d}/mpi.h")
    set(_hx_mpi_h "${_d}/mpi.h")
  endif()
endforeach()
if(_hx_mpi_h)
  file(STRINGS "${_hx_mpi_h}" _hx_mpi_defs
       REGEX "^#define (MPICH_VERSION|OMPI_(MAJOR|MINOR|RELEASE)_VERSION|I_MPI_VERSION|MVAPICH2_VERSION|CRAY_MPICH_VERSION) ")
  foreach(_l IN LISTS _hx_mpi_defs)
    if(_l MATCHES "^#define ([A-Z0-9_]+) +\"?([^\" ]+)\"?")
      set(_hx_mpi_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(DEFINED _hx_mpi_I_MPI_VERSION)
    set(HX_MPI_VENDOR "Intel MPI")
    set(HX_MPI_LIBRARY "Intel MPI ${_hx_mpi_I_MPI_VERSION}")
  elseif(DEFINED _hx_mpi_MVAPICH2_VERSION)
    set(HX_MPI_VENDOR "MVAPICH")
    set(HX_MPI_LIBRARY "MVAPICH2 ${_hx_mpi_MVAPICH2_VERSION}")
  elseif(DEFINED _hx_mpi_CRAY_MPICH_VERSION)
    set(HX_MPI_VENDOR "Cray MPICH")
    set(HX_MPI_LIBRARY "Cray MPICH ${_hx_mpi_CRAY_MPICH_VERSION}")
  elseif(DEFINED _hx_mpi_MPICH_VERSION)
    set(HX_MPI_VENDOR "MPICH")
    set(HX_MPI_LIBRARY "MPICH ${_hx_mpi_MPICH_VERSION}")
  elseif(DEFINED _hx_mpi_OMPI_MAJOR_VERSION)
    set(HX_MPI_VENDOR "Open MPI")
    set(HX_MPI_LIBRARY "Open MPI ${_hx_mpi_OMPI_MAJOR_VERSION}.${_hx_mpi_OMPI_MINOR_VERSION}.${_hx_mpi_OMPI_RELEASE_VERSION}")
  endif()
endif()
if(NOT HX_MPI_LIBRARY)
  set(HX_MPI_LIBRARY "an MPI ${MPI_C_VERSION} library")
endif()
# a launcher of another MPI starts N copies of a 1-rank job: refuse the pairs
# that are known not to work together (mpiexec --version names its MPI)
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _hx_mpiexec_v ERROR_VARIABLE _hx_mpiexec_e
                TIMEOUT 20 RESULT_VARIABLE _hx_mpiexec_r)
set(_hx_mpiexec_v "${_hx_mpiexec_v}${_hx_mpiexec_e}")
if((HX_MPI_VENDOR STREQUAL "Open MPI" AND _hx_mpiexec_v MATCHES "HYDRA")
   OR (HX_MPI_VENDOR MATCHES "MPICH|MVAPICH|Intel" AND _hx_mpiexec_v MATCHES "OpenRTE|Open MPI|PRRTE"))
  message(FATAL_ERROR "hexcg: the launcher ${MPIEXEC_EXECUTABLE} belongs to another MPI than the library "
                      "(${HX_MPI_LIBRARY}, from ${MPI_C_COMPILER}): it would start every rank as rank 0 of 1. "
                      "Pass the launcher of the same MPI: -DMPIEXEC_EXECUTABLE=<its bin>/mpiexec.")
endif()
message(STATUS "hexcg: ${HX_MPI_LIBRARY} (MPI standard ${MPI_C_VERSION}; ${MPI_C_COMPILER}; launcher ${MPIEXEC_EXECUTABLE})")

# The tests' launcher. Open MPI refuses to run as root and to place more
# ranks than cores (CI: 3 ranks on 2 cores), binds ranks to cores (two tests
# at once would share them) and adds its own report to stderr when a rank
# exits non-zero (the tests compare hexcg's messages exactly): the tests call
# it through a wrapper that allows both, binds nothing and keeps mpiexec
# quiet (orte_execute_quiet). Its ranks also yield the core while they wait
# (mpi_yield_when_idle): busy-polling ranks of two tests on 2 cores made the
# MPI tests 2-7x slower than MPICH's (solver.t500-split.np2: 23 s, 6.5 s with
# it). The cache's MPIEXEC_EXECUTABLE is unchanged.
set(HX_TEST_MPIEXEC "${MPIEXEC_EXECUTABLE}")
if(HX_MPI_VENDOR STREQUAL "Open MPI")
  set(HX_TEST_MPIEXEC "${CMAKE_BINARY_DIR}/hx-mpiexec")
  file(CONFIGURE OUTPUT "${HX_TEST_MPIEXEC}" @ONLY CONTENT [=[#!/bin/sh
# generated by cmake/hx_deps.cmake: Open MPI's launcher for the tests
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_orte_execute_quiet=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe
export OMPI_MCA_hwloc_base_binding_policy OMPI_MCA_orte_execute_quiet OMPI_MCA_mpi_yield_when_idle
exec "@MPIEXEC_EXECUTABLE@" "$@"
]=])
  file(CHMOD "${HX_TEST_MPIEXEC}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
       WORLD_READ WORLD_EXECUTE)
endif()

# ---------------------------------------------------------------- hypre
include(${CMAKE_CURRENT_LIST_DIR}/hx_hypre.cmake)

# ---------------------------------------------------------------- HDF5 (parallel)
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 COMPONENTS C)
if(NOT HDF5_FOUND)
  message(FATAL_ERROR "hexcg: HDF5 not found. hexcg needs parallel HDF5 (1.10 or later) built with the same MPI: "
                      "-DHDF5_ROOT=<prefix>, or -DHDF5_C_COMPILER_EXECUTABLE=<prefix>/bin/h5pcc, or module load "
                      "a parallel hdf5 (Spack: hdf5+mpi; Debian: libhdf5-mpich-dev).")
endif()
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "hexcg: the HDF5 found (${HDF5_VERSION}, include ${HDF5_C_INCLUDE_DIRS}) is serial; hexcg "
                      "needs parallel HDF5 built with the same MPI (${HX_MPI_VENDOR}): -DHDF5_ROOT=<prefix of a "
                      "parallel one> or -DHDF5_C_COMPILER_EXECUTABLE=<its h5pcc> (Spack: hdf5+mpi; Debian: "
                      "libhdf5-mpich-dev for MPICH, libhdf5-openmpi-dev for Open MPI).")
endif()
hx_check_same_mpi(HDF5 ${HDF5_C_LIBRARIES})
message(STATUS "hexcg: HDF5 ${HDF5_VERSION} (parallel; include ${HDF5_C_INCLUDE_DIRS})")

# ---------------------------------------------------------------- libyaml, libmatheval
# pkg-config's IMPORTED_TARGET names (PkgConfig::YAML, PkgConfig::MATHEVAL),
# or the same targets made from a header and a library found on the prefixes
find_package(PkgConfig QUIET)
function(hx_find_pc var module header lib root)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(${var} QUIET IMPORTED_TARGET GLOBAL ${module})
  endif()
  if(NOT ${var}_FOUND)
    find_path(HX_${var}_INCLUDE_DIR ${header} HINTS ${${root}} $ENV{${root}} PATH_SUFFIXES include)
    find_library(HX_${var}_LIBRARY ${lib} HINTS ${${root}} $ENV{${root}} PATH_SUFFIXES lib lib64)
    if(NOT HX_${var}_INCLUDE_DIR OR NOT HX_${var}_LIBRARY)
      message(FATAL_ERROR "hexcg: ${module} not found (no pkg-config module ${module}, no ${header} / lib${lib} on "
                          "CMAKE_PREFIX_PATH): set PKG_CONFIG_PATH to its lib/pkgconfig, or -D${root}=<prefix>, "
                          "or add its prefix to CMAKE_PREFIX_PATH.")
    endif()
    add_library(PkgConfig::${var} INTERFACE IMPORTED GLOBAL)
    set_target_properties(PkgConfig::${var} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${HX_${var}_INCLUDE_DIR}"
                          INTERFACE_LINK_LIBRARIES "${HX_${var}_LIBRARY}")
    set(${var}_VERSION "unknown" PARENT_SCOPE)
  else()
    set(${var}_VERSION "${${var}_VERSION}" PARENT_SCOPE)
  endif()
endfunction()
hx_find_pc(YAML yaml-0.1 yaml.h yaml LIBYAML_ROOT)
hx_find_pc(MATHEVAL libmatheval matheval.h matheval MATHEVAL_ROOT)

# ---------------------------------------------------------------- LAPACK, OpenMP, METIS
find_package(LAPACK REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS C)
# METIS is optional (the mesh.partitioner metis; rcb, the default, needs
# nothing): AUTO uses it when found, ON requires it, OFF leaves it out.
set(HEXCG_METIS AUTO CACHE STRING "METIS k-way partitioner: AUTO (when found), ON (required), OFF")
set_property(CACHE HEXCG_METIS PROPERTY STRINGS AUTO ON OFF)
add_library(hx_metis INTERFACE)
set(HX_HAVE_METIS 0)
if(NOT HEXCG_METIS STREQUAL "OFF")
  find_path(METIS_INCLUDE_DIR metis.h HINTS ${METIS_ROOT} $ENV{METIS_ROOT} PATH_SUFFIXES include)
  find_library(METIS_LIBRARY metis HINTS ${METIS_ROOT} $ENV{METIS_ROOT} PATH_SUFFIXES lib lib64)
  if(METIS_INCLUDE_DIR AND METIS_LIBRARY)
    set(HX_HAVE_METIS 1)
    target_include_directories(hx_metis INTERFACE ${METIS_INCLUDE_DIR})
    target_link_libraries(hx_metis INTERFACE ${METIS_LIBRARY})
    target_compile_definitions(hx_metis INTERFACE HEXCG_HAVE_METIS=1)
    message(STATUS "hexcg: METIS ${METIS_LIBRARY} (mesh.partitioner metis)")
  elseif(HEXCG_METIS STREQUAL "ON")
    message(FATAL_ERROR "hexcg: METIS 5 not found (metis.h, libmetis): -DMETIS_ROOT=<prefix> or add it to "
                        "CMAKE_PREFIX_PATH (Spack: metis; Debian: libmetis-dev), or -DHEXCG_METIS=OFF "
                        "(the rcb partitioner only).")
  endif()
endif()
if(NOT HX_HAVE_METIS)
  message(STATUS "hexcg: METIS off (HEXCG_METIS=${HEXCG_METIS}): mesh.partitioner rcb only")
endif()

# ---------------------------------------------------------------- what hexcg --version reports as "built with"
if(HEXCG_CUDA_EMU)
  set(HX_BUILD_CUDA "CUDA EMULATED on the CPU (HEXCG_CUDA=EMU: tests only, not for production)")
elseif(HEXCG_HAVE_CUDA)
  set(HX_BUILD_CUDA "CUDA ${CMAKE_CUDA_COMPILER_VERSION} (architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  set(HX_BUILD_CUDA "CUDA off")
endif()
set(HX_BUILD_COMPILER "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/hx_build_info.h.in ${CMAKE_BINARY_DIR}/generated/hx_build_info.h @ONLY)
