/* Boundary faces of a Gmsh file in no surface physical group (docs/mesh.md
 * "Untagged boundary faces") on 1..n ranks: they form the pseudo tag
 * HX_MESH_UNTAGGED, the last tag, exactly on the faces of the surfaces the
 * file leaves untagged (checked face by face from the coordinates), with the
 * global count, the number of boundary faces and the first face's location;
 * no such tag when every boundary face is tagged or the untagged faces are
 * periodic ($Periodic section or a tag pair); a physical group named
 * "untagged" is refused when untagged faces exist and is an ordinary tag
 * otherwise; box meshes have none. */
#include <string.h>

#include "mesh_test.h"

static char dir[64];

/* A structured box [0, Lx] x [0, 1]^2 of nx x ny x nz hex8 as MSH 2.2, one
 * volume "solid"; surface s (0: x = 0, 1: x = Lx, 2: y = 0, 3: y = 1, 4:
 * z = 0, 5: z = 1) gets the physical group surf[s] (surfaces of the same
 * name share it) or, if NULL, no quadrilaterals at all. per: a $Periodic
 * section mapping the nodes of x = Lx onto those of x = 0. */
static int write_box(const char *path, int nx, int ny, int nz, double Lx, const char *const surf[6],
                     int per) {
  FILE *f = fopen(path, "w");
  if (!f) return 1;
#define NID(i, j, k) (2 * ((i) + (nx + 1) * ((j) + (ny + 1) * (k))) + 7)
  const int n[3] = {nx, ny, nz};
  int phys[6], nphys = 0;
  const char *pname[6];
  for (int s = 0; s < 6; s++) {
    phys[s] = 0;
    if (!surf[s]) continue;
    for (int q = 0; q < nphys && !phys[s]; q++)
      if (!strcmp(pname[q], surf[s])) phys[s] = q + 1;
    if (!phys[s]) pname[nphys] = surf[s], phys[s] = ++nphys;
  }
  fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n%d\n", nphys + 1);
  for (int q = 0; q < nphys; q++) fprintf(f, "2 %d \"%s\"\n", q + 1, pname[q]);
  fprintf(f, "3 %d \"solid\"\n$EndPhysicalNames\n", nphys + 1);
  const int nn = (nx + 1) * (ny + 1) * (nz + 1);
  fprintf(f, "$Nodes\n%d\n", nn);
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++)
        fprintf(f, "%d %.17g %.17g %.17g\n", NID(i, j, k), Lx * i / nx, (double)j / ny, (double)k / nz);
  int nq = 0;
  for (int s = 0; s < 6; s++)
    if (phys[s]) {
      const int d = s / 2;
      nq += n[d == 0 ? 1 : 0] * n[d == 2 ? 1 : 2];
    }
  fprintf(f, "$EndNodes\n$Elements\n%d\n", nq + nx * ny * nz);
  int et = 1;
  for (int s = 0; s < 6; s++) {
    if (!phys[s]) continue;
    const int d = s / 2, side = s % 2, d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2;
    for (int b = 0; b < n[d2]; b++)
      for (int a = 0; a < n[d1]; a++) {
        const int da[4] = {0, 1, 1, 0}, db[4] = {0, 0, 1, 1};
        fprintf(f, "%d 3 2 %d %d", et++, phys[s], s + 1);
        for (int q = 0; q < 4; q++) {
          int c[3];
          c[d] = side ? n[d] : 0, c[d1] = a + da[q], c[d2] = b + db[q];
          fprintf(f, " %d", NID(c[0], c[1], c[2]));
        }
        fprintf(f, "\n");
      }
  }
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        fprintf(f, "%d 5 2 %d 1", 100 + et++, nphys + 1);
        const int(*g)[3] = mt_gmsh_hex8_corner;
        for (int q = 0; q < 8; q++) fprintf(f, " %d", NID(i + g[q][0], j + g[q][1], k + g[q][2]));
        fprintf(f, "\n");
      }
  fprintf(f, "$EndElements\n");
  if (per) {
    fprintf(f, "$Periodic\n1\n2 2 1\n%d\n", (ny + 1) * (nz + 1));
    for (int k = 0; k <= nz; k++)
      for (int j = 0; j <= ny; j++) fprintf(f, "%d %d\n", NID(nx, j, k), NID(0, j, k));
    fprintf(f, "$EndPeriodic\n");
  }
#undef NID
  fclose(f);
  return 0;
}

/* the surface s (as in write_box) a point lies on, -1 if none */
static int surface_of(const double c[3], double Lx) {
  const double tol = 1e-12, L[3] = {Lx, 1.0, 1.0};
  for (int d = 0; d < 3; d++) {
    if (fabs(c[d]) < tol) return 2 * d;
    if (fabs(c[d] - L[d]) < tol) return 2 * d + 1;
  }
  return -1;
}

static int64_t global_sum(MPI_Comm c, int64_t v) {
  int64_t s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT64_T, MPI_SUM, c);
  return s;
}

/* Every face of the mesh against the spec: a boundary face on an untagged
 * surface has the tag untagged (and no other face has it); nu and nb: the
 * expected untagged and boundary face counts. */
static int check_faces(hx_mesh m, double Lx, const char *const surf[6], int64_t nu, int64_t nb,
                       const char *label) {
  MPI_Comm comm = hx_mesh_comm(m);
  const int nt = hx_mesh_num_tags(m), tu = hx_mesh_find_tag(m, HX_MESH_UNTAGGED);
  int64_t nb_got = 0;
  const char *where = NULL;
  const int64_t nu_got = hx_mesh_untagged_faces(m, &nb_got, &where);
  HX_ASSERT(nu_got == nu && nb_got == nb, "%s: %lld untagged of %lld boundary faces, expected %lld of %lld",
            label, (long long)nu_got, (long long)nb_got, (long long)nu, (long long)nb);
  HX_ASSERT(where != NULL, "%s: no location", label);
  if (nu > 0) {
    HX_ASSERT(tu == nt - 1, "%s: tag '%s' at %d of %d (expected the last)", label, HX_MESH_UNTAGGED, tu, nt);
    HX_ASSERT(!hx_mesh_tag_is_periodic(m, tu), "%s: the untagged tag is flagged periodic", label);
    /* the first face's centre, from the location text, lies on an untagged surface */
    const char *c = where ? strstr(where, "centre (") : NULL;
    double x[3] = {-1, -1, -1};
    HX_ASSERT(c && strstr(where, "of file element ") &&
                  sscanf(c, "centre (%lf, %lf, %lf)", &x[0], &x[1], &x[2]) == 3,
              "%s: location '%s'", label, where ? where : "(null)");
    const int s = surface_of(x, Lx);
    HX_ASSERT(s >= 0 && !surf[s], "%s: the first untagged face '%s' is not on an untagged surface", label,
              where);
  } else {
    int named = 0; /* a physical group may carry the name (it is then an ordinary tag) */
    for (int k = 0; k < 6; k++) named |= surf[k] && !strcmp(surf[k], HX_MESH_UNTAGGED);
    HX_ASSERT(where && !where[0], "%s: location '%s' without untagged faces", label,
              where ? where : "(null)");
    HX_ASSERT(tu < 0 || named, "%s: a tag '%s' without untagged faces", label, HX_MESH_UNTAGGED);
  }
  const int tp = nu > 0 ? tu : -1; /* the pseudo tag */
  const int32_t E = hx_mesh_num_elements(m), *ft = hx_mesh_face_tags(m);
  const double *X = hx_mesh_element_nodes(m);
  const int64_t *nbr = NULL;
  HX_TCALL(hx_mesh_face_neighbors(m, &nbr, NULL, NULL));
  HX_ASSERT(hx_mesh_nodes_per_element(m) == 8, "%s: hex8 expected", label);
  int64_t cnt = 0, bad = 0;
  for (int32_t e = 0; e < E; e++)
    for (int f = 0; f < 6; f++) {
      double c[3] = {0, 0, 0};
      for (int v = 0; v < 8; v++) { /* corners a + 2b + 4c with the face's coordinate fixed */
        const int bit = (v >> (f / 2)) & 1;
        if (bit != f % 2) continue;
        for (int d = 0; d < 3; d++) c[d] += 0.25 * X[((size_t)e * 8 + v) * 3 + d];
      }
      const int s = surface_of(c, Lx), q = e * 6 + f;
      const int want = nbr[q] < 0 && s >= 0 && !surf[s], got = tp >= 0 && ft[q] == tp;
      cnt += got;
      if (want != got && bad++ < 3)
        HX_ASSERT(0, "%s: element %lld face %d (centre %g %g %g, neighbour %lld): tag %d, untagged is %d",
                  label, (long long)hx_mesh_element_global_ids(m)[e], f, c[0], c[1], c[2], (long long)nbr[q],
                  ft[q], tp);
      if (nbr[q] < 0 && ft[q] < 0 && bad++ < 3)
        HX_ASSERT(0, "%s: element %lld face %d is a boundary face without a tag", label,
                  (long long)hx_mesh_element_global_ids(m)[e], f);
    }
  HX_ASSERT(global_sum(comm, bad) == 0, "%s: %lld wrong faces", label, (long long)global_sum(comm, bad));
  HX_ASSERT(global_sum(comm, cnt) == nu, "%s: %lld faces carry the tag, expected %lld", label,
            (long long)global_sum(comm, cnt), (long long)nu);
  return 0;
}

static int run_file(MPI_Comm comm, int rank, const char *name, int nx, int ny, int nz, double Lx,
                    const char *const surf[6], int per, int npairs, const char *const (*pairs)[2], int64_t nu,
                    int64_t nb, int64_t nper) {
  char path[160];
  snprintf(path, sizeof path, "%s/%s.msh", dir, name);
  int rc = rank == 0 ? write_box(path, nx, ny, nz, Lx, surf, per) : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  HX_ASSERT(rc == 0, "cannot write %s", path);
  hx_mesh m = NULL;
  HX_TCALL(hx_mesh_create_gmsh_periodic(comm, path, HX_PART_RCB, npairs, pairs, &m));
  HX_ASSERT(hx_mesh_num_periodic_faces(m) == nper, "%s: %lld periodic face pairs, expected %lld", name,
            (long long)hx_mesh_num_periodic_faces(m), (long long)nper);
  check_faces(m, Lx, surf, nu, nb, name);
  HX_TCALL(hx_mesh_destroy(&m));
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  snprintf(dir, sizeof dir, "t405-np%d.d", size);
  mt_fresh_dir(comm, dir);
  const int nx = 3, ny = 2, nz = 2;
  const double Lx = 1.5;
  const int64_t fx = ny * nz, fy = nx * nz, fz = nx * ny; /* faces per surface x, y, z */
  const int64_t all = 2 * (fx + fy + fz);

  /* 1. the four sides in no physical group */
  const char *const sides[6] = {NULL, NULL, NULL, NULL, "bottom", "top"};
  run_file(comm, rank, "sides", nx, ny, nz, Lx, sides, 0, 0, NULL, 2 * (fx + fy), all, 0);
  /* 2. every boundary face tagged: no tag untagged */
  const char *const tagged[6] = {"sides", "sides", "sides", "sides", "bottom", "top"};
  run_file(comm, rank, "tagged", nx, ny, nz, Lx, tagged, 0, 0, NULL, 0, all, 0);
  /* 3. a physical group named untagged besides untagged faces: refused */
  {
    const char *const clash[6] = {"untagged", "untagged", NULL, NULL, "bottom", "top"};
    char path[160];
    snprintf(path, sizeof path, "%s/clash.msh", dir);
    int rc = rank == 0 ? write_box(path, nx, ny, nz, Lx, clash, 0) : 0;
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    hx_mesh m = NULL;
    int err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
    char want[200];
    snprintf(want, sizeof want, "and %lld boundary face(s) are in none (the first: face ",
             (long long)(2 * fy));
    HX_ASSERT(err == HX_ERR_INPUT && m == NULL, "clash: expected HX_ERR_INPUT, got %d", err);
    HX_ASSERT(strstr(hx_error_message(), "a surface physical group is named 'untagged'") &&
                  strstr(hx_error_message(), want) && strstr(hx_error_message(), "rename the group") &&
                  strstr(hx_error_message(), "clash.msh"),
              "clash: message '%s'", hx_error_message());
    hx_error_clear();
  }
  /* 4. a physical group named untagged, every face tagged: an ordinary tag */
  const char *const named[6] = {"untagged", "untagged", "untagged", "untagged", "bottom", "top"};
  run_file(comm, rank, "named", nx, ny, nz, Lx, named, 0, 0, NULL, 0, all, 0);
  /* 5. the untagged faces are the periodic ones ($Periodic): none left */
  const char *const xper[6] = {NULL, NULL, "walls", "walls", "walls", "walls"};
  run_file(comm, rank, "xper", nx, ny, nz, Lx, xper, 1, 0, NULL, 0, all - 2 * fx, fx);
  /* 6. ... and the y sides untagged too: those only */
  run_file(comm, rank, "xper-y", nx, ny, nz, Lx, sides, 1, 0, NULL, 2 * fy, all - 2 * fx, fx);
  /* 7. periodic by a tag pair, y sides untagged */
  const char *const lr[6] = {"left", "right", NULL, NULL, "bottom", "top"};
  const char *const pair[1][2] = {{"right", "left"}};
  run_file(comm, rank, "pair", nx, ny, nz, Lx, lr, 0, 1, pair, 2 * fy, all - 2 * fx, fx);
  /* 8. a box: every face tagged */
  {
    hx_mesh_box_opts o = mt_box(3, 2, 2);
    hx_mesh m = NULL;
    HX_TCALL(hx_mesh_create_box(comm, &o, &m));
    int64_t nb = -1;
    const char *where = NULL;
    HX_ASSERT(hx_mesh_untagged_faces(m, &nb, &where) == 0 && where && !where[0] &&
                  hx_mesh_find_tag(m, HX_MESH_UNTAGGED) < 0 && hx_mesh_num_tags(m) == 6,
              "box: untagged faces or tag");
    HX_TCALL(hx_mesh_destroy(&m));
  }
  MPI_Finalize();
  return hx_test_result();
}
