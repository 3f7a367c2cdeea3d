/* Precision basics, conversions and the precision-parametrised streaming ops
 * (hx_kernels_prec.h): argument checks and dispatch. HX_F64 goes to the
 * existing double functions (same bits); HX_F32 to the float instantiations
 * in cpu/stream_cpu.c (cpu/stream_cpu_t.h) and cuda/stream_cuda.cu. */
#include "prec_impl.h"

#include <string.h>

size_t hx_precision_size(hx_precision prec) {
  return prec == HX_F64 ? sizeof(double) : prec == HX_F32 ? sizeof(float) : 0;
}

const char *hx_precision_name(hx_precision prec) {
  return prec == HX_F64 ? "fp64" : prec == HX_F32 ? "fp32" : "unknown";
}

int hx_precision_parse(const char *s, hx_precision *prec) {
  HX_CHECK(s && prec, HX_ERR_ARG, "NULL argument");
  if (!strcmp(s, "fp64") || !strcmp(s, "f64") || !strcmp(s, "double")) {
    *prec = HX_F64;
    return HX_SUCCESS;
  }
  if (!strcmp(s, "fp32") || !strcmp(s, "f32") || !strcmp(s, "float")) {
    *prec = HX_F32;
    return HX_SUCCESS;
  }
  return HX_ERROR(HX_ERR_INPUT, "unknown precision '%s' (fp64 or fp32)", s);
}

#define HX_PREC_OK(prec) \
  HX_CHECK((prec) == HX_F64 || (prec) == HX_F32, HX_ERR_ARG, "unknown precision %d", (int)(prec))
#define HX_LEN_OK(n) HX_CHECK((n) >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)(n))
/* HX_MC_DEV for n entries of precision prec: the FP32 CPU paths check their
 * pointers as the FP64 ones do (cpu-memcheck) */
#define HX_MC_DEV_P(b, p, n, prec, what)                                                           \
  do {                                                                                             \
    if ((b)->memcheck) HX_CALL(hx_mc_check_dev((p), (size_t)(n) * hx_precision_size(prec), (what))); \
  } while (0)

int hx_array_convert(hx_backend b, int64_t n, hx_precision dp, void *d_dst, hx_precision sp,
                     const void *d_src) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_PREC_OK(dp);
  HX_PREC_OK(sp);
  HX_LEN_OK(n);
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_dst && d_src, HX_ERR_ARG, "NULL vector");
  if (dp == sp) {
    HX_CALL(hx_mem_copy(b, d_dst, d_src, (size_t)n * hx_precision_size(dp)));
    return HX_SUCCESS;
  }
  HX_CUDA_DISPATCH(b, dp == HX_F32 ? hx_cuda_convert_f32(b->q0, n, (float *)d_dst, (const double *)d_src)
                                    : hx_cuda_convert(b->q0, n, (double *)d_dst, (const float *)d_src));
  HX_MC_DEV_P(b, d_dst, n, dp, "convert: dst");
  HX_MC_DEV_P(b, d_src, n, sp, "convert: src");
  if (dp == HX_F32)
    HX_CALL(hx_cpu_convert_f32(n, (float *)d_dst, (const double *)d_src));
  else
    HX_CALL(hx_cpu_convert(n, (double *)d_dst, (const float *)d_src));
  return HX_SUCCESS;
}

int hx_array_axpy_f32_to_f64(hx_backend b, int64_t n, double *d_y, double a, const float *d_x) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_LEN_OK(n);
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_y && d_x, HX_ERR_ARG, "NULL vector");
  HX_CUDA_DISPATCH(b, hx_cuda_axpy_f32_to_f64(b->q0, n, d_y, a, d_x));
  HX_MC_DEV_P(b, d_y, n, HX_F64, "axpy_f32_to_f64: y");
  HX_MC_DEV_P(b, d_x, n, HX_F32, "axpy_f32_to_f64: x");
  hx_cpu_axpy_f32_to_f64(n, d_y, a, d_x);
  return HX_SUCCESS;
}

int hx_array_copy_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, const void *d_x) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_PREC_OK(prec);
  HX_LEN_OK(n);
  if (prec == HX_F64) {
    HX_CALL(hx_array_copy(b, n, (double *)d_y, (const double *)d_x));
    return HX_SUCCESS;
  }
  if (n == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_cuda_copy_f32(b->q0, n, (float *)d_y, (const float *)d_x));
  HX_MC_DEV_P(b, d_y, n, prec, "copy: y");
  HX_MC_DEV_P(b, d_x, n, prec, "copy: x");
  HX_CALL(hx_cpu_copy_f32(n, (float *)d_y, (const float *)d_x));
  return HX_SUCCESS;
}

int hx_array_axpby_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, double a, const void *d_x,
                     double bb) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_PREC_OK(prec);
  HX_LEN_OK(n);
  if (prec == HX_F64) {
    HX_CALL(hx_array_axpby(b, n, (double *)d_y, a, (const double *)d_x, bb));
    return HX_SUCCESS;
  }
  if (n == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_cuda_axpby_f32(b->q0, n, (float *)d_y, (float)a, (const float *)d_x, (float)bb));
  HX_MC_DEV_P(b, d_y, n, prec, "axpby: y");
  HX_MC_DEV_P(b, d_x, n, prec, "axpby: x");
  HX_CALL(hx_cpu_axpby_f32(n, (float *)d_y, (float)a, (const float *)d_x, (float)bb));
  return HX_SUCCESS;
}

int hx_array_dot_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, const void *d_y,
                   double *result) {
  HX_MC_SCOPE(b);
  HX_CHECK(b && result, HX_ERR_ARG, "NULL backend or result pointer");
  *result = 0.0;
  HX_PREC_OK(prec);
  HX_LEN_OK(n);
  if (prec == HX_F64) {
    HX_CALL(hx_array_dot(b, n, (const double *)d_x, (const double *)d_y, result));
    return HX_SUCCESS;
  }
  if (n == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_cuda_dot_f32(b->q0, n, (const float *)d_x, (const float *)d_y, result));
  HX_MC_DEV_P(b, d_x, n, prec, "dot: x");
  HX_MC_DEV_P(b, d_y, n, prec, "dot: y");
  HX_CALL(hx_cpu_dot_f32(b->q0, n, (const float *)d_x, (const float *)d_y, result));
  if (b->memcheck) HX_CALL(hx_mc_flush(b->q0, UINT64_MAX)); /* a reduction waits for its queue, as FP64 */
  return HX_SUCCESS;
}

int hx_array_norm2sq_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, double *result) {
  HX_MC_SCOPE(b);
  HX_CHECK(b && result, HX_ERR_ARG, "NULL backend or result pointer");
  *result = 0.0;
  HX_PREC_OK(prec);
  HX_LEN_OK(n);
  if (prec == HX_F64) {
    HX_CALL(hx_array_norm2sq(b, n, (const double *)d_x, result));
    return HX_SUCCESS;
  }
  if (n == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_cuda_norm2sq_f32(b->q0, n, (const float *)d_x, result));
  HX_MC_DEV_P(b, d_x, n, prec, "norm2sq: x");
  HX_CALL(hx_cpu_norm2sq_f32(b->q0, n, (const float *)d_x, result));
  if (b->memcheck) HX_CALL(hx_mc_flush(b->q0, UINT64_MAX)); /* a reduction waits for its queue, as FP64 */
  return HX_SUCCESS;
}

int hx_array_xpay_p(hx_backend b, hx_precision prec, int64_t n, void *d_p, const void *d_z, double beta) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_PREC_OK(prec);
  HX_LEN_OK(n);
  if (prec == HX_F64) {
    HX_CALL(hx_array_xpay(b, n, (double *)d_p, (const double *)d_z, beta));
    return HX_SUCCESS;
  }
  if (n == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_cuda_xpay_f32(b->q0, n, (float *)d_p, (const float *)d_z, (float)beta));
  HX_MC_DEV_P(b, d_p, n, prec, "xpay: p");
  HX_MC_DEV_P(b, d_z, n, prec, "xpay: z");
  HX_CALL(hx_cpu_xpay_f32(n, (float *)d_p, (const float *)d_z, (float)beta));
  return HX_SUCCESS;
}

int hx_array_pointwise_mult_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, const void *d_x,
                              const void *d_z) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_PREC_OK(prec);
  HX_LEN_OK(n);
  if (prec == HX_F64) {
    HX_CALL(hx_array_pointwise_mult(b, n, (double *)d_y, (const double *)d_x, (const double *)d_z));
    return HX_SUCCESS;
  }
  if (n == 0) return HX_SUCCESS;
  HX_CUDA_DISPATCH(b, hx_cuda_pointwise_mult_f32(b->q0, n, (float *)d_y, (const float *)d_x, (const float *)d_z));
  HX_MC_DEV_P(b, d_y, n, prec, "pointwise_mult: y");
  HX_MC_DEV_P(b, d_x, n, prec, "pointwise_mult: x");
  HX_MC_DEV_P(b, d_z, n, prec, "pointwise_mult: z");
  HX_CALL(hx_cpu_pointwise_mult_f32(n, (float *)d_y, (const float *)d_x, (const float *)d_z));
  return HX_SUCCESS;
}
