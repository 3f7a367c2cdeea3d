/* The two-level additive Schwarz preconditioner (type asm):
 *   z = sum_s R_s^T A_s^{-1} R_s r  +  P A0^{-1} P^T r
 * fine level by fast diagonalisation (fdm*.c) on the backend, coarse level
 * (coarse*.c) on the host with hypre BoomerAMG. With overlap the coarse
 * correction runs in a host thread of its own (own communicator, one OpenMP
 * thread) while the fine level runs; it needs MPI_THREAD_MULTIPLE, without
 * it the two run one after the other (one warning). docs/preconditioner.md. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

typedef struct {
  hx_disc d;
  hx_op op;
  hx_backend b;
  int64_t ng;
  hx_asm_opts o;
  hx_precision req; /* the fine level's precision asked for (o.prec: FP64 where FP32 does not fit) */
  hx_fdm fine;
  hx_coarse coarse;
  double *h_r, *h_zc; /* host G-vectors for the coarse level (not with direct) */
  double *d_zc;       /* backend G-vector: the coarse correction (not with direct) */
  int overlap;        /* effective (MPI_THREAD_MULTIPLE granted) */
  int direct;         /* the coarse level reads d_r and adds into d_z in place (host memory, no overlap) */
  /* per-apply figures: whole applies (count: the applies); the fine level (the FDM's model bytes
   * each), the coarse level, the host copies (tied to the log events pc.asm.*) */
  hx_ev_slot ev_total, ev_fine, ev_coarse, ev_copy;
  double fine_bytes; /* the FDM's model bytes per apply */
} asm_pc;

void hx_asm_opts_default(hx_asm_opts *o) {
  *o = (hx_asm_opts){.weight = HX_FDM_WEIGHT_SQRT,
                     .overlap = HX_ASM_OVERLAP_AUTO,
                     .coarse = 1,
                     .halo_overlap = 1,
                     .prec = HX_PC_PRECISION_DEFAULT};
  hx_coarse_opts_default(&o->coarse_opts);
}

static int asm_destroy(void *ctx) {
  asm_pc *a = (asm_pc *)ctx;
  int first = hx_fdm_destroy(&a->fine), err;
  if ((err = hx_coarse_destroy(&a->coarse)) && !first) first = err;
  if ((err = hx_mem_free(a->b, (void **)&a->d_zc)) && !first) first = err;
  if ((err = hx_disc_destroy(&a->d)) && !first) first = err;
  free(a->h_r), free(a->h_zc), free(a);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

/* a new shift (hx_pc_set_shift): the boxes' eigenvalues and the coarse
 * matrix; the precision setup chose must stay */
static int asm_set_shift(void *ctx, double shift) {
  asm_pc *a = (asm_pc *)ctx;
  HX_CALL(hx_disc_set_shift(a->d, shift));
  if (a->req == HX_F32) {
    int fits = 1;
    HX_CALL(hx_pc_f32_fits(a->d, a->b, "asm", "Schwarz level", &fits));
    if ((fits ? HX_F32 : HX_F64) != a->o.prec)
      return HX_ERROR(HX_ERR_UNSUPPORTED,
                      "asm: at shift %g the Schwarz level runs in %s, not %s: make a new one", shift,
                      hx_precision_name(fits ? HX_F32 : HX_F64), hx_precision_name(a->o.prec));
  }
  HX_CALL(hx_fdm_set_lambda(a->fine, hx_disc_lambda(a->d)));
  if (a->coarse) HX_CALL(hx_coarse_set_shift_on(a->coarse, a->d));
  return HX_SUCCESS;
}

static int asm_setup(void *ctx) {
  asm_pc *a = (asm_pc *)ctx;
  hx_disc d = a->d;
  if (a->o.prec == HX_F32) {
    int fits = 1;
    HX_CALL(hx_pc_f32_fits(d, a->b, "asm", "Schwarz level", &fits));
    if (!fits) a->o.prec = HX_F64;
  }
  HX_CALL(hx_fdm_create_on(d, a->o.weight, a->o.halo_overlap, a->o.prec, &a->fine));
  hx_fdm_stats fs;
  hx_fdm_get_stats(a->fine, &fs);
  a->fine_bytes = fs.bytes_per_apply;
  if (a->o.coarse) {
    HX_CALL(hx_coarse_create_on(d, &a->o.coarse_opts, &a->coarse));
    int provided = MPI_THREAD_SINGLE;
    HX_MPI(MPI_Query_thread(&provided));
    /* auto: overlap only when the fine level runs on a device. On the CPU
     * backends the coarse thread competes with the fine level's threads
     * for the same cores, and its hypre/gather-scatter messages wait for
     * the peer rank's coarse thread to be scheduled: measured at 12^3,
     * p = 7, 2 ranks on 2 cores, the overlapped apply took 33-85 ms
     * against 15-17 ms sequential (docs/log/performance.md, "Two-level Schwarz"). */
    const int want = a->o.overlap == HX_ASM_OVERLAP_AUTO ? hx_backend_get_kind(a->b) != HX_BACKEND_CPU
                                                         : a->o.overlap != 0;
    a->overlap = want && provided == MPI_THREAD_MULTIPLE;
    if (want && !a->overlap && hx_log_rank() == 0)
      hx_warn("preconditioner.overlap: the MPI library does not provide MPI_THREAD_MULTIPLE; the coarse "
              "correction runs after the fine level instead of beside it\n");
    /* sequential on host memory: the coarse level reads the residual where
     * it is and adds its correction into z after the fine level (the bits
     * of the copies' z + zc), so the two host copies and the backend
     * correction vector are not made: 24 bytes per DOF */
    a->direct = !a->overlap && hx_backend_host_memory(a->b);
    if (!a->direct) {
      const size_t n = (size_t)(a->ng > 0 ? a->ng : 1);
      HX_CALL(HX_ALLOC(&a->h_r, n));
      HX_CALL(HX_ALLOC(&a->h_zc, n));
      HX_CALL(hx_mem_alloc(a->b, sizeof(double) * n, (void **)&a->d_zc));
    }
  }
  return HX_SUCCESS;
}

static int asm_apply(void *ctx, const double *d_r, double *d_z) {
  asm_pc *a = (asm_pc *)ctx;
  hx_ev ev = hx_ev_begin(&a->ev_total);
  const size_t bytes = sizeof(double) * (size_t)a->ng;
  if (!a->coarse) {
    hx_ev ef = hx_ev_begin(&a->ev_fine);
    HX_CALL(hx_fdm_apply(a->fine, d_r, d_z));
    hx_ev_end(&ef, a->fine_bytes, 0.0);
  } else if (a->direct) {
    hx_ev ef = hx_ev_begin(&a->ev_fine);
    HX_CALL(hx_fdm_apply(a->fine, d_r, d_z));
    HX_CALL(hx_backend_sync(a->b));
    hx_ev_end(&ef, a->fine_bytes, 0.0);
    hx_ev ec = hx_ev_begin(&a->ev_coarse);
    HX_CALL(hx_coarse_apply_add(a->coarse, d_r, d_z));
    hx_ev_end(&ec, 0.0, 0.0);
  } else {
    hx_ev ec = hx_ev_begin(&a->ev_copy);
    HX_CALL(hx_mem_to_host(a->b, a->h_r, d_r, bytes));
    hx_ev_end(&ec, 2.0 * (double)bytes, 0.0);
    hx_coarse_job job;
    hx_coarse_job_start(&job, a->coarse, a->h_r, a->h_zc, a->overlap);
    hx_ev ef = hx_ev_begin(&a->ev_fine);
    const int err = hx_fdm_apply(a->fine, d_r, d_z);
    hx_ev_end(&ef, a->fine_bytes, 0.0);
    double tc;
    HX_CALL(hx_coarse_job_join(&job, err, &tc));
    hx_ev_add(&a->ev_coarse, tc, 0.0, 0.0);
    ec = hx_ev_begin(&a->ev_copy);
    HX_CALL(hx_mem_to_device(a->b, a->d_zc, a->h_zc, bytes));
    HX_CALL(hx_array_axpby(a->b, a->ng, d_z, 1.0, a->d_zc, 1.0));
    hx_ev_end(&ec, 5.0 * (double)bytes, 0.0);
  }
  HX_CALL(hx_backend_sync(a->b));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

static void asm_describe(void *ctx, char *buf, size_t len) {
  asm_pc *a = (asm_pc *)ctx;
  snprintf(buf, len, "asm(fdm %s, weight=%s, p=%d)%s%s", hx_precision_name(a->o.prec),
           a->o.weight == HX_FDM_WEIGHT_SQRT ? "sqrt" : "none", hx_disc_order(a->d),
           a->o.coarse ? (a->o.coarse_opts.op == HX_COARSE_GALERKIN ? " + coarse(q1 galerkin, boomeramg"
                                                                     : " + coarse(q1 fem, boomeramg")
                       : "",
           a->o.coarse ? (a->overlap ? ", overlapped)" : ", sequential)") : "");
}

int hx_asm_fine_apply(hx_pc pc, const double *d_r, double *d_z) {
  HX_CHECK(pc && !strcmp(hx_pc_type(pc), "asm"), HX_ERR_ARG, "fine-level apply: not an asm preconditioner");
  asm_pc *a = (asm_pc *)hx_pc_context(pc);
  HX_CHECK(a->fine, HX_ERR_ARG, "fine-level apply: the preconditioner is not set up");
  HX_CALL(hx_fdm_apply(a->fine, d_r, d_z));
  HX_CALL(hx_backend_sync(a->b));
  return HX_SUCCESS;
}

void hx_asm_get_stats(hx_pc pc, hx_asm_stats *s) {
  memset(s, 0, sizeof *s);
  if (!pc || strcmp(hx_pc_type(pc), "asm")) return;
  asm_pc *a = (asm_pc *)hx_pc_context(pc);
  const long n = a->ev_total.count; /* the applies */
  s->applies = n;
  s->coarse = a->coarse != NULL;
  s->overlap = a->overlap;
  if (n) {
    s->t_fine = hx_ev_per(&a->ev_fine, n);
    s->t_coarse = hx_ev_per(&a->ev_coarse, n);
    s->t_total = hx_ev_per(&a->ev_total, n);
    s->t_copy = hx_ev_per(&a->ev_copy, n);
    const double m = s->t_fine > s->t_coarse ? s->t_fine : s->t_coarse;
    s->overlap_efficiency = m > 0 ? s->t_total / m : 0.0;
  }
  if (a->fine) {
    hx_fdm_stats fs;
    hx_fdm_get_stats(a->fine, &fs);
    s->t_fine_setup = fs.t_setup;
    s->fine_bytes_per_apply = fs.bytes_per_apply;
  }
  if (a->coarse) {
    hx_coarse_stats cs;
    hx_coarse_get_stats(a->coarse, &cs);
    s->t_coarse_assembly = cs.t_assembly, s->t_amg_setup = cs.t_amg_setup;
    s->coarse_rows = cs.rows_global, s->amg_levels = cs.amg_levels;
  }
}

/* the report tree's asm node (hx_pc_ops.report): its parts, the FDM fine
 * level and the Q1 coarse level */
static int asm_report(void *ctx, hx_opt *node) {
  asm_pc *a = (asm_pc *)ctx;
  hx_fdm_stats fs;
  if (a->fine) hx_fdm_get_stats(a->fine, &fs);
  else memset(&fs, 0, sizeof fs);
  const long n = a->ev_total.count; /* the applies */
  const double tf = hx_ev_per(&a->ev_fine, n), tc = hx_ev_per(&a->ev_coarse, n);
  const double tt = hx_ev_per(&a->ev_total, n);
  const double m = tf > tc ? tf : tc;
  hx_opt *part;
  HX_CALL(hx_pc_report_text(node, "precision", hx_precision_name(a->o.prec)));
  HX_CALL(hx_pc_report_map(node, "fine", &part));
  HX_CALL(hx_pc_report_int(part, "order", hx_disc_order(a->d)));
  HX_CALL(hx_pc_report_int(part, "dofs", hx_disc_num_dofs(a->d)));
  HX_CALL(hx_pc_report_text(part, "solver", "fdm"));
  HX_CALL(hx_pc_report_text(part, "weight", a->o.weight == HX_FDM_WEIGHT_SQRT ? "sqrt" : "none"));
  HX_CALL(hx_pc_report_real(part, "setup_s", fs.t_setup));
  HX_CALL(hx_pc_report_real(part, "apply_s", tf));
  {
    /* the FDM's model bytes per apply (summed over the ranks) and their rate over the slowest rank's
     * fine-level seconds (the apply_s interval) */
    double v[2] = {fs.bytes_per_apply, a->ev_fine.bytes}, sec = a->ev_fine.seconds;
    const MPI_Comm comm = hx_gs_comm(hx_disc_gs(a->d));
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, comm));
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &sec, 1, MPI_DOUBLE, MPI_MAX, comm));
    HX_CALL(hx_pc_report_real(part, "bytes_per_apply", v[0]));
    HX_CALL(hx_pc_report_real(part, "gbs", sec > 0 ? v[1] / sec * 1e-9 : 0.0));
  }
  if (a->coarse) {
    hx_coarse_stats cs;
    hx_coarse_get_stats(a->coarse, &cs);
    double eff = m > 0 ? tt / m : 0.0; /* the max over ranks, as summary.yaml's overlap_efficiency */
    HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &eff, 1, MPI_DOUBLE, MPI_MAX, hx_gs_comm(hx_disc_gs(a->d))));
    HX_CALL(hx_coarse_report(a->coarse, a->o.coarse_opts.op, node, &part));
    HX_CALL(hx_pc_report_real(part, "assembly_s", cs.t_assembly));
    HX_CALL(hx_pc_report_real(part, "amg_setup_s", cs.t_amg_setup));
    HX_CALL(hx_pc_report_real(part, "apply_s", tc));
    HX_CALL(hx_pc_report_real(part, "copy_s", hx_ev_per(&a->ev_copy, n)));
    HX_CALL(hx_pc_report_text(node, "overlap", a->overlap ? "true" : "false"));
    HX_CALL(hx_pc_report_real(node, "overlap_efficiency", eff));
  }
  HX_CALL(hx_pc_report_real(node, "total_apply_s", tt));
  return HX_SUCCESS;
}

int hx_pc_create_asm(hx_disc d, const hx_asm_opts *o, hx_pc *pc) {
  *pc = NULL;
  asm_pc *a;
  HX_CALL(HX_ALLOC(&a, 1));
  a->d = d;
  a->op = hx_disc_op(d);
  a->b = hx_disc_backend(d);
  a->ng = hx_op_size(a->op);
  a->o = *o;
  a->req = o->prec;
  int err = hx_ev_slot_init(&a->ev_fine, "pc.asm.fine");
  if (!err) err = hx_ev_slot_init(&a->ev_coarse, "pc.asm.coarse");
  if (!err) err = hx_ev_slot_init(&a->ev_copy, "pc.asm.host-copies");
  if (!err) err = hx_disc_reference(d);
  if (err) {
    free(a);
    HX_CALL(err);
  }
  const hx_pc_ops ops = {.type = "asm",
                         .setup = asm_setup,
                         .apply = asm_apply,
                         .describe = asm_describe,
                         .report = asm_report,
                         .destroy = asm_destroy,
                         .passes = 4,
                         .set_shift = asm_set_shift};
  HX_CALL(hx_pc_create_shell(a->op, &ops, a, 0, NULL, pc));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- type asm */
typedef struct {
  hx_asm_opts a;
  hx_pc_coarse_vals c;
} asm_vals;
static const char *const weight_names[] = {"none", "sqrt"}; /* hx_fdm_weight */
_Static_assert(sizeof(hx_fdm_weight) == sizeof(int) && sizeof(hx_precision) == sizeof(int),
               "option enums are int-sized");
#define AT(f) offsetof(asm_vals, f)
static const hx_opt_key asm_rows[] = {
    HX_PC_TYPE_KEY,
    {.key = "overlap",
     .type = HX_OT_BOOL,
     .offset = AT(a.overlap),
     .flags = HX_OPT_AUTO,
     .auto_value = HX_ASM_OVERLAP_AUTO,
     .help = "coarse level in a host thread beside the fine level"},
    HX_PC_ENUM("weight", AT(a.weight), weight_names, NULL, "overlap weights of the fine level"),
    HX_PC_COARSE_KEY("the Q1 coarse level (BoomerAMG)"),
    HX_PC_PREC_KEY(AT(a.prec)),
};
static const hx_opt_group asm_group = {"preconditioner", "type: asm", asm_rows, HX_NELEM(asm_rows)};

static void asm_defaults(void *vals) {
  asm_vals *v = vals;
  hx_asm_opts_default(&v->a);
  v->c = (hx_pc_coarse_vals){.solver = v->a.coarse, .co = v->a.coarse_opts};
}

static int asm_read(const hx_opt *o, void *vals) {
  asm_vals *v = vals;
  HX_CALL(hx_pc_coarse_read(hx_opt_get(o, "coarse"), &v->c));
  v->a.coarse = v->c.solver, v->a.coarse_opts = v->c.co;
  return HX_SUCCESS;
}

static int asm_write(hx_opt *o, const void *vals) {
  const asm_vals *v = vals;
  HX_CALL(hx_opt_write_group(o, &asm_group, v));
  hx_opt *c;
  HX_CALL(hx_opt_submap(o, "coarse", &c));
  HX_CALL(hx_opt_write_group(c, &hx_pc_coarse_group, &v->c));
  return HX_SUCCESS;
}

/* Bytes per GLL node that the preconditioner adds to a Jacobi-PCG solve
 * (HX_MEM_RUN_NODE in hx_core.h), a lower bound (docs/case-format.md,
 * "Memory"): both levels at the fine order, about 180-200 at p = 3 and 7. */
#define PC_MEM_ASM_NODE 160.0
static double asm_mem_per_node(const void *vals, int p) {
  (void)vals, (void)p;
  return PC_MEM_ASM_NODE;
}

static int asm_create(hx_disc d, const void *vals, hx_pc *pc) {
  HX_CALL(hx_pc_create_asm(d, &((const asm_vals *)vals)->a, pc));
  return HX_SUCCESS;
}

const hx_pc_class hx_pc_type_asm = {.name = "asm",
                                    .group = &asm_group,
                                    .sub = {&hx_pc_coarse_group},
                                    .sub_at = {AT(c)},
                                    .size = sizeof(asm_vals),
                                    .defaults = asm_defaults,
                                    .read = asm_read,
                                    .write = asm_write,
                                    .mem_per_node = asm_mem_per_node,
                                    .create = asm_create};
#undef AT
