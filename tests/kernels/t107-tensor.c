/* Element-wise tensor-product transfer hx_tensor3_apply (kernels/tensor.c):
 *  - against the direct sum out[r,q,s] = sum_{i,j,k} A[r,i] A[q,j] A[s,k]
 *    in[i,j,k] (an independent formula, no sum factorisation) for random A
 *    and inputs, a -> c points in {1,2,4,8} x {1,3,8} and 16 -> 16, 5
 *    elements; the two orders of summation differ by rounding only: with
 *    |terms| summed into `mag`, |err| <= 4 (a+2) eps mag (three chained
 *    dot products of length a, each within a eps of its magnitude);
 *  - the FP32 twin (hx_tensor3_apply_p with HX_F32) on the same data: A and
 *    the inputs are drawn as floats (so the reference is the same for both
 *    precisions), |err| <= 4 (a+2) FLT_EPSILON mag, the bound above with the
 *    float unit roundoff (the three float dot products round in float);
 *    an unknown precision is refused;
 *  - the cross-element CPU path (kernels/cpu/tensor_cpu.c: 8 FP32 or 4 FP64
 *    elements per vector for a, c <= 8) against the one-element loop
 *    (HEXCG_TENSOR_XELEM=0), bit for bit in both precisions (each lane does
 *    the loop's operations in its order), a = 2..8, c = 1..8, element counts
 *    1, 3, 4, 7, 8, 9, 21 (short last groups), 1,000 elements for 8 -> 4;
 *  - argument errors (sizes outside 1..16, aliasing, NULL arrays);
 *  - with --backend cuda, the device result against the CPU backend's
 *    (same sums in the same order: within the same bound, FMA contraction
 *    may change the last bits).
 */
#include "hx_kernels.h"
#include "hx_test.h"

#include <float.h>
#include <string.h>

static int check(hx_backend b, hx_backend cpu, int a, int c, int32_t E, uint64_t seed) {
  hx_test_rng r = {seed};
  const int64_t na = (int64_t)E * a * a * a, nc = (int64_t)E * c * c * c;
  double *A = malloc(sizeof(double) * c * a), *in = malloc(sizeof(double) * na);
  double *out = malloc(sizeof(double) * nc), *ref = malloc(sizeof(double) * nc),
         *mag = malloc(sizeof(double) * nc);
  for (int i = 0; i < c * a; i++) A[i] = (float)(2.0 * hx_test_rand(&r) - 1.0);
  for (int64_t i = 0; i < na; i++) in[i] = (float)(2.0 * hx_test_rand(&r) - 1.0);
  for (int32_t e = 0; e < E; e++)
    for (int s = 0; s < c; s++)
      for (int q = 0; q < c; q++)
        for (int rr = 0; rr < c; rr++) {
          double sum = 0, m = 0;
          for (int k = 0; k < a; k++)
            for (int j = 0; j < a; j++)
              for (int i = 0; i < a; i++) {
                const double t = A[rr * a + i] * A[q * a + j] * A[s * a + k] *
                                 in[(int64_t)e * a * a * a + i + a * (j + a * k)];
                sum += t, m += fabs(t);
              }
          ref[(int64_t)e * c * c * c + rr + c * (q + c * s)] = sum;
          mag[(int64_t)e * c * c * c + rr + c * (q + c * s)] = m;
        }
  hx_backend bs[2] = {b, cpu};
  double *res[2] = {out, malloc(sizeof(double) * nc)};
  const int nb = b == cpu ? 1 : 2;
  for (int ib = 0; ib < nb; ib++) {
    double *dA = NULL, *din = NULL, *dout = NULL;
    HX_TCALL(hx_mem_alloc(bs[ib], sizeof(double) * c * a, (void **)&dA));
    HX_TCALL(hx_mem_alloc(bs[ib], sizeof(double) * na, (void **)&din));
    HX_TCALL(hx_mem_alloc(bs[ib], sizeof(double) * nc, (void **)&dout));
    HX_TCALL(hx_mem_to_device(bs[ib], dA, A, sizeof(double) * c * a));
    HX_TCALL(hx_mem_to_device(bs[ib], din, in, sizeof(double) * na));
    HX_TCALL(hx_tensor3_apply(bs[ib], a, c, E, dA, din, dout));
    HX_TCALL(hx_mem_to_host(bs[ib], res[ib], dout, sizeof(double) * nc));
    hx_mem_free(bs[ib], (void **)&dA), hx_mem_free(bs[ib], (void **)&din),
        hx_mem_free(bs[ib], (void **)&dout);
  }
  const double tol = 4.0 * (a + 2) * DBL_EPSILON;
  int bad = 0;
  for (int64_t i = 0; i < nc && bad < 5; i++) {
    if (fabs(out[i] - ref[i]) > tol * mag[i]) {
      bad++;
      HX_ASSERT(0, "%d -> %d entry %lld: %.17g, direct sum %.17g", a, c, (long long)i, out[i], ref[i]);
    }
    if (nb == 2 && fabs(out[i] - res[1][i]) > tol * mag[i]) {
      bad++;
      HX_ASSERT(0, "%d -> %d entry %lld: device %.17g, cpu %.17g", a, c, (long long)i, out[i], res[1][i]);
    }
  }
  /* FP32: the same inputs (floats exactly), float results, both backends */
  float *A32 = malloc(sizeof(float) * (c * a > 0 ? c * a : 1)), *in32 = malloc(sizeof(float) * (na > 0 ? na : 1));
  float *o32[2] = {malloc(sizeof(float) * (nc > 0 ? nc : 1)), malloc(sizeof(float) * (nc > 0 ? nc : 1))};
  for (int i = 0; i < c * a; i++) A32[i] = (float)A[i];
  for (int64_t i = 0; i < na; i++) in32[i] = (float)in[i];
  for (int ib = 0; ib < nb; ib++) {
    void *dA = NULL, *din = NULL, *dout = NULL;
    HX_TCALL(hx_mem_alloc(bs[ib], sizeof(float) * c * a, &dA));
    HX_TCALL(hx_mem_alloc(bs[ib], sizeof(float) * (na > 0 ? na : 1), &din));
    HX_TCALL(hx_mem_alloc(bs[ib], sizeof(float) * (nc > 0 ? nc : 1), &dout));
    HX_TCALL(hx_mem_to_device(bs[ib], dA, A32, sizeof(float) * c * a));
    HX_TCALL(hx_mem_to_device(bs[ib], din, in32, sizeof(float) * na));
    HX_TCALL(hx_tensor3_apply_p(bs[ib], HX_F32, a, c, E, dA, din, dout));
    HX_TCALL(hx_mem_to_host(bs[ib], o32[ib], dout, sizeof(float) * nc));
    hx_mem_free(bs[ib], &dA), hx_mem_free(bs[ib], &din), hx_mem_free(bs[ib], &dout);
  }
  const double tol32 = 4.0 * (a + 2) * FLT_EPSILON;
  double worst = 0.0;
  for (int64_t i = 0; i < nc && bad < 5; i++) {
    const double err = fabs((double)o32[0][i] - ref[i]);
    if (mag[i] > 0) worst = fmax(worst, err / mag[i]);
    if (err > tol32 * mag[i]) {
      bad++;
      HX_ASSERT(0, "fp32 %d -> %d entry %lld: %.9g, direct sum %.17g", a, c, (long long)i, o32[0][i], ref[i]);
    }
    if (nb == 2 && fabs((double)o32[0][i] - (double)o32[1][i]) > tol32 * mag[i]) {
      bad++;
      HX_ASSERT(0, "fp32 %d -> %d entry %lld: device %.9g, cpu %.9g", a, c, (long long)i, o32[0][i], o32[1][i]);
    }
  }
  /* the float kernel really rounds in float: a double sum would be within
   * ~1e-16 of the reference for these sizes */
  if (a >= 4 && E > 0) HX_ASSERT(worst > 1e-12, "fp32 %d -> %d: error %.3e relative to the terms: not float", a, c, worst);
  free(A32), free(in32), free(o32[0]), free(o32[1]);
  free(A), free(in), free(out), free(ref), free(mag), free(res[1]);
  return bad;
}

/* Cross-element vs one-element CPU path, bit for bit, FP64 and FP32. */
static int check_xelem(hx_backend cpu, int a, int c, int32_t E, uint64_t seed) {
  hx_test_rng r = {seed};
  const int64_t na = (int64_t)E * a * a * a, nc = (int64_t)E * c * c * c;
  double *A = malloc(sizeof(double) * c * a), *in = malloc(sizeof(double) * na);
  double *o[2] = {malloc(sizeof(double) * nc), malloc(sizeof(double) * nc)};
  float *Af = malloc(sizeof(float) * c * a), *inf = malloc(sizeof(float) * na);
  float *of[2] = {malloc(sizeof(float) * nc), malloc(sizeof(float) * nc)};
  for (int i = 0; i < c * a; i++) A[i] = 2.0 * hx_test_rand(&r) - 1.0, Af[i] = (float)A[i];
  for (int64_t i = 0; i < na; i++) in[i] = 2.0 * hx_test_rand(&r) - 1.0, inf[i] = (float)in[i];
  for (int on = 0; on < 2; on++) {
    setenv("HEXCG_TENSOR_XELEM", on ? "1" : "0", 1);
    for (int64_t i = 0; i < nc; i++) o[on][i] = -7.0, of[on][i] = -7.0f;
    HX_TCALL(hx_tensor3_apply(cpu, a, c, E, A, in, o[on]));
    HX_TCALL(hx_tensor3_apply_p(cpu, HX_F32, a, c, E, Af, inf, of[on]));
  }
  setenv("HEXCG_TENSOR_XELEM", "1", 1);
  int bad = 0;
  for (int64_t i = 0; i < nc && !bad; i++) {
    if (memcmp(&o[0][i], &o[1][i], sizeof(double)) || memcmp(&of[0][i], &of[1][i], sizeof(float))) bad = 1;
    HX_ASSERT(!bad, "%d -> %d, %d elements, entry %lld: cross-element %.17g / %.9g, one-element %.17g / %.9g", a, c,
              (int)E, (long long)i, o[1][i], (double)of[1][i], o[0][i], (double)of[0][i]);
  }
  free(A), free(in), free(o[0]), free(o[1]), free(Af), free(inf), free(of[0]), free(of[1]);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_backend b, cpu;
  HX_TCALL(hx_test_backends(argc, argv, &b, &cpu));

  const int as[] = {1, 2, 4, 8}, cs[] = {1, 3, 8};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) check(b, cpu, as[i], cs[j], 5, 100 + 10 * i + j);
  check(b, cpu, 16, 16, 2, 7);
  check(b, cpu, 8, 4, 0, 8); /* no elements: nothing to do */
  if (!strcmp(hx_backend_name(cpu), "cpu")) { /* host arrays: not under memcheck */
    static const int32_t Es[] = {1, 3, 4, 7, 8, 9, 21};
    for (int a = 2; a <= 8; a++)
      for (int c = 1; c <= 8; c++)
        for (int k = 0; k < 7; k++) check_xelem(cpu, a, c, Es[k], 1000 + 100 * a + 10 * c + k);
    check_xelem(cpu, 8, 4, 1000, 5);
    check_xelem(cpu, 4, 8, 1000, 6);
  }

  double *d = NULL;
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * 64, (void **)&d));
  HX_ASSERT(hx_tensor3_apply(b, 17, 2, 1, d, d + 8, d + 16) == HX_ERR_ARG, "a = 17 accepted");
  HX_ASSERT(hx_tensor3_apply(b, 2, 0, 1, d, d + 8, d + 16) == HX_ERR_ARG, "c = 0 accepted");
  HX_ASSERT(hx_tensor3_apply(b, 2, 2, 1, d, d + 8, d + 8) == HX_ERR_ARG, "aliasing accepted");
  HX_ASSERT(hx_tensor3_apply(b, 2, 2, 1, NULL, d + 8, d + 16) == HX_ERR_ARG, "NULL matrix accepted");
  HX_ASSERT(hx_tensor3_apply(b, 2, 2, -1, d, d + 8, d + 16) == HX_ERR_ARG, "negative count accepted");
  HX_ASSERT(hx_tensor3_apply_p(b, (hx_precision)7, 2, 2, 1, d, d + 8, d + 16) == HX_ERR_ARG,
            "unknown precision accepted");
  HX_ASSERT(hx_tensor3_apply_p(b, HX_F32, 2, 2, 1, d, d + 8, d + 8) == HX_ERR_ARG, "fp32 aliasing accepted");
  hx_error_clear();
  hx_mem_free(b, (void **)&d);

  if (cpu != b) hx_backend_destroy(&cpu);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
