/* A PMPI shim for oversubscribed test runs with MPICH (docs/developer.md,
 * "Oversubscribed MPI tests"): loaded with LD_PRELOAD, it turns each blocking
 * call hexcg, hypre and HDF5 make into its nonblocking form and a test loop
 * that calls sched_yield() between polls.
 *
 * Why: MPICH 4.0's ch4 device busy-polls in every blocking call and has no
 * setting to yield (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's; the progress
 * throttle came in later releases). With 3 ranks on 2 cores a barrier then
 * waits for the scheduler to give the third rank a time slice: 1000
 * barriers take 8 s instead of 2 ms, and a 3-rank test spends most of its
 * time there. With the shim they take 10 ms; 2 ranks on 2 cores are as fast
 * as without it. Results are unchanged: every call keeps its semantics (the
 * same buffers, datatypes, ops, statuses and return codes; a blocking send
 * is complete when its buffer may be reused, which is what the wait on the
 * nonblocking send gives).
 *
 * Built for the tests only (tests/CMakeLists.txt, target hx_mpi_yield, with
 * MPICH) and without the sanitizers: it is preloaded into every process a
 * test starts, python and mpiexec included, which never call these symbols
 * (the PMPI references stay unresolved until first called). Not linked into
 * hexcg. */
#include <mpi.h>
#include <sched.h>

static int wait_one(MPI_Request *r, MPI_Status *st) {
  for (;;) {
    int flag = 0;
    const int e = PMPI_Test(r, &flag, st);
    if (e != MPI_SUCCESS || flag) return e;
    sched_yield();
  }
}

/* a nonblocking call's error, or the wait on its request */
#define HX_NB(call)                            \
  do {                                         \
    MPI_Request req_;                          \
    const int e_ = (call);                     \
    if (e_ != MPI_SUCCESS) return e_;          \
    return wait_one(&req_, MPI_STATUS_IGNORE); \
  } while (0)

int MPI_Wait(MPI_Request *r, MPI_Status *st) { return wait_one(r, st); }

int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[]) {
  for (;;) {
    int flag = 0;
    const int e = PMPI_Testall(n, r, &flag, st);
    if (e != MPI_SUCCESS || flag) return e;
    sched_yield();
  }
}

int MPI_Waitany(int n, MPI_Request r[], int *idx, MPI_Status *st) {
  for (;;) {
    int flag = 0;
    const int e = PMPI_Testany(n, r, idx, &flag, st);
    if (e != MPI_SUCCESS || flag) return e;
    sched_yield();
  }
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st) {
  for (;;) {
    int flag = 0;
    const int e = PMPI_Iprobe(src, tag, comm, &flag, st);
    if (e != MPI_SUCCESS || flag) return e;
    sched_yield();
  }
}

int MPI_Recv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st) {
  MPI_Request req;
  const int e = PMPI_Irecv(buf, n, t, src, tag, comm, &req);
  if (e != MPI_SUCCESS) return e;
  return wait_one(&req, st);
}

int MPI_Send(const void *buf, int n, MPI_Datatype t, int dst, int tag, MPI_Comm comm) {
  HX_NB(PMPI_Isend(buf, n, t, dst, tag, comm, &req_));
}

int MPI_Barrier(MPI_Comm comm) { HX_NB(PMPI_Ibarrier(comm, &req_)); }

int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm) {
  HX_NB(PMPI_Ibcast(buf, n, t, root, comm, &req_));
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  HX_NB(PMPI_Iallreduce(s, r, n, t, op, comm, &req_));
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  HX_NB(PMPI_Ireduce(s, r, n, t, op, root, comm, &req_));
}

int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  HX_NB(PMPI_Iscan(s, r, n, t, op, comm, &req_));
}

int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  HX_NB(PMPI_Iexscan(s, r, n, t, op, comm, &req_));
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm) {
  HX_NB(PMPI_Iallgather(s, sn, st, r, rn, rt, comm, &req_));
}

int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int displs[],
                   MPI_Datatype rt, MPI_Comm comm) {
  HX_NB(PMPI_Iallgatherv(s, sn, st, r, rn, displs, rt, comm, &req_));
}

int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm comm) {
  HX_NB(PMPI_Igather(s, sn, st, r, rn, rt, root, comm, &req_));
}

int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int displs[],
                MPI_Datatype rt, int root, MPI_Comm comm) {
  HX_NB(PMPI_Igatherv(s, sn, st, r, rn, displs, rt, root, comm, &req_));
}

int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                MPI_Comm comm) {
  HX_NB(PMPI_Iscatter(s, sn, st, r, rn, rt, root, comm, &req_));
}

int MPI_Scatterv(const void *s, const int sn[], const int displs[], MPI_Datatype st, void *r, int rn,
                 MPI_Datatype rt, int root, MPI_Comm comm) {
  HX_NB(PMPI_Iscatterv(s, sn, displs, st, r, rn, rt, root, comm, &req_));
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm) {
  HX_NB(PMPI_Ialltoall(s, sn, st, r, rn, rt, comm, &req_));
}

int MPI_Alltoallv(const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r, const int rn[],
                  const int rd[], MPI_Datatype rt, MPI_Comm comm) {
  HX_NB(PMPI_Ialltoallv(s, sn, sd, st, r, rn, rd, rt, comm, &req_));
}
