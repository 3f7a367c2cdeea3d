/* Vector ops of a backend against a plain reference on random data, for
 * lengths 0, 1, odd sizes and sizes around the reduction chunk. Also: the
 * dot product is bit-identical across repeated calls (deterministic). */
#include "hx_kernels.h"
#include "hx_test.h"

static int check_len(hx_backend b, int64_t n, uint64_t seed) {
  hx_test_rng rng = {seed};
  double *hx = malloc(sizeof(double) * (n + 1)), *hy = malloc(sizeof(double) * (n + 1));
  double *out = malloc(sizeof(double) * (n + 1));
  for (int64_t i = 0; i < n; i++) hx[i] = hx_test_rand(&rng), hy[i] = hx_test_rand(&rng);
  hx_vec x, y;
  HX_TCALL(hx_vec_create(b, n, &x));
  HX_TCALL(hx_vec_create(b, n, &y));
  HX_TCALL(hx_vec_set_host(x, hx));
  HX_TCALL(hx_vec_set_host(y, hy));

  /* dot and norm: reference by compensated-free plain loop in long double */
  long double rdot = 0, rnrm = 0, rabs = 0;
  for (int64_t i = 0; i < n; i++) {
    rdot += (long double)hx[i] * hy[i];
    rnrm += (long double)hx[i] * hx[i];
    rabs += fabsl((long double)hx[i] * hy[i]);
  }
  double d1, d2, nn;
  HX_TCALL(hx_vec_dot(x, y, &d1));
  HX_TCALL(hx_vec_dot(x, y, &d2));
  HX_TCALL(hx_vec_norm2sq(x, &nn));
  /* rounding bound of a sum of n products: n eps sum|x_i y_i| */
  double tol = (double)(n + 1) * 2.3e-16 * (double)rabs + 1e-300;
  HX_ASSERT(fabs(d1 - (double)rdot) <= tol, "n=%lld dot %.17g ref %.17g", (long long)n, d1, (double)rdot);
  HX_ASSERT(memcmp(&d1, &d2, sizeof d1) == 0, "n=%lld dot not deterministic", (long long)n);
  HX_ASSERT(fabs(nn - (double)rnrm) <= (double)(n + 1) * 2.3e-16 * (double)rnrm + 1e-300,
            "n=%lld norm2sq %.17g ref %.17g", (long long)n, nn, (double)rnrm);

  /* axpby: exact (one fma-free expression per entry, same on both sides) */
  const double a = 0.75, bb = -1.25;
  HX_TCALL(hx_vec_axpby(y, a, x, bb));
  HX_TCALL(hx_vec_get_host(y, out));
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs(out[i] - (a * hx[i] + bb * hy[i])) > 4e-16 * (fabs(a * hx[i]) + fabs(bb * hy[i]))) bad++;
  HX_ASSERT(bad == 0, "n=%lld axpby: %d wrong entries", (long long)n, bad);

  /* copy: exact */
  HX_TCALL(hx_vec_copy(y, x));
  HX_TCALL(hx_vec_get_host(y, out));
  HX_ASSERT(n == 0 || memcmp(out, hx, sizeof(double) * n) == 0, "n=%lld copy differs", (long long)n);

  /* set_value */
  HX_TCALL(hx_vec_set_value(y, 2.5));
  HX_TCALL(hx_vec_get_host(y, out));
  bad = 0;
  for (int64_t i = 0; i < n; i++) bad += out[i] != 2.5;
  HX_ASSERT(bad == 0, "n=%lld set_value", (long long)n);

  HX_TCALL(hx_vec_destroy(&x));
  HX_TCALL(hx_vec_destroy(&y));
  HX_ASSERT(x == NULL && y == NULL, "destroy nulls handles");
  free(hx), free(hy), free(out);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_backend b;
  HX_TCALL(hx_test_backends(argc, argv, &b, NULL));
  const int64_t lens[] = {0, 1, 2, 3, 7, 31, 4095, 4096, 4097, 12289, 100003};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) check_len(b, lens[i], 0x9E3779B97F4A7C15ull + i);

  /* size mismatch is an error, not a crash */
  hx_vec x, y;
  HX_TCALL(hx_vec_create(b, 5, &x));
  HX_TCALL(hx_vec_create(b, 6, &y));
  HX_ASSERT(hx_vec_copy(y, x) == HX_ERR_ARG, "size mismatch detected");
  hx_error_clear();
  hx_vec_destroy(&x);
  hx_vec_destroy(&y);
  HX_ASSERT(hx_vec_destroy(&x) == HX_SUCCESS, "destroy(NULL) is fine");

  /* unknown backend names are input errors */
  hx_backend bad;
  HX_ASSERT(hx_backend_create("opencl", &bad) == HX_ERR_INPUT && bad == NULL, "unknown backend refused");
  HX_ASSERT(strstr(hx_error_message(), "allowed: cpu, cuda") != NULL, "message lists allowed names");
  hx_error_clear();
  HX_TCALL(hx_backend_destroy(&b));
  MPI_Finalize();
  return hx_test_result();
}
