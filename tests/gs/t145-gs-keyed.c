/* The keyed gather-scatter setup (gs/gs.c hx_gs_keyed_create/finish;
 * docs/gather-scatter.md "Keyed setup"), the FDM's extended numbering:
 *  - keys assigned in an order of their own (last L entry first), the ids
 *    held by one rank promised private (all of them, none, or every other
 *    one): the handle of hx_gs_create_deferred_private from the same ids and
 *    flags (sizes, map, ids, multiplicities, and the same bits from gather,
 *    exchange and scatter of random vectors), the global count, the per-key
 *    shared flags against the reference's shared rows, and h_gof;
 *  - finished in another L layout (reversed, with empty entries): the
 *    handle hx_gs_create_deferred_private builds from the ids in that layout;
 *  - hx_gs_take_map hands over the backend map (equal to the host one) and
 *    drops the rest; the assembly still runs;
 *  - bad input fails with HX_ERR_ARG on every rank without a hang: a
 *    duplicate id, a key out of range, a key that does not occur; at finish
 *    a key left out.
 * Boxes of order 1..4, z-slabs with the local order reversed, some ids 0.
 * 1-3 ranks, cpu. */
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

#include "gs_test_ids.h"

typedef struct {
  int64_t nl, nu, nmax;
  int64_t *ids, *uid;
  int32_t *key;
  uint8_t *kpriv, *lpriv; /* per key; per L entry (the reference's flags) */
  int *nhold;
} keyed_t;

/* keys by the last L entry first; private: 0 none, 1 every single-holder
 * id, 2 every other one of them */
static void make_keys(keyed_t *k, int priv) {
  int32_t *kof = malloc(sizeof(int32_t) * (size_t)k->nmax);
  for (int64_t q = 0; q < k->nmax; q++) kof[q] = -1;
  k->nu = 0;
  for (int64_t i = k->nl - 1; i >= 0; i--) {
    const int64_t q = k->ids[i];
    if (q && kof[q] < 0) {
      kof[q] = (int32_t)k->nu;
      k->uid[k->nu] = q;
      k->kpriv[k->nu++] = priv && k->nhold[q] == 1 && (priv == 1 || q % 2 == 0);
    }
    k->key[i] = q ? kof[q] : -1;
  }
  for (int64_t i = 0; i < k->nl; i++) k->lpriv[i] = k->key[i] >= 0 && k->kpriv[k->key[i]];
  free(kof);
}

/* hx_gs_take_map: the backend map handed over equals the host map; the
 * other maps dropped; the assembly still runs */
static int take_map_check(hx_backend bk, hx_gs x, int p) {
  const int64_t nl = hx_gs_num_l(x), ng = hx_gs_num_local(x);
  int32_t *ref = malloc(sizeof(int32_t) * (size_t)(nl + 1)),
          *got = malloc(sizeof(int32_t) * (size_t)(nl + 1));
  memcpy(ref, hx_gs_map_host(x), sizeof(int32_t) * (size_t)nl);
  int32_t *dmap = NULL;
  HX_TCALL(hx_gs_take_map(x, &dmap));
  if (nl > 0) HX_TCALL(hx_mem_to_host(bk, got, dmap, sizeof(int32_t) * (size_t)nl));
  HX_ASSERT(!memcmp(ref, got, sizeof(int32_t) * (size_t)nl),
            "p = %d: the map taken differs from the host map", p);
  HX_ASSERT(!hx_gs_map_host(x) && !hx_gs_global_ids(x), "p = %d: maps kept after hx_gs_take_map", p);
  double *dl = NULL, *dg = NULL;
  HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(nl + 1), (void **)&dl));
  HX_TCALL(hx_mem_alloc(bk, sizeof(double) * (size_t)(ng + 1), (void **)&dg));
  HX_TCALL(hx_mem_zero(bk, dl, sizeof(double) * (size_t)(nl + 1)));
  HX_TCALL(hx_gs_assemble(x, dl, dg));
  hx_mem_free(bk, (void **)&dl), hx_mem_free(bk, (void **)&dg), hx_mem_free(bk, (void **)&dmap);
  free(ref), free(got);
  return 0;
}

/* keyed in the element layout and in a reversed one with gaps, against
 * hx_gs_create_deferred_private from the ids of that layout */
static int keyed_layouts(hx_backend bk, keyed_t *k, int p, int priv) {
  hx_gs ref = NULL, x = NULL;
  HX_TCALL(hx_gs_create_deferred_private(bk, MPI_COMM_WORLD, k->nl, k->ids, priv ? k->lpriv : NULL, &ref));
  HX_TCALL(hx_gs_finish_l(ref));
  for (int lay = 0; lay < 2; lay++) {
    hx_gs_keyed kd = NULL;
    HX_TCALL(
        hx_gs_keyed_create(bk, MPI_COMM_WORLD, k->nl, k->key, k->nu, k->uid, priv ? k->kpriv : NULL, &kd));
    const int64_t nl2 = lay ? k->nl + k->nl / 5 : k->nl;
    int32_t *key = malloc(sizeof(int32_t) * (size_t)(nl2 + 1)),
            *gof = malloc(sizeof(int32_t) * (size_t)(k->nu + 1));
    int64_t *ids2 = malloc(sizeof(int64_t) * (size_t)(nl2 + 1));
    uint8_t *lp2 = malloc((size_t)nl2 + 1);
    for (int64_t i = 0, o = k->nl - 1; i < nl2; i++) {
      const int64_t src = !lay ? i : (i % 6 == 5 || o < 0) ? -1 : o--;
      key[i] = src < 0 ? -1 : k->key[src], ids2[i] = src < 0 ? 0 : k->ids[src],
      lp2[i] = src < 0 ? 0 : k->lpriv[src];
    }
    hx_gs r2 = ref;
    if (lay) {
      HX_TCALL(hx_gs_create_deferred_private(bk, MPI_COMM_WORLD, nl2, ids2, priv ? lp2 : NULL, &r2));
      HX_TCALL(hx_gs_finish_l(r2));
    }
    /* the shared flags before the numbering: the reference's shared rows */
    const uint8_t *sh = hx_gs_keyed_shared(kd);
    const int32_t *rmap = hx_gs_map_host(r2);
    const int64_t s0 = hx_gs_num_local(r2) - hx_gs_num_shared(r2);
    int bad = hx_gs_keyed_num_shared(kd) != hx_gs_num_shared(r2);
    for (int64_t i = 0; i < nl2 && !bad; i++) bad = key[i] >= 0 && sh[key[i]] != (rmap[i] >= s0);
    HX_ASSERT(!bad, "p = %d private %d layout %d: shared flags differ from the reference's shared rows", p,
              priv, lay);
    int32_t *kc = malloc(sizeof(int32_t) * (size_t)(nl2 + 1));
    memcpy(kc, key, sizeof(int32_t) * (size_t)nl2);
    HX_TCALL(hx_gs_keyed_finish(&kd, nl2, &key, gof, &x));
    HX_ASSERT(!key && !kd, "p = %d: the keys or the setup not taken over", p);
    HX_TCALL(hx_gs_finish_l(x));
    if (check_same(bk, r2, x, lay ? "keyed, other layout" : "keyed", p)) return 1;
    const int32_t *xmap = hx_gs_map_host(x);
    bad = 0;
    for (int64_t i = 0; i < nl2 && !bad; i++) bad = kc[i] >= 0 ? gof[kc[i]] != xmap[i] : xmap[i] != -1;
    HX_ASSERT(!bad, "p = %d private %d layout %d: h_gof differs from the map", p, priv, lay);
    if (take_map_check(bk, x, p)) return 1;
    HX_TCALL(hx_gs_destroy(&x));
    if (lay) HX_TCALL(hx_gs_destroy(&r2));
    free(gof), free(ids2), free(lp2), free(kc);
  }
  HX_TCALL(hx_gs_destroy(&ref));
  return 0;
}

/* bad input on one rank: HX_ERR_ARG on every rank, no hang */
static int keyed_errors(hx_backend bk, keyed_t *k, int rank, int p) {
  for (int what = 0; what < 3; what++) {
    int32_t save = k->key[0];
    int64_t usave = k->nu > 1 ? k->uid[1] : 0;
    if (rank == 0 && what == 0 && k->nu > 1) k->uid[1] = k->uid[0]; /* a duplicate (not private) */
    if (rank == 0 && what == 1) k->key[0] = (int32_t)k->nu;         /* out of range */
    hx_gs_keyed kd = NULL;
    const int64_t nu = rank == 0 && what == 2 ? k->nu + 1 : k->nu; /* a key that never occurs */
    if (what == 2) k->uid[k->nu] = k->nmax + 7;
    const int ierr = hx_gs_keyed_create(bk, MPI_COMM_WORLD, k->nl, k->key, nu, k->uid, NULL, &kd);
    hx_error_clear();
    HX_ASSERT(ierr == HX_ERR_ARG && !kd, "p = %d: bad keys (case %d) on rank 0 gave %d here", p, what, ierr);
    k->key[0] = save;
    if (k->nu > 1) k->uid[1] = usave;
  }
  /* finish with a key left out */
  hx_gs_keyed kd = NULL;
  hx_gs x = NULL;
  HX_TCALL(hx_gs_keyed_create(bk, MPI_COMM_WORLD, k->nl, k->key, k->nu, k->uid, NULL, &kd));
  int32_t *key = malloc(sizeof(int32_t) * (size_t)(k->nl + 1));
  memcpy(key, k->key, sizeof(int32_t) * (size_t)k->nl);
  for (int64_t i = 0; i < k->nl; i++)
    if (key[i] >= 0) {
      key[i] = -1;
      break;
    }
  const int ierr = hx_gs_keyed_finish(&kd, k->nl, &key, NULL, &x);
  hx_error_clear();
  HX_ASSERT(k->nu == 0 || (ierr == HX_ERR_ARG && !x), "p = %d: finish with a key left out gave %d", p, ierr);
  HX_ASSERT(!kd && !key, "p = %d: the failed finish kept the setup or the keys", p);
  hx_gs_destroy(&x);
  return 0;
}

static int run_case(hx_backend bk, const cfg_t *c, int rank, int size) {
  keyed_t k;
  memset(&k, 0, sizeof k);
  k.nl = make_ids(c, rank, size, &k.ids);
  holders(c, k.ids, k.nl, size, NULL, &k.nhold, NULL, &k.nmax);
  k.uid = malloc(sizeof(int64_t) * (size_t)(k.nl + 2));
  k.key = malloc(sizeof(int32_t) * (size_t)(k.nl + 1));
  k.kpriv = malloc((size_t)k.nl + 2);
  k.lpriv = malloc((size_t)k.nl + 1);
  for (int priv = 0; priv < 3; priv++) {
    make_keys(&k, priv);
    if (keyed_layouts(bk, &k, c->p, priv)) return 1;
  }
  if (keyed_errors(bk, &k, rank, c->p)) return 1;
  free(k.ids), free(k.nhold), free(k.uid), free(k.key), free(k.kpriv), free(k.lpriv);
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
