#include "hx_precond.h"
#include "precond_impl.h"

#include <HYPRE_utilities.h>
#include <pthread.h>
#include <string.h>

void hx_precond_hypre_version(char *buf, size_t len) {
  /* the library's own numbers, in HYPRE_Version's words; HYPRE_Version
   * itself allocates a string no public call frees (LeakSanitizer reports it
   * in hexcg --version of a sanitizer build) */
  HYPRE_Int major = 0, minor = 0, patch = 0;
  if (HYPRE_VersionNumber(&major, &minor, &patch, NULL) == 0)
    snprintf(buf, len, "HYPRE Release Version %d.%d.%d", (int)major, (int)minor, (int)patch);
  else
    snprintf(buf, len, "hypre (unknown version)");
}

int hx_hypre_error(const char *file, int line, const char *func, int herr, const char *expr) {
  if (herr == 0) return HX_SUCCESS;
  /* hypre's error flag is a sticky, process-wide bit set: forget it now, so
   * the next call does not report this one again */
  HYPRE_ClearAllErrors();
  /* BoomerAMG used as a preconditioner (fixed cycles, tolerance 0) reports
   * "did not converge": expected, not an error */
  if ((herr & ~HYPRE_ERROR_CONV) == 0) return HX_SUCCESS;
  char descr[512];
  memset(descr, 0, sizeof descr);
  HYPRE_DescribeError(herr & ~HYPRE_ERROR_CONV, descr);
  descr[sizeof descr - 1] = '\0';
  size_t len = strlen(descr);
  while (len > 0 && (descr[len - 1] == '\n' || descr[len - 1] == ' ')) descr[--len] = '\0';
  return hx_error_set(file, line, func, HX_ERR_HYPRE, "%s failed: hypre error %d (%s)", expr, herr,
                      len ? descr : "no description");
}

/* HYPRE_Init / HYPRE_Finalize are process-wide: count the users. */
static pthread_mutex_t g_hypre_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_hypre_users = 0;

int hx_hypre_acquire(void) {
  int herr = 0;
  pthread_mutex_lock(&g_hypre_lock);
  if (g_hypre_users == 0) herr = HYPRE_Init();
  if (herr == 0) g_hypre_users++;
  pthread_mutex_unlock(&g_hypre_lock);
  HX_HYPRE(herr);
  return HX_SUCCESS;
}

int hx_hypre_release(void) {
  int herr = 0;
  pthread_mutex_lock(&g_hypre_lock);
  if (g_hypre_users > 0 && --g_hypre_users == 0) herr = HYPRE_Finalize();
  pthread_mutex_unlock(&g_hypre_lock);
  HX_HYPRE(herr);
  return HX_SUCCESS;
}
