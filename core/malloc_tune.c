/* The C library's allocator set for a solver's setup (see hx_core.h and
 * docs/log/performance.md "The allocator's settings"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_core.h"

/* glibc's allocator, not a sanitizer's in its place */
#if defined(__GLIBC__) && !defined(HEXCG_SANITIZE) && !defined(__SANITIZE_ADDRESS__)
#define HX_TUNE_GLIBC 1
#include <malloc.h>
#endif

static char tune_info[160] = "not set up (hx_malloc_tune not called)";

const char *hx_malloc_tune_info(void) { return tune_info; }

#if defined(HX_TUNE_GLIBC)
/* the user's own settings of the three, through glibc's variables */
static const char *user_setting(void) {
  static const char *const vars[] = {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return vars[i];
  const char *t = getenv("GLIBC_TUNABLES");
  if (t && strstr(t, "glibc.malloc.")) return "GLIBC_TUNABLES";
  return NULL;
}
#endif

int hx_malloc_tune(void) {
  const char *off = hx_env("HEXCG_MALLOC_TUNE");
  if (off && !strcmp(off, "0")) {
    snprintf(tune_info, sizeof tune_info, "the C library's defaults (HEXCG_MALLOC_TUNE=0)");
    return 0;
  }
#if defined(HEXCG_SANITIZE) || defined(__SANITIZE_ADDRESS__)
  snprintf(tune_info, sizeof tune_info, "the sanitizer's allocator (not tuned)");
  return 0;
#elif defined(HX_TUNE_GLIBC)
  const char *user = user_setting();
  if (user) {
    snprintf(tune_info, sizeof tune_info, "glibc, as %s sets it", user);
    return 0;
  }
  /* a fixed mmap threshold (glibc stops raising it): the large arrays go
   * back to the kernel at free instead of fragmenting the heap; below it a
   * freed array stays in the heap (trim threshold) for the next */
  if (mallopt(M_MMAP_THRESHOLD, HX_MALLOC_MMAP_THRESHOLD) != 1 ||
      mallopt(M_TRIM_THRESHOLD, HX_MALLOC_TRIM_THRESHOLD) != 1) {
    snprintf(tune_info, sizeof tune_info, "glibc's defaults (mallopt refused the settings)");
    return 0;
  }
  snprintf(tune_info, sizeof tune_info, "glibc, mmap threshold %d MiB, trim threshold %d MiB",
           HX_MALLOC_MMAP_THRESHOLD >> 20, HX_MALLOC_TRIM_THRESHOLD >> 20);
  return 1;
#else
  snprintf(tune_info, sizeof tune_info, "the C library's defaults (not glibc)");
  return 0;
#endif
}
