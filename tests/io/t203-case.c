/* Case loading: the example case, defaults, --set overrides, gmsh tags and
 * materials checked after the mesh is read, the effective case reloading to
 * the same case, and the collective loader agreeing on every rank.
 * argv[1]: configs/poisson_box.yaml, argv[2]: a scratch folder. */
#include <sys/stat.h>

#include "hx_io.h"
#include "hx_test.h"

static const char *gmsh_case =
    "mesh: {type: gmsh, file: part.msh, partitioner: metis}\n"
    "order: 4\n"
    "problem:\n"
    "  kappa: {steel: 20, copper: 400}\n"
    "  lambda: 2.5\n"
    "  rhs: \"1\"\n"
    "  boundary:\n"
    "    - {tags: [inlet, outlet], type: dirichlet, value: 0}\n"
    "    - {tags: wall, type: neumann, value: \"x + y\"}\n"
    "solver: {tol: 1e-6, initial_guess: {file: old/solution.h5}}\n"
    "preconditioner: none\n"
    "backend: cuda\n"
    "output: {dir: out/g, solution: false, progress_every: 0, progress_seconds: 2.5}\n";

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static int same_case(const hx_case *a, const hx_case *b) {
  int same = a->mesh.type == b->mesh.type && a->order == b->order && a->problem.kappa == b->problem.kappa &&
             a->problem.lambda == b->problem.lambda && a->problem.nboundary == b->problem.nboundary &&
             a->problem.nmaterials == b->problem.nmaterials && a->solver.tol == b->solver.tol &&
             a->solver.max_iterations == b->solver.max_iterations &&
             same_str(hx_case_pc_type(a), hx_case_pc_type(b)) && a->backend == b->backend &&
             a->solver.type == b->solver.type && a->op.geometry == b->op.geometry &&
             !strcmp(a->output.dir, b->output.dir) && a->output.solution == b->output.solution &&
             a->output.history == b->output.history && a->output.progress_every == b->output.progress_every &&
             a->output.progress_seconds == b->output.progress_seconds && a->mesh.eps == b->mesh.eps &&
             a->mesh.deform == b->mesh.deform && a->mesh.partitioner == b->mesh.partitioner &&
             !strcmp(hx_expr_text(a->problem.rhs), hx_expr_text(b->problem.rhs)) &&
             !a->problem.exact == !b->problem.exact;
  for (int d = 0; d < 3; d++)
    same = same && a->mesh.elements[d] == b->mesh.elements[d] &&
           a->mesh.extent[d][0] == b->mesh.extent[d][0] && a->mesh.extent[d][1] == b->mesh.extent[d][1];
  same = same && !a->mesh.file == !b->mesh.file && (!a->mesh.file || !strcmp(a->mesh.file, b->mesh.file));
  same = same && !a->solver.initial_guess == !b->solver.initial_guess &&
         (!a->solver.initial_guess || !strcmp(a->solver.initial_guess, b->solver.initial_guess));
  for (int i = 0; same && i < a->problem.nboundary; i++) {
    const hx_case_boundary *x = &a->problem.boundary[i], *y = &b->problem.boundary[i];
    same = x->type == y->type && x->value_kind == y->value_kind && x->ntags == y->ntags &&
           (x->value_kind != HX_BCV_NUMBER || x->value == y->value) &&
           (x->value_kind != HX_BCV_EXPR || !strcmp(hx_expr_text(x->expr), hx_expr_text(y->expr)));
    for (int t = 0; same && t < x->ntags; t++) same = !strcmp(x->tags[t], y->tags[t]);
  }
  for (int m = 0; same && m < a->problem.nmaterials; m++)
    same = !strcmp(a->problem.materials[m].name, b->problem.materials[m].name) &&
           a->problem.materials[m].kappa == b->problem.materials[m].kappa;
  return same;
}

static int roundtrip(const hx_case *cs, const char *scratch, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", scratch, name);
  HX_TCALL(hx_case_write_effective(cs, path));
  hx_case *again = NULL;
  HX_TCALL(hx_case_load_string("", "x.yaml", 0, NULL, 0, &again) == HX_ERR_INPUT ? HX_SUCCESS
                                                                                 : HX_ERR_INTERNAL);
  hx_error_clear();
  /* reload without file checks (gmsh file / initial guess do not exist here) */
  FILE *f = fopen(path, "r");
  HX_ASSERT(f, "effective case %s written", path);
  if (!f) return 1;
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  HX_TCALL(hx_case_load_string(text, path, 0, NULL, 0, &again));
  HX_ASSERT(same_case(cs, again), "effective case %s reloads to the same case:\n%s", name, text);
  hx_case_destroy(&again);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  if (argc < 3) {
    fprintf(stderr, "usage: t203-case configs/poisson_box.yaml SCRATCH\n");
    MPI_Finalize();
    return 1;
  }
  const char *box = argv[1], *scratch = argv[2];
  if (rank == 0) mkdir(scratch, 0777);
  MPI_Barrier(MPI_COMM_WORLD);
  hx_case *cs = NULL;

  /* the example case, collectively: every rank gets the same case */
  HX_TCALL(hx_case_load_comm(MPI_COMM_WORLD, box, 0, NULL, &cs));
  HX_ASSERT(cs->mesh.type == HX_CASE_MESH_BOX, "box");
  HX_ASSERT(cs->mesh.elements[0] == 8 && cs->mesh.elements[1] == 8 && cs->mesh.elements[2] == 8, "8x8x8");
  HX_ASSERT(cs->order == 7 && cs->problem.kappa == 1.0 && cs->problem.lambda == 0.0, "order/kappa/lambda");
  HX_ASSERT(!strcmp(cs->name, "poisson_box"), "name %s", cs->name);
  HX_ASSERT(cs->problem.exact && cs->problem.nboundary == 1, "exact and one boundary entry");
  HX_ASSERT(cs->problem.boundary[0].ntags == 6 && cs->problem.boundary[0].value_kind == HX_BCV_EXACT &&
                cs->problem.boundary[0].expr == cs->problem.exact,
            "dirichlet = exact on six tags");
  HX_ASSERT(cs->solver.tol == 1e-8 && cs->solver.max_iterations == 500 && !cs->solver.initial_guess,
            "solver");
  /* no preconditioner: key (the default, pmg, is made explicit by precond/) */
  HX_ASSERT(!hx_case_pc_type(cs) && cs->backend == HX_CASE_BACKEND_CPU, "pc/backend");
  HX_ASSERT(cs->solver.type == HX_CASE_SOLVER_PCG && cs->mesh.partitioner == HX_CASE_PART_RCB,
            "solver type and partitioner as enums");
  HX_ASSERT(!strcmp(cs->output.dir, "out/poisson_box") && cs->output.solution && cs->output.history,
            "output");
  double u = hx_expr_eval(cs->problem.exact, 0.5, 0.5, 0.5);
  HX_ASSERT(fabs(u - 1.0) < 1e-15, "exact at the centre %g", u);
  HX_ASSERT(hx_case_kappa(cs, "box") == 1.0, "kappa without a map");
  if (rank == 0 && roundtrip(cs, scratch, "box-effective.yaml")) return 1;
  hx_case_destroy(&cs);

  /* overrides, including list indices and new keys inside existing sections */
  const char *sets[] = {"order=2",
                        "mesh.type=kershaw",
                        "mesh.elements=[12, 2, 4]",
                        "mesh.eps=0.5",
                        "problem.boundary.0.type=dirichlet",
                        "problem.boundary.0.value=1.5",
                        "solver.max_iterations=17",
                        "output.dir=elsewhere",
                        "mesh.deform=0.1"};
  HX_TCALL(hx_case_load(box, 9, sets, &cs));
  HX_ASSERT(cs->order == 2 && cs->mesh.type == HX_CASE_MESH_KERSHAW && cs->mesh.eps == 0.5,
            "kershaw override");
  HX_ASSERT(cs->mesh.elements[0] == 12 && cs->mesh.elements[1] == 2 && cs->mesh.elements[2] == 4, "elements");
  HX_ASSERT(cs->problem.boundary[0].value_kind == HX_BCV_NUMBER && cs->problem.boundary[0].value == 1.5,
            "bc 1.5");
  HX_ASSERT(cs->solver.max_iterations == 17 && !strcmp(cs->output.dir, "elsewhere"), "solver/output");
  HX_ASSERT(cs->mesh.deform == 0.1, "deform");
  if (rank == 0 && roundtrip(cs, scratch, "kershaw-effective.yaml")) return 1;
  hx_case_destroy(&cs);

  /* KEY=null (or ~) removes a key, so its default applies; a list entry
   * goes the same way; a key the case does not have is an error naming it;
   * a quoted "null" is a string, not a removal */
  {
    const char *drop[] = {"solver.max_iterations=null", "output=~", "problem.boundary.0=null",
                          "problem.boundary=[{tags: [xmin], type: dirichlet, value: 0}, "
                          "{tags: [xmax], type: dirichlet, value: 1}]",
                          "problem.boundary.0=null"};
    HX_TCALL(hx_case_load(box, 2, drop, &cs));
    HX_ASSERT(cs->solver.max_iterations == HX_MAX_ITERATIONS_DEFAULT, "max_iterations=null: the default %d, got %d",
              HX_MAX_ITERATIONS_DEFAULT, cs->solver.max_iterations);
    HX_ASSERT(cs->solver.tol == 1e-8, "the other solver keys stay");
    hx_case_destroy(&cs);
    HX_TCALL(hx_case_load(box, 5, drop, &cs));
    HX_ASSERT(cs->problem.nboundary == 1 && cs->problem.boundary[0].value == 1.0, "list entry 0 removed: %d left",
              cs->problem.nboundary);
    hx_case_destroy(&cs);
    const char *bad[][1] = {{"solver.maxiter=null"}, {"nosuch.key=null"}, {"solver.max_iterations='null'"}};
    const char *want[] = {"no key 'solver.maxiter' to remove", "no key 'nosuch' to remove", "max_iterations"};
    for (int i = 0; i < 3; i++) {
      hx_case *c2 = NULL;
      int e = hx_case_load(box, 1, bad[i], &c2);
      HX_ASSERT(e == HX_ERR_INPUT && strstr(hx_error_message(), want[i]), "%s: error %d '%s'", bad[i][0], e,
                hx_error_message());
      hx_case_destroy(&c2);
    }
  }

  /* a gmsh case: tags and materials are checked later, against the mesh */
  HX_TCALL(hx_case_load_string(gmsh_case, "cases/g.yaml", 0, NULL, 0, &cs));
  HX_ASSERT(cs->mesh.type == HX_CASE_MESH_GMSH && cs->order == 4 && cs->problem.lambda == 2.5, "gmsh case");
  HX_ASSERT(cs->mesh.file && strstr(cs->mesh.file, "/cases/part.msh") && cs->mesh.file[0] == '/',
            "mesh.file resolved against the case folder: %s", cs->mesh.file);
  HX_ASSERT(cs->solver.initial_guess && strstr(cs->solver.initial_guess, "/old/solution.h5") &&
                !strstr(cs->solver.initial_guess, "cases/"),
            "initial guess resolved against the working directory: %s", cs->solver.initial_guess);
  HX_ASSERT(cs->problem.nmaterials == 2 && hx_case_kappa(cs, "copper") == 400 &&
                hx_case_kappa(cs, "steel") == 20 && hx_case_kappa(cs, "wood") < 0,
            "kappa per material");
  HX_ASSERT(cs->problem.nboundary == 2 && cs->problem.boundary[1].ntags == 1 &&
                !strcmp(cs->problem.boundary[1].tags[0], "wall") &&
                cs->problem.boundary[1].value_kind == HX_BCV_EXPR &&
                hx_expr_eval(cs->problem.boundary[1].expr, 1, 2, 3) == 3.0,
            "neumann expression on one tag");
  HX_ASSERT(cs->mesh.partitioner == HX_CASE_PART_METIS, "partitioner metis");
  HX_ASSERT(!strcmp(hx_case_pc_type(cs), "none") && cs->backend == HX_CASE_BACKEND_CUDA && !cs->output.solution &&
                cs->output.history && cs->output.progress_every == 0 && cs->output.progress_seconds == 2.5,
            "scalar shorthand and output keys");
  const char *tags_ok[] = {"wall", "outlet", "inlet", "symmetry"};
  HX_TCALL(hx_case_check_tags(cs, 4, tags_ok));
  const char *tags_bad[] = {"wall", "outlet", "inlets"};
  int err = hx_case_check_tags(cs, 3, tags_bad);
  HX_ASSERT(err == HX_ERR_INPUT, "unknown tag 'inlet'");
  HX_ASSERT(!strcmp(hx_error_message(),
                    "cases/g.yaml:8:15: problem.boundary[0].tags: unknown boundary tag 'inlet' "
                    "(did you mean 'inlets'?); the gmsh mesh has: wall, outlet, inlets"),
            "tag message: %s", hx_error_message());
  hx_error_clear();
  const char *mats_ok[] = {"copper", "steel"}, *mats_bad[] = {"copper"};
  HX_TCALL(hx_case_check_materials(cs, 2, mats_ok));
  err = hx_case_check_materials(cs, 1, mats_bad);
  HX_ASSERT(err == HX_ERR_INPUT &&
                !strcmp(hx_error_message(),
                        "cases/g.yaml:4:11: problem.kappa: unknown material 'steel'; the mesh has: copper"),
            "material message: %s", hx_error_message());
  hx_error_clear();
  if (rank == 0 && roundtrip(cs, scratch, "gmsh-effective.yaml")) return 1;
  hx_case_destroy(&cs);

  /* the collective loader: an error on rank 0 reaches every rank, same message */
  const char *bad[] = {"order=99"};
  err = hx_case_load_comm(MPI_COMM_WORLD, box, 1, bad, &cs);
  HX_ASSERT(err == HX_ERR_INPUT && cs == NULL, "error on every rank (rank %d: %d)", rank, err);
  HX_ASSERT(!strcmp(hx_error_message(), "--set order=99: order: must be in 1..15, got 99"),
            "rank %d message: %s", rank, hx_error_message());
  hx_error_clear();
  err = hx_case_load_comm(MPI_COMM_WORLD, "no/such/case.yaml", 0, NULL, &cs);
  HX_ASSERT(
      err == HX_ERR_INPUT &&
          !strcmp(hx_error_message(), "cannot read case file 'no/such/case.yaml': No such file or directory"),
      "rank %d missing file: %s", rank, hx_error_message());
  hx_error_clear();

  return hx_test_mpi_finish(0);
}
