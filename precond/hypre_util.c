#include "hx_precond.h"

#include <HYPRE_utilities.h>
#include <string.h>

void hx_precond_hypre_version(char *buf, size_t len) {
  char *v = NULL;
  HYPRE_Version(&v);
  snprintf(buf, len, "%s", v ? v : "hypre (unknown version)");
  /* HYPRE_Version allocates with hypre's allocator; the string is small and
   * queried once per run, so it is left to process exit. */
}
