/* Residual history (history.csv + history.h5 read back), the progress
 * lines (when they print, rate and iterations left, quiet and non-zero
 * ranks silent) and summary.yaml (checked further by t205_check.py).
 * argv[1]: configs/poisson_box.yaml, argv[2]: scratch folder. */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hx_io.h"
#include "hx_test.h"

static int count_lines(FILE *f, char lines[][256], int max) {
  rewind(f);
  int n = 0;
  char buf[256];
  while (fgets(buf, sizeof buf, f))
    if (n < max) snprintf(lines[n++], 256, "%s", buf);
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *box = argc > 2 ? argv[1] : "configs/poisson_box.yaml";
  const char *dir = argc > 2 ? argv[2] : "t205";
  mkdir(dir, 0777);

  /* history */
  hx_history h = NULL;
  HX_TCALL(hx_history_create(&h));
  for (int it = 0; it <= 40; it++)
    HX_TCALL(hx_history_append(h, it, 3.0 * pow(0.7, it), pow(0.7, it), 0.01 * it));
  HX_ASSERT(hx_history_size(h) == 41, "41 rows");
  HX_TCALL(hx_history_write(h, MPI_COMM_WORLD, dir));
  char path[1024];
  snprintf(path, sizeof path, "%s/history.h5", dir);
  hx_history r = NULL;
  HX_TCALL(hx_history_read(path, &r));
  HX_ASSERT(hx_history_size(r) == 41, "read back %d rows", hx_history_size(r));
  for (int i = 0; i < hx_history_size(r); i++) {
    int it = -1;
    double res, rel, t;
    HX_TCALL(hx_history_get(r, i, &it, &res, &rel, &t));
    HX_ASSERT(it == i && res == 3.0 * pow(0.7, i) && rel == pow(0.7, i) && t == 0.01 * i, "row %d", i);
  }
  HX_ASSERT(hx_history_get(r, 41, NULL, NULL, NULL, NULL) == HX_ERR_ARG, "row out of range");
  hx_error_clear();
  hx_history_destroy(&r);
  snprintf(path, sizeof path, "%s/history.csv", dir);
  FILE *f = fopen(path, "r");
  HX_ASSERT(f, "history.csv");
  if (f) {
    char line[256];
    HX_ASSERT(fgets(line, sizeof line, f) && !strcmp(line, "iteration,residual,rel_residual,time_s\n"),
              "header");
    int n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
      int it;
      double res, rel, t;
      if (sscanf(line, "%d,%lf,%lf,%lf", &it, &res, &rel, &t) != 4)
        bad++;
      else
        bad += it != n || res != 3.0 * pow(0.7, n) || rel != pow(0.7, n) || fabs(t - 0.01 * n) > 1e-9;
      n++;
    }
    fclose(f);
    HX_ASSERT(n == 41 && bad == 0, "csv rows %d, bad %d", n, bad);
  }
  snprintf(path, sizeof path, "%s/history.h5.tmp", dir);
  HX_ASSERT(access(path, F_OK) != 0, "no temporary file");
  snprintf(path, sizeof path, "%s/nothing.h5", dir);
  HX_ASSERT(hx_history_read(path, &r) == HX_ERR_INPUT && r == NULL, "missing history file");
  hx_error_clear();
  hx_history_destroy(&h);

  /* progress: every 10 iterations, rate 0.8 per iteration */
  char lines[40][256];
  FILE *out = tmpfile();
  hx_log_init(0, HX_LOG_NORMAL);
  hx_progress pr = NULL;
  HX_TCALL(hx_progress_create(10, 0.0, 1e-6, out, &pr));
  int printed = 0;
  for (int it = 0; it <= 25; it++) printed += hx_progress_update(pr, it, 2 * pow(0.8, it), pow(0.8, it));
  hx_progress_finish(pr, 25, 2 * pow(0.8, 25), pow(0.8, 25));
  hx_progress_destroy(&pr);
  int n = count_lines(out, lines, 16);
  HX_ASSERT(printed == 3 && n == 4, "lines at 0, 10, 20 and the last: printed %d, %d lines", printed, n);
  if (n == 4) {
    HX_ASSERT(strstr(lines[0], "it      0") && strstr(lines[0], "rel 1.000e+00"), "first line: %s", lines[0]);
    /* at 20: rel = 0.8^20 = 1.15e-2, left = ceil(log(1e-6 / 0.8^20) / log(0.8)) = 42 */
    HX_ASSERT(
        strstr(lines[2], "it     20") && strstr(lines[2], "rate 0.8000") && strstr(lines[2], "~42 it left"),
        "line at 20: %s", lines[2]);
    HX_ASSERT(strstr(lines[3], "it     25") && strstr(lines[3], "~37 it left"), "last line: %s", lines[3]);
  }
  fclose(out);
  /* quiet, or not rank 0: nothing */
  for (int mode = 0; mode < 2; mode++) {
    out = tmpfile();
    hx_log_init(mode == 0 ? 0 : 1, mode == 0 ? HX_LOG_QUIET : HX_LOG_VERBOSE);
    HX_TCALL(hx_progress_create(1, 0.0, 1e-6, out, &pr));
    for (int it = 0; it < 5; it++) hx_progress_update(pr, it, 1.0, 1.0);
    hx_progress_finish(pr, 5, 1.0, 1.0);
    hx_progress_destroy(&pr);
    HX_ASSERT(count_lines(out, lines, 16) == 0, "mode %d prints nothing", mode);
    fclose(out);
  }
  hx_log_init(0, HX_LOG_NORMAL);
  /* every 0.05 s */
  out = tmpfile();
  HX_TCALL(hx_progress_create(0, 0.05, 1e-6, out, &pr));
  double t0 = hx_wtime();
  int it = 0;
  while (hx_wtime() - t0 < 0.18) hx_progress_update(pr, it++, 1.0, 1.0), usleep(2000);
  hx_progress_destroy(&pr);
  n = count_lines(out, lines, 16);
  HX_ASSERT(n >= 2 && n <= 4, "time-based lines: %d", n);
  fclose(out);

  /* summary.yaml */
  hx_case *cs = NULL;
  HX_TCALL(hx_case_load(box, 0, NULL, &cs));
  hx_run_stats st;
  memset(&st, 0, sizeof st);
  st.ranks = 4, st.elements = 512, st.order = 7, st.dofs = 185193, st.iterations = 123, st.converged = 1;
  snprintf(st.backend, sizeof st.backend, "cpu");
  snprintf(st.reason, sizeof st.reason, "rel_residual < tol");
  st.residual0 = 12.5, st.residual = 1.25e-7, st.rel_residual = 1e-8;
  st.exact_known = 1, st.error_l2 = 3.5e-9, st.error_max = 7.25e-9;
  st.t_setup = 0.5, st.t_operator = 1.25, st.t_precond = 0.125, st.t_vector = 0.25, st.t_reduction = 0.0625,
  st.t_exchange = 0.03125;
  st.t_io = 0.25, st.t_solve = 2.0, st.t_total = 3.0, st.peak_mem_bytes = 256.0 * 1048576;
  HX_TCALL(hx_summary_write(dir, cs, &st, "9.8.7", "abcdef123456"));
  out = tmpfile();
  hx_summary_print(cs, &st, out);
  n = count_lines(out, lines, 40);
  HX_ASSERT(n >= 12, "summary table lines: %d", n);
  int seen = 0;
  for (int i = 0; i < n; i++) seen += strstr(lines[i], "123 (converged") != NULL;
  HX_ASSERT(seen == 1, "iterations line in the table");
  /* the time table: the unindented rows (4 spaces) add up to 100 % of the
   * total, the indented ones (6 spaces, "(exchange)" excluded: a part of
   * operator) to the solve's share; each printed to 0.1 % */
  double top = 0, sub = 0, solve = -1;
  int rows = 0, in_table = 0;
  for (int i = 0; i < n; i++) {
    char label[64];
    double sec, pc;
    if (strstr(lines[i], "%total")) in_table = 1;
    else if (in_table && sscanf(lines[i], " %63s %lf %lf%%", label, &sec, &pc) == 3) {
      if (!strcmp(label, "total")) break;
      const int indented = !strncmp(lines[i], "      ", 6);
      if (!indented) top += pc, rows++;
      else if (strcmp(label, "(exchange)")) sub += pc;
      if (!strcmp(label, "solve")) solve = pc;
    }
  }
  HX_ASSERT(rows == 4 && fabs(top - 100.0) <= 0.05 * rows + 1e-9, "time table: %d rows add up to %.2f %%", rows, top);
  HX_ASSERT(solve > 0 && fabs(sub - solve) <= 0.05 * 5 + 1e-9, "solve %.2f %% against its parts %.2f %%", solve, sub);
  fclose(out);

  /* per-rank devices (cuda runs): a devices: list that hx_summary_read accepts */
  snprintf(st.devices, sizeof st.devices, "%s",
           "  - {rank: 0, host: \"n1\", local_rank: 0, device: 0, name: \"GPU A\", pci_bus_id: \"0000:3b:00.0\", "
           "ranks_on_device: 1}\n"
           "  - {rank: 1, host: \"n1\", local_rank: 1, device: 1, name: \"GPU A\", pci_bus_id: \"0000:5e:00.0\", "
           "ranks_on_device: 1}\n");
  HX_TCALL(hx_summary_write(dir, cs, &st, "9.8.7", "abcdef123456"));
  {
    char path[4200], buf[16384];
    snprintf(path, sizeof path, "%s/summary.yaml", dir);
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[got] = '\0';
    if (f) fclose(f);
    HX_ASSERT(strstr(buf, "\ndevices:\n  - {rank: 0,") && strstr(buf, "pci_bus_id: \"0000:5e:00.0\""),
              "devices in summary.yaml:\n%s", buf);
    hx_summary_info info;
    HX_ASSERT(hx_summary_read(path, &info) == HX_SUCCESS && info.st.iterations == 123, "summary with devices reads: %s",
              hx_error_message());
  }
  hx_case_destroy(&cs);
  int fail = hx_test_result();
  MPI_Finalize();
  return fail;
}
