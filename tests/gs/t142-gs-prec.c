/* Gather-scatter with a precision parameter (hx_kernels_prec.h) on GLL boxes
 * over 1-4 ranks (slab and hashed element distributions), with a Dirichlet
 * mask. Checks:
 *  - HX_F64 through the _p functions gives the bits of the double ones
 *    (scatter, gather, assemble, dot, mask);
 *  - FP32 scatter = the FP64 scatter of the widened G-vector (exact);
 *  - FP32 gather = a host reference summing each row in float in increasing
 *    L order (bit for bit), and within (m-1) eps_f sum|l| of the FP64 gather
 *    (relative ~1e-7: m <= 8 float additions per row);
 *  - FP32 exchange ADD: bit-identical on all holders (MIN and MAX exchanges
 *    of the result leave it unchanged), repeatable, within the float bound of
 *    the FP64 assembly; MIN/MAX exact (the extrema over the holders);
 *  - split gather_part(SHARED) + start_p + gather_part(INTERIOR) + finish_p
 *    gives the bits of gather_p + exchange_p;
 *  - FP32 dot (FP64 accumulation of exact float products) = the FP64 dot of
 *    the widened vectors (bit for bit on the CPU);
 *  - apply_mask_p zeroes exactly the masked entries;
 *  - finishing an FP32 exchange with the FP64 call (and the reverse) is
 *    HX_ERR_ARG;
 *  - with --backend cuda, every FP32 result bit for bit against the CPU backend.
 */
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

#include <float.h>

#define EPSF ((double)FLT_EPSILON)

static float frand(uint64_t k) { return (float)hx_test_key_rand(k); }

static void *dalloc(hx_backend b, size_t bytes) {
  void *p = NULL;
  return hx_mem_alloc(b, bytes + 8, &p) ? NULL : p;
}

typedef struct {
  int64_t nl, ng;
  float *l_asm; /* FP32 assembled vector (host, ng), for the cpu/cuda comparison */
  float *g_gather, *g_scatter;
  double dot;
} result_t;

static int run_case(hx_backend b, int nx, int ny, int nz, int p, int dist, result_t *res) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = p + 1, npe = n * n * n;
  const int64_t nel = (int64_t)nx * ny * nz;
  int64_t ne = 0;
  int64_t *el = malloc(sizeof(int64_t) * (nel + 1));
  for (int64_t e = 0; e < nel; e++) {
    const int r = dist == 0 ? (int)(e * size / nel) : (int)(hx_test_mix64((uint64_t)e * 31 + 7) % (uint64_t)size);
    if (r == rank) el[ne++] = e;
  }
  const int64_t nl = ne * npe;
  int64_t *ids = malloc(sizeof(int64_t) * (nl + 1));
  for (int64_t a = 0; a < ne; a++) HX_TCALL(hx_gs_box_ids(nx, ny, nz, p, el[a], 1, ids + a * npe));
  hx_gs gs = NULL;
  HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, nl, ids, &gs));
  const int64_t ng = hx_gs_num_local(gs);
  const int32_t *map = hx_gs_map_host(gs);
  const int64_t *gid = hx_gs_global_ids(gs);
  const size_t nl1 = (size_t)nl + 1, ng1 = (size_t)ng + 1;

  /* host data: L contributions random floats, G values f(id) */
  float *hl = malloc(4 * nl1), *hg = malloc(4 * ng1), *f1 = malloc(4 * ng1), *f2 = malloc(4 * ng1),
        *fl = malloc(4 * nl1);
  double *hl64 = malloc(8 * nl1), *hg64 = malloc(8 * ng1), *d1 = malloc(8 * ng1), *d2 = malloc(8 * ng1),
         *dl = malloc(8 * nl1);
  for (int64_t i = 0; i < nl; i++)
    hl[i] = frand((uint64_t)el[i / npe] * 1000003 + (uint64_t)(i % npe)), hl64[i] = hl[i];
  for (int64_t r = 0; r < ng; r++) hg[r] = frand((uint64_t)gid[r] * 17), hg64[r] = hg[r];
  float *gL = dalloc(b, 4 * nl1), *gG = dalloc(b, 4 * ng1), *gG2 = dalloc(b, 4 * ng1);
  double *dL = dalloc(b, 8 * nl1), *dG = dalloc(b, 8 * ng1), *dG2 = dalloc(b, 8 * ng1);
  HX_ASSERT(gL && gG && gG2 && dL && dG && dG2, "alloc");

  /* ---- scatter */
  HX_TCALL(hx_mem_to_device(b, gG, hg, 4 * (size_t)ng));
  HX_TCALL(hx_mem_to_device(b, dG, hg64, 8 * (size_t)ng));
  HX_TCALL(hx_gs_scatter_p(gs, HX_F32, gG, gL));
  HX_TCALL(hx_gs_scatter(gs, dG, dL));
  HX_TCALL(hx_mem_to_host(b, fl, gL, 4 * (size_t)nl));
  HX_TCALL(hx_mem_to_host(b, dl, dL, 8 * (size_t)nl));
  for (int64_t i = 0, bad = 0; i < nl && bad < 3; i++)
    if ((double)fl[i] != dl[i]) {
      bad++;
      HX_ASSERT(0, "F32 scatter entry %lld", (long long)i);
    }
  HX_TCALL(hx_gs_scatter_p(gs, HX_F64, dG, dL));
  {
    double *dl2 = malloc(8 * nl1);
    HX_TCALL(hx_mem_to_host(b, dl2, dL, 8 * (size_t)nl));
    HX_ASSERT(!memcmp(dl, dl2, 8 * (size_t)nl), "scatter_p(F64) differs");
    free(dl2);
  }
  res->g_scatter = malloc(4 * nl1);
  memcpy(res->g_scatter, fl, 4 * (size_t)nl);

  /* ---- gather: host float reference in increasing L order */
  HX_TCALL(hx_mem_to_device(b, gL, hl, 4 * (size_t)nl));
  HX_TCALL(hx_mem_to_device(b, dL, hl64, 8 * (size_t)nl));
  HX_TCALL(hx_gs_gather_p(gs, HX_F32, gL, gG));
  HX_TCALL(hx_gs_gather(gs, dL, dG));
  HX_TCALL(hx_mem_to_host(b, f1, gG, 4 * (size_t)ng));
  HX_TCALL(hx_mem_to_host(b, d1, dG, 8 * (size_t)ng));
  {
    float *ref = malloc(4 * ng1);
    double *sabs = calloc(ng1, 8);
    int *cnt = calloc(ng1, sizeof(int));
    for (int64_t i = 0; i < nl; i++) {
      const int32_t r = map[i];
      if (r < 0) continue;
      ref[r] = cnt[r]++ ? ref[r] + hl[i] : hl[i];
      sabs[r] += fabs(hl[i]);
    }
    for (int64_t r = 0, bad = 0; r < ng && bad < 3; r++) {
      if (memcmp(&ref[r], &f1[r], 4)) {
        bad++;
        HX_ASSERT(0, "F32 gather row %lld: %a vs reference %a", (long long)r, (double)f1[r], (double)ref[r]);
      }
      if (fabs(f1[r] - d1[r]) > (cnt[r] - 1) * EPSF * sabs[r]) {
        bad++;
        HX_ASSERT(0, "F32 gather row %lld vs FP64", (long long)r);
      }
    }
    free(ref), free(sabs), free(cnt);
  }
  HX_TCALL(hx_gs_gather_p(gs, HX_F64, dL, dG2));
  HX_TCALL(hx_mem_to_host(b, d2, dG2, 8 * (size_t)ng));
  HX_ASSERT(!memcmp(d1, d2, 8 * (size_t)ng), "gather_p(F64) differs");
  res->g_gather = malloc(4 * ng1);
  memcpy(res->g_gather, f1, 4 * (size_t)ng);

  /* ---- assembly: exchange ADD, bit-identical on all holders */
  HX_TCALL(hx_gs_assemble_p(gs, HX_F32, gL, gG));
  HX_TCALL(hx_gs_assemble(gs, dL, dG));
  HX_TCALL(hx_mem_to_host(b, f1, gG, 4 * (size_t)ng));
  HX_TCALL(hx_mem_to_host(b, d1, dG, 8 * (size_t)ng));
  {
    /* bound: mult-1 float additions of values of magnitude <= 1 each */
    const double *mult = NULL;
    double *hm = malloc(8 * ng1);
    mult = hx_gs_multiplicity(gs);
    HX_TCALL(hx_mem_to_host(b, hm, mult, 8 * (size_t)ng));
    for (int64_t r = 0, bad = 0; r < ng && bad < 3; r++)
      if (fabs(f1[r] - d1[r]) > hm[r] * hm[r] * EPSF) {
        bad++;
        HX_ASSERT(0, "F32 assembly row %lld: %.9g vs %.17g", (long long)r, f1[r], d1[r]);
      }
    free(hm);
  }
  HX_TCALL(hx_mem_copy(b, gG2, gG, 4 * (size_t)ng));
  HX_TCALL(hx_gs_exchange_p(gs, HX_F32, gG2, HX_GS_MIN));
  HX_TCALL(hx_mem_to_host(b, f2, gG2, 4 * (size_t)ng));
  HX_ASSERT(!memcmp(f1, f2, 4 * (size_t)ng), "F32 assembled values differ between holders (MIN)");
  HX_TCALL(hx_mem_copy(b, gG2, gG, 4 * (size_t)ng));
  HX_TCALL(hx_gs_exchange_p(gs, HX_F32, gG2, HX_GS_MAX));
  HX_TCALL(hx_mem_to_host(b, f2, gG2, 4 * (size_t)ng));
  HX_ASSERT(!memcmp(f1, f2, 4 * (size_t)ng), "F32 assembled values differ between holders (MAX)");
  HX_TCALL(hx_gs_assemble_p(gs, HX_F32, gL, gG2));
  HX_TCALL(hx_mem_to_host(b, f2, gG2, 4 * (size_t)ng));
  HX_ASSERT(!memcmp(f1, f2, 4 * (size_t)ng), "F32 assembly not repeatable");
  /* F64 through _p */
  HX_TCALL(hx_gs_assemble_p(gs, HX_F64, dL, dG2));
  HX_TCALL(hx_mem_to_host(b, d2, dG2, 8 * (size_t)ng));
  HX_ASSERT(!memcmp(d1, d2, 8 * (size_t)ng), "assemble_p(F64) differs");
  res->l_asm = malloc(4 * ng1);
  memcpy(res->l_asm, f1, 4 * (size_t)ng);
  /* split gather + exchange */
  HX_TCALL(hx_gs_gather_part_p(gs, HX_F32, HX_GS_SHARED, gL, gG2));
  HX_TCALL(hx_gs_exchange_start_p(gs, HX_F32, gG2, HX_GS_ADD));
  HX_TCALL(hx_gs_gather_part_p(gs, HX_F32, HX_GS_INTERIOR, gL, gG2));
  HX_TCALL(hx_gs_exchange_finish_p(gs, HX_F32, gG2, HX_GS_ADD));
  HX_TCALL(hx_mem_to_host(b, f2, gG2, 4 * (size_t)ng));
  HX_ASSERT(!memcmp(f1, f2, 4 * (size_t)ng), "F32 split gather/exchange differs");

  /* ---- MIN / MAX of per-rank values: the extrema over holders, exact */
  {
    for (int64_t r = 0; r < ng; r++) hg[r] = frand((uint64_t)gid[r] * 131 + (uint64_t)rank * 7919 + 3);
    float *hmin = malloc(4 * ng1), *hmax = malloc(4 * ng1);
    HX_TCALL(hx_mem_to_device(b, gG, hg, 4 * (size_t)ng));
    HX_TCALL(hx_gs_exchange_p(gs, HX_F32, gG, HX_GS_MIN));
    HX_TCALL(hx_mem_to_host(b, hmin, gG, 4 * (size_t)ng));
    HX_TCALL(hx_mem_to_device(b, gG, hg, 4 * (size_t)ng));
    HX_TCALL(hx_gs_exchange_p(gs, HX_F32, gG, HX_GS_MAX));
    HX_TCALL(hx_mem_to_host(b, hmax, gG, 4 * (size_t)ng));
    /* the FP64 exchange of the widened values is exact too: compare */
    for (int64_t r = 0; r < ng; r++) hg64[r] = hg[r];
    HX_TCALL(hx_mem_to_device(b, dG, hg64, 8 * (size_t)ng));
    HX_TCALL(hx_gs_exchange(gs, dG, HX_GS_MIN));
    HX_TCALL(hx_mem_to_host(b, d1, dG, 8 * (size_t)ng));
    HX_TCALL(hx_mem_to_device(b, dG, hg64, 8 * (size_t)ng));
    HX_TCALL(hx_gs_exchange(gs, dG, HX_GS_MAX));
    HX_TCALL(hx_mem_to_host(b, d2, dG, 8 * (size_t)ng));
    for (int64_t r = 0, bad = 0; r < ng && bad < 3; r++) {
      if ((double)hmin[r] != d1[r] || (double)hmax[r] != d2[r]) {
        bad++;
        HX_ASSERT(0, "F32 MIN/MAX row %lld", (long long)r);
      }
      if (hmin[r] > hg[r] || hmax[r] < hg[r]) {
        bad++;
        HX_ASSERT(0, "F32 MIN/MAX row %lld not an extremum", (long long)r);
      }
    }
    free(hmin), free(hmax);
  }

  /* ---- dot */
  {
    double d32, d64;
    HX_TCALL(hx_mem_to_device(b, gG2, res->l_asm, 4 * (size_t)ng));
    for (int64_t r = 0; r < ng; r++) d2[r] = res->l_asm[r];
    HX_TCALL(hx_mem_to_device(b, dG2, d2, 8 * (size_t)ng));
    HX_TCALL(hx_gs_dot_p(gs, HX_F32, gG2, gG2, &d32));
    HX_TCALL(hx_gs_dot(gs, dG2, dG2, &d64));
    if (hx_backend_get_kind(b) == HX_BACKEND_CPU)
      HX_ASSERT(d32 == d64, "F32 gs dot %.17g != FP64 dot of the widened vector %.17g", d32, d64);
    else
      HX_ASSERT(hx_test_reldiff(d32, d64, 1e-300) <= 1e-14, "F32 gs dot %.17g vs %.17g", d32, d64);
    double d64b;
    HX_TCALL(hx_gs_dot_p(gs, HX_F64, dG2, dG2, &d64b));
    HX_ASSERT(d64b == d64, "gs_dot_p(F64) differs");
    res->dot = d32;
  }

  /* ---- mask: boundary faces of the box flagged on their L entries */
  {
    int *flag = calloc(nl1, sizeof(int));
    for (int64_t a = 0; a < ne; a++) {
      const int64_t e = el[a], ex = e % nx, ey = (e / nx) % ny, ez = e / ((int64_t)nx * ny);
      for (int q = 0; q < npe; q++) {
        const int i = q % n, j = (q / n) % n, k = q / (n * n);
        flag[a * npe + q] = (ex == 0 && i == 0) || (ey == ny - 1 && j == p) || (ez == 0 && k == 0);
      }
    }
    HX_TCALL(hx_gs_set_mask(gs, flag));
    double *hm = malloc(8 * ng1);
    HX_TCALL(hx_mem_to_host(b, hm, hx_gs_mask(gs), 8 * (size_t)ng));
    HX_TCALL(hx_mem_to_device(b, gG, res->l_asm, 4 * (size_t)ng));
    HX_TCALL(hx_gs_apply_mask_p(gs, HX_F32, gG));
    HX_TCALL(hx_mem_to_host(b, f2, gG, 4 * (size_t)ng));
    int64_t nz0 = 0;
    for (int64_t r = 0, bad = 0; r < ng && bad < 3; r++) {
      const float want = hm[r] == 0.0 ? 0.0f : res->l_asm[r];
      nz0 += hm[r] == 0.0;
      if (memcmp(&want, &f2[r], 4)) {
        bad++;
        HX_ASSERT(0, "F32 mask row %lld", (long long)r);
      }
    }
    HX_ASSERT(nz0 == hx_gs_num_masked(gs), "masked count");
    for (int64_t r = 0; r < ng; r++) d2[r] = res->l_asm[r];
    HX_TCALL(hx_mem_to_device(b, dG, d2, 8 * (size_t)ng));
    HX_TCALL(hx_gs_apply_mask_p(gs, HX_F64, dG));
    HX_TCALL(hx_mem_to_host(b, d1, dG, 8 * (size_t)ng));
    for (int64_t r = 0, bad = 0; r < ng && bad < 3; r++)
      if (d1[r] != (double)f2[r]) {
        bad++;
        HX_ASSERT(0, "apply_mask_p(F64) row %lld", (long long)r);
      }
    free(hm), free(flag);
  }

  /* ---- mixing precisions between start and finish is an error */
  {
    HX_TCALL(hx_gs_exchange_start_p(gs, HX_F32, gG, HX_GS_ADD));
    HX_ASSERT(hx_gs_exchange_finish(gs, (double *)(void *)gG, HX_GS_ADD) == HX_ERR_ARG,
              "F64 finish of F32 start");
    hx_error_clear();
    HX_TCALL(hx_gs_exchange_finish_p(gs, HX_F32, gG, HX_GS_ADD));
    HX_TCALL(hx_gs_exchange_start_p(gs, HX_F64, dG, HX_GS_ADD));
    HX_ASSERT(hx_gs_exchange_finish_p(gs, HX_F32, dG, HX_GS_ADD) == HX_ERR_ARG, "F32 finish of F64 start");
    hx_error_clear();
    HX_TCALL(hx_gs_exchange_finish_p(gs, HX_F64, dG, HX_GS_ADD));
  }

  res->nl = nl;
  res->ng = ng;
  hx_mem_free(b, (void **)&gL), hx_mem_free(b, (void **)&gG), hx_mem_free(b, (void **)&gG2);
  hx_mem_free(b, (void **)&dL), hx_mem_free(b, (void **)&dG), hx_mem_free(b, (void **)&dG2);
  free(hl), free(hg), free(f1), free(f2), free(fl), free(hl64), free(hg64), free(d1), free(d2), free(dl);
  free(ids), free(el);
  HX_TCALL(hx_gs_destroy(&gs));
  return 0;
}

static void result_free(result_t *r) { free(r->l_asm), free(r->g_gather), free(r->g_scatter); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  hx_backend b = NULL, cpu = NULL;
  HX_TCALL(hx_test_backends(argc, argv, &b, NULL));
  const int is_cuda = hx_backend_get_kind(b) == HX_BACKEND_CUDA;
  if (is_cuda) HX_TCALL(hx_backend_create("cpu", &cpu));
  const int cases[][5] = {{3, 2, 4, 1, 0}, {4, 3, 3, 3, 1}, {2, 3, 5, 5, 0}, {3, 3, 3, 7, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const int *c = cases[k];
    result_t r, rc;
    memset(&r, 0, sizeof r), memset(&rc, 0, sizeof rc);
    if (run_case(b, c[0], c[1], c[2], c[3], c[4], &r)) break;
    if (is_cuda) {
      if (run_case(cpu, c[0], c[1], c[2], c[3], c[4], &rc)) break;
      HX_ASSERT(!memcmp(r.l_asm, rc.l_asm, 4 * (size_t)r.ng), "case %zu: cuda F32 assembly differs from cpu",
                k);
      HX_ASSERT(!memcmp(r.g_gather, rc.g_gather, 4 * (size_t)r.ng), "case %zu: cuda F32 gather differs", k);
      HX_ASSERT(!memcmp(r.g_scatter, rc.g_scatter, 4 * (size_t)r.nl), "case %zu: cuda F32 scatter differs",
                k);
      result_free(&rc);
    }
    result_free(&r);
  }
  if (cpu) hx_backend_destroy(&cpu);
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
