/* Deferred reductions (hx_red, hx_array_*_red) against the blocking kernels
 * they replace, on random data: lengths 0, 1, odd, around HX_REDUCE_CHUNK,
 * several chunks; nred = n, 0, inside the first chunk, on a chunk boundary.
 *  - hx_array_cg_update_red + fetch == hx_array_cg_update (vectors and sum);
 *  - hx_array_dot_red + fetch == hx_array_dot;
 *  - hx_array_cg_update_diag_red == cg_update, pointwise_mult, dot (r.z and
 *    z.w) run one after the other;
 * bit for bit on the cpu backends (same chunks, lanes and order); on cuda
 * within 1e-13 max(|sum|, m) (launch shapes differ between the kernels), and the
 * vectors within 2 roundings of a plain reference. Also: several slots
 * fetched at once, a slot not written reads 0, a fetch clears the slots,
 * and the argument errors (slot range, capacity, aliased slots). */
#include "hx_hd.h" /* HX_REDUCE_CHUNK */
#include "hx_kernels.h"
#include "hx_test.h"

#define EPS 2.220446049250313e-16

static void fill(hx_test_rng *rng, int64_t n, double *h, double lo) {
  for (int64_t i = 0; i < n; i++) h[i] = lo + hx_test_rand(rng);
}

/* cuda: the blocking dot and the deferred one sum in other launch shapes;
 * a tree sum of m terms errs by at most eps log2(m) sum|terms|, and the
 * terms here are below 12 in size (|r| < 2, |z| < 6, |w| < 1), so
 * 1e-13 max(|a|, |b|, m) bounds it (m <= 2^14) */
static int same(double a, double b, int cpu, int64_t m) {
  return cpu ? a == b : fabs(a - b) <= 1e-13 * fmax(fmax(fabs(a), fabs(b)), (double)m);
}

static int vec_same(int64_t n, const double *a, const double *b, int cpu) {
  for (int64_t i = 0; i < n; i++)
    if (cpu ? a[i] != b[i] : fabs(a[i] - b[i]) > 2 * EPS * fmax(fabs(a[i]), fabs(b[i])) + 1e-300) return 0;
  return 1;
}

static int check_case(hx_backend b, hx_red red, int cpu, int64_t n, int64_t nred, uint64_t seed) {
  hx_test_rng rng = {seed};
  const size_t nb = sizeof(double) * (size_t)(n > 0 ? n : 1);
  double *x = malloc(nb), *r = malloc(nb), *p = malloc(nb), *w = malloc(nb), *dg = malloc(nb);
  double *x1 = malloc(nb), *r1 = malloc(nb), *z1 = malloc(nb), *x2 = malloc(nb), *r2 = malloc(nb),
         *z2 = malloc(nb);
  fill(&rng, n, x, 0), fill(&rng, n, r, 0), fill(&rng, n, p, 0), fill(&rng, n, w, 0), fill(&rng, n, dg, 2.0);
  const double alpha = 0.3712890625 + 0.25 * hx_test_rand(&rng);
  double *dx, *dr, *dp, *dw, *dd, *dz;
  double **bufs[6] = {&dx, &dr, &dp, &dw, &dd, &dz};
  for (int i = 0; i < 6; i++) HX_TCALL(hx_mem_alloc(b, nb, (void **)bufs[i]));
  const size_t bytes = sizeof(double) * (size_t)n;
#define LOAD()                                    \
  do {                                            \
    HX_TCALL(hx_mem_to_device(b, dx, x, bytes));  \
    HX_TCALL(hx_mem_to_device(b, dr, r, bytes));  \
    HX_TCALL(hx_mem_to_device(b, dp, p, bytes));  \
    HX_TCALL(hx_mem_to_device(b, dw, w, bytes));  \
    HX_TCALL(hx_mem_to_device(b, dd, dg, bytes)); \
  } while (0)

  /* the blocking kernels, one after the other */
  double rr0, rz0, zw0;
  LOAD();
  HX_TCALL(hx_array_cg_update(b, n, nred, dx, dr, dp, dw, alpha, &rr0));
  HX_TCALL(hx_array_pointwise_mult(b, n, dz, dr, dd));
  HX_TCALL(hx_array_dot(b, nred, dr, dz, &rz0));
  HX_TCALL(hx_array_dot(b, nred, dz, dw, &zw0));
  HX_TCALL(hx_mem_to_host(b, x1, dx, bytes));
  HX_TCALL(hx_mem_to_host(b, r1, dr, bytes));
  HX_TCALL(hx_mem_to_host(b, z1, dz, bytes));
  /* plain reference of the vectors */
  for (int64_t i = 0; i < n; i++) {
    const double xi = x[i] + alpha * p[i], ri = r[i] - alpha * w[i];
    HX_ASSERT(fabs(x1[i] - xi) <= 2 * EPS * (fabs(x[i]) + fabs(alpha * p[i])) &&
                  fabs(r1[i] - ri) <= 2 * EPS * (fabs(r[i]) + fabs(alpha * w[i])) &&
                  fabs(z1[i] - r1[i] * dg[i]) <= EPS * fabs(r1[i] * dg[i]),
              "n=%lld: blocking kernels wrong at %lld", (long long)n, (long long)i);
  }

  /* deferred: BS5 into slot 2, r.z into slot 0 after a separate Jacobi */
  double out[4] = {-1, -1, -1, -1};
  LOAD();
  HX_TCALL(hx_array_cg_update_red(red, 2, n, nred, dx, dr, dp, dw, alpha));
  HX_TCALL(hx_array_pointwise_mult(b, n, dz, dr, dd));
  HX_TCALL(hx_array_dot_red(red, 0, nred, dr, dz));
  HX_TCALL(hx_red_fetch(red, 4, out));
  HX_TCALL(hx_mem_to_host(b, x2, dx, bytes));
  HX_TCALL(hx_mem_to_host(b, r2, dr, bytes));
  HX_ASSERT(same(out[2], rr0, cpu, nred) && same(out[0], rz0, cpu, nred),
            "n=%lld nred=%lld: red rr %.17g (%.17g) rz %.17g (%.17g)", (long long)n, (long long)nred, out[2],
            rr0, out[0], rz0);
  HX_ASSERT(out[1] == 0.0 && out[3] == 0.0, "slots not written read %g, %g (want 0)", out[1], out[3]);
  HX_ASSERT(vec_same(n, x2, x1, cpu) && vec_same(n, r2, r1, cpu), "n=%lld: cg_update_red vectors differ",
            (long long)n);
  /* a fetch clears the slots */
  HX_TCALL(hx_red_fetch(red, 4, out));
  HX_ASSERT(out[0] == 0.0 && out[2] == 0.0, "slots after a fetch: %g, %g (want 0)", out[0], out[2]);

  /* fused with Jacobi, with and without z.w */
  for (int with_zw = 0; with_zw < 2; with_zw++) {
    LOAD();
    HX_TCALL(hx_mem_zero(b, dz, nb));
    HX_TCALL(
        hx_array_cg_update_diag_red(red, 1, 3, with_zw ? 0 : -1, n, nred, dx, dr, dp, dw, dd, dz, alpha));
    HX_TCALL(hx_red_fetch(red, 4, out));
    HX_TCALL(hx_mem_to_host(b, x2, dx, bytes));
    HX_TCALL(hx_mem_to_host(b, r2, dr, bytes));
    HX_TCALL(hx_mem_to_host(b, z2, dz, bytes));
    HX_ASSERT(same(out[1], rr0, cpu, nred) && same(out[3], rz0, cpu, nred) &&
                  (with_zw ? same(out[0], zw0, cpu, nred) : out[0] == 0.0),
              "n=%lld nred=%lld zw=%d: fused rr %.17g (%.17g) rz %.17g (%.17g) zw %.17g (%.17g)",
              (long long)n, (long long)nred, with_zw, out[1], rr0, out[3], rz0, out[0], zw0);
    HX_ASSERT(vec_same(n, x2, x1, cpu) && vec_same(n, r2, r1, cpu) && vec_same(n, z2, z1, cpu),
              "n=%lld: fused vectors differ from the separate kernels", (long long)n);
  }
  for (int i = 0; i < 6; i++) hx_mem_free(b, (void **)bufs[i]);
  free(x), free(r), free(p), free(w), free(dg), free(x1), free(r1), free(z1), free(x2), free(r2), free(z2);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *name = hx_test_backend_arg(argc, argv);
  hx_backend b;
  int err = hx_backend_create(name, &b);
  if (err == HX_ERR_NO_DEVICE) {
    printf("SKIP: %s\n", hx_error_message());
    MPI_Finalize();
    return HX_TEST_SKIP;
  }
  HX_TCALL(err);
  const int cpu = hx_backend_get_kind(b) == HX_BACKEND_CPU;
  const int64_t C = HX_REDUCE_CHUNK;
  const int64_t nmax = 3 * C + 17;
  hx_red red;
  HX_TCALL(hx_red_create(b, 4, nmax, &red));
  const int64_t ns[] = {0, 1, 7, 13, C - 1, C, C + 5, 2 * C + 3, nmax};
  uint64_t seed = 12345;
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
    const int64_t n = ns[i];
    const int64_t nreds[] = {n, 0, n > 5 ? 5 : n, n > C ? C : n, n > C + 2 ? C + 2 : n, n > 3 ? n - 3 : n};
    for (size_t j = 0; j < sizeof nreds / sizeof *nreds; j++)
      if (check_case(b, red, cpu, n, nreds[j], seed++)) break;
  }
  /* argument errors */
  double *d;
  double out[4];
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(nmax + C), (void **)&d));
  HX_ASSERT(hx_array_dot_red(red, 4, 10, d, d) == HX_ERR_ARG, "slot 4 of 4 accepted");
  HX_ASSERT(hx_array_dot_red(red, -1, 10, d, d) == HX_ERR_ARG, "slot -1 accepted");
  HX_ASSERT(hx_array_dot_red(red, 0, nmax + C, d, d) == HX_ERR_ARG, "a vector beyond the capacity accepted");
  HX_ASSERT(hx_array_cg_update_diag_red(red, 1, 1, -1, 10, 10, d, d + 10, d + 20, d + 30, d + 40, d + 50,
                                        1.0) == HX_ERR_ARG,
            "the same slot for r.r and r.z accepted");
  HX_ASSERT(hx_red_fetch(red, 5, out) == HX_ERR_ARG, "a fetch of 5 slots of 4 accepted");
  hx_red bad = (hx_red)d;
  HX_ASSERT(hx_red_create(b, 0, 10, &bad) == HX_ERR_ARG && bad == NULL, "0 slots accepted");
  hx_error_clear();
  hx_mem_free(b, (void **)&d);
  HX_TCALL(hx_red_destroy(&red));
  HX_TCALL(hx_red_destroy(&red)); /* NULL is fine */
  HX_TCALL(hx_backend_destroy(&b));
  MPI_Finalize();
  return hx_test_result();
}
