/* hexcg run: the command-line front end of a solve. Parses the options,
 * loads and validates the case on every rank, prepares the output folder,
 * writes the effective case, prints the setup, calls hx_run_case (the run
 * driver) and writes summary.yaml. Input errors print exactly
 * "case.yaml:LINE:COL: message" on stderr (once) and exit with status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_app.h"
#include "hx_core.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_run.h"
#include "hx_version_gen.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* OpenMP threads per rank (set at start-up, app/main.c) and the cores the rank may use */
static void thread_counts(int *threads, int *cores) {
#ifdef _OPENMP
  *threads = omp_get_max_threads(), *cores = omp_get_num_procs();
#else
  *threads = 1, *cores = 1;
#endif
}

static void run_usage(FILE *out) {
  fprintf(out,
          "usage: hexcg run CASE.yaml [OPTIONS]\n"
          "\n"
          "Solve the case described by CASE.yaml (see docs/case-format.md).\n"
          "\n"
          "options:\n"
          "  --set KEY=VALUE     override a case key, e.g. --set solver.tol=1e-10,\n"
          "                      --set mesh.elements=[4,4,4]; repeatable; KEY=null\n"
          "                      removes the key (its default applies)\n"
          "  --output DIR        output folder (default: output.dir of the case)\n"
          "  --force             overwrite the outputs of an existing output folder\n"
          "  --progress-every N  progress line every N iterations (0: none)\n"
          "  --restart DIR       continue a time-dependent run from the checkpoint in DIR\n"
          "                      (an output folder or its checkpoint/; implies --force,\n"
          "                      docs/time.md)\n"
          "  --dry-run           validate, prepare the output folder and write the\n"
          "                      effective case, but do not solve\n"
          "  --quiet             print errors only\n"
          "  --verbose           print more (effective case, every iteration, tracebacks)\n"
          "  --log-view          print the log events at the end: count, max/min seconds over\n"
          "                      ranks, GB/s and GFLOP/s of the model counts (docs/case-format.md)\n"
          "  -h, --help          this help\n"
          "\n"
          "'hexcg keys' lists every case key with its type, default and help.\n");
}

int hx_cmd_keys(hx_app_ctx *ctx, int argc, char **argv) {
  int names = 0, tune = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--names")) {
      names = 1;
    } else if (!strcmp(argv[i], "--tune")) {
      tune = 1;
    } else {
      const int help = !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
      if (ctx->rank == 0) {
        if (!help) fprintf(stderr, "hexcg keys: unknown option '%s'\n\n", argv[i]);
        fprintf(help ? stdout : stderr,
                "usage: hexcg keys [--names | --tune]\n\n"
                "Every key of a case file (docs/case-format.md), from the option tables:\n"
                "its type, default and help; --names: the dotted keys alone, one per line.\n"
                "--tune: the environment switches instead (how a run computes, never what:\n"
                "A/B switches of kernels and algorithms, test hooks, limits of the machine),\n"
                "each with its values, default, what it does and why it exists.\n");
      }
      return help ? 0 : 2;
    }
  }
  if (ctx->rank == 0 && tune) {
    hx_tune_print(stdout);
    fflush(stdout);
    return 0;
  }
  if (ctx->rank == 0) {
    hx_case_print_keys(names, stdout);
    hx_pc_options_print_keys(names, stdout);
    fflush(stdout);
  }
  return 0;
}

typedef struct {
  const char *case_path;
  const char **sets;
  int nsets;
  const char *output, *restart;
  int force, dry_run, progress_every, log_view;
  hx_log_level level;
} run_opts;

/* Returns 0 on success, 1 for --help, 2 for a usage error (message in err). */
static int parse_args(int argc, char **argv, run_opts *o, char *err, size_t errlen) {
  o->level = HX_LOG_NORMAL;
  o->progress_every = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = NULL;
    char name[64];
    snprintf(name, sizeof name, "%s", a);
    char *eq = strchr(name, '=');
    if (!strncmp(a, "--", 2) && eq) *eq = '\0', val = a + (eq - name) + 1;
    int takes = !strcmp(name, "--set") || !strcmp(name, "--output") || !strcmp(name, "--progress-every") ||
                !strcmp(name, "--restart");
    if (takes && !val) {
      /* "--output --force" is a missing value, not a folder named --force
       * (--output=--x still names one) */
      if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))
        return snprintf(err, errlen, "option %s needs a value", name), 2;
      val = argv[++i];
    } else if (!takes && val) {
      return snprintf(err, errlen, "option %s takes no value", name), 2;
    }
    if (!strcmp(name, "-h") || !strcmp(name, "--help")) return 1;
    if (!strcmp(name, "--set")) {
      o->sets[o->nsets++] = val;
    } else if (!strcmp(name, "--output")) {
      if (!val[0]) return snprintf(err, errlen, "--output needs a folder name"), 2;
      o->output = val;
    } else if (!strcmp(name, "--restart")) {
      if (!val[0]) return snprintf(err, errlen, "--restart needs a folder name"), 2;
      o->restart = val;
      o->force = 1; /* the continued run replaces the results it continues */
    } else if (!strcmp(name, "--progress-every")) {
      if (!hx_app_parse_count(val, &o->progress_every))
        return snprintf(err, errlen, "--progress-every expects an integer >= 0, got '%s'", val), 2;
    } else if (!strcmp(name, "--force")) {
      o->force = 1;
    } else if (!strcmp(name, "--log-view")) {
      o->log_view = 1;
    } else if (!strcmp(name, "--dry-run")) {
      o->dry_run = 1;
    } else if (!strcmp(name, "--quiet") || !strcmp(name, "-q")) {
      if (o->level == HX_LOG_VERBOSE)
        return snprintf(err, errlen, "--quiet and --verbose exclude each other"), 2;
      o->level = HX_LOG_QUIET;
    } else if (!strcmp(name, "--verbose") || !strcmp(name, "-v")) {
      if (o->level == HX_LOG_QUIET)
        return snprintf(err, errlen, "--quiet and --verbose exclude each other"), 2;
      o->level = HX_LOG_VERBOSE;
    } else if (a[0] == '-' && a[1]) {
      return snprintf(err, errlen, "unknown option '%s'", a), 2;
    } else if (!o->case_path) {
      o->case_path = a;
    } else {
      return snprintf(err, errlen, "more than one case file given ('%s' and '%s')", o->case_path, a), 2;
    }
  }
  if (!o->case_path) return snprintf(err, errlen, "no case file given"), 2;
  return 0;
}

/* Collective: agree on an error; the lowest failing rank prints it. Input
 * errors print the bare message (the "case.yaml:LINE:COL: ..." form). */
static int agree_fail(const hx_app_ctx *ctx, int err, int *status) {
  int mine = err ? ctx->rank : ctx->size, root = ctx->size;
  MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, ctx->comm);
  if (root == ctx->size) return 0;
  int code = err;
  MPI_Bcast(&code, 1, MPI_INT, root, ctx->comm);
  if (ctx->rank == root) {
    if (code == HX_ERR_INPUT && hx_log_get_level() < HX_LOG_VERBOSE) {
      fprintf(stderr, "%s\n", hx_error_message());
      fflush(stderr);
    } else {
      hx_error_print(stderr, ctx->rank, hx_log_get_level() >= HX_LOG_VERBOSE);
    }
  }
  *status = hx_app_status(code);
  return 1;
}

static int write_effective(const hx_app_ctx *ctx, const hx_case *cs, const char *dir, char *path, size_t len) {
  int err = HX_SUCCESS;
  if (snprintf(path, len, "%s/case.yaml", dir) >= (int)len)
    err = HX_ERROR(HX_ERR_INPUT, "output directory name is too long");
  if (!err && ctx->rank == 0) err = hx_case_write_effective(cs, path);
  return err;
}

static void print_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof line, f)) printf("  | %s", line);
  fclose(f);
}

/* the case with the command line's settings, its preconditioner options
 * checked and its size checked against the memory, before anything is built */
static int load_case(const hx_app_ctx *ctx, const run_opts *o, hx_case **csp) {
  hx_case *cs = NULL;
  int err = hx_case_load_comm(ctx->comm, o->case_path, o->nsets, o->sets, &cs);
  *csp = cs;
  if (!err && o->output) err = hx_case_set_output_dir(cs, o->output);
  if (!err && o->progress_every >= 0) cs->output.progress_every = o->progress_every;
  /* the preconditioner's options, the levels against the order, the
   * solver's variant, the size against the memory (the library's checks) */
  if (!err) err = hx_api_check_case(ctx->comm, cs);
  if (!err && o->restart && !cs->time.enabled)
    err = HX_ERROR(HX_ERR_INPUT, "--restart %s: %s has no time: section; only a time-dependent run continues from a "
                   "checkpoint (docs/time.md)", o->restart, cs->path);
  return err;
}

/* rank 0: the version, the ranks and threads, the case (and with --verbose
 * the effective case file) */
static void print_banner(const hx_app_ctx *ctx, const run_opts *o, const hx_case *cs, const char *final_dir,
                         const char *effective) {
  if (ctx->rank != 0 || o->level < HX_LOG_NORMAL) return;
  int nt, nc;
  thread_counts(&nt, &nc);
  printf("hexcg %s (git %s), %d MPI rank%s x %d OpenMP thread%s (%d cores available to a rank)\n",
         HX_VERSION_FULL, HX_GIT_HASH, ctx->size, ctx->size > 1 ? "s" : "", nt, nt > 1 ? "s" : "", nc);
  hx_case_print(cs, stdout);
  if (o->level >= HX_LOG_VERBOSE) {
    printf("effective case (%s/case.yaml):\n", final_dir);
    print_file(effective);
  }
  fflush(stdout);
}

/* --dry-run: the mesh, discretisation, data and preconditioner too
 * (hx_run_check stops before the first iteration), so that a passing dry run
 * means the run will start; the exit status */
static int dry_run(hx_app_ctx *ctx, const run_opts *o, hx_case *cs, hx_outdir od, const char *final_dir) {
  int status = 0, err;
  hx_checkpoint_mesh_id mid;
  memset(&mid, 0, sizeof mid);
  err = hx_run_check(ctx, cs, o->restart ? &mid : NULL);
  if (agree_fail(ctx, err, &status)) return status;
  if (o->restart) { /* the checkpoint exists and fits the case and its mesh (the GLL node hash: when the run reads it) */
    char ckdir[4300];
    int ck_step = 0;
    double ck_time = 0.0;
    err = hx_checkpoint_check(ctx->comm, o->restart, cs, &mid, ckdir, sizeof ckdir, &ck_step, &ck_time);
    if (agree_fail(ctx, err, &status)) return status;
    hx_log(HX_LOG_NORMAL, "dry run: --restart from %s, step %d (t = %g) of %d: it fits the case\n", ckdir, ck_step,
           ck_time, cs->time.steps);
  }
  if (hx_outdir_had_results(od)) { /* keep the earlier results with their own case.yaml */
    hx_log(HX_LOG_NORMAL, "dry run: case valid (the results in %s are kept as they are%s)\n", final_dir,
           o->force ? "" : "; the run needs --force to replace them");
  } else {
    err = hx_outdir_commit(od);
    if (agree_fail(ctx, err, &status)) return status;
    hx_log(HX_LOG_NORMAL, "dry run: case valid, effective case written to %s/case.yaml\n", final_dir);
  }
  return status;
}

/* what the run left unset in its result: the ranks, threads, backend,
 * order and total time */
static void result_defaults(const hx_app_ctx *ctx, const hx_case *cs, double t0, hx_run_result *res) {
  if (res->ranks == 0) res->ranks = ctx->size;
  if (res->threads == 0) {
    int nc;
    thread_counts(&res->threads, &nc);
  }
  if (!res->backend[0]) snprintf(res->backend, sizeof res->backend, "%s", hx_case_backend_name(cs->backend));
  if (res->order == 0) res->order = cs->order;
  if (res->t_total == 0) res->t_total = hx_wtime() - t0;
}

/* the exit status of a committed run, with its message: data that failed at
 * a step, an interruption (with the command that continues it), or no
 * convergence */
static int run_status(const hx_app_ctx *ctx, const run_opts *o, const hx_run_result *res, const char *final_dir) {
  int status = 0;
  if (res->time.data_failed) {
    /* data not finite at a step: the steps before it are committed, the
     * status is that of invalid input (issue 53, defect 19) */
    int err = HX_ERROR(HX_ERR_INPUT, "%s", res->time.data_error);
    agree_fail(ctx, err, &status);
  } else if (res->time.interrupted) {
    /* a time-dependent run: the last completed step is checkpointed */
    int sig = hx_signal_pending();
    MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (ctx->rank == 0) {
      /* the command that continues in the same folder with the same case */
      fprintf(stderr,
              "hexcg run: interrupted by %s after step %d (t = %g); checkpoint in %s/checkpoint, the outputs so far in "
              "%s; continue with: hexcg run %s",
              hx_signal_name(sig), res->time.last_step, res->time.t_end, final_dir, final_dir, o->case_path);
      for (int i = 0; i < o->nsets; i++) fprintf(stderr, " --set '%s'", o->sets[i]);
      fprintf(stderr, " --output %s --restart %s\n", final_dir, final_dir);
    }
    status = HX_EXIT_CHECKPOINTED;
  } else if (!strcmp(res->reason, "interrupted")) {
    /* a signal: the solve stopped at the same iteration on every rank, the outputs are written;
     * the signal may have reached some ranks only */
    int sig = hx_signal_pending();
    MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (ctx->rank == 0)
      fprintf(stderr,
              "hexcg run: interrupted by %s after %d iterations; the results so far are in %s (summary.yaml: "
              "reason interrupted)\n",
              hx_signal_name(sig), res->iterations, final_dir);
    status = HX_EXIT_INTERRUPTED;
  } else if (!res->converged) {
    /* results are written, but the exit status says the solve failed */
    if (ctx->rank == 0)
      fprintf(stderr, "hexcg run: not converged after %d iterations (%s)\n", res->iterations, res->reason);
    status = HX_EXIT_NOT_CONVERGED;
  }
  return status;
}

/* the run into the staging folder, its summary, and the commit that makes
 * it the results; the exit status */
static int run_and_commit(hx_app_ctx *ctx, const run_opts *o, hx_case *cs, hx_outdir od, const char *final_dir,
                          double t0) {
  int status = 0;
  /* the writers write into the staging folder */
  int err = hx_case_set_output_dir(cs, hx_outdir_stage(od));
  if (agree_fail(ctx, err, &status)) return status;
  hx_run_result res;
  memset(&res, 0, sizeof res);
  err = cs->time.enabled ? hx_run_case_time(ctx, cs, o->restart, final_dir, &res) : hx_run_case(ctx, cs, &res);
  if (agree_fail(ctx, err, &status)) return status; /* nothing of this run is kept */
  if (res.time.complete) return status; /* --restart of a finished run: its results stay as they are (status 0) */
  result_defaults(ctx, cs, t0, &res);
  if (ctx->rank == 0) err = hx_summary_write(cs->output.dir, cs, &res, HX_VERSION_FULL, HX_GIT_HASH);
  /* rank 0's error reaches every rank before the collective commit (issue 32: 2 ranks hung here) */
  int failed = agree_fail(ctx, err, &status);
  if (!failed) {
    err = hx_outdir_commit(od);
    if (!err) err = hx_case_set_output_dir(cs, final_dir);
    failed = agree_fail(ctx, err, &status);
  }
  if (failed) {
    hx_opt_free(&res.pc_report);
    return status;
  }
  if (ctx->rank == 0 && o->level >= HX_LOG_NORMAL) {
    hx_summary_print(cs, &res, stdout); /* auto's phases from the report tree */
    fflush(stdout);
  }
  hx_opt_free(&res.pc_report);
  if (o->log_view) hx_log_event_view(ctx->comm, stdout);
  return run_status(ctx, o, &res, final_dir);
}

int hx_cmd_run(hx_app_ctx *ctx, int argc, char **argv) {
  double t0 = hx_wtime();
  run_opts o;
  memset(&o, 0, sizeof o);
  o.sets = calloc((size_t)argc + 1, sizeof(char *));
  if (!o.sets) return hx_app_fail(ctx, HX_ERROR(HX_ERR_MEM, "out of memory"), 1);
  char msg[512] = "";
  int pa = parse_args(argc, argv, &o, msg, sizeof msg);
  if (pa) {
    free(o.sets);
    return hx_app_usage_exit(ctx, pa, "run", msg, run_usage);
  }
  hx_log_init(ctx->rank, o.level);
  /* SIGINT, SIGTERM, SIGUSR1: stop the solve at its next iteration and keep what it did */
  hx_signals_install();

  int status = 0, err;
  hx_case *cs = NULL;
  hx_outdir od = NULL;
  char *final_dir = NULL;
  char effective[4200];
  err = load_case(ctx, &o, &cs);
  if (agree_fail(ctx, err, &status)) goto done;

  /* every file goes to a staging folder and the complete set replaces the
   * old one at the end: a failed or killed run loses no earlier result */
  /* a dry run writes nothing into a folder holding results (below), so it
   * does not need --force there: it says that the run will */
  err = hx_outdir_open(ctx->comm, cs->output.dir, o.force || o.dry_run, &od);
  if (agree_fail(ctx, err, &status)) goto done;
  final_dir = strdup(cs->output.dir);
  if (!final_dir) err = HX_ERROR(HX_ERR_MEM, "out of memory");
  if (agree_fail(ctx, err, &status)) goto done;
  err = write_effective(ctx, cs, hx_outdir_stage(od), effective, sizeof effective);
  if (agree_fail(ctx, err, &status)) goto done;
  print_banner(ctx, &o, cs, final_dir, effective);
  status = o.dry_run ? dry_run(ctx, &o, cs, od, final_dir) : run_and_commit(ctx, &o, cs, od, final_dir, t0);

done:
  hx_outdir_close(&od); /* without a commit: the staged files and the folders this run made go */
  free(final_dir);
  hx_case_destroy(&cs);
  free(o.sets);
  return status;
}
