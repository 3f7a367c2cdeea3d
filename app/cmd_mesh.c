/* hexcg mesh: build or read a mesh, partition it over the ranks, number the
 * GLL nodes and print a summary (elements, vertices, unique GLL nodes,
 * partition report, Jacobian and element-size range, timings, memory).
 * Until the YAML case loader lands the mesh is described by options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_app.h"
#include "hx_run.h"
#include "hx_core.h"
#include "hx_io.h"
#include "hx_mesh.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: hexcg mesh CASE.yaml [--set KEY=VALUE]... [--verbose]\n"
          "       hexcg mesh [OPTIONS]\n"
          "With a case file the mesh section and the order come from the case (--set overrides keys,\n"
          "e.g. --set mesh.elements=[16,16,16] --set order=5). Without one, options describe the mesh:\n"
          "  --type box|kershaw|gmsh|exodus|nek  mesh source (default box; --file implies gmsh, exodus for a\n"
          "                             .e/.exo file, nek for a .re2 file)\n"
          "  --elements NX,NY,NZ        elements per direction (default 8,8,8; kershaw 12,12,12)\n"
          "  --extent X0,X1,Y0,Y1,Z0,Z1 box extent (default the unit cube)\n"
          "  --eps E                    Kershaw parameter in (0,1] (kershaw default 0.3)\n"
          "  --deform A                 apply the smooth deformation map with amplitude A (<= 0.1)\n"
          "  --geom-order 1|2           hex8 or hex27 box elements (default 1)\n"
          "  --file F.msh|F.e|F.re2     Gmsh file (MSH 2.2 ASCII, 4.1 ASCII/binary), Exodus II file or\n"
          "                             NekRS/Nek5000 .re2 file\n"
          "  --field N                  nek: the .re2 boundary field read as tags (default 1, the first)\n"
          "  --order P                  polynomial order for the GLL numbering (1..15, default 7)\n"
          "  --partitioner rcb|metis    (default rcb)\n"
          "  --verbose                  one line per rank\n"
          "  --convert OUT.msh          also write the mesh as a Gmsh MSH 2.2 file (hex27 if curved)\n");
}

static int parse_list(const char *s, int n, double *v, const char *opt) {
  char *end;
  const char *p = s;
  for (int i = 0; i < n; i++) {
    v[i] = strtod(p, &end);
    if (end == p) break;
    p = end;
    if (i + 1 < n) {
      if (*p != ',') break;
      p++;
    } else if (*p == 0) {
      return HX_SUCCESS;
    }
  }
  return HX_ERROR(HX_ERR_INPUT, "option %s expects %d comma-separated numbers, got '%s'", opt, n, s);
}

static int parse_int(const char *s, int *v, const char *opt) {
  char *end;
  long x = strtol(s, &end, 10);
  HX_CHECK(end != s && *end == 0, HX_ERR_INPUT, "option %s expects an integer, got '%s'", opt, s);
  *v = (int)x;
  return HX_SUCCESS;
}

typedef struct {
  int type;  /* 0 box, 1 kershaw, 2 gmsh, 3 exodus, 4 nek */
  int field; /* nek: boundary field (1 = the first) */
  hx_mesh_box_opts box;
  int have_elems, have_eps;
  const char *file, *convert;
  int order, verbose, help;
  hx_partitioner part;
  const char *case_path;
  int nsets;
  const char **sets;
  char file_buf[1024];
  hx_case *cs; /* the case file's, kept for its mesh.periodic pairs */
} mesh_args;

static int parse_args(int argc, char **argv, mesh_args *a, const char **sets) {
  memset(a, 0, sizeof *a);
  a->sets = sets;
  hx_mesh_box_opts_default(&a->box);
  a->box.nx = a->box.ny = a->box.nz = 8;
  a->order = 7;
  a->field = 1;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      a->help = 1;
      return HX_SUCCESS;
    }
    if (!strcmp(o, "--verbose")) {
      a->verbose = 1;
      continue;
    }
    if (o[0] != '-') {
      HX_CHECK(!a->case_path, HX_ERR_INPUT, "hexcg mesh: two case files given ('%s' and '%s')", a->case_path,
               o);
      a->case_path = o;
      continue;
    }
    static const char *const known[] = {"--set", "--type", "--elements", "--extent", "--eps", "--deform",
                                        "--file", "--order", "--geom-order", "--partitioner",
                                        "--convert", "--field"};
    int is_known = 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) is_known |= !strcmp(o, known[k]);
    HX_CHECK(is_known, HX_ERR_INPUT, "unknown option '%s' (hexcg mesh --help)", o);
    HX_CHECK(v != NULL, HX_ERR_INPUT, "option %s needs a value (hexcg mesh --help)", o);
    i++;
    if (!strcmp(o, "--set")) {
      a->sets[a->nsets++] = v;
    } else if (!strcmp(o, "--type")) {
      if (!strcmp(v, "box"))
        a->type = 0;
      else if (!strcmp(v, "kershaw"))
        a->type = 1;
      else if (!strcmp(v, "gmsh"))
        a->type = 2;
      else if (!strcmp(v, "exodus"))
        a->type = 3;
      else if (!strcmp(v, "nek"))
        a->type = 4;
      else
        return HX_ERROR(HX_ERR_INPUT, "--type must be box, kershaw, gmsh, exodus or nek, got '%s'", v);
    } else if (!strcmp(o, "--elements")) {
      double e[3];
      HX_CALL(parse_list(v, 3, e, o));
      a->box.nx = (int)e[0], a->box.ny = (int)e[1], a->box.nz = (int)e[2];
      a->have_elems = 1;
    } else if (!strcmp(o, "--extent")) {
      double e[6];
      HX_CALL(parse_list(v, 6, e, o));
      for (int d = 0; d < 3; d++) a->box.extent[d][0] = e[2 * d], a->box.extent[d][1] = e[2 * d + 1];
    } else if (!strcmp(o, "--eps")) {
      HX_CALL(parse_list(v, 1, &a->box.kershaw_eps, o));
      a->have_eps = 1;
    } else if (!strcmp(o, "--deform")) {
      HX_CALL(parse_list(v, 1, &a->box.deform_amplitude, o));
      a->box.deform = 1;
    } else if (!strcmp(o, "--geom-order")) {
      HX_CALL(parse_int(v, &a->box.geom_order, o));
    } else if (!strcmp(o, "--file")) {
      a->file = v;
      const size_t lv = strlen(v);
      if (a->type != 3 && a->type != 4)
        a->type = hx_mesh_path_is_exodus(v) ? 3 : lv > 4 && !strcmp(v + lv - 4, ".re2") ? 4 : 2;
    } else if (!strcmp(o, "--convert")) {
      a->convert = v;
    } else if (!strcmp(o, "--field")) {
      HX_CALL(parse_int(v, &a->field, o));
    } else if (!strcmp(o, "--order")) {
      HX_CALL(parse_int(v, &a->order, o));
    } else if (!strcmp(o, "--partitioner")) {
      HX_CALL(hx_partitioner_parse(v, &a->part));
    } else {
      return HX_ERROR(HX_ERR_INPUT, "hexcg mesh: unknown option '%s' (hexcg mesh --help)", o);
    }
  }
  if (a->case_path) return HX_SUCCESS;
  HX_CHECK(a->nsets == 0, HX_ERR_INPUT, "--set needs a case file (hexcg mesh CASE.yaml --set KEY=VALUE)");
  HX_CHECK(a->order >= 1 && a->order <= 15, HX_ERR_INPUT, "--order must be in 1..15, got %d", a->order);
  if (a->type == 1) {
    if (!a->have_elems) a->box.nx = a->box.ny = a->box.nz = 12;
    if (!a->have_eps) a->box.kershaw_eps = 0.3;
  }
  HX_CHECK(a->type < 2 || a->file, HX_ERR_INPUT, "--type %s needs --file %s",
           a->type == 4 ? "nek" : a->type == 3 ? "exodus" : "gmsh",
           a->type == 4 ? "F.re2" : a->type == 3 ? "F.e" : "F.msh");
  HX_CHECK(a->field >= 1, HX_ERR_INPUT, "--field must be 1 or more (1 = the file's first boundary field), got %d",
           a->field);
  a->box.partitioner = a->part;
  return HX_SUCCESS;
}

/* a generated mesh of the options' size must fit in memory (a case file is
 * checked by hx_case_check_memory, a Gmsh file is bounded by its size) */
static int check_memory(const hx_app_ctx *ctx, const mesh_args *a) {
  if (a->type >= 2 || a->case_path) return HX_SUCCESS;
  const double E = (double)a->box.nx * a->box.ny * a->box.nz, n = a->order + 1.0;
  if (!(E >= 1)) return HX_SUCCESS; /* the generator names bad counts */
  const double El = floor(E / ctx->size) + (ctx->rank < fmod(E, ctx->size) ? 1 : 0);
  const double rank0 = E * (HX_MEM_MESH_GLOBAL_ELEM + (a->box.geom_order == 2 ? 19 * 24.0 : 0.0));
  const double elem = HX_MEM_MESH_LOCAL_ELEM + HX_MEM_MESHCMD_NODE * n * n * n;
  hx_mem_fit_info fi;
  HX_CALL(hx_mem_fit(ctx->comm, rank0, El * elem, &fi));
  if (fi.fits) return HX_SUCCESS;
  char why[512];
  hx_mem_fit_describe(&fi, rank0, ceil(E / ctx->size) * elem, why, sizeof why);
  return HX_ERROR(HX_ERR_INPUT,
                  "--elements %d,%d,%d: %.0f elements at order %d %s; see \"Memory\" in "
                  "docs/case-format.md",
                  a->box.nx, a->box.ny, a->box.nz, E, a->order, why);
}

/* the mesh's source in words, for the report's first line */
static void describe_source(const mesh_args *a, char *src, size_t len) {
  if (a->type == 2)
    snprintf(src, len, "Gmsh file %s", a->file);
  else if (a->type == 3)
    snprintf(src, len, "Exodus II file %s", a->file);
  else if (a->type == 4)
    snprintf(src, len, "Nek .re2 file %s (boundary field %d)", a->file, a->field);
  else if (a->type == 1 || a->box.kershaw_eps != 1.0)
    snprintf(src, len, "Kershaw box %dx%dx%d, eps %g", a->box.nx, a->box.ny, a->box.nz, a->box.kershaw_eps);
  else
    snprintf(src, len, "box %dx%dx%d%s", a->box.nx, a->box.ny, a->box.nz, a->box.deform ? " (deformed)" : "");
}

/* Collective: the mesh from its file or generator */
static int create_mesh(hx_app_ctx *ctx, const mesh_args *a, hx_mesh *m) {
  const int npp = a->cs ? a->cs->mesh.nperiodic_pairs : 0;
  const char *const(*pp)[2] = a->cs ? (const char *const(*)[2])a->cs->mesh.periodic_pairs : NULL;
  if (a->type == 3) return hx_mesh_create_exodus(ctx->comm, a->file, a->part, npp, pp, m);
  if (a->type == 4) return hx_mesh_create_nek(ctx->comm, a->file, a->field, a->part, m);
  if (a->type == 2) return hx_mesh_create_gmsh_periodic(ctx->comm, a->file, a->part, npp, pp, m);
  return hx_mesh_create_box(ctx->comm, &a->box, m);
}

/* what the report measures besides the mesh's own counts */
typedef struct {
  double t_create, t_ids_max, t_rep, t_jac;
  double rss_create_max, rss_max, rss_sum;
  int64_t gidmax; /* the largest GLL id over the ranks */
  double jmin, jmax, hmin, hmax;
  int64_t *gcnt; /* faces per tag, then elements per material (rank 0) */
} mesh_stats;

/* Collective: the GLL ids at order p (timed), and their largest value */
static int gll_id_check(hx_app_ctx *ctx, hx_mesh m, int p, mesh_stats *st) {
  const int n = p + 1;
  const size_t nl = (size_t)hx_mesh_num_elements(m) * n * n * n;
  int64_t *gid = NULL;
  int err = hx_error_agree(ctx->comm, HX_ALLOC(&gid, nl));
  if (err) {
    hx_free_host(&gid);
    return err;
  }
  MPI_Barrier(ctx->comm);
  double t0 = hx_wtime();
  err = hx_mesh_gll_ids(m, p, gid);
  if (err) {
    hx_free_host(&gid);
    return err;
  }
  int64_t idmax = 0;
  for (size_t i = 0; i < nl; i++) idmax = gid[i] > idmax ? gid[i] : idmax;
  hx_free_host(&gid);
  double v[2] = {hx_wtime() - t0, (double)idmax}; /* ids below 2^53: exact as doubles */
  HX_CALL(hx_reduce_max(ctx->comm, v, 2));
  st->t_ids_max = v[0], st->gidmax = (int64_t)v[1];
  return HX_SUCCESS;
}

/* Collective: the tag and material counts, and the peak memory at the end */
static int count_tags(hx_app_ctx *ctx, hx_mesh m, mesh_stats *st, double *cnt) {
  const int nt = hx_mesh_num_tags(m), nm = hx_mesh_num_materials(m);
  const int32_t ne = hx_mesh_num_elements(m);
  const int32_t *ft = hx_mesh_face_tags(m), *mat = hx_mesh_element_material(m);
  for (int32_t e = 0; e < ne; e++) {
    for (int f = 0; f < 6; f++)
      if (ft[e * 6 + f] >= 0) cnt[ft[e * 6 + f]]++;
    cnt[nt + mat[e]]++;
  }
  HX_CALL(hx_reduce_sum(ctx->comm, cnt, nt + nm)); /* counts below 2^53: exact as doubles */
  for (int i = 0; i < nt + nm; i++) st->gcnt[i] = (int64_t)cnt[i];
  st->rss_max = st->rss_sum = (double)hx_peak_rss_bytes();
  HX_CALL(hx_reduce_max(ctx->comm, &st->rss_max, 1));
  HX_CALL(hx_reduce_sum(ctx->comm, &st->rss_sum, 1));
  return HX_SUCCESS;
}

/* the note on boundary faces that carry no tag */
static void print_untagged(hx_mesh m, const mesh_args *a) {
  const char *where = "";
  int64_t nbnd = 0;
  const int64_t nun = hx_mesh_untagged_faces(m, &nbnd, &where);
  if (nun > 0 && a->type == 4)
    printf("\n  note: %lld of %lld boundary faces have no boundary code in field %d (the first: %s); they form "
           "the tag '%s' and get the natural condition kappa du/dn = 0 unless a case gives them a condition with "
           "tags: [%s] in problem.boundary",
           (long long)nun, (long long)nbnd, a->field, where, HX_MESH_UNTAGGED, HX_MESH_UNTAGGED);
  else if (nun > 0)
    printf(
        "\n  note: %lld of %lld boundary faces carry no %s (the first: %s); they form "
        "the tag '%s' and get the natural condition kappa du/dn = 0 unless a case gives them a "
        "condition with tags: [%s] in problem.boundary, or they are put in a %s",
        (long long)nun, (long long)nbnd, a->type == 3 ? "side set" : "surface physical tag", where,
        HX_MESH_UNTAGGED, HX_MESH_UNTAGGED, a->type == 3 ? "side set" : "physical group");
}

/* rank 0: the report */
static void print_report(hx_app_ctx *ctx, hx_mesh m, const mesh_args *a, const char *src, const hx_mesh_report *rep,
                         const mesh_stats *st) {
  const int p = a->order, n = p + 1;
  const int nt = hx_mesh_num_tags(m), nm = hx_mesh_num_materials(m);
  hx_mesh_times t = hx_mesh_get_times(m);
  int64_t N = hx_mesh_num_global_gll(m, p);
  printf("hexcg mesh: %s, %s elements, partitioner %s\n", src, hx_mesh_nodes_per_element(m) == 8 ? "hex8" : "hex27",
         hx_partitioner_name(a->part));
  printf("  elements              %lld\n", (long long)hx_mesh_num_global_elements(m));
  printf("  vertices              %lld  (edges %lld, faces %lld)\n", (long long)hx_mesh_num_global_vertices(m),
         (long long)hx_mesh_num_global_edges(m), (long long)hx_mesh_num_global_faces(m));
  printf("  unique GLL nodes      %lld at order %d%s\n", (long long)N, p,
         st->gidmax == N ? "" : "  (MISMATCH with the largest id!)");
  if (hx_mesh_num_periodic_faces(m) > 0) {
    printf("  periodic face pairs   %lld  (periodic tags:", (long long)hx_mesh_num_periodic_faces(m));
    for (int i = 0; i < nt; i++)
      if (hx_mesh_tag_is_periodic(m, i)) printf(" %s", hx_mesh_tag_name(m, i));
    printf("%s)\n", a->type == 4 ? " none: the .re2 file's 'P' boundary records" : "");
  }
  if (hx_mesh_num_curved_elements(m) > 0)
    printf("  curved elements       %lld  (exact curved sides: the map at the GLL nodes of any order)\n",
           (long long)hx_mesh_num_curved_elements(m));
  hx_mesh_report_print(rep, stdout, a->verbose);
  printf("  Jacobian det          min %.6g  max %.6g  (at the order-%d GLL nodes)\n", st->jmin, st->jmax, p);
  printf("  element size          min %.6g  max %.6g  (element edge length)\n", st->hmin, st->hmax);
  printf("  materials            ");
  for (int i = 0; i < nm; i++) printf(" %s (%lld elements)", hx_mesh_material_name(m, i), (long long)st->gcnt[nt + i]);
  printf("\n  boundary tags        ");
  for (int i = 0; i < nt; i++) printf(" %s (%lld faces)", hx_mesh_tag_name(m, i), (long long)st->gcnt[i]);
  if (nt == 0) printf(" none");
  print_untagged(m, a);
  printf(
      "\n  time [s]              build %.3f, topology %.3f, partition %.3f, distribute %.3f, "
      "validate %.3f (create total %.3f)\n",
      t.build, t.topology, t.partition, t.distribute, t.validate, st->t_create);
  printf("                        GLL ids %.3f, partition report %.3f, Jacobian check %.3f\n", st->t_ids_max,
         st->t_rep, st->t_jac);
  printf(
      "  peak memory           max %.1f MiB per rank after create, %.1f MiB at the end (GLL id array "
      "%.1f MiB per rank), %.1f MiB over %d ranks\n",
      st->rss_create_max / 1048576.0, st->rss_max / 1048576.0,
      (double)hx_mesh_num_global_elements(m) / ctx->size * n * n * n * 8 / 1048576.0, st->rss_sum / 1048576.0,
      ctx->size);
}

/* --convert: the mesh as a Gmsh file */
static int convert_mesh(hx_app_ctx *ctx, hx_mesh m, const mesh_args *a) {
  int curved = 0;
  HX_CALL(hx_mesh_write_gmsh(m, a->convert, &curved));
  if (ctx->rank == 0) {
    printf("  converted             %s (Gmsh MSH 2.2, %s elements)\n", a->convert, curved ? "hex27" : "hex8");
    if (hx_mesh_num_periodic_faces(m) > 0)
      printf("  note: the %lld periodic face pairs are not written: give the pairs in the case that reads "
             "%s (mesh.periodic)\n",
             (long long)hx_mesh_num_periodic_faces(m), a->convert);
  }
  return HX_SUCCESS;
}

static int run(hx_app_ctx *ctx, const mesh_args *a) {
  hx_mesh m = NULL;
  char src[1200];
  describe_source(a, src, sizeof src);
  HX_CALL(check_memory(ctx, a));
  mesh_stats st;
  memset(&st, 0, sizeof st);
  double t0 = hx_wtime();
  HX_CALL(create_mesh(ctx, a, &m));
  st.t_create = hx_wtime() - t0;
  st.rss_create_max = (double)hx_peak_rss_bytes();
  HX_CALL(hx_reduce_max(ctx->comm, &st.rss_create_max, 1));
  const int p = a->order;
  int err = gll_id_check(ctx, m, p, &st);
  if (err) {
    hx_mesh_destroy(&m);
    return err;
  }
  t0 = hx_wtime();
  hx_mesh_report rep;
  HX_CALL(hx_mesh_partition_report(m, p, &rep));
  st.t_rep = hx_wtime() - t0;
  t0 = hx_wtime();
  err = hx_mesh_check_jacobian(m, p, &st.jmin, &st.jmax, &st.hmin, &st.hmax);
  st.t_jac = hx_wtime() - t0;
  if (err) {
    hx_mesh_report_free(&rep);
    hx_mesh_destroy(&m);
    return err;
  }
  const int nt = hx_mesh_num_tags(m), nm = hx_mesh_num_materials(m);
  double *cnt = NULL;
  err = HX_ALLOC(&cnt, nt + nm + 1);
  if (!err) err = HX_ALLOC(&st.gcnt, nt + nm + 1);
  if (!err) err = count_tags(ctx, m, &st, cnt);
  if (!err && ctx->rank == 0) print_report(ctx, m, a, src, &rep, &st);
  free(cnt), free(st.gcnt);
  if (err) {
    hx_mesh_report_free(&rep);
    hx_mesh_destroy(&m);
    return err;
  }
  hx_mesh_report_free(&rep);
  if (a->convert) err = convert_mesh(ctx, m, a);
  hx_mesh_destroy(&m);
  return err;
}

/* the mesh section and order of a case file into a */
static int from_case(hx_app_ctx *ctx, mesh_args *a) {
  hx_case *cs = NULL;
  HX_CALL(hx_case_load_comm(ctx->comm, a->case_path, a->nsets, a->sets, &cs));
  int err = hx_case_check_memory(ctx->comm, cs, 0, HX_CASE_MEM_MESH, 0.0);
  if (err) {
    hx_case_destroy(&cs);
    return err;
  }
  a->type = cs->mesh.type == HX_CASE_MESH_NEK      ? 4
            : cs->mesh.type == HX_CASE_MESH_EXODUS ? 3
            : cs->mesh.type == HX_CASE_MESH_GMSH   ? (hx_mesh_path_is_exodus(cs->mesh.file) ? 3 : 2)
            : cs->mesh.type == HX_CASE_MESH_KERSHAW ? 1
                                                    : 0;
  a->field = cs->mesh.field;
  a->order = cs->order;
  a->part = hx_api_partitioner(cs);
  if (a->type >= 2) {
    snprintf(a->file_buf, sizeof a->file_buf, "%s", cs->mesh.file ? cs->mesh.file : "");
    a->file = a->file_buf;
  } else {
    a->box.nx = cs->mesh.elements[0], a->box.ny = cs->mesh.elements[1], a->box.nz = cs->mesh.elements[2];
    memcpy(a->box.extent, cs->mesh.extent, sizeof a->box.extent);
    a->box.kershaw_eps = a->type == 1 ? cs->mesh.eps : 1.0;
    a->box.deform = cs->mesh.deform > 0;
    if (a->box.deform) a->box.deform_amplitude = cs->mesh.deform;
    a->box.partitioner = a->part;
    memcpy(a->box.periodic, cs->mesh.periodic, sizeof a->box.periodic);
  }
  a->cs = cs; /* hx_cmd_mesh destroys it */
  return err;
}

int hx_cmd_mesh(hx_app_ctx *ctx, int argc, char **argv) {
  mesh_args a = {0};
  const char **sets = calloc((size_t)argc + 1, sizeof *sets);
  int err = sets ? parse_args(argc, argv, &a, sets) : HX_ERROR(HX_ERR_MEM, "out of memory");
  if (!err && !a.help && a.case_path) err = from_case(ctx, &a);
  if (err) {
    free(sets);
    hx_case_destroy(&a.cs);
    return hx_app_fail(ctx, err, 1);
  }
  if (a.help) {
    free(sets);
    if (ctx->rank == 0) usage(stdout);
    return 0;
  }
  err = run(ctx, &a);
  free(sets);
  hx_case_destroy(&a.cs);
  if (err) return hx_app_fail(ctx, err, 1);
  return 0;
}
