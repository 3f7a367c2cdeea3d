/* Coarse level of the two-level Schwarz preconditioner: the trilinear (Q1)
 * space on the mesh vertices, its matrix A0 (Q1 rediscretisation or the
 * Galerkin product P^T A P per element) as a distributed hypre IJ matrix,
 * and BoomerAMG V-cycles as a fixed SPD approximation of A0^{-1}.
 * docs/coarse.md has the method, the defaults and the measurements.
 *
 * Vectors here:
 *   fine G   the fine gather-scatter's G-vector (host copies, h_r / h_z);
 *   coarse L E*8 values, one per element vertex (tensor order);
 *   coarse G one value per distinct vertex on this rank (the private coarse
 *            gather-scatter on a private cpu backend: host memory);
 *   coarse R one value per owned non-Dirichlet vertex = this rank's rows of
 *            A0 (hypre's vectors).
 *
 * Prolongation P: each fine G entry is evaluated, on every rank holding it,
 * from one local copy (the first L entry with that node, "chosen copy"):
 * z_g = mask_g sum_v phi_v(node) c[vertex v of the chosen element]. The
 * trilinear function is continuous, so every copy gives the same value up to
 * rounding. Restriction P^T: each OWNED fine entry adds r_g mask_g phi_v(node)
 * to the coarse L entries of its chosen element, then the coarse gather and
 * exchange ADD sum them. That is the exact transpose of P as implemented
 * (the same weights, summed in another order), and it touches each fine node
 * once instead of every L entry (which the inverse-multiplicity form,
 * P^T r = Z_c^T Phi^T W Z_f r, would). */
#include "precond_impl.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_utilities.h>
#include <_hypre_parcsr_ls.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct hx_coarse_s {
  hx_coarse_opts o;
  MPI_Comm comm; /* MPI_Comm_dup of the mesh communicator: hypre lives here */
  int rank, size;
  int p, n, n3;
  int32_t E;
  hx_backend cb; /* private cpu backend of the coarse gs */
  hx_gs cgs;
  int64_t ncg;         /* coarse G entries on this rank */
  const int32_t *cmap; /* coarse L -> coarse G (E*8) */
  int64_t *row;        /* coarse G -> global row, -1 for Dirichlet vertices */
  int nrows;           /* owned rows */
  int64_t ilower;      /* first owned row */
  int32_t *own_g;      /* nrows: coarse G index of each owned row */
  int64_t rows_global;
  /* fine side */
  int64_t nf, nf_owned; /* fine G entries, owned ones */
  uint8_t *ffree;       /* host, nf: 1 free, 0 Dirichlet (the fine mask's 1.0 / 0.0) */
  int32_t *pe_off;      /* E+1: chosen-copy fine entries of each element */
  int32_t *pe_g;        /* fine G index */
  int32_t *pe_node;     /* local node index in the element */
  double *phi;          /* n3*8: phi_v at the GLL node, v = a + 2b + 4c */
  double *lin1;         /* 2n: lin1[a n + i] = l_a(t_i), the 1D factors of phi */
  /* the chosen entries' weights are the fine mask (restriction: 0 where not
   * owned as well), read from ffree: 8 bytes per fine entry where two double
   * arrays held 16 more (the same products, the same bits) */
  /* coarse buffers (cpu backend memory = host) */
  double *cl, *cg;
  /* hypre */
  int have_hypre; /* hypre objects exist (rows_global > 0) */
  HYPRE_IJMatrix A;
  HYPRE_ParCSRMatrix pA;
  HYPRE_IJVector b, x;
  HYPRE_ParVector pb, px;
  HYPRE_Solver amg;
  int amg_created;
  hx_coarse_stats st;   /* the figures other than timings */
  hx_ev_slot ev_setup[2]; /* the matrix, the AMG setup (seconds: the max over ranks; log coarse.setup.*) */
  hx_ev_slot ev_restrict, ev_solve, ev_prolong; /* over all applies */
};

void hx_coarse_opts_default(hx_coarse_opts *o) {
  memset(o, 0, sizeof *o);
  o->op = HX_COARSE_GALERKIN;
  o->cycles = 1;
  o->coarsen_type = 10; /* HMIS */
  o->interp_type = 6;   /* extended+i */
  o->relax_type = 8;    /* l1-scaled hybrid symmetric Gauss-Seidel */
  o->relax_sweeps = 1;
  o->strong_threshold = 0.5; /* 3D */
  o->agg_levels = 0;
  o->pmax = 4;
  o->max_levels = 25;
  o->print_level = 0;
}

/* ---------------------------------------------------------------- options
 * the coarse: mapping of asm, pmg and auto (their records name the group) */
static const char *const coarse_solvers[] = {"none", "boomeramg"};
static const char *const coarse_ops[] = {"fem", "galerkin"}; /* hx_coarse_operator */
_Static_assert(sizeof(hx_coarse_operator) == sizeof(int), "option enums are int-sized");
#define AT(f) offsetof(hx_pc_coarse_vals, f)
static const hx_opt_key coarse_rows[] = {
    HX_PC_ENUM("solver", AT(solver), coarse_solvers, NULL,
               "none: no coarse level (one-level Schwarz, or pmg's last order only smoothed)"),
    HX_PC_ENUM("operator", AT(co.op), coarse_ops, NULL,
               "Q1 finite elements, or P^T A P from the order-p element matrices"),
    HX_PC_INT("cycles", AT(co.cycles), 1, 100, "BoomerAMG V-cycles per apply"),
    HX_PC_INT("coarsen_type", AT(co.coarsen_type), 0, 22,
              "HYPRE_BoomerAMGSetCoarsenType (10: HMIS, 8: PMIS, 6: Falgout)"),
    HX_PC_INT("interp_type", AT(co.interp_type), 0, 100, "HYPRE_BoomerAMGSetInterpType (6: extended+i)"),
    HX_PC_INT("relax_type", AT(co.relax_type), 0, 100,
              "HYPRE_BoomerAMGSetRelaxType, symmetric only: 0, 6, 7, 8, 16, 18"),
    HX_PC_INT("relax_sweeps", AT(co.relax_sweeps), 1, 100, "HYPRE_BoomerAMGSetNumSweeps"),
    HX_PC_DBL("strong_threshold", AT(co.strong_threshold), 0.0, 1.0, 0, "HYPRE_BoomerAMGSetStrongThreshold"),
    HX_PC_INT("agg_levels", AT(co.agg_levels), 0, 100, "levels of aggressive coarsening"),
    HX_PC_INT("pmax", AT(co.pmax), 0, 100, "most interpolation entries per row"),
    HX_PC_INT("max_levels", AT(co.max_levels), 1, 100, "most AMG levels"),
    HX_PC_INT("print_level", AT(co.print_level), 0, 3, "BoomerAMG's own output"),
};
#undef AT
const hx_opt_group hx_pc_coarse_group = {"preconditioner.coarse", "type: asm, pmg", coarse_rows,
                                         HX_NELEM(coarse_rows)};

int hx_pc_coarse_read(const hx_opt *c, hx_pc_coarse_vals *v) {
  HX_CALL(hx_opt_read_group(c, &hx_pc_coarse_group, v));
  /* BoomerAMG must be a fixed SPD operator for CG: symmetric relaxations only */
  static const int symmetric[] = {0, 6, 7, 8, 16, 18};
  int ok = 0;
  for (int i = 0; i < HX_NELEM(symmetric) && !ok; i++) ok = v->co.relax_type == symmetric[i];
  const hx_opt *rt = hx_opt_get(c, "relax_type");
  if (!ok && rt)
    return hx_opt_error(rt,
                        "%s.relax_type: %d is not a symmetric BoomerAMG relaxation; use one of 0 (Jacobi), 6 "
                        "(hybrid symmetric Gauss-Seidel), 8 (l1 symmetric Gauss-Seidel), 16 (Chebyshev), "
                        "18 (l1 Jacobi)",
                        hx_pc_coarse_group.path, v->co.relax_type);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ element matrices */

/* 1D linear Lagrange on [-1, 1]: value and derivative of basis a (0, 1) */
static inline double lin(int a, double t) { return a ? 0.5 * (1.0 + t) : 0.5 * (1.0 - t); }
static inline double dlin(int a) { return a ? 0.5 : -0.5; }

/* Q1 element matrix kappa K + lambda M on the trilinear map of the 8
 * vertices X (tensor order), 3^3 Gauss points (exact on affine elements). */
static void fem_element(const double X[8][3], double kappa, double lambda, double K[64]) {
  const double g = sqrt(0.6), qp[3] = {-g, 0.0, g}, qw[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
  memset(K, 0, 64 * sizeof(double));
  for (int qk = 0; qk < 3; qk++)
    for (int qj = 0; qj < 3; qj++)
      for (int qi = 0; qi < 3; qi++) {
        const double r[3] = {qp[qi], qp[qj], qp[qk]}, w = qw[qi] * qw[qj] * qw[qk];
        double ph[8], dr[8][3], J[3][3] = {{0}};
        for (int v = 0; v < 8; v++) {
          const int a = v & 1, b = (v >> 1) & 1, c = (v >> 2) & 1;
          const double la = lin(a, r[0]), lb = lin(b, r[1]), lc = lin(c, r[2]);
          ph[v] = la * lb * lc;
          dr[v][0] = dlin(a) * lb * lc, dr[v][1] = la * dlin(b) * lc, dr[v][2] = la * lb * dlin(c);
          for (int d = 0; d < 3; d++)
            for (int k = 0; k < 3; k++) J[d][k] += X[v][d] * dr[v][k];
        }
        const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                           J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                           J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
        /* inverse: Ji[k][d] = d ref_k / d x_d */
        double Ji[3][3];
        Ji[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / det;
        Ji[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / det;
        Ji[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / det;
        Ji[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / det;
        Ji[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / det;
        Ji[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / det;
        Ji[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / det;
        Ji[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / det;
        Ji[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / det;
        double gx[8][3];
        for (int v = 0; v < 8; v++)
          for (int d = 0; d < 3; d++)
            gx[v][d] = dr[v][0] * Ji[0][d] + dr[v][1] * Ji[1][d] + dr[v][2] * Ji[2][d];
        const double wd = w * fabs(det);
        for (int u = 0; u < 8; u++)
          for (int v = 0; v < 8; v++)
            K[8 * u + v] += wd * (kappa * (gx[u][0] * gx[v][0] + gx[u][1] * gx[v][1] + gx[u][2] * gx[v][2]) +
                                  lambda * ph[u] * ph[v]);
      }
}

/* The Robin face term of the fine disc (o.robin_l) in each element matrix:
 * K_e[u][v] += sum_i rl_i phi_u(i) phi_v(i), the Galerkin product of the
 * fine boundary diagonal element by element (the FEM operator takes the
 * same GLL face quadrature). */
static void robin_add(hx_coarse c, double *K) {
  if (!c->o.robin_l) return;
  for (int32_t e = 0; e < c->E; e++) {
    const double *rl = c->o.robin_l + (int64_t)e * c->n3;
    double *Ke = K + 64 * (int64_t)e;
    for (int i = 0; i < c->n3; i++) {
      if (rl[i] == 0.0) continue;
      const double *ph = c->phi + 8 * i;
      for (int u = 0; u < 8; u++)
        for (int v = 0; v < 8; v++) Ke[8 * u + v] += rl[i] * ph[u] * ph[v];
    }
  }
}

/* Element matrices of all local elements into K (E*64, row-major 8x8). */
static int element_matrices(hx_coarse c, hx_mesh mesh, hx_ax ax, const double *h_kappa,
                            const double *h_lambda, double *K) {
  const int32_t E = c->E;
  if (c->o.op == HX_COARSE_FEM) {
    const int npe = hx_mesh_nodes_per_element(mesh);
    const double *nodes = hx_mesh_element_nodes(mesh);
    for (int32_t e = 0; e < E; e++) {
      double X[8][3];
      for (int v = 0; v < 8; v++) {
        const int a = v & 1, b = (v >> 1) & 1, cc = (v >> 2) & 1;
        const int idx = npe == 27 ? 2 * a + 3 * 2 * b + 9 * 2 * cc : v;
        for (int d = 0; d < 3; d++) X[v][d] = nodes[((int64_t)e * npe + idx) * 3 + d];
      }
      fem_element(X, h_kappa[e], h_lambda ? h_lambda[e] : 0.0, K + 64 * (int64_t)e);
    }
    robin_add(c, K);
    return HX_SUCCESS;
  }
  /* Galerkin: K_e[u][v] = phi_u . (A_e phi_v), A_e from the order-p operator
   * (8 applies of the fine element operator on the fine backend) */
  HX_CHECK(hx_ax_order(ax) == c->p && hx_ax_num_elements(ax) == E, HX_ERR_ARG,
           "fine operator (p = %d, %d elements) does not match the mesh/gs (p = %d, %d elements)",
           hx_ax_order(ax), (int)hx_ax_num_elements(ax), c->p, (int)E);
  if (E == 0) return HX_SUCCESS;
  hx_backend fb = hx_ax_backend(ax);
  const int n3 = c->n3;
  const int64_t nl = (int64_t)E * n3;
  const size_t bytes = sizeof(double) * (size_t)nl;
  /* phi_v is the same on every element: the operator reads it through a
   * map (element e, node q -> q) from one copy of n3 values per vertex
   * instead of an L-vector filled and copied per vertex (the same bits as
   * the scatter then the apply); on host memory its output is read in
   * place. 12 bytes per L entry held here, not 32; a third of the traffic. */
  const int host = hx_backend_host_memory(fb);
  double *hw = NULL, *dw = NULL, *phit = NULL, *dphit = NULL;
  int32_t *hmap = NULL, *dmap = NULL;
  int err = HX_SUCCESS;
  if ((err = HX_ALLOC(&phit, 8 * (int64_t)n3)) || (err = HX_ALLOC(&hmap, nl)) ||
      (err = hx_mem_alloc(fb, sizeof(int32_t) * (size_t)nl, (void **)&dmap)) ||
      (err = hx_mem_alloc(fb, sizeof(double) * 8 * (size_t)n3, (void **)&dphit)) ||
      (err = hx_mem_alloc(fb, bytes, (void **)&dw)) || (!host && (err = HX_ALLOC(&hw, nl))))
    goto done;
  /* phi by vertex (phit[u n3 + i] = phi_u at node i) */
  for (int u = 0; u < 8; u++)
    for (int i = 0; i < n3; i++) phit[u * n3 + i] = c->phi[8 * i + u];
  for (int64_t i = 0; i < nl; i++) hmap[i] = (int32_t)(i % n3);
  if ((err = hx_mem_to_device(fb, dmap, hmap, sizeof(int32_t) * (size_t)nl)) ||
      (err = hx_mem_to_device(fb, dphit, phit, sizeof(double) * 8 * (size_t)n3)))
    goto done;
  free(hmap), hmap = NULL;
  for (int v = 0; v < 8 && !err; v++) {
    if ((err = hx_ax_apply_prec(ax, HX_F64, E, NULL, dmap, dphit + (size_t)v * n3, dw, NULL, NULL, 0)) ||
        (err = host ? hx_backend_sync(fb) : hx_mem_to_host(fb, hw, dw, bytes)))
      break;
    const double *wv = host ? dw : hw;
    /* the 8 sums side by side, each over i in order (the bits of one sum
     * after the other; phi[8 i + u] is contiguous in u: they vectorise) */
    const double *restrict phi = c->phi;
    for (int32_t e = 0; e < E; e++) {
      const double *restrict w = wv + (int64_t)e * n3;
      double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
      for (int i = 0; i < n3; i++)
        for (int u = 0; u < 8; u++) s[u] += phi[8 * i + u] * w[i];
      for (int u = 0; u < 8; u++) K[64 * (int64_t)e + 8 * u + v] = s[u];
    }
  }
  if (!err) robin_add(c, K);
  if (!err) /* symmetric up to rounding: make it exactly so */
    for (int32_t e = 0; e < E; e++) {
      double *Ke = K + 64 * (int64_t)e;
      for (int u = 0; u < 8; u++)
        for (int v = u + 1; v < 8; v++) {
          const double s = 0.5 * (Ke[8 * u + v] + Ke[8 * v + u]);
          Ke[8 * u + v] = Ke[8 * v + u] = s;
        }
      /* Snapped to multiples of a power of two near 2^-40 of the element's
       * largest diagonal entry: the backends sum the fine operator in
       * different orders (the GPU's reductions, FMA), so the same entry can
       * differ in its last bits, and on a uniform mesh BoomerAMG's coarsening
       * breaks the ties among equal couplings by those bits: the CUDA and
       * CPU hierarchies differed and so did the coarse correction, by
       * 3.6e-4 (found by the CUDA emulator, precond.t310-asm.cuda). The
       * snap changes K by < 1e-12 relative; rounding noise of entries that
       * are zero in exact arithmetic becomes an exact 0. */
      double dmax = 0.0;
      for (int u = 0; u < 8; u++) dmax = fmax(dmax, fabs(Ke[9 * u]));
      if (dmax > 0.0) {
        int ex;
        frexp(dmax, &ex);
        const double q = ldexp(1.0, ex - 40);
        for (int k = 0; k < 64; k++) Ke[k] = rint(Ke[k] / q) * q;
      }
    }
done:
  free(hw), free(phit), free(hmap);
  hx_mem_free(fb, (void **)&dmap);
  hx_mem_free(fb, (void **)&dphit);
  hx_mem_free(fb, (void **)&dw);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ assembly */
typedef struct {
  int64_t col;
  double val;
} centry;

/* the local vertex g's order among the rows: by global row */
typedef struct {
  int64_t row;
  int32_t g;
} crow;

static int cmp_crow(const void *a, const void *b) {
  const crow *x = (const crow *)a, *y = (const crow *)b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* A0 = sum_e K_e over the non-Dirichlet vertices, CSR rows built here (rows
 * of other ranks included) and handed to hypre in one AddToValues call.
 * Each vertex's entries are bucketed in element order (a counting pass, no
 * sort of the E 64 entries), sorted by column within the row by insertion
 * (stable: at most 64 entries a row), and duplicates summed in element
 * order: the sums of the sort by (row, col) that was here before, a stable
 * merge sort in glibc, to the bit. Rows go to hypre by increasing global row. */
static int assemble(hx_coarse c, const double *K) {
  const int32_t E = c->E;
  const int64_t ng = c->ncg;
  int64_t *off = NULL; /* ng + 1: the vertices' ranges in t (E 64 entries may pass 2^31) */
  int32_t *cur = NULL;
  centry *t = NULL;
  crow *order = NULL;
  HYPRE_Int *ncols = NULL;
  HYPRE_BigInt *rows = NULL, *cols = NULL;
  double *vals = NULL;
  int err = HX_SUCCESS;
  if ((err = HX_ALLOC(&off, ng + 1)) || (err = HX_ALLOC(&cur, ng + 1))) goto done;
  for (int32_t e = 0; e < E; e++) {
    int nv = 0; /* the element's vertices with a row */
    for (int v = 0; v < 8; v++) nv += c->row[c->cmap[8 * (int64_t)e + v]] >= 0;
    for (int u = 0; u < 8; u++) {
      const int32_t g = c->cmap[8 * (int64_t)e + u];
      if (c->row[g] >= 0) off[g + 1] += nv;
    }
  }
  for (int64_t g = 0; g < ng; g++) off[g + 1] += off[g];
  const int64_t nt = off[ng];
  if ((err = HX_ALLOC(&t, nt + 1))) goto done;
  for (int32_t e = 0; e < E; e++)
    for (int u = 0; u < 8; u++) {
      const int32_t gu = c->cmap[8 * (int64_t)e + u];
      if (c->row[gu] < 0) continue;
      for (int v = 0; v < 8; v++) {
        const int64_t rv = c->row[c->cmap[8 * (int64_t)e + v]];
        if (rv < 0) continue;
        t[off[gu] + cur[gu]++] = (centry){.col = rv, .val = K[64 * (int64_t)e + 8 * u + v]};
      }
    }
  /* per row: stable sort by column, duplicates merged in place */
  int64_t m = 0;
  HYPRE_Int nr = 0;
  for (int64_t g = 0; g < ng; g++) {
    centry *r = t + off[g];
    const int32_t len = (int32_t)(off[g + 1] - off[g]); /* 8 per element at the vertex */
    for (int32_t i = 1; i < len; i++) {
      const centry x = r[i];
      int32_t j = i;
      for (; j > 0 && r[j - 1].col > x.col; j--) r[j] = r[j - 1];
      r[j] = x;
    }
    int32_t k = 0;
    for (int32_t i = 0; i < len; i++) {
      if (k > 0 && r[k - 1].col == r[i].col)
        r[k - 1].val += r[i].val;
      else
        r[k++] = r[i];
    }
    cur[g] = k; /* the merged length */
    m += k, nr += k > 0;
  }
  if ((err = HX_ALLOC(&order, nr + 1)) || (err = HX_ALLOC(&ncols, nr + 1)) ||
      (err = HX_ALLOC(&rows, nr + 1)) || (err = HX_ALLOC(&cols, m + 1)) || (err = HX_ALLOC(&vals, m + 1)))
    goto done;
  {
    HYPRE_Int q = 0;
    for (int64_t g = 0; g < ng; g++)
      if (cur[g] > 0) order[q++] = (crow){.row = c->row[g], .g = (int32_t)g};
    qsort(order, (size_t)nr, sizeof *order, cmp_crow);
    int64_t i = 0;
    for (q = 0; q < nr; q++) {
      const int32_t g = order[q].g;
      rows[q] = (HYPRE_BigInt)order[q].row, ncols[q] = cur[g];
      for (int32_t j = 0; j < cur[g]; j++, i++)
        cols[i] = (HYPRE_BigInt)t[off[g] + j].col, vals[i] = t[off[g] + j].val;
    }
  }
  free(t), free(off), free(cur), free(order);
  const HYPRE_BigInt lo = (HYPRE_BigInt)c->ilower, hi = (HYPRE_BigInt)(c->ilower + c->nrows - 1);
  int herr = HYPRE_IJMatrixCreate(c->comm, lo, hi, lo, hi, &c->A);
  if (!herr) herr = HYPRE_IJMatrixSetObjectType(c->A, HYPRE_PARCSR);
  if (!herr) herr = HYPRE_IJMatrixInitialize(c->A);
  /* rows of other ranks are allowed in AddToValues: hypre sends them at Assemble */
  if (!herr && nr > 0) herr = HYPRE_IJMatrixAddToValues(c->A, nr, ncols, rows, cols, vals);
  if (!herr) herr = HYPRE_IJMatrixAssemble(c->A);
  free(ncols), free(rows), free(cols), free(vals);
  HX_HYPRE(herr);
  HX_HYPRE(HYPRE_IJMatrixGetObject(c->A, (void **)&c->pA));
  return HX_SUCCESS;
done:
  free(t), free(off), free(cur), free(order), free(ncols), free(rows), free(cols), free(vals);
  return hx_error_trace(__FILE__, __LINE__, __func__, err);
}

static int amg_setup(hx_coarse c) {
  const HYPRE_BigInt lo = (HYPRE_BigInt)c->ilower, hi = (HYPRE_BigInt)(c->ilower + c->nrows - 1);
  HYPRE_IJVector *vs[2] = {&c->b, &c->x};
  HYPRE_ParVector *ps[2] = {&c->pb, &c->px};
  for (int i = 0; i < 2; i++) {
    HX_HYPRE(HYPRE_IJVectorCreate(c->comm, lo, hi, vs[i]));
    HX_HYPRE(HYPRE_IJVectorSetObjectType(*vs[i], HYPRE_PARCSR));
    HX_HYPRE(HYPRE_IJVectorInitialize(*vs[i]));
    HX_HYPRE(HYPRE_IJVectorAssemble(*vs[i]));
    HX_HYPRE(HYPRE_IJVectorGetObject(*vs[i], (void **)ps[i]));
  }
  const hx_coarse_opts *o = &c->o;
  HX_HYPRE(HYPRE_BoomerAMGCreate(&c->amg));
  c->amg_created = 1;
  HX_HYPRE(HYPRE_BoomerAMGSetTol(c->amg, 0.0));
  HX_HYPRE(HYPRE_BoomerAMGSetMaxIter(c->amg, o->cycles));
  HX_HYPRE(HYPRE_BoomerAMGSetPrintLevel(c->amg, o->print_level));
  HX_HYPRE(HYPRE_BoomerAMGSetCoarsenType(c->amg, o->coarsen_type));
  HX_HYPRE(HYPRE_BoomerAMGSetInterpType(c->amg, o->interp_type));
  /* sets the down and up sweeps; the coarsest level gets Gaussian elimination */
  HX_HYPRE(HYPRE_BoomerAMGSetRelaxType(c->amg, o->relax_type));
  HX_HYPRE(HYPRE_BoomerAMGSetNumSweeps(c->amg, o->relax_sweeps));
  HX_HYPRE(HYPRE_BoomerAMGSetStrongThreshold(c->amg, o->strong_threshold));
  HX_HYPRE(HYPRE_BoomerAMGSetAggNumLevels(c->amg, o->agg_levels));
  HX_HYPRE(HYPRE_BoomerAMGSetPMaxElmts(c->amg, o->pmax));
  HX_HYPRE(HYPRE_BoomerAMGSetMaxLevels(c->amg, o->max_levels));
  HX_HYPRE(HYPRE_BoomerAMGSetup(c->amg, c->pA, c->pb, c->px));

  /* hierarchy statistics (hypre's internal AMG data) */
  hypre_ParAMGData *ad = (hypre_ParAMGData *)c->amg;
  const int nlev = hypre_ParAMGDataNumLevels(ad);
  hypre_ParCSRMatrix **Al = hypre_ParAMGDataAArray(ad);
  double rows = 0, nnz = 0, rows0 = 0, nnz0 = 0;
  for (int l = 0; l < nlev; l++) {
    HX_HYPRE(hypre_ParCSRMatrixSetDNumNonzeros(Al[l]));
    const double rl = (double)hypre_ParCSRMatrixGlobalNumRows(Al[l]),
                 zl = hypre_ParCSRMatrixDNumNonzeros(Al[l]);
    if (l == 0) rows0 = rl, nnz0 = zl;
    rows += rl, nnz += zl;
  }
  c->st.amg_levels = nlev;
  c->st.nnz_global = (int64_t)nnz0;
  c->st.grid_complexity = rows0 > 0 ? rows / rows0 : 0;
  c->st.operator_complexity = nnz0 > 0 ? nnz / nnz0 : 0;
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ create */
static int check_opts(const hx_coarse_opts *o) {
  HX_CHECK(o->op == HX_COARSE_FEM || o->op == HX_COARSE_GALERKIN, HX_ERR_INPUT,
           "coarse operator %d unknown (fem = 0, galerkin = 1)", (int)o->op);
  HX_CHECK(o->cycles >= 1, HX_ERR_INPUT, "coarse cycles = %d, must be >= 1", o->cycles);
  HX_CHECK(o->relax_sweeps >= 1, HX_ERR_INPUT, "coarse relax_sweeps = %d, must be >= 1", o->relax_sweeps);
  HX_CHECK(o->strong_threshold >= 0 && o->strong_threshold < 1, HX_ERR_INPUT,
           "coarse strong_threshold = %g, must be in [0, 1)", o->strong_threshold);
  HX_CHECK(o->max_levels >= 1 && o->agg_levels >= 0 && o->pmax >= 0, HX_ERR_INPUT,
           "coarse max_levels = %d (>= 1), agg_levels = %d (>= 0), pmax = %d (>= 0)", o->max_levels,
           o->agg_levels, o->pmax);
  /* the symmetric smoothers of BoomerAMG: a non-symmetric one breaks PCG */
  const int sym[] = {0, 6, 7, 8, 16, 18};
  int ok = 0;
  for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++) ok |= o->relax_type == sym[i];
  HX_CHECK(ok, HX_ERR_INPUT,
           "coarse relax_type %d is not one of the symmetric BoomerAMG smoothers (0 Jacobi, 6 hybrid "
           "symmetric Gauss-Seidel, 7 Jacobi, 8 l1 symmetric Gauss-Seidel, 16 Chebyshev, 18 l1 Jacobi)",
           o->relax_type);
  return HX_SUCCESS;
}

/* the fine side: mask and the chosen copy of each fine G entry (per
 * element, the entries first reached from it) with its restriction and
 * prolongation weights */
static int fine_side(hx_coarse c, hx_gs fine_gs) {
  const int32_t E = c->E;
  const int n3 = c->n3;
  c->nf = hx_gs_num_local(fine_gs);
  c->nf_owned = hx_gs_num_owned(fine_gs);
  HX_CALL(HX_ALLOC(&c->ffree, c->nf + 1));
  if (hx_gs_mask(fine_gs)) {
    double *m = NULL;
    HX_CALL(HX_ALLOC(&m, c->nf + 1));
    const int err = hx_mem_to_host(hx_gs_backend(fine_gs), m, hx_gs_mask(fine_gs), sizeof(double) * (size_t)c->nf);
    for (int64_t g = 0; !err && g < c->nf; g++) c->ffree[g] = m[g] != 0.0;
    free(m);
    HX_CALL(err);
  } else {
    for (int64_t g = 0; g < c->nf; g++) c->ffree[g] = 1;
  }
  HX_CHECK(c->nf < INT32_MAX, HX_ERR_NOT_IMPL, "fine G-vector of %lld entries", (long long)c->nf);
  const int32_t *fmap = hx_gs_map_host(fine_gs);
  unsigned char *seen = NULL;
  HX_CALL(HX_ALLOC(&seen, c->nf + 1));
  HX_CALL(HX_ALLOC(&c->pe_off, (int64_t)E + 1));
  HX_CALL(HX_ALLOC(&c->pe_g, c->nf + 1));
  HX_CALL(HX_ALLOC(&c->pe_node, c->nf + 1));
  int64_t cnt = 0;
  for (int32_t e = 0; e < E; e++) {
    c->pe_off[e] = (int32_t)cnt;
    for (int i = 0; i < n3; i++) {
      const int32_t g = fmap[(int64_t)e * n3 + i];
      if (g < 0 || seen[g]) continue;
      seen[g] = 1;
      c->pe_g[cnt] = g, c->pe_node[cnt] = i, cnt++;
    }
  }
  c->pe_off[E] = (int32_t)cnt;
  free(seen);
  HX_CHECK(cnt == c->nf, HX_ERR_INTERNAL, "fine G entries reached from the L map: %lld of %lld",
           (long long)cnt, (long long)c->nf);
  return HX_SUCCESS;
}

/* The element matrices on kappa and lambda assembled into hypre's matrix
 * (timed into ev_setup[0]) and the AMG on it (ev_setup[1]). again = 0: the
 * first build (hypre acquired here); again = 1: the last build's hypre
 * objects are destroyed first (hx_coarse_set_lambda). */
static int matrix_amg(hx_coarse c, hx_mesh mesh, hx_ax fine_ax, const double *h_kappa, const double *h_lambda,
                      int again) {
  hx_ev ev = hx_ev_begin(&c->ev_setup[0]);
  double *K = NULL;
  HX_CALL(HX_ALLOC(&K, (int64_t)c->E * 64 + 1));
  int err = element_matrices(c, mesh, fine_ax, h_kappa, h_lambda, K);
  int herr = 0;
  if (!err && again) {
    if (c->amg_created) herr |= HYPRE_BoomerAMGDestroy(c->amg);
    if (c->x) herr |= HYPRE_IJVectorDestroy(c->x);
    if (c->b) herr |= HYPRE_IJVectorDestroy(c->b);
    if (c->A) herr |= HYPRE_IJMatrixDestroy(c->A);
    c->amg_created = 0, c->x = c->b = NULL, c->A = NULL;
    c->pA = NULL, c->pb = c->px = NULL;
  } else if (!err) {
    err = hx_hypre_acquire();
    if (!err) c->have_hypre = 1;
  }
  if (!err && !herr) err = assemble(c, K);
  free(K);
  HX_CALL(err);
  HX_HYPRE(herr);
  hx_ev_end(&ev, 0.0, 0.0);
  ev = hx_ev_begin(&c->ev_setup[1]);
  HX_CALL(amg_setup(c));
  hx_ev_end(&ev, 0.0, 0.0);
  return HX_SUCCESS;
}

static int create(hx_coarse c, hx_mesh mesh, hx_gs fine_gs, hx_ax fine_ax, const double *h_kappa,
                  const double *h_lambda, const int *h_dirichlet_l) {
  HX_MPI(MPI_Comm_dup(hx_mesh_comm(mesh), &c->comm));
  HX_MPI(MPI_Comm_rank(c->comm, &c->rank));
  HX_MPI(MPI_Comm_size(c->comm, &c->size));
  const int32_t E = c->E = hx_mesh_num_elements(mesh);
  const int n3 = c->n3;
  HX_CHECK(hx_gs_num_l(fine_gs) == (int64_t)E * n3, HX_ERR_ARG,
           "fine gs has %lld L entries, expected %d elements x (p+1)^3 = %lld",
           (long long)hx_gs_num_l(fine_gs), (int)E, (long long)E * n3);

  /* basis values phi_v at the GLL nodes */
  double t[16], w[16];
  HX_CALL(hx_gll(c->n, t, w));
  HX_CALL(HX_ALLOC(&c->phi, 8 * n3));
  for (int k = 0; k < c->n; k++)
    for (int j = 0; j < c->n; j++)
      for (int i = 0; i < c->n; i++)
        for (int v = 0; v < 8; v++)
          c->phi[8 * (i + c->n * (j + c->n * k)) + v] =
              lin(v & 1, t[i]) * lin((v >> 1) & 1, t[j]) * lin((v >> 2) & 1, t[k]);

  HX_CALL(HX_ALLOC(&c->lin1, 2 * c->n));
  for (int i = 0; i < c->n; i++) c->lin1[i] = lin(0, t[i]), c->lin1[c->n + i] = lin(1, t[i]);

  /* coarse gather-scatter on a private cpu backend (host memory) */
  HX_CALL(hx_backend_create("host", &c->cb)); /* coarse vectors live on the host */
  const int64_t *vid = hx_mesh_element_vertex_ids(mesh);
  int pin_rank = E > 0 ? c->rank : c->size; /* pure Neumann: the rank of the pinned vertex (below) */
  if (c->o.nullspace) HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &pin_rank, 1, MPI_INT, MPI_MIN, c->comm));
  int64_t *ids = NULL;
  int *cflag = NULL;
  HX_CALL(HX_ALLOC(&ids, (int64_t)E * 8 + 1));
  HX_CALL(HX_ALLOC(&cflag, (int64_t)E * 8 + 1));
  for (int64_t i = 0; i < (int64_t)E * 8; i++) ids[i] = vid[i] + 1; /* gs ids are 1-based */
  const int p = c->p, n = c->n;
  for (int32_t e = 0; e < E; e++)
    for (int v = 0; v < 8; v++) {
      const int corner = (v & 1) * p + n * (((v >> 1) & 1) * p + n * (((v >> 2) & 1) * p));
      cflag[8 * (int64_t)e + v] = h_dirichlet_l && h_dirichlet_l[(int64_t)e * n3 + corner] != 0;
    }
  /* pure Neumann: pin the first vertex of the first element of the lowest
   * rank that has elements (a Dirichlet vertex of the coarse space only): A0
   * is then SPD, and the solver projects the constant out of the
   * preconditioned residual. Not rank 0 as such: a partitioner may leave it
   * without elements (metis on 2 elements and 2 ranks can), and without the
   * pin A0 is singular; BoomerAMG then amplifies the rounding defect of
   * 1.(P^T r) (1e-8 from an FP32 cycle's residual) into a coarse correction
   * of size 1e8 and the preconditioner is indefinite */
  if (c->o.nullspace && c->rank == pin_rank) cflag[0] = 1;
  int err = hx_gs_create(c->cb, c->comm, (int64_t)E * 8, ids, &c->cgs);
  if (!err) err = hx_gs_set_mask(c->cgs, cflag); /* exchange MAX: Dirichlet on any rank */
  free(ids), free(cflag);
  HX_CALL(err);
  c->ncg = hx_gs_num_local(c->cgs);
  c->cmap = hx_gs_map_host(c->cgs);
  const int64_t ncown = hx_gs_num_owned(c->cgs);
  double *cmask = NULL;
  HX_CALL(HX_ALLOC(&cmask, c->ncg + 1));
  HX_CALL(hx_mem_to_host(c->cb, cmask, hx_gs_mask(c->cgs), sizeof(double) * (size_t)c->ncg));
  HX_CALL(hx_mem_alloc(c->cb, sizeof(double) * (size_t)(E * 8 + 1), (void **)&c->cl));
  HX_CALL(hx_mem_alloc(c->cb, sizeof(double) * (size_t)(c->ncg + 1), (void **)&c->cg));

  /* rows: owned non-Dirichlet vertices, contiguous per rank */
  int64_t nown = 0;
  for (int64_t g = 0; g < ncown; g++) nown += cmask[g] != 0.0;
  HX_CHECK(nown < INT32_MAX, HX_ERR_NOT_IMPL, "%lld coarse rows on one rank", (long long)nown);
  c->nrows = (int)nown;
  int64_t lo = 0;
  HX_MPI(MPI_Exscan(&nown, &lo, 1, MPI_INT64_T, MPI_SUM, c->comm));
  if (c->rank == 0) lo = 0;
  c->ilower = lo;
  HX_MPI(MPI_Allreduce(&nown, &c->rows_global, 1, MPI_INT64_T, MPI_SUM, c->comm));
  HX_CHECK(c->rows_global < INT32_MAX, HX_ERR_NOT_IMPL,
           "%lld coarse rows: hypre is built with 32-bit HYPRE_BigInt", (long long)c->rows_global);
  HX_CALL(HX_ALLOC(&c->own_g, c->nrows + 1));
  HX_CALL(HX_ALLOC(&c->row, c->ncg + 1));
  /* row numbers + 1 (0 = none) spread from the owners with an exchange ADD */
  for (int64_t g = 0, k = 0; g < c->ncg; g++) {
    c->cg[g] = 0.0;
    if (g < ncown && cmask[g] != 0.0) c->own_g[k] = (int32_t)g, c->cg[g] = (double)(lo + k + 1), k++;
  }
  free(cmask);
  HX_CALL(hx_gs_exchange(c->cgs, c->cg, HX_GS_ADD));
  for (int64_t g = 0; g < c->ncg; g++) c->row[g] = (int64_t)c->cg[g] - 1;

  HX_CALL(fine_side(c, fine_gs));

  /* coarse matrix and AMG */
  if (c->rows_global > 0) {
    /* hexcg run --log-view: where the coarse setup goes */
    HX_CALL(hx_ev_slot_init(&c->ev_setup[0], "coarse.setup.matrix"));
    HX_CALL(hx_ev_slot_init(&c->ev_setup[1], "coarse.setup.amg"));
    HX_CALL(matrix_amg(c, mesh, fine_ax, h_kappa, h_lambda, 0));
  }
  c->st.rows_global = c->rows_global;
  /* report the slowest rank */
  HX_CALL(hx_ev_max_seconds(c->comm, c->ev_setup, 2));
  return HX_SUCCESS;
}

int hx_coarse_create(hx_mesh mesh, hx_gs fine_gs, hx_ax fine_ax, const double *h_kappa,
                     const double *h_lambda, const int *h_dirichlet_l, const hx_coarse_opts *o,
                     hx_coarse *out) {
  *out = NULL;
  HX_CHECK(mesh && fine_gs && fine_ax, HX_ERR_ARG,
           "coarse level: mesh, fine gs and fine operator are required");
  hx_coarse_opts def;
  if (!o) hx_coarse_opts_default(&def), o = &def;
  HX_CALL(check_opts(o));
  HX_CHECK(h_kappa || o->op != HX_COARSE_FEM, HX_ERR_ARG, "coarse level: the FEM operator needs kappa");
  hx_coarse c;
  HX_CALL(HX_ALLOC(&c, 1));
  c->o = *o;
  c->comm = MPI_COMM_NULL;
  c->p = hx_ax_order(fine_ax);
  c->n = c->p + 1;
  c->n3 = c->n * c->n * c->n;
  const int err = create(c, mesh, fine_gs, fine_ax, h_kappa, h_lambda, h_dirichlet_l);
  if (err) {
    hx_coarse_destroy(&c);
    return hx_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = c;
  return HX_SUCCESS;
}

int hx_coarse_destroy(hx_coarse *pc) {
  if (!pc || !*pc) return HX_SUCCESS;
  hx_coarse c = *pc;
  int herr = 0;
  if (c->amg_created) herr |= HYPRE_BoomerAMGDestroy(c->amg);
  if (c->x) herr |= HYPRE_IJVectorDestroy(c->x);
  if (c->b) herr |= HYPRE_IJVectorDestroy(c->b);
  if (c->A) herr |= HYPRE_IJMatrixDestroy(c->A);
  if (c->cb) {
    hx_mem_free(c->cb, (void **)&c->cl);
    hx_mem_free(c->cb, (void **)&c->cg);
  }
  int err = hx_gs_destroy(&c->cgs);
  hx_backend_destroy(&c->cb);
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c->row), free(c->own_g), free(c->ffree), free(c->pe_off), free(c->pe_g), free(c->pe_node),
      free(c->phi), free(c->lin1);
  const int had = c->have_hypre;
  free(c);
  *pc = NULL;
  HX_CALL(err);
  HX_HYPRE(herr);
  if (had) HX_CALL(hx_hypre_release());
  return HX_SUCCESS;
}

/* ------------------------------------------------------------ apply */

/* Restriction and prolongation per element in tensor form: phi_v(t_i, t_j,
 * t_k) = l_a(t_i) l_b(t_j) l_c(t_k), so P^T of an element box is three 1D
 * contractions with the two linear functions (k, then j, then i:
 * 2 n^3 + 4 n^2 + 8 n multiply-adds, independent and contiguous in the
 * first, instead of 8 n^3 in a dependent chain per node), and P the same
 * expansions in reverse. The element box holds the chosen-copy entries of
 * the element (weights mask, times "owned" for the restriction) and zeros.
 * Elements are independent (the restriction writes the element's 8 coarse
 * L entries, the prolongation the fine entries whose chosen copy it holds),
 * so the loops run on the calling thread's OpenMP team: serial in the
 * overlapped coarse thread (its team size is 1), parallel in the
 * sequential schedule. */
#define HX_COARSE_NMAX 16

/* coarse G (c->cg, assembled) = P^T h_r */
static int restrict_to_cg(hx_coarse c, const double *h_r) {
  const int32_t E = c->E;
  const int n = c->n, n2 = n * n;
  const double *l0 = c->lin1, *l1 = c->lin1 + n;
  double *cl = c->cl;
#pragma omp parallel if (E > 16)
  {
    double y[HX_COARSE_NMAX * HX_COARSE_NMAX * HX_COARSE_NMAX], z[2][HX_COARSE_NMAX * HX_COARSE_NMAX];
    double zz[4][HX_COARSE_NMAX];
#pragma omp for schedule(static)
    for (int32_t e = 0; e < E; e++) {
      memset(y, 0, sizeof(double) * (size_t)(n2 * n));
      for (int32_t q = c->pe_off[e]; q < c->pe_off[e + 1]; q++) {
        const int32_t g = c->pe_g[q];
        y[c->pe_node[q]] = h_r[g] * (g < c->nf_owned && c->ffree[g] ? 1.0 : 0.0);
      }
      /* k: z[c][ij] = sum_k l_c(t_k) y[ij + n2 k] */
      for (int ij = 0; ij < n2; ij++) z[0][ij] = 0.0, z[1][ij] = 0.0;
      for (int k = 0; k < n; k++) {
        const double *yk = y + n2 * k;
        const double a0 = l0[k], a1 = l1[k];
        for (int ij = 0; ij < n2; ij++) z[0][ij] += a0 * yk[ij], z[1][ij] += a1 * yk[ij];
      }
      /* j: zz[b + 2c][i] = sum_j l_b(t_j) z[c][i + n j] */
      for (int cc = 0; cc < 2; cc++) {
        for (int i = 0; i < n; i++) zz[2 * cc][i] = 0.0, zz[2 * cc + 1][i] = 0.0;
        for (int j = 0; j < n; j++) {
          const double *zj = z[cc] + n * j;
          const double b0 = l0[j], b1 = l1[j];
          for (int i = 0; i < n; i++) zz[2 * cc][i] += b0 * zj[i], zz[2 * cc + 1][i] += b1 * zj[i];
        }
      }
      /* i: cl[a + 2b + 4c] = sum_i l_a(t_i) zz[b + 2c][i] */
      for (int bc = 0; bc < 4; bc++) {
        double s0 = 0.0, s1 = 0.0;
        for (int i = 0; i < n; i++) s0 += l0[i] * zz[bc][i], s1 += l1[i] * zz[bc][i];
        cl[8 * (int64_t)e + 2 * bc] = s0, cl[8 * (int64_t)e + 2 * bc + 1] = s1;
      }
    }
  }
  HX_CALL(hx_gs_assemble(c->cgs, cl, c->cg));
  return HX_SUCCESS;
}

/* h_z = P (c->cg, consistent, zero on Dirichlet vertices); add: h_z += it
 * (each fine entry is written by its chosen copy only: no race) */
static void prolong_from_cg(hx_coarse c, double *h_z, int add) {
  const int32_t E = c->E;
  const int n = c->n, n2 = n * n;
  const double *l0 = c->lin1, *l1 = c->lin1 + n;
#pragma omp parallel if (E > 16)
  {
    double y[HX_COARSE_NMAX * HX_COARSE_NMAX * HX_COARSE_NMAX], z[2][HX_COARSE_NMAX * HX_COARSE_NMAX];
    double zz[4][HX_COARSE_NMAX];
#pragma omp for schedule(static)
    for (int32_t e = 0; e < E; e++) {
      double cv[8];
      for (int v = 0; v < 8; v++) cv[v] = c->cg[c->cmap[8 * (int64_t)e + v]];
      /* i: zz[b + 2c][i] = sum_a l_a(t_i) cv[a + 2b + 4c] */
      for (int bc = 0; bc < 4; bc++)
        for (int i = 0; i < n; i++) zz[bc][i] = l0[i] * cv[2 * bc] + l1[i] * cv[2 * bc + 1];
      /* j: z[c][i + n j] = sum_b l_b(t_j) zz[b + 2c][i] */
      for (int cc = 0; cc < 2; cc++)
        for (int j = 0; j < n; j++)
          for (int i = 0; i < n; i++) z[cc][i + n * j] = l0[j] * zz[2 * cc][i] + l1[j] * zz[2 * cc + 1][i];
      /* k: y[ij + n2 k] = sum_c l_c(t_k) z[c][ij] */
      for (int k = 0; k < n; k++)
        for (int ij = 0; ij < n2; ij++) y[ij + n2 * k] = l0[k] * z[0][ij] + l1[k] * z[1][ij];
      for (int32_t q = c->pe_off[e]; q < c->pe_off[e + 1]; q++) {
        const int32_t g = c->pe_g[q];
        const double v = y[c->pe_node[q]] * (c->ffree[g] ? 1.0 : 0.0);
        if (add)
          h_z[g] += v;
        else
          h_z[g] = v;
      }
    }
  }
}

/* coarse G (c->cg) from owned row values h_c: owners write, exchange ADD */
static int rows_to_cg(hx_coarse c, const double *h_c) {
  memset(c->cg, 0, sizeof(double) * (size_t)c->ncg);
  for (int k = 0; k < c->nrows; k++) c->cg[c->own_g[k]] = h_c[k];
  HX_CALL(hx_gs_exchange(c->cgs, c->cg, HX_GS_ADD));
  return HX_SUCCESS;
}

static double *par_data(HYPRE_ParVector v) {
  return hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)v));
}

static int coarse_apply(hx_coarse c, const double *h_r, double *h_z, int add) {
  if (c->rows_global == 0) { /* everything Dirichlet: no coarse space */
    if (!add) memset(h_z, 0, sizeof(double) * (size_t)c->nf);
    c->st.applies++;
    return HX_SUCCESS;
  }
  hx_ev ev = hx_ev_begin(&c->ev_restrict);
  HX_CALL(restrict_to_cg(c, h_r));
  hx_ev_end(&ev, 0.0, 0.0);
  ev = hx_ev_begin(&c->ev_solve);
  double *b = par_data(c->pb), *x = par_data(c->px);
  for (int k = 0; k < c->nrows; k++) b[k] = c->cg[c->own_g[k]], x[k] = 0.0;
  HX_HYPRE(HYPRE_BoomerAMGSolve(c->amg, c->pA, c->pb, c->px));
  HX_CALL(rows_to_cg(c, x));
  hx_ev_end(&ev, 0.0, 0.0);
  ev = hx_ev_begin(&c->ev_prolong);
  prolong_from_cg(c, h_z, add);
  hx_ev_end(&ev, 0.0, 0.0);
  c->st.applies++;
  return HX_SUCCESS;
}

int hx_coarse_apply(hx_coarse c, const double *h_r, double *h_z) { return coarse_apply(c, h_r, h_z, 0); }

int hx_coarse_apply_add(hx_coarse c, const double *h_r, double *h_z) { return coarse_apply(c, h_r, h_z, 1); }

void hx_coarse_get_stats(hx_coarse c, hx_coarse_stats *s) {
  *s = c->st;
  s->t_assembly = c->ev_setup[0].seconds, s->t_amg_setup = c->ev_setup[1].seconds;
  s->t_restrict = c->ev_restrict.seconds, s->t_solve = c->ev_solve.seconds;
  s->t_prolong = c->ev_prolong.seconds;
}

void *hx_coarse_parcsr(hx_coarse c, int64_t *ilower, int64_t *iupper) {
  if (ilower) *ilower = c->ilower;
  if (iupper) *iupper = c->ilower + c->nrows - 1;
  return c->have_hypre ? (void *)c->pA : NULL;
}

int hx_coarse_restrict(hx_coarse c, const double *h_r, double *h_c) {
  HX_CALL(restrict_to_cg(c, h_r));
  for (int k = 0; k < c->nrows; k++) h_c[k] = c->cg[c->own_g[k]];
  return HX_SUCCESS;
}

int hx_coarse_prolong(hx_coarse c, const double *h_c, double *h_z) {
  HX_CALL(rows_to_cg(c, h_c));
  prolong_from_cg(c, h_z, 0);
  return HX_SUCCESS;
}

int hx_coarse_element_rows(hx_coarse c, int64_t *h_rows) {
  for (int64_t i = 0; i < (int64_t)c->E * 8; i++) h_rows[i] = c->row[c->cmap[i]];
  return HX_SUCCESS;
}

int hx_coarse_report(hx_coarse c, hx_coarse_operator op, hx_opt *node, hx_opt **sub) {
  hx_coarse_stats cs;
  hx_coarse_get_stats(c, &cs);
  HX_CALL(hx_pc_report_map(node, "coarse", sub));
  HX_CALL(hx_pc_report_int(*sub, "order", 1));
  HX_CALL(hx_pc_report_text(*sub, "solver",
                            op == HX_COARSE_GALERKIN ? "q1 galerkin boomeramg" : "q1 fem boomeramg"));
  HX_CALL(hx_pc_report_int(*sub, "rows", cs.rows_global));
  HX_CALL(hx_pc_report_int(*sub, "amg_levels", cs.amg_levels));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------------- the solve beside other work */
static void *job_run(void *arg) {
  hx_coarse_job *j = arg;
#ifdef _OPENMP
  /* also called inline on the caller's thread: its team size is put back below, or every later
   * parallel region of the run would get one thread */
  const int nthreads = omp_get_max_threads();
  omp_set_num_threads(1); /* this thread's own team size: the other work keeps the cores */
#endif
  hx_ev ev = hx_ev_begin(&j->ev);
  const int err = hx_coarse_apply(j->c, j->h_r, j->h_z);
  j->st.code = HX_SUCCESS;
  if (err) {
    hx_error_capture(&j->st);
    if (!j->st.code) j->st.code = err;
    hx_error_clear();
  }
  hx_ev_end(&ev, 0.0, 0.0);
#ifdef _OPENMP
  omp_set_num_threads(nthreads);
#endif
  return NULL;
}

void hx_coarse_job_start(hx_coarse_job *j, hx_coarse c, const double *h_r, double *h_z, int thread) {
  j->c = c, j->h_r = h_r, j->h_z = h_z;
  memset(&j->ev, 0, sizeof j->ev); /* tied to no log event */
  j->started = thread && pthread_create(&j->th, NULL, job_run, j) == 0;
}

int hx_coarse_job_join(hx_coarse_job *j, int err, double *t) {
  if (j->started)
    pthread_join(j->th, NULL);
  else
    job_run(j);
  j->started = 0;
  *t = j->ev.seconds;
  HX_CALL(err);
  if (j->st.code) return HX_ERROR_RERAISE(&j->st);
  return HX_SUCCESS;
}

int hx_coarse_set_lambda(hx_coarse c, hx_mesh mesh, hx_ax fine_ax, const double *h_kappa,
                         const double *h_lambda) {
  HX_CHECK(c && mesh && fine_ax, HX_ERR_ARG, "coarse level: level, mesh and fine operator are required");
  if (c->rows_global == 0) return HX_SUCCESS;
  /* hypre's objects anew on the new values, as create makes them (the
   * rows, the gather-scatter and the fine side stay); the times are added
   * to the setup's figures */
  HX_CALL(matrix_amg(c, mesh, fine_ax, h_kappa, h_lambda, 1));
  HX_CALL(hx_ev_max_seconds(c->comm, c->ev_setup, 2));
  return HX_SUCCESS;
}

int hx_coarse_set_shift_on(hx_coarse c, hx_disc d) {
  HX_CALL(hx_coarse_set_lambda(c, hx_disc_mesh(d), hx_disc_ax(d), hx_disc_kappa(d), hx_disc_lambda(d)));
  return HX_SUCCESS;
}

int hx_coarse_create_on(hx_disc d, const hx_coarse_opts *o, hx_coarse *c) {
  hx_coarse_opts co = *o; /* the disc's Robin term and null space */
  co.robin_l = hx_disc_robin_l(d), co.nullspace = hx_disc_nullspace(d);
  HX_CALL(hx_coarse_create(hx_disc_mesh(d), hx_disc_gs(d), hx_disc_ax(d), hx_disc_kappa(d), hx_disc_lambda(d),
                           hx_disc_dirichlet_l(d), &co, c));
  return HX_SUCCESS;
}
