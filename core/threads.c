/* OpenMP threads per rank (hexcg run and the library, api/): the rule of
 * docs/reliability.md "Threads". */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_core.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* OpenMP threads per rank. Without OMP_NUM_THREADS, share the cores of a
 * node among its ranks: the OpenMP default (every rank uses every core)
 * oversubscribes the node as soon as two ranks run on it, and spinning
 * OpenMP barriers then cost far more than the work (20-60x). A positive
 * integer (the first of a nested list "4,2") is taken unless ranks x threads
 * exceed the node's cores; then, and for anything else (0, -1, empty, text,
 * which libgomp ignores and so gave every rank every core), the share is
 * used with a warning. HEXCG_OVERSUBSCRIBE=1 keeps an oversubscribing value
 * (docs/reliability.md, "Threads"). */
int hx_threads_default(MPI_Comm comm, char *warn, size_t len) {
  if (len) warn[0] = '\0';
#ifdef _OPENMP
  int rank = 0, local = 1;
  MPI_Comm_rank(comm, &rank);
  /* the cores this rank may run on (its affinity mask: one core under srun
   * --cpu-bind=cores) and those of all ranks of the node together */
  const int mine = omp_get_num_procs();
  int cores = mine;
  cpu_set_t set;
  CPU_ZERO(&set);
  const int have_mask = sched_getaffinity(0, sizeof set, &set) == 0;
  MPI_Comm node;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    if (have_mask) {
      unsigned long bits[sizeof set / sizeof(unsigned long)];
      memcpy(bits, &set, sizeof bits);
      MPI_Allreduce(MPI_IN_PLACE, bits, (int)(sizeof bits / sizeof bits[0]), MPI_UNSIGNED_LONG, MPI_BOR, node);
      memcpy(&set, bits, sizeof bits);
      cores = CPU_COUNT(&set);
    }
    MPI_Comm_free(&node);
  }
  int share = cores / local > 1 ? cores / local : 1;
  if (share > mine) share = mine;
  const char *env = getenv("OMP_NUM_THREADS");
  int n = share;
  if (env) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    const int valid = end != env && (*end == 0 || *end == ',') && v >= 1 && v <= 1000000;
    const char *keep = hx_env("HEXCG_OVERSUBSCRIBE");
    if (!valid) {
      if (rank == 0)
        snprintf(warn, len,
                 "OMP_NUM_THREADS='%s' is not a positive integer: using %d OpenMP thread%s per "
                 "rank (the node's %d cores shared by its %d rank%s)",
                 env, share, share > 1 ? "s" : "", cores, local, local > 1 ? "s" : "");
    } else if (v > share && (v * local > cores || v > mine) && !(keep && !strcmp(keep, "1"))) {
      /* (v <= share: no fewer threads would help, e.g. 1 per rank with more ranks than cores) */
      if (rank == 0)
        snprintf(warn, len,
                 "OMP_NUM_THREADS=%ld with %d rank%s on a node of %d cores would run %ld threads "
                 "on them: using %d per rank (HEXCG_OVERSUBSCRIBE=1 keeps %ld)",
                 v, local, local > 1 ? "s" : "", cores, v * local, share, v);
    } else {
      n = (int)v;
    }
  }
  return n;
#else
  (void)comm;
  return 1;
#endif
}
