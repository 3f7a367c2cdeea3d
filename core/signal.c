/* Interruption by a signal: SIGINT, SIGTERM and SIGUSR1 (what Slurm sends
 * before a time limit, sbatch --signal) are recorded, not acted on, so a
 * solve can stop at its next reduction with every rank agreeing and the
 * outputs written; a second such signal ends the process (default action). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>

#include "hx_core.h"

static volatile sig_atomic_t pending = 0;
static volatile sig_atomic_t deferred = 0;

static void on_signal(int sig) {
  if (!pending) {
    pending = sig;
    return;
  }
  signal(sig, SIG_DFL); /* the second one: as if there were no handler */
  raise(sig);
}

void hx_signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  /* a closed stdout (hexcg run ... | head) gives EPIPE on write, not death */
  signal(SIGPIPE, SIG_IGN);
}

int hx_signal_pending(void) { return deferred ? 0 : (int)pending; }

void hx_signals_defer(int on) { deferred = on ? 1 : 0; }

const char *hx_signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "a signal";
  }
}
