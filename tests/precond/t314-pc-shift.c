/* The Helmholtz shift changed in place (issue 49: a BDF order rise) against
 * a new build at the new shift:
 *   t314-pc-shift --pc "YAML" [--p P] [--n N] [--mesh box|kershaw]
 *                 [--lambda L] [--field] [--split] [--s1 S] [--s2 S]
 *                 [--backend B] [--tol T]
 * builds disc A at shift s1 with the preconditioner of --pc (set up, and
 * its FP32 operator made), then hx_disc_set_shift(A, s2) and
 * hx_pc_set_shift(pc, s2), and disc B with preconditioner at s2 from
 * scratch; checks that
 *   - lambda per element and at the nodes (--field: lambda = L + x y + z at
 *     the nodes of material 0) are the same bits,
 *   - the FP64 and FP32 operators applied to a random vector give the same
 *     bits, and with --split (geometry split: hx_disc_op_exact an operator
 *     of its own) the FP64-geometry one too,
 *   - the preconditioners applied to three random vectors give the same
 *     bits (--tol T: relative 2-norm difference <= T instead, for a backend
 *     whose reductions are not ordered; 0 by default),
 *   - PCG to 1e-8 takes the same iterations to the same residual,
 *   - the shift mattered: M x at s1 differs from M x at s2.
 *   t314-pc-shift --errors
 * checks the refusals: a shell preconditioner without set_shift, the
 * smoother trial's pmg (type auto, trial: true, start: pmg) and a disc with
 * the null space flag return HX_ERR_UNSUPPORTED; a negative shift is
 * HX_ERR_ARG; the identity (none) takes any shift. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"

static double lam_fn(const void *ctx, double x, double y, double z) {
  return *(const double *)ctx + x * y + z;
}

typedef struct {
  hx_disc d;
  hx_pc pc;
} side;

/* d_v = masked random G-vector (seeded by the global ids) */
static int random_vec(hx_disc d, uint64_t seed, double *h, double *d_v) {
  HX_TCALL(hx_test_random_gvec(d, 0xBF58476D1CE4E5B9ull, seed * 0x9E3779B97F4A7C15ull + 1, h, d_v));
  return 0;
}

/* entries of host arrays a, b (n each) that differ in their bits, over all ranks */
static long long bits_differ(const void *a, const void *b, int64_t n, size_t size) {
  long long k = 0;
  for (int64_t i = 0; i < n; i++)
    k += memcmp((const char *)a + i * size, (const char *)b + i * size, size) != 0;
  MPI_Allreduce(MPI_IN_PLACE, &k, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return k;
}

/* relative 2-norm difference of two host vectors over the owned entries */
static double rel_diff(const double *a, const double *b, int64_t nown) {
  double s[2] = {0.0, 0.0};
  for (int64_t i = 0; i < nown; i++) s[0] += (a[i] - b[i]) * (a[i] - b[i]), s[1] += b[i] * b[i];
  MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
}

static int compare(MPI_Comm comm, int argc, char **argv, const char *backend) {
  const char *pc = hx_test_arg(argc, argv, "--pc", "type: jacobi"),
             *mesh = hx_test_arg(argc, argv, "--mesh", "box");
  const int p = atoi(hx_test_arg(argc, argv, "--p", "3"));
  int n = atoi(hx_test_arg(argc, argv, "--n", "4"));
  const double lam = atof(hx_test_arg(argc, argv, "--lambda", "0")),
               s1 = atof(hx_test_arg(argc, argv, "--s1", "30"));
  const double s2 = atof(hx_test_arg(argc, argv, "--s2", "20")),
               tol = atof(hx_test_arg(argc, argv, "--tol", "0"));
  int field = 0, split = 0, rank;
  for (int i = 1; i < argc; i++) field |= !strcmp(argv[i], "--field"), split |= !strcmp(argv[i], "--split");
  MPI_Comm_rank(comm, &rank);
  if (!strcmp(mesh, "kershaw") && n % 6) n = 6;
  hx_backend b;
  HX_TCALL(hx_backend_create(backend, &b));
  hx_mesh m;
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = n;
  if (!strcmp(mesh, "kershaw")) mo.kershaw_eps = 0.3;
  HX_TCALL(hx_mesh_create_box(comm, &mo, &m));
  const int nmat = hx_mesh_num_materials(m);
  double *lams = calloc((size_t)nmat, sizeof(double));
  hx_field *lf = calloc((size_t)nmat, sizeof(hx_field));
  for (int i = 0; i < nmat; i++) lams[i] = lam;
  lf[0] = (hx_field){lam_fn, &lam, NULL};
  hx_disc_opts o = hx_disc_opts_default();
  o.p = p, o.lambda = lams, o.lambda_field = field ? lf : NULL;
  if (split) o.geometry = HX_AX_GEO_SPLIT;
  side A = {0}, B = {0};
  o.shift = s1;
  HX_TCALL(hx_disc_create(m, b, &o, &A.d));
  HX_TCALL(hx_test_pc_make(A.d, pc, "--pc", &A.pc));
  hx_op a32, b32;
  HX_TCALL(hx_disc_op_prec(A.d, HX_F32, &a32)); /* made before the shift: shifted with it */
  hx_op ax_, bx_;
  HX_TCALL(hx_disc_op_exact(A.d, &ax_)); /* likewise */
  HX_ASSERT(!split || ax_ != hx_disc_op(A.d),
            "--split: the exact operator is the disc's own (no split elements?)");
  const int64_t ng = hx_op_size(hx_disc_op(A.d)), nown = hx_op_owned(hx_disc_op(A.d));
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  double *h = malloc(bytes), *ha = malloc(bytes), *hb = malloc(bytes), *h1 = malloc(bytes);
  double *dx, *dya, *dyb;
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dx));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dya));
  HX_TCALL(hx_mem_alloc(b, bytes, (void **)&dyb));
  /* M x at s1, for the check that the shift mattered */
  if (random_vec(A.d, 1, h, dx)) return 1;
  HX_TCALL(hx_pc_apply(A.pc, dx, dya));
  HX_TCALL(hx_mem_to_host(b, h1, dya, sizeof(double) * (size_t)ng));

  double t0 = hx_wtime();
  HX_TCALL(hx_disc_set_shift(A.d, s2));
  HX_TCALL(hx_pc_set_shift(A.pc, s2));
  const double t_shift = hx_wtime() - t0;
  HX_ASSERT(hx_disc_shift(A.d) == s2, "hx_disc_shift = %g, expected %g", hx_disc_shift(A.d), s2);
  o.shift = s2;
  t0 = hx_wtime();
  HX_TCALL(hx_disc_create(m, b, &o, &B.d));
  HX_TCALL(hx_test_pc_make(B.d, pc, "--pc", &B.pc));
  HX_TCALL(hx_disc_op_prec(B.d, HX_F32, &b32)); /* what A had (timed alike) */
  HX_TCALL(hx_disc_op_exact(B.d, &bx_));
  const double t_new = hx_wtime() - t0;
  if (rank == 0)
    printf("%s: set_shift %.3e s, new disc (its FP32 and exact operators) and preconditioner %.3e s\n", pc,
           t_shift, t_new);

  /* the coefficients */
  const int32_t E = hx_disc_num_elements(A.d);
  long long k = bits_differ(hx_disc_lambda(A.d), hx_disc_lambda(B.d), E, sizeof(double));
  HX_ASSERT(k == 0, "%s: lambda differs on %lld elements", pc, k);
  HX_ASSERT(!hx_disc_lambda_nodes(A.d) == !hx_disc_lambda_nodes(B.d) && !hx_disc_lambda_nodes(A.d) == !field,
            "lambda at the nodes: present %d and %d, field %d", hx_disc_lambda_nodes(A.d) != NULL,
            hx_disc_lambda_nodes(B.d) != NULL, field);
  if (field && hx_disc_lambda_nodes(A.d) && hx_disc_lambda_nodes(B.d)) {
    k = bits_differ(hx_disc_lambda_nodes(A.d), hx_disc_lambda_nodes(B.d), hx_disc_num_l(A.d), sizeof(double));
    HX_ASSERT(k == 0, "%s: lambda at the nodes differs on %lld nodes", pc, k);
  }
  /* the operators, FP64 and FP32 */
  HX_TCALL(hx_op_apply(hx_disc_op(A.d), dx, dya, NULL));
  HX_TCALL(hx_op_apply(hx_disc_op(B.d), dx, dyb, NULL));
  HX_TCALL(hx_mem_to_host(b, ha, dya, sizeof(double) * (size_t)ng));
  HX_TCALL(hx_mem_to_host(b, hb, dyb, sizeof(double) * (size_t)ng));
  k = bits_differ(ha, hb, ng, sizeof(double));
  HX_ASSERT(k == 0, "%s: the FP64 operator differs on %lld entries", pc, k);
  HX_TCALL(hx_op_apply(ax_, dx, dya, NULL));
  HX_TCALL(hx_op_apply(bx_, dx, dyb, NULL));
  HX_TCALL(hx_mem_to_host(b, ha, dya, sizeof(double) * (size_t)ng));
  HX_TCALL(hx_mem_to_host(b, hb, dyb, sizeof(double) * (size_t)ng));
  k = bits_differ(ha, hb, ng, sizeof(double));
  HX_ASSERT(k == 0, "%s: the FP64-geometry operator differs on %lld entries", pc, k);
  {
    float *fx, *fa, *fb;
    const size_t fbytes = sizeof(float) * (size_t)(ng > 0 ? ng : 1);
    HX_TCALL(hx_mem_alloc(b, fbytes, (void **)&fx));
    HX_TCALL(hx_mem_alloc(b, fbytes, (void **)&fa));
    HX_TCALL(hx_mem_alloc(b, fbytes, (void **)&fb));
    HX_TCALL(hx_array_convert(b, ng, HX_F32, fx, HX_F64, dx));
    HX_TCALL(hx_op_apply_p(a32, fx, fa));
    HX_TCALL(hx_op_apply_p(b32, fx, fb));
    float *hfa = malloc(fbytes), *hfb = malloc(fbytes);
    HX_TCALL(hx_mem_to_host(b, hfa, fa, sizeof(float) * (size_t)ng));
    HX_TCALL(hx_mem_to_host(b, hfb, fb, sizeof(float) * (size_t)ng));
    k = bits_differ(hfa, hfb, ng, sizeof(float));
    HX_ASSERT(k == 0, "%s: the FP32 operator differs on %lld entries", pc, k);
    free(hfa), free(hfb);
    hx_mem_free(b, (void **)&fx), hx_mem_free(b, (void **)&fa), hx_mem_free(b, (void **)&fb);
  }
  /* the preconditioners */
  for (int trial = 0; trial < 3; trial++) {
    if (random_vec(A.d, (uint64_t)trial + 1, h, dx)) return 1;
    HX_TCALL(hx_pc_apply(A.pc, dx, dya));
    HX_TCALL(hx_pc_apply(B.pc, dx, dyb));
    HX_TCALL(hx_mem_to_host(b, ha, dya, sizeof(double) * (size_t)ng));
    HX_TCALL(hx_mem_to_host(b, hb, dyb, sizeof(double) * (size_t)ng));
    const double r = rel_diff(ha, hb, nown);
    if (tol == 0.0) {
      k = bits_differ(ha, hb, ng, sizeof(double));
      HX_ASSERT(k == 0, "%s: M x differs on %lld entries (relative %.3e)", pc, k, r);
    } else {
      HX_ASSERT(r <= tol, "%s: M x differs by %.3e relative > %.1e", pc, r, tol);
    }
    if (trial == 0) {
      const double r1 = rel_diff(h1, hb, nown);
      if (rank == 0) printf("%s: M x at s1 = %g against s2 = %g: relative difference %.3e\n", pc, s1, s2, r1);
      HX_ASSERT(r1 > 1e3 * (tol > 0 ? tol : 1e-16), "%s: the shift did not change M x (%.3e)", pc, r1);
    }
  }
  /* PCG */
  {
    hx_pcg_opts po;
    hx_pcg_opts_default(&po);
    po.flexible = !hx_pc_is_symmetric(B.pc);
    hx_pcg_result ra, rb;
    if (random_vec(A.d, 7, h, dya)) return 1;
    HX_TCALL(hx_mem_zero(b, dx, bytes));
    HX_TCALL(hx_pcg_solve(hx_disc_op(A.d), A.pc, dya, dx, &po, &ra));
    HX_TCALL(hx_mem_zero(b, dx, bytes));
    HX_TCALL(hx_pcg_solve(hx_disc_op(B.d), B.pc, dya, dx, &po, &rb));
    if (rank == 0)
      printf("%s: PCG %d and %d iterations, rel %.6e and %.6e\n", pc, ra.iterations, rb.iterations, ra.rel,
             rb.rel);
    HX_ASSERT(ra.iterations == rb.iterations,
              "%s: PCG took %d iterations after set_shift, %d after a new build", pc, ra.iterations,
              rb.iterations);
    HX_ASSERT(ra.reason == rb.reason && ra.iterations > 0, "%s: PCG reasons %d and %d", pc, (int)ra.reason,
              (int)rb.reason);
    if (tol == 0.0) HX_ASSERT(ra.rel == rb.rel, "%s: final residuals %.17g and %.17g", pc, ra.rel, rb.rel);
  }
  hx_mem_free(b, (void **)&dx), hx_mem_free(b, (void **)&dya), hx_mem_free(b, (void **)&dyb);
  free(h), free(ha), free(hb), free(h1);
  hx_pc_destroy(&A.pc), hx_pc_destroy(&B.pc);
  hx_disc_destroy(&A.d), hx_disc_destroy(&B.d);
  free(lams), free(lf);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  return 0;
}

static int noop_apply(void *ctx, const double *r, double *z) {
  (void)ctx, (void)r, (void)z;
  return HX_SUCCESS;
}

static int errors(MPI_Comm comm, const char *backend) {
  hx_backend b;
  HX_TCALL(hx_backend_create(backend, &b));
  hx_mesh m;
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = 3;
  HX_TCALL(hx_mesh_create_box(comm, &mo, &m));
  hx_disc_opts o = hx_disc_opts_default();
  o.p = 3, o.shift = 5.0;
  hx_disc d;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  /* a type without the entry */
  const hx_pc_ops ops = {.type = "shell", .apply = noop_apply};
  hx_pc pc;
  HX_TCALL(hx_pc_create_shell(hx_disc_op(d), &ops, NULL, 0, NULL, &pc));
  HX_TCALL(hx_pc_setup(pc));
  int err = hx_pc_set_shift(pc, 2.0);
  HX_ASSERT(err == HX_ERR_UNSUPPORTED, "shell: hx_pc_set_shift returned %s", hx_error_name(err));
  hx_pc_destroy(&pc);
  /* the identity holds nothing of the operator */
  HX_TCALL(hx_test_pc_make(d, "none", "--pc", &pc));
  HX_TCALL(hx_pc_set_shift(pc, 2.0));
  hx_pc_destroy(&pc);
  /* the smoother trial: its choice could change */
  HX_TCALL(hx_test_pc_make(d, "{type: auto, start: pmg, trial: true}", "--pc", &pc));
  HX_TCALL(hx_disc_set_shift(d, 2.0));
  err = hx_pc_set_shift(pc, 2.0);
  HX_ASSERT(err == HX_ERR_UNSUPPORTED, "auto trial: hx_pc_set_shift returned %s", hx_error_name(err));
  hx_pc_destroy(&pc);
  /* a negative shift */
  err = hx_disc_set_shift(d, -1.0);
  HX_ASSERT(err == HX_ERR_ARG, "shift -1: hx_disc_set_shift returned %s", hx_error_name(err));
  HX_ASSERT(hx_disc_shift(d) == 2.0, "a refused shift changed the disc's (%g)", hx_disc_shift(d));
  hx_disc_destroy(&d);
  /* the null space flag */
  o.shift = 0.0, o.nullspace = 1;
  int *none = calloc(64, sizeof(int)); /* no tag Dirichlet */
  o.dirichlet_tag = none;
  HX_TCALL(hx_disc_create(m, b, &o, &d));
  err = hx_disc_set_shift(d, 1.0);
  HX_ASSERT(err == HX_ERR_UNSUPPORTED, "null space: hx_disc_set_shift returned %s", hx_error_name(err));
  HX_TCALL(hx_disc_set_shift(d, 0.0)); /* the shift it has: nothing to do */
  hx_disc_destroy(&d);
  free(none);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &(int){0});
  const char *backend = hx_test_backend_arg(argc, argv);
  hx_test_skip_without_device(backend);
  int err_mode = 0;
  for (int i = 1; i < argc; i++) err_mode |= !strcmp(argv[i], "--errors");
  if (err_mode)
    errors(MPI_COMM_WORLD, backend);
  else
    compare(MPI_COMM_WORLD, argc, argv, backend);
  MPI_Finalize();
  return hx_test_result();
}
