/* Checkpoints of time-dependent runs (docs/time.md): a folder holding
 * checkpoint.yaml (step, time, what the case and mesh were, checksums) and
 * one solution file (hexcg-solution-1, hx_io_write_solution_file) per BDF
 * level and per projection vector; written as DIR.new and renamed onto DIR,
 * so a kill at any moment leaves the previous checkpoint or the new one. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_impl.h"

#define CK_FORMAT "hexcg-checkpoint-2"
/* format 1 (no checksum of checkpoint.yaml) is still read, its fields cross-checked */
#define CK_FORMAT_1 "hexcg-checkpoint-1"

/* FNV-1a, 64 bit */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
#define FNV0 14695981039346656037ull

/* Order-independent checksum of per-element values v[E_local][npe] with
 * global ids: XOR over the elements of FNV(gid, values); the same on any
 * partition. Collective. */
static int elem_hash(MPI_Comm comm, int32_t El, int64_t npe, const int64_t *gid, const double *v, uint64_t *out) {
  uint64_t h = 0;
  for (int32_t e = 0; e < El; e++) {
    uint64_t x = fnv(FNV0, &gid[e], sizeof gid[e]);
    h ^= fnv(x, v + (size_t)e * (size_t)npe, sizeof(double) * (size_t)npe);
  }
  unsigned long long l = h, g = 0;
  HX_MPI(MPI_Allreduce(&l, &g, 1, MPI_UNSIGNED_LONG_LONG, MPI_BXOR, comm));
  *out = g;
  return HX_SUCCESS;
}

int hx_checkpoint_hash_elements(MPI_Comm comm, int32_t E_local, const int64_t *gid, const void *data, size_t bytes,
                                uint64_t *hash) {
  uint64_t h = 0;
  const unsigned char *d = (const unsigned char *)data;
  for (int32_t e = 0; e < E_local; e++) h ^= fnv(fnv(FNV0, &gid[e], sizeof gid[e]), d + (size_t)e * bytes, bytes);
  unsigned long long l = h, g = 0;
  HX_MPI(MPI_Allreduce(&l, &g, 1, MPI_UNSIGNED_LONG_LONG, MPI_BXOR, comm));
  *hash = g;
  return HX_SUCCESS;
}

int hx_checkpoint_mesh_hash(MPI_Comm comm, int p, int32_t E_local, const int64_t *gid, const double *x,
                            const double *y, const double *z, uint64_t *hash) {
  const int64_t npe = (int64_t)(p + 1) * (p + 1) * (p + 1);
  uint64_t a, b, c;
  HX_CALL(elem_hash(comm, E_local, npe, gid, x, &a));
  HX_CALL(elem_hash(comm, E_local, npe, gid, y, &b));
  HX_CALL(elem_hash(comm, E_local, npe, gid, z, &c));
  *hash = fnv(fnv(fnv(FNV0, &a, 8), &b, 8), &c, 8);
  return HX_SUCCESS;
}

/* What a continuation must share with the run that wrote the checkpoint:
 * key/value lines (the value as text). */
typedef struct {
  const char *key;
  char val[2048];
} ck_ident;
enum { CK_NID = 8 };

static void ident(const hx_case *cs, uint64_t mesh_hash, ck_ident id[CK_NID]) {
  static const char *const keys[CK_NID] = {"mesh.type", "mesh",          "order",        "problem",
                                           "time.scheme", "time.dt",     "mesh_nodes_hash", "case_hash"};
  for (int i = 0; i < CK_NID; i++) id[i].key = keys[i], id[i].val[0] = 0;
  snprintf(id[0].val, sizeof id[0].val, "%s", hx_case_mesh_type_name(cs->mesh.type));
  if (HX_CASE_MESH_FROM_FILE(cs->mesh.type))
    snprintf(id[1].val, sizeof id[1].val, "%s %s", hx_case_mesh_type_name(cs->mesh.type), cs->mesh.file);
  else
    snprintf(id[1].val, sizeof id[1].val, "elements %dx%dx%d, extent [%.17g,%.17g]x[%.17g,%.17g]x[%.17g,%.17g], eps %.17g, deform %.17g",
             cs->mesh.elements[0], cs->mesh.elements[1], cs->mesh.elements[2], cs->mesh.extent[0][0],
             cs->mesh.extent[0][1], cs->mesh.extent[1][0], cs->mesh.extent[1][1], cs->mesh.extent[2][0],
             cs->mesh.extent[2][1], cs->mesh.eps, cs->mesh.deform);
  snprintf(id[2].val, sizeof id[2].val, "%d", cs->order);
  size_t n = 0, cap = sizeof id[3].val;
  char *b = id[3].val;
#define P(...) n += (size_t)snprintf(b + n, n < cap ? cap - n : 0, __VA_ARGS__)
  /* the coefficients as given: numbers, expressions, material maps */
  P("kappa %.17g", cs->problem.kappa);
  if (cs->problem.kappa_expr) P(" %s", hx_expr_text(cs->problem.kappa_expr));
  for (int m = 0; m < cs->problem.nmaterials; m++) {
    const hx_case_material *mm = &cs->problem.materials[m];
    if (mm->expr) P(" %s=%s", mm->name, hx_expr_text(mm->expr));
    else P(" %s=%.17g", mm->name, mm->kappa);
  }
  P("; lambda %.17g", cs->problem.lambda);
  if (cs->problem.lambda_expr) P(" %s", hx_expr_text(cs->problem.lambda_expr));
  for (int m = 0; m < cs->problem.nlambda; m++) {
    const hx_case_coef *mm = &cs->problem.lambda_materials[m];
    if (mm->expr) P(" %s=%s", mm->name, hx_expr_text(mm->expr));
    else P(" %s=%.17g", mm->name, mm->value);
  }
  P("; rhs %s; exact %s", hx_expr_text(cs->problem.rhs), cs->problem.exact ? hx_expr_text(cs->problem.exact) : "-");
  for (int i = 0; i < cs->problem.nboundary; i++) {
    const hx_case_boundary *bd = &cs->problem.boundary[i];
    P("; %s", hx_bc_type_name(bd->type));
    for (int t = 0; t < bd->ntags; t++) P(" %s", bd->tags[t]);
    if (bd->value_kind == HX_BCV_EXACT) P(" = exact");
    else if (bd->value_kind == HX_BCV_EXPR) P(" = %s", hx_expr_text(bd->expr));
    else P(" = %.17g", bd->value);
    if (bd->type == HX_BC_ROBIN) {
      if (bd->alpha_expr) P(" alpha %s", hx_expr_text(bd->alpha_expr));
      else P(" alpha %.17g", bd->alpha);
    }
  }
#undef P
  for (char *c = b; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  snprintf(id[4].val, sizeof id[4].val, "bdf%d", cs->time.scheme + 1);
  snprintf(id[5].val, sizeof id[5].val, "%.17g", cs->time.dt);
  snprintf(id[6].val, sizeof id[6].val, "%016llx", (unsigned long long)mesh_hash);
  uint64_t h = FNV0;
  for (int i = 0; i < 7; i++) h = fnv(fnv(h, id[i].key, strlen(id[i].key)), id[i].val, strlen(id[i].val));
  snprintf(id[7].val, sizeof id[7].val, "%016llx", (unsigned long long)h);
}

/* one of the names a checkpoint folder holds: u_N.h5, p_N.h5,
 * checkpoint.yaml, or the .tmp of one of them (a write a kill interrupted) */
static int ck_own_name(const char *n) {
  if (!strcmp(n, "checkpoint.yaml") || !strcmp(n, "checkpoint.yaml.tmp")) return 1;
  if ((n[0] != 'u' && n[0] != 'p') || n[1] != '_' || !isdigit((unsigned char)n[2])) return 0;
  const char *e = n + 2;
  while (isdigit((unsigned char)*e)) e++;
  return !strcmp(e, ".h5") || !strcmp(e, ".h5.tmp");
}

static int ck_entry(const char *n) { return ck_own_name(n) ? HX_IO_OWN_FILE : HX_IO_OWN_KEEP; }

/* Remove the checkpoint folder d: hexcg's own names in it (partial writes
 * included: a kill during a checkpoint left u_0.h5.tmp, and every later run
 * into the folder failed with "cannot create checkpoint.new: File exists",
 * issue 53), never following a symbolic link. A folder that still holds
 * other files stays. */
static void rm_ck_dir(const char *d) { hx_io_remove_own(d, ck_entry); }

int hx_checkpoint_clean(MPI_Comm comm, const char *dir) {
  int rank = 0, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    char nw[4220];
    struct stat st;
    snprintf(nw, sizeof nw, "%s/checkpoint.new", dir);
    rm_ck_dir(nw);
    if (lstat(nw, &st) == 0)
      err = HX_ERROR(HX_ERR_IO, "'%s' (a checkpoint whose write was interrupted) holds files hexcg did not write "
                                "there; move them away",
                     nw);
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  return HX_SUCCESS;
}

/* the parts of the mesh's identity beyond its GLL nodes (issue 53, defect 12):
 * checkpoint.yaml keys and what a mismatch is called */
static const char *const mesh_part_key[HX_CK_MESH_PARTS] = {"mesh_periodic_hash", "mesh_connectivity_hash",
                                                           "mesh_tags_hash", "mesh_materials_hash"};
static const char *const mesh_part_name[HX_CK_MESH_PARTS] = {"periodicity (the face neighbours)",
                                                            "connectivity (the element vertex ids)",
                                                            "boundary tags (the tag of each face)",
                                                            "materials (the material of each element)"};

int hx_checkpoint_write(MPI_Comm comm, const char *dir, const hx_case *cs, const hx_checkpoint_mesh_id *mid,
                        const char *run_id, int step,
                        double time, int nlev, const double *const *lev, int nproj, const double *const *proj,
                        int p, int32_t E_local, const int64_t *gid, const double *x, const double *y,
                        const double *z) {
  int rank = 0, size = 1, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Comm_size(comm, &size));
  HX_CHECK(nlev >= 1 && nlev <= 16 && nproj >= 0 && nproj <= 64, HX_ERR_ARG, "checkpoint: %d levels, %d vectors",
           nlev, nproj);
  char ck[4200], nw[4220], old[4220], path[4300];
  snprintf(ck, sizeof ck, "%s/checkpoint", dir);
  snprintf(nw, sizeof nw, "%s.new", ck);
  snprintf(old, sizeof old, "%s.old", ck);
  if (rank == 0) {
    rm_ck_dir(nw);
    if (mkdir(nw, 0777) != 0)
      err = errno == EEXIST ? HX_ERROR(HX_ERR_IO,
                                       "cannot create '%s': it exists and holds files hexcg did not write there; "
                                       "move them away",
                                       nw)
                            : HX_ERROR(HX_ERR_IO, "cannot create '%s': %s", nw, strerror(errno));
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  const int64_t npe = (int64_t)(p + 1) * (p + 1) * (p + 1);
  uint64_t *sums = calloc((size_t)(nlev + nproj), sizeof *sums);
  HX_CHECK(sums, HX_ERR_MEM, "out of memory");
  char name[64];
  for (int i = 0; i < nlev + nproj && !err; i++) {
    const double *v = i < nlev ? lev[i] : proj[i - nlev];
    snprintf(name, sizeof name, "%s_%d.h5", i < nlev ? "u" : "p", i < nlev ? i : i - nlev);
    err = hx_io_write_solution_file(comm, nw, name, 0, p, E_local, gid, x, y, z, v, NULL);
    if (!err) err = elem_hash(comm, E_local, npe, gid, v, &sums[i]);
  }
  if (err) {
    free(sums);
    HX_CALL(err);
  }
  if (rank == 0) {
    ck_ident id[CK_NID];
    ident(cs, mid->nodes, id);
    size_t cap = 16384 + 64 * (size_t)(nlev + nproj), n = 0;
    char *b = malloc(cap);
    if (!b) err = HX_ERROR(HX_ERR_MEM, "out of memory");
#define P(...) n += (size_t)snprintf(b + n, n < cap ? cap - n : 0, __VA_ARGS__)
    if (b) {
      P("format: %s\ncase_file: %s\nstep: %d\ntime: %.17g\nlevels: %d\nprojection: %d\nranks: %d\n", CK_FORMAT,
        cs->path, step, time, nlev, nproj, size);
      for (int i = 0; i < CK_NID; i++) P("%s: %s\n", id[i].key, id[i].val);
      for (int i = 0; i < HX_CK_MESH_PARTS; i++) P("%s: %016llx\n", mesh_part_key[i], (unsigned long long)mid->part[i]);
      P("run_id: %s\n", run_id);
      for (int i = 0; i < nlev + nproj; i++)
        P("%s_%d: %016llx\n", i < nlev ? "u" : "p", i < nlev ? i : i - nlev, (unsigned long long)sums[i]);
      /* a checksum of every line above (issue 53, defect 11: one flipped bit,
       * step 4 -> 6, was accepted and the run went on from the wrong time) */
      if (n < cap) P("checksum: %016llx\n", (unsigned long long)fnv(FNV0, b, n));
      P("end: true\n");
      if (n >= cap) err = HX_ERROR(HX_ERR_INTERNAL, "checkpoint.yaml too long");
    }
#undef P
    snprintf(path, sizeof path, "%s/checkpoint.yaml", nw);
    if (!err) err = hx_io_write_file_atomic(path, b, n);
    free(b);
    /* the switch: checkpoint -> checkpoint.old, checkpoint.new -> checkpoint, old removed */
    if (!err) {
      rm_ck_dir(old);
      if (rename(ck, old) != 0 && errno != ENOENT)
        err = HX_ERROR(HX_ERR_IO, "cannot rename '%s': %s", ck, strerror(errno));
    }
    if (!err && rename(nw, ck) != 0) err = HX_ERROR(HX_ERR_IO, "cannot rename '%s' to '%s': %s", nw, ck, strerror(errno));
    if (!err) rm_ck_dir(old);
  }
  free(sums);
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  return HX_SUCCESS;
}

/* the value of key in the checkpoint.yaml text, or NULL */
static const char *ck_get(const char *text, const char *key, char *buf, size_t len) {
  size_t kl = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (!strncmp(l, key, kl) && l[kl] == ':' && l[kl + 1] == ' ') {
      const char *v = l + kl + 2, *e = strchr(v, '\n');
      size_t n = e ? (size_t)(e - v) : strlen(v);
      if (n >= len) n = len - 1;
      memcpy(buf, v, n);
      buf[n] = 0;
      return buf;
    }
  }
  return NULL;
}

int hx_checkpoint_find(const char *restart, char *dir, size_t len) {
  char p[4300];
  const char *cand[3] = {"%s/checkpoint", "%s", "%s/checkpoint.old"};
  for (int i = 0; i < 3; i++) {
    snprintf(dir, len, cand[i], restart);
    snprintf(p, sizeof p, "%s/checkpoint.yaml", dir);
    if (access(p, R_OK) == 0) return HX_SUCCESS;
  }
  return HX_ERROR(HX_ERR_INPUT, "--restart %s: no checkpoint there (expected %s/checkpoint/checkpoint.yaml)", restart,
                  restart);
}

/* rank 0: read and check the text; the error names the checkpoint */
static int ck_check(const char *dir, const hx_case *cs, const hx_checkpoint_mesh_id *mid, int maxlev, int maxproj,
                    char **textp, int *step, double *time, int *nlev, int *nproj, char *run_id) {
  const int have_mesh = mid && mid->have_nodes;
  const uint64_t mesh_hash = mid ? mid->nodes : 0;
  char p[4300], v[2100];
  snprintf(p, sizeof p, "%s/checkpoint.yaml", dir);
  char *text = NULL;
  HX_CALL(hx_io_read_file(p, "the checkpoint's", (size_t)1 << 20, 0, &text, NULL));
  *textp = text;
  const int fmt2 = ck_get(text, "format", v, sizeof v) && !strcmp(v, CK_FORMAT);
  HX_CHECK(fmt2 || !strcmp(v, CK_FORMAT_1), HX_ERR_INPUT,
           "checkpoint %s: not a hexcg checkpoint (checkpoint.yaml has no 'format: " CK_FORMAT "')", dir);
  HX_CHECK(ck_get(text, "end", v, sizeof v) && !strcmp(v, "true"), HX_ERR_INPUT,
           "checkpoint %s: checkpoint.yaml is truncated (no 'end: true' line)", dir);
  if (fmt2) {
    const char *cl = strstr(text, "\nchecksum: ");
    HX_CHECK(cl, HX_ERR_INPUT, "checkpoint %s: checkpoint.yaml has no checksum line", dir);
    const size_t upto = (size_t)(cl - text) + 1;
    char want[32];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)fnv(FNV0, text, upto));
    HX_CHECK(ck_get(text, "checksum", v, sizeof v) && !strcmp(v, want), HX_ERR_INPUT,
             "checkpoint %s: checkpoint.yaml is corrupt (its checksum %s does not match its text, %s): do not "
             "restart from it",
             dir, v, want);
  }
  char *e;
  HX_CHECK(ck_get(text, "step", v, sizeof v) && (*step = (int)strtol(v, &e, 10)) >= 0 && !*e, HX_ERR_INPUT,
           "checkpoint %s: bad 'step' in checkpoint.yaml", dir);
  HX_CHECK(ck_get(text, "time", v, sizeof v) && ((*time = strtod(v, &e)), !*e), HX_ERR_INPUT,
           "checkpoint %s: bad 'time' in checkpoint.yaml", dir);
  ck_ident id[CK_NID];
  ident(cs, mesh_hash, id);
  for (int i = 0; i < CK_NID - 1; i++) {
    if (!have_mesh && !strcmp(id[i].key, "mesh_nodes_hash")) continue; /* a dry run: no GLL nodes built */
    if (!ck_get(text, id[i].key, v, sizeof v))
      return HX_ERROR(HX_ERR_INPUT, "checkpoint %s: checkpoint.yaml lacks '%s'", dir, id[i].key);
    if (strcmp(v, id[i].val)) {
      if (!strcmp(id[i].key, "mesh_nodes_hash"))
        return HX_ERROR(HX_ERR_INPUT,
                        "checkpoint %s is of another mesh: the GLL node coordinates differ (hash %s, this mesh %s)",
                        dir, v, id[i].val);
      return HX_ERROR(HX_ERR_INPUT, "checkpoint %s is of another case: %s differs (checkpoint: '%s', %s: '%s')", dir,
                      id[i].key, v, cs->path, id[i].val);
    }
  }
  /* the mesh beyond its nodes: periodic pairs, connectivity, boundary tags,
   * materials (issue 53, defect 12: a box made periodic, or a Gmsh file with
   * two tags swapped, has the same GLL nodes); every part that differs is named */
  if (mid && mid->have_parts) {
    char diff[1024] = "";
    int missing = 0;
    for (int i = 0; i < HX_CK_MESH_PARTS; i++) {
      char want[32];
      snprintf(want, sizeof want, "%016llx", (unsigned long long)mid->part[i]);
      if (!ck_get(text, mesh_part_key[i], v, sizeof v)) missing++;
      else if (strcmp(v, want))
        snprintf(diff + strlen(diff), sizeof diff - strlen(diff), "%s%s", diff[0] ? ", " : "", mesh_part_name[i]);
    }
    if (diff[0])
      return HX_ERROR(HX_ERR_INPUT,
                      "checkpoint %s is of another mesh: %s%s%s%s; restart with the mesh the checkpoint was "
                      "written with, or start a new run",
                      dir, have_mesh ? "the GLL nodes agree with " : "",
                      HX_CASE_MESH_FROM_FILE(cs->mesh.type) ? cs->mesh.file : "the case's box",
                      have_mesh ? ", but not its " : " differs from it in its ", diff);
    if (missing)
      hx_log(HX_LOG_NORMAL, "restart: checkpoint %s was written by an earlier hexcg: its mesh's periodicity, "
                            "connectivity, boundary tags and materials cannot be checked\n", dir);
  }
  if (run_id) {
    run_id[0] = 0;
    if (ck_get(text, "run_id", v, sizeof v)) {
      HX_CHECK(strlen(v) < HX_RUN_ID_LEN && strspn(v, "0123456789abcdef") == strlen(v), HX_ERR_INPUT,
               "checkpoint %s: bad 'run_id' in checkpoint.yaml", dir);
      memcpy(run_id, v, strlen(v) + 1);
    }
  }
  HX_CHECK(ck_get(text, "levels", v, sizeof v) && (*nlev = (int)strtol(v, &e, 10)) >= 1 && *nlev <= maxlev && !*e,
           HX_ERR_INPUT, "checkpoint %s: bad 'levels' in checkpoint.yaml (1..%d for this scheme)", dir, maxlev);
  HX_CHECK(ck_get(text, "projection", v, sizeof v) && (*nproj = (int)strtol(v, &e, 10)) >= 0 && !*e, HX_ERR_INPUT,
           "checkpoint %s: bad 'projection' in checkpoint.yaml", dir);
  if (*nproj > maxproj) *nproj = -*nproj - 1; /* more than this run keeps: not used */
  /* the fields against each other: t = step dt, and at most step + 1 levels */
  HX_CHECK(fabs(*time - *step * cs->time.dt) <= 1e-9 * fmax(fabs(*time), cs->time.dt), HX_ERR_INPUT,
           "checkpoint %s: time %.17g is not step %d x dt %.17g: checkpoint.yaml is corrupt", dir, *time, *step,
           cs->time.dt);
  const int need = *step + 1 < maxlev ? *step + 1 : maxlev; /* a run keeps every level it has, up to the scheme's */
  HX_CHECK(*nlev <= *step + 1 && *nlev >= need, HX_ERR_INPUT,
           "checkpoint %s: %d levels at step %d (a BDF%d run keeps %d there): checkpoint.yaml is corrupt", dir, *nlev,
           *step, maxlev, need);
  HX_CHECK(*step <= cs->time.steps,
           HX_ERR_INPUT, "checkpoint %s is at step %d, beyond the case's last step %d (time.end / time.steps)", dir, *step,
           cs->time.steps);
  return HX_SUCCESS;
}

int hx_checkpoint_check(MPI_Comm comm, const char *restart, const hx_case *cs, const hx_checkpoint_mesh_id *mid,
                        char *dir, size_t len, int *step, double *time) {
  int rank = 0, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  int iv[3] = {0, 0, 0};
  double tv = 0.0;
  if (rank == 0) {
    char *text = NULL;
    err = hx_checkpoint_find(restart, dir, len);
    if (!err)
      err = ck_check(dir, cs, mid, cs->time.scheme + 1, cs->solver.projection, &text, &iv[0], &tv, &iv[1], &iv[2],
                     NULL);
    free(text);
  }
  HX_CALL(hx_io_bcast_error(comm, 0, err));
  HX_MPI(MPI_Bcast(iv, 1, MPI_INT, 0, comm));
  HX_MPI(MPI_Bcast(&tv, 1, MPI_DOUBLE, 0, comm));
  HX_MPI(MPI_Bcast(dir, (int)len, MPI_CHAR, 0, comm));
  *step = iv[0], *time = tv;
  return HX_SUCCESS;
}

int hx_checkpoint_read(MPI_Comm comm, const char *dir, const hx_case *cs, const hx_checkpoint_mesh_id *mid, int p,
                       int32_t E_local, const int64_t *gid, const double *x, const double *y, const double *z,
                       int maxlev, double **lev, int maxproj, double **proj, int *step, double *time, int *nlev,
                       int *nproj, char *run_id) {
  int rank = 0, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  char *text = NULL;
  int iv[3] = {0, 0, 0};
  double tv = 0;
  if (rank == 0) err = ck_check(dir, cs, mid, maxlev, maxproj, &text, &iv[0], &tv, &iv[1], &iv[2], run_id);
  err = hx_io_bcast_error(comm, 0, err);
  if (err) {
    free(text);
    HX_CALL(err);
  }
  HX_MPI(MPI_Bcast(iv, 3, MPI_INT, 0, comm));
  HX_MPI(MPI_Bcast(&tv, 1, MPI_DOUBLE, 0, comm));
  HX_MPI(MPI_Bcast(run_id, HX_RUN_ID_LEN, MPI_CHAR, 0, comm));
  *step = iv[0], *time = tv, *nlev = iv[1];
  const int np_file = iv[2] >= 0 ? iv[2] : -iv[2] - 1;
  *nproj = iv[2] >= 0 ? iv[2] : 0;
  const int64_t npe = (int64_t)(p + 1) * (p + 1) * (p + 1);
  char path[4300], name[32], want[64];
  for (int i = 0; i < *nlev + *nproj && !err; i++) {
    double *v = i < *nlev ? lev[i] : proj[i - *nlev];
    snprintf(name, sizeof name, "%s_%d", i < *nlev ? "u" : "p", i < *nlev ? i : i - *nlev);
    snprintf(path, sizeof path, "%s/%s.h5", dir, name);
    err = hx_io_read_solution_at(comm, path, p, E_local, gid, x, y, z, v);
    if (err) { /* a damaged file is the user's input here: exit 2, named */
      char msg[2048];
      snprintf(msg, sizeof msg, "%s", hx_error_message());
      hx_error_clear();
      err = HX_ERROR(HX_ERR_INPUT, "checkpoint %s: cannot read %s.h5: %s", dir, name, msg);
    }
    uint64_t h = 0;
    if (!err) err = elem_hash(comm, E_local, npe, gid, v, &h);
    if (!err && rank == 0) {
      char got[32];
      snprintf(got, sizeof got, "%016llx", (unsigned long long)h);
      if (!ck_get(text, name, want, sizeof want) || strcmp(want, got))
        err = HX_ERROR(HX_ERR_INPUT, "checkpoint %s: %s.h5 is damaged (its checksum %s is not the %s checkpoint.yaml records)",
                       dir, name, got, ck_get(text, name, want, sizeof want) ? want : "(none)");
    }
    err = hx_io_bcast_error(comm, 0, err);
  }
  (void)np_file;
  free(text);
  HX_CALL(err);
  return HX_SUCCESS;
}
