# Tests of the build itself (label build): configure-time refusals with the
# messages docs/cluster.md quotes, and cmake --install. Each configure check
# runs a fresh configure of this source tree with this build's MPI and HDF5
# (cmake/hx_configure_check.cmake); CUDA off, it stops at the hypre check.
set(_hx_cc_args -DSRC=${CMAKE_SOURCE_DIR} -DC_COMPILER=${CMAKE_C_COMPILER}
    -DMPI_C_COMPILER=${MPI_C_COMPILER} -DMPIEXEC=$CACHE{MPIEXEC_EXECUTABLE}
    -DHDF5_H5PCC=${HDF5_C_COMPILER_EXECUTABLE} -DTEST_MPIEXEC=${HX_TEST_MPIEXEC})
foreach(_mode missing-hypre hypre-other-mpi hypre-too-old)
  add_test(NAME build.configure-${_mode}
           COMMAND ${CMAKE_COMMAND} -DMODE=${_mode} -DWORK=${CMAKE_BINARY_DIR}/build-checks/${_mode} ${_hx_cc_args}
                   -P ${CMAKE_SOURCE_DIR}/cmake/hx_configure_check.cmake)
  set_tests_properties(build.configure-${_mode} PROPERTIES LABELS build TIMEOUT 180
                       PASS_REGULAR_EXPRESSION "configure check ${_mode}: ok")
endforeach()
# METIS optional: configure with -DHEXCG_METIS=OFF and build the mesh module
add_test(NAME build.no-metis
         COMMAND ${CMAKE_COMMAND} -DMODE=no-metis -DWORK=${CMAKE_BINARY_DIR}/build-checks/no-metis
                 -DHYPRE_REAL=${HYPRE_ROOT} ${_hx_cc_args} -P ${CMAKE_SOURCE_DIR}/cmake/hx_configure_check.cmake)
set_tests_properties(build.no-metis PROPERTIES LABELS build TIMEOUT 300 PASS_REGULAR_EXPRESSION "configure check no-metis: ok")
# cmake --install into a scratch prefix: the layout, and the installed hexcg runs
add_test(NAME build.install
         COMMAND ${CMAKE_COMMAND} -DMODE=install -DWORK=${CMAKE_BINARY_DIR}/build-checks/install
                 -DBUILD=${CMAKE_BINARY_DIR} ${_hx_cc_args} -P ${CMAKE_SOURCE_DIR}/cmake/hx_configure_check.cmake)
set_tests_properties(build.install PROPERTIES LABELS build TIMEOUT 120 PASS_REGULAR_EXPRESSION "configure check install: ok")
