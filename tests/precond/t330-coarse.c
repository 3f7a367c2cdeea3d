/* The coarse level of the two-level Schwarz preconditioner (precond/coarse.c):
 *   interp    P reproduces linear functions at the fine GLL nodes on a box and
 *             a Kershaw mesh (eps 0.3), trilinear xyz on an affine box
 *   transpose (P^T r).c == r.(P c) on random vectors (owned dots), 1e-13
 *   galerkin  Galerkin A0 == FEM A0 on an affine box (lambda 0 and > 0, p >= 2)
 *   sym       M = P AMG(A0) P^T symmetric (1e-10 |x||My|) and x.Mx >= 0
 *   thread    apply from a second pthread while the main thread runs the fine
 *             operator (MPI on the fine gs communicator): same bits
 *   ranks     A0 and the converged coarse solve agree between the whole
 *             communicator and a 1-rank copy of the same mesh on every rank
 *   alldir    every vertex Dirichlet: 0 rows, apply gives 0
 *   amg       (not a test) BoomerAMG settings on A0: cycles to 1e-8, times
 *   bench     (not a test) two-level PCG (Jacobi + coarse, additive) iteration
 *             counts FEM vs Galerkin, setup/apply times; --verbose prints
 * Usage: t330-coarse MODE [--p P] [--n N] [--eps E] */
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_parcsr_mv.h>
#include <pthread.h>

#include "hx_disc.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "precond_impl.h"

static int g_rank = 0, g_size = 1;

typedef struct {
  hx_mesh m;
  hx_backend b;
  hx_disc d;
  double *kap, *lam;
  hx_coarse c;
} fixture;

typedef struct {
  int nx, ny, nz, p, deform, all_neumann;
  double eps, kappa, lambda;
  double ext[3][2];
  hx_coarse_opts co;
} spec;

static void spec_default(spec *s) {
  memset(s, 0, sizeof *s);
  s->nx = 3, s->ny = 2, s->nz = 2, s->p = 3, s->eps = 1.0, s->kappa = 1.0;
  for (int d = 0; d < 3; d++) s->ext[d][0] = 0, s->ext[d][1] = 1;
  hx_coarse_opts_default(&s->co);
}

static int fixture_create(MPI_Comm comm, const spec *s, fixture *f) {
  memset(f, 0, sizeof *f);
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = s->nx, mo.ny = s->ny, mo.nz = s->nz, mo.kershaw_eps = s->eps, mo.deform = s->deform;
  memcpy(mo.extent, s->ext, sizeof mo.extent);
  HX_TCALL(hx_mesh_create_box(comm, &mo, &f->m));
  HX_TCALL(hx_backend_create("cpu", &f->b));
  int notag[6] = {0, 0, 0, 0, 0, 0};
  hx_disc_opts o = {.p = s->p, .geo = HX_GEO_PRECOMPUTED, .overlap = 1, .kappa = &s->kappa, .lambda = &s->lambda, .dirichlet_tag = s->all_neumann ? notag : NULL};
  HX_TCALL(hx_disc_create(f->m, f->b, &o, &f->d));
  const int32_t E = hx_disc_num_elements(f->d);
  f->kap = malloc(sizeof(double) * (E + 1)), f->lam = malloc(sizeof(double) * (E + 1));
  for (int32_t e = 0; e < E; e++) f->kap[e] = s->kappa, f->lam[e] = s->lambda;
  HX_TCALL(hx_coarse_create(f->m, hx_disc_gs(f->d), hx_disc_ax(f->d), f->kap, f->lam, hx_disc_dirichlet_l(f->d), &s->co, &f->c));
  return 0;
}

static int fixture_destroy(fixture *f) {
  HX_TCALL(hx_coarse_destroy(&f->c));
  HX_TCALL(hx_disc_destroy(&f->d));
  HX_TCALL(hx_backend_destroy(&f->b));
  HX_TCALL(hx_mesh_destroy(&f->m));
  free(f->kap), free(f->lam);
  return 0;
}

/* a host copy of the fine gs mask (1 free, 0 Dirichlet) */
static double *fine_mask(const fixture *f) {
  const int64_t ng = hx_gs_num_local(hx_disc_gs(f->d));
  double *mk = malloc(sizeof(double) * (ng + 1));
  if (hx_gs_mask(hx_disc_gs(f->d)))
    hx_mem_to_host(f->b, mk, hx_gs_mask(hx_disc_gs(f->d)), sizeof(double) * ng);
  else
    for (int64_t i = 0; i < ng; i++) mk[i] = 1.0;
  return mk;
}

/* fine G coordinates (from any L copy) */
static void fine_coords(const fixture *f, double *gx, double *gy, double *gz) {
  const int32_t *map = hx_gs_map_host(hx_disc_gs(f->d));
  const double *x, *y, *z;
  hx_disc_coords(f->d, &x, &y, &z);
  for (int64_t l = 0; l < hx_disc_num_l(f->d); l++)
    if (map[l] >= 0) gx[map[l]] = x[l], gy[map[l]] = y[l], gz[map[l]] = z[l];
}

/* coarse row vector (owned rows) of a vertex function */
static void coarse_of_vertices(const fixture *f, double (*fn)(const double *), double *h_c) {
  int64_t lo, hi;
  hx_coarse_parcsr(f->c, &lo, &hi);
  const int32_t E = hx_disc_num_elements(f->d);
  int64_t *rows = malloc(sizeof(int64_t) * (8 * (size_t)E + 1));
  hx_coarse_element_rows(f->c, rows);
  const double *nodes = hx_mesh_element_nodes(f->m);
  const int npe = hx_mesh_nodes_per_element(f->m);
  for (int32_t e = 0; e < E; e++)
    for (int v = 0; v < 8; v++) {
      const int64_t r = rows[8 * (int64_t)e + v];
      if (r < lo || r > hi) continue;
      const int a = v & 1, b = (v >> 1) & 1, c = (v >> 2) & 1;
      const int idx = npe == 27 ? 2 * a + 6 * b + 18 * c : v;
      h_c[r - lo] = fn(nodes + ((int64_t)e * npe + idx) * 3);
    }
  free(rows);
}

static double owned_dot(MPI_Comm comm, int64_t n, const double *x, const double *y) {
  double s = 0, g = 0;
  for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
  MPI_Allreduce(&s, &g, 1, MPI_DOUBLE, MPI_SUM, comm);
  return g;
}

static double lin_f(const double *x) { return 0.3 + 1.7 * x[0] - 0.9 * x[1] + 2.3 * x[2]; }
static double tri_f(const double *x) { return x[0] * x[1] * x[2] + 0.5 * x[0] * x[1] - x[2] + 0.25; }

/* ------------------------------------------------------------ interp */
static int check_interp(const spec *s, double (*fn)(const double *), const char *what) {
  fixture f;
  if (fixture_create(MPI_COMM_WORLD, s, &f)) return 1;
  int64_t lo, hi;
  hx_coarse_parcsr(f.c, &lo, &hi);
  const int64_t ng = hx_gs_num_local(hx_disc_gs(f.d));
  double *hc = calloc(hi - lo + 2, sizeof(double)), *hz = malloc(sizeof(double) * (ng + 1));
  double *gx = malloc(sizeof(double) * (ng + 1)), *gy = malloc(sizeof(double) * (ng + 1)),
         *gz = malloc(sizeof(double) * (ng + 1));
  coarse_of_vertices(&f, fn, hc);
  HX_TCALL(hx_coarse_prolong(f.c, hc, hz));
  fine_coords(&f, gx, gy, gz);
  double err = 0, scale = 0;
  for (int64_t g = 0; g < ng; g++) {
    const double X[3] = {gx[g], gy[g], gz[g]};
    err = fmax(err, fabs(hz[g] - fn(X)));
    scale = fmax(scale, fabs(fn(X)));
  }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  /* a few roundings in the map, the coordinates and the 8-term sum */
  HX_ASSERT(err <= 1e-13 * scale, "%s: max |P f - f| = %.3e (scale %.3e)", what, err, scale);
  free(hc), free(hz), free(gx), free(gy), free(gz);
  return fixture_destroy(&f);
}

static int mode_interp(void) {
  spec s;
  spec_default(&s);
  s.all_neumann = 1;
  s.ext[0][0] = -0.5, s.ext[0][1] = 1.5, s.ext[1][1] = 0.7, s.ext[2][0] = 0.2, s.ext[2][1] = 1.1;
  for (int p = 1; p <= 7; p += 3) {
    s.p = p;
    if (check_interp(&s, lin_f, "linear, box")) return 1;
    if (check_interp(&s, tri_f, "trilinear, affine box")) return 1;
  }
  spec_default(&s);
  s.all_neumann = 1, s.nx = 6, s.ny = 4, s.nz = 2, s.eps = 0.3, s.p = 5;
  if (check_interp(&s, lin_f, "linear, Kershaw 0.3")) return 1;
  return 0;
}

/* ------------------------------------------------------------ transpose */
static int mode_transpose(void) {
  for (int variant = 0; variant < 3; variant++) {
    spec s;
    spec_default(&s);
    if (variant == 0) s.deform = 1, s.p = 4;
    if (variant == 1) s.nx = 6, s.ny = 2, s.nz = 2, s.eps = 0.3, s.p = 3;
    if (variant == 2) s.all_neumann = 1, s.p = 2;
    fixture f;
    if (fixture_create(MPI_COMM_WORLD, &s, &f)) return 1;
    int64_t lo, hi;
    hx_coarse_parcsr(f.c, &lo, &hi);
    const int64_t nr = hi - lo + 1, ng = hx_gs_num_local(hx_disc_gs(f.d)), no = hx_gs_num_owned(hx_disc_gs(f.d));
    double *c = malloc(sizeof(double) * (nr + 1)), *rc = malloc(sizeof(double) * (nr + 1));
    double *r = malloc(sizeof(double) * (ng + 1)), *pc = malloc(sizeof(double) * (ng + 1));
    double *mk = fine_mask(&f);
    hx_test_rng rng = {0x9e3779b97f4a7c15ull + 7919u * (uint64_t)g_rank};
    for (int64_t i = 0; i < nr; i++) c[i] = hx_test_rand(&rng);
    for (int64_t i = 0; i < ng; i++) r[i] = hx_test_rand(&rng) * mk[i];
    HX_TCALL(hx_coarse_restrict(f.c, r, rc));
    HX_TCALL(hx_coarse_prolong(f.c, c, pc));
    const double a = owned_dot(MPI_COMM_WORLD, nr, rc, c), b = owned_dot(MPI_COMM_WORLD, no, r, pc);
    /* scale: sum |r_g| |(Pc)_g| bounds both sums' rounding */
    double sabs = 0;
    for (int64_t i = 0; i < no; i++) sabs += fabs(r[i] * pc[i]);
    MPI_Allreduce(MPI_IN_PLACE, &sabs, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    HX_ASSERT(fabs(a - b) <= 1e-13 * sabs,
              "variant %d: (P^T r).c = %.17g, r.(P c) = %.17g, diff %.3e (scale %.3e)", variant, a, b,
              fabs(a - b), sabs);
    free(c), free(rc), free(r), free(pc), free(mk);
    if (fixture_destroy(&f)) return 1;
  }
  return 0;
}

/* ------------------------------------------------------------ galerkin */
/* The ParCSR matrix of a coarse operator, two vectors of its rows (a,
 * b: IJ and ParCSR views) and their global indices (n on this rank). */
typedef struct {
  HYPRE_ParCSRMatrix A;
  MPI_Comm comm;
  HYPRE_IJVector va, vb;
  HYPRE_ParVector pa, pb;
  HYPRE_Int n;
  HYPRE_BigInt *idx;
} ij_pair;

/* c's matrix and the two vectors created and initialised (0: no matrix on
 * this rank); set a's values, then ij_assemble */
static int ij_open(hx_coarse c, ij_pair *v) {
  int64_t lo, hi;
  v->A = (HYPRE_ParCSRMatrix)hx_coarse_parcsr(c, &lo, &hi);
  if (!v->A) return 0;
  HYPRE_ParCSRMatrixGetComm(v->A, &v->comm);
  HYPRE_IJVector *iv[2] = {&v->va, &v->vb};
  for (int k = 0; k < 2; k++) {
    HYPRE_IJVectorCreate(v->comm, (HYPRE_BigInt)lo, (HYPRE_BigInt)hi, iv[k]);
    HYPRE_IJVectorSetObjectType(*iv[k], HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(*iv[k]);
  }
  v->n = (HYPRE_Int)(hi - lo + 1);
  v->idx = malloc(sizeof(HYPRE_BigInt) * (v->n + 1));
  for (HYPRE_Int i = 0; i < v->n; i++) v->idx[i] = (HYPRE_BigInt)(lo + i);
  return 1;
}

static void ij_assemble(ij_pair *v) {
  HYPRE_IJVectorAssemble(v->va);
  HYPRE_IJVectorAssemble(v->vb);
  HYPRE_IJVectorGetObject(v->va, (void **)&v->pa);
  HYPRE_IJVectorGetObject(v->vb, (void **)&v->pb);
}

static void ij_close(ij_pair *v) {
  HYPRE_IJVectorDestroy(v->va);
  HYPRE_IJVectorDestroy(v->vb);
  free(v->idx);
}

static int matvec(hx_coarse c, const double *x, double *y) {
  ij_pair v;
  if (!ij_open(c, &v)) return 0;
  if (v.n > 0) HYPRE_IJVectorSetValues(v.va, v.n, v.idx, x);
  ij_assemble(&v);
  int err = HYPRE_ParCSRMatrixMatvec(1.0, v.A, v.pa, 0.0, v.pb);
  if (v.n > 0) HYPRE_IJVectorGetValues(v.vb, v.n, v.idx, y);
  ij_close(&v);
  return err;
}

static int mode_galerkin(void) {
  for (int variant = 0; variant < 3; variant++) {
    spec s;
    spec_default(&s);
    s.ext[0][1] = 2.0, s.ext[1][1] = 0.6, s.ext[2][0] = -1, s.ext[2][1] = 0.5; /* anisotropic cells */
    s.p = variant == 2 ? 6 : 3;
    s.lambda = variant == 1 ? 4.0 : 0.0;
    s.kappa = 1.7;
    fixture ff, fg;
    s.co.op = HX_COARSE_FEM;
    if (fixture_create(MPI_COMM_WORLD, &s, &ff)) return 1;
    s.co.op = HX_COARSE_GALERKIN;
    if (fixture_create(MPI_COMM_WORLD, &s, &fg)) return 1;
    int64_t lo, hi, lo2, hi2;
    hx_coarse_parcsr(ff.c, &lo, &hi);
    hx_coarse_parcsr(fg.c, &lo2, &hi2);
    HX_ASSERT(lo == lo2 && hi == hi2, "same rows (%lld..%lld vs %lld..%lld)", (long long)lo, (long long)hi,
              (long long)lo2, (long long)hi2);
    const int64_t n = hi - lo + 1;
    double *x = malloc(sizeof(double) * (n + 1)), *y1 = malloc(sizeof(double) * (n + 1)),
           *y2 = malloc(sizeof(double) * (n + 1));
    hx_test_rng rng = {12345u + 77u * (uint64_t)g_rank};
    for (int64_t i = 0; i < n; i++) x[i] = hx_test_rand(&rng);
    HX_ASSERT(matvec(ff.c, x, y1) == 0, "fem matvec");
    HX_ASSERT(matvec(fg.c, x, y2) == 0, "galerkin matvec");
    double d2 = 0, n2 = 0;
    for (int64_t i = 0; i < n; i++) d2 += (y1[i] - y2[i]) * (y1[i] - y2[i]), n2 += y1[i] * y1[i];
    MPI_Allreduce(MPI_IN_PLACE, &d2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &n2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* GLL quadrature with p+1 >= 3 points and 3^3 Gauss are both exact for the
     * Q1 integrands on affine cells: equal up to rounding */
    HX_ASSERT(sqrt(d2) <= 1e-12 * sqrt(n2),
              "variant %d (p=%d lambda=%g): |A_fem x - A_gal x| = %.3e, |A x| = %.3e", variant, s.p, s.lambda,
              sqrt(d2), sqrt(n2));
    hx_coarse_stats st1, st2;
    hx_coarse_get_stats(ff.c, &st1);
    hx_coarse_get_stats(fg.c, &st2);
    HX_ASSERT(st1.nnz_global == st2.nnz_global && st1.rows_global == st2.rows_global && st1.rows_global > 0,
              "same sizes: rows %lld/%lld nnz %lld/%lld", (long long)st1.rows_global,
              (long long)st2.rows_global, (long long)st1.nnz_global, (long long)st2.nnz_global);
    free(x), free(y1), free(y2);
    if (fixture_destroy(&ff) || fixture_destroy(&fg)) return 1;
  }
  return 0;
}

/* ------------------------------------------------------------ sym */
static int mode_sym(void) {
  for (int variant = 0; variant < 3; variant++) {
    spec s;
    spec_default(&s);
    s.nx = 6, s.ny = 4, s.nz = 4, s.p = 3;
    if (variant == 1) s.eps = 0.3, s.co.op = HX_COARSE_FEM, s.lambda = 0.5;
    if (variant == 2) s.deform = 1, s.co.cycles = 2, s.co.relax_type = 16, s.all_neumann = 0;
    fixture f;
    if (fixture_create(MPI_COMM_WORLD, &s, &f)) return 1;
    const int64_t ng = hx_gs_num_local(hx_disc_gs(f.d)), no = hx_gs_num_owned(hx_disc_gs(f.d));
    double *x = malloc(sizeof(double) * (ng + 1)), *y = malloc(sizeof(double) * (ng + 1));
    double *mx = malloc(sizeof(double) * (ng + 1)), *my = malloc(sizeof(double) * (ng + 1));
    double *mk = fine_mask(&f);
    const int64_t *gid = hx_gs_global_ids(hx_disc_gs(f.d));
    for (int64_t i = 0; i < ng; i++) {
      hx_test_rng r = {(uint64_t)gid[i] * 2654435761u + 11};
      x[i] = hx_test_rand(&r) * mk[i], y[i] = hx_test_rand(&r) * mk[i];
    }
    HX_TCALL(hx_coarse_apply(f.c, x, mx));
    HX_TCALL(hx_coarse_apply(f.c, y, my));
    const double xmy = owned_dot(MPI_COMM_WORLD, no, x, my), ymx = owned_dot(MPI_COMM_WORLD, no, y, mx);
    const double xx = owned_dot(MPI_COMM_WORLD, no, x, x), mymy = owned_dot(MPI_COMM_WORLD, no, my, my);
    const double xmx = owned_dot(MPI_COMM_WORLD, no, x, mx);
    const double tol = 1e-10 * sqrt(xx) * sqrt(mymy);
    HX_ASSERT(fabs(xmy - ymx) <= tol, "variant %d: |x.My - y.Mx| = %.3e > %.3e", variant, fabs(xmy - ymx),
              tol);
    HX_ASSERT(xmx > 0, "variant %d: x.Mx = %g", variant, xmx);
    if (g_rank == 0 && getenv("HX_VERBOSE"))
      printf("sym variant %d: |x.My - y.Mx| / (|x||My|) = %.3e\n", variant,
             fabs(xmy - ymx) / (sqrt(xx * mymy)));
    double zm = 0;
    for (int64_t i = 0; i < ng; i++) zm = fmax(zm, fabs(mx[i] * (1 - mk[i])));
    HX_ASSERT(zm == 0, "variant %d: masked entries of M x are zero (max %g)", variant, zm);
    free(x), free(y), free(mx), free(my), free(mk);
    if (fixture_destroy(&f)) return 1;
  }
  return 0;
}

/* ------------------------------------------------------------ thread */
typedef struct {
  hx_coarse c;
  const double *r;
  double *z;
  int err;
} job;

static void *coarse_thread(void *arg) {
  job *j = (job *)arg;
  j->err = hx_coarse_apply(j->c, j->r, j->z);
  if (j->err) hx_error_print(stderr, g_rank, 1);
  return NULL;
}

static int mode_thread(int provided) {
  if (provided < MPI_THREAD_MULTIPLE) {
    if (g_rank == 0) printf("SKIP: MPI does not provide MPI_THREAD_MULTIPLE (level %d)\n", provided);
    return HX_TEST_SKIP;
  }
  spec s;
  spec_default(&s);
  s.nx = 6, s.ny = 4, s.nz = 4, s.p = 4, s.deform = 1;
  fixture f;
  if (fixture_create(MPI_COMM_WORLD, &s, &f)) return 1;
  const int64_t ng = hx_gs_num_local(hx_disc_gs(f.d));
  double *r = malloc(sizeof(double) * (ng + 1)), *z1 = malloc(sizeof(double) * (ng + 1)),
         *z2 = malloc(sizeof(double) * (ng + 1));
  double *mk = fine_mask(&f);
  const int64_t *gid = hx_gs_global_ids(hx_disc_gs(f.d));
  for (int64_t i = 0; i < ng; i++) {
    hx_test_rng rr = {(uint64_t)gid[i] * 0x9e3779b1u + 3};
    r[i] = hx_test_rand(&rr) * mk[i];
  }
  HX_TCALL(hx_coarse_apply(f.c, r, z1));
  /* fine work on the fine gs communicator (operator applies with halo
   * exchanges and fused allreduces) while the coarse thread runs */
  double *dx, *dy;
  HX_TCALL(hx_mem_alloc(f.b, sizeof(double) * ng, (void **)&dx));
  HX_TCALL(hx_mem_alloc(f.b, sizeof(double) * ng, (void **)&dy));
  HX_TCALL(hx_mem_to_device(f.b, dx, r, sizeof(double) * ng));
  for (int rep = 0; rep < 3; rep++) {
    memset(z2, 0, sizeof(double) * ng);
    job j = {f.c, r, z2, 0};
    pthread_t th;
    HX_ASSERT(pthread_create(&th, NULL, coarse_thread, &j) == 0, "pthread_create");
    double xy;
    for (int k = 0; k < 20; k++) HX_TCALL(hx_op_apply(hx_disc_op(f.d), dx, dy, &xy));
    pthread_join(th, NULL);
    HX_ASSERT(j.err == 0, "coarse apply in a thread failed");
    HX_ASSERT(memcmp(z1, z2, sizeof(double) * ng) == 0, "rep %d: threaded coarse correction differs", rep);
  }
  hx_mem_free(f.b, (void **)&dx), hx_mem_free(f.b, (void **)&dy);
  free(r), free(z1), free(z2), free(mk);
  return fixture_destroy(&f);
}

/* ------------------------------------------------------------ ranks */
/* P A0 P^T r and P A0^{-1} P^T r (AMG run to convergence) as arrays indexed
 * by global fine GLL id (0 where this rank holds no copy) */
static int by_id(MPI_Comm comm, const spec *s, int64_t N, double *ax_id, double *sol_id) {
  fixture f;
  if (fixture_create(comm, s, &f)) return 1;
  int64_t lo, hi;
  hx_coarse_parcsr(f.c, &lo, &hi);
  const int64_t nr = hi - lo + 1, ng = hx_gs_num_local(hx_disc_gs(f.d));
  const int64_t *gid = hx_gs_global_ids(hx_disc_gs(f.d));
  double *r = malloc(sizeof(double) * (ng + 1)), *z = malloc(sizeof(double) * (ng + 1));
  double *rc = malloc(sizeof(double) * (nr + 1)), *yc = malloc(sizeof(double) * (nr + 1));
  double *mk = fine_mask(&f);
  for (int64_t i = 0; i < ng; i++) {
    hx_test_rng rr = {(uint64_t)gid[i] * 0x2545f491u + 5};
    r[i] = hx_test_rand(&rr) * mk[i];
  }
  HX_TCALL(hx_coarse_restrict(f.c, r, rc));
  HX_ASSERT(matvec(f.c, rc, yc) == 0, "matvec");
  HX_TCALL(hx_coarse_prolong(f.c, yc, z));
  for (int64_t i = 0; i < ng; i++) ax_id[gid[i] - 1] = z[i];
  HX_TCALL(hx_coarse_apply(f.c, r, z));
  for (int64_t i = 0; i < ng; i++) sol_id[gid[i] - 1] = z[i];
  (void)N;
  free(r), free(z), free(rc), free(yc), free(mk);
  return fixture_destroy(&f);
}

static int mode_ranks(void) {
  spec s;
  spec_default(&s);
  s.nx = 6, s.ny = 4, s.nz = 4, s.p = 3, s.eps = 0.3, s.lambda = 0.1;
  s.co.cycles = 40; /* converged: A0^{-1} to ~1e-12, independent of the AMG hierarchy */
  const int64_t N = (int64_t)(s.nx * s.p + 1) * (s.ny * s.p + 1) * (s.nz * s.p + 1);
  double *a1 = calloc(N, sizeof(double)), *s1 = calloc(N, sizeof(double));
  double *a2 = malloc(N * sizeof(double)), *s2 = malloc(N * sizeof(double));
  for (int64_t i = 0; i < N; i++) a2[i] = s2[i] = NAN; /* NaN: no copy on this rank */
  if (by_id(MPI_COMM_SELF, &s, N, a1, s1)) return 1;
  if (by_id(MPI_COMM_WORLD, &s, N, a2, s2)) return 1;
  double da = 0, na = 0, ds = 0, ns = 0;
  for (int64_t i = 0; i < N; i++) {
    na = fmax(na, fabs(a1[i])), ns = fmax(ns, fabs(s1[i]));
    if (!isnan(a2[i])) da = fmax(da, fabs(a1[i] - a2[i])), ds = fmax(ds, fabs(s1[i] - s2[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &da, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &ds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  HX_ASSERT(da <= 1e-12 * na, "P A0 P^T r: 1 rank vs %d ranks differ by %.3e (scale %.3e)", g_size, da, na);
  HX_ASSERT(ds <= 1e-8 * ns, "P A0^-1 P^T r: 1 rank vs %d ranks differ by %.3e (scale %.3e)", g_size, ds, ns);
  if (g_rank == 0 && getenv("HX_VERBOSE"))
    printf("ranks: A0 diff %.3e / %.3e, solve diff %.3e / %.3e\n", da, na, ds, ns);
  free(a1), free(s1), free(a2), free(s2);
  return 0;
}

/* ------------------------------------------------------------ alldir */
static int mode_alldir(void) {
  spec s;
  spec_default(&s);
  s.nx = 1, s.ny = 1, s.nz = g_size; /* every vertex on the boundary: all Dirichlet */
  s.p = 3;
  fixture f;
  if (fixture_create(MPI_COMM_WORLD, &s, &f)) return 1;
  hx_coarse_stats st;
  hx_coarse_get_stats(f.c, &st);
  HX_ASSERT(st.rows_global == 0, "rows %lld", (long long)st.rows_global);
  const int64_t ng = hx_gs_num_local(hx_disc_gs(f.d));
  double *r = malloc(sizeof(double) * (ng + 1)), *z = malloc(sizeof(double) * (ng + 1));
  for (int64_t i = 0; i < ng; i++) r[i] = 1.0, z[i] = 7.0;
  HX_TCALL(hx_coarse_apply(f.c, r, z));
  double zm = 0;
  for (int64_t i = 0; i < ng; i++) zm = fmax(zm, fabs(z[i]));
  HX_ASSERT(zm == 0, "z = 0 (max %g)", zm);
  free(r), free(z);
  if (fixture_destroy(&f)) return 1;
  /* 2 x 2 x 2 * size: one interior vertex per 2 ranks on average, so
   * some ranks own no row */
  spec_default(&s);
  s.nx = 2, s.ny = 2, s.nz = 2 * g_size, s.p = 2;
  if (fixture_create(MPI_COMM_WORLD, &s, &f)) return 1;
  hx_coarse_get_stats(f.c, &st);
  HX_ASSERT(st.rows_global == 2 * g_size - 1, "rows %lld", (long long)st.rows_global);
  const int64_t ng2 = hx_gs_num_local(hx_disc_gs(f.d));
  r = malloc(sizeof(double) * (ng2 + 1)), z = malloc(sizeof(double) * (ng2 + 1));
  double *mk = fine_mask(&f);
  for (int64_t i = 0; i < ng2; i++) r[i] = mk[i];
  HX_TCALL(hx_coarse_apply(f.c, r, z));
  const double rz = owned_dot(MPI_COMM_WORLD, hx_gs_num_owned(hx_disc_gs(f.d)), r, z);
  HX_ASSERT(rz > 0, "r.Mr = %g", rz);
  free(r), free(z), free(mk);
  return fixture_destroy(&f);
}

/* ------------------------------------------------------------ bench */
typedef struct {
  hx_coarse c;
  hx_backend b;
  int64_t ng;
  double *dinv, *hr, *hz;
  int use_fine, use_coarse;
} twolevel;

static int twolevel_apply(void *ctx, const double *d_r, double *d_z) {
  twolevel *t = (twolevel *)ctx;
  HX_CALL(hx_mem_to_host(t->b, t->hr, d_r, sizeof(double) * t->ng));
  if (t->use_coarse)
    HX_CALL(hx_coarse_apply(t->c, t->hr, t->hz));
  else
    memset(t->hz, 0, sizeof(double) * t->ng);
  if (t->use_fine)
    for (int64_t i = 0; i < t->ng; i++) t->hz[i] += t->dinv[i] * t->hr[i];
  HX_CALL(hx_mem_to_device(t->b, d_z, t->hz, sizeof(double) * t->ng));
  return HX_SUCCESS;
}
static int twolevel_destroy(void *ctx) {
  (void)ctx;
  return HX_SUCCESS;
}

static double u_smooth(const void *ctx, double x, double y, double z) {
  (void)ctx;
  return sin(M_PI * x) * sin(M_PI * y) * sin(M_PI * z);
}

static int bench_one(const spec *s, int ranks_note) {
  fixture f;
  double t0 = hx_wtime();
  if (fixture_create(MPI_COMM_WORLD, s, &f)) return 1;
  double tc = hx_wtime() - t0;
  const int64_t ng = hx_gs_num_local(hx_disc_gs(f.d));
  twolevel t = {f.c, f.b, ng, NULL, NULL, NULL, 1, 1};
  t.dinv = malloc(sizeof(double) * ng), t.hr = malloc(sizeof(double) * ng),
  t.hz = malloc(sizeof(double) * ng);
  double *dd, *db, *dx;
  HX_TCALL(hx_mem_alloc(f.b, sizeof(double) * ng, (void **)&dd));
  HX_TCALL(hx_mem_alloc(f.b, sizeof(double) * ng, (void **)&db));
  HX_TCALL(hx_mem_alloc(f.b, sizeof(double) * ng, (void **)&dx));
  HX_TCALL(hx_op_diagonal(hx_disc_op(f.d), dd));
  HX_TCALL(hx_mem_to_host(f.b, t.dinv, dd, sizeof(double) * ng));
  for (int64_t i = 0; i < ng; i++) t.dinv[i] = 1.0 / t.dinv[i];
  /* right-hand side b = A u for a smooth u: the coarse correction of b
   * should approximate u */
  double *hl = malloc(sizeof(double) * hx_disc_num_l(f.d)), *hu = malloc(sizeof(double) * ng);
  HX_TCALL(hx_disc_eval(f.d, (hx_field){u_smooth, NULL, NULL}, hl));
  const int32_t *map = hx_gs_map_host(hx_disc_gs(f.d));
  for (int64_t l = 0; l < hx_disc_num_l(f.d); l++)
    if (map[l] >= 0) hu[map[l]] = hl[l];
  HX_TCALL(hx_mem_to_device(f.b, dx, hu, sizeof(double) * ng));
  HX_TCALL(hx_gs_apply_mask(hx_disc_gs(f.d), dx));
  HX_TCALL(hx_mem_to_host(f.b, hu, dx, sizeof(double) * ng));
  HX_TCALL(hx_op_apply(hx_disc_op(f.d), dx, db, NULL));
  HX_TCALL(hx_mem_to_host(f.b, t.hr, db, sizeof(double) * ng));
  HX_TCALL(hx_coarse_apply(f.c, t.hr, t.hz));
  const int64_t no = hx_gs_num_owned(hx_disc_gs(f.d));
  double e2 = 0, u2 = 0;
  for (int64_t i = 0; i < no; i++) e2 += (t.hz[i] - hu[i]) * (t.hz[i] - hu[i]), u2 += hu[i] * hu[i];
  MPI_Allreduce(MPI_IN_PLACE, &e2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &u2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  /* PCG: Jacobi alone and Jacobi + coarse (additive), b random (from the
   * global ids: the same for any rank count), masked */
  {
    const int64_t *gid = hx_gs_global_ids(hx_disc_gs(f.d));
    for (int64_t i = 0; i < ng; i++) {
      hx_test_rng rr = {(uint64_t)gid[i] * 0x9e3779b1u + 17};
      t.hr[i] = hx_test_rand(&rr);
    }
    HX_TCALL(hx_mem_to_device(f.b, db, t.hr, sizeof(double) * ng));
    HX_TCALL(hx_gs_apply_mask(hx_disc_gs(f.d), db));
  }
  int its[2];
  double tsolve[2];
  for (int k = 0; k < 2; k++) {
    t.use_coarse = k;
    const hx_pc_ops ops = {.type = "twolevel", .apply = twolevel_apply, .destroy = twolevel_destroy, .passes = 2};
    hx_pc pc;
    HX_TCALL(hx_pc_create_shell(hx_disc_op(f.d), &ops, &t, 0, NULL, &pc));
    hx_pcg_opts po;
    hx_pcg_opts_default(&po);
    po.rtol = 1e-8, po.max_iterations = 3000;
    hx_pcg_result res;
    HX_TCALL(hx_mem_zero(f.b, dx, sizeof(double) * ng));
    double ts = hx_wtime();
    HX_TCALL(hx_pcg_solve(hx_disc_op(f.d), pc, db, dx, &po, &res));
    HX_TCALL(hx_pc_destroy(&pc));
    tsolve[k] = hx_wtime() - ts;
    its[k] = res.iterations;
  }
  /* apply timing */
  hx_coarse_stats st0, st;
  hx_coarse_get_stats(f.c, &st0);
  const int reps = 10;
  double ta = hx_wtime();
  for (int k = 0; k < reps; k++) HX_TCALL(hx_coarse_apply(f.c, t.hr, t.hz));
  ta = (hx_wtime() - ta) / reps;
  MPI_Allreduce(MPI_IN_PLACE, &ta, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  hx_coarse_get_stats(f.c, &st);
  if (g_rank == 0)
    printf(
        "%-8s n=%dx%dx%d p=%d eps=%.2f ranks=%d | rows %lld nnz %lld levels %d opc %.2f gridc %.2f | "
        "create %.3f s (assembly %.3f, amg setup %.3f) | apply %.2f ms (restrict %.2f solve %.2f prolong "
        "%.2f) | "
        "|Mb-u|/|u| %.3f | PCG its jacobi %d, jacobi+coarse %d (%.2f s)\n",
        s->co.op == HX_COARSE_FEM ? "fem" : "galerkin", s->nx, s->ny, s->nz, s->p, s->eps, ranks_note,
        (long long)st.rows_global, (long long)st.nnz_global, st.amg_levels, st.operator_complexity,
        st.grid_complexity, tc, st.t_assembly, st.t_amg_setup, 1e3 * ta,
        1e3 * (st.t_restrict - st0.t_restrict) / reps, 1e3 * (st.t_solve - st0.t_solve) / reps,
        1e3 * (st.t_prolong - st0.t_prolong) / reps, sqrt(e2 / u2), its[0], its[1], tsolve[1]);
  free(t.dinv), free(t.hr), free(t.hz), free(hl), free(hu);
  hx_mem_free(f.b, (void **)&dd), hx_mem_free(f.b, (void **)&db), hx_mem_free(f.b, (void **)&dx);
  return fixture_destroy(&f);
}

static int mode_bench(int argc, char **argv) {
  spec s;
  spec_default(&s);
  s.nx = s.ny = s.nz = 6, s.p = 3;
  int both = 1;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--p") && i + 1 < argc)
      s.p = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--n") && i + 1 < argc)
      s.nx = s.ny = s.nz = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--eps") && i + 1 < argc)
      s.eps = atof(argv[++i]);
    else if (!strcmp(argv[i], "--lambda") && i + 1 < argc)
      s.lambda = atof(argv[++i]);
    else if (!strcmp(argv[i], "--strong") && i + 1 < argc)
      s.co.strong_threshold = atof(argv[++i]);
    else if (!strcmp(argv[i], "--agg") && i + 1 < argc)
      s.co.agg_levels = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--relax") && i + 1 < argc)
      s.co.relax_type = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
      s.co.cycles = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--coarsen") && i + 1 < argc)
      s.co.coarsen_type = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--fem"))
      both = 0, s.co.op = HX_COARSE_FEM;
    else if (!strcmp(argv[i], "--galerkin"))
      both = 0, s.co.op = HX_COARSE_GALERKIN;
  }
  if (both) {
    s.co.op = HX_COARSE_FEM;
    if (bench_one(&s, g_size)) return 1;
    s.co.op = HX_COARSE_GALERKIN;
  }
  return bench_one(&s, g_size);
}

/* ------------------------------------------------------------ amg */
/* BoomerAMG parameter study on the coarse matrix itself: V-cycles (as a
 * stationary solver, random b) to a 1e-8 relative residual, per setting */
static int mode_amg(int argc, char **argv) {
  spec s;
  spec_default(&s);
  s.nx = s.ny = s.nz = 24, s.p = 1, s.eps = 0.3;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      s.nx = s.ny = s.nz = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--eps") && i + 1 < argc)
      s.eps = atof(argv[++i]);
  }
  fixture f;
  if (fixture_create(MPI_COMM_WORLD, &s, &f)) return 1;
  ij_pair v; /* a: b, b: x */
  if (!ij_open(f.c, &v)) {
    HX_ASSERT(0, "bench: no coarse matrix on rank %d", g_rank);
    return 1;
  }
  const HYPRE_Int n = v.n;
  double *val = malloc(sizeof(double) * (n + 1)), *zero = calloc(n + 1, sizeof(double));
  hx_test_rng rng = {99u + 13u * (uint64_t)g_rank};
  for (HYPRE_Int i = 0; i < n; i++) val[i] = hx_test_rand(&rng);
  HYPRE_IJVectorSetValues(v.va, n, v.idx, val);
  ij_assemble(&v);
  hx_coarse_stats st;
  hx_coarse_get_stats(f.c, &st);
  if (g_rank == 0)
    printf("A0: %lld rows, %lld nnz (Kershaw eps %.2f, %d^3 elements)\n", (long long)st.rows_global,
           (long long)st.nnz_global, s.eps, s.nx);
  const struct {
    int relax, coarsen, interp, agg, pmax;
    double strong;
  } cfg[] = {{8, 10, 6, 0, 4, 0.5},  {8, 10, 6, 0, 4, 0.25}, {8, 10, 6, 1, 4, 0.5},
             {8, 8, 6, 0, 4, 0.5},   {6, 10, 6, 0, 4, 0.5},  {16, 10, 6, 0, 4, 0.5},
             {18, 10, 6, 0, 4, 0.5}, {8, 10, 6, 0, 2, 0.5},  {8, 6, 0, 0, 0, 0.5}};
  for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
    HYPRE_Solver amg;
    HYPRE_BoomerAMGCreate(&amg);
    HYPRE_BoomerAMGSetTol(amg, 1e-8);
    HYPRE_BoomerAMGSetMaxIter(amg, 200);
    HYPRE_BoomerAMGSetPrintLevel(amg, 0);
    HYPRE_BoomerAMGSetRelaxType(amg, cfg[k].relax);
    HYPRE_BoomerAMGSetCoarsenType(amg, cfg[k].coarsen);
    HYPRE_BoomerAMGSetInterpType(amg, cfg[k].interp);
    HYPRE_BoomerAMGSetAggNumLevels(amg, cfg[k].agg);
    HYPRE_BoomerAMGSetPMaxElmts(amg, cfg[k].pmax);
    HYPRE_BoomerAMGSetStrongThreshold(amg, cfg[k].strong);
    HYPRE_IJVectorSetValues(v.vb, n, v.idx, zero);
    MPI_Barrier(v.comm);
    double t0 = hx_wtime();
    HYPRE_BoomerAMGSetup(amg, v.A, v.pa, v.pb);
    double t1 = hx_wtime();
    HYPRE_BoomerAMGSolve(amg, v.A, v.pa, v.pb);
    double t2 = hx_wtime();
    HYPRE_Int its;
    double rel;
    HYPRE_BoomerAMGGetNumIterations(amg, &its);
    HYPRE_BoomerAMGGetFinalRelativeResidualNorm(amg, &rel);
    HYPRE_ClearAllErrors();
    if (g_rank == 0)
      printf(
          "relax %2d coarsen %2d interp %d agg %d pmax %d strong %.2f: %3d cycles (rate %.3f), setup %.1f "
          "ms, "
          "%.2f ms/cycle\n",
          cfg[k].relax, cfg[k].coarsen, cfg[k].interp, cfg[k].agg, cfg[k].pmax, cfg[k].strong, (int)its,
          pow(rel, 1.0 / its), 1e3 * (t1 - t0), 1e3 * (t2 - t1) / its);
    HYPRE_BoomerAMGDestroy(amg);
  }
  ij_close(&v);
  free(val), free(zero);
  return fixture_destroy(&f);
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const char *mode = argc > 1 ? argv[1] : "";
  int rc;
  if (!strcmp(mode, "interp"))
    rc = mode_interp();
  else if (!strcmp(mode, "transpose"))
    rc = mode_transpose();
  else if (!strcmp(mode, "galerkin"))
    rc = mode_galerkin();
  else if (!strcmp(mode, "sym"))
    rc = mode_sym();
  else if (!strcmp(mode, "thread"))
    rc = mode_thread(provided);
  else if (!strcmp(mode, "ranks"))
    rc = mode_ranks();
  else if (!strcmp(mode, "alldir"))
    rc = mode_alldir();
  else if (!strcmp(mode, "bench"))
    rc = mode_bench(argc, argv);
  else if (!strcmp(mode, "amg"))
    rc = mode_amg(argc, argv);
  else {
    if (g_rank == 0)
      fprintf(stderr, "usage: t330-coarse interp|transpose|galerkin|sym|thread|ranks|alldir|bench\n");
    rc = 2;
  }
  int fail = rc == HX_TEST_SKIP ? 0 : (rc || hx_test_result()), anyfail;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rc == HX_TEST_SKIP) return HX_TEST_SKIP;
  return anyfail;
}
