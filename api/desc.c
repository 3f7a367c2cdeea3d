/* A solver from a programmatic description (hexcg_create): the mesh from
 * arrays (hx_mesh_create_arrays), the fields (numbers, expressions,
 * callbacks) as problem/'s fields, the conditions per tag by name, the
 * preconditioner's options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_api.h"

/* one field of the description: a number, a compiled expression or the
 * caller's function */
typedef struct {
  double value;
  hx_expr *e;
  double (*fn)(void *ctx, double x, double y, double z, double t);
  void *ctx;
} api_field;

struct hx_api_desc_s {
  int nf;
  api_field *f; /* every field: kappa, lambda per coefficient, f, exact, per bc value and alpha */
  hx_problem_coef *kappa, *lambda; /* per material */
  hx_problem_bc *bc;               /* per bc */
  char (*key)[48];                 /* its "hexcg_problem.bcs[N]" */
  const hx_problem_bc **tag_bc;    /* per mesh tag */
  hx_opt *pc_opts;
};

void hx_api_desc_free(hx_api_desc **pd) {
  hx_api_desc *d = pd ? *pd : NULL;
  if (!d) return;
  for (int i = 0; i < d->nf; i++) hx_expr_destroy(&d->f[i].e);
  free(d->f), free(d->kappa), free(d->lambda), free(d->bc), free(d->key), free(d->tag_bc);
  hx_opt_free(&d->pc_opts);
  free(d);
  *pd = NULL;
}

static double field_t(const void *ctx, double x, double y, double z, double t) {
  const api_field *f = (const api_field *)ctx;
  if (f->e) return hx_expr_eval_t(f->e, x, y, z, t);
  return f->fn ? f->fn(f->ctx, x, y, z, t) : f->value;
}
static double field_x(const void *ctx, double x, double y, double z) { return field_t(ctx, x, y, z, 0.0); }

/* field i of the description from the caller's; key names it in messages */
static int field_make(hx_api_desc *d, int i, const hexcg_field *src, const char *key) {
  api_field *f = &d->f[i];
  f->value = src->value, f->fn = src->fn, f->ctx = src->ctx;
  if (src->expr) {
    const int err = hx_expr_create(src->expr, &f->e);
    if (err) {
      char why[1024];
      snprintf(why, sizeof why, "%s", hx_error_message());
      hx_error_clear();
      return HX_ERROR(HX_ERR_INPUT, "%s: the expression \"%s\": %s", key, src->expr, why);
    }
  } else if (!src->fn) {
    HX_CHECK(isfinite(src->value), HX_ERR_INPUT, "%s: the value %g is not finite", key, src->value);
  }
  return HX_SUCCESS;
}
static int field_is_set(const api_field *f) { return f->e || f->fn; }
static hx_tfield tfield(const api_field *f) {
  return field_is_set(f) ? (hx_tfield){field_t, f, NULL} : (hx_tfield){NULL, NULL, NULL};
}

/* the coefficient c (0 kappa, 1 lambda) of each material */
static int coefs(hx_api_desc *d, const hexcg_problem *p, int nmat, int *fi) {
  HX_CALL(HX_ALLOC(&d->kappa, nmat + 1));
  HX_CALL(HX_ALLOC(&d->lambda, nmat + 1));
  HX_CHECK(p->num_coefs == 0 || p->num_coefs == 1 || p->num_coefs == nmat, HX_ERR_INPUT,
           "hexcg_problem.num_coefs = %d: give 0 (kappa 1, lambda 0), 1 (for every material) or the mesh's %d "
           "materials",
           p->num_coefs, nmat);
  HX_CHECK(p->num_coefs == 0 || (p->kappa && p->lambda), HX_ERR_INPUT,
           "hexcg_problem.num_coefs = %d but kappa or lambda is NULL: give both arrays", p->num_coefs);
  for (int c = 0; c < 2; c++)
    for (int m = 0; m < nmat; m++) {
      hx_problem_coef *co = c ? &d->lambda[m] : &d->kappa[m];
      co->value = c ? 0.0 : 1.0;
      if (p->num_coefs == 0) continue;
      const int k = p->num_coefs == 1 ? 0 : m;
      char key[64];
      snprintf(key, sizeof key, "hexcg_problem.%s[%d]", c ? "lambda" : "kappa", k);
      HX_CALL(field_make(d, *fi, c ? &p->lambda[k] : &p->kappa[k], key));
      const api_field *f = &d->f[(*fi)++];
      co->value = f->value;
      if (field_is_set(f)) co->field = (hx_field){field_x, f, NULL};
    }
  return HX_SUCCESS;
}

/* the conditions per mesh tag, found by name */
static int conditions(hx_api_desc *d, const hexcg_problem *p, hx_mesh m, int *fi) {
  const int nt = hx_mesh_num_tags(m), nb = p->num_bcs;
  HX_CHECK(nb >= 0 && (nb == 0 || p->bcs), HX_ERR_INPUT, "hexcg_problem.num_bcs = %d with bcs %s", nb,
           p->bcs ? "given" : "NULL");
  HX_CALL(HX_ALLOC(&d->bc, nb + 1));
  HX_CALL(HX_ALLOC(&d->key, nb + 1));
  HX_CALL(HX_ALLOC(&d->tag_bc, nt + 1));
  for (int i = 0; i < nb; i++) {
    const hexcg_bc *b = &p->bcs[i];
    char *key = d->key[i];
    snprintf(key, sizeof d->key[i], "hexcg_problem.bcs[%d]", i);
    HX_CHECK(b->type >= HEXCG_BC_DIRICHLET && b->type <= HEXCG_BC_ROBIN, HX_ERR_INPUT,
             "%s.type = %d: give HEXCG_BC_DIRICHLET, HEXCG_BC_NEUMANN or HEXCG_BC_ROBIN", key, (int)b->type);
    int t = -1;
    for (int j = 0; j < nt && t < 0 && b->tag; j++)
      if (!strcmp(hx_mesh_tag_name(m, j), b->tag)) t = j;
    HX_CHECK(t >= 0, HX_ERR_INPUT, "%s.tag '%s' is not a boundary tag of the mesh (it has %d: the first '%s')", key,
             b->tag ? b->tag : "(NULL)", nt, nt ? hx_mesh_tag_name(m, 0) : "");
    HX_CHECK(!d->tag_bc[t], HX_ERR_INPUT, "%s.tag '%s' has a condition already (an earlier entry of bcs)", key,
             b->tag);
    char vk[64];
    snprintf(vk, sizeof vk, "%s.value", key);
    HX_CALL(field_make(d, *fi, &b->value, vk));
    const api_field *v = &d->f[(*fi)++];
    hx_problem_bc *pb = &d->bc[i];
    *pb = (hx_problem_bc){.type = (hx_bc_type)b->type, .value = v->value, .value_field = tfield(v), .key = key};
    if (b->type == HEXCG_BC_ROBIN) {
      snprintf(vk, sizeof vk, "%s.alpha", key);
      HX_CALL(field_make(d, *fi, &b->alpha, vk));
      const api_field *a = &d->f[(*fi)++];
      pb->alpha = a->value;
      if (field_is_set(a)) pb->alpha_field = (hx_field){field_x, a, NULL};
    }
    d->tag_bc[t] = pb;
  }
  return HX_SUCCESS;
}

/* the preconditioner's options {type: NAME} checked as a case file's */
static int pc_options(hexcg_solver *s, const hexcg_problem *p) {
  hx_api_desc *d = s->desc;
  const char *where = "hexcg_problem.preconditioner";
  d->pc_opts = hx_opt_new(HX_OPT_MAP, NULL, where);
  hx_opt *t = hx_opt_new(HX_OPT_SCALAR, p->preconditioner ? p->preconditioner : "pmg", where);
  HX_CHECK(d->pc_opts && t, HX_ERR_MEM, "out of memory");
  HX_CALL(hx_opt_push(d->pc_opts, "type", t));
  HX_CALL(hx_pc_options_check(d->pc_opts));
  HX_CALL(hx_pc_config_read(d->pc_opts, &s->pcc));
  int lv[HX_PC_LEVELS_MAX], n;
  HX_CALL(hx_pc_config_levels(s->pcc, s->order, lv, &n));
  return HX_SUCCESS;
}

/* the mesh from the arrays (rank 0's) */
static int mesh_of(hexcg_solver *s, const hexcg_mesh *a) {
  hx_mesh_arrays ma;
  memset(&ma, 0, sizeof ma);
  if (s->rank == 0) {
    HX_CHECK(a != NULL, HX_ERR_INPUT, "hexcg_problem.mesh is NULL on rank 0: give the mesh's arrays there");
    ma.num_vertices = a->num_vertices, ma.xyz = a->xyz, ma.num_elements = a->num_elements, ma.hex = a->hex;
    ma.material = a->material, ma.num_materials = a->num_materials, ma.material_names = a->material_names;
    ma.num_faces = a->num_faces, ma.face_vertices = a->face_vertices, ma.face_tag = a->face_tag;
    ma.num_tags = a->num_tags, ma.tag_names = a->tag_names;
  }
  HX_CALL(hx_mesh_create_arrays(s->comm, &ma, HX_PART_RCB, &s->m));
  return HX_SUCCESS;
}

int hx_api_setup_desc(hexcg_solver *s, const hexcg_problem *p) {
  HX_CHECK(p->order >= HX_ORDER_MIN && p->order <= HX_ORDER_MAX, HX_ERR_INPUT,
           "hexcg_problem.order = %d: give an order from %d to %d", p->order, HX_ORDER_MIN, HX_ORDER_MAX);
  HX_CHECK(p->tol == 0.0 || (p->tol > 0.0 && p->tol < 1.0), HX_ERR_INPUT,
           "hexcg_problem.tol = %g: give 0 < tol < 1 (0: 1e-8)", p->tol);
  HX_CHECK(p->max_iterations >= 0, HX_ERR_INPUT, "hexcg_problem.max_iterations = %d: give > 0 (0: 10000)",
           p->max_iterations);
  s->order = p->order;
  HX_CALL(HX_ALLOC(&s->desc, 1));
  hx_api_desc *d = s->desc;
  HX_CALL(pc_options(s, p));
  HX_CALL(hx_backend_create_comm(p->backend ? p->backend : "cpu", s->comm, &s->b));
  HX_CALL(mesh_of(s, p->mesh));
  const int nmat = hx_mesh_num_materials(s->m);
  d->nf = 2 * nmat + 2 + 2 * (p->num_bcs > 0 ? p->num_bcs : 0);
  HX_CALL(HX_ALLOC(&d->f, d->nf));
  int fi = 0;
  HX_CALL(coefs(d, p, nmat, &fi));
  HX_CALL(conditions(d, p, s->m, &fi));
  HX_CALL(field_make(d, fi, &p->f, "hexcg_problem.f"));
  const api_field *ff = &d->f[fi++];
  HX_CALL(field_make(d, fi, &p->exact, "hexcg_problem.exact"));
  const api_field *fe = &d->f[fi++];
  hx_problem_desc pd = hx_problem_desc_default();
  pd.origin = "hexcg_problem";
  pd.kappa = d->kappa, pd.lambda = d->lambda, pd.bc = d->tag_bc;
  /* f: a field, or a constant (a number other than 0) */
  pd.rhs = field_is_set(ff) || ff->value != 0.0 ? (hx_tfield){field_t, ff, NULL} : (hx_tfield){NULL, NULL, NULL};
  pd.rhs_key = "hexcg_problem.f";
  pd.exact = tfield(fe), pd.exact_key = "hexcg_problem.exact";
  HX_CALL(hx_problem_create(s->m, s->b, &pd, &s->prob));
  hx_pcg_opts_default(&s->po);
  s->po.rtol = p->tol > 0.0 ? p->tol : 1e-8;
  s->po.max_iterations = p->max_iterations > 0 ? p->max_iterations : 10000;
  if (field_is_set(fe)) s->exact = (hx_field){field_x, fe, NULL};
  s->exact_tf = tfield(fe);
  return HX_SUCCESS;
}
