/* BoomerAMG-preconditioned PCG (hypre) on the 7-point 3D Laplacian of an
 * N^3 grid, rows split over the ranks. Proves that hypre was built against
 * the same MPICH as hexcg: a mismatch crashes or hangs here. Checks
 * convergence to 1e-10 relative within a bounded number of iterations and
 * that the solution of A x = A 1 is 1 to solver accuracy. */
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_krylov.h>
#include <HYPRE_parcsr_ls.h>

#include "hx_test.h"

#define N 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  HYPRE_Init();
  const HYPRE_BigInt n = (HYPRE_BigInt)N * N * N;
  HYPRE_BigInt lo = n * rank / size, hi = n * (rank + 1) / size - 1;

  HYPRE_IJMatrix A;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, lo, hi, lo, hi, &A);
  HYPRE_IJMatrixSetObjectType(A, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(A);
  /* CSR rows built locally, one SetValues call per rank */
  HYPRE_Int nrows = (HYPRE_Int)(hi - lo + 1);
  HYPRE_Int *ncols = calloc(nrows, sizeof *ncols);
  HYPRE_BigInt *rows = calloc(nrows, sizeof *rows), *cols = calloc(7 * (size_t)nrows, sizeof *cols);
  double *vals = calloc(7 * (size_t)nrows, sizeof *vals);
  size_t k = 0;
  for (HYPRE_BigInt r = lo; r <= hi; r++) {
    int i = (int)(r % N), j = (int)((r / N) % N), l = (int)(r / ((HYPRE_BigInt)N * N));
    rows[r - lo] = r;
    HYPRE_Int c = 0;
    cols[k] = r, vals[k++] = 6.0, c++;
    const int di[6] = {-1, 1, 0, 0, 0, 0}, dj[6] = {0, 0, -1, 1, 0, 0}, dl[6] = {0, 0, 0, 0, -1, 1};
    for (int d = 0; d < 6; d++) {
      int ii = i + di[d], jj = j + dj[d], ll = l + dl[d];
      if (ii < 0 || jj < 0 || ll < 0 || ii >= N || jj >= N || ll >= N) continue;
      cols[k] = ii + (HYPRE_BigInt)N * (jj + (HYPRE_BigInt)N * ll), vals[k++] = -1.0, c++;
    }
    ncols[r - lo] = c;
  }
  HYPRE_IJMatrixSetValues(A, nrows, ncols, rows, cols, vals);
  HYPRE_IJMatrixAssemble(A);
  HYPRE_ParCSRMatrix pA;
  HYPRE_IJMatrixGetObject(A, (void **)&pA);

  HYPRE_IJVector b, x, one;
  HYPRE_IJVector *vs[3] = {&b, &x, &one};
  for (int v = 0; v < 3; v++) {
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, vs[v]);
    HYPRE_IJVectorSetObjectType(*vs[v], HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(*vs[v]);
  }
  double *ones = malloc(sizeof(double) * nrows), *zeros = calloc(nrows, sizeof(double));
  for (HYPRE_Int r = 0; r < nrows; r++) ones[r] = 1.0;
  HYPRE_IJVectorSetValues(one, nrows, rows, ones);
  HYPRE_IJVectorSetValues(x, nrows, rows, zeros);
  HYPRE_IJVectorSetValues(b, nrows, rows, zeros);
  for (int v = 0; v < 3; v++) HYPRE_IJVectorAssemble(*vs[v]);
  HYPRE_ParVector pb, px, pone;
  HYPRE_IJVectorGetObject(b, (void **)&pb);
  HYPRE_IJVectorGetObject(x, (void **)&px);
  HYPRE_IJVectorGetObject(one, (void **)&pone);
  HYPRE_ParCSRMatrixMatvec(1.0, pA, pone, 0.0, pb); /* b = A 1 */

  HYPRE_Solver pcg, amg;
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, 1e-10);
  HYPRE_PCGSetMaxIter(pcg, 100);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_BoomerAMGSetRelaxType(amg, 8); /* l1-symmetric Gauss-Seidel: SPD V-cycle */
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                      (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  HYPRE_ParCSRPCGSetup(pcg, pA, pb, px);
  HYPRE_ParCSRPCGSolve(pcg, pA, pb, px);
  HYPRE_Int its = 0;
  double relres = 1;
  HYPRE_PCGGetNumIterations(pcg, &its);
  HYPRE_PCGGetFinalRelativeResidualNorm(pcg, &relres);
  HX_ASSERT(relres <= 1e-10, "relative residual %.3e", relres);
  HX_ASSERT(its >= 1 && its <= 25, "AMG-PCG iterations %d (expected <= 25 for a 16^3 Laplacian)", (int)its);

  double *sol = malloc(sizeof(double) * nrows), maxerr = 0;
  HYPRE_IJVectorGetValues(x, nrows, rows, sol);
  for (HYPRE_Int r = 0; r < nrows; r++) maxerr = fmax(maxerr, fabs(sol[r] - 1.0));
  double gmax;
  MPI_Allreduce(&maxerr, &gmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  /* kappa(A) ~ 1e2 for N=16, relative residual 1e-10: error well below 1e-7 */
  HX_ASSERT(gmax < 1e-7, "max error of the solution %.3e", gmax);

  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_ParCSRPCGDestroy(pcg);
  for (int v = 0; v < 3; v++) HYPRE_IJVectorDestroy(*vs[v]);
  HYPRE_IJMatrixDestroy(A);
  HYPRE_Finalize();
  free(ncols), free(rows), free(cols), free(vals), free(ones), free(zeros), free(sol);
  int fail = hx_test_result(), anyfail;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyfail;
}
