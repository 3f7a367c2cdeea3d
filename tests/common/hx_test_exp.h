/* The exact solution u = exp(x y z) (not separable) of -lap u + lambda u = f
 * for the solve tests (header-only): hx_field callbacks whose context is an
 * hx_test_exp_prob (lambda), or NULL for lambda = 0. */
#ifndef HX_TEST_EXP_H
#define HX_TEST_EXP_H

#include <math.h>

typedef struct {
  double lambda;
} hx_test_exp_prob;

static inline double hx_test_u_exp(const void *c, double x, double y, double z) {
  (void)c;
  return exp(x * y * z);
}

static inline double hx_test_f_exp(const void *c, double x, double y, double z) {
  const double lap = -(y * y * z * z + x * x * z * z + x * x * y * y);
  if (!c) return lap * exp(x * y * z);
  return (lap + ((const hx_test_exp_prob *)c)->lambda) * exp(x * y * z);
}

#endif
