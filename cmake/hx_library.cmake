# HEXCG_LIBRARY: the installed library of api/hexcg.h (docs/library.md).
#
#   lib/libhexcg.so.0.1.0 (soname libhexcg.so.0, link libhexcg.so): every
#     module (hx_core .. hx_precond, hx_api; not hx_app, hx_bench, tests),
#     compiled as position-independent code, linked with --no-undefined;
#     exports only the hexcg_* names (cmake/hexcg.map): the internal hx_*
#     names and static hypre stay inside.
#   lib/libhexcg.a: the same objects in one archive; its users link the
#     dependencies too (the CMake package and hexcg.pc name them).
#   include/hexcg.h, lib/cmake/hexcg/ (find_package(hexcg): hexcg::hexcg,
#     hexcg::hexcg_static), lib/pkgconfig/hexcg.pc.
# Test-only builds (HEXCG_FUZZ, HEXCG_SANITIZE, HEXCG_CUDA=EMU) leave it out.
# HEXCG_SHARED_LIB's libhexcg.so (the GPU bundle's, every symbol exported
# for the tests) is another library: it goes to lib/hexcg/ (cmake/shared_lib.cmake).
option(HEXCG_LIBRARY "Build and install libhexcg (hexcg.h): shared, static, CMake package, pkg-config" ON)
set(HX_LIBRARY_MODULES hx_core hx_kernels hx_gs hx_mesh hx_io hx_disc hx_problem hx_solver hx_time hx_precond
    hx_api)

set(HX_LIBRARY_ON ${HEXCG_LIBRARY})
if(HEXCG_LIBRARY AND (HEXCG_FUZZ OR HEXCG_SANITIZE OR HEXCG_CUDA_EMU))
  message(STATUS "hexcg: HEXCG_LIBRARY left out of this test-only build (HEXCG_FUZZ, HEXCG_SANITIZE or HEXCG_CUDA=EMU)")
  set(HX_LIBRARY_ON OFF)
endif()

# the link items libhexcg.a's users need beyond MPI and OpenMP: the files
# this build resolved (hypre, HDF5, libyaml, libmatheval, METIS, LAPACK/BLAS)
function(_hx_library_deps out)
  set(_deps)
  foreach(_cfg "" _RELEASE _NOCONFIG _RELWITHDEBINFO _DEBUG)
    get_target_property(_loc HYPRE::HYPRE IMPORTED_LOCATION${_cfg})
    if(_loc)
      list(APPEND _deps ${_loc})
      break()
    endif()
  endforeach()
  list(APPEND _deps ${HDF5_C_LIBRARIES})
  foreach(_t PkgConfig::YAML PkgConfig::MATHEVAL)
    get_target_property(_l ${_t} INTERFACE_LINK_LIBRARIES)
    if(_l)
      list(APPEND _deps ${_l})
    endif()
  endforeach()
  if(HX_HAVE_METIS)
    list(APPEND _deps ${METIS_LIBRARY})
  endif()
  list(APPEND _deps ${LAPACK_LIBRARIES} ${BLAS_LIBRARIES})
  if(HEXCG_HAVE_CUDA)
    # the CUDA objects: the runtime and the C++ runtime (nvcc's host code
    # uses guard variables), which a C program's link does not bring
    list(APPEND _deps ${CUDA_cudart_LIBRARY} stdc++)
  endif()
  list(APPEND _deps m)
  list(REMOVE_DUPLICATES _deps)
  set(${out} ${_deps} PARENT_SCOPE)
endfunction()

# pkg-config's Requires (the MPI's own module when pkg-config knows it) and
# Libs.private (the files above, OpenMP's flag)
function(_hx_library_pc deps)
  set(_req "")
  foreach(_m IN ITEMS mpich ompi-c mpi)
    if(NOT _req AND PKG_CONFIG_FOUND AND ((_m STREQUAL "mpich" AND HX_MPI_VENDOR MATCHES "MPICH")
                                          OR (_m STREQUAL "ompi-c" AND HX_MPI_VENDOR STREQUAL "Open MPI")))
      pkg_check_modules(HX_PC_MPI QUIET ${_m})
      if(HX_PC_MPI_FOUND)
        set(_req ${_m})
      endif()
    endif()
  endforeach()
  set(_priv "${OpenMP_C_FLAGS}")
  foreach(_d IN LISTS deps)
    if(_d MATCHES "^/")
      string(APPEND _priv " ${_d}")
    else()
      string(APPEND _priv " -l${_d}")
    endif()
  endforeach()
  set(HX_PC_REQUIRES "${_req}")
  set(HX_PC_LIBS_PRIVATE "${_priv}")
  file(RELATIVE_PATH HX_PC_TO_PREFIX /P/${CMAKE_INSTALL_LIBDIR}/pkgconfig /P)
  string(REGEX REPLACE "/$" "" HX_PC_TO_PREFIX "${HX_PC_TO_PREFIX}")
  configure_file(${CMAKE_SOURCE_DIR}/cmake/hexcg.pc.in ${CMAKE_BINARY_DIR}/library/hexcg.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/library/hexcg.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# the two libraries from the modules' objects (the modules stay the static
# archives hexcg and the tests link)
function(_hx_library_targets deps)
  set(_objs)
  foreach(_m IN LISTS HX_LIBRARY_MODULES)
    set_target_properties(${_m} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    list(APPEND _objs $<TARGET_OBJECTS:${_m}>)
  endforeach()
  set(_inc $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/api> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

  add_library(hexcg_shared SHARED ${_objs})
  set_target_properties(hexcg_shared PROPERTIES OUTPUT_NAME hexcg EXPORT_NAME hexcg VERSION ${PROJECT_VERSION}
                        SOVERSION ${PROJECT_VERSION_MAJOR}
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/library
                        LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/hexcg.map)
  target_link_options(hexcg_shared PRIVATE -Wl,--no-undefined -Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/hexcg.map)
  # the modules after their own objects: nothing more from the archives, but
  # their link items (hypre, HDF5, libyaml, ..., OpenMP, libm)
  target_link_libraries(hexcg_shared PRIVATE ${HX_LIBRARY_MODULES} PUBLIC MPI::MPI_C)
  target_include_directories(hexcg_shared INTERFACE ${_inc})

  add_library(hexcg_static STATIC ${_objs})
  set_target_properties(hexcg_static PROPERTIES OUTPUT_NAME hexcg EXPORT_NAME hexcg_static LINKER_LANGUAGE C
                        ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/library HX_NOT_A_MODULE 1)
  add_dependencies(hexcg_static ${HX_LIBRARY_MODULES})
  target_include_directories(hexcg_static INTERFACE ${_inc})
  target_link_libraries(hexcg_static INTERFACE MPI::MPI_C OpenMP::OpenMP_C ${deps})
  if(HEXCG_HAVE_CUDA)
    target_link_libraries(hexcg_static INTERFACE CUDA::cudart)
  endif()
endfunction()

function(_hx_library_install deps)
  include(CMakePackageConfigHelpers)
  set(_dir ${CMAKE_INSTALL_LIBDIR}/cmake/hexcg)
  install(TARGETS hexcg_shared hexcg_static EXPORT hexcgTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/api/hexcg.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT hexcgTargets NAMESPACE hexcg:: DESTINATION ${_dir})
  set(HX_LIB_DEPS "${deps}")
  set(HX_CONFIG_CUDA "")
  if(HEXCG_HAVE_CUDA)
    set(HX_CONFIG_CUDA "find_dependency(CUDAToolkit)")
  endif()
  configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/hexcgConfig.cmake.in
                                ${CMAKE_BINARY_DIR}/library/hexcgConfig.cmake INSTALL_DESTINATION ${_dir})
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/library/hexcgConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/library/hexcgConfig.cmake ${CMAKE_BINARY_DIR}/library/hexcgConfigVersion.cmake
          DESTINATION ${_dir})
endfunction()

if(HX_LIBRARY_ON)
  _hx_library_deps(_hx_lib_deps)
  _hx_library_targets("${_hx_lib_deps}")
  _hx_library_install("${_hx_lib_deps}")
  _hx_library_pc("${_hx_lib_deps}")
  # built with hexcg (scripts/build.sh --app builds that target only), so
  # that cmake --install finds the libraries; from the same objects: two links
  add_dependencies(hexcg hexcg_shared hexcg_static)
  message(STATUS "hexcg: HEXCG_LIBRARY: libhexcg.so.${PROJECT_VERSION} and libhexcg.a (docs/library.md)")
endif()
