/* Fuzz target: what `hexcg compare` reads: residual histories (history.csv),
 * summaries (summary.yaml) and bounds files. The first input byte picks the
 * reader, the rest is split at the first NUL into two files:
 *   0: a run folder: history.csv (first part) and, when a NUL is present,
 *      summary.yaml (second part), through hx_cmp_run_load as the command
 *      loads RUN and BASELINE;
 *   1: a history.csv named on its own (no summary beside it);
 *   2: a summary.yaml through hx_summary_read;
 *   3: a bounds file through hx_bounds_read, then a run folder as in 0 from
 *      the second part checked against it (hx_check_bounds).
 * Oracle beyond "no crash": a run that loads, compared with itself, passes
 * every check (hx_compare_runs counts no failure), unless it holds a
 * non-finite value that the comparison reads (a residual, or a summary's
 * error norm): by design a NaN or inf never matches, not even itself (a
 * diverged run must not pass against any baseline). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hx_compare.h"
#include "hx_fuzz.h"

static char rundir[512];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hx_fuzz_init();
  snprintf(rundir, sizeof rundir, "%s/run", hx_fuzz_dir());
  if (mkdir(rundir, 0700) != 0) abort();
  return 0;
}

/* hist (and sum, when not NULL) into the run folder */
static void lay_out(const char *hist, size_t nh, const char *sum, size_t ns) {
  hx_fuzz_write("run/history.csv", hist, nh);
  char p[600];
  snprintf(p, sizeof p, "%s/summary.yaml", rundir);
  if (sum)
    hx_fuzz_write("run/summary.yaml", sum, ns);
  else
    unlink(p);
}

/* a value the comparison reads is NaN or inf (such a run fails against itself) */
static int has_nonfinite(const hx_cmp_run *r) {
  for (int i = 0; i < r->n; i++)
    if (!isfinite(r->res[i]) || !isfinite(r->rel[i])) return 1;
  return r->has_summary && r->sum.st.exact_known &&
         (!isfinite(r->sum.st.error_l2) || !isfinite(r->sum.st.error_max));
}

static int load_and_self_compare(const char *arg) {
  hx_cmp_run r;
  int err = hx_cmp_run_load(arg, "RUN", &r);
  if (err) return err;
  hx_cmp_opts o = {.rtol = HX_CMP_RTOL_DEFAULT, .floor = HX_CMP_FLOOR_DEFAULT,
                   .error_rtol = HX_CMP_ERROR_RTOL_DEFAULT, .error_floor = HX_CMP_ERROR_FLOOR_DEFAULT,
                   .slack = HX_CMP_SLACK_DEFAULT};
  hx_cmp_result res;
  err = hx_compare_runs(&r, &r, &o, NULL, &res);
  if (!err && res.failures && !has_nonfinite(&r)) {
    fprintf(stderr, "fuzz_compare: a run compared with itself fails %d of %d checks\n", res.failures,
            res.checks);
    abort();
  }
  hx_cmp_run_free(&r);
  return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 4;
  const char *a = (const char *)data + 1;
  const size_t n = size - 1;
  const char *nul = memchr(a, '\0', n);
  const size_t na = nul ? (size_t)(nul - a) : n;
  const char *b = nul ? nul + 1 : NULL;
  const size_t nb = nul ? n - na - 1 : 0;
  int err = HX_SUCCESS;
  const char *what = "hx_cmp_run_load";
  if (mode == 0) {
    lay_out(a, na, b, nb);
    err = load_and_self_compare(rundir);
  } else if (mode == 1) {
    err = load_and_self_compare(hx_fuzz_write("alone.csv", a, na));
  } else if (mode == 2) {
    hx_summary_info info;
    what = "hx_summary_read";
    err = hx_summary_read(hx_fuzz_write("summary.yaml", a, na), &info);
  } else {
    hx_bounds bd;
    what = "hx_bounds_read";
    err = hx_bounds_read(hx_fuzz_write("bounds.yaml", a, na), &bd);
    if (!err && b) {
      hx_cmp_run r;
      lay_out(b, nb, NULL, 0);
      what = "hx_cmp_run_load";
      err = hx_cmp_run_load(rundir, "RUN", &r);
      if (!err) {
        hx_cmp_result res;
        memset(&res, 0, sizeof res);
        hx_check_bounds(&r, &bd, NULL, &res);
        hx_cmp_run_free(&r);
      }
    }
  }
  hx_fuzz_done(err, what);
  return 0;
}
