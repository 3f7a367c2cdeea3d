/* Distributed gather-scatter on synthetic GLL boxes, against a serial
 * reference that every rank computes for the whole (small) mesh.
 *
 * Cases: several nx x ny x nz boxes and orders p; elements distributed in
 * z-slabs, round-robin (with the local order reversed) and by a hash (an
 * irregular neighbour pattern, ranks possibly without elements); with and
 * without zero ids. Checks per case:
 *  - sizes: ng, n_owned, n_shared, n_global; the G numbering (owned interior,
 *    owned shared, not owned; sorted by id in each group; owner = lowest
 *    holding rank); the scatter map; multiplicities and their inverses;
 *  - scatter of a G-vector f(id) is exact; gather(scatter(x)) = local count
 *    .* x and assemble(scatter(x)) = global multiplicity .* x (exact for
 *    integer x);
 *  - assembly of random element contributions equals a serial sum per id
 *    (rounding bound), bit-identical on all holders (exchange MIN == MAX) and
 *    across repeated calls;
 *  - the owned-only distributed dot equals the serial dot (rounding bound);
 *  - min/max exchanges give the extrema over holders exactly;
 *  - gather_part(SHARED) + start + gather_part(INTERIOR) + finish gives the
 *    same bits as gather + blocking exchange;
 *  - Dirichlet mask (flag on some copies only), apply_mask, element flags;
 *  - hx_gs_box_ids matches the formula.
 * With --backend cuda the results are also compared bit for bit with the
 * CPU backend. */
#include "hx_gs.h"
#include "hx_kernels.h"
#include "hx_test.h"

typedef struct {
  int nx, ny, nz, p;
  int dist;  /* 0 slab, 1 round-robin (reversed local order), 2 hash */
  int zeros; /* 1: drop some ids everywhere and some single L entries */
} cfg_t;


static int elem_rank(const cfg_t *c, int64_t e, int64_t nel, int size) {
  if (c->dist == 0) return (int)(e * size / nel);
  if (c->dist == 1) return (int)(e % size);
  return (int)(hx_test_mix64((uint64_t)e * 31 + 7) % (uint64_t)size);
}

/* id of node (i,j,k) of element e, straight from the formula; 0 when the
 * zero-id variant drops it */
static int64_t node_id(const cfg_t *c, int64_t e, int i, int j, int k) {
  const int p = c->p;
  const int64_t ex = e % c->nx, ey = (e / c->nx) % c->ny, ez = e / ((int64_t)c->nx * c->ny);
  const int64_t mx = (int64_t)c->nx * p + 1, my = (int64_t)c->ny * p + 1;
  int64_t id = 1 + (ex * p + i) + mx * ((ey * p + j) + my * (ez * p + k));
  if (c->zeros) {
    if (hx_test_mix64((uint64_t)id) % 5 == 0) return 0;                                       /* dropped node */
    if (hx_test_mix64((uint64_t)(e * 4096 + i + 16 * j + 256 * k) ^ 0x55) % 7 == 0) return 0; /* dropped entry */
  }
  return id;
}

typedef struct {
  int64_t nel, nglob_max, nl;
  int64_t *elems; /* local elements in local order */
  int64_t *ids;   /* nl */
  int64_t *gel;   /* nl: global element of each L entry */
  int *gnode;     /* nl: node index within the element */
  /* serial reference over all ids 1..nglob_max */
  unsigned *holders; /* bit r: rank r holds the id */
  int *mult;         /* number of L entries over all ranks */
} mesh_t;

static void mesh_free(mesh_t *m) {
  free(m->elems), free(m->ids), free(m->gel), free(m->gnode), free(m->holders), free(m->mult);
}

static void mesh_build(const cfg_t *c, int rank, int size, mesh_t *m) {
  const int n = c->p + 1, npe = n * n * n;
  memset(m, 0, sizeof *m);
  m->nel = (int64_t)c->nx * c->ny * c->nz;
  m->nglob_max = ((int64_t)c->nx * c->p + 1) * ((int64_t)c->ny * c->p + 1) * ((int64_t)c->nz * c->p + 1);
  int64_t ne = 0;
  for (int64_t e = 0; e < m->nel; e++) ne += elem_rank(c, e, m->nel, size) == rank;
  m->elems = malloc(sizeof(int64_t) * (ne + 1));
  int64_t k = 0;
  for (int64_t e = 0; e < m->nel; e++)
    if (elem_rank(c, e, m->nel, size) == rank) m->elems[k++] = e;
  if (c->dist == 1) /* reversed local order */
    for (int64_t a = 0; a < ne / 2; a++) {
      int64_t t = m->elems[a];
      m->elems[a] = m->elems[ne - 1 - a];
      m->elems[ne - 1 - a] = t;
    }
  m->nl = ne * npe;
  m->ids = malloc(sizeof(int64_t) * (m->nl + 1));
  m->gel = malloc(sizeof(int64_t) * (m->nl + 1));
  m->gnode = malloc(sizeof(int) * (m->nl + 1));
  for (int64_t a = 0; a < ne; a++)
    for (int q = 0; q < npe; q++) {
      int i = q % n, j = (q / n) % n, kk = q / (n * n);
      m->ids[a * npe + q] = node_id(c, m->elems[a], i, j, kk);
      m->gel[a * npe + q] = m->elems[a];
      m->gnode[a * npe + q] = q;
    }
  m->holders = calloc((size_t)m->nglob_max + 1, sizeof(unsigned));
  m->mult = calloc((size_t)m->nglob_max + 1, sizeof(int));
  for (int64_t e = 0; e < m->nel; e++) {
    int r = elem_rank(c, e, m->nel, size);
    for (int q = 0; q < npe; q++) {
      int64_t id = node_id(c, e, q % n, (q / n) % n, q / (n * n));
      if (!id) continue;
      m->holders[id] |= 1u << r;
      m->mult[id]++;
    }
  }
}

static int popcount(unsigned x) {
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}
static int lowest(unsigned x) {
  int r = 0;
  while (!(x & 1u)) x >>= 1, r++;
  return r;
}

/* contribution of L entry (global element e, node q): random */
static double contrib(int64_t e, int q) { return hx_test_key_rand((uint64_t)e * 1000003 + (uint64_t)q); }
/* G-vector values that depend on the id only (consistent across ranks) */
static double fid(int64_t id, int which) { return hx_test_key_rand((uint64_t)id * 17 + (uint64_t)which); }
static double fint(int64_t id) { return (double)((int64_t)(hx_test_mix64((uint64_t)id) % 2001) - 1000); }
/* per-rank values for min/max */
static double frank(int64_t id, int r) { return hx_test_key_rand((uint64_t)id * 131 + (uint64_t)r * 7919 + 3); }

static double *dalloc(hx_backend b, int64_t n) {
  void *p = NULL;
  if (hx_mem_alloc(b, (size_t)(n + 1) * sizeof(double), &p)) return NULL;
  return (double *)p;
}

#define TOL_EPS 1.1102230246251565e-16

/* Runs every check of one case on backend b. If h_asm_out is given, the
 * assembled random vector is returned there (host, ng) for cross-backend
 * comparison. */
static int run_case(hx_backend b, const cfg_t *c, double **h_asm_out, int64_t *ng_out) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mesh_t m;
  mesh_build(c, rank, size, &m);
  const int n = c->p + 1, npe = n * n * n;
  const int64_t nl = m.nl;
  const int fails0 = hx_test_failures_;

  hx_gs gs = NULL;
  HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, nl, m.ids, &gs));
  const int64_t ng = hx_gs_num_local(gs), no = hx_gs_num_owned(gs), nsh = hx_gs_num_shared(gs);
  const int64_t *gid = hx_gs_global_ids(gs);
  const int32_t *map = hx_gs_map_host(gs);
  HX_ASSERT(hx_gs_num_l(gs) == nl, "nl");

  /* ---- sizes and numbering against the reference */
  int64_t ref_ng = 0, ref_owned = 0, ref_shared = 0, ref_global = 0;
  for (int64_t id = 1; id <= m.nglob_max; id++) {
    if (!m.holders[id]) continue;
    ref_global++;
    if (!(m.holders[id] & (1u << rank))) continue;
    ref_ng++;
    ref_owned += lowest(m.holders[id]) == rank;
    ref_shared += popcount(m.holders[id]) > 1;
  }
  HX_ASSERT(ng == ref_ng, "ng %lld ref %lld", (long long)ng, (long long)ref_ng);
  HX_ASSERT(no == ref_owned, "n_owned %lld ref %lld", (long long)no, (long long)ref_owned);
  HX_ASSERT(nsh == ref_shared, "n_shared %lld ref %lld", (long long)nsh, (long long)ref_shared);
  HX_ASSERT(hx_gs_num_global(gs) == ref_global, "n_global %lld ref %lld", (long long)hx_gs_num_global(gs),
            (long long)ref_global);
  int64_t sum_owned = 0;
  MPI_Allreduce(&no, &sum_owned, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  HX_ASSERT(sum_owned == ref_global, "sum of n_owned %lld != n_global %lld", (long long)sum_owned,
            (long long)ref_global);
  if (ng != ref_ng) goto done;
  {
    int bad = 0;
    /* first L entry of each G row (rows within a group follow it) */
    int64_t *first = malloc(sizeof(int64_t) * (size_t)(ng + 1));
    for (int64_t r = 0; r < ng; r++) first[r] = -1;
    for (int64_t i = 0; i < nl; i++)
      if (m.ids[i] && map[i] >= 0 && map[i] < ng && first[map[i]] < 0) first[map[i]] = i;
    for (int64_t r = 0; r < ng; r++) {
      int64_t id = gid[r];
      if (id < 1 || id > m.nglob_max || !(m.holders[id] & (1u << rank))) {
        bad++;
        continue;
      }
      unsigned h = m.holders[id];
      int grp = popcount(h) == 1 ? 0 : (lowest(h) == rank ? 1 : 2);
      int want = r < ng - nsh ? 0 : (r < no ? 1 : 2);
      if (grp != want) bad++;
      if (r > 0) {
        int pgrp = r - 1 < ng - nsh ? 0 : (r - 1 < no ? 1 : 2);
        if (pgrp == want && first[r - 1] >= first[r]) bad++; /* first-appearance order */
      }
    }
    free(first);
    HX_ASSERT(bad == 0, "%d G entries with a wrong id/group/order", bad);
    bad = 0;
    for (int64_t i = 0; i < nl; i++)
      if (m.ids[i] == 0 ? map[i] != -1 : (map[i] < 0 || map[i] >= ng || gid[map[i]] != m.ids[i])) bad++;
    HX_ASSERT(bad == 0, "%d wrong scatter map entries", bad);
  }

  double *hg = calloc((size_t)ng + 1, sizeof(double)), *hl = calloc((size_t)nl + 1, sizeof(double));
  double *hg2 = calloc((size_t)ng + 1, sizeof(double)), *hg3 = calloc((size_t)ng + 1, sizeof(double));
  double *dg = dalloc(b, ng), *dg2 = dalloc(b, ng), *dl = dalloc(b, nl);
  HX_ASSERT(hg && hl && hg2 && hg3 && dg && dg2 && dl, "allocation");
  const size_t gb = (size_t)ng * sizeof(double), lb = (size_t)nl * sizeof(double);

  /* ---- multiplicities */
  HX_TCALL(hx_mem_to_host(b, hg, hx_gs_multiplicity(gs), gb));
  HX_TCALL(hx_mem_to_host(b, hg2, hx_gs_inv_multiplicity(gs), gb));
  {
    int bad = 0;
    for (int64_t r = 0; r < ng; r++)
      if (hg[r] != (double)m.mult[gid[r]] || hg2[r] != 1.0 / (double)m.mult[gid[r]]) bad++;
    HX_ASSERT(bad == 0, "%d wrong multiplicities", bad);
  }

  /* ---- scatter exact; gather(scatter(x)) = local count .* x; assemble = mult .* x */
  for (int64_t r = 0; r < ng; r++) hg[r] = fint(gid[r]);
  HX_TCALL(hx_mem_to_device(b, dg, hg, gb));
  for (int64_t i = 0; i < nl; i++) hl[i] = -7.0; /* scatter must overwrite id-0 entries too */
  HX_TCALL(hx_mem_to_device(b, dl, hl, lb));
  HX_TCALL(hx_gs_scatter(gs, dg, dl));
  HX_TCALL(hx_mem_to_host(b, hl, dl, lb));
  {
    int bad = 0;
    for (int64_t i = 0; i < nl; i++)
      if (hl[i] != (m.ids[i] ? fint(m.ids[i]) : 0.0)) bad++;
    HX_ASSERT(bad == 0, "scatter: %d wrong L entries", bad);
  }
  HX_TCALL(hx_gs_gather(gs, dl, dg2));
  HX_TCALL(hx_mem_to_host(b, hg2, dg2, gb));
  {
    int *lc = calloc((size_t)ng + 1, sizeof(int));
    for (int64_t i = 0; i < nl; i++)
      if (m.ids[i]) lc[map[i]]++;
    int bad = 0;
    for (int64_t r = 0; r < ng; r++)
      if (hg2[r] != lc[r] * hg[r]) bad++;
    HX_ASSERT(bad == 0, "gather(scatter(x)) != local count .* x at %d entries", bad);
    free(lc);
  }
  HX_TCALL(hx_gs_assemble(gs, dl, dg2));
  HX_TCALL(hx_mem_to_host(b, hg2, dg2, gb));
  {
    int bad = 0;
    for (int64_t r = 0; r < ng; r++)
      if (hg2[r] != m.mult[gid[r]] * hg[r]) bad++;
    HX_ASSERT(bad == 0, "assemble(scatter(x)) != multiplicity .* x at %d entries", bad);
  }

  /* ---- assembly of random element contributions vs a serial sum per id */
  {
    for (int64_t i = 0; i < nl; i++) hl[i] = contrib(m.gel[i], m.gnode[i]);
    HX_TCALL(hx_mem_to_device(b, dl, hl, lb));
    HX_TCALL(hx_gs_assemble(gs, dl, dg));
    HX_TCALL(hx_mem_to_host(b, hg, dg, gb));
    /* serial reference over all elements of the mesh */
    long double *ref = calloc((size_t)m.nglob_max + 1, sizeof(long double));
    double *rabs = calloc((size_t)m.nglob_max + 1, sizeof(double));
    for (int64_t e = 0; e < m.nel; e++)
      for (int q = 0; q < npe; q++) {
        int64_t id = node_id(c, e, q % n, (q / n) % n, q / (n * n));
        if (!id) continue;
        ref[id] += contrib(e, q);
        rabs[id] += fabs(contrib(e, q));
      }
    int bad = 0;
    double worst = 0;
    for (int64_t r = 0; r < ng; r++) {
      int64_t id = gid[r];
      /* a sum of k terms in any order: |err| <= (k-1) eps sum|terms| */
      double tol = (m.mult[id] - 1) * TOL_EPS * rabs[id] * 1.0000001;
      double d = fabs(hg[r] - (double)ref[id]);
      if (d > tol + TOL_EPS * fabs((double)ref[id])) bad++;
      if (d > worst) worst = d;
    }
    HX_ASSERT(bad == 0, "assembled vector differs from the serial assembly at %d entries (worst %g)", bad,
              worst);
    free(ref), free(rabs);
    /* the exact contract: each rank sums its entries of an id in increasing L
     * order, the ranks' sums are added in increasing rank order */
    {
      double *exact = calloc((size_t)m.nglob_max + 1, sizeof(double));
      double *part = calloc((size_t)m.nglob_max + 1, sizeof(double));
      unsigned char *seen = calloc((size_t)m.nglob_max + 1, 1), *started = calloc((size_t)m.nglob_max + 1, 1);
      for (int q = 0; q < size; q++) {
        mesh_t mq;
        mesh_build(c, q, size, &mq);
        memset(seen, 0, (size_t)m.nglob_max + 1);
        for (int64_t i = 0; i < mq.nl; i++) {
          int64_t id = mq.ids[i];
          if (!id) continue;
          double v = contrib(mq.gel[i], mq.gnode[i]);
          part[id] = seen[id] ? part[id] + v : v;
          seen[id] = 1;
        }
        for (int64_t id = 1; id <= m.nglob_max; id++)
          if (seen[id]) {
            exact[id] = started[id] ? exact[id] + part[id] : part[id];
            started[id] = 1;
          }
        mesh_free(&mq);
      }
      int nbits = 0;
      for (int64_t r = 0; r < ng; r++) nbits += memcmp(&hg[r], &exact[gid[r]], sizeof(double)) != 0;
      HX_ASSERT(nbits == 0, "assembled vector not bit-identical to the in-order/rank-order sum at %d entries",
                nbits);
      free(exact), free(part), free(seen), free(started);
    }
    /* bit-identical on all holders: MIN and MAX over holders equal the value */
    HX_TCALL(hx_mem_copy(b, dg2, dg, gb));
    HX_TCALL(hx_gs_exchange(gs, dg2, HX_GS_MIN));
    HX_TCALL(hx_mem_to_host(b, hg2, dg2, gb));
    HX_TCALL(hx_mem_copy(b, dg2, dg, gb));
    HX_TCALL(hx_gs_exchange(gs, dg2, HX_GS_MAX));
    HX_TCALL(hx_mem_to_host(b, hg3, dg2, gb));
    HX_ASSERT(memcmp(hg, hg2, gb) == 0 && memcmp(hg, hg3, gb) == 0,
              "assembled shared values differ between holding ranks");
    /* repeatable */
    HX_TCALL(hx_gs_assemble(gs, dl, dg2));
    HX_TCALL(hx_mem_to_host(b, hg2, dg2, gb));
    HX_ASSERT(memcmp(hg, hg2, gb) == 0, "assembly not bit-identical across calls");

    /* overlapped path: shared rows, start, interior rows + other work, finish */
    HX_TCALL(hx_mem_zero(b, dg2, gb));
    HX_TCALL(hx_gs_gather_part(gs, HX_GS_SHARED, dl, dg2));
    HX_TCALL(hx_gs_exchange_start(gs, dg2, HX_GS_ADD));
    HX_TCALL(hx_gs_gather_part(gs, HX_GS_INTERIOR, dl, dg2));
    {
      double *dl2 = dalloc(b, nl); /* unrelated work meanwhile */
      HX_TCALL(hx_gs_scatter(gs, dg, dl2));
      hx_mem_free(b, (void **)&dl2);
    }
    HX_TCALL(hx_gs_exchange_finish(gs, dg2, HX_GS_ADD));
    HX_TCALL(hx_mem_to_host(b, hg2, dg2, gb));
    HX_ASSERT(memcmp(hg, hg2, gb) == 0, "overlapped start/finish result differs from the blocking one");
    if (h_asm_out) {
      *h_asm_out = malloc(gb + 8);
      memcpy(*h_asm_out, hg, gb);
      *ng_out = ng;
    }
  }

  /* ---- owned-only dot vs the serial dot over all ids */
  {
    for (int64_t r = 0; r < ng; r++) hg[r] = fid(gid[r], 1), hg2[r] = fid(gid[r], 2);
    HX_TCALL(hx_mem_to_device(b, dg, hg, gb));
    HX_TCALL(hx_mem_to_device(b, dg2, hg2, gb));
    double d = 0;
    HX_TCALL(hx_gs_dot(gs, dg, dg2, &d));
    long double ref = 0, rabs = 0;
    int64_t cnt = 0;
    for (int64_t id = 1; id <= m.nglob_max; id++)
      if (m.holders[id]) {
        ref += (long double)fid(id, 1) * fid(id, 2);
        rabs += fabsl((long double)fid(id, 1) * fid(id, 2));
        cnt++;
      }
    double tol = (double)(cnt + size) * TOL_EPS * (double)rabs;
    HX_ASSERT(fabs(d - (double)ref) <= tol, "dot %.17g serial %.17g (tol %g)", d, (double)ref, tol);
    double d2 = 0;
    HX_TCALL(hx_gs_dot(gs, dg, dg2, &d2));
    HX_ASSERT(memcmp(&d, &d2, sizeof d) == 0, "dot not deterministic");
  }

  /* ---- min / max give the extrema over holders */
  for (int op = HX_GS_MIN; op <= HX_GS_MAX; op++) {
    for (int64_t r = 0; r < ng; r++) hg[r] = frank(gid[r], rank);
    HX_TCALL(hx_mem_to_device(b, dg, hg, gb));
    HX_TCALL(hx_gs_exchange(gs, dg, (hx_gs_op)op));
    HX_TCALL(hx_mem_to_host(b, hg, dg, gb));
    int bad = 0;
    for (int64_t r = 0; r < ng; r++) {
      unsigned h = m.holders[gid[r]];
      double want = op == HX_GS_MIN ? INFINITY : -INFINITY;
      for (int q = 0; q < size; q++)
        if (h & (1u << q)) {
          double v = frank(gid[r], q);
          want = op == HX_GS_MIN ? fmin(want, v) : fmax(want, v);
        }
      if (hg[r] != want) bad++;
    }
    HX_ASSERT(bad == 0, "exchange %s wrong at %d entries", op == HX_GS_MIN ? "MIN" : "MAX", bad);
  }

  /* ---- Dirichlet mask: flag the x = 0 nodes of elements with even index only,
   * so some copies of a node are flagged and others not */
  {
    int *flag = calloc((size_t)nl + 1, sizeof(int));
    for (int64_t i = 0; i < nl; i++)
      flag[i] = (m.gel[i] % 2 == 0) && (m.gnode[i] % n == 0) && (m.gel[i] % c->nx == 0);
    unsigned char *ref = calloc((size_t)m.nglob_max + 1, 1);
    for (int64_t e = 0; e < m.nel; e += 2)
      if (e % c->nx == 0)
        for (int q = 0; q < npe; q += n) {
          int64_t id = node_id(c, e, 0, (q / n) % n, q / (n * n));
          if (id) ref[id] = 1;
        }
    HX_ASSERT(hx_gs_mask(gs) == NULL && hx_gs_num_masked(gs) == 0, "mask before set_mask");
    HX_TCALL(hx_gs_set_mask(gs, flag));
    int64_t nm = 0;
    for (int64_t r = 0; r < ng; r++) nm += ref[gid[r]];
    HX_ASSERT(hx_gs_num_masked(gs) == nm, "num_masked %lld ref %lld", (long long)hx_gs_num_masked(gs),
              (long long)nm);
    HX_TCALL(hx_mem_to_host(b, hg, hx_gs_mask(gs), gb));
    for (int64_t r = 0; r < ng; r++) hg2[r] = fid(gid[r], 3);
    HX_TCALL(hx_mem_to_device(b, dg, hg2, gb));
    HX_TCALL(hx_gs_apply_mask(gs, dg));
    HX_TCALL(hx_mem_to_host(b, hg3, dg, gb));
    int bad = 0;
    for (int64_t r = 0; r < ng; r++) {
      if (hg[r] != (ref[gid[r]] ? 0.0 : 1.0)) bad++;
      if (hg3[r] != (ref[gid[r]] ? 0.0 : hg2[r])) bad++;
    }
    HX_ASSERT(bad == 0, "mask / apply_mask wrong at %d entries", bad);
    free(flag), free(ref);
  }

  /* ---- elements with shared nodes */
  {
    int64_t ne = nl / npe;
    int *ef = calloc((size_t)ne + 1, sizeof(int));
    HX_TCALL(hx_gs_element_shared_flags(gs, npe, ef));
    int bad = 0;
    for (int64_t a = 0; a < ne; a++) {
      int want = 0;
      for (int q = 0; q < npe; q++) {
        int64_t id = m.ids[a * npe + q];
        if (id && popcount(m.holders[id]) > 1) want = 1;
      }
      if (ef[a] != want) bad++;
    }
    HX_ASSERT(bad == 0, "element shared flags wrong for %d elements", bad);
    free(ef);
  }

  /* ---- L owner flags: exactly one flagged L entry per id over all ranks */
  {
    int *lf = calloc((size_t)nl + 1, sizeof(int));
    int *cnt = calloc((size_t)m.nglob_max + 1, sizeof(int)),
        *cnt_all = calloc((size_t)m.nglob_max + 1, sizeof(int));
    HX_TCALL(hx_gs_l_owner_flags(gs, lf));
    int bad = 0;
    for (int64_t i = 0; i < nl; i++) {
      if (lf[i] && !m.ids[i]) bad++;
      if (lf[i] && m.ids[i]) cnt[m.ids[i]]++;
      if (lf[i] && m.ids[i] && lowest(m.holders[m.ids[i]]) != rank) bad++; /* on the owner */
    }
    MPI_Allreduce(cnt, cnt_all, (int)m.nglob_max + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int64_t id = 1; id <= m.nglob_max; id++) bad += cnt_all[id] != (m.holders[id] ? 1 : 0);
    HX_ASSERT(bad == 0, "L owner flags wrong (%d problems)", bad);
    free(lf), free(cnt), free(cnt_all);
  }

  /* ---- hx_gs_box_ids matches the formula (no zeros) */
  if (!c->zeros && nl > 0) {
    int64_t *bid = malloc(sizeof(int64_t) * (size_t)npe);
    int bad = 0;
    for (int64_t a = 0; a < nl / npe; a++) {
      HX_TCALL(hx_gs_box_ids(c->nx, c->ny, c->nz, c->p, m.elems[a], 1, bid));
      for (int q = 0; q < npe; q++) bad += bid[q] != m.ids[a * npe + q];
    }
    HX_ASSERT(bad == 0, "hx_gs_box_ids differs from the formula at %d nodes", bad);
    free(bid);
  }

  free(hg), free(hl), free(hg2), free(hg3);
  hx_mem_free(b, (void **)&dg);
  hx_mem_free(b, (void **)&dg2);
  hx_mem_free(b, (void **)&dl);
done:
  HX_TCALL(hx_gs_destroy(&gs));
  HX_ASSERT(gs == NULL, "destroy must null the handle");
  if (hx_test_failures_ != fails0)
    fprintf(stderr, "[rank %d] case %dx%dx%d p=%d dist=%d zeros=%d failed\n", rank, c->nx, c->ny, c->nz, c->p,
            c->dist, c->zeros);
  mesh_free(&m);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hx_backend b = NULL, cpu = NULL;
  /* no device: a skip */
  if (hx_test_backends(argc, argv, &b, NULL)) {
    hx_error_print(stderr, rank, 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int is_cuda = hx_backend_get_kind(b) == HX_BACKEND_CUDA;
  if (is_cuda && hx_backend_create("cpu", &cpu)) MPI_Abort(MPI_COMM_WORLD, 1);

  static const cfg_t cases[] = {
      {3, 2, 2, 1, 0, 0}, {3, 2, 2, 1, 1, 0}, {2, 3, 2, 2, 2, 0}, {4, 3, 2, 3, 0, 0},
      {3, 3, 3, 2, 1, 0}, {2, 2, 2, 7, 2, 0}, {3, 2, 2, 2, 0, 1}, {3, 3, 2, 3, 2, 1},
      {2, 1, 1, 2, 1, 0}, {1, 1, 1, 4, 2, 1}, {5, 4, 3, 2, 2, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    double *h1 = NULL, *h2 = NULL;
    int64_t n1 = 0, n2 = 0;
    run_case(b, &cases[k], is_cuda ? &h1 : NULL, &n1);
    if (is_cuda) {
      run_case(cpu, &cases[k], &h2, &n2);
      HX_ASSERT(h1 && h2 && n1 == n2 && memcmp(h1, h2, (size_t)n1 * sizeof(double)) == 0,
                "case %zu: cuda assembly differs from the cpu one", k);
    }
    free(h1), free(h2);
  }
  /* hx_gs_relayout: a reversed L side with empty entries mapped like the
   * original, the gather of integer values identical, bad layouts refused
   * (and the handle left usable) */
  {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { NL = 24 };
    int64_t ids[NL], old[NL + 3];
    /* the first half possibly shared with other ranks, the second private
     * to this rank and repeated (multiplicities 2 and 3) */
    for (int i = 0; i < NL; i++)
      ids[i] = i % 5 == 4 ? 0 : i < NL / 2 ? 1 + (i + 7 * rank) % 30 : 100 + 20 * rank + i % 4;
    hx_gs g1 = NULL, g2 = NULL;
    HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, NL, ids, &g1));
    HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, NL, ids, &g2));
    for (int k = 0, i = NL - 1; k < NL + 3; k++) old[k] = k % 9 == 1 ? -1 : i--;
    int64_t dup[NL + 3];
    memcpy(dup, old, sizeof dup);
    dup[0] = dup[2];
    HX_ASSERT(hx_gs_relayout(g2, NL + 3, dup, NULL) == HX_ERR_ARG, "relayout: a duplicate entry accepted");
    hx_error_clear();
    dup[0] = -1;
    HX_ASSERT(hx_gs_relayout(g2, NL + 3, dup, NULL) == HX_ERR_ARG, "relayout: a dropped entry accepted");
    hx_error_clear();
    HX_TCALL(hx_gs_relayout(g2, NL + 3, old, NULL));
    HX_ASSERT(hx_gs_num_l(g2) == NL + 3 && hx_gs_num_local(g2) == hx_gs_num_local(g1), "relayout: sizes");
    const int32_t *m1 = hx_gs_map_host(g1), *m2 = hx_gs_map_host(g2);
    int bad = 0;
    for (int k = 0; k < NL + 3; k++) bad += m2[k] != (old[k] < 0 ? -1 : m1[old[k]]);
    HX_ASSERT(bad == 0, "relayout: %d map entries differ", bad);
    const int64_t ng = hx_gs_num_local(g1);
    double hl1[NL], hl2[NL + 3], *dl1, *dl2, *dg1, *dg2;
    double *hg1 = malloc(sizeof(double) * (size_t)(ng + 1)), *hg2 = malloc(sizeof(double) * (size_t)(ng + 1));
    for (int i = 0; i < NL; i++) hl1[i] = (double)(1 + (i * 3 + rank) % 11);
    for (int k = 0; k < NL + 3; k++) hl2[k] = old[k] < 0 ? 1e30 : hl1[old[k]];
    HX_TCALL(hx_mem_alloc(b, sizeof hl1, (void **)&dl1));
    HX_TCALL(hx_mem_alloc(b, sizeof hl2, (void **)&dl2));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&dg1));
    HX_TCALL(hx_mem_alloc(b, sizeof(double) * (size_t)(ng + 1), (void **)&dg2));
    HX_TCALL(hx_mem_to_device(b, dl1, hl1, sizeof hl1));
    HX_TCALL(hx_mem_to_device(b, dl2, hl2, sizeof hl2));
    HX_TCALL(hx_gs_gather(g1, dl1, dg1));
    HX_TCALL(hx_gs_gather(g2, dl2, dg2));
    HX_TCALL(hx_mem_to_host(b, hg1, dg1, sizeof(double) * (size_t)ng));
    HX_TCALL(hx_mem_to_host(b, hg2, dg2, sizeof(double) * (size_t)ng));
    HX_ASSERT(memcmp(hg1, hg2, sizeof(double) * (size_t)ng) == 0, "relayout: the gather differs");
    /* hx_gs_renumber_interior: the interior rows in order of first
     * appearance in the (reversed) L side, shared rows in place; the map,
     * the assembly (gather and exchange) and the multiplicities follow the
     * permutation; refused once a mask is set */
    {
      const int64_t s0 = ng - hx_gs_num_shared(g2);
      int32_t *nof = malloc(sizeof(int32_t) * (size_t)(ng + 1)), m2old[NL + 3];
      int *seen = calloc((size_t)ng + 1, sizeof(int));
      memcpy(m2old, m2, sizeof m2old);
      HX_TCALL(hx_gs_renumber_interior(g2, nof));
      int nbad = 0;
      for (int64_t r = 0; r < ng; r++) {
        nbad += nof[r] < 0 || nof[r] >= ng || seen[nof[r]]++ || (r >= s0 && nof[r] != r);
      }
      HX_ASSERT(nbad == 0, "renumber: not a permutation fixing the shared rows (%d bad)", nbad);
      const int32_t *m3 = hx_gs_map_host(g2);
      int32_t next = 0;
      nbad = 0;
      for (int k = 0; k < NL + 3; k++) {
        nbad += m3[k] != (m2old[k] < 0 ? -1 : nof[m2old[k]]);
        if (m3[k] >= 0 && m3[k] < s0) {
          if (m3[k] > next) nbad++;
          if (m3[k] == next) next++;
        }
      }
      HX_ASSERT(nbad == 0 && next == s0, "renumber: map or first-appearance order wrong (%d bad, %d of %lld)", nbad,
                (int)next, (long long)s0);
      double *hm1 = malloc(sizeof(double) * (size_t)(ng + 1)), *hm2 = malloc(sizeof(double) * (size_t)(ng + 1));
      HX_TCALL(hx_gs_assemble(g1, dl1, dg1));
      HX_TCALL(hx_gs_assemble(g2, dl2, dg2));
      HX_TCALL(hx_mem_to_host(b, hg1, dg1, sizeof(double) * (size_t)ng));
      HX_TCALL(hx_mem_to_host(b, hg2, dg2, sizeof(double) * (size_t)ng));
      HX_TCALL(hx_mem_to_host(b, hm1, hx_gs_inv_multiplicity(g1), sizeof(double) * (size_t)ng));
      HX_TCALL(hx_mem_to_host(b, hm2, hx_gs_inv_multiplicity(g2), sizeof(double) * (size_t)ng));
      nbad = 0;
      for (int64_t r = 0; r < ng; r++) nbad += hg2[nof[r]] != hg1[r] || hm2[nof[r]] != hm1[r];
      HX_ASSERT(nbad == 0, "renumber: %d assembled values or multiplicities differ", nbad);
      /* relayout and renumbering in one call: the same permutation and map */
      {
        hx_gs g3 = NULL;
        int32_t *nof3 = malloc(sizeof(int32_t) * (size_t)(ng + 1));
        HX_TCALL(hx_gs_create(b, MPI_COMM_WORLD, NL, ids, &g3));
        HX_TCALL(hx_gs_relayout(g3, NL + 3, old, nof3));
        const int32_t *m4 = hx_gs_map_host(g3);
        nbad = 0;
        for (int64_t r = 0; r < ng; r++) nbad += nof3[r] != nof[r];
        for (int k = 0; k < NL + 3; k++) nbad += m4[k] != m3[k];
        HX_ASSERT(nbad == 0, "relayout with renumbering: %d entries differ from relayout + renumber", nbad);
        HX_TCALL(hx_gs_destroy(&g3));
        free(nof3);
      }
      int lflag[NL + 3];
      for (int k = 0; k < NL + 3; k++) lflag[k] = k == 3;
      HX_TCALL(hx_gs_set_mask(g2, lflag));
      HX_ASSERT(hx_gs_renumber_interior(g2, nof) == HX_ERR_ARG, "renumber: accepted with a mask set");
      hx_error_clear();
      free(nof), free(seen), free(hm1), free(hm2);
    }
    hx_mem_free(b, (void **)&dl1), hx_mem_free(b, (void **)&dl2);
    hx_mem_free(b, (void **)&dg1), hx_mem_free(b, (void **)&dg2);
    free(hg1), free(hg2);
    HX_TCALL(hx_gs_destroy(&g1));
    HX_TCALL(hx_gs_destroy(&g2));
    (void)size;
  }
  /* invalid ids on the last rank: every rank gets HX_ERR_ARG, none hangs */
  {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t ids[4] = {1, 2, 3, rank == size - 1 ? -5 : 4};
    hx_gs gs = NULL;
    int e = hx_gs_create(b, MPI_COMM_WORLD, 4, ids, &gs);
    HX_ASSERT(e == HX_ERR_ARG && gs == NULL, "negative id: create returned %d", e);
    if (rank == size - 1)
      HX_ASSERT(strstr(hx_error_message(), "negative global id -5") != NULL, "message: %s",
                hx_error_message());
    hx_error_clear();
    HX_ASSERT(hx_gs_destroy(&gs) == HX_SUCCESS && hx_gs_destroy(NULL) == HX_SUCCESS, "destroy NULL");
  }
  hx_backend_destroy(&cpu);
  hx_backend_destroy(&b);
  int f = hx_test_failures_, fall = 0;
  MPI_Allreduce(&f, &fall, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return fall ? 1 : 0;
}
