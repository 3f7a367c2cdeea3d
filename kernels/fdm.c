/* Element-level FDM box solves: argument checks and dispatch to
 * cpu/fdm_cpu.c or cuda/fdm_cuda.cu. Math: hx_fdm_math.h, docs/fdm.md. */
#include "backend_impl.h"
#include "fdm_impl.h"
#include "hx_fdm_math.h"

static int hx_fdm_elem_impl(hx_backend b, int p, int32_t nlist, const int32_t *d_list, const double *d_S,
                            const double *d_L, const double *d_u, double *d_w) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(p >= 1 && p <= HX_FDM_PMAX, HX_ERR_ARG, "order p = %d outside 1..%d", p, HX_FDM_PMAX);
  HX_CHECK(nlist >= 0, HX_ERR_ARG, "negative element count %d", (int)nlist);
  if (nlist == 0) return HX_SUCCESS;
  HX_CHECK(d_S && d_L && d_u && d_w, HX_ERR_ARG, "NULL array");
  HX_CHECK(d_u != d_w, HX_ERR_ARG, "input and output boxes alias");
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_fdm_cuda_apply(b, p + 3, nlist, d_list, d_S, d_L, d_u, d_w));
    return HX_SUCCESS;
  }
#endif
  HX_MC_SCOPE(b);
  HX_CALL(hx_fdm_cpu_apply(p + 3, nlist, d_list, d_S, d_L, d_u, d_w));
  return HX_SUCCESS;
}

int hx_fdm_elem_apply(hx_backend b, int p, int32_t E, const double *d_S, const double *d_L, const double *d_u,
                      double *d_w) {
  HX_CALL(hx_fdm_elem_impl(b, p, E, NULL, d_S, d_L, d_u, d_w));
  return HX_SUCCESS;
}

int hx_fdm_elem_apply_list(hx_backend b, int p, int32_t nlist, const int32_t *d_list, const double *d_S,
                           const double *d_L, const double *d_u, double *d_w) {
  HX_CHECK(nlist == 0 || d_list, HX_ERR_ARG, "element list is NULL");
  HX_CALL(hx_fdm_elem_impl(b, p, nlist, d_list, d_S, d_L, d_u, d_w));
  return HX_SUCCESS;
}

int hx_fdm_elem_apply_map(hx_backend b, int p, int32_t nlist, const int32_t *d_list, const double *d_S,
                          const double *d_L, const int32_t *d_map, const double *d_x, double *d_w) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(p >= 1 && p <= HX_FDM_PMAX, HX_ERR_ARG, "order p = %d outside 1..%d", p, HX_FDM_PMAX);
  HX_CHECK(nlist >= 0, HX_ERR_ARG, "negative element count %d", (int)nlist);
  if (nlist == 0) return HX_SUCCESS;
  HX_CHECK(d_S && d_L && d_map && d_x && d_w, HX_ERR_ARG, "NULL array");
  HX_CHECK(d_x != d_w, HX_ERR_ARG, "input and output vectors alias");
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_fdm_cuda_apply_map(b, p + 3, nlist, d_list, d_S, d_L, d_map, d_x, d_w));
    return HX_SUCCESS;
  }
#endif
  HX_MC_SCOPE(b);
  HX_CALL(hx_fdm_cpu_apply_map(p + 3, nlist, d_list, d_S, d_L, d_map, d_x, d_w));
  return HX_SUCCESS;
}

int hx_fdm_wgather(hx_backend b, int64_t n, const int32_t *d_idx, const double *d_w, const double *d_x,
                   double *d_y) {
  HX_CHECK(b && n >= 0, HX_ERR_ARG, "bad arguments");
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_idx && d_w && d_x && d_y, HX_ERR_ARG, "NULL array");
#ifdef HEXCG_HAVE_CUDA
  if (b->kind == HX_BACKEND_CUDA) {
    HX_CALL(hx_fdm_cuda_wgather(b, n, d_idx, d_w, d_x, d_y));
    return HX_SUCCESS;
  }
#endif
  HX_MC_SCOPE(b);
  hx_fdm_cpu_wgather(n, d_idx, d_w, d_x, d_y);
  return HX_SUCCESS;
}
