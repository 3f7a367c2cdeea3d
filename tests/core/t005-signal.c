/* The signal handlers (core/signal.c, issue 53 defect 17): one signal that
 * reaches a rank by two paths (`timeout` signals mpiexec and its process
 * group, and Hydra's mpiexec forwards each copy) is one interruption, not
 * the "second signal" that ends the process. Each scenario runs in a child
 * process that installs the handlers; the parent checks how the child ended:
 *  - echo: SIGTERM from another process, then again from another within the
 *    window -> the child lives, hx_signal_pending() is SIGTERM, one echo;
 *  - same: SIGTERM twice from the same sender (as Hydra's proxy forwards the
 *    two copies) within the window -> lives, one echo;
 *  - late: the repeat after the window (1 s) -> killed by SIGTERM;
 *  - other: SIGTERM, then SIGINT -> killed by SIGINT;
 *  - self: SIGTERM, then one the process raises itself (the tests' hook)
 *    -> killed by SIGTERM;
 *  - deferred: the echo while hx_signals_defer(1) -> lives, the signal still
 *    recorded once the deferral ends. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hx_test.h"

/* a process other than the child sends sig to it n times, and is waited for */
static void from_other_n(pid_t to, int sig, int n) {
  pid_t g = fork();
  if (g == 0) {
    for (int i = 0; i < n; i++) kill(to, sig);
    _exit(0);
  }
  while (waitpid(g, NULL, 0) < 0) {
  }
}
static void from_other(pid_t to, int sig) { from_other_n(to, sig, 1); }

static void pause_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* the child: 0 if it lives with what the scenario expects */
static int child(const char *what) {
  hx_signals_install();
  if (!strcmp(what, "deferred")) hx_signals_defer(1);
  from_other(getpid(), SIGTERM);
  if (!strcmp(what, "echo") || !strcmp(what, "deferred")) from_other(getpid(), SIGTERM);
  if (!strcmp(what, "same")) from_other_n(getpid(), SIGTERM, 2);
  if (!strcmp(what, "self")) raise(SIGTERM);
  if (!strcmp(what, "late")) pause_s(1.3), from_other(getpid(), SIGTERM);
  if (!strcmp(what, "other")) from_other(getpid(), SIGINT);
  pause_s(0.05);
  if (!strcmp(what, "late") || !strcmp(what, "other") || !strcmp(what, "self")) return 3; /* still alive */
  if (hx_signal_pending() != (strcmp(what, "deferred") ? SIGTERM : 0)) return 1;
  hx_signals_defer(0);
  /* "same": the sender's two kills may merge while the first is pending */
  const int e = hx_signal_echoes(), ok_echoes = !strcmp(what, "same") ? (e == 1 || e == 2) : e == 1;
  return hx_signal_pending() == SIGTERM && ok_echoes ? 0 : 2;
}

static void scenario(const char *what, int want_sig) {
  pid_t c = fork();
  if (c == 0) _exit(child(what));
  int st = 0;
  while (waitpid(c, &st, 0) < 0) {
  }
  if (want_sig)
    HX_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == want_sig, "%s: want death by signal %d, got %s %d", what,
              want_sig, WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  else
    HX_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: want exit 0, got %s %d", what,
              WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

int main(void) {
  scenario("echo", 0);
  scenario("same", 0);
  scenario("deferred", 0);
  scenario("late", SIGTERM);
  scenario("other", SIGINT);
  scenario("self", SIGTERM);
  return hx_test_result();
}
