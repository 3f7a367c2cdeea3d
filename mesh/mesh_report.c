/* Partition report: elements per rank, imbalance, neighbour ranks and shared
 * GLL nodes, found by a rendezvous on the vertex/edge/face ids (each id is
 * sent to rank hash(id) % size, which tells every holder the other holders). */
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

typedef struct {
  int64_t key;
  int64_t rank;
} kr;
static int cmp_kr(const void *a, const void *b) {
  const kr *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}
static int dest_of(int64_t key, int size) {
  uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
  return (int)((h >> 17) % (uint64_t)size);
}

/* exchange variable-length int64 lists: send[] grouped by destination with
 * scount[r] entries each; returns recv (malloc'd) and rcount. */
static int exchange(MPI_Comm comm, int size, const int64_t *send, const int *scount, int64_t **recv,
                    int *rcount, int64_t *nrecv) {
  int *sdisp = NULL, *rdisp = NULL;
  HX_CALL(HX_ALLOC(&sdisp, size));
  HX_CALL(HX_ALLOC(&rdisp, size));
  HX_MPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm));
  int64_t sn = 0, rn = 0;
  for (int r = 0; r < size; r++) {
    HX_CHECK(sn <= INT32_MAX && rn <= INT32_MAX, HX_ERR_INTERNAL, "rendezvous message too large");
    sdisp[r] = (int)sn, rdisp[r] = (int)rn;
    sn += scount[r], rn += rcount[r];
  }
  HX_CALL(HX_ALLOC(recv, rn));
  HX_MPI(MPI_Alltoallv(send, scount, sdisp, MPI_INT64_T, *recv, rcount, rdisp, MPI_INT64_T, comm));
  *nrecv = rn;
  free(sdisp);
  free(rdisp);
  return HX_SUCCESS;
}

int hx_mesh_partition_report(hx_mesh m, int p, hx_mesh_report *rep) {
  HX_CHECK(m != NULL && rep != NULL, HX_ERR_ARG, "mesh or report is NULL");
  HX_CHECK(p >= 1 && p <= HX_MESH_MAX_P, HX_ERR_INPUT, "polynomial order must be in 1..%d, got %d",
           HX_MESH_MAX_P, p);
  memset(rep, 0, sizeof *rep);
  const int size = m->size, rank = m->rank;
  const int64_t nV = m->nv_global, nE = m->ned_global, pm = p - 1;
  rep->nranks = size;

  /* local unique entity keys */
  int64_t nk = (int64_t)m->ne * 26, *keys = NULL;
  HX_CALL(HX_ALLOC(&keys, nk));
  for (int32_t e = 0; e < m->ne; e++) {
    int64_t *k = &keys[(int64_t)e * 26];
    for (int v = 0; v < 8; v++) k[v] = m->vid[(size_t)e * 8 + v];
    for (int d = 0; d < 12; d++) k[8 + d] = nV + m->eid[(size_t)e * 12 + d];
    for (int f = 0; f < 6; f++) k[20 + f] = nV + nE + m->fid[(size_t)e * 6 + f];
  }
  qsort(keys, (size_t)nk, sizeof *keys, hx_mesh_cmp_key);
  int64_t u = 0;
  for (int64_t i = 0; i < nk; i++)
    if (i == 0 || keys[i] != keys[i - 1]) keys[u++] = keys[i];
  nk = u;

  /* to the rendezvous ranks */
  int *scount = NULL, *rcount = NULL, *pos = NULL;
  int64_t *send = NULL, *recv = NULL, nrecv = 0;
  HX_CALL(HX_ALLOC(&scount, size));
  HX_CALL(HX_ALLOC(&rcount, size));
  HX_CALL(HX_ALLOC(&pos, size + 1));
  HX_CALL(HX_ALLOC(&send, nk));
  for (int64_t i = 0; i < nk; i++) scount[dest_of(keys[i], size)]++;
  for (int r = 0; r < size; r++) pos[r + 1] = pos[r] + scount[r];
  for (int64_t i = 0; i < nk; i++) send[pos[dest_of(keys[i], size)]++] = keys[i];
  HX_CALL(exchange(m->comm, size, send, scount, &recv, rcount, &nrecv));
  free(send);
  send = NULL;

  /* match: (key, holder) sorted by key */
  kr *t = NULL;
  HX_CALL(HX_ALLOC(&t, nrecv));
  {
    int64_t o = 0;
    for (int r = 0; r < size; r++)
      for (int i = 0; i < rcount[r]; i++, o++) t[o].key = recv[o], t[o].rank = r;
  }
  free(recv);
  recv = NULL;
  qsort(t, (size_t)nrecv, sizeof *t, cmp_kr);
  /* answers: to each holder of a shared key, (key, other holder) pairs */
  memset(scount, 0, sizeof(int) * size);
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      pos[0] = 0;
      for (int r = 0; r < size; r++) pos[r + 1] = pos[r] + 2 * scount[r];
      HX_CALL(HX_ALLOC(&send, pos[size]));
    }
    for (int64_t i = 0; i < nrecv;) {
      int64_t j = i + 1;
      while (j < nrecv && t[j].key == t[i].key) j++;
      if (j - i > 1)
        for (int64_t a = i; a < j; a++)
          for (int64_t b = i; b < j; b++) {
            if (a == b) continue;
            int r = (int)t[a].rank;
            if (pass == 0)
              scount[r]++;
            else
              send[pos[r]++] = t[i].key, send[pos[r]++] = t[b].rank;
          }
      i = j;
    }
  }
  free(t);
  for (int r = 0; r < size; r++) scount[r] *= 2;
  HX_CALL(exchange(m->comm, size, send, scount, &recv, rcount, &nrecv));
  free(send);

  /* shared nodes: each shared entity once */
  int *isnbr = NULL;
  HX_CALL(HX_ALLOC(&isnbr, size));
  int64_t *sk = NULL, ns = nrecv / 2, shared = 0;
  HX_CALL(HX_ALLOC(&sk, ns));
  for (int64_t i = 0; i < ns; i++) {
    sk[i] = recv[2 * i];
    isnbr[recv[2 * i + 1]] = 1;
  }
  qsort(sk, (size_t)ns, sizeof *sk, hx_mesh_cmp_key);
  for (int64_t i = 0; i < ns; i++) {
    if (i > 0 && sk[i] == sk[i - 1]) continue;
    shared += sk[i] < nV ? 1 : sk[i] < nV + nE ? pm : pm * pm;
  }
  for (int r = 0; r < size; r++) rep->nbr_ranks += isnbr[r];
  rep->shared_nodes = shared;
  free(sk);
  free(isnbr);
  free(recv);
  free(keys);
  free(scount);
  free(rcount);
  free(pos);

  /* gather the per-rank figures */
  int64_t mine[3] = {m->ne, rep->nbr_ranks, rep->shared_nodes}, *all = NULL;
  HX_CALL(HX_ALLOC(&all, 3 * size));
  HX_MPI(MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, m->comm));
  rep->elems_min = rep->elems_max = all[0];
  rep->shared_nodes_min = rep->shared_nodes_max = all[2];
  int64_t tot = 0;
  for (int r = 0; r < size; r++) {
    int64_t ne = all[3 * r], nb = all[3 * r + 1], sh = all[3 * r + 2];
    tot += ne;
    if (ne < rep->elems_min) rep->elems_min = ne;
    if (ne > rep->elems_max) rep->elems_max = ne;
    if (nb > rep->nbr_ranks_max) rep->nbr_ranks_max = (int)nb;
    if (sh < rep->shared_nodes_min) rep->shared_nodes_min = sh;
    if (sh > rep->shared_nodes_max) rep->shared_nodes_max = sh;
  }
  rep->elems_avg = (double)tot / size;
  rep->imbalance = rep->elems_avg > 0 ? rep->elems_max / rep->elems_avg : 1.0;
  if (rank == 0) {
    HX_CALL(HX_ALLOC(&rep->elems_per_rank, size));
    HX_CALL(HX_ALLOC(&rep->nbr_count_per_rank, size));
    HX_CALL(HX_ALLOC(&rep->shared_per_rank, size));
    for (int r = 0; r < size; r++) {
      rep->elems_per_rank[r] = all[3 * r];
      rep->nbr_count_per_rank[r] = (int)all[3 * r + 1];
      rep->shared_per_rank[r] = all[3 * r + 2];
    }
  }
  free(all);
  return HX_SUCCESS;
}

void hx_mesh_report_free(hx_mesh_report *rep) {
  if (!rep) return;
  hx_free_host(&rep->elems_per_rank);
  hx_free_host(&rep->nbr_count_per_rank);
  hx_free_host(&rep->shared_per_rank);
}

void hx_mesh_report_print(const hx_mesh_report *rep, FILE *out, int verbose) {
  if (!rep || !rep->elems_per_rank) return; /* rank 0 only */
  fprintf(out, "  ranks                 %d\n", rep->nranks);
  fprintf(out, "  elements per rank     min %lld  avg %.1f  max %lld  (imbalance max/avg %.4f)\n",
          (long long)rep->elems_min, rep->elems_avg, (long long)rep->elems_max, rep->imbalance);
  fprintf(out, "  neighbour ranks       max %d\n", rep->nbr_ranks_max);
  fprintf(out, "  shared GLL nodes      min %lld  max %lld per rank\n", (long long)rep->shared_nodes_min,
          (long long)rep->shared_nodes_max);
  if (verbose)
    for (int r = 0; r < rep->nranks; r++)
      fprintf(out, "    rank %4d: %10lld elements, %4d neighbour ranks, %10lld shared GLL nodes\n", r,
              (long long)rep->elems_per_rank[r], rep->nbr_count_per_rank[r],
              (long long)rep->shared_per_rank[r]);
}
