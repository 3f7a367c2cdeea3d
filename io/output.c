/* The output folder, atomic file writes and error agreement across ranks. */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "io_impl.h"

/* Files hexcg writes into an output folder (removed by --force); "series"
 * is a folder: the solution files of a time-dependent run's temporal
 * collection (solution.xdmf names them, docs/time.md). */
static const char *const hx_outputs[] = {"case.yaml",   "summary.yaml", "solution.h5", "solution.xdmf",
                                         "history.csv", "history.h5",   "steps.csv",   "series"};
#define HX_SERIES_NAME "series"
static void remove_tree_files(const char *d);
static void remove_series(const char *d);

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

int hx_io_reserve_space(const char *path, const char *tmp, double bytes) {
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) return HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
  int e = 0;
  if (bytes > 0) {
    e = posix_fallocate(fd, 0, (off_t)bytes);
    if (e == EOPNOTSUPP || e == EINVAL) { /* no preallocation here: compare with the free space */
      struct statvfs sv;
      e = fstatvfs(fd, &sv) == 0 && (double)sv.f_bavail * (double)sv.f_frsize < bytes ? ENOSPC : 0;
    }
  }
  close(fd);
  remove(tmp);
  HX_CHECK(!e, HX_ERR_IO, "cannot write '%s': %s (it needs about %.1f MiB)", path, strerror(e),
           bytes / 1048576.0);
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
      if (!tmp && !strcmp(hx_outputs[i], HX_SERIES_NAME)) {
        remove_series(p);
        continue;
      }
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
void hx_io_fmt_double(char *buf, size_t len, double v) { hx_fmt_double(buf, len, v); }

/* ---------------------------------------------------------------- result sets */
#include <dirent.h>
#include <sys/file.h>

#define HX_LOCK_NAME ".hexcg.lock"
#define HX_STAGE_NAME ".hexcg-new"

struct hx_outdir_s {
  MPI_Comm comm;
  int rank;
  char *dir, *stage, *lock;
  char *made_top; /* the outermost folder this run created (NULL: none) */
  int fd;         /* rank 0: the locked file */
  int had_results;
  int committed; /* rank 0: the manifest is in place (the new set is the folder's) */
  int complete;  /* rank 0: ... and every file of it is moved out of the stage */
};

/* "results": a file of a finished run (case.yaml alone is a dry run's) */
static int has_results(const char *dir) {
  char p[4200];
  for (size_t i = 1; i < sizeof hx_outputs / sizeof hx_outputs[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, hx_outputs[i]);
    if (access(p, F_OK) == 0) return 1;
  }
  return 0;
}

/* hexcg's own names in a series folder: solution_N.h5 and its .tmp */
static int own_series_name(const char *n) {
  int st = 0, len = 0;
  if (sscanf(n, "solution_%d.h5%n", &st, &len) != 1 || st < 0) return 0;
  return n[len] == '\0' || !strcmp(n + len, ".tmp");
}

/* hexcg's own names in an output or staging folder */
static int own_output_name(const char *n) {
  for (size_t i = 0; i < sizeof hx_outputs / sizeof hx_outputs[0]; i++) {
    const size_t l = strlen(hx_outputs[i]);
    if (!strncmp(n, hx_outputs[i], l) && (n[l] == '\0' || !strcmp(n + l, ".tmp"))) return 1;
  }
  return !strcmp(n, ".manifest") || !strcmp(n, ".manifest.tmp");
}

/* the entries of an output or staging folder: its own names go, series/ is
 * a folder of its own names */
static int output_entry(const char *n) {
  if (!strcmp(n, HX_SERIES_NAME)) return HX_IO_OWN_SERIES;
  return own_output_name(n) ? HX_IO_OWN_FILE : HX_IO_OWN_KEEP;
}
static int series_entry(const char *n) { return own_series_name(n) ? HX_IO_OWN_FILE : HX_IO_OWN_KEEP; }

void hx_io_remove_own(const char *d, int (*entry)(const char *name)) {
  struct stat st;
  if (lstat(d, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(d); /* a link, or a plain file where the folder should be */
    return;
  }
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR *dd = fdopendir(fd);
  if (!dd) {
    close(fd);
    return;
  }
  char p[4300];
  for (struct dirent *e; (e = readdir(dd)) != NULL;) {
    const char *n = e->d_name;
    if (!strcmp(n, ".") || !strcmp(n, "..")) continue;
    const int what = entry(n);
    if (what == HX_IO_OWN_SERIES) {
      snprintf(p, sizeof p, "%s/%s", d, n);
      hx_io_remove_own(p, series_entry);
    } else if (what == HX_IO_OWN_FILE) {
      struct stat es;
      if (fstatat(fd, n, &es, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(es.st_mode)) unlinkat(fd, n, 0);
    }
  }
  closedir(dd);
  rmdir(d);
}

/* the staging folder, a series folder: hexcg's own names only, no link
 * followed (issue 53, defect 15: `DIR/series -> /elsewhere` had every plain
 * file of /elsewhere deleted, and a user's files inside series/ went too) */
static void remove_tree_files(const char *d) { hx_io_remove_own(d, output_entry); }
static void remove_series(const char *d) { hx_io_remove_own(d, series_entry); }

/* mkdir -p that remembers the outermost folder it created */
static int mkdir_p_track(const char *dir, char **top) {
  char buf[4096];
  *top = NULL;
  HX_CHECK(strlen(dir) < sizeof buf, HX_ERR_INPUT, "output directory name is too long (%zu characters)",
           strlen(dir));
  snprintf(buf, sizeof buf, "%s", dir);
  size_t len = strlen(buf);
  for (char *p = buf + 1;; p++) {
    if (*p && *p != '/') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(buf, 0777) == 0) {
      if (!*top) *top = hx_io_strdup(buf);
    } else if (errno != EEXIST) {
      int e = errno;
      return HX_ERROR(HX_ERR_INPUT, "cannot create output directory '%s': %s", buf, strerror(e));
    }
    *p = c;
    if (!c || (size_t)(p - buf) >= len) break;
  }
  return HX_SUCCESS;
}

/* remove dir and its parents up to top (the folders a run created), if empty */
static void remove_made(const char *dir, const char *top) {
  if (!top) return;
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", dir);
  for (;;) {
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
    if (rmdir(buf) != 0) return;
    if (!strcmp(buf, top)) return;
    char *s = strrchr(buf, '/');
    if (!s || s == buf) return;
    *s = '\0';
  }
}

static int take_lock(struct hx_outdir_s *od) {
  for (int attempt = 0; attempt < 5; attempt++) {
    int fd = open(od->lock, O_RDWR | O_CREAT, 0666);
    if (fd < 0) return HX_ERROR(HX_ERR_INPUT, "cannot write into output directory '%s': %s", od->dir, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      return HX_ERROR(HX_ERR_INPUT,
                      "output directory '%s' is in use by another hexcg run (it holds %s/" HX_LOCK_NAME ")", od->dir,
                      od->dir);
    }
    /* the holder before us may have removed the file after we opened it */
    struct stat a, b;
    if (fstat(fd, &a) == 0 && stat(od->lock, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
      od->fd = fd;
      return HX_SUCCESS;
    }
    close(fd);
  }
  return HX_ERROR(HX_ERR_INPUT, "output directory '%s' is in use by another hexcg run", od->dir);
}

static void outdir_free(struct hx_outdir_s *od) {
  free(od->dir), free(od->stage), free(od->lock), free(od->made_top);
  free(od);
}

#define HX_MANIFEST_NAME ".manifest"
/* summary.yaml last: of an old-style reader's files it marks a complete set */
static const char *const commit_order[] = {"case.yaml",  "solution.h5", HX_SERIES_NAME, "solution.xdmf",
                                           "history.csv", "history.h5", "steps.csv",    "summary.yaml"};
#define HX_NCOMMIT (sizeof commit_order / sizeof commit_order[0])

static int sync_path(const char *p, int dir) {
  int fd = open(p, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return -1;
  int r = fsync(fd);
  close(fd);
  return r;
}

/* the manifest of a committed stage: one name a line; -1 if there is none */
static int read_manifest(const char *stage, int has[HX_NCOMMIT]) {
  char p[4300], line[256];
  snprintf(p, sizeof p, "%s/" HX_MANIFEST_NAME, stage);
  FILE *f = fopen(p, "r");
  if (!f) return -1;
  int ok = 0;
  for (size_t k = 0; k < HX_NCOMMIT; k++) has[k] = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strcmp(line, "end")) ok = 1;
    for (size_t k = 0; k < HX_NCOMMIT; k++)
      if (!strcmp(line, commit_order[k])) has[k] = 1;
  }
  fclose(f);
  return ok ? 0 : -1; /* a manifest without its last line was never renamed into place */
}

/* every file of folder from renamed into the existing folder to, then from removed */
static int move_into(const char *from, const char *to) {
  DIR *dd = opendir(from);
  if (!dd) return HX_ERROR(HX_ERR_IO, "cannot read '%s': %s", from, strerror(errno));
  int err = HX_SUCCESS;
  char a[4300], b[4300];
  for (struct dirent *e; !err && (e = readdir(dd)) != NULL;) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (snprintf(a, sizeof a, "%s/%s", from, e->d_name) >= (int)sizeof a ||
        snprintf(b, sizeof b, "%s/%s", to, e->d_name) >= (int)sizeof b) {
      err = HX_ERROR(HX_ERR_IO, "path too long in '%s'", to);
      break;
    }
    if (rename(a, b) != 0) err = HX_ERROR(HX_ERR_IO, "cannot move '%s' to '%s': %s", a, b, strerror(errno));
  }
  closedir(dd);
  if (!err) rmdir(from);
  return err;
}

/* move a committed stage into dir (rank 0): the renames, the removals, the manifest */
static int roll_forward(const char *dir, const char *stage, const int has[HX_NCOMMIT]) {
  char from[4300], to[4300];
  int err = HX_SUCCESS;
  for (size_t k = 0; k < HX_NCOMMIT && !err; k++) {
    const char *f = commit_order[k];
    snprintf(from, sizeof from, "%s/%s", stage, f);
    snprintf(to, sizeof to, "%s/%s", dir, f);
    if (!strcmp(f, HX_SERIES_NAME)) { /* a folder: the old one's files go first */
      if (!has[k] || access(from, F_OK) == 0) remove_series(to);
      struct stat ts;
      if (has[k] && access(from, F_OK) == 0 && lstat(to, &ts) == 0 && S_ISDIR(ts.st_mode))
        err = move_into(from, to); /* the user's files kept the old folder: the new files into it */
      else if (has[k] && access(from, F_OK) == 0 && rename(from, to) != 0)
        err = HX_ERROR(HX_ERR_IO, "cannot move '%s' to '%s': %s", from, to, strerror(errno));
    } else if (!has[k]) {
      if (remove(to) != 0 && errno != ENOENT) /* an old output the new set does not have */
        err = HX_ERROR(HX_ERR_IO, "cannot remove '%s': %s", to, strerror(errno));
    } else if (access(from, F_OK) == 0 && rename(from, to) != 0) { /* absent: moved already */
      err = HX_ERROR(HX_ERR_IO, "cannot move '%s' to '%s': %s", from, to, strerror(errno));
    }
  }
  if (!err) {
    sync_path(dir, 1);
    snprintf(from, sizeof from, "%s/" HX_MANIFEST_NAME, stage);
    if (remove(from) != 0 && errno != ENOENT)
      err = HX_ERROR(HX_ERR_IO, "cannot remove '%s': %s", from, strerror(errno));
  }
  return err;
}

int hx_outdir_open(MPI_Comm comm, const char *dir, int force, hx_outdir *out) {
  *out = NULL;
  struct hx_outdir_s *od = calloc(1, sizeof *od);
  HX_CHECK(od, HX_ERR_MEM, "out of memory");
  od->comm = comm;
  od->fd = -1;
  MPI_Comm_rank(comm, &od->rank);
  int err = HX_SUCCESS;
  size_t n = dir ? strlen(dir) + 32 : 0;
  if (!dir || !dir[0]) err = HX_ERROR(HX_ERR_INPUT, "output directory name is empty");
  if (!err) {
    od->dir = hx_io_strdup(dir), od->stage = malloc(n), od->lock = malloc(n);
    if (!od->dir || !od->stage || !od->lock) err = HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  if (!err) {
    snprintf(od->stage, n, "%s/" HX_STAGE_NAME, dir);
    snprintf(od->lock, n, "%s/" HX_LOCK_NAME, dir);
  }
  if (!err && od->rank == 0) {
    struct stat st;
    if (strlen(od->stage) + 32 >= 4096) {
      err = HX_ERROR(HX_ERR_INPUT, "output directory name is too long (%zu characters)", strlen(dir));
    } else if (stat(dir, &st) == 0) {
      if (!S_ISDIR(st.st_mode)) err = HX_ERROR(HX_ERR_INPUT, "output directory '%s' exists and is not a directory", dir);
    } else {
      err = mkdir_p_track(dir, &od->made_top);
    }
    if (!err) err = take_lock(od);
    if (!err) {
      /* a killed run left its stage: a committed one is completed first (its
       * set is the folder's), any other is dropped below */
      int has[HX_NCOMMIT];
      if (read_manifest(od->stage, has) == 0) err = roll_forward(dir, od->stage, has);
    }
    if (!err) {
      od->had_results = has_results(dir);
      if (od->had_results && !force)
        err = HX_ERROR(HX_ERR_INPUT, "output directory '%s' exists; use --force to overwrite it", dir);
    }
    if (!err) {
      remove_tree_files(od->stage);
      if (mkdir(od->stage, 0777) != 0)
        err = HX_ERROR(HX_ERR_INPUT, "cannot write into output directory '%s': %s", dir, strerror(errno));
    }
    if (err) {
      if (od->fd >= 0) remove(od->lock), close(od->fd), od->fd = -1;
      if (od->dir) remove_made(od->dir, od->made_top);
    }
  }
  err = hx_io_bcast_error(comm, 0, err);
  if (err) {
    outdir_free(od);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  MPI_Bcast(&od->had_results, 1, MPI_INT, 0, comm);
  *out = od;
  return HX_SUCCESS;
}

const char *hx_outdir_stage(hx_outdir od) { return od->stage; }
int hx_outdir_had_results(hx_outdir od) { return od->had_results; }

static int commit_stage(struct hx_outdir_s *od) {
  char p[4300], tmp[4320];
  int has[HX_NCOMMIT];
  FILE *f = NULL;
  /* the staged files reach the disk before the manifest says they are the set */
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    snprintf(p, sizeof p, "%s/%s", od->stage, commit_order[k]);
    has[k] = access(p, F_OK) == 0;
    if (has[k] && sync_path(p, 0) != 0)
      return HX_ERROR(HX_ERR_IO, "cannot sync '%s': %s", p, strerror(errno));
  }
  /* a name in the folder that the moves below cannot replace or remove (a
   * folder called summary.yaml) is refused before the commit point, so the
   * old set stays; any other failure of a move after it leaves the stage in
   * place, committed, for the readers and the next run */
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", od->dir, commit_order[k]);
    if (strcmp(commit_order[k], HX_SERIES_NAME) && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
      return HX_ERROR(HX_ERR_IO, "cannot replace '%s': it is a directory (remove it; the folder's results are "
                      "unchanged)", p);
  }
  snprintf(p, sizeof p, "%s/" HX_MANIFEST_NAME, od->stage);
  snprintf(tmp, sizeof tmp, "%s.tmp", p);
  int bad = (f = fopen(tmp, "w")) == NULL;
  for (size_t k = 0; k < HX_NCOMMIT && !bad; k++)
    if (has[k]) bad |= fprintf(f, "%s\n", commit_order[k]) < 0;
  if (f) {
    bad |= fprintf(f, "end\n") < 0;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
  }
  if (bad || rename(tmp, p) != 0) {
    int e = errno;
    remove(tmp);
    return HX_ERROR(HX_ERR_IO, "cannot write '%s': %s", p, strerror(e));
  }
  sync_path(od->stage, 1); /* the commit point */
  od->committed = 1;       /* from here on the new set is the folder's, even if a rename fails */
  const int err = roll_forward(od->dir, od->stage, has);
  if (!err) {
    od->complete = 1;
    return HX_SUCCESS;
  }
  /* the stage and its manifest stay (hx_outdir_close): hx_outdir_resolve
   * gives readers the new set from there, and the next run's
   * hx_outdir_open completes the moves before anything else */
  char why[1024];
  snprintf(why, sizeof why, "%s", hx_error_message());
  return hx_error_set(__FILE__, __LINE__, __func__, HX_ERR_IO,
                      "%s; the new results are committed but not all moved: compare, restart and "
                      "initial_guess read them from '%s' (its " HX_MANIFEST_NAME "), and the next run into '%s' "
                      "completes the move once the cause is fixed",
                      why, od->stage, od->dir);
}

int hx_outdir_commit(hx_outdir od) {
  int err = od->rank == 0 ? commit_stage(od) : HX_SUCCESS;
  HX_CALL(hx_io_bcast_error(od->comm, 0, err));
  od->committed = 1;
  return HX_SUCCESS;
}

int hx_outdir_resolve(const char *dir, const char *name, char *buf, size_t len) {
  char stage[4200];
  int has[HX_NCOMMIT];
  snprintf(stage, sizeof stage, "%s/" HX_STAGE_NAME, dir);
  snprintf(buf, len, "%s/%s", dir, name);
  if (read_manifest(stage, has) == 0)
    for (size_t k = 0; k < HX_NCOMMIT; k++) {
      if (strcmp(name, commit_order[k])) continue;
      if (!has[k]) return 0;
      char st[4300];
      snprintf(st, sizeof st, "%s/%s", stage, name);
      if (access(st, F_OK) == 0) snprintf(buf, len, "%s", st);
      break;
    }
  return access(buf, F_OK) == 0;
}

int hx_outdir_resolve_path(const char *path, char *buf, size_t len) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t k = 0; k < HX_NCOMMIT; k++)
    if (!strcmp(base, commit_order[k])) {
      char dir[4200];
      size_t dl = (size_t)(base - path);
      if (dl >= sizeof dir) break;
      memcpy(dir, path, dl);
      dir[dl ? dl - 1 : 0] = 0;
      return hx_outdir_resolve(dl ? (dl == 1 ? "/" : dir) : ".", base, buf, len);
    }
  snprintf(buf, len, "%s", path);
  return 1;
}

void hx_outdir_close(hx_outdir *pod) {
  if (!pod || !*pod) return;
  struct hx_outdir_s *od = *pod;
  if (od->rank == 0) {
    /* a committed set whose moves failed is kept whole (its stage holds the
     * rest of it and the manifest that says so) */
    if (!od->committed || od->complete) remove_tree_files(od->stage);
    if (od->fd >= 0) remove(od->lock), close(od->fd);
    if (!od->committed) remove_made(od->dir, od->made_top);
  }
  outdir_free(od);
  *pod = NULL;
}

/* A regular file read whole (issue 53, defect 13: --restart read steps.csv
 * and history.csv with fopen, so a FIFO there blocked forever, unkillable by
 * one SIGTERM, and /dev/zero read until memory ran out). The open does not
 * block (O_NONBLOCK: a FIFO is refused, not waited on), the file must be a
 * regular file of at most max bytes, and it may not hold NUL bytes. */
int hx_io_read_file(const char *path, const char *what, size_t max, int missing_ok, char **text, size_t *len) {
  *text = NULL;
  if (len) *len = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && missing_ok) return HX_SUCCESS;
    return HX_ERROR(HX_ERR_INPUT, "cannot read %s '%s': %s", what, path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const char *kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISDIR(st.st_mode) ? "a folder" : S_ISSOCK(st.st_mode) ? "a socket" : "not a plain file";
    close(fd);
    return HX_ERROR(HX_ERR_INPUT, "%s '%s' is %s, not a regular file: refused", what, path, kind);
  }
  if ((uint64_t)st.st_size > (uint64_t)max) {
    close(fd);
    return HX_ERROR(HX_ERR_INPUT, "%s '%s' has %lld bytes, more than the %zu hexcg reads", what, path,
                    (long long)st.st_size, max);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  char *b = malloc((size_t)st.st_size + 1);
  if (!b) {
    close(fd);
    return HX_ERROR(HX_ERR_MEM, "out of memory");
  }
  size_t n = 0;
  while (n < (size_t)st.st_size) {
    ssize_t k = read(fd, b + n, (size_t)st.st_size - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break; /* shorter than its size said: read what is there */
    n += (size_t)k;
  }
  const int rerr = errno;
  close(fd);
  b[n] = '\0';
  if (n < (size_t)st.st_size && rerr && rerr != EINTR) {
    free(b);
    return HX_ERROR(HX_ERR_INPUT, "cannot read %s '%s': %s", what, path, strerror(rerr));
  }
  if (memchr(b, '\0', n)) {
    free(b);
    return HX_ERROR(HX_ERR_INPUT, "%s '%s' is not a text file (it holds NUL bytes)", what, path);
  }
  *text = b;
  if (len) *len = n;
  return HX_SUCCESS;
}
