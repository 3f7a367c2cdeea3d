/* hx_malloc_tune (core/malloc_tune.c): what it reports, when it leaves the
 * allocator alone, and what the settings do.
 *   t004-malloc-tune tuned|off|user
 * tuned: no HEXCG_MALLOC_TUNE and no glibc malloc variable set: it sets glibc's
 *   thresholds, and
 *   - an array of 2 MiB (below the tuned mmap threshold) freed and allocated
 *     again is reused: fewer than 5 % of its pages fault the second time
 *     (with glibc's defaults the first is mapped and unmapped, the second
 *     comes from fresh heap pages that all fault);
 *   - an array of 16 MiB (above it) gives its pages back at free, also after
 *     two others of its size (at least 90 % of them leave the resident set;
 *     with glibc's defaults the threshold has risen to its size by then and
 *     the third stays in the heap: under 50 % leave).
 * off: HEXCG_MALLOC_TUNE=0: left alone, said so; the opposite of both.
 * user: MALLOC_TOP_PAD_ set by the caller: left alone, the variable named.
 * In a sanitizer build the sanitizer's allocator is left alone (said so) and
 * the page counts are not checked: it does not use glibc's heap. */
#include <sys/resource.h>
#include <unistd.h>

#include "hx_test.h"

#define MIB (1 << 20)

#if !defined(__SANITIZE_ADDRESS__) /* the page counts: glibc's heap only */
static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/* minor page faults of allocating, touching every page of and freeing a
 * bytes-long array */
static long touch_cycle(size_t bytes) {
  long f0 = minor_faults();
  volatile char *a = malloc(bytes);
  if (!a) return -1;
  for (size_t i = 0; i < bytes; i += 4096) a[i] = (char)i;
  free((void *)a);
  return minor_faults() - f0;
}

/* resident pages (/proc/self/statm), -1 if unknown */
static long resident_pages(void) {
  long size = 0, res = -1;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
  fclose(f);
  return res;
}

/* resident pages given back when a touched bytes-long array is freed */
static long pages_released(size_t bytes) {
  volatile char *a = malloc(bytes);
  if (!a) return -1;
  for (size_t i = 0; i < bytes; i += 4096) a[i] = (char)i;
  const long r0 = resident_pages();
  free((void *)a);
  return r0 - resident_pages();
}
#endif

int main(int argc, char **argv) {
  HX_ASSERT(argc == 2, "usage: t004-malloc-tune tuned|off|user");
  const char *mode = argv[1];
  HX_ASSERT(strstr(hx_malloc_tune_info(), "not set up") != NULL, "before the call: %s",
            hx_malloc_tune_info());
  int set = hx_malloc_tune();
  const char *info = hx_malloc_tune_info();
  printf("mode %s: hx_malloc_tune -> %d, '%s'\n", mode, set, info);
#if defined(__SANITIZE_ADDRESS__)
  if (!strcmp(mode, "off"))
    HX_ASSERT(set == 0 && !strcmp(info, "the C library's defaults (HEXCG_MALLOC_TUNE=0)"), "off: '%s'", info);
  else
    HX_ASSERT(set == 0 && strstr(info, "sanitizer"), "sanitizer build: left alone, said so: '%s'", info);
  return hx_test_result();
#else
  const size_t bytes = 2 * (size_t)MIB, big = 16 * (size_t)MIB; /* below and above the tuned threshold */
  const long pages = (long)(bytes / 4096), bigp = (long)(big / (size_t)sysconf(_SC_PAGESIZE));
  if (!strcmp(mode, "tuned")) {
    HX_ASSERT(set == 1, "tuned: set");
    char want[160];
    snprintf(want, sizeof want, "glibc, mmap threshold %d MiB, trim threshold %d MiB", HX_MALLOC_MMAP_THRESHOLD / MIB,
             HX_MALLOC_TRIM_THRESHOLD / MIB);
    HX_ASSERT(!strcmp(info, want), "tuned: '%s', expected '%s'", info, want);
  } else if (!strcmp(mode, "off")) {
    HX_ASSERT(set == 0 && !strcmp(info, "the C library's defaults (HEXCG_MALLOC_TUNE=0)"), "off: '%s'", info);
  } else if (!strcmp(mode, "user")) {
    HX_ASSERT(set == 0 && !strcmp(info, "glibc, as MALLOC_TOP_PAD_ sets it"), "user: '%s'", info);
    return hx_test_result();
  } else {
    HX_ASSERT(0, "unknown mode '%s'", mode);
    return hx_test_result();
  }
  long first = touch_cycle(bytes), second = touch_cycle(bytes);
  printf("%ld pages: faults %ld on the first array, %ld on the second\n", pages, first, second);
  HX_ASSERT(first >= pages / 2, "the first array's pages fault (%ld of %ld)", first, pages);
  if (set)
    HX_ASSERT(second < pages / 20, "tuned: the freed array is reused (%ld of %ld pages faulted)", second,
              pages);
  else
    HX_ASSERT(second >= pages / 2, "glibc's defaults: the second array faults again (%ld of %ld)", second,
              pages);
  pages_released(big), pages_released(big);
  const long back = pages_released(big);
  printf("%ld pages: %ld left the resident set at the third array's free\n", bigp, back);
  if (set)
    HX_ASSERT(back >= bigp * 9 / 10, "tuned: a large array's pages go back at free (%ld of %ld)", back, bigp);
  else
    HX_ASSERT(back < bigp / 2, "glibc's defaults: the third large array stays in the heap (%ld of %ld released)",
              back, bigp);
  return hx_test_result();
#endif
}
