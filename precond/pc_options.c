/* Preconditioner options: validation with case-file positions, defaults
 * made explicit, and the factory from options to hx_pc objects.
 * docs/case-format.md and docs/preconditioner.md list every key. */
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof *(a)))

const char *const hx_pc_type_names[] = {"none", "jacobi", "asm", "pmg"};
const int hx_pc_num_types = NELEM(hx_pc_type_names);
enum { PC_NONE = 0, PC_JACOBI = 1, PC_ASM = 2, PC_PMG = 3 };

static const char *const top_keys_simple[] = {"type"};
static const char *const top_keys_jacobi[] = {"type", "precision"};
static const char *const top_keys_asm[] = {"type", "overlap", "weight", "coarse", "precision"};
static const char *const top_keys_pmg[] = {"type", "levels", "cycle", "smoother", "coarse", "overlap", "precision"};
/* every key some type has (dropped with a note when the type changes) */
static const char *const top_keys_all[] = {"overlap", "weight", "coarse", "levels", "cycle", "smoother", "precision"};
static const char *const smoother_keys[] = {"type", "degree", "kind", "lower", "eig_steps", "eig_safety"};
/* smoother types: the inner preconditioner, plain or Chebyshev-accelerated */
static const char *const smoother_types[] = {"jacobi", "asm", "ras", "cheby-jacobi", "cheby-asm", "cheby-ras"};
static const char *const cheb_kinds[] = {"fourth", "opt-fourth", "first"};
static const char *const cycle_names[] = {"multiplicative", "additive"};
static const char *const coarse_keys[] = {"solver",     "operator",         "cycles",     "coarsen_type",
                                          "interp_type", "relax_type",      "relax_sweeps", "strong_threshold",
                                          "agg_levels", "pmax",             "max_levels", "print_level"};
static const char *const weight_names[] = {"none", "sqrt"};
static const char *const coarse_solvers[] = {"none", "boomeramg"};
static const char *const coarse_ops[] = {"fem", "galerkin"};
/* preconditioner.precision, in hx_precision order (HX_F64 = 0, HX_F32 = 1) */
static const char *const precision_names[] = {"fp64", "fp32"};

/* Read preconditioner.precision into *prec (absent: left alone). */
static int precision_read(const hx_opt *o, hx_precision *prec) {
  int v = (int)*prec;
  HX_CALL(hx_opt_enum(o, "preconditioner", "precision", precision_names, NELEM(precision_names), &v));
  *prec = (hx_precision)v;
  return HX_SUCCESS;
}

/* Read (and check) a coarse: mapping (NULL: defaults left alone). */
static int coarse_read(const hx_opt *c, int *solver, hx_coarse_opts *co) {
  if (c) {
    const char *p = "preconditioner.coarse";
    HX_CALL(hx_opt_check_keys(c, p, coarse_keys, NELEM(coarse_keys)));
    HX_CALL(hx_opt_enum(c, p, "solver", coarse_solvers, NELEM(coarse_solvers), solver));
    
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

/* Read (and check) the asm options of tree o into a. */
static int asm_read(const hx_opt *o, hx_asm_opts *a) {
  hx_asm_opts_default(a);
  HX_CALL(hx_opt_check_keys(o, "preconditioner", top_keys_asm, NELEM(top_keys_asm)));
  const hx_opt *ov = hx_opt_get(o, "overlap");
  if (ov && ov->kind == HX_OPT_SCALAR && !strcmp(ov->value, "auto"))
    a->overlap = HX_ASM_OVERLAP_AUTO;
  else
    HX_CALL(hx_opt_bool(o, "preconditioner", "overlap", &a->overlap));
  int w = (int)a->weight;
  HX_CALL(hx_opt_enum(o, "preconditioner", "weight", weight_names, NELEM(weight_names), &w));
  a->weight = (hx_fdm_weight)w;
  HX_CALL(coarse_read(hx_opt_get(o, "coarse"), &a->coarse, &a->coarse_opts));
  HX_CALL(precision_read(o, &a->prec));
  return HX_SUCCESS;
}

static int set_int(hx_opt *o, const char *key, int v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%d", v);
  HX_CALL(hx_opt_set(o, key, buf));
  return HX_SUCCESS;
}

/* Read (and check) the pmg options of tree o into g (levels 0 = auto). */
static int pmg_read(const hx_opt *o, hx_pmg_opts *g) {
  hx_pmg_opts_default(g);
  const char *P = "preconditioner";
  HX_CALL(hx_opt_check_keys(o, P, top_keys_pmg, NELEM(top_keys_pmg)));
  const hx_opt *lv = hx_opt_get(o, "levels");
  if (lv && !(lv->kind == HX_OPT_SCALAR && lv->value && !strcmp(lv->value, "auto"))) {
    /* a list, or (from --set preconditioner.levels=[7,3,1]) a scalar "[7,3,1]" */
    const char *txt[HX_PMG_MAX_LEVELS + 1];
    const hx_opt *at[HX_PMG_MAX_LEVELS + 1];
    char flat[256] = "";
    int n = 0;
    if (lv->kind == HX_OPT_LIST) {
      for (int i = 0; i < lv->n && n <= HX_PMG_MAX_LEVELS; i++, n++)
        txt[n] = lv->items[i]->kind == HX_OPT_SCALAR ? lv->items[i]->value : NULL, at[n] = lv->items[i];
    } else if (lv->kind == HX_OPT_SCALAR && lv->value && lv->value[0] == '[') {
      snprintf(flat, sizeof flat, "%s", lv->value + 1);
      char *close = strchr(flat, ']'), *save = NULL;
      if (close) *close = '\0';
      for (char *tok = strtok_r(flat, ", ", &save); tok && n <= HX_PMG_MAX_LEVELS; tok = strtok_r(NULL, ", ", &save))
        txt[n] = tok, at[n++] = lv;
    }
    if (n < 1 || n > HX_PMG_MAX_LEVELS)
      return hx_opt_error(lv, "preconditioner.levels: expected auto or a list of 1..%d orders, e.g. [7, 3, 1]",
                          HX_PMG_MAX_LEVELS);
    for (int i = 0; i < n; i++) {
      char *end = NULL;
      const long q = txt[i] ? strtol(txt[i], &end, 10) : -1;
      if (!end || *end || q < HX_ORDER_MIN || q > HX_ORDER_MAX)
        return hx_opt_error(at[i], "preconditioner.levels: '%s' is not an order in %d..%d",
                            txt[i] ? txt[i] : "(not a scalar)", HX_ORDER_MIN, HX_ORDER_MAX);
      if (i > 0 && q >= g->levels[i - 1])
        return hx_opt_error(at[i], "preconditioner.levels: the orders must decrease (%ld after %d)", q,
                            g->levels[i - 1]);
      g->levels[i] = (int)q;
    }
    if (g->levels[n - 1] != 1)
      return hx_opt_error(lv, "preconditioner.levels: the last level must be order 1 (the Q1 coarse level)");
    g->nlevels = n;
  }
  int cyc = (int)g->cycle;
  HX_CALL(hx_opt_enum(o, P, "cycle", cycle_names, NELEM(cycle_names), &cyc));
  g->cycle = (hx_pmg_cycle)cyc;
  HX_CALL(hx_opt_bool(o, P, "overlap", &g->overlap));
  const hx_opt *sm = hx_opt_get(o, "smoother");
  if (sm) {
    const char *S = "preconditioner.smoother";
    HX_CALL(hx_opt_check_keys(sm, S, smoother_keys, NELEM(smoother_keys)));
    int t = 4; /* cheby-asm */
    HX_CALL(hx_opt_enum(sm, S, "type", smoother_types, NELEM(smoother_types), &t));
    g->inner = (hx_smooth_inner)(t % 3);
    int kind = 1; /* opt-fourth */
    HX_CALL(hx_opt_enum(sm, S, "kind", cheb_kinds, NELEM(cheb_kinds), &kind));
    g->kind = t < 3 ? HX_CHEB_NONE : (hx_cheb_kind)(kind + 1);
    HX_CALL(hx_opt_int(sm, S, "degree", 1, HX_CHEB_DEGREE_MAX, &g->degree));
    HX_CALL(hx_opt_double(sm, S, "lower", 1e-6, 0.999, &g->lower));
    HX_CALL(hx_opt_int(sm, S, "eig_steps", 1, 60, &g->eig_steps));
    HX_CALL(hx_opt_double(sm, S, "eig_safety", 1.0, 10.0, &g->eig_safety));
    if (g->kind == HX_CHEB_OPT_FOURTH && g->degree > HX_CHEB_OPT_DEGREE_MAX)
      return hx_opt_error(hx_opt_get(sm, "degree") ? hx_opt_get(sm, "degree") : sm,
                          "%s.degree: %d; the optimised 4th-kind weights are tabulated for degrees 1..%d (use "
                          "kind: fourth or first for higher degrees)",
                          S, g->degree, HX_CHEB_OPT_DEGREE_MAX);
  }
  HX_CALL(coarse_read(hx_opt_get(o, "coarse"), &g->coarse, &g->coarse_opts));
  HX_CALL(precision_read(o, &g->prec));
  return HX_SUCCESS;
}

static int set_double(hx_opt *o, const char *key, double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.17g", v);
  HX_CALL(hx_opt_set(o, key, buf));
  return HX_SUCCESS;
}

static int write_coarse(hx_opt *opts, int solver, const hx_coarse_opts *co) {
  hx_opt *c;
  HX_CALL(hx_opt_submap(opts, "coarse", &c));
  HX_CALL(hx_opt_set(c, "solver", coarse_solvers[solver]));
  HX_CALL(hx_opt_set(c, "operator", coarse_ops[co->op]));
  HX_CALL(set_int(c, "cycles", co->cycles));
  HX_CALL(set_int(c, "coarsen_type", co->coarsen_type));
  HX_CALL(set_int(c, "interp_type", co->interp_type));
  HX_CALL(set_int(c, "relax_type", co->relax_type));
  HX_CALL(set_int(c, "relax_sweeps", co->relax_sweeps));
  HX_CALL(set_double(c, "strong_threshold", co->strong_threshold));
  HX_CALL(set_int(c, "agg_levels", co->agg_levels));
  HX_CALL(set_int(c, "pmax", co->pmax));
  HX_CALL(set_int(c, "max_levels", co->max_levels));
  HX_CALL(set_int(c, "print_level", co->print_level));
  return HX_SUCCESS;
}

static int in_list(const char *k, const char *const *keys, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(k, keys[i])) return 1;
  return 0;
}

int hx_pc_options_check(hx_opt *opts) {
  if (!opts) return HX_SUCCESS;
  if (opts->kind != HX_OPT_MAP) return hx_opt_error(opts, "preconditioner: expected a mapping (type: ...)");
  int type = PC_JACOBI;
  HX_CALL(hx_opt_enum(opts, "preconditioner", "type", hx_pc_type_names, hx_pc_num_types, &type));
  HX_CALL(hx_opt_set(opts, "type", hx_pc_type_names[type]));
  const char *const *keys = type == PC_ASM      ? top_keys_asm
                            : type == PC_PMG    ? top_keys_pmg
                            : type == PC_JACOBI ? top_keys_jacobi
                                                : top_keys_simple;
  const int nkeys = type == PC_ASM      ? NELEM(top_keys_asm)
                    : type == PC_PMG    ? NELEM(top_keys_pmg)
                    : type == PC_JACOBI ? NELEM(top_keys_jacobi)
                                        : NELEM(top_keys_simple);
  /* keys of another type (left over after --set preconditioner.type=...)
   * are not typos: drop them with a note; anything else is an error */
  char dropped[256] = "";
  for (int i = 0; i < NELEM(top_keys_all); i++) {
    const char *k = top_keys_all[i];
    if (in_list(k, keys, nkeys) || !hx_opt_get(opts, k)) continue;
    hx_opt_remove(opts, k);
    const size_t off = strlen(dropped);
    snprintf(dropped + off, sizeof dropped - off, "%s%s", off ? ", " : "", k);
  }
  if (dropped[0] && hx_log_rank() == 0)
    hx_warn("preconditioner: type %s ignores %s (options of another type)\n", hx_pc_type_names[type], dropped);
  if (type == PC_ASM) {
    hx_asm_opts a;
    HX_CALL(asm_read(opts, &a));
    /* the effective case lists every key */
    HX_CALL(hx_opt_set(opts, "overlap", a.overlap == HX_ASM_OVERLAP_AUTO ? "auto" : a.overlap ? "true" : "false"));
    HX_CALL(hx_opt_set(opts, "weight", weight_names[a.weight]));
    HX_CALL(hx_opt_set(opts, "precision", precision_names[a.prec]));
    HX_CALL(write_coarse(opts, a.coarse, &a.coarse_opts));
    return HX_SUCCESS;
  }
  if (type == PC_PMG) {
    hx_pmg_opts g;
    HX_CALL(pmg_read(opts, &g));
    if (g.nlevels == 0) {
      HX_CALL(hx_opt_set(opts, "levels", "auto"));
    }
    HX_CALL(hx_opt_set(opts, "cycle", cycle_names[g.cycle]));
    HX_CALL(hx_opt_set(opts, "overlap", g.overlap ? "true" : "false"));
    hx_opt *sm;
    HX_CALL(hx_opt_submap(opts, "smoother", &sm));
    const int t = (int)g.inner + (g.kind == HX_CHEB_NONE ? 0 : 3);
    HX_CALL(hx_opt_set(sm, "type", smoother_types[t]));
    HX_CALL(set_int(sm, "degree", g.degree));
    if (g.kind != HX_CHEB_NONE) HX_CALL(hx_opt_set(sm, "kind", cheb_kinds[(int)g.kind - 1]));
    else if (!hx_opt_get(sm, "kind")) HX_CALL(hx_opt_set(sm, "kind", "opt-fourth"));
    HX_CALL(set_double(sm, "lower", g.lower));
    HX_CALL(set_int(sm, "eig_steps", g.eig_steps));
    HX_CALL(set_double(sm, "eig_safety", g.eig_safety));
    HX_CALL(hx_opt_set(opts, "precision", precision_names[g.prec]));
    HX_CALL(write_coarse(opts, g.coarse, &g.coarse_opts));
    return HX_SUCCESS;
  }
  HX_CALL(hx_opt_check_keys(opts, "preconditioner", keys, nkeys));
  if (type == PC_JACOBI) {
    /* Jacobi is one multiplication per entry on the FP64 vectors CG hands
     * it: nothing to gain in FP32 */
    hx_precision prec = HX_F64;
    HX_CALL(precision_read(opts, &prec));
    if (prec == HX_F32)
      return hx_opt_error(hx_opt_get(opts, "precision"),
                          "preconditioner.precision: type jacobi has no FP32 variant (one multiplication per "
                          "entry, bound by CG's FP64 vectors); remove the key, write fp64, or use type asm or pmg");
  }
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
    case PC_PMG: {
      hx_pmg_opts g;
      HX_CALL(pmg_read(opts, &g));
      HX_CALL(hx_pc_create_pmg(d, &g, pc));
      break;
    }
    default: return HX_ERROR(HX_ERR_INPUT, "unknown preconditioner type %d", type);
  }
  return HX_SUCCESS;
}
