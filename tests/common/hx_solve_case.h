/* Shared by the end-to-end preconditioner tests (tests/solver/t510-asm.c,
 * t530-pmg.c; header-only): solve -lap u + lambda u = f with u = exp(x y z)
 * (not separable) on a box or Kershaw mesh with a preconditioner given by
 * its case-file options, and return the PCG result and the solution. */
#ifndef HX_SOLVE_CASE_H
#define HX_SOLVE_CASE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"
#include "hx_test_exp.h"

static const char *g_backend = "cpu";
static int g_rank = 0;
static char g_msg[1024];


typedef struct {
  int n, p, metis, deform;
  double eps, lambda, tol;
  const char *pc; /* YAML options */
  int fcg;        /* flexible CG */
  int expect_err; /* the solve must fail (returned, not asserted) */
} setup;

typedef struct {
  hx_solve_result r;
  int64_t nl;
  double *u; /* solution L-vector (owned by the caller) */
} outcome;

static int solve(MPI_Comm comm, const setup *s, outcome *out) {
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = s->n;
  mo.kershaw_eps = s->eps > 0 ? s->eps : 1.0;
  mo.deform = s->deform;
  mo.partitioner = s->metis ? HX_PART_METIS : HX_PART_RCB;
  hx_mesh m;
  hx_backend b;
  HX_TCALL(hx_backend_create(g_backend, &b));
  HX_TCALL(hx_mesh_create_box(comm, &mo, &m));
  const double lam = s->lambda;
  hx_disc_opts o = hx_disc_opts_default();
  o.p = s->p, o.lambda = &lam;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  hx_pc pc;
  HX_TCALL(hx_test_pc_create(d, s->pc, "t510", &pc));
  hx_test_exp_prob pr = {s->lambda};
  hx_field f = {hx_test_f_exp, &pr, NULL}, ex = {hx_test_u_exp, &pr, NULL};
  const int64_t nl = hx_disc_num_l(d);
  double *hf = malloc(sizeof(double) * nl), *hg = malloc(sizeof(double) * nl);
  out->u = malloc(sizeof(double) * nl);
  out->nl = nl;
  HX_TCALL(hx_disc_eval(d, f, hf));
  HX_TCALL(hx_disc_eval(d, ex, hg));
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = s->tol;
  po.max_iterations = 3000;
  po.flexible = s->fcg;
  if (s->expect_err) {
    const int err = hx_solve(d, pc, hf, hg, NULL, ex, &po, NULL, out->u, &out->r);
    out->r.pcg.reason = (hx_reason)err; /* the error code, for the caller */
    if (err) snprintf(g_msg, sizeof g_msg, "%s", hx_error_message());
    hx_error_clear();
  } else {
    HX_TCALL(hx_solve(d, pc, hf, hg, NULL, ex, &po, NULL, out->u, &out->r));
  }
  if (!s->expect_err)
    HX_ASSERT(out->r.pcg.reason > 0, "%s, %d^3 p=%d: %s after %d iterations", s->pc, s->n, s->p,
            hx_reason_name(out->r.pcg.reason), out->r.pcg.iterations);
  free(hf), free(hg);
  HX_TCALL(hx_test_release(&pc, &d, &m, &b));
  return 0;
}

static int count(MPI_Comm comm, const setup *s, int *its, double *err) {
  outcome o;
  HX_TCALL(solve(comm, s, &o));
  *its = o.r.pcg.iterations;
  if (err) *err = o.r.err_l2;
  free(o.u);
  return 0;
}

/* The cases of the comparisons with Jacobi (mode jacobi) from base: c = 0
 * the Kershaw mesh (eps 0.3) at p = 5, c = 1 a deformed box at p = 3 with
 * lambda = 3; tolerance 1e-12. name: how the lines printed call it. */
static setup jacobi_case(const setup *base, int c, const char **name) {
  setup s = *base;
  s.tol = 1e-12;
  if (c == 0)
    s.n = 6, s.p = 5, s.eps = 0.3;
  else
    s.n = 4, s.p = 3, s.deform = 1, s.lambda = 3.0;
  *name = c ? "deformed, lambda 3" : "kershaw 0.3";
  return s;
}

/* Collective: the largest difference between two solutions of the same
 * case over the ranks. */
static double max_diff(const outcome *a, const outcome *b) {
  double d = 0;
  for (int64_t i = 0; i < a->nl; i++) d = fmax(d, fabs(a->u[i] - b->u[i]));
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return d;
}

/* The element counts per direction of the h-scaling runs. */
static const int hx_scaling_n[3] = {4, 8, 16};

/* The h-scaling of s0's preconditioner: the iteration counts it[i] at
 * hx_scaling_n[i]^3 elements, each solve with an L2 error below 1e-5 and at
 * most max_its iterations (label names the preconditioner in the messages
 * and the lines printed). */
static int scaling_counts(const setup *s0, const char *label, int max_its, int it[3]) {
  for (int i = 0; i < 3; i++) {
    setup s = *s0;
    s.n = hx_scaling_n[i];
    double err;
    HX_TCALL(count(MPI_COMM_WORLD, &s, &it[i], &err));
    HX_ASSERT(err < 1e-5, "%s %d^3: L2 error %.3e", label, s.n, err);
    if (g_rank == 0) printf("%2d^3 p=%d: %s %3d iterations\n", s.n, s.p, label, it[i]);
    HX_ASSERT(it[i] <= max_its, "%s %d^3: %d iterations (expected <= %d)", label, s.n, it[i], max_its);
  }
  return 0;
}

/* The preconditioner of s0 does not depend on the partition: the iteration
 * count on all ranks with RCB and with METIS partitions within 1 of the
 * count on one rank. label names the preconditioner in the line printed. */
static int check_ranks(const setup *s0, const char *label) {
  MPI_Comm self;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank, 0, &self);
  setup s = *s0;
  int i1 = -1, in, im;
  if (g_rank == 0) HX_TCALL(count(self, &s, &i1, NULL));
  MPI_Bcast(&i1, 1, MPI_INT, 0, MPI_COMM_WORLD);
  HX_TCALL(count(MPI_COMM_WORLD, &s, &in, NULL));
  s.metis = 1;
  HX_TCALL(count(MPI_COMM_WORLD, &s, &im, NULL));
  if (g_rank == 0)
    printf("%d^3 p=%d %s: 1 rank %d, %d ranks RCB %d, METIS %d iterations\n", s.n, s.p, label, i1, size, in, im);
  HX_ASSERT(abs(in - i1) <= 1 && abs(im - i1) <= 1, "iterations: 1 rank %d, %d ranks %d (RCB) %d (METIS)", i1, size,
            in, im);
  MPI_Comm_free(&self);
  return 0;
}

/* The overlapped and the sequential variant of one preconditioner (pc_on,
 * pc_off: YAML options) must give the same iterations and solutions to
 * 1e-12 (only the order of independent work differs); *its: the count. */
static int check_overlap_same(const setup *s0, const char *pc_on, const char *pc_off, int *its) {
  setup s = *s0;
  outcome ov, sq;
  s.pc = pc_on;
  HX_TCALL(solve(MPI_COMM_WORLD, &s, &ov));
  s.pc = pc_off;
  HX_TCALL(solve(MPI_COMM_WORLD, &s, &sq));
  double dmax = 0;
  for (int64_t i = 0; i < ov.nl; i++) dmax = fmax(dmax, fabs(ov.u[i] - sq.u[i]));
  MPI_Allreduce(MPI_IN_PLACE, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  HX_ASSERT(ov.r.pcg.iterations == sq.r.pcg.iterations && dmax <= 1e-12,
            "%s: %d iterations, %s: %d, solutions differ by %.3e", pc_on, ov.r.pcg.iterations, pc_off,
            sq.r.pcg.iterations, dmax);
  if (its) *its = ov.r.pcg.iterations;
  free(ov.u), free(sq.u);
  return 0;
}

/* The main of a test of modes that solves (MPI with thread support, the
 * rank and backend for solve()): hx_test_run_modes. */
static inline int hx_solve_case_main(int argc, char **argv, const char *prog, const hx_test_mode *modes, int nmodes) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &(int){0});
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  g_backend = hx_test_backend_arg(argc, argv);
  return hx_test_run_modes(argc, argv, prog, modes, nmodes);
}

#endif
