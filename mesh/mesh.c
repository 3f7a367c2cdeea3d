/* Mesh object: creation (rank 0 builds, partitions, distributes),
 * accessors, collective error agreement. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mesh_impl.h"

int hx_strdup(const char *s, char **out) {
  size_t n = strlen(s) + 1;
  HX_CALL(hx_calloc(n, 1, out));
  memcpy(*out, s, n);
  return HX_SUCCESS;
}

void hx_free_names(int n, char ***names) {
  if (!*names) return;
  for (int i = 0; i < n; i++) free((*names)[i]);
  hx_free_host(names);
}

int hx_mesh_agree(MPI_Comm comm, int code) {
  int rank, size;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Comm_size(comm, &size));
  int key = code ? rank : size, first = size;
  HX_MPI(MPI_Allreduce(&key, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return HX_SUCCESS;
  char msg[2048];
  int c = code;
  if (rank == first) snprintf(msg, sizeof msg, "%s", hx_error_message());
  HX_MPI(MPI_Bcast(&c, 1, MPI_INT, first, comm));
  HX_MPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm));
  if (rank == first) return c;
  return HX_ERROR(c, "%s", msg);
}

/* ---------------------------------------------------------------- distribution */
enum { REC_I64 = 33, REC_I32 = 13, REC_I8 = 12 };
/* curved: the element's curve slots and parameters follow (mesh_curve.c) */
static size_t rec_size(int npe, int curved) {
  return REC_I64 * 8 + REC_I32 * 4 + REC_I8 + (size_t)npe * 24 +
         (curved ? HX_CURVE_NSLOT + HX_CURVE_NPAR * sizeof(double) : 0);
}

static void pack_elem(const hx_gmesh *g, int64_t e, char *p) {
  int64_t i64[REC_I64];
  int32_t i32[REC_I32];
  int8_t i8[REC_I8];
  i64[0] = e;
  memcpy(&i64[1], &g->vid[e * 8], 8 * sizeof(int64_t));
  memcpy(&i64[9], &g->eid[e * 12], 12 * sizeof(int64_t));
  memcpy(&i64[21], &g->fid[e * 6], 6 * sizeof(int64_t));
  memcpy(&i64[27], &g->nbr[e * 6], 6 * sizeof(int64_t));
  i32[0] = g->mat[e];
  memcpy(&i32[1], &g->ftag[e * 6], 6 * sizeof(int32_t));
  for (int f = 0; f < 6; f++) i32[7 + f] = g->nbr[e * 6 + f] >= 0 ? g->part[g->nbr[e * 6 + f]] : -1;
  memcpy(&i8[0], &g->nbrf[e * 6], 6);
  memcpy(&i8[6], &g->nbro[e * 6], 6);
  memcpy(p, i64, sizeof i64), p += sizeof i64;
  memcpy(p, i32, sizeof i32), p += sizeof i32;
  memcpy(p, i8, sizeof i8), p += sizeof i8;
  memcpy(p, &g->nodes[e * g->npe * 3], (size_t)g->npe * 24);
  if (g->ctype) {
    p += (size_t)g->npe * 24;
    memcpy(p, &g->ctype[e * HX_CURVE_NSLOT], HX_CURVE_NSLOT);
    memcpy(p + HX_CURVE_NSLOT, &g->cpar[e * HX_CURVE_NPAR], HX_CURVE_NPAR * sizeof(double));
  }
}

static void unpack_elem(hx_mesh m, int32_t l, const char *p) {
  int64_t i64[REC_I64];
  int32_t i32[REC_I32];
  memcpy(i64, p, sizeof i64), p += sizeof i64;
  memcpy(i32, p, sizeof i32), p += sizeof i32;
  m->gid[l] = i64[0];
  memcpy(&m->vid[l * 8], &i64[1], 8 * sizeof(int64_t));
  memcpy(&m->eid[l * 12], &i64[9], 12 * sizeof(int64_t));
  memcpy(&m->fid[l * 6], &i64[21], 6 * sizeof(int64_t));
  memcpy(&m->nbr[l * 6], &i64[27], 6 * sizeof(int64_t));
  m->mat[l] = i32[0];
  memcpy(&m->ftag[l * 6], &i32[1], 6 * sizeof(int32_t));
  memcpy(&m->nbr_rank[l * 6], &i32[7], 6 * sizeof(int32_t));
  memcpy(&m->nbrf[l * 6], p, 6), p += 6;
  memcpy(&m->nbro[l * 6], p, 6), p += 6;
  memcpy(&m->nodes[(size_t)l * m->npe * 3], p, (size_t)m->npe * 24);
  if (m->ctype) {
    p += (size_t)m->npe * 24;
    memcpy(&m->ctype[(size_t)l * HX_CURVE_NSLOT], p, HX_CURVE_NSLOT);
    memcpy(&m->cpar[(size_t)l * HX_CURVE_NPAR], p + HX_CURVE_NSLOT, HX_CURVE_NPAR * sizeof(double));
  }
}

#define CHUNK ((size_t)1 << 28)

static int send_big(const char *buf, size_t n, int dest, MPI_Comm comm) {
  for (size_t off = 0; off < n || (n == 0 && off == 0); off += CHUNK) {
    size_t len = n - off < CHUNK ? n - off : CHUNK;
    HX_MPI(MPI_Send(buf + off, (int)len, MPI_BYTE, dest, 71, comm));
    if (n == 0) break;
  }
  return HX_SUCCESS;
}
static int recv_big(char *buf, size_t n, int src, MPI_Comm comm) {
  for (size_t off = 0; off < n || (n == 0 && off == 0); off += CHUNK) {
    size_t len = n - off < CHUNK ? n - off : CHUNK;
    HX_MPI(MPI_Recv(buf + off, (int)len, MPI_BYTE, src, 71, comm, MPI_STATUS_IGNORE));
    if (n == 0) break;
  }
  return HX_SUCCESS;
}

static int bcast_names(MPI_Comm comm, int rank, int *n, char ***names) {
  int64_t len = 0;
  char *buf = NULL;
  if (rank == 0)
    for (int i = 0; i < *n; i++) len += (int64_t)strlen((*names)[i]) + 1;
  HX_MPI(MPI_Bcast(n, 1, MPI_INT, 0, comm));
  HX_MPI(MPI_Bcast(&len, 1, MPI_INT64_T, 0, comm));
  HX_CALL(hx_calloc((size_t)len + 1, 1, &buf));
  if (rank == 0) {
    char *p = buf;
    for (int i = 0; i < *n; i++) {
      size_t l = strlen((*names)[i]) + 1;
      memcpy(p, (*names)[i], l), p += l;
    }
  }
  HX_MPI(MPI_Bcast(buf, (int)len, MPI_CHAR, 0, comm));
  if (rank != 0) {
    HX_CALL(HX_ALLOC(names, *n));
    const char *p = buf;
    for (int i = 0; i < *n; i++) {
      HX_CALL(hx_strdup(p, &(*names)[i]));
      p += strlen(p) + 1;
    }
  }
  free(buf);
  return HX_SUCCESS;
}

static int mesh_alloc(hx_mesh m) {
  int32_t n = m->ne;
  HX_CALL(HX_ALLOC(&m->gid, n));
  HX_CALL(HX_ALLOC(&m->nodes, (size_t)n * m->npe * 3));
  HX_CALL(HX_ALLOC(&m->vid, (size_t)n * 8));
  HX_CALL(HX_ALLOC(&m->eid, (size_t)n * 12));
  HX_CALL(HX_ALLOC(&m->fid, (size_t)n * 6));
  HX_CALL(HX_ALLOC(&m->mat, n));
  HX_CALL(HX_ALLOC(&m->ftag, (size_t)n * 6));
  HX_CALL(HX_ALLOC(&m->nbr, (size_t)n * 6));
  HX_CALL(HX_ALLOC(&m->nbrf, (size_t)n * 6));
  HX_CALL(HX_ALLOC(&m->nbro, (size_t)n * 6));
  HX_CALL(HX_ALLOC(&m->nbr_rank, (size_t)n * 6));
  return HX_SUCCESS;
}

int hx_mesh_distribute(MPI_Comm comm, hx_gmesh *g, hx_mesh *out) {
  hx_mesh m = NULL;
  int64_t *count = NULL, *order = NULL, *start = NULL;
  char *buf = NULL;
  int err = HX_SUCCESS;
  HX_CALL(hx_calloc(1, sizeof *m, &m));
  m->comm = MPI_COMM_NULL;
  HX_MPI(MPI_Comm_dup(comm, &m->comm));
  HX_MPI(MPI_Comm_rank(m->comm, &m->rank));
  HX_MPI(MPI_Comm_size(m->comm, &m->size));
  const int rank = m->rank, size = m->size;
  int64_t meta[6] = {0, 0, 0, 0, 0, 0};
  if (rank == 0) {
    meta[0] = g->ne, meta[1] = g->nv, meta[2] = g->ned, meta[3] = g->nf, meta[4] = g->npe;
    for (int64_t e = 0; g->ctype && e < g->ne; e++) meta[5] += hx_curve_any(&g->ctype[e * HX_CURVE_NSLOT]);
  }
  HX_MPI(MPI_Bcast(meta, 6, MPI_INT64_T, 0, m->comm));
  m->ncurved = meta[5];
  m->ne_global = meta[0], m->nv_global = meta[1], m->ned_global = meta[2], m->nf_global = meta[3];
  m->npe = (int)meta[4];
  if (rank == 0)
    m->nmat = g->nmat, m->ntags = g->ntags, m->mat_names = g->mat_names, m->tag_names = g->tag_names;
  err = bcast_names(m->comm, rank, &m->nmat, &m->mat_names);
  if (!err) err = bcast_names(m->comm, rank, &m->ntags, &m->tag_names);
  if (!err) err = HX_ALLOC(&m->tag_per, m->ntags + 1);
  if (!err) {
    if (rank == 0) {
      for (int t = 0; t < m->ntags; t++) m->tag_per[t] = g->tag_per ? g->tag_per[t] : 0;
      m->nper_faces = g->nper_faces;
    }
    HX_MPI(MPI_Bcast(m->tag_per, m->ntags, MPI_INT32_T, 0, m->comm));
    HX_MPI(MPI_Bcast(&m->nper_faces, 1, MPI_INT64_T, 0, m->comm));
    int64_t un[2] = {0, 0};
    if (rank == 0) {
      un[0] = g->nuntagged, un[1] = g->nboundary;
      memcpy(m->untagged_where, g->untagged_where, sizeof m->untagged_where);
    }
    HX_MPI(MPI_Bcast(un, 2, MPI_INT64_T, 0, m->comm));
    HX_MPI(MPI_Bcast(m->untagged_where, (int)sizeof m->untagged_where, MPI_CHAR, 0, m->comm));
    m->nuntagged = un[0], m->nboundary = un[1];
  }
  if (rank == 0) {
    /* the mesh now owns the names */
    g->mat_names = g->tag_names = NULL;
    g->nmat = g->ntags = 0;
  }
  if (err) goto fail;

  /* counts, order of elements per rank (ascending global id) */
  err = HX_ALLOC(&count, size);
  if (!err && rank == 0) {
    err = HX_ALLOC(&order, g->ne);
    if (!err) err = HX_ALLOC(&start, size + 1);
    if (!err) {
      for (int64_t e = 0; e < g->ne; e++) count[g->part[e]]++;
      for (int r = 0; r < size; r++) start[r + 1] = start[r] + count[r];
      for (int64_t e = 0; e < g->ne; e++) order[start[g->part[e]]++] = e;
      for (int r = size; r > 0; r--) start[r] = start[r - 1];
      start[0] = 0;
    }
  }
  err = hx_mesh_agree(m->comm, err);
  if (err) goto fail;
  int64_t mine = 0;
  HX_MPI(MPI_Scatter(count, 1, MPI_INT64_T, &mine, 1, MPI_INT64_T, 0, m->comm));
  err = mine <= INT32_MAX
            ? HX_SUCCESS
            : HX_ERROR(HX_ERR_INPUT, "rank %d would get %lld elements (more than 2^31); use more ranks", rank,
                       (long long)mine);
  if (!err) {
    m->ne = (int32_t)mine;
    err = mesh_alloc(m);
  }
  if (!err && m->ncurved > 0) {
    err = hx_calloc((size_t)m->ne * HX_CURVE_NSLOT + 1, 1, &m->ctype);
    if (!err) err = HX_ALLOC(&m->cpar, (size_t)m->ne * HX_CURVE_NPAR + 1);
  }
  const size_t rs = rec_size(m->npe, m->ncurved > 0);
  if (!err) {
    int64_t maxn = 0;
    if (rank == 0)
      for (int r = 0; r < size; r++) maxn = count[r] > maxn ? count[r] : maxn;
    else
      maxn = mine;
    err = hx_calloc((size_t)maxn * rs, 1, &buf);
  }
  err = hx_mesh_agree(m->comm, err);
  if (err) goto fail;
  if (rank == 0) {
    for (int r = size - 1; r >= 0; r--) {
      int64_t n = count[r];
      for (int64_t i = 0; i < n; i++) pack_elem(g, order[start[r] + i], buf + (size_t)i * rs);
      if (r > 0) {
        err = send_big(buf, (size_t)n * rs, r, m->comm);
        if (err) goto fail;
      }
    }
  } else {
    err = recv_big(buf, (size_t)mine * rs, 0, m->comm);
    if (err) goto fail;
  }
  for (int32_t l = 0; l < m->ne; l++) unpack_elem(m, l, buf + (size_t)l * rs);
  hx_free_host(&buf);
  hx_free_host(&count);
  hx_free_host(&order);
  hx_free_host(&start);
  *out = m;
  return HX_SUCCESS;
fail:
  hx_free_host(&buf);
  hx_free_host(&count);
  hx_free_host(&order);
  hx_free_host(&start);
  hx_mesh_destroy(&m);
  return err;
}

/* ---------------------------------------------------------------- creation */
static int finish_create(MPI_Comm comm, hx_gmesh *g, int err, hx_mesh_times t, hx_mesh *m) {
  err = hx_mesh_agree(comm, err);
  if (err) {
    hx_gmesh_free(g);
    return err;
  }
  double t0 = hx_wtime();
  err = hx_mesh_distribute(comm, g, m);
  hx_gmesh_free(g);
  if (err) return err;
  t.distribute = hx_wtime() - t0;
  t0 = hx_wtime();
  err = hx_mesh_check_jacobian(*m, 2, NULL, NULL, NULL, NULL);
  if (err) {
    hx_mesh_destroy(m);
    return err;
  }
  t.validate = hx_wtime() - t0;
  double loc[2] = {t.distribute, t.validate}, glob[2];
  HX_MPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, comm));
  double r0[3] = {t.build, t.topology, t.partition};
  HX_MPI(MPI_Bcast(r0, 3, MPI_DOUBLE, 0, comm));
  (*m)->times.build = r0[0], (*m)->times.topology = r0[1], (*m)->times.partition = r0[2];
  (*m)->times.distribute = glob[0], (*m)->times.validate = glob[1];
  return HX_SUCCESS;
}

static int build_rank0(hx_gmesh *g, int size, hx_partitioner part, int npairs, const char *const (*pairs)[2],
                       hx_mesh_times *t) {
  double t0 = hx_wtime();
  HX_CALL(hx_gmesh_topology(g));
  HX_CALL(hx_gmesh_curve_sync(g));
  if (g->nek) hx_gmesh_nek_interior(g);
  if (npairs > 0) HX_CALL(hx_gmesh_tag_pairs(g, npairs, pairs));
  /* a $Periodic link without node pairs that the reader could not resolve:
   * refused, unless the case names the pairs itself */
  if (g->per_unresolved[0] && npairs == 0) return HX_ERROR(HX_ERR_INPUT, "%s", g->per_unresolved);
  if (g->per_unresolved[0] && hx_log_get_level() >= HX_LOG_NORMAL)
    fprintf(stderr, "note: %s\n  (the case's mesh.periodic pairs are used instead)\n", g->per_unresolved);
  for (int k = 0; k < g->nfile_pairs; k++) {
    const char *const fp[1][2] = {{g->file_pairs[2 * k], g->file_pairs[2 * k + 1]}};
    int dup = 0; /* the case names the same pair: matched already */
    for (int p = 0; p < npairs; p++)
      dup |= (!strcmp(pairs[p][0], fp[0][0]) && !strcmp(pairs[p][1], fp[0][1])) ||
             (!strcmp(pairs[p][0], fp[0][1]) && !strcmp(pairs[p][1], fp[0][0]));
    if (!dup) HX_CALL(hx_gmesh_tag_pairs(g, 1, fp));
  }
  HX_CALL(hx_gmesh_periodic(g));
  HX_CALL(hx_gmesh_untagged(g));
  t->topology = hx_wtime() - t0;
  t0 = hx_wtime();
  HX_CALL(hx_gmesh_partition(g, size, part));
  t->partition = hx_wtime() - t0;
  return HX_SUCCESS;
}

void hx_mesh_note(const char *fmt, ...) {
  if (hx_log_rank() != 0 || hx_log_get_level() < HX_LOG_NORMAL) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}

/* What rank 0 builds the global mesh from: a generator's options, a
 * file's path (and a .re2 file's boundary field) or the caller's arrays. */
typedef struct {
  const hx_mesh_box_opts *box;
  const char *path;
  int field;
  int (*read)(const char *path, int field, hx_gmesh *g); /* NULL: the box generator or arrays */
  const hx_mesh_arrays *arrays;
  int (*read_arrays)(const hx_mesh_arrays *a, hx_gmesh *g); /* non-NULL: the arrays */
} mesh_source;

static int read_gmsh(const char *path, int field, hx_gmesh *g) {
  (void)field;
  return hx_gmesh_read_gmsh(path, g);
}
static int read_exodus(const char *path, int field, hx_gmesh *g) {
  (void)field;
  return hx_gmesh_read_exodus(path, g);
}

/* Collective: rank 0 generates or reads the global mesh and partitions it,
 * every rank receives its part (the one path of every hx_mesh_create_*). */
static int create(MPI_Comm comm, const mesh_source *src, hx_partitioner part, int npairs,
                  const char *const (*pairs)[2], hx_mesh *m) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "output mesh pointer is NULL");
  *m = NULL;
  int rank, size, err = HX_SUCCESS;
  HX_MPI(MPI_Comm_rank(comm, &rank));
  HX_MPI(MPI_Comm_size(comm, &size));
  hx_gmesh g;
  memset(&g, 0, sizeof g);
  hx_mesh_times t = {0, 0, 0, 0, 0};
  if (rank == 0) {
    double t0 = hx_wtime();
    if (src->read_arrays) {
      err = src->read_arrays(src->arrays, &g);
    } else if (!src->read) {
      err = src->box ? hx_gmesh_box(src->box, &g) : HX_ERROR(HX_ERR_ARG, "box options are NULL");
      if (!err) err = hx_gmesh_box_periodic(src->box, &g);
    } else {
      err = src->path ? src->read(src->path, src->field, &g) : HX_ERROR(HX_ERR_ARG, "mesh file path is NULL");
    }
    t.build = hx_wtime() - t0;
    if (!err) err = build_rank0(&g, size, part, npairs, pairs, &t);
  }
  HX_CALL(finish_create(comm, &g, err, t, m));
  return HX_SUCCESS;
}

int hx_mesh_create_box(MPI_Comm comm, const hx_mesh_box_opts *opts, hx_mesh *m) {
  const mesh_source src = {opts, NULL, 0, NULL, NULL, NULL}; /* opts matter on rank 0 only */
  return create(comm, &src, opts ? opts->partitioner : HX_PART_RCB, 0, NULL, m);
}

int hx_mesh_create_gmsh(MPI_Comm comm, const char *path, hx_partitioner part, hx_mesh *m) {
  return hx_mesh_create_gmsh_periodic(comm, path, part, 0, NULL, m);
}

int hx_mesh_create_gmsh_periodic(MPI_Comm comm, const char *path, hx_partitioner part, int npairs,
                                 const char *const (*pairs)[2], hx_mesh *m) {
  const mesh_source src = {NULL, path, 0, read_gmsh, NULL, NULL};
  return create(comm, &src, part, npairs, pairs, m);
}

int hx_mesh_create_exodus(MPI_Comm comm, const char *path, hx_partitioner part, int npairs,
                          const char *const (*pairs)[2], hx_mesh *m) {
  const mesh_source src = {NULL, path, 0, read_exodus, NULL, NULL};
  return create(comm, &src, part, npairs, pairs, m);
}

int hx_mesh_create_nek(MPI_Comm comm, const char *path, int field, hx_partitioner part, hx_mesh *m) {
  const mesh_source src = {NULL, path, field, hx_gmesh_read_nek, NULL, NULL};
  return create(comm, &src, part, 0, NULL, m);
}

int hx_mesh_create_arrays(MPI_Comm comm, const hx_mesh_arrays *a, hx_partitioner part, hx_mesh *m) {
  const mesh_source src = {NULL, NULL, 0, NULL, a, hx_gmesh_read_arrays}; /* a matters on rank 0 only */
  return create(comm, &src, part, 0, NULL, m);
}

int hx_mesh_path_is_exodus(const char *path) {
  const char *dot = path ? strrchr(path, '.') : NULL;
  if (!dot || strchr(dot, '/')) return 0;
  static const char *const ext[] = {".e", ".exo", ".ex2", ".g"};
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
    if (!strcasecmp(dot, ext[i])) return 1;
  return 0;
}

int hx_mesh_destroy(hx_mesh *pm) {
  if (!pm || !*pm) return HX_SUCCESS;
  hx_mesh m = *pm;
  if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
  hx_free_host(&m->gid);
  hx_free_host(&m->nodes);
  hx_free_host(&m->vid);
  hx_free_host(&m->eid);
  hx_free_host(&m->fid);
  hx_free_host(&m->mat);
  hx_free_host(&m->ftag);
  hx_free_host(&m->nbr);
  hx_free_host(&m->nbrf);
  hx_free_host(&m->nbro);
  hx_free_host(&m->nbr_rank);
  hx_free_names(m->nmat, &m->mat_names);
  hx_free_names(m->ntags, &m->tag_names);
  hx_free_host(&m->tag_per);
  hx_free_host(&m->ctype);
  hx_free_host(&m->cpar);
  free(m);
  *pm = NULL;
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- accessors */
MPI_Comm hx_mesh_comm(hx_mesh m) { return m->comm; }
int32_t hx_mesh_num_elements(hx_mesh m) { return m->ne; }
int64_t hx_mesh_num_global_elements(hx_mesh m) { return m->ne_global; }
int64_t hx_mesh_num_global_vertices(hx_mesh m) { return m->nv_global; }
int64_t hx_mesh_num_global_edges(hx_mesh m) { return m->ned_global; }
int64_t hx_mesh_num_global_faces(hx_mesh m) { return m->nf_global; }
const int64_t *hx_mesh_element_global_ids(hx_mesh m) { return m->gid; }
int hx_mesh_nodes_per_element(hx_mesh m) { return m->npe; }
const double *hx_mesh_element_nodes(hx_mesh m) { return m->nodes; }
const int64_t *hx_mesh_element_vertex_ids(hx_mesh m) { return m->vid; }
const int32_t *hx_mesh_element_material(hx_mesh m) { return m->mat; }
int hx_mesh_num_materials(hx_mesh m) { return m->nmat; }
const char *hx_mesh_material_name(hx_mesh m, int i) { return i >= 0 && i < m->nmat ? m->mat_names[i] : NULL; }
const int32_t *hx_mesh_face_tags(hx_mesh m) { return m->ftag; }
int hx_mesh_num_tags(hx_mesh m) { return m->ntags; }
const char *hx_mesh_tag_name(hx_mesh m, int i) { return i >= 0 && i < m->ntags ? m->tag_names[i] : NULL; }
int hx_mesh_find_tag(hx_mesh m, const char *name) {
  for (int i = 0; i < m->ntags; i++)
    if (!strcmp(m->tag_names[i], name)) return i;
  return -1;
}
int hx_mesh_tag_is_periodic(hx_mesh m, int i) {
  return i >= 0 && i < m->ntags && m->tag_per ? m->tag_per[i] : 0;
}
int64_t hx_mesh_num_periodic_faces(hx_mesh m) { return m->nper_faces; }
int64_t hx_mesh_untagged_faces(hx_mesh m, int64_t *nboundary, const char **where) {
  if (nboundary) *nboundary = m->nboundary;
  if (where) *where = m->untagged_where;
  return m->nuntagged;
}
int hx_mesh_face_neighbors(hx_mesh m, const int64_t **nbr_elem, const int8_t **nbr_face,
                           const int8_t **orient) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  if (nbr_elem) *nbr_elem = m->nbr;
  if (nbr_face) *nbr_face = m->nbrf;
  if (orient) *orient = m->nbro;
  return HX_SUCCESS;
}
const int32_t *hx_mesh_face_neighbor_ranks(hx_mesh m) { return m->nbr_rank; }
hx_mesh_times hx_mesh_get_times(hx_mesh m) { return m->times; }

void hx_mesh_face_nodes(int p, int f, int *idx, int *stride_a, int *stride_b) {
  const int n = p + 1, dir = f / 2, fixed = (f % 2) ? p : 0;
  const int du = dir == 0 ? 1 : 0, dv = dir == 2 ? 1 : 2;
  const int stride[3] = {1, n, n * n};
  for (int b = 0; b < n; b++)
    for (int a = 0; a < n; a++) idx[a + n * b] = fixed * stride[dir] + a * stride[du] + b * stride[dv];
  if (stride_a) *stride_a = stride[du];
  if (stride_b) *stride_b = stride[dv];
}

