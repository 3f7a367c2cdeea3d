/* hexcg bench stream (placeholder until its issue lands). */
#include "hx_app.h"
#include "hx_core.h"

int hx_bench_stream(hx_app_ctx *ctx, int argc, char **argv) {
  (void)argc;
  (void)argv;
  return hx_app_fail(ctx, HX_ERROR(HX_ERR_NOT_IMPL, "'hexcg bench stream' is not implemented yet"), 1);
}
