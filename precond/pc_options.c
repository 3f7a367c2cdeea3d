/* The preconditioner factory: the type key, then the record of that type
 * (pc_types.h lists them; each pc_*.c file holds its own) reads its keys
 * into its typed options, once, into an hx_pc_config that keeps the tree
 * for the positions of later messages; the effective case, the memory
 * estimate, the levels, the solver check, hexcg keys and the create are the
 * record's. docs/case-format.md and docs/preconditioner.md list every key. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

#define HX_PC_TYPE(id_) &hx_pc_type_##id_,
static const hx_pc_class *const types[] = {
#include "pc_types.h"
};
#undef HX_PC_TYPE
#define HX_PC_TYPE(id_) #id_,
const char *const hx_pc_type_names[] = {
#include "pc_types.h"
};
#undef HX_PC_TYPE
const int hx_pc_num_types = HX_NELEM(hx_pc_type_names);
const char *const hx_pc_precision_names[2] = {"fp64", "fp32"};

/* the default preconditioner is written here, and only here */
static const hx_opt_key type_row = {.key = "type",
                                    .type = HX_OT_ENUM,
                                    .offset = 0,
                                    .names = hx_pc_type_names,
                                    .nnames = HX_NELEM(hx_pc_type_names),
                                    .def = "auto",
                                    .help = "the preconditioner"};
static const hx_opt_group type_group = {"preconditioner", NULL, &type_row, 1};

struct hx_pc_config_s {
  const hx_pc_class *type;
  const hx_opt *opts; /* borrowed: the positions of later messages */
  void *vals;         /* the type's typed options (type->size bytes) */
};

/* the index of o's type (the default when o has no type key) */
static int read_type(const hx_opt *o, int *t) {
  *t = 0;
  HX_CALL(hx_opt_parse_default(&type_row, t));
  const hx_opt *tv = hx_opt_get(o, "type");
  if (tv) {
    const hx_opt_val val = {tv->kind, tv->value, tv->quoted, tv->where};
    HX_CALL(hx_opt_parse(&type_row, "preconditioner.type", &val, t));
  }
  return HX_SUCCESS;
}

void hx_pc_config_free(hx_pc_config *cfg) {
  if (!cfg || !*cfg) return;
  free((*cfg)->vals), free(*cfg);
  *cfg = NULL;
}

int hx_pc_config_read(const hx_opt *opts, hx_pc_config *cfg) {
  *cfg = NULL;
  int t;
  HX_CALL(read_type(opts, &t));
  const hx_pc_class *ty = types[t];
  struct hx_pc_config_s *c;
  HX_CALL(HX_ALLOC(&c, 1));
  *c = (struct hx_pc_config_s){.type = ty, .opts = opts, .vals = calloc(1, ty->size ? ty->size : 1)};
  if (!c->vals) {
    free(c);
    return HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  if (ty->defaults) ty->defaults(c->vals);
  int err = hx_opt_read_group(opts, ty->group, c->vals);
  if (!err && ty->read) err = ty->read(opts, c->vals);
  if (err) {
    hx_pc_config_free(&c);
    HX_CALL(err);
  }
  *cfg = c;
  return HX_SUCCESS;
}

const char *hx_pc_config_type(hx_pc_config cfg) { return cfg->type->name; }

int hx_pc_options_check(hx_opt *opts) {
  if (!opts) return HX_SUCCESS;
  if (opts->kind != HX_OPT_MAP) return hx_opt_error(opts, "preconditioner: expected a mapping (type: ...)");
  int type;
  HX_CALL(read_type(opts, &type));
  HX_CALL(hx_opt_set(opts, "type", hx_pc_type_names[type]));
  /* keys of another type (left over after --set preconditioner.type=...)
   * are not typos: drop them with a note; anything else is an error */
  char dropped[256] = "";
  for (int t = 0; t < HX_NELEM(types); t++)
    for (int r = 0; r < types[t]->group->n; r++) {
      const char *k = types[t]->group->keys[r].key;
      if (hx_opt_group_find(types[type]->group, k) || !hx_opt_get(opts, k)) continue;
      hx_opt_remove(opts, k);
      const size_t off = strlen(dropped);
      snprintf(dropped + off, sizeof dropped - off, "%s%s", off ? ", " : "", k);
    }
  if (dropped[0] && hx_log_rank() == 0)
    hx_warn("preconditioner: type %s ignores %s (options of another type)\n", hx_pc_type_names[type],
            dropped);
  hx_pc_config c;
  HX_CALL(hx_pc_config_read(opts, &c));
  /* the effective case lists every key */
  const int err = c->type->write ? c->type->write(opts, c->vals) : HX_SUCCESS;
  hx_pc_config_free(&c);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_pc_create(hx_disc d, hx_pc_config cfg, hx_pc *pc) {
  *pc = NULL;
  HX_CALL(cfg->type->create(d, cfg->vals, pc));
  return HX_SUCCESS;
}

int hx_pc_config_mem_per_node(hx_pc_config cfg, int p, double *bytes) {
  *bytes = cfg->type->mem_per_node ? cfg->type->mem_per_node(cfg->vals, p) : 0.0;
  return HX_SUCCESS;
}

int hx_pc_config_levels(hx_pc_config cfg, int order, int *levels, int *n) {
  *n = 0;
  if (cfg->type->levels) HX_CALL(cfg->type->levels(cfg->opts, cfg->vals, order, levels, n));
  return HX_SUCCESS;
}

int hx_pc_config_check_solver(hx_pc_config cfg, int flexible, const char *solver) {
  if (flexible || !cfg->type->check_solver) return HX_SUCCESS;
  HX_CALL(cfg->type->check_solver(cfg->opts, cfg->vals, solver));
  return HX_SUCCESS;
}

/* the one-shot forms: the options read for one question */
#define ONCE(opts_, call_)                    \
  do {                                        \
    hx_pc_config c_;                          \
    HX_CALL(hx_pc_config_read((opts_), &c_)); \
    const int e_ = (call_);                   \
    hx_pc_config_free(&c_);                   \
    HX_CALL(e_);                              \
  } while (0)

int hx_pc_create_from_options(hx_disc d, const hx_opt *opts, hx_pc *pc) {
  *pc = NULL;
  ONCE(opts, hx_pc_create(d, c_, pc));
  return HX_SUCCESS;
}

int hx_pc_options_mem_per_node(const hx_opt *opts, int p, double *bytes) {
  *bytes = 0.0;
  ONCE(opts, hx_pc_config_mem_per_node(c_, p, bytes));
  return HX_SUCCESS;
}

int hx_pc_options_levels(const hx_opt *opts, int order, int *levels, int *n) {
  *n = 0;
  ONCE(opts, hx_pc_config_levels(c_, order, levels, n));
  return HX_SUCCESS;
}

int hx_pc_options_check_solver(const hx_opt *opts, int flexible, const char *solver) {
  if (flexible) return HX_SUCCESS;
  ONCE(opts, hx_pc_config_check_solver(c_, flexible, solver));
  return HX_SUCCESS;
}

void hx_pc_options_print_keys(int names_only, FILE *out) {
  hx_opt_print_keys(&type_group, NULL, 0, names_only, out);
  const hx_opt_group *done[2 * HX_NELEM(types)];
  int ndone = 0;
  for (int pass = 0; pass < 2; pass++) /* the types' keys, then their sub-mappings' */
    for (int t = 0; t < HX_NELEM(types); t++) {
      const hx_pc_class *ty = types[t];
      void *v = calloc(1, ty->size ? ty->size : 1);
      if (v && ty->defaults) ty->defaults(v);
      if (!pass) hx_opt_print_keys(ty->group, v, 1, names_only, out);
      for (int s = 0; pass && s < 2 && ty->sub[s]; s++) {
        int seen = 0;
        for (int i = 0; i < ndone; i++) seen |= done[i] == ty->sub[s];
        if (seen) continue;
        done[ndone++] = ty->sub[s];
        hx_opt_print_keys(ty->sub[s], v ? (char *)v + ty->sub_at[s] : NULL, 0, names_only, out);
      }
      free(v);
    }
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
  if (rank == 0 && hx_log_get_level() >= HX_LOG_QUIET)
    fprintf(stderr,
            "hexcg: warning: %s: the operator's diagonal spans [%.3g, %.3g], outside what its FP32 %s "
            "holds ([%.2g, %.2g]): the %s runs in FP64 (preconditioner.precision: fp64 says so)\n",
            who, lo, hi, part, 1.0 / HX_PC_F32_RANGE, HX_PC_F32_RANGE, part);
  return HX_SUCCESS;
}
