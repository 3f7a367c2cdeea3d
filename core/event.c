/* Scoped timing events: per-object slots (see hx_core.h). */
#include "hx_core.h"

int hx_ev_slot_init(hx_ev_slot *s, const char *log_name) {
  HX_CHECK(s, HX_ERR_ARG, "event slot is NULL");
  *s = (hx_ev_slot){.count = 0};
  if (log_name) {
    hx_log_event ev;
    HX_CALL(hx_log_event_register(log_name, &ev));
    s->log = ev + 1;
  }
  return HX_SUCCESS;
}

void hx_ev_add(hx_ev_slot *s, double seconds, double bytes, double flops) {
  s->count++;
  s->seconds += seconds, s->bytes += bytes, s->flops += flops;
  if (s->log > 0) hx_log_event_add((hx_log_event)(s->log - 1), seconds, bytes, flops);
}

void hx_ev_add_n(hx_ev_slot *s, long n, double seconds, double bytes, double flops) {
  if (n <= 0) return;
  s->count += n;
  s->seconds += seconds, s->bytes += bytes, s->flops += flops;
  /* the log event counts calls: n of them, sharing the sums */
  for (long i = 0; s->log > 0 && i < n; i++)
    hx_log_event_add((hx_log_event)(s->log - 1), seconds / (double)n, bytes / (double)n, flops / (double)n);
}

double hx_ev_end(hx_ev *e, double bytes, double flops) {
  const double dt = hx_wtime() - e->t0;
  hx_ev_add(e->slot, dt, bytes, flops);
  return dt;
}

void hx_ev_reset(hx_ev_slot *s) {
  const int log = s->log;
  *s = (hx_ev_slot){.log = log};
}

double hx_ev_per(const hx_ev_slot *s, long n) { return n > 0 ? s->seconds / (double)n : 0.0; }
double hx_ev_gbs(const hx_ev_slot *s) { return s->seconds > 0 ? s->bytes / s->seconds * 1e-9 : 0.0; }
double hx_ev_gflops(const hx_ev_slot *s) { return s->seconds > 0 ? s->flops / s->seconds * 1e-9 : 0.0; }

int hx_ev_max_seconds(MPI_Comm comm, hx_ev_slot *s, int n) {
  double v[16];
  for (int i0 = 0; i0 < n; i0 += 16) {
    const int m = n - i0 < 16 ? n - i0 : 16;
    for (int i = 0; i < m; i++) v[i] = s[i0 + i].seconds;
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, v, m, MPI_DOUBLE, MPI_MAX, comm));
    for (int i = 0; i < m; i++) s[i0 + i].seconds = v[i];
  }
  return HX_SUCCESS;
}
