/* Exit statuses of the subcommands and the one place an error is printed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "hx_app.h"
#include "hx_core.h"

/* a backend this build or machine cannot provide was asked for: bad input
 * (as `hexcg run` reports it), for every subcommand */
int hx_app_status(int code) {
  return code == HX_SUCCESS ? 0 : code == HX_ERR_INPUT || code == HX_ERR_NO_DEVICE ? 2 : 1;
}

int hx_app_fail(const hx_app_ctx *ctx, int code, int collective) {
  if (!collective || ctx->rank == 0) hx_error_print(stderr, ctx->rank, hx_log_get_level() >= HX_LOG_VERBOSE);
  return hx_app_status(code);
}

int hx_app_usage_exit(const hx_app_ctx *ctx, int pa, const char *cmd, const char *msg, void (*usage)(FILE *)) {
  if (ctx->rank == 0) {
    if (pa == 2) fprintf(stderr, "hexcg %s: %s\n\n", cmd, msg);
    usage(pa == 2 ? stderr : stdout);
  }
  return pa == 2 ? 2 : 0;
}

int hx_app_parse_count(const char *val, int *n) {
  char *end = NULL;
  errno = 0;
  const long k = strtol(val, &end, 10);
  if (!val[0] || *end || errno || k < 0 || k > 1000000000L) return 0;
  *n = (int)k;
  return 1;
}
