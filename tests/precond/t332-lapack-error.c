/* LAPACK's error handler (precond/lapack.c, issue 53 defect 1): reference
 * LAPACK's xerbla stops the process with status 0, so an illegal argument
 * ended an MPI run "successfully" with nothing written. hexcg's xerbla_
 * returns instead: the routine comes back with info < 0 and
 * hx_lapack_check turns it into an HX_ERR_LIB error naming the routine and
 * the parameter; the process goes on (this test reaching its end is the
 * first check). A positive info is a numerical failure, reported as such. */
#include <stdio.h>
#include <string.h>

#include "hx_test.h"
#include "precond_impl.h"

extern void dsygv_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                   double *b, const int *ldb, double *w, double *work, const int *lwork, int *info, size_t,
                   size_t);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double A[4] = {2, 0, 0, 2}, B[4] = {1, 0, 0, 1}, w[2], work[64];
  int itype = 1, n = 2, lda0 = 0, lda = 2, lwork = 64, info = 0;
  /* lda = 0 < max(1, n): parameter 6, the illegal value of the trial */
  dsygv_(&itype, "V", "U", &n, A, &lda0, B, &lda, w, work, &lwork, &info, 1, 1);
  HX_ASSERT(info == -6, "dsygv with lda = 0 returns info = -6 (got %d)", info);
  int err = hx_lapack_check("dsygv", info, "a test problem");
  HX_ASSERT(err == HX_ERR_LIB, "reported as HX_ERR_LIB (got %d)", err);
  const char *msg = hx_error_message();
  HX_ASSERT(strstr(msg, "DSYGV") && strstr(msg, "parameter 6") && strstr(msg, "a test problem"),
            "the message names the routine, the parameter and the problem: '%s'", msg);
  hx_error_clear();
  /* a legal call afterwards: no stale state */
  dsygv_(&itype, "V", "U", &n, A, &lda, B, &lda, w, work, &lwork, &info, 1, 1);
  HX_ASSERT(info == 0 && hx_lapack_check("dsygv", info, "x") == HX_SUCCESS && w[0] == 2.0 && w[1] == 2.0,
            "a legal call: info %d, eigenvalues %g %g", info, w[0], w[1]);
  /* B not positive definite: info = n + k, a numerical failure */
  double A2[4] = {1, 0, 0, 1}, B2[4] = {-1, 0, 0, 1};
  dsygv_(&itype, "V", "U", &n, A2, &lda, B2, &lda, w, work, &lwork, &info, 1, 1);
  HX_ASSERT(info > n, "indefinite B: info %d > n", info);
  err = hx_lapack_check("dsygv", info, "an indefinite pair");
  HX_ASSERT(err == HX_ERR_LIB && strstr(hx_error_message(), "failed (info ="), "numerical failure: '%s'",
            hx_error_message());
  hx_error_clear();
  int fail = hx_test_result();
  if (!fail) printf("lapack error handler ok\n"); /* the test's pass pattern: LAPACK's own STOP exits 0 */
  MPI_Finalize();
  return fail;
}
