/* The tests' MPI shim (tests/common/mpi_yield.c, docs/developer.md
 * "Oversubscribed MPI tests"): with HX_EXPECT_SHIM=1 (set where the build
 * preloads it) the blocking calls must resolve to the shim; in any case
 * every call it wraps must give the results MPI defines (values checked
 * against closed forms on 1-4 ranks, MPI_IN_PLACE, statuses, Waitany's
 * index and MPI_UNDEFINED, Probe's count). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

#include "hx_test.h"

static int shim_has(const char *name) {
  Dl_info info;
  void *sym = dlsym(RTLD_DEFAULT, name);
  return sym && dladdr(sym, &info) && info.dli_fname && strstr(info.dli_fname, "hx_mpi_yield");
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  const MPI_Comm c = MPI_COMM_WORLD;

  const char *expect = getenv("HX_EXPECT_SHIM");
  if (expect && atoi(expect)) {
    const char *names[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Wait",
                           "MPI_Waitall", "MPI_Recv",      "MPI_Alltoallv"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
      HX_ASSERT(shim_has(names[k]), "%s does not resolve to the preloaded shim (LD_PRELOAD=%s)", names[k],
                getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
  }

  MPI_Barrier(c);
  /* Allreduce, in place and not; Reduce; Scan; Exscan */
  double v = rank + 1, s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, c);
  HX_ASSERT(s == size * (size + 1) / 2.0, "allreduce %g", s);
  long m = rank;
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_LONG, MPI_MAX, c);
  HX_ASSERT(m == size - 1, "allreduce in place %ld", m);
  int r = -1;
  MPI_Reduce(&rank, &r, 1, MPI_INT, MPI_SUM, size - 1, c);
  if (rank == size - 1) HX_ASSERT(r == size * (size - 1) / 2, "reduce %d", r);
  int sc = 0, ex = -7;
  MPI_Scan(&rank, &sc, 1, MPI_INT, MPI_SUM, c);
  HX_ASSERT(sc == rank * (rank + 1) / 2, "scan %d", sc);
  MPI_Exscan(&rank, &ex, 1, MPI_INT, MPI_SUM, c);
  if (rank > 0) HX_ASSERT(ex == rank * (rank - 1) / 2, "exscan %d", ex);

  /* Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v) */
  int b = rank == 0 ? 42 : 0;
  MPI_Bcast(&b, 1, MPI_INT, 0, c);
  HX_ASSERT(b == 42, "bcast %d", b);
  int *all = calloc((size_t)size * size + 1, sizeof(int)), *cnt = calloc((size_t)size + 1, sizeof(int)),
      *dsp = calloc((size_t)size + 1, sizeof(int)), *mine = calloc((size_t)size + 1, sizeof(int));
  for (int q = 0; q < size; q++) cnt[q] = q + 1, dsp[q] = q * (q + 1) / 2;
  const int tot = size * (size + 1) / 2;
  for (int k = 0; k <= rank; k++) mine[k] = 100 * rank + k;
  MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, c);
  if (rank == 0)
    for (int q = 0; q < size; q++) HX_ASSERT(all[q] == q, "gather [%d] = %d", q, all[q]);
  MPI_Gatherv(mine, rank + 1, MPI_INT, all, cnt, dsp, MPI_INT, 0, c);
  if (rank == 0)
    for (int q = 0; q < size; q++)
      for (int k = 0; k <= q; k++) HX_ASSERT(all[dsp[q] + k] == 100 * q + k, "gatherv %d %d", q, k);
  int one = -1;
  if (rank == 0)
    for (int q = 0; q < size; q++) all[q] = 10 * q;
  MPI_Scatter(all, 1, MPI_INT, &one, 1, MPI_INT, 0, c);
  HX_ASSERT(one == 10 * rank, "scatter %d", one);
  if (rank == 0)
    for (int k = 0; k < tot; k++) all[k] = 7 * k;
  MPI_Scatterv(all, cnt, dsp, MPI_INT, mine, rank + 1, MPI_INT, 0, c);
  for (int k = 0; k <= rank; k++) HX_ASSERT(mine[k] == 7 * (dsp[rank] + k), "scatterv %d", k);
  MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c);
  for (int q = 0; q < size; q++) HX_ASSERT(all[q] == q, "allgather [%d] = %d", q, all[q]);
  for (int k = 0; k <= rank; k++) mine[k] = 100 * rank + k;
  MPI_Allgatherv(mine, rank + 1, MPI_INT, all, cnt, dsp, MPI_INT, c);
  for (int q = 0; q < size; q++)
    for (int k = 0; k <= q; k++) HX_ASSERT(all[dsp[q] + k] == 100 * q + k, "allgatherv %d %d", q, k);
  int *sb = calloc((size_t)size + 1, sizeof(int)), *rb = calloc((size_t)size + 1, sizeof(int));
  for (int q = 0; q < size; q++) sb[q] = 1000 * rank + q;
  MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c);
  for (int q = 0; q < size; q++) HX_ASSERT(rb[q] == 1000 * q + rank, "alltoall [%d] = %d", q, rb[q]);
  /* Alltoallv: rank q sends one int to ranks > q only */
  int *scn = calloc((size_t)size + 1, sizeof(int)), *sds = calloc((size_t)size + 1, sizeof(int)),
      *rcn = calloc((size_t)size + 1, sizeof(int)), *rds = calloc((size_t)size + 1, sizeof(int));
  for (int q = 0; q < size; q++) scn[q] = q > rank, rcn[q] = q < rank, sds[q] = rds[q] = q;
  for (int q = 0; q < size; q++) rb[q] = -1;
  MPI_Alltoallv(sb, scn, sds, MPI_INT, rb, rcn, rds, MPI_INT, c);
  for (int q = 0; q < size; q++)
    HX_ASSERT(rb[q] == (q < rank ? 1000 * q + rank : -1), "alltoallv [%d] = %d", q, rb[q]);

  /* point to point in a ring: Send/Recv with status, Probe, Waitany, Waitall */
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  if (size > 1) {
    int msg[3] = {rank, 2 * rank, 3 * rank}, got[3] = {-1, -1, -1};
    MPI_Request rq;
    MPI_Irecv(got, 3, MPI_INT, from, 5, c, &rq);
    MPI_Send(msg, 3, MPI_INT, to, 5, c);
    MPI_Status st;
    MPI_Wait(&rq, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    HX_ASSERT(n == 3 && st.MPI_SOURCE == from && got[2] == 3 * from, "wait: count %d source %d", n,
              st.MPI_SOURCE);
    MPI_Send(msg, 2, MPI_INT, to, 6, c);
    MPI_Probe(MPI_ANY_SOURCE, 6, c, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    HX_ASSERT(n == 2 && st.MPI_SOURCE == from, "probe: count %d source %d", n, st.MPI_SOURCE);
    MPI_Recv(got, 3, MPI_INT, st.MPI_SOURCE, 6, c, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    HX_ASSERT(n == 2 && got[1] == 2 * from && st.MPI_TAG == 6, "recv: count %d tag %d", n, st.MPI_TAG);
    MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(got, 1, MPI_INT, from, 7, c, &two[1]);
    MPI_Isend(msg, 1, MPI_INT, to, 7, c, &two[0]);
    int idx = -1, left = 2;
    while (left--) {
      MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
      HX_ASSERT(idx == 0 || idx == 1, "waitany index %d", idx);
    }
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
    HX_ASSERT(idx == MPI_UNDEFINED, "waitany of null requests: index %d", idx);
    HX_ASSERT(got[0] == from, "waitany data %d", got[0]);
    MPI_Irecv(got, 1, MPI_INT, from, 8, c, &two[0]);
    MPI_Isend(msg, 1, MPI_INT, to, 8, c, &two[1]);
    MPI_Status sts[2];
    MPI_Waitall(2, two, sts);
    HX_ASSERT(sts[0].MPI_SOURCE == from && got[0] == from, "waitall source %d", sts[0].MPI_SOURCE);
  }
  free(all), free(cnt), free(dsp), free(mine), free(sb), free(rb), free(scn), free(sds), free(rcn), free(rds);
  int bad = hx_test_failures_;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, c);
  MPI_Finalize();
  return bad ? 1 : 0;
}
