/* An extra diagonal on listed entries (hx_array_diag_add_list_p,
 * hx_kernels_prec.h): argument checks and dispatch to cpu/diag_cpu.c or
 * cuda/diag_cuda.cu, the x.R.x sum left as one partial of a reduction slot. */
#include "diag_impl.h"
#include "stream_impl.h"

#define HX_MC_DEV_B(b, p, bytes, what)                                          \
  do {                                                                          \
    if ((b)->memcheck) HX_CALL(hx_mc_check_dev((p), (size_t)(bytes), (what))); \
  } while (0)

int hx_array_diag_add_list_p(hx_backend b, hx_precision prec, int64_t m, int64_t mred, const int32_t *d_idx,
                             const void *d_r, const void *d_x, void *d_y, hx_red red, int k) {
  HX_MC_SCOPE(b);
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_CHECK(prec == HX_F64 || prec == HX_F32, HX_ERR_ARG, "unknown precision %d", (int)prec);
  HX_CHECK(m >= 0 && mred >= 0 && mred <= m, HX_ERR_ARG, "diag_add_list: %lld entries, %lld reduced",
           (long long)m, (long long)mred);
  HX_CHECK(!red || red->b == b, HX_ERR_ARG, "reduction set on another backend");
  double *part = NULL;
  if (red) HX_CALL(hx_red_next_part(red, k, &part));
  if (m == 0) {
    if (part) {
      HX_CUDA_DISPATCH(b, hx_mem_zero(b, part, sizeof(double)));
      *part = 0.0; /* the slots are host memory on the cpu backends */
    }
    return HX_SUCCESS;
  }
  HX_CHECK(d_idx && d_r && d_x && d_y, HX_ERR_ARG, "NULL vector");
  HX_CHECK(d_x != d_y, HX_ERR_ARG, "diag_add_list: x and y alias");
  HX_CUDA_DISPATCH(b, prec == HX_F64 ? hx_cuda_diag_add_list(b, m, mred, d_idx, (const double *)d_r,
                                                             (const double *)d_x, (double *)d_y, part)
                                     : hx_cuda_diag_add_list_f32(b, m, mred, d_idx, (const float *)d_r,
                                                                 (const float *)d_x, (float *)d_y, part));
  const size_t es = hx_precision_size(prec);
  HX_MC_DEV_B(b, d_idx, sizeof(int32_t) * (size_t)m, "diag_add_list: idx");
  HX_MC_DEV_B(b, d_r, es * (size_t)m, "diag_add_list: r");
  if (prec == HX_F64) hx_cpu_diag_add_list(m, mred, d_idx, (const double *)d_r, (const double *)d_x, (double *)d_y, part);
  else hx_cpu_diag_add_list_f32(m, mred, d_idx, (const float *)d_r, (const float *)d_x, (float *)d_y, part);
  return HX_SUCCESS;
}
