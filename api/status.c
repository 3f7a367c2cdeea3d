/* The API's status codes and messages, version and defaults (hexcg.h). */
#include <stdio.h>
#include <string.h>

#include "hexcg.h"
#include "hx_api.h"
#include "hx_version_gen.h"

/* the message of the last failed call on this thread (hexcg_last_error) */
static _Thread_local char g_msg[4096];

const char *hexcg_last_error(void) { return g_msg; }

void hx_api_clear(void) { g_msg[0] = '\0'; }

int hx_api_status(int code) {
  switch (code) {
    case HX_SUCCESS: return HEXCG_OK;
    case HX_ERR_INPUT: return HEXCG_ERR_INPUT;
    case HX_ERR_ARG: return HEXCG_ERR_ARG;
    case HX_ERR_MEM: return HEXCG_ERR_MEMORY;
    case HX_ERR_IO: return HEXCG_ERR_IO;
    case HX_ERR_MPI: return HEXCG_ERR_MPI;
    case HX_ERR_CUDA:
    case HX_ERR_NO_DEVICE: return HEXCG_ERR_DEVICE;
    case HX_ERR_NUMERIC:
    case HX_ERR_HYPRE:
    case HX_ERR_LIB: return HEXCG_ERR_NUMERIC;
    case HX_ERR_NOT_IMPL:
    case HX_ERR_UNSUPPORTED: return HEXCG_ERR_UNSUPPORTED;
    default: return HEXCG_ERR_INTERNAL;
  }
}

int hx_api_fail(int code) {
  if (code == HX_SUCCESS) return HEXCG_OK;
  const char *m = hx_error_message();
  snprintf(g_msg, sizeof g_msg, "%s", m && m[0] ? m : hx_error_name(code));
  /* the message ends without the newline hexcg run's printing adds */
  size_t n = strlen(g_msg);
  while (n > 0 && g_msg[n - 1] == '\n') g_msg[--n] = '\0';
  hx_error_clear();
  return hx_api_status(code);
}

int hx_api_arg(const char *fmt, const char *what) {
  snprintf(g_msg, sizeof g_msg, fmt, what);
  return HEXCG_ERR_ARG;
}

const char *hexcg_status_name(int status) {
  static const char *const names[] = {"HEXCG_OK",        "HEXCG_ERR_INPUT",   "HEXCG_ERR_ARG",
                                      "HEXCG_ERR_MEMORY", "HEXCG_ERR_IO",      "HEXCG_ERR_MPI",
                                      "HEXCG_ERR_DEVICE", "HEXCG_ERR_NUMERIC", "HEXCG_ERR_UNSUPPORTED",
                                      "HEXCG_ERR_INTERNAL"};
  if (status < 0 || status >= (int)(sizeof names / sizeof names[0])) return "HEXCG_ERR_UNKNOWN";
  return names[status];
}

const char *hexcg_version(int *major, int *minor, int *patch) {
  int a = 0, b = 0, c = 0;
  if (sscanf(HX_VERSION_FULL, "%d.%d.%d", &a, &b, &c) < 1) a = b = c = 0;
  if (major) *major = a;
  if (minor) *minor = b;
  if (patch) *patch = c;
  return HX_VERSION_FULL " (git " HX_GIT_HASH ")";
}

hexcg_options hexcg_options_default(void) {
  hexcg_options o;
  memset(&o, 0, sizeof o);
  return o;
}

hexcg_field hexcg_field_value(double v) {
  hexcg_field f;
  memset(&f, 0, sizeof f);
  f.value = v;
  return f;
}

hexcg_field hexcg_field_expr(const char *expr) {
  hexcg_field f;
  memset(&f, 0, sizeof f);
  f.expr = expr;
  return f;
}
