/* Error handling: HX_CHECK records the message, HX_CALL adds one traceback
 * frame per level, hx_error_clear resets; allocation helpers. */
#include "hx_test.h"

static int level2(int x) {
  HX_CHECK(x > 0, HX_ERR_INPUT, "x must be positive, got %d", x);
  return HX_SUCCESS;
}
static int level1(int x) {
  HX_CALL(level2(x));
  return HX_SUCCESS;
}
static int level0(int x) {
  HX_CALL(level1(x));
  return HX_SUCCESS;
}
static int bare(void) { return HX_ERR_IO; }
static int calls_bare(void) {
  HX_CALL(bare());
  return HX_SUCCESS;
}

int main(void) {
  HX_ASSERT(level0(1) == HX_SUCCESS, "success path");
  HX_ASSERT(hx_error_code() == HX_SUCCESS, "no error recorded");

  int e = level0(-3);
  HX_ASSERT(e == HX_ERR_INPUT, "code propagates, got %d", e);
  HX_ASSERT(strstr(hx_error_message(), "x must be positive, got -3") != NULL, "message: %s",
            hx_error_message());
  char buf[4096];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  hx_error_print(f, 3, 1);
  fclose(f);
  HX_ASSERT(strstr(buf, "[rank 3] error: x must be positive") != NULL, "rank tag: %s", buf);
  HX_ASSERT(strstr(buf, "level2()") && strstr(buf, "level1()") && strstr(buf, "level0()"),
            "three frames: %s", buf);
  HX_ASSERT(strstr(buf, "core/t001-error.c:") != NULL, "file:line frames: %s", buf);
  hx_error_clear();
  HX_ASSERT(hx_error_code() == HX_SUCCESS && hx_error_message()[0] == '\0', "cleared");

  e = calls_bare();
  HX_ASSERT(e == HX_ERR_IO, "bare code propagates");
  HX_ASSERT(strstr(hx_error_message(), "HX_ERR_IO") != NULL, "synthesised message: %s", hx_error_message());
  hx_error_clear();

  double *p = NULL;
  HX_ASSERT(HX_ALLOC(&p, 10) == HX_SUCCESS && p && p[9] == 0.0, "calloc zeroes");
  hx_free_host(&p);
  HX_ASSERT(p == NULL, "free nulls");
  HX_ASSERT(HX_ALLOC(&p, 0) == HX_SUCCESS && p != NULL, "zero-size allocation is valid");
  hx_free_host(&p);
  e = hx_calloc(SIZE_MAX / 2, 16, &p);
  HX_ASSERT(e == HX_ERR_MEM && p == NULL, "overflowing allocation refused");
  hx_error_clear();

  hx_timer_start(HX_T_IO);
  hx_timer_stop(HX_T_IO);
  HX_ASSERT(hx_timer_count(HX_T_IO) == 1 && hx_timer_get(HX_T_IO) >= 0.0, "timer counts");
  HX_ASSERT(!strcmp(hx_timer_name(HX_T_OPERATOR), "operator"), "timer names");
  HX_ASSERT(hx_peak_rss_bytes() > 0, "peak RSS known on Linux");
  return hx_test_result();
}
