/* The fused CG kernels (hx_array_cg_update, hx_array_r_update, hx_array_xpay,
 * hx_array_pointwise_mult, hx_array_norm2sq) against plain references on
 * random data: lengths 0, 1, odd, around HX_REDUCE_CHUNK; reduction lengths
 * nred = n, 0, inside the first chunk, on and around a chunk boundary.
 * Reductions must be bit-identical across repeated calls; on the cpu
 * backend they must also equal, bit for bit, the sequential definition
 * (chunk sums of hx_stream_math.h added in chunk order), whatever
 * OMP_NUM_THREADS is. */
#include "hx_kernels.h"
#include "hx_stream_math.h"
#include "hx_test.h"

#define EPS 2.220446049250313e-16

typedef struct {
  hx_backend b;
  int is_cpu;
  double *d[4]; /* backend buffers */
} ctx_t;

static void fill(hx_test_rng *rng, int64_t n, double *h) {
  for (int64_t i = 0; i < n; i++) h[i] = hx_test_rand(rng);
}

/* |out - ref| within k rounding errors of the terms (|t1| + |t2|) */
static int64_t count_bad(int64_t n, const double *out, const double *ref, const double *t1, const double *t2,
                         double k) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs(out[i] - ref[i]) > k * EPS * (fabs(t1[i]) + fabs(t2[i]))) bad++;
  return bad;
}

/* sequential definition of the chunked reduction of r^2 over [0, nred) */
static double chunked_sq(const double *r, int64_t nred) {
  double s = 0.0;
  for (int64_t lo = 0; lo < nred; lo += HX_REDUCE_CHUNK) {
    const int64_t hi = lo + HX_REDUCE_CHUNK < nred ? lo + HX_REDUCE_CHUNK : nred;
    s += hx_chunk_norm2sq(r, (long)lo, (long)hi);
  }
  return s;
}

static int check_case(ctx_t *c, int64_t n, int64_t nred, uint64_t seed) {
  hx_test_rng rng = {seed};
  const size_t bytes = sizeof(double) * (size_t)(n + 1);
  double *x = malloc(bytes), *r = malloc(bytes), *p = malloc(bytes), *w = malloc(bytes);
  double *xo = malloc(bytes), *ro = malloc(bytes), *xr = malloc(bytes), *rref = malloc(bytes);
  double *ap = malloc(bytes), *aw = malloc(bytes);
  fill(&rng, n, x), fill(&rng, n, r), fill(&rng, n, p), fill(&rng, n, w);
  const double alpha = 0.3712890625 + 0.25 * hx_test_rand(&rng);
  double *dx = c->d[0], *dr = c->d[1], *dp = c->d[2], *dw = c->d[3];
  const size_t nb = sizeof(double) * (size_t)n;

  /* plain reference */
  long double rr_ref = 0.0L, rr_abs = 0.0L;
  for (int64_t i = 0; i < n; i++) {
    ap[i] = alpha * p[i], aw[i] = alpha * w[i];
    xr[i] = x[i] + ap[i];
    rref[i] = r[i] - aw[i];
    if (i < nred)
      rr_ref += (long double)rref[i] * rref[i],
          rr_abs += (long double)(fabs(r[i]) + fabs(aw[i])) * (fabs(r[i]) + fabs(aw[i]));
  }
  /* rounding: each r_i carries <= 2 eps relative to |r|+|aw| (product + sum,
   * or one fma), squaring and the sum of nred terms add (nred + 2) eps */
  const double tol_rr = ((double)nred + 8.0) * EPS * (double)rr_abs + 1e-300;

  /* ---- BS5: x += alpha p; r -= alpha w; rr */
  double rr1, rr2;
  HX_TCALL(hx_mem_to_device(c->b, dx, x, nb));
  HX_TCALL(hx_mem_to_device(c->b, dr, r, nb));
  HX_TCALL(hx_mem_to_device(c->b, dp, p, nb));
  HX_TCALL(hx_mem_to_device(c->b, dw, w, nb));
  HX_TCALL(hx_array_cg_update(c->b, n, nred, dx, dr, dp, dw, alpha, &rr1));
  HX_TCALL(hx_mem_to_host(c->b, xo, dx, nb));
  HX_TCALL(hx_mem_to_host(c->b, ro, dr, nb));
  HX_ASSERT(count_bad(n, xo, xr, x, ap, 2.0) == 0, "n=%lld cg_update: x wrong", (long long)n);
  HX_ASSERT(count_bad(n, ro, rref, r, aw, 2.0) == 0, "n=%lld cg_update: r wrong", (long long)n);
  HX_ASSERT(fabs(rr1 - (double)rr_ref) <= tol_rr, "n=%lld nred=%lld cg_update rr %.17g ref %.17g",
            (long long)n, (long long)nred, rr1, (double)rr_ref);
  if (c->is_cpu) {
    const double seq = chunked_sq(ro, nred);
    HX_ASSERT(memcmp(&seq, &rr1, sizeof seq) == 0, "n=%lld nred=%lld cg_update rr %.17g != chunked %.17g",
              (long long)n, (long long)nred, rr1, seq);
  }
  /* same inputs again: bit-identical */
  HX_TCALL(hx_mem_to_device(c->b, dx, x, nb));
  HX_TCALL(hx_mem_to_device(c->b, dr, r, nb));
  HX_TCALL(hx_array_cg_update(c->b, n, nred, dx, dr, dp, dw, alpha, &rr2));
  HX_ASSERT(memcmp(&rr1, &rr2, sizeof rr1) == 0, "n=%lld cg_update rr not deterministic", (long long)n);

  /* ---- 3-word variant: r -= alpha w; rr (x untouched) */
  HX_TCALL(hx_mem_to_device(c->b, dx, x, nb));
  HX_TCALL(hx_mem_to_device(c->b, dr, r, nb));
  HX_TCALL(hx_array_r_update(c->b, n, nred, dr, dw, alpha, &rr1));
  HX_TCALL(hx_mem_to_host(c->b, ro, dr, nb));
  HX_TCALL(hx_mem_to_host(c->b, xo, dx, nb));
  HX_ASSERT(count_bad(n, ro, rref, r, aw, 2.0) == 0, "n=%lld r_update: r wrong", (long long)n);
  HX_ASSERT(n == 0 || memcmp(xo, x, nb) == 0, "n=%lld r_update touched x", (long long)n);
  HX_ASSERT(fabs(rr1 - (double)rr_ref) <= tol_rr, "n=%lld nred=%lld r_update rr %.17g ref %.17g",
            (long long)n, (long long)nred, rr1, (double)rr_ref);
  if (c->is_cpu) {
    const double seq = chunked_sq(ro, nred);
    HX_ASSERT(memcmp(&seq, &rr1, sizeof seq) == 0, "n=%lld r_update rr not the chunked sum", (long long)n);
  }
  HX_TCALL(hx_mem_to_device(c->b, dr, r, nb));
  HX_TCALL(hx_array_r_update(c->b, n, nred, dr, dw, alpha, &rr2));
  HX_ASSERT(memcmp(&rr1, &rr2, sizeof rr1) == 0, "n=%lld r_update rr not deterministic", (long long)n);

  /* ---- BS3 norm over all n entries */
  long double nn_ref = 0.0L;
  for (int64_t i = 0; i < n; i++) nn_ref += (long double)x[i] * x[i];
  double nn1, nn2;
  HX_TCALL(hx_array_norm2sq(c->b, n, dx, &nn1));
  HX_TCALL(hx_array_norm2sq(c->b, n, dx, &nn2));
  HX_ASSERT(fabs(nn1 - (double)nn_ref) <= ((double)n + 2.0) * EPS * (double)nn_ref + 1e-300,
            "n=%lld norm2sq %.17g ref %.17g", (long long)n, nn1, (double)nn_ref);
  HX_ASSERT(memcmp(&nn1, &nn2, sizeof nn1) == 0, "n=%lld norm2sq not deterministic", (long long)n);
  if (c->is_cpu) {
    const double seq = chunked_sq(x, n);
    HX_ASSERT(memcmp(&seq, &nn1, sizeof seq) == 0, "n=%lld norm2sq not the chunked sum", (long long)n);
  }

  /* ---- p = z + beta p (z = w here) */
  const double beta = -0.6259765625;
  for (int64_t i = 0; i < n; i++) ap[i] = beta * p[i], xr[i] = w[i] + ap[i];
  HX_TCALL(hx_array_xpay(c->b, n, dp, dw, beta));
  HX_TCALL(hx_mem_to_host(c->b, xo, dp, nb));
  HX_ASSERT(count_bad(n, xo, xr, w, ap, 2.0) == 0, "n=%lld xpay wrong", (long long)n);

  /* ---- y = x .* z: separate output, then in place (y == x), then y == z.
   * A product is correctly rounded on both sides: exact equality. */
  for (int64_t i = 0; i < n; i++) xr[i] = x[i] * w[i];
  HX_TCALL(hx_mem_to_device(c->b, dp, x, nb));
  HX_TCALL(hx_array_pointwise_mult(c->b, n, dr, dp, dw));
  HX_TCALL(hx_mem_to_host(c->b, xo, dr, nb));
  HX_ASSERT(n == 0 || memcmp(xo, xr, nb) == 0, "n=%lld pointwise_mult wrong", (long long)n);
  HX_TCALL(hx_array_pointwise_mult(c->b, n, dp, dp, dw));
  HX_TCALL(hx_mem_to_host(c->b, xo, dp, nb));
  HX_ASSERT(n == 0 || memcmp(xo, xr, nb) == 0, "n=%lld pointwise_mult in place (y == x) wrong", (long long)n);
  HX_TCALL(hx_mem_to_device(c->b, dp, x, nb));
  HX_TCALL(hx_array_pointwise_mult(c->b, n, dw, dp, dw));
  HX_TCALL(hx_mem_to_host(c->b, xo, dw, nb));
  HX_ASSERT(n == 0 || memcmp(xo, xr, nb) == 0, "n=%lld pointwise_mult in place (y == z) wrong", (long long)n);

  free(x), free(r), free(p), free(w), free(xo), free(ro), free(xr), free(rref), free(ap), free(aw);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ctx_t c;
  memset(&c, 0, sizeof c);
  HX_TCALL(hx_test_backends(argc, argv, &c.b, NULL));
  c.is_cpu = hx_backend_get_kind(c.b) == HX_BACKEND_CPU;
  const int64_t nmax = 3 * HX_REDUCE_CHUNK + 1001;
  for (int k = 0; k < 4; k++) HX_TCALL(hx_mem_alloc(c.b, sizeof(double) * nmax, (void **)&c.d[k]));

  const int64_t lens[] = {0, 1, 2, 3, 7, 31, 4095, 4096, 4097, 12289, nmax};
  uint64_t seed = 0x243F6A8885A308D3ull;
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    const int64_t n = lens[i];
    const int64_t nreds[] = {n,
                             0,
                             n / 2,
                             n > 0 ? n - 1 : 0,
                             n > HX_REDUCE_CHUNK ? HX_REDUCE_CHUNK : n,
                             n > HX_REDUCE_CHUNK + 1 ? HX_REDUCE_CHUNK + 1 : n};
    for (size_t j = 0; j < sizeof nreds / sizeof *nreds; j++) check_case(&c, n, nreds[j], seed++);
  }

  /* bad reduction lengths are argument errors */
  double rr = 1.0;
  HX_ASSERT(hx_array_cg_update(c.b, 5, 6, c.d[0], c.d[1], c.d[2], c.d[3], 1.0, &rr) == HX_ERR_ARG,
            "nred > n refused");
  HX_ASSERT(strstr(hx_error_message(), "reduction length") != NULL, "message names the reduction length");
  HX_ASSERT(hx_array_r_update(c.b, 5, -1, c.d[1], c.d[3], 1.0, &rr) == HX_ERR_ARG, "nred < 0 refused");
  HX_ASSERT(hx_array_norm2sq(c.b, -1, c.d[0], &rr) == HX_ERR_ARG, "n < 0 refused");
  hx_error_clear();

  /* the device timer: -1 on cpu, a non-negative time on cuda */
  hx_dev_timer t;
  double s = 0.0;
  HX_TCALL(hx_dev_timer_create(c.b, &t));
  HX_ASSERT(hx_dev_timer_elapsed(t, &s) == HX_ERR_ARG, "elapsed before start/stop refused");
  hx_error_clear();
  HX_TCALL(hx_dev_timer_start(t));
  HX_TCALL(hx_array_norm2sq(c.b, nmax, c.d[0], &rr));
  HX_TCALL(hx_dev_timer_stop(t));
  HX_TCALL(hx_dev_timer_elapsed(t, &s));
  if (c.is_cpu)
    HX_ASSERT(s == -1.0, "cpu device timer gives -1, got %g", s);
  else
    HX_ASSERT(s >= 0.0 && s < 10.0, "cuda event time %g s", s);
  HX_TCALL(hx_dev_timer_destroy(&t));
  HX_ASSERT(t == NULL, "destroy nulls the handle");

  for (int k = 0; k < 4; k++) HX_TCALL(hx_mem_free(c.b, (void **)&c.d[k]));
  HX_TCALL(hx_backend_destroy(&c.b));
  MPI_Finalize();
  return hx_test_result();
}
