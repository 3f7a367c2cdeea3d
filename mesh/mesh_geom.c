/* Element map (trilinear hex8 / triquadratic hex27) by sum factorisation:
 * mapped points and Jacobian determinants at tensor-product points. */
#include <string.h>

#include "mesh_impl.h"

void hx_map_basis(int q, int n, const double *t, double *B, double *D) {
  for (int i = 0; i < n; i++) {
    double x = t[i];
    if (q == 2) {
      B[i * 2 + 0] = 0.5 * (1.0 - x), B[i * 2 + 1] = 0.5 * (1.0 + x);
      D[i * 2 + 0] = -0.5, D[i * 2 + 1] = 0.5;
    } else {
      B[i * 3 + 0] = 0.5 * x * (x - 1.0), B[i * 3 + 1] = 1.0 - x * x, B[i * 3 + 2] = 0.5 * x * (x + 1.0);
      D[i * 3 + 0] = x - 0.5, D[i * 3 + 1] = -2.0 * x, D[i * 3 + 2] = x + 0.5;
    }
  }
}

size_t hx_map_work_size(int n) {
  /* T1 (2 * q*q*n), T2 (3 * q*n*n), out dr ds dt (9 * n^3) */
  return (size_t)(2 * 9 * n + 3 * 3 * n * n + 9 * n * n * n);
}

void hx_map_eval(int q, const double *X, int n, const double *B, const double *D, double *xyz, double *detJ,
                 double *work) {
  const int n2 = n * n, n3 = n2 * n;
  double *T1v = work, *T1d = T1v + 9 * n;
  double *T2vv = T1d + 9 * n, *T2dv = T2vv + 3 * n2, *T2vd = T2dv + 3 * n2;
  double *J = T2vd + 3 * n2; /* J[(comp*3 + dir) * n3 + node] */
  const int der = detJ != NULL;
  for (int comp = 0; comp < 3; comp++) {
    /* along r */
    for (int c = 0; c < q; c++)
      for (int b = 0; b < q; b++)
        for (int i = 0; i < n; i++) {
          double sv = 0, sd = 0;
          for (int a = 0; a < q; a++) {
            double xv = X[(a + q * (b + q * c)) * 3 + comp];
            sv += B[i * q + a] * xv;
            sd += D[i * q + a] * xv;
          }
          T1v[(c * q + b) * n + i] = sv;
          T1d[(c * q + b) * n + i] = sd;
        }
    /* along s */
    for (int c = 0; c < q; c++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          double vv = 0, dv = 0, vd = 0;
          for (int b = 0; b < q; b++) {
            double tv = T1v[(c * q + b) * n + i];
            vv += B[j * q + b] * tv;
            if (der) dv += B[j * q + b] * T1d[(c * q + b) * n + i], vd += D[j * q + b] * tv;
          }
          T2vv[(c * n + j) * n + i] = vv;
          T2dv[(c * n + j) * n + i] = dv;
          T2vd[(c * n + j) * n + i] = vd;
        }
    /* along t */
    for (int k = 0; k < n; k++)
      for (int ji = 0; ji < n2; ji++) {
        double v = 0, dr = 0, ds = 0, dt = 0;
        for (int c = 0; c < q; c++) {
          double w = B[k * q + c], wd = D[k * q + c], tvv = T2vv[c * n2 + ji];
          v += w * tvv;
          if (der) dr += w * T2dv[c * n2 + ji], ds += w * T2vd[c * n2 + ji], dt += wd * tvv;
        }
        int node = k * n2 + ji;
        if (xyz) xyz[node * 3 + comp] = v;
        if (der) {
          J[(comp * 3 + 0) * n3 + node] = dr;
          J[(comp * 3 + 1) * n3 + node] = ds;
          J[(comp * 3 + 2) * n3 + node] = dt;
        }
      }
  }
  if (der)
    for (int node = 0; node < n3; node++) {
      double a[3][3];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) a[r][c] = J[(r * 3 + c) * n3 + node];
      detJ[node] = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                   a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                   a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    }
}
