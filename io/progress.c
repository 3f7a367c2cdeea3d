/* Progress lines on rank 0 during a solve. */
#include <math.h>
#include <stdlib.h>

#include "io_impl.h"

struct hx_progress_s {
  int every_it;
  double every_s, tol;
  FILE *out;
  double t0, t_last;
  int it_last, printed, active;
  double rel_last; /* relative residual at the last printed line */
};

int hx_progress_create(int every_it, double every_s, double tol, FILE *out, hx_progress *pr) {
  *pr = NULL;
  HX_CALL(hx_calloc(1, sizeof(struct hx_progress_s), pr));
  hx_progress p = *pr;
  p->every_it = every_it > 0 ? every_it : 0;
  p->every_s = every_s > 0 ? every_s : 0;
  p->tol = tol;
  p->out = out ? out : stdout;
  p->t0 = p->t_last = hx_wtime();
  p->it_last = -1;
  p->rel_last = -1;
  p->active = hx_log_rank() == 0 && hx_log_get_level() >= HX_LOG_NORMAL;
  return HX_SUCCESS;
}

void hx_progress_destroy(hx_progress *pr) {
  if (!pr || !*pr) return;
  free(*pr);
  *pr = NULL;
}

static void print_line(hx_progress p, int it, double res, double rel, double now) {
  double el = now - p->t0;
  if (p->it_last >= 0 && it > p->it_last && p->rel_last > 0 && rel > 0) {
    /* mean reduction per iteration since the last line */
    double rate = pow(rel / p->rel_last, 1.0 / (double)(it - p->it_last));
    if (rate < 1.0 && rate > 0.0 && rel > p->tol) {
      double left = ceil(log(p->tol / rel) / log(rate));
      fprintf(p->out, "  it %6d  res %.3e  rel %.3e  rate %.4f  %8.2f s  ~%.0f it left\n", it, res, rel, rate,
              el, left);
    } else {
      fprintf(p->out, "  it %6d  res %.3e  rel %.3e  rate %.4f  %8.2f s\n", it, res, rel, rate, el);
    }
  } else {
    fprintf(p->out, "  it %6d  res %.3e  rel %.3e  rate    -    %8.2f s\n", it, res, rel, el);
  }
  fflush(p->out);
  p->it_last = it;
  p->rel_last = rel;
  p->t_last = now;
  p->printed = 1;
}

int hx_progress_update(hx_progress p, int it, double residual, double rel_residual) {
  if (!p || !p->active) return 0;
  double now = hx_wtime();
  int due = (p->every_it > 0 && it % p->every_it == 0) || (p->every_s > 0 && now - p->t_last >= p->every_s);
  if (hx_log_get_level() >= HX_LOG_VERBOSE && (p->every_it > 0 || p->every_s > 0)) due = 1;
  if (!due || it == p->it_last) return 0;
  print_line(p, it, residual, rel_residual, now);
  return 1;
}

void hx_progress_finish(hx_progress p, int it, double residual, double rel_residual) {
  if (!p || !p->active || it == p->it_last) return;
  if (p->printed || hx_log_get_level() >= HX_LOG_VERBOSE)
    print_line(p, it, residual, rel_residual, hx_wtime());
}
