/* CPU element-wise tensor-product transfer: one element per OpenMP
 * iteration, the two intermediate arrays on the thread's stack (at most
 * 16^3 values each); the FP32 loop is the same with the float instantiation
 * of the math. Per-entry math: ../hx_tensor_math.h. */
#include "../hx_tensor_math.h"
#include "../tensor_impl.h"

int hx_tensor3_cpu(int a, int c, int32_t E, const double *A, const double *in, double *out) {
  const int a3 = a * a * a, n1 = c * a * a, n2 = c * c * a, c3 = c * c * c;
#pragma omp parallel for schedule(static)
  for (int32_t e = 0; e < E; e++) {
    double t1[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];
    double t2[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];
    const double *ie = in + (int64_t)e * a3;
    double *oe = out + (int64_t)e * c3;
    for (int pt = 0; pt < n1; pt++) t1[pt] = hx_tensor_stage1(a, c, A, ie, pt);
    for (int pt = 0; pt < n2; pt++) t2[pt] = hx_tensor_stage2(a, c, A, t1, pt);
    for (int pt = 0; pt < c3; pt++) oe[pt] = hx_tensor_stage3(a, c, A, t2, pt);
  }
  return HX_SUCCESS;
}

int hx_tensor3_f32_cpu(int a, int c, int32_t E, const float *A, const float *in, float *out) {
  const int a3 = a * a * a, n1 = c * a * a, n2 = c * c * a, c3 = c * c * c;
#pragma omp parallel for schedule(static)
  for (int32_t e = 0; e < E; e++) {
    float t1[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];
    float t2[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];
    const float *ie = in + (int64_t)e * a3;
    float *oe = out + (int64_t)e * c3;
    for (int pt = 0; pt < n1; pt++) t1[pt] = hx_tensor_stage1_f32(a, c, A, ie, pt);
    for (int pt = 0; pt < n2; pt++) t2[pt] = hx_tensor_stage2_f32(a, c, A, t1, pt);
    for (int pt = 0; pt < c3; pt++) oe[pt] = hx_tensor_stage3_f32(a, c, A, t2, pt);
  }
  return HX_SUCCESS;
}
