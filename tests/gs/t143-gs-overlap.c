/* The split exchange with work between start and finish (docs/gather-scatter.md
 * "Exchange on cuda": on cuda the pack, copies and combine run on the
 * handle's own queue, ordered against the default queue by events only, and
 * neither start nor finish waits for the default queue). On 1-3 ranks:
 *  gs   FP64 and FP32, with and without hx_gs_exchange_post: shared-row
 *       gather, start, interior-row gather plus writes of the interior rows
 *       on the default queue, finish, then a copy queued at once on the
 *       default queue (it must see the combined shared rows); two exchanges
 *       back to back on different vectors without a host wait (the receive
 *       buffer is reused). Against the blocking assembly bit for bit (the
 *       same adds in the same order); with --backend cuda also against the
 *       cpu backend bit for bit.
 *  op   hx_op_apply through the overlapped exchange, with and without the
 *       fused p.Ap, against an operator without overlap on the same backend
 *       (y bit for bit, p.Ap to rounding), and with --backend cuda against
 *       cpu (1e-12 of max |y|, the bound t110-ax-ref uses for the element
 *       kernels, which differ in the last bits between the backends).
 * Usage: t143-gs-overlap [--backend cpu|cuda] */
#include "hx_disc.h"
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

static int g_rank = 0, g_size = 1;


static void *dalloc(hx_backend b, size_t bytes) {
  void *p = NULL;
  return hx_mem_alloc(b, bytes + 8, &p) ? NULL : p;
}

typedef struct {
  int64_t ng;
  double *asm64; /* blocking FP64 assembly (host, ng) */
  float *asm32;  /* blocking FP32 assembly */
} gs_result;

/* nx x ny x nz box of order p, z-slabs over the ranks */
static int run_gs(const char *backend, gs_result *res) {
  const int nx = 3, ny = 2, nz = 2 * g_size, p = 3, n = p + 1, npe = n * n * n;
  const int64_t nel = (int64_t)nx * ny * nz, e0 = nel * g_rank / g_size, e1 = nel * (g_rank + 1) / g_size;
  const int64_t nl = (e1 - e0) * npe;
  hx_backend b;
  HX_TCALL(hx_backend_create(backend, &b));
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)(nl + 1));
  HX_TCALL(hx_gs_box_ids(nx, ny, nz, p, e0, e1 - e0, ids));
  hx_gs gs;
  HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, nl, ids, &gs));
  const int64_t ng = hx_gs_num_local(gs), s0 = ng - hx_gs_num_shared(gs);
  HX_ASSERT(g_size == 1 || hx_gs_num_shared(gs) > 0, "no shared entries on %d ranks", g_size);
  const size_t lb = sizeof(double) * (size_t)nl, gb = sizeof(double) * (size_t)ng;
  const size_t lf = sizeof(float) * (size_t)nl, gf = sizeof(float) * (size_t)ng;
  double *hl = malloc(lb + 8), *hg = malloc(gb + 8), *hc = malloc(gb + 8);
  float *hlf = malloc(lf + 8), *hgf = malloc(gf + 8), *hcf = malloc(gf + 8);
  for (int64_t i = 0; i < nl; i++) {
    hl[i] = hx_test_key_rand((uint64_t)(e0 * npe + i)); /* by the global L index: the same on every backend */
    hlf[i] = (float)hl[i];
  }
  double *dl = dalloc(b, lb), *dl2 = dalloc(b, lb), *dg = dalloc(b, gb), *dg2 = dalloc(b, gb),
         *dc = dalloc(b, gb);
  float *fl = dalloc(b, lf), *fg = dalloc(b, gf), *fc = dalloc(b, gf);
  HX_ASSERT(dl && dl2 && dg && dg2 && dc && fl && fg && fc, "allocation");
  HX_TCALL(hx_mem_to_device(b, dl, hl, lb));
  HX_TCALL(hx_mem_to_device(b, fl, hlf, lf));
  HX_TCALL(hx_array_axpby(b, nl, dl2, 0.5, dl, 0.0)); /* l2 = l / 2: its assembly is exactly half */

  /* references: the blocking assembly */
  res->ng = ng;
  res->asm64 = malloc(gb + 8), res->asm32 = malloc(gf + 8);
  HX_TCALL(hx_gs_assemble(gs, dl, dg));
  HX_TCALL(hx_mem_to_host(b, res->asm64, dg, gb));
  HX_TCALL(hx_gs_assemble_p(gs, HX_F32, fl, fg));
  HX_TCALL(hx_mem_to_host(b, res->asm32, fg, gf));
  const double *A = res->asm64;
  const float *F = res->asm32;

  HX_TCALL(hx_gs_exchange_post(gs)); /* nothing in flight: a no-op */
  for (int post = 0; post < 2; post++) {
    /* FP64: interior rows doubled on the default queue between start and finish */
    HX_TCALL(hx_mem_zero(b, dg, gb));
    HX_TCALL(hx_gs_gather_part(gs, HX_GS_SHARED, dl, dg));
    HX_TCALL(hx_gs_exchange_start(gs, dg, HX_GS_ADD));
    if (post) {
      HX_TCALL(hx_gs_exchange_post(gs));
      HX_TCALL(hx_gs_exchange_post(gs)); /* posted already: a no-op */
    }
    HX_TCALL(hx_gs_gather_part(gs, HX_GS_INTERIOR, dl, dg));
    HX_TCALL(hx_array_axpby(b, s0, dg, 2.0, dg, 0.0));
    HX_TCALL(hx_gs_scatter(gs, dc, dl2)); /* unrelated work on the default queue: overwrites l2 */
    HX_TCALL(hx_gs_exchange_finish(gs, dg, HX_GS_ADD));
    HX_TCALL(hx_array_copy(b, ng, dc, dg)); /* queued right after finish */
    HX_TCALL(hx_mem_to_host(b, hc, dc, gb));
    int64_t bad = 0;
    for (int64_t r = 0; r < ng; r++) {
      const double want = r < s0 ? 2.0 * A[r] : A[r];
      if (memcmp(&hc[r], &want, sizeof want)) bad++;
    }
    HX_ASSERT(bad == 0,
              "FP64 overlapped exchange (post %d): %lld of %lld entries differ from the blocking one", post,
              (long long)bad, (long long)ng);
    HX_TCALL(hx_array_axpby(b, nl, dl2, 0.5, dl, 0.0)); /* restore l2 */

    /* FP32, the same */
    HX_TCALL(hx_mem_zero(b, fg, gf));
    HX_TCALL(hx_gs_gather_part_p(gs, HX_F32, HX_GS_SHARED, fl, fg));
    HX_TCALL(hx_gs_exchange_start_p(gs, HX_F32, fg, HX_GS_ADD));
    if (post) HX_TCALL(hx_gs_exchange_post(gs));
    HX_TCALL(hx_gs_gather_part_p(gs, HX_F32, HX_GS_INTERIOR, fl, fg));
    HX_TCALL(hx_array_axpby_p(b, HX_F32, s0, fg, 2.0, fg, 0.0));
    HX_TCALL(hx_gs_exchange_finish_p(gs, HX_F32, fg, HX_GS_ADD));
    HX_TCALL(hx_array_copy_p(b, HX_F32, ng, fc, fg));
    HX_TCALL(hx_mem_to_host(b, hcf, fc, gf));
    bad = 0;
    for (int64_t r = 0; r < ng; r++) {
      const float want = r < s0 ? 2.0f * F[r] : F[r];
      if (memcmp(&hcf[r], &want, sizeof want)) bad++;
    }
    HX_ASSERT(bad == 0,
              "FP32 overlapped exchange (post %d): %lld of %lld entries differ from the blocking one", post,
              (long long)bad, (long long)ng);
  }

  /* back to back: g = Z^T l and g2 = Z^T l2 exchanged one after the other,
   * an FP32 exchange between them, no host wait until the end */
  HX_TCALL(hx_gs_gather(gs, dl, dg));
  HX_TCALL(hx_gs_gather(gs, dl2, dg2));
  HX_TCALL(hx_gs_gather_p(gs, HX_F32, fl, fg));
  HX_TCALL(hx_gs_exchange(gs, dg, HX_GS_ADD));
  HX_TCALL(hx_gs_exchange_p(gs, HX_F32, fg, HX_GS_ADD));
  HX_TCALL(hx_gs_exchange_start(gs, dg2, HX_GS_ADD));
  HX_TCALL(hx_gs_exchange_finish(gs, dg2, HX_GS_ADD));
  HX_TCALL(hx_array_axpby(b, ng, dg2, 2.0, dg2, 0.0)); /* 2 (l/2) assembled = the assembly of l */
  HX_TCALL(hx_mem_to_host(b, hg, dg, gb));
  HX_TCALL(hx_mem_to_host(b, hc, dg2, gb));
  HX_TCALL(hx_mem_to_host(b, hcf, fg, gf));
  HX_ASSERT(!memcmp(hg, A, gb), "first of the back-to-back exchanges differs from the blocking one");
  HX_ASSERT(!memcmp(hc, A, gb),
            "second of the back-to-back exchanges differs (receive buffer reused early?)");
  HX_ASSERT(!memcmp(hcf, F, gf), "FP32 exchange between FP64 ones differs");

  hx_mem_free(b, (void **)&dl), hx_mem_free(b, (void **)&dl2), hx_mem_free(b, (void **)&dg);
  hx_mem_free(b, (void **)&dg2), hx_mem_free(b, (void **)&dc);
  hx_mem_free(b, (void **)&fl), hx_mem_free(b, (void **)&fg), hx_mem_free(b, (void **)&fc);
  free(ids), free(hl), free(hg), free(hc), free(hlf), free(hgf), free(hcf);
  HX_TCALL(hx_gs_destroy(&gs));
  HX_TCALL(hx_backend_destroy(&b));
  return 0;
}

typedef struct {
  int64_t ng;
  double *y, *y_nofuse; /* overlapped apply with and without p.Ap (host, ng) */
  double pap;
} op_result;

static int run_op(const char *backend, op_result *res) {
  hx_backend b;
  HX_TCALL(hx_backend_create(backend, &b));
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = 3, mo.ny = 2, mo.nz = 2 * g_size;
  mo.deform = 1;
  hx_mesh m;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m));
  hx_disc d[2];
  for (int k = 0; k < 2; k++) {
    hx_disc_opts o = hx_disc_opts_default();
    o.p = 4;
    o.overlap = k == 0;
    HX_TCALL(hx_disc_create(m, b, &o, &d[k]));
  }
  const int64_t ng = hx_op_size(hx_disc_op(d[0]));
  HX_ASSERT(ng == hx_op_size(hx_disc_op(d[1])), "the two operators differ in size");
  const size_t gb = sizeof(double) * (size_t)ng;
  const int64_t *gid = hx_gs_global_ids(hx_disc_gs(d[0]));
  double *hx = malloc(gb + 8), *hy[3];
  for (int64_t i = 0; i < ng; i++) hx[i] = sin(0.37 * (double)gid[i]) + 0.25 * cos(1.3 * (double)gid[i]);
  double *dx = dalloc(b, gb), *dy = dalloc(b, gb);
  HX_TCALL(hx_mem_to_device(b, dx, hx, gb));
  HX_TCALL(hx_gs_apply_mask(hx_disc_gs(d[0]), dx));
  double pap[3] = {0, 0, 0};
  /* 0: overlapped with p.Ap, 1: overlapped without, 2: not overlapped with p.Ap */
  for (int k = 0; k < 3; k++) {
    hy[k] = malloc(gb + 8);
    HX_TCALL(hx_op_apply(hx_disc_op(d[k == 2]), dx, dy, k == 1 ? NULL : &pap[k]));
    HX_TCALL(hx_mem_to_host(b, hy[k], dy, gb));
  }
  HX_ASSERT(!memcmp(hy[0], hy[1], gb), "overlapped apply: y differs with and without the fused p.Ap");
  HX_ASSERT(!memcmp(hy[0], hy[2], gb), "overlapped apply: y differs from the apply without overlap");
  HX_ASSERT(hx_test_reldiff(pap[0], pap[2], 1e-300) <= 1e-13, "p.Ap %.17g overlapped, %.17g not", pap[0],
            pap[2]);
  HX_ASSERT(pap[0] > 0, "p.Ap = %g is not positive", pap[0]);
  res->ng = ng, res->y = hy[0], res->y_nofuse = hy[1], res->pap = pap[0];
  free(hy[2]), free(hx);
  hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dy);
  HX_TCALL(hx_disc_destroy(&d[0]));
  HX_TCALL(hx_disc_destroy(&d[1]));
  HX_TCALL(hx_mesh_destroy(&m));
  HX_TCALL(hx_backend_destroy(&b));
  return 0;
}

static double max_abs(const double *a, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

int main(int argc, char **argv) {
  hx_test_mpi_init(&argc, &argv, &g_rank, &g_size);
  const char *backend = hx_test_backend_arg(argc, argv);
  hx_test_skip_without_device(backend);
  int rc = 0;
  gs_result g = {0}, gc = {0};
  op_result o = {0}, oc = {0};
  rc = run_gs(backend, &g);
  if (!rc) rc = run_op(backend, &o);
  if (!rc && strcmp(backend, "cpu") && strcmp(backend, "cpu-memcheck")) {
    /* the device against the cpu backend in the same process */
    rc = run_gs("cpu", &gc);
    if (!rc) rc = run_op("cpu", &oc);
    if (!rc) {
      HX_ASSERT(g.ng == gc.ng && !memcmp(g.asm64, gc.asm64, sizeof(double) * (size_t)g.ng),
                "%s FP64 assembly differs from cpu", backend);
      HX_ASSERT(g.ng == gc.ng && !memcmp(g.asm32, gc.asm32, sizeof(float) * (size_t)g.ng),
                "%s FP32 assembly differs from cpu", backend);
      const double sc = max_abs(oc.y, oc.ng);
      double dy = 0, dy2 = 0;
      for (int64_t i = 0; i < o.ng && o.ng == oc.ng; i++) {
        dy = fmax(dy, fabs(o.y[i] - oc.y[i]));
        dy2 = fmax(dy2, fabs(o.y_nofuse[i] - oc.y[i]));
      }
      HX_ASSERT(o.ng == oc.ng && dy <= 1e-12 * sc && dy2 <= 1e-12 * sc,
                "%s overlapped apply differs from cpu by %.3e / %.3e of %.3e", backend, dy, dy2, sc);
      HX_ASSERT(hx_test_reldiff(o.pap, oc.pap, 1e-300) <= 1e-12, "%s p.Ap %.17g, cpu %.17g", backend, o.pap,
                oc.pap);
    }
  }
  free(g.asm64), free(g.asm32), free(gc.asm64), free(gc.asm32);
  free(o.y), free(o.y_nofuse), free(oc.y), free(oc.y_nofuse);
  return hx_test_mpi_finish(rc);
}
