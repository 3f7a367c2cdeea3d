/* libyaml parses a flow/block mixture; the event stream gives the expected
 * scalars with their line numbers, and a syntax error is reported with the
 * right line. */
#include <yaml.h>

#include "hx_test.h"

static const char *good =
    "mesh:\n"
    "  type: box\n"
    "  elements: [8, 8, 8]\n"
    "order: 7\n"
    "solver: {type: pcg, tol: 1.0e-8}\n";

static const char *bad = "mesh:\n  type: box\n  elements: [8, 8\norder: 7\n";

int main(void) {
  yaml_parser_t p;
  yaml_event_t ev;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_string(&p, (const unsigned char *)good, strlen(good));
  int nscalar = 0, done = 0, seen_tol_line = -1, seen_order = 0;
  while (!done) {
    HX_ASSERT(yaml_parser_parse(&p, &ev), "parse error on valid input: %s", p.problem);
    if (p.error != YAML_NO_ERROR) break;
    if (ev.type == YAML_SCALAR_EVENT) {
      nscalar++;
      const char *v = (const char *)ev.data.scalar.value;
      if (!strcmp(v, "1.0e-8")) seen_tol_line = (int)ev.start_mark.line + 1;
      if (!strcmp(v, "7")) seen_order = 1;
    }
    done = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  HX_ASSERT(nscalar == 14, "expected 14 scalars, got %d", nscalar);
  HX_ASSERT(seen_tol_line == 5, "tol on line 5, got %d", seen_tol_line);
  HX_ASSERT(seen_order, "order scalar");

  yaml_parser_initialize(&p);
  yaml_parser_set_input_string(&p, (const unsigned char *)bad, strlen(bad));
  int ok = 1;
  while (ok) {
    ok = yaml_parser_parse(&p, &ev);
    if (!ok) break;
    int end = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
    if (end) break;
  }
  HX_ASSERT(!ok, "syntax error detected");
  HX_ASSERT(p.problem_mark.line + 1 >= 3, "error located at line %d", (int)p.problem_mark.line + 1);
  yaml_parser_delete(&p);
  return hx_test_result();
}
