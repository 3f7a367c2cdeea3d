/* End-to-end solves with the p-multigrid preconditioner (type pmg):
 *   t530-pmg MODE [--backend cpu|cuda]
 * MODE
 *   scaling   unit box, p = 4, 4^3 / 8^3 / 16^3 elements, u = exp(x y z) (not
 *             separable), tol 1e-8, the default pmg: the count grows by at
 *             most 1.2x from 4^3 to 16^3 and stays <= 15
 *   ranks     the 8^3 p = 4 count on this rank count (RCB and METIS) equals
 *             the 1-rank count of the same run to +-1
 *   smoothers Kershaw eps 0.3 (6^3, p = 5, tol 1e-8): every smoother type
 *             (jacobi, asm, cheby-jacobi, cheby-asm under pcg; ras and
 *             cheby-ras under fcg), every Chebyshev kind, the additive cycle
 *             (overlapped and sequential: the same iterations and solution)
 *             converge with the exact solution's L2 error below 1e-4; the
 *             default pmg needs fewer iterations than asm; a ras smoother
 *             under plain pcg is refused with a message naming fcg
 *   jacobi    Kershaw eps 0.3 (6^3, p = 5) and a deformed box (4^3, p = 3,
 *             lambda 3) at tol 1e-12: pmg (pcg) and cheby-ras (fcg) reach the
 *             same discrete solution as Jacobi (1e-9), in under a fifth of
 *             Jacobi's iterations */
#include "hx_solve_case.h"

static const setup base = {.n = 8, .p = 4, .tol = 1e-8, .pc = "{type: pmg}"};

static int mode_scaling(void) {
  int it[3];
  HX_TCALL(scaling_counts(&base, "pmg", 15, it));
  HX_ASSERT(it[2] <= 1.2 * it[0], "pmg count grows %d -> %d from 4^3 to 16^3 (more than 1.2x)", it[0], it[2]);
  return 0;
}

static int mode_ranks(void) { return check_ranks(&base, "pmg"); }

static int mode_smoothers(void) {
  setup s = base;
  s.n = 6, s.p = 5, s.eps = 0.3;
  static const struct {
    const char *pc;
    int fcg;
  } cases[] = {
      {"{type: pmg}", 0},
      {"{type: pmg, smoother: {type: jacobi, degree: 3}}", 0},
      {"{type: pmg, smoother: {type: asm, degree: 2}}", 0},
      {"{type: pmg, smoother: {type: ras, degree: 2}}", 1},
      {"{type: pmg, smoother: {type: cheby-jacobi, degree: 4}}", 0},
      {"{type: pmg, smoother: {type: cheby-asm, kind: fourth}}", 0},
      {"{type: pmg, smoother: {type: cheby-asm, kind: first}}", 0},
      {"{type: pmg, smoother: {type: cheby-ras}}", 1},
      {"{type: pmg, cycle: additive, overlap: false}", 0},
      {"{type: asm}", 0},
  };
  const int nc = (int)(sizeof cases / sizeof cases[0]);
  int its[16];
  for (int c = 0; c < nc; c++) {
    s.pc = cases[c].pc, s.fcg = cases[c].fcg;
    double err;
    HX_TCALL(count(MPI_COMM_WORLD, &s, &its[c], &err));
    if (g_rank == 0) printf("kershaw 6^3 p=5 %-60s %s %4d iterations, L2 error %.3e\n", s.pc, s.fcg ? "fcg" : "pcg",
                            its[c], err);
    HX_ASSERT(err < 1e-4, "%s: L2 error %.3e", s.pc, err);
  }
  HX_ASSERT(its[0] < its[nc - 1], "default pmg %d iterations, asm %d: pmg should need fewer", its[0], its[nc - 1]);
  /* the additive cycle overlapped == sequential */
  s.fcg = 0;
  HX_TCALL(check_overlap_same(&s, "{type: pmg, cycle: additive, overlap: true}",
                              "{type: pmg, cycle: additive, overlap: false}", NULL));
  /* restricted Schwarz under plain PCG: refused, naming fcg */
  outcome bad;
  s.pc = "{type: pmg, smoother: {type: cheby-ras}}", s.fcg = 0, s.expect_err = 1;
  g_msg[0] = 0;
  HX_TCALL(solve(MPI_COMM_WORLD, &s, &bad));
  HX_ASSERT((int)bad.r.pcg.reason == HX_ERR_INPUT && strstr(g_msg, "fcg"),
            "cheby-ras under pcg: expected an input error naming fcg, got %d: %s", (int)bad.r.pcg.reason, g_msg);
  free(bad.u);
  return 0;
}

static int mode_jacobi(void) {
  for (int c = 0; c < 2; c++) {
    const char *name;
    setup s = jacobi_case(&base, c, &name);
    outcome a, r, j;
    HX_TCALL(solve(MPI_COMM_WORLD, &s, &a));
    s.pc = "{type: pmg, smoother: {type: cheby-ras}}", s.fcg = 1;
    HX_TCALL(solve(MPI_COMM_WORLD, &s, &r));
    s.pc = "{type: jacobi}", s.fcg = 0;
    HX_TCALL(solve(MPI_COMM_WORLD, &s, &j));
    if (g_rank == 0)
      printf("%s: pmg %d, pmg cheby-ras (fcg) %d, jacobi %d iterations; L2 errors %.6e %.6e\n",
             name, a.r.pcg.iterations, r.r.pcg.iterations, j.r.pcg.iterations, a.r.err_l2, j.r.err_l2);
    const double da = max_diff(&a, &j), dr = max_diff(&r, &j);
    HX_ASSERT(da <= 1e-9 && dr <= 1e-9, "solutions differ from jacobi's: pmg %.3e, cheby-ras %.3e", da, dr);
    HX_ASSERT(5 * a.r.pcg.iterations < j.r.pcg.iterations && 5 * r.r.pcg.iterations < j.r.pcg.iterations,
              "pmg %d / cheby-ras %d not under a fifth of jacobi %d", a.r.pcg.iterations, r.r.pcg.iterations,
              j.r.pcg.iterations);
    free(a.u), free(r.u), free(j.u);
  }
  return 0;
}

int main(int argc, char **argv) {
  static const hx_test_mode modes[] = {{"scaling", mode_scaling}, {"ranks", mode_ranks}, {"smoothers", mode_smoothers}, {"jacobi", mode_jacobi}};
  return hx_solve_case_main(argc, argv, "t530-pmg", modes, (int)(sizeof modes / sizeof modes[0]));
}
