/* Checks the files of a `hexcg bench stream` run (see CMakeLists.txt: a tiny
 * sweep of all kernels, order 7, runs first as a fixture):
 *   t152-stream-files DIR RANKS EXPECT_PNG
 * stream.csv has the documented columns, one row per (kernel, size), with
 * bytes = 8 words entries ranks, GB/s = bytes / seconds, sizes increasing;
 * stream_fit.yaml has the documented keys per kernel, with b08 = 4 T0 Wmax;
 * no temporary files are left and an unrelated file in DIR survives. */
#include <dirent.h>
#include <unistd.h>

#include "hx_test.h"

#define NK 8
static const char *ids[NK] = {"BS1", "BS2", "BS3", "BS4", "BS5", "BS5r", "BS6", "BS7"};
static const int words[NK] = {2, 3, 1, 2, 6, 3, 0, 0};

static int kernel_index(const char *id) {
  for (int k = 0; k < NK; k++)
    if (!strcmp(ids[k], id)) return k;
  return -1;
}

/* dir/name opened for reading (path: its name, for messages), or NULL
 * after a failed assertion. */
static FILE *open_output(const char *dir, const char *name, char *path, size_t len) {
  snprintf(path, len, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  HX_ASSERT(f, "cannot open %s", path);
  return f;
}

static void check_csv(const char *dir, int ranks) {
  char path[1024], line[1024];
  FILE *f = open_output(dir, "stream.csv", path, sizeof path);
  if (!f) return;
  HX_ASSERT(fgets(line, sizeof line, f) != NULL, "empty csv");
  HX_ASSERT(!strcmp(line,
                    "kernel,bytes,seconds,gbps,ratio_to_copy,entries,reps,seconds_min,seconds_median,"
                    "seconds_event,gbps_rank_min,gbps_rank_max\n"),
            "csv header: %s", line);
  int rows[NK] = {0};
  double last[NK] = {0};
  while (fgets(line, sizeof line, f)) {
    char id[16];
    double bytes, sec, gbps, ratio, smin, smed, sev, gmin, gmax;
    long long entries;
    long reps;
    const int got = sscanf(line, "%15[^,],%lf,%lf,%lf,%lf,%lld,%ld,%lf,%lf,%lf,%lf,%lf", id, &bytes, &sec,
                           &gbps, &ratio, &entries, &reps, &smin, &smed, &sev, &gmin, &gmax);
    HX_ASSERT(got == 12, "csv row with %d fields: %s", got, line);
    if (got != 12) continue;
    const int k = kernel_index(id);
    HX_ASSERT(k >= 0, "unexpected kernel %s", id);
    if (k < 0) continue;
    rows[k]++;
    if (words[k]) {
      HX_ASSERT(bytes == 8.0 * words[k] * (double)entries * ranks, "%s: bytes %.0f != 8 * %d * %lld * %d", id,
                bytes, words[k], entries, ranks);
    } else {
      /* BS6/BS7 on a box of E = entries elements of order 7: nl = 512 E local
       * nodes, E 7^3 <= ng <= nl distinct ones (summed over ranks). The
       * gather-scatter module counts at least an index and a value per L
       * entry and a value per G entry (12 nl + 8 ng), at most 24 nl + 4 */
      const double nl = 512.0 * (double)entries, ngmin = 343.0 * (double)entries;
      const double lo = 12 * nl + 8 * ngmin, hi = 24 * nl + 4 * ranks;
      HX_ASSERT(bytes >= lo && bytes <= hi, "%s: %lld elements move %.0f bytes, not in [%.0f, %.0f]", id,
                entries, bytes, lo, hi);
    }
    HX_ASSERT(bytes > last[k], "%s: sizes increase (%.0f after %.0f)", id, bytes, last[k]);
    last[k] = bytes;
    /* the default statistic is the minimum over trials */
    HX_ASSERT(sec > 0 && smin > 0 && fabs(smin - sec) <= 1e-8 * sec && smed >= smin * (1 - 1e-8),
              "%s: seconds %g min %g median %g", id, sec, smin, smed);
    HX_ASSERT(fabs(gbps - bytes / sec / 1e9) <= 1e-6 + 1e-5 * gbps, "%s: gbps %g != bytes/seconds %g", id,
              gbps, bytes / sec / 1e9);
    HX_ASSERT(reps >= 1 && ratio > 0 && sev == -1.0, "%s: reps %ld ratio %g event %g (cpu: -1)", id, reps,
              ratio, sev);
    HX_ASSERT(gmin > 0 && gmin <= gmax * (1 + 1e-9), "%s: rank GB/s %g..%g", id, gmin, gmax);
    if (k == 0 && rows[0] == 1) HX_ASSERT(fabs(ratio - 1.0) < 1e-6, "copy/copy ratio %g", ratio);
  }
  fclose(f);
  for (int k = 0; k < NK; k++) HX_ASSERT(rows[k] >= 2, "%s has %d rows", ids[k], rows[k]);
}

/* value of "    key:" inside the block of kernel id; NAN if absent */
static double yaml_kernel_value(const char *path, const char *id, const char *key, int *found) {
  FILE *f = fopen(path, "r");
  *found = 0;
  if (!f) return NAN;
  char line[1024], head[64], want[128];
  snprintf(head, sizeof head, "  %s:\n", id);
  snprintf(want, sizeof want, "    %s:", key);
  int in = 0;
  double v = NAN;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "  ", 2) && line[2] != ' ') in = !strcmp(line, head);
    if (in && !strncmp(line, want, strlen(want))) {
      *found = 1;
      const char *val = line + strlen(want);
      while (*val == ' ') val++;
      /* YAML spells infinity and NaN .inf and .nan */
      v = !strncmp(val, ".inf", 4) ? INFINITY : !strncmp(val, ".nan", 4) ? -1.0 : strtod(val, NULL);
    }
  }
  fclose(f);
  return v;
}

static void check_yaml(const char *dir, int ranks) {
  char path[1024], line[1024];
  FILE *f = open_output(dir, "stream_fit.yaml", path, sizeof path);
  if (!f) return;
  int have_backend = 0, have_ranks = 0, have_kernels = 0, have_clock = 0;
  while (fgets(line, sizeof line, f)) {
    have_backend |= !strcmp(line, "backend: cpu\n") || !strcmp(line, "backend: cpu-memcheck\n");
    have_kernels |= !strcmp(line, "kernels:\n");
    have_clock |= !strcmp(line, "  clock: MPI_Wtime\n");
    int r;
    if (sscanf(line, "ranks: %d", &r) == 1) have_ranks = r == ranks;
  }
  fclose(f);
  HX_ASSERT(have_backend && have_ranks && have_kernels && have_clock,
            "yaml header keys: backend %d ranks %d kernels %d clock %d", have_backend, have_ranks,
            have_kernels, have_clock);
  const char *keys[] = {"t0_seconds", "wmax_gbps", "b08_bytes",          "rel_rms",  "rel_max",
                        "r2",         "points",    "wmax_ratio_to_copy", "peak_gbps"};
  for (int k = 0; k < NK; k++) {
    double v[9];
    for (int j = 0; j < 9; j++) {
      int found;
      v[j] = yaml_kernel_value(path, ids[k], keys[j], &found);
      HX_ASSERT(found && !isnan(v[j]), "%s: key %s missing or not a number", ids[k], keys[j]);
    }
    /* Wmax may be .inf when a tiny sweep on a busy machine shows no growth
     * of the time with size (the fit's slope is clamped at 0) */
    HX_ASSERT(v[0] >= 0 && v[1] > 0, "%s: t0 %g wmax %g", ids[k], v[0], v[1]);
    if (isfinite(v[1]))
      HX_ASSERT(fabs(v[2] - 4 * v[0] * v[1] * 1e9) <= 1e-4 * v[2] + 1e-9, "%s: b08 %g != 4 t0 wmax %g",
                ids[k], v[2], 4 * v[0] * v[1] * 1e9);
    else
      HX_ASSERT(isinf(v[2]), "%s: b08 %g with wmax inf", ids[k], v[2]);
    HX_ASSERT(v[3] >= 0 && v[4] >= v[3] && v[6] >= 2 && v[8] > 0,
              "%s: rel_rms %g rel_max %g points %g peak %g", ids[k], v[3], v[4], v[6], v[8]);
    if (k == 0 && isfinite(v[1])) HX_ASSERT(fabs(v[7] - 1.0) < 1e-6, "copy ratio to itself %g", v[7]);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DIR RANKS EXPECT_PNG\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  const int ranks = atoi(argv[2]), png = atoi(argv[3]);
  check_csv(dir, ranks);
  check_yaml(dir, ranks);
  char path[1024];
  snprintf(path, sizeof path, "%s/unrelated.txt", dir);
  HX_ASSERT(access(path, F_OK) == 0, "unrelated file in the output directory survives");
  snprintf(path, sizeof path, "%s/stream.png", dir);
  if (png) {
    FILE *f = fopen(path, "rb");
    unsigned char sig[8] = {0};
    HX_ASSERT(f && fread(sig, 1, 8, f) == 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8), "stream.png is a PNG");
    if (f) fclose(f);
  }
  DIR *d = opendir(dir);
  HX_ASSERT(d, "cannot list %s", dir);
  for (struct dirent *e; d && (e = readdir(d));)
    HX_ASSERT(strncmp(e->d_name, ".stream", 7) != 0, "temporary file left: %s", e->d_name);
  if (d) closedir(d);
  return hx_test_result();
}
