/* Chebyshev-Jacobi (type cheby): one level, z = q(D^-1 A) D^-1 r, the
 * polynomial smoother of cheby.c from x = 0 around the Jacobi
 * preconditioner D^-1 (the exact assembled diagonal), in FP64; rho = eig_safety
 * x the Lanczos estimate of lambda_max(D^-1 A) at setup. With kind fourth
 * the error polynomial is W_k(1 - 2 lambda/rho)/(2k+1), so z = q(D^-1 A) D^-1 r
 * with q(lambda) = (1 - W_k(1 - 2 lambda/rho)/(2k+1))/lambda; symmetric and
 * positive for lambda in (0, rho]. No coarse level: the iterations grow
 * with the mesh like Jacobi's, divided by about the degree. The type is the
 * registry's example: this file and one line in private/pc_types.h.
 * docs/preconditioner.md "type: cheby". */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

typedef struct {
  int degree;
  int kind; /* cheb_kinds index: hx_cheb_kind - 1 */
  double lower;
  int eig_steps;
  double eig_safety;
} cheby_vals;

typedef struct {
  hx_disc d;
  hx_op op;
  hx_backend b;
  int64_t n;
  cheby_vals o;
  hx_pc jac;
  hx_cheb cheb;
  double est;
  void *w[4]; /* r, d, t of the recurrence; the estimate's fourth */
} cheby_pc;

static int cheby_A(void *ctx, const void *x, void *y) {
  cheby_pc *c = ctx;
  HX_CALL(hx_op_apply(c->op, x, y, NULL));
  return HX_SUCCESS;
}

static int cheby_S(void *ctx, const void *r, void *z) {
  cheby_pc *c = ctx;
  HX_CALL(hx_pc_apply(c->jac, r, z));
  return HX_SUCCESS;
}

/* the bound rho from the Lanczos estimate (its start vector is seeded by
 * the global ids: the same on every call) */
static int cheby_bound(cheby_pc *c) {
  const size_t bytes = sizeof(double) * (size_t)(c->n > 0 ? c->n : 1);
  void *v;
  HX_CALL(hx_mem_alloc(c->b, bytes, &v));
  int err = hx_eig_start_vector(c->d, HX_F64, v);
  if (!err)
    err =
        hx_eig_max_estimate(c->b, HX_F64, c->n, hx_op_owned(c->op), hx_gs_comm(hx_disc_gs(c->d)), cheby_A, c,
                            cheby_S, c, 1, c->o.eig_steps, v, c->w[0], c->w[1], c->w[2], c->w[3], &c->est);
  hx_mem_free(c->b, &v);
  HX_CALL(err);
  c->cheb = (hx_cheb){.kind = (hx_cheb_kind)(c->o.kind + 1),
                      .degree = c->o.degree,
                      .rho = c->o.eig_safety * c->est,
                      .lower = c->o.lower,
                      .prec = HX_F64};
  return HX_SUCCESS;
}

static int cheby_setup(void *ctx) {
  cheby_pc *c = ctx;
  const size_t bytes = sizeof(double) * (size_t)(c->n > 0 ? c->n : 1);
  for (int i = 0; i < 4; i++) HX_CALL(hx_mem_alloc(c->b, bytes, &c->w[i]));
  HX_CALL(hx_pc_create_jacobi(c->op, &c->jac));
  HX_CALL(hx_pc_setup(c->jac));
  HX_CALL(cheby_bound(c));
  return HX_SUCCESS;
}

/* a new shift (hx_pc_set_shift): the diagonal, then the bound */
static int cheby_set_shift(void *ctx, double shift) {
  cheby_pc *c = ctx;
  HX_CALL(hx_disc_set_shift(c->d, shift));
  HX_CALL(hx_pc_set_shift(c->jac, shift));
  HX_CALL(cheby_bound(c));
  return HX_SUCCESS;
}

static int cheby_apply(void *ctx, const double *d_r, double *d_z) {
  cheby_pc *c = ctx;
  HX_CALL(
      hx_cheb_apply(c->b, c->n, &c->cheb, cheby_A, c, cheby_S, c, d_r, d_z, 1, c->w[0], c->w[1], c->w[2]));
  return HX_SUCCESS;
}

static const char *const cheb_kinds[] = {"fourth", "opt-fourth", "first"}; /* hx_cheb_kind - 1 */

static void cheby_describe(void *ctx, char *buf, size_t len) {
  const cheby_pc *c = ctx;
  snprintf(buf, len, "cheby(jacobi, %s degree %d)", cheb_kinds[c->o.kind], c->o.degree);
}

static int cheby_report(void *ctx, hx_opt *node) {
  const cheby_pc *c = ctx;
  HX_CALL(hx_pc_report_text(node, "kind", cheb_kinds[c->o.kind]));
  HX_CALL(hx_pc_report_int(node, "degree", c->o.degree));
  HX_CALL(hx_pc_report_real(node, "eig_estimate", c->est));
  HX_CALL(hx_pc_report_real(node, "rho", c->cheb.rho));
  return HX_SUCCESS;
}

static int cheby_destroy(void *ctx) {
  cheby_pc *c = ctx;
  int first = hx_pc_destroy(&c->jac), err;
  for (int i = 0; i < 4; i++)
    if (c->w[i] && (err = hx_mem_free(c->b, &c->w[i])) && !first) first = err;
  if ((err = hx_disc_destroy(&c->d)) && !first) first = err;
  free(c);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

double hx_pc_cheby_rho(hx_pc pc) {
  if (!pc || strcmp(hx_pc_type(pc), "cheby")) return 0.0;
  return ((const cheby_pc *)hx_pc_context(pc))->cheb.rho;
}

/* ---------------------------------------------------------------- type cheby */
#define AT(f) offsetof(cheby_vals, f)
static const hx_opt_key cheby_rows[] = {
    HX_PC_TYPE_KEY,
    HX_PC_INT("degree", AT(degree), 1, HX_CHEB_DEGREE_MAX,
              "polynomial degree: Jacobi applications per apply (opt-fourth: at most 7)"),
    HX_PC_ENUM("kind", AT(kind), cheb_kinds, NULL, "Chebyshev kind"),
    HX_PC_DBL("lower", AT(lower), 1e-6, 0.999, 0, "1st kind: lambda_min / rho"),
    HX_PC_INT("eig_steps", AT(eig_steps), 1, 60, "Lanczos steps of the lambda_max(D^-1 A) estimate"),
    HX_PC_DBL("eig_safety", AT(eig_safety), 1.0, 10.0, 0, "rho = eig_safety x the estimate"),
};
static const hx_opt_group cheby_group = {"preconditioner", "type: cheby", cheby_rows, HX_NELEM(cheby_rows)};

static void cheby_defaults(void *vals) {
  *(cheby_vals *)vals = (cheby_vals){
      .degree = 3, .kind = HX_CHEB_OPT_FOURTH - 1, .lower = 0.1, .eig_steps = 12, .eig_safety = 1.1};
}

static int cheby_read(const hx_opt *o, void *vals) {
  const cheby_vals *v = vals;
  if (v->kind + 1 != HX_CHEB_OPT_FOURTH || v->degree <= HX_CHEB_OPT_DEGREE_MAX) return HX_SUCCESS;
  return hx_opt_error(
      hx_opt_get(o, "degree") ? hx_opt_get(o, "degree") : o,
      "preconditioner.degree: %d; the optimised 4th-kind weights are tabulated for degrees 1..%d "
      "(use kind: fourth or first for higher degrees)",
      v->degree, HX_CHEB_OPT_DEGREE_MAX);
}

static int cheby_write(hx_opt *o, const void *vals) {
  HX_CALL(hx_opt_write_group(o, &cheby_group, vals));
  return HX_SUCCESS;
}

/* the diagonal, 4 work vectors, Jacobi's inverse diagonal */
static double cheby_mem_per_node(const void *vals, int p) {
  (void)vals, (void)p;
  return 6 * sizeof(double);
}

static int cheby_create(hx_disc d, const void *vals, hx_pc *pc) {
  *pc = NULL;
  cheby_pc *c;
  HX_CALL(HX_ALLOC(&c, 1));
  *c = (cheby_pc){.d = d, .op = hx_disc_op(d), .b = hx_disc_backend(d), .o = *(const cheby_vals *)vals};
  c->n = hx_op_size(c->op);
  int err = hx_disc_reference(d);
  if (err) {
    free(c);
    HX_CALL(err);
  }
  /* passes per apply: degree steps of an operator apply, a Jacobi apply and ~6 vector passes */
  const hx_pc_ops ops = {.type = "cheby",
                         .setup = cheby_setup,
                         .apply = cheby_apply,
                         .describe = cheby_describe,
                         .report = cheby_report,
                         .destroy = cheby_destroy,
                         .passes = 6 * c->o.degree,
                         .set_shift = cheby_set_shift};
  HX_CALL(hx_pc_create_shell(c->op, &ops, c, 0, NULL, pc));
  return HX_SUCCESS;
}

const hx_pc_class hx_pc_type_cheby = {.name = "cheby",
                                      .group = &cheby_group,
                                      .size = sizeof(cheby_vals),
                                      .defaults = cheby_defaults,
                                      .read = cheby_read,
                                      .write = cheby_write,
                                      .mem_per_node = cheby_mem_per_node,
                                      .create = cheby_create};
#undef AT
