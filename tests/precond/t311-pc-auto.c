/* type auto's smoother trial ({type: auto, start: pmg, trial: true};
 * pc_auto.c): the choice is reproducible given the
 * timings. HEXCG_AUTO_TIMINGS replaces the measured seconds per trial
 * iteration of the named candidates; the rates come from PCG on a fixed
 * pseudo-random right-hand side (the same on every run), so with injected
 * timings the pick is a pure function of them:
 *   1. cheby-asm-3 injected 1000x cheaper per iteration than the Jacobi
 *      candidates, schwarz_above 0 (every candidate tried): asm is chosen;
 *   2. cheby-asm-3 1000x dearer, cheby-jacobi-5 1000x dearer than -3:
 *      cheby-jacobi-3 is chosen;
 *   3. schwarz_above huge: the Schwarz candidate is skipped (reported so),
 *      the choice is a Jacobi one;
 * and in each case the chosen preconditioner applies exactly the pmg that
 * the same options give (--pc type pmg with that smoother and degree):
 * the same setup, so the same numbers to rounding of the thread-independent
 * reductions (relative 1e-12), and the report tree names the choice.
 *   t311-pc-auto [--mesh box|kershaw] [--p P] [--n N] */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"

static int make_pc(hx_disc d, const char *yaml, hx_pc *pc) {
  HX_TCALL(hx_test_pc_make(d, yaml, "--pc", pc));
  return 0;
}

/* the text value of key in map (NULL if absent) */
static const char *text(const hx_opt *map, const char *key) {
  const hx_opt *v = map ? hx_opt_get(map, key) : NULL;
  return v && v->kind == HX_OPT_SCALAR ? v->value : NULL;
}

/* one scenario: timings injected, the expected choice (NULL: any Jacobi one) */
static int scenario(hx_disc d, const char *pc_yaml, const char *timings, const char *expect,
                    int expect_skip) {
  setenv("HEXCG_AUTO_TIMINGS", timings, 1);
  hx_pc pc = NULL, ref = NULL;
  if (make_pc(d, pc_yaml, &pc)) return 1;
  const char *choice = hx_pc_auto_choice(pc);
  HX_ASSERT(choice != NULL, "%s: no choice after setup", pc_yaml);
  if (!choice) return 1;
  if (expect)
    HX_ASSERT(!strcmp(choice, expect), "%s with %s: chose %s, expected %s", pc_yaml, timings, choice, expect);
  else
    HX_ASSERT(!strncmp(choice, "cheby-jacobi-", 13), "%s: chose %s, expected a Jacobi candidate", pc_yaml,
              choice);
  /* the report: choice, candidates with their status */
  hx_opt *root = NULL;
  HX_TCALL(hx_pc_report(pc, hx_gs_comm(hx_disc_gs(d)), &root));
  /* auto's node holds the pmg it uses, the trial's node */
  const hx_opt *tree = hx_opt_get(root, "pmg");
  HX_ASSERT(tree && text(root, "choice") && !strcmp(text(root, "choice"), "pmg"),
            "report: no pmg under auto");
  HX_ASSERT(text(tree, "choice") && !strcmp(text(tree, "choice"), choice), "report: choice %s",
            text(tree, "choice") ? text(tree, "choice") : "(missing)");
  const hx_opt *cands = hx_opt_get(tree, "candidates");
  HX_ASSERT(cands && cands->kind == HX_OPT_LIST && cands->n == 3, "report: 3 candidates expected");
  int chosen = 0, skipped = 0, injected = 0;
  for (int i = 0; cands && i < cands->n; i++) {
    const char *st = text(cands->items[i], "status"), *tm = text(cands->items[i], "timing");
    chosen += st && !strcmp(st, "chosen");
    skipped += st && !strcmp(st, "skipped");
    injected += tm && !strcmp(tm, "injected");
  }
  HX_ASSERT(chosen == 1, "report: %d candidates marked chosen", chosen);
  HX_ASSERT(skipped == expect_skip, "report: %d skipped, expected %d", skipped, expect_skip);
  HX_ASSERT(injected == 3 - expect_skip, "report: %d injected timings, expected %d", injected,
            3 - expect_skip);
  HX_ASSERT(hx_opt_get(tree, "chosen") && hx_opt_get(hx_opt_get(tree, "chosen"), "levels"),
            "report: the chosen pmg's levels missing");
  hx_opt_free(&root);
  /* the chosen candidate is the pmg of the same options */
  char ref_yaml[160];
  const int jac = !strncmp(choice, "cheby-jacobi-", 13);
  snprintf(ref_yaml, sizeof ref_yaml, "{type: pmg, smoother: {type: %s, degree: %s}}",
           jac ? "cheby-jacobi" : "cheby-asm", strrchr(choice, '-') + 1);
  if (make_pc(d, ref_yaml, &ref)) return 1;
  hx_gs gs = hx_disc_gs(d);
  const int64_t ng = hx_gs_num_local(gs);
  hx_backend b = hx_disc_backend(d);
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  double *h = malloc(bytes), *dx, *dz, *dr;
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dx));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dz));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dr));
  HX_TCALL(hx_test_random_gvec(d, 0xBF58476D1CE4E5B9ull, 7, h, dx));
  HX_TCALL(hx_pc_apply(pc, dx, dz));
  HX_TCALL(hx_pc_apply(ref, dx, dr));
  double zz, dd;
  HX_TCALL(hx_gs_dot(gs, dz, dz, &zz));
  HX_TCALL(hx_array_axpby(b, ng, dr, 1.0, dz, -1.0));
  HX_TCALL(hx_gs_dot(gs, dr, dr, &dd));
  HX_ASSERT(zz > 0 && sqrt(dd) <= 1e-12 * sqrt(zz), "%s: auto's %s and %s differ by %.3e relative", pc_yaml,
            choice, ref_yaml, sqrt(dd / zz));
  char view[600];
  hx_pc_view(pc, view, sizeof view);
  HX_ASSERT(strstr(view, choice) != NULL, "view '%s' does not name %s", view, choice);
  hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dz), hx_mem_free(b, (void **)&dr);
  free(h);
  hx_pc_destroy(&ref);
  hx_pc_destroy(&pc);
  return 0;
}

int main(int argc, char **argv) {
  int rank;
  hx_test_init_threads(&argc, &argv, &rank); /* the log quiet: the trial's lines */
  const char *mesh = hx_test_arg(argc, argv, "--mesh", "box");
  const int p = atoi(hx_test_arg(argc, argv, "--p", "4")), n = atoi(hx_test_arg(argc, argv, "--n", "4"));
  const int kershaw = !strcmp(mesh, "kershaw");
  hx_backend b;
  hx_mesh m;
  hx_disc d;
  if (hx_test_box_disc(kershaw && n % 6 ? 6 : n, kershaw ? 0.3 : 0.0, p, &b, &m, &d)) return 1;
  scenario(d, "{type: auto, start: pmg, trial: true, schwarz_above: 0, trial_iterations: 3}",
           "cheby-jacobi-3=1.0,cheby-jacobi-5=1.0,cheby-asm-3=1.0e-3", "cheby-asm-3", 0);
  scenario(d, "{type: auto, start: pmg, trial: true, schwarz_above: 0}",
           "cheby-jacobi-3=1.0e-3,cheby-jacobi-5=1.0,cheby-asm-3=1.0", "cheby-jacobi-3", 0);
  scenario(d, "{type: auto, start: pmg, trial: true, schwarz_above: 100000}",
           "cheby-jacobi-3=1.0,cheby-jacobi-5=1.0,cheby-asm-3=1.0e-9", NULL, 1);
  /* the scalar form and the default options: any choice, reported */
  unsetenv("HEXCG_AUTO_TIMINGS");
  hx_pc pc = NULL;
  if (!make_pc(d, "{type: auto, start: pmg, trial: true}", &pc))
    HX_ASSERT(hx_pc_auto_choice(pc) != NULL && hx_pc_is_symmetric(pc), "auto: no choice, or not symmetric");
  hx_pc_destroy(&pc);
  /* Jacobi first: Jacobi until a solve shows that pmg pays */
  if (!make_pc(d, "{type: auto, start: jacobi}", &pc))
    HX_ASSERT(hx_pc_auto_choice(pc) && !strcmp(hx_pc_auto_choice(pc), "jacobi") && hx_pc_is_symmetric(pc),
              "auto: %s before any solve, expected jacobi",
              hx_pc_auto_choice(pc) ? hx_pc_auto_choice(pc) : "NULL");
  hx_pc_destroy(&pc);
  /* the default start: two-level Schwarz until its first iterations show that pmg pays */
  if (!make_pc(d, "{type: auto}", &pc))
    HX_ASSERT(hx_pc_auto_choice(pc) && !strcmp(hx_pc_auto_choice(pc), "asm") && hx_pc_is_symmetric(pc),
              "auto: %s before any solve, expected asm", hx_pc_auto_choice(pc) ? hx_pc_auto_choice(pc) : "NULL");
  hx_pc_destroy(&pc);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
