/* Private to api/ and app/: the solver object behind hexcg.h and the
 * internal calls that both the public API and `hexcg run` (app/run_case.c)
 * use, so the application and the library cannot drift apart. */
#ifndef HX_API_H
#define HX_API_H

#include "hexcg.h"
#include "hx_core.h"

/* hexcg.h's status of an hx error code */
int hx_api_status(int code);
/* A failed internal call: its message becomes hexcg_last_error's, the hx
 * error state is cleared; returns the status (HEXCG_OK for HX_SUCCESS). */
int hx_api_fail(int code);
/* An argument error: fmt with one %s (what) becomes the message. */
int hx_api_arg(const char *fmt, const char *what);
/* clears hexcg_last_error's message (a call that succeeds) */
void hx_api_clear(void);

#endif
