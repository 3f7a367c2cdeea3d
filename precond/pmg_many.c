/* pmg on k right-hand sides at once (hx_pc_ops.apply_many of type pmg, the
 * block solve): the multiplicative V-cycle of pc_pmg.c run on k columns,
 * each column the arithmetic of its own cycle (the same bits as k
 * hx_pmg_apply), with the Chebyshev smoothers' operator applies batched
 * (hx_op_apply_many_p: each element's factors read once for the k columns,
 * one exchange message per neighbour). The inner smoother S (Jacobi,
 * Schwarz box solves), the transfers and the Q1 coarse solve run per
 * column. The additive cycle goes column by column (hx_pmg_apply). Work
 * vectors: k sets per level, kept in the context (grown on demand). */
#include <stdlib.h>
#include <string.h>

#include "pmg_cycle.h"

#define MK HX_AX_MANY_MAX

struct pmg_many_s {
  int k; /* columns allocated */
  /* per level: bv, x, r, dd, t of each column (in the level's precision) */
  void *v[HX_PMG_MAX_LEVELS][5][MK];
};

void hx_pmg_many_free(pmg *g) {
  struct pmg_many_s *m = g->many;
  if (!m) return;
  for (int l = 0; l < g->nl; l++)
    for (int i = 0; i < 5; i++)
      for (int c = 0; c < m->k; c++) hx_mem_free(g->lv[l].b, &m->v[l][i][c]);
  free(m);
  g->many = NULL;
}

static int many_work(pmg *g, int k) {
  if (g->many && g->many->k >= k) return HX_SUCCESS;
  hx_pmg_many_free(g);
  struct pmg_many_s *m = calloc(1, sizeof *m);
  HX_CHECK(m, HX_ERR_MEM, "pmg: out of memory for the k-column work");
  g->many = m;
  for (int l = 0; l < g->nl; l++) {
    const pmg_level *L = &g->lv[l];
    const size_t bytes = hx_precision_size(L->prec) * (size_t)(L->n > 0 ? L->n : 1);
    for (int i = 0; i < 5; i++)
      for (int c = 0; c < k; c++) {
        HX_CALL(hx_mem_alloc(L->b, bytes, &m->v[l][i][c]));
        m->k = c + 1 > m->k ? c + 1 : m->k;
        HX_CALL(hx_mem_zero(L->b, m->v[l][i][c], bytes));
      }
  }
  m->k = k;
  return HX_SUCCESS;
}

enum { V_BV = 0, V_X, V_R, V_DD, V_T };

/* A on the k columns at once */
static int A_many(pmg_level *L, int k, void *const *in, void *const *out) {
  HX_CALL(hx_op_apply_many_p(L->opc, k, (const void *const *)in, out, NULL));
  return HX_SUCCESS;
}

static int S_col(pmg_level *L, const void *r, void *z) {
  HX_CALL(hx_pc_apply_p(L->S[L->inner], r, z));
  return HX_SUCCESS;
}

/* hx_cheb_apply (cheby.c) on k columns: the same steps per column, the
 * operator applies of a step batched */
static int cheb_many(pmg_level *L, int k, void *const *b, void *const *x, int x_zero, void *const *r,
                     void *const *d, void *const *t) {
  const hx_cheb *ch = &L->cheb;
  const hx_precision prec = ch->prec;
  const hx_backend bk = L->b;
  const int64_t n = L->n;
  const int deg = ch->degree;
  HX_CHECK(deg >= 1 && deg <= HX_CHEB_DEGREE_MAX, HX_ERR_ARG, "smoother degree %d outside 1..%d", deg,
           HX_CHEB_DEGREE_MAX);
  if (x_zero) {
    for (int c = 0; c < k; c++) {
      HX_CALL(hx_array_copy_p(bk, prec, n, r[c], b[c]));
      HX_CALL(hx_mem_zero(bk, x[c], hx_precision_size(prec) * (size_t)n));
    }
  } else {
    HX_CALL(A_many(L, k, x, r));
    for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(bk, prec, n, r[c], 1.0, b[c], -1.0));
  }
  const double rho = ch->rho;
  if (ch->kind == HX_CHEB_NONE) {
    const double w = 4.0 / (3.0 * rho);
    for (int j = 0; j < deg; j++) {
      if (j > 0) {
        HX_CALL(A_many(L, k, x, r));
        for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(bk, prec, n, r[c], 1.0, b[c], -1.0));
      }
      for (int c = 0; c < k; c++) {
        HX_CALL(S_col(L, r[c], t[c]));
        HX_CALL(hx_array_axpby_p(bk, prec, n, x[c], w, t[c], 1.0));
      }
    }
    return HX_SUCCESS;
  }
  if (ch->kind == HX_CHEB_FIRST) {
    const double a = ch->lower * rho, theta = 0.5 * (rho + a), delta = 0.5 * (rho - a), sigma = theta / delta;
    double s0 = 1.0 / sigma;
    for (int c = 0; c < k; c++) {
      HX_CALL(S_col(L, r[c], d[c]));
      HX_CALL(hx_array_axpby_p(bk, prec, n, d[c], 0.0, d[c], 1.0 / theta));
    }
    for (int j = 1; j < deg; j++) {
      for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(bk, prec, n, x[c], 1.0, d[c], 1.0));
      HX_CALL(A_many(L, k, d, t));
      const double s1 = 1.0 / (2.0 * sigma - s0);
      for (int c = 0; c < k; c++) {
        HX_CALL(hx_array_axpby_p(bk, prec, n, r[c], -1.0, t[c], 1.0));
        HX_CALL(S_col(L, r[c], t[c]));
        HX_CALL(hx_array_axpby_p(bk, prec, n, d[c], 2.0 * s1 / delta, t[c], s1 * s0));
      }
      s0 = s1;
    }
    for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(bk, prec, n, x[c], 1.0, d[c], 1.0));
    return HX_SUCCESS;
  }
  /* 4th kind (beta = 1) or optimised 4th kind */
  double beta[HX_CHEB_DEGREE_MAX];
  for (int j = 0; j < deg; j++) beta[j] = 1.0;
  if (ch->kind == HX_CHEB_OPT_FOURTH) HX_CALL(hx_cheb_opt_betas(deg, beta));
  for (int c = 0; c < k; c++) {
    HX_CALL(S_col(L, r[c], d[c]));
    HX_CALL(hx_array_axpby_p(bk, prec, n, d[c], 0.0, d[c], 4.0 / (3.0 * rho)));
  }
  for (int j = 1; j < deg; j++) {
    for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(bk, prec, n, x[c], beta[j - 1], d[c], 1.0));
    HX_CALL(A_many(L, k, d, t));
    const double jj = (double)j;
    for (int c = 0; c < k; c++) {
      HX_CALL(hx_array_axpby_p(bk, prec, n, r[c], -1.0, t[c], 1.0));
      HX_CALL(S_col(L, r[c], t[c]));
      HX_CALL(hx_array_axpby_p(bk, prec, n, d[c], (8.0 * jj + 4.0) / ((2.0 * jj + 3.0) * rho), t[c],
                               (2.0 * jj - 1.0) / (2.0 * jj + 3.0)));
    }
  }
  for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(bk, prec, n, x[c], beta[deg - 1], d[c], 1.0));
  return HX_SUCCESS;
}

static int smooth_many(pmg *g, int l, int k, void *const *b, void *const *x, int x_zero) {
  pmg_level *L = &g->lv[l];
  hx_ev ev = hx_ev_begin(&L->ev_smooth);
  HX_CALL(cheb_many(L, k, b, x, x_zero, g->many->v[l][V_R], g->many->v[l][V_DD], g->many->v[l][V_T]));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

/* pc_pmg.c's vcycle on k columns */
static int vcycle_many(pmg *g, int l, int k, void *const *b, void *const *x) {
  pmg_level *L = &g->lv[l];
  void *const *r = g->many->v[l][V_R], *const *t = g->many->v[l][V_T];
  const int last = l == g->nl - 1;
  const int pre = g->o.sides != HX_PMG_SIDES_POST, post = g->o.sides != HX_PMG_SIDES_PRE;
  const size_t bytes = hx_precision_size(L->prec) * (size_t)L->n;
  if (pre) {
    HX_CALL(smooth_many(g, l, k, b, x, 1));
  } else if (!last || g->coarse) {
    for (int c = 0; c < k; c++) HX_CALL(hx_mem_zero(L->b, x[c], bytes));
  }
  if (!last || g->coarse) {
    if (pre) {
      HX_CALL(A_many(L, k, x, r));
      for (int c = 0; c < k; c++) HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, r[c], 1.0, b[c], -1.0));
    } else {
      for (int c = 0; c < k; c++) HX_CALL(hx_array_copy_p(L->b, L->prec, L->n, r[c], b[c]));
    }
    if (last) {
      for (int c = 0; c < k; c++) HX_CALL(hx_pmg_coarse_correct(g, L, r[c], x[c], t[c]));
    } else {
      pmg_level *C = &g->lv[l + 1];
      void *const *cb = g->many->v[l + 1][V_BV], *const *cx = g->many->v[l + 1][V_X];
      hx_ev ev = hx_ev_begin(&L->ev_transfer);
      for (int c = 0; c < k; c++) HX_CALL(hx_disc_interpolate_transpose_p(C->d, L->d, L->prec, r[c], cb[c]));
      hx_ev_end(&ev, 0.0, 0.0);
      HX_CALL(vcycle_many(g, l + 1, k, cb, cx));
      ev = hx_ev_begin(&L->ev_transfer);
      for (int c = 0; c < k; c++) {
        HX_CALL(hx_disc_interpolate_p(C->d, L->d, L->prec, cx[c], t[c]));
        HX_CALL(hx_array_axpby_p(L->b, L->prec, L->n, x[c], 1.0, t[c], 1.0));
      }
      hx_ev_end(&ev, 0.0, 0.0);
    }
  }
  if (post) HX_CALL(smooth_many(g, l, k, b, x, !pre && last && !g->coarse));
  return HX_SUCCESS;
}

int hx_pmg_apply_many(void *ctx, int k, const double *const *d_r, double *const *d_z) {
  pmg *g = (pmg *)ctx;
  if (g->o.cycle == HX_PMG_ADDITIVE || k == 1) {
    for (int c = 0; c < k; c++) HX_CALL(hx_pmg_apply(ctx, d_r[c], d_z[c]));
    return HX_SUCCESS;
  }
  HX_CHECK(k >= 0 && k <= MK, HX_ERR_ARG, "pmg: %d columns (0..%d at once)", k, MK);
  HX_CALL(many_work(g, k));
  pmg_level *L = &g->lv[0];
  const double t0 = hx_wtime(); /* the cycle's slot counts applies: k of them, the time shared */
  void *b[MK], *x[MK];
  for (int c = 0; c < k; c++) {
    b[c] = (void *)d_r[c], x[c] = d_z[c];
    if (g->prec != HX_F64) {
      HX_CALL(hx_array_convert(L->b, L->n, g->prec, g->many->v[0][V_BV][c], HX_F64, d_r[c]));
      b[c] = g->many->v[0][V_BV][c], x[c] = g->many->v[0][V_X][c];
    }
  }
  HX_CALL(vcycle_many(g, 0, k, b, x));
  if (g->prec != HX_F64)
    for (int c = 0; c < k; c++) {
      HX_CALL(hx_mem_zero(L->b, d_z[c], sizeof(double) * (size_t)L->n));
      HX_CALL(hx_array_axpy_f32_to_f64(L->b, L->n, d_z[c], 1.0, (const float *)x[c]));
    }
  HX_CALL(hx_backend_sync(g->b));
  hx_ev_add_n(&g->ev_cycle, k, hx_wtime() - t0, 0.0, 0.0); /* k cycles, the time shared */
  return HX_SUCCESS;
}
