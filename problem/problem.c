/* The problem: its description, the coefficients, the discretisation with
 * the null-space decision (see problem/hx_problem.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "problem_impl.h"

hx_problem_desc hx_problem_desc_default(void) { return (hx_problem_desc){.geometry = HX_AX_GEO_FP64}; }

double hx_problem_const_fn(const void *ctx, double x, double y, double z) {
  (void)x, (void)y, (void)z;
  return *(const double *)ctx;
}

int hx_problem_create(hx_mesh m, hx_backend b, const hx_problem_desc *desc, hx_problem *pp) {
  *pp = NULL;
  struct hx_problem_s *p;
  HX_CALL(HX_ALLOC(&p, 1));
  p->m = m, p->b = b, p->comm = hx_mesh_comm(m);
  p->nt = hx_mesh_num_tags(m), p->nmat = hx_mesh_num_materials(m);
  p->desc = *desc;
  int err = HX_ALLOC(&p->kappa, p->nmat + 1);
  if (!err) err = HX_ALLOC(&p->lambda, p->nmat + 1);
  if (!err) err = HX_ALLOC(&p->bcs, p->nt + 1);
  if (!err) err = HX_ALLOC(&p->has_bc, p->nt + 1);
  if (!err) err = HX_ALLOC(&p->ralpha, p->nt + 1);
  if (!err) err = HX_ALLOC(&p->bcp, p->nt + 1);
  if (err) {
    hx_problem_destroy(&p);
    HX_CALL(err);
  }
  for (int i = 0; i < p->nmat; i++) {
    p->kappa[i] = desc->kappa ? desc->kappa[i] : (hx_problem_coef){.value = 1.0};
    p->lambda[i] = desc->lambda ? desc->lambda[i] : (hx_problem_coef){.value = 0.0};
  }
  for (int t = 0; t < p->nt; t++) {
    const hx_problem_bc *bc = desc->bc ? desc->bc[t] : NULL;
    if (!bc) continue;
    p->bcs[t] = *bc, p->has_bc[t] = 1, p->bcp[t] = &p->bcs[t];
    if (bc->type == HX_BC_ROBIN)
      p->ralpha[t] =
          bc->alpha_field.fn ? bc->alpha_field : (hx_field){hx_problem_const_fn, &p->bcs[t].alpha, NULL};
  }
  p->desc.kappa = p->kappa, p->desc.lambda = p->lambda, p->desc.bc = p->bcp;
  if (!p->desc.origin) p->desc.origin = "problem";
  *pp = p;
  return HX_SUCCESS;
}

static void coefset_free(hx_problem_coefset *s) {
  free(s->kfield), free(s->lfield), free(s->ksrc), free(s->lsrc);
  free(s);
}

void hx_problem_destroy(hx_problem *pp) {
  if (!pp || !*pp) return;
  hx_problem p = *pp;
  while (p->sets) {
    hx_problem_coefset *s = p->sets;
    p->sets = s->next;
    coefset_free(s);
  }
  free(p->kappa), free(p->lambda), free(p->bcs), free(p->has_bc), free(p->ralpha), free(p->bcp);
  free(p);
  *pp = NULL;
}

int hx_problem_singular(hx_problem p) { return p->singular; }
const hx_problem_components *hx_problem_get_components(hx_problem p) { return &p->comps; }

int hx_problem_error(hx_problem p, int ierr) {
  if (ierr != HX_ERR_INPUT || !strstr(hx_error_message(), "Robin coefficient alpha on boundary tag '"))
    return ierr;
  char why[1024];
  snprintf(why, sizeof why, "%s", hx_error_message());
  hx_error_clear();
  const char *key = NULL;
  for (int t = 0; t < p->nt; t++) { /* the condition of the tag the message names */
    char tq[256];
    snprintf(tq, sizeof tq, "tag '%s'", hx_mesh_tag_name(p->m, t));
    if (p->ralpha[t].fn && strstr(why, tq)) key = p->bcs[t].key ? p->bcs[t].key : "boundary";
  }
  return HX_ERROR(HX_ERR_INPUT, "%s: %s.alpha: %s; give an alpha >= 0 on the whole boundary", p->desc.origin,
                  key ? key : "boundary", why);
}

/* The coefficients of one call into s and o: the constants checked, the
 * fields (the disc adds the shift: hx_disc_opts.shift, so that
 * hx_disc_set_shift changes it in place to the same bits). *nfield: the
 * fields; *lambda_any: some lambda is a field or > 0. */
static int coefficients(hx_problem p, hx_problem_coefset *s, double *kappa, double *lambda, int *nfield,
                        int *lambda_any) {
  *nfield = 0, *lambda_any = 0;
  for (int i = 0; i < p->nmat; i++) {
    for (int c = 0; c < 2; c++) {
      const hx_problem_coef *co = c ? &p->lambda[i] : &p->kappa[i];
      double *val = c ? &lambda[i] : &kappa[i];
      *val = co->value;
      (c ? s->lsrc : s->ksrc)[i] = co->src;
      const int field = co->field.fn != NULL;
      if (field) {
        (c ? s->lfield : s->kfield)[i] = co->field;
        (*nfield)++;
      } else {
        HX_CHECK(c ? *val >= 0.0 && isfinite(*val) : *val > 0.0 && isfinite(*val), HX_ERR_INPUT,
                 "%s: %s = %g must be %s", co->src ? co->src : p->desc.origin, c ? "lambda" : "kappa", *val,
                 c ? "finite and >= 0" : "finite and > 0");
      }
      if (c) *lambda_any |= field || *val > 0.0;
    }
  }
  return HX_SUCCESS;
}

static int create_timed(hx_problem p, const hx_disc_opts *o, hx_disc *d) {
  hx_timer_start(HX_T_SETUP);
  int ierr = hx_disc_create(p->m, p->b, o, d);
  hx_timer_stop(HX_T_SETUP);
  HX_CALL(hx_problem_error(p, ierr));
  return HX_SUCCESS;
}

/* The test of hx_problem_disc counts a lambda or alpha field as > 0; one
 * that is 0 at every node ("0*x", or alpha "x" on the face x = 0) leaves the
 * constants in the null space all the same, and a solve without the
 * projection then breaks down (pmg: an indefinite preconditioner). The disc
 * checked lambda >= 0 and alpha >= 0 at every node and the weights are
 * positive, so the per-element means of lambda and the Robin face weights
 * are all 0 exactly when the coefficients are 0 at every node: 1 then. */
static int zero_everywhere(hx_problem p, hx_disc d, int *zero) {
  const double *lam = hx_disc_lambda(d), *rl = hx_disc_robin_l(d);
  const int32_t ne = hx_disc_num_elements(d);
  const int64_t nl = hx_disc_num_l(d);
  double loc = 0.0, glob = 0.0;
  for (int32_t e = 0; e < ne; e++) loc = fmax(loc, lam[e]);
  for (int64_t i = 0; rl && i < nl; i++) loc = fmax(loc, rl[i]);
  HX_MPI(MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE, MPI_MAX, p->comm));
  *zero = glob == 0.0;
  return HX_SUCCESS;
}

/* the components from d's values (once per problem: a time run's reshifts keep lambda > 0) */
static int components(hx_problem p, hx_disc d) {
  int *fixed = NULL;
  int err = HX_ALLOC(&fixed, hx_disc_num_elements(d) + 1);
  if (!err) err = hx_disc_fixed_elements(d, fixed);
  if (!err) err = hx_problem_decide_components(p, fixed, &p->comps);
  free(fixed);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int make_disc(hx_problem p, int order, double shift, hx_problem_coefset *s, hx_disc *d) {
  double *kappa = NULL, *lambda = NULL;
  int *dtag = NULL, nfield = 0, lambda_any = 0;
  int err = HX_ALLOC(&kappa, p->nmat + 1);
  if (!err) err = HX_ALLOC(&lambda, p->nmat + 1);
  if (!err) err = HX_ALLOC(&dtag, p->nt + 1);
  if (!err) err = coefficients(p, s, kappa, lambda, &nfield, &lambda_any);
  int ndirichlet = 0, nrobin = 0, nrobin_pos = 0;
  for (int t = 0; !err && t < p->nt; t++) {
    const hx_problem_bc *bc = p->has_bc[t] ? &p->bcs[t] : NULL;
    dtag[t] = bc && bc->type == HX_BC_DIRICHLET;
    ndirichlet += dtag[t];
    if (bc && bc->type == HX_BC_ROBIN) {
      nrobin++;
      nrobin_pos += bc->alpha_field.fn != NULL || bc->alpha > 0; /* a field counts as alpha > 0 */
    }
  }
  hx_disc_opts o = hx_disc_opts_default();
  o.p = order, o.kappa = kappa, o.lambda = lambda, o.dirichlet_tag = dtag, o.shift = shift;
  o.robin_alpha = nrobin ? p->ralpha : NULL;
  /* pure Neumann: the constants are the null space (no Dirichlet tag,
   * lambda = 0, no Robin alpha > 0); solved for the zero-mean solution */
  p->singular = o.nullspace = ndirichlet == 0 && !lambda_any && nrobin_pos == 0 && shift == 0.0;
  o.geometry = p->desc.geometry;
  if (!err && nfield) {
    o.kappa_field = s->kfield, o.lambda_field = s->lfield;
    o.kappa_src = s->ksrc, o.lambda_src = s->lsrc;
  }
  if (!err) err = create_timed(p, &o, d);
  if (!err && !p->singular && ndirichlet == 0 && shift == 0.0) {
    int zero = 0;
    err = zero_everywhere(p, *d, &zero);
    if (!err && zero) {
      hx_log(HX_LOG_NORMAL,
             "note: %s: lambda%s 0 at every node and no tag is Dirichlet: the constants are the "
             "operator's null space (pure Neumann), solved for the zero-mean solution\n",
             p->desc.origin, nrobin ? " and every Robin alpha are" : " is");
      err = hx_disc_destroy(d);
      p->singular = o.nullspace = 1;
      if (!err) err = create_timed(p, &o, d);
    }
  }
  free(kappa), free(lambda), free(dtag);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_problem_disc(hx_problem p, int order, double shift, hx_disc *d) {
  *d = NULL;
  hx_problem_coefset *s;
  HX_CALL(HX_ALLOC(&s, 1));
  const int n = p->nmat + 1;
  int err = HX_ALLOC(&s->kfield, n);
  if (!err) err = HX_ALLOC(&s->lfield, n);
  if (!err) err = HX_ALLOC(&s->ksrc, n);
  if (!err) err = HX_ALLOC(&s->lsrc, n);
  if (err) {
    coefset_free(s);
    HX_CALL(err);
  }
  s->next = p->sets, p->sets = s;
  HX_CALL(make_disc(p, order, shift, s, d));
  if (!p->comps.n) HX_CALL(components(p, *d));
  return HX_SUCCESS;
}

int hx_problem_check_coefs(hx_problem p, int order, double shift) {
  hx_mesh m = p->m;
  const int n3 = (order + 1) * (order + 1) * (order + 1);
  const int32_t E = hx_mesh_num_elements(m), *mat = hx_mesh_element_material(m);
  double *xyz = NULL;
  int err = HX_ALLOC(&xyz, 3 * n3);
  for (int c = 0; c < 2 && !err; c++)
    for (int32_t e = 0; e < E && !err; e++) {
      const hx_problem_coef *co = c ? &p->lambda[mat[e]] : &p->kappa[mat[e]];
      if (!co->field.fn) continue;
      double *x = xyz, *y = xyz + n3, *z = xyz + 2 * n3;
      err = hx_mesh_gll_coords_range(m, order, e, e + 1, x, y, z);
      for (int q = 0; q < n3 && !err; q++) {
        const double v = co->field.fn(co->field.ctx, x[q], y[q], z[q]) + (c ? shift : 0.0);
        if (!hx_disc_coef_valid(c, v))
          err = hx_disc_coef_node_error(c, v, x[q], y[q], z[q], (long long)hx_mesh_element_global_ids(m)[e],
                                        hx_mesh_material_name(m, mat[e]), order, co->src);
      }
    }
  free(xyz);
  HX_CALL(hx_error_agree(p->comm, err));
  return HX_SUCCESS;
}
