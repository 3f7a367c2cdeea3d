/* Gmsh MSH 2.2 ASCII writer for any hx_mesh (`hexcg mesh --convert`): the
 * ranks send their elements to rank 0, which writes the nodes (the global
 * GLL ids of order 1, or of order 2 for curved meshes: hex27 with the 27
 * nodes of hx_mesh_gll_coords(m, 2, ...)), the hexahedra in global element
 * order with a volume physical group per material, and the tagged faces as
 * quadrilaterals in a surface physical group per tag. docs/mesh.md
 * "Converting a mesh". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_impl.h"

/* per element, sent to rank 0 */
typedef struct {
  int64_t gid, mat;
  int64_t ftag[6]; /* tag to write on the face, -1 none */
} elem_hdr;

typedef struct {
  int64_t gid, idx;
} gid_idx;
/* Gmsh's hex27 node order: the tensor index (a + 3b + 9c) of Gmsh node g
 * (the inverse of the reader's map) */
static void gmsh_order27(int tens[27]) {
  int map8[8], map27[27];
  hx_gmsh_node_maps(map8, map27);
  for (int t = 0; t < 27; t++) tens[map27[t]] = t;
}

/* 1 if the order-2 points of element e (27 tensor points) are not the
 * trilinear map of its corners */
static int elem_curved(const double *x, const double *y, const double *z) {
  const double *c[3] = {x, y, z};
  double scale = 0;
  for (int k = 0; k < 27; k++)
    for (int d = 0; d < 3; d++) scale = fmax(scale, fabs(c[d][k]));
  for (int k = 0; k < 27; k++) {
    const int a = k % 3, b = k / 3 % 3, cc = k / 9;
    for (int d = 0; d < 3; d++) {
      double s = 0;
      for (int v = 0; v < 8; v++) {
        const int va = v & 1, vb = (v >> 1) & 1, vc = v >> 2;
        const double w = (va ? a / 2.0 : 1 - a / 2.0) * (vb ? b / 2.0 : 1 - b / 2.0) * (vc ? cc / 2.0 : 1 - cc / 2.0);
        s += w * c[d][2 * va + 3 * 2 * vb + 9 * 2 * vc];
      }
      if (fabs(s - c[d][k]) > 1e-13 * (scale > 0 ? scale : 1)) return 1;
    }
  }
  return 0;
}

static void quote(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) fputc(*s == '"' ? '\'' : *s, f);
  fputc('"', f);
}

/* the records of the whole mesh on rank 0: per element its header, its npe
 * node ids and their coordinates */
typedef struct {
  hx_mesh m;
  int curved, q, n, npe; /* order q, n = q + 1 points, npe = n^3 per element */
  size_t rec;            /* bytes per record */
  unsigned char *rbuf;   /* rank 0: total records */
  int64_t total;
} gmsh_out;

/* Collective: the order-2 points of this rank's elements (x, y, z: E*27)
 * and whether any element over the ranks is curved; for a mesh with none,
 * the order-1 points instead */
static int local_points(hx_mesh m, double *x, double *y, double *z, int *curved) {
  HX_CALL(hx_mesh_gll_coords(m, 2, x, y, z));
  *curved = 0;
  for (int32_t e = 0; e < m->ne && !*curved; e++) *curved = elem_curved(x + 27 * e, y + 27 * e, z + 27 * e);
  HX_MPI(MPI_Allreduce(MPI_IN_PLACE, curved, 1, MPI_INT, MPI_MAX, m->comm));
  if (!*curved) HX_CALL(hx_mesh_gll_coords(m, 1, x, y, z));
  return HX_SUCCESS;
}

/* element e's header: its global id, material, and the tags its faces are
 * written with */
static elem_hdr elem_header(hx_mesh m, int32_t e, int untagged) {
  elem_hdr h;
  h.gid = m->gid[e], h.mat = m->mat[e];
  for (int f = 0; f < 6; f++) {
    const int32_t t = m->ftag[e * 6 + f];
    const int64_t nb = m->nbr[e * 6 + f];
    /* the faces of the pseudo tag stay untagged; a tagged interior face once */
    h.ftag[f] = t >= 0 && t != untagged && (nb < 0 || m->gid[e] < nb) ? t : -1;
  }
  return h;
}

/* this rank's records: header, node ids, coordinates */
static void pack_records(const gmsh_out *o, const int64_t *gid, const double *x, const double *y, const double *z,
                         unsigned char *sbuf) {
  hx_mesh m = o->m;
  const int npe = o->npe;
  const int untagged = hx_mesh_find_tag(m, HX_MESH_UNTAGGED);
  for (int32_t e = 0; e < m->ne; e++) {
    unsigned char *p = sbuf + (size_t)e * o->rec;
    const elem_hdr h = elem_header(m, e, untagged);
    memcpy(p, &h, sizeof(elem_hdr));
    p += sizeof(elem_hdr);
    memcpy(p, gid + (size_t)e * npe, (size_t)npe * sizeof(int64_t));
    p += (size_t)npe * sizeof(int64_t);
    for (int k = 0; k < npe; k++) {
      const size_t at = (size_t)e * npe + (size_t)k;
      const double c[3] = {x[at], y[at], z[at]};
      memcpy(p + (size_t)k * 3 * sizeof(double), c, sizeof c);
    }
  }
}

/* Collective: every rank's records gathered on rank 0 (o->rbuf, o->total);
 * counts and displs: one int per rank */
static int gather_records(gmsh_out *o, const unsigned char *sbuf, int *counts, int *displs) {
  hx_mesh m = o->m;
  const int mine = (int)((size_t)m->ne * o->rec);
  HX_MPI(MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, m->comm));
  int err = HX_SUCCESS;
  if (m->rank == 0) {
    double sum = 0;
    for (int r = 0; r < m->size; r++) displs[r] = (int)sum, sum += counts[r];
    err = sum < 2e9 ? HX_SUCCESS
                    : HX_ERROR(HX_ERR_INPUT, "--convert: the mesh is too large to gather on rank 0 (%.0f bytes)", sum);
    if (!err) err = HX_ALLOC(&o->rbuf, (size_t)sum + 1);
    o->total = (int64_t)(sum / (double)o->rec);
  }
  HX_CALL(hx_mesh_agree(m->comm, err));
  HX_MPI(MPI_Gatherv(sbuf, mine, MPI_BYTE, o->rbuf, counts, displs, MPI_BYTE, 0, m->comm));
  return HX_SUCCESS;
}

/* the records' node coordinates by node id (X: N*3), the headers (h) and the
 * records in global element order (order) */
static void unpack_records(const gmsh_out *o, int64_t N, double *X, elem_hdr *h, gid_idx *order) {
  for (int64_t i = 0; i < o->total; i++) {
    const unsigned char *p = o->rbuf + (size_t)i * o->rec;
    memcpy(&h[i], p, sizeof *h);
    order[i].gid = h[i].gid, order[i].idx = i;
    const int64_t *ids = (const int64_t *)(const void *)(p + sizeof(elem_hdr));
    const unsigned char *cp = p + sizeof(elem_hdr) + (size_t)o->npe * sizeof(int64_t);
    for (int k = 0; k < o->npe; k++) {
      int64_t id;
      memcpy(&id, (const unsigned char *)ids + (size_t)k * sizeof id, sizeof id);
      if (id >= 1 && id <= N) memcpy(&X[3 * (id - 1)], cp + (size_t)k * 3 * sizeof(double), 3 * sizeof(double));
    }
  }
  qsort(order, (size_t)o->total, sizeof *order, hx_mesh_cmp_key);
}

/* the physical names (a surface group per tag, a volume group per material)
 * and the nodes */
static void write_names_nodes(FILE *f, hx_mesh m, int64_t N, const double *X) {
  fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n%d\n", m->ntags + m->nmat);
  for (int t = 0; t < m->ntags; t++) {
    fprintf(f, "2 %d ", t + 1);
    quote(f, m->tag_names[t]);
    fputc('\n', f);
  }
  for (int t = 0; t < m->nmat; t++) {
    fprintf(f, "3 %d ", t + 1);
    quote(f, m->mat_names[t]);
    fputc('\n', f);
  }
  fprintf(f, "$EndPhysicalNames\n$Nodes\n%lld\n", (long long)N);
  for (int64_t i = 0; i < N; i++)
    fprintf(f, "%lld %.17g %.17g %.17g\n", (long long)(i + 1), X[3 * i], X[3 * i + 1], X[3 * i + 2]);
  fprintf(f, "$EndNodes\n");
}

/* the node ids of record i */
static void record_ids(const gmsh_out *o, int64_t i, int64_t ids[27]) {
  memcpy(ids, o->rbuf + (size_t)i * o->rec + sizeof(elem_hdr), (size_t)o->npe * sizeof(int64_t));
}

/* the hexahedra in global element order, then the tagged faces as
 * quadrilaterals */
static void write_elements(FILE *f, const gmsh_out *o, const elem_hdr *h, const gid_idx *order) {
  const int q = o->q, n = o->n, npe = o->npe;
  int tens[27];
  gmsh_order27(tens);
  int64_t nquad = 0;
  for (int64_t i = 0; i < o->total; i++)
    for (int fc = 0; fc < 6; fc++) nquad += h[i].ftag[fc] >= 0;
  fprintf(f, "$Elements\n%lld\n", (long long)(o->total + nquad));
  int64_t id = 1;
  for (int64_t k = 0; k < o->total; k++) {
    const int64_t i = order[k].idx;
    int64_t ids[27];
    record_ids(o, i, ids);
    fprintf(f, "%lld %d 2 %lld %lld", (long long)id++, o->curved ? 12 : 5, (long long)(h[i].mat + 1),
            (long long)(h[i].mat + 1));
    for (int g = 0; g < npe; g++) {
      const int t = o->curved ? tens[g] : (const int[]){0, 1, 3, 2, 4, 5, 7, 6}[g];
      fprintf(f, " %lld", (long long)ids[t]);
    }
    fputc('\n', f);
  }
  for (int64_t k = 0; k < o->total; k++) {
    const int64_t i = order[k].idx;
    int64_t ids[27];
    record_ids(o, i, ids);
    for (int fc = 0; fc < 6; fc++) {
      if (h[i].ftag[fc] < 0) continue;
      const int dir = fc / 2, fix = (fc % 2) * q, du = dir == 0 ? 1 : 0, dv = dir == 2 ? 1 : 2;
      const int cyc[4][2] = {{0, 0}, {q, 0}, {q, q}, {0, q}};
      fprintf(f, "%lld 3 2 %lld %lld", (long long)id++, (long long)(h[i].ftag[fc] + 1),
              (long long)(h[i].ftag[fc] + 1));
      for (int c = 0; c < 4; c++) {
        int ijk[3];
        ijk[dir] = fix, ijk[du] = cyc[c][0], ijk[dv] = cyc[c][1];
        fprintf(f, " %lld", (long long)ids[ijk[0] + n * (ijk[1] + n * ijk[2])]);
      }
      fputc('\n', f);
    }
  }
  fprintf(f, "$EndElements\n");
}

/* rank 0: the gathered records as a Gmsh file */
static int write_file(const gmsh_out *o, const char *path) {
  hx_mesh m = o->m;
  const int64_t N = hx_mesh_num_global_gll(m, o->q);
  double *X = NULL;
  gid_idx *order = NULL;
  elem_hdr *h = NULL;
  FILE *f = NULL;
  int err = HX_ALLOC(&X, (size_t)N * 3 + 3);
  if (!err) err = HX_ALLOC(&order, (size_t)o->total + 1);
  if (!err) {
    f = fopen(path, "w");
    if (!f) err = HX_ERROR(HX_ERR_INPUT, "--convert: cannot write '%s' (does its folder exist?)", path);
  }
  if (!err) err = HX_ALLOC(&h, (size_t)o->total + 1);
  if (!err) {
    unpack_records(o, N, X, h, order);
    write_names_nodes(f, m, N, X);
    write_elements(f, o, h, order);
  }
  if (f && fclose(f) != 0 && !err) err = HX_ERROR(HX_ERR_INPUT, "--convert: writing '%s' failed (disk full?)", path);
  hx_free_host(&h);
  hx_free_host(&X);
  hx_free_host(&order);
  return err;
}

int hx_mesh_write_gmsh(hx_mesh m, const char *path, int *curved_out) {
  HX_CHECK(m != NULL, HX_ERR_ARG, "mesh is NULL");
  const int32_t E = m->ne;
  gmsh_out o = {.m = m};
  double *x = NULL, *y = NULL, *z = NULL;
  int64_t *gid = NULL;
  unsigned char *sbuf = NULL;
  int *counts = NULL, *displs = NULL;
  int err = HX_ALLOC(&x, (size_t)E * 27 + 1);
  if (!err) err = HX_ALLOC(&y, (size_t)E * 27 + 1);
  if (!err) err = HX_ALLOC(&z, (size_t)E * 27 + 1);
  err = hx_mesh_agree(m->comm, err);
  if (!err) err = local_points(m, x, y, z, &o.curved);
  if (err) goto done;
  o.q = o.curved ? 2 : 1, o.n = o.q + 1, o.npe = o.n * o.n * o.n;
  o.rec = sizeof(elem_hdr) + (size_t)o.npe * (sizeof(int64_t) + 3 * sizeof(double));
  err = HX_ALLOC(&gid, (size_t)E * o.npe + 1);
  err = hx_mesh_agree(m->comm, err);
  if (!err) err = hx_mesh_gll_ids(m, o.q, gid);
  if (err) goto done;
  /* gather to rank 0: headers, node ids, coordinates */
  err = (double)E * o.rec < 2e9
            ? HX_SUCCESS
            : HX_ERROR(HX_ERR_INPUT, "--convert: rank %d holds too many elements to send at once (%d)", m->rank, E);
  if (!err) err = HX_ALLOC(&sbuf, (size_t)E * o.rec + 1);
  if (!err) err = HX_ALLOC(&counts, (size_t)m->size);
  if (!err) err = HX_ALLOC(&displs, (size_t)m->size);
  err = hx_mesh_agree(m->comm, err);
  if (err) goto done;
  pack_records(&o, gid, x, y, z, sbuf);
  err = gather_records(&o, sbuf, counts, displs);
  if (err) goto done;
  if (m->rank == 0) err = write_file(&o, path);
  err = hx_mesh_agree(m->comm, err);
  if (!err && curved_out) *curved_out = o.curved;
done:
  hx_free_host(&sbuf);
  hx_free_host(&o.rbuf);
  hx_free_host(&counts);
  hx_free_host(&displs);
  hx_free_host(&x);
  hx_free_host(&y);
  hx_free_host(&z);
  hx_free_host(&gid);
  return err;
}
