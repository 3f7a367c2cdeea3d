/* An extra diagonal on listed entries (hx_array_diag_add_list_p,
 * hx_kernels_prec.h): argument checks and dispatch to cpu/diag_cpu.c or
 * cuda/diag_cuda.cu, the x.R.x sum left as one partial of a reduction slot. */
#include "backend_impl.h"
#include "stream_impl.h"

int hx_array_diag_add_list_p(hx_backend b, hx_precision prec, int64_t m, int64_t mred, const int32_t *d_idx,
                             const void *d_r, const void *d_x, void *d_y, hx_red red, int k) {
  HX_CHECK(b, HX_ERR_ARG, "NULL backend");
  HX_CHECK_PREC(prec);
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
  HX_CHECK(d_x != d_y, HX_ERR_ARG, "diag_add_list: x and y alias");
  /* x and y are read at the listed entries only: at least one entry each */
  const size_t es = hx_precision_size(prec);
  HX_KERNEL_DISPATCH(b, "diag_add_list", HX_CUDA_P(prec, diag_add_list, b, m, mred, d_idx, d_r, d_x, d_y, part),
                     HX_CPU_P(prec, diag_add_list, m, mred, d_idx, d_r, d_x, d_y, part),
                     HX_KARG(d_idx, m, sizeof(int32_t), "idx"), HX_KARG(d_r, m, es, "r"), HX_KARG(d_x, 1, es, "x"),
                     HX_KARG(d_y, 1, es, "y"));
  return HX_SUCCESS;
}
