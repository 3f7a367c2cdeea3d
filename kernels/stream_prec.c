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

#define HX_LEN_OK(n) HX_CHECK((n) >= 0, HX_ERR_ARG, "negative vector length %lld", (long long)(n))
/* n entries of precision prec */
#define HX_KARG_P(p, n, prec) HX_KARG(p, n, hx_precision_size(prec), #p)

int hx_array_convert(hx_backend b, int64_t n, hx_precision dp, void *d_dst, hx_precision sp,
                     const void *d_src) {
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_CHECK_PREC(dp);
  HX_CHECK_PREC(sp);
  HX_LEN_OK(n);
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_dst && d_src, HX_ERR_ARG, "NULL vector");
  if (dp == sp) {
    HX_CALL(hx_mem_copy(b, d_dst, d_src, (size_t)n * hx_precision_size(dp)));
    return HX_SUCCESS;
  }
  HX_KERNEL_DISPATCH(b, "convert",
                     dp == HX_F32 ? hx_cuda_convert_f32(b->q0, n, (float *)d_dst, (const double *)d_src)
                                  : hx_cuda_convert(b->q0, n, (double *)d_dst, (const float *)d_src),
                     HX_CALL(dp == HX_F32 ? hx_cpu_convert_f32(n, (float *)d_dst, (const double *)d_src)
                                          : hx_cpu_convert(n, (double *)d_dst, (const float *)d_src)),
                     HX_KARG_P(d_dst, n, dp), HX_KARG_P(d_src, n, sp));
  return HX_SUCCESS;
}

int hx_array_axpy_f32_to_f64(hx_backend b, int64_t n, double *d_y, double a, const float *d_x) {
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_LEN_OK(n);
  if (n == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(b, "axpy_f32_to_f64", hx_cuda_axpy_f32_to_f64(b->q0, n, d_y, a, d_x),
                     hx_cpu_axpy_f32_to_f64(n, d_y, a, d_x), HX_KARG_P(d_y, n, HX_F64), HX_KARG_P(d_x, n, HX_F32));
  return HX_SUCCESS;
}

/* The precision-taking streaming ops: the queue functions (backend.c,
 * stream.c: one dispatch each, both precisions) on the default queue; the
 * FP64 names of hx_kernels.h are inline forms of these. */
#define HX_STREAM_P(b, n, call)                 \
  do {                                          \
    HX_CHECK(b, HX_ERR_ARG, "NULL backend");    \
    HX_LEN_OK(n);                               \
    HX_CALL(call);                              \
    return HX_SUCCESS;                          \
  } while (0)

int hx_array_copy_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, const void *d_x) {
  HX_STREAM_P(b, n, hx_array_copy_q(b->q0, prec, n, d_y, d_x));
}
int hx_array_axpby_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, double a, const void *d_x,
                     double bb) {
  HX_STREAM_P(b, n, hx_array_axpby_q(b->q0, prec, n, d_y, a, d_x, bb));
}
int hx_array_dot_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, const void *d_y,
                   double *result) {
  HX_CHECK(result, HX_ERR_ARG, "NULL result pointer");
  *result = 0.0;
  HX_STREAM_P(b, n, hx_array_dot_q(b->q0, prec, n, d_x, d_y, result));
}
int hx_array_norm2sq_p(hx_backend b, hx_precision prec, int64_t n, const void *d_x, double *result) {
  HX_CHECK(result, HX_ERR_ARG, "NULL result pointer");
  *result = 0.0;
  HX_STREAM_P(b, n, hx_array_norm2sq_q(b->q0, prec, n, d_x, result));
}
int hx_array_xpay_p(hx_backend b, hx_precision prec, int64_t n, void *d_p, const void *d_z, double beta) {
  HX_STREAM_P(b, n, hx_array_xpay_q(b->q0, prec, n, d_p, d_z, beta));
}
int hx_array_pointwise_mult_p(hx_backend b, hx_precision prec, int64_t n, void *d_y, const void *d_x,
                              const void *d_z) {
  HX_STREAM_P(b, n, hx_array_pointwise_mult_q(b->q0, prec, n, d_y, d_x, d_z));
}
