/* Precision as a parameter, streaming side (hx_kernels_prec.h):
 *  - hx_precision_size / _name / _parse;
 *  - conversions: F64 -> F32 equals the C cast (round to nearest) entry by
 *    entry, including overflow to inf, subnormals and -0; F32 -> F64 -> F32
 *    is the identity (bits); hx_array_axpy_f32_to_f64 within one FP64
 *    rounding of each term of y + a x;
 *  - every _p op with HX_F64 gives the bits of the double function;
 *  - FP32 ops against the FP64 ops on the same (float-representable) data:
 *    axpby, xpay, pointwise mult within 2 float roundings per entry
 *    (|err| <= 2 eps_f (|a x| + |b y|) + the rounding of a, b to float:
 *    relative ~1e-7); dot and norm2sq with FP64 accumulation: the products
 *    of floats are exact in double and the chunk tree is the FP64 one, so on
 *    the CPU they are bit-identical to the FP64 dot of the widened vectors
 *    (cuda: 1e-14 relative, its stage-2 tree differs between the kernels);
 *  - sizes 0, 1, 7, 4096, 4097, 3*4096+5 and 100003 (chunk edges);
 *  - with --backend cuda, the FP32 results against the CPU backend.
 */
#include "hx_kernels.h"
#include "hx_test.h"

#include <float.h>

#define EPSF ((double)FLT_EPSILON)

static void *dmalloc(hx_backend b, size_t bytes) {
  void *p = NULL;
  return hx_mem_alloc(b, bytes + 8, &p) ? NULL : p;
}

/* upload / download helpers */
static int up(hx_backend b, void *d, const void *h, size_t bytes) { return hx_mem_to_device(b, d, h, bytes); }
static int down(hx_backend b, void *h, const void *d, size_t bytes) { return hx_mem_to_host(b, h, d, bytes); }

static int check_size(hx_backend b, hx_backend cpu, int64_t n, uint64_t seed) {
  hx_test_rng r = {seed};
  const size_t n1 = (size_t)n + 1;
  double *hx = malloc(8 * n1), *hy = malloc(8 * n1), *hz = malloc(8 * n1), *h64 = malloc(8 * n1),
         *h64b = malloc(8 * n1);
  float *fx = malloc(4 * n1), *fy = malloc(4 * n1), *fz = malloc(4 * n1), *f32 = malloc(4 * n1);
  for (int64_t i = 0; i < n; i++) {
    fx[i] = (float)hx_test_rand(&r);
    fy[i] = (float)(3.0 * hx_test_rand(&r));
    fz[i] = (float)hx_test_rand(&r);
    hx[i] = fx[i], hy[i] = fy[i], hz[i] = fz[i];
  }
  double *dx = dmalloc(b, 8 * n1), *dy = dmalloc(b, 8 * n1), *dz = dmalloc(b, 8 * n1);
  float *gx = dmalloc(b, 4 * n1), *gy = dmalloc(b, 4 * n1), *gz = dmalloc(b, 4 * n1);
  HX_ASSERT(dx && dy && dz && gx && gy && gz, "alloc");
#define RESET()                             \
  do {                                      \
    HX_TCALL(up(b, dx, hx, 8 * (size_t)n)); \
    HX_TCALL(up(b, dy, hy, 8 * (size_t)n)); \
    HX_TCALL(up(b, dz, hz, 8 * (size_t)n)); \
    HX_TCALL(up(b, gx, fx, 4 * (size_t)n)); \
    HX_TCALL(up(b, gy, fy, 4 * (size_t)n)); \
    HX_TCALL(up(b, gz, fz, 4 * (size_t)n)); \
  } while (0)
  const double a = 0.7312345678901, bb = -1.234567890123, beta = 0.376543210987;
  const float af = (float)a, bf = (float)bb, betaf = (float)beta;

  /* ---- HX_F64 through the _p functions: the bits of the double functions */
  RESET();
  HX_TCALL(hx_array_axpby(b, n, dy, a, dx, bb));
  HX_TCALL(down(b, h64, dy, 8 * (size_t)n));
  HX_TCALL(up(b, dy, hy, 8 * (size_t)n));
  HX_TCALL(hx_array_axpby_p(b, HX_F64, n, dy, a, dx, bb));
  HX_TCALL(down(b, h64b, dy, 8 * (size_t)n));
  HX_ASSERT(!memcmp(h64, h64b, 8 * (size_t)n), "n=%lld axpby_p(F64) differs from axpby", (long long)n);
  RESET();
  HX_TCALL(hx_array_xpay(b, n, dy, dx, beta));
  HX_TCALL(down(b, h64, dy, 8 * (size_t)n));
  HX_TCALL(up(b, dy, hy, 8 * (size_t)n));
  HX_TCALL(hx_array_xpay_p(b, HX_F64, n, dy, dx, beta));
  HX_TCALL(down(b, h64b, dy, 8 * (size_t)n));
  HX_ASSERT(!memcmp(h64, h64b, 8 * (size_t)n), "n=%lld xpay_p(F64) differs", (long long)n);
  HX_TCALL(hx_array_pointwise_mult(b, n, dz, dx, dy));
  HX_TCALL(down(b, h64, dz, 8 * (size_t)n));
  HX_TCALL(hx_array_pointwise_mult_p(b, HX_F64, n, dz, dx, dy));
  HX_TCALL(down(b, h64b, dz, 8 * (size_t)n));
  HX_ASSERT(!memcmp(h64, h64b, 8 * (size_t)n), "n=%lld pointwise_mult_p(F64) differs", (long long)n);
  HX_TCALL(hx_array_copy_p(b, HX_F64, n, dz, dx));
  HX_TCALL(down(b, h64b, dz, 8 * (size_t)n));
  HX_ASSERT(!memcmp(hx, h64b, 8 * (size_t)n), "n=%lld copy_p(F64)", (long long)n);
  {
    RESET();
    double d1, d2, s1, s2;
    HX_TCALL(hx_array_dot(b, n, dx, dy, &d1));
    HX_TCALL(hx_array_dot_p(b, HX_F64, n, dx, dy, &d2));
    HX_TCALL(hx_array_norm2sq(b, n, dx, &s1));
    HX_TCALL(hx_array_norm2sq_p(b, HX_F64, n, dx, &s2));
    HX_ASSERT(d1 == d2 && s1 == s2, "n=%lld dot/norm2sq _p(F64) differ", (long long)n);
  }

  /* ---- FP32 against FP64 on the same data */
  RESET();
  HX_TCALL(hx_array_axpby(b, n, dy, a, dx, bb));
  HX_TCALL(hx_array_axpby_p(b, HX_F32, n, gy, a, gx, bb));
  HX_TCALL(down(b, h64, dy, 8 * (size_t)n));
  HX_TCALL(down(b, f32, gy, 4 * (size_t)n));
  for (int64_t i = 0, bad = 0; i < n && bad < 5; i++) {
    const double tol = 2.0 * EPSF * (fabs(a * hx[i]) + fabs(bb * hy[i])) + 1e-300;
    if (fabs(f32[i] - h64[i]) > tol) {
      bad++;
      HX_ASSERT(0, "n=%lld axpby F32 entry %lld: %.9g vs %.17g", (long long)n, (long long)i, f32[i], h64[i]);
    }
  }
  RESET();
  HX_TCALL(hx_array_xpay(b, n, dy, dx, beta));
  HX_TCALL(hx_array_xpay_p(b, HX_F32, n, gy, gx, beta));
  HX_TCALL(down(b, h64, dy, 8 * (size_t)n));
  HX_TCALL(down(b, f32, gy, 4 * (size_t)n));
  for (int64_t i = 0, bad = 0; i < n && bad < 5; i++) {
    const double tol = 2.0 * EPSF * (fabs(hx[i]) + fabs(beta * hy[i])) + 1e-300;
    if (fabs(f32[i] - h64[i]) > tol) {
      bad++;
      HX_ASSERT(0, "n=%lld xpay F32 entry %lld", (long long)n, (long long)i);
    }
  }
  RESET();
  HX_TCALL(hx_array_pointwise_mult_p(b, HX_F32, n, gz, gx, gy));
  HX_TCALL(hx_array_pointwise_mult_p(b, HX_F32, n, gx, gx, gy)); /* aliasing y == x */
  HX_TCALL(down(b, f32, gz, 4 * (size_t)n));
  {
    float *f2 = malloc(4 * n1);
    HX_TCALL(down(b, f2, gx, 4 * (size_t)n));
    for (int64_t i = 0, bad = 0; i < n && bad < 5; i++)
      if (f32[i] != fx[i] * fy[i] || f2[i] != f32[i]) {
        bad++;
        HX_ASSERT(0, "n=%lld pointwise mult F32 entry %lld not the correctly rounded product", (long long)n,
                  (long long)i);
      }
    free(f2);
  }
  RESET();
  HX_TCALL(hx_array_copy_p(b, HX_F32, n, gz, gx));
  HX_TCALL(down(b, f32, gz, 4 * (size_t)n));
  HX_ASSERT(!memcmp(f32, fx, 4 * (size_t)n), "n=%lld copy_p(F32)", (long long)n);
  {
    double d64, d32, s64, s32;
    HX_TCALL(hx_array_dot(b, n, dx, dy, &d64));
    HX_TCALL(hx_array_dot_p(b, HX_F32, n, gx, gy, &d32));
    HX_TCALL(hx_array_norm2sq(b, n, dy, &s64));
    HX_TCALL(hx_array_norm2sq_p(b, HX_F32, n, gy, &s32));
    if (hx_backend_get_kind(b) == HX_BACKEND_CPU) {
      HX_ASSERT(d32 == d64, "n=%lld F32 dot %.17g != FP64 dot of the widened data %.17g", (long long)n, d32,
                d64);
      HX_ASSERT(s32 == s64, "n=%lld F32 norm2sq %.17g != FP64 %.17g", (long long)n, s32, s64);
    } else {
      HX_ASSERT(hx_test_reldiff(d32, d64, 1e-300) <= 1e-14 || fabs(d32 - d64) <= 1e-14 * n,
                "n=%lld F32 dot %.17g vs %.17g", (long long)n, d32, d64);
      HX_ASSERT(hx_test_reldiff(s32, s64, 1e-300) <= 1e-14, "n=%lld F32 norm2sq", (long long)n);
    }
    /* repeat: deterministic */
    double d32b;
    HX_TCALL(hx_array_dot_p(b, HX_F32, n, gx, gy, &d32b));
    HX_ASSERT(d32b == d32, "n=%lld F32 dot not deterministic", (long long)n);
    if (cpu != b) { /* cuda against cpu: same data, FP64 accumulation */
      float *cx = dmalloc(cpu, 4 * n1), *cy = dmalloc(cpu, 4 * n1);
      double dc;
      memcpy(cx, fx, 4 * (size_t)n), memcpy(cy, fy, 4 * (size_t)n);
      HX_TCALL(hx_array_dot_p(cpu, HX_F32, n, cx, cy, &dc));
      HX_ASSERT(fabs(dc - d32) <= 1e-12 * (fabs(dc) + 1.0), "n=%lld cuda F32 dot vs cpu", (long long)n);
      hx_mem_free(cpu, (void **)&cx), hx_mem_free(cpu, (void **)&cy);
    }
  }

  /* ---- conversions */
  {
    double *hc = malloc(8 * n1);
    for (int64_t i = 0; i < n; i++) {
      const double u = hx_test_rand(&r);
      switch (i % 8) {
        case 0: hc[i] = u * 1e300; break; /* overflows to +-inf */
        case 1: hc[i] = u * 1e-42; break; /* float subnormal */
        case 2: hc[i] = -0.0; break;
        case 3: hc[i] = u * 3.4028234663852886e38; break;     /* near FLT_MAX */
        default: hc[i] = u * pow(10.0, (double)(i % 13) - 6); /* ordinary */
      }
    }
    HX_TCALL(up(b, dx, hc, 8 * (size_t)n));
    HX_TCALL(hx_array_convert(b, n, HX_F32, gx, HX_F64, dx));
    HX_TCALL(down(b, f32, gx, 4 * (size_t)n));
    for (int64_t i = 0, bad = 0; i < n && bad < 5; i++) {
      const float want = (float)hc[i];
      if (memcmp(&want, &f32[i], 4)) {
        bad++;
        HX_ASSERT(0, "n=%lld F64->F32 entry %lld: %a -> %a, want %a", (long long)n, (long long)i, hc[i],
                  (double)f32[i], (double)want);
      }
    }
    /* F32 -> F64 -> F32: identity; F32 -> F64 exact */
    HX_TCALL(hx_array_convert(b, n, HX_F64, dy, HX_F32, gx));
    HX_TCALL(down(b, h64, dy, 8 * (size_t)n));
    for (int64_t i = 0, bad = 0; i < n && bad < 5; i++)
      if (h64[i] != (double)f32[i] && !(isnan(h64[i]) && isnan(f32[i]))) {
        bad++;
        HX_ASSERT(0, "n=%lld F32->F64 entry %lld not exact", (long long)n, (long long)i);
      }
    HX_TCALL(hx_array_convert(b, n, HX_F32, gz, HX_F64, dy));
    float *back = malloc(4 * n1);
    HX_TCALL(down(b, back, gz, 4 * (size_t)n));
    HX_ASSERT(!memcmp(back, f32, 4 * (size_t)n), "n=%lld F32->F64->F32 not the identity", (long long)n);
    /* same precision: a copy */
    HX_TCALL(hx_array_convert(b, n, HX_F64, dz, HX_F64, dy));
    HX_TCALL(down(b, h64b, dz, 8 * (size_t)n));
    HX_ASSERT(!memcmp(h64b, h64, 8 * (size_t)n), "n=%lld F64->F64 convert is not a copy", (long long)n);
    free(back);
    free(hc);
  }
  /* ---- y += a x (x float) in FP64 */
  RESET();
  HX_TCALL(hx_array_axpy_f32_to_f64(b, n, dy, a, gx));
  HX_TCALL(down(b, h64, dy, 8 * (size_t)n));
  for (int64_t i = 0, bad = 0; i < n && bad < 5; i++) {
    const double want = hy[i] + a * (double)fx[i];
    const double tol = 2.0 * DBL_EPSILON * (fabs(hy[i]) + fabs(a * fx[i]));
    if (fabs(h64[i] - want) > tol) {
      bad++;
      HX_ASSERT(0, "n=%lld axpy_f32_to_f64 entry %lld: %.17g want %.17g", (long long)n, (long long)i, h64[i],
                want);
    }
  }
  hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dy), hx_mem_free(b, (void **)&dz);
  hx_mem_free(b, (void **)&gx), hx_mem_free(b, (void **)&gy), hx_mem_free(b, (void **)&gz);
  free(hx), free(hy), free(hz), free(h64), free(h64b), free(fx), free(fy), free(fz), free(f32);
  (void)af, (void)bf, (void)betaf;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_backend b, cpu;
  HX_TCALL(hx_test_backends(argc, argv, &b, &cpu));

  HX_ASSERT(hx_precision_size(HX_F64) == 8 && hx_precision_size(HX_F32) == 4 &&
                hx_precision_size((hx_precision)7) == 0,
            "hx_precision_size");
  HX_ASSERT(!strcmp(hx_precision_name(HX_F32), "fp32") && !strcmp(hx_precision_name(HX_F64), "fp64"),
            "names");
  hx_precision p = HX_F64;
  HX_ASSERT(hx_precision_parse("fp32", &p) == HX_SUCCESS && p == HX_F32, "parse fp32");
  HX_ASSERT(hx_precision_parse("double", &p) == HX_SUCCESS && p == HX_F64, "parse double");
  HX_ASSERT(hx_precision_parse("half", &p) == HX_ERR_INPUT, "parse half");
  HX_ASSERT(hx_array_copy_p(b, (hx_precision)3, 4, NULL, NULL) == HX_ERR_ARG, "unknown precision");
  hx_error_clear();

  const int64_t sizes[] = {0, 1, 7, 4096, 4097, 3 * 4096 + 5, 100003};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    if (check_size(b, cpu, sizes[k], 1000 + k)) break;

  if (cpu != b) hx_backend_destroy(&cpu);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
