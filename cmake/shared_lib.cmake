# HEXCG_SHARED_LIB: one shared library, libhexcg.so, for the GPU verification
# bundle (scripts/gpu_bundle.sh, docs/gpu-verification.md).
#
# The normal build links every module statically: hexcg and each test
# executable carry their own copy of the code they use, the CUDA kernels'
# device code included (~10 MB for the larger tests). With this option ON:
#   - every module is compiled as position-independent code;
#   - every static library of the project outside tests/ and regression/
#     (hx_core, hx_kernels, ..., hx_precond, and any module added later) goes,
#     whole, into the shared library hx_shared (lib/libhexcg.so): the device
#     code once;
#   - except the libraries of HX_SHARED_LIB_KEEP_STATIC and those that link
#     them: hx_app calls functions defined in app/main.c (hx_app_status,
#     hx_app_fail), which a test executable does not have, so it cannot be
#     inside a library every test links. It stays static (small, no device
#     code), linked by hexcg and the tests that use it;
#   - every executable (hexcg, the tests) and every library kept static that
#     links a module links hx_shared in its place; other link items (hypre,
#     HDF5, ...) are kept. hx_shared carries the modules' usage requirements
#     (include folders, definitions, MPI, OpenMP), so everything compiles as
#     before.
# The module CMakeLists need no change: this file rewrites the link lines at
# the end of the top-level CMakeLists (cmake_language(DEFER)). OFF by default:
# the normal build (and CI's test passes, the benchmarks) stays static.
option(HEXCG_SHARED_LIB "Link hexcg and the tests against one shared libhexcg.so holding every module (GPU bundle)" OFF)
set(HX_SHARED_LIB_KEEP_STATIC hx_app CACHE STRING
    "HEXCG_SHARED_LIB: static libraries kept out of libhexcg.so (they call code of app/main.c)")
mark_as_advanced(HX_SHARED_LIB_KEEP_STATIC)

if(HEXCG_SHARED_LIB)
  if(HEXCG_FUZZ)
    message(FATAL_ERROR "HEXCG_SHARED_LIB=ON and HEXCG_FUZZ=ON cannot be combined")
  endif()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)

  # every buildsystem target below DIR
  function(_hx_collect_targets dir out)
    get_property(_t DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    get_property(_subs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(_s IN LISTS _subs)
      _hx_collect_targets(${_s} _more)
      list(APPEND _t ${_more})
    endforeach()
    set(${out} ${_t} PARENT_SCOPE)
  endfunction()

  # the link items of TARGET's property PROP with every module (also inside
  # $<LINK_ONLY:...>) replaced by one hx_shared; nothing set if none is there
  function(_hx_swap_modules target prop mods)
    get_target_property(_libs ${target} ${prop})
    if(NOT _libs)
      return()
    endif()
    set(_new)
    set(_hit 0)
    foreach(_l IN LISTS _libs)
      set(_bare ${_l})
      if(_l MATCHES "^\\$<LINK_ONLY:([^>]+)>$")
        set(_bare ${CMAKE_MATCH_1})
      endif()
      if(_bare IN_LIST mods)
        set(_hit 1)
      else()
        list(APPEND _new ${_l})
      endif()
    endforeach()
    if(_hit)
      set_property(TARGET ${target} PROPERTY ${prop} hx_shared ${_new})
    endif()
  endfunction()

  function(_hx_shared_lib_finish)
    _hx_collect_targets(${CMAKE_SOURCE_DIR} _all)
    set(_libs)
    set(_exes)
    foreach(_t IN LISTS _all)
      get_target_property(_type ${_t} TYPE)
      get_target_property(_dir ${_t} SOURCE_DIR)
      get_target_property(_not_mod ${_t} HX_NOT_A_MODULE)
      if(_not_mod)
        continue() # libhexcg.a of HEXCG_LIBRARY (cmake/hx_library.cmake): the modules' objects again
      endif()
      if(_type STREQUAL "STATIC_LIBRARY" AND NOT _dir MATCHES "^${CMAKE_SOURCE_DIR}/(tests|regression)(/|$)")
        list(APPEND _libs ${_t})
      elseif(_type STREQUAL "EXECUTABLE")
        list(APPEND _exes ${_t})
      endif()
    endforeach()
    # kept static: the named ones and, repeatedly, whatever links one of them
    set(_keep)
    foreach(_k IN LISTS HX_SHARED_LIB_KEEP_STATIC)
      if(_k IN_LIST _libs)
        list(APPEND _keep ${_k})
      endif()
    endforeach()
    set(_grew 1)
    while(_grew)
      set(_grew 0)
      foreach(_t IN LISTS _libs)
        if(_t IN_LIST _keep)
          continue()
        endif()
        get_target_property(_ll ${_t} LINK_LIBRARIES)
        foreach(_k IN LISTS _keep)
          if(_ll AND _k IN_LIST _ll)
            list(APPEND _keep ${_t})
            set(_grew 1)
            break()
          endif()
        endforeach()
      endforeach()
    endwhile()
    set(_mods ${_libs})
    if(_keep)
      list(REMOVE_ITEM _mods ${_keep})
    endif()
    if(NOT _mods)
      message(FATAL_ERROR "HEXCG_SHARED_LIB: no module library found")
    endif()

    # the shared library: every module whole (--whole-archive around their
    # archives, once each), then the modules again as plain targets, which
    # adds nothing from the archives but brings their own link items (hypre,
    # HDF5, MPI, libcudart, ...). CMake's WHOLE_ARCHIVE feature would apply to
    # every repetition of an archive in the link line: duplicate symbols.
    file(WRITE ${CMAKE_BINARY_DIR}/generated/hx_shared_lib.c
         "/* libhexcg.so: the modules are linked in whole (cmake/shared_lib.cmake) */\n"
         "int hx_shared_lib_marker(void);\nint hx_shared_lib_marker(void) { return 1; }\n")
    add_library(hx_shared SHARED ${CMAKE_BINARY_DIR}/generated/hx_shared_lib.c)
    set_target_properties(hx_shared PROPERTIES OUTPUT_NAME hexcg
                          LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
    # a library that leaves a symbol undefined fails here, not in each test
    target_link_options(hx_shared PRIVATE -Wl,--no-undefined)
    set(_whole)
    foreach(_m IN LISTS _mods)
      list(APPEND _whole $<TARGET_FILE:${_m}>)
    endforeach()
    target_link_libraries(hx_shared PRIVATE -Wl,--whole-archive ${_whole} -Wl,--no-whole-archive ${_mods})
    foreach(_m IN LISTS _mods)
      # the module's usage requirements, for everything that links hx_shared
      target_include_directories(hx_shared INTERFACE $<TARGET_PROPERTY:${_m},INTERFACE_INCLUDE_DIRECTORIES>)
      target_compile_definitions(hx_shared INTERFACE $<TARGET_PROPERTY:${_m},INTERFACE_COMPILE_DEFINITIONS>)
      target_compile_options(hx_shared INTERFACE $<TARGET_PROPERTY:${_m},INTERFACE_COMPILE_OPTIONS>)
      get_target_property(_ifl ${_m} INTERFACE_LINK_LIBRARIES)
      if(_ifl)
        foreach(_l IN LISTS _ifl)
          # PRIVATE items of a static library appear as $<LINK_ONLY:...>:
          # they are inside libhexcg.so now
          if(NOT _l MATCHES "^\\$<LINK_ONLY:" AND NOT _l IN_LIST _mods)
            target_link_libraries(hx_shared INTERFACE ${_l})
          endif()
        endforeach()
      endif()
    endforeach()

    # the modules out, hx_shared in: executables (what they link) and the
    # libraries kept static (what they pass on)
    foreach(_e IN LISTS _exes)
      _hx_swap_modules(${_e} LINK_LIBRARIES "${_mods}")
    endforeach()
    foreach(_k IN LISTS _keep)
      _hx_swap_modules(${_k} INTERFACE_LINK_LIBRARIES "${_mods}")
    endforeach()
    # installed beside the installed hexcg, in a folder of its own: lib/
    # holds HEXCG_LIBRARY's libhexcg.so (the link to libhexcg.so.0), which
    # exports the API only
    install(TARGETS hx_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/hexcg)
    set_property(TARGET hexcg PROPERTY INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}/hexcg")
    list(JOIN _mods " " _ml)
    list(JOIN _keep " " _kl)
    message(STATUS "hexcg: HEXCG_SHARED_LIB: libhexcg.so holds ${_ml}; static: ${_kl}")
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _hx_shared_lib_finish)
endif()
