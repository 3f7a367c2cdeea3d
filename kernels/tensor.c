/* Element-wise tensor-product transfer: argument checks and dispatch to
 * cpu/tensor_cpu.c or cuda/tensor_cuda.cu, in FP64 or (hx_tensor3_apply_p)
 * FP32. Math: hx_tensor_math.h. */
#include "hx_tensor_math.h"
#include "backend_impl.h"

/* The one entry point (hx_tensor3_apply is its FP64 form, hx_kernels.h). */
int hx_tensor3_apply_p(hx_backend b, hx_precision prec, int a, int c, int32_t E, const void *d_A, const void *d_in,
                       void *d_out) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(prec == HX_F64 || prec == HX_F32, HX_ERR_ARG, "tensor transfer: unknown precision %d", (int)prec);
  HX_CHECK(a >= 1 && a <= HX_TENSOR_NMAX && c >= 1 && c <= HX_TENSOR_NMAX, HX_ERR_ARG,
           "tensor transfer: %d -> %d points per direction outside 1..%d", a, c, HX_TENSOR_NMAX);
  HX_CHECK(E >= 0, HX_ERR_ARG, "negative element count %d", (int)E);
  if (E == 0) return HX_SUCCESS;
  HX_CHECK(d_A && d_in && d_out, HX_ERR_ARG, "NULL array");
  HX_CHECK(d_in != d_out, HX_ERR_ARG, "input and output L-vectors alias");
  const size_t es = hx_precision_size(prec), a3 = (size_t)a * a * a, c3 = (size_t)c * c * c;
  HX_KERNEL_DISPATCH(b, "tensor transfer", HX_CUDA_P(prec, tensor3, b, a, c, E, d_A, d_in, d_out),
                     HX_CALL(HX_CPU_P(prec, tensor3, a, c, E, d_A, d_in, d_out)),
                     HX_KARG(d_A, (size_t)c * a, es, "A"), HX_KARG(d_in, (size_t)E * a3, es, "in"),
                     HX_KARG(d_out, (size_t)E * c3, es, "out"));
  return HX_SUCCESS;
}
