/* The cpu-memcheck backend catches host/device synchronisation bugs:
 *  1. a host dereference of backend memory kills the process (SIGSEGV) with
 *     "host code touched backend memory without a transfer" and the
 *     allocation's number (run in a forked child);
 *  2. a host access after hx_mem_free is reported as a use after free;
 *  3. never-written backend memory reads back as NaN; written data round-trips;
 *  4. an hx_mem_to_host_q result is NaN until its queue is synchronised;
 *  5. changing the source of an hx_mem_to_device_q before the sync is an error;
 *  6. host pointers passed as backend memory (and the reverse; FP64 and FP32
 *     kernels), double frees
 *     and frees of host memory are errors with messages;
 *  7. kernels run normally (vector ops against a reference);
 *  8. HEXCG_BACKEND_CPU=cpu-memcheck turns "cpu" into "cpu-memcheck". */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hx_hd.h"
#include "hx_kernels.h"
#include "queue_impl.h"
#include "hx_test.h"

/* Run fn in a forked child; return its stderr (malloc'd) and how it ended. */
static char *run_child(void (*fn)(void), int *signaled, int *sig) {
  int fd[2];
  if (pipe(fd) != 0) return NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 2);
    fn();
    _exit(0); /* not reached when the check works */
  }
  close(fd[1]);
  size_t cap = 1 << 16, len = 0;
  char *buf = calloc(cap, 1);
  ssize_t r;
  while ((r = read(fd[0], buf + len, cap - 1 - len)) > 0) {
    len += (size_t)r;
    if (len + 1 >= cap) break;
  }
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *signaled = WIFSIGNALED(status);
  *sig = *signaled ? WTERMSIG(status) : -1;
  return buf;
}

static void child_touch(void) {
  hx_backend b;
  double *d;
  if (hx_backend_create("cpu-memcheck", &b) || hx_mem_alloc(b, 100 * sizeof(double), (void **)&d)) _exit(3);
  volatile double v = d[3]; /* the bug: a host read of backend memory */
  (void)v;
}

static void child_use_after_free(void) {
  hx_backend b;
  double *d;
  if (hx_backend_create("cpu-memcheck", &b) || hx_mem_alloc(b, 64 * sizeof(double), (void **)&d)) _exit(3);
  double *keep = d;
  if (hx_mem_free(b, (void **)&d)) _exit(3);
  keep[1] = 1.0; /* the bug: a write after the free */
}

static void check_child(void (*fn)(void), const char *what, const char *expect) {
  int signaled = 0, sig = -1;
  char *out = run_child(fn, &signaled, &sig);
  HX_ASSERT(out && signaled && sig == SIGSEGV, "%s: child should die of SIGSEGV (signaled %d sig %d); stderr:\n%s",
            what, signaled, sig, out ? out : "");
  HX_ASSERT(out && strstr(out, expect) && strstr(out, "allocation #"), "%s: message '%s' missing in:\n%s", what,
            expect, out ? out : "");
  HX_ASSERT(out && strstr(out, "faulting host code"), "%s: no stack in:\n%s", what, out ? out : "");
  free(out);
}

static int test_inprocess(hx_backend b) {
  const int64_t n = 2 * HX_REDUCE_CHUNK + 9;
  const size_t bytes = sizeof(double) * (size_t)n;
  double *h = malloc(bytes), *out = malloc(bytes), *d = NULL, *d2 = NULL;
  for (int64_t i = 0; i < n; i++) h[i] = 0.5 * (double)i - 3.0;

  /* 3: poison on allocation, round trip */
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&d));
  HX_TCALL(hx_mem_to_host(b, out, d, bytes));
  int nnan = 0;
  for (int64_t i = 0; i < n; i++) nnan += isnan(out[i]) != 0;
  HX_ASSERT(nnan == n, "fresh backend memory: %d of %lld entries NaN", nnan, (long long)n);
  HX_TCALL(hx_mem_to_device(b, d, h, bytes));
  HX_TCALL(hx_mem_to_host(b, out, d, bytes));
  HX_ASSERT(memcmp(out, h, bytes) == 0, "round trip");

  /* 4: async download */
  hx_queue q;
  HX_TCALL(hx_queue_create(b, &q));
  memset(out, 0, bytes);
  HX_TCALL(hx_mem_to_host_q(q, out, d, bytes));
  HX_ASSERT(isnan(out[0]) && isnan(out[n / 2]), "async download visible before its queue was synchronised");
  HX_TCALL(hx_array_axpby_q(q, HX_F64, n, d, 1.0, d, 1.0)); /* later work on q must not change the download */
  HX_TCALL(hx_queue_sync(q));
  HX_ASSERT(memcmp(out, h, bytes) == 0, "async download after hx_queue_sync");

  /* 5: the source of an async upload changed before the sync */
  HX_TCALL(hx_mem_to_device_q(q, d, h, bytes));
  h[7] += 1.0;
  int ierr = hx_queue_sync(q);
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "changed before its queue was synchronised"),
            "modified upload source: %s '%s'", hx_error_name(ierr), hx_error_message());
  hx_error_clear();
  HX_TCALL(hx_mem_to_device_q(q, d, h, bytes)); /* unchanged until the sync: fine */
  HX_TCALL(hx_queue_sync(q));
  HX_TCALL(hx_queue_destroy(&q));

  /* 6: wrong memory spaces, bad frees */
  double r = 0.0;
  ierr = hx_array_dot(b, n, h, d, &r);
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "should be backend memory but is host memory"),
            "host array to a kernel: '%s'", hx_error_message());
  ierr = hx_mem_to_host(b, d, h, bytes); /* arguments swapped */
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "should be host memory but is backend memory"),
            "swapped transfer: '%s'", hx_error_message());
  ierr = hx_array_copy(b, n + 1, d, d); /* one entry past the end */
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "runs past the end"), "overrun: '%s'",
            hx_error_message());
  /* the FP32 (_p) wrappers check their pointers as the FP64 ones, in bytes
   * of floats */
  float *hf = calloc((size_t)n, sizeof(float));
  ierr = hx_array_dot_p(b, HX_F32, n, hf, d, &r);
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "should be backend memory but is host memory"),
            "host array to an FP32 kernel: '%s'", hx_error_message());
  ierr = hx_array_axpby_p(b, HX_F32, 2 * n + 1, d, 1.0, d, 1.0); /* d holds 2n floats */
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "runs past the end"), "FP32 overrun: '%s'",
            hx_error_message());
  HX_TCALL(hx_array_axpby_p(b, HX_F32, 2 * n, d, 1.0, d, 0.0)); /* exactly 2n floats: fine */
  free(hf);
  double *hp = malloc(8);
  ierr = hx_mem_free(b, (void **)&hp);
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "not backend memory"), "free of host memory: '%s'",
            hx_error_message());
  free(hp);
  HX_TCALL(hx_mem_alloc(b, 16, (void **)&d2));
  double *d2copy = d2;
  HX_TCALL(hx_mem_free(b, (void **)&d2));
  ierr = hx_mem_free(b, (void **)&d2copy);
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "double free"), "double free: '%s'",
            hx_error_message());
  ierr = hx_array_dot(b, 2, d2copy, d2copy, &r);
  HX_ASSERT(ierr == HX_ERR_ARG && strstr(hx_error_message(), "was freed"), "freed array to a kernel: '%s'",
            hx_error_message());
  hx_error_clear();

  /* 7: kernels work on protected memory */
  hx_vec x, y;
  HX_TCALL(hx_vec_create(b, n, &x));
  HX_TCALL(hx_vec_create(b, n, &y));
  HX_TCALL(hx_vec_set_host(x, h));
  HX_TCALL(hx_vec_set_value(y, 2.0));
  HX_TCALL(hx_vec_axpby(y, 1.0, x, 1.0)); /* y = x + 2 */
  HX_TCALL(hx_vec_dot(x, y, &r));
  long double ref = 0;
  for (int64_t i = 0; i < n; i++) ref += (long double)h[i] * (h[i] + 2.0);
  HX_ASSERT(hx_test_reldiff(r, (double)ref, 1e-300) < 1e-12, "dot %.17g ref %.17g", r, (double)ref);
  HX_TCALL(hx_vec_destroy(&x));
  HX_TCALL(hx_vec_destroy(&y));
  HX_TCALL(hx_mem_free(b, (void **)&d));
  free(h), free(out);
  return 0;
}

static int test_env(void) {
  hx_backend b = NULL;
  setenv("HEXCG_BACKEND_CPU", "cpu-memcheck", 1);
  HX_TCALL(hx_backend_create("cpu", &b));
  HX_ASSERT(!strcmp(hx_backend_name(b), "cpu-memcheck") && hx_backend_get_kind(b) == HX_BACKEND_CPU,
            "HEXCG_BACKEND_CPU: got '%s'", hx_backend_name(b));
  HX_TCALL(hx_backend_destroy(&b));
  setenv("HEXCG_BACKEND_CPU", "gpu", 1);
  int ierr = hx_backend_create("cpu", &b);
  HX_ASSERT(ierr == HX_ERR_INPUT && b == NULL && strstr(hx_error_message(), "HEXCG_BACKEND_CPU=gpu"),
            "bad HEXCG_BACKEND_CPU: '%s'", hx_error_message());
  hx_error_clear();
  unsetenv("HEXCG_BACKEND_CPU");
  HX_TCALL(hx_backend_create("cpu", &b));
  HX_ASSERT(!strcmp(hx_backend_name(b), "cpu"), "without the variable: '%s'", hx_backend_name(b));
  HX_TCALL(hx_backend_destroy(&b));
  return 0;
}

int main(void) {
  /* children first: fork before this process starts OpenMP threads */
  check_child(child_touch, "host dereference", "host code touched backend memory without a transfer");
  check_child(child_use_after_free, "use after free", "use after free");
  hx_backend b = NULL;
  HX_TCALL(hx_backend_create("cpu-memcheck", &b));
  HX_ASSERT(!strcmp(hx_backend_name(b), "cpu-memcheck") && hx_backend_get_kind(b) == HX_BACKEND_CPU,
            "name '%s', CPU kind", hx_backend_name(b));
  test_inprocess(b);
  HX_TCALL(hx_backend_destroy(&b));
  test_env();
  return hx_test_result();
}
