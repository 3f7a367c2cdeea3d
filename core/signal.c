/* Interruption by a signal: SIGINT, SIGTERM and SIGUSR1 (what Slurm sends
 * before a time limit, sbatch --signal) are recorded, not acted on, so a
 * solve can stop at its next reduction with every rank agreeing and the
 * outputs written; a second such signal ends the process (default action).
 *
 * One signal often reaches a rank twice: `timeout` sends it to mpiexec and
 * then to its whole process group, which holds mpiexec (and the ranks, under
 * launchers that keep them in it), and Hydra's mpiexec forwards each copy it
 * gets to every rank; a Ctrl-C reaches the ranks from the terminal and
 * through mpiexec. Counted as two, that ended the run without its
 * checkpoint whenever the handler ran between the two deliveries (issue 53,
 * defect 17: 1 in 13 tries under load). So a repeat of the first signal's
 * number within HX_SIGNAL_ECHO_S of it is the same event arriving by another
 * path and is ignored, whoever sent it (Hydra's proxy forwards both copies
 * itself) but the process itself; another signal, a repeat after the
 * window, or one the process raised itself ends the process:
 * a person's second Ctrl-C comes later than that (or a third one does). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hx_core.h"

#define HX_SIGNAL_ECHO_S 1.0

static volatile sig_atomic_t pending = 0;
static volatile sig_atomic_t deferred = 0;
static volatile double first_time = 0.0;
static volatile sig_atomic_t echoes = 0;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe (POSIX) */
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  /* a signal the process sends itself (raise, the tests' HEXCG_TEST_SIGNAL
   * hook, whose second one must end the run) is never another path's copy */
  const int self = si && si->si_pid == getpid();
  if (!pending) {
    pending = sig;
    first_time = now_s();
    return;
  }
  if (sig == pending && !self && now_s() - first_time < HX_SIGNAL_ECHO_S) {
    echoes = echoes + 1; /* the first one again, by another path */
    return;
  }
  signal(sig, SIG_DFL); /* the second one: as if there were no handler */
  raise(sig);
}

void hx_signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  /* a closed stdout (hexcg run ... | head) gives EPIPE on write, not death */
  signal(SIGPIPE, SIG_IGN);
}

int hx_signal_pending(void) { return deferred ? 0 : (int)pending; }

int hx_signal_echoes(void) { return (int)echoes; }

void hx_signals_defer(int on) { deferred = on ? 1 : 0; }

const char *hx_signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "a signal";
  }
}
