/* Element-wise tensor-product transfer: argument checks and dispatch to
 * cpu/tensor_cpu.c or cuda/tensor_cuda.cu, in FP64 or (hx_tensor3_apply_p)
 * FP32. Math: hx_tensor_math.h. */
#include "hx_tensor_math.h"
#include "tensor_impl.h"

static int check_args(hx_backend b, int a, int c, int32_t E, const void *d_A, const void *d_in, const void *d_out) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(a >= 1 && a <= HX_TENSOR_NMAX && c >= 1 && c <= HX_TENSOR_NMAX, HX_ERR_ARG,
           "tensor transfer: %d -> %d points per direction outside 1..%d", a, c, HX_TENSOR_NMAX);
  HX_CHECK(E >= 0, HX_ERR_ARG, "negative element count %d", (int)E);
  if (E == 0) return HX_SUCCESS;
  HX_CHECK(d_A && d_in && d_out, HX_ERR_ARG, "NULL array");
  HX_CHECK(d_in != d_out, HX_ERR_ARG, "input and output L-vectors alias");
  return HX_SUCCESS;
}

int hx_tensor3_apply(hx_backend b, int a, int c, int32_t E, const double *d_A, const double *d_in,
                     double *d_out) {
  HX_CALL(check_args(b, a, c, E, d_A, d_in, d_out));
  if (E == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_tensor3_cuda(b, a, c, E, d_A, d_in, d_out));
  HX_MC_SCOPE(b);
  HX_CALL(hx_tensor3_cpu(a, c, E, d_A, d_in, d_out));
  return HX_SUCCESS;
}

int hx_tensor3_apply_p(hx_backend b, hx_precision prec, int a, int c, int32_t E, const void *d_A, const void *d_in,
                       void *d_out) {
  if (prec == HX_F64) {
    HX_CALL(hx_tensor3_apply(b, a, c, E, (const double *)d_A, (const double *)d_in, (double *)d_out));
    return HX_SUCCESS;
  }
  HX_CHECK(prec == HX_F32, HX_ERR_ARG, "tensor transfer: unknown precision %d", (int)prec);
  HX_CALL(check_args(b, a, c, E, d_A, d_in, d_out));
  if (E == 0) return HX_SUCCESS;
  const float *A = (const float *)d_A, *in = (const float *)d_in;
  float *out = (float *)d_out;
  HX_CUDA_DISPATCH(b, hx_tensor3_f32_cuda(b, a, c, E, A, in, out));
  HX_MC_SCOPE(b);
  HX_CALL(hx_tensor3_f32_cpu(a, c, E, A, in, out));
  return HX_SUCCESS;
}
