/* summary.yaml and the final summary table. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io_impl.h"

static void yq(char *out, size_t len, const char *s) {
  size_t o = 0;
  if (len < 3) return;
  out[o++] = '"';
  for (; *s && o + 3 < len; s++) {
    if (*s == '"' || *s == '\\') out[o++] = '\\';
    out[o++] = (unsigned char)*s < 0x20 ? ' ' : *s;
  }
  out[o++] = '"';
  out[o] = '\0';
}

/* The time table of summary.yaml (timers_s) and of the printed summary:
 * key, label, whether it is a part of solve, a note. */
static const struct {
  const char *key, *label;
  int sub;
  const char *note;
} time_row[] = {
    {"setup", "setup", 0, "  mesh, discretisation, right-hand side, preconditioner setup"},
    {"solve", "solve", 0, NULL},
    {"operator", "operator", 1, NULL},
    {"exchange", "(exchange)", 1, "  the operator's halo exchange, a part of operator"},
    {"preconditioner", "preconditioner", 1, "  its applies"},
    {"vector", "vector", 1, NULL},
    {"reductions", "reductions", 1, NULL},
    {"solve_other", "other", 1, "  the rest of the solve"},
    {"io", "io", 0, NULL},
    {"other", "other", 0, "  start-up, case, effective case"},
    {"total", "total", 0, NULL},
};
#define NTIMES ((int)(sizeof time_row / sizeof time_row[0]))
static void time_rows(const hx_run_stats *st, double *v) {
  const double in_solve = st->t_operator + st->t_precond + st->t_vector + st->t_reduction;
  const double rest = st->t_total - st->t_setup - st->t_solve - st->t_io;
  const double r[] = {st->t_setup,      st->t_solve,  st->t_operator,
                      st->t_exchange,   st->t_precond, st->t_vector,
                      st->t_reduction,  st->t_solve - in_solve > 0 ? st->t_solve - in_solve : 0.0,
                      st->t_io,         rest > 0 ? rest : 0.0,
                      st->t_total};
  for (int i = 0; i < NTIMES; i++) v[i] = r[i];
}

int hx_summary_write(const char *dir, const hx_case *cs, const hx_run_stats *st, const char *version,
                     const char *git_hash) {
  /* the preconditioner's report tree as block YAML under preconditioner.report */
  char *tree = NULL;
  size_t tree_len = 0;
  if (st->pc_view[0] && st->pc_report) {
    FILE *tf = open_memstream(&tree, &tree_len);
    HX_CHECK(tf, HX_ERR_MEM, "out of memory");
    hx_opt_write_yaml(st->pc_report, 4, tf);
    const int bad = ferror(tf);
    fclose(tf);
    if (bad) free(tree);
    HX_CHECK(!bad && tree, HX_ERR_MEM, "out of memory");
  }
  size_t cap = 8192 + 512 * (size_t)st->ncolumns + strlen(st->devices) + strlen(st->components_yaml) +
               strlen(st->natural_tags) + tree_len;
  char *b = malloc(cap);
  if (!b) free(tree);
  HX_CHECK(b, HX_ERR_MEM, "out of memory");
  char q1[1024], q2[1024], q3[1024], libs[512], date[64], f1[40], f2[40], f3[40];
  time_t now = time(NULL);
  struct tm tmv;
  gmtime_r(&now, &tmv);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  hx_io_library_versions(libs, sizeof libs);
  size_t n = 0;
#define P(...) n += (size_t)snprintf(b + n, n < cap ? cap - n : 0, __VA_ARGS__)
  yq(q1, sizeof q1, cs->name);
  yq(q2, sizeof q2, cs->path);
  P("# hexcg run summary\ncase: %s\ncase_file: %s\n", q1, q2);
  yq(q1, sizeof q1, version ? version : HX_VERSION_STRING);
  yq(q2, sizeof q2, git_hash ? git_hash : "unknown");
  yq(q3, sizeof q3, libs);
  P("hexcg: {version: %s, git: %s}\nlibraries: %s\ndate: %s\n", q1, q2, q3, date);
  yq(q1, sizeof q1, st->backend);
  P("ranks: %d\nthreads_per_rank: %d\nbackend: %s\n", st->ranks, st->threads > 0 ? st->threads : 1, q1);
  P("mesh: {type: %s, elements: %lld}\n", hx_case_mesh_type_name(cs->mesh.type), (long long)st->elements);
  P("order: %d\ndofs: %lld\n", st->order, (long long)st->dofs);
  yq(q1, sizeof q1, st->reason);
  hx_io_fmt_double(f1, sizeof f1, cs->solver.tol);
  P("solver:\n  type: %s\n  preconditioner: %s\n  tol: %s\n  iterations: %d\n  converged: %s\n  reason: %s\n",
    hx_case_solver_name(cs->solver.type), hx_case_pc_type(cs), f1, st->iterations,
    st->converged ? "true" : "false", q1);
  hx_io_fmt_double(f1, sizeof f1, st->residual0);
  hx_io_fmt_double(f2, sizeof f2, st->residual);
  hx_io_fmt_double(f3, sizeof f3, st->rel_residual);
  P("  initial_residual: %s\n  final_residual: %s\n  final_rel_residual: %s\n", f1, f2, f3);
  hx_io_fmt_double(f1, sizeof f1, st->error_l2);
  hx_io_fmt_double(f2, sizeof f2, st->error_max);
  if (st->exact_known)
    P("error: {l2: %s, max: %s}\n", f1, f2);
  else
    P("error: null  # no exact solution in the case\n");
  for (int c = 0; c < st->ncolumns; c++) { /* several right-hand sides: each column */
    const struct hx_run_column *col = &st->columns[c];
    if (!c) P("columns:  # problem.rhs's right-hand sides, solved at once by block PCG\n");
    yq(q1, sizeof q1, col->reason);
    hx_io_fmt_double(f1, sizeof f1, col->residual0);
    hx_io_fmt_double(f2, sizeof f2, col->residual);
    hx_io_fmt_double(f3, sizeof f3, col->rel_residual);
    P("  - {iterations: %d, converged: %s, reason: %s, initial_residual: %s, final_residual: %s, "
      "final_rel_residual: %s, error: ",
      col->iterations, col->converged ? "true" : "false", q1, f1, f2, f3);
    hx_io_fmt_double(f1, sizeof f1, col->error_l2);
    hx_io_fmt_double(f2, sizeof f2, col->error_max);
    if (col->exact_known)
      P("{l2: %s, max: %s}}\n", f1, f2);
    else
      P("null}\n");
  }
  if (st->nullspace) {
    hx_io_fmt_double(f1, sizeof f1, st->nullspace_defect);
    hx_io_fmt_double(f2, sizeof f2, st->exact_mean);
    P("nullspace: {projected: true, defect: %s, exact_mean: %s}\n", f1, f2);
  }
  if (st->natural_tags[0]) P("natural_tags: [%s]  # no condition in problem.boundary: kappa du/dn = 0\n",
                             st->natural_tags);
  if (st->components > 1) /* a single component: the nullspace key above says it all */
    P("components:\n  count: %lld\n  floating: %lld\n  list:\n%s", (long long)st->components,
      (long long)st->components_floating, st->components_yaml);
  /* setup + solve + io + other = total; operator + preconditioner + vector
   * + reductions + solve_other = solve (hx_io.h, hx_run_stats) */
  double tv[NTIMES];
  time_rows(st, tv);
  P("timers_s:\n");
  for (int i = 0; i < NTIMES; i++) {
    hx_io_fmt_double(f1, sizeof f1, tv[i]);
    P("  %s: %s\n", time_row[i].key, f1);
  }
  if (st->pc_view[0]) {
    yq(q1, sizeof q1, st->pc_view);
    hx_io_fmt_double(f1, sizeof f1, st->pc_setup);
    hx_io_fmt_double(f2, sizeof f2, st->pc_apply);
    P("preconditioner:\n  description: %s\n  setup_s: %s\n  apply_s: %s\n", q1, f1, f2);
    /* preconditioner.precision (issue 14): fp64 for the types without the key */
    const hx_opt *pprec = hx_opt_get(cs->preconditioner.opts, "precision");
    P("  precision: %s\n", pprec && pprec->kind == HX_OPT_SCALAR ? pprec->value : "fp64");
    if (st->pc_two_level) {
      hx_io_fmt_double(f1, sizeof f1, st->pc_fine);
      hx_io_fmt_double(f2, sizeof f2, st->pc_coarse);
      hx_io_fmt_double(f3, sizeof f3, st->pc_overlap_efficiency);
      P("  fine_apply_s: %s\n  coarse_apply_s: %s\n  overlap: %s\n  overlap_efficiency: %s\n", f1, f2,
        st->pc_overlap ? "true" : "false", f3);
    }
    if (tree) P("  report:\n%s", tree);
  }
  free(tree);
  hx_io_fmt_double(f1, sizeof f1, st->op_bytes_per_dof);
  hx_io_fmt_double(f2, sizeof f2, st->op_t_exact);
  P("operator: {geometry: %s, elements_affine: %lld, elements_split: %lld, elements_general: %lld, "
    "bytes_per_dof: %s, fp64_residuals: %d, refinements: %d, fp64_residual_s: %s}\n",
    cs->op.geometry ? "split" : "fp64", (long long)st->op_affine, (long long)st->op_split,
    (long long)st->op_general, f1, st->op_fp64_residuals, st->op_refinements, f2);
  if (st->devices[0]) P("devices:\n%s", st->devices);
  if (st->mem_estimate_bytes > 0) /* the case check's estimate beside the measured peak */
    P("memory: {peak_per_rank_bytes: %.0f, peak_per_rank_mib: %.1f, bytes_per_dof: %.1f, "
      "estimate_per_rank_bytes: %.0f, estimate_per_rank_mib: %.1f}\n",
      st->peak_mem_bytes, st->peak_mem_bytes / 1048576.0,
      st->dofs > 0 ? st->peak_mem_bytes * st->ranks / (double)st->dofs : 0.0, st->mem_estimate_bytes,
      st->mem_estimate_bytes / 1048576.0);
  else
    P("memory: {peak_per_rank_bytes: %.0f, peak_per_rank_mib: %.1f}\n", st->peak_mem_bytes,
      st->peak_mem_bytes / 1048576.0);
  if (st->time.enabled) { /* docs/time.md */
    char f4[40], f5[40], f6[40], f7[40];
    hx_io_fmt_double(f1, sizeof f1, st->time.t_end);
    hx_io_fmt_double(f2, sizeof f2, st->time.iterations_mean);
    hx_io_fmt_double(f3, sizeof f3, st->time.gain_mean);
    hx_io_fmt_double(f4, sizeof f4, st->time.t_step_first);
    hx_io_fmt_double(f5, sizeof f5, st->time.t_step_mean);
    hx_io_fmt_double(f6, sizeof f6, st->time.saved);
    hx_io_fmt_double(f7, sizeof f7, st->time.t_proj);
    P("time:\n  scheme: bdf%d\n  dt: %.17g\n  first_step: %d\n  last_step: %d\n  t_end: %s\n"
      "  iterations: %lld\n  iterations_per_step: %s\n  projection: %d\n  projection_gain_mean: %s\n"
      "  iterations_saved: %s\n  projection_s: %s\n"
      "  first_step_s: %s\n  step_s: %s\n  setups: %d\n  outputs: %d\n  frame_bytes: %lld\n  mesh_bytes: "
      "%lld\n"
      "  checkpoints: %d\n  interrupted: %s\n  run_id: %s\n",
      cs->time.scheme + 1, cs->time.dt, st->time.first_step, st->time.last_step, f1,
      (long long)st->time.iterations, f2, cs->solver.projection, f3, f6, f7, f4, f5, st->time.setups,
      st->time.outputs, st->time.frame_bytes, st->time.mesh_bytes, st->time.checkpoints,
      st->time.interrupted ? "true" : "false", st->time.run_id[0] ? st->time.run_id : "none");
  }
#undef P
  int err = hx_io_write_text(dir, "summary.yaml", b, n, cap, "summary");
  HX_CALL(err);
  return HX_SUCCESS;
}

/* auto that switched: its phases per apply (the mean over all applies mixed
 * Jacobi's with pmg's, issue 54 point 5), from its report tree: applies and
 * apply_s of the whole, and of the pmg child; the pmg setup ran during the
 * solve. Returns 0 (nothing printed) for other types or no switch. */
static double rep_num(const hx_opt *t, const char *key) {
  const hx_opt *o = hx_opt_get(t, key);
  return o && o->value ? strtod(o->value, NULL) : 0.0;
}

static int auto_phases(FILE *out, const hx_opt *rep) {
  const hx_opt *ty = hx_opt_get(rep, "type"), *pmg = hx_opt_get(rep, "pmg");
  if (!ty || !ty->value || strcmp(ty->value, "auto") || !pmg || rep_num(rep, "switched") == 0) return 0;
  const double n = rep_num(rep, "applies"), t = rep_num(rep, "apply_s") * n;
  const double np = rep_num(pmg, "applies"), tp = rep_num(pmg, "apply_s") * np;
  const double nj = n - np;
  fprintf(out, "  %-18s setup %.4f s (jacobi); jacobi %.0f applies, %.3e s per apply; pmg setup %.4f s (during the "
               "solve), %.0f applies, %.3e s per apply\n",
          "", rep_num(rep, "setup_s"), nj, nj > 0 ? (t - tp) / nj : 0.0, rep_num(pmg, "setup_s"), np,
          np > 0 ? tp / np : 0.0);
  return 1;
}

void hx_summary_print(const hx_case *cs, const hx_run_stats *st, FILE *out) {
  double ts = st->t_solve > 0 ? st->t_solve : 0;
  fprintf(out, "---------------------------------------- summary: %s\n", cs->name);
  fprintf(out, "  ranks %d, backend %s, %lld elements, order %d, %lld DOFs\n", st->ranks, st->backend,
          (long long)st->elements, st->order, (long long)st->dofs);
  fprintf(out, "  %-18s %d (%s, %s)\n", "iterations", st->iterations,
          st->converged ? "converged" : "NOT converged", st->reason);
  fprintf(out, "  %-18s %.3e -> %.3e (relative %.3e)\n", "residual", st->residual0, st->residual,
          st->rel_residual);
  if (st->exact_known) fprintf(out, "  %-18s L2 %.3e, max %.3e\n", "error", st->error_l2, st->error_max);
  if (st->nullspace)
    fprintf(out, "  %-18s constant projected out, data defect %.3e%s\n", "null space", st->nullspace_defect,
            st->nullspace_defect > HX_NULLSPACE_WARN ? " (LARGE: incompatible data)" : "");
  fprintf(out, "  %-18s %10s %7s  (the unindented rows add up to the total, the indented ones to solve)\n",
          "time", "seconds", "%total");
  double v[NTIMES];
  time_rows(st, v);
  /* the notes say what this run's rows hold (issue 54 point 5: a steady
   * pmg run carried auto's note; a time run's "other" holds each step's data) */
  const char *pct = hx_case_pc_type(cs);
  const int is_auto = pct && !strcmp(pct, "auto");
  for (int i = 0; i < NTIMES; i++) {
    const char *note = time_row[i].note ? time_row[i].note : "";
    if (!strcmp(time_row[i].key, "preconditioner") && is_auto) note = "  its applies, and auto's switch to pmg";
    if (!strcmp(time_row[i].key, "other") && cs->time.enabled)
      note = "  start-up, case, and each step's data (rhs, boundary values, exact) and outputs' bookkeeping";
    fprintf(out, "    %s%-*s %10.4f %6.1f%%%s\n", time_row[i].sub ? "  " : "", time_row[i].sub ? 14 : 16,
            time_row[i].label, v[i], st->t_total > 0 ? 100.0 * v[i] / st->t_total : 0.0, note);
  }
  if (ts > 0 && st->iterations > 0)
    fprintf(out, "  %-18s %.3e DOF-iterations/s, %.3f ms per iteration\n", "throughput",
            (double)st->dofs * st->iterations / ts, 1e3 * ts / st->iterations);
  fprintf(out, "  %-18s geometry %s: %lld affine, %lld split, %lld general elements, %.1f B/DOF\n", "operator",
          cs->op.geometry ? "split" : "fp64", (long long)st->op_affine, (long long)st->op_split,
          (long long)st->op_general, st->op_bytes_per_dof);
  if (st->op_split > 0)
    fprintf(out, "  %-18s FP64 residuals: %d (replacements in PCG, final checks), %d correction solves, %.4f s\n", "",
            st->op_fp64_residuals, st->op_refinements, st->op_t_exact);
  if (st->pc_view[0]) {
    fprintf(out, "  %-18s %s\n", "preconditioner", st->pc_view);
    if (!auto_phases(out, st->pc_report))
      fprintf(out, "  %-18s setup %.4f s, %.3e s per apply\n", "", st->pc_setup, st->pc_apply);
    if (st->pc_two_level)
      fprintf(out, "  %-18s fine %.3e s, coarse %.3e s per apply, %s, efficiency %.3f\n", "", st->pc_fine,
              st->pc_coarse, st->pc_overlap ? "overlapped" : "sequential", st->pc_overlap_efficiency);
  }
  if (st->mem_estimate_bytes > 0)
    fprintf(out, "  %-18s %.1f MiB peak per rank (max; estimated %.1f MiB)\n", "memory",
            st->peak_mem_bytes / 1048576.0, st->mem_estimate_bytes / 1048576.0);
  else
    fprintf(out, "  %-18s %.1f MiB peak per rank (max)\n", "memory", st->peak_mem_bytes / 1048576.0);
  if (st->time.enabled)
    fprintf(out, "  %-18s steps %d..%d to t = %g: %lld iterations (%.1f per step), %.4f s first step, %.4f s "
                 "per step after it, projection gain %.2e (~%.0f iterations saved), %d setup%s\n",
            "time", st->time.first_step, st->time.last_step, st->time.t_end, (long long)st->time.iterations,
            st->time.iterations_mean, st->time.t_step_first, st->time.t_step_mean, st->time.gain_mean,
            st->time.saved, st->time.setups, st->time.setups == 1 ? "" : "s");
  fprintf(out, "  %-18s %s\n", "output", cs->output.dir);
}
