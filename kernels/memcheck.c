/* cpu-memcheck: the CPU backend with its "device" memory kept apart from host
 * memory, so host/device synchronisation bugs show up without a GPU (the idea
 * of libCEED's memcheck backend; docs/developer.md "cpu-memcheck").
 *
 * - Backend memory is carved from one mmap'd arena (page-aligned blocks, one
 *   inaccessible gap page after each, addresses never reused). The arena is
 *   PROT_NONE while host code runs; the entry points that touch backend memory
 *   on the host (CPU kernels, transfers) open a scope (HX_MC_SCOPE) that makes
 *   the used part of the arena read-write until they return. Scopes nest and
 *   are counted across threads (the protection is per process), so while one
 *   thread is inside a kernel another thread's stray access is not caught.
 * - A host access outside a scope faults; the SIGSEGV handler names the
 *   allocation (number, size, offset, live or freed, where it was allocated)
 *   and the faulting stack, then lets the process die of the signal.
 * - New blocks are filled with bytes 0xff (a NaN as double, -1 as int), so
 *   data read before it was written shows up as NaN. Freed blocks are filled
 *   again and stay in the arena (inaccessible outside scopes); beyond a
 *   bounded quarantine their pages are returned to the system (madvise), but
 *   their addresses stay reserved and named.
 * - Asynchronous transfers on a queue complete at the queue's next
 *   synchronisation point: a d2h copy is taken when it is enqueued (so later
 *   kernels cannot change it) but reaches the host buffer, which reads NaN
 *   until then, only at the sync; the source of an h2d copy is hashed when it
 *   is enqueued and checked at the sync (changed = an error). */
#define _GNU_SOURCE
#include "backend_impl.h"

#include <execinfo.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HX_MC_NSITE 8
#define HX_MC_CHUNK 4096                         /* records per chunk */
#define HX_MC_NCHUNK 4096                        /* chunks: 16M records */
#define HX_MC_QUARANTINE ((size_t)64 << 20)      /* freed bytes kept poisoned and resident */

typedef struct {
  uintptr_t base;
  size_t bytes, mapped;
  uint64_t id;
  int freed, released;
  int nsite;
  void *site[HX_MC_NSITE];
} hx_mc_rec;

static struct {
  pthread_mutex_t lock;
  char *arena;
  size_t reserved, used, page;
  int depth;                       /* open scopes, all threads */
  hx_mc_rec *chunk[HX_MC_NCHUNK];
  atomic_size_t nrec;
  size_t quarantine, oldest;       /* freed resident bytes; first record maybe not released */
  struct sigaction old_segv;
  int init_err;
  char init_msg[256];
} g_mc = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t g_mc_once = PTHREAD_ONCE_INIT;

static hx_mc_rec *hx_mc_rec_at(size_t i) { return &g_mc.chunk[i / HX_MC_CHUNK][i % HX_MC_CHUNK]; }

/* the record whose [base, base + mapped + gap page) holds a; NULL if none.
 * Lock-free: records are appended in address order and never move. */
static hx_mc_rec *hx_mc_find(uintptr_t a) {
  size_t lo = 0, hi = atomic_load(&g_mc.nrec);
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    hx_mc_rec *r = hx_mc_rec_at(mid);
    if (a < r->base)
      hi = mid;
    else if (a >= r->base + r->mapped + g_mc.page)
      lo = mid + 1;
    else
      return r;
  }
  return NULL;
}

/* ------------------------------------------------------------ SIGSEGV */
static void hx_mc_write(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w, n -= (size_t)w;
  }
}

static void hx_mc_segv(int sig, siginfo_t *si, void *ctx) {
  const uintptr_t a = (uintptr_t)si->si_addr, lo = (uintptr_t)g_mc.arena;
  if (g_mc.arena && a >= lo && a < lo + g_mc.reserved) {
    char buf[1024];
    hx_mc_rec *r = hx_mc_find(a);
    if (!r)
      snprintf(buf, sizeof buf,
               "\nhexcg cpu-memcheck: host code touched backend memory without a transfer: address %p is in "
               "the cpu-memcheck arena but in no allocation (a wild pointer)\n",
               (void *)a);
    else if (r->freed)
      snprintf(buf, sizeof buf,
               "\nhexcg cpu-memcheck: use after free: host code touched backend allocation #%llu (%zu bytes), "
               "freed with hx_mem_free: address %p is its byte %zu\n",
               (unsigned long long)r->id, r->bytes, (void *)a, (size_t)(a - r->base));
    else
      snprintf(buf, sizeof buf,
               "\nhexcg cpu-memcheck: host code touched backend memory without a transfer (use "
               "hx_mem_to_host / hx_mem_to_device or a kernel): address %p is byte %zu of backend "
               "allocation #%llu (%zu bytes)%s\n",
               (void *)a, (size_t)(a - r->base), (unsigned long long)r->id, r->bytes,
               a >= r->base + r->bytes ? ", past its end" : "");
    hx_mc_write(buf);
    hx_mc_write("hexcg cpu-memcheck: faulting host code:\n");
    void *bt[32];
    int n = backtrace(bt, 32);
    backtrace_symbols_fd(bt, n, 2);
    if (r && r->nsite > 0) {
      hx_mc_write("hexcg cpu-memcheck: the allocation was made at:\n");
      backtrace_symbols_fd(r->site, r->nsite, 2);
    }
    signal(SIGSEGV, SIG_DFL); /* returning re-executes the access: the process dies of SIGSEGV */
    return;
  }
  /* not ours: hand it to whoever handled SIGSEGV before */
  if ((g_mc.old_segv.sa_flags & SA_SIGINFO) && g_mc.old_segv.sa_sigaction) {
    g_mc.old_segv.sa_sigaction(sig, si, ctx);
  } else if (g_mc.old_segv.sa_handler != SIG_DFL && g_mc.old_segv.sa_handler != SIG_IGN &&
             g_mc.old_segv.sa_handler) {
    g_mc.old_segv.sa_handler(sig);
  } else {
    signal(SIGSEGV, SIG_DFL);
  }
}

static void hx_mc_once(void) {
  g_mc.page = (size_t)sysconf(_SC_PAGESIZE);
  /* address space only (PROT_NONE, no reserve): try large, settle for less */
  for (size_t gib = 1024; gib >= 4; gib /= 4) {
    void *p = mmap(NULL, gib << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      g_mc.arena = (char *)p;
      g_mc.reserved = gib << 30;
      break;
    }
  }
  if (!g_mc.arena) {
    g_mc.init_err = HX_ERR_MEM;
    snprintf(g_mc.init_msg, sizeof g_mc.init_msg, "cpu-memcheck: cannot reserve an address range for its arena");
    return;
  }
  void *bt[2];
  backtrace(bt, 2); /* load libgcc's unwinder now, not inside the signal handler */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = hx_mc_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_mc.old_segv) != 0) {
    g_mc.init_err = HX_ERR_INTERNAL;
    snprintf(g_mc.init_msg, sizeof g_mc.init_msg, "cpu-memcheck: cannot install its SIGSEGV handler");
  }
}

int hx_mc_init(void) {
  pthread_once(&g_mc_once, hx_mc_once);
  HX_CHECK(!g_mc.init_err, g_mc.init_err, "%s", g_mc.init_msg);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ scopes */
static int hx_mc_protect(void *p, size_t bytes, int rw) {
  if (bytes == 0) return 0;
  return mprotect(p, bytes, rw ? PROT_READ | PROT_WRITE : PROT_NONE);
}

int hx_mc_enter(void) {
  pthread_mutex_lock(&g_mc.lock);
  if (g_mc.depth++ == 0 && hx_mc_protect(g_mc.arena, g_mc.used, 1) != 0) abort();
  pthread_mutex_unlock(&g_mc.lock);
  return 1;
}

void hx_mc_leave(int *entered) {
  if (!*entered) return;
  pthread_mutex_lock(&g_mc.lock);
  if (--g_mc.depth == 0 && hx_mc_protect(g_mc.arena, g_mc.used, 0) != 0) abort();
  pthread_mutex_unlock(&g_mc.lock);
}

/* ------------------------------------------------------------ alloc / free */
int hx_mc_alloc(size_t bytes, void **ptr) {
  *ptr = NULL;
  HX_CALL(hx_mc_init());
  const size_t pg = g_mc.page;
  HX_CHECK(bytes <= g_mc.reserved, HX_ERR_MEM, "cpu-memcheck: allocation of %zu bytes is larger than its arena",
           bytes);
  const size_t mapped = ((bytes ? bytes : 1) + pg - 1) / pg * pg;
  pthread_mutex_lock(&g_mc.lock);
  const size_t n = atomic_load(&g_mc.nrec);
  if (g_mc.used + mapped + pg > g_mc.reserved || n >= (size_t)HX_MC_CHUNK * HX_MC_NCHUNK) {
    pthread_mutex_unlock(&g_mc.lock);
    return HX_ERROR(HX_ERR_MEM,
                    "cpu-memcheck: arena exhausted (%zu allocations, %zu bytes of address space; addresses are "
                    "never reused)",
                    n, g_mc.used);
  }
  if (!g_mc.chunk[n / HX_MC_CHUNK]) {
    g_mc.chunk[n / HX_MC_CHUNK] = calloc(HX_MC_CHUNK, sizeof(hx_mc_rec));
    if (!g_mc.chunk[n / HX_MC_CHUNK]) {
      pthread_mutex_unlock(&g_mc.lock);
      return HX_ERROR(HX_ERR_MEM, "cpu-memcheck: out of host memory for its allocation records");
    }
  }
  char *p = g_mc.arena + g_mc.used;
  if (hx_mc_protect(p, mapped, 1) != 0) {
    pthread_mutex_unlock(&g_mc.lock);
    return HX_ERROR(HX_ERR_MEM, "cpu-memcheck: cannot commit %zu bytes", mapped);
  }
  memset(p, 0xff, mapped); /* NaN: reads of never-written data show */
  if (g_mc.depth == 0) hx_mc_protect(p, mapped, 0);
  g_mc.used += mapped + pg; /* + an inaccessible gap page */
  hx_mc_rec *r = hx_mc_rec_at(n);
  r->base = (uintptr_t)p;
  r->bytes = bytes;
  r->mapped = mapped;
  r->id = n + 1;
  r->freed = r->released = 0;
  r->nsite = backtrace(r->site, HX_MC_NSITE);
  atomic_store(&g_mc.nrec, n + 1);
  pthread_mutex_unlock(&g_mc.lock);
  *ptr = p;
  return HX_SUCCESS;
}

int hx_mc_free(void *ptr) {
  pthread_mutex_lock(&g_mc.lock);
  hx_mc_rec *r = hx_mc_find((uintptr_t)ptr);
  int err = 0;
  if (!r || r->base != (uintptr_t)ptr)
    err = 1;
  else if (r->freed)
    err = 2;
  if (err) {
    pthread_mutex_unlock(&g_mc.lock);
    if (err == 2)
      return HX_ERROR(HX_ERR_ARG, "cpu-memcheck: double free of backend allocation #%llu (%zu bytes)",
                      (unsigned long long)r->id, r->bytes);
    return HX_ERROR(HX_ERR_ARG, "cpu-memcheck: hx_mem_free of %p, which is not %s", ptr,
                    r ? "the start of a backend allocation" : "backend memory (host memory freed as device memory?)");
  }
  void *p = (void *)r->base;
  if (g_mc.depth == 0) hx_mc_protect(p, r->mapped, 1);
  memset(p, 0xff, r->mapped); /* poison: a kernel reading it after the free sees NaN */
  if (g_mc.depth == 0) hx_mc_protect(p, r->mapped, 0);
  r->freed = 1;
  g_mc.quarantine += r->mapped;
  /* bounded quarantine: release the oldest freed blocks' pages (their
   * addresses stay reserved, inaccessible and named) */
  const size_t n = atomic_load(&g_mc.nrec);
  while (g_mc.quarantine > HX_MC_QUARANTINE && g_mc.oldest < n) {
    hx_mc_rec *o = hx_mc_rec_at(g_mc.oldest);
    if (o->freed && !o->released) {
      madvise((void *)o->base, o->mapped, MADV_DONTNEED);
      o->released = 1;
      g_mc.quarantine -= o->mapped;
    }
    if (o->freed) g_mc.oldest++;
    else break; /* a live block: keep the order simple, release later */
  }
  pthread_mutex_unlock(&g_mc.lock);
  return HX_SUCCESS;
}

/* 1 if [p, p + bytes) lies inside one live allocation */
static int hx_mc_is_dev(const void *p, size_t bytes, hx_mc_rec **out) {
  hx_mc_rec *r = hx_mc_find((uintptr_t)p);
  if (out) *out = r;
  return r && !r->freed && (uintptr_t)p + bytes <= r->base + r->bytes;
}

int hx_mc_check_dev(const void *p, size_t bytes, const char *what) {
  if (bytes == 0 || !g_mc.arena) return HX_SUCCESS;
  hx_mc_rec *r = NULL;
  if (hx_mc_is_dev(p, bytes, &r)) return HX_SUCCESS;
  if (!r)
    return HX_ERROR(HX_ERR_ARG,
                    "cpu-memcheck: %s (%p, %zu bytes) should be backend memory but is host memory (on cuda: an "
                    "illegal address)",
                    what, p, bytes);
  if (r->freed)
    return HX_ERROR(HX_ERR_ARG, "cpu-memcheck: %s (%p) is in backend allocation #%llu, which was freed", what, p,
                    (unsigned long long)r->id);
  return HX_ERROR(HX_ERR_ARG,
                  "cpu-memcheck: %s (%p, %zu bytes) runs past the end of backend allocation #%llu (%zu bytes, "
                  "offset %zu)",
                  what, p, bytes, (unsigned long long)r->id, r->bytes, (size_t)((uintptr_t)p - r->base));
}

int hx_kernel_args(hx_backend b, const char *kernel, size_t nargs, const hx_karg *args) {
  for (size_t i = 0; i < nargs; i++) {
    if (args[i].bytes == 0) continue;
    HX_CHECK(args[i].p, HX_ERR_ARG, "%s: %s is NULL", kernel, args[i].what);
    if (!b->memcheck) continue;
    char what[128];
    snprintf(what, sizeof what, "%s: %s", kernel, args[i].what);
    HX_CALL(hx_mc_check_dev(args[i].p, args[i].bytes, what));
  }
  return HX_SUCCESS;
}

int hx_mc_check_host(const void *p, size_t bytes, const char *what) {
  if (bytes == 0 || !g_mc.arena) return HX_SUCCESS;
  const uintptr_t a = (uintptr_t)p, lo = (uintptr_t)g_mc.arena;
  HX_CHECK(a + bytes <= lo || a >= lo + g_mc.reserved, HX_ERR_ARG,
           "cpu-memcheck: %s (%p, %zu bytes) should be host memory but is backend memory", what, p, bytes);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ async transfers */
typedef struct {
  uint64_t seq;
  int kind; /* 1 h2d (check the source), 2 d2h (deliver) */
  void *h;
  void *staging;
  size_t bytes;
  uint64_t hash;
} hx_mc_op;

typedef struct {
  pthread_mutex_t lock;
  uint64_t seq;
  hx_mc_op *op;
  size_t nop, cap;
} hx_mc_q;

static uint64_t hx_mc_hash(const void *p, size_t n) {
  const unsigned char *c = (const unsigned char *)p;
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

static int hx_mc_q_get(hx_queue q, hx_mc_q **out) {
  if (!q->mc) {
    hx_mc_q *m = NULL;
    HX_CALL(HX_ALLOC(&m, 1));
    pthread_mutex_init(&m->lock, NULL);
    q->mc = m;
  }
  *out = (hx_mc_q *)q->mc;
  return HX_SUCCESS;
}

static int hx_mc_push(hx_mc_q *m, const hx_mc_op *op) {
  pthread_mutex_lock(&m->lock);
  if (m->nop == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 8;
    hx_mc_op *o = realloc(m->op, cap * sizeof *o);
    if (!o) {
      pthread_mutex_unlock(&m->lock);
      return HX_ERROR(HX_ERR_MEM, "out of host memory");
    }
    m->op = o, m->cap = cap;
  }
  m->op[m->nop] = *op;
  m->op[m->nop++].seq = ++m->seq;
  pthread_mutex_unlock(&m->lock);
  return HX_SUCCESS;
}

int hx_mc_to_host_async(hx_queue q, void *h, const void *d, size_t bytes) {
  hx_mc_q *m = NULL;
  HX_CALL(hx_mc_q_get(q, &m));
  hx_mc_op op = {0, 2, h, NULL, bytes, 0};
  HX_CALL(hx_calloc(bytes, 1, &op.staging));
  memcpy(op.staging, d, bytes); /* the data as of now, in queue order */
  memset(h, 0xff, bytes);       /* not there yet: NaN until the queue is synchronised */
  int ierr = hx_mc_push(m, &op);
  if (ierr) free(op.staging);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_mc_to_device_async(hx_queue q, void *d, const void *h, size_t bytes) {
  hx_mc_q *m = NULL;
  HX_CALL(hx_mc_q_get(q, &m));
  memcpy(d, h, bytes);
  hx_mc_op op = {0, 1, (void *)h, NULL, bytes, hx_mc_hash(h, bytes)};
  HX_CALL(hx_mc_push(m, &op));
  return HX_SUCCESS;
}

uint64_t hx_mc_seq(hx_queue q) { return q->mc ? ((hx_mc_q *)q->mc)->seq : 0; }

int hx_mc_flush(hx_queue q, uint64_t upto) {
  hx_mc_q *m = (hx_mc_q *)q->mc;
  if (!m) return HX_SUCCESS;
  int bad = 0;
  size_t badn = 0;
  void *badp = NULL;
  pthread_mutex_lock(&m->lock);
  size_t k = 0;
  while (k < m->nop && m->op[k].seq <= upto) {
    hx_mc_op *o = &m->op[k++];
    if (o->kind == 2) {
      memcpy(o->h, o->staging, o->bytes);
      free(o->staging);
    } else if (!bad && hx_mc_hash(o->h, o->bytes) != o->hash) {
      bad = 1, badn = o->bytes, badp = o->h;
    }
  }
  memmove(m->op, m->op + k, (m->nop - k) * sizeof *m->op);
  m->nop -= k;
  pthread_mutex_unlock(&m->lock);
  HX_CHECK(!bad, HX_ERR_ARG,
           "cpu-memcheck: the host source of an hx_mem_to_device_q (%zu bytes at %p) changed before its queue "
           "was synchronised (on cuda the copy may read either version)",
           badn, badp);
  return HX_SUCCESS;
}

void hx_mc_queue_free(hx_queue q) {
  hx_mc_q *m = (hx_mc_q *)q->mc;
  if (!m) return;
  for (size_t k = 0; k < m->nop; k++) free(m->op[k].staging);
  free(m->op);
  pthread_mutex_destroy(&m->lock);
  free(m);
  q->mc = NULL;
}
