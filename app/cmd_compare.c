/* hexcg compare RUN BASELINE: compare two residual histories (and the
 * summaries of their runs), optionally check bounds and draw both curves.
 * Exit status: 0 match, 1 mismatch, 2 unusable input. Rules and defaults:
 * app/hx_compare.h, docs/regression.md. Runs on rank 0; other ranks wait. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hx_app.h"
#include "hx_compare.h"
#include "hx_core.h"

static void compare_usage(FILE *out) {
  fprintf(out,
          "usage: hexcg compare RUN BASELINE [OPTIONS]\n"
          "       hexcg compare RUN --bounds FILE [OPTIONS]\n"
          "\n"
          "Compare the residual history of RUN with BASELINE. Each is an output folder\n"
          "of 'hexcg run' (its history.csv or history.h5, and summary.yaml if present) or\n"
          "a history.csv / history.h5 file. Compared: the iteration counts, the residual\n"
          "and rel_residual columns row by row up to the shorter history, the initial\n"
          "residual within round-off (else another problem), from the summaries\n"
          "converged, reason, error norms, order, elements and dofs (not the timings),\n"
          "the effective cases' keys (case.yaml: a problem key that differs is another\n"
          "problem; solver keys are named) and, with solution.h5 on both sides, how far\n"
          "apart the solutions are. See docs/regression.md.\n"
          "\n"
          "options:\n"
          "  --rtol R             residual tolerance: |r - b| <= R * max(b, F * b_0),\n"
          "                       b the baseline value (default %g)\n"
          "  --floor F            fraction of the initial residual below which residuals\n"
          "                       are compared in absolute terms (default %g)\n"
          "  --iteration-slack K  iteration counts may differ by K (default %d)\n"
          "  --error-rtol E       relative tolerance on error_l2/error_max (default %g)\n"
          "  --error-floor A      error norms also match within A absolutely (default %g:\n"
          "                       below it a norm measures the solver's tolerance and the\n"
          "                       rounding, not the discretisation)\n"
          "  --strict             round-off or mismatch: no 'consistent' verdict\n"
          "  --consistent-error C runs on other rank counts (a preconditioner that depends\n"
          "                       on the partition, pmg) that fail the checks above are\n"
          "                       CONSISTENT (exit 0) when both converged to the same tol,\n"
          "                       their iteration counts are within max(%d, %g n) and their\n"
          "                       error norms within C relatively (default %g)\n"
          "  --bounds FILE        also check RUN against the 'bounds:' of FILE\n"
          "                       (max_iterations, max_rel_residual, max_error_l2,\n"
          "                       max_error_max, converged)\n"
          "  --plot FILE.png      draw both curves (semilog) into FILE.png (needs python3\n"
          "                       with matplotlib: $HEXCG_PYTHON, else /usr/bin/python3,\n"
          "                       else python3 from PATH),\n"
          "                       labelled with each run's case name, every case key that\n"
          "                       differs between the two runs (problem keys first) and its\n"
          "                       rank count; the legend below the axes\n"
          "  --plot-x iteration|time  the plot's x axis (default iteration; time: the\n"
          "                       history's time_s, seconds since the run started)\n"
          "  --quiet              print only the result line (and errors)\n"
          "  -h, --help           this help\n"
          "\n"
          "exit status: 0 match (or consistent), 1 mismatch, 2 unusable input (missing or\n"
          "malformed files, bad options, a plot that cannot be written)\n",
          HX_CMP_RTOL_DEFAULT, HX_CMP_FLOOR_DEFAULT, HX_CMP_SLACK_DEFAULT, HX_CMP_ERROR_RTOL_DEFAULT,
          HX_CMP_ERROR_FLOOR_DEFAULT, HX_CMP_PART_SLACK_MIN, HX_CMP_PART_SLACK_FRAC,
          HX_CMP_CONSISTENT_ERROR_DEFAULT);
}

typedef struct {
  const char *run, *base, *bounds, *plot;
  hx_cmp_opts o;
  int quiet;
} cmp_args;

static int parse_pos_double(const char *name, const char *v, double lo, int lo_open, double hi, double *out,
                            char *err, size_t len) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (!v[0] || *end || errno == ERANGE || !isfinite(x) || (lo_open ? x <= lo : x < lo) || x > hi) {
    snprintf(err, len, "%s expects a number %s %g%s, got '%s'", name, lo_open ? ">" : ">=", lo,
             hi < 1e300 ? (hi == 1 ? " and <= 1" : "") : "", v);
    return 2;
  }
  *out = x;
  return 0;
}

/* 0 ok, 1 help, 2 usage error (message in err). */
static int parse_args(int argc, char **argv, cmp_args *a, char *err, size_t len) {
  a->o.rtol = HX_CMP_RTOL_DEFAULT;
  a->o.floor = HX_CMP_FLOOR_DEFAULT;
  a->o.error_rtol = HX_CMP_ERROR_RTOL_DEFAULT;
  a->o.error_floor = HX_CMP_ERROR_FLOOR_DEFAULT;
  a->o.slack = HX_CMP_SLACK_DEFAULT;
  a->o.consistent_error = HX_CMP_CONSISTENT_ERROR_DEFAULT;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = NULL;
    char name[64];
    snprintf(name, sizeof name, "%s", arg);
    char *eq = strchr(name, '=');
    if (!strncmp(arg, "--", 2) && eq) *eq = '\0', val = arg + (eq - name) + 1;
    int takes = !strcmp(name, "--rtol") || !strcmp(name, "--floor") || !strcmp(name, "--iteration-slack") ||
                !strcmp(name, "--error-rtol") || !strcmp(name, "--error-floor") ||
                !strcmp(name, "--bounds") || !strcmp(name, "--plot") || !strcmp(name, "--plot-x") ||
                !strcmp(name, "--consistent-error");
    if (takes && !val) {
      if (i + 1 >= argc) return snprintf(err, len, "option %s needs a value", name), 2;
      val = argv[++i];
    } else if (!takes && val) {
      return snprintf(err, len, "option %s takes no value", name), 2;
    }
    if (!strcmp(name, "-h") || !strcmp(name, "--help")) return 1;
    if (!strcmp(name, "--rtol")) {
      if (parse_pos_double(name, val, 0, 1, 1e308, &a->o.rtol, err, len)) return 2;
    } else if (!strcmp(name, "--floor")) {
      if (parse_pos_double(name, val, 0, 0, 1, &a->o.floor, err, len)) return 2;
    } else if (!strcmp(name, "--error-rtol")) {
      if (parse_pos_double(name, val, 0, 1, 1e308, &a->o.error_rtol, err, len)) return 2;
    } else if (!strcmp(name, "--error-floor")) {
      if (parse_pos_double(name, val, 0, 0, 1e308, &a->o.error_floor, err, len)) return 2;
    } else if (!strcmp(name, "--consistent-error")) {
      if (parse_pos_double(name, val, 0, 1, 1e308, &a->o.consistent_error, err, len)) return 2;
    } else if (!strcmp(name, "--strict")) {
      a->o.strict = 1;
    } else if (!strcmp(name, "--plot-x")) {
      if (strcmp(val, "iteration") && strcmp(val, "time"))
        return snprintf(err, len, "--plot-x expects 'iteration' or 'time', got '%s'", val), 2;
      a->o.x_axis = val;
    } else if (!strcmp(name, "--iteration-slack")) {
      if (!hx_app_parse_count(val, &a->o.slack))
        return snprintf(err, len, "--iteration-slack expects an integer >= 0, got '%s'", val), 2;
    } else if (!strcmp(name, "--bounds")) {
      if (!val[0]) return snprintf(err, len, "--bounds needs a file name"), 2;
      a->bounds = val;
    } else if (!strcmp(name, "--plot")) {
      if (!val[0]) return snprintf(err, len, "--plot needs a file name"), 2;
      a->plot = val;
    } else if (!strcmp(name, "--quiet") || !strcmp(name, "-q")) {
      a->quiet = 1;
    } else if (arg[0] == '-' && arg[1]) {
      return snprintf(err, len, "unknown option '%s'", arg), 2;
    } else if (!a->run) {
      a->run = arg;
    } else if (!a->base) {
      a->base = arg;
    } else {
      return snprintf(err, len, "too many arguments: '%s' (expected RUN and BASELINE)", arg), 2;
    }
  }
  if (!a->run) return snprintf(err, len, "no RUN given"), 2;
  if (!a->base && !a->bounds) return snprintf(err, len, "no BASELINE given (and no --bounds)"), 2;
  if (!a->base && a->plot) return snprintf(err, len, "--plot needs a BASELINE"), 2;
  if (a->o.x_axis && !a->plot) return snprintf(err, len, "--plot-x goes with --plot"), 2;
  return 0;
}

/* scripts/plot_history.py: $HEXCG_PLOT_SCRIPT, else in the source tree the
 * build was configured from (HEXCG_SOURCE_DIR), else found from this source
 * file's path when the compiler saw an absolute one (ccache's base_dir hands
 * it a relative one: scripts/ccache_env.sh). */
static int find_plot_script(char *buf, size_t len) {
  const char *env = hx_env("HEXCG_PLOT_SCRIPT");
  if (env && env[0]) {
    HX_CHECK(access(env, R_OK) == 0, HX_ERR_INPUT, "--plot: cannot read HEXCG_PLOT_SCRIPT '%s': %s", env,
             strerror(errno));
    snprintf(buf, len, "%s", env);
    return HX_SUCCESS;
  }
#ifdef HEXCG_SOURCE_DIR
  snprintf(buf, len, "%s/scripts/plot_history.py", HEXCG_SOURCE_DIR);
  if (access(buf, R_OK) == 0) return HX_SUCCESS;
#endif
  const char *self = __FILE__, *tail = "app/cmd_compare.c";
  size_t sl = strlen(self), tl = strlen(tail);
  if (self[0] == '/' && sl > tl && !strcmp(self + sl - tl, tail)) {
    snprintf(buf, len, "%.*sscripts/plot_history.py", (int)(sl - tl), self);
    if (access(buf, R_OK) == 0) return HX_SUCCESS;
  }
  return HX_ERROR(HX_ERR_INPUT,
                  "--plot: cannot find scripts/plot_history.py of the hexcg sources; set "
                  "HEXCG_PLOT_SCRIPT to its path");
}

static int draw_plot(const cmp_args *a, const hx_cmp_run *run, const hx_cmp_run *base,
                     const hx_cmp_result *res) {
  char script[4096], mark[32] = "", rtol[40], fl[40];
  HX_CALL(find_plot_script(script, sizeof script));
  const char *py = hx_python(); /* the project's one rule: $HEXCG_PYTHON, /usr/bin/python3, python3 */
  const hx_cmp_curve *c = res->res.first_fails ? &res->res : res->rel.first_fails ? &res->rel : NULL;
  if (c) snprintf(mark, sizeof mark, "%d", run->it[c->first]);
  snprintf(rtol, sizeof rtol, "%.17g", a->o.rtol);
  snprintf(fl, sizeof fl, "%.17g", a->o.floor);
  const char *argv[24];
  int n = 0;
  argv[n++] = py, argv[n++] = script;
  argv[n++] = "--run", argv[n++] = run->hist_path, argv[n++] = "--run-label", argv[n++] = run->arg;
  argv[n++] = "--baseline", argv[n++] = base->hist_path, argv[n++] = "--baseline-label",
  argv[n++] = base->arg;
  if (mark[0]) argv[n++] = "--mark", argv[n++] = mark;
  argv[n++] = "--rtol", argv[n++] = rtol, argv[n++] = "--floor", argv[n++] = fl;
  if (a->o.x_axis) argv[n++] = "--x", argv[n++] = a->o.x_axis;
  /* the labels: the keys that differ, problem keys first (all of them) */
  if (run->keys.n && base->keys.n) argv[n++] = "--keys", argv[n++] = res->diff_keys;
  argv[n++] = "--output", argv[n++] = a->plot;
  argv[n] = NULL;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  HX_CHECK(pid >= 0, HX_ERR_IO, "--plot: cannot start %s: %s", py, strerror(errno));
  if (pid == 0) {
    execvp(py, (char *const *)argv);
    fprintf(stderr, "hexcg compare: --plot: cannot run %s: %s\n", py, strerror(errno));
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    HX_CHECK(errno == EINTR, HX_ERR_IO, "--plot: waitpid failed: %s", strerror(errno));
  HX_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, HX_ERR_INPUT,
           "--plot: %s %s failed (status %d, see its message above; HEXCG_PYTHON selects the python)", py,
           script, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return HX_SUCCESS;
}

/* Rank 0's work; returns the exit status. */
static int compare_main(const cmp_args *a) {
  hx_cmp_run run, base;
  memset(&run, 0, sizeof run), memset(&base, 0, sizeof base);
  hx_bounds b;
  int err = hx_cmp_run_load(a->run, "RUN", &run);
  if (!err && a->base) err = hx_cmp_run_load(a->base, "BASELINE", &base);
  if (!err && a->bounds) err = hx_bounds_read(a->bounds, &b);
  FILE *out = a->quiet ? NULL : stdout;
  hx_cmp_result res;
  memset(&res, 0, sizeof res);
  if (!err && a->base) err = hx_compare_runs(&run, &base, &a->o, out, &res);
  const int cmp_failures = res.failures; /* the bounds' failures are never "consistent" */
  if (!err && a->bounds) {
    if (out && !a->base) fprintf(out, "hexcg compare: bounds of %s\n", a->bounds);
    hx_check_bounds(&run, &b, out, &res);
  }
  int status = 0;
  if (!err) {
    /* consistent (another partition of a partition-dependent preconditioner,
     * within the allowances): not a mismatch unless a bound failed */
    const int consistent = res.failures && res.consistent && res.failures == cmp_failures;
    status = res.failures && !consistent ? 1 : 0;
    if (a->base && out) {
      char v[4096];
      hx_cmp_verdict(&res, v, sizeof v);
      printf("%sverdict: %s\n", out ? "\n" : "", v);
    }
    printf("%sresult: %s (%d of %d checks failed%s)\n", out && !a->base ? "\n" : "",
           !res.failures ? "MATCH"
           : consistent  ? "CONSISTENT"
                         : "MISMATCH",
           res.failures, res.checks, consistent ? "; within the partition allowances" : "");
    fflush(stdout);
    if (a->plot) {
      err = draw_plot(a, &run, &base, &res);
      if (!err && out) printf("plot: %s\n", a->plot);
    }
  }
  if (err) {
    fflush(stdout);
    if (err == HX_ERR_INPUT)
      fprintf(stderr, "hexcg compare: %s\n", hx_error_message());
    else
      hx_error_print(stderr, 0, 1);
    /* files that cannot be read (HX_ERR_INPUT, HDF5 read errors: HX_ERR_IO) are
     * unusable input; running out of memory or a bug is a plain failure */
    status = err == HX_ERR_INPUT || err == HX_ERR_IO ? 2 : 1;
  }
  hx_cmp_run_free(&run);
  hx_cmp_run_free(&base);
  return status;
}

int hx_cmd_compare(hx_app_ctx *ctx, int argc, char **argv) {
  cmp_args a;
  memset(&a, 0, sizeof a);
  char msg[512] = "";
  int pa = parse_args(argc, argv, &a, msg, sizeof msg);
  if (pa) return hx_app_usage_exit(ctx, pa, "compare", msg, compare_usage);
  int status = 0;
  if (ctx->rank == 0) status = compare_main(&a);
  MPI_Bcast(&status, 1, MPI_INT, 0, ctx->comm);
  return status;
}
