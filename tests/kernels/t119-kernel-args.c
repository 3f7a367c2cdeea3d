/* Every kernel entry point checks its pointer arguments the same way (the
 * one dispatch routine of kernels/private/backend_impl.h, issue 49): on a
 * cpu-memcheck backend, for both precisions,
 *  - a host pointer where backend memory is expected is HX_ERR_ARG
 *    "should be backend memory but is host memory";
 *  - an allocation one entry too short is HX_ERR_ARG "runs past the end";
 *  - a NULL array is HX_ERR_ARG;
 *  - and the same call with the right arguments succeeds (so the errors come
 *    from the arguments, not from the call).
 * Covered: the FP32 and FP64 forms of the tensor transfer, the FDM box solves
 * (list and map) and weighted gather, the extra diagonal, the element
 * operator, and the FP32 gather-scatter (scatter, gather, mask), whose FP32
 * entry points skipped these checks before. One rank. */
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

static hx_backend g_b;

/* the error of a call that must fail with HX_ERR_ARG and msg in its message */
static void expect_fail(int ierr, const char *msg, const char *what) {
  HX_ASSERT(ierr == HX_ERR_ARG && (!msg || strstr(hx_error_message(), msg)), "%s: %s '%s' (expected '%s')", what,
            hx_error_name(ierr), hx_error_message(), msg ? msg : "HX_ERR_ARG");
  hx_error_clear();
}

/* backend memory of n entries of size es, zeroed */
static void *dev(size_t n, size_t es) {
  void *d = NULL;
  if (hx_mem_alloc(g_b, n * es, &d)) return NULL;
  if (hx_mem_zero(g_b, d, n * es)) return NULL;
  return d;
}

#define HOST "should be backend memory but is host memory"
#define SHORT "runs past the end"

static int test_tensor(hx_precision prec) {
  const size_t es = hx_precision_size(prec);
  const int a = 2, c = 3;
  void *A = dev(6, es), *in = dev(8, es), *out = dev(27, es), *out_short = dev(26, es);
  float host[64] = {0};
  HX_TCALL(hx_tensor3_apply_p(g_b, prec, a, c, 1, A, in, out));
  expect_fail(hx_tensor3_apply_p(g_b, prec, a, c, 1, host, in, out), HOST, "tensor: host A");
  expect_fail(hx_tensor3_apply_p(g_b, prec, a, c, 1, A, in, out_short), SHORT, "tensor: short out");
  expect_fail(hx_tensor3_apply_p(g_b, prec, a, c, 1, A, NULL, out), NULL, "tensor: NULL in");
  hx_mem_free(g_b, &A), hx_mem_free(g_b, &in), hx_mem_free(g_b, &out), hx_mem_free(g_b, &out_short);
  return 0;
}

static int test_fdm(hx_precision prec) {
  const size_t es = hx_precision_size(prec);
  const int p = 1, m = p + 3, m3 = m * m * m;
  void *S = dev(3 * m * m, es), *L = dev(3 * m, es), *u = dev(m3, es), *w = dev(m3, es), *w_short = dev(m3 - 1, es);
  void *x = dev(4, es), *y = dev(3, es), *y_short = dev(2, es);
  int32_t *list = dev(1, sizeof(int32_t)), *map = dev(m3, sizeof(int32_t)), *idx = dev(3, sizeof(int32_t));
  double *wt = dev(3, sizeof(double));
  float host[4 * 4 * 4 * 3] = {0};
  /* list {0}, map and idx all 0 (zeroed): valid */
  HX_TCALL(hx_fdm_elem_apply_list_p(g_b, prec, p, 1, list, S, L, u, w));
  expect_fail(hx_fdm_elem_apply_list_p(g_b, prec, p, 1, list, host, L, u, w), HOST, "FDM list: host S");
  expect_fail(hx_fdm_elem_apply_list_p(g_b, prec, p, 1, list, S, L, u, w_short), SHORT, "FDM list: short w");
  expect_fail(hx_fdm_elem_apply_list_p(g_b, prec, p, 1, list, S, NULL, u, w), NULL, "FDM list: NULL L");
  HX_TCALL(hx_fdm_elem_apply_map_p(g_b, prec, p, 1, list, S, L, map, x, w));
  expect_fail(hx_fdm_elem_apply_map_p(g_b, prec, p, 1, list, S, L, (const int32_t *)host, x, w), HOST,
              "FDM map: host map");
  expect_fail(hx_fdm_elem_apply_map_p(g_b, prec, p, 1, list, S, L, map, x, w_short), SHORT, "FDM map: short w");
  HX_TCALL(hx_fdm_wgather_p(g_b, 3, idx, wt, prec, x, prec, y));
  expect_fail(hx_fdm_wgather_p(g_b, 3, idx, wt, prec, x, prec, y_short), SHORT, "FDM wgather: short y");
  expect_fail(hx_fdm_wgather_p(g_b, 3, idx, (const double *)host, prec, x, prec, y), HOST, "FDM wgather: host w");
  void *all[] = {S, L, u, w, w_short, x, y, y_short, list, map, idx, wt};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) hx_mem_free(g_b, &all[i]);
  return 0;
}

static int test_diag(hx_precision prec) {
  const size_t es = hx_precision_size(prec);
  int32_t *idx = dev(2, sizeof(int32_t));
  const int32_t h_idx[2] = {0, 1}; /* distinct entries */
  HX_TCALL(hx_mem_to_device(g_b, idx, h_idx, sizeof h_idx));
  void *r = dev(2, es), *r_short = dev(1, es), *x = dev(2, es), *y = dev(2, es);
  float host[2] = {0};
  HX_TCALL(hx_array_diag_add_list_p(g_b, prec, 2, 2, idx, r, x, y, NULL, 0));
  expect_fail(hx_array_diag_add_list_p(g_b, prec, 2, 2, idx, host, x, y, NULL, 0), HOST, "diag: host r");
  expect_fail(hx_array_diag_add_list_p(g_b, prec, 2, 2, idx, r_short, x, y, NULL, 0), SHORT, "diag: short r");
  expect_fail(hx_array_diag_add_list_p(g_b, prec, 2, 2, idx, r, x, host, NULL, 0), HOST, "diag: host y");
  expect_fail(hx_array_diag_add_list_p(g_b, prec, 2, 2, NULL, r, x, y, NULL, 0), NULL, "diag: NULL idx");
  void *all[] = {idx, r, r_short, x, y};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) hx_mem_free(g_b, &all[i]);
  return 0;
}

static int test_ax(hx_precision prec) {
  const size_t es = hx_precision_size(prec);
  double nodes[24], kappa = 1.0;
  for (int v = 0; v < 8; v++)
    nodes[3 * v] = v & 1, nodes[3 * v + 1] = (v >> 1) & 1, nodes[3 * v + 2] = (v >> 2) & 1;
  hx_ax ax = NULL;
  HX_TCALL(hx_ax_create_prec(g_b, 2, 1, 8, nodes, &kappa, NULL, HX_GEO_PRECOMPUTED, prec, &ax));
  const size_t nl = 27;
  void *u = dev(nl, es), *w = dev(nl, es), *w_short = dev(nl - 1, es);
  float host[27] = {0};
  double uw = 0.0;
  HX_TCALL(hx_ax_apply_p(ax, u, w, &uw));
  expect_fail(hx_ax_apply_p(ax, host, w, &uw), HOST, "operator: host u");
  expect_fail(hx_ax_apply_p(ax, u, w_short, &uw), SHORT, "operator: short w");
  expect_fail(hx_ax_apply_p(ax, u, NULL, &uw), NULL, "operator: NULL w");
  /* the FP64 names on an operator of the other precision */
  if (prec == HX_F32) expect_fail(hx_ax_apply(ax, u, w, &uw), "FP64 apply of an FP32 operator", "FP64 on FP32");
  hx_mem_free(g_b, &u), hx_mem_free(g_b, &w), hx_mem_free(g_b, &w_short);
  HX_TCALL(hx_ax_destroy(&ax));
  return 0;
}

static int test_gs_f32(void) {
  const int64_t nl = 8, ids[8] = {1, 2, 3, 4, 1, 2, 3, 4};
  hx_gs gs = NULL;
  HX_TCALL(hx_gs_create(g_b, MPI_COMM_WORLD, nl, ids, &gs));
  const int flags[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  HX_TCALL(hx_gs_set_mask(gs, flags));
  float *g = dev(4, sizeof(float)), *g_short = dev(3, sizeof(float)), *l = dev(8, sizeof(float));
  float *l_short = dev(7, sizeof(float));
  float host[8] = {0};
  HX_TCALL(hx_gs_scatter_p(gs, HX_F32, g, l));
  expect_fail(hx_gs_scatter_p(gs, HX_F32, host, l), HOST, "gs scatter: host G");
  expect_fail(hx_gs_scatter_p(gs, HX_F32, g, l_short), SHORT, "gs scatter: short L");
  HX_TCALL(hx_gs_gather_p(gs, HX_F32, l, g));
  expect_fail(hx_gs_gather_p(gs, HX_F32, host, g), HOST, "gs gather: host L");
  expect_fail(hx_gs_gather_p(gs, HX_F32, l, g_short), SHORT, "gs gather: short G");
  HX_TCALL(hx_gs_apply_mask_p(gs, HX_F32, g));
  expect_fail(hx_gs_apply_mask_p(gs, HX_F32, host), HOST, "gs mask: host G");
  expect_fail(hx_gs_apply_mask_p(gs, HX_F32, g_short), SHORT, "gs mask: short G");
  void *all[] = {g, g_short, l, l_short};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) hx_mem_free(g_b, &all[i]);
  HX_TCALL(hx_gs_destroy(&gs));
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  HX_TCALL(hx_backend_create("cpu-memcheck", &g_b));
  for (int k = 0; k < 2; k++) {
    const hx_precision prec = k ? HX_F32 : HX_F64;
    test_tensor(prec);
    test_fdm(prec);
    test_diag(prec);
    test_ax(prec);
  }
  test_gs_f32();
  HX_TCALL(hx_backend_destroy(&g_b));
  MPI_Finalize();
  return hx_test_result();
}
