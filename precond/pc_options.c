/* Preconditioner options: validation with case-file positions, defaults
 * made explicit, and the factory from options to hx_pc objects.
 * docs/case-format.md and docs/preconditioner.md list every key. */
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof *(a)))

const char *const hx_pc_type_names[] = {"none", "jacobi", "asm"};
const int hx_pc_num_types = NELEM(hx_pc_type_names);
enum { PC_NONE = 0, PC_JACOBI = 1, PC_ASM = 2 };

static const char *const top_keys_simple[] = {"type"};
static const char *const top_keys_asm[] = {"type", "overlap", "weight", "coarse"};
static const char *const coarse_keys[] = {"solver",     "operator",         "cycles",     "coarsen_type",
                                          "interp_type", "relax_type",      "relax_sweeps", "strong_threshold",
                                          "agg_levels", "pmax",             "max_levels", "print_level"};
static const char *const weight_names[] = {"none", "sqrt"};
static const char *const coarse_solvers[] = {"none", "boomeramg"};
static const char *const coarse_ops[] = {"fem", "galerkin"};

/* Read (and check) the asm options of tree o into a. */
static int asm_read(const hx_opt *o, hx_asm_opts *a) {
  hx_asm_opts_default(a);
  HX_CALL(hx_opt_check_keys(o, "preconditioner", top_keys_asm, NELEM(top_keys_asm)));
  const hx_opt *ov = hx_opt_get(o, "overlap");
  if (ov && ov->value && !strcmp(ov->value, "auto"))
    a->overlap = HX_ASM_OVERLAP_AUTO;
  else
    HX_CALL(hx_opt_bool(o, "preconditioner", "overlap", &a->overlap));
  int w = (int)a->weight;
  HX_CALL(hx_opt_enum(o, "preconditioner", "weight", weight_names, NELEM(weight_names), &w));
  a->weight = (hx_fdm_weight)w;
  const hx_opt *c = hx_opt_get(o, "coarse");
  if (c) {
    const char *p = "preconditioner.coarse";
    HX_CALL(hx_opt_check_keys(c, p, coarse_keys, NELEM(coarse_keys)));
    HX_CALL(hx_opt_enum(c, p, "solver", coarse_solvers, NELEM(coarse_solvers), &a->coarse));
    hx_coarse_opts *co = &a->coarse_opts;
    int op = (int)co->op;
    HX_CALL(hx_opt_enum(c, p, "operator", coarse_ops, NELEM(coarse_ops), &op));
    co->op = (hx_coarse_operator)op;
    HX_CALL(hx_opt_int(c, p, "cycles", 1, 100, &co->cycles));
    HX_CALL(hx_opt_int(c, p, "coarsen_type", 0, 22, &co->coarsen_type));
    HX_CALL(hx_opt_int(c, p, "interp_type", 0, 100, &co->interp_type));
    HX_CALL(hx_opt_int(c, p, "relax_type", 0, 100, &co->relax_type));
    HX_CALL(hx_opt_int(c, p, "relax_sweeps", 1, 100, &co->relax_sweeps));
    HX_CALL(hx_opt_double(c, p, "strong_threshold", 0.0, 1.0, &co->strong_threshold));
    HX_CALL(hx_opt_int(c, p, "agg_levels", 0, 100, &co->agg_levels));
    HX_CALL(hx_opt_int(c, p, "pmax", 0, 100, &co->pmax));
    HX_CALL(hx_opt_int(c, p, "max_levels", 1, 100, &co->max_levels));
    HX_CALL(hx_opt_int(c, p, "print_level", 0, 3, &co->print_level));
    /* BoomerAMG must be a fixed SPD operator for CG: symmetric relaxations only */
    static const int symmetric[] = {0, 6, 7, 8, 16, 18};
    int ok = 0;
    for (int i = 0; i < NELEM(symmetric) && !ok; i++) ok = co->relax_type == symmetric[i];
    const hx_opt *rt = hx_opt_get(c, "relax_type");
    if (!ok && rt)
      return hx_opt_error(rt,
                          "%s.relax_type: %d is not a symmetric BoomerAMG relaxation; use one of 0 (Jacobi), 6 "
                          "(hybrid symmetric Gauss-Seidel), 8 (l1 symmetric Gauss-Seidel), 16 (Chebyshev), "
                          "18 (l1 Jacobi)",
                          p, co->relax_type);
  }
  return HX_SUCCESS;
}

static int set_int(hx_opt *o, const char *key, int v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%d", v);
  HX_CALL(hx_opt_set(o, key, buf));
  return HX_SUCCESS;
}

int hx_pc_options_check(hx_opt *opts) {
  if (!opts) return HX_SUCCESS;
  if (opts->kind != HX_OPT_MAP) return hx_opt_error(opts, "preconditioner: expected a mapping (type: ...)");
  int type = PC_JACOBI;
  HX_CALL(hx_opt_enum(opts, "preconditioner", "type", hx_pc_type_names, hx_pc_num_types, &type));
  HX_CALL(hx_opt_set(opts, "type", hx_pc_type_names[type]));
  if (type != PC_ASM) {
    /* keys of another type (left over after --set preconditioner.type=...)
     * are not typos: drop them with a note; anything else is an error */
    char dropped[256] = "";
    for (int i = 0; i < NELEM(top_keys_asm); i++) {
      const char *k = top_keys_asm[i];
      if (!strcmp(k, "type") || !hx_opt_get(opts, k)) continue;
      hx_opt_remove(opts, k);
      const size_t off = strlen(dropped);
      snprintf(dropped + off, sizeof dropped - off, "%s%s", off ? ", " : "", k);
    }
    if (dropped[0] && hx_log_rank() == 0)
      hx_warn("preconditioner: type %s ignores %s (options of type asm)\n", hx_pc_type_names[type], dropped);
    HX_CALL(hx_opt_check_keys(opts, "preconditioner", top_keys_simple, NELEM(top_keys_simple)));
    return HX_SUCCESS;
  }
  hx_asm_opts a;
  HX_CALL(asm_read(opts, &a));
  /* the effective case lists every key */
  HX_CALL(hx_opt_set(opts, "overlap", a.overlap == HX_ASM_OVERLAP_AUTO ? "auto" : a.overlap ? "true" : "false"));
  HX_CALL(hx_opt_set(opts, "weight", weight_names[a.weight]));
  hx_opt *c;
  HX_CALL(hx_opt_submap(opts, "coarse", &c));
  const hx_coarse_opts *co = &a.coarse_opts;
  HX_CALL(hx_opt_set(c, "solver", coarse_solvers[a.coarse]));
  HX_CALL(hx_opt_set(c, "operator", coarse_ops[co->op]));
  HX_CALL(set_int(c, "cycles", co->cycles));
  HX_CALL(set_int(c, "coarsen_type", co->coarsen_type));
  HX_CALL(set_int(c, "interp_type", co->interp_type));
  HX_CALL(set_int(c, "relax_type", co->relax_type));
  HX_CALL(set_int(c, "relax_sweeps", co->relax_sweeps));
  char buf[32];
  snprintf(buf, sizeof buf, "%.17g", co->strong_threshold);
  HX_CALL(hx_opt_set(c, "strong_threshold", buf));
  HX_CALL(set_int(c, "agg_levels", co->agg_levels));
  HX_CALL(set_int(c, "pmax", co->pmax));
  HX_CALL(set_int(c, "max_levels", co->max_levels));
  HX_CALL(set_int(c, "print_level", co->print_level));
  return HX_SUCCESS;
}

int hx_pc_create_from_options(hx_disc d, const hx_opt *opts, hx_pc *pc) {
  *pc = NULL;
  int type = PC_JACOBI;
  HX_CALL(hx_opt_enum(opts, "preconditioner", "type", hx_pc_type_names, hx_pc_num_types, &type));
  hx_op op = hx_disc_op(d);
  switch (type) {
    case PC_NONE: HX_CALL(hx_pc_create_identity(op, pc)); break;
    case PC_JACOBI: HX_CALL(hx_pc_create_jacobi(op, pc)); break;
    case PC_ASM: {
      hx_asm_opts a;
      HX_CALL(asm_read(opts, &a));
      HX_CALL(hx_pc_create_asm(d, &a, pc));
      break;
    }
    default: return HX_ERROR(HX_ERR_INPUT, "unknown preconditioner type %d", type);
  }
  return HX_SUCCESS;
}
