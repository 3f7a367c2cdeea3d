/* Expressions through libmatheval: pi and e are constants, '^' is a power,
 * only x, y, z are variables, syntax errors are HX_ERR_INPUT, the array
 * version matches the scalar one. */
#include "hx_io.h"
#include "hx_test.h"

int main(void) {
  hx_expr *e = NULL;
  HX_TCALL(hx_expr_create("3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)", &e));
  double v = hx_expr_eval(e, 0.5, 0.5, 0.5), ref = 3 * M_PI * M_PI;
  HX_ASSERT(fabs(v - ref) < 1e-13 * ref, "rhs at the centre: %.17g, expected %.17g", v, ref);
  v = hx_expr_eval(e, 0.25, 0.5, 1.0 / 3.0);
  ref = 3 * M_PI * M_PI * sin(M_PI * 0.25) * sin(M_PI / 3.0);
  HX_ASSERT(fabs(v - ref) < 1e-13 * fabs(ref), "rhs: %.17g, expected %.17g", v, ref);
  HX_ASSERT(!hx_expr_is_constant(e), "uses x, y, z");
  HX_ASSERT(!strcmp(hx_expr_text(e), "3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)"), "text kept");
  double x[5], y[5], z[5], f[5];
  for (int i = 0; i < 5; i++) x[i] = 0.1 * i, y[i] = 0.3 - 0.05 * i, z[i] = 0.7 + 0.01 * i;
  hx_expr_eval_array(e, 5, x, y, z, f);
  for (int i = 0; i < 5; i++) HX_ASSERT(f[i] == hx_expr_eval(e, x[i], y[i], z[i]), "array entry %d", i);
  hx_expr_destroy(&e);
  HX_ASSERT(e == NULL, "destroy nulls the handle");
  hx_expr_destroy(&e); /* NULL is fine */

  /* pi and e are constants; '^' binds as a power; unary minus */
  HX_TCALL(hx_expr_create("pi", &e));
  HX_ASSERT(hx_expr_is_constant(e) && hx_expr_eval(e, 9, 9, 9) == M_PI, "pi = %.17g",
            hx_expr_eval(e, 0, 0, 0));
  hx_expr_destroy(&e);
  HX_TCALL(hx_expr_create("e^2 - 2^3^2 + -x", &e));
  ref = exp(2.0) - pow(pow(2.0, 3.0), 2.0) - 1.5; /* libmatheval: a^b^c = (a^b)^c (docs/case-format.md) */
  v = hx_expr_eval(e, 1.5, 0, 0);
  HX_ASSERT(fabs(v - ref) < 1e-12 * fabs(ref), "e^2 - 2^3^2 - x: %.17g, expected %.17g", v, ref);
  hx_expr_destroy(&e);
  HX_TCALL(hx_expr_create("x*y*z + sqrt(abs(y)) + exp(-z) + 1e-3", &e));
  v = hx_expr_eval(e, 2, -4, 0.5);
  ref = -4.0 + 2.0 + exp(-0.5) + 1e-3;
  HX_ASSERT(fabs(v - ref) < 1e-14, "mixed expression %.17g vs %.17g", v, ref);
  hx_expr_destroy(&e);
  HX_TCALL(hx_expr_create("  4.5 ", &e));
  HX_ASSERT(hx_expr_is_constant(e) && hx_expr_eval(e, 1, 2, 3) == 4.5, "constant");
  hx_expr_destroy(&e);

  /* errors */
  int err = hx_expr_create("sin(pi*x", &e);
  HX_ASSERT(err == HX_ERR_INPUT && e == NULL, "syntax error: %d", err);
  HX_ASSERT(strstr(hx_error_message(), "cannot parse expression 'sin(pi*x'"), "message: %s",
            hx_error_message());
  hx_error_clear();
  err = hx_expr_create("x + w", &e); /* t is the time (below) */
  HX_ASSERT(err == HX_ERR_INPUT && e == NULL, "variable w: %d", err);
  HX_ASSERT(strstr(hx_error_message(), "unknown variable 'w'"), "message: %s", hx_error_message());
  hx_error_clear();
  err = hx_expr_create("Pi*x", &e);
  HX_ASSERT(err == HX_ERR_INPUT, "Pi is not pi");
  hx_error_clear();
  err = hx_expr_create("   ", &e);
  HX_ASSERT(err == HX_ERR_INPUT, "empty expression");
  hx_error_clear();
  err = hx_expr_create("x**2", &e);
  HX_ASSERT(err == HX_ERR_INPUT, "'**' is not a power in libmatheval");
  hx_error_clear();
  /* the time t (issue 30): hx_expr_eval is t = 0, hx_expr_eval_t any t; an
   * expression without t gives the same bits either way */
  HX_TCALL(hx_expr_create("exp(-t)*sin(pi*x) + t*y - z", &e));
  HX_ASSERT(hx_expr_uses_t(e) && !hx_expr_is_constant(e), "uses t and x, y, z");
  v = hx_expr_eval_t(e, 0.3, 0.7, 0.2, 0.5);
  ref = exp(-0.5) * sin(M_PI * 0.3) + 0.5 * 0.7 - 0.2;
  HX_ASSERT(fabs(v - ref) < 1e-14, "at t = 0.5: %.17g, expected %.17g", v, ref);
  v = hx_expr_eval(e, 0.3, 0.7, 0.2);
  ref = sin(M_PI * 0.3) - 0.2;
  HX_ASSERT(fabs(v - ref) < 1e-14, "hx_expr_eval is t = 0: %.17g, expected %.17g", v, ref);
  {
    double xt[3] = {0.1, 0.5, 0.9}, yt[3] = {0.2, 0.4, 0.6}, zt[3] = {0.0, 0.5, 1.0}, ft[3];
    hx_expr_eval_array_t(e, 3, xt, yt, zt, 2.0, ft);
    for (int i = 0; i < 3; i++)
      HX_ASSERT(ft[i] == hx_expr_eval_t(e, xt[i], yt[i], zt[i], 2.0), "array entry %d at t = 2", i);
  }
  hx_expr_destroy(&e);
  HX_TCALL(hx_expr_create("cos(t)", &e));
  HX_ASSERT(hx_expr_is_constant(e) && hx_expr_uses_t(e), "cos(t): constant in space, uses t");
  HX_ASSERT(hx_expr_eval_t(e, 5, 5, 5, M_PI) == -1.0, "cos(pi) = %.17g", hx_expr_eval_t(e, 5, 5, 5, M_PI));
  hx_expr_destroy(&e);
  HX_TCALL(hx_expr_create("x*y + z", &e));
  HX_ASSERT(!hx_expr_uses_t(e), "x*y + z does not use t");
  HX_ASSERT(hx_expr_eval_t(e, 0.1, 0.2, 0.3, 7.0) == hx_expr_eval(e, 0.1, 0.2, 0.3), "no t: t ignored");
  hx_expr_destroy(&e);
  HX_ASSERT(hx_expr_create("sin(s)", &e) == HX_ERR_INPUT && strstr(hx_error_message(), "(allowed: x, y, z, t, pi, e)"),
            "another variable refused: %s", hx_error_message());
  hx_error_clear();

  return hx_test_result();
}
