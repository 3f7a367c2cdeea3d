/* The report reductions of core/reduce.c: max and sum over ranks, and the
 * values of the rank with the largest key (ties: the lowest rank), against
 * values computed here from the rank numbers. */
#include "hx_test.h"

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  MPI_Comm comm = MPI_COMM_WORLD;

  double v[3] = {rank, -rank, 0.5 * rank * rank};
  HX_TCALL(hx_reduce_max(comm, v, 3));
  HX_ASSERT(v[0] == size - 1 && v[1] == 0.0 && v[2] == 0.5 * (size - 1) * (size - 1), "max: %g %g %g", v[0], v[1],
            v[2]);

  double s[2] = {rank + 1.0, 1.0};
  HX_TCALL(hx_reduce_sum(comm, s, 2));
  HX_ASSERT(s[0] == size * (size + 1) / 2.0 && s[1] == size, "sum: %g %g", s[0], s[1]);

  /* the largest key is rank 0's: its values reach every rank */
  double w[2] = {10.0 * rank, rank + 0.25};
  int who = -1;
  HX_TCALL(hx_reduce_slowest(comm, (double)(size - rank), w, 2, &who));
  HX_ASSERT(who == 0 && w[0] == 0.0 && w[1] == 0.25, "slowest: rank %d, %g %g", who, w[0], w[1]);
  /* equal keys: the lowest rank's values */
  double u[1] = {rank + 7.0};
  HX_TCALL(hx_reduce_slowest(comm, 1.0, u, 1, &who));
  HX_ASSERT(who == 0 && u[0] == 7.0, "tie: rank %d, %g", who, u[0]);
  /* the last rank slowest */
  double x[1] = {rank * 3.0};
  HX_TCALL(hx_reduce_slowest(comm, (double)rank, x, 1, NULL));
  HX_ASSERT(x[0] == 3.0 * (size - 1), "last rank: %g", x[0]);

  /* n = 0 is nothing to do; a negative count is an argument error */
  HX_TCALL(hx_reduce_max(comm, NULL, 0));
  HX_ASSERT(hx_reduce_sum(comm, v, -1) == HX_ERR_ARG, "negative count refused");
  hx_error_clear();
  return hx_test_mpi_finish(0);
}
