/* The time loop of `hexcg run` for a case with a time: section
 * (docs/time.md): BDF1/2/3 for du/dt - div(kappa grad u) + lambda u = f(x, t),
 * each step the Helmholtz solve of the run's operator (built once with
 * lambda + beta0/dt by run_case.c) with the initial guess projected on the
 * earlier solutions; steps.csv, the per-step history, the temporal
 * collection, checkpoints, signals and --restart. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
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

#define HX_BDF_MAX 3

/* BDFq: (beta0 u^{n+1} - sum_j alpha_j u^{n+1-j}) / dt (DESIGN.md) */
static const double bdf_beta0[HX_BDF_MAX] = {1.0, 1.5, 11.0 / 6.0};
static const double bdf_alpha[HX_BDF_MAX][HX_BDF_MAX] = {{1.0, 0, 0}, {2.0, -0.5, 0}, {3.0, -1.5, 1.0 / 3.0}};

double hx_run_bdf_shift(int q, double dt) { return bdf_beta0[q - 1] / dt; }


/* The iterations the projected guess saved on a step, estimated: the solve
 * reduced its residual by rnorm / r0norm in `iterations` steps, a mean
 * contraction rho per iteration; the guess had already reduced ||b|| by the
 * gain, which at that rate takes log(gain) / log(rho) iterations. 0 without
 * a gain (< 1) or a contraction to measure. */
static double iterations_saved(const hx_pcg_result *r, double gain) {
  if (!(gain > 0.0 && gain < 1.0) || r->iterations <= 0 || !(r->r0norm > 0.0) || !(r->rnorm > 0.0)) return 0.0;
  const double rho = pow(r->rnorm / r->r0norm, 1.0 / r->iterations);
  return rho > 0.0 && rho < 1.0 ? log(gain) / log(rho) : 0.0;
}

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

/* The loop's state, freed by hx_run_time on every path. */
typedef struct {
  hx_run_time_env *env;
  const hx_case *cs;
  MPI_Comm comm;
  int k, K;                     /* BDF order, projection capacity */
  int64_t nl;
  double *lev[HX_BDF_MAX];      /* u^n, u^{n-1}, ... (host L-vectors, newest first) */
  double *unew, *feff, *pbuf[64]; /* pbuf: allocated at the first checkpoint */
  int nlev;                     /* levels held */
  hx_proj pj;
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
  void (*mon_fn)(void *ctx, int iteration, double rnorm, double rel);
  void *mon_ctx;
  int step_now, hook_step, hook_iter, hook_rank, hook_count;
  /* where each step's rows start in the history (to drop an interrupted solve's) */
  int *hs_row, *hs_step, nhs, caphs;
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

static int ensure_proj(tloop *L) {
  if (!L->K) return HX_SUCCESS;
  hx_proj_destroy(&L->pj);
  HX_CALL(hx_proj_create(hx_disc_op(*L->env->d), L->K, &L->pj));
  return HX_SUCCESS;
}

static int write_checkpoint(tloop *L, int step) {
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  /* the basis belongs to the operator of the current shift: when the next
   * step's order rises (BDF start-up) the run drops it, so must a restart */
  const int qn = L->nlev < L->k ? L->nlev : L->k;
  const int np = hx_run_bdf_shift(qn, L->cs->time.dt) == L->env->shift ? hx_proj_size(L->pj) : 0;
  for (int i = 0; i < np; i++) {
    if (!L->pbuf[i]) HX_CHECK(L->pbuf[i] = malloc(sizeof(double) * (size_t)(L->nl > 0 ? L->nl : 1)), HX_ERR_MEM,
                              "out of memory");
    HX_CALL(hx_proj_get(L->pj, i, L->pbuf[i]));
  }
  const double t = hx_wtime();
  HX_CALL(hx_checkpoint_write(L->comm, L->ckdir, L->cs, &L->mid, L->run_id, step, step * L->cs->time.dt, L->nlev,
                              (const double *const *)L->lev, np, (const double *const *)L->pbuf, L->cs->order,
                              hx_disc_num_elements(d), hx_mesh_element_global_ids(L->env->m), X, Y, Z));
  *L->env->t_io += hx_wtime() - t;
  L->checkpoints++;
  hx_log(HX_LOG_VERBOSE, "checkpoint: step %d written to %s/checkpoint\n", step, L->ckdir);
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

/* the level u of step `step` into series/solution_STEP.h5 (the stage's series folder) */
static int write_output(tloop *L, int step, const double *u) {
  const hx_case *cs = L->cs;
  if (!cs->output.solution || L->last_out == step) return HX_SUCCESS;
  hx_disc d = *L->env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  HX_CALL(write_series_mesh(L));
  char sdir[4200], name[64];
  HX_CALL(series_dir(L, sdir, sizeof sdir));
  const int vtk = cs->output.format == HX_OUTPUT_VTKHDF;
  snprintf(name, sizeof name, "solution_%06d.%s", step, vtk ? "hdf" : "h5");
  /* the exact solution at this step's time, if asked for (feff is free between steps) */
  const int want_exact = cs->problem.exact && (cs->output.fields & (HX_FIELD_EXACT | HX_FIELD_ERROR));
  if (want_exact)
    hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, step * cs->time.dt, L->feff);
  const double t0 = hx_wtime();
  const int first = L->frame_bytes == 0;
  const int fp32 = cs->output.precision == HX_OUTPUT_FP32;
  if (vtk) /* ParaView's own high-order cells; the mesh an external link into series/mesh.hdf */
    HX_CALL(hx_io_write_vtkhdf(L->comm, sdir, name, HX_SERIES_VTK_MESH_NAME, L->run_id, cs->output.fields,
                               fp32, cs->order, hx_disc_num_elements(d),
                               hx_mesh_element_global_ids(L->env->m), X, Y, Z, u, want_exact ? L->feff : NULL,
                               &L->frame_bytes));
  else
    HX_CALL(hx_io_write_series_frame(L->comm, sdir, name, L->run_id, cs->output.fields, fp32, cs->order,
                                     hx_disc_num_elements(d), hx_mesh_element_global_ids(L->env->m), u,
                                     want_exact ? L->feff : NULL, &L->frame_bytes));
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
  HX_CALL(add_output(L, name, step * cs->time.dt));
  L->last_out = step;
  return HX_SUCCESS;
}

/* u at t = 0 into lev[0] (and the exact start-up levels); returns the step reached */
static int initial_levels(tloop *L, int *n0) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_disc d = *env->d;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  *n0 = 0;
  if (env->restart) {
    char dir[4300];
    HX_CALL(hx_checkpoint_find(env->restart, dir, sizeof dir));
    for (int i = 0; i < L->K; i++)
      if (!L->pbuf[i]) HX_CHECK(L->pbuf[i] = malloc(sizeof(double) * (size_t)(L->nl > 0 ? L->nl : 1)), HX_ERR_MEM,
                                "out of memory");
    int step = 0, nlev = 0, np = 0;
    double t = 0;
    const double t0 = hx_wtime();
    HX_CALL(hx_checkpoint_read(L->comm, dir, cs, &L->mid, cs->order, hx_disc_num_elements(d),
                               hx_mesh_element_global_ids(env->m), X, Y, Z, L->k, L->lev, L->K, L->pbuf, &step, &t,
                               &nlev, &np, L->ck_run_id));
    /* the run goes on under the checkpoint's id (one of an earlier hexcg has none: a new one) */
    if (L->ck_run_id[0]) snprintf(L->run_id, sizeof L->run_id, "%s", L->ck_run_id);
    *env->t_io += hx_wtime() - t0;
    L->nlev = nlev, *n0 = step;
    /* the earlier outputs are in the folder the checkpoint is in */
    snprintf(L->prev, sizeof L->prev, "%s", dir);
    char *slash = strrchr(L->prev, '/');
    if (slash) *slash = '\0';
    else snprintf(L->prev, sizeof L->prev, ".");
    if (np > 0 && L->pj) HX_CALL(hx_proj_set(L->pj, np, (const double *const *)L->pbuf));
    hx_log(HX_LOG_NORMAL, "restart: step %d (t = %g) from %s, %d level%s, %d projection vector%s\n", step, t, dir,
           nlev, nlev > 1 ? "s" : "", np, np == 1 ? "" : "s");
    return HX_SUCCESS;
  }
  switch (cs->time.initial_kind) {
    case HX_TIME_INIT_EXPR: hx_expr_eval_array_t(cs->time.initial, (size_t)L->nl, X, Y, Z, 0.0, L->lev[0]); break;
    case HX_TIME_INIT_EXACT: hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, 0.0, L->lev[0]); break;
    case HX_TIME_INIT_FILE: {
      const double t0 = hx_wtime();
      HX_CALL(hx_io_read_solution_at(L->comm, cs->time.initial_file, cs->order, hx_disc_num_elements(d),
                                     hx_mesh_element_global_ids(env->m), X, Y, Z, L->lev[0]));
      *env->t_io += hx_wtime() - t0;
      break;
    }
  }
  HX_CALL(hx_io_agree_error(
      L->comm, hx_case_check_finite(cs, "time.initial", cs->time.initial, (size_t)L->nl, X, Y, Z, L->lev[0])));
  L->nlev = 1;
  /* with the exact solution known, BDFk starts from it at t = dt .. (k-1) dt:
   * the full order (and its operator) from the first solved step */
  if (cs->time.initial_kind == HX_TIME_INIT_EXACT && L->k > 1) {
    for (int j = 1; j < L->k && j <= cs->time.steps; j++) {
      for (int i = L->nlev; i > 0; i--) {
        double *tmp = L->lev[i];
        L->lev[i] = L->lev[i - 1], L->lev[i - 1] = tmp;
      }
      hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, j * cs->time.dt, L->lev[0]);
      L->nlev++, *n0 = j;
    }
  }
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

static int loop(tloop *L) {
  hx_run_time_env *env = L->env;
  const hx_case *cs = L->cs;
  hx_run_result *res = env->res;
  const double dt = cs->time.dt;
  const int N = cs->time.steps;
  hx_disc d = *env->d;
  L->nl = hx_disc_num_l(d);
  const size_t bytes = sizeof(double) * (size_t)(L->nl > 0 ? L->nl : 1);
  for (int i = 0; i < L->k; i++) HX_CHECK(L->lev[i] = malloc(bytes), HX_ERR_MEM, "out of memory");
  HX_CHECK((L->unew = malloc(bytes)) && (L->feff = malloc(bytes)), HX_ERR_MEM, "out of memory");
  /* L->pbuf (host copies of the projection vectors) only when a checkpoint is read or written */
  {
    const double *X, *Y, *Z;
    HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
    HX_CALL(hx_checkpoint_mesh_hash(L->comm, cs->order, hx_disc_num_elements(d), hx_mesh_element_global_ids(env->m),
                                    X, Y, Z, &L->mid.nodes));
    L->mid.have_nodes = 1;
    HX_CALL(hx_run_mesh_parts(L->comm, env->m, &L->mid));
  }
  HX_CALL(new_run_id(L->comm, L->run_id));
  HX_CALL(ensure_proj(L));
  int n0 = 0;
  HX_CALL(initial_levels(L, &n0));
  snprintf(res->time.run_id, sizeof res->time.run_id, "%s", L->run_id);
  if (env->restart && n0 >= N) {
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
      res->time.enabled = 1, res->time.complete = 1;
      res->time.first_step = res->time.last_step = n0, res->time.t_end = n0 * dt;
      return HX_SUCCESS;
    }
    hx_log(HX_LOG_NORMAL,
           "restart: the checkpoint is at step %d, the case's last, but %s: the outputs are rebuilt from the "
           "checkpoint and committed\n",
           n0, why);
  }

  hx_pcg_opts po;
  hx_run_pcg_opts(cs, &L->mon, &po);
  L->mon_fn = po.monitor, L->mon_ctx = po.monitor_ctx;
  {
    const char *h = hx_env("HEXCG_TEST_SIGNAL");
    L->hook_count = 1;
    if (h && sscanf(h, "%d:%d:%d:%d", &L->hook_step, &L->hook_iter, &L->hook_rank, &L->hook_count) >= 3)
      po.monitor = hook_monitor, po.monitor_ctx = L;
    else
      L->hook_count = 0;
  }
  HX_CALL(hx_history_create(&L->mon.hist));
  HX_CALL(hx_progress_create(0, 0, cs->solver.tol, stdout, &L->mon.prog)); /* one line per step instead */
  L->mon.t0 = hx_wtime();
  HX_CALL(tb_printf(&L->steps, STEPS_HEADER "\n"));
  /* a continued run holds the whole run: the earlier segments' rows and series files */
  if (L->prev[0]) {
    int err = env->ctx->rank == 0 ? carry_rows(L, n0) : HX_SUCCESS;
    HX_CALL(hx_io_agree_error(L->comm, err));
    HX_CALL(carry_series(L, n0));
  }
  /* a fresh run's first frame: the initial state at t = 0 (the oldest level:
   * after an exact start-up the newer ones are at dt .. (k-1) dt) */
  if (!env->restart && cs->time.output_every > 0) HX_CALL(write_output(L, 0, L->lev[L->nlev - 1]));

  hx_solve_result *tot = env->dr, dr;
  memset(tot, 0, sizeof *tot);
  res->time.enabled = 1;
  res->time.first_step = n0 + 1;
  res->time.last_step = n0;
  res->time.t_end = n0 * dt;
  int done = 0, interrupted = 0, failed = 0, data_failed = 0;
  for (int n = n0 + 1; n <= N; n++) {
    const double ts = hx_wtime();
    const int q = L->nlev < L->k ? L->nlev : L->k;
    const double shift = hx_run_bdf_shift(q, dt);
    if (shift != env->shift) { /* BDF start-up: the order rose, so did beta0 */
      HX_CALL(env->reshift(env->arg, shift));
      env->shift = shift, env->setups++;
      d = *env->d;
      HX_CALL(ensure_proj(L));
    }
    const double t = n * dt;
    {
      /* the data at this step (a value of rhs, a boundary value or, where
       * the error norms are due, the exact solution that is not finite at t:
       * the key and its line:col, the step and t; the steps before it are
       * kept and committed, issue 53, defect 19) */
      int everr = env->eval(env->arg, t);
      const int norms_due = (cs->time.output_every > 0 && n % cs->time.output_every == 0) || n == N ||
                            (cs->time.error_every > 0 && n % cs->time.error_every == 0);
      if (!everr && cs->problem.exact && norms_due) {
        /* the exact solution of the error norms and the output, at the nodes
         * (unew is free until the solve) */
        const double *X, *Y, *Z;
        HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
        hx_expr_eval_array_t(cs->problem.exact, (size_t)L->nl, X, Y, Z, t, L->unew);
        everr = hx_io_agree_error(L->comm, hx_case_check_finite(cs, "problem.exact", cs->problem.exact,
                                                                (size_t)L->nl, X, Y, Z, L->unew));
      }
      if (everr == HX_ERR_INPUT) {
        char msg[1800];
        snprintf(msg, sizeof msg, "%s", hx_error_message());
        hx_error_clear();
        if (done == 0)
          return HX_ERROR(HX_ERR_INPUT, "%s, at step %d (t = %.12g); nothing of this run is written", msg, n, t);
        snprintf(res->time.data_error, sizeof res->time.data_error,
                 "%s, at step %d (t = %.12g); steps %d..%d are written to %s (summary.yaml: reason data_not_finite)",
                 msg, n, t, L->rows > 0 ? L->first_step : n0 + 1, n - 1, L->final);
        res->time.data_failed = 1, data_failed = 1;
        break;
      }
      HX_CALL(everr);
    }
    const double *hf = *env->hf;
    for (int64_t i = 0; i < L->nl; i++) {
      double s = 0;
      for (int j = 0; j < q; j++) s += bdf_alpha[q - 1][j] * L->lev[j][i];
      L->feff[i] = hf[i] + s / dt;
    }
    HX_CALL(hist_step(L, n, t));
    const int hist0 = hx_history_size(L->mon.hist);
    /* the error norms (an over-integrated quadrature of the exact solution: a
     * large part of a cheap step) every error_every steps, at output steps
     * and at the last */
    const int out_due = (cs->time.output_every > 0 && n % cs->time.output_every == 0) || n == N;
    const int err_due = (cs->time.error_every > 0 && n % cs->time.error_every == 0) || out_due;
    hx_run_texpr ex = {cs->problem.exact, t};
    hx_field exact = {cs->problem.exact && err_due ? hx_run_texpr_fn : NULL, &ex,
                      cs->problem.exact && err_due ? hx_run_texpr_fn_n : NULL};
    const int np_before = hx_proj_size(L->pj);
    L->step_now = n;
    HX_CALL(hx_solve_proj(d, *env->pc, L->pj, L->feff, *env->hg, *env->hbn, exact, &po, L->lev[0], L->unew, &dr));
    if (dr.pcg.reason == HX_INTERRUPTED) {
      /* a signal stopped the solve on every rank at the same iteration. The
       * step is finished: first a checkpoint of the state before it (the
       * interrupted solve changed neither the levels nor the projection
       * basis), so a kill while it finishes loses nothing; then the step
       * again from its start with the signal deferred, which gives the bits
       * of a run without the signal. A second signal ends the process. */
      HX_CALL(write_checkpoint(L, n - 1));
      hx_log(HX_LOG_NORMAL, "signal during step %d: checkpoint of step %d written; finishing step %d\n", n, n - 1, n);
      HX_CALL(hist_truncate(L, hist0)); /* the interrupted solve's rows */
      HX_CALL(hist_step(L, n, t));
      hx_signals_defer(1);
      int err = hx_solve_proj(d, *env->pc, L->pj, L->feff, *env->hg, *env->hbn, exact, &po, L->lev[0], L->unew, &dr);
      hx_signals_defer(0);
      HX_CALL(err);
    }
    /* the new level */
    double *old = L->lev[L->k - 1];
    for (int j = L->k - 1; j > 0; j--) L->lev[j] = L->lev[j - 1];
    L->lev[0] = L->unew, L->unew = old;
    if (L->nlev < L->k) L->nlev++;
    const double sec = hx_wtime() - ts;
    const double gain = dr.pcg.bnorm > 0 ? dr.pcg.r0norm / dr.pcg.bnorm : 0.0;
    const double saved = iterations_saved(&dr.pcg, gain);
    double mx[2] = {sec, dr.t_proj}; /* the step's and the projection's seconds: the slowest rank's */
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_DOUBLE, MPI_MAX, L->comm));
    const double smax = mx[0], pmax = mx[1];
    char e1[32] = "", e2[32] = "";
    if (dr.exact_known) snprintf(e1, sizeof e1, "%.17g", dr.err_l2), snprintf(e2, sizeof e2, "%.17g", dr.err_max);
    HX_CALL(tb_printf(&L->steps, "%d,%.17g,%d,%d,%.17g,%.17g,%.17g,%s,%s,%d,%.17g,%.3f,%.6g,%.6g,%s\n", n, t, q,
                      dr.pcg.iterations, dr.pcg.r0norm, dr.pcg.rnorm, dr.pcg.rel, e1, e2, np_before, gain, saved, smax,
                      pmax, L->run_id));
    account(L, n, dr.pcg.iterations, gain, saved, pmax, smax);
    hx_log(HX_LOG_NORMAL, "step %d  t = %-10.6g BDF%d  %4d iterations  rel %.2e  gain %.2e (~%.1f saved)%s%s  %.3f s\n",
           n, t, q, dr.pcg.iterations, dr.pcg.rel, gain, saved, dr.exact_known ? "  error " : "",
           dr.exact_known ? e1 : "", smax);
    /* totals */
    tot->pcg.iterations += dr.pcg.iterations;
    tot->pcg.t_operator += dr.pcg.t_operator, tot->pcg.t_precond += dr.pcg.t_precond;
    tot->pcg.t_vector += dr.pcg.t_vector, tot->pcg.t_reduction += dr.pcg.t_reduction;
    tot->pcg.t_exchange += dr.pcg.t_exchange;
    tot->pcg.replacements += dr.pcg.replacements, tot->pcg.t_replace += dr.pcg.t_replace;
    tot->t_rhs += dr.t_rhs, tot->t_pc_setup += dr.t_pc_setup, tot->t_solve += dr.t_solve;
    tot->pcg.starts += dr.pcg.starts;
    tot->refinements += dr.refinements, tot->exact_residuals += dr.exact_residuals, tot->t_refine += dr.t_refine;
    tot->pcg.reason = dr.pcg.reason, tot->pcg.bnorm = dr.pcg.bnorm, tot->pcg.r0norm = dr.pcg.r0norm;
    tot->pcg.rnorm = dr.pcg.rnorm, tot->pcg.rel = dr.pcg.rel;
    tot->pcg.allreduces_per_iteration = dr.pcg.allreduces_per_iteration;
    tot->pcg.vector_passes_per_iteration = dr.pcg.vector_passes_per_iteration;
    if (dr.exact_known) tot->exact_known = 1, tot->err_l2 = dr.err_l2, tot->err_max = dr.err_max;
    tot->dofs = dr.dofs;
    done++;
    res->time.last_step = n, res->time.t_end = t;
    if (dr.pcg.reason < 0) { /* not converged: stop, report */
      failed = 1;
      break;
    }
    if (out_due) HX_CALL(write_output(L, n, L->lev[0]));
    if (cs->time.checkpoint_every > 0 && n % cs->time.checkpoint_every == 0 && n < N) HX_CALL(write_checkpoint(L, n));
    /* a signal between solves: every rank stops after the same step */
    int sig = hx_signal_pending();
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, L->comm));
    if (sig && n < N) {
      interrupted = 1;
      break;
    }
  }
  /* the outputs so far: the last completed step's solution and a checkpoint */
  const int last = res->time.last_step;
  if (!failed && last > 0) {
    if (done > 0 || n0 > 0) {
      /* the last step's solution (of an outputs rebuild from the checkpoint too: the case's last step) */
      if (L->last_out != last && (done > 0 || n0 >= N)) HX_CALL(write_output(L, last, L->lev[0]));
      HX_CALL(write_checkpoint(L, last));
    }
  }
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
  {
    int err = HX_SUCCESS;
    if (env->ctx->rank == 0) {
      char p[4200];
      snprintf(p, sizeof p, "%s/steps.csv", cs->output.dir);
      err = hx_io_write_file_atomic(p, L->steps.b, L->steps.n);
    }
    HX_CALL(hx_io_agree_error(L->comm, err));
  }
  *env->t_io += hx_wtime() - t0;

  /* summary.yaml: the last step's solve, the totals */
  res->dofs = hx_disc_num_dofs(*env->d);
  /* the totals over the steps in steps.csv: after a restart the earlier segments' too */
  res->iterations = (int)L->its;
  res->converged = !failed && !interrupted && !data_failed;
  snprintf(res->reason, sizeof res->reason, "%s",
           data_failed ? "data_not_finite" : interrupted ? "interrupted" : failed ? hx_reason_name(tot->pcg.reason) : done ? hx_reason_name(tot->pcg.reason) : "converged_rtol");
  res->residual0 = tot->pcg.r0norm, res->residual = tot->pcg.rnorm, res->rel_residual = tot->pcg.rel;
  res->exact_known = tot->exact_known, res->error_l2 = tot->err_l2, res->error_max = tot->err_max;
  if (L->rows > 0) res->time.first_step = L->first_step;
  res->time.iterations = L->its;
  res->time.iterations_mean = L->rows ? (double)L->its / L->rows : 0.0;
  res->time.gain_mean = L->rows ? L->gain_sum / L->rows : 0.0;
  res->time.saved = L->saved_sum;
  res->time.t_proj = L->proj_sum;
  res->time.t_step_first = L->first_s;
  res->time.t_step_mean = L->rows > 1 ? L->after_s / (L->rows - 1) : 0.0;
  res->time.setups = env->setups;
  res->time.interrupted = interrupted;
  res->time.checkpoints = L->checkpoints;
  res->time.outputs = L->nout;
  res->time.frame_bytes = L->frame_bytes, res->time.mesh_bytes = L->mesh_bytes;
  env->solved = done;
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
  for (int i = 0; i < HX_BDF_MAX; i++) free(L.lev[i]);
  for (int i = 0; i < 64; i++) free(L.pbuf[i]);
  free(L.unew), free(L.feff), free(L.steps.b);
  for (int i = 0; i < L.nout; i++) free(L.files[i]);
  free(L.files), free(L.times);
  free(L.hs_row), free(L.hs_step), free(L.hs_t);
  hx_proj_destroy(&L.pj);
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
