/* Process-wide timers, logging and memory reporting (see hx_core.h). */
#include "hx_core.h"

#include <stdarg.h>
#include <sys/resource.h>
#include <time.h>

static double hx_t_acc_[HX_T_NUM];
static double hx_t_start_[HX_T_NUM];
static long hx_t_count_[HX_T_NUM];

double hx_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *hx_timer_name(hx_timer_id id) {
  static const char *names[HX_T_NUM] = {"total",        "setup",   "mesh",      "operator",
                                        "precond",      "precond_fine", "precond_coarse",
                                        "vector",       "reduction", "exchange", "io", "solve"};
  return (id >= 0 && id < HX_T_NUM) ? names[id] : "unknown";
}

void hx_timer_start(hx_timer_id id) { hx_t_start_[id] = hx_wtime(); }
void hx_timer_stop(hx_timer_id id) {
  hx_t_acc_[id] += hx_wtime() - hx_t_start_[id];
  hx_t_count_[id]++;
}
double hx_timer_get(hx_timer_id id) { return hx_t_acc_[id]; }
long hx_timer_count(hx_timer_id id) { return hx_t_count_[id]; }
void hx_timer_reset_all(void) {
  for (int i = 0; i < HX_T_NUM; i++) hx_t_acc_[i] = 0, hx_t_count_[i] = 0;
}

size_t hx_peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (size_t)ru.ru_maxrss * 1024u; /* Linux: kilobytes */
}

static int hx_log_rank_ = 0;
static hx_log_level hx_log_level_ = HX_LOG_NORMAL;

void hx_log_init(int rank, hx_log_level level) {
  hx_log_rank_ = rank;
  hx_log_level_ = level;
}
hx_log_level hx_log_get_level(void) { return hx_log_level_; }
int hx_log_rank(void) { return hx_log_rank_; }

void hx_log(hx_log_level level, const char *fmt, ...) {
  if (hx_log_rank_ != 0 || level > hx_log_level_) return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fflush(stdout);
}

void hx_warn(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "[rank %d] warning: ", hx_log_rank_);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}
