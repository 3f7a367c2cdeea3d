/* HDF5 helpers: failure reasons and a close that survives a full disk. */
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "h5_impl.h"

typedef struct {
  char *buf;
  size_t len;
  int sys; /* found a system error string */
} reason_ctx;

static herr_t reason_walk(unsigned n, const H5E_error2_t *e, void *data) {
  reason_ctx *r = (reason_ctx *)data;
  (void)n;
  if (r->sys || !e->desc) return 0;
  /* MPI-IO: "... MPI error string is 'Other I/O error , error stack:\nADIOI_...(80): Other I/O error No space
   * left on device'"; the sec2 driver: "... errno = 28, error message = 'No space left on device', ..." */
  const char *s = strstr(e->desc, "error message = '");
  if (s) {
    s += strlen("error message = '");
    snprintf(r->buf, r->len, "%.*s", (int)strcspn(s, "'"), s);
    r->sys = 1;
    return 0;
  }
  s = strstr(e->desc, "MPI error string is");
  if (s) {
    const char *last = strrchr(s, '\n');
    const char *io = NULL;
    for (const char *q = last ? last : s; (q = strstr(q, "I/O error ")) != NULL; q++) io = q;
    if (io) s = io + strlen("I/O error ");
    else if (last) s = last + 1;
    snprintf(r->buf, r->len, "%.*s", (int)strcspn(s, "'"), s);
    r->sys = 1;
    return 0;
  }
  snprintf(r->buf, r->len, "%s", e->desc); /* innermost so far */
  return 0;
}

void hx_h5_reason(char *buf, size_t len) {
  reason_ctx r = {buf, len, 0};
  snprintf(buf, len, "HDF5 error");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_walk, &r);
}

int hx_h5_write_error(const char *path, const char *what) {
  char why[512];
  hx_h5_reason(why, sizeof why);
  return HX_ERROR(HX_ERR_IO, "cannot write '%s': %s (%s)", path, why, what);
}

const char *hx_h5_mpio_name(const char *path, char *buf, size_t len) {
  const char *prefix = "";
  if (strchr(path, ':')) {
    prefix = "ufs:";
    /* the folder holding path decides the driver (the file may not exist yet) */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    struct statfs st;
    if (statfs(dir, &st) == 0 && st.f_type == 0x6969 /* NFS_SUPER_MAGIC */) prefix = "nfs:";
  }
  int n = snprintf(buf, len, "%s%s", prefix, path);
  return n >= 0 && (size_t)n < len ? buf : NULL;
}

/* set when HDF5 could not close a file: its cleanup at MPI_Finalize would crash */
static int h5_unclean = 0;

int hx_io_finalize(void) {
  if (h5_unclean) return 1;
  H5close();
  return 0;
}

int hx_h5_close(hid_t f, const char *path, const char *tmp, int err) {
  if (!err && H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) err = hx_h5_write_error(path, "flushing the file");
  /* the file is discarded: give its space back so that closing it (which
   * writes HDF5's metadata) cannot fail on a full disk */
  if (err && truncate(tmp, 0) != 0) { /* nothing more to do: the close reports */
  }
  char first[2048] = "";
  if (err) snprintf(first, sizeof first, "%s", hx_error_message());
  if (H5Fclose(f) < 0) {
    h5_unclean = 1;
    if (!err) err = hx_h5_write_error(path, "closing the file");
    else hx_error_set(__FILE__, __LINE__, __func__, err, "%s", first); /* keep the first reason */
  }
  return err;
}
