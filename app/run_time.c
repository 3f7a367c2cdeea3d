/* The app's side of the time loop of `hexcg run` for a case with a time:
 * section (docs/time.md). The stepping itself (BDF1/2/3, the start-up order
 * rise, the projected guess, when to write and when to stop) is time/'s
 * (hx_time_run); here are its callbacks: the data at time t and the shift
 * change (into run_case.c's env->eval and env->reshift), the initial
 * condition, and every file: steps.csv, the per-step history, the temporal
 * collection (series/), checkpoints and what --restart reads and carries. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hx_app.h"
#include "hx_precond.h"
#include "hx_run.h"
#include "hx_time.h"

double hx_run_bdf_shift(int q, double dt) { return hx_time_bdf_shift(q, dt); }

/* growing text (steps.csv) */
typedef struct {
  char *b;
  size_t n, cap;
} tbuf;
static int tb_printf(tbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tb_printf(tbuf *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->b ? t->b + t->n : NULL, t->b ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) return HX_ERROR(HX_ERR_INTERNAL, "format error");
    if (t->b && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return HX_SUCCESS;
    }
    size_t cap = t->cap ? 2 * t->cap : 65536;
    while (cap < t->n + (size_t)k + 1) cap *= 2;
    char *nb = realloc(t->b, cap);
    HX_CHECK(nb, HX_ERR_MEM, "out of memory");
    t->b = nb, t->cap = cap;
  }
}

/* The loop's state on the app's side, freed by hx_run_time on every path. */
typedef struct {
  hx_run_time_env *env;
  const hx_case *cs;
  MPI_Comm comm;
  int k, K;                     /* BDF order, projection capacity */
  int64_t nl;
  hx_run_texpr ex;              /* the exact solution at the step's time (its error norms) */
  hx_run_monitor mon;
  tbuf steps;
  char **files;                 /* the temporal collection: series/ file names and times */
  double *times;
  int nout, capout, last_out;
  int mesh_out;                      /* series/mesh.h5 written by this segment */
  long long mesh_bytes, frame_bytes; /* its size, a frame's (the last written) */
  hx_checkpoint_mesh_id mid;    /* the mesh's identity in checkpoints (nodes, periodicity, ...) */
  char run_id[HX_RUN_ID_LEN];   /* this run's (a restart: the checkpoint's) */
  char ck_run_id[HX_RUN_ID_LEN]; /* --restart: the checkpoint's ("" an earlier hexcg's: none) */
  const char *ckdir, *final;    /* where checkpoints go, the output folder the run commits to */
  int checkpoints;
  char prev[4300];              /* --restart: the folder of the earlier segments' outputs ("" none) */
  /* the steps in steps.csv (rank 0: the earlier segments' rows too), for summary.yaml */
  int rows, first_step;
  long long its;
  double gain_sum, saved_sum, proj_sum, first_s, after_s;
  /* the run's PCG monitor, and the test hook around it (HEXCG_TEST_SIGNAL) */
  hx_pcg_opts po;
  void (*mon_fn)(void *ctx, int iteration, double rnorm, double rel);
  void *mon_ctx;
  int step_now, hook_step, hook_iter, hook_rank, hook_count;
  /* where each step's rows start in the history (to drop an interrupted solve's) */
  int *hs_row, *hs_step, nhs, caphs, hist0;
  double *hs_t;
} tloop;

/* the history rows appended from now on belong to step `step` at time t */
static int hist_step(tloop *L, int step, double t) {
  if (L->nhs == L->caphs) {
    int cap = L->caphs ? 2 * L->caphs : 256;
    HX_CALL(hx_realloc((size_t)cap, sizeof(int), &L->hs_row));
    HX_CALL(hx_realloc((size_t)cap, sizeof(int), &L->hs_step));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &L->hs_t));
    L->caphs = cap;
  }
  L->hs_row[L->nhs] = hx_history_size(L->mon.hist), L->hs_step[L->nhs] = step, L->hs_t[L->nhs++] = t;
  hx_history_set_step(L->mon.hist, step, t);
  return HX_SUCCESS;
}

/* the history without its rows from `keep` on (an interrupted solve's) */
static int hist_truncate(tloop *L, int keep) {
  hx_history h = NULL;
  HX_CALL(hx_history_create(&h));
  int err = HX_SUCCESS, seg = 0;
  for (int i = 0; !err && i < keep; i++) {
    while (seg < L->nhs && L->hs_row[seg] <= i) {
      hx_history_set_step(h, L->hs_step[seg], L->hs_t[seg]);
      seg++;
    }
    int it;
    double r, rel, ts;
    err = hx_history_get(L->mon.hist, i, &it, &r, &rel, &ts);
    if (!err) err = hx_history_append(h, it, r, rel, ts);
  }
  if (err) {
    hx_history_destroy(&h);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  hx_history_destroy(&L->mon.hist);
  L->mon.hist = h;
  while (L->nhs > 0 && L->hs_row[L->nhs - 1] >= keep) L->nhs--;
  return HX_SUCCESS;
}

#define STEPS_HEADER                                                                                              \
  "step,time,order,iterations,initial_residual,final_residual,rel_residual,error_l2,error_max,projection_vectors," \
  "projection_gain,iterations_saved,seconds,projection_s,run_id"
#define HISTORY_HEADER "step,time,iteration,residual,rel_residual,time_s"

/* one row of steps.csv into the totals of summary.yaml */
static void account(tloop *L, int step, long long its, double gain, double saved, double proj, double sec) {
  if (L->rows == 0) L->first_step = step, L->first_s = sec;
  else L->after_s += sec;
  L->rows++, L->its += its, L->gain_sum += gain, L->saved_sum += saved, L->proj_sum += proj;
}

/* The test hook HEXCG_TEST_SIGNAL=STEP:ITERATION:RANK[:COUNT] raises SIGTERM
 * on that rank after that PCG iteration of that step, COUNT times (default
 * 1): a signal that lands mid-solve at a known place (tests/time); 2 makes
 * the second one land in the finishing solve, which ends the process. */
static void hook_monitor(void *ctx, int iteration, double rnorm, double rel) {
  tloop *L = ctx;
  if (L->mon_fn) L->mon_fn(L->mon_ctx, iteration, rnorm, rel);
  if (L->hook_count > 0 && L->step_now == L->hook_step && iteration == L->hook_iter &&
      L->env->ctx->rank == L->hook_rank) {
    L->hook_count--;
    raise(SIGTERM);
  }
}

/* split a CSV line (no quoting: hexcg's own files) in place; returns the field count */
static int csv_split(char *line, char **f, int max) {
  int n = 0;
  char *p = line;
  while (n < max) {
    f[n++] = p;
    char *c = strchr(p, ',');
    if (!c) break;
    *c = '\0', p = c + 1;
  }
  return n;
}

/* a previous run's steps.csv / history.csv (a missing file: NULL); a FIFO or
 * device is refused, not read (issue 53) */
static int read_text(const char *path, char **out) {
  return hx_io_read_file(path, "the previous run's table", (size_t)1 << 30, 1, out, NULL);
}

static int copy_file(const char *from, const char *to) {
  struct stat st;
  if (lstat(from, &st) != 0 || !S_ISREG(st.st_mode))
    return HX_ERROR(HX_ERR_INPUT, "'%s' is not a regular file: a restart carries only hexcg's own files", from);
  if (link(from, to) == 0) return HX_SUCCESS; /* the same file system: no copy */
  FILE *a = fopen(from, "rb"), *b = a ? fopen(to, "wb") : NULL;
  int err = a && b ? HX_SUCCESS : HX_ERROR(HX_ERR_IO, "cannot copy '%s' to '%s': %s", from, to, strerror(errno));
  char buf[1 << 16];
  size_t k;
  while (!err && (k = fread(buf, 1, sizeof buf, a)) > 0)
    if (fwrite(buf, 1, k, b) != k) err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s", to, strerror(errno));
  if (!err && ferror(a)) err = HX_ERROR(HX_ERR_IO, "cannot read '%s'", from);
  if (a) fclose(a);
  if (b && fclose(b) != 0 && !err) err = HX_ERROR(HX_ERR_IO, "cannot write '%s': %s", to, strerror(errno));
  return err;
}

static int add_output(tloop *L, const char *name, double t) {
  if (L->nout == L->capout) {
    int cap = L->capout ? 2 * L->capout : 64;
    HX_CALL(hx_realloc((size_t)cap, sizeof(char *), &L->files));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &L->times));
    L->capout = cap;
  }
  size_t n = strlen(name) + 8;
  HX_CHECK(L->files[L->nout] = malloc(n), HX_ERR_MEM, "out of memory");
  snprintf(L->files[L->nout], n, "series/%s", name);
  L->times[L->nout++] = t;
  return HX_SUCCESS;
}

static int cmp_int(const void *a, const void *b) {
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* rank 0: the earlier steps.csv and history.csv rows of steps <= ck that
 * belong to the checkpoint's run (its run_id column; issue 53, defect 8: a
 * --force run of another case over the folder left its rows there, and a
 * restart carried them); the history rows of the carried steps only */
static int carry_rows(tloop *L, int ck) {
  char p[4400], *text = NULL;
  snprintf(p, sizeof p, "%s/steps.csv", L->prev);
  HX_CALL(read_text(p, &text));
  int carried = 0, foreign = 0, later = 0, lo = -1, hi = -1;
  unsigned char *have = calloc((size_t)ck + 2, 1); /* the steps carried */
  HX_CHECK(have, HX_ERR_MEM, "out of memory");
  if (text) {
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    char *hdr[32], *f[32];
    const int nh = line ? csv_split(line, hdr, 32) : 0;
    static const char *want[] = {"step", "time", "order", "iterations", "initial_residual", "final_residual",
                                 "rel_residual", "error_l2", "error_max", "projection_vectors", "projection_gain",
                                 "iterations_saved", "seconds", "projection_s", "run_id"};
    enum { NW = (int)(sizeof want / sizeof want[0]) - 1 }; /* run_id: checked, then this run's written */
    int col[NW + 1];
    for (int w = 0; w <= NW; w++) {
      col[w] = -1;
      for (int h = 0; h < nh; h++)
        if (!strcmp(hdr[h], want[w])) col[w] = h;
    }
    int err = col[0] < 0 ? HX_ERROR(HX_ERR_INPUT, "--restart: %s has no 'step' column: not a hexcg steps.csv", p)
                         : HX_SUCCESS;
    while (!err && (line = strtok_r(NULL, "\n", &save))) {
      const int nf = csv_split(line, f, 32);
      if (nf != nh) continue; /* a torn line: not a row */
      const int step = atoi(f[col[0]]);
      /* the row's run: a file of an earlier hexcg has no run_id column, and
       * is carried only from a checkpoint of an earlier hexcg (no run_id) */
      const char *rid = col[NW] >= 0 ? f[col[NW]] : "";
      if (strcmp(rid, L->ck_run_id)) {
        foreign++;
        continue;
      }
      if (step > ck || step < 0 || have[step]) {
        later++;
        continue;
      }
      for (int w = 0; !err && w < NW; w++) err = tb_printf(&L->steps, "%s,", col[w] >= 0 ? f[col[w]] : "");
      if (!err) err = tb_printf(&L->steps, "%s\n", L->run_id);
#define COL(w) (col[w] >= 0 ? atof(f[col[w]]) : 0.0)
      account(L, step, (long long)COL(3), COL(10), COL(11), COL(13), COL(12));
#undef COL
      have[step] = 1, carried++;
      if (lo < 0) lo = step;
      hi = step;
    }
    free(text);
    if (err) free(have);
    HX_CALL(err);
  }
  snprintf(p, sizeof p, "%s/history.csv", L->prev);
  int err = carried ? read_text(p, &text) : HX_SUCCESS;
  if (!err && carried && text) {
    char *save = NULL, *line = strtok_r(text, "\n", &save), *f[8];
    int last_step = -1;
    if (line && !strcmp(line, HISTORY_HEADER))
      while (!err && (line = strtok_r(NULL, "\n", &save))) {
        if (csv_split(line, f, 8) != 6) continue;
        const int step = atoi(f[0]);
        if (step < 0 || step > ck || !have[step]) continue; /* not a carried step's */
        if (step != last_step) err = hist_step(L, step, strtod(f[1], NULL)), last_step = step;
        if (!err) err = hx_history_append(L->mon.hist, atoi(f[2]), strtod(f[3], NULL), strtod(f[4], NULL), strtod(f[5], NULL));
      }
    free(text);
  }
  free(have);
  HX_CALL(err);
  if (carried)
    hx_log(HX_LOG_NORMAL, "restart: steps %d..%d of run %s carried from %s/steps.csv into steps.csv and the history\n",
           lo, hi, L->ck_run_id[0] ? L->ck_run_id : "(an earlier hexcg's, no run id)", L->prev);
  else /* a segment killed without a signal (SIGKILL) left no outputs, only its checkpoint */
    hx_log(HX_LOG_NORMAL, "restart: no earlier steps of this run in %s/steps.csv: steps.csv starts after step %d\n",
           L->prev, ck);
  if (foreign)
    hx_log(HX_LOG_NORMAL,
           "restart: %d row%s of %s/steps.csv dropped: of another run than the checkpoint's (run_id %s), e.g. a "
           "--force run into the folder after it\n",
           foreign, foreign == 1 ? "" : "s", L->prev, L->ck_run_id[0] ? L->ck_run_id : "none");
  if (later)
    hx_log(HX_LOG_NORMAL, "restart: %d row%s of %s/steps.csv after the checkpoint's step %d dropped (solved again)\n",
           later, later == 1 ? "" : "s", L->prev, ck);
  return HX_SUCCESS;
}

/* The earlier segments' series files of output steps <= ck whose run_id
 * attribute is the checkpoint's (issue 53, defect 8), into this run's
 * series/ (hard links where possible) and its temporal collection. Rank 0
 * chooses the files; the list reaches every rank. */
static int carry_series(tloop *L, int ck) {
  if (!L->cs->output.solution) return HX_SUCCESS;
  char sdir[4400];
  snprintf(sdir, sizeof sdir, "%s/series", L->prev);
  int *steps = NULL, n = 0, cap = 0, err = HX_SUCCESS, foreign = 0;
  const int rank0 = L->env->ctx->rank == 0;
  DIR *dd = rank0 ? opendir(sdir) : NULL;
  for (struct dirent *e; dd && !err && (e = readdir(dd));) {
    int st, len = 0;
    /* the files of the output schedule only: a segment's last step (written
     * when it stopped) is not an output of the uninterrupted run */
    const char *ext = L->cs->output.format == HX_OUTPUT_VTKHDF ? ".hdf" : ".h5";
    if (sscanf(e->d_name, "solution_%d%n", &st, &len) != 1 || strcmp(e->d_name + len, ext) || st > ck ||
        st < 0 || L->cs->time.output_every <= 0 || st % L->cs->time.output_every != 0)
      continue;
    char path[4700], rid[HX_RUN_ID_LEN];
    snprintf(path, sizeof path, "%s/%s", sdir, e->d_name);
    if (hx_io_solution_run_id(path, rid, sizeof rid) != HX_SUCCESS) {
      hx_error_clear(); /* not HDF5: not this run's file */
      rid[0] = 0, rid[1] = 1;
    }
    if (strcmp(rid, L->ck_run_id) || (rid[0] == 0 && rid[1] == 1)) {
      foreign++;
      continue;
    }
    if (n == cap) err = hx_realloc((size_t)(cap = cap ? 2 * cap : 64), sizeof(int), &steps);
    if (!err) steps[n++] = st;
  }
  if (dd) closedir(dd);
  if (!err && n > 1) qsort(steps, (size_t)n, sizeof(int), cmp_int); /* steps is NULL when n = 0 */
  HX_CALL(hx_io_agree_error(L->comm, err));
  HX_MPI(MPI_Bcast(&n, 1, MPI_INT, 0, L->comm));
  if (!rank0 && n > 0) err = hx_realloc((size_t)n, sizeof(int), &steps);
  HX_CALL(hx_io_agree_error(L->comm, err));
  if (n > 0) HX_MPI(MPI_Bcast(steps, n, MPI_INT, 0, L->comm));
  char odir[4200];
  snprintf(odir, sizeof odir, "%s/series", L->cs->output.dir);
  if (!err && n > 0 && rank0 && mkdir(odir, 0777) != 0 && errno != EEXIST)
    err = HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", odir, strerror(errno));
  for (int i = 0; !err && i < n; i++) {
    char name[64], a[4500], b[4500];
    snprintf(name, sizeof name, "solution_%06d.%s", steps[i],
             L->cs->output.format == HX_OUTPUT_VTKHDF ? "hdf" : "h5");
    snprintf(a, sizeof a, "%s/%s", sdir, name), snprintf(b, sizeof b, "%s/%s", odir, name);
    if (rank0) err = copy_file(a, b);
    if (!err) err = add_output(L, name, steps[i] * L->cs->time.dt);
    if (!err) L->last_out = steps[i];
  }
  if (rank0 && !err && n > 0)
    hx_log(HX_LOG_NORMAL, "restart: %d series file%s of this run carried (steps %d..%d)\n", n, n == 1 ? "" : "s",
           steps[0], steps[n - 1]);
  if (rank0 && !err && foreign > 0)
    hx_log(HX_LOG_NORMAL, "restart: %d file%s of %s dropped: of another run than the checkpoint's (run_id %s)\n",
           foreign, foreign == 1 ? "" : "s", sdir, L->ck_run_id[0] ? L->ck_run_id : "none");
  free(steps);
  HX_CALL(hx_io_agree_error(L->comm, err));
  return HX_SUCCESS;
}

/* hx_time_io.checkpoint: the state into ckdir/checkpoint (issue 53: written
 * at once into the folder the run commits to) */
static int cb_checkpoint(void *ctx, const hx_time_state *s) {
  tloop *L = ctx;
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  const double t = hx_wtime();
  HX_CALL(hx_checkpoint_write(L->comm, L->ckdir, L->cs, &L->mid, L->run_id, s->step, s->t, s->nlev, s->levels,
                              s->nproj, s->proj, L->cs->order, hx_disc_num_elements(d),
                              hx_mesh_element_global_ids(L->env->m), X, Y, Z));
  *L->env->t_io += hx_wtime() - t;
  L->checkpoints++;
  hx_log(HX_LOG_VERBOSE, "checkpoint: step %d written to %s/checkpoint\n", s->step, L->ckdir);
  return HX_SUCCESS;
}

/* the stage's series/ folder into sdir, made */
static int series_dir(tloop *L, char *sdir, size_t len) {
  snprintf(sdir, len, "%s/series", L->cs->output.dir);
  int err = HX_SUCCESS;
  if (L->env->ctx->rank == 0 && mkdir(sdir, 0777) != 0 && errno != EEXIST)
    err = HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", sdir, strerror(errno));
  HX_CALL(hx_io_agree_error(L->comm, err));
  return HX_SUCCESS;
}

/* series/mesh.h5, once per segment: the frames hold no mesh (issue 54) */
static int write_series_mesh(tloop *L) {
  const hx_case *cs = L->cs;
  if (L->mesh_out) return HX_SUCCESS;
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  char sdir[4200];
  HX_CALL(series_dir(L, sdir, sizeof sdir));
  const double t0 = hx_wtime();
  if (cs->output.format == HX_OUTPUT_VTKHDF) /* a VTKHDF mesh (and rank) the frames link to */
    HX_CALL(hx_io_write_vtkhdf(L->comm, sdir, HX_SERIES_VTK_MESH_NAME, NULL, NULL,
                               cs->output.fields & HX_FIELD_RANK, 0, cs->order, hx_disc_num_elements(d),
                               hx_mesh_element_global_ids(L->env->m), X, Y, Z, NULL, NULL, &L->mesh_bytes));
  else
    HX_CALL(hx_io_write_series_mesh(L->comm, sdir, (cs->output.fields & HX_FIELD_RANK) != 0, cs->order,
                                    hx_disc_num_elements(d), hx_mesh_element_global_ids(L->env->m), X, Y, Z,
                                    &L->mesh_bytes));
  *L->env->t_io += hx_wtime() - t0;
  L->mesh_out = 1;
  return HX_SUCCESS;
}

/* hx_time_io.output: the level u of step `step` into
 * series/solution_STEP.h5 (the stage's series folder); work: free for the
 * exact solution at t */
static int cb_output(void *ctx, int step, double t, const double *u, double *work) {
  tloop *L = ctx;
  const hx_case *cs = L->cs;
  if (!cs->output.solution) return HX_SUCCESS;
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  HX_CALL(write_series_mesh(L));
  char sdir[4200], name[64];
  HX_CALL(series_dir(L, sdir, sizeof sdir));
  const int vtk = cs->output.format == HX_OUTPUT_VTKHDF;
  snprintf(name, sizeof name, "solution_%06d.%s", step, vtk ? "hdf" : "h5");
  /* the exact solution at this step's time, if asked for */
  const int want_exact = cs->problem.exact && (cs->output.fields & (HX_FIELD_EXACT | HX_FIELD_ERROR));
  if (want_exact) hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, t, work);
  const double t0 = hx_wtime();
  const int first = L->frame_bytes == 0;
  const int fp32 = cs->output.precision == HX_OUTPUT_FP32;
  if (vtk) /* ParaView's own high-order cells; the mesh an external link into series/mesh.hdf */
    HX_CALL(hx_io_write_vtkhdf(L->comm, sdir, name, HX_SERIES_VTK_MESH_NAME, L->run_id, cs->output.fields,
                               fp32, cs->order, hx_disc_num_elements(d),
                               hx_mesh_element_global_ids(L->env->m), X, Y, Z, u, want_exact ? work : NULL,
                               &L->frame_bytes));
  else
    HX_CALL(hx_io_write_series_frame(L->comm, sdir, name, L->run_id, cs->output.fields, fp32, cs->order,
                                     hx_disc_num_elements(d), hx_mesh_element_global_ids(L->env->m), u,
                                     want_exact ? work : NULL, &L->frame_bytes));
  *L->env->t_io += hx_wtime() - t0;
  if (first) {
    char fl[64] = "";
    const char *nm[] = {"u", "exact", "error"};
    for (int f = 0, c = 0; f < 3; f++)
      if (cs->output.fields & (1u << f))
        snprintf(fl + strlen(fl), sizeof fl - strlen(fl), "%s%s", c++ ? ", " : "", nm[f]);
    hx_log(HX_LOG_NORMAL, "output: %lld bytes per frame (%s, %s), series/%s %lld bytes once\n",
           L->frame_bytes, fl, fp32 ? "fp32" : "fp64", vtk ? HX_SERIES_VTK_MESH_NAME : HX_SERIES_MESH_NAME,
           L->mesh_bytes);
  }
  HX_CALL(add_output(L, name, t));
  L->last_out = step;
  return HX_SUCCESS;
}

/* hx_time_problem.initial: level 0 the case's time.initial at t = 0
 * (checked finite), a start-up level j the exact solution at t = j dt */
static int cb_initial(void *ctx, int level, double t, double *u) {
  tloop *L = ctx;
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_disc d = *env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  if (level > 0) {
    hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, t, u);
    return HX_SUCCESS;
  }
  switch (cs->time.initial_kind) {
    case HX_TIME_INIT_EXPR: hx_expr_eval_array_t(cs->time.initial, (size_t)L->nl, X, Y, Z, 0.0, u); break;
    case HX_TIME_INIT_EXACT: hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, 0.0, u); break;
    case HX_TIME_INIT_FILE: {
      const double t0 = hx_wtime();
      HX_CALL(hx_io_read_solution_at(L->comm, cs->time.initial_file, cs->order, hx_disc_num_elements(d),
                                     hx_mesh_element_global_ids(env->m), X, Y, Z, u));
      *env->t_io += hx_wtime() - t0;
      break;
    }
  }
  HX_CALL(hx_io_agree_error(L->comm,
                            hx_case_check_finite(cs, "time.initial", cs->time.initial, (size_t)L->nl, X, Y, Z, u)));
  L->mon.t0 = hx_wtime();
  return HX_SUCCESS;
}

/* --restart: the checkpoint's state into r->levels and r->proj */
static int read_checkpoint(tloop *L, hx_time_resume *r) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_disc d = *env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  char dir[4300];
  HX_CALL(hx_checkpoint_find(env->restart, dir, sizeof dir));
  int step = 0, nlev = 0, np = 0;
  double t = 0;
  const double t0 = hx_wtime();
  HX_CALL(hx_checkpoint_read(L->comm, dir, cs, &L->mid, cs->order, hx_disc_num_elements(d),
                             hx_mesh_element_global_ids(env->m), X, Y, Z, r->k, r->levels, r->K, r->proj, &step, &t,
                             &nlev, &np, L->ck_run_id));
  /* the run goes on under the checkpoint's id (one of an earlier hexcg has none: a new one) */
  if (L->ck_run_id[0]) snprintf(L->run_id, sizeof L->run_id, "%s", L->ck_run_id);
  *env->t_io += hx_wtime() - t0;
  r->step = step, r->nlev = nlev, r->nproj = np;
  /* the earlier outputs are in the folder the checkpoint is in */
  snprintf(L->prev, sizeof L->prev, "%s", dir);
  char *slash = strrchr(L->prev, '/');
  if (slash) *slash = '\0';
  else snprintf(L->prev, sizeof L->prev, ".");
  hx_log(HX_LOG_NORMAL, "restart: step %d (t = %g) from %s, %d level%s, %d projection vector%s\n", step, t, dir,
         nlev, nlev > 1 ? "s" : "", np, np == 1 ? "" : "s");
  snprintf(env->res->time.run_id, sizeof env->res->time.run_id, "%s", L->run_id);
  return HX_SUCCESS;
}

/* A fresh run's id: 16 hex digits from the system's random source (the
 * time and process id where it has none), made on rank 0; every rank gets it. */
static int new_run_id(MPI_Comm comm, char id[HX_RUN_ID_LEN]) {
  int rank = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    unsigned long long r = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&r, sizeof r, 1, f) != 1) r = 0;
    if (f) fclose(f);
    r ^= (unsigned long long)(hx_wtime() * 1e6) * 0x9E3779B97F4A7C15ull ^ (unsigned long long)getpid();
    snprintf(id, HX_RUN_ID_LEN, "%016llx", r);
  }
  HX_MPI(MPI_Bcast(id, HX_RUN_ID_LEN, MPI_CHAR, 0, comm));
  return HX_SUCCESS;
}

/* rank 0: whether the output folder's committed set is this run's and ends
 * at step `last` (summary.yaml's time.run_id and time.last_step); else why not */
static int committed_set_is(tloop *L, int last, char *why, size_t len) {
  char p[4300], *text = NULL;
  snprintf(p, sizeof p, "%s/summary.yaml", L->final);
  if (hx_io_read_file(p, "the results' summary", (size_t)1 << 24, 1, &text, NULL) != HX_SUCCESS) {
    hx_error_clear();
    text = NULL;
  }
  if (!text) {
    snprintf(why, len, "%s holds no results (no summary.yaml)", L->final);
    return 0;
  }
  char rid[HX_RUN_ID_LEN] = "";
  int ls = -1;
  const char *t = strstr(text, "\ntime:\n");
  for (const char *l = t; l && *l; l = strchr(l + 1, '\n')) {
    if (!strncmp(l, "\n  run_id: ", 11)) sscanf(l + 11, "%39s", rid);
    if (!strncmp(l, "\n  last_step: ", 14)) ls = atoi(l + 14);
    if (l[1] && l[1] != ' ' && l != t) break; /* the end of the time: section */
  }
  free(text);
  if (strcmp(rid, L->run_id)) {
    snprintf(why, len, "the results in %s are of another run (run_id %s, the checkpoint's %s)", L->final,
             rid[0] ? rid : "none", L->run_id);
    return 0;
  }
  if (ls != last) {
    snprintf(why, len, "the results of this run in %s end at step %d", L->final, ls);
    return 0;
  }
  return 1;
}

/* hx_time_io.resume: the checkpoint's state; at the case's last step,
 * whether the run is complete; else the earlier segments' rows and series
 * files carried into this run's */
static int cb_resume(void *ctx, hx_time_resume *r) {
  tloop *L = ctx;
  hx_run_time_env *env = L->env;
  HX_CALL(read_checkpoint(L, r));
  const int n0 = r->step;
  if (n0 >= L->cs->time.steps) {
    /* complete only when the folder's committed set is this run's and ends
     * at this step (issue 53, defect 9: a kill after the last checkpoint,
     * before the commit, left no results, or another run's, and a restart
     * said "complete"); otherwise the outputs are rebuilt from the
     * checkpoint (the final state is in it) and committed */
    char why[256];
    int complete = 0;
    if (env->ctx->rank == 0) complete = committed_set_is(L, n0, why, sizeof why);
    HX_MPI(MPI_Bcast(&complete, 1, MPI_INT, 0, L->comm));
    if (complete) { /* a requeued or repeated job must not replace its results */
      hx_log(HX_LOG_NORMAL,
             "restart: the checkpoint is at step %d, the case's last: the run is complete; nothing solved, nothing "
             "written (the results of run %s in %s are kept)\n",
             n0, L->run_id, L->final);
      r->complete = 1;
      return HX_SUCCESS;
    }
    hx_log(HX_LOG_NORMAL,
           "restart: the checkpoint is at step %d, the case's last, but %s: the outputs are rebuilt from the "
           "checkpoint and committed\n",
           n0, why);
  }
  L->mon.t0 = hx_wtime();
  /* a continued run holds the whole run: the earlier segments' rows and series files */
  int err = env->ctx->rank == 0 ? carry_rows(L, n0) : HX_SUCCESS;
  HX_CALL(hx_io_agree_error(L->comm, err));
  HX_CALL(carry_series(L, n0));
  r->last_output = L->last_out;
  return HX_SUCCESS;
}

/* hx_time_problem.data: run_case.c's data at t (env->eval) and, where the
 * error norms are due, the exact solution checked finite at the nodes (a
 * value of rhs, a boundary value or the exact solution that is not finite
 * at t: HX_ERR_INPUT with the key and its line:col; time/ adds the step and
 * t and keeps the steps before it, issue 53, defect 19) */
static int cb_data(void *ctx, double t, hx_time_data *a) {
  tloop *L = ctx;
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  int everr = env->eval(env->arg, t);
  if (!everr && cs->problem.exact && a->exact_due) {
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(*env->d, &X, &Y, &Z));
    hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, t, a->work);
    everr = hx_io_agree_error(L->comm, hx_case_check_finite(cs, "problem.exact", cs->problem.exact, (size_t)L->nl,
                                                            X, Y, Z, a->work));
  }
  HX_CALL(everr);
  a->f = *env->hf, a->g = *env->hg, a->bn = *env->hbn;
  L->ex.e = cs->problem.exact, L->ex.t = t;
  const int ex = cs->problem.exact && a->exact_due;
  a->exact = (hx_field){ex ? hx_run_texpr_fn : NULL, &L->ex, ex ? hx_run_texpr_fn_n : NULL};
  return HX_SUCCESS;
}

/* hx_time_problem.set_shift: run_case.c rebuilds the operator and the
 * preconditioner with lambda + shift (env->reshift) */
static int cb_set_shift(void *ctx, double shift, hx_disc *d, hx_pc *pc) {
  hx_run_time_env *env = ((tloop *)ctx)->env;
  HX_CALL(env->reshift(env->arg, shift));
  env->shift = shift, env->setups++;
  *d = *env->d, *pc = *env->pc;
  return HX_SUCCESS;
}

/* hx_time_io.solve_begin: the history rows from now on are step `step`'s;
 * again: those of its interrupted solve dropped first */
static int cb_solve_begin(void *ctx, int step, double t, int again) {
  tloop *L = ctx;
  if (again) HX_CALL(hist_truncate(L, L->hist0));
  HX_CALL(hist_step(L, step, t));
  if (!again) L->hist0 = hx_history_size(L->mon.hist);
  L->step_now = step;
  return HX_SUCCESS;
}

/* hx_time_io.step: the step's row of steps.csv and summary.yaml's totals */
static int cb_step(void *ctx, const hx_time_step *s) {
  tloop *L = ctx;
  const hx_solve_result *dr = s->solve;
  char e1[32] = "", e2[32] = "";
  if (dr->exact_known) snprintf(e1, sizeof e1, "%.17g", dr->err_l2), snprintf(e2, sizeof e2, "%.17g", dr->err_max);
  HX_CALL(tb_printf(&L->steps, "%d,%.17g,%d,%d,%.17g,%.17g,%.17g,%s,%s,%d,%.17g,%.3f,%.6g,%.6g,%s\n", s->step, s->t,
                    s->order, dr->pcg.iterations, dr->pcg.r0norm, dr->pcg.rnorm, dr->pcg.rel, e1, e2,
                    s->projection_vectors, s->gain, s->saved, s->seconds, s->projection_s, L->run_id));
  account(L, s->step, dr->pcg.iterations, s->gain, s->saved, s->projection_s, s->seconds);
  return HX_SUCCESS;
}

/* the run's identity, its solver options (with the test hook), the history
 * and the steps.csv header: what the callbacks write into */
static int setup(tloop *L) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_disc d = *env->d;
  L->nl = hx_disc_num_l(d);
  {
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
    HX_CALL(hx_checkpoint_mesh_hash(L->comm, cs->order, hx_disc_num_elements(d), hx_mesh_element_global_ids(env->m),
                                    X, Y, Z, &L->mid.nodes));
    L->mid.have_nodes = 1;
    HX_CALL(hx_run_mesh_parts(L->comm, env->m, &L->mid));
  }
  HX_CALL(new_run_id(L->comm, L->run_id));
  snprintf(env->res->time.run_id, sizeof env->res->time.run_id, "%s", L->run_id);
  hx_run_pcg_opts(cs, &L->mon, &L->po);
  L->mon_fn = L->po.monitor, L->mon_ctx = L->po.monitor_ctx;
  const char *h = hx_env("HEXCG_TEST_SIGNAL");
  L->hook_count = 1;
  if (h && sscanf(h, "%d:%d:%d:%d", &L->hook_step, &L->hook_iter, &L->hook_rank, &L->hook_count) >= 3)
    L->po.monitor = hook_monitor, L->po.monitor_ctx = L;
  else
    L->hook_count = 0;
  HX_CALL(hx_history_create(&L->mon.hist));
  HX_CALL(hx_progress_create(0, 0, cs->solver.tol, stdout, &L->mon.prog)); /* one line per step instead */
  L->mon.t0 = hx_wtime();
  HX_CALL(tb_printf(&L->steps, STEPS_HEADER "\n"));
  return HX_SUCCESS;
}

/* the temporal collection, the history and steps.csv into the output folder */
static int write_tables(tloop *L) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  const double t0 = hx_wtime();
  if (cs->output.solution && L->nout > 0) {
    HX_CALL(write_series_mesh(L)); /* a segment that wrote no frame of its own (all carried) */
    int err =
        env->ctx->rank != 0 ? HX_SUCCESS
        : cs->output.format == HX_OUTPUT_VTKHDF
            ? hx_io_write_vtkhdf_series(cs->output.dir, L->nout, (const char *const *)L->files, L->times)
            : hx_io_write_solution_series(cs->output.dir, cs->order,
                                          (long long)hx_mesh_num_global_elements(env->m), cs->output.fields,
                                          cs->output.precision == HX_OUTPUT_FP32, L->nout,
                                          (const char *const *)L->files, L->times);
    HX_CALL(hx_io_agree_error(L->comm, err));
  }
  if (cs->output.history) HX_CALL(hx_history_write(L->mon.hist, L->comm, cs->output.dir));
  int err = HX_SUCCESS;
  if (env->ctx->rank == 0) {
    char p[4200];
    snprintf(p, sizeof p, "%s/steps.csv", cs->output.dir);
    err = hx_io_write_file_atomic(p, L->steps.b, L->steps.n);
  }
  HX_CALL(hx_io_agree_error(L->comm, err));
  *env->t_io += hx_wtime() - t0;
  return HX_SUCCESS;
}

/* summary.yaml: the last step's solve, the totals over the steps in
 * steps.csv (after a restart the earlier segments' too) */
static void fill_result(tloop *L, const hx_time_result *tr) {
  hx_run_time_env *env = L->env;
  hx_run_result *res = env->res;
  const hx_solve_result *tot = &tr->total;
  res->time.enabled = 1;
  res->time.first_step = L->rows > 0 ? L->first_step : tr->first_step;
  res->time.last_step = tr->last_step, res->time.t_end = tr->t_end;
  if (tr->data_failed) {
    snprintf(res->time.data_error, sizeof res->time.data_error,
             "%s, at step %d (t = %.12g); steps %d..%d are written to %s (summary.yaml: reason data_not_finite)",
             tr->data_error, tr->data_step, tr->data_t, L->rows > 0 ? L->first_step : tr->first_step,
             tr->data_step - 1, L->final);
    res->time.data_failed = 1;
  }
  res->dofs = hx_disc_num_dofs(*env->d);
  res->iterations = (int)L->its;
  res->converged = !tr->failed && !tr->interrupted && !tr->data_failed;
  snprintf(res->reason, sizeof res->reason, "%s",
           tr->data_failed   ? "data_not_finite"
           : tr->interrupted ? "interrupted"
           : tr->solved      ? hx_reason_name(tot->pcg.reason)
                             : "converged_rtol");
  res->residual0 = tot->pcg.r0norm, res->residual = tot->pcg.rnorm, res->rel_residual = tot->pcg.rel;
  res->exact_known = tot->exact_known, res->error_l2 = tot->err_l2, res->error_max = tot->err_max;
  res->time.iterations = L->its;
  res->time.iterations_mean = L->rows ? (double)L->its / L->rows : 0.0;
  res->time.gain_mean = L->rows ? L->gain_sum / L->rows : 0.0;
  res->time.saved = L->saved_sum;
  res->time.t_proj = L->proj_sum;
  res->time.t_step_first = L->first_s;
  res->time.t_step_mean = L->rows > 1 ? L->after_s / (L->rows - 1) : 0.0;
  res->time.setups = env->setups;
  res->time.interrupted = tr->interrupted;
  res->time.checkpoints = L->checkpoints;
  res->time.outputs = L->nout;
  res->time.frame_bytes = L->frame_bytes, res->time.mesh_bytes = L->mesh_bytes;
  env->solved = tr->solved;
}

static int loop(tloop *L) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  HX_CALL(setup(L));
  const hx_time_opts o = {.comm = L->comm,
                          .scheme = L->k,
                          .dt = cs->time.dt,
                          .steps = cs->time.steps,
                          .projection = L->K,
                          .output_every = cs->time.output_every,
                          .checkpoint_every = cs->time.checkpoint_every,
                          .error_every = cs->time.error_every,
                          .exact_startup = cs->time.initial_kind == HX_TIME_INIT_EXACT,
                          .restart = env->restart != NULL,
                          .d = *env->d,
                          .pc = *env->pc,
                          .shift = env->shift,
                          .pcg = &L->po};
  const hx_time_problem p = {L, cb_data, cb_set_shift, cb_initial};
  const hx_time_io io = {L, cb_resume, cb_solve_begin, cb_step, cb_output, cb_checkpoint, NULL};
  hx_time_result tr;
  HX_CALL(hx_time_run(&o, &p, &io, &tr));
  if (tr.complete) {
    hx_run_result *res = env->res;
    res->time.enabled = 1, res->time.complete = 1;
    res->time.first_step = res->time.last_step = tr.last_step, res->time.t_end = tr.t_end;
    return HX_SUCCESS;
  }
  *env->dr = tr.total;
  HX_CALL(write_tables(L));
  fill_result(L, &tr);
  return HX_SUCCESS;
}

int hx_run_time(hx_run_time_env *env) {
  tloop L;
  memset(&L, 0, sizeof L);
  L.env = env, L.cs = env->cs, L.comm = env->ctx->comm;
  L.k = env->cs->time.scheme + 1;
  L.K = env->cs->solver.projection;
  L.ckdir = L.final = env->final_dir ? env->final_dir : env->cs->output.dir;
  L.last_out = -1;
  /* a checkpoint.new that a kill left half written goes first (issue 53) */
  int err = hx_checkpoint_clean(L.comm, L.ckdir);
  if (!err) err = loop(&L);
  free(L.steps.b);
  for (int i = 0; i < L.nout; i++) free(L.files[i]);
  free(L.files), free(L.times);
  free(L.hs_row), free(L.hs_step), free(L.hs_t);
  hx_history_destroy(&L.mon.hist);
  hx_progress_destroy(&L.mon.prog);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* FNV-1a of a name (0 for none) */
static uint64_t name_hash(const char *s) {
  if (!s) return 0;
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

int hx_run_mesh_parts(MPI_Comm comm, hx_mesh m, hx_checkpoint_mesh_id *mid) {
  const int32_t E = hx_mesh_num_elements(m);
  const int64_t *gid = hx_mesh_element_global_ids(m);
  const size_t n = E > 0 ? (size_t)E : 1;
  int64_t *b = malloc(n * 18 * sizeof(int64_t));
  HX_CHECK(b, HX_ERR_MEM, "out of memory");
  /* periodicity: each face's neighbour (element, face, orientation; -1 on the boundary) */
  const int64_t *ne = NULL;
  const int8_t *nf = NULL, *no = NULL;
  int err = hx_mesh_face_neighbors(m, &ne, &nf, &no);
  for (int32_t e = 0; !err && e < E; e++)
    for (int f = 0; f < 6; f++)
      b[18 * e + f] = ne[6 * e + f], b[18 * e + 6 + f] = nf[6 * e + f], b[18 * e + 12 + f] = no[6 * e + f];
  if (!err) err = hx_checkpoint_hash_elements(comm, E, gid, b, 18 * sizeof(int64_t), &mid->part[0]);
  if (!err) mid->part[0] ^= (uint64_t)hx_mesh_num_periodic_faces(m) * 0x9E3779B97F4A7C15ull;
  /* connectivity: the element vertex ids */
  if (!err) err = hx_checkpoint_hash_elements(comm, E, gid, hx_mesh_element_vertex_ids(m), 8 * sizeof(int64_t),
                                              &mid->part[1]);
  /* boundary tags: each face's tag by name */
  const int32_t *ft = hx_mesh_face_tags(m);
  for (int32_t e = 0; !err && e < E; e++)
    for (int f = 0; f < 6; f++)
      b[6 * e + f] = (int64_t)name_hash(ft[6 * e + f] >= 0 ? hx_mesh_tag_name(m, ft[6 * e + f]) : NULL);
  if (!err) err = hx_checkpoint_hash_elements(comm, E, gid, b, 6 * sizeof(int64_t), &mid->part[2]);
  /* materials: each element's by name */
  const int32_t *mat = hx_mesh_element_material(m);
  for (int32_t e = 0; !err && e < E; e++) b[e] = (int64_t)name_hash(mat ? hx_mesh_material_name(m, mat[e]) : NULL);
  if (!err) err = hx_checkpoint_hash_elements(comm, E, gid, b, sizeof(int64_t), &mid->part[3]);
  free(b);
  HX_CALL(err);
  mid->have_parts = 1;
  return HX_SUCCESS;
}
