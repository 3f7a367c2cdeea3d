/* hexcg compare: loading one side (a run folder, a history.csv or a
 * history.h5, and the summary.yaml beside it). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_compare.h"

static char *cmp_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* the file NAME of the result set in dir, as hexcg's readers see it (a half
 * moved committed set resolves to its new files, hx_outdir_resolve); "" if
 * the set has no such file */
static char *path_join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *d = malloc(n), buf[4400];
  if (!d) return NULL;
  snprintf(d, n, "%s", dir);
  while (strlen(d) > 1 && d[strlen(d) - 1] == '/') d[strlen(d) - 1] = 0;
  int has = hx_outdir_resolve(d, name, buf, sizeof buf);
  free(d);
  return cmp_strdup(has ? buf : "");
}

static int is_file(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

void hx_cmp_run_free(hx_cmp_run *r) {
  if (!r) return;
  free(r->arg), free(r->hist_path), free(r->summary_path), free(r->case_path), free(r->solution_path);
  hx_case_keys_free(&r->keys);
  free(r->it), free(r->res), free(r->rel);
  memset(r, 0, sizeof *r);
}

int hx_cmp_iterations(const hx_cmp_run *r) { return r->n > 0 ? r->it[r->n - 1] : 0; }

static int push_row(hx_cmp_run *r, int *cap, int it, double res, double rel) {
  if (r->n == *cap) {
    int nc = *cap ? 2 * *cap : 256;
    HX_CALL(hx_realloc((size_t)nc, sizeof(int), &r->it));
    HX_CALL(hx_realloc((size_t)nc, sizeof(double), &r->res));
    HX_CALL(hx_realloc((size_t)nc, sizeof(double), &r->rel));
    *cap = nc;
  }
  r->it[r->n] = it, r->res[r->n] = res, r->rel[r->n] = rel;
  r->n++;
  return HX_SUCCESS;
}

/* Split line (modified in place) at commas into at most max fields. */
static int split_csv(char *line, char **f, int max) {
  int n = 0;
  char *s = line;
  for (;;) {
    if (n < max) f[n] = s;
    n++;
    char *c = strchr(s, ',');
    if (!c) break;
    *c = '\0';
    s = c + 1;
  }
  for (int i = 0; i < n && i < max; i++) { /* trim blanks */
    while (*f[i] == ' ' || *f[i] == '\t') f[i]++;
    size_t l = strlen(f[i]);
    while (l && (f[i][l - 1] == ' ' || f[i][l - 1] == '\t')) f[i][--l] = '\0';
  }
  return n;
}

static int parse_num(const char *s, double *v) {
  char *end = NULL;
  errno = 0;
  *v = strtod(s, &end);
  return end != s && !*end && errno != ERANGE;
}

int hx_cmp_read_csv(const char *path, hx_cmp_run *r) {
  FILE *f = fopen(path, "r");
  HX_CHECK(f, HX_ERR_INPUT, "cannot read history file '%s': %s", path, strerror(errno));
  char line[4096];
  char *fld[16];
  int lineno = 0, cap = 0, err = HX_SUCCESS, ncol = 0, ci = -1, cr = -1, cl = -1, cs = -1;
  /* a time-dependent run's history (a step column, docs/time.md): the steps'
   * iterations are counted on (step s's iteration i is i plus the
   * iterations of the steps before it), and each later step's iteration 0
   * (its initial residual, the same iterate as the end of the step before
   * for the count) is left out, so the rows count up by one to the run's
   * total, summary.yaml's solver.iterations */
  int have_step = 0, cur_step = 0, base = 0, last_it = 0;
  while (!err && fgets(line, sizeof line, f)) {
    lineno++;
    size_t l = strlen(line);
    if (l == sizeof line - 1 && line[l - 1] != '\n') {
      err = HX_ERROR(HX_ERR_INPUT, "%s:%d: line too long (not a hexcg history.csv?)", path, lineno);
      break;
    }
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = '\0';
    if (lineno == 1) {
      ncol = split_csv(line, fld, 16);
      for (int i = 0; i < ncol && i < 16; i++) {
        if (!strcmp(fld[i], "iteration")) ci = i;
        if (!strcmp(fld[i], "residual")) cr = i;
        if (!strcmp(fld[i], "rel_residual")) cl = i;
        if (!strcmp(fld[i], "step")) cs = i;
      }
      if (ncol > 16 || ci < 0 || cr < 0 || cl < 0)
        err = HX_ERROR(HX_ERR_INPUT,
                       "%s:1: expected the header 'iteration,residual,rel_residual,time_s' (not a hexcg "
                       "history.csv?)",
                       path);
      continue;
    }
    if (!l) continue; /* blank line */
    int n = split_csv(line, fld, 16);
    if (n != ncol) {
      err =
          HX_ERROR(HX_ERR_INPUT, "%s:%d: expected %d comma-separated values, got %d", path, lineno, ncol, n);
      break;
    }
    double it = 0, res = 0, rel = 0;
    const char *bad = !parse_num(fld[ci], &it)    ? fld[ci]
                      : !parse_num(fld[cr], &res) ? fld[cr]
                      : !parse_num(fld[cl], &rel) ? fld[cl]
                                                  : NULL;
    if (bad) {
      err = HX_ERROR(HX_ERR_INPUT, "%s:%d: '%s' is not a number", path, lineno, bad);
      break;
    }
    if (it != floor(it) || it < 0 || it > HX_HISTORY_MAX_ITERATION) {
      err = HX_ERROR(HX_ERR_INPUT, "%s:%d: iteration '%s' is not an integer >= 0", path, lineno, fld[ci]);
      break;
    }
    if (cs >= 0) {
      double sv = 0;
      if (!parse_num(fld[cs], &sv) || sv != floor(sv)) {
        err = HX_ERROR(HX_ERR_INPUT, "%s:%d: step '%s' is not an integer", path, lineno, fld[cs]);
        break;
      }
      if (!have_step || (int)sv != cur_step) {
        if (have_step) base += last_it;
        const int skip = have_step && it == 0;
        have_step = 1, cur_step = (int)sv, last_it = (int)it;
        if (skip) continue;
      }
      last_it = (int)it;
      if ((double)base + it > HX_HISTORY_MAX_ITERATION) {
        err = HX_ERROR(HX_ERR_INPUT, "%s:%d: more than %d iterations over the steps", path, lineno,
                       HX_HISTORY_MAX_ITERATION);
        break;
      }
      it += base;
    }
    err = push_row(r, &cap, (int)it, res, rel);
  }
  if (!err && ferror(f))
    err = HX_ERROR(HX_ERR_INPUT, "cannot read history file '%s': %s", path, strerror(errno));
  fclose(f);
  if (!err && lineno == 0)
    err = HX_ERROR(HX_ERR_INPUT, "%s: empty file (expected a hexcg history.csv)", path);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int is_hdf5(const char *path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char b[8];
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(b, 1, 8, f);
  fclose(f);
  return n == 8 && !memcmp(b, sig, 8);
}

static int read_h5(const char *path, hx_cmp_run *r) {
  hx_history h = NULL;
  HX_CALL(hx_history_read(path, &h));
  int n = hx_history_size(h), cap = 0, err = HX_SUCCESS;
  for (int i = 0; !err && i < n; i++) {
    int it = 0;
    double res = 0, rel = 0;
    err = hx_history_get(h, i, &it, &res, &rel, NULL);
    if (!err && it < 0) err = HX_ERROR(HX_ERR_INPUT, "%s: row %d: iteration %d is negative", path, i, it);
    if (!err) err = push_row(r, &cap, it, res, rel);
  }
  hx_history_destroy(&h);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* 1 if the summary.yaml at path has a top-level time: section (written
 * for time-dependent runs only; hx_summary_read does not report it). */
static int has_time_section(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) found = !strncmp(line, "time:", 5);
  fclose(f);
  return found;
}

/* the effective case.yaml and the solution.h5 of the result set in dir, when there */
static int find_beside(const char *dir, hx_cmp_run *r) {
  char *c = path_join(dir, "case.yaml"), *u = path_join(dir, "solution.h5");
  int err = !c || !u ? HX_ERROR(HX_ERR_MEM, "out of memory") : HX_SUCCESS;
  if (!err && is_file(c)) r->case_path = c, c = NULL;
  if (!err && is_file(u)) r->solution_path = u, u = NULL;
  free(c), free(u);
  return err;
}

static int check_history(const hx_cmp_run *r) {
  const char *p = r->hist_path;
  HX_CHECK(r->n > 0, HX_ERR_INPUT, "%s: no rows (an empty residual history)", p);
  for (int i = 0; i < r->n; i++) {
    if (i > 0 && r->it[i] != r->it[i - 1] + 1)
      return HX_ERROR(HX_ERR_INPUT, "%s: iteration %d follows iteration %d (expected %d)", p, r->it[i],
                      r->it[i - 1], r->it[i - 1] + 1);
    if (r->res[i] < 0 || r->rel[i] < 0)
      return HX_ERROR(HX_ERR_INPUT, "%s: iteration %d: negative residual", p, r->it[i]);
  }
  return HX_SUCCESS;
}

int hx_cmp_run_load(const char *arg, const char *role, hx_cmp_run *r) {
  memset(r, 0, sizeof *r);
  int err = HX_SUCCESS;
  struct stat sb;
  r->arg = cmp_strdup(arg);
  HX_CHECK(r->arg, HX_ERR_MEM, "out of memory");
  if (stat(arg, &sb) != 0) {
    err = HX_ERROR(HX_ERR_INPUT, "%s '%s': %s", role, arg, strerror(errno));
  } else if (S_ISDIR(sb.st_mode)) {
    char *csv = path_join(arg, "history.csv"), *h5 = path_join(arg, "history.h5");
    char *sum = path_join(arg, "summary.yaml");
    if (!csv || !h5 || !sum) {
      err = HX_ERROR(HX_ERR_MEM, "out of memory");
    } else if (is_file(csv)) {
      r->hist_path = csv, csv = NULL;
    } else if (is_file(h5)) {
      r->hist_path = h5, h5 = NULL;
    } else {
      err = HX_ERROR(HX_ERR_INPUT,
                     "%s '%s': no history.csv or history.h5 in this folder (was the run made with "
                     "output.history: false?)",
                     role, arg);
    }
    if (!err && is_file(sum)) r->summary_path = sum, sum = NULL;
    if (!err) err = find_beside(arg, r);
    free(csv), free(h5), free(sum);
  } else {
    char rbuf[4400];
    hx_outdir_resolve_path(arg, rbuf, sizeof rbuf);
    r->hist_path = cmp_strdup(rbuf);
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    if (!r->hist_path) err = HX_ERROR(HX_ERR_MEM, "out of memory");
    if (!err && (!strcmp(base, "history.csv") || !strcmp(base, "history.h5"))) {
      size_t dl = (size_t)(base - arg);
      char *dir = malloc(dl + 2);
      if (!dir) err = HX_ERROR(HX_ERR_MEM, "out of memory");
      if (!err) {
        memcpy(dir, arg, dl);
        dir[dl] = '\0';
        char *sum = path_join(dl ? dir : ".", "summary.yaml");
        if (sum && is_file(sum))
          r->summary_path = sum;
        else
          free(sum);
        err = find_beside(dl ? dir : ".", r);
        free(dir);
      }
    }
  }
  if (!err) err = is_hdf5(r->hist_path) ? read_h5(r->hist_path, r) : hx_cmp_read_csv(r->hist_path, r);
  if (!err) err = check_history(r);
  if (!err && r->summary_path) {
    err = hx_summary_read(r->summary_path, &r->sum);
    if (!err) r->has_summary = 1;
    if (!err) r->is_time = has_time_section(r->summary_path);
  }
  if (!err && r->case_path) err = hx_case_keys_read(r->case_path, &r->keys);
  if (!err && r->has_summary && r->sum.st.iterations != hx_cmp_iterations(r))
    err = HX_ERROR(HX_ERR_INPUT,
                   "%s '%s': %s says %d iterations but %s ends at iteration %d (files of "
                   "different runs?)",
                   role, arg, r->summary_path, r->sum.st.iterations, r->hist_path, hx_cmp_iterations(r));
  if (err) hx_cmp_run_free(r);
  HX_CALL(err);
  return HX_SUCCESS;
}
