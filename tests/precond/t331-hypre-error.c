/* HX_HYPRE: a failing hypre call becomes an HX_ERR_HYPRE error naming the
 * call and hypre's description, and hypre's error flag is cleared; a code
 * that is only HYPRE_ERROR_CONV (BoomerAMG as a fixed preconditioner) is
 * cleared and not reported. */
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_utilities.h>

#include "hx_test.h"
#include "precond_impl.h"

static int bad_call(void) {
  HYPRE_IJMatrix A;
  /* upper row index below the lower one minus one: an argument error */
  HX_HYPRE(HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 10, 5, 10, 5, &A));
  return HX_SUCCESS;
}

static int conv_only(void) {
  HX_HYPRE(HYPRE_ERROR_CONV);
  return HX_SUCCESS;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  HX_ASSERT(hx_hypre_acquire() == HX_SUCCESS, "acquire");
  HX_ASSERT(hx_hypre_acquire() == HX_SUCCESS, "acquire twice (counted)");

  int err = bad_call();
  HX_ASSERT(err == HX_ERR_HYPRE, "bad call gives HX_ERR_HYPRE, got %d (%s)", err, hx_error_name(err));
  const char *msg = hx_error_message();
  if (getenv("HX_VERBOSE")) printf("%s\n", msg);
  HX_ASSERT(strstr(msg, "HYPRE_IJMatrixCreate") != NULL, "message names the call: '%s'", msg);
  HX_ASSERT(strstr(msg, "rgument") != NULL || strstr(msg, "error") != NULL, "message has hypre's text: '%s'",
            msg);
  HX_ASSERT(HYPRE_GetError() == 0, "hypre error flag cleared (%d)", (int)HYPRE_GetError());
  hx_error_clear();

  err = conv_only();
  HX_ASSERT(err == HX_SUCCESS, "HYPRE_ERROR_CONV alone is not an error (%d)", err);
  HX_ASSERT(hx_error_code() == HX_SUCCESS, "no error recorded (%s)", hx_error_message());

  HX_ASSERT(hx_hypre_release() == HX_SUCCESS, "release");
  HX_ASSERT(hx_hypre_release() == HX_SUCCESS, "release (last: HYPRE_Finalize)");
  int fail = hx_test_result(), anyfail;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyfail;
}
