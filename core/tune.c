/* The tune table: every environment variable hexcg reads (issue 49 point 5).
 * The case file holds what a run computes; these switches change how (an
 * algorithm or a kernel for an A/B comparison, a test hook, a limit of the
 * machine), never the answer beyond round-off, and each says why it exists.
 * hx_env reads only names listed here (an unlisted one is a programming
 * error: an internal message and NULL), `hexcg keys --tune` prints the table,
 * and tests/app/check_tune.py checks that every HEXCG_ name in the sources is
 * listed and documented in docs/developer.md "Tuning switches". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_core.h"

/* name, values, default, what it does, why it exists */
static const hx_tune_row tune_rows[] = {
    /* kernels and algorithms: A/B comparisons and the tests of both paths */
    {"HEXCG_CPU_ISA", "generic|avx2|avx512",
     "the probe's choice (AVX-512 per order where the CPU has AVX-512 F/VL/DQ/BW and it is not slower; "
     "p = 7 by the table by CPU; docs/operator.md)",
     "which CPU kernels run", "A/B runs of the vectorised kernels against the generic loops; the isa test label"},
    {"HEXCG_AX_XELEM", "0", "on", "0: the operator without the cross-element (8 elements per vector) kernels",
     "A/B runs and the tests of the within-element kernels"},
    {"HEXCG_TENSOR_XELEM", "0", "on", "0: tensor contractions by the generic loop",
     "the tests compare the cross-element contraction against it"},
    {"HEXCG_FDM_XELEM", "0", "on", "0: the Schwarz box solves without the cross-element kernel",
     "A/B runs and the tests of the within-element box solve"},
    {"HEXCG_FDM_GROUPED", "0", "on where the kernel has it", "0: the FP32 Schwarz level without the grouped layout",
     "A/B runs; the tests check both layouts give the same bits"},
    {"HEXCG_FDM_SHARE", "0", "on", "0: one eigenproblem per Schwarz box instead of shared 1D eigenpairs",
     "the tests check the shared pairs against one LAPACK solve per box"},
    {"HEXCG_FDM_PRIVATE", "0", "on", "0: every extended node through the rendezvous",
     "the tests check the private-node shortcut gives the same bits"},
    {"HEXCG_FDM_XNUM", "0", "on", "0: the Schwarz extended numbering by a gather-scatter setup of its ids",
     "the tests check the numbering derived from the fine one gives the same bits"},
    {"HEXCG_FDM_DROP", "0", "on", "0: keep the extended gather-scatter's setup maps",
     "memory comparisons (the maps are dropped after setup)"},
    {"HEXCG_GS_PULL", "0|1", "pull where L >= 2 G", "1: the pull gather always, 0: never",
     "A/B runs; the tests check both give the same bits"},
    {"HEXCG_GS_PRIVATE", "0", "on", "0: no private-node shortcut in the gather-scatter setup",
     "the tests check the shortcut gives the same numbering"},
    {"HEXCG_GS_COUNT", "0", "on", "0: the radix sort in the gather-scatter setup whatever the id range",
     "the tests check the counting sort against it"},
    {"HX_GS_CPU_CHUNKS", "N", "from the thread count", "the CPU gather's chunk count",
     "the tests force several chunks on one thread"},
    {"HEXCG_EXPR_MATHEVAL", "set", "unset", "expressions evaluated by libmatheval alone",
     "the test of the compiled expressions against libmatheval"},
    {"HEXCG_AUTO_TIMINGS", "NAME=S,...", "measured", "seconds per trial iteration of pmg's smoother trial",
     "makes the choice reproducible in tests (injected timings)"},
    /* the machine, the run's environment */
    {"HEXCG_MALLOC_TUNE", "0", "on", "0: glibc's malloc thresholds left alone",
     "memory comparisons (hexcg sets the mmap threshold to 4 MiB)"},
    {"HEXCG_MPI_THREAD_LEVEL", "multiple|serialized|funneled|single", "multiple",
     "the MPI thread level asked for", "the tests of the fallbacks when an MPI grants less"},
    {"HEXCG_OVERSUBSCRIBE", "1", "unset", "1: keep an OMP_NUM_THREADS that oversubscribes the cores",
     "a user who knows better than the core count hexcg sees"},
    {"HEXCG_MEM_AVAILABLE", "BYTES|unlimited|off", "MemAvailable, the cgroup limit",
     "the memory the case check compares its estimate with", "tests, and machines whose limit hexcg cannot read"},
    {"HEXCG_BACKEND_CPU", "cpu|cpu-memcheck", "cpu", "cpu-memcheck: every cpu backend checks its memory accesses",
     "CI's cpu-memcheck pass runs the whole suite under it"},
    {"HEXCG_CUDA_DEVICE", "N", "the rank's share of the node's devices", "the CUDA device a rank uses",
     "machines whose launcher does not set CUDA_VISIBLE_DEVICES"},
    {"HEXCG_PYTHON", "PATH", "/usr/bin/python3, else python3 from PATH", "the Python that draws plots",
     "one interpreter rule for every script (scripts/python.sh)"},
    {"HEXCG_PLOT_SCRIPT", "PATH", "scripts/plot_history.py of the source tree", "hexcg compare --plot's script",
     "an installed hexcg away from its source tree"},
    {"HEXCG_TEST_SIGNAL", "STEP:ITERATION:RANK[:COUNT]", "unset", "raise SIGTERM at that point of a time run",
     "the tests of signals mid-solve (deterministic)"},
};

const hx_tune_row *hx_tune_rows(int *n) {
  *n = (int)(sizeof tune_rows / sizeof tune_rows[0]);
  return tune_rows;
}

const char *hx_env(const char *name) {
  int n;
  const hx_tune_row *r = hx_tune_rows(&n);
  for (int i = 0; i < n; i++)
    if (!strcmp(r[i].name, name)) return getenv(name);
  fprintf(stderr, "hexcg: internal error: the environment variable %s is not in the tune table (core/tune.c)\n",
          name);
  return NULL;
}

int hx_env_off(const char *name) {
  const char *env = hx_env(name);
  return env && !strcmp(env, "0");
}

int hx_env_on(const char *name) {
  const char *env = hx_env(name);
  return env && !strcmp(env, "1");
}

void hx_tune_print(FILE *out) {
  int n;
  const hx_tune_row *r = hx_tune_rows(&n);
  fprintf(out, "# environment switches (docs/developer.md \"Tuning switches\"): name, values, default, what, why\n");
  for (int i = 0; i < n; i++)
    fprintf(out, "%-24s %s (default: %s)\n  %s\n  why: %s\n", r[i].name, r[i].values, r[i].deflt, r[i].what,
            r[i].why);
}
