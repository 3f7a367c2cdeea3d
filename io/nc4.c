/* netCDF-4 files (the Exodus II reader's, mesh/mesh_exodus.c): an HDF5 file
 * whose root datasets are the netCDF dimensions (dimension scales) and
 * variables, read with hexcg's HDF5 (Debian's libnetcdf links the serial one,
 * which cannot share a process with it). */
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "hx_io.h"

static int h5_append(hx_nc4_file *x, size_t *cap, const void *src, int type, uint64_t n) {
  const int ts = type == 2 ? 1 : 8;
  const size_t need = x->len + (size_t)n * (size_t)ts;
  if (need > *cap) {
    size_t c = *cap ? *cap : 4096;
    while (c < need) c *= 2;
    uint8_t *b = realloc(x->data, c);
    if (!b) return HX_ERROR(HX_ERR_MEM, "out of memory");
    x->data = b, *cap = c;
  }
  uint8_t *o = x->data + x->len;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t u = 0;
    if (type == 2)
      u = ((const uint8_t *)src)[i];
    else
      memcpy(&u, (const uint8_t *)src + 8 * i, 8);
    for (int k = 0; k < ts; k++) o[(size_t)i * (size_t)ts + (size_t)k] = (uint8_t)(u >> (8 * (ts - 1 - k)));
  }
  x->len = need;
  return HX_SUCCESS;
}

int hx_io_nc4_read(const char *path, int (*wanted)(const char *name), const char *text_attr, hx_nc4_file *x) {
  memset(x, 0, sizeof *x);
  H5E_auto2_t efunc;
  void *edata;
  H5Eget_auto2(H5E_DEFAULT, &efunc, &edata);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures become messages here */
  int err = HX_SUCCESS;
  size_t cap = 0;
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  H5G_info_t gi;
  if (f < 0 || H5Gget_info(f, &gi) < 0) {
    err = HX_ERROR(HX_ERR_INPUT, "%s: a netCDF-4 (HDF5) file that HDF5 cannot open: it is truncated or corrupt (copy or write it "
                  "again)",
                  path);
    goto done;
  }
  if (gi.nlinks > 1000000) gi.nlinks = 1000000;
  err = HX_ALLOC(&x->dims, gi.nlinks + 1);
  if (!err) err = HX_ALLOC(&x->vars, gi.nlinks + 1);
  for (hsize_t i = 0; !err && i < gi.nlinks; i++) {
    char name[128];
    const ssize_t l = H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
    if (l <= 0 || (size_t)l >= sizeof name) continue;
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) continue; /* a group or a named type */
    const hid_t sp = H5Dget_space(d), ty = H5Dget_type(d);
    hsize_t dims[8] = {0}, maxd[8] = {0};
    const int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd >= 0 && nd <= 8 && H5Sget_simple_extent_dims(sp, dims, maxd) >= 0) {
      const int rec = nd > 0 && maxd[0] == H5S_UNLIMITED;
      int only_dim = 0;
      if (H5Aexists(d, "CLASS") > 0) { /* a dimension scale: a dimension */
        hx_nc4_dim *dm = &x->dims[x->ndims++];
        snprintf(dm->name, sizeof dm->name, "%s", name);
        dm->len = nd > 0 && !rec ? dims[0] : 0;
        char nm[64] = "";
        const hid_t a = H5Aexists(d, "NAME") > 0 ? H5Aopen(d, "NAME", H5P_DEFAULT) : -1;
        if (a >= 0) {
          const hid_t at = H5Aget_type(a);
          if (at >= 0 && H5Tget_class(at) == H5T_STRING && !H5Tis_variable_str(at) && H5Tget_size(at) < sizeof nm)
            H5Aread(a, at, nm);
          if (at >= 0) H5Tclose(at);
          H5Aclose(a);
        }
        only_dim = !strncmp(nm, "This is a netCDF dimension but not a netCDF variable", 20);
      }
      const H5T_class_t cl = H5Tget_class(ty);
      const int type = cl == H5T_INTEGER ? 10 : cl == H5T_FLOAT ? 6 : (cl == H5T_STRING && H5Tget_size(ty) == 1) ? 2 : 0;
      if (!only_dim && type) {
        hx_nc4_var *v = &x->vars[x->nvars++];
        snprintf(v->name, sizeof v->name, "%s", name);
        v->nd = nd, v->type = type, v->rec = rec;
        uint64_t n = 1;
        for (int k = 0; k < nd; k++) v->shape[k] = dims[k], n = dims[k] && n > UINT64_MAX / dims[k] ? UINT64_MAX : n * dims[k];
        if (text_attr && H5Aexists(d, text_attr) > 0) {
          const hid_t a = H5Aopen(d, text_attr, H5P_DEFAULT), at = a >= 0 ? H5Aget_type(a) : -1;
          char t[256] = "";
          if (at >= 0 && H5Tget_class(at) == H5T_STRING && !H5Tis_variable_str(at) && H5Tget_size(at) < sizeof t)
            H5Aread(a, at, t);
          snprintf(v->text_attr, sizeof v->text_attr, "%s", t);
          if (at >= 0) H5Tclose(at);
          if (a >= 0) H5Aclose(a);
        }
        v->begin = UINT64_MAX; /* not loaded: var_check says so if it is ever read */
        if (!rec && (!wanted || wanted(name)) && n < ((uint64_t)1 << 31)) {
          void *tmp = malloc((size_t)(n ? n : 1) * 8);
          if (!tmp) {
            err = HX_ERROR(HX_ERR_MEM, "out of memory");
          } else {
            const hid_t mt = type == 10 ? H5T_NATIVE_INT64 : type == 6 ? H5T_NATIVE_DOUBLE : ty;
            if (n == 0 || H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) >= 0) {
              const uint64_t at = x->len;
              err = h5_append(x, &cap, tmp, type, n);
              if (!err) v->begin = at;
            } else {
              err = HX_ERROR(HX_ERR_INPUT, "%s: reading the variable %s failed in HDF5: the file is truncated or corrupt (copy "
                            "or write it again)",
                            path, name);
            }
            free(tmp);
          }
        }
      }
    }
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
  }
done:
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, efunc, edata);
  if (err) hx_io_nc4_free(x);
  return err;
}

void hx_io_nc4_free(hx_nc4_file *f) {
  if (!f) return;
  free(f->dims);
  free(f->vars);
  free(f->data);
  memset(f, 0, sizeof *f);
}

