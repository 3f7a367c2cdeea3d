/* Polynomial smoothers and the eigenvalue estimate (precond/cheby.c):
 *   t340-cheby poly    on a diagonal "matrix" A = diag(lambda_i), S = I,
 *                      rho = 1: the smoother's error polynomial p(lambda)
 *                      (x0 = 1, b = 0 gives x = p(lambda)) matches its
 *                      closed form to 1e-12 for every kind and degree 1..7:
 *                        plain       (1 - 4 lambda/3)^k
 *                        fourth      W_k(1 - 2 lambda)/(2k+1), W_k(cos t) =
 *                                    sin((k+1/2) t)/sin(t/2)
 *                        opt-fourth  1 - sum_j beta_j (p_{j-1} - p_j), p_j the
 *                                    4th-kind polynomials
 *                        first       T_k((theta - lambda)/delta)/T_k(theta/delta)
 *                                    on [0.1, 1]
 *                      with x_zero (x0 = 0, b = A 1) x = 1 - p(lambda); and
 *                      max sqrt(lambda)|p| is 1/(2k+1) for the 4th kind, and
 *                      Lottes's V-cycle bound max lambda p^2/(1 - p^2) is
 *                      smaller with the optimised weights than with beta = 1
 *                      (which checks the tabulated betas); the smoother in
 *                      FP32 (hx_cheb.prec: float vectors, float A and S)
 *                      gives the closed form to 2e-5 (see the bound below)
 *   t340-cheby eig     a small assembled case (3^3 box, p = 3, one rank): the
 *                      Lanczos estimate of lambda_max(S A) for S = Jacobi and
 *                      S = Schwarz (FDM, sqrt weights) lies in
 *                      [lambda_max / 1.1, lambda_max (1 + 1e-10)], lambda_max
 *                      from the dense generalized eigenproblem (LAPACK dsygv,
 *                      itype 2: S A v = lambda v) on the free nodes; the FP32
 *                      estimate with the FP32 operator and the FP32 Jacobi
 *                      (hx_pc_create_jacobi_prec: 1/diag the FP64 one rounded,
 *                      bit for bit; hx_pc_apply refuses it) or FP32 Schwarz
 *                      within 1e-4 of the FP64 one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "precond_impl.h"

extern void dsygv_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a,
                   const int *lda, double *b, const int *ldb, double *w, double *work, const int *lwork,
                   int *info, size_t, size_t);

static hx_backend g_b;

typedef struct {
  int64_t n;
  double *d_lam;
  float *d_lam32; /* the same eigenvalues in float (i/400 rounded) */
  void *d_b32, *d_x32, *w32[3]; /* float work */
} diag_ctx;

static int diag_A(void *ctx, const void *x, void *y) {
  diag_ctx *c = (diag_ctx *)ctx;
  return hx_array_pointwise_mult(g_b, c->n, (double *)y, (const double *)x, c->d_lam);
}
static int ident_S(void *ctx, const void *x, void *y) {
  diag_ctx *c = (diag_ctx *)ctx;
  return hx_array_copy(g_b, c->n, (double *)y, (const double *)x);
}

static int diag_A32(void *ctx, const void *x, void *y) {
  diag_ctx *c = (diag_ctx *)ctx;
  return hx_array_pointwise_mult_p(g_b, HX_F32, c->n, y, x, c->d_lam32);
}
static int ident_S32(void *ctx, const void *x, void *y) {
  diag_ctx *c = (diag_ctx *)ctx;
  return hx_array_copy_p(g_b, HX_F32, c->n, y, x);
}

static double W4(int k, double t) { /* 4th-kind Chebyshev W_k(t), t in [-1, 1] */
  const double th = acos(fmax(-1.0, fmin(1.0, t)));
  if (fabs(sin(0.5 * th)) < 1e-14) return 2.0 * k + 1.0;
  return sin((k + 0.5) * th) / sin(0.5 * th);
}
static double p4(int k, double lam) { return W4(k, 1.0 - 2.0 * lam) / (2.0 * k + 1.0); }
static double cheb_T(int k, double t) {
  if (fabs(t) <= 1.0) return cos(k * acos(t));
  return cosh(k * acosh(fabs(t))) * ((t < 0 && (k % 2)) ? -1.0 : 1.0);
}
static double closed(hx_cheb_kind kind, int k, double lam) {
  switch (kind) {
    case HX_CHEB_NONE: return pow(1.0 - 4.0 * lam / 3.0, k);
    case HX_CHEB_FOURTH: return p4(k, lam);
    case HX_CHEB_OPT_FOURTH: {
      double beta[HX_CHEB_OPT_DEGREE_MAX], s = 1.0;
      hx_cheb_opt_betas(k, beta);
      for (int j = 1; j <= k; j++) s -= beta[j - 1] * (p4(j - 1, lam) - p4(j, lam));
      return s;
    }
    case HX_CHEB_FIRST: {
      const double a = 0.1, theta = 0.5 * (1.0 + a), delta = 0.5 * (1.0 - a);
      return cheb_T(k, (theta - lam) / delta) / cheb_T(k, theta / delta);
    }
  }
  return NAN;
}

static int mode_poly(void) {
  const int64_t n = 400;
  diag_ctx c = {n, NULL, NULL, NULL, NULL, {NULL, NULL, NULL}};
  double *h = malloc(sizeof(double) * n), *hx = malloc(sizeof(double) * n), *lam = malloc(sizeof(double) * n);
  double *d_b, *d_x, *w[3];
  HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * n, (void **)&c.d_lam));
  HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * n, (void **)&d_b));
  HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * n, (void **)&d_x));
  for (int i = 0; i < 3; i++) HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * n, (void **)&w[i]));
  for (int64_t i = 0; i < n; i++) lam[i] = (double)(i + 1) / (double)n; /* (0, 1] */
  HX_TCALL(hx_mem_to_device(g_b, c.d_lam, lam, sizeof(double) * n));
  HX_TCALL(hx_mem_alloc(g_b, sizeof(float) * n, (void **)&c.d_lam32));
  HX_TCALL(hx_mem_alloc(g_b, sizeof(float) * n, &c.d_b32));
  HX_TCALL(hx_mem_alloc(g_b, sizeof(float) * n, &c.d_x32));
  for (int i = 0; i < 3; i++) HX_TCALL(hx_mem_alloc(g_b, sizeof(float) * n, &c.w32[i]));
  HX_TCALL(hx_array_convert(g_b, n, HX_F32, c.d_lam32, HX_F64, c.d_lam));
  double e32_max = 0.0;
  const hx_cheb_kind kinds[4] = {HX_CHEB_NONE, HX_CHEB_FOURTH, HX_CHEB_OPT_FOURTH, HX_CHEB_FIRST};
  const char *names[4] = {"plain", "fourth", "opt-fourth", "first"};
  for (int ki = 0; ki < 4; ki++)
    for (int k = 1; k <= HX_CHEB_OPT_DEGREE_MAX; k++) {
      hx_cheb ch = {kinds[ki], k, 1.0, 0.1, HX_F64}, ch32 = ch;
      ch32.prec = HX_F32;
      for (int xz = 0; xz < 2; xz++) {
        for (int64_t i = 0; i < n; i++) h[i] = xz ? lam[i] : 0.0, hx[i] = xz ? 0.0 : 1.0;
        HX_TCALL(hx_mem_to_device(g_b, d_b, h, sizeof(double) * n));
        HX_TCALL(hx_mem_to_device(g_b, d_x, hx, sizeof(double) * n));
        HX_TCALL(hx_cheb_apply(g_b, n, &ch, diag_A, &c, ident_S, &c, d_b, d_x, xz, w[0], w[1], w[2]));
        HX_TCALL(hx_mem_to_host(g_b, hx, d_x, sizeof(double) * n));
        double emax = 0.0;
        for (int64_t i = 0; i < n; i++) {
          const double p = closed(kinds[ki], k, lam[i]);
          emax = fmax(emax, fabs(hx[i] - (xz ? 1.0 - p : p)));
        }
        HX_ASSERT(emax <= 1e-12, "%s degree %d%s: |p - closed form| = %.3e", names[ki], k, xz ? " (x0 = 0)" : "",
                  emax);
        double *h2 = malloc(sizeof(double) * n);
        /* FP32: b, x, lambda rounded to float (lambda = i/400 moves by at
         * most 3e-8 relative, changing p by |p'| 3e-8 <= 2k^2 3e-8 ~ 3e-6 at
         * k = 7), each of the k steps adds a few float roundings of terms
         * bounded by |coefficient| <= 4 (4th kind) or 2 s1/delta (first
         * kind, <= 2.3): k * 6 * 4 * 6e-8 ~ 1e-5 at k = 7; bound 2e-5 */
        for (int64_t i = 0; i < n; i++) h[i] = xz ? lam[i] : 0.0, h2[i] = xz ? 0.0 : 1.0;
        HX_TCALL(hx_mem_to_device(g_b, d_b, h, sizeof(double) * n));
        HX_TCALL(hx_mem_to_device(g_b, d_x, h2, sizeof(double) * n));
        HX_TCALL(hx_array_convert(g_b, n, HX_F32, c.d_b32, HX_F64, d_b));
        HX_TCALL(hx_array_convert(g_b, n, HX_F32, c.d_x32, HX_F64, d_x));
        HX_TCALL(hx_cheb_apply(g_b, n, &ch32, diag_A32, &c, ident_S32, &c, c.d_b32, c.d_x32, xz, c.w32[0], c.w32[1],
                               c.w32[2]));
        HX_TCALL(hx_array_convert(g_b, n, HX_F64, d_x, HX_F32, c.d_x32));
        HX_TCALL(hx_mem_to_host(g_b, h2, d_x, sizeof(double) * n));
        double e32 = 0.0;
        for (int64_t i = 0; i < n; i++) {
          const double p = closed(kinds[ki], k, lam[i]);
          e32 = fmax(e32, fabs(h2[i] - (xz ? 1.0 - p : p)));
        }
        e32_max = fmax(e32_max, e32);
        HX_ASSERT(e32 <= 2e-5, "fp32 %s degree %d%s: |p - closed form| = %.3e", names[ki], k, xz ? " (x0 = 0)" : "",
                  e32);
        free(h2);
      }
    }
  /* the 4th kind's bound max sqrt(l)|p| = 1/(2k+1); Lottes's two-level
   * V-cycle bound max l p^2 / (1 - p^2) (pre- and post-smoothing) is smaller
   * with the optimised weights than with beta = 1 (checks the table) */
  for (int k = 1; k <= HX_CHEB_OPT_DEGREE_MAX; k++) {
    double m4 = 0.0, v4 = 0.0, vo = 0.0;
    for (int i = 1; i <= 20000; i++) {
      const double l = i / 20000.0, a = closed(HX_CHEB_FOURTH, k, l), b = closed(HX_CHEB_OPT_FOURTH, k, l);
      m4 = fmax(m4, sqrt(l) * fabs(a));
      v4 = fmax(v4, l * a * a / (1.0 - a * a));
      vo = fmax(vo, l * b * b / (1.0 - b * b));
    }
    HX_ASSERT(fabs(m4 - 1.0 / (2 * k + 1)) <= 1e-6, "4th kind degree %d: max sqrt(l)|p| = %.8f, expected %.8f", k,
              m4, 1.0 / (2 * k + 1));
    HX_ASSERT(vo < 0.95 * v4, "opt-4th degree %d: V-cycle bound %.6f not below the 4th kind's %.6f", k, vo, v4);
  }
  /* the FP32 run really rounded in float */
  HX_ASSERT(e32_max > 1e-10, "fp32 smoother: largest error %.3e, not float arithmetic", e32_max);
  printf("fp32 smoothers: largest |p - closed form| %.3e (bound 2e-5)\n", e32_max);
  hx_mem_free(g_b, (void **)&c.d_lam32), hx_mem_free(g_b, &c.d_b32), hx_mem_free(g_b, &c.d_x32);
  for (int i = 0; i < 3; i++) hx_mem_free(g_b, &c.w32[i]);
  hx_mem_free(g_b, (void **)&c.d_lam), hx_mem_free(g_b, (void **)&d_b), hx_mem_free(g_b, (void **)&d_x);
  for (int i = 0; i < 3; i++) hx_mem_free(g_b, (void **)&w[i]);
  free(h), free(hx), free(lam);
  return 0;
}

typedef struct {
  hx_op op;
  hx_pc jac;
  hx_fdm fdm;
} eig_ctx;

static int op_A(void *ctx, const void *x, void *y) {
  return hx_op_apply(((eig_ctx *)ctx)->op, (const double *)x, (double *)y, NULL);
}
static int op_S(void *ctx, const void *x, void *y) {
  eig_ctx *c = (eig_ctx *)ctx;
  return c->fdm ? hx_fdm_apply(c->fdm, (const double *)x, (double *)y)
                : hx_pc_apply(c->jac, (const double *)x, (double *)y);
}

/* the FP32 operator and smoother, as the FP32 pmg estimates with them */
typedef struct {
  hx_op op32;
  hx_fdm fdm32;
  hx_pc jac32;
} eig_ctx32;

static int op_A32(void *ctx, const void *x, void *y) { return hx_op_apply_p(((eig_ctx32 *)ctx)->op32, x, y); }

static int op_S32(void *ctx, const void *x, void *y) {
  eig_ctx32 *c = (eig_ctx32 *)ctx;
  return c->fdm32 ? hx_fdm_apply_p(c->fdm32, HX_F32, x, y) : hx_pc_apply_p(c->jac32, x, y);
}

/* dense columns of f on the free entries: M[j*nf + i] = (f e_{free j})_{free i} */
static int dense(eig_ctx *c, hx_lin_fn f, int64_t ng, const int64_t *free_idx, int nf, double *M) {
  double *h = calloc((size_t)ng, sizeof(double)), *d_e, *d_y;
  HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * ng, (void **)&d_e));
  HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * ng, (void **)&d_y));
  for (int j = 0; j < nf; j++) {
    memset(h, 0, sizeof(double) * ng);
    h[free_idx[j]] = 1.0;
    HX_TCALL(hx_mem_to_device(g_b, d_e, h, sizeof(double) * ng));
    HX_TCALL(f(c, d_e, d_y));
    HX_TCALL(hx_mem_to_host(g_b, h, d_y, sizeof(double) * ng));
    for (int i = 0; i < nf; i++) M[(int64_t)j * nf + i] = h[free_idx[i]];
  }
  hx_mem_free(g_b, (void **)&d_e), hx_mem_free(g_b, (void **)&d_y);
  free(h);
  return 0;
}

/* the non-overlapping Schwarz smoother of the estimate tests, in prec */
static hx_fdm_opts fdm_opts(hx_mesh m, hx_disc d, hx_precision prec) {
  return (hx_fdm_opts){.mesh = m,
                       .gs = hx_disc_gs(d),
                       .p = 3,
                       .h_kappa = hx_disc_kappa(d),
                       .h_lambda = hx_disc_lambda(d),
                       .h_dirichlet_face = hx_disc_dirichlet_faces(d),
                       .weight = HX_FDM_WEIGHT_SQRT,
                       .overlap = 0,
                       .prec = prec};
}

static int mode_eig(void) {
  hx_mesh m;
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = 3;
  mo.deform = 1;
  HX_TCALL(hx_mesh_create_box(MPI_COMM_SELF, &mo, &m));
  hx_disc_opts o = hx_disc_opts_default();
  o.p = 3;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, g_b, &o, &d));
  eig_ctx c = {hx_disc_op(d), NULL, NULL};
  const int64_t ng = hx_op_size(c.op);
  double *mask = malloc(sizeof(double) * ng);
  HX_TCALL(hx_mem_to_host(g_b, mask, hx_gs_mask(hx_disc_gs(d)), sizeof(double) * ng));
  int64_t *fi = malloc(sizeof(int64_t) * ng);
  int nf = 0;
  for (int64_t i = 0; i < ng; i++)
    if (mask[i] != 0.0) fi[nf++] = i;
  double *A = malloc(sizeof(double) * nf * nf), *S = malloc(sizeof(double) * nf * nf), *ev = malloc(sizeof(double) * nf);
  HX_TCALL(dense(&c, op_A, ng, fi, nf, A));
  double *d_v, *w[4];
  HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * ng, (void **)&d_v));
  for (int i = 0; i < 4; i++) HX_TCALL(hx_mem_alloc(g_b, sizeof(double) * ng, (void **)&w[i]));
  for (int which = 0; which < 2; which++) {
    if (which == 0) {
      HX_TCALL(hx_pc_create_jacobi(c.op, &c.jac));
      HX_TCALL(hx_pc_setup(c.jac));
    } else {
      const hx_fdm_opts fo = fdm_opts(m, d, HX_F64);
      HX_TCALL(hx_fdm_create(&fo, &c.fdm));
    }
    HX_TCALL(dense(&c, op_S, ng, fi, nf, S));
    /* S A v = lambda v: dsygv itype 2 with (S, A); symmetrise S against rounding */
    for (int i = 0; i < nf; i++)
      for (int j = 0; j < i; j++) S[i * nf + j] = S[j * nf + i] = 0.5 * (S[i * nf + j] + S[j * nf + i]);
    double *Ac = malloc(sizeof(double) * nf * nf);
    memcpy(Ac, A, sizeof(double) * nf * nf);
    int itype = 2, lwork = 64 * nf, info = 0;
    double *work = malloc(sizeof(double) * lwork);
    dsygv_(&itype, "N", "U", &nf, S, &nf, Ac, &nf, ev, work, &lwork, &info, 1, 1);
    HX_ASSERT(info == 0, "dsygv info %d", info);
    const double lmax = ev[nf - 1];
    /* a rough start vector, as the pmg setup uses */
    double *h = malloc(sizeof(double) * ng);
    for (int64_t i = 0; i < ng; i++) h[i] = mask[i] * sin(1.7 * (double)i + 0.3);
    HX_TCALL(hx_mem_to_device(g_b, d_v, h, sizeof(double) * ng));
    double est;
    HX_TCALL(hx_eig_max_estimate(g_b, HX_F64, ng, ng, MPI_COMM_SELF, op_A, &c, op_S, &c, 1, 12, d_v, w[0], w[1], w[2],
                                 w[3], &est));
    HX_ASSERT(est <= lmax * (1 + 1e-10) && 1.1 * est >= lmax, "%s: estimate %.10f, true lambda_max %.10f",
              which ? "schwarz" : "jacobi", est, lmax);
    /* the FP32 estimate (FP32 operator, smoother and vectors, FP64 dots):
     * the same Lanczos steps on operators within ~1e-7 of the FP64 ones,
     * whose extreme Ritz value is well conditioned: 1e-4 of the FP64 one
     * (observed ~1e-7), and still a bracket of lambda_max */
    eig_ctx32 c32 = {0};
    HX_TCALL(hx_disc_op_prec(d, HX_F32, &c32.op32));
    float *d_v32, *w32[4];
    HX_TCALL(hx_mem_alloc(g_b, sizeof(float) * ng, (void **)&d_v32));
    for (int i = 0; i < 4; i++) HX_TCALL(hx_mem_alloc(g_b, sizeof(float) * ng, (void **)&w32[i]));
    HX_TCALL(hx_array_convert(g_b, ng, HX_F32, d_v32, HX_F64, d_v));
    if (which == 0) {
      /* the FP32 Jacobi: its own object, 1/diag the FP64 one rounded */
      HX_TCALL(hx_pc_create_jacobi_prec(c.op, HX_F32, &c32.jac32));
      HX_TCALL(hx_pc_setup(c32.jac32));
      HX_ASSERT(hx_pc_precision(c32.jac32) == HX_F32 && hx_pc_precision(c.jac) == HX_F64, "Jacobi precisions %d, %d",
                (int)hx_pc_precision(c32.jac32), (int)hx_pc_precision(c.jac));
      double *h64 = malloc(sizeof(double) * ng);
      float *h32 = malloc(sizeof(float) * ng);
      HX_TCALL(hx_mem_to_host(g_b, h64, hx_pc_jacobi_inv_diag(c.jac), sizeof(double) * ng));
      HX_TCALL(hx_mem_to_host(g_b, h32, hx_pc_jacobi_inv_diag(c32.jac32), sizeof(float) * ng));
      int64_t bad = 0;
      for (int64_t i = 0; i < ng; i++) bad += h32[i] != (float)h64[i];
      HX_ASSERT(bad == 0, "FP32 Jacobi: %lld entries of 1/diag are not the FP64 ones rounded", (long long)bad);
      free(h64), free(h32);
      HX_ASSERT(hx_pc_apply(c32.jac32, d_v, w[0]) == HX_ERR_ARG, "hx_pc_apply of an FP32 preconditioner accepted");
      hx_error_clear();
    } else {
      const hx_fdm_opts fo = fdm_opts(m, d, HX_F32);
      HX_TCALL(hx_fdm_create(&fo, &c32.fdm32));
    }
    double est32;
    HX_TCALL(hx_eig_max_estimate(g_b, HX_F32, ng, ng, MPI_COMM_SELF, op_A32, &c32, op_S32, &c32, 1, 12, d_v32,
                                 w32[0], w32[1], w32[2], w32[3], &est32));
    printf("%s: lambda_max %.10f, estimate fp64 %.10f, fp32 %.10f (%.2e)\n", which ? "schwarz" : "jacobi", lmax, est,
           est32, fabs(est32 - est) / est);
    HX_ASSERT(fabs(est32 - est) <= 1e-4 * est && est32 <= lmax * (1 + 1e-4) && 1.1 * est32 >= lmax,
              "%s: FP32 estimate %.10f, FP64 %.10f, true lambda_max %.10f", which ? "schwarz" : "jacobi", est32, est,
              lmax);
    hx_fdm_destroy(&c32.fdm32);
    hx_pc_destroy(&c32.jac32);
    hx_mem_free(g_b, (void **)&d_v32);
    for (int i = 0; i < 4; i++) hx_mem_free(g_b, (void **)&w32[i]);
    free(h), free(work), free(Ac);
    hx_pc_destroy(&c.jac);
    hx_fdm_destroy(&c.fdm);
  }
  hx_mem_free(g_b, (void **)&d_v);
  for (int i = 0; i < 4; i++) hx_mem_free(g_b, (void **)&w[i]);
  free(A), free(S), free(ev), free(fi), free(mask);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  if (hx_backend_create(hx_test_backend_arg(argc, argv), &g_b)) {
    printf("SKIP: %s\n", hx_error_message());
    MPI_Finalize();
    return HX_TEST_SKIP;
  }
  if (argc > 1 && !strcmp(argv[1], "poly")) rc = mode_poly();
  else if (argc > 1 && !strcmp(argv[1], "eig")) rc = mode_eig();
  else fprintf(stderr, "usage: t340-cheby poly|eig [--backend B]\n"), rc = 2;
  hx_backend_destroy(&g_b);
  MPI_Finalize();
  return rc ? rc : hx_test_result();
}
