/* Minimal test harness shared by the unit tests (header-only).
 *
 * A test binary prints nothing when it passes and returns 0; it prints each
 * failed assertion with file:line and returns 1; it returns HX_TEST_SKIP (77,
 * ctest's SKIP_RETURN_CODE) with a one-line reason when a requirement is
 * missing (no CUDA device, wrong number of ranks). Options: --backend NAME.
 */
#ifndef HX_TEST_H
#define HX_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_core.h"

#define HX_TEST_SKIP 77

static int hx_test_failures_ = 0;

#define HX_ASSERT(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: assertion failed: %s\n  ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      hx_test_failures_++;                                                     \
    }                                                                          \
  } while (0)

/* Assert an hexcg call succeeded; print the hexcg error if not, and return 1
 * from the enclosing function (assumed to return int). */
#define HX_TCALL(expr)                                                         \
  do {                                                                         \
    int hx_terr_ = (expr);                                                     \
    if (hx_terr_ != HX_SUCCESS) {                                              \
      fprintf(stderr, "%s:%d: %s failed (%s)\n", __FILE__, __LINE__, #expr, hx_error_name(hx_terr_)); \
      hx_error_print(stderr, 0, 1);                                            \
      hx_test_failures_++;                                                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* Relative difference |a-b| / max(|a|,|b|,floor). */
static inline double hx_test_reldiff(double a, double b, double floor_) {
  double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  if (m < floor_) m = floor_;
  return fabs(a - b) / m;
}

/* An environment variable set for a while (a kernel chosen at create time:
 * HEXCG_CPU_ISA): hx_test_env_push keeps its value (or that it was unset)
 * in keep and sets it; hx_test_env_pop puts back what keep holds. */
typedef struct {
  int was_set;
  char value[64];
} hx_test_env_keep;
static inline void hx_test_env_push(const char *name, const char *value, hx_test_env_keep *keep) {
  const char *old = getenv(name);
  keep->was_set = old != NULL;
  snprintf(keep->value, sizeof keep->value, "%s", old ? old : "");
  setenv(name, value, 1);
}
static inline void hx_test_env_pop(const char *name, const hx_test_env_keep *keep) {
  if (keep->was_set)
    setenv(name, keep->value, 1);
  else
    unsetenv(name);
}

/* A 64-bit mixing hash (splitmix64's finaliser): deterministic
 * pseudo-random bits from a key. */
static inline uint64_t hx_test_mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A value in [-1, 1) from a key (hx_test_mix64): the same for the same key
 * on every rank and backend. */
static inline double hx_test_key_rand(uint64_t k) {
  return (double)(hx_test_mix64(k) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Deterministic pseudo-random numbers (xorshift64*), uniform in [-1, 1). */
typedef struct { uint64_t s; } hx_test_rng;
static inline double hx_test_rand(hx_test_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  uint64_t v = r->s * 2685821657736338717ull;
  return (double)(v >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* MPI_Init, this rank and the number of ranks of MPI_COMM_WORLD. */
static inline void hx_test_mpi_init(int *argc, char ***argv, int *rank, int *size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* The start of an MPI test's main: hx_test_mpi_init, the log quiet. */
static inline void hx_test_init(int *argc, char ***argv, int *rank, int *size) {
  hx_test_mpi_init(argc, argv, rank, size);
  hx_log_init(*rank, HX_LOG_QUIET);
}

/* hx_test_init's start for a test whose calls may come from several
 * threads (MPI_THREAD_MULTIPLE): MPI, the rank, the log quiet. */
static inline void hx_test_init_threads(int *argc, char ***argv, int *rank) {
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &(int){0});
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  hx_log_init(*rank, HX_LOG_QUIET);
}

/* Gmsh on the text geo, written to dir/geo_name, a 3-D mesh into dir/out
 * with the options args (its log in dir/gmsh.log): 0, or nonzero (said on
 * stderr) where the file cannot be written or gmsh fails. */
static inline int hx_test_gmsh(const char *dir, const char *geo_name, const char *geo, const char *args,
                               const char *out) {
  char p[512], cmd[1400];
  snprintf(p, sizeof p, "%s/%s", dir, geo_name);
  FILE *f = fopen(p, "w");
  if (!f) return 1;
  fputs(geo, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "gmsh -v 0 -nt 1 -3 %s %s -o %s/%s > %s/gmsh.log 2>&1", p, args, dir, out, dir);
  const int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
  return rc;
}

/* The value of option name (the word after it) in argv, def where absent. */
static inline const char *hx_test_arg(int argc, char **argv, const char *name, const char *def) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], name)) return argv[i + 1];
  return def;
}

/* Parse --backend NAME (default "cpu"). */
static inline const char *hx_test_backend_arg(int argc, char **argv) {
  return hx_test_arg(argc, argv, "--backend", "cpu");
}

static inline int hx_test_result(void) { return hx_test_failures_ ? 1 : 0; }

/* The end of an MPI test's main: the verdict of all ranks (1 where rc is
 * nonzero or an assertion failed on any rank, else 0), after MPI_Finalize. */
static inline int hx_test_mpi_finish(int rc) {
  int fail = rc || hx_test_result(), anyfail = 0;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyfail;
}

#ifdef HX_KERNELS_H
/* Ends the test with HX_TEST_SKIP (after MPI_Finalize, rank 0 printing the
 * reason) when backend `name` has no usable device; returns otherwise.
 * Only where hx_kernels.h is included before this header. */
static inline void hx_test_skip_without_device(const char *name) {
  hx_backend probe;
  if (hx_backend_create(name, &probe) == HX_ERR_NO_DEVICE) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("SKIP: %s\n", hx_error_message());
    MPI_Finalize();
    exit(HX_TEST_SKIP);
  }
  hx_backend_destroy(&probe);
}

/* The backend named by --backend (default "cpu") in *b and, when cpu is not
 * NULL, its CPU twin in *cpu (b itself on the cpu backends, else a new "cpu"
 * backend the caller destroys when it differs from *b). Ends the test with
 * HX_TEST_SKIP (after MPI_Finalize, rank 0 printing the reason) when the
 * backend has no usable device; returns the error of any other failure. */
static inline int hx_test_backends(int argc, char **argv, hx_backend *b, hx_backend *cpu) {
  *b = NULL;
  if (cpu) *cpu = NULL;
  const int e = hx_backend_create(hx_test_backend_arg(argc, argv), b);
  if (e == HX_ERR_NO_DEVICE) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("SKIP: %s\n", hx_error_message());
    MPI_Finalize();
    exit(HX_TEST_SKIP);
  }
  if (e || !cpu) return e;
  if (hx_backend_get_kind(*b) == HX_BACKEND_CPU) {
    *cpu = *b;
    return HX_SUCCESS;
  }
  return hx_backend_create("cpu", cpu);
}

/* A test program of several modes (argv[1] names one; --backend B anywhere).
 * Called after MPI_Init: prints the usage and returns 2 without a known
 * mode, skips without the device of a device backend, runs the mode,
 * finalises MPI and returns the exit status (a mode's nonzero return, else
 * the assertions' verdict over all ranks). */
typedef struct {
  const char *name;
  int (*fn)(void);
} hx_test_mode;
static inline int hx_test_run_modes(int argc, char **argv, const char *prog, const hx_test_mode *modes, int nmodes) {
  int k = -1;
  for (int i = 0; argc >= 2 && i < nmodes; i++)
    if (!strcmp(argv[1], modes[i].name)) k = i;
  if (k < 0) {
    fprintf(stderr, "usage: %s", prog);
    for (int i = 0; i < nmodes; i++) fprintf(stderr, "%c%s", i ? '|' : ' ', modes[i].name);
    fprintf(stderr, " [--backend B]%s%s\n", argc >= 2 ? "; unknown mode " : "", argc >= 2 ? argv[1] : "");
    MPI_Finalize();
    return 2;
  }
  hx_test_skip_without_device(hx_test_backend_arg(argc, argv));
  const int rc = modes[k].fn();
  /* every rank leaves with the verdict of all: a failed assertion on one
   * rank fails the test on each */
  int fail = rc == HX_TEST_SKIP ? 0 : (rc || hx_test_result()), anyfail = 0;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc ? rc : anyfail;
}
#endif

#endif
