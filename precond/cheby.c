/* Polynomial smoothers around an inner preconditioner S (Jacobi, Schwarz)
 * and the estimate of the largest eigenvalue of S A they need.
 *
 * 4th kind (Lottes 2022, "Optimal polynomial smoothers for multigrid
 * V-cycles", arXiv 2202.08830; Phillips & Fischer 2022, arXiv 2210.03179),
 * rho an upper bound of lambda_max(S A):
 *   r = b - A x;  d = 4/(3 rho) S r
 *   for j = 1 .. k-1:  x += beta_j d;  r -= A d;
 *                      d = (2j-1)/(2j+3) d + (8j+4)/((2j+3) rho) S r
 *   x += beta_k d
 * beta_j = 1 (4th kind): the error polynomial is W_k(1 - 2 lambda/rho)/(2k+1)
 * with W_k the 4th-kind Chebyshev polynomial, W_k(cos t) = sin((k+1/2)t) /
 * sin(t/2); optimised weights beta_j from Lottes's Table (below) make
 * max sqrt(lambda/rho) |p(lambda)| smaller still. The residual recursion
 * uses the unweighted d (the weights only recombine the same directions).
 *
 * 1st kind on [a, rho] (a = lower * rho): theta = (rho + a)/2, delta =
 * (rho - a)/2, sigma = theta/delta; error polynomial
 * T_k((theta - lambda)/delta) / T_k(sigma):
 *   r = b - A x;  s0 = 1/sigma;  d = S r / theta
 *   for j = 1 .. k-1:  x += d;  r -= A d;  s1 = 1/(2 sigma - s0);
 *                      d = s1 s0 d + (2 s1/delta) S r;  s0 = s1
 *   x += d
 *
 * With a symmetric S every kind is a fixed polynomial in S A times S, so the
 * smoother is self-adjoint in the A inner product (pre- and post-smoothing
 * with the same polynomial keep a V-cycle symmetric). docs/preconditioner.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

/* LAPACK: eigenvalues of a symmetric tridiagonal matrix */
extern void dstev_(const char *jobz, const int *n, double *d, double *e, double *z, const int *ldz,
                   double *work, int *info, size_t);

/* The optimised weights of the 4th-kind smoother: Lottes (2022), arXiv
 * 2202.08830, table of beta_j for degrees 1..7 (the numbers of the paper;
 * t340-cheby checks that they improve on beta = 1). */
static const double opt_betas[HX_CHEB_OPT_DEGREE_MAX][HX_CHEB_OPT_DEGREE_MAX] = {
    {1.12500000000000},
    {1.02387287570313, 1.26408905371085},
    {1.00842544782028, 1.08867839208730, 1.33753125909618},
    {1.00391310427285, 1.04035811188593, 1.14863498546254, 1.38268869241000},
    {1.00212930146164, 1.02173711549260, 1.07872433192603, 1.19810065292663, 1.41322542791682},
    {1.00128517255940, 1.01304293035233, 1.04678215124113, 1.11616489419675, 1.23829020218444,
     1.43524297106744},
    {1.00083464397912, 1.00843949430122, 1.03008707768713, 1.07408384092003, 1.15036186707366,
     1.27116474046139, 1.45186658649364}};

int hx_cheb_opt_betas(int degree, double *beta) {
  HX_CHECK(degree >= 1 && degree <= HX_CHEB_OPT_DEGREE_MAX, HX_ERR_ARG,
           "optimised 4th-kind Chebyshev: degree %d outside 1..%d", degree, HX_CHEB_OPT_DEGREE_MAX);
  for (int j = 0; j < degree; j++) beta[j] = opt_betas[degree - 1][j];
  return HX_SUCCESS;
}

int hx_cheb_apply(hx_backend b, int64_t n, const hx_cheb *c, hx_lin_fn A, void *actx, hx_lin_fn S, void *sctx,
                  const void *d_b, void *d_x, int x_zero, void *d_r, void *d_d, void *d_t) {
  const hx_precision prec = c->prec;
  const int k = c->degree;
  HX_CHECK(prec == HX_F64 || prec == HX_F32, HX_ERR_ARG, "smoother: unknown precision %d", (int)prec);
  HX_CHECK(k >= 1 && k <= HX_CHEB_DEGREE_MAX, HX_ERR_ARG, "smoother degree %d outside 1..%d", k,
           HX_CHEB_DEGREE_MAX);
  HX_CHECK(c->rho > 0 && isfinite(c->rho), HX_ERR_ARG, "smoother: eigenvalue bound rho = %g", c->rho);
  /* r = b - A x */
  if (x_zero) {
    HX_CALL(hx_array_copy_p(b, prec, n, d_r, d_b));
    HX_CALL(hx_mem_zero(b, d_x, hx_precision_size(prec) * (size_t)n));
  } else {
    HX_CALL(A(actx, d_x, d_r));
    HX_CALL(hx_array_axpby_p(b, prec, n, d_r, 1.0, d_b, -1.0));
  }
  if (c->kind == HX_CHEB_NONE) {
    const double w = 4.0 / (3.0 * c->rho);
    for (int j = 0; j < k; j++) {
      if (j > 0) {
        HX_CALL(A(actx, d_x, d_r));
        HX_CALL(hx_array_axpby_p(b, prec, n, d_r, 1.0, d_b, -1.0));
      }
      HX_CALL(S(sctx, d_r, d_t));
      HX_CALL(hx_array_axpby_p(b, prec, n, d_x, w, d_t, 1.0));
    }
    return HX_SUCCESS;
  }
  double beta[HX_CHEB_DEGREE_MAX];
  for (int j = 0; j < k; j++) beta[j] = 1.0;
  if (c->kind == HX_CHEB_OPT_FOURTH) HX_CALL(hx_cheb_opt_betas(k, beta));
  const double rho = c->rho;
  if (c->kind == HX_CHEB_FIRST) {
    HX_CHECK(c->lower > 0 && c->lower < 1, HX_ERR_ARG, "1st-kind Chebyshev: lower = %g outside (0, 1)", c->lower);
    const double a = c->lower * rho, theta = 0.5 * (rho + a), delta = 0.5 * (rho - a), sigma = theta / delta;
    double s0 = 1.0 / sigma;
    HX_CALL(S(sctx, d_r, d_d));
    HX_CALL(hx_array_axpby_p(b, prec, n, d_d, 0.0, d_d, 1.0 / theta)); /* d = S r / theta */
    for (int j = 1; j < k; j++) {
      HX_CALL(hx_array_axpby_p(b, prec, n, d_x, 1.0, d_d, 1.0));
      HX_CALL(A(actx, d_d, d_t));
      HX_CALL(hx_array_axpby_p(b, prec, n, d_r, -1.0, d_t, 1.0));
      const double s1 = 1.0 / (2.0 * sigma - s0);
      HX_CALL(S(sctx, d_r, d_t));
      HX_CALL(hx_array_axpby_p(b, prec, n, d_d, 2.0 * s1 / delta, d_t, s1 * s0));
      s0 = s1;
    }
    HX_CALL(hx_array_axpby_p(b, prec, n, d_x, 1.0, d_d, 1.0));
    return HX_SUCCESS;
  }
  /* 4th kind (beta = 1) or optimised 4th kind */
  HX_CALL(S(sctx, d_r, d_d));
  HX_CALL(hx_array_axpby_p(b, prec, n, d_d, 0.0, d_d, 4.0 / (3.0 * rho)));
  for (int j = 1; j < k; j++) {
    HX_CALL(hx_array_axpby_p(b, prec, n, d_x, beta[j - 1], d_d, 1.0));
    HX_CALL(A(actx, d_d, d_t));
    HX_CALL(hx_array_axpby_p(b, prec, n, d_r, -1.0, d_t, 1.0));
    HX_CALL(S(sctx, d_r, d_t));
    const double jj = (double)j;
    HX_CALL(hx_array_axpby_p(b, prec, n, d_d, (8.0 * jj + 4.0) / ((2.0 * jj + 3.0) * rho), d_t,
                             (2.0 * jj - 1.0) / (2.0 * jj + 3.0)));
  }
  HX_CALL(hx_array_axpby_p(b, prec, n, d_x, beta[k - 1], d_d, 1.0));
  return HX_SUCCESS;
}

static int gdot(hx_backend b, hx_precision prec, int64_t nown, MPI_Comm comm, const void *x, const void *y,
                double *r) {
  double loc = 0.0;
  HX_CALL(hx_array_dot_p(b, prec, nown, x, y, &loc));
  HX_MPI(MPI_Allreduce(&loc, r, 1, MPI_DOUBLE, MPI_SUM, comm));
  return HX_SUCCESS;
}

/* largest eigenvalue of the symmetric tridiagonal (diag a[0..m), off e[0..m-1)) */
static int tridiag_max(int m, const double *a, const double *e, double *lmax) {
  double d[64], f[64], work[1];
  int info = 0, ldz = 1;
  HX_CHECK(m >= 1 && m <= 64, HX_ERR_ARG, "Lanczos matrix of order %d (1..64)", m);
  memcpy(d, a, sizeof(double) * (size_t)m);
  if (m > 1) memcpy(f, e, sizeof(double) * (size_t)(m - 1));
  dstev_("N", &m, d, f, NULL, &ldz, work, &info, 1);
  char what[64];
  snprintf(what, sizeof what, "the Lanczos matrix of order %d", m);
  HX_CALL(hx_lapack_check("dstev", info, what));
  *lmax = d[m - 1]; /* ascending */
  return HX_SUCCESS;
}

int hx_eig_max_estimate(hx_backend b, hx_precision prec, int64_t n, int64_t nown, MPI_Comm comm, hx_lin_fn A,
                        void *actx, hx_lin_fn S, void *sctx, int symmetric, int steps, const void *d_v,
                          void *d_w0, void *d_w1, void *d_w2, void *d_w3, double *lmax) {
  HX_CHECK(steps >= 1 && steps <= 60, HX_ERR_ARG, "eigenvalue estimate: %d steps outside 1..60", steps);
  *lmax = 0.0;
  /* the start vector is random on the free nodes: zero only where the level
   * has none (every node Dirichlet, e.g. p = 1 on a one-element-thick mesh):
   * nothing is ever smoothed there, any bound will do (issue 53) */
  double vv;
  HX_CALL(gdot(b, prec, nown, comm, d_v, d_v, &vv));
  if (vv == 0.0) {
    *lmax = 1.0;
    return HX_SUCCESS;
  }
  if (!symmetric) {
    /* power iteration on S A: x <- S A x / |x|_A, estimate (SAx, SAx)_A / (x, x)_A
     * approximated by the ratio of A-norms of successive iterates */
    void *x = d_w0, *ax = d_w1, *y = d_w2;
    HX_CALL(hx_array_copy_p(b, prec, n, x, d_v));
    double est = 0.0;
    for (int it = 0; it < 2 * steps; it++) {
      double xax, yay;
      HX_CALL(A(actx, x, ax));
      HX_CALL(gdot(b, prec, nown, comm, x, ax, &xax));
      if (!(xax > 0)) break;
      HX_CALL(S(sctx, ax, y));
      HX_CALL(A(actx, y, d_w3));
      HX_CALL(gdot(b, prec, nown, comm, y, d_w3, &yay));
      est = sqrt(yay / xax);
      HX_CALL(hx_array_axpby_p(b, prec, n, x, 1.0 / sqrt(yay), y, 0.0));
    }
    HX_CHECK(est > 0 && isfinite(est), HX_ERR_NUMERIC, "eigenvalue estimate of the smoothed operator failed (%g)",
             est);
    *lmax = est;
    return HX_SUCCESS;
  }
  /* CG on A x = v with preconditioner S; the Lanczos matrix from alpha, beta */
  void *r = d_w0, *z = d_w1, *p = d_w2, *w = d_w3;
  double diag[64], off[64], alpha_old = 0.0, beta_old = 0.0;
  HX_CALL(hx_array_copy_p(b, prec, n, r, d_v));
  HX_CALL(S(sctx, r, z));
  HX_CALL(hx_array_copy_p(b, prec, n, p, z));
  double rz;
  HX_CALL(gdot(b, prec, nown, comm, r, z, &rz));
  HX_CHECK(rz > 0 && isfinite(rz), HX_ERR_NUMERIC, "eigenvalue estimate: r.Sr = %g (start vector zero?)", rz);
  const double rz0 = rz;
  int m = 0;
  for (int it = 0; it < steps; it++) {
    double pw;
    HX_CALL(A(actx, p, w));
    HX_CALL(gdot(b, prec, nown, comm, p, w, &pw));
    if (!(pw > 0) || !isfinite(pw)) break;
    const double alpha = rz / pw;
    diag[m] = 1.0 / alpha + (m > 0 ? beta_old / alpha_old : 0.0);
    m++;
    HX_CALL(hx_array_axpby_p(b, prec, n, r, -alpha, w, 1.0));
    HX_CALL(S(sctx, r, z));
    double rz_new;
    HX_CALL(gdot(b, prec, nown, comm, r, z, &rz_new));
    if (!(rz_new > 1e-28 * rz0) || !isfinite(rz_new)) break; /* converged: the Krylov space is invariant */
    const double beta = rz_new / rz;
    off[m - 1] = sqrt(beta) / alpha;
    alpha_old = alpha, beta_old = beta, rz = rz_new;
    HX_CALL(hx_array_xpay_p(b, prec, n, p, z, beta));
  }
  HX_CHECK(m > 0, HX_ERR_NUMERIC, "eigenvalue estimate: A is not positive on the start vector");
  HX_CALL(tridiag_max(m, diag, off, lmax));
  HX_CHECK(*lmax > 0 && isfinite(*lmax), HX_ERR_NUMERIC, "eigenvalue estimate %g", *lmax);
  return HX_SUCCESS;
}

int hx_eig_start_vector(hx_disc d, hx_precision prec, void *d_v) {
  hx_gs gs = hx_disc_gs(d);
  const int64_t n = hx_op_size(hx_disc_op(d));
  const int64_t *gid = hx_gs_global_ids(gs);
  double *h;
  HX_CALL(HX_ALLOC(&h, n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    uint64_t s = (uint64_t)gid[i] * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    s ^= s >> 31, s *= 0xBF58476D1CE4E5B9ull, s ^= s >> 29;
    h[i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
  if (prec == HX_F32) {
    float *h32 = (float *)h; /* in place: entry i is read before float i is written */
    for (int64_t i = 0; i < n; i++) h32[i] = (float)h[i];
  }
  int err = hx_mem_to_device(hx_disc_backend(d), d_v, h, hx_precision_size(prec) * (size_t)n);
  if (!err) err = hx_gs_apply_mask_p(gs, prec, d_v);
  free(h);
  HX_CALL(err);
  return HX_SUCCESS;
}
