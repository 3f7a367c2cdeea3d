/* The preconditioner object: lifecycle, view, stats and report, and the
 * identity (see hx_solver.h). */
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
  hx_ev_slot ev_setup, ev_apply; /* hx_pc_stats (ev_apply.count: the applies) */
};

static int shell_new(hx_op op, const hx_pc_ops *ops, void *ctx, int nchildren, hx_pc *children, hx_pc *out) {
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

int hx_pc_create_shell(hx_op op, const hx_pc_ops *ops, void *ctx, int nchildren, hx_pc *children, hx_pc *out) {
  *out = NULL;
  const int err = shell_new(op, ops, ctx, nchildren, children, out);
  if (err && ops && ops->destroy && ctx) ops->destroy(ctx); /* taken even when this fails */
  HX_CALL(err);
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
  hx_ev ev = hx_ev_begin(&pc->ev_setup);
  for (int i = 0; i < pc->nchildren; i++) HX_CALL(hx_pc_setup(pc->children[i]));
  if (pc->ops.setup) HX_CALL(pc->ops.setup(pc->ctx));
  pc->is_setup = 1;
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

int hx_pc_set_shift(hx_pc pc, double shift) {
  HX_CHECK(pc, HX_ERR_ARG, "preconditioner is NULL");
  if (!pc->ops.set_shift)
    return HX_ERROR(HX_ERR_UNSUPPORTED, "preconditioner %s cannot change its shift in place: make a new one",
                    pc->ops.type);
  if (!pc->is_setup) return HX_SUCCESS;
  hx_ev ev = hx_ev_begin(&pc->ev_setup); /* counted as setup */
  HX_CALL(pc->ops.set_shift(pc->ctx, shift));
  hx_ev_end(&ev, 0.0, 0.0);
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
  hx_ev ev = hx_ev_begin(&pc->ev_apply);
  HX_CALL(pc->ops.apply(pc->ctx, (const double *)d_r, (double *)d_z));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

int hx_pc_apply_many(hx_pc pc, int nk, const double *const *d_r, double *const *d_z) {
  HX_CHECK(pc && nk >= 0 && (nk == 0 || (d_r && d_z)), HX_ERR_ARG, "NULL preconditioner or column arrays");
  HX_CHECK(pc->ops.prec == HX_F64, HX_ERR_ARG, "preconditioner %s is %s: the k-vector apply takes FP64 vectors",
           pc->ops.type, hx_precision_name(pc->ops.prec));
  if (nk == 0) return HX_SUCCESS;
  if (!pc->ops.apply_many) {
    for (int c = 0; c < nk; c++) HX_CALL(hx_pc_apply_p(pc, d_r[c], d_z[c]));
    return HX_SUCCESS;
  }
  if (!pc->is_setup) HX_CALL(hx_pc_setup(pc));
  const double t0 = hx_wtime(); /* nk applies in the apply slot, the time shared */
  HX_CALL(pc->ops.apply_many(pc->ctx, nk, d_r, d_z));
  hx_ev_add_n(&pc->ev_apply, nk, hx_wtime() - t0, 0.0, 0.0);
  return HX_SUCCESS;
}

int hx_pc_observes(hx_pc pc) { return pc && pc->ops.observe ? 1 : 0; }

int hx_pc_has_cg_update(hx_pc pc) {
  if (!pc || !pc->ops.cg_update) return 0;
  return pc->ops.cg_update_off && pc->ops.cg_update_off(pc->ctx) ? 0 : 1;
}

int hx_pc_cg_update(hx_pc pc, const hx_pc_cg_step *u) {
  HX_CHECK(pc && u, HX_ERR_ARG, "NULL preconditioner or update");
  HX_CHECK(pc->ops.cg_update, HX_ERR_ARG, "preconditioner %s has no fused CG update", pc->ops.type);
  HX_CHECK(pc->ops.prec == HX_F64, HX_ERR_ARG, "preconditioner %s: the fused CG update is FP64 only",
           pc->ops.type);
  if (!pc->is_setup) HX_CALL(hx_pc_setup(pc));
  hx_ev ev = hx_ev_begin(&pc->ev_apply);
  HX_CALL(pc->ops.cg_update(pc->ctx, u));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

const char *hx_pc_type(hx_pc pc) { return pc->ops.type; }
int hx_pc_passes(hx_pc pc) { return pc->ops.passes; }
int hx_pc_cg_update_passes(hx_pc pc) { return hx_pc_has_cg_update(pc) ? pc->ops.cg_update_passes : 0; }
void *hx_pc_context(hx_pc pc) { return pc->ctx; }
void hx_pc_get_stats(hx_pc pc, hx_pc_stats *s) {
  *s = (hx_pc_stats){
      .applies = pc->ev_apply.count, .t_apply = pc->ev_apply.seconds, .t_setup = pc->ev_setup.seconds};
}
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

/* ------------------------------------------------------------ report */
static int report_add(hx_opt *map, const char *key, hx_opt_kind kind, const char *value, hx_opt **sub) {
  HX_CHECK(map && (map->kind == HX_OPT_MAP) == (key != NULL) && map->kind != HX_OPT_SCALAR, HX_ERR_ARG,
           "report: %s is not a %s", key ? key : "an item", key ? "map entry" : "list item");
  hx_opt *v = hx_opt_new(kind, value, "report");
  HX_CHECK(v, HX_ERR_MEM, "out of memory");
  const int err = hx_opt_push(map, key, v);
  if (err) hx_opt_free(&v);
  HX_CALL(err);
  if (sub) *sub = v;
  return HX_SUCCESS;
}

int hx_pc_report_int(hx_opt *map, const char *key, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  HX_CALL(report_add(map, key, HX_OPT_SCALAR, buf, NULL));
  return HX_SUCCESS;
}

int hx_pc_report_real(hx_opt *map, const char *key, double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.6e", v);
  HX_CALL(report_add(map, key, HX_OPT_SCALAR, buf, NULL));
  return HX_SUCCESS;
}

int hx_pc_report_text(hx_opt *map, const char *key, const char *v) {
  HX_CALL(report_add(map, key, HX_OPT_SCALAR, v ? v : "", NULL));
  return HX_SUCCESS;
}

int hx_pc_report_map(hx_opt *map, const char *key, hx_opt **sub) {
  HX_CALL(report_add(map, key, HX_OPT_MAP, NULL, sub));
  return HX_SUCCESS;
}

int hx_pc_report_list(hx_opt *map, const char *key, hx_opt **sub) {
  HX_CALL(report_add(map, key, HX_OPT_LIST, NULL, sub));
  return HX_SUCCESS;
}

int hx_pc_observe(hx_pc pc, const hx_pc_cg_info *info, int *restart) {
  *restart = 0;
  if (!pc->ops.observe) return HX_SUCCESS;
  HX_CALL(pc->ops.observe(pc->ctx, info, restart));
  return HX_SUCCESS;
}

/* one node and, below it, its children */
int hx_pc_report_node(hx_pc pc, hx_opt *node) {
  char desc[512];
  desc[0] = '\0';
  if (pc->ops.describe) pc->ops.describe(pc->ctx, desc, sizeof desc);
  else snprintf(desc, sizeof desc, "%s", pc->ops.type);
  HX_CALL(hx_pc_report_text(node, "type", pc->ops.type));
  HX_CALL(hx_pc_report_text(node, "description", desc));
  HX_CALL(hx_pc_report_real(node, "setup_s", pc->ev_setup.seconds));
  HX_CALL(hx_pc_report_int(node, "applies", pc->ev_apply.count));
  HX_CALL(hx_pc_report_real(node, "apply_s", hx_ev_per(&pc->ev_apply, pc->ev_apply.count)));
  if (pc->ops.report) HX_CALL(pc->ops.report(pc->ctx, node));
  if (pc->nchildren) {
    hx_opt *parts, *item;
    HX_CALL(hx_pc_report_list(node, "parts", &parts));
    for (int i = 0; i < pc->nchildren; i++) {
      HX_CALL(hx_pc_report_map(parts, NULL, &item));
      HX_CALL(hx_pc_report_node(pc->children[i], item));
    }
  }
  return HX_SUCCESS;
}

/* the scalars under keys ending in _s, depth first; n counts them all,
 * at most cap are stored */
static void report_seconds(hx_opt *o, hx_opt **out, int cap, int *n) {
  for (int i = 0; i < o->n; i++) {
    hx_opt *c = o->items[i];
    if (c->kind != HX_OPT_SCALAR) {
      report_seconds(c, out, cap, n);
      continue;
    }
    const size_t len = c->key ? strlen(c->key) : 0;
    if (len < 2 || strcmp(c->key + len - 2, "_s")) continue;
    if (*n < cap) out[*n] = c;
    (*n)++;
  }
}

int hx_pc_report(hx_pc pc, MPI_Comm comm, hx_opt **tree) {
  *tree = NULL;
  HX_CHECK(pc, HX_ERR_ARG, "preconditioner is NULL");
  hx_opt *t = hx_opt_new(HX_OPT_MAP, NULL, "report");
  HX_CHECK(t, HX_ERR_MEM, "out of memory");
  hx_opt **sec = NULL;
  double *v = NULL;
  int err = hx_pc_report_node(pc, t), n = 0;
  /* the seconds: max over ranks (every rank builds the same tree); every
   * rank takes part in the first reduction, a failed one included */
  if (!err) report_seconds(t, NULL, 0, &n);
  int nn[3] = {n, -n, err != HX_SUCCESS};
  if (MPI_Allreduce(MPI_IN_PLACE, nn, 3, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS && !err)
    err = HX_ERROR(HX_ERR_MPI, "MPI_Allreduce of the report's size failed");
  if (!err && nn[2]) err = HX_ERROR(HX_ERR_INTERNAL, "report: another rank failed to build its tree");
  if (!err && nn[0] != -nn[1])
    err = HX_ERROR(HX_ERR_INTERNAL, "report: the ranks' trees differ (%d to %d timings)", -nn[1], nn[0]);
  if (!err && n) err = HX_ALLOC(&sec, n);
  if (!err && n) err = HX_ALLOC(&v, n);
  if (!err && n) {
    int k = 0;
    report_seconds(t, sec, n, &k);
    for (int i = 0; i < n; i++) v[i] = strtod(sec[i]->value, NULL);
    if (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
      err = HX_ERROR(HX_ERR_MPI, "MPI_Allreduce of the report's timings failed");
    for (int i = 0; i < n && !err; i++) {
      char buf[32];
      snprintf(buf, sizeof buf, "%.6e", v[i]);
      char *s = malloc(strlen(buf) + 1);
      if (!s) {
        err = HX_ERROR(HX_ERR_MEM, "out of memory");
        break;
      }
      memcpy(s, buf, strlen(buf) + 1);
      free(sec[i]->value);
      sec[i]->value = s;
    }
  }
  free(sec), free(v);
  if (err) {
    hx_opt_free(&t);
    HX_CALL(err);
  }
  *tree = t;
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ identity */
static int identity_apply(void *ctx, const double *d_r, double *d_z) {
  hx_op op = (hx_op)ctx;
  HX_CALL(hx_array_copy(hx_op_backend(op), hx_op_size(op), d_z, d_r));
  return HX_SUCCESS;
}

/* the identity holds nothing of the operator */
static int identity_set_shift(void *ctx, double shift) {
  (void)ctx, (void)shift;
  return HX_SUCCESS;
}

int hx_pc_create_identity(hx_op op, hx_pc *pc) {
  const hx_pc_ops ops = {
      .type = "none", .apply = identity_apply, .passes = 2, .set_shift = identity_set_shift};
  HX_CALL(hx_pc_create_shell(op, &ops, op, 0, NULL, pc));
  return HX_SUCCESS;
}
