/* Queues and events (hx_kernels.h "Queues"):
 *  1. two host threads reducing concurrently, each on its own queue, get the
 *     same bits as one thread on the default queue (with one shared reduction
 *     scratch they would overwrite each other's chunk partials);
 *  2. event ordering: work on queue B that waits for an event recorded on
 *     queue A sees A's results; an asynchronous hx_mem_to_host_q delivers
 *     after hx_queue_sync / hx_event_sync;
 *  3. an error raised in a worker thread reaches the joining thread with its
 *     message and traceback (hx_error_capture / HX_ERROR_RERAISE), and does
 *     not leak into the joining thread's error state before that;
 *  4. queue lifecycle (default queue not destroyable, NULL handles);
 *  5. pinned host memory (hx_mem_alloc_host, where CUDA's copies are truly
 *     asynchronous): hx_mem_to_host returns with the data in the pinned
 *     buffer, hx_mem_to_device returns with the pinned source free again,
 *     and hx_backend_sync completes an asynchronous download queued on a
 *     queue of its own.
 * Usage: t103-queue --backend cpu|cpu-memcheck|cuda. */
#include <pthread.h>

#include "hx_hd.h"
#include "hx_kernels.h"
#include "backend_impl.h"
#include "queue_impl.h"
#include "hx_test.h"

#define NTHREADS 2
#define NITER 60

typedef struct {
  hx_backend b;
  int64_t n;
  const double *d_x, *d_y;
  double want_dot, want_nrm; /* bits computed on the default queue */
  int bad;
  hx_error_state st;
} job;

static int reduce_loop(job *j) {
  hx_queue q = NULL;
  HX_CALL(hx_queue_create(j->b, &q));
  for (int it = 0; it < NITER; it++) {
    double d = 0.0, s = 0.0;
    int ierr = hx_array_dot_q(q, HX_F64, j->n, j->d_x, j->d_y, &d);
    if (!ierr) ierr = hx_array_norm2sq_q(q, HX_F64, j->n, j->d_x, &s);
    if (ierr) {
      hx_queue_destroy(&q);
      return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    }
    if (memcmp(&d, &j->want_dot, sizeof d) != 0 || memcmp(&s, &j->want_nrm, sizeof s) != 0) j->bad++;
  }
  HX_CALL(hx_queue_destroy(&q));
  return HX_SUCCESS;
}

static void *reduce_thread(void *arg) {
  job *j = (job *)arg;
  if (reduce_loop(j)) hx_error_capture(&j->st);
  return NULL;
}

static int upload(hx_backend b, int64_t n, uint64_t seed, double **d) {
  hx_test_rng rng = {seed};
  double *h = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) h[i] = hx_test_rand(&rng);
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)n, (void **)d));
  HX_TCALL(hx_mem_to_device(b, *d, h, sizeof(double) * (size_t)n));
  free(h);
  return 0;
}

static int test_concurrent(hx_backend b) {
  const int64_t n = 64 * HX_REDUCE_CHUNK + 123; /* many chunks: partials in flight long enough */
  job jobs[NTHREADS];
  double *d[2 * NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    if (upload(b, n, 11 + 7 * t, &d[2 * t]) || upload(b, n, 5 + 3 * t, &d[2 * t + 1])) return 1;
    memset(&jobs[t], 0, sizeof jobs[t]);
    jobs[t].b = b, jobs[t].n = n - 17 * t; /* different lengths: different partial counts */
    jobs[t].d_x = d[2 * t], jobs[t].d_y = d[2 * t + 1];
    HX_TCALL(hx_array_dot(b, jobs[t].n, jobs[t].d_x, jobs[t].d_y, &jobs[t].want_dot));
    HX_TCALL(hx_array_norm2sq(b, jobs[t].n, jobs[t].d_x, &jobs[t].want_nrm));
  }
  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, reduce_thread, &jobs[t]);
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < NTHREADS; t++) {
    if (jobs[t].st.code) HX_TCALL(HX_ERROR_RERAISE(&jobs[t].st));
    HX_ASSERT(jobs[t].bad == 0, "thread %d: %d of %d reductions differ from the default queue's bits", t,
              jobs[t].bad, NITER);
  }
  for (int i = 0; i < 2 * NTHREADS; i++) HX_TCALL(hx_mem_free(b, (void **)&d[i]));
  return 0;
}

static int test_events(hx_backend b) {
  const int64_t n = 3 * HX_REDUCE_CHUNK + 5;
  const size_t bytes = sizeof(double) * (size_t)n;
  double *h = malloc(bytes), *out = malloc(bytes), *d_x = NULL, *d_y = NULL;
  for (int64_t i = 0; i < n; i++) h[i] = (double)(i % 1000) - 250.5;
  hx_queue qa = NULL, qb = NULL;
  hx_event ev = NULL, never = NULL;
  HX_TCALL(hx_queue_create(b, &qa));
  HX_TCALL(hx_queue_create(b, &qb));
  HX_TCALL(hx_event_create(b, &ev));
  HX_TCALL(hx_event_create(b, &never));
  HX_TCALL(hx_event_sync(never)); /* never recorded: complete */
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&d_x));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&d_y));
  HX_TCALL(hx_mem_zero_q(qb, d_y, bytes));
  /* A: upload, x = 3x in several passes (long enough for B to overtake it
   * without the event); B: waits, y = x, download */
  HX_TCALL(hx_mem_to_device_q(qa, d_x, h, bytes));
  for (int k = 0; k < 8; k++) HX_TCALL(hx_array_axpby_q(qa, HX_F64, n, d_x, 0.0, d_x, 1.0)); /* x = 0 x + 1 x */
  HX_TCALL(hx_array_axpby_q(qa, HX_F64, n, d_x, 2.0, d_x, 1.0));                               /* x = 3 x */
  HX_TCALL(hx_event_record(ev, qa));
  HX_TCALL(hx_queue_wait_event(qb, ev));
  HX_TCALL(hx_array_copy_q(qb, HX_F64, n, d_y, d_x));
  HX_TCALL(hx_mem_to_host_q(qb, out, d_y, bytes));
  if (!strcmp(hx_backend_name(b), "cpu-memcheck"))
    HX_ASSERT(isnan(out[0]) && isnan(out[n - 1]), "cpu-memcheck: async download visible before the sync");
  HX_TCALL(hx_queue_sync(qb));
  HX_TCALL(hx_queue_sync(qa)); /* h (the upload's source) is ours again */
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += out[i] != 3.0 * h[i];
  HX_ASSERT(bad == 0, "%d entries of y differ from 3 x after the event wait", bad);

  /* an event recorded after a download completes it on hx_event_sync */
  HX_TCALL(hx_array_axpby_q(qb, HX_F64, n, d_y, 1.0, d_y, 1.0)); /* y = 6 h */
  HX_TCALL(hx_mem_to_host_q(qb, out, d_y, bytes));
  HX_TCALL(hx_event_record(ev, qb));
  HX_TCALL(hx_event_sync(ev));
  bad = 0;
  for (int64_t i = 0; i < n; i++) bad += out[i] != 6.0 * h[i];
  HX_ASSERT(bad == 0, "%d entries wrong after hx_event_sync", bad);

  /* a reduction on a queue returns after the queue's earlier work */
  double s = 0.0;
  HX_TCALL(hx_mem_copy_q(qa, d_x, d_y, bytes));
  HX_TCALL(hx_array_dot_q(qa, HX_F64, n, d_x, d_y, &s));
  long double ref = 0;
  for (int64_t i = 0; i < n; i++) ref += 36.0L * h[i] * h[i];
  HX_ASSERT(hx_test_reldiff(s, (double)ref, 1e-300) < 1e-12, "dot after copy %.17g ref %.17g", s, (double)ref);

  HX_TCALL(hx_backend_sync(b));
  HX_TCALL(hx_mem_free(b, (void **)&d_x));
  HX_TCALL(hx_mem_free(b, (void **)&d_y));
  HX_TCALL(hx_event_destroy(&ev));
  HX_TCALL(hx_event_destroy(&never));
  HX_ASSERT(ev == NULL, "event handle nulled");
  HX_TCALL(hx_queue_destroy(&qa));
  HX_TCALL(hx_queue_destroy(&qb));
  HX_ASSERT(qa == NULL && qb == NULL, "queue handles nulled");
  free(h), free(out);
  return 0;
}

/* worker: a call that fails (nred > n) on its own queue */
static void *failing_thread(void *arg) {
  job *j = (job *)arg;
  hx_queue q = NULL;
  double rr;
  int ierr = hx_queue_create(j->b, &q);
  if (!ierr) ierr = hx_array_r_update_q(q, 10, 11, NULL, NULL, 1.0, &rr);
  if (ierr) ierr = hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  if (ierr) hx_error_capture(&j->st);
  hx_queue_destroy(&q);
  return NULL;
}

static int test_errors(hx_backend b) {
  job j;
  memset(&j, 0, sizeof j);
  j.b = b;
  hx_error_clear();
  pthread_t th;
  pthread_create(&th, NULL, failing_thread, &j);
  pthread_join(th, NULL);
  HX_ASSERT(j.st.code == HX_ERR_ARG, "worker captured %s", hx_error_name(j.st.code));
  HX_ASSERT(hx_error_code() == HX_SUCCESS, "the worker's error leaked into this thread's state");
  int ierr = HX_ERROR_RERAISE(&j.st);
  HX_ASSERT(ierr == HX_ERR_ARG, "re-raise returned %s", hx_error_name(ierr));
  HX_ASSERT(hx_error_code() == HX_ERR_ARG, "re-raised code");
  HX_ASSERT(strstr(hx_error_message(), "reduction length 11 outside [0, n = 10]") != NULL,
            "re-raised message: '%s'", hx_error_message());
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  hx_error_print(f, 0, 1);
  fclose(f);
  HX_ASSERT(buf && strstr(buf, "failing_thread()") && strstr(buf, "re-raised from another thread") &&
                strstr(buf, "hx_array_r_update_q()"),
            "traceback carries the worker's frames and the crossing:\n%s", buf ? buf : "");
  free(buf);
  hx_error_clear();
  hx_error_state none;
  hx_error_capture(&none);
  HX_ASSERT(none.code == HX_SUCCESS && HX_ERROR_RERAISE(&none) == HX_SUCCESS, "no error: nothing re-raised");
  HX_ASSERT(hx_error_code() == HX_SUCCESS, "re-raising nothing leaves no error");

  /* lifecycle */
  hx_queue q0 = hx_backend_default_queue(b);
  HX_ASSERT(q0 && hx_queue_backend(q0) == b, "default queue");
  HX_ASSERT(hx_queue_destroy(&q0) == HX_ERR_ARG && q0 != NULL, "default queue refused");
  hx_error_clear();
  hx_queue qn = NULL;
  hx_event en = NULL;
  HX_TCALL(hx_queue_destroy(&qn));
  HX_TCALL(hx_queue_destroy(NULL));
  HX_TCALL(hx_event_destroy(&en));
  /* a queue left to the backend is freed by hx_backend_destroy (checked by
   * the sanitizer build's leak check) */
  hx_queue left = NULL;
  HX_TCALL(hx_queue_create(b, &left));
  return 0;
}

static int test_pinned(hx_backend b) {
  const int64_t n = 2 * HX_REDUCE_CHUNK + 7;
  const size_t bytes = sizeof(double) * (size_t)n;
  double *p = NULL, *d = NULL;
  hx_queue q = NULL;
  HX_TCALL(hx_mem_alloc_host(b, bytes, (void **)&p));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&d));
  HX_TCALL(hx_queue_create(b, &q));
  for (int64_t i = 0; i < n; i++) p[i] = 0.5 * (double)i - 3.0;
  HX_TCALL(hx_mem_to_device(b, d, p, bytes));
  for (int64_t i = 0; i < n; i++) p[i] = -1.0; /* the source is ours again: the device keeps the old values */
  HX_TCALL(hx_array_axpby(b, n, d, 1.0, d, 1.0)); /* d = 2 d on the device, after the upload */
  HX_TCALL(hx_mem_to_host(b, p, d, bytes));
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += p[i] != (double)i - 6.0;
  HX_ASSERT(bad == 0, "%d entries of a synchronous download into pinned memory wrong on return", bad);
  /* an asynchronous download on a queue of its own, completed by hx_backend_sync */
  HX_TCALL(hx_array_axpby_q(q, HX_F64, n, d, 2.0, d, 1.0)); /* d = 3 d */
  HX_TCALL(hx_mem_to_host_q(q, p, d, bytes));
  HX_TCALL(hx_backend_sync(b));
  bad = 0;
  for (int64_t i = 0; i < n; i++) bad += p[i] != 3.0 * ((double)i - 6.0);
  HX_ASSERT(bad == 0, "%d entries of a queued download into pinned memory wrong after hx_backend_sync", bad);
  /* a reduction returns after its queue's earlier work even with nothing to
   * sum (nred = 0): the pinned source of the upload queued before it is free */
  double *d2 = NULL, rr = -1.0;
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&d2));
  for (int64_t i = 0; i < n; i++) p[i] = 1.0 + (double)i;
  HX_TCALL(hx_mem_to_device_q(q, d2, p, bytes));
  HX_TCALL(hx_array_r_update_q(q, n, 0, d, d2, 1.0, &rr)); /* d = 3 (i - 6) - (1 + i) */
  for (int64_t i = 0; i < n; i++) p[i] = -1.0;
  HX_TCALL(hx_queue_sync(q));
  HX_TCALL(hx_mem_to_host(b, p, d, bytes));
  bad = 0;
  for (int64_t i = 0; i < n; i++) bad += p[i] != 3.0 * ((double)i - 6.0) - (1.0 + (double)i);
  HX_ASSERT(bad == 0 && rr == 0.0, "r_update with nred = 0 returned before its queue's upload: %d entries wrong, rr %g",
            bad, rr);
  HX_TCALL(hx_mem_free(b, (void **)&d2));
  HX_TCALL(hx_queue_destroy(&q));
  HX_TCALL(hx_mem_free(b, (void **)&d));
  HX_TCALL(hx_mem_free_host(b, (void **)&p));
  HX_ASSERT(p == NULL, "pinned handle nulled");
  return 0;
}

int main(int argc, char **argv) {
  const char *name = hx_test_backend_arg(argc, argv);
  hx_backend b = NULL;
  int ierr = hx_backend_create(name, &b);
  if (ierr == HX_ERR_NO_DEVICE) {
    printf("SKIP: %s\n", hx_error_message());
    return HX_TEST_SKIP;
  }
  HX_TCALL(ierr);
  if (test_concurrent(b) == 0 && test_events(b) == 0 && test_pinned(b) == 0) test_errors(b);
  HX_TCALL(hx_backend_destroy(&b));
  return hx_test_result();
}
