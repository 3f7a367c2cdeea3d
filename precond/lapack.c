/* LAPACK's error handler, replaced (issue 53, defect 1). Reference LAPACK's
 * xerbla prints "On entry to DSYGV parameter number 6 had an illegal value"
 * and executes Fortran STOP, which ends the process with status 0: an MPI
 * run then "succeeds" with nothing written. hexcg defines xerbla_ itself
 * (the executable's definition interposes on the library's): it records the
 * routine and the parameter and returns, so the LAPACK routine returns with
 * info = -k and its caller reports an error through hx_lapack_check. */
#include <stdio.h>
#include <string.h>

#include "precond_impl.h"

static _Thread_local char g_routine[16];
static _Thread_local int g_param;

/* Fortran: SUBROUTINE XERBLA(SRNAME, INFO), CHARACTER*(*) SRNAME: the hidden length last */
void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len) {
  size_t n = len < sizeof g_routine - 1 ? len : sizeof g_routine - 1;
  memcpy(g_routine, srname, n);
  while (n > 0 && g_routine[n - 1] == ' ') n--;
  g_routine[n] = '\0';
  g_param = info ? *info : 0;
}

int hx_lapack_check(const char *routine, int info, const char *what) {
  if (info == 0) {
    g_param = 0;
    return HX_SUCCESS;
  }
  if (info < 0 || g_param) {
    const int k = g_param ? g_param : -info;
    g_param = 0;
    return HX_ERROR(HX_ERR_LIB, "LAPACK %s refused parameter %d (%s: an internal error of hexcg, please report it)",
                    g_routine[0] ? g_routine : routine, k, what);
  }
  return HX_ERROR(HX_ERR_LIB, "LAPACK %s failed (info = %d) on %s", routine, info, what);
}
