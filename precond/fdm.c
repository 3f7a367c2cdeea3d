/* Fine level of the two-level Schwarz preconditioner: overlapping element
 * subdomains (one GLL layer across each face) solved by fast
 * diagonalisation of the separable box approximation. Setup on the host
 * (box lengths, neighbour planes and widths with one MPI_Alltoallv, 1D
 * eigenproblems with LAPACK dsygv, the extended gather-scatter), apply on
 * the backend (kernels/fdm.c). See docs/fdm.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hx_fdm_math.h"
#include "precond_impl.h"

/* LAPACK (Fortran; the trailing arguments are the hidden string lengths) */
extern void dsygv_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a,
                   const int *lda, double *b, const int *ldb, double *w, double *work, const int *lwork,
                   int *info, size_t, size_t);

struct hx_fdm_s {
  hx_backend b;
  hx_gs gs;  /* fine (borrowed) */
  hx_gs xgs; /* extended: E*m^3 L entries, ids of the subdomain nodes */
  MPI_Comm comm;
  int p, m;
  int32_t E;
  int64_t ng, xng, xnl;
  int64_t xnl_layout; /* entries of d_xmap and d_xw: xnl, or the grouped layout's (padded lanes) */
  hx_fdm_weight weight;
  double *h_S, *h_L;             /* host copies (E*3*m*m, E*3*m) */
  void *d_S, *d_L;               /* backend copies, in prec */
  hx_precision prec;             /* of the box solves and the extended vectors */
  size_t es;                     /* bytes per entry of prec */
  int32_t *d_out_idx;            /* fine G -> extended G */
  double *d_out_w;               /* mask, W^{1/2} (and D^{-1/2}) of the output copy */
  double *d_in_w;                /* ras: the input copy's weights (fine G); else NULL: d_out_w's */
  int32_t *d_xmap;               /* extended L -> G map (the scatter fused into the box solves) */
  void *d_xg, *d_xw;             /* extended G-vector, extended L-vector out (prec) */
  int overlap;
  int32_t nbnd, nint;
  int32_t *d_bnd, *d_int;
  /* grouped layout (FP32, CPU cross-element kernel; docs/fdm.md): the
   * extended L side of xgs, d_xmap and d_xw interleaved by groups of 8
   * elements (the boundary list's groups first), S and L likewise */
  int grouped;
  int32_t gbnd, gall;   /* groups of the boundary list (overlap), all groups */
  float *d_Sg, *d_Lg;
  hx_fdm_stats st; /* bytes_per_apply; the timings come from the slots */
  hx_ev_slot ev_setup;           /* hx_fdm_create (seconds: the max over ranks) */
  hx_ev_slot ev_apply;           /* whole applies, bytes_per_apply each (count: the applies) */
  hx_ev_slot ev_local, ev_exch;  /* the element solves; the overlap exchanges (not hidden) */
  /* hx_fdm_set_lambda: host copies of the eigenvalues before lambda
   * (kappa L, E*3*m), the box lambda's divisor per element (the mean node
   * scale, NULL: none) and the grouped layout's element per lane (G*8) */
  double *h_Lk, *h_ld;
  int32_t *h_lane;
};

/* ---------------------------------------------------------------- setup helpers */

/* Point of the element map at the centre of face f (hex8: mean of its 4
 * corners; hex27: its face-centre node). */
static void face_centre(const double *v, int npe, int f, double c[3]) {
  const int d = f / 2, s = f % 2;
  c[0] = c[1] = c[2] = 0.0;
  if (npe == 8) {
    for (int q = 0; q < 8; q++) {
      const int ab[3] = {q & 1, (q >> 1) & 1, (q >> 2) & 1};
      if (ab[d] != s) continue;
      for (int x = 0; x < 3; x++) c[x] += 0.25 * v[3 * q + x];
    }
  } else {
    int ab[3] = {1, 1, 1};
    ab[d] = 2 * s;
    const int q = ab[0] + 3 * ab[1] + 9 * ab[2];
    for (int x = 0; x < 3; x++) c[x] = v[3 * q + x];
  }
}

/* element-local index of the node at depth `depth` from face f at face
 * coordinates (u, v) (docs/mesh.md: faces 0/1 (s, t), 2/3 (r, t), 4/5 (r, s)) */
static int face_depth_node(int p, int f, int depth, int u, int v) {
  const int n = p + 1, d = f / 2, x = (f % 2) ? p - depth : depth;
  int ijk[3];
  ijk[d] = x;
  ijk[d == 0 ? 1 : 0] = u;
  ijk[d == 2 ? 1 : 2] = v;
  return ijk[0] + n * (ijk[1] + n * ijk[2]);
}

typedef struct {
  int64_t key; /* neighbour global element id * 6 + its face */
  int64_t off; /* record offset in the receive buffer */
} rec_key;

static int cmp_rec(const void *a, const void *b) {
  const int64_t x = ((const rec_key *)a)->key, y = ((const rec_key *)b)->key;
  return x < y ? -1 : x > y;
}
static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* 1D extended matrices of one element in one direction and their
 * generalized eigenpairs. present[m]: which of the m box points exist.
 * h: own length; hl, hr: neighbour lengths (used where present[0] /
 * present[m-1]). Khat, w: reference stiffness (n*n) and GLL weights.
 * Out: S (m*m, row i = eigenvector i over the box points, zero rows for
 * i >= number of present points), lam (m; 1 on the padding rows). */
static int fdm_1d(int p, const int *present, double h, double hl, double hr, double rl, double rr,
                  const double *Khat, const double *w, double *S, double *lam) {
  const int n = p + 1, m = p + 3;
  double K[HX_FDM_MMAX * HX_FDM_MMAX], M[HX_FDM_MMAX];
  memset(K, 0, sizeof K), memset(M, 0, sizeof M);
  for (int a = 0; a < n; a++) {
    M[1 + a] += 0.5 * h * w[a];
    for (int c = 0; c < n; c++) K[(1 + a) * m + 1 + c] += 2.0 / h * Khat[a * n + c];
  }
  /* the neighbour's segments carry its coefficient: K and M scaled by rl,
   * rr = kappa_neighbour / kappa_own (the box is kappa_own times this 1D
   * problem), so that across a jump the overlap is as stiff as it is */
  if (present[0])
    for (int x = 0; x < 2; x++) {
      M[x] += rl * 0.5 * hl * w[p - 1 + x];
      for (int y = 0; y < 2; y++) K[x * m + y] += rl * 2.0 / hl * Khat[(p - 1 + x) * n + p - 1 + y];
    }
  if (present[m - 1])
    for (int x = 0; x < 2; x++) {
      M[p + 1 + x] += rr * 0.5 * hr * w[x];
      for (int y = 0; y < 2; y++) K[(p + 1 + x) * m + p + 1 + y] += rr * 2.0 / hr * Khat[x * n + y];
    }
  /* p = 1: the extension point is the neighbour's far vertex, which it
   * shares with the element beyond; mirror the neighbour there so the box
   * keeps Dirichlet ends at -2 and p+2 (exact inside a uniform mesh, and
   * the box problem stays definite for lambda = 0) */
  if (p == 1 && present[0]) K[0] += rl * 2.0 / hl * Khat[0], M[0] += rl * 0.5 * hl * w[0];
  if (p == 1 && present[m - 1]) K[m * m - 1] += rr * 2.0 / hr * Khat[3], M[m - 1] += rr * 0.5 * hr * w[1];
  int P[HX_FDM_MMAX], mp = 0;
  for (int a = 0; a < m; a++)
    if (present[a]) P[mp++] = a;
  double A[HX_FDM_MMAX * HX_FDM_MMAX], B[HX_FDM_MMAX * HX_FDM_MMAX], ev[HX_FDM_MMAX], work[64 * HX_FDM_MMAX];
  memset(B, 0, sizeof B);
  for (int x = 0; x < mp; x++) {
    B[x + mp * x] = M[P[x]];
    for (int y = 0; y < mp; y++) A[x + mp * y] = K[P[x] * m + P[y]];
  }
  memset(S, 0, sizeof(double) * (size_t)m * m);
  for (int i = 0; i < m; i++) lam[i] = 1.0;
  /* no free point in this direction (p = 1 between two Dirichlet faces):
   * the box has no unknowns, S = 0 and its solve gives 0; LAPACK refuses
   * n = 0 (issue 53: its error handler stopped the process with status 0) */
  if (mp == 0) return HX_SUCCESS;
  int itype = 1, lwork = 64 * HX_FDM_MMAX, info = 0;
  dsygv_(&itype, "V", "U", &mp, A, &mp, B, &mp, ev, work, &lwork, &info, 1, 1);
  char what[64];
  snprintf(what, sizeof what, "a %d x %d FDM eigenproblem", mp, mp);
  HX_CALL(hx_lapack_check("dsygv", info, what));
  double emax = 0.0;
  for (int i = 0; i < mp; i++) emax = fabs(ev[i]) > emax ? fabs(ev[i]) : emax;
  for (int i = 0; i < mp; i++) {
    /* the constant mode of a pure-Neumann direction: exactly 0 */
    lam[i] = ev[i] < 1e-12 * emax ? 0.0 : ev[i];
    for (int x = 0; x < mp; x++) S[i * m + P[x]] = A[x + mp * i];
  }
  return HX_SUCCESS;
}

/* The inputs fdm_1d reads (its output is a function of them): the present
 * flags, h, and the neighbour's length and kappa ratio on each side where
 * that point is present (0 where it is not, as fdm_1d ignores them there).
 * Compared by their bits (memcmp): zero padding from memset. */
typedef struct {
  double h, hl, hr, rl, rr;
  uint32_t present; /* bit a: present[a] */
  uint32_t pad;
} eig_key;

static void eig_key_make(eig_key *k, int m, const int *pr, double h, double hl, double hr, double rl, double rr) {
  memset(k, 0, sizeof *k);
  for (int a = 0; a < m; a++) k->present |= (uint32_t)(pr[a] != 0) << a;
  k->h = h;
  if (pr[0]) k->hl = hl, k->rl = rl;
  if (pr[m - 1]) k->hr = hr, k->rr = rr;
}

/* FNV-1a over the key's bytes */
static uint64_t eig_key_hash(const eig_key *k) {
  const unsigned char *c = (const unsigned char *)k;
  uint64_t x = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < sizeof *k; i++) x = (x ^ c[i]) * 0x100000001b3ull;
  return x ^ (x >> 29);
}

static void fdm_free(hx_fdm f) {
  if (!f) return;
  hx_gs_destroy(&f->xgs);
  free(f->h_S), free(f->h_L);
  hx_mem_free(f->b, (void **)&f->d_S);
  hx_mem_free(f->b, (void **)&f->d_L);
  hx_mem_free(f->b, (void **)&f->d_out_idx);
  hx_mem_free(f->b, (void **)&f->d_in_w);
  hx_mem_free(f->b, (void **)&f->d_out_w);
  hx_mem_free(f->b, (void **)&f->d_xg);
  hx_mem_free(f->b, (void **)&f->d_xmap);
  hx_mem_free(f->b, (void **)&f->d_xw);
  hx_mem_free(f->b, (void **)&f->d_bnd);
  hx_mem_free(f->b, (void **)&f->d_int);
  hx_mem_free(f->b, (void **)&f->d_Sg);
  hx_mem_free(f->b, (void **)&f->d_Lg);
  free(f->h_Lk), free(f->h_ld), free(f->h_lane);
  free(f);
}

/* Host work arrays of the setup, freed together. */
typedef struct {
  int64_t *gid, *xid, *plane, *sendbuf, *recvbuf;
  double *h, *hn, *kn; /* box lengths (E*3), neighbour lengths and box kappa (E*6) */
  double *kbox, *lbox;  /* box kappa and lambda per element (E) */
  double *dg;           /* node scale D per fine G entry (ng), NULL: none */
  rec_key *keys;
  int *sc, *rc, *sd, *rd, *present, *flag;
  int32_t *lb, *li, *out_idx;
  double *mask, *imult, *wt, *in_w;
  uint8_t *fpriv, *plane_priv, *xpriv; /* held by this rank only: per fine G, plane entry, extended L */
  /* the keyed numbering (fdm_extended_keys): per plane entry its fine G
   * entry (-1 none, -2 a remote neighbour's node: its id in plane); per
   * extended L entry (element layout) its key, -1 none; per key its G index */
  int32_t *pcode, *xkey, *gof;
  hx_gs_keyed kd;
  int32_t *lane, nlg; /* the grouped layout's lanes and groups (NULL: element layout) */
  int rank, size;
  int64_t nrec; /* records received in recvbuf (keys: sorted by face key) */
} fdm_work;

static void work_free(fdm_work *w) {
  free(w->gid), free(w->xid), free(w->plane), free(w->sendbuf), free(w->recvbuf);
  free(w->h), free(w->hn), free(w->kn), free(w->kbox), free(w->lbox), free(w->dg), free(w->keys);
  free(w->sc), free(w->rc), free(w->sd), free(w->rd), free(w->present), free(w->flag);
  free(w->lb), free(w->li), free(w->out_idx);
  free(w->mask), free(w->imult), free(w->wt), free(w->in_w);
  free(w->fpriv), free(w->plane_priv), free(w->xpriv);
  free(w->pcode), free(w->xkey), free(w->gof), free(w->lane);
  hx_gs_keyed_destroy(&w->kd);
}

/* After the interior extended G entries were renumbered in the grouped L
 * order (nof: new index of each old one; hx_gs_relayout), the weighted
 * copies' index array (W's host copy, uploaded after this by
 * fdm_upload_copies) follows. The box solves then read the extended vector
 * nearly in sequence, 8 lanes of new points at consecutive entries. */
static void remap_weighted_copies(hx_fdm f, fdm_work *W, const int32_t *nof) {
  for (int64_t i = 0; i < f->ng; i++)
    if (W->out_idx[i] >= 0) W->out_idx[i] = nof[W->out_idx[i]];
}

/* The grouped layout (docs/fdm.md "Grouped layout"): the elements in
 * groups of 8 in processing order (all of them; with overlap the boundary
 * list, padded to a multiple of 8 with empty lanes, then the interior one),
 * the extended L-vector in [group][point][lane] order, S and L interleaved
 * [group][entry][lane] in float. HEXCG_FDM_GROUPED=0 keeps the element
 * layout (A/B runs), =keep-g the grouped L order with the G numbering of
 * the element layout. *lane (G*8: the element of each lane, -1 empty) is
 * NULL where the element layout stays. */
static int grouped_lanes(hx_fdm f, const fdm_work *W, int32_t **lane_out, int32_t *G_out) {
  *lane_out = NULL;
  const char *env = hx_env("HEXCG_FDM_GROUPED");
  if (env && !strcmp(env, "0")) return HX_SUCCESS;
  const int64_t m3 = (int64_t)f->m * f->m * f->m;
  const int32_t nb = f->overlap ? f->nbnd : f->E, gb = (nb + 7) / 8;
  const int32_t ni = f->overlap ? f->nint : 0, gi = (ni + 7) / 8, G = gb + gi;
  if ((int64_t)G * 8 * m3 >= INT32_MAX) return HX_SUCCESS; /* the int32 L range: element layout */
  int32_t *lane = NULL;
  HX_CALL(HX_ALLOC(&lane, (size_t)G * 8 + 1));
  for (int32_t k = 0; k < gb * 8; k++) lane[k] = k < nb ? (f->overlap ? W->lb[k] : k) : -1;
  for (int32_t k = 0; k < gi * 8; k++) lane[gb * 8 + k] = k < ni ? W->li[k] : -1;
  f->gbnd = gb;
  *lane_out = lane, *G_out = G;
  return HX_SUCCESS;
}

/* the grouped S and L in backend memory; f takes the lanes */
static int grouped_upload(hx_fdm f, int32_t **plane, int32_t G) {
  const int m = f->m, m2 = m * m;
  const int32_t *lane = *plane;
  float *Sg = NULL, *Lg = NULL;
  int err = HX_ALLOC(&Sg, (size_t)G * 8 * 3 * m2 + 1);
  if (!err) err = HX_ALLOC(&Lg, (size_t)G * 8 * 3 * m + 1);
  for (int32_t g = 0; g < G && !err; g++)
    for (int l = 0; l < 8; l++) {
      const int32_t e = lane[g * 8 + l];
      for (int j = 0; j < 3 * m2; j++)
        Sg[((size_t)g * 3 * m2 + j) * 8 + l] = e >= 0 ? (float)f->h_S[(size_t)e * 3 * m2 + j] : 0.0f;
      for (int j = 0; j < 3 * m; j++)
        Lg[((size_t)g * 3 * m + j) * 8 + l] = e >= 0 ? (float)f->h_L[(size_t)e * 3 * m + j] : 0.0f;
    }
  if (!err) err = hx_mem_alloc(f->b, sizeof(float) * ((size_t)G * 8 * 3 * m2 + 1), (void **)&f->d_Sg);
  if (!err) err = hx_mem_to_device(f->b, f->d_Sg, Sg, sizeof(float) * (size_t)G * 8 * 3 * m2);
  if (!err) err = hx_mem_alloc(f->b, sizeof(float) * ((size_t)G * 8 * 3 * m + 1), (void **)&f->d_Lg);
  if (!err) err = hx_mem_to_device(f->b, f->d_Lg, Lg, sizeof(float) * (size_t)G * 8 * 3 * m);
  free(Sg), free(Lg);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  f->grouped = 1, f->gall = G, f->h_lane = *plane, *plane = NULL;
  return HX_SUCCESS;
}

/* The extended L side of xgs in the grouped order (hx_gs_relayout: the
 * owners and the exchange do not change; with renumber the interior
 * extended G rows are renumbered in the new order in the same call, and
 * the weighted copies' index array follows) */
static int grouped_relayout(hx_fdm f, fdm_work *W, const int32_t *lane, int32_t G, int renumber) {
  const int64_t m3 = (int64_t)f->m * f->m * f->m, nl = (int64_t)G * 8 * m3;
  int32_t *nof = NULL; /* new index of each old extended G entry (renumber) */
  int64_t *old = NULL;
  int err = renumber ? HX_ALLOC(&nof, (size_t)f->xng + 1) : HX_SUCCESS;
  if (!err) err = HX_ALLOC(&old, (size_t)nl + 1);
  for (int32_t g = 0; g < G && !err; g++)
    for (int l = 0; l < 8; l++) {
      const int32_t e = lane[g * 8 + l];
      for (int64_t pt = 0; pt < m3; pt++)
        old[((int64_t)g * m3 + pt) * 8 + l] = e >= 0 ? (int64_t)e * m3 + pt : -1;
    }
  if (!err) err = hx_gs_relayout(f->xgs, nl, old, nof);
  free(old);
  if (!err && renumber && W->out_idx) remap_weighted_copies(f, W, nof);
  free(nof);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  f->xnl_layout = nl;
  return HX_SUCCESS;
}

/* the grouped layout after the element layout's numbering (HEXCG_FDM_XNUM=0) */
static int grouped_setup(hx_fdm f, fdm_work *W) {
  int32_t *lane = NULL, G = 0;
  HX_CALL(grouped_lanes(f, W, &lane, &G));
  if (!lane) return HX_SUCCESS;
  const char *env = hx_env("HEXCG_FDM_GROUPED");
  int err = grouped_relayout(f, W, lane, G, !(env && !strcmp(env, "keep-g")));
  if (!err) err = grouped_upload(f, &lane, G);
  free(lane);
  HX_CALL(err);
  return HX_SUCCESS;
}

/* The keyed numbering's layout (fdm_extended_keys): the extended
 * gather-scatter numbered in the final L order, the grouped one when it
 * applies (its interior rows then in grouped order, as the relayout's
 * renumbering gives them) or the element one (W->gof: each key's G index) */
static int fdm_extended_layout(hx_fdm f, fdm_work *W) {
  int32_t *lane = NULL, G = 0;
  if (f->prec == HX_F32 && hx_fdm_grouped_f32_available(f->b, f->p)) HX_CALL(grouped_lanes(f, W, &lane, &G));
  const char *env = hx_env("HEXCG_FDM_GROUPED");
  const int direct = lane && !(env && !strcmp(env, "keep-g"));
  const int64_t m3 = (int64_t)f->m * f->m * f->m, nl = direct ? (int64_t)G * 8 * m3 : f->xnl;
  /* the keys in the final layout, taken over as the scatter map; the
   * element layout's own unless the weighted copies still need them */
  int32_t *key = NULL;
  int err = HX_ALLOC(&W->gof, hx_gs_keyed_num_keys(W->kd) + 1);
  if (!err && lane) err = HX_ALLOC(&key, (size_t)nl + 1);
  if (!err && !lane) key = W->xkey, W->xkey = NULL; /* the weighted copies read the map */
  if (!err && lane && !direct) memcpy(key, W->xkey, sizeof(int32_t) * (size_t)nl);
  for (int32_t g = 0; g < G && direct && !err; g++) { /* written in sequence, read from 8 boxes */
    const int32_t *src[8];
    for (int l = 0; l < 8; l++) src[l] = lane[g * 8 + l] >= 0 ? W->xkey + lane[g * 8 + l] * m3 : NULL;
    int32_t *o = key + (int64_t)g * m3 * 8;
    for (int64_t pt = 0; pt < m3; pt++)
      for (int l = 0; l < 8; l++) o[pt * 8 + l] = src[l] ? src[l][pt] : -1;
  }
  if (!err) err = hx_gs_keyed_finish(&W->kd, nl, &key, W->gof, &f->xgs);
  free(key); /* NULL unless an error came first */
  if (!err) f->xng = hx_gs_num_local(f->xgs), f->xnl_layout = nl;
  if (!err && lane && !direct) err = grouped_relayout(f, W, lane, G, 0);
  if (!err) W->lane = lane, W->nlg = G, lane = NULL; /* S and L follow (grouped_upload) */
  free(lane);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  return HX_SUCCESS;
}

/* phase 0: the box coefficients (docs/fdm.md, "Coefficients"). Without node
 * values: kappa and lambda per element as given. With kappa at the nodes: a
 * continuous node scale D (per fine G entry, W->dg) carries the variation
 * inside each material, D_q = the geometric mean over the copies of node q
 * of kappa_q / c_m (c_m the GLL-weighted mean of kappa over material m, all
 * ranks); the preconditioner is then D^{-1/2} (sum_s R_s^T A_s^{-1} R_s)
 * D^{-1/2} with the box A_s built from the element constant
 * kb_e = mean_e(kappa / D) (the jumps between materials, across which the
 * neighbour's segments carry the neighbour's kb) and lambda_e / mean_e(D). */
static int fdm_box_coefficients(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  const int n = f->p + 1, n3 = n * n * n;
  const int32_t E = f->E;
  HX_CALL(HX_ALLOC(&W->kbox, (size_t)E + 1));
  HX_CALL(HX_ALLOC(&W->lbox, (size_t)E + 1));
  for (int32_t e = 0; e < E; e++) W->kbox[e] = o->h_kappa[e], W->lbox[e] = o->h_lambda ? o->h_lambda[e] : 0.0;
  int any = o->h_kappa_node != NULL, all = 0;
  HX_MPI(MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, f->comm));
  if (!all) return HX_SUCCESS;
  HX_CHECK(any, HX_ERR_ARG, "kappa at the nodes on some ranks only");
  const int nmat = hx_mesh_num_materials(o->mesh);
  const int32_t *mat = hx_mesh_element_material(o->mesh);
  const double *kn = o->h_kappa_node;
  const int64_t nl = (int64_t)E * n3;
  double t[HX_FDM_PMAX + 1], w[HX_FDM_PMAX + 1];
  HX_CALL(hx_gll(n, t, w));
  double *cm = NULL, *lg = NULL, *d_l = NULL, *d_g = NULL;
  int err = HX_ALLOC(&cm, 2 * (size_t)nmat + 1);
  if (!err) err = HX_ALLOC(&lg, (size_t)nl + 1);
  if (!err) err = HX_ALLOC(&W->dg, (size_t)f->ng + 1);
  if (!err) err = HX_ALLOC(&f->h_ld, (size_t)E + 1);
  if (err) goto done;
  for (int32_t e = 0; e < E; e++)
    for (int q = 0; q < n3; q++) {
      const double wq = w[q % n] * w[(q / n) % n] * w[q / (n * n)];
      cm[2 * mat[e]] += wq * kn[(int64_t)e * n3 + q], cm[2 * mat[e] + 1] += wq;
    }
  if ((err = MPI_Allreduce(MPI_IN_PLACE, cm, 2 * nmat, MPI_DOUBLE, MPI_SUM, f->comm)) != MPI_SUCCESS) {
    err = HX_ERROR(HX_ERR_MPI, "MPI_Allreduce failed");
    goto done;
  }
  for (int32_t e = 0; e < E; e++) {
    const double c = cm[2 * mat[e]] / cm[2 * mat[e] + 1];
    for (int q = 0; q < n3; q++) lg[(int64_t)e * n3 + q] = log(kn[(int64_t)e * n3 + q] / c);
  }
  /* the mean of the logs over the copies of each node (consistent across ranks) */
  if ((err = hx_mem_alloc(f->b, sizeof(double) * (size_t)(nl + 1), (void **)&d_l))) goto done;
  if ((err = hx_mem_alloc(f->b, sizeof(double) * (size_t)(f->ng + 1), (void **)&d_g))) goto done;
  if ((err = hx_mem_to_device(f->b, d_l, lg, sizeof(double) * (size_t)nl))) goto done;
  if ((err = hx_gs_assemble(f->gs, d_l, d_g))) goto done;
  if ((err = hx_array_pointwise_mult(f->b, f->ng, d_g, d_g, hx_gs_inv_multiplicity(f->gs)))) goto done;
  if ((err = hx_mem_to_host(f->b, W->dg, d_g, sizeof(double) * (size_t)f->ng))) goto done;
  for (int64_t i = 0; i < f->ng; i++) W->dg[i] = exp(W->dg[i]);
  {
    const int32_t *fmap = hx_gs_map_host(f->gs);
    for (int32_t e = 0; e < E; e++) {
      double sk = 0.0, sd = 0.0, sw = 0.0;
      for (int q = 0; q < n3; q++) {
        const int64_t l = (int64_t)e * n3 + q;
        const double wq = w[q % n] * w[(q / n) % n] * w[q / (n * n)];
        const double D = fmap[l] >= 0 ? W->dg[fmap[l]] : exp(lg[l]);
        sk += wq * kn[l] / D, sd += wq * D, sw += wq;
      }
      W->kbox[e] = sk / sw;
      W->lbox[e] /= sd / sw;
      f->h_ld[e] = sd / sw;
    }
  }
done:
  free(cm), free(lg);
  hx_mem_free(f->b, (void **)&d_l);
  hx_mem_free(f->b, (void **)&d_g);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  return HX_SUCCESS;
}

/* phase 1: box lengths, the distance between the centres of opposite faces (W->h) */
static int fdm_box_lengths(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  const int32_t E = f->E;
  const int npe = hx_mesh_nodes_per_element(o->mesh);
  const double *nodes = hx_mesh_element_nodes(o->mesh);
  HX_CALL(HX_ALLOC(&W->h, 3 * (size_t)E + 1));
  for (int32_t e = 0; e < E; e++)
    for (int d = 0; d < 3; d++) {
      double c0[3], c1[3];
      face_centre(nodes + (size_t)e * npe * 3, npe, 2 * d, c0);
      face_centre(nodes + (size_t)e * npe * 3, npe, 2 * d + 1, c1);
      const double h = sqrt((c1[0] - c0[0]) * (c1[0] - c0[0]) + (c1[1] - c0[1]) * (c1[1] - c0[1]) +
                            (c1[2] - c0[2]) * (c1[2] - c0[2]));
      HX_CHECK(h > 0.0 && isfinite(h), HX_ERR_INPUT,
               "element %d (local index): FDM box length %g in direction %d", (int)e, h, d);
      W->h[3 * e + d] = h;
    }
  return HX_SUCCESS;
}

/* phase 2: own GLL ids (W->gid), the neighbour planes (depth 1 from the
 * shared face, in the neighbour's face coordinates) and widths of remote
 * neighbours by one MPI_Alltoallv of records [gid*6 + face, bits of h,
 * n^2 ids] (W->recvbuf, sorted keys in W->keys) */
static int fdm_exchange_planes(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  const int p = f->p, n = p + 1, n2 = n * n, n3 = n2 * n;
  const int32_t E = f->E;
  const int rank = W->rank, size = W->size;
  MPI_Comm comm = f->comm;
  const int64_t *nbr_elem;
  const int8_t *nbr_face, *orient;
  HX_CALL(hx_mesh_face_neighbors(o->mesh, &nbr_elem, &nbr_face, &orient));
  const int32_t *nbr_rank = hx_mesh_face_neighbor_ranks(o->mesh);
  const int64_t *egid = hx_mesh_element_global_ids(o->mesh);
  HX_CALL(HX_ALLOC(&W->gid, (size_t)E * n3 + 1));
  HX_CALL(hx_mesh_gll_ids(o->mesh, p, W->gid));

  const int R = 3 + n2;
  HX_CALL(HX_ALLOC(&W->sc, size));
  HX_CALL(HX_ALLOC(&W->rc, size));
  HX_CALL(HX_ALLOC(&W->sd, size + 1));
  HX_CALL(HX_ALLOC(&W->rd, size + 1));
  for (int64_t q = 0; q < 6 * (int64_t)E; q++)
    if (nbr_elem[q] >= 0 && nbr_rank[q] != rank) {
      HX_CHECK(nbr_rank[q] >= 0 && nbr_rank[q] < size, HX_ERR_INTERNAL, "face neighbour rank %d",
               (int)nbr_rank[q]);
      W->sc[nbr_rank[q]] += R;
    }
  for (int r = 0; r < size; r++) W->sd[r + 1] = W->sd[r] + W->sc[r];
  HX_MPI(MPI_Alltoall(W->sc, 1, MPI_INT, W->rc, 1, MPI_INT, comm));
  for (int r = 0; r < size; r++) W->rd[r + 1] = W->rd[r] + W->rc[r];
  HX_CALL(HX_ALLOC(&W->sendbuf, (size_t)W->sd[size] + 1));
  HX_CALL(HX_ALLOC(&W->recvbuf, (size_t)W->rd[size] + 1));
  {
    int *pos;
    HX_CALL(HX_ALLOC(&pos, size));
    for (int32_t e = 0; e < E; e++)
      for (int fc = 0; fc < 6; fc++) {
        const int64_t q = 6 * (int64_t)e + fc;
        if (nbr_elem[q] < 0 || nbr_rank[q] == rank) continue;
        int64_t *rec = W->sendbuf + W->sd[nbr_rank[q]] + pos[nbr_rank[q]];
        pos[nbr_rank[q]] += R;
        rec[0] = egid[e] * 6 + fc;
        memcpy(&rec[1], &W->h[3 * e + fc / 2], sizeof(double));
        memcpy(&rec[2], &W->kbox[e], sizeof(double));
        for (int v = 0; v < n; v++)
          for (int u = 0; u < n; u++)
            rec[3 + u + n * v] = W->gid[(int64_t)e * n3 + face_depth_node(p, fc, 1, u, v)];
      }
    free(pos);
  }
  HX_MPI(MPI_Alltoallv(W->sendbuf, W->sc, W->sd, MPI_INT64_T, W->recvbuf, W->rc, W->rd, MPI_INT64_T, comm));
  W->nrec = W->rd[size] / R;
  const int64_t nrec = W->nrec;
  HX_CALL(HX_ALLOC(&W->keys, nrec + 1));
  for (int64_t k = 0; k < nrec; k++) W->keys[k].key = W->recvbuf[k * R], W->keys[k].off = k * R;
  qsort(W->keys, (size_t)nrec, sizeof(rec_key), cmp_rec);
  return HX_SUCCESS;
}

/* The fine nodes no other rank's extended box reaches (W->fpriv, per fine G
 * entry; NULL with HEXCG_FDM_PRIVATE=0): held by this rank only in the fine
 * gather-scatter and not in an element with a face on another rank. Another
 * rank's box reaches a node of this rank only as its own node (then the
 * fine gather-scatter shares it) or through a face extension into this
 * rank's element across that face (then every node of that element is
 * excluded here). The extended gather-scatter keeps the ids of these nodes
 * out of its rendezvous (hx_gs_create_deferred_private): 85-90 % of them on
 * a box cut into two slabs. */
static int fdm_private_nodes(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  if (hx_env_off("HEXCG_FDM_PRIVATE")) return HX_SUCCESS;
  const int n = f->p + 1, n3 = n * n * n;
  const int64_t ng = hx_gs_num_local(o->gs), s0 = ng - hx_gs_num_shared(o->gs);
  const int32_t *fmap = hx_gs_map_host(o->gs);
  const int32_t *nbr_rank = hx_mesh_face_neighbor_ranks(o->mesh);
  const int64_t *nbr_elem;
  const int8_t *nbr_face, *orient;
  HX_CALL(hx_mesh_face_neighbors(o->mesh, &nbr_elem, &nbr_face, &orient));
  HX_CHECK(fmap, HX_ERR_INTERNAL, "FDM: the fine gather-scatter has no host map");
  HX_CALL(HX_ALLOC(&W->fpriv, ng + 1));
  for (int64_t g = 0; g < ng; g++) W->fpriv[g] = g < s0;
  for (int32_t e = 0; e < f->E; e++) {
    int remote = 0;
    for (int fc = 0; fc < 6; fc++)
      remote |= nbr_elem[6 * (int64_t)e + fc] >= 0 && nbr_rank[6 * (int64_t)e + fc] != W->rank;
    if (!remote) continue;
    for (int k = 0; k < n3; k++) {
      const int32_t g = fmap[(int64_t)e * n3 + k];
      if (g >= 0) W->fpriv[g] = 0;
    }
  }
  return HX_SUCCESS;
}

/* W->fpriv of fine L entry i (0 without the flags or for an entry without a G row) */
static uint8_t fine_private(const fdm_work *W, const int32_t *fmap, int64_t i) {
  return W->fpriv && fmap[i] >= 0 ? W->fpriv[fmap[i]] : 0;
}

/* phase 3: the extension plane of every face in the element's own face
 * coordinates (W->plane, and W->plane_priv where W->fpriv is set) and the
 * neighbour's width (W->hn): local neighbours directly, remote ones from
 * the received records */
static int fdm_extension_planes(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  const int p = f->p, n = p + 1, n2 = n * n, n3 = n2 * n;
  const int32_t E = f->E;
  const int rank = W->rank;
  const int64_t *nbr_elem;
  const int8_t *nbr_face, *orient;
  HX_CALL(hx_mesh_face_neighbors(o->mesh, &nbr_elem, &nbr_face, &orient));
  const int32_t *nbr_rank = hx_mesh_face_neighbor_ranks(o->mesh);
  const int64_t *egid = hx_mesh_element_global_ids(o->mesh);
  const int32_t *fmap = hx_gs_map_host(o->gs);
  HX_CALL(HX_ALLOC(&W->plane, 6 * (size_t)E * n2 + 1));
  HX_CALL(HX_ALLOC(&W->pcode, 6 * (size_t)E * n2 + 1));
  if (W->fpriv) HX_CALL(HX_ALLOC(&W->plane_priv, 6 * (size_t)E * n2 + 1));
  HX_CALL(HX_ALLOC(&W->hn, 6 * (size_t)E + 1));
  HX_CALL(HX_ALLOC(&W->kn, 6 * (size_t)E + 1));
  for (int32_t e = 0; e < E; e++)
    for (int fc = 0; fc < 6; fc++) {
      const int64_t q = 6 * (int64_t)e + fc;
      if (nbr_elem[q] < 0) continue;
      const int nf = nbr_face[q], ob = orient[q];
      const int64_t *src; /* neighbour's plane in its face coordinates */
      int64_t tmp[(HX_FDM_PMAX + 1) * (HX_FDM_PMAX + 1)];
      uint8_t tpriv[(HX_FDM_PMAX + 1) * (HX_FDM_PMAX + 1)]; /* a remote neighbour's nodes: not private */
      int32_t tcode[(HX_FDM_PMAX + 1) * (HX_FDM_PMAX + 1)]; /* their fine G entries (-2: remote) */
      memset(tpriv, 0, sizeof tpriv);
      for (int k = 0; k < n2; k++) tcode[k] = -2;
      if (nbr_rank[q] == rank) {
        const int64_t *hit =
            (const int64_t *)bsearch(&nbr_elem[q], egid, (size_t)E, sizeof(int64_t), cmp_i64);
        HX_CHECK(hit, HX_ERR_INTERNAL, "local face neighbour %lld not among this rank's elements",
                 (long long)nbr_elem[q]);
        const int32_t el = (int32_t)(hit - egid);
        for (int v = 0; v < n; v++)
          for (int u = 0; u < n; u++) {
            const int64_t i = (int64_t)el * n3 + face_depth_node(p, nf, 1, u, v);
            tmp[u + n * v] = W->gid[i];
            tpriv[u + n * v] = fine_private(W, fmap, i);
            tcode[u + n * v] = fmap[i];
          }
        src = tmp;
        W->hn[q] = W->h[3 * el + nf / 2];
        W->kn[q] = W->kbox[el];
      } else {
        rec_key key = {nbr_elem[q] * 6 + nf, 0};
        const rec_key *hit = (const rec_key *)bsearch(&key, W->keys, (size_t)W->nrec, sizeof(rec_key), cmp_rec);
        HX_CHECK(hit, HX_ERR_INTERNAL, "no plane received for element %lld face %d from rank %d",
                 (long long)nbr_elem[q], nf, (int)nbr_rank[q]);
        const int64_t *rec = W->recvbuf + hit->off;
        memcpy(&W->hn[q], &rec[1], sizeof(double));
        memcpy(&W->kn[q], &rec[2], sizeof(double));
        src = rec + 3;
      }
      for (int v = 0; v < n; v++)
        for (int u = 0; u < n; u++) {
          const int ii = (ob & 1) ? v : u, jj = (ob & 1) ? u : v;
          const int up = (ob & 2) ? p - ii : ii, vp = (ob & 4) ? p - jj : jj;
          W->plane[q * n2 + u + n * v] = src[up + n * vp];
          W->pcode[q * n2 + u + n * v] = tcode[up + n * vp];
          if (W->plane_priv) W->plane_priv[q * n2 + u + n * v] = tpriv[up + n * vp];
        }
    }
  return HX_SUCCESS;
}

/* phase 4: per element and direction the 1D present flags (W->present),
 * the 1D matrices and their eigenpairs (f->h_S, f->h_L, scaled by kappa,
 * lambda added) */
static int fdm_box_eigenpairs(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  const int p = f->p, n = p + 1, m = f->m;
  const int32_t E = f->E;
  const int64_t *nbr_elem;
  const int8_t *nbr_face, *orient;
  HX_CALL(hx_mesh_face_neighbors(o->mesh, &nbr_elem, &nbr_face, &orient));
  double t[HX_FDM_PMAX + 1], wq[HX_FDM_PMAX + 1], D[(HX_FDM_PMAX + 1) * (HX_FDM_PMAX + 1)];
  double Khat[(HX_FDM_PMAX + 1) * (HX_FDM_PMAX + 1)];
  HX_CALL(hx_gll(n, t, wq));
  HX_CALL(hx_lagrange_deriv(n, t, D));
  for (int a = 0; a < n; a++)
    for (int c = 0; c < n; c++) {
      double s = 0.0;
      for (int q = 0; q < n; q++) s += wq[q] * D[q * n + a] * D[q * n + c];
      Khat[a * n + c] = s;
    }
  HX_CALL(HX_ALLOC(&W->present, 3 * (size_t)E * m + 1));
  HX_CALL(HX_ALLOC(&f->h_S, 3 * (size_t)E * m * m + 1));
  HX_CALL(HX_ALLOC(&f->h_L, 3 * (size_t)E * m + 1));
  HX_CALL(HX_ALLOC(&f->h_Lk, 3 * (size_t)E * m + 1));
  /* the 1D problems of (element, direction) pairs repeat (every box
   * element has the same ones up to its boundary faces, a Kershaw mesh few
   * shapes): a hash table on their exact inputs (eig_key) finds a pair
   * solved before, whose eigenpairs (the same LAPACK call on the same bits:
   * the same bits out) are copied. HEXCG_FDM_SHARE=0 solves every pair
   * (the reference of the test precond.t320-fdm-share). */
  const int share = !hx_env_off("HEXCG_FDM_SHARE");
  const int64_t npair = 3 * (int64_t)E;
  int64_t cap = 16;
  while (cap < 2 * npair) cap *= 2;
  int64_t *slot = NULL; /* hash slot -> pair that solved it, -1 empty */
  eig_key *keys = NULL; /* per pair */
  double *lraw = NULL;  /* per pair: eigenvalues before the kappa scaling and lambda */
  int err = HX_SUCCESS;
  if (share) {
    err = HX_ALLOC(&slot, cap);
    if (!err) err = HX_ALLOC(&keys, npair + 1);
    if (!err) err = HX_ALLOC(&lraw, npair * m + 1);
    if (err) {
      free(slot), free(keys), free(lraw);
      return hx_error_trace(__FILE__, __LINE__, __func__, err);
    }
    for (int64_t k = 0; k < cap; k++) slot[k] = -1;
  }
  for (int32_t e = 0; e < E && !err; e++) {
    const double kappa = W->kbox[e], lambda = W->lbox[e];
    for (int d = 0; d < 3; d++) {
      const int64_t ql = 6 * (int64_t)e + 2 * d, qr = ql + 1;
      const int dl = o->h_dirichlet_face[ql] != 0, dr = o->h_dirichlet_face[qr] != 0;
      int *pr = W->present + (3 * (int64_t)e + d) * m;
      for (int a = 0; a < m; a++) pr[a] = 1;
      pr[0] = nbr_elem[ql] >= 0 && !dl;
      pr[1] = !dl;
      pr[m - 2] = !dr;
      pr[m - 1] = nbr_elem[qr] >= 0 && !dr;
      double *S = f->h_S + (3 * (int64_t)e + d) * m * m, *L = f->h_L + (3 * (int64_t)e + d) * m;
      /* the neighbours' kappa relative to this element's (1 where absent) */
      const double rl = pr[0] ? W->kn[ql] / kappa : 1.0, rr = pr[m - 1] ? W->kn[qr] / kappa : 1.0;
      const int64_t pair = 3 * (int64_t)e + d;
      int64_t hit = -1;
      if (share) {
        eig_key *k = &keys[pair];
        eig_key_make(k, m, pr, W->h[3 * e + d], W->hn[ql], W->hn[qr], rl, rr);
        uint64_t hs = eig_key_hash(k) & (uint64_t)(cap - 1);
        while (slot[hs] >= 0 && memcmp(&keys[slot[hs]], k, sizeof *k)) hs = (hs + 1) & (uint64_t)(cap - 1);
        if (slot[hs] >= 0)
          hit = slot[hs];
        else
          slot[hs] = pair;
      }
      if (hit >= 0) {
        memcpy(S, f->h_S + hit * m * m, sizeof(double) * (size_t)m * m);
        memcpy(L, lraw + hit * m, sizeof(double) * (size_t)m);
      } else {
        err = fdm_1d(p, pr, W->h[3 * e + d], W->hn[ql], W->hn[qr], rl, rr, Khat, wq, S, L);
        if (err) break;
      }
      if (share) memcpy(lraw + pair * m, L, sizeof(double) * (size_t)m);
      double *Lk = f->h_Lk + (3 * (int64_t)e + d) * m; /* kept for hx_fdm_set_lambda */
      for (int i = 0; i < m; i++) Lk[i] = kappa * L[i], L[i] = Lk[i] + (d == 0 ? lambda : 0.0);
    }
  }
  free(slot), free(keys), free(lraw);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  return HX_SUCCESS;
}

/* phase 5: the extended ids (own nodes and face extensions that are
 * present, 0 on the edge/corner regions of the box and on absent points)
 * and their gather-scatter f->xgs */
static int fdm_extended_numbering(hx_fdm f, fdm_work *W) {
  const int p = f->p, n = p + 1, m = f->m, n2 = n * n, n3 = n2 * n;
  const int64_t m3 = (int64_t)m * m * m;
  const int32_t E = f->E;
  HX_CALL(HX_ALLOC(&W->xid, (size_t)E * m3 + 1));
  const int32_t *fmap = hx_gs_map_host(f->gs);
  if (W->fpriv) HX_CALL(HX_ALLOC(&W->xpriv, (size_t)E * m3 + 1));
  for (int32_t e = 0; e < E; e++) {
    const int *px = W->present + 3 * (int64_t)e * m, *py = px + m, *pz = py + m;
    for (int C = 0; C < m; C++)
      for (int B = 0; B < m; B++)
        for (int A = 0; A < m; A++) {
          if (!px[A] || !py[B] || !pz[C]) continue;
          const int oa = A == 0 || A == m - 1, ob = B == 0 || B == m - 1, oc = C == 0 || C == m - 1;
          int64_t id = 0;
          uint8_t priv = 0;
          if (oa + ob + oc == 0) {
            const int64_t i = (int64_t)e * n3 + (A - 1) + n * ((B - 1) + n * (C - 1));
            id = W->gid[i];
            priv = fine_private(W, fmap, i);
          } else if (oa + ob + oc == 1) {
            const int fc = oa ? (A == 0 ? 0 : 1) : ob ? (B == 0 ? 2 : 3) : (C == 0 ? 4 : 5);
            const int u = oa ? B - 1 : A - 1, v = oc ? B - 1 : C - 1;
            id = W->plane[(6 * (int64_t)e + fc) * n2 + u + n * v];
            priv = W->plane_priv ? W->plane_priv[(6 * (int64_t)e + fc) * n2 + u + n * v] : 0;
          }
          W->xid[(int64_t)e * m3 + A + m * (B + m * C)] = id;
          if (W->xpriv) W->xpriv[(int64_t)e * m3 + A + m * (B + m * C)] = priv;
        }
  }
  /* the setup's peak: what the ids were made from goes first */
  free(W->gid), free(W->plane), free(W->sendbuf), free(W->recvbuf), free(W->keys);
  W->gid = W->plane = W->sendbuf = W->recvbuf = NULL, W->keys = NULL;
  /* the L side is built once, in its final layout (fdm_setup: the grouped
   * relayout or hx_gs_finish_l) */
  free(W->fpriv), free(W->plane_priv);
  W->fpriv = W->plane_priv = NULL;
  HX_CALL(hx_gs_create_deferred_private(f->b, f->comm, (int64_t)E * m3, W->xid, W->xpriv, &f->xgs));
  free(W->xid), free(W->xpriv);
  W->xid = NULL, W->xpriv = NULL;
  f->xnl = (int64_t)E * m3;
  f->xng = hx_gs_num_local(f->xgs);
  return HX_SUCCESS;
}

/* The keyed numbering (docs/fdm.md "Extended numbering"): every extended
 * node is a fine G entry of this rank (its own nodes, a local neighbour's
 * plane, or a remote neighbour's node this rank holds too: then a shared
 * fine entry) or a remote neighbour's node this rank does not hold. The
 * keys: the fine G entries met, in order (kof, a marker over fine G), and
 * the remote ids, found through a hash table on the ids of the shared fine
 * entries and the remote ones met so far. */
typedef struct {
  int32_t *kof;  /* fine G -> key, -1 */
  int64_t *uid;  /* per key: global id */
  uint8_t *priv; /* per key: promised private (fpriv of its fine entry) */
  int64_t nk;
  int64_t *hid;   /* hash: id (0 empty) */
  int32_t *hcode; /* hash: fine G entry, or -2 - key of a remote id */
  int64_t hmask;
  const int64_t *fgid;
  const uint8_t *fpriv;
} xkeys;

static int32_t xkey_fine(xkeys *k, int32_t g) {
  if (k->kof[g] < 0) {
    k->kof[g] = (int32_t)k->nk;
    k->uid[k->nk] = k->fgid[g];
    k->priv[k->nk++] = k->fpriv ? k->fpriv[g] : 0;
  }
  return k->kof[g];
}

/* the slot of id in the hash table (open addressing; empty slot: id 0) */
static int64_t xkey_slot(const xkeys *k, int64_t id) {
  uint64_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 17;
  while (k->hid[h & k->hmask] && k->hid[h & k->hmask] != id) h++;
  return (int64_t)(h & k->hmask);
}

/* the key of a remote neighbour's node with id (0: none) */
static int32_t xkey_remote(xkeys *k, int64_t id) {
  if (id == 0) return -1;
  const int64_t s = xkey_slot(k, id);
  if (!k->hid[s]) {
    k->hid[s] = id, k->hcode[s] = -2 - (int32_t)k->nk;
    k->uid[k->nk] = id, k->priv[k->nk++] = 0;
  }
  return k->hcode[s] >= 0 ? xkey_fine(k, k->hcode[s]) : -2 - k->hcode[s];
}

/* the key of plane entry q (its own face coordinates) */
static int32_t xkey_plane(xkeys *k, const fdm_work *W, int64_t q) {
  if (W->plane[q] == 0) return -1;
  if (W->pcode[q] == -2) return xkey_remote(k, W->plane[q]);
  return W->pcode[q] >= 0 ? xkey_fine(k, W->pcode[q]) : -1;
}

/* the keys of element e's extended box xk[m^3] (as fdm_extended_numbering's
 * ids): its own nodes, the face extensions, -1 on the edge and corner
 * regions and on absent points */
static void xkey_box(xkeys *k, hx_fdm f, const fdm_work *W, const int32_t *fmap, int32_t e, int32_t *xk) {
  const int n = f->p + 1, m = f->m, n2 = n * n;
  const int64_t m3 = (int64_t)m * m * m;
  const int *pr[3] = {W->present + 3 * (int64_t)e * m, pr[0] + m, pr[1] + m};
  for (int64_t i = 0; i < m3; i++) xk[i] = -1;
  const int32_t *fm = fmap + (int64_t)e * n2 * n;
  for (int C = 1; C <= n; C++)
    for (int B = 1; B <= n; B++)
      for (int A = 1; A <= n; A++) {
        const int32_t g = fm[(A - 1) + n * ((B - 1) + n * (C - 1))];
        if (pr[0][A] && pr[1][B] && pr[2][C] && g >= 0) xk[A + m * (B + m * C)] = xkey_fine(k, g);
      }
  /* face fc: the outer point in direction d, (u, v) over the other two
   * (face coordinates: faces 0/1 (B, C), 2/3 (A, C), 4/5 (A, B)) */
  for (int fc = 0; fc < 6; fc++) {
    const int d = fc / 2, x = fc % 2 ? m - 1 : 0, du = d == 0 ? 1 : 0, dv = d == 2 ? 1 : 2;
    if (!pr[d][x]) continue;
    const int64_t sx = d == 0 ? 1 : d == 1 ? m : (int64_t)m * m;
    const int64_t su = du == 0 ? 1 : m, sv = dv == 1 ? m : (int64_t)m * m;
    const int64_t q0 = (6 * (int64_t)e + fc) * n2;
    for (int v = 0; v < n; v++)
      for (int u = 0; u < n; u++)
        if (pr[du][u + 1] && pr[dv][v + 1])
          xk[x * sx + (u + 1) * su + (v + 1) * sv] = xkey_plane(k, W, q0 + u + n * v);
  }
}

/* phase 5, keyed: the key of every extended L entry (W->xkey, element
 * layout) and the rendezvous of the keyed gather-scatter setup (W->kd);
 * the numbering waits for the layout (fdm_extended_layout) */
static int fdm_extended_keys(hx_fdm f, fdm_work *W) {
  const int p = f->p, n = p + 1, m = f->m, n2 = n * n;
  const int64_t m3 = (int64_t)m * m * m, ng = f->ng, s0 = ng - hx_gs_num_shared(f->gs);
  const int32_t E = f->E;
  const int32_t *fmap = hx_gs_map_host(f->gs);
  int64_t nrem = 0;
  for (int64_t q = 0; q < 6 * (int64_t)E * n2; q++) nrem += W->pcode[q] == -2;
  xkeys k = {.fgid = hx_gs_global_ids(f->gs), .fpriv = W->fpriv};
  int64_t cap = 64;
  while (cap < 2 * (ng - s0 + nrem)) cap *= 2;
  k.hmask = cap - 1;
  int err = HX_ALLOC(&k.kof, ng + 1);
  if (!err) err = HX_ALLOC(&k.uid, ng + nrem + 1);
  if (!err) err = HX_ALLOC(&k.priv, ng + nrem + 1);
  if (!err) err = HX_ALLOC(&k.hid, cap);
  if (!err) err = HX_ALLOC(&k.hcode, cap);
  if (!err) err = HX_ALLOC(&W->xkey, (size_t)E * m3 + 1);
  if (!err && !k.fgid) err = HX_ERROR(HX_ERR_INTERNAL, "FDM: the fine gather-scatter has no ids");
  for (int64_t g = 0; g < ng && !err; g++) k.kof[g] = -1;
  for (int64_t g = s0; g < ng && !err; g++) { /* the shared fine entries: a remote node may be one */
    const int64_t s = xkey_slot(&k, k.fgid[g]);
    k.hid[s] = k.fgid[g], k.hcode[s] = (int32_t)g;
  }
  for (int32_t e = 0; e < E && !err; e++) xkey_box(&k, f, W, fmap, e, W->xkey + (int64_t)e * m3);
  /* the setup's peak: what the keys were made from goes first */
  free(W->gid), free(W->plane), free(W->sendbuf), free(W->recvbuf), free(W->keys), free(W->pcode);
  W->gid = W->plane = W->sendbuf = W->recvbuf = NULL, W->keys = NULL, W->pcode = NULL;
  free(k.kof), free(k.hid), free(k.hcode);
  f->xnl = (int64_t)E * m3;
  if (!err)
    err = hx_gs_keyed_create(f->b, f->comm, f->xnl, W->xkey, k.nk, k.uid, W->fpriv ? k.priv : NULL, &W->kd);
  free(k.uid), free(k.priv);
  free(W->fpriv), free(W->plane_priv);
  W->fpriv = W->plane_priv = NULL;
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  return HX_SUCCESS;
}

/* phase 6: the map fine G -> extended G and the weights of both copies
 * (W->out_idx, W->wt; for ras W->in_w, the input's). The input copy is the
 * output's transpose from the fine side: the owned fine entries scattered
 * through out_idx (only the owner writes r; the exchange then gives every
 * holder its value). */
static int fdm_weighted_copies(hx_fdm f, fdm_work *W) {
  const int p = f->p, n = p + 1, m = f->m, n3 = n * n * n;
  const int64_t m3 = (int64_t)m * m * m;
  const int32_t E = f->E;
  /* the extended G entry of each element's own nodes: through the keys
   * (keyed numbering, any layout) or the element layout's map */
  const int32_t *fmap = hx_gs_map_host(f->gs), *xmap = W->xkey ? W->xkey : hx_gs_map_host(f->xgs);
  HX_CALL(HX_ALLOC(&W->out_idx, f->ng + 1));
  for (int64_t i = 0; i < f->ng; i++) W->out_idx[i] = -1;
  for (int32_t e = 0; e < E; e++)
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const int32_t fg = fmap[(int64_t)e * n3 + i + n * (j + n * k)];
          const int32_t xg = xmap[(int64_t)e * m3 + (i + 1) + m * ((j + 1) + m * (k + 1))];
          if (fg >= 0 && xg >= 0) W->out_idx[fg] = W->xkey ? W->gof[xg] : xg;
        }
  free(W->xkey), free(W->gof);
  W->xkey = W->gof = NULL;
  HX_CALL(HX_ALLOC(&W->mask, f->ng + 1));
  HX_CALL(HX_ALLOC(&W->imult, f->xng + 1));
  HX_CALL(HX_ALLOC(&W->wt, f->ng + 1));
  const double *d_mask = hx_gs_mask(f->gs);
  if (d_mask)
    HX_CALL(hx_mem_to_host(f->b, W->mask, d_mask, sizeof(double) * (size_t)f->ng));
  else
    for (int64_t i = 0; i < f->ng; i++) W->mask[i] = 1.0;
  if (f->xng > 0)
    HX_CALL(hx_mem_to_host(f->b, W->imult, hx_gs_inv_multiplicity(f->xgs), sizeof(double) * (size_t)f->xng));
  for (int64_t i = 0; i < f->ng; i++) {
    const int32_t xg = W->out_idx[i];
    W->wt[i] = xg < 0 ? 0.0
                      : W->mask[i] * (f->weight == HX_FDM_WEIGHT_SQRT  ? sqrt(W->imult[xg])
                                      : f->weight == HX_FDM_WEIGHT_RAS ? W->imult[xg]
                                                                       : 1.0);
  }
  /* restricted Schwarz weighs the output only: the input side is the mask
   * (the symmetric weights serve both copies) */
  if (f->weight == HX_FDM_WEIGHT_RAS) {
    HX_CALL(HX_ALLOC(&W->in_w, f->ng + 1));
    for (int64_t i = 0; i < f->ng; i++) W->in_w[i] = W->out_idx[i] < 0 ? 0.0 : W->mask[i];
  }
  /* the mask and the multiplicities served the weights only */
  free(W->mask), free(W->imult);
  W->mask = NULL, W->imult = NULL;
  /* the node scale D^{-1/2} on both sides (phase 0) */
  if (W->dg)
    for (int64_t i = 0; i < f->ng; i++) {
      W->wt[i] /= sqrt(W->dg[i]);
      if (W->in_w) W->in_w[i] /= sqrt(W->dg[i]);
    }
  return HX_SUCCESS;
}

/* phase 7: the backend copies of S and L (in the box solves' precision) */
static int fdm_upload(hx_fdm f) {
  const int m = f->m;
  const int32_t E = f->E;
  const size_t bS = f->es * 3 * (size_t)E * m * m, bL = f->es * 3 * (size_t)E * m;
  HX_CALL(hx_mem_alloc(f->b, bS + 8, (void **)&f->d_S));
  HX_CALL(hx_mem_alloc(f->b, bL + 8, (void **)&f->d_L));
  if (f->prec == HX_F64) {
    HX_CALL(hx_mem_to_device(f->b, f->d_S, f->h_S, bS));
    HX_CALL(hx_mem_to_device(f->b, f->d_L, f->h_L, bL));
  } else {
    /* FP32: the eigenvectors and eigenvalues (computed in double) rounded
     * to float once; the device copies hold floats (half the bytes) */
    const size_t nS = 3 * (size_t)E * m * m, nL = 3 * (size_t)E * m;
    float *tmp;
    HX_CALL(HX_ALLOC(&tmp, nS + nL + 1));
    for (size_t i = 0; i < nS; i++) tmp[i] = (float)f->h_S[i];
    for (size_t i = 0; i < nL; i++) tmp[nS + i] = (float)f->h_L[i];
    int err = hx_mem_to_device(f->b, f->d_S, tmp, bS);
    if (!err) err = hx_mem_to_device(f->b, f->d_L, tmp + nS, bL);
    free(tmp);
    HX_CALL(err);
  }
  return HX_SUCCESS;
}

/* one host work array to a new backend array, the host copy freed at once */
static int upload_freed(hx_fdm f, void **h, size_t bytes, void **d) {
  HX_CALL(hx_mem_alloc(f->b, bytes + 8, d));
  HX_CALL(hx_mem_to_device(f->b, *d, *h, bytes));
  free(*h), *h = NULL;
  return HX_SUCCESS;
}

/* phase 7, after the layout is final (grouped_setup, which renumbers the
 * extended G entries, or the element layout): the weighted copies' index
 * arrays and weights, the extended L -> G map and the vectors. Each host
 * work array goes as soon as its copy is made, so the setup's peak (the
 * relayout) sees neither these copies nor the element layout's map. */
static int fdm_upload_copies(hx_fdm f, fdm_work *W, int take) {
  const int64_t nl = f->xnl_layout;
  if (W->in_w) HX_CALL(upload_freed(f, (void **)&W->in_w, sizeof(double) * (size_t)f->ng, (void **)&f->d_in_w));
  HX_CALL(upload_freed(f, (void **)&W->out_idx, sizeof(int32_t) * (size_t)f->ng, (void **)&f->d_out_idx));
  HX_CALL(upload_freed(f, (void **)&W->wt, sizeof(double) * (size_t)f->ng, (void **)&f->d_out_w));
  HX_CALL(hx_mem_alloc(f->b, f->es * (size_t)(f->xng + 1), (void **)&f->d_xg));
  if (take) { /* the handle's own backend map, its other maps dropped (fdm_setup) */
    HX_CALL(hx_gs_take_map(f->xgs, &f->d_xmap));
  } else {
    HX_CALL(hx_mem_alloc(f->b, sizeof(int32_t) * (size_t)(nl + 1), (void **)&f->d_xmap));
    HX_CALL(hx_mem_to_device(f->b, f->d_xmap, hx_gs_map_host(f->xgs), sizeof(int32_t) * (size_t)nl));
  }
  HX_CALL(hx_mem_alloc(f->b, f->es * (size_t)(nl + 1), (void **)&f->d_xw));
  HX_CALL(hx_mem_zero(f->b, f->d_xw, f->es * (size_t)(nl + 1)));
  return HX_SUCCESS;
}

/* phase 8, overlap: the elements whose subdomain touches a node shared with
 * another rank first (f->d_bnd), the others (f->d_int) */
static int fdm_overlap_lists(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  const int m = f->m;
  const int64_t m3 = (int64_t)m * m * m;
  const int32_t E = f->E;
  const int size = W->size;
  MPI_Comm comm = f->comm;
  /* keyed numbering (before the layout): a key held by another rank */
  const uint8_t *ksh = W->kd ? hx_gs_keyed_shared(W->kd) : NULL;
  int64_t nsh = W->kd ? hx_gs_keyed_num_shared(W->kd) : hx_gs_num_shared(f->xgs), nsh_any = 0;
  HX_MPI(MPI_Allreduce(&nsh, &nsh_any, 1, MPI_INT64_T, MPI_SUM, comm));
  f->overlap = o->overlap && size > 1 && nsh_any > 0;
  if (f->overlap) {
    HX_CALL(HX_ALLOC(&W->flag, E + 1));
    HX_CALL(HX_ALLOC(&W->lb, E + 1));
    HX_CALL(HX_ALLOC(&W->li, E + 1));
    if (ksh)
      for (int32_t e = 0; e < E; e++)
        for (int64_t i = e * m3; i < (e + 1) * m3 && !W->flag[e]; i++)
          W->flag[e] = W->xkey[i] >= 0 && ksh[W->xkey[i]];
    else
      HX_CALL(hx_gs_element_shared_flags(f->xgs, m3, W->flag));
    for (int32_t e = 0; e < E; e++) {
      if (W->flag[e])
        W->lb[f->nbnd++] = e;
      else
        W->li[f->nint++] = e;
    }
    HX_CALL(hx_mem_alloc(f->b, sizeof(int32_t) * (size_t)(f->nbnd + 1), (void **)&f->d_bnd));
    HX_CALL(hx_mem_alloc(f->b, sizeof(int32_t) * (size_t)(f->nint + 1), (void **)&f->d_int));
    HX_CALL(hx_mem_to_device(f->b, f->d_bnd, W->lb, sizeof(int32_t) * (size_t)f->nbnd));
    HX_CALL(hx_mem_to_device(f->b, f->d_int, W->li, sizeof(int32_t) * (size_t)f->nint));
  }
  return HX_SUCCESS;
}

/* model bytes of one apply: the two weighted copies, the gather of the
 * extended vector, the element kernel (input box through the map: 4 + 8
 * bytes per point, output box, S, L) */
static int fdm_cost_model(hx_fdm f) {
  const int m = f->m;
  const int64_t m3 = (int64_t)m * m * m;
  const int32_t E = f->E;
  hx_gs_info xi;
  HX_CALL(hx_gs_get_info(f->xgs, &xi));
  const double es = (double)f->es;
  /* in: the extended vector zeroed, the owned fine entries scattered; out: a gather */
  f->st.bytes_per_apply = (double)f->xng * es + (double)hx_gs_num_owned(f->gs) * (4 + 8 + 8 + es) +
                          (double)f->ng * (4 + 8 + 8 + es) +
                          xi.gather_bytes * es / 8.0 +
                          (double)E * ((4.0 + 2.0 * es) * (double)m3 + es * (3.0 * m * m + 3.0 * m));
  return HX_SUCCESS;
}

/* The setup in its phases (host work arrays in W, freed by the caller). */
static int fdm_setup(hx_fdm f, const hx_fdm_opts *o, fdm_work *W) {
  HX_MPI(MPI_Comm_rank(f->comm, &W->rank));
  HX_MPI(MPI_Comm_size(f->comm, &W->size));
  /* one log event per phase (hexcg run --log-view: where the setup goes) */
  static const char *names[] = {"fdm.setup.coefficients", "fdm.setup.planes", "fdm.setup.eigenpairs",
                                "fdm.setup.extended-gs", "fdm.setup.copies", "fdm.setup.upload",
                                "fdm.setup.grouped"};
  hx_log_event ev[7];
  for (int k = 0; k < 7; k++) HX_CALL(hx_log_event_register(names[k], &ev[k]));
#define FDM_PHASE(k, call)   \
  do {                       \
    hx_log_event_begin(ev[k]); \
    HX_CALL(call);           \
    hx_log_event_end(ev[k], 0.0, 0.0); \
  } while (0)
  FDM_PHASE(0, fdm_box_coefficients(f, o, W));
  FDM_PHASE(1, fdm_box_lengths(f, o, W));
  FDM_PHASE(1, fdm_exchange_planes(f, o, W));
  FDM_PHASE(3, fdm_private_nodes(f, o, W));
  FDM_PHASE(1, fdm_extension_planes(f, o, W));
  FDM_PHASE(2, fdm_box_eigenpairs(f, o, W));
  const int xnum = !hx_env_off("HEXCG_FDM_XNUM");
  if (xnum) {
    /* the keyed numbering, in the final layout (docs/fdm.md "Extended numbering") */
    FDM_PHASE(3, fdm_extended_keys(f, W));
    FDM_PHASE(5, fdm_overlap_lists(f, o, W));
    FDM_PHASE(3, fdm_extended_layout(f, W));
    if (W->lane) FDM_PHASE(6, grouped_upload(f, &W->lane, W->nlg));
    FDM_PHASE(4, fdm_weighted_copies(f, W));
    /* the L side before the backend copies below: the setup's peak (the
     * CSR's build) sees neither them nor the keys */
    FDM_PHASE(3, hx_gs_finish_l(f->xgs));
    FDM_PHASE(5, fdm_upload(f));
  } else {
    /* the ids' own gather-scatter in the element layout, then the relayout */
    FDM_PHASE(3, fdm_extended_numbering(f, W));
    FDM_PHASE(4, fdm_weighted_copies(f, W));
    FDM_PHASE(5, fdm_upload(f));
    FDM_PHASE(5, fdm_overlap_lists(f, o, W));
    f->xnl_layout = f->xnl;
    if (f->prec == HX_F32 && hx_fdm_grouped_f32_available(f->b, f->p)) FDM_PHASE(6, grouped_setup(f, W));
  }
  /* the keyed path's L side is final here: the apply scatters through the
   * handle's own backend map (no copy) and needs of xgs its gather and
   * exchange only (HEXCG_FDM_DROP=0 keeps its maps) */
  const int drop = !hx_env_off("HEXCG_FDM_DROP"), take = drop && xnum;
  FDM_PHASE(5, fdm_upload_copies(f, W, take));
  FDM_PHASE(3, hx_gs_finish_l(f->xgs)); /* the element layout (no-op after a relayout) */
#undef FDM_PHASE
  /* the apply scatters through d_xmap and needs of xgs its gather and
   * exchange only: its ids, multiplicities and maps go (24 bytes per
   * extended G entry, 8 per extended L entry) */
  if (drop && !take) HX_CALL(hx_gs_drop_maps(f->xgs));
  /* the host copies of S and L served the uploads only */
  free(f->h_S), free(f->h_L);
  f->h_S = f->h_L = NULL;
  HX_CALL(fdm_cost_model(f));
  return HX_SUCCESS;
}

int hx_fdm_create(const hx_fdm_opts *o, hx_fdm *out) {
  HX_CHECK(out, HX_ERR_ARG, "output handle is NULL");
  *out = NULL;
  HX_CHECK(o && o->mesh && o->gs, HX_ERR_ARG, "FDM options, mesh or gather-scatter are NULL");
  HX_CHECK(o->p >= 1 && o->p <= HX_FDM_PMAX, HX_ERR_ARG, "order p = %d outside 1..%d", o->p, HX_FDM_PMAX);
  HX_CHECK(o->prec == HX_F64 || o->prec == HX_F32, HX_ERR_ARG, "unknown FDM precision %d", (int)o->prec);
  HX_CHECK(o->weight == HX_FDM_WEIGHT_NONE || o->weight == HX_FDM_WEIGHT_SQRT || o->weight == HX_FDM_WEIGHT_RAS,
           HX_ERR_ARG,
           "unknown FDM weight %d", (int)o->weight);
  hx_ev_slot setup = {0}; /* f's own once it exists */
  hx_ev ev_setup = hx_ev_begin(&setup);
  const int32_t E = hx_mesh_num_elements(o->mesh);
  const int n = o->p + 1;
  HX_CHECK(hx_gs_num_l(o->gs) == (int64_t)E * n * n * n, HX_ERR_ARG,
           "gather-scatter has %lld L entries, the mesh %d elements of order %d",
           (long long)hx_gs_num_l(o->gs), (int)E, o->p);
  HX_CHECK(E == 0 || (o->h_kappa && o->h_dirichlet_face), HX_ERR_ARG,
           "kappa or Dirichlet face flags are NULL");
  HX_CHECK((int64_t)E * (o->p + 3) * (o->p + 3) * (o->p + 3) < ((int64_t)1 << 31), HX_ERR_ARG,
           "E*(p+3)^3 extended entries exceed the int32 local index range");
  /* coefficients are checked on every rank before the first collective */
  int bad = -1, bad_any = -1;
  for (int32_t e = 0; e < E && bad < 0; e++) {
    const double kappa = o->h_kappa[e], lambda = o->h_lambda ? o->h_lambda[e] : 0.0;
    if (!(kappa > 0.0 && isfinite(kappa)) || !(lambda >= 0.0 && isfinite(lambda))) bad = (int)e;
  }
  HX_MPI(MPI_Allreduce(&bad, &bad_any, 1, MPI_INT, MPI_MAX, hx_mesh_comm(o->mesh)));
  HX_CHECK(bad < 0, HX_ERR_INPUT,
           "element %d (local index): kappa = %g must be positive, lambda = %g non-negative", bad,
           o->h_kappa[bad], o->h_lambda ? o->h_lambda[bad] : 0.0);
  HX_CHECK(bad_any < 0, HX_ERR_INPUT, "FDM: invalid kappa or lambda on another rank");
  hx_fdm f;
  HX_CALL(HX_ALLOC(&f, 1));
  f->b = hx_gs_backend(o->gs);
  f->gs = o->gs;
  f->comm = hx_mesh_comm(o->mesh);
  f->p = o->p, f->m = o->p + 3, f->E = E;
  f->ng = hx_gs_num_local(o->gs);
  f->weight = o->weight;
  f->prec = o->prec;
  f->es = hx_precision_size(o->prec);
  fdm_work W;
  memset(&W, 0, sizeof W);
  hx_log_event ev_all = -1;
  int ierr = hx_log_event_register("fdm.setup", &ev_all);
  hx_log_event_begin(ev_all);
  if (!ierr) ierr = fdm_setup(f, o, &W);
  work_free(&W);
  hx_log_event_end(ev_all, 0.0, 0.0);
  /* every rank must agree (setup failures on one rank would hang the others
   * in the next collective) */
  int any = ierr != 0, any_all = 0;
  MPI_Allreduce(&any, &any_all, 1, MPI_INT, MPI_MAX, f->comm);
  if (ierr || any_all) {
    fdm_free(f);
    if (ierr) return hx_error_trace(__FILE__, __LINE__, __func__, ierr);
    return HX_ERROR(HX_ERR_INTERNAL, "FDM setup failed on another rank");
  }
  hx_ev_end(&ev_setup, 0.0, 0.0);
  f->ev_setup = setup;
  HX_CALL(hx_ev_max_seconds(f->comm, &f->ev_setup, 1));
  *out = f;
  return HX_SUCCESS;
}

int hx_fdm_set_lambda(hx_fdm f, const double *h_lambda) {
  HX_CHECK(f, HX_ERR_ARG, "FDM is NULL");
  const int m = f->m;
  const int32_t E = f->E;
  for (int32_t e = 0; e < E; e++) {
    const double l = h_lambda ? h_lambda[e] : 0.0;
    HX_CHECK(l >= 0.0 && isfinite(l), HX_ERR_ARG,
             "element %d (local index): lambda = %g must be non-negative", (int)e, l);
  }
  const size_t nL = 3 * (size_t)E * m;
  double *L = NULL;
  HX_CALL(HX_ALLOC(&L, nL + 1));
  /* as fdm_box_coefficients and fdm_box_eigenpairs: the box lambda (divided
   * by the mean node scale), added on the first direction */
  for (int32_t e = 0; e < E; e++) {
    double lambda = h_lambda ? h_lambda[e] : 0.0;
    if (f->h_ld) lambda /= f->h_ld[e];
    for (int d = 0; d < 3; d++) {
      const double *Lk = f->h_Lk + (3 * (int64_t)e + d) * m;
      double *Le = L + (3 * (int64_t)e + d) * m;
      for (int i = 0; i < m; i++) Le[i] = Lk[i] + (d == 0 ? lambda : 0.0);
    }
  }
  /* the backend copies, in the layouts fdm_upload and grouped_setup write */
  int err = HX_SUCCESS;
  if (f->prec == HX_F64) {
    err = hx_mem_to_device(f->b, f->d_L, L, sizeof(double) * nL);
  } else {
    float *t = (float *)L; /* in place: entry i is read before float i is written */
    for (size_t i = 0; i < nL; i++) t[i] = (float)L[i];
    err = hx_mem_to_device(f->b, f->d_L, t, sizeof(float) * nL);
    for (size_t i = nL; i-- > 0;) L[i] = (double)t[i]; /* back to double (exact) for the grouped copy */
  }
  if (!err && f->grouped) {
    const size_t G = (size_t)f->gall;
    float *Lg = NULL;
    err = HX_ALLOC(&Lg, G * 8 * 3 * m + 1);
    for (size_t g = 0; g < G && !err; g++)
      for (int l = 0; l < 8; l++) {
        const int32_t e = f->h_lane[g * 8 + l];
        for (int j = 0; j < 3 * m; j++)
          Lg[(g * 3 * m + j) * 8 + l] = e >= 0 ? (float)L[(size_t)e * 3 * m + j] : 0.0f;
      }
    if (!err) err = hx_mem_to_device(f->b, f->d_Lg, Lg, sizeof(float) * G * 8 * 3 * m);
    free(Lg);
  }
  free(L);
  HX_CALL(err);
  return HX_SUCCESS;
}

int hx_fdm_destroy(hx_fdm *pf) {
  if (!pf || !*pf) return HX_SUCCESS;
  fdm_free(*pf);
  *pf = NULL;
  return HX_SUCCESS;
}

/* The box solves of a part of the elements (0 all, 1 the boundary list, 2
 * the interior list), from d_xg into d_xw, in either layout. */
static int solve_part(hx_fdm f, int part) {
  const hx_precision P = f->prec;
  if (f->grouped) {
    const int32_t g0 = part == 2 ? f->gbnd : 0, g1 = part == 1 ? f->gbnd : f->gall;
    HX_CALL(hx_fdm_elem_apply_grouped_f32(f->b, f->p, g0, g1 - g0, f->d_Sg, f->d_Lg, f->d_xmap,
                                          (const float *)f->d_xg, (float *)f->d_xw));
    return HX_SUCCESS;
  }
  const int32_t n = part == 0 ? f->E : part == 1 ? f->nbnd : f->nint;
  const int32_t *list = part == 0 ? NULL : part == 1 ? f->d_bnd : f->d_int;
  HX_CALL(hx_fdm_elem_apply_map_p(f->b, P, f->p, n, list, f->d_S, f->d_L, f->d_xmap, f->d_xg, f->d_xw));
  return HX_SUCCESS;
}

int hx_fdm_apply_p(hx_fdm f, hx_precision io, const void *d_r, void *d_z) {
  HX_CHECK(f, HX_ERR_ARG, "FDM handle is NULL");
  HX_CHECK(d_r != d_z || f->ng == 0, HX_ERR_ARG, "r and z alias");
  HX_CHECK(io == HX_F64 || io == HX_F32, HX_ERR_ARG, "unknown precision %d", (int)io);
  const hx_precision P = f->prec;
  hx_ev ev_apply = hx_ev_begin(&f->ev_apply);
  hx_ev ev = hx_ev_begin(&f->ev_exch);
  /* r (weighted, masked) onto the extended G-space, written by the owner
   * only; the exchange then gives every holder (ghost layers included) r */
  HX_CALL(hx_fdm_wscatter_p(f->b, f->xng, hx_gs_num_owned(f->gs), f->d_out_idx, f->d_in_w ? f->d_in_w : f->d_out_w,
                            io, d_r, P, f->d_xg));
  HX_CALL(hx_gs_exchange_p(f->xgs, P, f->d_xg, HX_GS_ADD));
  HX_CALL(hx_backend_sync(f->b));
  hx_ev_end(&ev, 0.0, 0.0);
  if (!f->overlap) {
    ev = hx_ev_begin(&f->ev_local);
    HX_CALL(solve_part(f, 0));
    HX_CALL(hx_backend_sync(f->b));
    hx_ev_end(&ev, 0.0, 0.0);
    ev = hx_ev_begin(&f->ev_exch);
    HX_CALL(hx_gs_gather_p(f->xgs, P, f->d_xw, f->d_xg));
    HX_CALL(hx_gs_exchange_p(f->xgs, P, f->d_xg, HX_GS_ADD));
    hx_ev_end(&ev, 0.0, 0.0);
  } else {
    ev = hx_ev_begin(&f->ev_local);
    HX_CALL(solve_part(f, 1));
    HX_CALL(hx_gs_gather_part_p(f->xgs, P, HX_GS_SHARED, f->d_xw, f->d_xg));
    hx_ev_end(&ev, 0.0, 0.0);
    ev = hx_ev_begin(&f->ev_exch);
    HX_CALL(hx_gs_exchange_start_p(f->xgs, P, f->d_xg, HX_GS_ADD));
    hx_ev_end(&ev, 0.0, 0.0);
    ev = hx_ev_begin(&f->ev_local);
    HX_CALL(solve_part(f, 2));
    HX_CALL(hx_gs_gather_part_p(f->xgs, P, HX_GS_INTERIOR, f->d_xw, f->d_xg));
    HX_CALL(hx_backend_sync(f->b));
    hx_ev_end(&ev, 0.0, 0.0);
    ev = hx_ev_begin(&f->ev_exch);
    HX_CALL(hx_gs_exchange_finish_p(f->xgs, P, f->d_xg, HX_GS_ADD));
    hx_ev_end(&ev, 0.0, 0.0);
  }
  /* back to the fine G-vector: weight, mask (out_w is 0 on masked nodes) */
  HX_CALL(hx_fdm_wgather_p(f->b, f->ng, f->d_out_idx, f->d_out_w, P, f->d_xg, io, d_z));
  hx_ev_end(&ev_apply, f->st.bytes_per_apply, 0.0);
  return HX_SUCCESS;
}

int hx_fdm_apply(hx_fdm f, const double *d_r, double *d_z) {
  HX_CALL(hx_fdm_apply_p(f, HX_F64, d_r, d_z));
  return HX_SUCCESS;
}

hx_precision hx_fdm_precision(hx_fdm f) { return f ? f->prec : HX_F64; }

void hx_fdm_get_stats(hx_fdm f, hx_fdm_stats *s) {
  if (!f || !s) return;
  *s = f->st;
  s->applies = f->ev_apply.count;
  s->t_local = f->ev_local.seconds, s->t_exchange = f->ev_exch.seconds;
  s->t_setup = f->ev_setup.seconds;
}

int hx_fdm_box_solve(hx_fdm f, int32_t e, const double *h_u, double *h_w) {
  HX_CHECK(f && h_u && h_w, HX_ERR_ARG, "NULL argument");
  HX_CHECK(e >= 0 && e < f->E, HX_ERR_ARG, "element %d outside 0..%d", (int)e, (int)f->E - 1);
  const int64_t m3 = (int64_t)f->m * f->m * f->m;
  int32_t *d_list = NULL;
  char *d_u = NULL;
  float *hf = NULL;
  HX_CALL(hx_mem_alloc(f->b, sizeof(int32_t), (void **)&d_list));
  HX_CALL(hx_mem_to_device(f->b, d_list, &e, sizeof(int32_t)));
  HX_CALL(hx_mem_alloc(f->b, f->es * (size_t)(f->xnl + 1), (void **)&d_u));
  const size_t off = f->es * (size_t)(e * m3), nb = f->es * (size_t)m3;
  if (f->prec == HX_F32) {
    HX_CALL(HX_ALLOC(&hf, (size_t)m3));
    for (int64_t i = 0; i < m3; i++) hf[i] = (float)h_u[i];
    HX_CALL(hx_mem_to_device(f->b, d_u + off, hf, nb));
  } else {
    HX_CALL(hx_mem_to_device(f->b, d_u + off, h_u, nb));
  }
  HX_CALL(hx_fdm_elem_apply_list_p(f->b, f->prec, f->p, 1, d_list, f->d_S, f->d_L, d_u, f->d_xw));
  if (f->prec == HX_F32) {
    HX_CALL(hx_mem_to_host(f->b, hf, (char *)f->d_xw + off, nb));
    for (int64_t i = 0; i < m3; i++) h_w[i] = (double)hf[i];
    free(hf);
  } else {
    HX_CALL(hx_mem_to_host(f->b, h_w, (char *)f->d_xw + off, nb));
  }
  HX_CALL(hx_mem_free(f->b, (void **)&d_u));
  HX_CALL(hx_mem_free(f->b, (void **)&d_list));
  return HX_SUCCESS;
}

int64_t hx_fdm_num_extended(hx_fdm f) { return f ? f->xng : 0; }

int hx_fdm_grouped(hx_fdm f) { return f ? f->grouped : 0; }

int hx_fdm_create_on(hx_disc d, hx_fdm_weight weight, int overlap, hx_precision prec, hx_fdm *f) {
  const hx_fdm_opts fo = {.mesh = hx_disc_mesh(d),
                          .gs = hx_disc_gs(d),
                          .p = hx_disc_order(d),
                          .h_kappa = hx_disc_kappa(d),
                          .h_kappa_node = hx_disc_kappa_nodes(d),
                          .h_lambda = hx_disc_lambda(d),
                          .h_dirichlet_face = hx_disc_dirichlet_faces(d),
                          .weight = weight,
                          .overlap = overlap,
                          .prec = prec};
  HX_CALL(hx_fdm_create(&fo, f));
  return HX_SUCCESS;
}
