/* Fuzz target: expressions (hx_expr_create, as the case loader calls it for
 * rhs/exact/boundary values and coefficients). The input is the expression
 * text; a compiled expression is evaluated, which must not crash for any
 * point, and one that says it is constant must give the same value at two
 * points (an independent check of the constant flag). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hx_fuzz.h"
#include "hx_io.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hx_fuzz_init();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = hx_fuzz_strndup(data, size);
  hx_expr *e = NULL;
  int err = hx_expr_create(text, &e);
  if (!err) {
    const double px[3] = {0.25, -1.5, 3e5}, py[3] = {0.5, 0, -2e-3}, pz[3] = {0.75, 7, 1};
    double out[3];
    hx_expr_eval_array(e, 3, px, py, pz, out);
    const double a = hx_expr_eval(e, px[0], py[0], pz[0]);
    if (!(a == out[0] || (isnan(a) && isnan(out[0])))) {
      fprintf(stderr, "fuzz_expr: '%s': eval %.17g but eval_array %.17g at the same point\n", text, a,
              out[0]);
      abort();
    }
    if (hx_expr_is_constant(e)) {
      const double b = hx_expr_eval(e, px[1], py[1], pz[1]);
      if (!(a == b || (isnan(a) && isnan(b)))) {
        fprintf(stderr, "fuzz_expr: '%s' says it is constant but gives %.17g and %.17g\n", text, a, b);
        abort();
      }
    }
    hx_expr_destroy(&e);
  }
  hx_fuzz_done(err, "hx_expr_create");
  free(text);
  return 0;
}
