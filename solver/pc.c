/* The preconditioner object: lifecycle, view/stats, identity and the
 * additive / multiplicative combinations (see hx_solver.h). */
#include <stdlib.h>
#include <string.h>

#include "hx_solver.h"

struct hx_pc_s {
  int refs;
  hx_pc_ops ops;
  void *ctx;
  hx_op op;
  int nchildren;
  hx_pc *children;
  int is_setup;
  hx_pc_stats stats;
};

int hx_pc_create_shell(hx_op op, const hx_pc_ops *ops, void *ctx, int nchildren, hx_pc *children, hx_pc *out) {
  *out = NULL;
  HX_CHECK(ops && ops->apply && ops->type, HX_ERR_ARG, "preconditioner operations need a type and apply");
  HX_CHECK(nchildren >= 0 && (nchildren == 0 || children), HX_ERR_ARG, "bad preconditioner children");
  hx_pc pc;
  HX_CALL(HX_ALLOC(&pc, 1));
  *pc = (struct hx_pc_s){.refs = 1, .ops = *ops, .ctx = ctx, .op = op};
  if (nchildren) {
    const int err = HX_ALLOC(&pc->children, nchildren);
    if (err) {
      free(pc);
      HX_CALL(err);
    }
    for (int i = 0; i < nchildren; i++) {
      HX_CALL(hx_pc_reference(children[i]));
      pc->children[i] = children[i];
      pc->nchildren++;
    }
  }
  *out = pc;
  return HX_SUCCESS;
}

int hx_pc_reference(hx_pc pc) {
  HX_CHECK(pc, HX_ERR_ARG, "preconditioner is NULL");
  pc->refs++;
  return HX_SUCCESS;
}

int hx_pc_destroy(hx_pc *ppc) {
  if (!ppc || !*ppc) return HX_SUCCESS;
  hx_pc pc = *ppc;
  *ppc = NULL;
  if (--pc->refs > 0) return HX_SUCCESS;
  int first = HX_SUCCESS, err;
  if (pc->ops.destroy && pc->ctx && (err = pc->ops.destroy(pc->ctx)) && !first) first = err;
  for (int i = 0; i < pc->nchildren; i++)
    if ((err = hx_pc_destroy(&pc->children[i])) && !first) first = err;
  free(pc->children);
  free(pc);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

int hx_pc_setup(hx_pc pc) {
  HX_CHECK(pc, HX_ERR_ARG, "preconditioner is NULL");
  if (pc->is_setup) return HX_SUCCESS;
  const double t0 = hx_wtime();
  for (int i = 0; i < pc->nchildren; i++) HX_CALL(hx_pc_setup(pc->children[i]));
  if (pc->ops.setup) HX_CALL(pc->ops.setup(pc->ctx));
  pc->is_setup = 1;
  pc->stats.t_setup += hx_wtime() - t0;
  return HX_SUCCESS;
}

int hx_pc_apply(hx_pc pc, const double *d_r, double *d_z) {
  HX_CHECK(pc->ops.prec == HX_F64, HX_ERR_ARG, "preconditioner %s is %s: apply it with hx_pc_apply_p",
           pc->ops.type, hx_precision_name(pc->ops.prec));
  return hx_pc_apply_p(pc, d_r, d_z);
}

hx_precision hx_pc_precision(hx_pc pc) { return pc->ops.prec; }

int hx_pc_apply_p(hx_pc pc, const void *d_r, void *d_z) {
  if (!pc->is_setup) HX_CALL(hx_pc_setup(pc));
  const double t0 = hx_wtime();
  HX_CALL(pc->ops.apply(pc->ctx, (const double *)d_r, (double *)d_z));
  pc->stats.t_apply += hx_wtime() - t0;
  pc->stats.applies++;
  return HX_SUCCESS;
}

int hx_pc_has_cg_update(hx_pc pc) { return pc && pc->ops.cg_update ? 1 : 0; }

int hx_pc_cg_update(hx_pc pc, const hx_pc_cg_step *u) {
  HX_CHECK(pc && u, HX_ERR_ARG, "NULL preconditioner or update");
  HX_CHECK(pc->ops.cg_update, HX_ERR_ARG, "preconditioner %s has no fused CG update", pc->ops.type);
  HX_CHECK(pc->ops.prec == HX_F64, HX_ERR_ARG, "preconditioner %s: the fused CG update is FP64 only",
           pc->ops.type);
  if (!pc->is_setup) HX_CALL(hx_pc_setup(pc));
  const double t0 = hx_wtime();
  HX_CALL(pc->ops.cg_update(pc->ctx, u));
  pc->stats.t_apply += hx_wtime() - t0;
  pc->stats.applies++;
  return HX_SUCCESS;
}

const char *hx_pc_type(hx_pc pc) { return pc->ops.type; }
hx_op hx_pc_op(hx_pc pc) { return pc->op; }
int hx_pc_passes(hx_pc pc) { return pc->ops.passes; }
int hx_pc_cg_update_passes(hx_pc pc) { return pc->ops.cg_update ? pc->ops.cg_update_passes : 0; }
void *hx_pc_context(hx_pc pc) { return pc->ctx; }
int hx_pc_num_children(hx_pc pc) { return pc->nchildren; }
hx_pc hx_pc_child(hx_pc pc, int i) { return i >= 0 && i < pc->nchildren ? pc->children[i] : NULL; }
void hx_pc_get_stats(hx_pc pc, hx_pc_stats *s) { *s = pc->stats; }
int hx_pc_is_symmetric(hx_pc pc) {
  if (pc->ops.nonsymmetric) return 0;
  for (int i = 0; i < pc->nchildren; i++)
    if (!hx_pc_is_symmetric(pc->children[i])) return 0;
  return 1;
}

void hx_pc_view(hx_pc pc, char *buf, size_t len) {
  if (!len) return;
  buf[0] = '\0';
  if (pc->ops.describe) pc->ops.describe(pc->ctx, buf, len);
  else snprintf(buf, len, "%s", pc->ops.type);
  if (!pc->nchildren) return;
  size_t off = strlen(buf);
  for (int i = 0; i < pc->nchildren && off + 2 < len; i++) {
    off += (size_t)snprintf(buf + off, len - off, "%s", i ? ", " : "(");
    if (off >= len) break;
    hx_pc_view(pc->children[i], buf + off, len - off);
    off += strlen(buf + off);
  }
  if (off + 1 < len) snprintf(buf + off, len - off, ")");
}

void hx_pc_report(hx_pc pc, int indent, FILE *out) {
  char desc[512];
  desc[0] = '\0';
  if (pc->ops.describe) pc->ops.describe(pc->ctx, desc, sizeof desc);
  else snprintf(desc, sizeof desc, "%s", pc->ops.type);
  fprintf(out, "%*stype: %s\n%*sdescription: \"%s\"\n", indent, "", pc->ops.type, indent, "", desc);
  fprintf(out, "%*ssetup_seconds: %.6e\n%*sapplies: %lld\n%*sapply_seconds: %.6e\n", indent, "", pc->stats.t_setup,
          indent, "", (long long)pc->stats.applies, indent, "", pc->stats.t_apply);
  if (pc->ops.report) pc->ops.report(pc->ctx, indent, out);
  if (pc->nchildren) {
    fprintf(out, "%*sparts:\n", indent, "");
    for (int i = 0; i < pc->nchildren; i++) {
      fprintf(out, "%*s-\n", indent + 2, "");
      hx_pc_report(pc->children[i], indent + 4, out);
    }
  }
}

/* ------------------------------------------------------------ identity */
static int identity_apply(void *ctx, const double *d_r, double *d_z) {
  hx_op op = (hx_op)ctx;
  HX_CALL(hx_array_copy(hx_op_backend(op), hx_op_size(op), d_z, d_r));
  return HX_SUCCESS;
}

int hx_pc_create_identity(hx_op op, hx_pc *pc) {
  const hx_pc_ops ops = {.type = "none", .apply = identity_apply, .passes = 2};
  HX_CALL(hx_pc_create_shell(op, &ops, op, 0, NULL, pc));
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ composite */
typedef struct {
  hx_op op;
  hx_pc_composition how;
  int n;
  hx_pc *parts; /* borrowed from the shell's children */
  double *d_t, *d_s; /* work G-vectors */
} composite;

static const char *const how_names[] = {"additive", "multiplicative", "symmetric"};

static int composite_destroy(void *ctx) {
  composite *c = (composite *)ctx;
  hx_backend b = hx_op_backend(c->op);
  int e1 = hx_mem_free(b, (void **)&c->d_t), e2 = hx_mem_free(b, (void **)&c->d_s);
  free(c->parts), free(c);
  HX_CALL(e1 ? e1 : e2);
  return HX_SUCCESS;
}

/* z += M_i (r - A z) */
static int composite_step(composite *c, int i, const double *d_r, double *d_z) {
  hx_backend b = hx_op_backend(c->op);
  const int64_t n = hx_op_size(c->op);
  HX_CALL(hx_op_apply(c->op, d_z, c->d_t, NULL));
  HX_CALL(hx_array_axpby(b, n, c->d_t, 1.0, d_r, -1.0)); /* t = r - A z */
  HX_CALL(hx_pc_apply(c->parts[i], c->d_t, c->d_s));
  HX_CALL(hx_array_axpby(b, n, d_z, 1.0, c->d_s, 1.0));
  return HX_SUCCESS;
}

static int composite_apply(void *ctx, const double *d_r, double *d_z) {
  composite *c = (composite *)ctx;
  hx_backend b = hx_op_backend(c->op);
  const int64_t n = hx_op_size(c->op);
  HX_CALL(hx_pc_apply(c->parts[0], d_r, d_z));
  if (c->how == HX_PC_ADDITIVE) {
    for (int i = 1; i < c->n; i++) {
      HX_CALL(hx_pc_apply(c->parts[i], d_r, c->d_s));
      HX_CALL(hx_array_axpby(b, n, d_z, 1.0, c->d_s, 1.0));
    }
    return HX_SUCCESS;
  }
  for (int i = 1; i < c->n; i++) HX_CALL(composite_step(c, i, d_r, d_z));
  if (c->how == HX_PC_SYMMETRIC)
    for (int i = c->n - 2; i >= 0; i--) HX_CALL(composite_step(c, i, d_r, d_z));
  return HX_SUCCESS;
}

static void composite_describe(void *ctx, char *buf, size_t len) {
  snprintf(buf, len, "%s", how_names[((composite *)ctx)->how]);
}

int hx_pc_create_composite(hx_op op, hx_pc_composition how, int n, hx_pc *parts, hx_pc *pc) {
  *pc = NULL;
  HX_CHECK(n >= 1 && parts, HX_ERR_ARG, "a composite preconditioner needs at least one part");
  HX_CHECK(how >= HX_PC_ADDITIVE && how <= HX_PC_SYMMETRIC, HX_ERR_ARG, "unknown composition %d", (int)how);
  composite *c;
  HX_CALL(HX_ALLOC(&c, 1));
  *c = (composite){.op = op, .how = how, .n = n};
  hx_backend b = hx_op_backend(op);
  const size_t bytes = sizeof(double) * (size_t)hx_op_size(op);
  int err = HX_ALLOC(&c->parts, n);
  if (!err) memcpy(c->parts, parts, sizeof *parts * (size_t)n);
  if (!err) err = hx_mem_alloc(b, bytes ? bytes : 8, (void **)&c->d_t);
  if (!err) err = hx_mem_alloc(b, bytes ? bytes : 8, (void **)&c->d_s);
  int passes = 0;
  for (int i = 0; i < n; i++) passes += hx_pc_passes(parts[i]) + (how == HX_PC_ADDITIVE ? 3 : 8);
  const hx_pc_ops ops = {.type = "composite",
                         .apply = composite_apply,
                         .describe = composite_describe,
                         .destroy = composite_destroy,
                         .passes = passes};
  if (!err) err = hx_pc_create_shell(op, &ops, c, n, parts, pc);
  if (err) {
    composite_destroy(c);
    HX_CALL(err);
  }
  return HX_SUCCESS;
}
