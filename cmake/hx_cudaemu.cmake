# HEXCG_CUDA=EMU: the CUDA backend built from the same .cu files as host C++
# and run on the CPU by the emulation runtime of tests/cudaemu/ (test-only:
# docs/gpu-verification.md, docs/developer.md "CUDA emulation").
#
#   hx_cuda_sources(OUT_VAR TARGET file.cu ...)
#     nvcc builds: OUT_VAR is the .cu list, TARGET gets the CUDA properties.
#     EMU builds: each .cu is rewritten (tests/cudaemu/cu_rewrite.py, line for
#     line, #line back to the .cu) into <build>/cudaemu/<path>.cc, compiled as
#     C++17 with the runtime's header forced in; TARGET links hx_cudaemu.
#   hx_module_cuda(TARGET)
#     a module's CUDA half: its cuda/*.cu through hx_cuda_sources into
#     TARGET, with HEXCG_HAVE_CUDA=1 (and HEXCG_CUDA_DEBUG_SYNC=1 when set).
# HEXCG_CUDAEMU_TSAN=ON (EMU only): the rewritten sources and the runtime
# with ThreadSanitizer, each CUDA thread a TSan fiber; every executable links
# the TSan runtime. The C code stays uninstrumented.
option(HEXCG_CUDAEMU_TSAN "EMU build: ThreadSanitizer on the emulated CUDA code (races between CUDA threads)" OFF)

if(HEXCG_CUDA_EMU)
  enable_language(CXX)
  set(CMAKE_CXX_STANDARD 17)
  set(CMAKE_CXX_STANDARD_REQUIRED ON)
  set(CMAKE_CXX_EXTENSIONS OFF)
  find_package(Threads REQUIRED)
  if(NOT Python3_Interpreter_FOUND)
    find_package(Python3 REQUIRED COMPONENTS Interpreter)
  endif()
  set(HX_EMU_DIR ${CMAKE_SOURCE_DIR}/tests/cudaemu)
  set(HX_EMU_CXX_FLAGS -Wall -Wextra)
  if(HEXCG_WERROR)
    list(APPEND HX_EMU_CXX_FLAGS -Werror)
  endif()
  if(HEXCG_CUDAEMU_TSAN)
    list(APPEND HX_EMU_CXX_FLAGS -fsanitize=thread -g -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
  endif()
  add_library(hx_cudaemu STATIC ${HX_EMU_DIR}/runtime/hxemu.cc)
  target_include_directories(hx_cudaemu PUBLIC ${HX_EMU_DIR}/runtime/include ${HX_EMU_DIR}/runtime)
  # the runtime itself uninstrumented in the TSan build (hxemu.cc, HXEMU_TSAN_FIBERS)
  string(REPLACE "-fsanitize=thread" "" _rt_flags "${HX_EMU_CXX_FLAGS}")
  target_compile_options(hx_cudaemu PRIVATE ${_rt_flags})
  if(HEXCG_CUDAEMU_TSAN)
    target_compile_definitions(hx_cudaemu PRIVATE HXEMU_TSAN_FIBERS=1)
  endif()
  target_link_libraries(hx_cudaemu PUBLIC Threads::Threads)
  set_target_properties(hx_cudaemu PROPERTIES POSITION_INDEPENDENT_CODE ON)
elseif(HEXCG_CUDAEMU_TSAN)
  message(FATAL_ERROR "HEXCG_CUDAEMU_TSAN=ON needs HEXCG_CUDA=EMU")
endif()

function(hx_cuda_sources out target)
  if(NOT HEXCG_CUDA_EMU)
    set(${out} ${ARGN} PARENT_SCOPE)
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Shared CUDA_SEPARABLE_COMPILATION OFF)
    # OpenMP in .cu host code must be requested by hand (FindOpenMP has no CUDA component)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fopenmp>)
    return()
  endif()
  set(_ccs)
  foreach(_cu IN LISTS ARGN)
    file(RELATIVE_PATH _rel ${CMAKE_SOURCE_DIR} ${_cu})
    set(_cc ${CMAKE_BINARY_DIR}/cudaemu/${_rel}.cc)
    add_custom_command(OUTPUT ${_cc}
      COMMAND ${Python3_EXECUTABLE} ${HX_EMU_DIR}/cu_rewrite.py ${_cu} ${_cc}
      DEPENDS ${_cu} ${HX_EMU_DIR}/cu_rewrite.py
      COMMENT "cudaemu: ${_rel} -> host C++" VERBATIM)
    set_source_files_properties(${_cc} PROPERTIES GENERATED TRUE LANGUAGE CXX
      COMPILE_OPTIONS "-include;${HX_EMU_DIR}/runtime/hxemu.h;-fopenmp;${HX_EMU_CXX_FLAGS}"
      INCLUDE_DIRECTORIES "${CMAKE_CURRENT_SOURCE_DIR}/cuda")
    list(APPEND _ccs ${_cc})
  endforeach()
  target_link_libraries(${target} PRIVATE hx_cudaemu)
  set(${out} ${_ccs} PARENT_SCOPE)
endfunction()

function(hx_module_cuda target)
  file(GLOB _cu CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cuda/*.cu)
  hx_cuda_sources(_src ${target} ${_cu})
  target_sources(${target} PRIVATE ${_src})
  target_compile_definitions(${target} PRIVATE HEXCG_HAVE_CUDA=1)
  if(HEXCG_CUDA_DEBUG_SYNC)
    target_compile_definitions(${target} PRIVATE HEXCG_CUDA_DEBUG_SYNC=1)
  endif()
endfunction()
