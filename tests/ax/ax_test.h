/* Helpers shared by the element-operator tests (tests/ax/): random element
 * geometries, an independent reference implementation of the operator
 * (node-by-node quadrature with its own Jacobian and matrix inverse), and
 * host<->backend apply wrappers. */
#ifndef AX_TEST_H
#define AX_TEST_H

#include "hx_kernels.h"
#include "hx_test.h"

#define AXT_NMAX 16

/* Open the backend named on the command line; 77 (skip) when it is cuda and
 * there is no device, 1 on other errors, 0 on success. */
static inline int axt_open_backend(int argc, char **argv, hx_backend *b) {
  const char *name = hx_test_backend_arg(argc, argv);
  int ierr = hx_backend_create(name, b);
  if (ierr == HX_ERR_NO_DEVICE) {
    printf("SKIP: %s\n", hx_error_message());
    return HX_TEST_SKIP;
  }
  if (ierr) {
    hx_error_print(stderr, 0, 1);
    return 1;
  }
  return 0;
}

/* MPI_Init and the backend of the command line (axt_open_backend); on
 * failure or skip MPI is finalised and the test's exit status returned. */
static inline int axt_init(int *argc, char ***argv, hx_backend *b) {
  MPI_Init(argc, argv);
  const int rc = axt_open_backend(*argc, *argv, b);
  if (rc) MPI_Finalize();
  return rc;
}

/* axt_init, and in *cpu the CPU twin of a device backend (NULL on the cpu
 * backends, where b is its own reference). */
static inline int axt_init_twin(int *argc, char ***argv, hx_backend *b, hx_backend *cpu) {
  *cpu = NULL;
  const int rc = axt_init(argc, argv, b);
  if (rc) return rc;
  if (hx_backend_get_kind(*b) == HX_BACKEND_CUDA && hx_backend_create("cpu", cpu)) {
    hx_error_print(stderr, 0, 1);
    return 1;
  }
  return 0;
}

/* The end of an ax test's main: the backends destroyed, MPI finalised, the
 * assertions' verdict. */
static inline int axt_finish(hx_backend *b, hx_backend *cpu) {
  if (cpu) hx_backend_destroy(cpu);
  hx_backend_destroy(b);
  MPI_Finalize();
  return hx_test_result();
}

/* Trilinear element: the box [x0, x0+h]^3 with each vertex moved by up to
 * amp*h in each coordinate (amp <= 0.2 keeps the Jacobian positive). */
static inline void axt_random_hex8(hx_test_rng *r, double h, double amp, double *v) {
  const double x0 = 3.0 * hx_test_rand(r), y0 = 3.0 * hx_test_rand(r), z0 = 3.0 * hx_test_rand(r);
  for (int q = 0; q < 8; q++) {
    v[3 * q + 0] = x0 + h * (q & 1) + amp * h * hx_test_rand(r);
    v[3 * q + 1] = y0 + h * ((q >> 1) & 1) + amp * h * hx_test_rand(r);
    v[3 * q + 2] = z0 + h * ((q >> 2) & 1) + amp * h * hx_test_rand(r);
  }
}

/* Affine element: x = x0 + (r+1)/2 a1 + (s+1)/2 a2 + (t+1)/2 a3 with a
 * random, well-conditioned right-handed frame. Returns the volume |det(a)|. */
static inline double axt_random_affine(hx_test_rng *r, double *v, double a[3][3]) {
  for (int d = 0; d < 3; d++)
    for (int c = 0; c < 3; c++) a[d][c] = (d == c ? 1.0 + 0.3 * d : 0.0) + 0.25 * hx_test_rand(r);
  const double x0[3] = {hx_test_rand(r), hx_test_rand(r), hx_test_rand(r)};
  for (int q = 0; q < 8; q++)
    for (int c = 0; c < 3; c++)
      v[3 * q + c] = x0[c] + a[0][c] * (q & 1) + a[1][c] * ((q >> 1) & 1) + a[2][c] * ((q >> 2) & 1);
  const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  return fabs(det);
}

/* hex27 nodes of the trilinear element v (so both maps are the same). */
static inline void axt_hex8_to_hex27(const double *v, double *v27) {
  for (int c = 0; c < 3; c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 3; a++)
        for (int d = 0; d < 3; d++) {
          const double r = 0.5 * a, s = 0.5 * b, t = 0.5 * c; /* in [0,1] */
          double x = 0.0;
          for (int q = 0; q < 8; q++)
            x += v[3 * q + d] * ((q & 1) ? r : 1 - r) * ((q & 2) ? s : 1 - s) * ((q & 4) ? t : 1 - t);
          v27[3 * (a + 3 * b + 9 * c) + d] = x;
        }
}

/* Jacobian of the map at (r,s,t) by differentiating the shape functions
 * directly (hex8: trilinear vertex functions; hex27: quadratic Lagrange). */
static inline void axt_jacobian(int npe, const double *v, double r, double s, double t, double J[3][3]) {
  const double x[3] = {r, s, t};
  const int m = npe == 8 ? 2 : 3;
  double N[3][3], dN[3][3];
  for (int d = 0; d < 3; d++) {
    if (m == 2) {
      N[d][0] = 0.5 * (1 - x[d]);
      N[d][1] = 0.5 * (1 + x[d]);
      dN[d][0] = -0.5;
      dN[d][1] = 0.5;
    } else { /* Lagrange on -1, 0, 1 */
      N[d][0] = x[d] * (x[d] - 1) / 2;
      N[d][1] = (1 - x[d]) * (1 + x[d]);
      N[d][2] = x[d] * (x[d] + 1) / 2;
      dN[d][0] = (2 * x[d] - 1) / 2;
      dN[d][1] = -2 * x[d];
      dN[d][2] = (2 * x[d] + 1) / 2;
    }
  }
  memset(J, 0, 9 * sizeof(double));
  for (int c = 0; c < m; c++)
    for (int b = 0; b < m; b++)
      for (int a = 0; a < m; a++) {
        const double *p = v + 3 * (a + m * (b + m * c));
        const double g[3] = {dN[0][a] * N[1][b] * N[2][c], N[0][a] * dN[1][b] * N[2][c],
                             N[0][a] * N[1][b] * dN[2][c]};
        for (int d = 0; d < 3; d++)
          for (int e = 0; e < 3; e++) J[d][e] += p[d] * g[e];
      }
}

/* Inverse of a 3x3 matrix by Gauss-Jordan elimination with partial
 * pivoting; returns the determinant. */
static inline double axt_inverse(double A[3][3], double X[3][3]) {
  double M[3][6];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 6; j++) M[i][j] = j < 3 ? A[i][j] : (j - 3 == i ? 1.0 : 0.0);
  double det = 1.0;
  for (int c = 0; c < 3; c++) {
    int piv = c;
    for (int i = c + 1; i < 3; i++)
      if (fabs(M[i][c]) > fabs(M[piv][c])) piv = i;
    if (piv != c) {
      for (int j = 0; j < 6; j++) {
        double tmp = M[c][j];
        M[c][j] = M[piv][j];
        M[piv][j] = tmp;
      }
      det = -det;
    }
    det *= M[c][c];
    const double inv = 1.0 / M[c][c];
    for (int j = 0; j < 6; j++) M[c][j] *= inv;
    for (int i = 0; i < 3; i++)
      if (i != c) {
        const double f = M[i][c];
        for (int j = 0; j < 6; j++) M[i][j] -= f * M[c][j];
      }
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) X[i][j] = M[i][j + 3];
  return det;
}

/* Reference operator on one element, node by node: at each GLL node the
 * reference gradient of u (direct sums with D), the physical metric from
 * the test's own Jacobian and inverse, and the scatter of D^T back. O(n^4)
 * but with none of the library's code paths. Also the lumped mass. kn, ln:
 * kappa and lambda at the element's n^3 nodes (NULL: the constants). */
static inline void axt_ref_apply_node(int p, int npe, const double *v, double kappa, double lambda,
                                      const double *kn, const double *ln, const double *u, double *w,
                                      double *mass) {
  const int n = p + 1, n3 = n * n * n;
  double t[AXT_NMAX], wt[AXT_NMAX], D[AXT_NMAX * AXT_NMAX];
  hx_gll(n, t, wt);
  hx_lagrange_deriv(n, t, D);
  for (int q = 0; q < n3; q++) w[q] = 0.0;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int q = i + n * (j + n * k);
        double J[3][3], X[3][3];
        axt_jacobian(npe, v, t[i], t[j], t[k], J);
        const double det = axt_inverse(J, X); /* X[r][d] = d xi_r / d x_d */
        const double wq = wt[i] * wt[j] * wt[k];
        double G[3][3];
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++) {
            double s = 0.0;
            for (int d = 0; d < 3; d++) s += X[a][d] * X[b][d];
            G[a][b] = (kn ? kn[q] : kappa) * wq * det * s;
          }
        double gr[3] = {0.0, 0.0, 0.0};
        for (int m = 0; m < n; m++) {
          gr[0] += D[i * n + m] * u[m + n * (j + n * k)];
          gr[1] += D[j * n + m] * u[i + n * (m + n * k)];
          gr[2] += D[k * n + m] * u[i + n * (j + n * m)];
        }
        double f[3];
        for (int a = 0; a < 3; a++) f[a] = G[a][0] * gr[0] + G[a][1] * gr[1] + G[a][2] * gr[2];
        for (int m = 0; m < n; m++) {
          w[m + n * (j + n * k)] += D[i * n + m] * f[0];
          w[i + n * (m + n * k)] += D[j * n + m] * f[1];
          w[i + n * (j + n * m)] += D[k * n + m] * f[2];
        }
        w[q] += (ln ? ln[q] : lambda) * wq * det * u[q];
        if (mass) mass[q] = wq * det;
      }
}

static inline void axt_ref_apply(int p, int npe, const double *v, double kappa, double lambda,
                                 const double *u, double *w, double *mass) {
  axt_ref_apply_node(p, npe, v, kappa, lambda, NULL, NULL, u, w, mass);
}

/* w = A u through the library on backend memory, from and to host arrays
 * of length nl. uw may be NULL. */
static inline int axt_apply(hx_ax ax, int64_t nl, const double *hu, double *hw, double *uw) {
  hx_backend b = hx_ax_backend(ax);
  double *du = NULL, *dw = NULL;
  HX_TCALL(hx_mem_alloc(b, (size_t)nl * sizeof(double), (void **)&du));
  HX_TCALL(hx_mem_alloc(b, (size_t)nl * sizeof(double), (void **)&dw));
  HX_TCALL(hx_mem_to_device(b, du, hu, (size_t)nl * sizeof(double)));
  HX_TCALL(hx_ax_apply(ax, du, dw, uw));
  HX_TCALL(hx_mem_to_host(b, hw, dw, (size_t)nl * sizeof(double)));
  HX_TCALL(hx_mem_free(b, (void **)&du));
  HX_TCALL(hx_mem_free(b, (void **)&dw));
  return 0;
}

/* Curved triquadratic element: the hex27 nodes of a box of size h with
 * every node moved by up to amp*h (the corners too). */
static inline void axt_random_hex27(hx_test_rng *r, double h, double amp, double *v27) {
  for (int c = 0; c < 3; c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 3; a++) {
        const int q = a + 3 * (b + 3 * c);
        v27[3 * q + 0] = 0.5 * h * a + amp * h * hx_test_rand(r);
        v27[3 * q + 1] = 0.5 * h * b + amp * h * hx_test_rand(r);
        v27[3 * q + 2] = 0.5 * h * c + amp * h * hx_test_rand(r);
      }
}

/* Volume of an element by a GLL rule with m points per direction applied to
 * the test's own Jacobian (exact when 2m-3 >= the degree of |J| per variable:
 * 2 for hex8, 5 for hex27). */
static inline double axt_volume(int npe, const double *v, int m) {
  double t[32], wt[32], vol = 0.0;
  hx_gll(m, t, wt);
  for (int k = 0; k < m; k++)
    for (int j = 0; j < m; j++)
      for (int i = 0; i < m; i++) {
        double J[3][3], X[3][3];
        axt_jacobian(npe, v, t[i], t[j], t[k], J);
        vol += wt[i] * wt[j] * wt[k] * axt_inverse(J, X);
      }
  return vol;
}

static inline double axt_maxabs(int64_t n, const double *x) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
  return m;
}
static inline double axt_maxdiff(int64_t n, const double *x, const double *y) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fabs(x[i] - y[i]) > m ? fabs(x[i] - y[i]) : m;
  return m;
}
static inline double axt_dot(int64_t n, const double *x, const double *y) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

#endif
