/* A preconditioner for the tests (header-only): given by its case-file
 * options in flow style, checked as a case's are. */
#ifndef HX_TEST_PC_H
#define HX_TEST_PC_H

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"

/* The preconditioner of d that the options yaml (where: their source, for
 * messages) describe, in *pc: an hexcg error code. */
static inline int hx_test_pc_create(hx_disc d, const char *yaml, const char *where, hx_pc *pc) {
  hx_opt *opts = NULL;
  int e = hx_opt_parse_yaml(yaml, where, &opts);
  if (!e) e = hx_pc_options_check(opts);
  if (!e) e = hx_pc_create_from_options(d, opts, pc);
  hx_opt_free(&opts);
  return e;
}

/* hx_test_pc_create, then hx_pc_setup: an hexcg error code. */
static inline int hx_test_pc_make(hx_disc d, const char *yaml, const char *where, hx_pc *pc) {
  int e = hx_test_pc_create(d, yaml, where, pc);
  if (!e) e = hx_pc_setup(*pc);
  return e;
}

/* A masked pseudo-random G-vector of d: entry i of h (ng of them, on the
 * host) drawn from a generator seeded by mul * (its global id) + add (the
 * same on any partition), copied to the device array d_v and masked
 * there (h keeps the unmasked values). An hexcg error code. */
static inline int hx_test_random_gvec(hx_disc d, uint64_t mul, uint64_t add, double *h, double *d_v) {
  hx_gs gs = hx_disc_gs(d);
  const int64_t ng = hx_gs_num_local(gs);
  const int64_t *gid = hx_gs_global_ids(gs);
  for (int64_t i = 0; i < ng; i++) {
    hx_test_rng r = {(uint64_t)gid[i] * mul + add};
    hx_test_rand(&r);
    h[i] = hx_test_rand(&r);
  }
  int e = hx_mem_to_device(hx_disc_backend(d), d_v, h, sizeof(double) * (size_t)ng);
  if (!e) e = hx_gs_apply_mask(gs, d_v);
  return e;
}

/* The backend named backend in *b and an n^3 box of MPI_COMM_WORLD in *m,
 * through the Kershaw map of eps where eps > 0 (what was made before a
 * failure stays there for hx_test_release). An hexcg error code. */
static inline int hx_test_box_mesh(int n, double eps, const char *backend, hx_backend *b, hx_mesh *m) {
  *b = NULL, *m = NULL;
  int e = hx_backend_create(backend, b);
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = n;
  if (eps > 0.0) mo.kershaw_eps = eps;
  if (!e) e = hx_mesh_create_box(MPI_COMM_WORLD, &mo, m);
  return e;
}

/* hx_test_box_mesh on the cpu backend and a disc of order p (default
 * options) on it in *d. An hexcg error code. */
static inline int hx_test_box_disc(int n, double eps, int p, hx_backend *b, hx_mesh *m, hx_disc *d) {
  *d = NULL;
  int e = hx_test_box_mesh(n, eps, "cpu", b, m);
  hx_disc_opts o = hx_disc_opts_default();
  o.p = p;
  if (!e) e = hx_disc_create(*m, *b, &o, d);
  return e;
}

/* The objects of a solve destroyed, the preconditioner first and the
 * backend last (any of them NULL: not held): the first error code. */
static inline int hx_test_release(hx_pc *pc, hx_disc *d, hx_mesh *m, hx_backend *b) {
  int e = HX_SUCCESS, ei;
  if (pc && (ei = hx_pc_destroy(pc)) && !e) e = ei;
  if (d && (ei = hx_disc_destroy(d)) && !e) e = ei;
  if (m && (ei = hx_mesh_destroy(m)) && !e) e = ei;
  if (b && (ei = hx_backend_destroy(b)) && !e) e = ei;
  return e;
}

#endif
