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
  HX_CUDA_DISPATCH(b, hx_fdm_cuda_apply(b, p + 3, nlist, d_list, d_S, d_L, d_u, d_w));
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
  HX_CUDA_DISPATCH(b, hx_fdm_cuda_apply_map(b, p + 3, nlist, d_list, d_S, d_L, d_map, d_x, d_w));
  HX_MC_SCOPE(b);
  HX_CALL(hx_fdm_cpu_apply_map(p + 3, nlist, d_list, d_S, d_L, d_map, d_x, d_w));
  return HX_SUCCESS;
}

int hx_fdm_wgather(hx_backend b, int64_t n, const int32_t *d_idx, const double *d_w, const double *d_x,
                   double *d_y) {
  HX_CHECK(b && n >= 0, HX_ERR_ARG, "bad arguments");
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_idx && d_w && d_x && d_y, HX_ERR_ARG, "NULL array");
  HX_CUDA_DISPATCH(b, hx_fdm_cuda_wgather(b, n, d_idx, d_w, d_x, d_y));
  HX_MC_SCOPE(b);
  hx_fdm_cpu_wgather(n, d_idx, d_w, d_x, d_y);
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- precision */
static int hx_fdm_check_prec(hx_precision prec) {
  HX_CHECK(prec == HX_F64 || prec == HX_F32, HX_ERR_ARG, "unknown precision %d", (int)prec);
  return HX_SUCCESS;
}

static int hx_fdm_elem_f32(hx_backend b, int p, int32_t nlist, const int32_t *d_list, const void *d_S,
                           const void *d_L, const void *d_u, void *d_w, const int32_t *d_map, const void *d_x) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK(p >= 1 && p <= HX_FDM_PMAX, HX_ERR_ARG, "order p = %d outside 1..%d", p, HX_FDM_PMAX);
  HX_CHECK(nlist >= 0, HX_ERR_ARG, "negative element count %d", (int)nlist);
  if (nlist == 0) return HX_SUCCESS;
  HX_CHECK(d_S && d_L && d_w && (d_u || (d_map && d_x)), HX_ERR_ARG, "NULL array");
  HX_CHECK(d_u != d_w && d_x != d_w, HX_ERR_ARG, "input and output alias");
  HX_CUDA_DISPATCH(b, hx_fdm_cuda_apply_f32(b, p + 3, nlist, d_list, (const float *)d_S, (const float *)d_L,
                                            (const float *)d_u, (float *)d_w, d_map, (const float *)d_x));
  HX_MC_SCOPE(b);
  HX_CALL(hx_fdm_cpu_apply_f32(p + 3, nlist, d_list, (const float *)d_S, (const float *)d_L, (const float *)d_u,
                               (float *)d_w, d_map, (const float *)d_x));
  return HX_SUCCESS;
}

int hx_fdm_elem_apply_list_p(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list,
                             const void *d_S, const void *d_L, const void *d_u, void *d_w) {
  HX_CALL(hx_fdm_check_prec(prec));
  if (prec == HX_F64) {
    HX_CALL(hx_fdm_elem_apply_list(b, p, nlist, d_list, (const double *)d_S, (const double *)d_L,
                                   (const double *)d_u, (double *)d_w));
    return HX_SUCCESS;
  }
  HX_CHECK(nlist == 0 || d_list, HX_ERR_ARG, "element list is NULL");
  HX_CHECK(nlist == 0 || d_u, HX_ERR_ARG, "NULL array");
  HX_CALL(hx_fdm_elem_f32(b, p, nlist, d_list, d_S, d_L, d_u, d_w, NULL, NULL));
  return HX_SUCCESS;
}

int hx_fdm_elem_apply_map_p(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list,
                            const void *d_S, const void *d_L, const int32_t *d_map, const void *d_x, void *d_w) {
  HX_CALL(hx_fdm_check_prec(prec));
  if (prec == HX_F64) {
    HX_CALL(hx_fdm_elem_apply_map(b, p, nlist, d_list, (const double *)d_S, (const double *)d_L, d_map,
                                  (const double *)d_x, (double *)d_w));
    return HX_SUCCESS;
  }
  HX_CHECK(nlist == 0 || (d_map && d_x), HX_ERR_ARG, "NULL array");
  HX_CALL(hx_fdm_elem_f32(b, p, nlist, d_list, d_S, d_L, NULL, d_w, d_map, d_x));
  return HX_SUCCESS;
}

int hx_fdm_wgather_p(hx_backend b, int64_t n, const int32_t *d_idx, const double *d_w, hx_precision xprec,
                     const void *d_x, hx_precision yprec, void *d_y) {
  HX_CALL(hx_fdm_check_prec(xprec));
  HX_CALL(hx_fdm_check_prec(yprec));
  if (xprec == HX_F64 && yprec == HX_F64) {
    HX_CALL(hx_fdm_wgather(b, n, d_idx, d_w, (const double *)d_x, (double *)d_y));
    return HX_SUCCESS;
  }
  HX_CHECK(b && n >= 0, HX_ERR_ARG, "bad arguments");
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_idx && d_w && d_x && d_y, HX_ERR_ARG, "NULL array");
  HX_CHECK(d_x != d_y, HX_ERR_ARG, "input and output alias");
  const int same = xprec == yprec, to_f32 = yprec == HX_F32;
  HX_CUDA_DISPATCH(b, same ? hx_fdm_cuda_wgather_f32(b, n, d_idx, d_w, (const float *)d_x, (float *)d_y)
                            : hx_fdm_cuda_wgather_mixed(b, n, d_idx, d_w, to_f32, d_x, d_y));
  HX_MC_SCOPE(b);
  if (same) hx_fdm_cpu_wgather_f32(n, d_idx, d_w, (const float *)d_x, (float *)d_y);
  else hx_fdm_cpu_wgather_mixed(n, d_idx, d_w, to_f32, d_x, d_y);
  return HX_SUCCESS;
}

int hx_fdm_wscatter_p(hx_backend b, int64_t ny, int64_t n, const int32_t *d_idx, const double *d_w,
                      hx_precision xprec, const void *d_x, hx_precision yprec, void *d_y) {
  HX_CALL(hx_fdm_check_prec(xprec));
  HX_CALL(hx_fdm_check_prec(yprec));
  HX_CHECK(b && n >= 0 && ny >= 0, HX_ERR_ARG, "bad arguments");
  if (ny == 0) return HX_SUCCESS;
  HX_CHECK(d_y && (n == 0 || (d_idx && d_w && d_x)), HX_ERR_ARG, "NULL array");
  HX_CHECK(d_x != d_y, HX_ERR_ARG, "input and output alias");
  HX_CALL(hx_mem_zero(b, d_y, hx_precision_size(yprec) * (size_t)ny));
  if (n == 0) return HX_SUCCESS;
  const int kind = (xprec == HX_F32) + 2 * (yprec == HX_F32); /* 0 F64->F64, 1 F32->F64, 2 F64->F32, 3 F32 */
  HX_CUDA_DISPATCH(b, hx_fdm_cuda_wscatter(b, n, d_idx, d_w, kind, d_x, d_y));
  HX_MC_SCOPE(b);
  hx_fdm_cpu_wscatter(n, d_idx, d_w, kind, d_x, d_y);
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- grouped layout */
int hx_fdm_grouped_f32_available(hx_backend b, int p) {
  return b && b->kind == HX_BACKEND_CPU && p >= 1 && p <= HX_FDM_PMAX && hx_fdm_cpu_xelem_grouped_on(p + 3);
}

int hx_fdm_elem_apply_grouped_f32(hx_backend b, int p, int32_t g0, int32_t ng, const float *d_Sg,
                                  const float *d_Lg, const int32_t *d_mapg, const float *d_x, float *d_wg) {
  HX_CHECK(hx_fdm_grouped_f32_available(b, p), HX_ERR_ARG,
           "FDM grouped layout: not available for this backend and order p = %d", p);
  HX_CHECK(g0 >= 0 && ng >= 0, HX_ERR_ARG, "groups [%d, %d + %d)", (int)g0, (int)g0, (int)ng);
  if (ng == 0) return HX_SUCCESS;
  HX_CHECK(d_Sg && d_Lg && d_mapg && d_x && d_wg, HX_ERR_ARG, "NULL array");
  HX_CHECK(d_x != d_wg, HX_ERR_ARG, "input and output alias");
  if (b->memcheck) {
    const size_t m = (size_t)p + 3, end = (size_t)(g0 + ng) * 8;
    HX_CALL(hx_mc_check_dev(d_Sg, end * 3 * m * m * sizeof(float), "FDM grouped: S"));
    HX_CALL(hx_mc_check_dev(d_Lg, end * 3 * m * sizeof(float), "FDM grouped: L"));
    HX_CALL(hx_mc_check_dev(d_mapg, end * m * m * m * sizeof(int32_t), "FDM grouped: map"));
    HX_CALL(hx_mc_check_dev(d_wg, end * m * m * m * sizeof(float), "FDM grouped: w"));
  }
  HX_MC_SCOPE(b);
  hx_fdm_cpu_xelem_grouped_f32(p + 3, g0, ng, d_Sg, d_Lg, d_mapg, d_x, d_wg);
  return HX_SUCCESS;
}
