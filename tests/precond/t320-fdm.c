/* Fine level of the two-level Schwarz preconditioner (precond/fdm.c):
 *   exact    (1 rank) on a uniform 3^3 box the box inverse of the middle
 *            element inverts the assembled operator restricted to its whole
 *            (p+3)^3 box: A_box^{-1} A_box x = x and A_box A_box^{-1} x = x
 *            to ~1e-12, p = 1..5 (p = 1 on 5^3), lambda 0 and > 0, unequal h
 *            per direction
 *   sym      hx_fdm_apply symmetric (|x.My - y.Mx| <= 1e-12 |x||My|) and
 *            positive, masked entries of z zero, z consistent over holders,
 *            z of a fixed global vector equal (1e-13) to a 1-rank run made on
 *            rank 0; box and Kershaw meshes, weights none and sqrt, Dirichlet
 *            and Neumann boundaries, lambda 0 and > 0
 *   overlap  overlapped exchange gives the same bits as the blocking one
 *   iters    one-level Schwarz needs clearly fewer PCG iterations than
 *            Jacobi (p = 4, 4^3 box); -v prints the counts
 *   fp32     the FP32 level (hx_fdm_opts.prec = HX_F32) agrees with the FP64
 *            one to FP32 accuracy: |z32 - z64| <= 1e-5 |z64| on random
 *            vectors, p = 1..8 (every box size class of the 8-lane AVX2
 *            padding), box and Kershaw, weights none/sqrt/ras, Neumann and
 *            Helmholtz; symmetric to FP32 rounding (|x.My - y.Mx| <= 1e-5
 *            |x||My|); masked entries zero; the grouped layout in use
 *            exactly where the kernel has it (not with
 *            HEXCG_FDM_GROUPED=0); with --backend cuda the CUDA FP32 apply
 *            agrees with the CPU FP32 apply (1e-5)
 *   share    the 1D eigenpairs shared between elements with identical 1D
 *            problems give the same bits as one solve per element (box
 *            inverse of every element, whole apply); box, Kershaw, p = 1..5,
 *            kappa jumps, Neumann, lambda > 0
 *   xnum     the extended numbering derived from the fine one gives the
 *            same bits as the extended ids' own gather-scatter
 *            (HEXCG_FDM_XNUM=0): box inverses and the apply, FP64 and FP32
 *            (grouped layout, also with HEXCG_FDM_GROUPED=keep-g)
 *   bench    time of hx_fdm_apply (FP64 and FP32, the same run) vs one
 *            operator apply, best of REPS: bench [NX] [P] [REPS] (ctest runs
 *            a tiny smoke case)
 * With --backend cuda, sym also compares hx_fdm_apply with the CPU result
 * (1e-13 relative); skips (77) without a device.
 * Usage: t320-fdm MODE [--backend cpu|cuda] [-v] */
#include "hx_disc.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "precond_impl.h"

/* node coordinate k (0: x, 1: y, 2: z) L-vector of d */
static const double *hx_disc_coord(hx_disc d, int k) {
  const double *c[3];
  hx_disc_coords(d, &c[0], &c[1], &c[2]);
  return c[k];
}

static int g_rank = 0, g_size = 1, g_verbose = 0;
static const char *g_backend = "cpu";

typedef struct {
  int nx, ny, nz, p, neumann, overlap, geom_order, kjump; /* kjump: kappa * (1 + gid % 3) per element */
  double eps, kappa, lambda, ext[3][2];
  hx_fdm_weight weight;
  hx_precision prec;
} cfg;

static void cfg_default(cfg *c) {
  memset(c, 0, sizeof *c);
  c->nx = c->ny = c->nz = 3;
  c->p = 3;
  c->eps = 1.0;
  c->kappa = 1.0;
  c->geom_order = 1;
  for (int d = 0; d < 3; d++) c->ext[d][1] = 1.0;
}

/* the defaults on the Kershaw mesh (eps 0.3, 6 x 2 x 2 elements) */
static void cfg_kershaw(cfg *c) {
  cfg_default(c);
  c->nx = 6, c->ny = 2, c->nz = 2, c->eps = 0.3;
}

typedef struct {
  hx_mesh m;
  hx_backend b;
  hx_disc d;
  hx_fdm f;
} ctx;

static int ctx_create(MPI_Comm comm, const char *backend, const cfg *c, ctx *x) {
  memset(x, 0, sizeof *x);
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = c->nx, mo.ny = c->ny, mo.nz = c->nz;
  mo.kershaw_eps = c->eps;
  mo.geom_order = c->geom_order;
  memcpy(mo.extent, c->ext, sizeof mo.extent);
  HX_TCALL(hx_mesh_create_box(comm, &mo, &x->m));
  HX_TCALL(hx_backend_create(backend, &x->b));
  int notag[6] = {0, 0, 0, 0, 0, 0};
  hx_disc_opts o = {.p = c->p, .geo = HX_GEO_PRECOMPUTED, .overlap = 1, .kappa = &c->kappa, .lambda = &c->lambda,
                    .dirichlet_tag = c->neumann ? notag : NULL};
  HX_TCALL(hx_disc_create(x->m, x->b, &o, &x->d));
  const int32_t E = hx_disc_num_elements(x->d);
  const int32_t *ftag = hx_mesh_face_tags(x->m);
  int *dface = calloc(6 * (size_t)E + 1, sizeof(int));
  double *kap = calloc((size_t)E + 1, sizeof(double)), *lam = calloc((size_t)E + 1, sizeof(double));
  for (int32_t e = 0; e < E; e++) {
    kap[e] = c->kappa * (c->kjump ? 1.0 + (double)(hx_mesh_element_global_ids(x->m)[e] % 3) : 1.0);
    lam[e] = c->lambda;
    for (int f = 0; f < 6; f++) dface[6 * e + f] = !c->neumann && ftag[6 * e + f] >= 0;
  }
  hx_fdm_opts fo = {x->m, hx_disc_gs(x->d), c->p, kap, lam, dface, c->weight, c->overlap, c->prec, NULL};
  int ierr = hx_fdm_create(&fo, &x->f);
  free(dface), free(kap), free(lam);
  HX_TCALL(ierr);
  return 0;
}

static int ctx_destroy(ctx *x) {
  HX_TCALL(hx_fdm_destroy(&x->f));
  HX_TCALL(hx_disc_destroy(&x->d));
  HX_TCALL(hx_backend_destroy(&x->b));
  HX_TCALL(hx_mesh_destroy(&x->m));
  return 0;
}

/* host G-vector from the global ids (seed s): consistent across ranks */
static void g_random(hx_gs gs, uint64_t s, double *h) {
  const int64_t ng = hx_gs_num_local(gs);
  const int64_t *gid = hx_gs_global_ids(gs);
  for (int64_t i = 0; i < ng; i++) {
    hx_test_rng r = {(uint64_t)gid[i] * 2654435761u + 7 + 1000003 * s};
    h[i] = hx_test_rand(&r);
    h[i] = hx_test_rand(&r);
  }
}

/* host G-vector of a smooth function of the node coordinates */
static void g_smooth(hx_disc d, double *h) {
  const int32_t *map = hx_gs_map_host(hx_disc_gs(d));
  for (int64_t l = 0; l < hx_disc_num_l(d); l++)
    if (map[l] >= 0) {
      const double x = hx_disc_coord(d, 0)[l], y = hx_disc_coord(d, 1)[l], z = hx_disc_coord(d, 2)[l];
      h[map[l]] = sin(3.0 * x + 0.5) * cos(2.0 * y - 0.3) * (1.0 + z * z) + 0.3 * x * y;
    }
}

/* z = M r on the backend, host in/out (r masked first) */
static int fdm_apply_host(ctx *x, double *h_r, double *h_z) {
  const int64_t ng = hx_gs_num_local(hx_disc_gs(x->d));
  const size_t bytes = sizeof(double) * (size_t)(ng + 1);
  double *dr, *dz;
  HX_TCALL(hx_mem_alloc(x->b, bytes, (void **)&dr));
  HX_TCALL(hx_mem_alloc(x->b, bytes, (void **)&dz));
  HX_TCALL(hx_mem_to_device(x->b, dr, h_r, sizeof(double) * (size_t)ng));
  HX_TCALL(hx_gs_apply_mask(hx_disc_gs(x->d), dr));
  HX_TCALL(hx_mem_to_host(x->b, h_r, dr, sizeof(double) * (size_t)ng));
  HX_TCALL(hx_fdm_apply(x->f, dr, dz));
  HX_TCALL(hx_mem_to_host(x->b, h_z, dz, sizeof(double) * (size_t)ng));
  hx_mem_free(x->b, (void **)&dr), hx_mem_free(x->b, (void **)&dz);
  return 0;
}

/* owned-entry dot of host G-vectors + allreduce */
static double g_dot(hx_gs gs, const double *a, const double *b) {
  const int64_t no = hx_gs_num_owned(gs);
  double s = 0.0, t = 0.0;
  for (int64_t i = 0; i < no; i++) s += a[i] * b[i];
  MPI_Allreduce(&s, &t, 1, MPI_DOUBLE, MPI_SUM, hx_gs_comm(gs));
  return t;
}

/* ---------------------------------------------------------------- exact */
static int mode_exact(void) {
  if (g_size != 1) {
    if (g_rank == 0) printf("SKIP: exact runs on 1 rank\n");
    return HX_TEST_SKIP;
  }
  for (int p = 1; p <= 5; p++)
    for (int il = 0; il < 2; il++) {
      cfg c;
      cfg_default(&c);
      c.p = p, c.kappa = 1.3, c.lambda = il ? 2.7 : 0.0;
      c.ext[0][1] = 1.0, c.ext[1][0] = -0.5, c.ext[1][1] = 1.5, c.ext[2][1] = 0.6;
      /* p = 1: the box reaches the neighbours' far vertices, which must be
       * interior (the element beyond is mirrored): 5^3 elements */
      const int ne = p == 1 ? 5 : 3, mid = ne / 2;
      c.nx = c.ny = c.nz = ne;
      ctx x;
      if (ctx_create(MPI_COMM_SELF, g_backend, &c, &x)) return 1;
      const int n = p + 1, m = p + 3, m3 = m * m * m;
      const int32_t emid = mid + ne * (mid + ne * mid); /* the middle element, local = global on 1 rank */
      double t[16], w[16];
      HX_TCALL(hx_gll(n, t, w));
      /* coordinates of the box points -1..p+1 in each direction */
      double bc[3][18];
      for (int d = 0; d < 3; d++) {
        const double h = (c.ext[d][1] - c.ext[d][0]) / ne, x0 = c.ext[d][0] + (mid - 1) * h;
        for (int a = 0; a < n; a++) bc[d][1 + a] = x0 + h + 0.5 * h * (1.0 + t[a]);
        bc[d][0] = x0 + 0.5 * h * (1.0 + t[p - 1]);
        bc[d][m - 1] = x0 + 2.0 * h + 0.5 * h * (1.0 + t[1]);
      }
      /* G index of each box point, by coordinates */
      const int32_t *map = hx_gs_map_host(hx_disc_gs(x.d));
      int64_t *gi = malloc(sizeof(int64_t) * m3);
      for (int q = 0; q < m3; q++) {
        const int A = q % m, B = (q / m) % m, C = q / (m * m);
        gi[q] = -1;
        for (int64_t l = 0; l < hx_disc_num_l(x.d) && gi[q] < 0; l++)
          if (fabs(hx_disc_coord(x.d, 0)[l] - bc[0][A]) < 1e-12 && fabs(hx_disc_coord(x.d, 1)[l] - bc[1][B]) < 1e-12 &&
              fabs(hx_disc_coord(x.d, 2)[l] - bc[2][C]) < 1e-12)
            gi[q] = map[l];
        HX_ASSERT(gi[q] >= 0, "p=%d box point %d found among the GLL nodes", p, q);
      }
      /* A_box by columns: the assembled operator on unit vectors */
      const int64_t ng = hx_op_size(hx_disc_op(x.d));
      double *Ab = malloc(sizeof(double) * (size_t)m3 * m3), *hu = calloc((size_t)ng, sizeof(double)),
             *hv = malloc(sizeof(double) * (size_t)ng);
      double *du, *dv;
      HX_TCALL(hx_mem_alloc(x.b, sizeof(double) * ng, (void **)&du));
      HX_TCALL(hx_mem_alloc(x.b, sizeof(double) * ng, (void **)&dv));
      for (int q = 0; q < m3; q++) {
        hu[gi[q]] = 1.0;
        HX_TCALL(hx_mem_to_device(x.b, du, hu, sizeof(double) * ng));
        HX_TCALL(hx_op_apply_unmasked(hx_disc_op(x.d), du, dv));
        HX_TCALL(hx_mem_to_host(x.b, hv, dv, sizeof(double) * ng));
        hu[gi[q]] = 0.0;
        for (int r = 0; r < m3; r++) Ab[(size_t)r * m3 + q] = hv[gi[r]];
      }
      double *xb = malloc(sizeof(double) * m3), *yb = malloc(sizeof(double) * m3),
             *zb = malloc(sizeof(double) * m3);
      hx_test_rng rng = {12345 + p};
      double xmax = 0.0, err1 = 0.0, err2 = 0.0, ymax = 0.0;
      for (int q = 0; q < m3; q++) xb[q] = hx_test_rand(&rng), xmax = fmax(xmax, fabs(xb[q]));
      /* A^{-1} A x = x */
      for (int r = 0; r < m3; r++) {
        double s = 0.0;
        for (int q = 0; q < m3; q++) s += Ab[(size_t)r * m3 + q] * xb[q];
        yb[r] = s;
      }
      HX_TCALL(hx_fdm_box_solve(x.f, emid, yb, zb));
      for (int q = 0; q < m3; q++) err1 = fmax(err1, fabs(zb[q] - xb[q]));
      /* A A^{-1} x = x */
      HX_TCALL(hx_fdm_box_solve(x.f, emid, xb, zb));
      for (int r = 0; r < m3; r++) {
        double s = 0.0;
        for (int q = 0; q < m3; q++) s += Ab[(size_t)r * m3 + q] * zb[q];
        err2 = fmax(err2, fabs(s - xb[r]));
        ymax = fmax(ymax, fabs(xb[r]));
      }
      if (g_verbose)
        printf("exact p=%d lambda=%g: |A^-1 A x - x| = %.2e, |A A^-1 x - x| = %.2e\n", p, c.lambda,
               err1 / xmax, err2 / ymax);
      HX_ASSERT(err1 <= 1e-12 * xmax, "p=%d lambda=%g: A_box^{-1} A_box x = x, error %.3e", p, c.lambda,
                err1 / xmax);
      HX_ASSERT(err2 <= 1e-11 * ymax, "p=%d lambda=%g: A_box A_box^{-1} x = x, error %.3e", p, c.lambda,
                err2 / ymax);
      free(gi), free(Ab), free(hu), free(hv), free(xb), free(yb), free(zb);
      hx_mem_free(x.b, (void **)&du), hx_mem_free(x.b, (void **)&dv);
      if (ctx_destroy(&x)) return 1;
    }
  return 0;
}

/* ---------------------------------------------------------------- sym */
/* z of the smooth global vector gathered to rank 0 as (gid, z) pairs, sorted by id */
typedef struct {
  int64_t id;
  double z;
} idval;
static int cmp_idval(const void *a, const void *b) {
  const int64_t x = ((const idval *)a)->id, y = ((const idval *)b)->id;
  return x < y ? -1 : x > y;
}

static int check_case(const cfg *c) {
  ctx x;
  if (ctx_create(MPI_COMM_WORLD, g_backend, c, &x)) return 1;
  hx_gs gs = hx_disc_gs(x.d);
  const int64_t ng = hx_gs_num_local(gs), no = hx_gs_num_owned(gs);
  double *hx_ = malloc(sizeof(double) * (ng + 1)), *hy = malloc(sizeof(double) * (ng + 1));
  double *zx = malloc(sizeof(double) * (ng + 1)), *zy = malloc(sizeof(double) * (ng + 1));
  g_random(gs, 1, hx_), g_random(gs, 2, hy);
  if (fdm_apply_host(&x, hx_, zx) || fdm_apply_host(&x, hy, zy)) return 1;
  const double xmy = g_dot(gs, hx_, zy), ymx = g_dot(gs, hy, zx), xmx = g_dot(gs, hx_, zx);
  const double nx = sqrt(g_dot(gs, hx_, hx_)), nmy = sqrt(g_dot(gs, zy, zy));
  const char *tag = c->eps < 1 ? "kershaw" : "box";
  HX_ASSERT(fabs(xmy - ymx) <= 1e-12 * nx * nmy,
            "%s p=%d weight=%d neumann=%d: |x.My - y.Mx| = %.3e > 1e-12 * %.3e", tag, c->p, (int)c->weight,
            c->neumann, fabs(xmy - ymx), nx * nmy);
  HX_ASSERT(xmx > 0.0, "%s p=%d: x.Mx = %g > 0", tag, c->p, xmx);
  if (g_verbose && g_rank == 0)
    printf("sym %s p=%d w=%d neu=%d lam=%g: |x.My-y.Mx|/(|x||My|) = %.2e  x.Mx = %.4e\n", tag, c->p,
           (int)c->weight, c->neumann, c->lambda, fabs(xmy - ymx) / (nx * nmy), xmx);
  /* masked entries zero */
  double *mask = malloc(sizeof(double) * (ng + 1));
  const double *dmask = hx_gs_mask(gs);
  for (int64_t i = 0; i < ng; i++) mask[i] = 1.0;
  if (dmask) HX_TCALL(hx_mem_to_host(x.b, mask, dmask, sizeof(double) * ng));
  int64_t bad = 0;
  for (int64_t i = 0; i < ng; i++)
    if (mask[i] == 0.0 && zx[i] != 0.0) bad++;
  HX_ASSERT(bad == 0, "%s p=%d: %lld masked entries of z nonzero", tag, c->p, (long long)bad);
  /* consistent: every holder has the same bits (exchange MIN == MAX) */
  {
    double *d1, *d2;
    double *h1 = malloc(sizeof(double) * (ng + 1)), *h2 = malloc(sizeof(double) * (ng + 1));
    HX_TCALL(hx_mem_alloc(x.b, sizeof(double) * (ng + 1), (void **)&d1));
    HX_TCALL(hx_mem_alloc(x.b, sizeof(double) * (ng + 1), (void **)&d2));
    HX_TCALL(hx_mem_to_device(x.b, d1, zx, sizeof(double) * ng));
    HX_TCALL(hx_mem_to_device(x.b, d2, zx, sizeof(double) * ng));
    HX_TCALL(hx_gs_exchange(gs, d1, HX_GS_MIN));
    HX_TCALL(hx_gs_exchange(gs, d2, HX_GS_MAX));
    HX_TCALL(hx_mem_to_host(x.b, h1, d1, sizeof(double) * ng));
    HX_TCALL(hx_mem_to_host(x.b, h2, d2, sizeof(double) * ng));
    int64_t nd = 0;
    for (int64_t i = 0; i < ng; i++) nd += h1[i] != h2[i];
    HX_ASSERT(nd == 0, "%s p=%d: z differs between holders at %lld nodes", tag, c->p, (long long)nd);
    hx_mem_free(x.b, (void **)&d1), hx_mem_free(x.b, (void **)&d2);
    free(h1), free(h2);
  }
  /* the smooth vector: compare with a 1-rank run (rank 0) and, with cuda, with cpu */
  double *hs = malloc(sizeof(double) * (ng + 1)), *zs = malloc(sizeof(double) * (ng + 1));
  g_smooth(x.d, hs);
  if (fdm_apply_host(&x, hs, zs)) return 1;
  const int64_t *gid = hx_gs_global_ids(gs);
  idval *mine = malloc(sizeof(idval) * (no + 1));
  for (int64_t i = 0; i < no; i++) mine[i].id = gid[i], mine[i].z = zs[i];
  int cnt = (int)no * (int)sizeof(idval), *cnts = NULL, *displ = NULL;
  idval *all = NULL;
  int64_t nall = 0;
  if (g_rank == 0) cnts = calloc(g_size, sizeof(int)), displ = calloc(g_size + 1, sizeof(int));
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (int r = 0; r < g_size; r++) displ[r + 1] = displ[r] + cnts[r];
    nall = displ[g_size] / (int)sizeof(idval);
    all = malloc(sizeof(idval) * (nall + 1));
  }
  MPI_Gatherv(mine, cnt, MPI_BYTE, all, cnts, displ, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    qsort(all, (size_t)nall, sizeof(idval), cmp_idval);
    for (int pass = 0; pass < 2; pass++) {
      /* pass 0: 1 rank, same backend (when running on several ranks);
       * pass 1: cpu backend on 1 rank (when running on cuda) */
      if (pass == 0 && g_size == 1) continue;
      if (pass == 1 && !strcmp(g_backend, "cpu")) continue;
      ctx s;
      if (ctx_create(MPI_COMM_SELF, pass == 0 ? g_backend : "cpu", c, &s)) return 1;
      const int64_t sng = hx_gs_num_local(hx_disc_gs(s.d));
      double *ss = malloc(sizeof(double) * (sng + 1)), *sz = malloc(sizeof(double) * (sng + 1));
      g_smooth(s.d, ss);
      if (fdm_apply_host(&s, ss, sz)) return 1;
      HX_ASSERT(sng == nall, "%s: 1-rank run has %lld nodes, the distributed one %lld", tag, (long long)sng,
                (long long)nall);
      const int64_t *sgid = hx_gs_global_ids(hx_disc_gs(s.d));
      double dmax = 0.0, zmax = 0.0;
      for (int64_t i = 0; i < sng; i++) {
        idval key = {sgid[i], 0.0};
        const idval *hit = bsearch(&key, all, (size_t)nall, sizeof(idval), cmp_idval);
        if (!hit) {
          HX_ASSERT(hit, "%s: id %lld missing", tag, (long long)sgid[i]);
          break;
        }
        dmax = fmax(dmax, fabs(hit->z - sz[i]));
        zmax = fmax(zmax, fabs(sz[i]));
      }
      if (g_verbose)
        printf("  %s vs 1-rank %s: max |dz| / max |z| = %.2e\n", pass == 0 ? "ranks" : "cuda",
               pass == 0 ? g_backend : "cpu", dmax / zmax);
      HX_ASSERT(dmax <= 1e-13 * zmax, "%s p=%d weight=%d: z on %d ranks (%s) vs 1 rank (%s): %.3e relative",
                tag, c->p, (int)c->weight, g_size, g_backend, pass == 0 ? g_backend : "cpu", dmax / zmax);
      free(ss), free(sz);
      if (ctx_destroy(&s)) return 1;
    }
    free(all), free(cnts), free(displ);
  }
  free(mine), free(hs), free(zs), free(mask);
  free(hx_), free(hy), free(zx), free(zy);
  if (ctx_destroy(&x)) return 1;
  return 0;
}

static int mode_sym(void) {
  for (int mesh = 0; mesh < 2; mesh++)
    for (int w = 0; w < 2; w++)
      for (int variant = 0; variant < 2; variant++) {
        cfg c;
        if (mesh == 1)
          cfg_kershaw(&c);
        else
          cfg_default(&c), c.nz = 2, c.ext[1][1] = 1.7;
        c.p = mesh ? 3 : 4;
        c.weight = w ? HX_FDM_WEIGHT_SQRT : HX_FDM_WEIGHT_NONE;
        c.overlap = 1;
        /* variant 1: Neumann boundary, Helmholtz (lambda > 0 keeps it definite) */
        if (variant) c.neumann = 1, c.lambda = 0.8, c.kappa = 2.0;
        if (check_case(&c)) return 1;
      }
  return 0;
}

/* ---------------------------------------------------------------- overlap */
static int mode_overlap(void) {
  for (int mesh = 0; mesh < 2; mesh++) {
    cfg c;
    if (mesh == 1)
      cfg_kershaw(&c);
    else
      cfg_default(&c), c.nx = 4;
    c.p = 3, c.weight = HX_FDM_WEIGHT_SQRT;
    double *z[2] = {NULL, NULL};
    int64_t ng = 0;
    for (int ov = 0; ov < 2; ov++) {
      c.overlap = ov;
      ctx x;
      if (ctx_create(MPI_COMM_WORLD, g_backend, &c, &x)) return 1;
      ng = hx_gs_num_local(hx_disc_gs(x.d));
      double *r = malloc(sizeof(double) * (ng + 1));
      z[ov] = malloc(sizeof(double) * (ng + 1));
      g_random(hx_disc_gs(x.d), 3, r);
      if (fdm_apply_host(&x, r, z[ov])) return 1;
      free(r);
      if (ctx_destroy(&x)) return 1;
    }
    int64_t nd = 0;
    for (int64_t i = 0; i < ng; i++) nd += z[0][i] != z[1][i];
    HX_ASSERT(nd == 0, "mesh %d: overlapped and blocking exchange differ at %lld of %lld nodes", mesh,
              (long long)nd, (long long)ng);
    free(z[0]), free(z[1]);
  }
  return 0;
}

/* ---------------------------------------------------------------- iters */
static int pc_fdm_apply(void *c, const double *r, double *z) { return hx_fdm_apply((hx_fdm)c, r, z); }

static int solve_count(ctx *x, const char *pcname, int *its, double *t) {
  hx_op op = hx_disc_op(x->d);
  const int64_t ng = hx_op_size(op);
  double *hb = malloc(sizeof(double) * (ng + 1));
  g_smooth(x->d, hb);
  double *db, *dx;
  HX_TCALL(hx_mem_alloc(x->b, sizeof(double) * (ng + 1), (void **)&db));
  HX_TCALL(hx_mem_alloc(x->b, sizeof(double) * (ng + 1), (void **)&dx));
  HX_TCALL(hx_mem_to_device(x->b, db, hb, sizeof(double) * ng));
  HX_TCALL(hx_gs_apply_mask(hx_disc_gs(x->d), db));
  HX_TCALL(hx_mem_zero(x->b, dx, sizeof(double) * (ng + 1)));
  hx_pc pc;
  const hx_pc_ops fdm_ops = {.type = "fdm", .apply = pc_fdm_apply, .passes = 4};
  if (!strcmp(pcname, "jacobi"))
    HX_TCALL(hx_pc_create_jacobi(op, &pc));
  else
    HX_TCALL(hx_pc_create_shell(op, &fdm_ops, x->f, 0, NULL, &pc));
  hx_pcg_opts po;
  hx_pcg_opts_default(&po);
  po.rtol = 1e-8, po.max_iterations = 1000;
  hx_pcg_result res;
  const double t0 = hx_wtime();
  HX_TCALL(hx_pcg_solve(op, pc, db, dx, &po, &res));
  *t = hx_wtime() - t0;
  HX_ASSERT(res.reason > 0, "%s: PCG converged (%s)", pcname, hx_reason_name(res.reason));
  *its = res.iterations;
  hx_pc_destroy(&pc);
  hx_mem_free(x->b, (void **)&db), hx_mem_free(x->b, (void **)&dx);
  free(hb);
  return 0;
}

static int mode_iters(void) {
  for (int mesh = 0; mesh < 2; mesh++) {
    cfg c;
    cfg_default(&c);
    if (mesh)
      c.nx = 6, c.ny = 4, c.nz = 4, c.eps = 0.3;
    else
      c.nx = c.ny = c.nz = 4;
    c.p = 4;
    int it[3];
    double t[3];
    for (int w = 0; w < 2; w++) {
      c.weight = w ? HX_FDM_WEIGHT_SQRT : HX_FDM_WEIGHT_NONE;
      ctx x;
      if (ctx_create(MPI_COMM_WORLD, g_backend, &c, &x)) return 1;
      if (w == 0 && solve_count(&x, "jacobi", &it[0], &t[0])) return 1;
      if (solve_count(&x, "fdm", &it[1 + w], &t[1 + w])) return 1;
      if (ctx_destroy(&x)) return 1;
    }
    if (g_verbose && g_rank == 0)
      printf(
          "%s %dx%dx%d p=%d: PCG iterations (rtol 1e-8) jacobi %d, schwarz/none %d, schwarz/sqrt %d"
          " (%.3f / %.3f / %.3f s)\n",
          mesh ? "kershaw 0.3" : "box", c.nx, c.ny, c.nz, c.p, it[0], it[1], it[2], t[0], t[1], t[2]);
    if (!mesh) {
      HX_ASSERT(2 * it[1] <= it[0],
                "box: one-level Schwarz (%d) needs at most half the Jacobi iterations (%d)", it[1], it[0]);
      HX_ASSERT(2 * it[2] <= it[0], "box: one-level Schwarz, sqrt weight (%d) vs Jacobi (%d)", it[2], it[0]);
    } else {
      HX_ASSERT(it[1] < it[0] && it[2] < it[0], "kershaw: Schwarz (%d, %d) fewer iterations than Jacobi (%d)",
                it[1], it[2], it[0]);
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- fp32 */
/* relative 2-norm difference over the owned entries (global) */
static double g_reldiff(hx_gs gs, const double *a, const double *b) {
  const int64_t no = hx_gs_num_owned(gs);
  double s[2] = {0, 0}, t[2];
  for (int64_t i = 0; i < no; i++) s[0] += (a[i] - b[i]) * (a[i] - b[i]), s[1] += b[i] * b[i];
  MPI_Allreduce(s, t, 2, MPI_DOUBLE, MPI_SUM, hx_gs_comm(gs));
  return t[1] > 0 ? sqrt(t[0] / t[1]) : sqrt(t[0]);
}

/* FP32 accuracy: the inputs are rounded once (relative 6e-8), then 6
 * contractions of length m <= 11 and the scaling in float, the exchanges
 * summing at most 8 float contributions: a few hundred units of 6e-8 at
 * most; 1e-5 (the bound) leaves a margin of 10+ and still fails on
 * any wrong index, weight or missing term (those are O(1)). */
#define FP32_TOL 1e-5

static int fp32_case(const cfg *c0) {
  cfg c = *c0;
  ctx x64, x32;
  c.prec = HX_F64;
  if (ctx_create(MPI_COMM_WORLD, g_backend, &c, &x64)) return 1;
  c.prec = HX_F32;
  if (ctx_create(MPI_COMM_WORLD, g_backend, &c, &x32)) return 1;
  HX_ASSERT(hx_fdm_precision(x32.f) == HX_F32 && hx_fdm_precision(x64.f) == HX_F64, "precision getter");
  {
    /* the grouped layout runs wherever the kernel has it, unless switched off */
    const char *genv = getenv("HEXCG_FDM_GROUPED");
    const int want = hx_fdm_grouped_f32_available(x32.b, c.p) && !(genv && !strcmp(genv, "0"));
    HX_ASSERT(hx_fdm_grouped(x32.f) == want && !hx_fdm_grouped(x64.f), "p=%d: grouped layout %d, expected %d", c.p,
              hx_fdm_grouped(x32.f), want);
  }
  hx_gs gs = hx_disc_gs(x64.d);
  const int64_t ng = hx_gs_num_local(gs);
  double *r = malloc(sizeof(double) * (ng + 1)), *r2 = malloc(sizeof(double) * (ng + 1));
  double *z64 = malloc(sizeof(double) * (ng + 1)), *z32 = malloc(sizeof(double) * (ng + 1));
  double *zy = malloc(sizeof(double) * (ng + 1));
  const char *tag = c.eps < 1 ? "kershaw" : "box";
  g_random(gs, 11, r), g_random(gs, 12, r2);
  if (fdm_apply_host(&x64, r, z64) || fdm_apply_host(&x32, r, z32) || fdm_apply_host(&x32, r2, zy)) return 1;
  const double rd = g_reldiff(gs, z32, z64);
  if (g_verbose && g_rank == 0)
    printf("fp32 %s p=%d w=%d neu=%d lam=%g: |z32 - z64| / |z64| = %.2e\n", tag, c.p, (int)c.weight, c.neumann,
           c.lambda, rd);
  HX_ASSERT(rd <= FP32_TOL, "%s p=%d weight=%d neumann=%d: FP32 vs FP64 relative difference %.3e > %g", tag, c.p,
            (int)c.weight, c.neumann, rd, FP32_TOL);
  HX_ASSERT(rd > 0.0, "%s p=%d: FP32 result identical to FP64 (is it running in float?)", tag, c.p);
  if (c.weight != HX_FDM_WEIGHT_RAS) {
    const double xmy = g_dot(gs, r, zy), ymx = g_dot(gs, r2, z32);
    const double nx = sqrt(g_dot(gs, r, r)), nmy = sqrt(g_dot(gs, zy, zy));
    HX_ASSERT(fabs(xmy - ymx) <= FP32_TOL * nx * nmy, "%s p=%d: FP32 |x.My - y.Mx| = %.3e > %g |x||My|", tag, c.p,
              fabs(xmy - ymx), FP32_TOL);
    HX_ASSERT(g_dot(gs, r, z32) > 0.0, "%s p=%d: FP32 x.Mx > 0", tag, c.p);
  }
  double *mask = malloc(sizeof(double) * (ng + 1));
  for (int64_t i = 0; i < ng; i++) mask[i] = 1.0;
  if (hx_gs_mask(gs)) HX_TCALL(hx_mem_to_host(x64.b, mask, hx_gs_mask(gs), sizeof(double) * ng));
  int64_t bad = 0;
  for (int64_t i = 0; i < ng; i++) bad += mask[i] == 0.0 && z32[i] != 0.0;
  HX_ASSERT(bad == 0, "%s p=%d: %lld masked entries of the FP32 z nonzero", tag, c.p, (long long)bad);
  if (strcmp(g_backend, "cpu")) {
    /* the CPU twin of the FP32 level (same ranks, same global vector) */
    ctx xc;
    if (ctx_create(MPI_COMM_WORLD, "cpu", &c, &xc)) return 1;
    double *zc = malloc(sizeof(double) * (ng + 1));
    g_random(gs, 11, r);
    if (fdm_apply_host(&xc, r, zc)) return 1;
    const double cd = g_reldiff(gs, z32, zc);
    if (g_verbose && g_rank == 0) printf("  fp32 %s vs cpu: %.2e\n", g_backend, cd);
    HX_ASSERT(cd <= FP32_TOL, "%s p=%d: FP32 %s vs cpu relative difference %.3e", tag, c.p, g_backend, cd);
    free(zc);
    if (ctx_destroy(&xc)) return 1;
  }
  free(r), free(r2), free(z64), free(z32), free(zy), free(mask);
  if (ctx_destroy(&x32) || ctx_destroy(&x64)) return 1;
  return 0;
}

static int mode_fp32(void) {
  for (int p = 1; p <= 8; p++) {
    cfg c;
    cfg_default(&c);
    c.nx = 3, c.ny = 3, c.nz = 2, c.ext[1][1] = 1.7;
    c.p = p, c.overlap = 1, c.weight = HX_FDM_WEIGHT_SQRT;
    if (fp32_case(&c)) return 1;
  }
  for (int w = 0; w < 3; w++)
    for (int variant = 0; variant < 2; variant++) {
      cfg c;
      cfg_kershaw(&c);
      c.p = 5, c.overlap = variant;
      c.weight = w == 0 ? HX_FDM_WEIGHT_NONE : w == 1 ? HX_FDM_WEIGHT_SQRT : HX_FDM_WEIGHT_RAS;
      if (variant) c.neumann = 1, c.lambda = 0.8, c.kappa = 2.0;
      if (fp32_case(&c)) return 1;
    }
  return 0;
}

/* ---------------------------------------------------------------- bench */
static int mode_bench(int nel, int p, int reps) {
  cfg c;
  cfg_default(&c);
  c.nx = c.ny = c.nz = nel, c.p = p, c.overlap = 1;
  ctx x, x32;
  if (ctx_create(MPI_COMM_WORLD, g_backend, &c, &x)) return 1;
  c.prec = HX_F32;
  if (ctx_create(MPI_COMM_WORLD, g_backend, &c, &x32)) return 1;
  const int64_t ng = hx_op_size(hx_disc_op(x.d));
  double *h = malloc(sizeof(double) * (ng + 1)), *dr, *dz;
  g_random(hx_disc_gs(x.d), 4, h);
  HX_TCALL(hx_mem_alloc(x.b, sizeof(double) * (ng + 1), (void **)&dr));
  HX_TCALL(hx_mem_alloc(x.b, sizeof(double) * (ng + 1), (void **)&dz));
  HX_TCALL(hx_mem_to_device(x.b, dr, h, sizeof(double) * ng));
  HX_TCALL(hx_gs_apply_mask(hx_disc_gs(x.d), dr));
  double best_f = 1e30, best_a = 1e30, best_32 = 1e30;
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t32 = hx_wtime(), tm32;
    HX_TCALL(hx_fdm_apply(x32.f, dr, dz));
    HX_TCALL(hx_backend_sync(x.b));
    t32 = hx_wtime() - t32;
    MPI_Allreduce(&t32, &tm32, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best_32 = fmin(best_32, tm32);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = hx_wtime();
    HX_TCALL(hx_fdm_apply(x.f, dr, dz));
    HX_TCALL(hx_backend_sync(x.b));
    double t1 = hx_wtime() - t0, tm;
    MPI_Allreduce(&t1, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best_f = fmin(best_f, tm);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = hx_wtime();
    HX_TCALL(hx_op_apply(hx_disc_op(x.d), dr, dz, NULL));
    HX_TCALL(hx_backend_sync(x.b));
    t1 = hx_wtime() - t0;
    MPI_Allreduce(&t1, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best_a = fmin(best_a, tm);
  }
  hx_fdm_stats st;
  hx_fdm_get_stats(x.f, &st);
  hx_fdm_stats st32;
  hx_fdm_get_stats(x32.f, &st32);
  if (g_rank == 0)
    printf("bench %d^3 p=%d on %d ranks (%s): fdm apply fp32 %.3f ms, fp64 %.3f ms: fp64/fp32 %.2f; model %.1f "
           "MB/apply fp32\n",
           nel, p, g_size, g_backend, best_32 * 1e3, best_f * 1e3, best_f / best_32, st32.bytes_per_apply * 1e-6);
  if (g_rank == 0)
    printf(
        "bench %d^3 p=%d on %d ranks (%s): fdm apply %.3f ms, operator apply %.3f ms, ratio %.2f; "
        "fdm setup %.3f s; model %.1f MB/apply (%.1f GB/s); per apply local %.3f ms, exchange %.3f ms\n",
        nel, p, g_size, g_backend, best_f * 1e3, best_a * 1e3, best_f / best_a, st.t_setup,
        st.bytes_per_apply * 1e-6, st.bytes_per_apply / best_f * 1e-9, st.t_local / st.applies * 1e3,
        st.t_exchange / st.applies * 1e3);
  hx_mem_free(x.b, (void **)&dr), hx_mem_free(x.b, (void **)&dz);
  free(h);
  if (ctx_destroy(&x32)) return 1;
  return ctx_destroy(&x);
}

/* ---------------------------------------------------------------- share, private
 * The 1D eigenpairs shared between (element, direction) pairs with the
 * same inputs (precond/fdm.c, fdm_box_eigenpairs) against one LAPACK solve
 * per pair (HEXCG_FDM_SHARE=0), and the extended gather-scatter with the
 * ids no other rank's box reaches kept out of its rendezvous (fdm_private_nodes)
 * against all of them through it (HEXCG_FDM_PRIVATE=0): the box inverse of
 * every element and the whole apply give the same bits. Boxes with unequal
 * extents, Kershaw, p = 1 (its own 1D matrices), kappa jumps between
 * elements (the neighbour ratios), Neumann and lambda > 0; on 1-3 ranks. */
static int share_case(const cfg *c, const char *env) {
  ctx x[2];
  for (int k = 0; k < 2; k++) {
    if (k == 0) setenv(env, "0", 1);
    else unsetenv(env);
    if (ctx_create(MPI_COMM_WORLD, g_backend, c, &x[k])) return 1;
  }
  const int m = c->p + 3;
  const int64_t m3 = (int64_t)m * m * m;
  const int32_t E = hx_disc_num_elements(x[0].d);
  const int64_t *egid = hx_mesh_element_global_ids(x[0].m);
  HX_ASSERT(hx_fdm_grouped(x[0].f) == hx_fdm_grouped(x[1].f), "grouped layout %d without %s=0, %d with",
            hx_fdm_grouped(x[1].f), env, hx_fdm_grouped(x[0].f));
  double *u = malloc(sizeof(double) * (size_t)m3), *w[2];
  w[0] = malloc(sizeof(double) * (size_t)m3), w[1] = malloc(sizeof(double) * (size_t)m3);
  int bad = -1;
  for (int32_t e = 0; e < E && bad < 0; e++) {
    hx_test_rng r = {(uint64_t)egid[e] * 977 + 5};
    for (int64_t i = 0; i < m3; i++) u[i] = hx_test_rand(&r);
    for (int k = 0; k < 2; k++) HX_TCALL(hx_fdm_box_solve(x[k].f, e, u, w[k]));
    if (memcmp(w[0], w[1], sizeof(double) * (size_t)m3)) bad = e;
  }
  HX_ASSERT(bad < 0, "%s p = %d: box inverse of element %d differs without %s=0",
            c->eps < 1 ? "kershaw" : "box", c->p, bad, env);
  const int64_t ng = hx_gs_num_local(hx_disc_gs(x[0].d));
  double *hr = malloc(sizeof(double) * (size_t)(ng + 1)), *hz[2];
  hz[0] = malloc(sizeof(double) * (size_t)(ng + 1)), hz[1] = malloc(sizeof(double) * (size_t)(ng + 1));
  for (int k = 0; k < 2; k++) {
    g_random(hx_disc_gs(x[k].d), 11, hr);
    if (fdm_apply_host(&x[k], hr, hz[k])) return 1;
  }
  HX_ASSERT(!memcmp(hz[0], hz[1], sizeof(double) * (size_t)ng), "%s p = %d: apply differs without %s=0",
            c->eps < 1 ? "kershaw" : "box", c->p, env);
  free(u), free(w[0]), free(w[1]), free(hr), free(hz[0]), free(hz[1]);
  for (int k = 0; k < 2; k++) HX_TCALL(ctx_destroy(&x[k]));
  return 0;
}

static int mode_share(const char *env) {
  cfg c;
  for (int v = 0; v < 6; v++) {
    cfg_default(&c);
    c.weight = HX_FDM_WEIGHT_SQRT;
    c.overlap = 1;
    if (v == 0) c.nx = 4, c.ny = 3, c.nz = 5, c.p = 3, c.ext[1][1] = 2.0, c.ext[2][1] = 0.5;
    if (v == 1) c.nx = c.ny = c.nz = 4, c.p = 4, c.neumann = 1, c.lambda = 1.5, c.kjump = 1;
    if (v == 2) c.nx = c.ny = c.nz = 6, c.p = 3, c.eps = 0.3, c.kjump = 1;
    if (v == 3) c.nx = c.ny = c.nz = 6, c.p = 5, c.eps = 0.3, c.lambda = 0.7;
    if (v == 4) c.nx = c.ny = c.nz = 5, c.p = 1, c.kjump = 1;
    if (v == 5) c.nx = 6, c.ny = 4, c.nz = 2, c.p = 2, c.eps = 0.3, c.neumann = 1, c.weight = HX_FDM_WEIGHT_NONE;
    if (share_case(&c, env)) return 1;
  }
  return 0;
}

/* The extended numbering derived from the fine one (fdm_extended_keys,
 * hx_gs_keyed_create) against the extended ids' own gather-scatter
 * (HEXCG_FDM_XNUM=0): every box inverse and the whole apply bit for bit, in
 * FP64 (element layout) and FP32 (the grouped layout where the kernel has
 * it, numbered directly in grouped order; with HEXCG_FDM_GROUPED=keep-g the
 * element order's numbering relaid out), weights sqrt, none and ras. */
static int mode_xnum(void) {
  cfg c;
  for (int v = 0; v < 10; v++) {
    cfg_default(&c);
    c.weight = HX_FDM_WEIGHT_SQRT;
    c.overlap = 1;
    c.prec = v < 6 ? HX_F64 : HX_F32;
    if (v == 0 || v == 6) c.nx = 4, c.ny = 3, c.nz = 5, c.p = 3, c.ext[1][1] = 2.0, c.ext[2][1] = 0.5;
    if (v == 1) c.nx = c.ny = c.nz = 4, c.p = 4, c.neumann = 1, c.lambda = 1.5, c.kjump = 1;
    if (v == 2 || v == 7) c.nx = c.ny = c.nz = 6, c.p = 3, c.eps = 0.3, c.kjump = 1;
    if (v == 3 || v == 8) c.nx = c.ny = c.nz = 6, c.p = 5, c.eps = 0.3, c.lambda = 0.7;
    if (v == 4) c.nx = c.ny = c.nz = 5, c.p = 1, c.kjump = 1;
    if (v == 5)
      c.nx = 6, c.ny = 4, c.nz = 2, c.p = 2, c.eps = 0.3, c.neumann = 1, c.weight = HX_FDM_WEIGHT_NONE;
    if (v == 9) c.nx = c.ny = 4, c.nz = 6, c.p = 7, c.weight = HX_FDM_WEIGHT_RAS, c.overlap = 0;
    if (v == 8) setenv("HEXCG_FDM_GROUPED", "keep-g", 1);
    const int rc = share_case(&c, "HEXCG_FDM_XNUM");
    unsetenv("HEXCG_FDM_GROUPED");
    if (rc) return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_backend = hx_test_backend_arg(argc, argv);
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-v")) g_verbose = 1;
  hx_test_skip_without_device(g_backend);
  const char *mode = argc > 1 ? argv[1] : "";
  int rc = 0;
  if (!strcmp(mode, "exact"))
    rc = mode_exact();
  else if (!strcmp(mode, "sym"))
    rc = mode_sym();
  else if (!strcmp(mode, "overlap"))
    rc = mode_overlap();
  else if (!strcmp(mode, "iters"))
    rc = mode_iters();
  else if (!strcmp(mode, "fp32"))
    rc = mode_fp32();
  else if (!strcmp(mode, "share"))
    rc = mode_share("HEXCG_FDM_SHARE");
  else if (!strcmp(mode, "private"))
    rc = mode_share("HEXCG_FDM_PRIVATE");
  else if (!strcmp(mode, "xnum"))
    rc = mode_xnum();
  else if (!strcmp(mode, "bench")) {
    int nel = 12, p = 7;
    if (argc > 2 && argv[2][0] != '-') nel = atoi(argv[2]);
    int reps = 5;
    if (argc > 3 && argv[3][0] != '-') p = atoi(argv[3]);
    if (argc > 4 && argv[4][0] != '-') reps = atoi(argv[4]);
    rc = mode_bench(nel, p, reps);
  } else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    rc = 2;
  }
  int fail = rc == HX_TEST_SKIP ? 0 : (rc || hx_test_result()), anyfail;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc == HX_TEST_SKIP ? HX_TEST_SKIP : anyfail;
}
