# hypre: the target HYPRE::HYPRE and HX_HYPRE_VERSION.
#
# Supported: hypre 2.26.0 <= version < 3.0 (tested: 2.26.0, the version of
# scripts/bootstrap.sh and Debian 12), CPU build, double precision
# (HYPRE_Real = double), MPI. Searched, in this order:
#   1. hypre's CMake package (HYPREConfig.cmake, a CMake-built hypre): under
#      HYPRE_ROOT (CMake variable or environment), HYPRE_DIR, CMAKE_PREFIX_PATH;
#   2. a prefix with include/HYPRE.h (or include/hypre/HYPRE.h, Debian) and
#      lib/libHYPRE.*: an autotools-built hypre (Spack's, most modules), found
#      under HYPRE_ROOT only when it is given, else under pkg-config's hypre
#      paths (HYPRE.pc), CMAKE_PREFIX_PATH and the system folders.
# The found library must use this build's MPI (cmake/hx_mpi_abi.cmake).
set(HX_HYPRE_MIN_VERSION 2.26.0)
set(HX_HYPRE_MAX_VERSION 3.0) # exclusive

if(NOT HYPRE_ROOT AND DEFINED ENV{HYPRE_ROOT})
  set(HYPRE_ROOT $ENV{HYPRE_ROOT})
endif()
set(HYPRE_ROOT "${HYPRE_ROOT}" CACHE PATH "hypre install prefix (holds include/HYPRE.h, lib/libHYPRE.*)")

set(_hx_hypre_how "")
if(HYPRE_ROOT)
  find_package(HYPRE CONFIG QUIET PATHS ${HYPRE_ROOT} PATH_SUFFIXES lib/cmake/HYPRE lib64/cmake/HYPRE NO_DEFAULT_PATH)
else()
  find_package(HYPRE CONFIG QUIET)
endif()
if(HYPRE_FOUND AND TARGET HYPRE::HYPRE)
  get_target_property(_hx_hypre_inc HYPRE::HYPRE INTERFACE_INCLUDE_DIRECTORIES)
  list(REMOVE_DUPLICATES _hx_hypre_inc)
  set(_hx_hypre_how "CMake package ${HYPRE_DIR}")
else()
  set(_hx_hypre_hints)
  set(_hx_hypre_nodefault)
  if(HYPRE_ROOT)
    # the prefix given is the only place looked at: a second hypre on the
    # system (Debian's /usr/include/hypre, built on Open MPI) must not win
    list(APPEND _hx_hypre_hints ${HYPRE_ROOT})
    set(_hx_hypre_nodefault NO_DEFAULT_PATH)
  else()
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(HX_HYPRE_PC QUIET HYPRE)
      list(APPEND _hx_hypre_hints ${HX_HYPRE_PC_PREFIX})
    endif()
  endif()
  find_path(HX_HYPRE_INCLUDE_DIR HYPRE.h HINTS ${_hx_hypre_hints} ${HX_HYPRE_PC_INCLUDE_DIRS}
            PATH_SUFFIXES include include/hypre hypre ${_hx_hypre_nodefault})
  find_library(HX_HYPRE_LIBRARY NAMES HYPRE HINTS ${_hx_hypre_hints} ${HX_HYPRE_PC_LIBRARY_DIRS}
               PATH_SUFFIXES lib lib64 lib/${CMAKE_LIBRARY_ARCHITECTURE} ${_hx_hypre_nodefault})
  if(NOT HX_HYPRE_INCLUDE_DIR OR NOT HX_HYPRE_LIBRARY)
    if(HYPRE_ROOT)
      set(_where "under HYPRE_ROOT=${HYPRE_ROOT} (looked for HYPREConfig.cmake, include/HYPRE.h, lib/libHYPRE.*)")
    else()
      set(_where "(no HYPREConfig.cmake on CMAKE_PREFIX_PATH='${CMAKE_PREFIX_PATH}', no HYPRE.h / libHYPRE on "
                 "pkg-config's or the system's paths)")
    endif()
    message(FATAL_ERROR
      "hexcg: hypre not found ${_where}.\n"
      "hexcg needs hypre ${HX_HYPRE_MIN_VERSION} or later (before ${HX_HYPRE_MAX_VERSION}), a CPU build "
      "in double precision, built with the same MPI as hexcg. Tell CMake where it is:\n"
      "  -DHYPRE_ROOT=<prefix>            (the folder holding include/HYPRE.h and lib/libHYPRE.*)\n"
      "  -DCMAKE_PREFIX_PATH=<prefix>     (a CMake-built hypre, lib/cmake/HYPRE/HYPREConfig.cmake)\n"
      "  module load hypre / spack load hypre, then configure again (they set CMAKE_PREFIX_PATH or HYPRE_ROOT)\n"
      "On Debian 12 scripts/build.sh builds one (scripts/bootstrap.sh). docs/cluster.md \"Dependencies\".")
  endif()
  add_library(HYPRE::HYPRE UNKNOWN IMPORTED)
  set_target_properties(HYPRE::HYPRE PROPERTIES IMPORTED_LOCATION "${HX_HYPRE_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${HX_HYPRE_INCLUDE_DIR}")
  set(_hx_hypre_link MPI::MPI_C)
  if(HX_HYPRE_LIBRARY MATCHES "\\.a$")
    # a static autotools hypre brings no link interface: its usual needs
    list(APPEND _hx_hypre_link LAPACK::LAPACK m)
  endif()
  set_property(TARGET HYPRE::HYPRE PROPERTY INTERFACE_LINK_LIBRARIES ${_hx_hypre_link})
  set(_hx_hypre_inc ${HX_HYPRE_INCLUDE_DIR})
  set(_hx_hypre_how "${HX_HYPRE_LIBRARY}")
endif()

# version and build options from HYPRE_config.h
set(_hx_hypre_cfg "")
foreach(_d IN LISTS _hx_hypre_inc)
  if(NOT _hx_hypre_cfg AND EXISTS "${_d}/HYPRE_config.h")
    set(_hx_hypre_cfg "${_d}/HYPRE_config.h")
  endif()
endforeach()
if(NOT _hx_hypre_cfg)
  message(FATAL_ERROR "hexcg: hypre at ${_hx_hypre_how} has no HYPRE_config.h in '${_hx_hypre_inc}': "
                      "not a complete hypre install; set HYPRE_ROOT to the prefix of one.")
endif()
file(STRINGS "${_hx_hypre_cfg}" _hx_hypre_lines REGEX "^#define HYPRE_(RELEASE_VERSION|BIGINT|MIXEDINT|SINGLE|LONG_DOUBLE|COMPLEX|USING_GPU|USING_OPENMP|SEQUENTIAL)")
set(HX_HYPRE_VERSION "")
set(_hx_hypre_flags)
foreach(_l IN LISTS _hx_hypre_lines)
  if(_l MATCHES "HYPRE_RELEASE_VERSION \"([0-9.]+)\"")
    set(HX_HYPRE_VERSION ${CMAKE_MATCH_1})
  elseif(_l MATCHES "^#define HYPRE_([A-Z_]+)")
    list(APPEND _hx_hypre_flags ${CMAKE_MATCH_1})
  endif()
endforeach()
if(NOT HX_HYPRE_VERSION AND HYPRE_VERSION)
  set(HX_HYPRE_VERSION ${HYPRE_VERSION})
endif()
if(NOT HX_HYPRE_VERSION OR HX_HYPRE_VERSION VERSION_LESS HX_HYPRE_MIN_VERSION
   OR NOT HX_HYPRE_VERSION VERSION_LESS HX_HYPRE_MAX_VERSION)
  message(FATAL_ERROR "hexcg: hypre '${HX_HYPRE_VERSION}' at ${_hx_hypre_how} is outside the supported range "
                      "${HX_HYPRE_MIN_VERSION} <= version < ${HX_HYPRE_MAX_VERSION}; point HYPRE_ROOT at a "
                      "supported hypre (tested: 2.26.0).")
endif()
foreach(_f SINGLE LONG_DOUBLE COMPLEX SEQUENTIAL)
  if(_f IN_LIST _hx_hypre_flags)
    message(FATAL_ERROR "hexcg: hypre at ${_hx_hypre_how} is built with HYPRE_${_f}; hexcg needs real double "
                        "precision and MPI (configure hypre without --enable-single/--enable-longdouble/"
                        "--enable-complex/--without-MPI; Spack: hypre+mpi~complex).")
  endif()
endforeach()
foreach(_f BIGINT MIXEDINT)
  if(_f IN_LIST _hx_hypre_flags)
    message(WARNING "hexcg: hypre is built with HYPRE_${_f} (64-bit indices): untested with hexcg (tested: 32-bit).")
  endif()
endforeach()
if(USING_GPU IN_LIST _hx_hypre_flags)
  message(WARNING "hexcg: hypre is built for GPUs (HYPRE_USING_GPU): hexcg hands hypre host arrays and "
                  "expects a CPU hypre; use a CPU build (Spack: hypre~cuda~rocm).")
endif()

get_target_property(_hx_hypre_loc HYPRE::HYPRE IMPORTED_LOCATION)
if(NOT _hx_hypre_loc)
  foreach(_c RELEASE RELWITHDEBINFO NOCONFIG DEBUG)
    get_target_property(_hx_hypre_loc HYPRE::HYPRE IMPORTED_LOCATION_${_c})
    if(_hx_hypre_loc)
      break()
    endif()
  endforeach()
endif()
hx_check_same_mpi(hypre ${_hx_hypre_loc})
string(REPLACE ";" " " _hx_hypre_flag_txt "${_hx_hypre_flags}")
message(STATUS "hexcg: hypre ${HX_HYPRE_VERSION} from ${_hx_hypre_how} (include ${_hx_hypre_inc}; lib ${_hx_hypre_loc}; ${_hx_hypre_flag_txt})")
