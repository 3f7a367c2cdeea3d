/* Queues and events (hx_kernels.h "Queues"): a queue owns its CUDA stream,
 * its reduction scratch and its pinned result double; events order work
 * across queues. On the CPU backends work runs synchronously in the calling
 * thread; cpu-memcheck defers the completion of asynchronous transfers to the
 * queue's synchronisation points (memcheck.c). */
#include "backend_impl.h"

#include <pthread.h>
#include <stdlib.h>

struct hx_event_s {
  hx_backend b;
  void *cu;    /* cudaEvent_t (cuda) */
  hx_queue q;  /* queue of the latest record (NULL: never recorded) */
  uint64_t seq; /* cpu-memcheck: q's transfer count at the record */
};

static void hx_qlock(hx_backend b) { pthread_mutex_lock((pthread_mutex_t *)b->qlock); }
static void hx_qunlock(hx_backend b) { pthread_mutex_unlock((pthread_mutex_t *)b->qlock); }

int hx_queue_new(hx_backend b, int is_default, hx_queue *out) {
  *out = NULL;
  hx_queue q = NULL;
  HX_CALL(HX_ALLOC(&q, 1));
  q->b = b;
  q->is_default = is_default;
  int ierr = HX_SUCCESS;
  HX_CUDA_ONLY(if (b->kind == HX_BACKEND_CUDA && (ierr = hx_cuda_queue_init(q))) hx_cuda_queue_finalize(q);)
  if (ierr) {
    free(q);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  *out = q;
  return HX_SUCCESS;
}

int hx_queue_free(hx_queue q) {
  if (!q) return HX_SUCCESS;
  int ierr = HX_SUCCESS;
  if (q->b->memcheck) ierr = hx_mc_flush(q, UINT64_MAX);
  hx_mc_queue_free(q);
  if (q->b->kind == HX_BACKEND_CPU) free(q->d_partials);
  HX_CUDA_ONLY(else {
    int e = hx_cuda_queue_finalize(q); /* waits for the stream */
    if (q->d_partials) hx_cuda_free(q->d_partials);
    if (!ierr) ierr = e;
  })
  free(q);
  if (ierr) return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  return HX_SUCCESS;
}

int hx_queue_partials(hx_queue q, size_t n) {
  if (n <= q->npartials && q->d_partials) return HX_SUCCESS;
  size_t want = n < 64 ? 64 : n;
  if (q->b->kind == HX_BACKEND_CPU) {
    /* host memory on both CPU backends: only the reduction reads it */
    HX_CALL(hx_realloc(want, sizeof(double), &q->d_partials));
  }
  HX_CUDA_ONLY(else {
    if (q->d_partials) HX_CALL(hx_cuda_free(hx_take_ptr((void **)&q->d_partials)));
    HX_CALL(hx_cuda_malloc(want * sizeof(double), (void **)&q->d_partials));
  })
  q->npartials = want;
  return HX_SUCCESS;
}

int hx_backend_partials(hx_backend b, size_t n) {
  HX_CALL(hx_queue_partials(b->q0, n));
  return HX_SUCCESS;
}

int hx_queue_create(hx_backend b, hx_queue *out) {
  HX_CHECK(out, HX_ERR_ARG, "queue: output handle is NULL");
  *out = NULL;
  HX_CHECK(b, HX_ERR_ARG, "queue: backend is NULL");
  hx_queue q;
  HX_CALL(hx_queue_new(b, 0, &q));
  hx_qlock(b);
  q->next = b->queues;
  b->queues = q;
  hx_qunlock(b);
  *out = q;
  return HX_SUCCESS;
}

int hx_queue_destroy(hx_queue *pq) {
  if (!pq || !*pq) return HX_SUCCESS;
  hx_queue q = *pq;
  HX_CHECK(!q->is_default, HX_ERR_ARG, "queue: the backend's default queue is destroyed with the backend");
  hx_backend b = q->b;
  hx_qlock(b);
  for (hx_queue *p = &b->queues; *p; p = &(*p)->next)
    if (*p == q) {
      *p = q->next;
      break;
    }
  hx_qunlock(b);
  *pq = NULL;
  HX_CALL(hx_queue_free(q));
  return HX_SUCCESS;
}

hx_queue hx_backend_default_queue(hx_backend b) { return b ? b->q0 : NULL; }
hx_backend hx_queue_backend(hx_queue q) { return q ? q->b : NULL; }

int hx_queue_sync(hx_queue q) {
  HX_CHECK(q, HX_ERR_ARG, "queue is NULL");
  HX_CUDA_ONLY(if (q->b->kind == HX_BACKEND_CUDA) HX_CALL(hx_cuda_queue_sync(q));)
  if (q->b->memcheck) HX_CALL(hx_mc_flush(q, UINT64_MAX));
  return HX_SUCCESS;
}

int hx_backend_sync(hx_backend b) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CALL(hx_queue_sync(b->q0));
  hx_qlock(b);
  int ierr = HX_SUCCESS;
  for (hx_queue q = b->queues; q && !ierr; q = q->next) ierr = hx_queue_sync(q);
  hx_qunlock(b);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ events */
int hx_event_create(hx_backend b, hx_event *out) {
  HX_CHECK(out, HX_ERR_ARG, "event: output handle is NULL");
  *out = NULL;
  HX_CHECK(b, HX_ERR_ARG, "event: backend is NULL");
  hx_event ev;
  HX_CALL(HX_ALLOC(&ev, 1));
  ev->b = b;
  int ierr = HX_SUCCESS;
  HX_CUDA_ONLY(if (b->kind == HX_BACKEND_CUDA) ierr = hx_cuda_event_create(&ev->cu);)
  if (ierr) {
    free(ev);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  *out = ev;
  return HX_SUCCESS;
}

int hx_event_destroy(hx_event *pev) {
  if (!pev || !*pev) return HX_SUCCESS;
  int ierr = HX_SUCCESS;
  HX_CUDA_ONLY(if ((*pev)->cu) ierr = hx_cuda_event_destroy((*pev)->cu);)
  free(*pev);
  *pev = NULL;
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_event_record(hx_event ev, hx_queue q) {
  HX_CHECK(ev && q, HX_ERR_ARG, "event: NULL event or queue");
  HX_CHECK(ev->b == q->b, HX_ERR_ARG, "event: recorded on a queue of another backend");
  HX_CUDA_ONLY(if (ev->cu) HX_CALL(hx_cuda_event_record(ev->cu, q));)
  ev->q = q;
  ev->seq = q->b->memcheck ? hx_mc_seq(q) : 0;
  return HX_SUCCESS;
}

int hx_queue_wait_event(hx_queue q, hx_event ev) {
  HX_CHECK(ev && q, HX_ERR_ARG, "event: NULL event or queue");
  HX_CHECK(ev->b == q->b, HX_ERR_ARG, "event: waited for on a queue of another backend");
  HX_CUDA_DISPATCH_IF(ev->cu, hx_cuda_event_wait(q, ev->cu));
  /* cpu: the recorded work has already run */
  return HX_SUCCESS;
}

int hx_event_sync(hx_event ev) {
  HX_CHECK(ev, HX_ERR_ARG, "event is NULL");
  HX_CUDA_ONLY(if (ev->cu) HX_CALL(hx_cuda_event_sync(ev->cu));)
  if (ev->b->memcheck && ev->q) {
    /* complete the transfers enqueued before the record, if the queue still
     * exists (a destroyed queue completed everything) */
    hx_backend b = ev->b;
    int live = ev->q == b->q0, ierr = HX_SUCCESS;
    hx_qlock(b);
    for (hx_queue q = b->queues; q && !live; q = q->next) live = q == ev->q;
    if (live) ierr = hx_mc_flush(ev->q, ev->seq);
    hx_qunlock(b);
    HX_CALL(ierr);
  }
  return HX_SUCCESS;
}
