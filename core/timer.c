/* Process-wide timers, logging and memory reporting (see hx_core.h). */
#include "hx_core.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define HX_EVENT_MAX 256
typedef struct {
  char name[64];
  long count;
  double seconds, bytes, flops;
} hx_log_event_rec;
static hx_log_event_rec hx_ev_[HX_EVENT_MAX];
static int hx_nev_ = 0;
static pthread_mutex_t hx_ev_lock_ = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local double hx_ev_start_[HX_EVENT_MAX];

static const char *const hx_timer_names_[HX_T_NUM] = {"total",     "setup",    "mesh",    "operator",
                                                      "precond",   "precond_fine", "precond_coarse",
                                                      "vector",    "reduction", "exchange", "io", "solve"};

/* the categories are events 0..HX_T_NUM-1 (registered on first use) */
static void hx_log_event_init_locked(void) {
  if (hx_nev_ >= HX_T_NUM) return;
  for (int i = hx_nev_; i < HX_T_NUM; i++) snprintf(hx_ev_[i].name, sizeof hx_ev_[i].name, "%s", hx_timer_names_[i]);
  hx_nev_ = HX_T_NUM;
}

double hx_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int hx_log_event_register(const char *name, hx_log_event *ev) {
  HX_CHECK(name && name[0] && strlen(name) < 64, HX_ERR_ARG, "event name empty or longer than 63 characters");
  pthread_mutex_lock(&hx_ev_lock_);
  hx_log_event_init_locked();
  int id = -1;
  for (int i = 0; i < hx_nev_ && id < 0; i++)
    if (!strcmp(hx_ev_[i].name, name)) id = i;
  if (id < 0 && hx_nev_ < HX_EVENT_MAX) {
    id = hx_nev_++;
    memset(&hx_ev_[id], 0, sizeof hx_ev_[id]);
    snprintf(hx_ev_[id].name, sizeof hx_ev_[id].name, "%s", name);
  }
  pthread_mutex_unlock(&hx_ev_lock_);
  HX_CHECK(id >= 0, HX_ERR_INTERNAL, "more than %d log events", HX_EVENT_MAX);
  *ev = id;
  return HX_SUCCESS;
}

void hx_log_event_begin(hx_log_event ev) {
  if (ev >= 0 && ev < HX_EVENT_MAX) hx_ev_start_[ev] = hx_wtime();
}

void hx_log_event_add(hx_log_event ev, double seconds, double bytes, double flops) {
  if (ev < 0 || ev >= HX_EVENT_MAX) return;
  pthread_mutex_lock(&hx_ev_lock_);
  hx_log_event_init_locked();
  if (ev < hx_nev_) {
    hx_ev_[ev].count++;
    hx_ev_[ev].seconds += seconds;
    hx_ev_[ev].bytes += bytes;
    hx_ev_[ev].flops += flops;
  }
  pthread_mutex_unlock(&hx_ev_lock_);
}

void hx_log_event_end(hx_log_event ev, double bytes, double flops) {
  if (ev < 0 || ev >= HX_EVENT_MAX) return;
  hx_log_event_add(ev, hx_wtime() - hx_ev_start_[ev], bytes, flops);
}

int hx_log_event_num(void) {
  pthread_mutex_lock(&hx_ev_lock_);
  hx_log_event_init_locked();
  const int n = hx_nev_;
  pthread_mutex_unlock(&hx_ev_lock_);
  return n;
}

int hx_log_event_get(hx_log_event ev, hx_log_event_info *info) {
  memset(info, 0, sizeof *info);
  pthread_mutex_lock(&hx_ev_lock_);
  hx_log_event_init_locked();
  const int ok = ev >= 0 && ev < hx_nev_;
  if (ok)
    *info = (hx_log_event_info){.name = hx_ev_[ev].name, .count = hx_ev_[ev].count, .seconds = hx_ev_[ev].seconds,
                            .bytes = hx_ev_[ev].bytes, .flops = hx_ev_[ev].flops};
  pthread_mutex_unlock(&hx_ev_lock_);
  return ok;
}

void hx_log_event_reset_all(void) {
  pthread_mutex_lock(&hx_ev_lock_);
  for (int i = 0; i < hx_nev_; i++) hx_ev_[i].count = 0, hx_ev_[i].seconds = hx_ev_[i].bytes = hx_ev_[i].flops = 0;
  pthread_mutex_unlock(&hx_ev_lock_);
}

int hx_log_event_view(MPI_Comm comm, FILE *out) {
  int rank;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  /* events are registered in the same order on every rank for the fixed
   * categories; others may differ, so match by name through rank 0's list */
  int n = hx_log_event_num();
  HX_MPI(MPI_Bcast(&n, 1, MPI_INT, 0, comm));
  if (rank == 0)
    fprintf(out, "%-28s %9s %11s %11s %6s %9s %9s\n", "event", "count", "max s", "min s", "ratio", "GB/s",
            "GFLOP/s");
  for (int i = 0; i < n; i++) {
    char name[64] = "";
    hx_log_event_info info;
    if (rank == 0 && hx_log_event_get(i, &info)) snprintf(name, sizeof name, "%s", info.name);
    HX_MPI(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm));
    hx_log_event mine = -1;
    for (int j = 0; j < hx_log_event_num() && mine < 0; j++)
      if (hx_log_event_get(j, &info) && !strcmp(info.name, name)) mine = j;
    if (mine < 0 || !hx_log_event_get(mine, &info)) memset(&info, 0, sizeof info);
    double v[4] = {(double)info.count, info.seconds, info.bytes, info.flops}, mx[2], mn, sum[2];
    HX_MPI(MPI_Allreduce(v, mx, 2, MPI_DOUBLE, MPI_MAX, comm));
    HX_MPI(MPI_Allreduce(&v[1], &mn, 1, MPI_DOUBLE, MPI_MIN, comm));
    HX_MPI(MPI_Allreduce(&v[2], sum, 2, MPI_DOUBLE, MPI_SUM, comm));
    if (rank == 0 && mx[0] > 0)
      fprintf(out, "%-28s %9.0f %11.4e %11.4e %6.2f %9.3f %9.3f\n", name, mx[0], mx[1], mn,
              mn > 0 ? mx[1] / mn : 0.0, mx[1] > 0 ? sum[0] / mx[1] * 1e-9 : 0.0,
              mx[1] > 0 ? sum[1] / mx[1] * 1e-9 : 0.0);
  }
  if (rank == 0) fflush(out);
  return HX_SUCCESS;
}

const char *hx_timer_name(hx_timer_id id) { return (id >= 0 && id < HX_T_NUM) ? hx_timer_names_[id] : "unknown"; }
void hx_timer_start(hx_timer_id id) { hx_log_event_begin((hx_log_event)id); }
void hx_timer_stop(hx_timer_id id) { hx_log_event_end((hx_log_event)id, 0.0, 0.0); }
double hx_timer_get(hx_timer_id id) {
  hx_log_event_info info;
  hx_log_event_get((hx_log_event)id, &info);
  return info.seconds;
}
long hx_timer_count(hx_timer_id id) {
  hx_log_event_info info;
  hx_log_event_get((hx_log_event)id, &info);
  return info.count;
}
void hx_timer_reset_all(void) { hx_log_event_reset_all(); }

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
  if (hx_log_get_level() < HX_LOG_QUIET) return; /* the library's verbosity 0: nothing */
  va_list ap;
  fprintf(stderr, "[rank %d] warning: ", hx_log_rank_);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}
