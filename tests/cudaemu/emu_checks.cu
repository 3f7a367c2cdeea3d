// The CUDA emulator's own tests (HEXCG_CUDA=EMU only; docs/gpu-verification.md):
// each mode is one class of GPU bug, injected into a small kernel or host
// sequence, and passes only when the emulator reports it with its diagnostic
// (or, for a missing synchronisation, gives wrong values deterministically).
// `clean` runs the same kernels correctly and checks their results bit for
// bit against the host. Usage: emu_checks MODE (emu_checks list: the modes).
//
// A fatal report (barrier divergence, a fault, ...) aborts the process, so
// those modes run the bug in a forked child and check its end and stderr.
#include <cuda_runtime.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static int fail(const char *what) {
  printf("NOT CAUGHT: %s\n", what);
  return 1;
}

// ------------------------------------------------------------ kernels
// each block reverses its slice through shared memory (zeros past n)
__global__ void __launch_bounds__(256) reverse_kernel(int n, const double *x, double *y, int sync) {
  __shared__ double s[256];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0;
  if (sync) __syncthreads();  // the bug: sync = 0
  if (i < n) y[i] = s[blockDim.x - 1 - t];
}

// write-after-read: each thread reads its right neighbour, then overwrites its own entry
__global__ void shift_kernel(double *y, int sync) {
  __shared__ double s[64];
  const int t = threadIdx.x;
  s[t] = (double)t;
  __syncthreads();
  const double right = s[(t + 1) % 64];
  if (sync) __syncthreads();  // the bug: sync = 0
  s[t] = -1.0;
  y[t] = right;
}

// a tree sum in dynamic shared memory (> 48 KiB: the opt-in)
__global__ void dyn_sum_kernel(int m, const double *x, double *out) {
  extern __shared__ unsigned char raw[];
  double *s = reinterpret_cast<double *>(raw);
  for (int k = threadIdx.x; k < m; k += blockDim.x) s[k] = x[k];
  __syncthreads();
  for (int w = m / 2; w > 0; w /= 2) {
    for (int k = threadIdx.x; k < w; k += blockDim.x) s[k] += s[k + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = s[0];
}

__global__ void divergent_kernel(double *y) {
  __shared__ double s[32];
  s[threadIdx.x] = 1.0;
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  y[threadIdx.x] = s[31 - threadIdx.x];
}

__global__ void early_exit_kernel(double *y) {
  __shared__ double s[32];
  if (threadIdx.x == 0) return;
  s[threadIdx.x] = 1.0;
  __syncthreads();
  y[threadIdx.x] = s[threadIdx.x];
}

__global__ void big_static_kernel(double *y) {
  __shared__ double s[7000];  // 56000 bytes > 48 KiB
  s[threadIdx.x] = 1.0;
  __syncthreads();
  y[threadIdx.x] = s[threadIdx.x];
}

__global__ void dyn_overrun_kernel(int m, double *y) {
  extern __shared__ unsigned char raw[];
  double *s = reinterpret_cast<double *>(raw);
  s[threadIdx.x + m] = 1.0;  // m doubles were asked for
  y[threadIdx.x] = 0.0;
}

__global__ void read_kernel(int n, const double *x, double *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i + n];  // the bug: one block past the end
}

__global__ void scale_kernel(int n, double a, const double *x, double *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i];
}

// ------------------------------------------------------------ helpers
static double *dev(size_t n) {
  double *p;
  CK(cudaMalloc(&p, n * sizeof(double)));
  return p;
}

// run fn in a child; pass when it dies (abort / non-zero) with `want` on stderr
static int expect_fatal(void (*fn)(void), const char *want) {
  int pfd[2];
  if (pipe(pfd)) return fail("pipe");
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pfd[1], 2);
    close(pfd[0]);
    fn();
    fprintf(stderr, "(the child ended normally)\n");
    _exit(0);
  }
  close(pfd[1]);
  std::string err;
  char buf[4096];
  ssize_t k;
  while ((k = read(pfd[0], buf, sizeof buf)) > 0) err.append(buf, (size_t)k);
  close(pfd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  fputs(err.c_str(), stdout);
  const bool died = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
  if (!died) return fail("the process ended normally");
  if (!strstr(err.c_str(), want)) return fail(want);
  printf("caught: \"%s\"\n", want);
  return 0;
}

// pass when the call returned `code` (the emulator's message on stderr is
// checked by the test's PASS_REGULAR_EXPRESSION)
static int expect_error(cudaError_t got, cudaError_t code) {
  if (got != code) {
    printf("returned %s, expected %s\n", cudaGetErrorName(got), cudaGetErrorName(code));
    return fail("the error code");
  }
  printf("caught: %s\n", cudaGetErrorName(code));
  return 0;
}

// ------------------------------------------------------------ modes
static int clean(void) {
  // reverse with the barrier: bit for bit the host's reversal
  const int n = 1000;
  double *h = (double *)malloc(sizeof(double) * n), *g = (double *)malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) h[i] = 1.0 / (i + 1);
  double *dx = dev(n), *dy = dev(n);
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CK(cudaMemcpyAsync(dx, h, sizeof(double) * n, cudaMemcpyHostToDevice, s1));
  reverse_kernel<<<(n + 255) / 256, 256, 0, s1>>>(n, dx, dy, 1);
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(g, dy, sizeof(double) * n, cudaMemcpyDeviceToHost, s1));
  for (int i = 0; i < n; i++) {
    const int j = (i / 256) * 256 + 255 - i % 256;
    if (g[i] != (j < n ? h[j] : 0.0)) return printf("reverse: y[%d] = %g, expected %g\n", i, g[i], h[j]), 1;
  }
  // the neighbour shift with its barrier, every seed gives the same
  double *dz = dev(64), hz[64];
  shift_kernel<<<1, 64, 0, s1>>>(dz, 1);
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(hz, dz, sizeof hz, cudaMemcpyDeviceToHost, s1));
  for (int t = 0; t < 64; t++)
    if (hz[t] != (double)((t + 1) % 64)) return printf("shift: y[%d] = %g\n", t, hz[t]), 1;
  // > 48 KiB of dynamic shared memory after the opt-in; a tree sum of powers of two (exact)
  const int m = 8192;
  double *hm = (double *)malloc(sizeof(double) * m), *dm = dev(m), *dout = dev(1), out = 0.0;
  for (int k = 0; k < m; k++) hm[k] = (double)(k % 7);
  double ref = 0.0;
  for (int k = 0; k < m; k++) ref += hm[k];
  CK(cudaFuncSetAttribute(dyn_sum_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(m * sizeof(double))));
  CK(cudaMemcpyAsync(dm, hm, sizeof(double) * m, cudaMemcpyHostToDevice, s2));
  dyn_sum_kernel<<<1, 256, m * sizeof(double), s2>>>(m, dm, dout);
  CK(cudaGetLastError());
  // an event orders s2's sum before s1's scale of it
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CK(cudaEventRecord(ev, s2));
  CK(cudaStreamWaitEvent(s1, ev, 0));
  double *dout2 = dev(1);
  scale_kernel<<<1, 32, 0, s1>>>(1, 2.0, dout, dout2);
  CK(cudaGetLastError());
  double *pin;
  CK(cudaMallocHost(&pin, sizeof(double)));
  CK(cudaMemcpyAsync(pin, dout2, sizeof(double), cudaMemcpyDeviceToHost, s1));
  CK(cudaStreamSynchronize(s1));
  out = *pin;
  if (out != 2 * ref) return printf("dyn sum through an event: %.17g, expected %.17g\n", out, 2 * ref), 1;
  CK(cudaFreeHost(pin));
  CK(cudaEventDestroy(ev));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dz));
  CK(cudaFree(dm));
  CK(cudaFree(dout));
  CK(cudaFree(dout2));
  CK(cudaStreamDestroy(s1));
  CK(cudaStreamDestroy(s2));
  free(h), free(g), free(hm);
  printf("clean: every result as the host computes it\n");
  return 0;
}

// the reversal without its barrier: threads read entries not yet written
// (NaN-poisoned shared memory, or a previous block's values)
static int missing_sync(void) {
  const int n = 512;
  double h[512], g[512];
  for (int i = 0; i < n; i++) h[i] = i + 1.0;
  double *dx = dev(n), *dy = dev(n);
  CK(cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice));
  reverse_kernel<<<2, 256>>>(n, dx, dy, 0);
  CK(cudaGetLastError());
  CK(cudaMemcpy(g, dy, sizeof g, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += g[i] != h[(i / 256) * 256 + 255 - i % 256];
  if (!bad) return fail("a missing __syncthreads gave the right values");
  printf("caught: %d of %d values wrong without the barrier (seed %s)\n", bad, n,
         getenv("HEXCG_CUDAEMU_SEED") ? getenv("HEXCG_CUDAEMU_SEED") : "0");
  return 0;
}

// write-after-read: in the natural thread order every read comes first and
// the bug hides; shuffled orders (a seed) expose it
static int war_race(void) {
  double *dz = dev(64), hz[64];
  shift_kernel<<<1, 64>>>(dz, 0);
  CK(cudaGetLastError());
  CK(cudaMemcpy(hz, dz, sizeof hz, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int t = 0; t < 64; t++) bad += hz[t] != (double)((t + 1) % 64);
  if (!bad) return fail("the write-after-read race gave the right values");
  printf("caught: %d of 64 values overwritten before their read\n", bad);
  return 0;
}

// a kernel on s2 reads what a kernel on s1 writes, with no event between
static int missing_event(void) {
  const int n = 256;
  double h[256], g[256];
  for (int i = 0; i < n; i++) h[i] = i;
  double *dx = dev(n), *dy = dev(n), *dz = dev(n);
  CK(cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  scale_kernel<<<1, 64, 0, s1>>>(n, 2.0, dx, dy);
  scale_kernel<<<1, 64, 0, s2>>>(n, 3.0, dy, dz);  // the bug: no cudaStreamWaitEvent
  CK(cudaMemcpyAsync(g, dz, sizeof g, cudaMemcpyDeviceToHost, s2));
  CK(cudaStreamSynchronize(s2));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += g[i] != 6.0 * h[i];
  CK(cudaDeviceSynchronize());
  if (!bad) return fail("the missing event gave the right values");
  printf("caught: %d of %d values read before they were written\n", bad, n);
  return 0;
}

// a host read of a pinned D2H destination before synchronising
static int early_read(void) {
  double *dx = dev(16), *pin, h[16];
  for (int i = 0; i < 16; i++) h[i] = i;
  CK(cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice));
  CK(cudaMallocHost(&pin, sizeof h));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaMemcpyAsync(pin, dx, sizeof h, cudaMemcpyDeviceToHost, s));
  const double early = pin[5];  // the bug: no cudaStreamSynchronize first
  CK(cudaStreamSynchronize(s));
  if (early == 5.0) return fail("the early read saw the copied value");
  printf("caught: the early read gave %g, after the sync %g\n", early, pin[5]);
  return 0;
}

static void f_divergent(void) {
  double *y = dev(32);
  divergent_kernel<<<1, 32>>>(y);
  cudaDeviceSynchronize();
}
static void f_early_exit(void) {
  double *y = dev(32);
  early_exit_kernel<<<1, 32>>>(y);
  cudaDeviceSynchronize();
}
static void f_big_static(void) {
  double *y = dev(32);
  big_static_kernel<<<1, 32>>>(y);
  cudaDeviceSynchronize();
}
static void f_dyn_overrun(void) {
  double *y = dev(32);
  const int m = 512 - 16;  // 3968 bytes: the block's last doubles run into the guard
  dyn_overrun_kernel<<<1, 32, m * sizeof(double)>>>(m, y);
  cudaDeviceSynchronize();
}
static void f_host_deref(void) {
  double *y = dev(32);
  printf("%g\n", y[3]);  // the bug: a device pointer read on the host
}
static void f_oob(void) {
  const int n = 1024;
  double *x = dev(n), *y = dev(n);
  read_kernel<<<n / 128, 128>>>(n / 8, x, y);  // reads x[n/8 .. n/8 + n): past the end
  cudaDeviceSynchronize();
}
static void f_use_after_free(void) {
  double *x = dev(64), *y = dev(64);
  cudaFree(x);
  scale_kernel<<<1, 64>>>(64, 1.0, x, y);
  cudaDeviceSynchronize();
}
static void f_pinned_h2d(void) {
  double *pin, *d = dev(8);
  cudaMallocHost(&pin, 8 * sizeof(double));
  for (int i = 0; i < 8; i++) pin[i] = i;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMemcpyAsync(d, pin, 8 * sizeof(double), cudaMemcpyHostToDevice, s);
  pin[2] = -1.0;  // the bug: the source reused before the copy ran
  cudaStreamSynchronize(s);
}

static int launch_bounds(void) {
  double *x = dev(512), *y = dev(512);
  reverse_kernel<<<1, 512>>>(512, x, y, 1);  // __launch_bounds__(256)
  return expect_error(cudaGetLastError(), cudaErrorLaunchOutOfResources);
}
static int dyn_no_optin(void) {
  double *x = dev(8192), *y = dev(1);
  dyn_sum_kernel<<<1, 256, 60 * 1024>>>(4096, x, y);  // 60 KiB without cudaFuncSetAttribute
  return expect_error(cudaGetLastError(), cudaErrorInvalidValue);
}
static int dyn_too_big(void) {
  const cudaError_t e = cudaFuncSetAttribute(dyn_sum_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 240 * 1024);
  return expect_error(e, cudaErrorInvalidValue);
}
static int grid_zero(void) {
  double *x = dev(8), *y = dev(8);
  scale_kernel<<<0, 64>>>(8, 1.0, x, y);
  return expect_error(cudaGetLastError(), cudaErrorInvalidConfiguration);
}
static int block_too_big(void) {
  double *x = dev(8), *y = dev(8);
  scale_kernel<<<1, dim3(32, 33)>>>(8, 1.0, x, y);  // 1056 threads
  return expect_error(cudaGetLastError(), cudaErrorInvalidConfiguration);
}
static int wrong_direction(void) {
  double *d = dev(8), h[8] = {0};
  return expect_error(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyDeviceToHost, 0), cudaErrorInvalidValue);
}
static int copy_range(void) {
  double *d = dev(8), h[16] = {0};
  return expect_error(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, 0), cudaErrorInvalidValue);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*run)(void);
    void (*fatal)(void);
    const char *want;
  } modes[] = {
      {"clean", clean, nullptr, nullptr},
      {"missing-sync", missing_sync, nullptr, nullptr},
      {"war-race", war_race, nullptr, nullptr},
      {"missing-event", missing_event, nullptr, nullptr},
      {"early-read", early_read, nullptr, nullptr},
      {"divergent-barrier", nullptr, f_divergent, "barrier divergence"},
      {"early-exit", nullptr, f_early_exit, "has exited"},
      {"static-shared", nullptr, f_big_static, "over the 48 KiB"},
      {"dyn-shared-overrun", nullptr, f_dyn_overrun, "past the end of the block's dynamic shared memory"},
      {"host-deref", nullptr, f_host_deref, "host code dereferenced device memory"},
      {"out-of-bounds", nullptr, f_oob, "past its end"},
      {"use-after-free", nullptr, f_use_after_free, "which was freed"},
      {"pinned-h2d-reuse", nullptr, f_pinned_h2d, "changed between cudaMemcpyAsync and the copy"},
      {"launch-bounds", launch_bounds, nullptr, nullptr},
      {"dyn-shared-no-optin", dyn_no_optin, nullptr, nullptr},
      {"dyn-shared-too-big", dyn_too_big, nullptr, nullptr},
      {"grid-zero", grid_zero, nullptr, nullptr},
      {"block-too-big", block_too_big, nullptr, nullptr},
      {"wrong-direction", wrong_direction, nullptr, nullptr},
      {"copy-range", copy_range, nullptr, nullptr},
  };
  if (argc != 2) {
    fprintf(stderr, "usage: emu_checks MODE|list\n");
    return 2;
  }
  for (auto &m : modes) {
    if (!strcmp(argv[1], "list")) {
      printf("%s\n", m.name);
      continue;
    }
    if (strcmp(argv[1], m.name)) continue;
    return m.run ? m.run() : expect_fatal(m.fatal, m.want);
  }
  if (!strcmp(argv[1], "list")) return 0;
  fprintf(stderr, "emu_checks: unknown mode %s\n", argv[1]);
  return 2;
}
