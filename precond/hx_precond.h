/* hexcg precond: Jacobi, Schwarz/FDM, the p=1 coarse space with hypre
 * BoomerAMG and their combinations. The only module that includes hypre.
 * Preconditioners are returned as the solver's hx_pc interface. */
#ifndef HX_PRECOND_H
#define HX_PRECOND_H

#include "hx_core.h"
#include "hx_kernels.h"
#include "hx_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "HYPRE Release Version 2.26.0" (from HYPRE_Version) into buf. */
void hx_precond_hypre_version(char *buf, size_t len);

/* Jacobi: z = r ./ diag(A) with the exact assembled diagonal of the masked
 * operator (hx_op_diagonal). Collective (setup). A non-positive diagonal
 * entry is an HX_ERR_NUMERIC error. Destroy with hx_pc_destroy. */
int hx_pc_jacobi(hx_op op, hx_pc *pc);

/* Create a preconditioner by name: "jacobi" or "none". Unknown names are
 * HX_ERR_INPUT. Collective. */
int hx_pc_create(const char *name, hx_op op, hx_pc *pc);

#ifdef __cplusplus
}
#endif
#endif
