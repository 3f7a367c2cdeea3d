# hx_check_same_mpi(WHAT lib...): refuse shared libraries linked against
# another MPI than the one this build uses (MPI_C_LIBRARIES).
#
# Two MPI libraries in one process (hexcg on MPICH, a hypre or HDF5 built on
# Open MPI) link without a complaint and then crash in MPI_Init or, worse, run
# every rank as rank 0 of 1. The check reads the libraries' ELF NEEDED entries
# (readelf) and compares their MPI sonames with this build's: libmpich.so.12,
# libmpi.so.12 and libmpi_cray.so.12 are one ABI (MPICH's; Intel MPI and Cray
# MPICH keep it), everything else must match exactly. Static libraries (the
# hypre of scripts/bootstrap.sh) carry no NEEDED entries and pass; a library
# that names no MPI passes. Off with -DHEXCG_MPI_ABI_CHECK=OFF.
option(HEXCG_MPI_ABI_CHECK "Refuse hypre/HDF5 shared libraries linked against another MPI" ON)
find_program(HX_READELF NAMES readelf ${CMAKE_READELF})
mark_as_advanced(HX_READELF)

# the MPI soname of FILE's NEEDED (KIND=NEEDED) or SONAME (KIND=SONAME) entries
function(_hx_elf_mpi_names file kind out)
  set(_names)
  if(HX_READELF AND EXISTS "${file}" AND NOT IS_DIRECTORY "${file}" AND "${file}" MATCHES "\\.so(\\.[0-9.]+)?$")
    execute_process(COMMAND ${HX_READELF} -d "${file}" OUTPUT_VARIABLE _d ERROR_QUIET RESULT_VARIABLE _r)
    if(_r EQUAL 0)
      string(REGEX MATCHALL "\\(${kind}\\)[^[]*\\[[^]]+\\]" _ents "${_d}")
      foreach(_e IN LISTS _ents)
        string(REGEX REPLACE ".*\\[([^]]+)\\]" "\\1" _n "${_e}")
        if(_n MATCHES "^lib(mpi|mpich|mpi_cray|mpi_intel|mpi_mt|mpi_ibm)\\.so(\\.[0-9]+)?")
          if(_n MATCHES "^lib(mpi|mpich|mpi_cray|mpi_intel)\\.so\\.12")
            set(_n "MPICH-ABI(libmpich.so.12)")
          endif()
          list(APPEND _names "${_n}")
        endif()
      endforeach()
    endif()
  endif()
  set(${out} ${_names} PARENT_SCOPE)
endfunction()

function(hx_check_same_mpi what)
  if(NOT HEXCG_MPI_ABI_CHECK OR NOT HX_READELF)
    return()
  endif()
  set(_ours)
  foreach(_l IN LISTS MPI_C_LIBRARIES)
    get_filename_component(_real "${_l}" REALPATH)
    _hx_elf_mpi_names("${_real}" SONAME _s)
    list(APPEND _ours ${_s})
  endforeach()
  if(NOT _ours)
    return() # a static or unrecognised MPI: nothing to compare against
  endif()
  foreach(_lib IN LISTS ARGN)
    if(TARGET "${_lib}" OR NOT _lib MATCHES "^/")
      continue()
    endif()
    get_filename_component(_real "${_lib}" REALPATH)
    _hx_elf_mpi_names("${_real}" NEEDED _need)
    foreach(_n IN LISTS _need)
      if(NOT _n IN_LIST _ours)
        message(FATAL_ERROR
          "hexcg: ${what} (${_lib}) is linked against the MPI library ${_n}, but this build uses "
          "${HX_MPI_VENDOR} (${_ours}, MPI_C_COMPILER=${MPI_C_COMPILER}). Two MPIs in one process crash "
          "in MPI_Init. Use a ${what} built with the same MPI (module load the matching one, or point "
          "CMAKE_PREFIX_PATH / HYPRE_ROOT / HDF5_ROOT at it), or configure with the MPI it was built "
          "with (-DMPI_C_COMPILER=.../mpicc -DMPIEXEC_EXECUTABLE=.../mpiexec). docs/cluster.md "
          "\"Troubleshooting\". (-DHEXCG_MPI_ABI_CHECK=OFF skips this check.)")
      endif()
    endforeach()
  endforeach()
endfunction()
