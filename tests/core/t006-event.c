/* Scoped timing events (hx_ev): counts, nesting, sums, bytes and flops
 * accounting, the tie to a log event, reset, derived rates, a slot written
 * by a thread of its own, and the max over ranks. No timing thresholds:
 * only what the monotonic clock guarantees (an enclosing interval is at
 * least as long as the ones inside it). */
#include <pthread.h>

#include "hx_test.h"

static void *thread_work(void *arg) {
  hx_ev_slot *s = arg; /* the thread's own slot */
  for (int i = 0; i < 100; i++) {
    hx_ev e = hx_ev_begin(s);
    hx_ev_end(&e, 8.0, 2.0);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);

  /* a zeroed slot is valid and tied to no log event */
  hx_ev_slot z = {0};
  HX_ASSERT(z.log == 0 && hx_ev_per(&z, 0) == 0.0 && hx_ev_gbs(&z) == 0.0 && hx_ev_gflops(&z) == 0.0,
            "zeroed slot");

  /* counts and sums; nesting (on other slots and on the same one) */
  hx_ev_slot outer, inner;
  HX_TCALL(hx_ev_slot_init(&outer, NULL));
  HX_TCALL(hx_ev_slot_init(&inner, NULL));
  double t_in = 0.0;
  hx_ev eo = hx_ev_begin(&outer);
  for (int i = 0; i < 5; i++) {
    hx_ev ei = hx_ev_begin(&inner);
    hx_ev ej = hx_ev_begin(&inner); /* the same slot, nested */
    volatile double acc = 0.0;
    for (int k = 0; k < 1000; k++) acc += (double)k;
    t_in += hx_ev_end(&ej, 100.0, 10.0);
    t_in += hx_ev_end(&ei, 24.0, 0.0);
  }
  const double t_out = hx_ev_end(&eo, 0.0, 3.0);
  HX_ASSERT(inner.count == 10 && outer.count == 1, "counts %ld %ld", inner.count, outer.count);
  HX_ASSERT(inner.bytes == 5 * 124.0 && inner.flops == 50.0, "inner bytes %g flops %g", inner.bytes,
            inner.flops);
  HX_ASSERT(outer.bytes == 0.0 && outer.flops == 3.0, "outer bytes %g flops %g", outer.bytes, outer.flops);
  HX_ASSERT(inner.seconds == t_in && outer.seconds == t_out, "seconds are the sum of the returned intervals");
  HX_ASSERT(t_in >= 0.0 && t_out >= 0.0, "intervals non-negative");
  /* each inner pair lies within the outer interval and the nested one within its enclosing one, so
   * the sum of the inner ones is at most twice the outer (the stamps' differences are exact; 1e-12
   * covers the rounding of the sums) */
  HX_ASSERT(t_out * (1.0 + 1e-12) >= 0.5 * t_in, "outer %g holds the inner intervals (pairs %g)", t_out,
            0.5 * t_in);

  /* derived figures from known sums */
  hx_ev_slot r;
  HX_TCALL(hx_ev_slot_init(&r, NULL));
  hx_ev_add(&r, 0.5, 2e9, 4e9);
  hx_ev_add(&r, 1.5, 1e9, 0.0);
  HX_ASSERT(r.count == 2 && r.seconds == 2.0, "added intervals");
  /* n intervals at once (a block apply): n counts, the totals; n <= 0 nothing */
  hx_ev_slot rn;
  HX_TCALL(hx_ev_slot_init(&rn, NULL));
  hx_ev_add_n(&rn, 8, 4.0, 8e9, 0.0);
  hx_ev_add_n(&rn, 0, 1.0, 1.0, 1.0);
  HX_ASSERT(rn.count == 8 && rn.seconds == 4.0 && hx_ev_per(&rn, rn.count) == 0.5 && rn.bytes == 8e9,
            "hx_ev_add_n: count %ld seconds %g", rn.count, rn.seconds);
  HX_ASSERT(hx_ev_per(&r, 4) == 0.5 && hx_ev_per(&r, 0) == 0.0, "per");
  HX_ASSERT(fabs(hx_ev_gbs(&r) - 1.5) < 1e-15 && fabs(hx_ev_gflops(&r) - 2.0) < 1e-15, "rates %g %g",
            hx_ev_gbs(&r), hx_ev_gflops(&r));

  /* tied to a log event: it gains what the slot gains; reset keeps the tie */
  hx_ev_slot t1, t2;
  HX_TCALL(hx_ev_slot_init(&t1, "test.ev.tied"));
  HX_TCALL(hx_ev_slot_init(&t2, "test.ev.tied")); /* two objects, one log event */
  hx_log_event le;
  HX_TCALL(hx_log_event_register("test.ev.tied", &le));
  HX_ASSERT(t1.log == le + 1 && t2.log == le + 1, "tie %d %d to event %d", t1.log, t2.log, le);
  hx_ev e1 = hx_ev_begin(&t1);
  const double s1 = hx_ev_end(&e1, 64.0, 16.0);
  hx_ev_add(&t2, 0.25, 32.0, 0.0);
  hx_log_event_info info;
  HX_ASSERT(hx_log_event_get(le, &info), "log event exists");
  HX_ASSERT(info.count == 2 && info.bytes == 96.0 && info.flops == 16.0 && info.seconds == s1 + 0.25,
            "log event count %ld bytes %g flops %g seconds %g", info.count, info.bytes, info.flops,
            info.seconds);
  HX_ASSERT(t1.count == 1 && t2.count == 1 && t2.bytes == 32.0, "slots stay per object");
  hx_ev_reset(&t1);
  HX_ASSERT(t1.count == 0 && t1.seconds == 0.0 && t1.bytes == 0.0 && t1.flops == 0.0 && t1.log == le + 1,
            "reset zeroes the sums, keeps the tie");
  hx_ev_add(&t1, 0.0, 1.0, 0.0);
  HX_ASSERT(hx_log_event_get(le, &info) && info.count == 3, "still tied after reset");
  HX_ASSERT(hx_ev_slot_init(&t1, "") != HX_SUCCESS, "an empty log name is refused");
  hx_error_clear();

  /* slots of their own per thread: no lock, no lost counts */
  hx_ev_slot ts[2] = {{0}, {0}};
  pthread_t th;
  HX_ASSERT(pthread_create(&th, NULL, thread_work, &ts[1]) == 0, "thread");
  thread_work(&ts[0]);
  pthread_join(th, NULL);
  for (int i = 0; i < 2; i++)
    HX_ASSERT(ts[i].count == 100 && ts[i].bytes == 800.0 && ts[i].flops == 200.0, "thread slot %d: %ld", i,
              ts[i].count);

  /* the max over ranks, over more slots than one reduction carries */
  hx_ev_slot m[20];
  for (int i = 0; i < 20; i++) {
    HX_TCALL(hx_ev_slot_init(&m[i], NULL));
    hx_ev_add(&m[i], (double)((rank + i) % size) + 0.5 * i, (double)rank, 0.0);
  }
  HX_TCALL(hx_ev_max_seconds(MPI_COMM_WORLD, m, 20));
  for (int i = 0; i < 20; i++) {
    double want = 0.0;
    for (int q = 0; q < size; q++)
      if ((double)((q + i) % size) + 0.5 * i > want) want = (double)((q + i) % size) + 0.5 * i;
    HX_ASSERT(m[i].seconds == want && m[i].count == 1 && m[i].bytes == (double)rank,
              "max of slot %d: %g, want %g", i, m[i].seconds, want);
  }

  MPI_Finalize();
  return hx_test_result();
}
