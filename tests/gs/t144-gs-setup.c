/* Gather-scatter setup variants (gs/gs.c; docs/gather-scatter.md "Setup"):
 *  - the G numbering of hx_gs_create against an independent reference
 *    computed here from the rendezvous' definition: groups (interior owned,
 *    shared owned, not owned, the owner being the lowest holding rank, the
 *    holders found by an MPI_Allgather of every rank's ids), within a group
 *    in increasing first L entry; multiplicities against the global count;
 *  - hx_gs_create_deferred + hx_gs_finish_l gives the same handle as
 *    hx_gs_create (map, ids, multiplicities, and the same bits from gather,
 *    exchange and scatter of random vectors); before hx_gs_finish_l the
 *    gather and scatter are refused;
 *  - hx_gs_create_deferred_private with the ids held by one rank promised
 *    private (all their entries, or two in three) gives the same handle and
 *    bits as hx_gs_create;
 *  - hx_gs_create_deferred + hx_gs_relayout gives the same handle and bits
 *    as hx_gs_create + hx_gs_relayout (the FDM's grouped layout path), with
 *    and without the interior renumbering;
 *  - after hx_gs_drop_maps the assembly (gather + exchange) gives the bits
 *    it gave before, and scatter, masks, relayout and the flags are refused.
 * Boxes of order 1..4, elements in z-slabs with the local order reversed
 * (first appearance differs from id order), some ids 0. 1-4 ranks, cpu. */
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"


#include "gs_test_ids.h"

/* from every rank's ids (MPI_Allgather): per id q < *nmax the lowest holding
 * rank, the number of holding ranks and the global count */
static int check_numbering(const cfg_t *c, hx_gs gs, const int64_t *ids, int64_t nl, int rank, int size) {
  int *lowest, *nhold, *mult;
  int64_t nmax;
  holders(c, ids, nl, size, &lowest, &nhold, &mult, &nmax);
  /* reference G index: per group by first L entry */
  const int32_t *map = hx_gs_map_host(gs);
  const int64_t *gid = hx_gs_global_ids(gs);
  int64_t ng = hx_gs_num_local(gs), no = hx_gs_num_owned(gs), ns = hx_gs_num_shared(gs);
  int64_t next[3] = {0, ng - ns, no}, ngrp[3] = {0, 0, 0};
  int64_t *ref = malloc(sizeof(int64_t) * (size_t)nmax);
  for (int64_t q = 0; q < nmax; q++) ref[q] = -1;
  for (int64_t i = 0; i < nl; i++) {
    const int64_t q = ids[i];
    if (q && ref[q] == -1) {
      const int g = nhold[q] == 1 ? 0 : lowest[q] == rank ? 1 : 2;
      ref[q] = -2 - g, ngrp[g]++;
    }
  }
  HX_ASSERT(ngrp[0] == ng - ns && ngrp[0] + ngrp[1] == no && ngrp[0] + ngrp[1] + ngrp[2] == ng,
            "p = %d: group sizes %lld %lld %lld vs ng %lld owned %lld shared %lld", c->p, (long long)ngrp[0],
            (long long)ngrp[1], (long long)ngrp[2], (long long)ng, (long long)no, (long long)ns);
  for (int64_t i = 0; i < nl; i++) {
    const int64_t q = ids[i];
    if (q && ref[q] < -1) ref[q] = next[-2 - ref[q]]++;
  }
  double *m = host(hx_gs_backend(gs), hx_gs_multiplicity(gs), ng);
  int bad = 0;
  for (int64_t i = 0; i < nl && !bad; i++) {
    const int64_t q = ids[i];
    if (!q) {
      bad = map[i] != -1;
      continue;
    }
    bad = map[i] != ref[q] || gid[map[i]] != q || m[map[i]] != (double)mult[q];
  }
  HX_ASSERT(!bad, "p = %d rank %d: G numbering or multiplicity differs from the reference", c->p, rank);
  free(m), free(ref), free(lowest), free(nhold), free(mult);
  return 0;
}

/* a and b equal: sizes, map, ids, multiplicities; gather + exchange and
 * scatter of the same random vectors give the same bits */
static int run_case(hx_backend bk, const cfg_t *c, int rank, int size) {
  int64_t *ids;
  const int64_t nl = make_ids(c, rank, size, &ids);
  hx_gs a = NULL, b = NULL;
  HX_TCALL(hx_gs_create(bk, MPI_COMM_WORLD, nl, ids, &a));
  if (check_numbering(c, a, ids, nl, rank, size)) return 1;
  /* deferred: scatter and gather refused until finish_l, then the same handle */
  HX_TCALL(hx_gs_create_deferred(bk, MPI_COMM_WORLD, nl, ids, &b));
  {
    double *dl = NULL, *dg = NULL;
    HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(nl + 1), (void **)&dl));
    HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(hx_gs_num_local(b) + 1), (void **)&dg));
    HX_ASSERT(hx_gs_gather(b, dl, dg) != HX_SUCCESS, "p = %d: gather accepted before hx_gs_finish_l", c->p);
    HX_ASSERT(hx_gs_scatter(b, dg, dl) != HX_SUCCESS, "p = %d: scatter accepted before hx_gs_finish_l", c->p);
    hx_error_clear();
    hx_mem_free(bk, (void **)&dl), hx_mem_free(bk, (void **)&dg);
  }
  HX_TCALL(hx_gs_finish_l(b));
  HX_TCALL(hx_gs_finish_l(b)); /* a no-op the second time */
  if (check_same(bk, a, b, "deferred + finish_l", c->p)) return 1;
  HX_TCALL(hx_gs_destroy(&b));
  /* ids promised private (held by this rank only: all their entries, then
   * two in three of them, the rest going through the rendezvous as usual):
   * the same handle, the same global count */
  {
    int *lowest, *nhold, *mult;
    int64_t nmax;
    holders(c, ids, nl, size, &lowest, &nhold, &mult, &nmax);
    uint8_t *priv = malloc((size_t)nl + 1);
    for (int partial = 0; partial < 2; partial++) {
      int64_t npriv = 0;
      for (int64_t i = 0; i < nl; i++) {
        priv[i] = ids[i] && nhold[ids[i]] == 1 && !(partial && i % 3 == 0);
        npriv += priv[i];
      }
      hx_gs x = NULL;
      HX_TCALL(hx_gs_create_deferred_private(bk, MPI_COMM_WORLD, nl, ids, priv, &x));
      HX_TCALL(hx_gs_finish_l(x));
      HX_ASSERT(hx_gs_num_global(x) == hx_gs_num_global(a), "p = %d: %lld distinct ids with private ones, %lld",
                c->p, (long long)hx_gs_num_global(x), (long long)hx_gs_num_global(a));
      if (check_same(bk, a, x, partial ? "private (two in three)" : "private", c->p)) return 1;
      int64_t nall = 0; /* the test means something: some entries are private somewhere */
      MPI_Allreduce(&npriv, &nall, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      HX_ASSERT(nall > 0, "p = %d: no entry private on any rank", c->p);
      HX_TCALL(hx_gs_destroy(&x));
    }
    free(priv), free(lowest), free(nhold), free(mult);
  }
  /* relayout (reversed L order with some empty entries) after create and after create_deferred */
  const int64_t nl2 = nl + nl / 5;
  int64_t *old = malloc(sizeof(int64_t) * (size_t)(nl2 + 1));
  for (int64_t i = 0, k = nl - 1; i < nl2; i++) old[i] = (i % 6 == 5 || k < 0) ? -1 : k--;
  for (int renumber = 0; renumber < 2; renumber++) {
    hx_gs x = NULL, y = NULL;
    int32_t *nx = malloc(sizeof(int32_t) * (size_t)(hx_gs_num_local(a) + 1));
    int32_t *ny = malloc(sizeof(int32_t) * (size_t)(hx_gs_num_local(a) + 1));
    HX_TCALL(hx_gs_create(bk, MPI_COMM_WORLD, nl, ids, &x));
    HX_TCALL(hx_gs_create_deferred(bk, MPI_COMM_WORLD, nl, ids, &y));
    HX_TCALL(hx_gs_relayout(x, nl2, old, renumber ? nx : NULL));
    HX_TCALL(hx_gs_relayout(y, nl2, old, renumber ? ny : NULL));
    if (renumber)
      HX_ASSERT(!memcmp(nx, ny, sizeof(int32_t) * (size_t)hx_gs_num_local(a)), "p = %d: renumberings differ",
                c->p);
    if (check_same(bk, x, y, renumber ? "relayout + renumber" : "relayout", c->p)) return 1;
    HX_TCALL(hx_gs_destroy(&x));
    HX_TCALL(hx_gs_destroy(&y));
    free(nx), free(ny);
  }
  free(old);
  /* dropped maps: the assembly as before, bit for bit; what needs the map refused */
  {
    const int64_t ng = hx_gs_num_local(a);
    double *hl = malloc(sizeof(double) * (size_t)(nl + 1)), *dl, *dg, *ref, *got;
    for (int64_t i = 0; i < nl; i++) hl[i] = (double)(hx_test_mix64((uint64_t)i * 11 + 3) >> 11) * 0x1p-53 - 0.5;
    HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(nl + 1), (void **)&dl));
    HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(ng + 1), (void **)&dg));
    HX_TCALL(hx_mem_to_device(bk, dl, hl, sizeof(double) * (size_t)nl));
    HX_TCALL(hx_gs_assemble(a, dl, dg));
    ref = host(bk, dg, ng);
    HX_TCALL(hx_gs_drop_maps(a));
    HX_ASSERT(!hx_gs_map_host(a) && !hx_gs_global_ids(a) && !hx_gs_multiplicity(a), "p = %d: maps kept",
              c->p);
    HX_TCALL(hx_gs_assemble(a, dl, dg));
    got = host(bk, dg, ng);
    HX_ASSERT(!memcmp(ref, got, sizeof(double) * (size_t)ng),
              "p = %d: assembly differs after hx_gs_drop_maps", c->p);
    int *flag = malloc(sizeof(int) * (size_t)(nl + 1));
    HX_ASSERT(hx_gs_scatter(a, dg, dl) == HX_ERR_ARG, "p = %d: scatter accepted after hx_gs_drop_maps", c->p);
    HX_ASSERT(hx_gs_l_owner_flags(a, flag) == HX_ERR_ARG, "p = %d: owner flags after hx_gs_drop_maps", c->p);
    HX_ASSERT(hx_gs_set_mask(a, flag) == HX_ERR_ARG, "p = %d: mask accepted after hx_gs_drop_maps", c->p);
    hx_error_clear();
    free(flag), free(hl), free(ref), free(got);
    hx_mem_free(bk, (void **)&dl), hx_mem_free(bk, (void **)&dg);
  }
  HX_TCALL(hx_gs_destroy(&a));
  free(ids);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  hx_backend bk = NULL;
  int rc = hx_backend_create(hx_test_backend_arg(argc, argv), &bk);
  const cfg_t cases[] = {{3, 2, 4, 1}, {2, 3, 5, 2}, {3, 3, 4, 3}, {2, 2, 6, 4}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0] && !rc; k++) rc = run_case(bk, &cases[k], rank, size);
  hx_backend_destroy(&bk);
  return hx_test_mpi_finish(rc);
}
