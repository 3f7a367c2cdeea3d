/* A dot product distributed over the ranks (each rank owns a contiguous
 * block of a global vector, local dot + MPI_Allreduce) against the serial
 * dot of the whole vector computed on every rank. */
#include "hx_kernels.h"
#include "hx_test.h"

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  if (size < 2) {
    if (rank == 0) printf("SKIP: needs at least 2 ranks\n");
    MPI_Finalize();
    return HX_TEST_SKIP;
  }
  hx_backend b;
  HX_TCALL(hx_test_backends(argc, argv, &b, NULL));
  const int64_t N = 250007; /* prime: uneven blocks */
  double *gx = malloc(sizeof(double) * N), *gy = malloc(sizeof(double) * N);
  hx_test_rng rng = {12345};
  for (int64_t i = 0; i < N; i++) gx[i] = hx_test_rand(&rng), gy[i] = hx_test_rand(&rng);
  long double ref = 0, refabs = 0;
  for (int64_t i = 0; i < N; i++) ref += (long double)gx[i] * gy[i], refabs += fabsl((long double)gx[i] * gy[i]);

  int64_t lo = N * rank / size, hi = N * (rank + 1) / size;
  hx_vec x, y;
  HX_TCALL(hx_vec_create(b, hi - lo, &x));
  HX_TCALL(hx_vec_create(b, hi - lo, &y));
  HX_TCALL(hx_vec_set_host(x, gx + lo));
  HX_TCALL(hx_vec_set_host(y, gy + lo));
  double local, global;
  HX_TCALL(hx_vec_dot(x, y, &local));
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double tol = (double)N * 2.3e-16 * (double)refabs;
  HX_ASSERT(fabs(global - (double)ref) <= tol, "rank %d: distributed %.17g serial %.17g", rank, global,
            (double)ref);
  /* every rank holds the same bits */
  double mn, mx;
  MPI_Allreduce(&global, &mn, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&global, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  HX_ASSERT(mn == mx, "allreduce result differs across ranks");
  hx_vec_destroy(&x);
  hx_vec_destroy(&y);
  hx_backend_destroy(&b);
  free(gx), free(gy);
  return hx_test_mpi_finish(0);
}
