/* Element-level FDM box solves: argument checks and dispatch to
 * cpu/fdm_cpu.c or cuda/fdm_cuda.cu. Math: hx_fdm_math.h, docs/fdm.md. */
#include "backend_impl.h"
#include "fdm_impl.h"
#include "hx_fdm_math.h"

/* The box solves of both precisions: u (whole boxes) or, with map, x[map]
 * as the input. The list holds nlist distinct elements (NULL: 0..nlist-1),
 * so every per-element array holds at least nlist elements' entries; x, a
 * G-vector read through the map, at least one. */
static int hx_fdm_elem(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list, const void *d_S,
                       const void *d_L, const void *d_u, void *d_w, const int32_t *d_map, const void *d_x) {
  HX_CHECK(b, HX_ERR_ARG, "backend is NULL");
  HX_CHECK_PREC(prec);
  HX_CHECK(p >= 1 && p <= HX_FDM_PMAX, HX_ERR_ARG, "order p = %d outside 1..%d", p, HX_FDM_PMAX);
  HX_CHECK(nlist >= 0, HX_ERR_ARG, "negative element count %d", (int)nlist);
  if (nlist == 0) return HX_SUCCESS;
  HX_CHECK(d_S && d_L && d_w && (d_u || (d_map && d_x)), HX_ERR_ARG, "NULL array");
  HX_CHECK(d_u != d_w && d_x != d_w, HX_ERR_ARG, d_map ? "input and output vectors alias" : "input and output boxes alias");
  const int m = p + 3;
  const size_t es = hx_precision_size(prec), ne = (size_t)nlist, m3 = (size_t)m * m * m;
  HX_KERNEL_DISPATCH(
      b, "FDM box solve",
      prec == HX_F32 ? hx_fdm_cuda_apply_f32(b, m, nlist, d_list, d_S, d_L, d_u, d_w, d_map, d_x)
      : d_map        ? hx_fdm_cuda_apply_map(b, m, nlist, d_list, d_S, d_L, d_map, d_x, d_w)
                     : hx_fdm_cuda_apply(b, m, nlist, d_list, d_S, d_L, d_u, d_w),
      HX_CALL(prec == HX_F32 ? hx_fdm_cpu_apply_f32(m, nlist, d_list, d_S, d_L, d_u, d_w, d_map, d_x)
              : d_map        ? hx_fdm_cpu_apply_map(m, nlist, d_list, d_S, d_L, d_map, d_x, d_w)
                             : hx_fdm_cpu_apply(m, nlist, d_list, d_S, d_L, d_u, d_w)),
      HX_KARG(d_list, d_list ? ne : 0, sizeof(int32_t), "element list"), HX_KARG(d_S, ne * 3 * m * m, es, "S"),
      HX_KARG(d_L, ne * 3 * m, es, "L"), HX_KARG(d_u, d_map ? 0 : ne * m3, es, "u"),
      HX_KARG(d_map, d_map ? ne * m3 : 0, sizeof(int32_t), "map"), HX_KARG(d_x, d_map ? 1 : 0, es, "x"),
      HX_KARG(d_w, ne * m3, es, "w"));
  return HX_SUCCESS;
}

/* The FP64 names (hx_fdm_elem_apply, _list, _map, hx_fdm_wgather) are inline
 * forms of the _p functions below (hx_kernels.h). */
int hx_fdm_elem_apply_list_p(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list,
                             const void *d_S, const void *d_L, const void *d_u, void *d_w) {
  HX_CHECK(nlist <= 0 || d_u, HX_ERR_ARG, "NULL array");
  HX_CALL(hx_fdm_elem(b, prec, p, nlist, d_list, d_S, d_L, d_u, d_w, NULL, NULL));
  return HX_SUCCESS;
}

int hx_fdm_elem_apply_map_p(hx_backend b, hx_precision prec, int p, int32_t nlist, const int32_t *d_list,
                            const void *d_S, const void *d_L, const int32_t *d_map, const void *d_x, void *d_w) {
  HX_CHECK(nlist <= 0 || (d_map && d_x), HX_ERR_ARG, "NULL array");
  HX_CALL(hx_fdm_elem(b, prec, p, nlist, d_list, d_S, d_L, NULL, d_w, d_map, d_x));
  return HX_SUCCESS;
}

/* hx_fdm_wgather is its F64 -> F64 form (hx_kernels.h) */
int hx_fdm_wgather_p(hx_backend b, int64_t n, const int32_t *d_idx, const double *d_w, hx_precision xprec,
                     const void *d_x, hx_precision yprec, void *d_y) {
  HX_CHECK_PREC(xprec);
  HX_CHECK_PREC(yprec);
  HX_CHECK(b && n >= 0, HX_ERR_ARG, "bad arguments");
  if (n == 0) return HX_SUCCESS;
  HX_CHECK(d_idx && d_w && d_x && d_y, HX_ERR_ARG, "NULL array");
  const int same = xprec == yprec, to_f32 = yprec == HX_F32;
  HX_CHECK((xprec == HX_F64 && same) || d_x != d_y, HX_ERR_ARG, "input and output alias");
  HX_KERNEL_DISPATCH(b, "FDM weighted gather",
                     !same ? hx_fdm_cuda_wgather_mixed(b, n, d_idx, d_w, to_f32, d_x, d_y)
                     : to_f32 ? hx_fdm_cuda_wgather_f32(b, n, d_idx, d_w, d_x, d_y)
                              : hx_fdm_cuda_wgather(b, n, d_idx, d_w, d_x, d_y),
                     if (!same) hx_fdm_cpu_wgather_mixed(n, d_idx, d_w, to_f32, d_x, d_y);
                     else if (to_f32) hx_fdm_cpu_wgather_f32(n, d_idx, d_w, d_x, d_y);
                     else hx_fdm_cpu_wgather(n, d_idx, d_w, d_x, d_y),
                     HX_KARG(d_idx, n, sizeof(int32_t), "idx"), HX_KARG(d_w, n, sizeof(double), "weights"),
                     HX_KARG(d_x, 1, hx_precision_size(xprec), "x"), HX_KARG(d_y, n, hx_precision_size(yprec), "y"));
  return HX_SUCCESS;
}

int hx_fdm_wscatter_p(hx_backend b, int64_t ny, int64_t n, const int32_t *d_idx, const double *d_w,
                      hx_precision xprec, const void *d_x, hx_precision yprec, void *d_y) {
  HX_CHECK_PREC(xprec);
  HX_CHECK_PREC(yprec);
  HX_CHECK(b && n >= 0 && ny >= 0, HX_ERR_ARG, "bad arguments");
  if (ny == 0) return HX_SUCCESS;
  HX_CHECK(d_y && (n == 0 || (d_idx && d_w && d_x)), HX_ERR_ARG, "NULL array");
  HX_CHECK(d_x != d_y, HX_ERR_ARG, "input and output alias");
  HX_CALL(hx_mem_zero(b, d_y, hx_precision_size(yprec) * (size_t)ny));
  if (n == 0) return HX_SUCCESS;
  const int kind = (xprec == HX_F32) + 2 * (yprec == HX_F32); /* 0 F64->F64, 1 F32->F64, 2 F64->F32, 3 F32 */
  HX_KERNEL_DISPATCH(b, "FDM weighted scatter", hx_fdm_cuda_wscatter(b, n, d_idx, d_w, kind, d_x, d_y),
                     hx_fdm_cpu_wscatter(n, d_idx, d_w, kind, d_x, d_y), HX_KARG(d_idx, n, sizeof(int32_t), "idx"),
                     HX_KARG(d_w, n, sizeof(double), "weights"), HX_KARG(d_x, n, hx_precision_size(xprec), "x"),
                     HX_KARG(d_y, 1, hx_precision_size(yprec), "y"));
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
  const size_t m = (size_t)p + 3, end = (size_t)(g0 + ng) * 8;
  const hx_karg args[] = {HX_KARG(d_Sg, end * 3 * m * m, sizeof(float), "S"),
                          HX_KARG(d_Lg, end * 3 * m, sizeof(float), "L"),
                          HX_KARG(d_mapg, end * m * m * m, sizeof(int32_t), "map"),
                          HX_KARG(d_x, 1, sizeof(float), "x"), HX_KARG(d_wg, end * m * m * m, sizeof(float), "w")};
  HX_CALL(hx_kernel_args(b, "FDM grouped", 5, args)); /* a CPU kernel: no CUDA launcher */
  HX_MC_SCOPE(b);
  hx_fdm_cpu_xelem_grouped_f32(p + 3, g0, ng, d_Sg, d_Lg, d_mapg, d_x, d_wg);
  return HX_SUCCESS;
}
