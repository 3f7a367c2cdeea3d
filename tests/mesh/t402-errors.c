/* Bad meshes are rejected on every rank with HX_ERR_INPUT and a message
 * naming the file and line (or byte offset) or the element and its
 * vertices: corrupt and truncated files, unsupported versions, dangling node
 * references, inverted/duplicated elements, a face shared by three elements,
 * a hanging node, unmerged duplicate nodes, bad generator options. */
#include "mesh_test.h"

static char dir[64];

/* two unit hexes side by side along x; nodes 1..12 on lines 6..17 */
#define HDR "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
#define NODES12                                                                                             \
  "$Nodes\n12\n1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n7 0 0 1\n8 1 0 1\n9 2 0 1\n10 0 1 1\n" \
  "11 1 1 1\n12 2 1 1\n$EndNodes\n"
/* Gmsh hex order: bottom face counter-clockwise, then top */
#define HEX_A "1 5 2 1 1 1 2 5 4 7 8 11 10\n"
#define HEX_B "2 5 2 1 1 2 3 6 5 8 9 12 11\n"

typedef struct {
  const char *name, *text;
  const char *want[3]; /* substrings of the message ("@" = the file path) */
} bad_case;

static const bad_case cases[] = {
    {"corrupt-coordinate.msh",
     HDR "$Nodes\n12\n1 0 0 0\n2 1 0 0\n3 1.0abc 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n7 0 0 1\n8 1 0 1\n9 2 0 "
         "1\n10 0 1 1\n"
         "11 1 1 1\n12 2 1 1\n$EndNodes\n$Elements\n2\n" HEX_A HEX_B "$EndElements\n",
     {"@:8:", "node coordinate", "'1.0abc'"}},
    {"truncated.msh",
     HDR NODES12 "$Elements\n2\n" HEX_A "2 5 2 1 1 2 3 6",
     {"@:22:", "end of file", "element node tag"}},
    {"wrong-count.msh",
     HDR
     "$Nodes\n13\n1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n7 0 0 1\n8 1 0 1\n9 2 0 1\n10 0 1 1\n"
     "11 1 1 1\n12 2 1 1\n$EndNodes\n$Elements\n2\n" HEX_A HEX_B "$EndElements\n",
     {"@:18:", "node tag", "'$EndNodes'"}},
    {"missing-end.msh",
     HDR NODES12 "$Elements\n2\n" HEX_A HEX_B,
     {"@:", "expected $EndElements", "end of file"}},
    {"dangling-node.msh",
     HDR NODES12 "$Elements\n2\n" HEX_A "2 5 2 1 1 2 3 6 5 8 9 12 99\n$EndElements\n",
     {"@:22:", "element 2 references node 99", "not in $Nodes"}},
    {"version.msh",
     "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n",
     {"@:2:", "unsupported MSH version 3", "2.2 or 4.1"}},
    {"no-hex.msh",
     HDR NODES12 "$Elements\n1\n1 3 2 1 1 1 2 5 4\n$EndElements\n",
     {"@:19:", "no hexahedral elements", ""}}, /* at $Elements (was: the last line) */
    {"inverted.msh",
     HDR NODES12 "$Elements\n2\n" HEX_A "2 5 2 1 1 8 9 12 11 2 3 6 5\n$EndElements\n",
     {"non-positive Jacobian", "file element tag 2", "with vertices 8 (1, 0, 1) 9 (2, 0, 1)"}},
    {"duplicate.msh",
     HDR NODES12 "$Elements\n2\n" HEX_A "7 5 2 1 1 1 2 5 4 7 8 11 10\n$EndElements\n",
     {"duplicated element", "file element tag 1", "file element tag 7"}},
    /* a third element on the x = 1 face, reaching x = 3 */
    {"three-on-a-face.msh",
     HDR
     "$Nodes\n16\n1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n7 0 0 1\n8 1 0 1\n9 2 0 1\n10 0 1 1\n"
     "11 1 1 1\n12 2 1 1\n13 3 0 0\n14 3 1 0\n15 3 0 1\n16 3 1 1\n$EndNodes\n$Elements\n3\n" HEX_A HEX_B
     "3 5 2 1 1 2 13 14 5 8 15 16 11\n$EndElements\n",
     {"is shared by 3 elements", "vertices 2 5 8 11", "file element tag"}},
    /* coarse element [0,1]^3 next to four fine ones on [1,2]x[0,1]^2 */
    {"hanging.msh",
     HDR
     "$Nodes\n22\n1 0 0 0\n2 0 1 0\n3 0 0 1\n4 0 1 1\n"
     "11 1 0 0\n12 1 0.5 0\n13 1 1 0\n14 1 0 0.5\n15 1 0.5 0.5\n16 1 1 0.5\n17 1 0 1\n18 1 0.5 1\n19 1 1 1\n"
     "21 2 0 0\n22 2 0.5 0\n23 2 1 0\n24 2 0 0.5\n25 2 0.5 0.5\n26 2 1 0.5\n27 2 0 1\n28 2 0.5 1\n29 2 1 1\n"
     "$EndNodes\n$Elements\n5\n1 5 2 1 1 1 11 13 2 3 17 19 4\n"
     "2 5 2 1 1 11 21 22 12 14 24 25 15\n3 5 2 1 1 12 22 23 13 15 25 26 16\n"
     "4 5 2 1 1 14 24 25 15 17 27 28 18\n5 5 2 1 1 15 25 26 16 18 28 29 19\n$EndElements\n",
     {"non-conforming", "hanging node", "file element tag"}},
    /* two hexes offset by half a face, touching at z = 1 through no common vertex (issue 32:
     * was solved as two insulated walls) */
    {"offset-half.msh",
     HDR "$Nodes\n16\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
         "9 0.5 0 1\n10 1.5 0 1\n11 1.5 1 1\n12 0.5 1 1\n13 0.5 0 2\n14 1.5 0 2\n15 1.5 1 2\n16 0.5 1 2\n"
         "$EndNodes\n$Elements\n2\n1 5 2 1 1 1 2 3 4 5 6 7 8\n2 5 2 1 1 9 10 11 12 13 14 15 16\n$EndElements\n",
     {"non-conforming faces", "overlap face to face", "file element tag 2"}},
    /* a small hex shifted on the big face of a large one (no vertex on its corners) */
    {"shifted-small.msh",
     HDR "$Nodes\n16\n1 0 0 0\n2 2 0 0\n3 2 2 0\n4 0 2 0\n5 0 0 1\n6 2 0 1\n7 2 2 1\n8 0 2 1\n"
         "9 0.25 0.25 1\n10 1.25 0.25 1\n11 1.25 1.25 1\n12 0.25 1.25 1\n13 0.25 0.25 2\n14 1.25 0.25 2\n"
         "15 1.25 1.25 2\n16 0.25 1.25 2\n"
         "$EndNodes\n$Elements\n2\n1 5 2 1 1 1 2 3 4 5 6 7 8\n2 5 2 1 1 9 10 11 12 13 14 15 16\n$EndElements\n",
     {"non-conforming faces", "centre (0.75, 0.75, 1)", "file element tag 1"}},
    /* the same faces apart by 5e-4 of their size: a gap, not two bodies */
    {"gap.msh",
     HDR "$Nodes\n16\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
         "9 0 0 1.0005\n10 1 0 1.0005\n11 1 1 1.0005\n12 0 1 1.0005\n13 0 0 2\n14 1 0 2\n15 1 1 2\n16 0 1 2\n"
         "$EndNodes\n$Elements\n2\n1 5 2 1 1 1 2 3 4 5 6 7 8\n2 5 2 1 1 9 10 11 12 13 14 15 16\n$EndElements\n",
     {"non-conforming faces", "across a gap of 0.0005", "file element tag 2"}},
    /* found by fuzzing: the second section's names were written past the first's array */
    {"physical-names-twice.msh",
     HDR "$PhysicalNames\n1\n3 1 \"a\"\n$EndPhysicalNames\n$PhysicalNames\n1\n3 2 "
         "\"b\"\n$EndPhysicalNames\n" NODES12 "$Elements\n2\n" HEX_A HEX_B "$EndElements\n",
     {"@:8:", "a second $PhysicalNames section", ""}},
    /* issue 53 defect 19: a repeated tag is reported on its own line and its first
     * occurrence's (was: line 1 and the smallest repeated tag); the earliest repeat wins */
    {"dup-node22.msh",
     HDR "$Nodes\n14\n1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n7 0 0 1\n8 1 0 1\n9 2 0 1\n"
         "10 0 1 1\n11 1 1 1\n12 2 1 1\n12 2 1 1\n2 1 0 0\n$EndNodes\n$Elements\n2\n" HEX_A HEX_B
         "$EndElements\n",
     {"@:18: node tag 12 is defined twice in $Nodes (first at line 17)", "", ""}},
    /* MSH 4.1: the tags of a block one per line (7..19), then the coordinates */
    {"dup-node41.msh",
     "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 13 1 12\n3 1 0 13\n"
     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n5\n"
     "0 0 0\n1 0 0\n2 0 0\n0 1 0\n1 1 0\n2 1 0\n0 0 1\n1 0 1\n2 0 1\n0 1 1\n1 1 1\n2 1 1\n1 1 0\n"
     "$EndNodes\n$Elements\n1 2 1 2\n3 1 5 2\n1 1 2 5 4 7 8 11 10\n2 2 3 6 5 8 9 12 11\n$EndElements\n",
     {"@:19: node tag 5 is defined twice in $Nodes (first at line 11)", "", ""}},
    {"dup-element.msh",
     HDR NODES12 "$Elements\n3\n" HEX_A HEX_B "1 5 2 1 1 2 3 6 5 8 9 12 11\n$EndElements\n",
     {"@:23: element tag 1 is defined twice in $Elements (first at line 21)", "", ""}},
    /* the other messages that pointed at line 1 or the end of the file */
    {"tet.msh",
     HDR NODES12 "$Elements\n3\n" HEX_A "3 4 2 1 1 1 2 4 7\n" HEX_B "$EndElements\n",
     {"@:22: 3-D elements that are not hexahedra: 1 tetrahedra (type 4) (the first here)", "", ""}},
    {"periodic-no-vertex.msh",
     HDR NODES12 "$Elements\n2\n" HEX_A HEX_B "$EndElements\n$Periodic\n1\n2 1 2\n1\n98 99\n$EndPeriodic\n",
     {"@:24: the $Periodic section lists 1 node pair(s), none between vertices", "", ""}},
    /* two hexes touching at x = 1 through separate (unmerged) nodes */
    {"unmerged.msh",
     HDR "$Nodes\n16\n1 0 0 0\n2 1 0 0\n4 0 1 0\n5 1 1 0\n7 0 0 1\n8 1 0 1\n10 0 1 1\n11 1 1 1\n"
         "21 1 0 0\n3 2 0 0\n25 1 1 0\n6 2 1 0\n28 1 0 1\n9 2 0 1\n31 1 1 1\n12 2 1 "
         "1\n$EndNodes\n$Elements\n2\n" HEX_A "2 5 2 1 1 21 3 6 25 28 9 12 31\n$EndElements\n",
     {"vertices 2 and 21 (lines 7 and 14) are at the same point (1, 0, 0)", "duplicated nodes", ""}},
};

static int expect_fail(MPI_Comm comm, int err, const char *label, const char *path,
                       const char *const want[3]) {
  HX_ASSERT(err == HX_ERR_INPUT, "%s: expected HX_ERR_INPUT, got %s (%s)", label, hx_error_name(err),
            hx_error_message());
  const char *msg = hx_error_message();
  for (int k = 0; k < 3; k++) {
    if (!want[k] || !want[k][0]) continue;
    char w[600];
    if (want[k][0] == '@')
      snprintf(w, sizeof w, "%s%s", path, want[k] + 1);
    else
      snprintf(w, sizeof w, "%s", want[k]);
    HX_ASSERT(strstr(msg, w) != NULL, "%s: message lacks '%s':\n  %s", label, w, msg);
  }
  hx_error_clear();
  (void)comm;
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  snprintf(dir, sizeof dir, "t402-np%d", size);
  const int nc = (int)(sizeof cases / sizeof cases[0]);
  char path[512];
  /* the valid two-element file reads */
  snprintf(path, sizeof path, "%s-valid.msh", dir);
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    fputs(HDR NODES12 "$Elements\n2\n" HEX_A HEX_B "$EndElements\n", f);
    fclose(f);
  }
  MPI_Barrier(comm);
  hx_mesh m = NULL;
  int err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
  HX_ASSERT(err == 0, "valid file: %s", hx_error_message());
  if (!err)
    HX_ASSERT(hx_mesh_num_global_elements(m) == 2, "valid file: %lld elements",
              (long long)hx_mesh_num_global_elements(m));
  hx_mesh_destroy(&m);
  hx_error_clear();
  /* two cubes touching only along an edge (a non-manifold but valid mesh)
   * are not mistaken for a hanging node */
  snprintf(path, sizeof path, "%s-edge-touch.msh", dir);
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    fputs(HDR
          "$Nodes\n14\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
          "9 2 1 0\n10 2 2 0\n11 1 2 0\n12 2 1 1\n13 2 2 1\n14 1 2 1\n$EndNodes\n$Elements\n2\n"
          "1 5 2 1 1 1 2 3 4 5 6 7 8\n2 5 2 1 1 3 9 10 11 7 12 13 14\n$EndElements\n",
          f);
    fclose(f);
  }
  MPI_Barrier(comm);
  err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
  HX_ASSERT(err == 0, "edge-touching cubes: %s", hx_error_message());
  hx_mesh_destroy(&m);
  hx_error_clear();
  /* valid: a staircase (coplanar opposite faces meeting along an edge only)
   * and two bodies 0.5 apart are not mistaken for overlapping faces */
  static const char *const fine[2][2] = {
      {"staircase", HDR "$Nodes\n14\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
                        "9 2 0 1\n10 2 1 1\n11 1 0 2\n12 2 0 2\n13 2 1 2\n14 1 1 2\n$EndNodes\n$Elements\n2\n"
                        "1 5 2 1 1 1 2 3 4 5 6 7 8\n2 5 2 1 1 6 9 10 7 11 12 13 14\n$EndElements\n"},
      {"apart", HDR "$Nodes\n16\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n"
                    "9 0 0 1.5\n10 1 0 1.5\n11 1 1 1.5\n12 0 1 1.5\n13 0 0 2\n14 1 0 2\n15 1 1 2\n16 0 1 2\n"
                    "$EndNodes\n$Elements\n2\n1 5 2 1 1 1 2 3 4 5 6 7 8\n2 5 2 1 1 9 10 11 12 13 14 15 16\n"
                    "$EndElements\n"}};
  for (int c = 0; c < 2; c++) {
    snprintf(path, sizeof path, "%s-%s.msh", dir, fine[c][0]);
    if (rank == 0) {
      FILE *f = fopen(path, "w");
      fputs(fine[c][1], f);
      fclose(f);
    }
    MPI_Barrier(comm);
    err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
    HX_ASSERT(err == 0, "%s: %s", fine[c][0], hx_error_message());
    hx_mesh_destroy(&m);
    hx_error_clear();
  }
  for (int c = 0; c < nc; c++) {
    snprintf(path, sizeof path, "%s-%s", dir, cases[c].name);
    if (rank == 0) {
      FILE *f = fopen(path, "w");
      fputs(cases[c].text, f);
      fclose(f);
    }
    MPI_Barrier(comm);
    err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
    HX_ASSERT(m == NULL, "%s: mesh created", cases[c].name);
    expect_fail(comm, err, cases[c].name, path, cases[c].want);
  }
  /* hex27 unit cube whose centre node is pushed up: corners fine, the
   * Jacobian at the top face centre negative (caught at the order-2 nodes) */
  snprintf(path, sizeof path, "%s-bubble27.msh", dir);
  if (rank == 0) {
    static const int gv[8][3] = {{0, 0, 0}, {2, 0, 0}, {2, 2, 0}, {0, 2, 0},
                                 {0, 0, 2}, {2, 0, 2}, {2, 2, 2}, {0, 2, 2}};
    static const int ge[12][2] = {{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3},
                                  {2, 6}, {3, 7}, {4, 5}, {4, 7}, {5, 6}, {6, 7}};
    static const int gf[6][4] = {{0, 3, 2, 1}, {0, 1, 5, 4}, {0, 4, 7, 3},
                                 {1, 2, 6, 5}, {2, 3, 7, 6}, {4, 5, 6, 7}};
    double X[27][3];
    for (int g = 0; g < 8; g++)
      for (int d = 0; d < 3; d++) X[g][d] = gv[g][d] / 2.0;
    for (int e = 0; e < 12; e++)
      for (int d = 0; d < 3; d++) X[8 + e][d] = (gv[ge[e][0]][d] + gv[ge[e][1]][d]) / 4.0;
    for (int f = 0; f < 6; f++)
      for (int d = 0; d < 3; d++)
        X[20 + f][d] = (gv[gf[f][0]][d] + gv[gf[f][1]][d] + gv[gf[f][2]][d] + gv[gf[f][3]][d]) / 8.0;
    X[26][0] = X[26][1] = 0.5, X[26][2] = 1.5;
    FILE *f = fopen(path, "w");
    fprintf(f, HDR "$Nodes\n27\n");
    for (int g = 0; g < 27; g++) fprintf(f, "%d %g %g %g\n", g + 1, X[g][0], X[g][1], X[g][2]);
    fprintf(f, "$EndNodes\n$Elements\n1\n1 12 2 1 1");
    for (int g = 0; g < 27; g++) fprintf(f, " %d", g + 1);
    fprintf(f, "\n$EndElements\n");
    fclose(f);
  }
  MPI_Barrier(comm);
  if (size == 1) {
    err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
    const char *w[3] = {"non-positive Jacobian", "at GLL node (1, 1, 2) of order 2 in element 0",
                        "vertices (global 0-based ids) 0 (0, 0, 0) 1 (1, 0, 0)"};
    expect_fail(comm, err, "bubble hex27", path, w);
  }
  /* MSH 4.1 binary with node tag 5 given twice: reported at the byte offsets of
   * both records (issue 53 defect 19: was line 1) */
  snprintf(path, sizeof path, "%s-dup-node41b.msh", dir);
  long off[2] = {0, 0};
  if (rank == 0) {
    FILE *f = fopen(path, "wb");
    const int32_t one = 1, blk[3] = {3, 1, 0}, eblk[3] = {3, 1, 5};
    const uint64_t nh[4] = {1, 13, 1, 12}, cnt = 13, eh[4] = {1, 2, 1, 2}, ecnt = 2;
    const double xyz[13][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {0, 0, 1},
                               {1, 0, 1}, {2, 0, 1}, {0, 1, 1}, {1, 1, 1}, {2, 1, 1}, {1, 1, 0}};
    const uint64_t el[2][9] = {{1, 1, 2, 5, 4, 7, 8, 11, 10}, {2, 2, 3, 6, 5, 8, 9, 12, 11}};
    fputs("$MeshFormat\n4.1 1 8\n", f);
    fwrite(&one, 4, 1, f);
    fputs("\n$EndMeshFormat\n$Nodes\n", f);
    fwrite(nh, 8, 4, f);
    fwrite(blk, 4, 3, f);
    fwrite(&cnt, 8, 1, f);
    for (uint64_t t = 1; t <= 13; t++) {
      const uint64_t tag = t == 13 ? 5 : t;
      if (tag == 5) off[t == 13] = ftell(f);
      fwrite(&tag, 8, 1, f);
    }
    fwrite(xyz, 8, 39, f);
    fputs("\n$EndNodes\n$Elements\n", f);
    fwrite(eh, 8, 4, f);
    fwrite(eblk, 4, 3, f);
    fwrite(&ecnt, 8, 1, f);
    fwrite(el, 8, 18, f);
    fputs("\n$EndElements\n", f);
    fclose(f);
  }
  MPI_Bcast(off, 2, MPI_LONG, 0, comm);
  err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
  {
    char w0[128], w1[160];
    snprintf(w0, sizeof w0, "@: byte offset %ld (line ", off[1]);
    snprintf(w1, sizeof w1, "node tag 5 is defined twice in $Nodes (first at byte offset %ld)", off[0]);
    const char *w[3] = {w0, w1, NULL};
    expect_fail(comm, err, "dup-node41b.msh", path, w);
  }
  /* missing file */
  err = hx_mesh_create_gmsh(comm, "no/such/file.msh", HX_PART_RCB, &m);
  {
    const char *w[3] = {"cannot open Gmsh file 'no/such/file.msh'", "No such file", NULL};
    expect_fail(comm, err, "missing file", "", w);
  }
  /* truncated binary file written by gmsh */
  if (rank == 0 && system("gmsh --version > /dev/null 2>&1") == 0) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "printf 'Point(1)={0,0,0};\\nPoint(2)={1,0,0};\\nLine(1)={1,2};\\nTransfinite Line{1}=3;\\n"
             "e[]=Extrude{0,1,0}{Line{1};Layers{2};Recombine;};\\nExtrude{0,0,1}{Surface{e[1]};Layers{2};"
             "Recombine;}\\n' "
             "> %s-b.geo && gmsh -v 0 -nt 1 -3 %s-b.geo -format msh41 -bin -o %s-b.msh > /dev/null 2>&1 && "
             "head -c 3000 %s-b.msh > %s-bt.msh",
             dir, dir, dir, dir, dir);
    err = system(cmd);
  } else {
    err = 77;
  }
  MPI_Bcast(&err, 1, MPI_INT, 0, comm);
  if (err == 0) {
    snprintf(path, sizeof path, "%s-b.msh", dir);
    HX_ASSERT(hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m) == 0, "binary file: %s", hx_error_message());
    hx_mesh_destroy(&m);
    snprintf(path, sizeof path, "%s-bt.msh", dir);
    err = hx_mesh_create_gmsh(comm, path, HX_PART_RCB, &m);
    const char *w[3] = {"@: byte offset ", "truncated", NULL};
    expect_fail(comm, err, "truncated binary", path, w);
  } else if (rank == 0) {
    printf("note: gmsh missing, binary truncation case skipped\n");
  }
  /* generator options */
  {
    hx_mesh_box_opts o;
    hx_mesh_box_opts_default(&o);
    o.kershaw_eps = 0.3;
    const char *w1[3] = {"nx divisible by 6", "got 4 x 4 x 4", NULL};
    expect_fail(comm, hx_mesh_create_box(comm, &o, &m), "kershaw 4x4x4", "", w1);
    o.kershaw_eps = 0.0;
    const char *w2[3] = {"eps must be in (0, 1]", NULL, NULL};
    expect_fail(comm, hx_mesh_create_box(comm, &o, &m), "eps 0", "", w2);
    hx_mesh_box_opts_default(&o);
    o.extent[1][0] = 2;
    const char *w3[3] = {"extent of y must be increasing", NULL, NULL};
    expect_fail(comm, hx_mesh_create_box(comm, &o, &m), "extent", "", w3);
    hx_mesh_box_opts_default(&o);
    o.deform = 1, o.deform_amplitude = 0.5;
    const char *w4[3] = {"deformation amplitude", NULL, NULL};
    expect_fail(comm, hx_mesh_create_box(comm, &o, &m), "deform", "", w4);
    if (size > 1) {
      hx_mesh_box_opts_default(&o);
      o.nx = o.ny = o.nz = 1;
      const char *w5[3] = {"fewer than the", "MPI ranks", NULL};
      expect_fail(comm, hx_mesh_create_box(comm, &o, &m), "too few elements", "", w5);
    }
  }
  int fail = mt_all_ok(comm);
  MPI_Finalize();
  return fail;
}
