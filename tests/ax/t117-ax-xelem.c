/* The cross-element AVX2 kernel (kernels/cpu/ax_xelem_cpu.c, issue 17 item
 * 3) against the one-element kernels of ax_cpu.c (HEXCG_AX_XELEM=0), for
 * every order 1..7 (the orders it does not serve must give the same bits,
 * since both runs take the one-element kernel):
 *
 *  - meshes: a Kershaw mesh (eps 0.3, 6x4x4 elements of the unit cube: the
 *    mesh generator's vertex map, a mix of affine and curved hex8 elements,
 *    checked below) and a box (every element affine); FP64 and split
 *    geometry (split: affine + split records); lambda 0 (6 factors) and > 0
 *    (the mass term, 7);
 *  - element lists of lengths 0, 1, 3, 5, 11, 37 (a stride-37 permutation,
 *    so groups of 4 mix record kinds at the kind boundaries and end short)
 *    and the whole mesh (list NULL), on the L-vector and fused (a G-vector
 *    read through a map with -1 entries);
 *  - w to 1e-13 relative to max|w|: the two kernels differ in rounding only
 *    (fused multiply-adds in the fluxes, the order of the three transposed
 *    contractions), a few ulps of the largest terms; t110 and t115 use the
 *    same bound for such reorderings;
 *  - the per-element partials u_e.w_e to 1e-13 * sum|u_e| max|w_e| (the
 *    terms' rounding, which cancellation in the sum does not shrink);
 *  - slots of elements not in the list untouched;
 *  - an element's result does not depend on its group or lane: the listed
 *    elements' w equal, bit for bit, those of the whole-mesh apply;
 *  - for the orders served, the two kernels' results differ somewhere (the
 *    cross-element kernel did run), and the public entry point
 *    (hx_ax_apply_list_g) takes it too;
 *  - where the CPU has AVX-512 (8 elements per group instead of 4), w and
 *    the partials bit for bit those of the AVX2 kernel (an operator made
 *    with HEXCG_CPU_ISA=avx2): every lane does the same operations.
 * The FP32 twin (kernels/cpu/ax_xelem_f32_cpu.c, issue 34 item 1: 8
 * elements per group) the same way against the FP32 one-element kernels of
 * ax_cpu.c, for every order 1..7, on the same meshes with FP64 and split
 * geometry (split elements are general in FP32), with and without lambda,
 * and with kappa (and lambda) varying over the nodes of every third
 * element (scaled affine records on the box, general ones on Kershaw):
 * lists of lengths 0, 1, 3, 5, 11, 37 (groups of 8 that end short and mix
 * record kinds) and the whole mesh, L-vector and fused; w and the
 * partials bit for bit those of the one-element kernels (each lane does
 * their operations in their order: the FP32-preconditioned regression
 * histories must not move), grouping bit for bit, outside the list
 * untouched.
 * The kernel is rank-local: one rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ax_test.h"
#include "hx_kernels_prec.h"
#include "prec_impl.h"
#include "hx_mesh.h"

enum { MESH_KERSHAW, MESH_BOX, NMESH };
static const char *mesh_name[NMESH] = {"kershaw", "box"};
#define NX 6
#define NY 4
#define NZ 4
#define E (NX * NY * NZ)

/* hex8 vertices (vertex q: bit 0 x, bit 1 y, bit 2 z) of an NX x NY x NZ
 * grid of the unit cube, through the Kershaw map or a stretch (box). */
static void make_mesh(int mk, double *v) {
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        double *ve = v + 24 * (i + NX * (j + NY * k));
        for (int q = 0; q < 8; q++) {
          const double x[3] = {(double)(i + (q & 1)) / NX, (double)(j + ((q >> 1) & 1)) / NY,
                               (double)(k + ((q >> 2) & 1)) / NZ};
          if (mk == MESH_KERSHAW) {
            hx_mesh_kershaw_map(0.3, x, ve + 3 * q);
          } else {
            ve[3 * q] = 2.0 * x[0], ve[3 * q + 1] = 1.5 * x[1], ve[3 * q + 2] = 0.75 * x[2];
          }
        }
      }
}

static void set_xelem(int on) { setenv("HEXCG_AX_XELEM", on ? "1" : "0", 1); }

/* One apply through hx_cpu_ax_apply with the kernel on or off, on host
 * arrays (the operator's own memory opened to host code under cpu-memcheck,
 * as ax.c does around the call). */
static void apply(hx_ax ax, int on, int32_t nl, const int32_t *list, const int32_t *map, const double *u, double *w,
                  double *part, size_t nw) {
  memset(w, 0, nw * sizeof(double));
  set_xelem(on);
  HX_MC_SCOPE(hx_ax_backend(ax));
  if (hx_cpu_ax_apply(ax, nl, list, map, u, w, part)) HX_ASSERT(0, "hx_cpu_ax_apply failed");
  set_xelem(1);
}

static int check_order(hx_backend b, int p) {
  const int n = p + 1, n3 = n * n * n, served = hx_ax_xelem_serves(p);
  const size_t nw = (size_t)E * n3, ng = nw / 2 + 3;
  hx_test_rng r = {0x9e3779b97f4a7c15ull + (uint64_t)p};
  double *v = malloc(sizeof(double) * 24 * E), kap[E], lam[E];
  double *u = malloc(sizeof(double) * nw), *x = malloc(sizeof(double) * ng);
  double *w0 = malloc(sizeof(double) * nw), *w1 = malloc(sizeof(double) * nw), *wall = malloc(sizeof(double) * nw);
  double p0[E], p1[E], pall[E];
  int32_t *map = malloc(sizeof(int32_t) * nw), list[E];
  for (int e = 0; e < E; e++) kap[e] = 1.25 + 0.75 * hx_test_rand(&r), lam[e] = 0.5 + 0.5 * hx_test_rand(&r);
  for (size_t q = 0; q < nw; q++) u[q] = hx_test_rand(&r);
  for (size_t g = 0; g < ng; g++) x[g] = hx_test_rand(&r);
  for (size_t q = 0; q < nw; q++) map[q] = q % 13 == 4 ? -1 : (int32_t)((q * 7919) % ng);
  for (int k = 0; k < E; k++) list[k] = (5 + 37 * k) % E; /* 37 is prime to E = 96 */
  static const int32_t lens[] = {0, 1, 3, 5, 11, 37, -1};  /* -1: the whole mesh, list NULL */
  double worst = 0.0, worstp = 0.0;
  int differ = 0, avx512_checked = 0;
  for (int mk = 0; mk < NMESH; mk++)
    for (int split = 0; split < 2; split++)
      for (int withlam = 0; withlam < 2; withlam++) {
        make_mesh(mk, v);
        hx_ax_opts o = hx_ax_opts_default();
        if (split) o.geometry = HX_AX_GEO_SPLIT;
        hx_ax ax = NULL, ax2 = NULL;
        HX_TCALL(hx_ax_create_opts(b, p, E, 8, v, kap, withlam ? lam : NULL, &o, &ax));
        if (served && hx_cpu_avx512()) { /* the AVX2 twin of the 8-lane kernel */
          hx_test_env_keep keep;
          hx_test_env_push("HEXCG_CPU_ISA", "avx2", &keep);
          const int ierr = hx_ax_create_opts(b, p, E, 8, v, kap, withlam ? lam : NULL, &o, &ax2);
          hx_test_env_pop("HEXCG_CPU_ISA", &keep);
          HX_TCALL(ierr);
        }
        int32_t ca, cs, cg;
        hx_ax_storage_counts(ax, &ca, &cs, &cg);
        if (mk == MESH_KERSHAW)
          HX_ASSERT(ca > 0 && ca < E && (split ? cs : cg) == E - ca, "p=%d kershaw%s: %d affine, %d split, %d general",
                    p, split ? " split" : "", (int)ca, (int)cs, (int)cg);
        else
          HX_ASSERT(ca == E, "p=%d box: %d of %d elements affine", p, (int)ca, E);
        for (int fused = 0; fused < 2; fused++) {
          const double *in = fused ? x : u;
          const int32_t *mp = fused ? map : NULL;
          apply(ax, 1, E, NULL, mp, in, wall, pall, nw);
          for (int li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++) {
            const int whole = lens[li] < 0;
            const int32_t nl = whole ? E : lens[li];
            const int32_t *lp = whole ? NULL : list;
            apply(ax, 1, nl, lp, mp, in, w1, p1, nw);
            if (ax2) {
              apply(ax2, 1, nl, lp, mp, in, w0, p0, nw);
              HX_ASSERT(!memcmp(w0, w1, nw * sizeof(double)) && (nl == 0 || !memcmp(p0, p1, (size_t)nl * sizeof(double))),
                        "p=%d %s split=%d lambda=%d fused=%d list %d: the AVX-512 kernel's w or partials differ from "
                        "the AVX2 kernel's", p, mesh_name[mk], split, withlam, fused, (int)nl);
              avx512_checked = 1;
            }
            apply(ax, 0, nl, lp, mp, in, w0, p0, nw);
            double wmax = 0.0;
            for (size_t q = 0; q < nw; q++) wmax = fmax(wmax, fabs(w0[q]));
            int outside = 0;
            double d = 0.0;
            char in_list[E];
            memset(in_list, whole, sizeof in_list);
            for (int32_t k = 0; k < nl && !whole; k++) in_list[list[k]] = 1;
            for (int e = 0; e < E; e++)
              for (int q = 0; q < n3; q++) {
                const size_t i = (size_t)e * n3 + q;
                if (!in_list[e]) outside |= w1[i] != 0.0 || w0[i] != 0.0;
                d = fmax(d, fabs(w1[i] - w0[i]));
                differ |= w1[i] != w0[i];
              }
            HX_ASSERT(!outside, "p=%d %s: an element outside the list was written", p, mesh_name[mk]);
            HX_ASSERT(nl == 0 || wmax > 0.0, "p=%d %s: nothing applied", p, mesh_name[mk]);
            const double rel = d / (wmax > 0.0 ? wmax : 1.0);
            worst = fmax(worst, rel);
            HX_ASSERT(rel <= 1e-13, "p=%d %s split=%d lambda=%d fused=%d list %d: w differs by %.3e", p,
                      mesh_name[mk], split, withlam, fused, (int)nl, rel);
            if (!served)
              HX_ASSERT(d == 0.0, "p=%d (not served) %s: the two runs differ", p, mesh_name[mk]);
            for (int32_t k = 0; k < nl; k++) {
              const size_t e = (size_t)(whole ? k : list[k]);
              int grp = 0;
              double su = 0.0, mw = 0.0;
              for (int q = 0; q < n3; q++) {
                const double uq = fused ? (map[e * n3 + q] < 0 ? 0.0 : x[map[e * n3 + q]]) : u[e * n3 + q];
                su += fabs(uq), mw = fmax(mw, fabs(w0[e * n3 + q]));
                /* grouping: bit for bit the whole-mesh result */
                if (w1[e * n3 + q] != wall[e * n3 + q]) grp = 1;
              }
              HX_ASSERT(!grp, "p=%d %s fused=%d list %d: element %d depends on its group", p, mesh_name[mk], fused,
                        (int)nl, (int)e);
              const double dp = fabs(p1[k] - p0[k]) / (su * mw > 0.0 ? su * mw : 1.0);
              worstp = fmax(worstp, dp);
              HX_ASSERT(dp <= 1e-13, "p=%d %s split=%d fused=%d list %d: partial %d %.17g vs %.17g (%.3e)", p,
                        mesh_name[mk], split, fused, (int)nl, (int)k, p1[k], p0[k], dp);
              HX_ASSERT(p1[k] == pall[e], "p=%d %s: partial of element %d depends on its group", p, mesh_name[mk],
                        (int)e);
            }
          }
        }
        /* the public entry point (fused scatter, a list) takes the kernel */
        if (mk == MESH_KERSHAW && split == 0 && withlam == 1) {
          double *dx, *dw;
          int32_t *dmap, *dlist;
          HX_TCALL(hx_mem_alloc(b, sizeof(double) * ng, (void **)&dx));
          HX_TCALL(hx_mem_alloc(b, sizeof(double) * nw, (void **)&dw));
          HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * nw, (void **)&dmap));
          HX_TCALL(hx_mem_alloc(b, sizeof(int32_t) * 37, (void **)&dlist));
          HX_TCALL(hx_mem_to_device(b, dx, x, sizeof(double) * ng));
          HX_TCALL(hx_mem_to_device(b, dmap, map, sizeof(int32_t) * nw));
          HX_TCALL(hx_mem_to_device(b, dlist, list, sizeof(int32_t) * 37));
          double uw[2];
          for (int on = 0; on < 2; on++) {
            set_xelem(on);
            HX_TCALL(hx_mem_zero(b, dw, sizeof(double) * nw));
            HX_TCALL(hx_ax_apply_list_g(ax, 37, dlist, dmap, dx, dw, &uw[on]));
            HX_TCALL(hx_mem_to_host(b, on ? w1 : w0, dw, sizeof(double) * nw));
          }
          set_xelem(1);
          double d = 0.0, wmax = 0.0;
          for (size_t q = 0; q < nw; q++) d = fmax(d, fabs(w1[q] - w0[q])), wmax = fmax(wmax, fabs(w0[q]));
          HX_ASSERT(d <= 1e-13 * wmax && hx_test_reldiff(uw[1], uw[0], 1e-300) <= 1e-12,
                    "p=%d: hx_ax_apply_list_g on vs off: w %.3e, u.w %.17g vs %.17g", p, d / wmax, uw[1], uw[0]);
          HX_ASSERT(served ? d > 0.0 : d == 0.0, "p=%d: hx_ax_apply_list_g %s the cross-element kernel", p,
                    served ? "did not take" : "took");
          hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dw);
          hx_mem_free(b, (void **)&dmap), hx_mem_free(b, (void **)&dlist);
        }
        hx_ax_destroy(&ax);
        if (ax2) hx_ax_destroy(&ax2);
      }
  printf("p=%d %s: max rel diff w %.2e, partials %.2e%s\n", p, served ? "cross-element" : "not served   ", worst,
         worstp, avx512_checked ? "; AVX-512 = AVX2 bit for bit" : "");
  if (served) HX_ASSERT(differ, "p=%d: the cross-element kernel gave the one-element bits everywhere", p);
  free(v), free(u), free(x), free(w0), free(w1), free(wall), free(map);
  return 0;
}

/* FP32: one apply through hx_cpu_ax_apply_f32, the kernel on or off */
static void apply_f32(hx_ax ax, int on, int32_t nl, const int32_t *list, const int32_t *map, const float *u,
                      float *w, double *part, size_t nw) {
  memset(w, 0, nw * sizeof(float));
  set_xelem(on);
  HX_MC_SCOPE(hx_ax_backend(ax));
  if (hx_cpu_ax_apply_f32(ax, nl, list, map, u, w, part)) HX_ASSERT(0, "hx_cpu_ax_apply_f32 failed");
  set_xelem(1);
}

static int check_order_f32(hx_backend b, int p) {
  const int n = p + 1, n3 = n * n * n, served = hx_ax_xelem_serves_f32(p);
  const size_t nw = (size_t)E * n3, ng = nw / 2 + 3;
  hx_test_rng r = {0x51ed270b27a3c6f1ull + (uint64_t)p};
  double *v = malloc(sizeof(double) * 24 * E), kap[E], lam[E];
  double *kn = malloc(sizeof(double) * nw), *ln = malloc(sizeof(double) * nw);
  float *u = malloc(sizeof(float) * nw), *x = malloc(sizeof(float) * ng);
  float *w0 = malloc(sizeof(float) * nw), *w1 = malloc(sizeof(float) * nw), *wall = malloc(sizeof(float) * nw);
  double p0[E], p1[E], pall[E];
  int32_t *map = malloc(sizeof(int32_t) * nw), list[E];
  for (int e = 0; e < E; e++) kap[e] = 1.25 + 0.75 * hx_test_rand(&r), lam[e] = 0.5 + 0.5 * hx_test_rand(&r);
  /* per node: every third element varies (kappa by up to 3x, lambda 2x) */
  for (int e = 0; e < E; e++)
    for (int q = 0; q < n3; q++) {
      const int var = e % 3 == 1;
      kn[(size_t)e * n3 + q] = var ? kap[e] * (1.0 + 2.0 * fabs(hx_test_rand(&r))) : kap[e];
      ln[(size_t)e * n3 + q] = var ? lam[e] * (1.0 + fabs(hx_test_rand(&r))) : lam[e];
    }
  for (size_t q = 0; q < nw; q++) u[q] = (float)hx_test_rand(&r);
  for (size_t g = 0; g < ng; g++) x[g] = (float)hx_test_rand(&r);
  for (size_t q = 0; q < nw; q++) map[q] = q % 13 == 4 ? -1 : (int32_t)((q * 7919) % ng);
  for (int k = 0; k < E; k++) list[k] = (5 + 37 * k) % E;
  static const int32_t lens[] = {0, 1, 3, 5, 11, 37, -1};
  double worst = 0.0, worstp = 0.0;
  int differ = 0, nafv = 0;
  for (int mk = 0; mk < NMESH; mk++)
    for (int split = 0; split < 2; split++)
      for (int withlam = 0; withlam < 2; withlam++)
        for (int node = 0; node < 2; node++) {
          make_mesh(mk, v);
          hx_ax_opts o = hx_ax_opts_default();
          if (split) o.geometry = HX_AX_GEO_SPLIT;
          if (node) o.h_kappa_node = kn, o.h_lambda_node = withlam ? ln : NULL;
          hx_ax ax = NULL;
          HX_TCALL(hx_ax_create_opts_prec(b, p, E, 8, v, kap, withlam ? lam : NULL, &o, HX_F32, &ax));
          int32_t ca, cs, cg;
          hx_ax_storage_counts(ax, &ca, &cs, &cg);
          HX_ASSERT(cs == 0, "p=%d FP32: %d split elements", p, (int)cs);
          if (mk == MESH_KERSHAW) HX_ASSERT(ca > 0 && cg > 0, "p=%d kershaw FP32: %d affine, %d general", p, (int)ca, (int)cg);
          if (mk == MESH_BOX && !node) HX_ASSERT(ca == E, "p=%d box FP32: %d of %d affine", p, (int)ca, E);
          {
            HX_MC_SCOPE(b); /* the record offsets are backend memory: read like a kernel */
            for (int e = 0; e < E; e++) nafv += (ax->d_eoff[e] & 3) == HX_AXK_AFV;
          }
          for (int fused = 0; fused < 2; fused++) {
            const float *in = fused ? x : u;
            const int32_t *mp = fused ? map : NULL;
            apply_f32(ax, 1, E, NULL, mp, in, wall, pall, nw);
            for (int li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++) {
              const int whole = lens[li] < 0;
              const int32_t nl = whole ? E : lens[li];
              const int32_t *lp = whole ? NULL : list;
              apply_f32(ax, 1, nl, lp, mp, in, w1, p1, nw);
              apply_f32(ax, 0, nl, lp, mp, in, w0, p0, nw);
              double wmax = 0.0, d = 0.0;
              for (size_t q = 0; q < nw; q++) wmax = fmax(wmax, fabs(w0[q]));
              int outside = 0;
              char in_list[E];
              memset(in_list, whole, sizeof in_list);
              for (int32_t k = 0; k < nl && !whole; k++) in_list[list[k]] = 1;
              for (int e = 0; e < E; e++)
                for (int q = 0; q < n3; q++) {
                  const size_t i = (size_t)e * n3 + q;
                  if (!in_list[e]) outside |= w1[i] != 0.0f || w0[i] != 0.0f;
                  d = fmax(d, fabs((double)w1[i] - (double)w0[i]));
                  differ |= w1[i] != w0[i];
                }
              HX_ASSERT(!outside, "p=%d FP32 %s: an element outside the list was written", p, mesh_name[mk]);
              HX_ASSERT(nl == 0 || wmax > 0.0, "p=%d FP32 %s: nothing applied", p, mesh_name[mk]);
              const double rel = d / (wmax > 0.0 ? wmax : 1.0);
              worst = fmax(worst, rel);
              HX_ASSERT(rel <= 1e-6, "p=%d FP32 %s split=%d lambda=%d node=%d fused=%d list %d: w differs by %.3e", p,
                        mesh_name[mk], split, withlam, node, fused, (int)nl, rel);
              /* every lane does the one-element kernel's operations in its order */
              HX_ASSERT(d == 0.0, "p=%d FP32 %s split=%d lambda=%d node=%d fused=%d list %d: not bit for bit (%.3e)",
                        p, mesh_name[mk], split, withlam, node, fused, (int)nl, rel);
              for (int32_t k = 0; k < nl; k++) {
                const size_t e = (size_t)(whole ? k : list[k]);
                int grp = 0;
                double su = 0.0, mw = 0.0;
                for (int q = 0; q < n3; q++) {
                  const double uq = fused ? (map[e * n3 + q] < 0 ? 0.0 : x[map[e * n3 + q]]) : u[e * n3 + q];
                  su += fabs(uq), mw = fmax(mw, fabs(w0[e * n3 + q]));
                  if (w1[e * n3 + q] != wall[e * n3 + q]) grp = 1;
                }
                HX_ASSERT(!grp, "p=%d FP32 %s fused=%d list %d: element %d depends on its group", p, mesh_name[mk],
                          fused, (int)nl, (int)e);
                const double dp = fabs(p1[k] - p0[k]) / (su * mw > 0.0 ? su * mw : 1.0);
                worstp = fmax(worstp, dp);
                HX_ASSERT(dp <= 1e-6 && p1[k] == p0[k], "p=%d FP32 %s fused=%d list %d: partial %d %.17g vs %.17g (%.3e)", p,
                          mesh_name[mk], fused, (int)nl, (int)k, p1[k], p0[k], dp);
                HX_ASSERT(p1[k] == pall[e], "p=%d FP32 %s: partial of element %d depends on its group", p,
                          mesh_name[mk], (int)e);
              }
            }
          }
          hx_ax_destroy(&ax);
        }
  printf("p=%d FP32 %s: max rel diff w %.2e, partials %.2e\n", p, served ? "cross-element" : "not served   ",
         worst, worstp);
  HX_ASSERT(nafv > 0, "p=%d FP32: no scaled affine records were tested", p);
  (void)differ;
  free(v), free(kn), free(ln), free(u), free(x), free(w0), free(w1), free(wall), free(map);
  return 0;
}

int main(int argc, char **argv) {
  hx_backend b = NULL;
  const int rc = axt_init(&argc, &argv, &b);
  if (rc) return rc;
  printf("CPU kernels %s; orders served:", hx_cpu_kernels_name());
  for (int p = 1; p <= 15; p++)
    if (hx_ax_xelem_serves(p)) printf(" %d", p);
  printf("\n");
  if (hx_ax_cpu_isa() == 1) HX_ASSERT(hx_ax_xelem_serves(3), "p = 3 not served with AVX2");
  for (int p = 1; p <= 7; p++)
    if (check_order(b, p)) break;
  printf("FP32 orders served:");
  for (int p = 1; p <= 15; p++)
    if (hx_ax_xelem_serves_f32(p)) printf(" %d", p);
  printf("\n");
  if (hx_ax_cpu_isa() == 1) HX_ASSERT(hx_ax_xelem_serves_f32(2) && !hx_ax_xelem_serves_f32(3), "FP32: p = 2 not served or p = 3 served with AVX2");
  for (int p = 1; p <= 7; p++)
    if (check_order_f32(b, p)) break;
  hx_backend_destroy(&b);
  MPI_Finalize();
  return hx_test_result();
}
