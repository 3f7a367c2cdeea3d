/* hx_malloc_tune (core/malloc_tune.c): what it reports, when it leaves the
 * allocator alone, and what the settings do.
 *   t004-malloc-tune tuned|off|user
 * tuned: no HEXCG_MALLOC_TUNE and no glibc malloc variable set: it sets glibc's
 *   thresholds, and an array of 24 MiB freed and allocated again is reused
 *   (fewer than 5 % of its pages fault the second time; with glibc's defaults
 *   the first is mapped and unmapped, the second comes from fresh heap pages
 *   that all fault: the `off` run checks that).
 * off: HEXCG_MALLOC_TUNE=0: left alone, said so; the second array faults.
 * user: MALLOC_TOP_PAD_ set by the caller: left alone, the variable named.
 * In a sanitizer build the sanitizer's allocator is left alone (said so) and
 * the page counts are not checked: it does not use glibc's heap. */
#include <sys/resource.h>

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
  const size_t bytes = 24 * (size_t)MIB; /* between glibc's default threshold and ours */
  const long pages = (long)(bytes / 4096);
  if (!strcmp(mode, "tuned")) {
    HX_ASSERT(set == 1, "tuned: set");
    char want[160];
    snprintf(want, sizeof want, "glibc, mmap threshold %d MiB, trim threshold %d MiB, top pad %d MiB",
             HX_MALLOC_MMAP_THRESHOLD / MIB, HX_MALLOC_TRIM_THRESHOLD / MIB, HX_MALLOC_TOP_PAD / MIB);
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
  return hx_test_result();
#endif
}
