/* Collective reductions of report figures (hx_core.h). */
#include "hx_core.h"

int hx_reduce_max(MPI_Comm comm, double *v, int n) {
  HX_CHECK(n >= 0 && (n == 0 || v), HX_ERR_ARG, "%d values at %p", n, (void *)v);
  if (n > 0) HX_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm));
  return HX_SUCCESS;
}

int hx_reduce_sum(MPI_Comm comm, double *v, int n) {
  HX_CHECK(n >= 0 && (n == 0 || v), HX_ERR_ARG, "%d values at %p", n, (void *)v);
  if (n > 0) HX_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, comm));
  return HX_SUCCESS;
}

int hx_reduce_slowest(MPI_Comm comm, double key, double *v, int n, int *rank) {
  HX_CHECK(n >= 0 && (n == 0 || v), HX_ERR_ARG, "%d values at %p", n, (void *)v);
  struct {
    double t;
    int rank;
  } mine = {key, 0}, slowest;
  HX_MPI(MPI_Comm_rank(comm, &mine.rank));
  HX_MPI(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  if (n > 0) HX_MPI(MPI_Bcast(v, n, MPI_DOUBLE, slowest.rank, comm));
  if (rank) *rank = slowest.rank;
  return HX_SUCCESS;
}
