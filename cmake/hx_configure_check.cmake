# cmake -DMODE=... -DWORK=<scratch> -DSRC=<source> ... -P hx_configure_check.cmake
# (cmake/hx_build_tests.cmake). Prints "configure check MODE: ok" on success.
#   missing-hypre    HYPRE_ROOT names an empty prefix: the message names
#                    HYPRE_ROOT and CMAKE_PREFIX_PATH and the supported range
#   hypre-other-mpi  a hypre whose libHYPRE.so needs another MPI's library
#                    (a stand-in libmpi built here with another soname than
#                    this build's MPI): refused, naming both
#   hypre-too-old    HYPRE_config.h says 2.20.0: refused, naming the range
#   no-metis         -DHEXCG_METIS=OFF configures (saying so) and the mesh
#                    module builds without metis.h (HYPRE_REAL: this build's
#                    HYPRE_ROOT, empty when CMake found hypre itself)
#   install          cmake --install BUILD into WORK: bin/hexcg runs
#                    --version, the configs, job scripts, plot scripts, docs
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(configure_with hypre_root out)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -DHEXCG_CUDA=OFF -DBUILD_TESTING=OFF
                          -DCMAKE_C_COMPILER=${C_COMPILER} -DMPI_C_COMPILER=${MPI_C_COMPILER}
                          -DMPIEXEC_EXECUTABLE=${MPIEXEC} -DHDF5_C_COMPILER_EXECUTABLE=${HDF5_H5PCC}
                          -DHYPRE_ROOT=${hypre_root}
                  OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE r)
  string(REGEX REPLACE "\n *" " " msg "${e}") # CMake wraps messages: one line to match
  message("${o}${e}")
  if(r EQUAL 0)
    message(FATAL_ERROR "configure check: the configure succeeded, a refusal was expected")
  endif()
  set(${out} "${msg}" PARENT_SCOPE)
endfunction()

function(expect msg re)
  if(NOT msg MATCHES "${re}")
    message(FATAL_ERROR "configure check ${MODE}: message does not match '${re}'")
  endif()
endfunction()

# a fake hypre prefix: HYPRE.h, HYPRE_config.h with VERSION, libHYPRE.so
# linked against MPILIB (a stand-in library with that soname)
function(fake_hypre prefix version mpilib)
  file(WRITE ${prefix}/include/HYPRE.h "/* stand-in */\n")
  file(WRITE ${prefix}/include/HYPRE_config.h "#define HYPRE_RELEASE_VERSION \"${version}\"\n")
  file(WRITE ${WORK}/empty.c "int hx_stand_in(void) { return 0; }\n")
  file(MAKE_DIRECTORY ${prefix}/lib ${WORK}/mpi)
  execute_process(COMMAND ${C_COMPILER} -shared -fPIC -o ${WORK}/mpi/${mpilib} -Wl,-soname,${mpilib} ${WORK}/empty.c
                  RESULT_VARIABLE r1)
  execute_process(COMMAND ${C_COMPILER} -shared -fPIC -o ${prefix}/lib/libHYPRE.so ${WORK}/empty.c -Wl,--no-as-needed
                          ${WORK}/mpi/${mpilib} RESULT_VARIABLE r2)
  if(NOT r1 EQUAL 0 OR NOT r2 EQUAL 0)
    message(FATAL_ERROR "configure check: could not build the stand-in libraries")
  endif()
endfunction()

if(MODE STREQUAL "no-metis")
  # METIS optional: a configure with -DHEXCG_METIS=OFF succeeds, says so, and
  # the mesh module (the partitioners) compiles without metis.h
  set(hypre_arg "")
  if(HYPRE_REAL)
    set(hypre_arg -DHYPRE_ROOT=${HYPRE_REAL})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -DHEXCG_CUDA=OFF -DBUILD_TESTING=OFF
                          -DHEXCG_METIS=OFF -DCMAKE_C_COMPILER=${C_COMPILER} -DMPI_C_COMPILER=${MPI_C_COMPILER}
                          -DMPIEXEC_EXECUTABLE=${MPIEXEC} -DHDF5_C_COMPILER_EXECUTABLE=${HDF5_H5PCC} ${hypre_arg}
                  OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE r)
  message("${o}${e}")
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "configure check no-metis: the configure without METIS failed")
  endif()
  expect("${o}" "hexcg: METIS off \\(HEXCG_METIS=OFF\\): mesh.partitioner rcb only")
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build --target hx_mesh -j 2 RESULT_VARIABLE r
                  OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT r EQUAL 0)
    message("${o}${e}")
    message(FATAL_ERROR "configure check no-metis: the mesh module does not build without METIS")
  endif()
  file(GLOB_RECURSE flags ${WORK}/build/mesh/*flags.make)
  foreach(f IN LISTS flags)
    file(READ ${f} t)
    if(t MATCHES "HEXCG_HAVE_METIS")
      message(FATAL_ERROR "configure check no-metis: ${f} defines HEXCG_HAVE_METIS")
    endif()
  endforeach()
elseif(MODE STREQUAL "missing-hypre")
  configure_with(${WORK}/no-such-prefix msg)
  expect("${msg}" "hypre not found under HYPRE_ROOT=${WORK}/no-such-prefix")
  expect("${msg}" "hypre 2\\.26\\.0 or later \\(before 3\\.0\\)")
  expect("${msg}" "-DHYPRE_ROOT=<prefix>.*-DCMAKE_PREFIX_PATH=<prefix>")
elseif(MODE STREQUAL "hypre-other-mpi")
  # the soname of an MPI this build does not use: Open MPI's for an MPICH
  # build, MPICH's otherwise
  execute_process(COMMAND ${MPI_C_COMPILER} -show OUTPUT_VARIABLE show ERROR_QUIET)
  execute_process(COMMAND ${MPI_C_COMPILER} --showme OUTPUT_VARIABLE showme ERROR_QUIET)
  if("${show}${showme}" MATCHES "lmpich")
    set(other libmpi.so.40)
  else()
    set(other libmpich.so.12)
  endif()
  fake_hypre(${WORK}/hypre 2.26.0 ${other})
  configure_with(${WORK}/hypre msg)
  expect("${msg}" "hypre \\(${WORK}/hypre/lib/libHYPRE.so\\) is linked against the MPI library")
  expect("${msg}" "Two MPIs in one process crash in MPI_Init")
elseif(MODE STREQUAL "hypre-too-old")
  fake_hypre(${WORK}/hypre 2.20.0 libunrelated.so.1)
  configure_with(${WORK}/hypre msg)
  expect("${msg}" "hypre '2\\.20\\.0' at .* is outside the supported range 2\\.26\\.0 <= version < 3\\.0")
elseif(MODE STREQUAL "install")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix RESULT_VARIABLE r
                  OUTPUT_QUIET)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "configure check install: cmake --install failed")
  endif()
  foreach(f bin/hexcg share/hexcg/configs/poisson_box.yaml share/hexcg/jobs/scaling.sh
            share/hexcg/jobs/strong.sbatch share/hexcg/scripts/plot_history.py share/doc/hexcg/README.md
            share/doc/hexcg/cluster.md)
    if(NOT EXISTS ${WORK}/prefix/${f})
      message(FATAL_ERROR "configure check install: ${f} not installed")
    endif()
  endforeach()
  execute_process(COMMAND ${TEST_MPIEXEC} -n 1 ${WORK}/prefix/bin/hexcg --version OUTPUT_VARIABLE o RESULT_VARIABLE r)
  message("${o}")
  if(NOT r EQUAL 0 OR NOT o MATCHES "built with")
    message(FATAL_ERROR "configure check install: the installed hexcg --version failed")
  endif()
else()
  message(FATAL_ERROR "configure check: unknown MODE ${MODE}")
endif()
message("configure check ${MODE}: ok")
