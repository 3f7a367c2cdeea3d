/* The problem's data at a time t at the GLL nodes of a discretisation:
 * right-hand side, Dirichlet values, Neumann and Robin loads (see
 * problem/hx_problem.h, hx_problem_data). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "problem_impl.h"

/* a time field at a fixed t, as an hx_field */
typedef struct {
  const hx_tfield *f;
  double t;
} at_t;
static double at_t_fn(const void *ctx, double x, double y, double z) {
  const at_t *c = (const at_t *)ctx;
  return c->f->fn(c->f->ctx, x, y, z, c->t);
}

/* the values of f at n points at time t */
static void eval_n(const hx_tfield *f, size_t n, const double *x, const double *y, const double *z, double t,
                   double *out) {
  if (!f->fn) {
    memset(out, 0, sizeof(double) * n);
  } else if (f->fn_n) {
    f->fn_n(f->ctx, n, x, y, z, t, out);
  } else {
    for (size_t i = 0; i < n; i++) out[i] = f->fn(f->ctx, x[i], y[i], z[i], t);
  }
}

/* the description's check, or the default message */
static int check(hx_problem p, const char *key, const void *src, size_t n, const double *x, const double *y,
                 const double *z, const double *v) {
  if (p->desc.check_finite) return p->desc.check_finite(p->desc.check_ctx, key, src, n, x, y, z, v);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return HX_ERROR(HX_ERR_INPUT, "%s: %s: not finite at the mesh node (%.17g, %.17g, %.17g) (value %g)",
                      p->desc.origin, key, x[i], y[i], z[i], v[i]);
  return HX_SUCCESS;
}

static void bc_key(const hx_problem_bc *bc, const char *what, char *key, size_t len) {
  snprintf(key, len, "%s.%s", bc->key ? bc->key : "boundary", what);
}

/* f, and the exact solution checked (flags & HX_PROBLEM_DATA_EXACT) a chunk
 * of nodes at a time (the caller keeps no array of it). */
static int rhs(hx_problem p, int64_t nl, const double *X, const double *Y, const double *Z, double t, int flags,
               double *hf) {
  eval_n(&p->desc.rhs, (size_t)nl, X, Y, Z, t, hf);
  int ferr = check(p, p->desc.rhs_key ? p->desc.rhs_key : "rhs", p->desc.rhs_src, (size_t)nl, X, Y, Z, hf);
  if (p->desc.exact.fn && (flags & HX_PROBLEM_DATA_EXACT) && !ferr) {
    enum { CHUNK = 4096 };
    double v[CHUNK];
    for (int64_t i = 0; !ferr && i < nl; i += CHUNK) {
      const size_t k = (size_t)(nl - i < CHUNK ? nl - i : CHUNK);
      eval_n(&p->desc.exact, k, X + i, Y + i, Z + i, t, v);
      ferr = check(p, p->desc.exact_key ? p->desc.exact_key : "exact", p->desc.exact_src, k, X + i, Y + i,
                   Z + i, v);
    }
  }
  return ferr;
}

/* u = value on each Dirichlet tag into hg */
static int dirichlet(hx_problem p, hx_disc d, const double *X, const double *Y, const double *Z, double t,
                     double *hg, int *ferr) {
  const int64_t nl = hx_disc_num_l(d);
  for (int tg = 0; tg < p->nt; tg++) {
    const hx_problem_bc *bc = &p->bcs[tg];
    if (!p->has_bc[tg] || bc->type != HX_BC_DIRICHLET) continue;
    const hx_tfield *vf = bc->value_exact ? &p->desc.exact : &bc->value_field;
    at_t c = {vf, t};
    hx_field g = vf->fn ? (hx_field){at_t_fn, &c, NULL} : (hx_field){hx_problem_const_fn, &bc->value, NULL};
    HX_CALL(hx_disc_dirichlet_values(d, tg, g, hg));
    char key[256];
    bc_key(bc, "value", key, sizeof key);
    if (!*ferr) *ferr = check(p, key, bc->value_src, (size_t)nl, X, Y, Z, hg);
  }
  return HX_SUCCESS;
}

/* kappa du/dn (+ alpha u) = value on each Neumann and Robin tag, summed into
 * *hbn (allocated at the first tag with a load) */
static int neumann(hx_problem p, hx_disc d, const double *X, const double *Y, const double *Z, double t,
                   double **hbn, int *ferr) {
  const int64_t nl = hx_disc_num_l(d);
  for (int tg = 0; tg < p->nt; tg++) {
    const hx_problem_bc *bc = &p->bcs[tg];
    if (!p->has_bc[tg] || bc->type == HX_BC_DIRICHLET) continue;
    HX_CHECK(!bc->value_exact, HX_ERR_INPUT,
             "%s: boundary on tag '%s': a Neumann or Robin condition needs the data (kappa du/dn, or "
             "kappa du/dn + alpha u) as its value (a number or an expression), not 'exact'",
             p->desc.origin, hx_mesh_tag_name(p->m, tg));
    if (!bc->value_field.fn && bc->value == 0.0) continue;
    if (!*hbn) HX_CALL(HX_ALLOC(hbn, nl));
    at_t c = {&bc->value_field, t};
    hx_field g = bc->value_field.fn ? (hx_field){at_t_fn, &c, NULL}
                                    : (hx_field){hx_problem_const_fn, &bc->value, NULL};
    HX_CALL(hx_disc_neumann_load(d, tg, g, *hbn));
    char key[256];
    bc_key(bc, "value", key, sizeof key);
    if (!*ferr) *ferr = check(p, key, bc->value_src, (size_t)nl, X, Y, Z, *hbn);
  }
  return HX_SUCCESS;
}

int hx_problem_data(hx_problem p, hx_disc d, double t, int flags, double **hf, double **hg, double **hbn) {
  const int64_t nl = hx_disc_num_l(d);
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  /* a time loop calls this once per step: the arrays stay */
  if (!*hf) HX_CALL(HX_ALLOC(hf, nl));
  if (!*hg) HX_CALL(HX_ALLOC(hg, nl));
  if (*hbn) memset(*hbn, 0, sizeof(double) * (size_t)nl); /* the loads are added up */
  int ferr = rhs(p, nl, X, Y, Z, t, flags, *hf);
  HX_CALL(hx_error_agree(p->comm, ferr));
  HX_CALL(dirichlet(p, d, X, Y, Z, t, *hg, &ferr));
  HX_CALL(hx_error_agree(p->comm, ferr));
  HX_CALL(neumann(p, d, X, Y, Z, t, hbn, &ferr));
  HX_CALL(hx_error_agree(p->comm, ferr));
  return HX_SUCCESS;
}
