/* Several right-hand sides in one steady run (problem.rhs a list,
 * docs/case-format.md "Several right-hand sides"): each column's data at
 * the nodes, the block solve (hx_api_solve_many_l: block PCG), the
 * columns' figures for summary.yaml and the log, the folders of their
 * solution files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_run.h"

void hx_run_columns_free(hx_run_columns *c) {
  for (int i = 0; i < c->k; i++) {
    if (c->hf) free(c->hf[i]);
    if (c->hu) free(c->hu[i]);
  }
  free(c->hf), free(c->hu), free(c->pr), free(c->err);
  memset(c, 0, sizeof *c);
}

/* column i's expression evaluated at the nodes, refused where not finite
 * (the case position, the expression and the node) */
static int eval_checked(const hx_case *cs, const char *what, int i, const hx_expr *e, int64_t nl,
                        const double *X, const double *Y, const double *Z, double *v) {
  char key[48];
  snprintf(key, sizeof key, "problem.%s.%d", what, i);
  hx_expr_eval_array(e, (size_t)nl, X, Y, Z, v);
  HX_CALL(hx_case_check_finite(cs, key, e, (size_t)nl, X, Y, Z, v));
  return HX_SUCCESS;
}

int hx_run_columns_data(MPI_Comm comm, const hx_case *cs, hx_disc d, double **hf, hx_run_columns *c) {
  const int k = cs->problem.nrhs;
  const int64_t nl = hx_disc_num_l(d), n1 = nl > 0 ? nl : 1;
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  c->k = k;
  HX_CALL(HX_ALLOC(&c->hf, k));
  HX_CALL(HX_ALLOC(&c->hu, k));
  HX_CALL(HX_ALLOC(&c->pr, k));
  HX_CALL(HX_ALLOC(&c->err, 2 * k));
  c->hf[0] = *hf, *hf = NULL; /* problem/'s f: column 0's (checked there) */
  int err = HX_SUCCESS;
  for (int i = 0; i < k && !err; i++) {
    err = HX_ALLOC(&c->hu[i], n1);
    if (!err && i > 0) err = HX_ALLOC(&c->hf[i], n1);
    if (!err && i > 0) err = eval_checked(cs, "rhs", i, cs->problem.rhs_list[i], nl, X, Y, Z, c->hf[i]);
    /* each column's exact solution, checked as problem/ checks column 0's */
    if (!err && i > 0 && cs->problem.exact_list)
      err = eval_checked(cs, "exact", i, cs->problem.exact_list[i], nl, X, Y, Z, c->hu[i]);
  }
  HX_CALL(hx_io_agree_error(comm, err));
  return HX_SUCCESS;
}

/* the columns' figures into res and the log, the top-level ones from them */
static void columns_report(const hx_case *cs, const hx_run_columns *c, hx_run_result *res) {
  const int k = c->k;
  int worst = 0, failed = -1;
  res->ncolumns = k;
  res->exact_known = cs->problem.exact_list != NULL;
  res->iterations = 0, res->converged = 1, res->error_l2 = res->error_max = 0.0;
  for (int i = 0; i < k; i++) {
    const hx_pcg_result *p = &c->pr[i];
    struct hx_run_column *col = &res->columns[i];
    col->iterations = p->iterations, col->converged = p->reason > 0;
    snprintf(col->reason, sizeof col->reason, "%s", hx_reason_name(p->reason));
    col->residual0 = p->r0norm, col->residual = p->rnorm, col->rel_residual = p->rel;
    col->exact_known = res->exact_known, col->error_l2 = c->err[i], col->error_max = c->err[k + i];
    if (p->iterations > res->iterations) res->iterations = p->iterations;
    if (!col->converged && failed < 0) failed = i;
    if (p->rel > c->pr[worst].rel) worst = i;
    res->error_l2 = fmax(res->error_l2, col->error_l2), res->error_max = fmax(res->error_max, col->error_max);
    char e[80] = "";
    if (col->exact_known) snprintf(e, sizeof e, ", error L2 %.3e, max %.3e", col->error_l2, col->error_max);
    hx_log(HX_LOG_NORMAL, "column %d: %d iterations, %s, relative residual %.3e%s\n", i, p->iterations,
           hx_reason_name(p->reason), p->rel, e);
  }
  res->converged = failed < 0;
  snprintf(res->reason, sizeof res->reason, "%s", res->columns[failed < 0 ? 0 : failed].reason);
  res->residual0 = c->pr[worst].r0norm, res->residual = c->pr[worst].rnorm;
  res->rel_residual = c->pr[worst].rel;
}

int hx_run_columns_solve(hexcg_solver *s, const hx_case *cs, hx_run_columns *c, const double *hg,
                         const double *hbn, hx_solve_result *dr, hx_run_result *res) {
  const int k = c->k;
  hx_run_texpr tx[HX_CASE_RHS_MAX];
  hx_field ex[HX_CASE_RHS_MAX];
  for (int i = 0; i < k; i++) {
    tx[i].e = cs->problem.exact_list ? cs->problem.exact_list[i] : NULL, tx[i].t = 0.0;
    ex[i] = tx[i].e ? (hx_field){hx_run_texpr_fn, &tx[i], hx_run_texpr_fn_n} : (hx_field){NULL, NULL, NULL};
  }
  hx_log(HX_LOG_NORMAL,
         "%d right-hand sides at once (block PCG); no history.csv: the block solve has no "
         "residual monitor\n",
         k);
  const double t0 = hx_wtime();
  const int err = hx_api_solve_many_l(s, k, c->hf, hg, hbn, ex, c->hu, c->pr, c->err, c->err + k);
  if (err == HX_ERR_UNSUPPORTED) { /* the case's problem has no block path: an input error (exit status 2) */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hx_error_message());
    hx_error_clear();
    return HX_ERROR(HX_ERR_INPUT, "%s: problem.rhs: %s", cs->path, msg);
  }
  HX_CALL(err);
  hx_pc_stats pst;
  hx_pc_get_stats(s->pc, &pst);
  memset(dr, 0, sizeof *dr);
  int most = 0;
  for (int i = 1; i < k; i++)
    if (c->pr[i].iterations > c->pr[most].iterations) most = i;
  dr->pcg = c->pr[most]; /* the block run's seconds are in every column's */
  dr->pcg.starts = 1;
  dr->dofs = hx_disc_num_dofs(s->d);
  dr->t_pc_setup = pst.t_setup;
  dr->t_solve = hx_wtime() - t0 - pst.t_setup;
  columns_report(cs, c, res);
  return HX_SUCCESS;
}

/* output.dir/series (created by rank 0) into sdir */
static int series_dir(MPI_Comm comm, const hx_case *cs, char *sdir, size_t len) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (snprintf(sdir, len, "%s/series", cs->output.dir) >= (int)len)
    return HX_ERROR(HX_ERR_IO, "output.dir '%s': the path of its series folder is too long", cs->output.dir);
  int err = HX_SUCCESS;
  if (rank == 0 && mkdir(sdir, 0777) != 0 && errno != EEXIST)
    err = HX_ERROR(HX_ERR_IO, "cannot create '%s': %s (the columns' solution files)", sdir, strerror(errno));
  HX_CALL(hx_io_agree_error(comm, err));
  return HX_SUCCESS;
}

/* column i as the frame series/solution_00000i.h5 (.hdf), its exact
 * solution evaluated into work where the fields ask for it */
static int write_frame(MPI_Comm comm, const hx_case *cs, hx_mesh m, hx_disc d, const char *sdir, int i,
                       const double *u, double *work, char *name, size_t len) {
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  const int vtk = cs->output.format == HX_OUTPUT_VTKHDF, fp32 = cs->output.precision == HX_OUTPUT_FP32;
  snprintf(name, len, "solution_%06d.%s", i, vtk ? "hdf" : "h5");
  const int ex = cs->problem.exact_list && (cs->output.fields & (HX_FIELD_EXACT | HX_FIELD_ERROR));
  if (ex) hx_expr_eval_array(cs->problem.exact_list[i], (size_t)hx_disc_num_l(d), X, Y, Z, work);
  const int32_t E = hx_disc_num_elements(d);
  const int64_t *gid = hx_mesh_element_global_ids(m);
  if (vtk)
    HX_CALL(hx_io_write_vtkhdf(comm, sdir, name, HX_SERIES_VTK_MESH_NAME, NULL, cs->output.fields, fp32,
                               cs->order, E, gid, X, Y, Z, u, ex ? work : NULL, NULL));
  else
    HX_CALL(hx_io_write_series_frame(comm, sdir, name, NULL, cs->output.fields, fp32, cs->order, E, gid, u,
                                     ex ? work : NULL, NULL));
  return HX_SUCCESS;
}

int hx_run_columns_output(MPI_Comm comm, const hx_case *cs, hx_mesh m, hx_disc d, const hx_run_columns *c,
                          const double *u0, double *work) {
  const double *X, *Y, *Z;
  HX_CALL(hx_disc_coords(d, &X, &Y, &Z));
  char sdir[4200], names[HX_CASE_RHS_MAX][40];
  HX_CALL(series_dir(comm, cs, sdir, sizeof sdir));
  const int vtk = cs->output.format == HX_OUTPUT_VTKHDF, rank_f = (cs->output.fields & HX_FIELD_RANK) != 0;
  if (vtk) /* a VTKHDF mesh (and rank) the frames link to */
    HX_CALL(hx_io_write_vtkhdf(comm, sdir, HX_SERIES_VTK_MESH_NAME, NULL, NULL, rank_f ? HX_FIELD_RANK : 0, 0,
                               cs->order, hx_disc_num_elements(d), hx_mesh_element_global_ids(m), X, Y, Z,
                               NULL, NULL, NULL));
  else
    HX_CALL(hx_io_write_series_mesh(comm, sdir, rank_f, cs->order, hx_disc_num_elements(d),
                                    hx_mesh_element_global_ids(m), X, Y, Z, NULL));
  const char *files[HX_CASE_RHS_MAX];
  double times[HX_CASE_RHS_MAX];
  char fl[HX_CASE_RHS_MAX][48];
  for (int i = 0; i < c->k; i++) {
    HX_CALL(write_frame(comm, cs, m, d, sdir, i, i ? c->hu[i] : u0, work, names[i], sizeof names[i]));
    snprintf(fl[i], sizeof fl[i], "series/%.39s", names[i]); /* names[i] holds at most 39 */
    files[i] = fl[i], times[i] = (double)i; /* the column's index as the "time" */
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int err = HX_SUCCESS;
  if (rank == 0) /* solution.xdmf (solution.hdf.series): the columns as a temporal collection */
    err = vtk ? hx_io_write_vtkhdf_series(cs->output.dir, c->k, files, times)
              : hx_io_write_solution_series(cs->output.dir, cs->order,
                                            (long long)hx_mesh_num_global_elements(m), cs->output.fields,
                                            cs->output.precision == HX_OUTPUT_FP32, c->k, files, times);
  HX_CALL(hx_io_agree_error(comm, err));
  return HX_SUCCESS;
}
