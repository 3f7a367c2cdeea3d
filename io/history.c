/* Residual histories: collected in memory, written as history.csv and
 * history.h5 on rank 0 (each under a temporary name, then renamed). */
#include <hdf5.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "h5_impl.h"

struct hx_history_s {
  int n, cap;
  int *it;
  double *res, *rel, *t;
  /* time-dependent runs (hx_history_set_step): the step and time of each row */
  int has_step, cur_step;
  double cur_time;
  int *step;
  double *time;
};

int hx_history_create(hx_history *h) {
  *h = NULL;
  HX_CALL(hx_calloc(1, sizeof(struct hx_history_s), h));
  return HX_SUCCESS;
}

void hx_history_destroy(hx_history *h) {
  if (!h || !*h) return;
  free((*h)->it), free((*h)->res), free((*h)->rel), free((*h)->t);
  free((*h)->step), free((*h)->time);
  free(*h);
  *h = NULL;
}

int hx_history_append(hx_history h, int iteration, double residual, double rel_residual, double time_s) {
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 256;
    HX_CALL(hx_realloc((size_t)cap, sizeof(int), &h->it));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &h->res));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &h->rel));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &h->t));
    HX_CALL(hx_realloc((size_t)cap, sizeof(int), &h->step));
    HX_CALL(hx_realloc((size_t)cap, sizeof(double), &h->time));
    h->cap = cap;
  }
  h->it[h->n] = iteration, h->res[h->n] = residual, h->rel[h->n] = rel_residual, h->t[h->n] = time_s;
  h->step[h->n] = h->cur_step, h->time[h->n] = h->cur_time;
  h->n++;
  return HX_SUCCESS;
}

int hx_history_size(hx_history h) { return h ? h->n : 0; }

void hx_history_set_step(hx_history h, int step, double time) {
  h->has_step = 1, h->cur_step = step, h->cur_time = time;
}

int hx_history_get(hx_history h, int i, int *iteration, double *residual, double *rel_residual,
                   double *time_s) {
  HX_CHECK(i >= 0 && i < h->n, HX_ERR_ARG, "history row %d out of range (%d rows)", i, h->n);
  if (iteration) *iteration = h->it[i];
  if (residual) *residual = h->res[i];
  if (rel_residual) *rel_residual = h->rel[i];
  if (time_s) *time_s = h->t[i];
  return HX_SUCCESS;
}

static int write_csv(hx_history h, const char *path) {
  size_t cap = 64 + (size_t)h->n * 136, len = 0;
  char *buf = malloc(cap);
  HX_CHECK(buf, HX_ERR_MEM, "out of memory");
  len += (size_t)snprintf(buf, cap, "%siteration,residual,rel_residual,time_s\n", h->has_step ? "step,time," : "");
  for (int i = 0; i < h->n; i++) {
    if (h->has_step) len += (size_t)snprintf(buf + len, cap - len, "%d,%.17g,", h->step[i], h->time[i]);
    len += (size_t)snprintf(buf + len, cap - len, "%d,%.17g,%.17g,%.9g\n", h->it[i], h->res[i], h->rel[i],
                            h->t[i]);
  }
  int err = hx_io_write_file_atomic(path, buf, len);
  free(buf);
  HX_CALL(err);
  return HX_SUCCESS;
}

static int h5_write_1d(hid_t f, const char *path, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *data) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t ds = sp >= 0 ? H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
  herr_t st =
      ds >= 0 && n > 0 ? H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : (ds >= 0 ? 0 : -1);
  char what[128];
  snprintf(what, sizeof what, "dataset %s", name);
  int err = st >= 0 ? HX_SUCCESS : hx_h5_write_error(path, what); /* before the closes clear the stack */
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  return err;
}

static int write_h5(hx_history h, const char *path) {
  char tmp[4200];
  HX_CHECK(snprintf(tmp, sizeof tmp, "%s.tmp", path) < (int)sizeof tmp, HX_ERR_IO, "path too long: %s", path);
  /* HDF5 does not recover from a full disk: check the space first */
  HX_CALL(hx_io_reserve_space(path, tmp, 65536.0 + 40.0 * h->n));
  H5E_auto2_t efn;
  void *ecd;
  H5Eget_auto2(H5E_DEFAULT, &efn, &ecd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    char why[512];
    hx_h5_reason(why, sizeof why);
    H5Eset_auto2(H5E_DEFAULT, efn, ecd);
    return HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", tmp, why);
  }
  int64_t *it = malloc(sizeof(int64_t) * (size_t)(h->n ? h->n : 1));
  int err = it ? HX_SUCCESS : HX_ERROR(HX_ERR_MEM, "out of memory");
  for (int i = 0; !err && i < h->n; i++) it[i] = h->it[i];
  hsize_t n = (hsize_t)h->n;
  if (!err) err = h5_write_1d(f, path, "iteration", H5T_STD_I64LE, H5T_NATIVE_INT64, n, it);
  if (!err) err = h5_write_1d(f, path, "residual", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, h->res);
  if (!err) err = h5_write_1d(f, path, "rel_residual", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, h->rel);
  if (!err) err = h5_write_1d(f, path, "time_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, h->t);
  for (int i = 0; !err && h->has_step && i < h->n; i++) it[i] = h->step[i];
  if (!err && h->has_step) err = h5_write_1d(f, path, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, n, it);
  if (!err && h->has_step) err = h5_write_1d(f, path, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, h->time);
  free(it);
  err = hx_h5_close(f, path, tmp, err);
  H5Eset_auto2(H5E_DEFAULT, efn, ecd);
  if (!err && rename(tmp, path) != 0) err = HX_ERROR(HX_ERR_IO, "cannot rename '%s' to '%s'", tmp, path);
  if (err) remove(tmp);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_history_write(hx_history h, MPI_Comm comm, const char *dir) {
  int rank = 0, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    char p[4200];
    snprintf(p, sizeof p, "%s/history.csv", dir);
    err = write_csv(h, p);
    if (!err) {
      snprintf(p, sizeof p, "%s/history.h5", dir);
      err = write_h5(h, p);
    }
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  return HX_SUCCESS;
}

static int h5_read_1d(hid_t f, const char *path, const char *name, hid_t mtype, hsize_t *n, void **data,
                      size_t elsize) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  HX_CHECK(ds >= 0, HX_ERR_INPUT, "%s: no dataset '%s' (not a hexcg history file?)", path, name);
  hid_t sp = H5Dget_space(ds);
  hsize_t dims[2] = {0, 0};
  int nd = H5Sget_simple_extent_ndims(sp);
  if (nd == 1) H5Sget_simple_extent_dims(sp, dims, NULL);
  H5Sclose(sp);
  if (nd != 1 || (*n != (hsize_t)-1 && dims[0] != *n)) {
    H5Dclose(ds);
    return HX_ERROR(HX_ERR_INPUT, "%s: dataset '%s' has the wrong shape", path, name);
  }
  /* refuse a declared length the file does not hold before allocating for it
   * (a chunked dataset can declare 2^40 rows in a few hundred bytes) */
  hid_t ft = H5Dget_type(ds);
  const size_t fsize = ft >= 0 ? H5Tget_size(ft) : 0;
  if (ft >= 0) H5Tclose(ft);
  const hsize_t stored = H5Dget_storage_size(ds);
  if (dims[0] > (hsize_t)INT_MAX || (fsize && stored / fsize < dims[0])) {
    H5Dclose(ds);
    return HX_ERROR(HX_ERR_INPUT, "%s: dataset '%s' declares %llu rows but the file holds %llu bytes of them",
                    path, name, (unsigned long long)dims[0], (unsigned long long)stored);
  }
  *n = dims[0];
  int err = hx_calloc((size_t)dims[0], elsize, data);
  if (!err && dims[0] > 0 && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0)
    err = HX_ERROR(HX_ERR_IO, "%s: cannot read dataset '%s'", path, name);
  H5Dclose(ds);
  return err;
}

int hx_history_read(const char *path, hx_history *hp) {
  *hp = NULL;
  H5E_auto2_t fn;
  void *cd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &cd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, fn, cd);
  HX_CHECK(f >= 0, HX_ERR_INPUT, "cannot open '%s' as an HDF5 file", path);
  hsize_t n = (hsize_t)-1;
  int64_t *it = NULL;
  double *res = NULL, *rel = NULL, *t = NULL;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int err = h5_read_1d(f, path, "iteration", H5T_NATIVE_INT64, &n, (void **)&it, sizeof *it);
  if (!err) err = h5_read_1d(f, path, "residual", H5T_NATIVE_DOUBLE, &n, (void **)&res, sizeof *res);
  if (!err) err = h5_read_1d(f, path, "rel_residual", H5T_NATIVE_DOUBLE, &n, (void **)&rel, sizeof *rel);
  if (!err) err = h5_read_1d(f, path, "time_s", H5T_NATIVE_DOUBLE, &n, (void **)&t, sizeof *t);
  H5Eset_auto2(H5E_DEFAULT, fn, cd);
  H5Fclose(f);
  hx_history h = NULL;
  if (!err) err = hx_history_create(&h);
  for (hsize_t i = 0; !err && i < n; i++)
    if (it[i] < 0 || it[i] > HX_HISTORY_MAX_ITERATION)
      err = HX_ERROR(HX_ERR_INPUT, "%s: row %llu: iteration %lld is not in [0, %d]", path,
                     (unsigned long long)i, (long long)it[i], HX_HISTORY_MAX_ITERATION);
  for (hsize_t i = 0; !err && i < n; i++) err = hx_history_append(h, (int)it[i], res[i], rel[i], t[i]);
  free(it), free(res), free(rel), free(t);
  if (err) {
    hx_history_destroy(&h);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *hp = h;
  return HX_SUCCESS;
}
