/* hexcg precond: the preconditioners (Jacobi; two-level Schwarz: FDM fine
 * level + Q1 coarse level with hypre BoomerAMG; their combinations), built
 * from a discretisation (hx_disc) and their own options subtree (the
 * case file's preconditioner: mapping, handed over by io/ as an hx_opt tree
 * with source positions). Preconditioners are hx_pc objects (hx_solver.h).
 * The only module that includes hypre. docs/preconditioner.md. */
#ifndef HX_PRECOND_H
#define HX_PRECOND_H

#include "hx_core.h"
#include "hx_disc.h"
#include "hx_kernels.h"
#include "hx_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "HYPRE Release Version 2.26.0" (from HYPRE_Version) into buf. */
void hx_precond_hypre_version(char *buf, size_t len);

/* Preconditioner types a case may name, for messages and docs. */
extern const char *const hx_pc_type_names[];
extern const int hx_pc_num_types;

/* Validate the preconditioner options (the case's preconditioner: mapping;
 * NULL or empty = the default, pmg) and make every default explicit in
 * the tree, so that the effective case lists all keys. Bad keys or values:
 * HX_ERR_INPUT "case.yaml:LINE:COL: preconditioner.KEY: ..." at the
 * offending node. Host only, not collective. */
int hx_pc_options_check(hx_opt *opts);

/* What the preconditioner the options describe adds to a solve at fine
 * order p, in bytes per fine GLL node ((p+1)^3 per element) of a rank's
 * part: a lower bound for the memory check before anything is built
 * (hx_case_check_memory; asm: its fine and coarse levels; pmg: every
 * level's discretisation and smoother at its order, and the Q1 level).
 * Options as completed by hx_pc_options_check. Host only. */
int hx_pc_options_mem_per_node(const hx_opt *opts, int p, double *bytes);

/* The most levels a pmg cycle has. */
#define HX_PC_LEVELS_MAX 16
/* The orders of pmg's (and auto's) levels that are known before the setup,
 * for a case of order `order`: the list given, or for levels: auto the
 * first and last (order, then 1; the setup picks the middle ones); *n of
 * them into levels[HX_PC_LEVELS_MAX], *n = 0 for the other types. A list
 * that does not start at the order is HX_ERR_INPUT at
 * preconditioner.levels (the run and --dry-run refuse it before anything
 * is built). Options as completed by hx_pc_options_check. Host only. */
int hx_pc_options_levels(const hx_opt *opts, int order, int *levels, int *n);

/* The check hx_pcg_solve makes on the built preconditioner, made on the
 * options before anything is built (the run and --dry-run): a restricted
 * Schwarz smoother (pmg smoother ras, cheby-ras) is not symmetric, so a
 * solver that is not flexible (flexible == 0; solver: its name for the
 * message) refuses it: HX_ERR_INPUT at the smoother's case position.
 * Options as completed by hx_pc_options_check. Host only. */
int hx_pc_options_check_solver(const hx_opt *opts, int flexible, const char *solver);

/* Print the preconditioner's keys from its option tables (hexcg keys):
 * names_only, the dotted keys one per line, else with type, default, the
 * types they belong to and help. */
void hx_pc_options_print_keys(int names_only, FILE *out);

/* Create the preconditioner the options describe for discretisation d
 * (options as completed by hx_pc_options_check; d is referenced). Setup
 * (the expensive part) runs in hx_pc_setup. Collective. */
int hx_pc_create_from_options(hx_disc d, const hx_opt *opts, hx_pc *pc);

/* The options read once: the hx_pc_options_* functions above each read the
 * tree for one question; a caller with several reads it once into an
 * hx_pc_config (typed, checked as there; it keeps opts, which must outlive
 * it, for the positions of later messages) and asks it. Host only. */
typedef struct hx_pc_config_s *hx_pc_config;
int hx_pc_config_read(const hx_opt *opts, hx_pc_config *cfg);
void hx_pc_config_free(hx_pc_config *cfg); /* accepts NULL; nulls *cfg */
const char *hx_pc_config_type(hx_pc_config cfg);
int hx_pc_config_mem_per_node(hx_pc_config cfg, int p, double *bytes);
int hx_pc_config_levels(hx_pc_config cfg, int order, int *levels, int *n);
int hx_pc_config_check_solver(hx_pc_config cfg, int flexible, const char *solver);
/* Collective. */
int hx_pc_create(hx_disc d, hx_pc_config cfg, hx_pc *pc);

/* Jacobi: z = r ./ diag(A) with the exact assembled diagonal of the masked
 * operator (hx_op_diagonal), computed in setup; a non-positive diagonal
 * entry is an HX_ERR_NUMERIC error there. Collective. */
int hx_pc_create_jacobi(hx_op op, hx_pc *pc);
/* The same applied in precision prec (hx_pc_precision; HX_F32: 1/diag
 * assembled and inverted in FP64, rounded to float once; vectors through
 * hx_pc_apply_p; no fused CG update). Collective. */
int hx_pc_create_jacobi_prec(hx_op op, hx_precision prec, hx_pc *pc);

/* Per-apply figures of a two-level Schwarz preconditioner (type asm; all
 * zero for another type): mean seconds per apply of the fine level, the
 * coarse level (restriction, BoomerAMG, prolongation, in its thread when
 * overlapped), the host copies around the coarse level, and the whole
 * apply; overlap_efficiency = total / max(fine, coarse) (1 = perfect
 * overlap, fine + coarse over max when sequential). Setup seconds of the
 * parts. Rank-local. */
typedef struct {
  int64_t applies;
  int coarse, overlap;        /* coarse level present; overlap in effect */
  double t_fine, t_coarse, t_copy, t_total, overlap_efficiency;
  double t_fine_setup, t_coarse_assembly, t_amg_setup;
  int64_t coarse_rows;
  int amg_levels;
  double fine_bytes_per_apply;
} hx_asm_stats;
void hx_asm_get_stats(hx_pc pc, hx_asm_stats *s);
/* d_z = the fine level alone (the overlapping Schwarz solves) of a set-up
 * asm preconditioner applied to d_r, for benchmarks; the apply statistics
 * above are not touched. Collective. */
int hx_asm_fine_apply(hx_pc pc, const double *d_r, double *d_z);

/* Per-level figures of a p-multigrid preconditioner (type pmg; all zero for
 * another type): orders, setup seconds per level (discretisation, smoother,
 * eigenvalue estimate), the bound rho of lambda_max(S A) used by the
 * smoother, and mean seconds per apply of the smoothing and of the transfers
 * (restriction to and prolongation from the next level) of each level; the
 * coarse (Q1, BoomerAMG) level: setup, mean seconds per apply (in its thread
 * for the overlapped additive cycle), rows, AMG levels; the whole apply and,
 * for the additive cycle, overlap_efficiency = total / max(levels' work,
 * coarse). Rank-local. */
#define HX_PMG_STATS_LEVELS 16
typedef struct {
  int64_t applies;
  int nlevels, additive, overlap, coarse;
  int order[HX_PMG_STATS_LEVELS];
  double t_setup[HX_PMG_STATS_LEVELS], rho[HX_PMG_STATS_LEVELS];
  double t_smooth[HX_PMG_STATS_LEVELS], t_transfer[HX_PMG_STATS_LEVELS];
  double t_coarse, t_coarse_copy, t_coarse_setup, t_total, overlap_efficiency;
  int64_t coarse_rows;
  int amg_levels;
} hx_pmg_stats;
void hx_pmg_get_stats(hx_pc pc, hx_pmg_stats *s);

/* What a preconditioner of type auto uses now: "jacobi" (before a
 * switch), "pmg", or with trial: true the trial's candidate
 * ("cheby-jacobi-3", "cheby-jacobi-5", "cheby-asm-3"); NULL for another
 * type or before setup. Host, not collective. */
const char *hx_pc_auto_choice(hx_pc pc);

#ifdef __cplusplus
}
#endif
#endif
