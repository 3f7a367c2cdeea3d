/* Memory estimates against the memory available on each node (see
 * hx_core.h and docs/case-format.md, "Memory"). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_core.h"

void hx_mem_format(double bytes, char *buf, size_t len) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (!(bytes >= 0) || isinf(bytes)) {
    snprintf(buf, len, "%g B", bytes);
    return;
  }
  int u = 0;
  while (bytes >= 1024.0 && u < 6) bytes /= 1024.0, u++;
  if (bytes >= 1024.0)
    snprintf(buf, len, "%.3g %s", bytes, unit[u]);
  else
    snprintf(buf, len, "%.*f %s", u == 0 ? 0 : bytes < 10 ? 1 : 0, bytes, unit[u]);
}

/* hx_mem_run_bytes's figures, fitted to the peaks (ru_maxrss) of Jacobi-PCG
 * runs on 2 ranks of 0.7-2M L entries each (box p = 3, 5 and 7, within 5 %
 * since the fine gather-scatter's rendezvous holds the shared ids only;
 * docs/log/performance.md "Memory"): bytes per L entry, per G entry, and the
 * time loop's arrays (hf, hg, the coordinates, u_new, f_eff per L entry; a
 * BDF level per L entry; a projection vector per G entry). MEM_RUN_L 97 -> 89
 * (2026-12-06): the steady solve's solution array is allocated after PCG,
 * past the peak (box 20^3 p = 7: Jacobi 262 -> 247 MiB, pmg 410 -> 395). */
#define MEM_RUN_L 89.0
#define MEM_RUN_G 48.0
#define MEM_TIME_L 56.0
#define MEM_TIME_LEVEL_L 8.0
#define MEM_TIME_PROJ_G 8.0

double hx_mem_run_bytes(double El, int p, double pc_node_bytes, int levels, int proj) {
  if (!(El > 0)) return HX_MEM_RUN_BASE;
  const double n = p + 1.0, L = El * n * n * n;
  /* distinct nodes of a compact part: El p^3 inside, and about the surface
   * of a cube of El elements (3 faces' worth of p^2 per surface element) */
  const double G = El * p * p * p + 3.0 * pow(El, 2.0 / 3.0) * p * p + 1.0;
  double b = HX_MEM_RUN_BASE + MEM_RUN_L * L + MEM_RUN_G * G + (pc_node_bytes > 0 ? pc_node_bytes : 0.0) * L;
  if (levels > 0) b += (MEM_TIME_L + MEM_TIME_LEVEL_L * levels) * L + MEM_TIME_PROJ_G * (proj + 2.0) * G;
  return b;
}

/* "123", "4G", "1.5GiB", "512M": bytes; -1 if not a size */
static double parse_size(const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !(v >= 0) || isinf(v)) return -1;
  while (isspace((unsigned char)*end)) end++;
  double f = 1;
  switch (toupper((unsigned char)*end)) {
    case 0: return v;
    case 'K': f = 1024.0; break;
    case 'M': f = 1048576.0; break;
    case 'G': f = 1073741824.0; break;
    case 'T': f = 1099511627776.0; break;
    default: return -1;
  }
  end++;
  if (*end == 'i' || *end == 'I') end++;
  if (*end == 'B' || *end == 'b') end++;
  return *end ? -1 : v * f;
}

/* the first number in a small file, -1 if absent or "max" */
static double read_number_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[128];
  double v = -1;
  if (fgets(line, sizeof line, f)) {
    char *end;
    double x = strtod(line, &end);
    if (end != line && x >= 0) v = x;
  }
  fclose(f);
  return v;
}

static double meminfo_kib(const char *key) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return -1;
  char line[256];
  double v = -1;
  size_t kl = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == ':') {
      v = strtod(line + kl + 1, NULL);
      break;
    }
  fclose(f);
  return v;
}

double hx_mem_available(char *source, size_t len) {
  const char *env = hx_env("HEXCG_MEM_AVAILABLE");
  if (env && env[0]) {
    if (!strcmp(env, "unlimited") || !strcmp(env, "off")) {
      if (source) snprintf(source, len, "HEXCG_MEM_AVAILABLE=%s", env);
      return INFINITY;
    }
    double v = parse_size(env);
    if (v >= 0) {
      if (source) snprintf(source, len, "HEXCG_MEM_AVAILABLE");
      return v;
    }
    hx_warn("HEXCG_MEM_AVAILABLE='%s' is not a size (bytes, or a number with K, M, G, T); ignored\n", env);
  }
  double avail = meminfo_kib("MemAvailable");
  if (avail >= 0) avail *= 1024.0;
  const char *src = "MemAvailable in /proc/meminfo";
  /* a memory limit of the control group (batch systems, containers) */
  double lim = read_number_file("/sys/fs/cgroup/memory.max"), use = -1;
  if (lim >= 0)
    use = read_number_file("/sys/fs/cgroup/memory.current");
  else if ((lim = read_number_file("/sys/fs/cgroup/memory/memory.limit_in_bytes")) >= 0)
    use = read_number_file("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  if (lim >= 0 && use >= 0 && lim < 1e18) {
    double left = lim > use ? lim - use : 0;
    if (avail < 0 || left < avail) avail = left, src = "the control group's memory limit";
  }
  if (source) snprintf(source, len, "%s", avail >= 0 ? src : "unknown");
  return avail;
}

int hx_mem_fit(MPI_Comm comm, double rank0_bytes, double rank_bytes, hx_mem_fit_info *info) {
  memset(info, 0, sizeof *info);
  int rank = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  MPI_Comm node;
  HX_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  /* per node: what its ranks need, how many they are, whether rank 0 is one */
  double mine[3] = {rank_bytes + (rank == 0 ? rank0_bytes : 0), 1, rank == 0}, sum[3];
  int err = MPI_Allreduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, node);
  char src[sizeof info->source];
  double avail = hx_mem_available(src, sizeof src), amin = avail;
  if (!err) err = MPI_Allreduce(&avail, &amin, 1, MPI_DOUBLE, MPI_MIN, node);
  MPI_Comm_free(&node);
  HX_CHECK(err == MPI_SUCCESS, HX_ERR_MPI, "MPI_Allreduce failed in the memory check");
  /* the node worst off: largest need / available (unknown availability never fails) */
  struct {
    double ratio;
    int rank;
  } in = {amin >= 0 ? sum[0] / fmax(amin, 1.0) : 0.0, rank}, out;
  HX_MPI(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  double rec[5] = {sum[0], amin, sum[1], sum[2], out.ratio};
  HX_MPI(MPI_Bcast(rec, 5, MPI_DOUBLE, out.rank, comm));
  HX_MPI(MPI_Bcast(src, (int)sizeof src, MPI_CHAR, out.rank, comm));
  info->need = rec[0];
  info->avail = rec[1];
  info->node_ranks = (int)rec[2];
  info->has_rank0 = rec[3] > 0;
  info->fits = !(rec[4] > 1.0);
  snprintf(info->source, sizeof info->source, "%s", src);
  return HX_SUCCESS;
}

void hx_mem_fit_describe(const hx_mem_fit_info *fi, double rank0_bytes, double rank_bytes_max, char *buf,
                         size_t len) {
  char need[32], avail[32], g[32], pr[32], what[160];
  hx_mem_format(fi->need, need, sizeof need);
  hx_mem_format(fi->avail, avail, sizeof avail);
  hx_mem_format(rank0_bytes, g, sizeof g);
  hx_mem_format(rank_bytes_max, pr, sizeof pr);
  const char *s = fi->node_ranks > 1 ? "s" : "";
  if (fi->has_rank0 && rank0_bytes > 0)
    snprintf(what, sizeof what, "the global mesh on rank 0: %s, %d rank%s x %s", g, fi->node_ranks, s, pr);
  else
    snprintf(what, sizeof what, "%d rank%s x %s", fi->node_ranks, s, pr);
  snprintf(buf, len, "need about %s of memory on %s (%s), more than the %s available there (%s)", need,
           fi->has_rank0 ? "the node of rank 0" : "one node", what, avail, fi->source);
}
