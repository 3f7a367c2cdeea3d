/* Preconditioner options: the option tables of every type (read by the core
 * readers with case-file positions), defaults made explicit, the memory
 * estimate, and the factory from options to hx_pc objects.
 * docs/case-format.md and docs/preconditioner.md list every key. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof *(a)))

const char *const hx_pc_type_names[] = {"none", "jacobi", "asm", "pmg", "auto"};
const int hx_pc_num_types = NELEM(hx_pc_type_names);
enum { PC_NONE = 0, PC_JACOBI = 1, PC_ASM = 2, PC_PMG = 3, PC_AUTO = 4 };

/* smoother types: the inner preconditioner, plain or Chebyshev-accelerated */
static const char *const smoother_types[] = {"jacobi",       "asm",       "ras",
                                             "cheby-jacobi", "cheby-asm", "cheby-ras"};
/* smoother.type_below: "same" (as the fine level), then smoother_types */
static const char *const smoother_types_below[] = {"same",         "jacobi",    "asm",      "ras",
                                                   "cheby-jacobi", "cheby-asm", "cheby-ras"};
static const char *const sides_names[] = {"both", "pre", "post"};          /* hx_pmg_sides */
static const char *const cheb_kinds[] = {"fourth", "opt-fourth", "first"}; /* hx_cheb_kind - 1 */
static const char *const cycle_names[] = {"multiplicative", "additive"};   /* hx_pmg_cycle */
static const char *const weight_names[] = {"none", "sqrt"};                /* hx_fdm_weight */
static const char *const coarse_solvers[] = {"none", "boomeramg"};
static const char *const coarse_ops[] = {"fem", "galerkin"}; /* hx_coarse_operator */
/* preconditioner.precision, in hx_precision order (HX_F64 = 0, HX_F32 = 1) */
static const char *const precision_names[] = {"fp64", "fp32"};
static const char *const auto_starts[] = {"jacobi", "pmg"}; /* HX_AUTO_START_* */

/* What the option tables read into: the types' own option structs (their
 * defaults from hx_*_opts_default), the coarse level shared by asm and pmg,
 * the smoother's type and kind as named (hx_pmg_opts holds them as inner +
 * kind) and Jacobi's precision. Enum fields are read through int pointers. */
typedef struct {
  int type;
  hx_asm_opts a;
  hx_pmg_opts g;
  int coarse;        /* coarse.solver: 0 none, 1 boomeramg */
  hx_coarse_opts co; /* coarse.* */
  int sm_type, sm_kind;
  int sm_type_below; /* 0: same, else smoother_types index + 1 */
  int jacobi_prec;
  hx_auto_opts au; /* type auto (its pmg's base: g) */
} pc_vals;
_Static_assert(sizeof(hx_precision) == sizeof(int) && sizeof(hx_fdm_weight) == sizeof(int) &&
                   sizeof(hx_pmg_cycle) == sizeof(int) && sizeof(hx_coarse_operator) == sizeof(int) &&
                   sizeof(hx_pmg_sides) == sizeof(int),
               "option enums are int-sized");

#define AT(f) offsetof(pc_vals, f)
#define ENUM_ROW(k_, f_, nm_, d_, h_)                                                               \
  {                                                                                                 \
    .key = k_, .type = HX_OT_ENUM, .offset = AT(f_), .names = nm_, .nnames = NELEM(nm_), .def = d_, \
    .help = h_                                                                                      \
  }
#define INT_ROW(k_, f_, lo_, hi_, h_) \
  { .key = k_, .type = HX_OT_INT, .offset = AT(f_), .min = lo_, .max = hi_, .help = h_ }
#define DBL_ROW(k_, f_, lo_, hi_, fl_, h_) \
  { .key = k_, .type = HX_OT_DOUBLE, .offset = AT(f_), .min = lo_, .max = hi_, .flags = fl_, .help = h_ }

static const hx_opt_key coarse_rows[] = {
    ENUM_ROW("solver", coarse, coarse_solvers, NULL,
             "none: no coarse level (one-level Schwarz, or pmg's last order only smoothed)"),
    ENUM_ROW("operator", co.op, coarse_ops, NULL,
             "Q1 finite elements, or P^T A P from the order-p element matrices"),
    INT_ROW("cycles", co.cycles, 1, 100, "BoomerAMG V-cycles per apply"),
    INT_ROW("coarsen_type", co.coarsen_type, 0, 22,
            "HYPRE_BoomerAMGSetCoarsenType (10: HMIS, 8: PMIS, 6: Falgout)"),
    INT_ROW("interp_type", co.interp_type, 0, 100, "HYPRE_BoomerAMGSetInterpType (6: extended+i)"),
    INT_ROW("relax_type", co.relax_type, 0, 100,
            "HYPRE_BoomerAMGSetRelaxType, symmetric only: 0, 6, 7, 8, 16, 18"),
    INT_ROW("relax_sweeps", co.relax_sweeps, 1, 100, "HYPRE_BoomerAMGSetNumSweeps"),
    DBL_ROW("strong_threshold", co.strong_threshold, 0.0, 1.0, 0, "HYPRE_BoomerAMGSetStrongThreshold"),
    INT_ROW("agg_levels", co.agg_levels, 0, 100, "levels of aggressive coarsening"),
    INT_ROW("pmax", co.pmax, 0, 100, "most interpolation entries per row"),
    INT_ROW("max_levels", co.max_levels, 1, 100, "most AMG levels"),
    INT_ROW("print_level", co.print_level, 0, 3, "BoomerAMG's own output"),
};
static const hx_opt_group coarse_group = {"preconditioner.coarse", "type: asm, pmg", coarse_rows,
                                          NELEM(coarse_rows)};

static const hx_opt_key smoother_rows[] = {
    ENUM_ROW("type", sm_type, smoother_types, NULL,
             "inner preconditioner S, plain or in a Chebyshev polynomial"),
    INT_ROW("degree", g.degree, 1, HX_CHEB_DEGREE_MAX, "polynomial degree (opt-fourth: at most 7)"),
    ENUM_ROW("kind", sm_kind, cheb_kinds, NULL, "Chebyshev kind"),
    DBL_ROW("lower", g.lower, 1e-6, 0.999, 0, "1st kind: lambda_min / rho"),
    ENUM_ROW("type_below", sm_type_below, smoother_types_below, NULL,
             "the levels below the fine one: same, or their own smoother type"),
    INT_ROW("degree_below", g.degree_below, 0, HX_CHEB_DEGREE_MAX,
            "polynomial degree of the levels below the fine one (0: degree)"),
    INT_ROW("eig_steps", g.eig_steps, 1, 60, "Lanczos steps of the lambda_max(S A) estimate"),
    DBL_ROW("eig_safety", g.eig_safety, 1.0, 10.0, 0, "rho = eig_safety x the estimate"),
};
static const hx_opt_group smoother_group = {"preconditioner.smoother", "type: pmg", smoother_rows,
                                            NELEM(smoother_rows)};

/* the default preconditioner is written here, and only here */
#define TYPE_ROW ENUM_ROW("type", type, hx_pc_type_names, "pmg", "the preconditioner")
#define PREC_ROW(f_) ENUM_ROW("precision", f_, precision_names, NULL, "arithmetic of the preconditioner")
#define COARSE_ROW(help_) \
  {.key = "coarse", .type = HX_OT_GROUP, .offset = HX_OPT_NOWHERE, .sub = &coarse_group, .help = (help_)}
#define LEVELS_ROW(help_)                                                       \
  {.key = "levels",                                                             \
   .type = HX_OT_OTHER,                                                         \
   .offset = HX_OPT_NOWHERE,                                                    \
   .def = "auto",                                                               \
   .what = "auto or a list of decreasing orders ending in 1",                   \
   .help = (help_)}

static const hx_opt_key none_rows[] = {TYPE_ROW};
static const hx_opt_key jacobi_rows[] = {TYPE_ROW, PREC_ROW(jacobi_prec)};
static const hx_opt_key asm_rows[] = {
    TYPE_ROW,
    {.key = "overlap",
     .type = HX_OT_BOOL,
     .offset = AT(a.overlap),
     .flags = HX_OPT_AUTO,
     .auto_value = HX_ASM_OVERLAP_AUTO,
     .help = "coarse level in a host thread beside the fine level"},
    ENUM_ROW("weight", a.weight, weight_names, NULL, "overlap weights of the fine level"),
    COARSE_ROW("the Q1 coarse level (BoomerAMG)"),
    PREC_ROW(a.prec),
};
static const hx_opt_key pmg_rows[] = {
    TYPE_ROW,
    LEVELS_ROW("the orders of the levels, e.g. [7, 3, 1]"),
    ENUM_ROW("cycle", g.cycle, cycle_names, NULL, "V-cycle, or every level's correction summed"),
    ENUM_ROW(
        "sides", g.sides, sides_names, NULL,
        "V-cycle: smooth down and up (symmetric), or down (pre) or up (post) only (needs solver.type fcg)"),
    {.key = "smoother",
     .type = HX_OT_GROUP,
     .offset = HX_OPT_NOWHERE,
     .sub = &smoother_group,
     .help = "the smoother of every level"},
    COARSE_ROW("the Q1 coarse level (BoomerAMG)"),
    {.key = "overlap",
     .type = HX_OT_BOOL,
     .offset = AT(g.overlap),
     .help = "additive cycle: BoomerAMG in a host thread while the levels smooth"},
    PREC_ROW(g.prec),
};
static const hx_opt_key auto_rows[] = {
    TYPE_ROW,
    ENUM_ROW(
        "start", au.start, auto_starts, NULL,
        "jacobi: Jacobi-PCG first, pmg from the iterate when the estimate says it pays; pmg: pmg at once"),
    DBL_ROW("setup_cost", au.setup_cost, 0.0, 1e9, 0, "the model: pmg's setup, in Jacobi-PCG iterations"),
    DBL_ROW("cycle_cost", au.cycle_cost, 0.0, 1e6, 0,
            "the model: one pmg iteration, in Jacobi-PCG iterations"),
    DBL_ROW("pmg_iterations", au.pmg_iterations, 0.0, 1e6, 0, "the model: pmg iterations per 1e8 reduction"),
    INT_ROW("min_iterations", au.min_iterations, 2, 1000000,
            "Jacobi-PCG iterations before the first estimate"),
    LEVELS_ROW("the orders of the pmg's levels"),
    {.key = "trial",
     .type = HX_OT_BOOL,
     .offset = AT(au.trial),
     .help = "the pmg's smoother chosen by timing candidates at its setup (trial_iterations, schwarz_above)"},
    INT_ROW("trial_iterations", au.pmg.trial_iterations, 2, 50, "trial: PCG iterations timed per candidate"),
    INT_ROW(
        "schwarz_above", au.pmg.schwarz_above, 0, 100000,
        "trial: try cheby-asm only when cheby-jacobi is estimated above this many iterations (0: always)"),
    COARSE_ROW("the Q1 coarse level (BoomerAMG) of the pmg"),
    PREC_ROW(g.prec),
};
/* one group per type, in hx_pc_type_names order */
static const hx_opt_group type_groups[] = {
    {"preconditioner", NULL, none_rows, NELEM(none_rows)},
    {"preconditioner", "type: jacobi", jacobi_rows, NELEM(jacobi_rows)},
    {"preconditioner", "type: asm", asm_rows, NELEM(asm_rows)},
    {"preconditioner", "type: pmg", pmg_rows, NELEM(pmg_rows)},
    {"preconditioner", "type: auto", auto_rows, NELEM(auto_rows)},
};

/* the defaults of type t (the types' own hx_*_opts_default) */
static void vals_default(int t, pc_vals *v) {
  memset(v, 0, sizeof *v);
  v->type = t;
  hx_asm_opts_default(&v->a);
  hx_pmg_opts_default(&v->g);
  hx_auto_opts_default(&v->au);
  v->coarse = t == PC_PMG || t == PC_AUTO ? v->g.coarse : v->a.coarse;
  v->co = t == PC_PMG || t == PC_AUTO ? v->g.coarse_opts : v->a.coarse_opts;
  v->sm_type_below = 0;
  v->sm_type = (int)v->g.inner + (v->g.kind == HX_CHEB_NONE ? 0 : 3);
  v->sm_kind = v->g.kind == HX_CHEB_NONE ? 1 /* opt-fourth */ : (int)v->g.kind - 1;
  v->jacobi_prec = HX_F64;
}

/* Read (and check) a coarse: mapping (NULL: defaults left alone). */
static int coarse_read(const hx_opt *c, pc_vals *v) {
  HX_CALL(hx_opt_read_group(c, &coarse_group, v));
  /* BoomerAMG must be a fixed SPD operator for CG: symmetric relaxations only */
  static const int symmetric[] = {0, 6, 7, 8, 16, 18};
  int ok = 0;
  for (int i = 0; i < NELEM(symmetric) && !ok; i++) ok = v->co.relax_type == symmetric[i];
  const hx_opt *rt = hx_opt_get(c, "relax_type");
  if (!ok && rt)
    return hx_opt_error(rt,
                        "%s.relax_type: %d is not a symmetric BoomerAMG relaxation; use one of 0 (Jacobi), 6 "
                        "(hybrid symmetric Gauss-Seidel), 8 (l1 symmetric Gauss-Seidel), 16 (Chebyshev), "
                        "18 (l1 Jacobi)",
                        coarse_group.path, v->co.relax_type);
  return HX_SUCCESS;
}

/* preconditioner.levels: auto (nlevels 0), a list, or (from --set
 * preconditioner.levels=[7,3,1]) a scalar "[7,3,1]" */
static int levels_read(const hx_opt *lv, hx_pmg_opts *g) {
  if (!lv || (lv->kind == HX_OPT_SCALAR && lv->value && !strcmp(lv->value, "auto"))) return HX_SUCCESS;
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
    for (char *tok = strtok_r(flat, ", ", &save); tok && n <= HX_PMG_MAX_LEVELS;
         tok = strtok_r(NULL, ", ", &save))
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
  return HX_SUCCESS;
}

/* Read (and check) the options of tree o: the type, then that type's keys
 * into *v (pmg: levels 0 = auto); *a or *g for asm and pmg. Keys of another
 * type must have been dropped before. */
static int pc_read(const hx_opt *o, pc_vals *v, hx_asm_opts *a, hx_pmg_opts *g) {
  int t = PC_JACOBI;
  HX_CALL(hx_opt_parse_default(&none_rows[0], &t));
  const hx_opt *tv = hx_opt_get(o, "type");
  if (tv) {
    const hx_opt_val val = {tv->kind, tv->value, tv->quoted, tv->where};
    HX_CALL(hx_opt_parse(&none_rows[0], "preconditioner.type", &val, &t));
  }
  vals_default(t, v);
  HX_CALL(hx_opt_read_group(o, &type_groups[t], v));
  if (t == PC_JACOBI && v->jacobi_prec == HX_F32)
    /* Jacobi is one multiplication per entry on the FP64 vectors CG hands
     * it: nothing to gain in FP32 */
    return hx_opt_error(
        hx_opt_get(o, "precision"),
        "preconditioner.precision: type jacobi has no FP32 variant (one multiplication per "
        "entry, bound by CG's FP64 vectors); remove the key, write fp64, or use type asm or pmg");
  if (t == PC_ASM) {
    HX_CALL(coarse_read(hx_opt_get(o, "coarse"), v));
    v->a.coarse = v->coarse, v->a.coarse_opts = v->co;
    *a = v->a;
  }
  if (t == PC_PMG) {
    HX_CALL(levels_read(hx_opt_get(o, "levels"), &v->g));
    const hx_opt *sm = hx_opt_get(o, "smoother");
    HX_CALL(hx_opt_read_group(sm, &smoother_group, v));
    HX_CALL(coarse_read(hx_opt_get(o, "coarse"), v));
    hx_pmg_opts *pg = &v->g;
    pg->coarse = v->coarse, pg->coarse_opts = v->co;
    pg->inner = (hx_smooth_inner)(v->sm_type % 3);
    pg->kind = v->sm_type < 3 ? HX_CHEB_NONE : (hx_cheb_kind)(v->sm_kind + 1);
    if (pg->kind == HX_CHEB_OPT_FOURTH && pg->degree > HX_CHEB_OPT_DEGREE_MAX)
      return hx_opt_error(
          hx_opt_get(sm, "degree") ? hx_opt_get(sm, "degree") : sm,
          "%s.degree: %d; the optimised 4th-kind weights are tabulated for degrees 1..%d (use "
          "kind: fourth or first for higher degrees)",
          smoother_group.path, pg->degree, HX_CHEB_OPT_DEGREE_MAX);
    pg->inner_below = v->sm_type_below ? (v->sm_type_below - 1) % 3 : -1;
    pg->kind_below = v->sm_type_below
                         ? (v->sm_type_below - 1 < 3 ? HX_CHEB_NONE : (hx_cheb_kind)(v->sm_kind + 1))
                         : pg->kind;
    const int deg_below = pg->degree_below > 0 ? pg->degree_below : pg->degree;
    if (pg->kind_below == HX_CHEB_OPT_FOURTH && deg_below > HX_CHEB_OPT_DEGREE_MAX)
      return hx_opt_error(
          hx_opt_get(sm, "degree_below") ? hx_opt_get(sm, "degree_below") : sm,
          "%s.degree_below: %d; the optimised 4th-kind weights are tabulated for degrees 1..%d (use "
          "kind: fourth or first for higher degrees)",
          smoother_group.path, deg_below, HX_CHEB_OPT_DEGREE_MAX);
    if (pg->cycle == HX_PMG_ADDITIVE && pg->sides != HX_PMG_SIDES_BOTH)
      return hx_opt_error(
          hx_opt_get(o, "sides"),
          "preconditioner.sides: %s applies to the multiplicative cycle (V-cycle); the additive "
          "cycle smooths each level once; remove the key or use cycle: multiplicative",
          sides_names[pg->sides]);
    *g = v->g;
  }
  if (t == PC_AUTO) {
    HX_CALL(levels_read(hx_opt_get(o, "levels"), &v->g));
    HX_CALL(coarse_read(hx_opt_get(o, "coarse"), v));
    v->g.coarse = v->coarse, v->g.coarse_opts = v->co;
    v->au.pmg.base = v->g;
    *g = v->g;
  }
  return HX_SUCCESS;
}

int hx_pc_options_check(hx_opt *opts) {
  if (!opts) return HX_SUCCESS;
  if (opts->kind != HX_OPT_MAP) return hx_opt_error(opts, "preconditioner: expected a mapping (type: ...)");
  int type = PC_JACOBI;
  HX_CALL(hx_opt_parse_default(&none_rows[0], &type));
  const hx_opt *tv = hx_opt_get(opts, "type");
  if (tv) {
    const hx_opt_val val = {tv->kind, tv->value, tv->quoted, tv->where};
    HX_CALL(hx_opt_parse(&none_rows[0], "preconditioner.type", &val, &type));
  }
  HX_CALL(hx_opt_set(opts, "type", hx_pc_type_names[type]));
  /* keys of another type (left over after --set preconditioner.type=...)
   * are not typos: drop them with a note; anything else is an error */
  char dropped[256] = "";
  for (int t = 0; t < NELEM(type_groups); t++)
    for (int r = 0; r < type_groups[t].n; r++) {
      const char *k = type_groups[t].keys[r].key;
      if (hx_opt_group_find(&type_groups[type], k) || !hx_opt_get(opts, k)) continue;
      hx_opt_remove(opts, k);
      const size_t off = strlen(dropped);
      snprintf(dropped + off, sizeof dropped - off, "%s%s", off ? ", " : "", k);
    }
  if (dropped[0] && hx_log_rank() == 0)
    hx_warn("preconditioner: type %s ignores %s (options of another type)\n", hx_pc_type_names[type],
            dropped);
  pc_vals v;
  hx_asm_opts a;
  hx_pmg_opts g;
  HX_CALL(pc_read(opts, &v, &a, &g));
  if (type == PC_NONE || type == PC_JACOBI) return HX_SUCCESS;
  /* the effective case lists every key */
  HX_CALL(hx_opt_write_group(opts, &type_groups[type], &v));
  if (type == PC_AUTO && g.nlevels == 0) HX_CALL(hx_opt_set(opts, "levels", "auto"));
  if (type == PC_PMG) {
    if (g.nlevels == 0) HX_CALL(hx_opt_set(opts, "levels", "auto"));
    hx_opt *sm;
    HX_CALL(hx_opt_submap(opts, "smoother", &sm));
    HX_CALL(hx_opt_write_group(sm, &smoother_group, &v));
  }
  hx_opt *c;
  HX_CALL(hx_opt_submap(opts, "coarse", &c));
  HX_CALL(hx_opt_write_group(c, &coarse_group, &v));
  return HX_SUCCESS;
}

int hx_pc_create_from_options(hx_disc d, const hx_opt *opts, hx_pc *pc) {
  *pc = NULL;
  pc_vals v;
  hx_asm_opts a;
  hx_pmg_opts g;
  HX_CALL(pc_read(opts, &v, &a, &g));
  hx_op op = hx_disc_op(d);
  switch (v.type) {
    case PC_NONE: HX_CALL(hx_pc_create_identity(op, pc)); break;
    case PC_JACOBI: HX_CALL(hx_pc_create_jacobi(op, pc)); break;
    case PC_ASM: HX_CALL(hx_pc_create_asm(d, &a, pc)); break;
    case PC_PMG: HX_CALL(hx_pc_create_pmg(d, &g, pc)); break;
    case PC_AUTO: HX_CALL(hx_pc_create_auto(d, &v.au, pc)); break;
    default: return HX_ERROR(HX_ERR_INPUT, "unknown preconditioner type %d", v.type);
  }
  return HX_SUCCESS;
}

/* Bytes per GLL node that a preconditioner adds to a Jacobi-PCG solve
 * (HX_MEM_RUN_NODE in hx_core.h), lower bounds (docs/case-format.md,
 * "Memory"). asm: both levels at the fine order, as measured before the
 * option tables (about 180-200 measured at p = 3 and 7). pmg, per node of
 * each level at its order q, weighted by its share ((q+1)/(p+1))^3 of the
 * fine nodes: the smoother (Schwarz: the FDM boxes, PMG_SCHWARZ x
 * ((q+3)/(q+1))^3 for the extended boxes; Jacobi: the diagonal and the
 * Chebyshev vectors), the level's discretisation and vectors below the fine
 * one, the Q1 level (BoomerAMG). Fitted to the peak memory of box cases
 * (CPU, default FP32, 0.5-0.9 M nodes per rank, p = 3, 5, 7, cheby-asm and
 * cheby-jacobi: 99-226 bytes per node over Jacobi-PCG); since the run's own
 * estimate (core/memory.c) is fitted to the peaks rather than a lower bound,
 * scaled to the peaks of 2-rank runs with 0.4-2M nodes per rank (box p = 3,
 * 5, 7 and Kershaw p = 3: 128-217 bytes per node over Jacobi-PCG) and of the
 * 51.5M-DOF box (38M nodes per rank): within 10 % at the small sizes, 16 %
 * over at the large one; the Schwarz figure x0.92 after the FDM's weighted
 * copies were permuted in place and uploaded after the relayout (box 20^3
 * p = 7 514 -> 486 MiB, 32^3 p = 3 314 -> 302; Kershaw unchanged); 44.3 ->
 * 35.0 after the input copy lost its extended-sized arrays and the
 * allocator gives large arrays back at free (2026-12-06: box 20^3 p = 7
 * 439 -> 411 MiB per rank; the estimate had drifted to 1.21x). */
#define PC_MEM_ASM_NODE 160.0
#define PC_MEM_PMG_SCHWARZ_NODE 35.0
#define PC_MEM_PMG_JACOBI_NODE 46.1
#define PC_MEM_PMG_LEVEL_NODE 15.8
#define PC_MEM_PMG_Q1_NODE 15.8

int hx_pc_options_mem_per_node(const hx_opt *opts, int p, double *bytes) {
  *bytes = 0.0;
  pc_vals v;
  hx_asm_opts a;
  hx_pmg_opts g;
  HX_CALL(pc_read(opts, &v, &a, &g));
  if (v.type == PC_ASM) *bytes = PC_MEM_ASM_NODE;
  if (v.type != PC_PMG && v.type != PC_AUTO) return HX_SUCCESS;
  /* auto: its pmg (the Jacobi phase holds less); with the smoother trial
   * both candidates exist at once (Jacobi, then Schwarz) */
  const int trial = v.type == PC_AUTO && v.au.trial, nsm = trial ? 2 : 1;
  for (int k = 0; k < nsm; k++) {
    if (trial) g.inner = k ? HX_SMOOTH_ASM : HX_SMOOTH_JACOBI, g.inner_below = -1;
    int levels[HX_PMG_MAX_LEVELS], n = g.nlevels;
    if (n)
      memcpy(levels, g.levels, sizeof(int) * (size_t)n);
    else
      n = hx_pmg_default_levels(p, levels);
    const double fine = (p + 1.0) * (p + 1.0) * (p + 1.0);
    for (int l = 0; l < n; l++) {
      const double q = levels[l], share = (q + 1) * (q + 1) * (q + 1) / fine, box = (q + 3) / (q + 1);
      double node = l > 0 ? PC_MEM_PMG_LEVEL_NODE : 0.0;
      if (l == n - 1 && g.coarse) /* the Q1 level: BoomerAMG, not smoothed */
        node = PC_MEM_PMG_Q1_NODE;
      else {
        const int inner = l > 0 && g.inner_below >= 0 ? g.inner_below : (int)g.inner;
        node +=
            inner == HX_SMOOTH_JACOBI ? PC_MEM_PMG_JACOBI_NODE : PC_MEM_PMG_SCHWARZ_NODE * box * box * box;
      }
      *bytes += node * share;
    }
  }
  return HX_SUCCESS;
}

int hx_pc_options_levels(const hx_opt *opts, int order, int *levels, int *n) {
  *n = 0;
  pc_vals v;
  hx_asm_opts a;
  hx_pmg_opts g;
  HX_CALL(pc_read(opts, &v, &a, &g));
  if (v.type != PC_PMG && v.type != PC_AUTO) return HX_SUCCESS;
  if (g.nlevels == 0) { /* auto */
    levels[(*n)++] = order;
    if (order > 1) levels[(*n)++] = 1;
    return HX_SUCCESS;
  }
  if (g.levels[0] != order) {
    /* the setup refuses the mismatch too, but without a position */
    const hx_opt *lv = hx_opt_get(opts, "levels");
    return hx_opt_error(
        lv && lv->kind == HX_OPT_LIST && lv->n > 0 ? lv->items[0] : lv,
        "preconditioner.levels: the first level is order %d but the case's order is %d; start "
        "the list at the order (e.g. [%d, ..., 1]) or use levels: auto",
        g.levels[0], order, order);
  }
  for (int i = 0; i < g.nlevels; i++) levels[i] = g.levels[i];
  *n = g.nlevels;
  return HX_SUCCESS;
}

int hx_pc_options_check_solver(const hx_opt *opts, int flexible, const char *solver) {
  if (flexible) return HX_SUCCESS;
  pc_vals v;
  hx_asm_opts a;
  hx_pmg_opts g;
  HX_CALL(pc_read(opts, &v, &a, &g));
  if (v.type != PC_PMG) return HX_SUCCESS;
  const hx_opt *sm = hx_opt_get(opts, "smoother");
  if (g.cycle == HX_PMG_MULTIPLICATIVE && g.sides != HX_PMG_SIDES_BOTH) {
    const hx_opt *sd = hx_opt_get(opts, "sides");
    return hx_opt_error(
        sd ? sd : opts,
        "preconditioner.sides: %s (smoothing on one side of the V-cycle only) is not symmetric, "
        "and solver.type %s needs a symmetric preconditioner; use solver.type: fcg (flexible CG) "
        "or sides: both",
        sides_names[g.sides], solver);
  }
  if (g.inner_below == HX_SMOOTH_RAS && g.inner != HX_SMOOTH_RAS) {
    const hx_opt *t = sm ? hx_opt_get(sm, "type_below") : NULL;
    return hx_opt_error(
        t ? t : opts,
        "preconditioner.smoother.type_below: %s (restricted Schwarz) is not symmetric, and "
        "solver.type %s needs a symmetric preconditioner; use solver.type: fcg (flexible CG) or a "
        "symmetric smoother (asm, cheby-asm, jacobi, cheby-jacobi)",
        smoother_types_below[v.sm_type_below], solver);
  }
  if (g.inner != HX_SMOOTH_RAS) return HX_SUCCESS;
  /* the node that chose the smoother (the defaults are symmetric) */
  const hx_opt *t = sm ? hx_opt_get(sm, "type") : NULL;
  return hx_opt_error(
      t ? t : opts,
      "preconditioner.smoother.type: %s (restricted Schwarz) is not symmetric, and solver.type %s "
      "needs a symmetric preconditioner; use solver.type: fcg (flexible CG) or a symmetric smoother "
      "(asm, cheby-asm, jacobi, cheby-jacobi)",
      smoother_types[v.sm_type], solver);
}

void hx_pc_options_print_keys(int names_only, FILE *out) {
  pc_vals v;
  for (int t = 0; t < NELEM(type_groups); t++) {
    vals_default(t, &v);
    hx_opt_print_keys(&type_groups[t], &v, t ? 1 : 0, names_only, out);
  }
  vals_default(PC_ASM, &v);
  hx_opt_print_keys(&coarse_group, &v, 0, names_only, out);
  vals_default(PC_PMG, &v);
  hx_opt_print_keys(&smoother_group, &v, 0, names_only, out);
}

/* ---------------------------------------------------------------- FP32 range */
#define HX_PC_F32_RANGE 0x1p60
int hx_pc_f32_fits(hx_disc d, hx_backend b, const char *who, const char *part, int *fits) {
  hx_op op = hx_disc_op(d);
  const int64_t n = hx_op_size(op), nown = hx_op_owned(op);
  double *d_diag = NULL, *h = NULL;
  *fits = 1;
  HX_CALL(hx_mem_alloc(b, sizeof(double) * (size_t)(n > 0 ? n : 1), (void **)&d_diag));
  int err = HX_ALLOC(&h, n > 0 ? n : 1);
  if (!err) err = hx_op_diagonal_host(op, d_diag, h);
  double mm[2] = {0.0, 0.0}; /* -min, max of the nonzero |diag| */
  for (int64_t i = 0; !err && i < nown; i++) {
    const double v = fabs(h[i]);
    if (v > 0 && (mm[0] == 0.0 || -v > mm[0])) mm[0] = -v;
    if (v > mm[1]) mm[1] = v;
  }
  free(h);
  hx_mem_free(b, (void **)&d_diag);
  HX_CALL(err);
  const MPI_Comm comm = hx_gs_comm(hx_disc_gs(d));
  for (int k = 0; k < 2; k++) /* a rank without entries has mm[k] = 0, below every other's */
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &mm[k], 1, MPI_DOUBLE, k ? MPI_MAX : MPI_MIN, comm));
  const double lo = -mm[0], hi = mm[1];
  if (hi == 0.0 || (lo >= 1.0 / HX_PC_F32_RANGE && hi <= HX_PC_F32_RANGE)) return HX_SUCCESS;
  *fits = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    fprintf(stderr,
            "hexcg: warning: %s: the operator's diagonal spans [%.3g, %.3g], outside what its FP32 %s "
            "holds ([%.2g, %.2g]): the %s runs in FP64 (preconditioner.precision: fp64 says so)\n",
            who, lo, hi, part, 1.0 / HX_PC_F32_RANGE, HX_PC_F32_RANGE, part);
  return HX_SUCCESS;
}
