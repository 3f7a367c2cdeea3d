/* The output folder, atomic file writes and error agreement across ranks. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_impl.h"

/* Files hexcg writes into an output folder (removed by --force). */
static const char *const hx_outputs[] = {"case.yaml",     "summary.yaml", "solution.h5",
                                         "solution.xdmf", "history.csv",  "history.h5"};

int hx_io_bcast_error(MPI_Comm comm, int root, int code) {
  int rank = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Bcast(&code, 1, MPI_INT, root, comm));
  if (code == HX_SUCCESS) return HX_SUCCESS;
  char msg[2048];
  if (rank == root) snprintf(msg, sizeof msg, "%s", hx_error_message());
  HX_MPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, root, comm));
  msg[sizeof msg - 1] = '\0';
  if (rank != root) return hx_error_set(__FILE__, __LINE__, __func__, code, "%s", msg);
  return code;
}

int hx_io_write_file_atomic(const char *path, const char *data, size_t len) {
  size_t n = strlen(path) + 8;
  char *tmp = malloc(n);
  HX_CHECK(tmp, HX_ERR_MEM, "out of memory");
  snprintf(tmp, n, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    int e = errno;
    free(tmp);
    return HX_ERROR(HX_ERR_IO, "cannot create '%s.tmp': %s", path, strerror(e));
  }
  size_t w = len ? fwrite(data, 1, len, f) : 0;
  int bad = w != len;
  bad |= fflush(f) != 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    free(tmp);
    return HX_ERROR(HX_ERR_IO, "cannot write '%s': %s", path, strerror(e));
  }
  free(tmp);
  return HX_SUCCESS;
}

static int mkdir_p(const char *dir) {
  char buf[4096];
  HX_CHECK(strlen(dir) < sizeof buf, HX_ERR_INPUT, "output directory name is too long");
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return HX_ERROR(HX_ERR_IO, "cannot create directory '%s': %s", buf, strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST)
    return HX_ERROR(HX_ERR_IO, "cannot create directory '%s': %s", buf, strerror(errno));
  return HX_SUCCESS;
}

static int remove_outputs(const char *dir) {
  char p[4200];
  for (size_t i = 0; i < sizeof hx_outputs / sizeof hx_outputs[0]; i++) {
    for (int tmp = 0; tmp < 2; tmp++) {
      snprintf(p, sizeof p, "%s/%s%s", dir, hx_outputs[i], tmp ? ".tmp" : "");
      if (remove(p) != 0 && errno != ENOENT)
        return HX_ERROR(HX_ERR_IO, "cannot remove '%s': %s", p, strerror(errno));
    }
  }
  return HX_SUCCESS;
}

int hx_output_prepare_dir(MPI_Comm comm, const char *dir, int force, int *created) {
  int rank = 0, err = HX_SUCCESS, made = 0;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    struct stat st;
    if (!dir || !dir[0]) {
      err = HX_ERROR(HX_ERR_INPUT, "output directory name is empty");
    } else if (stat(dir, &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        err = HX_ERROR(HX_ERR_INPUT, "output directory '%s' exists and is not a directory", dir);
      else if (!force)
        err = HX_ERROR(HX_ERR_INPUT, "output directory '%s' exists; use --force to overwrite it", dir);
      else
        err = remove_outputs(dir);
    } else {
      err = mkdir_p(dir);
      made = err == HX_SUCCESS;
    }
  }
  err = hx_io_bcast_error(comm, 0, err);
  HX_MPI(MPI_Bcast(&made, 1, MPI_INT, 0, comm));
  if (created) *created = made;
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_output_discard_dir(MPI_Comm comm, const char *dir, int created) {
  int rank = 0, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    err = remove_outputs(dir);
    if (!err && created && rmdir(dir) != 0 && errno != ENOTEMPTY && errno != EEXIST)
      err = HX_ERROR(HX_ERR_IO, "cannot remove directory '%s': %s", dir, strerror(errno));
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  return HX_SUCCESS;
}

int hx_io_agree_error(MPI_Comm comm, int code) {
  int rank = 0, size = 1;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Comm_size(comm, &size));
  int mine = code ? rank : size, root = size;
  HX_MPI(MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm));
  if (root == size) return HX_SUCCESS;
  return hx_io_bcast_error(comm, root, code);
}

/* A double that reads back exactly, as short as possible. */
void hx_io_fmt_double(char *buf, size_t len, double v) {
  if (!isfinite(v)) { /* YAML's spelling of the special values */
    snprintf(buf, len, "%s", isnan(v) ? ".nan" : v > 0 ? ".inf" : "-.inf");
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* keep a '.' in the mantissa so YAML 1.1 readers see a float: 1.0, 1.0e-10 */
  if (!strchr(buf, '.') && strlen(buf) + 3 < len) {
    char *e = strpbrk(buf, "eE");
    size_t at = e ? (size_t)(e - buf) : strlen(buf);
    memmove(buf + at + 2, buf + at, strlen(buf + at) + 1);
    buf[at] = '.', buf[at + 1] = '0';
  }
}
