/* Discretization wiring: mesh -> gs -> ax -> op, problem set-up and solve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"

void hx_disc_face_nodes(int p, int f, int *idx, int *stride_a, int *stride_b) {
  const int n = p + 1, dir = f / 2, fixed = (f % 2) ? p : 0;
  const int du = dir == 0 ? 1 : 0, dv = dir == 2 ? 1 : 2;
  const int stride[3] = {1, n, n * n};
  for (int b = 0; b < n; b++)
    for (int a = 0; a < n; a++) idx[a + n * b] = fixed * stride[dir] + a * stride[du] + b * stride[dv];
  if (stride_a) *stride_a = stride[du];
  if (stride_b) *stride_b = stride[dv];
}

int hx_disc_create(hx_mesh mesh, hx_backend b, const hx_disc_opts *o, hx_disc **out) {
  *out = NULL;
  HX_CHECK(o->p >= 1 && o->p <= 15, HX_ERR_INPUT, "order %d out of range 1..15", o->p);
  double t0 = hx_wtime();
  hx_disc *d;
  HX_CALL(HX_ALLOC(&d, 1));
  d->mesh = mesh, d->b = b, d->p = o->p;
  const int n = o->p + 1;
  d->n3 = n * n * n;
  d->E = hx_mesh_num_elements(mesh);
  d->nl = (int64_t)d->E * d->n3;
  HX_CALL(HX_ALLOC(&d->gid, d->nl));
  HX_CALL(HX_ALLOC(&d->x, d->nl));
  HX_CALL(HX_ALLOC(&d->y, d->nl));
  HX_CALL(HX_ALLOC(&d->z, d->nl));
  HX_CALL(HX_ALLOC(&d->dirichlet_l, d->nl));
  HX_CALL(hx_mesh_gll_ids(mesh, o->p, d->gid));
  HX_CALL(hx_mesh_gll_coords(mesh, o->p, d->x, d->y, d->z));

  /* Dirichlet flags: every node of a face carrying a Dirichlet tag */
  const int32_t *ftag = hx_mesh_face_tags(mesh);
  int fidx[16 * 16];
  for (int32_t e = 0; e < d->E; e++)
    for (int f = 0; f < 6; f++) {
      const int32_t t = ftag[6 * e + f];
      if (t < 0 || (o->dirichlet_tag && !o->dirichlet_tag[t])) continue;
      hx_disc_face_nodes(o->p, f, fidx, NULL, NULL);
      for (int q = 0; q < n * n; q++) d->dirichlet_l[(int64_t)e * d->n3 + fidx[q]] = 1;
    }

  /* per-element coefficients from the material table */
  double *kap, *lam;
  HX_CALL(HX_ALLOC(&kap, d->E));
  HX_CALL(HX_ALLOC(&lam, d->E));
  const int32_t *mat = hx_mesh_element_material(mesh);
  for (int32_t e = 0; e < d->E; e++) {
    kap[e] = o->kappa ? o->kappa[mat[e]] : 1.0;
    lam[e] = o->lambda ? o->lambda[mat[e]] : 0.0;
  }
  HX_CALL(hx_gs_create(b, hx_mesh_comm(mesh), d->nl, d->gid, &d->gs));
  HX_CALL(hx_gs_set_mask(d->gs, d->dirichlet_l));
  HX_CALL(hx_ax_create(b, o->p, d->E, hx_mesh_nodes_per_element(mesh), hx_mesh_element_nodes(mesh), kap,
                       lam, o->geo, &d->ax));
  HX_CALL(hx_op_create(d->gs, d->ax, o->overlap, &d->op));
  free(kap), free(lam);
  d->t_setup = hx_wtime() - t0;
  *out = d;
  return HX_SUCCESS;
}

int hx_disc_destroy(hx_disc **pd) {
  if (!pd || !*pd) return HX_SUCCESS;
  hx_disc *d = *pd;
  HX_CALL(hx_op_destroy(&d->op));
  HX_CALL(hx_ax_destroy(&d->ax));
  HX_CALL(hx_gs_destroy(&d->gs));
  free(d->gid), free(d->x), free(d->y), free(d->z), free(d->dirichlet_l);
  free(d);
  *pd = NULL;
  return HX_SUCCESS;
}

int hx_disc_eval(const hx_disc *d, hx_field f, double *h_l) {
  HX_CHECK(f.fn, HX_ERR_ARG, "field has no function");
  for (int64_t i = 0; i < d->nl; i++) h_l[i] = f.fn(f.ctx, d->x[i], d->y[i], d->z[i]);
  return HX_SUCCESS;
}

int hx_disc_neumann_load(const hx_disc *d, int tag, hx_field g, double *h_bn) {
  const int p = d->p, n = p + 1;
  double t[16], w[16], D[16 * 16];
  HX_CALL(hx_gll(n, t, w));
  HX_CALL(hx_lagrange_deriv(n, t, D));
  const int32_t *ftag = hx_mesh_face_tags(d->mesh);
  const double *X[3] = {d->x, d->y, d->z};
  int fidx[16 * 16];
  for (int32_t e = 0; e < d->E; e++)
    for (int f = 0; f < 6; f++) {
      if (ftag[6 * e + f] != tag) continue;
      int sa, sb;
      hx_disc_face_nodes(p, f, fidx, &sa, &sb);
      for (int b = 0; b < n; b++)
        for (int a = 0; a < n; a++) {
          const int64_t l = (int64_t)e * d->n3 + fidx[a + n * b];
          /* tangents dx/da, dx/db from the nodes on the face's lines through l */
          double tu[3] = {0, 0, 0}, tv[3] = {0, 0, 0};
          for (int q = 0; q < n; q++) {
            const int64_t lu = l + (int64_t)(q - a) * sa, lv = l + (int64_t)(q - b) * sb;
            for (int r = 0; r < 3; r++) tu[r] += D[a * n + q] * X[r][lu], tv[r] += D[b * n + q] * X[r][lv];
          }
          const double cx = tu[1] * tv[2] - tu[2] * tv[1], cy = tu[2] * tv[0] - tu[0] * tv[2],
                       cz = tu[0] * tv[1] - tu[1] * tv[0];
          h_bn[l] += w[a] * w[b] * sqrt(cx * cx + cy * cy + cz * cz) * g.fn(g.ctx, d->x[l], d->y[l], d->z[l]);
        }
    }
  return HX_SUCCESS;
}

int hx_disc_error(const hx_disc *d, const double *h_u, hx_field exact, double *l2, double *linf) {
  const int p = d->p, n = p + 1;
  const int q = p + 3 < 15 ? p + 3 : 15, m = q + 1, m3 = m * m * m;
  double tn[16], wn[16], tm[16], wm[16], I[16 * 16], Dm[16 * 16];
  HX_CALL(hx_gll(n, tn, wn));
  HX_CALL(hx_gll(m, tm, wm));
  HX_CALL(hx_lagrange_interp(n, tn, m, tm, I)); /* I[a*n + i] = l_i(tm_a) */
  HX_CALL(hx_lagrange_deriv(m, tm, Dm));
  double *X, *Y, *Z, *t1, *t2, *uq;
  const int64_t nq = (int64_t)d->E * m3;
  HX_CALL(HX_ALLOC(&X, nq));
  HX_CALL(HX_ALLOC(&Y, nq));
  HX_CALL(HX_ALLOC(&Z, nq));
  HX_CALL(HX_ALLOC(&t1, m * n * n));
  HX_CALL(HX_ALLOC(&t2, m * m * n));
  HX_CALL(HX_ALLOC(&uq, m3));
  HX_CALL(hx_mesh_gll_coords(d->mesh, q, X, Y, Z));
  double loc[2] = {0.0, 0.0};
  for (int32_t e = 0; e < d->E; e++) {
    const double *ue = h_u + (int64_t)e * d->n3;
    /* u at the order-q points: three 1D interpolations */
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int a = 0; a < m; a++) {
          double s = 0;
          for (int i = 0; i < n; i++) s += I[a * n + i] * ue[i + n * (j + n * k)];
          t1[a + m * (j + n * k)] = s;
        }
    for (int k = 0; k < n; k++)
      for (int b = 0; b < m; b++)
        for (int a = 0; a < m; a++) {
          double s = 0;
          for (int j = 0; j < n; j++) s += I[b * n + j] * t1[a + m * (j + n * k)];
          t2[a + m * (b + m * k)] = s;
        }
    for (int c = 0; c < m; c++)
      for (int b = 0; b < m; b++)
        for (int a = 0; a < m; a++) {
          double s = 0;
          for (int k = 0; k < n; k++) s += I[c * n + k] * t2[a + m * (b + m * k)];
          uq[a + m * (b + m * c)] = s;
        }
    const double *xe[3] = {X + (int64_t)e * m3, Y + (int64_t)e * m3, Z + (int64_t)e * m3};
    for (int c = 0; c < m; c++)
      for (int b = 0; b < m; b++)
        for (int a = 0; a < m; a++) {
          const int id = a + m * (b + m * c);
          double J[3][3];
          for (int r = 0; r < 3; r++) {
            double da = 0, db = 0, dc = 0;
            for (int l = 0; l < m; l++) {
              da += Dm[a * m + l] * xe[r][l + m * (b + m * c)];
              db += Dm[b * m + l] * xe[r][a + m * (l + m * c)];
              dc += Dm[c * m + l] * xe[r][a + m * (b + m * l)];
            }
            J[r][0] = da, J[r][1] = db, J[r][2] = dc;
          }
          const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                             J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                             J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
          const double err = uq[id] - exact.fn(exact.ctx, xe[0][id], xe[1][id], xe[2][id]);
          loc[0] += wm[a] * wm[b] * wm[c] * fabs(det) * err * err;
          loc[1] = fmax(loc[1], fabs(err));
        }
  }
  double glob[2];
  MPI_Comm comm = hx_mesh_comm(d->mesh);
  HX_MPI(MPI_Allreduce(&loc[0], &glob[0], 1, MPI_DOUBLE, MPI_SUM, comm));
  HX_MPI(MPI_Allreduce(&loc[1], &glob[1], 1, MPI_DOUBLE, MPI_MAX, comm));
  *l2 = sqrt(glob[0]);
  *linf = glob[1];
  free(X), free(Y), free(Z), free(t1), free(t2), free(uq);
  return HX_SUCCESS;
}

int hx_disc_solve(hx_disc *d, const double *h_f, const double *h_gd, const double *h_bn, hx_field exact,
                  const char *pc_name, const hx_pcg_opts *opts, const double *h_u0_l, double *h_u_l,
                  hx_disc_result *res) {
  memset(res, 0, sizeof *res);
  hx_backend b = d->b;
  const int64_t ng = hx_op_size(d->op);
  const size_t gbytes = sizeof(double) * (size_t)ng;
  res->dofs = hx_gs_num_global(d->gs);
  double *h_l, *d_b, *d_g, *d_x;
  HX_CALL(HX_ALLOC(&h_l, d->nl));
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)&d_b));
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)&d_g));
  HX_CALL(hx_mem_alloc(b, gbytes, (void **)&d_x));

  double t0 = hx_wtime();
  HX_CALL(hx_problem_rhs(d->op, h_f, h_gd, d->dirichlet_l, h_bn, d_b, d_g));
  /* initial guess of x = u0 - g on free nodes (masked), else 0 */
  HX_CALL(hx_mem_zero(b, d_x, gbytes));
  if (h_u0_l) {
    double *d_l;
    HX_CALL(hx_mem_alloc(b, sizeof(double) * (size_t)d->nl, (void **)&d_l));
    HX_CALL(hx_mem_to_device(b, d_l, h_u0_l, sizeof(double) * (size_t)d->nl));
    HX_CALL(hx_gs_assemble(d->gs, d_l, d_x));
    HX_CALL(hx_array_pointwise_mult(b, ng, d_x, d_x, hx_gs_inv_multiplicity(d->gs)));
    HX_CALL(hx_gs_apply_mask(d->gs, d_x));
    HX_CALL(hx_mem_free(b, (void **)&d_l));
  }
  res->t_rhs = hx_wtime() - t0;

  t0 = hx_wtime();
  hx_pc pc;
  hx_timer_start(HX_T_PRECOND);
  int ierr = hx_pc_create(pc_name, d->op, &pc);
  hx_timer_stop(HX_T_PRECOND);
  HX_CALL(ierr);
  res->t_pc_setup = hx_wtime() - t0;

  t0 = hx_wtime();
  hx_timer_start(HX_T_SOLVE);
  ierr = hx_pcg_solve(d->op, &pc, d_b, d_x, opts, &res->pcg);
  hx_timer_stop(HX_T_SOLVE);
  res->t_solve = hx_wtime() - t0;
  HX_CALL(ierr);
  HX_CALL(hx_pc_destroy(&pc));

  /* u = x + g */
  HX_CALL(hx_array_axpby(b, ng, d_x, 1.0, d_g, 1.0));
  HX_CALL(hx_op_to_l_host(d->op, d_x, h_l));
  if (exact.fn) {
    HX_CALL(hx_disc_error(d, h_l, exact, &res->err_l2, &res->err_max));
    res->exact_known = 1;
  }
  if (h_u_l) memcpy(h_u_l, h_l, sizeof(double) * (size_t)d->nl);
  HX_CALL(hx_mem_free(b, (void **)&d_b));
  HX_CALL(hx_mem_free(b, (void **)&d_g));
  HX_CALL(hx_mem_free(b, (void **)&d_x));
  free(h_l);
  return HX_SUCCESS;
}
