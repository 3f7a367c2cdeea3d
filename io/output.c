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
#include <time.h>
#include <unistd.h>

#include "io_impl.h"

/* Files hexcg writes into an output folder (removed by --force); "series"
 * is a folder: the solution files of a time-dependent run's temporal
 * collection (solution.xdmf names them, docs/time.md). */
static const char *const hx_outputs[] = {"case.yaml",    "summary.yaml",       "solution.h5", "solution.xdmf",
                                         "history.csv",  "history.h5",         "steps.csv",   "series",
                                         "solution.hdf", "solution.hdf.series"};
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

int hx_io_write_text(const char *dir, const char *name, char *b, size_t len, size_t cap, const char *what) {
  int err = len < cap ? HX_SUCCESS : HX_ERROR(HX_ERR_INTERNAL, "%s too long", what);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!err) err = hx_io_write_file_atomic(path, b, len);
  free(b);
  return err;
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

int hx_io_agree_error(MPI_Comm comm, int code) { return hx_error_agree(comm, code); }

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
  char *gen;     /* rank 0: the generation the stage was renamed to (NULL: not yet) */
  int committed; /* rank 0: .hexcg-current names it (the new set is the folder's) */
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
  if (!strcmp(n, HX_SERIES_MESH_NAME) || !strcmp(n, HX_SERIES_MESH_NAME ".tmp") || /* the series' mesh */
      !strcmp(n, HX_SERIES_VTK_MESH_NAME) || !strcmp(n, HX_SERIES_VTK_MESH_NAME ".tmp"))
    return 1;
  if (sscanf(n, "solution_%d%n", &st, &len) != 1 || st < 0) return 0;
  if (!strncmp(n + len, ".h5", 3))
    len += 3; /* xdmf's frames */
  else if (!strncmp(n + len, ".hdf", 4))
    len += 4; /* VTKHDF's */
  else
    return 0;
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
  char p[4700];
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
  free(od->dir), free(od->stage), free(od->lock), free(od->made_top), free(od->gen);
  free(od);
}

#define HX_MANIFEST_NAME ".manifest"
/* summary.yaml last: of an old-style reader's files it marks a complete set */
static const char *const commit_order[] = {
    "case.yaml",           "solution.h5", "solution.hdf", HX_SERIES_NAME, "solution.xdmf",
    "solution.hdf.series", "history.csv", "history.h5",   "steps.csv",    "summary.yaml"};
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

/* ------------------------------------------------ generations (issue 53, defect 16)
 * A result set lives in DIR/.hexcg-sets/GEN/; DIR/.hexcg-current is a
 * relative link to it and every result name DIR/NAME a relative link
 * .hexcg-current/NAME, so one rename of .hexcg-current switches every name
 * from one set to the next for every reader (docs/reliability.md, "The
 * output folder"). */
#define HX_SETS_NAME ".hexcg-sets"
#define HX_CURRENT_NAME ".hexcg-current"

/* the generation .hexcg-current points to, into gen; 0 if none */
static int current_gen(const char *dir, char *gen, size_t len) {
  char p[4300], t[4300];
  const size_t pl = strlen(HX_SETS_NAME "/");
  snprintf(p, sizeof p, "%s/" HX_CURRENT_NAME, dir);
  ssize_t n = readlink(p, t, sizeof t - 1);
  if (n <= 0) return 0;
  t[n] = '\0';
  if (strncmp(t, HX_SETS_NAME "/", pl) || !t[pl] || strchr(t + pl, '/') || strlen(t + pl) >= len) return 0;
  memcpy(gen, t + pl, strlen(t + pl) + 1);
  return 1;
}

/* DIR/NAME is hexcg's link .hexcg-current/NAME */
static int is_own_link(const char *dir, const char *name) {
  char p[4300], t[4300], want[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  snprintf(want, sizeof want, HX_CURRENT_NAME "/%s", name);
  ssize_t n = readlink(p, t, sizeof t - 1);
  if (n <= 0) return 0;
  t[n] = '\0';
  return !strcmp(t, want);
}

/* DIR/NAME becomes a link to target: a link under NAME.tmp renamed over NAME */
static int make_link(const char *dir, const char *name, const char *target) {
  char p[4300], tmp[4320];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", p);
  struct stat st;
  if (lstat(tmp, &st) == 0 && !S_ISDIR(st.st_mode)) unlink(tmp);
  if (symlink(target, tmp) != 0) return HX_ERROR(HX_ERR_IO, "cannot create link '%s': %s", tmp, strerror(errno));
  if (rename(tmp, p) != 0) {
    int e = errno;
    unlink(tmp);
    return HX_ERROR(HX_ERR_IO, "cannot replace '%s' by a link: %s", p, strerror(e));
  }
  return HX_SUCCESS;
}

/* two regular files with the same bytes (a copy that followed the links holds
 * a user's file twice: in series/ and in the copied generation) */
static int same_file_bytes(const char *a, const char *b) {
  struct stat sa, sb;
  if (lstat(a, &sa) != 0 || lstat(b, &sb) != 0 || !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) ||
      sa.st_size != sb.st_size)
    return 0;
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  char ba[8192], bb[8192];
  while (same) {
    size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
    same = na == nb && !memcmp(ba, bb, na);
    if (na < sizeof ba) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

/* a user's entries (not hexcg's solution_N.h5) of the series folder from
 * into the series folder to: hard links where keep (a file then shows in
 * both, so a reader of either set sees it), else moved; an entry to holds
 * already as the same file (or the same bytes) is removed from from */
static void carry_user_series(const char *from, const char *to, int keep) {
  struct stat fs, ts;
  if (lstat(from, &fs) != 0 || !S_ISDIR(fs.st_mode)) return;
  DIR *dd = opendir(from);
  if (!dd) return;
  char a[4400], b[4400];
  for (struct dirent *e; (e = readdir(dd)) != NULL;) {
    const char *n = e->d_name;
    if (!strcmp(n, ".") || !strcmp(n, "..") || own_series_name(n)) continue;
    snprintf(a, sizeof a, "%s/%s", from, n);
    snprintf(b, sizeof b, "%s/%s", to, n);
    if (lstat(a, &fs) != 0) continue;
    if (lstat(b, &ts) == 0) {
      if (!keep && !S_ISDIR(fs.st_mode) &&
          ((ts.st_ino == fs.st_ino && ts.st_dev == fs.st_dev) || same_file_bytes(a, b)))
        unlink(a);
      continue; /* another file of that name there: both stay */
    }
    if (mkdir(to, 0777) != 0 && errno != EEXIST) continue;
    if (keep && !S_ISDIR(fs.st_mode) && link(a, b) == 0) continue;
    rename(a, b);
  }
  closedir(dd);
}

/* a generation that is not (or no longer) the current one: the user's files
 * of its series/ into the current one's, then its own names go */
static void drop_gen(const char *dir, const char *gen) {
  char g[4400], s[4400], cur[128], cs[4400];
  snprintf(g, sizeof g, "%s/" HX_SETS_NAME "/%s", dir, gen);
  if (current_gen(dir, cur, sizeof cur)) {
    if (!strcmp(cur, gen)) return;
    if (snprintf(s, sizeof s, "%s/" HX_SERIES_NAME, g) >= (int)sizeof s) return;
    snprintf(cs, sizeof cs, "%s/" HX_SETS_NAME "/%s/" HX_SERIES_NAME, dir, cur);
    carry_user_series(s, cs, 0);
  }
  hx_io_remove_own(g, output_entry);
}

/* what a killed commit left: generations the link does not name, temporary links */
static void drop_leftovers(const char *dir) {
  char p[4400], cur[128];
  struct stat st;
  /* a copy that followed the links (.hexcg-current a folder): left as it is
   * until a commit takes its files over (commit_stage) */
  snprintf(p, sizeof p, "%s/" HX_CURRENT_NAME, dir);
  if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode)) return;
  const int has_cur = current_gen(dir, cur, sizeof cur);
  snprintf(p, sizeof p, "%s/" HX_SETS_NAME, dir);
  DIR *dd = opendir(p);
  for (struct dirent *e; dd && (e = readdir(dd)) != NULL;) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (!has_cur || strcmp(e->d_name, cur)) drop_gen(dir, e->d_name);
  }
  if (dd) closedir(dd);
  for (size_t k = 0; k <= HX_NCOMMIT; k++) {
    snprintf(p, sizeof p, "%s/%s.tmp", dir, k < HX_NCOMMIT ? commit_order[k] : HX_CURRENT_NAME);
    if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) unlink(p);
  }
  /* a name of the current set without its link (a kill while an older
   * hexcg's series/ folder was moved into its generation) */
  if (has_cur)
    for (size_t k = 0; k < HX_NCOMMIT; k++) {
      char g[4400], t[512];
      snprintf(g, sizeof g, "%s/" HX_SETS_NAME "/%s/%s", dir, cur, commit_order[k]);
      snprintf(p, sizeof p, "%s/%s", dir, commit_order[k]);
      snprintf(t, sizeof t, HX_CURRENT_NAME "/%s", commit_order[k]);
      if (lstat(g, &st) == 0 && lstat(p, &st) != 0 && errno == ENOENT && make_link(dir, commit_order[k], t))
        hx_error_clear();
    }
}

/* a fresh generation name in DIR/.hexcg-sets (which exists), into gen */
static void new_gen_name(const char *dir, char *gen, size_t len) {
  char p[4400];
  struct stat st;
  for (int i = 0;; i++) {
    snprintf(gen, len, "%lld-%d-%d", (long long)time(NULL), (int)getpid(), i);
    snprintf(p, sizeof p, "%s/" HX_SETS_NAME "/%s", dir, gen);
    if (lstat(p, &st) != 0) return;
  }
}

static int make_sets(const char *dir) {
  char p[4400];
  snprintf(p, sizeof p, "%s/" HX_SETS_NAME, dir);
  if (mkdir(p, 0777) != 0 && errno != EEXIST) return HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", p, strerror(errno));
  return HX_SUCCESS;
}

/* An older hexcg's folder (the set's files themselves in DIR) becomes a
 * generation without a reader seeing any change: its files are hard-linked
 * into a generation, .hexcg-current made, then each name replaced by its
 * link (same file). Only series/ is moved (a folder cannot be linked): it is
 * absent between that move and its link's rename. */
static int adopt_old_layout(const char *dir) {
  char p[4400], g[4400], gen[128], t[512];
  struct stat st;
  int any = 0;
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    snprintf(p, sizeof p, "%s/%s", dir, commit_order[k]);
    if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode)) any = 1;
  }
  if (!any) return HX_SUCCESS;
  int made = 0;
  if (!current_gen(dir, gen, sizeof gen)) {
    HX_CALL(make_sets(dir));
    new_gen_name(dir, gen, sizeof gen);
    made = 1;
  }
  snprintf(g, sizeof g, "%s/" HX_SETS_NAME "/%s", dir, gen);
  if (mkdir(g, 0777) != 0 && errno != EEXIST) return HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", g, strerror(errno));
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    char q[4500];
    snprintf(p, sizeof p, "%s/%s", dir, commit_order[k]);
    snprintf(q, sizeof q, "%s/%s", g, commit_order[k]);
    if (lstat(p, &st) != 0 || S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode) || access(q, F_OK) == 0) continue;
    if (link(p, q) != 0) return HX_ERROR(HX_ERR_IO, "cannot link '%s' to '%s': %s", p, q, strerror(errno));
  }
  sync_path(g, 1);
  if (made) {
    snprintf(t, sizeof t, HX_SETS_NAME "/%s", gen);
    HX_CALL(make_link(dir, HX_CURRENT_NAME, t));
  }
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    char q[4500];
    snprintf(p, sizeof p, "%s/%s", dir, commit_order[k]);
    snprintf(q, sizeof q, "%s/%s", g, commit_order[k]);
    snprintf(t, sizeof t, HX_CURRENT_NAME "/%s", commit_order[k]);
    if (lstat(p, &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (S_ISDIR(st.st_mode)) { /* series/ */
      if (lstat(q, &st) == 0) {
        carry_user_series(p, q, 0);
        remove_series(p);
      } else if (rename(p, q) != 0) {
        return HX_ERROR(HX_ERR_IO, "cannot move '%s' to '%s': %s", p, q, strerror(errno));
      }
    }
    HX_CALL(make_link(dir, commit_order[k], t));
  }
  sync_path(dir, 1);
  return HX_SUCCESS;
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
      /* a killed run left its stage: a committed one of an older hexcg
       * (its manifest) is completed first by its renames (its set is the
       * folder's; the commit below makes it a generation), any other is
       * dropped below */
      int has[HX_NCOMMIT];
      if (read_manifest(od->stage, has) == 0) err = roll_forward(dir, od->stage, has);
    }
    /* generations a killed commit left (not the current one) go */
    if (!err) drop_leftovers(dir);
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
  char p[4400], g[4400], gen[128], old[128], t[512];
  int has[HX_NCOMMIT];
  struct stat st;
  /* the staged files reach the disk before they become the set */
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    snprintf(p, sizeof p, "%s/%s", od->stage, commit_order[k]);
    if (access(p, F_OK) == 0 && sync_path(p, 0) != 0)
      return HX_ERROR(HX_ERR_IO, "cannot sync '%s': %s", p, strerror(errno));
  }
  /* a name in the folder that a link cannot replace (a folder called
   * summary.yaml) is refused before the commit point, so the old set stays */
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    snprintf(p, sizeof p, "%s/%s", od->dir, commit_order[k]);
    if (strcmp(commit_order[k], HX_SERIES_NAME) && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
      return HX_ERROR(HX_ERR_IO, "cannot replace '%s': it is a directory (remove it; the folder's results are "
                      "unchanged)", p);
  }
  /* a copy that followed the links (cp -r, shutil.copytree) holds the set's
   * files themselves in DIR and .hexcg-current as a folder: that folder goes
   * aside (a generation dropped once the folder's files are one) */
  char aside[128] = "";
  snprintf(p, sizeof p, "%s/" HX_CURRENT_NAME, od->dir);
  if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode)) {
    HX_CALL(make_sets(od->dir));
    new_gen_name(od->dir, aside, sizeof aside);
    snprintf(g, sizeof g, "%s/" HX_SETS_NAME "/%s", od->dir, aside);
    if (rename(p, g) != 0) return HX_ERROR(HX_ERR_IO, "cannot move '%s' to '%s': %s", p, g, strerror(errno));
  }
  /* an older hexcg's folder: its set becomes the current generation first */
  HX_CALL(adopt_old_layout(od->dir));
  if (aside[0]) drop_leftovers(od->dir); /* the folder set aside and the copied generations */
  const int has_old = current_gen(od->dir, old, sizeof old);
  /* (1) the stage becomes a generation: one folder rename */
  HX_CALL(make_sets(od->dir));
  new_gen_name(od->dir, gen, sizeof gen);
  snprintf(g, sizeof g, "%s/" HX_SETS_NAME "/%s", od->dir, gen);
  if (sync_path(od->stage, 1) != 0) return HX_ERROR(HX_ERR_IO, "cannot sync '%s': %s", od->stage, strerror(errno));
  if (rename(od->stage, g) != 0) return HX_ERROR(HX_ERR_IO, "cannot move '%s' to '%s': %s", od->stage, g, strerror(errno));
  od->gen = hx_io_strdup(gen);
  HX_CHECK(od->gen, HX_ERR_MEM, "out of memory");
  /* a user's files in series/ go with the folder into the new set (hard links: still in the old one too) */
  if (has_old) {
    char a[4500], b[4500];
    snprintf(a, sizeof a, "%s/" HX_SETS_NAME "/%s/" HX_SERIES_NAME, od->dir, old);
    snprintf(b, sizeof b, "%s/" HX_SERIES_NAME, g);
    carry_user_series(a, b, 1);
  }
  /* (2) a link for each name of the new set (one the old set lacks dangles until the switch: absent) */
  for (size_t k = 0; k < HX_NCOMMIT; k++) {
    if (snprintf(p, sizeof p, "%s/%s", g, commit_order[k]) >= (int)sizeof p) return HX_ERROR(HX_ERR_IO, "path too long");
    has[k] = lstat(p, &st) == 0;
    snprintf(t, sizeof t, HX_CURRENT_NAME "/%s", commit_order[k]);
    if (has[k] && !is_own_link(od->dir, commit_order[k])) HX_CALL(make_link(od->dir, commit_order[k], t));
  }
  snprintf(p, sizeof p, "%s/" HX_SETS_NAME, od->dir);
  if (sync_path(g, 1) != 0 || sync_path(p, 1) != 0 || sync_path(od->dir, 1) != 0)
    return HX_ERROR(HX_ERR_IO, "cannot sync '%s': %s", od->dir, strerror(errno));
  /* (3) the commit point: .hexcg-current names the new generation */
  snprintf(t, sizeof t, HX_SETS_NAME "/%s", gen);
  HX_CALL(make_link(od->dir, HX_CURRENT_NAME, t));
  od->committed = 1;
  sync_path(od->dir, 1);
  /* (4) the links of names the new set lacks (they dangle now), the old generation */
  for (size_t k = 0; k < HX_NCOMMIT; k++)
    if (!has[k] && is_own_link(od->dir, commit_order[k])) {
      snprintf(p, sizeof p, "%s/%s", od->dir, commit_order[k]);
      unlink(p);
    }
  if (has_old) drop_gen(od->dir, old);
  return HX_SUCCESS;
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
    remove_tree_files(od->stage);
    if (!od->committed && od->gen) { /* renamed, but not made current: it goes, and the links that dangle */
      drop_gen(od->dir, od->gen);
      for (size_t k = 0; k < HX_NCOMMIT; k++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", od->dir, commit_order[k]);
        if (is_own_link(od->dir, commit_order[k]) && access(p, F_OK) != 0) unlink(p);
      }
    }
    if (!od->committed) { /* an empty .hexcg-sets made for nothing (a folder this run made can go) */
      char p[4400];
      snprintf(p, sizeof p, "%s/" HX_SETS_NAME, od->dir);
      rmdir(p);
    }
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
