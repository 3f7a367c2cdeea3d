/* hexcg precond: Jacobi, Schwarz/FDM, the p=1 coarse space with hypre
 * BoomerAMG and their combinations. The only module that includes hypre. */
#ifndef HX_PRECOND_H
#define HX_PRECOND_H

#include "hx_core.h"
#include "hx_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "hypre 2.26.0" (from HYPRE_Version) into buf. */
void hx_precond_hypre_version(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
