/* CPU element-wise tensor-product transfer: one element per OpenMP
 * iteration, the two intermediate arrays on the thread's stack (at most
 * 16^3 values each); the FP32 loop is the same with the float instantiation
 * of the math. Per-entry math: ../hx_tensor_math.h. */
#include "../hx_tensor_math.h"
#include "tensor_impl.h"

/* The three stages as nested loops over the entries (no division per entry:
 * with a and c known only at run time, the index arithmetic of
 * hx_tensor_stage1..3 cost more than their 4-8 term dots); each entry is the
 * same hx_tensor_dot on the same operands as hx_tensor_stage1..3 compute,
 * so the values are bit for bit those of the CUDA kernel. */
#define HX_TENSOR3_LOOP(T, DOT)                                                                      \
  const int a3 = a * a * a, c3 = c * c * c;                                                          \
  _Pragma("omp parallel for schedule(static)") for (int32_t e = 0; e < E; e++) {                     \
    T t1[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];                                          \
    T t2[HX_TENSOR_NMAX * HX_TENSOR_NMAX * HX_TENSOR_NMAX];                                          \
    const T *ie = in + (int64_t)e * a3;                                                              \
    T *oe = out + (int64_t)e * c3;                                                                   \
    for (int jk = 0; jk < a * a; jk++)                                                               \
      for (int r = 0; r < c; r++) t1[r + c * jk] = DOT(a, A + r * a, ie + a * jk, 1);               \
    for (int k = 0; k < a; k++)                                                                      \
      for (int q = 0; q < c; q++)                                                                    \
        for (int r = 0; r < c; r++) t2[r + c * (q + c * k)] = DOT(a, A + q * a, t1 + r + c * a * k, c); \
    for (int s = 0; s < c; s++)                                                                      \
      for (int rq = 0; rq < c * c; rq++) oe[rq + c * c * s] = DOT(a, A + s * a, t2 + rq, c * c);    \
  }                                                                                                  \
  return HX_SUCCESS

int hx_tensor3_cpu(int a, int c, int32_t E, const double *A, const double *in, double *out) {
  HX_TENSOR3_LOOP(double, hx_tensor_dot);
}

int hx_tensor3_f32_cpu(int a, int c, int32_t E, const float *A, const float *in, float *out) {
  HX_TENSOR3_LOOP(float, hx_tensor_dot_f32);
}
