/* Distributed gather-scatter: setup by rendezvous, Z, Z^T, exchange with
 * add/min/max, owner marks, multiplicities, Dirichlet masks. The per-backend
 * loops live in cpu/gs_cpu.c and cuda/gs_cuda.cu; the shared per-row math in
 * hx_gs_math.h. See docs/gather-scatter.md. */
#include "gs_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define HX_GS_TAG 4711
#define HX_GS_TAG_F32 4712

/* ------------------------------------------------------------ helpers */

/* Stable LSD radix sort of n (key, val) pairs by key, 16 bits per pass;
 * passes whose digit is the same for all keys are skipped. */
static int hx_gs_radix_sort(int64_t n, uint64_t *key, int64_t *val) {
  if (n < 2) return HX_SUCCESS;
  uint64_t kor = 0, kand = ~(uint64_t)0;
  for (int64_t i = 0; i < n; i++) kor |= key[i], kand &= key[i];
  uint64_t *k2 = NULL;
  int64_t *v2 = NULL, *cnt = NULL;
  int ierr = HX_ALLOC(&k2, n);
  if (!ierr) ierr = HX_ALLOC(&v2, n);
  if (!ierr) ierr = HX_ALLOC(&cnt, 65536);
  if (ierr) {
    free(k2), free(v2), free(cnt);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  uint64_t *ka = key, *kb = k2;
  int64_t *va = val, *vb = v2;
  for (int shift = 0; shift < 64; shift += 16) {
    if ((((kor ^ kand) >> shift) & 0xffff) == 0) continue; /* digit constant */
    memset(cnt, 0, 65536 * sizeof *cnt);
    for (int64_t i = 0; i < n; i++) cnt[(ka[i] >> shift) & 0xffff]++;
    int64_t s = 0;
    for (int d = 0; d < 65536; d++) {
      int64_t c = cnt[d];
      cnt[d] = s;
      s += c;
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t p = cnt[(ka[i] >> shift) & 0xffff]++;
      kb[p] = ka[i];
      vb[p] = va[i];
    }
    uint64_t *tk = ka;
    ka = kb, kb = tk;
    int64_t *tv = va;
    va = vb, vb = tv;
  }
  if (ka != key) {
    memcpy(key, ka, (size_t)n * sizeof *key);
    memcpy(val, va, (size_t)n * sizeof *val);
  }
  free(k2), free(v2), free(cnt);
  return HX_SUCCESS;
}

/* Upload n elements of size sz from host to a new backend array. */
static int hx_gs_upload(hx_backend b, const void *h, int64_t n, size_t sz, void *d_out) {
  void **d = (void **)d_out;
  HX_CALL(hx_mem_alloc(b, (size_t)n * sz, d));
  if (n > 0) HX_CALL(hx_mem_to_device(b, *d, h, (size_t)n * sz));
  return HX_SUCCESS;
}

static int hx_gs_int(int64_t v, const char *what) {
  HX_CHECK(v >= 0 && v <= INT_MAX, HX_ERR_ARG, "gather-scatter: %s = %lld does not fit in int32", what,
           (long long)v);
  return HX_SUCCESS;
}

/* MPI_Alltoallv of int64 values with int64 counts checked against int. */
static int hx_gs_alltoallv(MPI_Comm comm, int size, const int64_t *sbuf, const int *scnt, int64_t **rbuf,
                           int64_t *nrecv) {
  int *rcnt = NULL, *sdis = NULL, *rdis = NULL;
  HX_CALL(HX_ALLOC(&rcnt, size));
  HX_CALL(HX_ALLOC(&sdis, size));
  HX_CALL(HX_ALLOC(&rdis, size));
  HX_MPI(MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm));
  int64_t ss = 0, rs = 0;
  for (int r = 0; r < size; r++) {
    sdis[r] = (int)ss;
    rdis[r] = (int)rs;
    ss += scnt[r];
    rs += rcnt[r];
    HX_CALL(hx_gs_int(ss, "rendezvous send size"));
    HX_CALL(hx_gs_int(rs, "rendezvous receive size"));
  }
  HX_CALL(HX_ALLOC(rbuf, rs + 1));
  HX_MPI(MPI_Alltoallv(sbuf, scnt, sdis, MPI_INT64_T, *rbuf, rcnt, rdis, MPI_INT64_T, comm));
  *nrecv = rs;
  free(rcnt), free(sdis), free(rdis);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ setup */

/* Row blocking of rows [r0, r1) into blocks of at most HX_GS_NODES_PER_BLOCK
 * CSR entries (a longer row is a block of its own). Appends block starts to
 * bs (which has room) and returns the number of blocks added. */
static int32_t hx_gs_blocks(const int32_t *row, int64_t r0, int64_t r1, int32_t *bs) {
  int32_t nb = 0;
  int64_t r = r0;
  while (r < r1) {
    bs[nb++] = (int32_t)r;
    int64_t start = row[r];
    r++;
    while (r < r1 && row[r + 1] - start <= HX_GS_NODES_PER_BLOCK) r++;
  }
  return nb;
}

/* the chunk c of L entry i: chunk[c] <= i < chunk[c+1] (binary search) */
static int hx_gs_chunk_of(hx_gs gs, int64_t i) {
  int lo = 0, hi = gs->nchunk - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (gs->chunk[mid] <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* The CPU gather's plan (gs_impl.h): the pull gather (each row summed
 * through the CSR; nothing to plan) where L holds at least two entries per
 * G row, else the chunks, accumulation codes and cut rows of the in-order
 * pass. The in-order pass costs a read-modify-write of a row per L entry
 * (id-0 entries included), the pull gather a branchy loop per row: on the
 * Schwarz extended vectors (3-8 L entries per row, a third of them id 0 at
 * p = 3) the pull gather takes 0.6-0.7 of the pass's time, on the fine order-7
 * L-vector (1.45 entries per row) the pass is as fast here and 3x faster on
 * the EPYC hosts (docs/gather-scatter.md "Gather"). HEXCG_GS_PULL=1 forces
 * the pull gather, =0 the pass (comparisons and tests: the same bits). */
static int hx_gs_cpu_plan(hx_gs gs, const int32_t *row, const int32_t *col, int64_t s0) {
  const int64_t nl = gs->nl, ng = gs->ng;
  gs->pull = hx_env_on("HEXCG_GS_PULL") || (nl >= 2 * ng && !hx_env_off("HEXCG_GS_PULL"));
  if (gs->pull) return HX_SUCCESS;
  int nc = gs->b->nthreads > 0 ? gs->b->nthreads : 1;
  if (nc > 1 && nl < (int64_t)nc * 4096) nc = (int)(nl / 4096) + 1; /* small: fewer chunks */
  const char *env = hx_env("HX_GS_CPU_CHUNKS");                     /* testing knob: force the chunk count */
  if (env && atoi(env) > 0) nc = atoi(env);
  gs->nchunk = nc;
  HX_CALL(HX_ALLOC(&gs->chunk, nc + 1));
  for (int c = 0; c <= nc; c++) gs->chunk[c] = nl * c / nc;
  HX_CALL(HX_ALLOC(&gs->acc, nl + 1));
  for (int64_t i = 0; i < nl; i++) gs->acc[i] = HX_GS_SKIP;
  /* through the CSR: shared rows (few; so gather_part(SHARED) is cheap and
   * the chunk pass holds interior rows only) and cut rows, whose first and
   * last entries lie in different chunks */
  int64_t ncut = 0, split = 0;
  for (int64_t r = 0; r < ng; r++) {
    if (r >= s0 || hx_gs_chunk_of(gs, col[row[r]]) != hx_gs_chunk_of(gs, col[row[r + 1] - 1])) {
      ncut++;
      split += r < s0;
      continue;
    }
    for (int32_t j = row[r]; j < row[r + 1]; j++)
      gs->acc[col[j]] = (uint32_t)r | (j == row[r] ? HX_GS_FIRST : 0u);
  }
  gs->ncut = ncut;
  gs->cut_split = split;
  HX_CALL(HX_ALLOC(&gs->cut_rows, ncut + 1));
  ncut = 0;
  for (int64_t r = 0; r < ng; r++) {
    const int64_t a = col[row[r]];
    if (gs->acc[a] == HX_GS_SKIP) gs->cut_rows[ncut++] = (int32_t)r;
  }
  HX_CHECK(ncut == gs->ncut, HX_ERR_INTERNAL, "gather-scatter: cut rows %lld != %lld", (long long)ncut,
           (long long)gs->ncut);
  return HX_SUCCESS;
}

/* The L side from gs->h_map (nl entries, G index or -1): the CSR of Z^T
 * (columns increasing within a row), its gather blocks, the CPU plan, and
 * their backend copies with the map's. nnz, ng and n_shared are set. */
static int hx_gs_build_l(hx_gs gs) {
  const int64_t nl = gs->nl, ng = gs->ng, nnz = gs->nnz, s0 = ng - gs->n_shared;
  hx_backend b = gs->b;
  const int32_t *map = gs->h_map;
  int32_t *row = NULL, *col = NULL, *bs = NULL;
  /* on the cpu backend the CSR is built in its backend arrays (host
   * memory: no copy); elsewhere on the host, then uploaded */
  const int direct = hx_backend_host_memory(b); /* not cpu-memcheck: writable in kernel scopes only */
  int ierr =
      direct ? hx_mem_alloc(b, sizeof(int32_t) * (size_t)(ng + 2), (void **)&row) : HX_ALLOC(&row, ng + 2);
  if (!ierr && direct) memset(row, 0, sizeof(int32_t) * (size_t)(ng + 2));
  if (!ierr)
    ierr = direct ? hx_mem_alloc(b, sizeof(int32_t) * (size_t)(nnz + 1), (void **)&col)
                  : HX_ALLOC(&col, nnz + 1);
  if (!ierr) {
    /* counted one row ahead, so the fill's cursors row[r + 1] end as the
     * row starts (no cursor array) */
    for (int64_t i = 0; i < nl; i++)
      if (map[i] >= 0) row[map[i] + 2]++;
    for (int64_t r = 1; r <= ng; r++) row[r + 1] += row[r];
    if (row[ng + 1] != nnz)
      ierr = HX_ERROR(HX_ERR_INTERNAL, "gather-scatter: %lld mapped L entries, expected %lld",
                      (long long)row[ng + 1], (long long)nnz);
  }
  if (!ierr) {
    for (int64_t i = 0; i < nl; i++)
      if (map[i] >= 0) col[row[map[i] + 1]++] = (int32_t)i;
    ierr = HX_ALLOC(&bs, ng + 2);
  }
  if (!ierr) {
    gs->nblk_int = hx_gs_blocks(row, 0, s0, bs);
    gs->nblk = gs->nblk_int + hx_gs_blocks(row, s0, ng, bs + gs->nblk_int);
    bs[gs->nblk] = (int32_t)ng;
    ierr = hx_gs_upload(b, bs, gs->nblk + 1, sizeof(int32_t), &gs->d_bstart);
    free(bs), bs = NULL;
  }
  /* (elsewhere than cpu, each host array freed once its backend copy exists) */
  if (!ierr && b->kind == HX_BACKEND_CPU) ierr = hx_gs_cpu_plan(gs, row, col, s0);
  if (direct) {
    gs->d_row = row, gs->d_col = col; /* the handle's now, freed with it */
  } else {
    if (!ierr) ierr = hx_gs_upload(b, row, ng + 1, sizeof(int32_t), &gs->d_row);
    if (!ierr) ierr = hx_gs_upload(b, col, nnz, sizeof(int32_t), &gs->d_col);
    free(row), free(col);
  }
  row = col = NULL;
  if (!ierr) ierr = hx_gs_upload(b, map, nl, sizeof(int32_t), &gs->d_map);
  if (ierr) return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  return HX_SUCCESS;
}

/* Frees what hx_gs_build_l makes (not h_map). */
static int hx_gs_free_l(hx_gs gs) {
  void **dptr[] = {(void **)&gs->d_map, (void **)&gs->d_row, (void **)&gs->d_col, (void **)&gs->d_bstart};
  for (size_t k = 0; k < sizeof dptr / sizeof dptr[0]; k++) HX_CALL(hx_mem_free(gs->b, dptr[k]));
  free(gs->chunk), free(gs->acc), free(gs->cut_rows);
  gs->chunk = NULL, gs->acc = NULL, gs->cut_rows = NULL;
  return HX_SUCCESS;
}

/* The interior G rows renumbered by first appearance in gs->h_map (ids,
 * multiplicities and the map's values follow; the L side is not rebuilt:
 * the callers do that once). */
static int hx_gs_permute_interior(hx_gs gs, int32_t *nof) {
  const int64_t ng = gs->ng, s0 = ng - gs->n_shared;
  for (int64_t r = 0; r < ng; r++) nof[r] = r < s0 ? -1 : (int32_t)r;
  int64_t next = 0;
  for (int64_t i = 0; i < gs->nl; i++) {
    const int32_t r = gs->h_map[i];
    if (r >= 0 && r < s0 && nof[r] < 0) nof[r] = (int32_t)next++;
  }
  HX_CHECK(next == s0, HX_ERR_INTERNAL, "gather-scatter renumbering: %lld of %lld interior rows in the map",
           (long long)next, (long long)s0);
  int64_t *gids = NULL;
  double *m = NULL, *pm = NULL;
  int ierr = HX_ALLOC(&gids, ng + 1);
  if (!ierr) ierr = HX_ALLOC(&m, ng + 1);
  if (!ierr) ierr = HX_ALLOC(&pm, ng + 1);
  if (!ierr) {
    for (int64_t r = 0; r < ng; r++) gids[nof[r]] = gs->gids[r];
    memcpy(gs->gids, gids, (size_t)ng * sizeof *gids);
  }
  double **dm[] = {&gs->d_mult, &gs->d_invmult};
  for (int k = 0; k < 2 && !ierr && ng > 0; k++) {
    ierr = hx_mem_to_host(gs->b, m, *dm[k], (size_t)ng * sizeof *m);
    for (int64_t r = 0; r < ng && !ierr; r++) pm[nof[r]] = m[r];
    if (!ierr) ierr = hx_mem_to_device(gs->b, *dm[k], pm, (size_t)ng * sizeof *pm);
  }
  free(gids), free(m), free(pm);
  if (ierr) return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  for (int64_t i = 0; i < gs->nl; i++)
    if (gs->h_map[i] >= 0) gs->h_map[i] = nof[gs->h_map[i]];
  return HX_SUCCESS;
}

int hx_gs_relayout(hx_gs gs, int64_t nl, const int64_t *old_of_new, int32_t *h_new_of_old) {
  HX_CHECK(gs && (old_of_new || nl == 0), HX_ERR_ARG, "gather-scatter relayout: NULL argument");
  HX_CALL(hx_gs_maps_kept(gs, "relayout"));
  HX_CHECK(nl >= 0 && nl < INT_MAX, HX_ERR_ARG, "gather-scatter relayout: nl = %lld must be in [0, 2^31-1)",
           (long long)nl);
  HX_CHECK(!gs->in_flight, HX_ERR_ARG, "gather-scatter relayout: an exchange is in flight");
  HX_CHECK(!h_new_of_old || !gs->has_mask, HX_ERR_ARG,
           "gather-scatter relayout: renumbering refused, the G-vector has a mask (renumber before setting it)");
  int32_t *map = NULL;
  unsigned char *seen = NULL;
  HX_CALL(HX_ALLOC(&map, nl + 1));
  int ierr = HX_ALLOC(&seen, gs->nl + 1);
  int64_t n = 0;
  for (int64_t i = 0; i < nl && !ierr; i++) {
    const int64_t o = old_of_new[i];
    map[i] = -1;
    if (o < 0) continue;
    if (o >= gs->nl || seen[o])
      ierr = HX_ERROR(HX_ERR_ARG, "gather-scatter relayout: entry %lld takes old L entry %lld (%s)", (long long)i,
                      (long long)o, o >= gs->nl ? "outside the old vector" : "taken twice");
    else seen[o] = 1, map[i] = gs->h_map[o], n += map[i] >= 0;
  }
  if (!ierr && n != gs->nnz)
    ierr = HX_ERROR(HX_ERR_ARG, "gather-scatter relayout: %lld of the %lld mapped L entries kept", (long long)n,
                    (long long)gs->nnz);
  free(seen);
  if (ierr) {
    free(map);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  /* the exchange and the owners stay; the L side is rebuilt once, after
   * the optional renumbering of the interior rows */
  HX_CALL(hx_gs_free_l(gs));
  free(gs->h_map);
  gs->h_map = map;
  gs->nl = nl;
  if (h_new_of_old) HX_CALL(hx_gs_permute_interior(gs, h_new_of_old));
  HX_CALL(hx_gs_build_l(gs));
  gs->l_pending = 0;
  return HX_SUCCESS;
}

int hx_gs_maps_kept(hx_gs gs, const char *what) {
  HX_CHECK(!gs->dropped, HX_ERR_ARG, "gather-scatter: %s after hx_gs_drop_maps (the map is gone)", what);
  return HX_SUCCESS;
}

int hx_gs_drop_maps(hx_gs gs) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: handle is NULL");
  HX_CHECK(!gs->l_pending, HX_ERR_ARG, "gather-scatter: hx_gs_drop_maps before the L side was built");
  HX_CALL(hx_mem_free(gs->b, (void **)&gs->d_map));
  HX_CALL(hx_mem_free(gs->b, (void **)&gs->d_mult));
  HX_CALL(hx_mem_free(gs->b, (void **)&gs->d_invmult));
  free(gs->gids), free(gs->h_map);
  gs->gids = NULL, gs->h_map = NULL;
  gs->dropped = 1;
  return HX_SUCCESS;
}

int hx_gs_take_map(hx_gs gs, int32_t **d_map) {
  HX_CHECK(gs && d_map, HX_ERR_ARG, "gather-scatter: NULL argument to hx_gs_take_map");
  HX_CHECK(!gs->l_pending, HX_ERR_ARG, "gather-scatter: hx_gs_take_map before the L side was built");
  HX_CALL(hx_gs_maps_kept(gs, "hx_gs_take_map"));
  *d_map = gs->d_map;
  gs->d_map = NULL;
  HX_CALL(hx_gs_drop_maps(gs));
  return HX_SUCCESS;
}

int hx_gs_finish_l(hx_gs gs) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: handle is NULL");
  if (!gs->l_pending) return HX_SUCCESS;
  HX_CALL(hx_gs_build_l(gs));
  gs->l_pending = 0;
  return HX_SUCCESS;
}

int hx_gs_renumber_interior(hx_gs gs, int32_t *h_new_of_old) {
  HX_CHECK(gs && (h_new_of_old || gs->ng == 0), HX_ERR_ARG, "gather-scatter renumbering: NULL argument");
  HX_CALL(hx_gs_maps_kept(gs, "renumbering"));
  HX_CHECK(!gs->in_flight, HX_ERR_ARG, "gather-scatter renumbering: an exchange is in flight");
  HX_CHECK(!gs->has_mask, HX_ERR_ARG, "gather-scatter renumbering: the G-vector has a mask (renumber before "
                                      "setting it)");
  HX_CALL(hx_gs_permute_interior(gs, h_new_of_old));
  HX_CALL(hx_gs_free_l(gs));
  HX_CALL(hx_gs_build_l(gs));
  gs->l_pending = 0;
  return HX_SUCCESS;
}

typedef struct {
  int64_t nu;   /* distinct nonzero ids on this rank */
  int64_t nrec; /* rendezvous records (id, count) received, sorted by id */
  int64_t nans; /* words of rendezvous answers received */
  int64_t npriv;  /* unique ids kept out of the rendezvous (hx_gs_create_deferred_private) */
  uint8_t *upriv; /* per unique id: 1 = private (NULL: none is) */
  int64_t *uid, *ucnt, *ustart, *pval; /* unique ids, local counts, offsets into the sorted pairs */
  uint64_t *pkey;
  int64_t *ans;  /* rendezvous answers: per id [id, mult, nh, holders...] */
  int64_t *uans; /* offset of each unique id's answer record */
  int64_t *gof;  /* G index of each unique id */
  double *mult;  /* host, ng: multiplicity of each G entry */
  int64_t *sbuf, *rbuf;
  int *scnt, *hcnt;
  int64_t *rkey_val;
  uint64_t *rkey;
  /* the keyed setup (hx_gs_keyed_create): the unique ids that go through the
   * rendezvous, in increasing id (ru[k] = unique index; NULL: all unique ids,
   * uid being sorted), and the caller's L -> unique map (hx_gs_number) */
  int64_t nru;
  int64_t *ru;
  int32_t *key; /* taken over from hx_gs_keyed_finish: becomes the scatter map */
  int64_t knnz; /* L entries with a key (hx_gs_keyed_create's count) */
  int keyed;
} hx_gs_tmp;

/* the k-th unique id of the rendezvous, in increasing id */
static inline int64_t hx_gs_ru(const hx_gs_tmp *t, int64_t k) { return t->ru ? t->ru[k] : k; }
static inline int64_t hx_gs_nru(const hx_gs_tmp *t) { return t->ru ? t->nru : t->nu; }

static void hx_gs_tmp_free(hx_gs_tmp *t) {
  free(t->uid), free(t->ucnt), free(t->ustart), free(t->pval), free(t->pkey), free(t->ans);
  free(t->uans), free(t->gof), free(t->mult), free(t->sbuf), free(t->rbuf), free(t->scnt), free(t->hcnt);
  free(t->rkey_val), free(t->rkey), free(t->upriv), free(t->ru), free(t->key);
}

/* Setup, in the phases below (hx_gs_setup); t carries what one phase hands
 * to the next and is freed by the caller whatever happens. */

/* The nnz pairs (id, L index) of the nonzero ids, sorted by id then L index
 * (radix sort), and the unique ids with their counts and offsets. */
static int hx_gs_sort_pairs(int64_t nl, const int64_t *ids, int64_t nnz, hx_gs_tmp *t) {
  HX_CALL(HX_ALLOC(&t->pkey, nnz + 1));
  for (int64_t i = 0, k = 0; i < nl; i++)
    if (ids[i]) t->pkey[k] = (uint64_t)ids[i], t->pval[k++] = i;
  HX_CALL(hx_gs_radix_sort(nnz, t->pkey, t->pval));
  int64_t nu = 0;
  for (int64_t k = 0; k < nnz; k++) nu += (k == 0 || t->pkey[k] != t->pkey[k - 1]);
  HX_CALL(HX_ALLOC(&t->uid, nu + 1));
  HX_CALL(HX_ALLOC(&t->ucnt, nu + 1));
  HX_CALL(HX_ALLOC(&t->ustart, nu + 1));
  for (int64_t k = 0, u = -1; k < nnz; k++) {
    if (k == 0 || t->pkey[k] != t->pkey[k - 1]) {
      u++;
      t->uid[u] = (int64_t)t->pkey[k];
      t->ustart[u] = k;
    }
    t->ucnt[u]++;
  }
  t->ustart[nu] = nnz;
  t->nu = nu;
  free(t->pkey), t->pkey = NULL;
  return HX_SUCCESS;
}

/* The same by counting, when the nonzero ids lie in [kmin, kmax], a range of
 * at most about 4 nnz (the ids of a rank's elements are a few ranges of
 * the global numbering): one count per id of the range and one stable pass
 * over the L-vector instead of the radix sort's passes over 16-byte pairs. */
static int hx_gs_count_sort(int64_t nl, const int64_t *ids, int64_t kmin, int64_t kmax, hx_gs_tmp *t) {
  const int64_t nr = kmax - kmin + 1;
  int32_t *pos = NULL;
  HX_CALL(HX_ALLOC(&pos, nr));
  for (int64_t i = 0; i < nl; i++)
    if (ids[i]) pos[ids[i] - kmin]++;
  int64_t nu = 0;
  for (int64_t r = 0; r < nr; r++) nu += pos[r] != 0;
  int ierr = HX_ALLOC(&t->uid, nu + 1);
  if (!ierr) ierr = HX_ALLOC(&t->ucnt, nu + 1);
  if (!ierr) ierr = HX_ALLOC(&t->ustart, nu + 1);
  if (ierr) {
    free(pos);
    return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  }
  int64_t k = 0, u = 0;
  for (int64_t r = 0; r < nr; r++) {
    const int32_t c = pos[r];
    if (!c) continue;
    t->uid[u] = kmin + r, t->ucnt[u] = c, t->ustart[u++] = k;
    pos[r] = (int32_t)k;
    k += c;
  }
  t->ustart[nu] = k;
  t->nu = nu;
  for (int64_t i = 0; i < nl; i++)
    if (ids[i]) t->pval[pos[ids[i] - kmin]++] = i;
  free(pos);
  return HX_SUCCESS;
}

/* Phase 1: the local pairs (id, L index), sorted by id then L index, and the
 * unique ids with their local counts. Collective only to agree on bad ids. */
static int hx_gs_local_ids(hx_gs gs, const int64_t *ids, const uint8_t *priv, hx_gs_tmp *t) {
  const int64_t nl = gs->nl;
  int64_t nnz = 0, bad = -1, kmin = INT64_MAX, kmax = 0; /* the range of the nonzero ids */
  for (int64_t i = 0; i < nl; i++) {
    if (ids[i] < 0 && bad < 0) bad = i;
    if (ids[i]) nnz++, kmin = ids[i] < kmin ? ids[i] : kmin, kmax = ids[i] > kmax ? ids[i] : kmax;
  }
  /* agree on bad input before any other collective, so no rank hangs */
  int lbad = bad >= 0, gbad = 0;
  HX_MPI(MPI_Allreduce(&lbad, &gbad, 1, MPI_INT, MPI_MAX, gs->comm));
  HX_CHECK(!lbad, HX_ERR_ARG, "gather-scatter: negative global id %lld at L entry %lld",
           (long long)(bad >= 0 ? ids[bad] : 0), (long long)bad);
  HX_CHECK(!gbad, HX_ERR_ARG, "gather-scatter: another rank passed invalid global ids");
  gs->nnz = nnz;
  HX_CALL(HX_ALLOC(&t->pval, nnz + 1));
  /* HEXCG_GS_COUNT=0: the radix sort whatever the range (for comparisons) */
  if (nnz > 0 && nnz < INT32_MAX && kmax - kmin < 4 * nnz + 4096 && !hx_env_off("HEXCG_GS_COUNT"))
    HX_CALL(hx_gs_count_sort(nl, ids, kmin, kmax, t));
  else
    HX_CALL(hx_gs_sort_pairs(nl, ids, nnz, t));
  const int64_t nu = t->nu;
  if (priv) { /* private when every entry of the id says so */
    HX_CALL(HX_ALLOC(&t->upriv, nu + 1));
    for (int64_t u = 0; u < nu; u++) {
      uint8_t all = 1;
      for (int64_t k = t->ustart[u]; k < t->ustart[u + 1] && all; k++) all = priv[t->pval[k]] != 0;
      t->upriv[u] = all;
      t->npriv += all;
    }
  }
  return HX_SUCCESS;
}

/* Phase 2: the rendezvous. Each unique id goes with its local count to rank
 * id % size, which gathers the records of every holder, sorted by id and,
 * within an id, by source rank. Collective. */
static int hx_gs_rendezvous(hx_gs gs, hx_gs_tmp *t) {
  const int size = gs->size;
  HX_CALL(HX_ALLOC(&t->scnt, size));
  HX_CALL(HX_ALLOC(&t->hcnt, size + 1));
  const uint8_t *up = t->upriv;
  const int64_t nru = hx_gs_nru(t);
  for (int64_t k = 0; k < nru; k++) {
    const int64_t u = hx_gs_ru(t, k);
    if (!up || !up[u]) t->scnt[t->uid[u] % size] += 2;
  }
  {
    int64_t s = 0;
    for (int r = 0; r < size; r++) {
      t->hcnt[r] = (int)s;
      s += t->scnt[r];
      HX_CALL(hx_gs_int(s, "rendezvous send size"));
    }
    HX_CALL(HX_ALLOC(&t->sbuf, s + 1));
    for (int64_t k = 0; k < nru; k++) {
      const int64_t u = hx_gs_ru(t, k);
      if (up && up[u]) continue;
      int r = (int)(t->uid[u] % size);
      t->sbuf[t->hcnt[r]++] = t->uid[u];
      t->sbuf[t->hcnt[r]++] = t->ucnt[u];
    }
  }
  int64_t nrecv = 0;
  HX_CALL(hx_gs_alltoallv(gs->comm, size, t->sbuf, t->scnt, &t->rbuf, &nrecv));
  /* source rank of each received record: the receive buffer is in rank order;
   * recompute the receive counts from the send counts of each rank */
  int64_t nrec = nrecv / 2;
  {
    int *rc = NULL;
    HX_CALL(HX_ALLOC(&rc, size));
    HX_MPI(MPI_Alltoall(t->scnt, 1, MPI_INT, rc, 1, MPI_INT, gs->comm));
    HX_CALL(HX_ALLOC(&t->rkey, nrec + 1));
    HX_CALL(HX_ALLOC(&t->rkey_val, nrec + 1));
    int64_t k = 0;
    for (int r = 0; r < size; r++)
      for (int j = 0; j < rc[r] / 2; j++, k++) {
        t->rkey[k] = (uint64_t)t->rbuf[2 * k];
        t->rkey_val[k] = k * (int64_t)size + r; /* record index and source rank */
      }
    /* stable sort by id: records of one id end up in increasing source
     * rank. Each source's records arrive in increasing id (it sends its
     * sorted unique ids in order), so with few ranks a merge of the runs
     * (ties to the lower rank: the same order as the stable sort) replaces
     * the radix passes */
    if (size <= 8 && size > 1) {
      int64_t head[8], end[8];
      for (int r = 0, o = 0; r < size; r++) head[r] = o, o += rc[r] / 2, end[r] = o;
      uint64_t *mk = NULL;
      int64_t *mv = NULL;
      int e = HX_ALLOC(&mk, nrec + 1);
      if (!e) e = HX_ALLOC(&mv, nrec + 1);
      for (int64_t j = 0; j < nrec && !e; j++) {
        int best = -1;
        for (int r = 0; r < size; r++)
          if (head[r] < end[r] && (best < 0 || t->rkey[head[r]] < t->rkey[head[best]])) best = r;
        mk[j] = t->rkey[head[best]], mv[j] = t->rkey_val[head[best]++];
      }
      if (e) {
        free(mk), free(mv), free(rc);
        return hx_error_trace(__FILE__, __LINE__, __func__, e);
      }
      free(t->rkey), free(t->rkey_val);
      t->rkey = mk, t->rkey_val = mv;
    } else {
      int e = hx_gs_radix_sort(nrec, t->rkey, t->rkey_val);
      if (e) {
        free(rc);
        return hx_error_trace(__FILE__, __LINE__, __func__, e);
      }
    }
    free(rc);
  }
  t->nrec = nrec;
  return HX_SUCCESS;
}

/* Phase 3: the rendezvous ranks answer every holder of each id with
 * [id, multiplicity, number of holders, holders in increasing rank], and
 * count the distinct ids (n_global). Collective. */
static int hx_gs_answer(hx_gs gs, hx_gs_tmp *t) {
  const int size = gs->size;
  const int64_t nrec = t->nrec;
  memset(t->scnt, 0, (size_t)size * sizeof(int));
  int64_t ndistinct = 0;
  for (int64_t a = 0; a < nrec;) {
    int64_t e = a + 1;
    while (e < nrec && t->rkey[e] == t->rkey[a]) e++;
    ndistinct++;
    for (int64_t j = a; j < e; j++) {
      int h = (int)(t->rkey_val[j] % size);
      HX_CHECK(j == a || h != (int)(t->rkey_val[j - 1] % size), HX_ERR_INTERNAL,
               "gather-scatter: id %llu sent twice by rank %d", (unsigned long long)t->rkey[a], h);
      int64_t c = (int64_t)t->scnt[h] + 3 + (e - a);
      HX_CALL(hx_gs_int(c, "rendezvous answer size"));
      t->scnt[h] = (int)c;
    }
    a = e;
  }
  free(t->sbuf);
  t->sbuf = NULL;
  {
    int64_t s = 0;
    for (int r = 0; r < size; r++) {
      t->hcnt[r] = (int)s;
      s += t->scnt[r];
      HX_CALL(hx_gs_int(s, "rendezvous answer size"));
    }
    HX_CALL(HX_ALLOC(&t->sbuf, s + 1));
  }
  for (int64_t a = 0; a < nrec;) {
    int64_t e = a + 1, mult = 0;
    while (e < nrec && t->rkey[e] == t->rkey[a]) e++;
    for (int64_t j = a; j < e; j++) mult += t->rbuf[2 * (t->rkey_val[j] / size) + 1];
    for (int64_t j = a; j < e; j++) {
      int h = (int)(t->rkey_val[j] % size);
      int64_t *o = t->sbuf + t->hcnt[h];
      o[0] = (int64_t)t->rkey[a];
      o[1] = mult;
      o[2] = e - a;
      for (int64_t q = a; q < e; q++) o[3 + q - a] = t->rkey_val[q] % size;
      t->hcnt[h] += (int)(3 + e - a);
    }
    a = e;
  }
  int64_t nans = 0;
  HX_CALL(hx_gs_alltoallv(gs->comm, size, t->sbuf, t->scnt, &t->ans, &nans));
  ndistinct += t->npriv; /* each held here only, so counted here only */
  HX_MPI(MPI_Allreduce(&ndistinct, &gs->n_global, 1, MPI_INT64_T, MPI_SUM, gs->comm));
  t->nans = nans;
  return HX_SUCCESS;
}

/* Phase 4: each answer matched with the local unique id it is about. */
static int hx_gs_match_answers(hx_gs_tmp *t) {
  const int64_t nu = t->nu, nans = t->nans, n = hx_gs_nru(t);
  /* Each source rank answers in increasing id order, so the search gallops
   * forward from the last match (O(log gap) per answer: the gap is about the
   * rank count), and bisects the whole of the rendezvous' ids where a new
   * source's answers begin (the k-th of them: uid[hx_gs_ru(t, k)]) */
  HX_CALL(HX_ALLOC(&t->uans, nu + 1));
  for (int64_t u = 0; u < nu; u++) t->uans[u] = -1;
#define RID(k) t->uid[hx_gs_ru(t, k)]
  for (int64_t a = 0, last = -1; a < nans;) {
    int64_t id = t->ans[a], lo = 0, hi = n;
    if (last >= 0 && RID(last) < id) {
      lo = last + 1;
      int64_t step = 1;
      while (lo + step < n && RID(lo + step) <= id) lo += step, step *= 2;
      hi = lo + step < n ? lo + step + 1 : n;
    }
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (RID(mid) < id)
        lo = mid + 1;
      else
        hi = mid;
    }
    HX_CHECK(lo < n && RID(lo) == id && t->uans[hx_gs_ru(t, lo)] < 0, HX_ERR_INTERNAL,
             "gather-scatter: unexpected rendezvous answer for id %lld", (long long)id);
    t->uans[hx_gs_ru(t, lo)] = a;
    last = lo;
    a += 3 + t->ans[a + 2];
  }
#undef RID
  /* a private id has no answer (uans -1): held here only, its multiplicity
   * is its local count and this rank owns it (hx_gs_number) */
  return HX_SUCCESS;
}

/* Phase 5: the G numbering (interior owned, shared owned, not owned; within
 * a group by first appearance in the L-vector), the id and multiplicity of
 * each G entry. */
static int hx_gs_number(hx_gs gs, hx_gs_tmp *t) {
  const int rank = gs->rank;
  const int64_t nu = t->nu;
  int64_t ngrp[3] = {0, 0, 0};
  HX_CALL(HX_ALLOC(&t->gof, nu + 1));
  for (int64_t u = 0; u < nu; u++) {
    const int priv = t->upriv && t->upriv[u];
    HX_CHECK(priv || t->uans[u] >= 0, HX_ERR_INTERNAL, "gather-scatter: no rendezvous answer for id %lld",
             (long long)t->uid[u]);
    const int64_t *r = priv ? NULL : t->ans + t->uans[u];
    int grp = priv || r[2] == 1 ? 0 : (r[3] == rank ? 1 : 2);
    t->gof[u] = -1 - grp; /* numbered in the walk below */
    ngrp[grp]++;
  }
  HX_CALL(hx_gs_int(nu, "number of G entries"));
  gs->ng = nu;
  gs->n_owned = ngrp[0] + ngrp[1];
  gs->n_shared = ngrp[1] + ngrp[2];
  {
    /* within a group, in order of first appearance in the L-vector: G then
     * follows the element order, which keeps gather and scatter streaming.
     * The scatter map first holds each L entry's unique id; one walk of the
     * L-vector (O(nl), no sort) numbers a unique id at its first entry, per
     * group from the group's start (gof holds -1 - group until then), and
     * maps every entry to its G index. */
    const int64_t nl = gs->nl;
    if (t->keyed) /* the keyed setup: the caller's map to the unique ids, taken over */
      gs->h_map = t->key, t->key = NULL;
    else
      HX_CALL(HX_ALLOC(&gs->h_map, nl + 1));
    int32_t *map = gs->h_map;
    if (!t->keyed) {
      if (gs->nnz < nl)
        for (int64_t i = 0; i < nl; i++) map[i] = -1;
      for (int64_t u = 0; u < nu; u++)
        for (int64_t k = t->ustart[u]; k < t->ustart[u + 1]; k++) map[t->pval[k]] = (int32_t)u;
    }
    int64_t next[3] = {0, ngrp[0], ngrp[0] + ngrp[1]}, nnz = 0, bad = -1;
    for (int64_t i = 0; i < nl; i++) {
      const int32_t u = map[i];
      if (u < 0 || u >= nu) { /* a key out of range: the keyed setup's caller */
        if (u != -1 && bad < 0) bad = i;
        map[i] = -1;
        continue;
      }
      if (t->gof[u] < 0) t->gof[u] = next[-1 - t->gof[u]]++;
      map[i] = (int32_t)t->gof[u];
      nnz++;
    }
    HX_CHECK(bad < 0, HX_ERR_ARG, "gather-scatter (keyed): L entry %lld has a key outside [-1, %lld)",
             (long long)bad, (long long)nu);
    int64_t miss = -1;
    for (int64_t u = 0; u < nu && miss < 0; u++)
      if (t->gof[u] < 0) miss = u;
    HX_CHECK(miss < 0 && nnz == (t->keyed ? t->knnz : gs->nnz), HX_ERR_ARG,
             "gather-scatter (keyed): %lld L entries have keys, %lld did at hx_gs_keyed_create%s%lld",
             (long long)nnz, (long long)(t->keyed ? t->knnz : gs->nnz), miss >= 0 ? "; missing key " : "",
             (long long)(miss >= 0 ? miss : 0));
    gs->nnz = nnz;
  }
  const int64_t ng = nu;
  HX_CALL(HX_ALLOC(&gs->gids, ng + 1));
  HX_CALL(HX_ALLOC(&t->mult, ng + 1));
  for (int64_t u = 0; u < nu; u++) {
    gs->gids[t->gof[u]] = t->uid[u];
    t->mult[t->gof[u]] = (double)(t->uans[u] < 0 ? t->ucnt[u] : t->ans[t->uans[u] + 1]);
  }

  return HX_SUCCESS;
}

/* Phase 6: the scatter map, the L side (CSR of Z^T, gather blocks, CPU
 * plan) and the multiplicities in backend memory. */
static int hx_gs_map(hx_gs gs, hx_gs_tmp *t) {
  const int64_t ng = gs->ng;
  hx_backend b = gs->b;
  /* the scatter map is hx_gs_number's */
  int ierr = gs->l_pending ? HX_SUCCESS : hx_gs_build_l(gs);
  if (!ierr) ierr = hx_gs_upload(b, t->mult, ng, sizeof(double), &gs->d_mult);
  if (!ierr) {
    for (int64_t r = 0; r < ng; r++) t->mult[r] = 1.0 / t->mult[r];
    ierr = hx_gs_upload(b, t->mult, ng, sizeof(double), &gs->d_invmult);
  }
  HX_CALL(ierr);

  return HX_SUCCESS;
}

/* Phase 7: the exchange pattern (neighbours, send slots, combine lists). */
static int hx_gs_pattern(hx_gs gs, hx_gs_tmp *t) {
  const int size = gs->size, rank = gs->rank;
  const int64_t nu = t->nu, s0 = gs->ng - gs->n_shared;
  hx_backend b = gs->b;
  /* (holder, id) pairs of the shared ids, bucketed by
   * holder rank (counting sort; ids stay increasing within a bucket) */
  int64_t nsend = 0;
  memset(t->hcnt, 0, (size_t)(size + 1) * sizeof(int));
  for (int64_t u = 0; u < nu; u++) {
    if (t->uans[u] < 0) continue; /* private */
    const int64_t *r = t->ans + t->uans[u];
    if (r[2] < 2) continue;
    for (int64_t q = 0; q < r[2]; q++)
      if (r[3 + q] != rank) t->hcnt[r[3 + q]]++, nsend++;
  }
  HX_CALL(hx_gs_int(nsend, "number of exchanged values"));
  gs->nsend = nsend;
  gs->nnb = 0;
  for (int h = 0; h < size; h++) gs->nnb += t->hcnt[h] > 0;
  HX_CALL(HX_ALLOC(&gs->nb_rank, gs->nnb + 1));
  HX_CALL(HX_ALLOC(&gs->nb_off, gs->nnb + 1));
  HX_CALL(HX_ALLOC(&gs->reqs, 2 * gs->nnb + 1));
  HX_CALL(HX_ALLOC(&gs->stats, 2 * gs->nnb + 1));
  {
    int k = 0, s = 0;
    for (int h = 0; h < size; h++) {
      int c = t->hcnt[h];
      t->hcnt[h] = s; /* bucket start */
      if (c > 0) gs->nb_rank[k] = h, gs->nb_off[k++] = s;
      s += c;
    }
    gs->nb_off[gs->nnb] = s;
  }
  int32_t *sidx = NULL, *coff = NULL, *cpos = NULL, *cself = NULL, *cfill = NULL;
  const int64_t nsh = gs->n_shared;
  int ierr = HX_ALLOC(&sidx, nsend + 1);
  if (!ierr) ierr = HX_ALLOC(&coff, nsh + 1);
  if (!ierr) ierr = HX_ALLOC(&cpos, nsend + 1);
  if (!ierr) ierr = HX_ALLOC(&cself, nsh + 1);
  if (!ierr) ierr = HX_ALLOC(&cfill, nsh + 1);
  if (!ierr) {
    /* in increasing id (the send slots of a neighbour are ordered by id on
     * both sides) */
    const int64_t nru = hx_gs_nru(t);
    for (int64_t k = 0; k < nru; k++) {
      const int64_t u = hx_gs_ru(t, k);
      if (t->uans[u] < 0) continue; /* private */
      const int64_t *r = t->ans + t->uans[u];
      if (r[2] < 2) continue;
      const int64_t g = t->gof[u];
      for (int64_t q = 0; q < r[2]; q++) {
        if (r[3 + q] == rank) {
          cself[g - s0] = (int32_t)q;
          continue;
        }
        sidx[t->hcnt[r[3 + q]]++] = (int32_t)g;
      }
      coff[g - s0 + 1] = (int32_t)(r[2] - 1);
    }
    for (int64_t s = 0; s < nsh; s++) coff[s + 1] += coff[s];
    memcpy(cfill, coff, (size_t)nsh * sizeof *cfill);
    /* combine lists: walking the slots in (holder, id) order appends each
     * entry's positions in increasing holder rank */
    for (int64_t p = 0; p < nsend; p++) cpos[cfill[sidx[p] - s0]++] = (int32_t)p;
    ierr = hx_gs_upload(b, sidx, nsend, sizeof(int32_t), &gs->d_send_idx);
  }
  if (!ierr) ierr = hx_gs_upload(b, coff, nsh + 1, sizeof(int32_t), &gs->d_comb_off);
  if (!ierr) ierr = hx_gs_upload(b, cpos, nsend, sizeof(int32_t), &gs->d_comb_pos);
  if (!ierr) ierr = hx_gs_upload(b, cself, nsh, sizeof(int32_t), &gs->d_comb_self);
  free(sidx), free(coff), free(cpos), free(cself), free(cfill);
  HX_CALL(ierr);

  return HX_SUCCESS;
}

/* Phase 8: the message buffers. */
static int hx_gs_buffers(hx_gs gs) {
  hx_backend b = gs->b;
  const int64_t nsend = gs->nsend;
  /* message buffers: host (pinned for cuda); cuda also stages them in
   * device memory and runs the exchange on a queue of its own */
  HX_CALL(hx_mem_alloc_host(b, (size_t)(nsend + 1) * sizeof(double), (void **)&gs->h_sendbuf));
  HX_CALL(hx_mem_alloc_host(b, (size_t)(nsend + 1) * sizeof(double), (void **)&gs->h_recvbuf));
  if (b->kind != HX_BACKEND_CUDA) return HX_SUCCESS;
  HX_CALL(hx_mem_alloc(b, (size_t)nsend * sizeof(double), (void **)&gs->d_sendbuf));
  HX_CALL(hx_mem_alloc(b, (size_t)nsend * sizeof(double), (void **)&gs->d_recvbuf));
  HX_CALL(hx_queue_create(b, &gs->cq));
  HX_CALL(hx_event_create(b, &gs->ev_ready));
  HX_CALL(hx_event_create(b, &gs->ev_done));
  return HX_SUCCESS;
}

/* One log event per setup phase (hexcg run --log-view), summed over all
 * handles; GS_PHASE(ev, k, call) times call into event k. */
enum { GS_EV_IDS, GS_EV_RENDEZVOUS, GS_EV_ANSWER, GS_EV_NUMBER, GS_EV_MAP, GS_EV_PATTERN, GS_EV_COUNT };
static int hx_gs_phase_events(hx_log_event ev[GS_EV_COUNT]) {
  static const char *names[GS_EV_COUNT] = {"gs.setup.local-ids", "gs.setup.rendezvous", "gs.setup.answer",
                                           "gs.setup.number",    "gs.setup.map",        "gs.setup.pattern"};
  for (int k = 0; k < GS_EV_COUNT; k++) HX_CALL(hx_log_event_register(names[k], &ev[k]));
  return HX_SUCCESS;
}
#define GS_PHASE(ev, k, call)          \
  do {                                 \
    hx_log_event_begin(ev[k]);         \
    HX_CALL(call);                     \
    hx_log_event_end(ev[k], 0.0, 0.0); \
  } while (0)

/* the collective phases, after the local unique ids (t->uid, counts): the
 * rendezvous, its answers matched with the ids */
static int hx_gs_setup_shared(hx_gs gs, hx_gs_tmp *t, const hx_log_event *ev) {
  GS_PHASE(ev, GS_EV_RENDEZVOUS, hx_gs_rendezvous(gs, t));
  GS_PHASE(ev, GS_EV_ANSWER, hx_gs_answer(gs, t));
  GS_PHASE(ev, GS_EV_ANSWER, hx_gs_match_answers(t));
  return HX_SUCCESS;
}

/* the local phases after the answers: numbering, map, exchange pattern, buffers */
static int hx_gs_setup_local(hx_gs gs, hx_gs_tmp *t, const hx_log_event *ev) {
  GS_PHASE(ev, GS_EV_NUMBER, hx_gs_number(gs, t));
  GS_PHASE(ev, GS_EV_MAP, hx_gs_map(gs, t));
  GS_PHASE(ev, GS_EV_PATTERN, hx_gs_pattern(gs, t));
  GS_PHASE(ev, GS_EV_PATTERN, hx_gs_buffers(gs));
  return HX_SUCCESS;
}

static int hx_gs_setup(hx_gs gs, const int64_t *ids, const uint8_t *priv, hx_gs_tmp *t) {
  hx_log_event ev[GS_EV_COUNT];
  HX_CALL(hx_gs_phase_events(ev));
  GS_PHASE(ev, GS_EV_IDS, hx_gs_local_ids(gs, ids, priv, t));
  HX_CALL(hx_gs_setup_shared(gs, t, ev));
  HX_CALL(hx_gs_setup_local(gs, t, ev));
  return HX_SUCCESS;
}

/* A handle with its duplicated communicator, nothing set up. Collective. */
static int hx_gs_new(hx_backend b, MPI_Comm comm, int64_t nl, int defer, hx_gs *out) {
  hx_gs gs = NULL;
  HX_CALL(HX_ALLOC(&gs, 1));
  gs->b = b;
  gs->nl = nl;
  gs->l_pending = defer;
  gs->comm = MPI_COMM_NULL;
  int ierr = MPI_Comm_dup(comm, &gs->comm);
  if (ierr != MPI_SUCCESS) {
    free(gs);
    return hx_error_mpi(__FILE__, __LINE__, __func__, ierr, "MPI_Comm_dup");
  }
  MPI_Comm_rank(gs->comm, &gs->rank);
  MPI_Comm_size(gs->comm, &gs->size);
  *out = gs;
  return HX_SUCCESS;
}

static int hx_gs_create_impl(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *ids, const uint8_t *priv,
                             int defer, hx_gs *out) {
  HX_CHECK(out, HX_ERR_ARG, "gather-scatter: output handle is NULL");
  *out = NULL;
  HX_CHECK(b, HX_ERR_ARG, "gather-scatter: backend is NULL");
  HX_CHECK(nl >= 0 && nl < INT_MAX, HX_ERR_ARG, "gather-scatter: nl = %lld must be in [0, 2^31-1)",
           (long long)nl);
  HX_CHECK(ids || nl == 0, HX_ERR_ARG, "gather-scatter: ids is NULL");
  hx_gs gs = NULL;
  HX_CALL(hx_gs_new(b, comm, nl, defer, &gs));
  hx_gs_tmp t;
  int ierr;
  memset(&t, 0, sizeof t);
  hx_log_event ev_all = -1;
  ierr = hx_log_event_register("gs.setup", &ev_all);
  hx_log_event_begin(ev_all);
  if (!ierr) ierr = hx_gs_setup(gs, ids, priv, &t);
  hx_gs_tmp_free(&t);
  hx_log_event_end(ev_all, 0.0, 0.0);
  if (ierr) {
    /* errors in setup are collective in practice (bad ids on one rank make
     * the others wait); report and clean up what exists */
    int e2 = hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    hx_gs_destroy(&gs);
    return e2;
  }
  *out = gs;
  return HX_SUCCESS;
}

int hx_gs_create(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *ids, hx_gs *out) {
  HX_CALL(hx_gs_create_impl(b, comm, nl, ids, NULL, 0, out));
  return HX_SUCCESS;
}

int hx_gs_create_deferred(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *ids, hx_gs *out) {
  HX_CALL(hx_gs_create_impl(b, comm, nl, ids, NULL, 1, out));
  return HX_SUCCESS;
}

int hx_gs_create_private(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *ids, const uint8_t *priv,
                         hx_gs *out) {
  HX_CALL(hx_gs_create_impl(b, comm, nl, ids, priv, 0, out));
  return HX_SUCCESS;
}

int hx_gs_create_deferred_private(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *ids,
                                  const uint8_t *priv, hx_gs *out) {
  HX_CALL(hx_gs_create_impl(b, comm, nl, ids, priv, 1, out));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ keyed setup */
/* hx_gs_keyed_create / hx_gs_keyed_finish (hx_gs.h): the phases of
 * hx_gs_setup with the caller's unique ids in place of the local sort. */
struct hx_gs_keyed_s {
  hx_gs gs;        /* comm, rank, size, n_global; the numbering pending */
  hx_gs_tmp t;     /* unique ids, counts, the rendezvous' answers */
  uint8_t *shared; /* per key: held by another rank too */
  int64_t nshared;
};

/* keyed phase 1: the caller's unique ids, their counts in the L keys, the
 * ids that go through the rendezvous sorted (t->ru), checked on every rank
 * before the first collective so that all fail together. */
static int hx_gs_keyed_ids(hx_gs gs, int64_t nl, const int32_t *key, int64_t nu, const int64_t *uid,
                           const uint8_t *upriv, hx_gs_tmp *t) {
  t->nu = nu;
  t->keyed = 1;
  HX_CALL(HX_ALLOC(&t->uid, nu + 1));
  HX_CALL(HX_ALLOC(&t->ucnt, nu + 1));
  if (upriv) HX_CALL(HX_ALLOC(&t->upriv, nu + 1));
  int64_t badl = -1, bad = -1, nr = 0;
  for (int64_t i = 0; i < nl; i++) {
    const int32_t k = key[i];
    if (k >= 0 && k < nu)
      t->ucnt[k]++, t->knnz++;
    else if (k != -1 && badl < 0)
      badl = i;
  }
  for (int64_t u = 0; u < nu; u++) {
    t->uid[u] = uid[u];
    if ((uid[u] <= 0 || t->ucnt[u] < 1) && bad < 0) bad = u;
    if (upriv) t->upriv[u] = upriv[u] != 0;
    if (upriv && upriv[u])
      t->npriv++;
    else
      nr++;
  }
  uint64_t *rk = NULL;
  HX_CALL(HX_ALLOC(&t->ru, nr + 1));
  HX_CALL(HX_ALLOC(&rk, nr + 1));
  for (int64_t u = 0, k = 0; u < nu; u++)
    if (!upriv || !upriv[u]) rk[k] = (uint64_t)uid[u], t->ru[k++] = u;
  int ierr = hx_gs_radix_sort(nr, rk, t->ru);
  for (int64_t k = 1; k < nr && bad < 0; k++)
    if (rk[k] == rk[k - 1]) bad = t->ru[k];
  free(rk);
  HX_CALL(ierr);
  t->nru = nr;
  int lbad = bad >= 0 || badl >= 0, gbad = 0;
  HX_MPI(MPI_Allreduce(&lbad, &gbad, 1, MPI_INT, MPI_MAX, gs->comm));
  HX_CHECK(badl < 0, HX_ERR_ARG, "gather-scatter (keyed): L entry %lld has key %d, outside [-1, %lld)",
           (long long)badl, badl >= 0 ? (int)key[badl] : 0, (long long)nu);
  HX_CHECK(
      bad < 0, HX_ERR_ARG,
      "gather-scatter (keyed): key %lld has id %lld and %lld L entries; ids must be positive and distinct "
      "(a private one too), every key must occur",
      (long long)bad, (long long)(bad >= 0 ? uid[bad] : 0), (long long)(bad >= 0 ? t->ucnt[bad] : 0));
  HX_CHECK(!gbad, HX_ERR_ARG, "gather-scatter (keyed): another rank passed invalid keys");
  return HX_SUCCESS;
}

static int hx_gs_keyed_setup(hx_gs_keyed kd, int64_t nl, const int32_t *key, int64_t nu, const int64_t *uid,
                             const uint8_t *upriv) {
  hx_gs gs = kd->gs;
  hx_gs_tmp *t = &kd->t;
  hx_log_event ev[GS_EV_COUNT];
  HX_CALL(hx_gs_phase_events(ev));
  GS_PHASE(ev, GS_EV_IDS, hx_gs_keyed_ids(gs, nl, key, nu, uid, upriv, t));
  HX_CALL(hx_gs_setup_shared(gs, t, ev));
  HX_CALL(HX_ALLOC(&kd->shared, nu + 1));
  for (int64_t u = 0; u < nu; u++) {
    kd->shared[u] = t->uans[u] >= 0 && t->ans[t->uans[u] + 2] >= 2;
    kd->nshared += kd->shared[u];
  }
  return HX_SUCCESS;
}

int hx_gs_keyed_create(hx_backend b, MPI_Comm comm, int64_t nl, const int32_t *h_key, int64_t nu,
                       const int64_t *h_uid, const uint8_t *h_upriv, hx_gs_keyed *out) {
  HX_CHECK(out, HX_ERR_ARG, "gather-scatter (keyed): output handle is NULL");
  *out = NULL;
  HX_CHECK(b, HX_ERR_ARG, "gather-scatter (keyed): backend is NULL");
  HX_CHECK(nu >= 0 && nu < INT_MAX && nl >= 0 && nl < INT_MAX, HX_ERR_ARG,
           "gather-scatter (keyed): nl = %lld and nu = %lld must be in [0, 2^31-1)", (long long)nl,
           (long long)nu);
  HX_CHECK((h_uid || nu == 0) && (h_key || nl == 0), HX_ERR_ARG,
           "gather-scatter (keyed): ids or L keys are NULL");
  hx_gs_keyed kd = NULL;
  HX_CALL(HX_ALLOC(&kd, 1));
  int ierr = hx_gs_new(b, comm, 0, 1, &kd->gs);
  hx_log_event ev_all = -1;
  if (!ierr) ierr = hx_log_event_register("gs.setup", &ev_all);
  hx_log_event_begin(ev_all);
  if (!ierr) ierr = hx_gs_keyed_setup(kd, nl, h_key, nu, h_uid, h_upriv);
  hx_log_event_end(ev_all, 0.0, 0.0);
  if (ierr) {
    int e2 = hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    hx_gs_keyed_destroy(&kd);
    return e2;
  }
  *out = kd;
  return HX_SUCCESS;
}

int64_t hx_gs_keyed_num_keys(hx_gs_keyed kd) { return kd ? kd->t.nu : 0; }
int64_t hx_gs_keyed_num_shared(hx_gs_keyed kd) { return kd ? kd->nshared : 0; }
const uint8_t *hx_gs_keyed_shared(hx_gs_keyed kd) { return kd ? kd->shared : NULL; }

/* keyed phase 2 (local): hx_gs_setup's numbering (which checks the keys
 * against hx_gs_keyed_create's), map, pattern and buffers */
static int hx_gs_keyed_number(hx_gs gs, hx_gs_tmp *t, int64_t nl, int32_t *gof) {
  HX_CHECK(nl >= 0 && nl < INT_MAX, HX_ERR_ARG, "gather-scatter (keyed): nl = %lld must be in [0, 2^31-1)",
           (long long)nl);
  HX_CHECK(t->key || nl == 0, HX_ERR_ARG, "gather-scatter (keyed): the L keys are NULL");
  gs->nl = nl;
  hx_log_event ev[GS_EV_COUNT];
  HX_CALL(hx_gs_phase_events(ev));
  HX_CALL(hx_gs_setup_local(gs, t, ev));
  if (gof)
    for (int64_t u = 0; u < t->nu; u++) gof[u] = (int32_t)t->gof[u];
  return HX_SUCCESS;
}

int hx_gs_keyed_finish(hx_gs_keyed *pkd, int64_t nl, int32_t **h_key, int32_t *h_gof, hx_gs *out) {
  HX_CHECK(out, HX_ERR_ARG, "gather-scatter (keyed): output handle is NULL");
  *out = NULL;
  int32_t *key = h_key ? *h_key : NULL; /* taken over whatever happens */
  if (h_key) *h_key = NULL;
  if (!pkd || !*pkd) free(key);
  HX_CHECK(pkd && *pkd, HX_ERR_ARG, "gather-scatter (keyed): no keyed setup to finish");
  hx_gs_keyed kd = *pkd;
  *pkd = NULL;
  kd->t.key = key;
  hx_gs gs = kd->gs;
  kd->gs = NULL;
  hx_log_event ev_all = -1;
  int ierr = hx_log_event_register("gs.setup", &ev_all);
  hx_log_event_begin(ev_all);
  if (!ierr) ierr = hx_gs_keyed_number(gs, &kd->t, nl, h_gof);
  hx_log_event_end(ev_all, 0.0, 0.0);
  hx_gs_keyed_destroy(&kd);
  if (ierr) {
    int e2 = hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    hx_gs_destroy(&gs);
    return e2;
  }
  *out = gs;
  return HX_SUCCESS;
}

int hx_gs_keyed_destroy(hx_gs_keyed *pkd) {
  if (!pkd || !*pkd) return HX_SUCCESS;
  hx_gs_keyed kd = *pkd;
  hx_gs_tmp_free(&kd->t);
  free(kd->shared);
  int ierr = hx_gs_destroy(&kd->gs);
  free(kd);
  *pkd = NULL;
  return ierr;
}

int hx_gs_destroy(hx_gs *pgs) {
  if (!pgs || !*pgs) return HX_SUCCESS;
  hx_gs gs = *pgs;
  hx_backend b = gs->b;
  if (gs->in_flight && gs->nnb > 0) {
    /* the peers wait for this rank's sends: post them if start left them */
    if (!gs->flight_sent) (void)hx_gs_xpost(gs);
    if (gs->flight_sent) MPI_Waitall(2 * gs->nnb, gs->reqs, gs->stats);
    else MPI_Waitall(gs->nnb, gs->reqs, gs->stats);
  }
  /* the exchange queue first: it waits for its work, which uses the buffers */
  const int qerr = hx_queue_destroy(&gs->cq);
  hx_event_destroy(&gs->ev_ready);
  hx_event_destroy(&gs->ev_done);
  void **dptr[] = {(void **)&gs->d_map,       (void **)&gs->d_row,       (void **)&gs->d_col,
                   (void **)&gs->d_bstart,    (void **)&gs->d_mult,      (void **)&gs->d_invmult,
                   (void **)&gs->d_send_idx,  (void **)&gs->d_comb_off,  (void **)&gs->d_comb_pos,
                   (void **)&gs->d_comb_self, (void **)&gs->d_sendbuf,   (void **)&gs->d_recvbuf,
                   (void **)&gs->d_mask,      (void **)&gs->d_masked_idx};
  int ierr = qerr;
  for (size_t i = 0; i < sizeof dptr / sizeof dptr[0]; i++) {
    int e = hx_mem_free(b, dptr[i]);
    if (e && !ierr) ierr = e;
  }
  (void)hx_mem_free_host(b, (void **)&gs->h_sendbuf);
  (void)hx_mem_free_host(b, (void **)&gs->h_recvbuf);
  free(gs->chunk), free(gs->acc), free(gs->cut_rows);
  free(gs->gids), free(gs->h_map), free(gs->nb_rank), free(gs->nb_off), free(gs->reqs), free(gs->stats);
  if (gs->comm != MPI_COMM_NULL) MPI_Comm_free(&gs->comm);
  free(gs);
  *pgs = NULL;
  if (ierr) return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ queries */
hx_backend hx_gs_backend(hx_gs gs) { return gs->b; }
MPI_Comm hx_gs_comm(hx_gs gs) { return gs->comm; }
int64_t hx_gs_num_l(hx_gs gs) { return gs->nl; }
int64_t hx_gs_num_local(hx_gs gs) { return gs->ng; }
int64_t hx_gs_num_owned(hx_gs gs) { return gs->n_owned; }
int64_t hx_gs_num_shared(hx_gs gs) { return gs->n_shared; }
int64_t hx_gs_num_global(hx_gs gs) { return gs->n_global; }
const int64_t *hx_gs_global_ids(hx_gs gs) { return gs->gids; }
const int32_t *hx_gs_map_host(hx_gs gs) { return gs->h_map; }
const double *hx_gs_multiplicity(hx_gs gs) { return gs->d_mult; }
const double *hx_gs_inv_multiplicity(hx_gs gs) { return gs->d_invmult; }

int hx_gs_get_info(hx_gs gs, hx_gs_info *info) {
  HX_CHECK(gs && info, HX_ERR_ARG, "gather-scatter: NULL argument");
  memset(info, 0, sizeof *info);
  info->nl = gs->nl;
  info->ng = gs->ng;
  info->n_owned = gs->n_owned;
  info->n_shared = gs->n_shared;
  info->n_global = gs->n_global;
  info->n_neighbors = gs->nnb;
  info->n_send = gs->nsend;
  info->gather_bytes = (double)gs->nl * 4.0 + (double)gs->nnz * 8.0 + (double)gs->ng * 8.0;
  info->scatter_bytes = (double)gs->nl * (4.0 + 8.0) + (double)gs->ng * 8.0;
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ Z, Z^T */
int hx_gs_scatter(hx_gs gs, const double *d_g, double *d_l) {
  HX_CALL(hx_gs_maps_kept(gs, "scatter"));
  HX_CHECK(!gs->l_pending, HX_ERR_ARG, "gather-scatter: scatter before the L side was built (hx_gs_finish_l)");
  if (gs->nl == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(gs->b, "gs scatter", hx_cuda_gs_scatter(gs->b, gs->nl, gs->d_map, d_g, d_l),
                     hx_cpu_gs_scatter(gs->nl, gs->d_map, d_g, d_l), HX_KARG(d_g, gs->ng, sizeof(double), "G-vector"),
                     HX_KARG(d_l, gs->nl, sizeof(double), "L-vector"));
  return HX_SUCCESS;
}

int hx_gs_gather_part(hx_gs gs, hx_gs_part part, const double *d_l, double *d_g) {
  HX_CHECK(!gs->l_pending, HX_ERR_ARG, "gather-scatter: gather before the L side was built (hx_gs_finish_l)");
  HX_CHECK(part == HX_GS_ALL || part == HX_GS_SHARED || part == HX_GS_INTERIOR, HX_ERR_ARG,
           "gather-scatter: unknown part %d", (int)part);
  const int64_t s0 = gs->ng - gs->n_shared;
  int64_t r0 = part == HX_GS_SHARED ? s0 : 0, r1 = part == HX_GS_INTERIOR ? s0 : gs->ng;
  if (r1 <= r0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(gs->b, "gs gather",
                     hx_cuda_gs_gather(gs->b, hx_gs_blk0(gs, part), hx_gs_blk1(gs, part), gs->d_bstart, gs->d_row,
                                       gs->d_col, d_l, d_g),
                     (void)0, HX_KARG(d_l, gs->nl, sizeof(double), "L-vector"),
                     HX_KARG(d_g, gs->ng, sizeof(double), "G-vector")); /* the CPU loops follow, in the scope */
  if (gs->pull) {
    hx_cpu_gs_gather_range(r0, r1, gs->d_row, gs->d_col, d_l, d_g);
    return HX_SUCCESS;
  }
  if (part != HX_GS_SHARED) hx_cpu_gs_gather_acc(gs->nchunk, gs->chunk, gs->acc, d_l, d_g);
  const int64_t c0 = part == HX_GS_SHARED ? gs->cut_split : 0;
  const int64_t c1 = part == HX_GS_INTERIOR ? gs->cut_split : gs->ncut;
  if (c1 > c0) hx_cpu_gs_gather_rows(c1 - c0, gs->cut_rows + c0, gs->d_row, gs->d_col, d_l, d_g);
  return HX_SUCCESS;
}

int hx_gs_gather(hx_gs gs, const double *d_l, double *d_g) {
  HX_CALL(hx_gs_gather_part(gs, HX_GS_ALL, d_l, d_g));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ exchange */
/* Both precisions: f32 sends floats through the same buffers (sized for
 * doubles). See gs_impl.h and docs/gather-scatter.md "Exchange on cuda". */

/* cuda: pack the send slots of d_g into d_sendbuf / combine d_recvbuf into
 * the shared rows of d_g, queued on the exchange queue cq (which exists on
 * cuda only, so the cpu backends never get here) */
static int hx_gs_device_pack(hx_gs gs, int f32, const void *d_g) {
  (void)f32, (void)d_g; /* used by the CUDA calls only */
  HX_CUDA_DISPATCH_IF(f32, hx_cuda_gs_pack_f32_q(gs->cq, gs->nsend, gs->d_send_idx, (const float *)d_g,
                                                 (float *)gs->d_sendbuf));
  HX_CUDA_DISPATCH(gs->b, hx_cuda_gs_pack_q(gs->cq, gs->nsend, gs->d_send_idx, (const double *)d_g,
                                            gs->d_sendbuf));
  return HX_ERROR(HX_ERR_INTERNAL, "gather-scatter: device pack on a backend without a device");
}

static int hx_gs_device_combine(hx_gs gs, int f32, void *d_g, hx_gs_op op) {
  (void)f32, (void)d_g, (void)op; /* used by the CUDA calls only */
  /* the shared rows [ng - n_shared, ng) */
  HX_CUDA_DISPATCH_IF(f32, hx_cuda_gs_combine_f32_q(gs->cq, (int)op, gs->n_shared,
                                                    (float *)d_g + (gs->ng - gs->n_shared), gs->d_comb_off,
                                                    gs->d_comb_pos, gs->d_comb_self, (const float *)gs->d_recvbuf));
  HX_CUDA_DISPATCH(gs->b, hx_cuda_gs_combine_q(gs->cq, (int)op, gs->n_shared, (double *)d_g + (gs->ng - gs->n_shared),
                                               gs->d_comb_off, gs->d_comb_pos, gs->d_comb_self, gs->d_recvbuf));
  return HX_ERROR(HX_ERR_INTERNAL, "gather-scatter: device combine on a backend without a device");
}
int hx_gs_xstart(hx_gs gs, int f32, void *d_g, hx_gs_op op) {
  gs->in_flight = 1;
  gs->flight_g = (double *)d_g;
  gs->flight_op = (int)op;
  gs->flight_prec = f32 ? (int)HX_F32 : (int)HX_F64;
  gs->flight_sent = 0;
  if (gs->nnb == 0) return HX_SUCCESS;
  const size_t es = f32 ? sizeof(float) : sizeof(double);
  char *hrecv = (char *)gs->h_recvbuf;
  /* cuda: h_recvbuf is free once the previous exchange's copy to the device
   * ran (queued on cq an exchange ago: long complete, not a wait for the
   * default queue) */
  if (gs->cq) HX_CALL(hx_event_sync(gs->ev_done));
  for (int k = 0; k < gs->nnb; k++)
    HX_MPI(MPI_Irecv(hrecv + es * (size_t)gs->nb_off[k], gs->nb_off[k + 1] - gs->nb_off[k],
                     f32 ? MPI_FLOAT : MPI_DOUBLE, gs->nb_rank[k], f32 ? HX_GS_TAG_F32 : HX_GS_TAG, gs->comm,
                     &gs->reqs[k]));
  if (gs->cq) {
    /* cuda: the pack waits for the work queued on the default queue so far
     * (the caller's gather of the shared rows), on the exchange queue: the
     * caller queues the interior meanwhile; the sends follow in hx_gs_xpost */
    HX_CALL(hx_event_record(gs->ev_ready, gs->b->q0));
    HX_CALL(hx_queue_wait_event(gs->cq, gs->ev_ready));
    HX_CALL(hx_gs_device_pack(gs, f32, d_g));
    /* device -> pinned host (MPICH is not CUDA-aware), asynchronous */
    HX_CALL(hx_mem_to_host_q(gs->cq, gs->h_sendbuf, gs->d_sendbuf, (size_t)gs->nsend * es));
    return HX_SUCCESS;
  }
  {
    const hx_karg g = HX_KARG(d_g, gs->ng, es, "G-vector");
    HX_CALL(hx_kernel_args(gs->b, "gs exchange", 1, &g));
    HX_MC_SCOPE(gs->b);
    if (f32) hx_cpu_gs_pack_f32(gs->nsend, gs->d_send_idx, (const float *)d_g, (float *)gs->h_sendbuf);
    else hx_cpu_gs_pack(gs->nsend, gs->d_send_idx, (const double *)d_g, gs->h_sendbuf);
  }
  HX_CALL(hx_gs_xpost(gs));
  return HX_SUCCESS;
}

int hx_gs_xpost(hx_gs gs) {
  if (!gs->in_flight || gs->flight_sent || gs->nnb == 0) return HX_SUCCESS;
  const int f32 = gs->flight_prec == (int)HX_F32;
  const size_t es = f32 ? sizeof(float) : sizeof(double);
  /* cuda: the pack and its copy to h_sendbuf; cq waits for the default
   * queue only up to start's event */
  if (gs->cq) HX_CALL(hx_queue_sync(gs->cq));
  char *hsend = (char *)gs->h_sendbuf;
  for (int k = 0; k < gs->nnb; k++)
    HX_MPI(MPI_Isend(hsend + es * (size_t)gs->nb_off[k], gs->nb_off[k + 1] - gs->nb_off[k],
                     f32 ? MPI_FLOAT : MPI_DOUBLE, gs->nb_rank[k], f32 ? HX_GS_TAG_F32 : HX_GS_TAG, gs->comm,
                     &gs->reqs[gs->nnb + k]));
  gs->flight_sent = 1;
  return HX_SUCCESS;
}

int hx_gs_xfinish(hx_gs gs, int f32, void *d_g, hx_gs_op op) {
  if (gs->nnb == 0) {
    gs->in_flight = 0, gs->flight_prec = (int)HX_F64;
    return HX_SUCCESS;
  }
  HX_CALL(hx_gs_xpost(gs));
  gs->in_flight = 0, gs->flight_prec = (int)HX_F64;
  HX_MPI(MPI_Waitall(2 * gs->nnb, gs->reqs, gs->stats));
  const int64_t s0 = gs->ng - gs->n_shared;
  const size_t es = f32 ? sizeof(float) : sizeof(double);
  if (gs->cq) {
    /* cuda, on cq, which is ordered after start's event: the shared rows
     * [s0, ng) are written here while the default queue may still run the
     * interior, which writes rows [0, s0) only */
    HX_CALL(hx_mem_to_device_q(gs->cq, gs->d_recvbuf, gs->h_recvbuf, (size_t)gs->nsend * es));
    HX_CALL(hx_gs_device_combine(gs, f32, d_g, op));
    /* work queued on the default queue from now on sees the combined rows */
    HX_CALL(hx_event_record(gs->ev_done, gs->cq));
    HX_CALL(hx_queue_wait_event(gs->b->q0, gs->ev_done));
    return HX_SUCCESS;
  }
  const hx_karg g = HX_KARG(d_g, gs->ng, es, "G-vector");
  HX_CALL(hx_kernel_args(gs->b, "gs exchange", 1, &g));
  HX_MC_SCOPE(gs->b);
  if (f32)
    hx_cpu_gs_combine_f32((int)op, gs->n_shared, (float *)d_g + s0, gs->d_comb_off, gs->d_comb_pos,
                          gs->d_comb_self, (const float *)gs->h_recvbuf);
  else
    hx_cpu_gs_combine((int)op, gs->n_shared, (double *)d_g + s0, gs->d_comb_off, gs->d_comb_pos,
                      gs->d_comb_self, gs->h_recvbuf);
  return HX_SUCCESS;
}

int hx_gs_exchange_start(hx_gs gs, double *d_g, hx_gs_op op) {
  HX_CHECK(!gs->in_flight, HX_ERR_ARG, "gather-scatter: an exchange is already in flight on this handle");
  HX_CHECK(op == HX_GS_ADD || op == HX_GS_MIN || op == HX_GS_MAX, HX_ERR_ARG, "gather-scatter: unknown op %d",
           (int)op);
  HX_CALL(hx_gs_xstart(gs, 0, d_g, op));
  return HX_SUCCESS;
}

int hx_gs_exchange_post(hx_gs gs) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_CALL(hx_gs_xpost(gs));
  return HX_SUCCESS;
}

int hx_gs_exchange_finish(hx_gs gs, double *d_g, hx_gs_op op) {
  HX_CHECK(gs->in_flight, HX_ERR_ARG, "gather-scatter: exchange_finish without exchange_start");
  HX_CHECK(d_g == gs->flight_g && (int)op == gs->flight_op, HX_ERR_ARG,
           "gather-scatter: exchange_finish with a different vector or op than exchange_start");
  HX_CHECK(gs->flight_prec == 0, HX_ERR_ARG,
           "gather-scatter: FP64 exchange_finish of an FP32 exchange (use hx_gs_exchange_finish_p)");
  HX_CALL(hx_gs_xfinish(gs, 0, d_g, op));
  return HX_SUCCESS;
}

int hx_gs_exchange(hx_gs gs, double *d_g, hx_gs_op op) {
  HX_CALL(hx_gs_exchange_start(gs, d_g, op));
  HX_CALL(hx_gs_exchange_finish(gs, d_g, op));
  return HX_SUCCESS;
}

int hx_gs_assemble(hx_gs gs, const double *d_l, double *d_g) {
  HX_CALL(hx_gs_gather(gs, d_l, d_g));
  HX_CALL(hx_gs_exchange(gs, d_g, HX_GS_ADD));
  return HX_SUCCESS;
}

int hx_gs_dot(hx_gs gs, const double *d_x, const double *d_y, double *result) {
  double loc = 0.0;
  HX_CALL(hx_array_dot(gs->b, gs->n_owned, d_x, d_y, &loc));
  HX_MPI(MPI_Allreduce(&loc, result, 1, MPI_DOUBLE, MPI_SUM, gs->comm));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ masks */
int hx_gs_set_mask(hx_gs gs, const int *h_lflag) {
  HX_CHECK(h_lflag || gs->nl == 0, HX_ERR_ARG, "gather-scatter: flags are NULL");
  HX_CALL(hx_gs_maps_kept(gs, "mask"));
  const int64_t ng = gs->ng;
  double *h = NULL, *d = NULL;
  int32_t *idx = NULL;
  HX_CALL(HX_ALLOC(&h, ng + 1));
  HX_CALL(HX_ALLOC(&idx, ng + 1));
  for (int64_t i = 0; i < gs->nl; i++)
    if (h_lflag[i] && gs->h_map[i] >= 0) h[gs->h_map[i]] = 1.0;
  int ierr = hx_mem_alloc(gs->b, (size_t)ng * sizeof(double), (void **)&d);
  if (!ierr) ierr = hx_mem_to_device(gs->b, d, h, (size_t)ng * sizeof(double));
  if (!ierr) ierr = hx_gs_exchange(gs, d, HX_GS_MAX);
  if (!ierr) ierr = hx_mem_to_host(gs->b, h, d, (size_t)ng * sizeof(double));
  int64_t nm = 0;
  if (!ierr) {
    for (int64_t r = 0; r < ng; r++) {
      if (h[r] != 0.0) idx[nm++] = (int32_t)r;
      h[r] = h[r] != 0.0 ? 0.0 : 1.0;
    }
    hx_mem_free(gs->b, (void **)&gs->d_mask);
    hx_mem_free(gs->b, (void **)&gs->d_masked_idx);
    gs->has_mask = 0;
    gs->n_masked = 0;
    ierr = hx_mem_to_device(gs->b, d, h, (size_t)ng * sizeof(double));
  }
  if (!ierr) ierr = hx_gs_upload(gs->b, idx, nm, sizeof(int32_t), &gs->d_masked_idx);
  if (!ierr) {
    gs->d_mask = d;
    d = NULL;
    gs->n_masked = nm;
    gs->has_mask = 1;
  }
  hx_mem_free(gs->b, (void **)&d);
  free(h), free(idx);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int64_t hx_gs_num_masked(hx_gs gs) { return gs->n_masked; }
const double *hx_gs_mask(hx_gs gs) { return gs->has_mask ? gs->d_mask : NULL; }
const int32_t *hx_gs_masked_idx(hx_gs gs) { return gs->has_mask ? gs->d_masked_idx : NULL; }

int hx_gs_apply_mask(hx_gs gs, double *d_g) {
  if (!gs->has_mask || gs->n_masked == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(gs->b, "gs mask", hx_cuda_gs_zero_idx(gs->b, gs->n_masked, gs->d_masked_idx, d_g),
                     hx_cpu_gs_zero_idx(gs->n_masked, gs->d_masked_idx, d_g),
                     HX_KARG(d_g, gs->ng, sizeof(double), "G-vector"));
  return HX_SUCCESS;
}

int hx_gs_element_shared_flags(hx_gs gs, int64_t npe, int *h_flag) {
  HX_CALL(hx_gs_maps_kept(gs, "element shared flags"));
  HX_CHECK(npe > 0 && gs->nl % npe == 0, HX_ERR_ARG,
           "gather-scatter: nl = %lld is not a multiple of nodes_per_elem = %lld", (long long)gs->nl,
           (long long)npe);
  const int64_t ne = gs->nl / npe, s0 = gs->ng - gs->n_shared;
  for (int64_t e = 0; e < ne; e++) {
    int f = 0;
    for (int64_t i = e * npe; i < (e + 1) * npe && !f; i++) f = gs->h_map[i] >= s0;
    h_flag[e] = f;
  }
  return HX_SUCCESS;
}

int hx_gs_l_owner_flags(hx_gs gs, int *h_flag) {
  HX_CHECK(h_flag || gs->nl == 0, HX_ERR_ARG, "gather-scatter: flags are NULL");
  HX_CALL(hx_gs_maps_kept(gs, "owner flags"));
  unsigned char *seen = NULL;
  HX_CALL(HX_ALLOC(&seen, gs->n_owned + 1));
  for (int64_t i = 0; i < gs->nl; i++) {
    const int32_t r = gs->h_map[i];
    h_flag[i] = r >= 0 && r < gs->n_owned && !seen[r];
    if (h_flag[i]) seen[r] = 1;
  }
  free(seen);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ box ids */
int hx_gs_box_ids(int nx, int ny, int nz, int p, int64_t e0, int64_t ne, int64_t *h_ids) {
  HX_CHECK(nx > 0 && ny > 0 && nz > 0 && p >= 1, HX_ERR_ARG, "box ids: bad size %dx%dx%d p=%d", nx, ny, nz,
           p);
  const int64_t nel = (int64_t)nx * ny * nz;
  HX_CHECK(e0 >= 0 && ne >= 0 && e0 + ne <= nel, HX_ERR_ARG,
           "box ids: elements [%lld, %lld) outside [0, %lld)", (long long)e0, (long long)(e0 + ne),
           (long long)nel);
  const int n = p + 1;
  const int64_t mx = (int64_t)nx * p + 1, my = (int64_t)ny * p + 1;
  for (int64_t e = e0; e < e0 + ne; e++) {
    const int64_t ex = e % nx, ey = (e / nx) % ny, ez = e / ((int64_t)nx * ny);
    int64_t *o = h_ids + (e - e0) * n * n * n;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
          o[i + n * (j + n * k)] = 1 + (ex * p + i) + mx * ((ey * p + j) + my * (ez * p + k));
  }
  return HX_SUCCESS;
}
