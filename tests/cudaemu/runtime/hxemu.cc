// The CUDA emulation runtime (hxemu.h; docs/gpu-verification.md). Test-only.
//
// Sections: configuration and reports; device memory (two views of one
// memfd arena); pinned host memory; fibers (x86-64 context switch, ucontext
// elsewhere) and the block scheduler with its barrier checks; shared memory;
// streams, events and the lazy/eager executors; copies; launches; the API.
#include "hxemu.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

// HXEMU_TSAN_FIBERS (the TSan build): the runtime itself is not instrumented
// (its bookkeeping between the scheduler and the fibers is ordered by the
// switches, which TSan is told are unsynchronised so that CUDA threads stay
// unordered); it makes each CUDA thread a TSan fiber and marks barriers,
// launch starts and block ends as release/acquire pairs.
#if defined(HXEMU_TSAN_FIBERS)
#define HXEMU_TSAN 1
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_set_fiber_name(void *fiber, const char *name);
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
}
#define HXEMU_TSAN_NOSYNC 1u
#else
#define HXEMU_TSAN 0
#endif

#if defined(__x86_64__) && !defined(HXEMU_UCONTEXT)
#define HXEMU_ASM_SWITCH 1
#else
#define HXEMU_ASM_SWITCH 0
#endif

namespace hxemu {

thread_local ThrView *t_thr HXEMU_TLS = nullptr;
thread_local BlkView *t_blk HXEMU_TLS = nullptr;
thread_local int t_probe HXEMU_TLS = 0;
thread_local unsigned t_bounds HXEMU_TLS = 0;

// ============================================================ configuration and reports
namespace {

constexpr size_t PG = 4096;
constexpr size_t STATIC_SHMEM = 48 * 1024;    // per block without opt-in
constexpr size_t MAX_SHMEM = 227 * 1024;      // per block with the opt-in (sm_90)
constexpr size_t FIBER_STACK = 128 * 1024;    // each CUDA thread's stack (a canary at its low end)
constexpr unsigned MAX_FIBERS = 1024;         // threads per block

struct Config {
  int eager = 0;
  uint64_t seed = 0;
  int devices = 1;
  size_t arena = (size_t)64 << 30;
  size_t mem = (size_t)16 << 30;
  int verbose = 0;
};
Config g_cfg;

uint64_t env_u64(const char *name, uint64_t def) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end = nullptr;
  unsigned long long x = strtoull(v, &end, 10);
  if (*end) {
    fprintf(stderr, "hexcg-cudaemu: %s='%s' is not a non-negative integer\n", name, v);
    exit(2);
  }
  return (uint64_t)x;
}

void config_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *m = getenv("HEXCG_CUDAEMU_MODE");
    if (m && *m) {
      if (!strcmp(m, "eager")) g_cfg.eager = 1;
      else if (strcmp(m, "lazy")) {
        fprintf(stderr, "hexcg-cudaemu: HEXCG_CUDAEMU_MODE='%s': use lazy or eager\n", m);
        exit(2);
      }
    }
    g_cfg.seed = env_u64("HEXCG_CUDAEMU_SEED", 0);
    g_cfg.devices = (int)env_u64("HEXCG_CUDAEMU_DEVICES", 1);
    g_cfg.arena = (size_t)env_u64("HEXCG_CUDAEMU_ARENA_GIB", 64) << 30;
    g_cfg.verbose = (int)env_u64("HEXCG_CUDAEMU_VERBOSE", 0);
    if (g_cfg.verbose)
      fprintf(stderr, "hexcg-cudaemu: mode %s, seed %llu\n", g_cfg.eager ? "eager" : "lazy",
              (unsigned long long)g_cfg.seed);
  });
}

// what the current OS thread is running, for reports
struct Where {
  const char *kernel = nullptr, *file = nullptr;
  int line = 0;
};
thread_local Where t_where;

void report_where() {
  if (t_where.kernel) {
    fprintf(stderr, "hexcg-cudaemu:   in kernel %s launched at %s:%d", t_where.kernel, t_where.file, t_where.line);
    if (t_blk && t_thr)
      fprintf(stderr, ", block (%u,%u,%u), thread (%u,%u,%u)", t_blk->idx.x, t_blk->idx.y, t_blk->idx.z,
              t_thr->idx.x, t_thr->idx.y, t_thr->idx.z);
    fprintf(stderr, "\n");
  }
}

[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) {
  fflush(stdout);
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "hexcg-cudaemu: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  report_where();
  void *bt[32];
  int n = backtrace(bt, 32);
  fprintf(stderr, "hexcg-cudaemu:   backtrace:\n");
  backtrace_symbols_fd(bt, n, 2);
  signal(SIGABRT, SIG_DFL);
  abort();
}

// a launch or API error: reported on stderr, returned as CUDA returns it
thread_local cudaError_t t_last = cudaSuccess;
cudaError_t api_error(cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cudaError_t api_error(cudaError_t e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "hexcg-cudaemu: %s: ", cudaGetErrorName(e));
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  t_last = e;
  return e;
}

double now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ============================================================ device memory
// One memfd mapped twice: the host view (returned by cudaMalloc, PROT_NONE
// always: a host dereference faults and is reported) and the kernel view
// (kernels and copies; each allocation's pages readable and writable, its end
// against a PROT_NONE guard page). Address ranges are never reused; a freed
// allocation's pages are given back and stay PROT_NONE.
struct Alloc {
  size_t span_off, span;  // pages of the allocation, the guard page included
  size_t user_off, size;  // what the user sees
  uint64_t id;
  bool live;
  void *site[8];
  int nsite;
};

std::mutex g_mem_mu;
int g_fd = -1;
char *g_hbase = nullptr, *g_kbase = nullptr;
size_t g_bump = 0, g_live_bytes = 0;
uint64_t g_alloc_id = 0;
std::map<size_t, Alloc> g_allocs;  // by span_off

void arena_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    config_init();
    g_fd = memfd_create("hexcg-cudaemu-device", MFD_CLOEXEC);
    if (g_fd < 0) fatal("memfd_create failed: %s", strerror(errno));
    if (ftruncate(g_fd, (off_t)g_cfg.arena)) fatal("ftruncate of the device arena failed: %s", strerror(errno));
    g_hbase = (char *)mmap(nullptr, g_cfg.arena, PROT_NONE, MAP_SHARED | MAP_NORESERVE, g_fd, 0);
    g_kbase = (char *)mmap(nullptr, g_cfg.arena, PROT_NONE, MAP_SHARED | MAP_NORESERVE, g_fd, 0);
    if (g_hbase == MAP_FAILED || g_kbase == MAP_FAILED) fatal("mapping the device arena failed: %s", strerror(errno));
  });
}

bool in_host_view(const void *p) { return g_hbase && (const char *)p >= g_hbase && (const char *)p < g_hbase + g_cfg.arena; }
bool in_kernel_view(const void *p) { return g_kbase && (const char *)p >= g_kbase && (const char *)p < g_kbase + g_cfg.arena; }

// the allocation whose span holds arena offset off (caller holds g_mem_mu)
const Alloc *find_alloc(size_t off) {
  auto it = g_allocs.upper_bound(off);
  if (it == g_allocs.begin()) return nullptr;
  --it;
  return off < it->second.span_off + it->second.span ? &it->second : nullptr;
}

void print_site(const Alloc &a) {
  fprintf(stderr, "hexcg-cudaemu:   allocation #%llu (%zu bytes) made at:\n", (unsigned long long)a.id, a.size);
  backtrace_symbols_fd((void *const *)a.site, a.nsite, 2);
}

// [p, p + n) inside one live allocation (host view); else a message in why
bool dev_range(const void *p, size_t n, std::string *why) {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  const size_t off = (size_t)((const char *)p - g_hbase);
  const Alloc *a = find_alloc(off);
  char buf[256];
  if (!a) {
    snprintf(buf, sizeof buf, "%p is in no device allocation", p);
  } else if (!a->live) {
    snprintf(buf, sizeof buf, "%p is in allocation #%llu, freed already", p, (unsigned long long)a->id);
  } else if (off < a->user_off || off + n > a->user_off + a->size) {
    snprintf(buf, sizeof buf, "[%p, +%zu) leaves allocation #%llu of %zu bytes (offset %lld)", p, n,
             (unsigned long long)a->id, a->size, (long long)off - (long long)a->user_off);
  } else {
    return true;
  }
  *why = buf;
  return false;
}

char *kview(const void *p) { return g_kbase + ((const char *)p - g_hbase); }

// ============================================================ pinned host memory
std::mutex g_pin_mu;
std::map<uintptr_t, size_t> g_pinned;

bool is_pinned(const void *p, size_t n) {
  std::lock_guard<std::mutex> lk(g_pin_mu);
  auto it = g_pinned.upper_bound((uintptr_t)p);
  if (it == g_pinned.begin()) return false;
  --it;
  return (uintptr_t)p + n <= it->first + it->second;
}

// ============================================================ fault reports
struct sigaction g_old_segv, g_old_bus;
thread_local char *t_shared_guard HXEMU_TLS = nullptr;  // this OS thread's shared-memory guard page

void fault_handler(int sig, siginfo_t *si, void *uctx) {
  const char *addr = (const char *)si->si_addr;
  const char *view = nullptr;
  size_t off = 0;
  if (in_host_view(addr)) {
    view = "host";
    off = (size_t)(addr - g_hbase);
  } else if (in_kernel_view(addr)) {
    view = "kernel";
    off = (size_t)(addr - g_kbase);
  }
  if (view) {
    fflush(stdout);
    const Alloc *a = find_alloc(off);  // no lock: the process is going down
    if (!strcmp(view, "host") && !t_where.kernel)
      fprintf(stderr, "hexcg-cudaemu: error: host code dereferenced device memory at %p", (const void *)addr);
    else if (!strcmp(view, "host"))
      fprintf(stderr, "hexcg-cudaemu: error: a kernel dereferenced a device address that was never passed as a "
                      "kernel argument (%p)", (const void *)addr);
    else
      fprintf(stderr, "hexcg-cudaemu: error: out-of-bounds device memory access at %p", (const void *)addr);
    if (a) {
      const long long rel = (long long)off - (long long)a->user_off;
      fprintf(stderr, ": offset %lld of allocation #%llu (%zu bytes)%s%s\n", rel, (unsigned long long)a->id, a->size,
              a->live ? "" : ", which was freed", rel >= (long long)a->size ? ", past its end" : "");
    } else {
      fprintf(stderr, ": in no allocation\n");
    }
    report_where();
    void *bt[32];
    int n = backtrace(bt, 32);
    backtrace_symbols_fd(bt, n, 2);
    if (a) print_site(*a);
    signal(SIGABRT, SIG_DFL);
    abort();
  }
  if (t_shared_guard && addr >= t_shared_guard && addr < t_shared_guard + PG) {
    fprintf(stderr, "hexcg-cudaemu: error: access past the end of the block's dynamic shared memory (%zu bytes past)\n",
            (size_t)(addr - t_shared_guard));
    report_where();
    void *bt[32];
    int n = backtrace(bt, 32);
    backtrace_symbols_fd(bt, n, 2);
    signal(SIGABRT, SIG_DFL);
    abort();
  }
  // not ours: the previous handler, or the default action
  struct sigaction *old = sig == SIGSEGV ? &g_old_segv : &g_old_bus;
  if (old->sa_flags & SA_SIGINFO) {
    old->sa_sigaction(sig, si, uctx);
  } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);  // the fault repeats on return, now fatal
  }
}

thread_local void *t_altstack = nullptr;
constexpr size_t ALTSTACK = 64 * 1024;
void alt_stack() {
  if (t_altstack) return;
  stack_t ss;
  ss.ss_size = ALTSTACK;
  ss.ss_sp = mmap(nullptr, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ss.ss_flags = 0;
  if (ss.ss_sp != MAP_FAILED && !sigaltstack(&ss, nullptr)) t_altstack = ss.ss_sp;
}
void alt_stack_release() {
  if (!t_altstack) return;
  stack_t ss;
  memset(&ss, 0, sizeof ss);
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  munmap(t_altstack, ALTSTACK);
  t_altstack = nullptr;
}

void handlers_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
  });
  alt_stack();
}

// ============================================================ fibers
#if HXEMU_ASM_SWITCH
extern "C" void hxemu_swap(void **save_sp, void *to_sp);
extern "C" void hxemu_trampoline(void);
asm(R"(
  .text
  .globl hxemu_swap
  .type hxemu_swap, @function
hxemu_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size hxemu_swap, .-hxemu_swap
  .globl hxemu_trampoline
  .type hxemu_trampoline, @function
hxemu_trampoline:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size hxemu_trampoline, .-hxemu_trampoline
)");
#endif

struct Fiber {
  char *lo = nullptr;  // the stack's low end (its canary)
  char *top = nullptr;
#if HXEMU_ASM_SWITCH
  void *sp = nullptr;
#else
  ucontext_t uc;
#endif
#if HXEMU_TSAN
  void *tsan = nullptr;
#endif
};

enum { T_NEW, T_RUN, T_BAR, T_EXIT };

struct Exec;
struct Thr {
  ThrView v;
  int state;
  const char *bfile;
  int bline;
  unsigned nbar;
  Fiber *f;
  Exec *x;
};

// Per OS thread that runs kernels: the fiber stacks, the shared memory and
// the block being run.
struct Exec {
  std::vector<Fiber *> fibers;
  std::vector<Thr> thr;
  BlkView blk;
#if HXEMU_ASM_SWITCH
  void *sched_sp = nullptr;
#else
  ucontext_t sched_uc;
#endif
#if HXEMU_TSAN
  void *sched_tsan = nullptr;
  char sync_launch, sync_bar, sync_end;  // addresses for the release/acquire pairs
#endif
  Job *job = nullptr;
  // the round being run: threads ord[cur..nround) still to run in it
  const unsigned *ord = nullptr;
  unsigned cur = 0, nround = 0;
  // shared memory: [static 48 KiB][dynamic, end-aligned][guard page]
  char *sh = nullptr, *dyn = nullptr;
  size_t dyn_bytes = 0, static_used = 0, static_hwm = 0;
  std::vector<std::pair<const void *, size_t>> shkeys;  // declaration -> offset (this launch)
  std::vector<std::string> shnames;
  // the fibers' stacks: one mapping (a mapping and a guard page per fiber
  // took two of the kernel's 65530 mappings each and ran out with many streams)
  char *stacks = nullptr;
};
thread_local Exec *t_exec HXEMU_TLS = nullptr;

constexpr uint64_t CANARY = 0x6865786367656d75ull;  // "hexcgemu"
const size_t SHARED_LEN = STATIC_SHMEM + ((MAX_SHMEM + PG - 1) / PG) * PG + PG;

Exec *exec_get() {
  if (!t_exec) {
    handlers_init();
    t_exec = new Exec();
    char *m = (char *)mmap(nullptr, SHARED_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) fatal("no memory for the shared-memory arena: %s", strerror(errno));
    memset(m, 0xff, STATIC_SHMEM);  // each block re-poisons what blocks before it used
    t_shared_guard = m + SHARED_LEN - PG;
    mprotect(t_shared_guard, PG, PROT_NONE);
    t_exec->sh = m;
    t_exec->stacks = (char *)mmap(nullptr, (size_t)MAX_FIBERS * FIBER_STACK, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t_exec->stacks == MAP_FAILED) fatal("no memory for the fiber stacks: %s", strerror(errno));
  }
  return t_exec;
}

#if HXEMU_TSAN
// TSan fibers outlive the stream workers that used them: creating one costs a
// TSan thread state, and eager mode made hundreds per stream
std::mutex g_tsan_mu;
std::vector<void *> g_tsan_pool;
void *tsan_fiber_get() {
  {
    std::lock_guard<std::mutex> lk(g_tsan_mu);
    if (!g_tsan_pool.empty()) {
      void *f = g_tsan_pool.back();
      g_tsan_pool.pop_back();
      return f;
    }
  }
  return __tsan_create_fiber(0);
}
void tsan_fiber_put(void *f) {
  std::lock_guard<std::mutex> lk(g_tsan_mu);
  g_tsan_pool.push_back(f);
}
#endif

// a stream's worker thread ends: its fibers, stacks and shared memory go
void exec_release() {
  Exec *x = t_exec;
  if (!x) return;
  for (Fiber *f : x->fibers) {
#if HXEMU_TSAN
    tsan_fiber_put(f->tsan);
#endif
    delete f;
  }
  munmap(x->stacks, (size_t)MAX_FIBERS * FIBER_STACK);
  munmap(x->sh, SHARED_LEN);
  delete x;
  t_exec = nullptr;
  t_shared_guard = nullptr;
}

Fiber *fiber_new(Exec *x) {
  Fiber *f = new Fiber();
  const size_t i = x->fibers.size();
  f->lo = x->stacks + i * FIBER_STACK;
  // tops staggered over a page: at one stride every stack's hot top lines
  // fall into the same L1 sets and the switches thrash them
  f->top = f->lo + FIBER_STACK - (i * 320) % PG;
  memcpy(f->lo, &CANARY, sizeof CANARY);
#if HXEMU_TSAN
  f->tsan = tsan_fiber_get();
#endif
  return f;
}

void thread_body(Thr *t);

#if HXEMU_ASM_SWITCH
void fiber_entry(void *arg) { thread_body((Thr *)arg); }
void fiber_prepare(Fiber *f, Thr *t) {
  uint64_t *sp = (uint64_t *)((uintptr_t)f->top & ~(uintptr_t)15);
  sp -= 8;
  sp[0] = 0;  // a slot kept for alignment (MXCSR and the x87 control word are not switched: kernels leave them)
  sp[1] = 0;                            // r15
  sp[2] = 0;                            // r14
  sp[3] = (uint64_t)t;                  // r13: the argument
  sp[4] = (uint64_t)(void *)fiber_entry;  // r12: the function
  sp[5] = 0;                            // rbx
  sp[6] = 0;                            // rbp
  sp[7] = (uint64_t)(void *)hxemu_trampoline;
  f->sp = sp;
}
#else
void fiber_entry_uc(unsigned lo, unsigned hi) {
  thread_body((Thr *)(((uintptr_t)hi << 32) | (uintptr_t)lo));
}
void fiber_prepare(Fiber *f, Thr *t) {
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = f->lo;
  f->uc.uc_stack.ss_size = FIBER_STACK;
  f->uc.uc_link = nullptr;
  makecontext(&f->uc, (void (*)())fiber_entry_uc, 2, (unsigned)(uintptr_t)t, (unsigned)((uintptr_t)t >> 32));
}
#endif

// the next thread of this round, or nullptr when the round is over
Thr *round_next(Exec *x) { return x->cur < x->nround ? &x->thr[x->ord[x->cur++]] : nullptr; }

// Switch from the running context (thread t, or the scheduler when t is
// nullptr) to thread n (nullptr: the scheduler). A round runs each of its
// threads once, each handing over directly to the next one, the last one to
// the scheduler; a new thread's fiber is prepared on its first switch.
void switch_to(Exec *x, Thr *t, Thr *n) {
  void **save = t ? &t->f->sp : &x->sched_sp;
  (void)save;
  if (n) {
    if (n->state == T_NEW) fiber_prepare(n->f, n);
    n->state = T_RUN;
    t_thr = &n->v;
  } else {
    t_thr = nullptr;
  }
#if HXEMU_ASM_SWITCH
  void *sp = n ? n->f->sp : x->sched_sp;
#endif
#if HXEMU_TSAN
  __tsan_switch_to_fiber(n ? n->f->tsan : x->sched_tsan, HXEMU_TSAN_NOSYNC);
#endif
#if HXEMU_ASM_SWITCH
  hxemu_swap(save, sp);
#else
  swapcontext(t ? &t->f->uc : &x->sched_uc, n ? &n->f->uc : &x->sched_uc);
#endif
}

void thread_body(Thr *t) {
  Exec *x = t->x;
  for (;;) {
#if HXEMU_TSAN
    __tsan_acquire(&x->sync_launch);
#endif
    x->job->call();
    t->state = T_EXIT;
#if HXEMU_TSAN
    __tsan_release(&x->sync_end);
#endif
    Thr *n = round_next(x);
#if !HXEMU_TSAN
    // the next thread not yet started runs on this stack, with no switch at
    // all (a barrier-free kernel runs its whole block so); not under TSan,
    // where a fiber is one TSan thread and would order the two
    if (n && n->state == T_NEW) {
      n->f = t->f;
      n->state = T_RUN;
      t_thr = &n->v;
      t = n;
      continue;
    }
#endif
    switch_to(x, t, n);
    fatal("an exited CUDA thread was resumed");
  }
}

// ------------------------------------------------------------ deterministic shuffles
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};
template <class V>
void shuffle_n(V &v, size_t n, Rng &r) {
  for (size_t i = n; i > 1; i--) std::swap(v[i - 1], v[(size_t)(r.next() % i)]);
}
template <class V>
void shuffle(V &v, Rng &r) {
  shuffle_n(v, v.size(), r);
}

std::atomic<uint64_t> g_launch_count{0};

// ------------------------------------------------------------ one launch
struct Launch {
  Job *job;
  const char *name, *file;
  int line;
  dim3 grid, block;
  size_t shmem;
  uint64_t number;
};

void run_block(Exec *x, const Launch &L, uint3 bidx, Rng &rng, std::vector<unsigned> &order) {
  const unsigned nt = L.block.x * L.block.y * L.block.z;
  x->blk.idx = bidx;
  // shared memory poisoned (NaN in both precisions)
  memset(x->sh, 0xff, x->static_hwm);
  if (L.shmem) memset(x->dyn, 0xff, L.shmem);
  for (unsigned i = 0; i < nt; i++) {
    Thr &t = x->thr[i];
    t.v.idx = uint3{i % L.block.x, (i / L.block.x) % L.block.y, i / (L.block.x * L.block.y)};
    t.state = T_NEW;
    t.bfile = nullptr;
    t.bline = 0;
    t.nbar = 0;
    t.f = x->fibers[i];
    t.x = x;
  }
#if HXEMU_TSAN
  __tsan_release(&x->sync_launch);
#endif
  // order: the live threads (those not exited), run once each per round;
  // after a round every live thread waits at a barrier
  unsigned nlive = nt;
  for (unsigned i = 0; i < nt; i++) order[i] = i;
  for (;;) {
    if (g_cfg.seed) shuffle_n(order, nlive, rng);
    x->ord = order.data();
    x->cur = 0;
    x->nround = nlive;
    switch_to(x, nullptr, round_next(x));  // back when the round's last thread has yielded
    const Thr *e0 = nullptr;
    unsigned nexit = 0;
    for (unsigned k = 0; k < nlive; k++) {
      const Thr &t = x->thr[order[k]];
      if (t.state == T_EXIT) {
        nexit++;
        if (!e0) e0 = &t;
      }
    }
    if (nexit) {  // keep the live ones, in their order
      unsigned m = 0;
      for (unsigned k = 0; k < nlive; k++)
        if (x->thr[order[k]].state != T_EXIT) order[m++] = order[k];
      nlive = m;
    }
    if (!nlive) break;
    t_blk = &x->blk;
    const Thr *b0 = &x->thr[order[0]];
    if (nexit) {
      t_thr = const_cast<ThrView *>(&b0->v);
      fatal("thread (%u,%u,%u) waits at __syncthreads() at %s:%d while thread (%u,%u,%u) of its block has exited "
            "(%u of %u threads exited): a barrier in divergent code or an early return",
            b0->v.idx.x, b0->v.idx.y, b0->v.idx.z, b0->bfile, b0->bline, e0->v.idx.x, e0->v.idx.y, e0->v.idx.z,
            nt - nlive, nt);
    }
    for (unsigned k = 1; k < nlive; k++) {
      const Thr &t = x->thr[order[k]];
      if (t.bline != b0->bline || (t.bfile != b0->bfile && strcmp(t.bfile, b0->bfile))) {
        t_thr = const_cast<ThrView *>(&t.v);
        fatal("barrier divergence: thread (%u,%u,%u) waits at __syncthreads() at %s:%d, thread (%u,%u,%u) at %s:%d",
              t.v.idx.x, t.v.idx.y, t.v.idx.z, t.bfile, t.bline, b0->v.idx.x, b0->v.idx.y, b0->v.idx.z, b0->bfile,
              b0->bline);
      }
    }
  }
#if HXEMU_TSAN
  __tsan_acquire(&x->sync_end);
#endif
  for (unsigned i = 0; i < nt; i++)
    if (memcmp(x->thr[i].f->lo, &CANARY, sizeof CANARY)) {
      t_thr = &x->thr[i].v;
      fatal("the stack of CUDA thread (%u,%u,%u) overflowed its %zu KiB (deep recursion or a large local array)",
            x->thr[i].v.idx.x, x->thr[i].v.idx.y, x->thr[i].v.idx.z, FIBER_STACK / 1024);
    }
}

void run_launch(const Launch &L) {
  Exec *x = exec_get();
  const unsigned nt = L.block.x * L.block.y * L.block.z;
  while (x->fibers.size() < nt) x->fibers.push_back(fiber_new(x));
  if (x->thr.size() < nt) x->thr.resize(nt);
#if HXEMU_TSAN
  x->sched_tsan = __tsan_get_current_fiber();
#endif
  x->job = L.job;
  x->blk.dim = L.block;
  x->blk.grid = L.grid;
  x->dyn_bytes = L.shmem;
  x->dyn = x->sh + STATIC_SHMEM + ((MAX_SHMEM + PG - 1) / PG) * PG - ((L.shmem + 15) / 16) * 16;
  x->static_used = 0;
  x->shkeys.clear();
  x->shnames.clear();
  Where saved = t_where;
  t_where = Where{L.name, L.file, L.line};
  t_blk = &x->blk;
  std::vector<unsigned> order(nt);
  for (unsigned i = 0; i < nt; i++) order[i] = i;
  Rng rng(g_cfg.seed ^ (L.number * 0xD1B54A32D192ED03ull));
  const uint64_t nb = (uint64_t)L.grid.x * L.grid.y * L.grid.z;
  std::vector<uint32_t> border;
  if (g_cfg.seed && nb > 1 && nb <= ((uint64_t)1 << 32)) {
    border.resize(nb);
    for (uint64_t b = 0; b < nb; b++) border[b] = (uint32_t)b;
    shuffle(border, rng);
  }
  for (uint64_t k = 0; k < nb; k++) {
    const uint64_t b = border.empty() ? k : border[k];
    run_block(x, L, uint3{(unsigned)(b % L.grid.x), (unsigned)((b / L.grid.x) % L.grid.y),
                          (unsigned)(b / ((uint64_t)L.grid.x * L.grid.y))},
              rng, order);
  }
  t_blk = nullptr;
  t_where = saved;
  x->job = nullptr;
}

}  // namespace

// ============================================================ __syncthreads and shared memory
void syncthreads(const char *file, int line) {
  Exec *x = t_exec;
  if (!x || !t_thr) fatal("__syncthreads() called outside a kernel (%s:%d)", file, line);
  Thr *t = (Thr *)((char *)t_thr - offsetof(Thr, v));
  t->state = T_BAR;
  t->bfile = file;
  t->bline = line;
  t->nbar++;
#if HXEMU_TSAN
  __tsan_release(&x->sync_bar);
#endif
  switch_to(x, t, round_next(x));  // back when the next round resumes t
#if HXEMU_TSAN
  __tsan_acquire(&x->sync_bar);
#endif
}

void *shared_alloc(const void *key, const char *name, size_t bytes, size_t align) {
  Exec *x = t_exec;
  if (!x || !t_thr) fatal("__shared__ %s declared outside a kernel", name);
  for (auto &k : x->shkeys)
    if (k.first == key) return x->sh + k.second;
  size_t off = (x->static_used + align - 1) / align * align;
  if (off + bytes > STATIC_SHMEM)
    fatal("__shared__ %s (%zu bytes) takes the kernel's static shared memory to %zu bytes, over the 48 KiB a "
          "kernel may declare statically (ptxas refuses it; use dynamic shared memory and the opt-in)",
          name, bytes, off + bytes);
  if (off + bytes + x->dyn_bytes > MAX_SHMEM)
    fatal("__shared__ %s: static (%zu) and dynamic (%zu) shared memory exceed the %zu bytes of a block", name,
          off + bytes, x->dyn_bytes, MAX_SHMEM);
  x->shkeys.emplace_back(key, off);
  x->shnames.emplace_back(name);
  x->static_used = off + bytes;
  // bytes past the high-water mark were never written: NaN since exec_get
  if (x->static_used > x->static_hwm) x->static_hwm = x->static_used;
  return x->sh + off;
}

void *dyn_shared(void) {
  Exec *x = t_exec;
  if (!x || !t_thr) fatal("extern __shared__ memory used outside a kernel");
  return x->dyn;
}

const void *to_kernel_view(const void *p) {
  if (p && in_host_view(p)) return kview(p);
  return p;
}

}  // namespace hxemu

// ============================================================ streams and events
using namespace hxemu;

namespace {
struct Marker {
  bool done = false;
  double t = 0.0;
  CUstream_st *s = nullptr;
  uint64_t seq = 0;
};
struct Op {
  uint64_t seq = 0;
  std::function<void()> fn;
  std::shared_ptr<Marker> wait;  // a cudaStreamWaitEvent
};
}  // namespace

struct CUstream_st {
  std::deque<Op> q;
  uint64_t next_seq = 1, done_seq = 0;
  std::thread worker;
  std::condition_variable cv;
  bool stop = false;
  unsigned flags = 0;
  int id = 0;
};
struct CUevent_st {
  std::shared_ptr<Marker> last;
  bool timing = true;
};

namespace {
std::mutex g_mu;                   // queues, markers, stream and event sets
std::condition_variable g_done;    // an op finished (eager)
std::recursive_mutex g_exec;       // lazy mode: one executor at a time
std::set<CUstream_st *> g_streams;
std::set<CUevent_st *> g_events;
CUstream_st *g_default = nullptr;
int g_stream_ids = 0;

void worker_loop(CUstream_st *s);

CUstream_st *stream_new(unsigned flags) {
  CUstream_st *s = new CUstream_st();
  s->flags = flags;
  std::lock_guard<std::mutex> lk(g_mu);
  s->id = g_stream_ids++;
  g_streams.insert(s);
  if (g_cfg.eager) s->worker = std::thread(worker_loop, s);
  return s;
}

void runtime_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    config_init();
    arena_init();
    handlers_init();
    g_default = stream_new(0);
  });
}

// the stream object of s (0: the default stream); nullptr if destroyed
CUstream_st *stream_of(cudaStream_t s) {
  runtime_init();
  if (!s) return g_default;
  std::lock_guard<std::mutex> lk(g_mu);
  return g_streams.count(s) ? s : nullptr;
}

void run_op(Op &op) {
  if (op.fn) op.fn();
  op.fn = nullptr;
}

void worker_loop(CUstream_st *s) {
  alt_stack();
  struct Release {
    ~Release() {
      exec_release();
      alt_stack_release();
    }
  } release;
  std::unique_lock<std::mutex> lk(g_mu);
  for (;;) {
    s->cv.wait(lk, [&] { return !s->q.empty() || s->stop; });
    if (s->q.empty()) break;
    Op op = std::move(s->q.front());
    s->q.pop_front();
    if (op.wait) {
      std::shared_ptr<Marker> m = op.wait;
      g_done.wait(lk, [&] { return m->done; });
    } else {
      lk.unlock();
      run_op(op);
      lk.lock();
    }
    s->done_seq = op.seq;
    g_done.notify_all();
  }
}

// lazy: run s's queued work up to sequence number upto on this thread
void drain(CUstream_st *s, uint64_t upto) {
  std::lock_guard<std::recursive_mutex> ex(g_exec);
  for (;;) {
    Op op;
    {
      std::lock_guard<std::mutex> lk(g_mu);
      if (s->done_seq >= upto || s->q.empty()) return;
      op = std::move(s->q.front());
      s->q.pop_front();
    }
    if (op.wait) {
      drain(op.wait->s, op.wait->seq);
      if (!op.wait->done) fatal("internal: an awaited event did not complete");
    } else {
      run_op(op);
    }
    std::lock_guard<std::mutex> lk(g_mu);
    s->done_seq = op.seq;
  }
}

uint64_t enqueue(CUstream_st *s, Op &&op, std::shared_ptr<Marker> rec = nullptr) {
  std::lock_guard<std::mutex> lk(g_mu);
  op.seq = s->next_seq++;
  if (rec) {
    rec->s = s;
    rec->seq = op.seq;
  }
  const uint64_t seq = op.seq;
  s->q.push_back(std::move(op));
  if (g_cfg.eager) s->cv.notify_one();
  return seq;
}

// wait until s has run its work up to seq
void wait_seq(CUstream_st *s, uint64_t seq) {
  if (g_cfg.eager) {
    std::unique_lock<std::mutex> lk(g_mu);
    g_done.wait(lk, [&] { return s->done_seq >= seq; });
  } else {
    drain(s, seq);
  }
}
void wait_stream(CUstream_st *s) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    seq = s->next_seq - 1;
  }
  wait_seq(s, seq);
}
void wait_all() {
  std::vector<CUstream_st *> all;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    all.assign(g_streams.begin(), g_streams.end());
  }
  for (auto *s : all) wait_stream(s);
}
void wait_marker(const std::shared_ptr<Marker> &m) {
  if (g_cfg.eager) {
    std::unique_lock<std::mutex> lk(g_mu);
    g_done.wait(lk, [&] { return m->done; });
  } else {
    drain(m->s, m->seq);
  }
}
}  // namespace

// ============================================================ launches
namespace hxemu {
namespace {
std::mutex g_attr_mu;
std::map<const void *, int> g_max_dyn;  // cudaFuncAttributeMaxDynamicSharedMemorySize
}  // namespace

cudaError_t func_set_attribute(const void *fn, cudaFuncAttribute attr, int value) {
  runtime_init();
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return api_error(cudaErrorInvalidValue, "cudaFuncSetAttribute: attribute %d is not emulated", (int)attr);
  if (value < 0 || (size_t)value > MAX_SHMEM)
    return api_error(cudaErrorInvalidValue,
                     "cudaFuncSetAttribute: %d bytes of dynamic shared memory requested, the device has %zu", value,
                     MAX_SHMEM);
  std::lock_guard<std::mutex> lk(g_attr_mu);
  g_max_dyn[fn] = value;
  return cudaSuccess;
}

cudaError_t launch_job(const char *file, int line, const char *name, const void *fn, Cfg c, Job *job) {
  std::unique_ptr<Job> owned(job);
  CUstream_st *s = stream_of(c.stream);
  if (!s)
    return api_error(cudaErrorInvalidResourceHandle, "launch of %s at %s:%d on a destroyed stream", name, file, line);
  const dim3 b = c.block, g = c.grid;
  const uint64_t nt = (uint64_t)b.x * b.y * b.z;
  if (!b.x || !b.y || !b.z || b.x > 1024 || b.y > 1024 || b.z > 64 || nt > 1024)
    return api_error(cudaErrorInvalidConfiguration,
                     "launch of %s at %s:%d: block (%u,%u,%u) (limits: 1024 x 1024 x 64, at most 1024 threads)", name,
                     file, line, b.x, b.y, b.z);
  if (!g.x || !g.y || !g.z || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    return api_error(cudaErrorInvalidConfiguration,
                     "launch of %s at %s:%d: grid (%u,%u,%u) (each dimension >= 1; y, z <= 65535)", name, file, line,
                     g.x, g.y, g.z);
  if (c.shmem > STATIC_SHMEM) {
    int allowed = 0;
    {
      std::lock_guard<std::mutex> lk(g_attr_mu);
      auto it = g_max_dyn.find(fn);
      if (it != g_max_dyn.end()) allowed = it->second;
    }
    if (c.shmem > (size_t)allowed)
      return api_error(cudaErrorInvalidValue,
                       "launch of %s at %s:%d: %zu bytes of dynamic shared memory, above 48 KiB without "
                       "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) (set: %d)",
                       name, file, line, c.shmem, allowed);
  }
  // the probe: the kernel's first statement records __launch_bounds__ and returns
  t_probe = 1;
  t_bounds = 0;
  job->call();
  t_probe = 0;
  if (t_bounds && nt > t_bounds)
    return api_error(cudaErrorLaunchOutOfResources,
                     "launch of %s at %s:%d: %llu threads per block, over its __launch_bounds__ of %u", name, file,
                     line, (unsigned long long)nt, t_bounds);
  auto L = std::make_shared<Launch>();
  L->job = owned.release();
  L->name = name;
  L->file = file;
  L->line = line;
  L->grid = g;
  L->block = b;
  L->shmem = c.shmem;
  L->number = ++g_launch_count;
  Op op;
  op.fn = [L] {
    run_launch(*L);
    delete L->job;
    L->job = nullptr;
  };
  enqueue(s, std::move(op));
  return cudaSuccess;
}
}  // namespace hxemu

// ============================================================ the runtime API
static const struct {
  cudaError_t e;
  const char *name, *str;
} g_errs[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};
const char *cudaGetErrorName(cudaError_t e) {
  for (auto &x : g_errs)
    if (x.e == e) return x.name;
  return "cudaErrorUnknown";
}
const char *cudaGetErrorString(cudaError_t e) {
  for (auto &x : g_errs)
    if (x.e == e) return x.str;
  return "unknown error";
}
cudaError_t cudaGetLastError(void) {
  cudaError_t e = t_last;
  t_last = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return t_last; }

static thread_local int t_device = 0;
cudaError_t cudaGetDeviceCount(int *count) {
  runtime_init();
  *count = g_cfg.devices;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device) {
  runtime_init();
  if (device < 0 || device >= g_cfg.devices)
    return api_error(cudaErrorInvalidDevice, "cudaGetDeviceProperties: device %d of %d", device, g_cfg.devices);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "hexcg CUDA emulator (%s, seed %llu)", g_cfg.eager ? "eager" : "lazy",
           (unsigned long long)g_cfg.seed);
  p->totalGlobalMem = g_cfg.mem;
  p->sharedMemPerBlock = STATIC_SHMEM;
  p->sharedMemPerBlockOptin = MAX_SHMEM;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = p->maxGridSize[2] = 65535;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 2;
  p->pciBusID = device;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int device) {
  runtime_init();
  if (device < 0 || device >= g_cfg.devices)
    return api_error(cudaErrorInvalidDevice, "cudaDeviceGetPCIBusId: device %d of %d", device, g_cfg.devices);
  snprintf(bus, (size_t)len, "emu0:%02x:00.0", device);
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  runtime_init();
  if (device < 0 || device >= g_cfg.devices)
    return api_error(cudaErrorInvalidDevice, "cudaSetDevice: device %d of %d", device, g_cfg.devices);
  t_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device) {
  *device = t_device;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  runtime_init();
  wait_all();
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  runtime_init();
  *s = stream_new(flags);
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  CUstream_st *st = stream_of(s);
  if (!st || st == g_default) return api_error(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: not a stream");
  wait_stream(st);  // CUDA lets the work finish; it runs here
  {
    std::lock_guard<std::mutex> lk(g_mu);
    g_streams.erase(st);
    st->stop = true;
    st->cv.notify_one();
  }
  if (st->worker.joinable()) st->worker.join();
  delete st;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  CUstream_st *st = stream_of(s);
  if (!st) return api_error(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize: a destroyed stream");
  wait_stream(st);
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
  (void)flags;
  CUstream_st *st = stream_of(s);
  if (!st) return api_error(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: a destroyed stream");
  std::shared_ptr<Marker> m;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_events.count(e)) return api_error(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: not an event");
    m = e->last;  // the most recent record at the time of the call
  }
  if (!m) return cudaSuccess;  // never recorded: nothing to wait for
  Op op;
  op.wait = m;
  enqueue(st, std::move(op));
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  runtime_init();
  CUevent_st *ev = new CUevent_st();
  ev->timing = !(flags & cudaEventDisableTiming);
  std::lock_guard<std::mutex> lk(g_mu);
  g_events.insert(ev);
  *e = ev;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  runtime_init();
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_events.erase(e)) return api_error(cudaErrorInvalidResourceHandle, "cudaEventDestroy: not an event");
  delete e;  // pending markers are shared with their ops
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  CUstream_st *st = stream_of(s);
  if (!st) return api_error(cudaErrorInvalidResourceHandle, "cudaEventRecord: a destroyed stream");
  auto m = std::make_shared<Marker>();
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_events.count(e)) return api_error(cudaErrorInvalidResourceHandle, "cudaEventRecord: not an event");
    e->last = m;
  }
  Op op;
  op.fn = [m] {
    std::lock_guard<std::mutex> lk(g_mu);
    m->t = now();
    m->done = true;
  };
  enqueue(st, std::move(op), m);
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  runtime_init();
  std::shared_ptr<Marker> m;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_events.count(e)) return api_error(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: not an event");
    m = e->last;
  }
  if (m) wait_marker(m);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  runtime_init();
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_events.count(e)) return api_error(cudaErrorInvalidResourceHandle, "cudaEventQuery: not an event");
  return !e->last || e->last->done ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  runtime_init();
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_events.count(a) || !g_events.count(b))
    return api_error(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: not an event");
  if (!a->timing || !b->timing)
    return api_error(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: an event created with cudaEventDisableTiming");
  if (!a->last || !b->last) return api_error(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: an event never recorded");
  if (!a->last->done || !b->last->done) return cudaErrorNotReady;
  const double d = b->last->t - a->last->t;
  *ms = (float)(1e3 * (d > 0 ? d : 0));
  return cudaSuccess;
}

// ------------------------------------------------------------ memory
cudaError_t cudaMalloc(void **p, size_t bytes) {
  runtime_init();
  *p = nullptr;
  const size_t user = (bytes + 255) / 256 * 256;
  const size_t data_pages = (user + PG - 1) / PG;
  const size_t span = (data_pages + 1) * PG;
  std::lock_guard<std::mutex> lk(g_mem_mu);
  if (g_live_bytes + bytes > g_cfg.mem)
    return api_error(cudaErrorMemoryAllocation, "cudaMalloc of %zu bytes: the emulated device's %zu bytes are in use",
                     bytes, g_cfg.mem);
  if (g_bump + span > g_cfg.arena)
    return api_error(cudaErrorMemoryAllocation,
                     "cudaMalloc of %zu bytes: the emulator's address range is used up (HEXCG_CUDAEMU_ARENA_GIB)", bytes);
  Alloc a;
  a.span_off = g_bump;
  a.span = span;
  a.user_off = g_bump + data_pages * PG - user;
  a.size = bytes;
  a.id = ++g_alloc_id;
  a.live = true;
  a.nsite = backtrace(a.site, 8);
  g_bump += span;
  if (data_pages) {
    if (mprotect(g_kbase + a.span_off, data_pages * PG, PROT_READ | PROT_WRITE))
      fatal("mprotect of a device allocation failed: %s", strerror(errno));
    memset(g_kbase + a.user_off, 0xff, user);  // new memory is NaN
  }
  g_allocs[a.span_off] = a;
  g_live_bytes += bytes;
  *p = g_hbase + a.user_off;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
  runtime_init();
  if (!p) return cudaSuccess;
  wait_all();  // cudaFree synchronises the device
  std::lock_guard<std::mutex> lk(g_mem_mu);
  if (!in_host_view(p)) return api_error(cudaErrorInvalidValue, "cudaFree(%p): not device memory", p);
  const size_t off = (size_t)((char *)p - g_hbase);
  Alloc *a = const_cast<Alloc *>(find_alloc(off));
  if (!a || a->user_off != off) return api_error(cudaErrorInvalidValue, "cudaFree(%p): not the start of an allocation", p);
  if (!a->live) return api_error(cudaErrorInvalidValue, "cudaFree(%p): allocation #%llu freed twice", p, (unsigned long long)a->id);
  a->live = false;
  g_live_bytes -= a->size;
  const size_t data = a->span - PG;
  if (data) {
    mprotect(g_kbase + a->span_off, data, PROT_NONE);
    fallocate(g_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->span_off, (off_t)data);
  }
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t bytes) {
  runtime_init();
  const size_t len = (bytes + PG - 1) / PG * PG + PG;
  void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return api_error(cudaErrorMemoryAllocation, "cudaMallocHost of %zu bytes", bytes);
  memset(m, 0xff, bytes);  // pinned memory comes uninitialised: NaN here
  std::lock_guard<std::mutex> lk(g_pin_mu);
  g_pinned[(uintptr_t)m] = bytes ? bytes : 1;
  *p = m;
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void *p) {
  runtime_init();
  if (!p) return cudaSuccess;
  wait_all();
  std::lock_guard<std::mutex> lk(g_pin_mu);
  auto it = g_pinned.find((uintptr_t)p);
  if (it == g_pinned.end()) return api_error(cudaErrorInvalidValue, "cudaFreeHost(%p): not from cudaMallocHost", p);
  munmap(p, (it->second + PG - 1) / PG * PG + PG);
  g_pinned.erase(it);
  return cudaSuccess;
}

static const char *kind_name(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    default: return "cudaMemcpyDefault";
  }
}

// the checks every copy makes: each side in the memory its kind names
static cudaError_t copy_check(void *dst, const void *src, size_t n, cudaMemcpyKind kind, const char *api) {
  const bool dd = in_host_view(dst), sd = in_host_view(src);
  const bool want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice)
    return api_error(cudaErrorInvalidValue, "%s: kind %s is not used by hexcg and not emulated", api, kind_name(kind));
  if (dd != want_dd || sd != want_sd)
    return api_error(cudaErrorInvalidValue,
                     "%s(%p <- %p, %zu bytes, %s): the destination is %s memory and the source %s memory: a copy in "
                     "the wrong direction",
                     api, dst, src, n, kind_name(kind), dd ? "device" : "host", sd ? "device" : "host");
  std::string why;
  if (dd && !dev_range(dst, n, &why)) return api_error(cudaErrorInvalidValue, "%s destination: %s", api, why.c_str());
  if (sd && !dev_range(src, n, &why)) return api_error(cudaErrorInvalidValue, "%s source: %s", api, why.c_str());
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  CUstream_st *st = stream_of(s);
  if (!st) return api_error(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync on a destroyed stream");
  if (cudaError_t e = copy_check(dst, src, n, kind, "cudaMemcpyAsync")) return e;
  if (!n) return cudaSuccess;
  Op op;
  if (kind == cudaMemcpyDeviceToDevice) {
    char *d = kview(dst);
    const char *sp = kview(src);
    op.fn = [d, sp, n] { memmove(d, sp, n); };
    enqueue(st, std::move(op));
  } else if (kind == cudaMemcpyHostToDevice) {
    char *d = kview(dst);
    if (is_pinned(src, n)) {
      // read when the copy runs; a source changed before then is the caller's bug
      std::shared_ptr<char> snap(new char[n], std::default_delete<char[]>());
      memcpy(snap.get(), src, n);
      void *site[8];
      const int ns = backtrace(site, 8);
      std::vector<void *> where(site, site + ns);
      op.fn = [d, src, n, snap, where] {
        if (memcmp(snap.get(), src, n)) {
          fprintf(stderr, "hexcg-cudaemu: error: the pinned host source of an asynchronous host-to-device copy "
                          "(%zu bytes at %p) changed between cudaMemcpyAsync and the copy's turn on its stream: "
                          "the host wrote it before synchronising; the copy was queued at:\n", n, src);
          backtrace_symbols_fd(where.data(), (int)where.size(), 2);
          signal(SIGABRT, SIG_DFL);
          abort();
        }
        memcpy(d, src, n);
      };
    } else {
      // pageable: staged at the call (CUDA returns once the source is staged)
      std::shared_ptr<char> stage(new char[n], std::default_delete<char[]>());
      memcpy(stage.get(), src, n);
      op.fn = [d, stage, n] { memcpy(d, stage.get(), n); };
    }
    enqueue(st, std::move(op));
  } else {
    const char *sp = kview(src);
    if (is_pinned(dst, n)) {
      memset(dst, 0xff, n);  // NaN until the copy has run
      op.fn = [dst, sp, n] { memcpy(dst, sp, n); };
      enqueue(st, std::move(op));
    } else {
      // pageable: CUDA returns only once the copy is done
      op.fn = [dst, sp, n] { memcpy(dst, sp, n); };
      wait_seq(st, enqueue(st, std::move(op)));
    }
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind) {
  runtime_init();
  if (cudaError_t e = copy_check(dst, src, n, kind, "cudaMemcpy")) return e;
  wait_all();
  memmove(in_host_view(dst) ? kview(dst) : (char *)dst, in_host_view(src) ? kview(src) : (const char *)src, n);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s) {
  CUstream_st *st = stream_of(s);
  if (!st) return api_error(cudaErrorInvalidResourceHandle, "cudaMemsetAsync on a destroyed stream");
  std::string why;
  if (!in_host_view(p)) return api_error(cudaErrorInvalidValue, "cudaMemsetAsync(%p): not device memory", p);
  if (!dev_range(p, n, &why)) return api_error(cudaErrorInvalidValue, "cudaMemsetAsync: %s", why.c_str());
  if (!n) return cudaSuccess;
  char *d = kview(p);
  Op op;
  op.fn = [d, value, n] { memset(d, value, n); };
  enqueue(st, std::move(op));
  return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int value, size_t n) {
  cudaError_t e = cudaMemsetAsync(p, value, n, 0);
  if (e == cudaSuccess) wait_all();
  return e;
}
