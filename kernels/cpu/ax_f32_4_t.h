/* The hand-written FP32 element kernel for n = 4 (p = 3, the p-multigrid's
 * middle level and Kershaw p = 3's fine level), written once for a vector
 * width and included by ax_cpu.c twice (no include guard): AVX2+FMA (Q4W 8
 * lanes, two rows of a plane per vector) and AVX-512 (16 lanes, a whole
 * plane). Q4V the vector type, Q4N(name) the instantiation's names, Q4KERNEL
 * the name of its loop over the elements, Q4FN
 * and Q4ATTR its attributes, Q4LOAD, Q4LOADU, Q4STORE, Q4STOREU, Q4MUL,
 * Q4ADD, Q4FMA, Q4ZERO, Q4BCAST1 (a float from memory in every lane),
 * Q4BCAST4 (4 floats from memory in every 128-bit lane) and Q4PERM(x, m)
 * (entry m of each 128-bit lane in all of it). The generic loop at n = 4
 * runs on 128-bit vectors (a row is 4 floats); here a vector holds Q4R =
 * Q4W / 4 rows (nodes i = 0..3 of rows j..j+Q4R-1 of plane k: vector v =
 * (4 / Q4R) k + j / Q4R of the element's 64 / Q4W), and each of the six
 * contractions is 4 multiply-adds per vector:
 *  - r (along the row): the row's entry m broadcast inside each 128-bit lane
 *    (vpermilps) times the lane table D[i][m];
 *  - s (across rows): row m of the plane broadcast to both lanes
 *    (vbroadcastf128) times the table D[j][m] of the vector's two rows;
 *  - t (across planes): the vector of plane m times the scalar D[k][m];
 * and the same with D^T for the transposed ones. Every lane does the same
 * operations in both widths, so the two instantiations give the same bits.
 * Records: general, affine and scaled affine, as the generic loop (same
 * per-node float math, sums in another order: within float round-off of
 * it). */
#define Q4R (Q4W / 4)
#define Q4H (4 / Q4R) /* vectors per plane */

/* Tables (64-byte aligned, per thread): tr[m] lanes D[i][m], ts[h][m] lanes
 * D[Q4R h + l/4][m], trt, tst the same of D^T, d[k*4+m] = D[k][m], dt = D^T. */
typedef struct {
  __attribute__((aligned(64))) float tr[4][Q4W], ts[Q4H][4][Q4W], trt[4][Q4W], tst[Q4H][4][Q4W], d[16], dt[16];
} Q4N(hx_axf4_tab);

static void Q4N(hx_axf4_tables)(const float *D, Q4N(hx_axf4_tab) * t) {
  for (int m = 0; m < 4; m++)
    for (int l = 0; l < Q4W; l++) {
      t->tr[m][l] = D[(l % 4) * 4 + m];
      t->trt[m][l] = D[m * 4 + l % 4];
      for (int h = 0; h < Q4H; h++) {
        t->ts[h][m][l] = D[(Q4R * h + l / 4) * 4 + m];
        t->tst[h][m][l] = D[m * 4 + Q4R * h + l / 4];
      }
    }
  for (int k = 0; k < 4; k++)
    for (int m = 0; m < 4; m++) t->d[k * 4 + m] = D[k * 4 + m], t->dt[k * 4 + m] = D[m * 4 + k];
}

Q4FN void Q4N(hx_axf_pre4_elem)(const int gk, const int ncomp, const Q4N(hx_axf4_tab) *HX_RESTRICT tb,
                                          const float *HX_RESTRICT w3, const float *HX_RESTRICT geo,
                                          const float *HX_RESTRICT u, float *HX_RESTRICT out) {
  const int cs = 64 + HX_AX_PAD;
  __attribute__((aligned(64))) float fr[64], fs[64], ft[64];
  Q4V mc[7];
  if (gk != HX_AXK_GEN)
    for (int cc = 0; cc < 7; cc++) mc[cc] = Q4BCAST1(geo + cc);
  for (int v = 0; v < 64 / Q4W; v++) {
    const int k = v / Q4H, h = v % Q4H;
    const Q4V uv = Q4LOADU(u + Q4W * v);
    Q4V ur = Q4MUL(Q4LOAD(tb->tr[0]), Q4PERM(uv, 0));
    Q4V us = Q4MUL(Q4LOAD(tb->ts[h][0]), Q4BCAST4(u + 16 * k));
    Q4V ut = Q4MUL(Q4BCAST1(tb->d + 4 * k), Q4LOADU(u + Q4W * h));
    /* m = 1..3 written out: the permute's control must be a literal */
#define HX_AXF4_G(m)                                                                    \
  ur = Q4FMA(Q4LOAD(tb->tr[m]), Q4PERM(uv, m), ur);                                     \
  us = Q4FMA(Q4LOAD(tb->ts[h][m]), Q4BCAST4(u + 16 * k + 4 * (m)), us);                 \
  ut = Q4FMA(Q4BCAST1(tb->d + 4 * k + (m)), Q4LOADU(u + 16 * (m) + Q4W * h), ut);
    HX_AXF4_G(1)
    HX_AXF4_G(2)
    HX_AXF4_G(3)
#undef HX_AXF4_G
    Q4V g0, g1, g2, g3, g4, g5, gm = Q4ZERO();
    if (gk == HX_AXK_GEN) {
      const float *gq = geo + Q4W * v;
      g0 = Q4LOADU(gq), g1 = Q4LOADU(gq + cs), g2 = Q4LOADU(gq + 2 * cs);
      g3 = Q4LOADU(gq + 3 * cs), g4 = Q4LOADU(gq + 4 * cs), g5 = Q4LOADU(gq + 5 * cs);
      if (ncomp == 7) gm = Q4LOADU(gq + 6 * cs);
    } else {
      /* AFF: g = w_q m; AFV: g = (w_q kappa_q) m, mass (w_q lambda_q) m_6
       * (hx_geo_scaled_node_f32's products) */
      const Q4V wv = Q4LOADU(w3 + Q4W * v);
      const float *kq = geo + HX_AX_MEANS + Q4W * v;
      const Q4V wk = gk == HX_AXK_AFV ? Q4MUL(wv, Q4LOADU(kq)) : wv;
      g0 = Q4MUL(wk, mc[0]), g1 = Q4MUL(wk, mc[1]), g2 = Q4MUL(wk, mc[2]);
      g3 = Q4MUL(wk, mc[3]), g4 = Q4MUL(wk, mc[4]), g5 = Q4MUL(wk, mc[5]);
      if (ncomp == 7) gm = Q4MUL(gk == HX_AXK_AFV ? Q4MUL(wv, Q4LOADU(kq + cs)) : wv, mc[6]);
    }
    Q4STORE(fr + Q4W * v, Q4ADD(Q4ADD(Q4MUL(g0, ur), Q4MUL(g1, us)), Q4MUL(g2, ut)));
    Q4STORE(fs + Q4W * v, Q4ADD(Q4ADD(Q4MUL(g1, ur), Q4MUL(g3, us)), Q4MUL(g4, ut)));
    Q4STORE(ft + Q4W * v, Q4ADD(Q4ADD(Q4MUL(g2, ur), Q4MUL(g4, us)), Q4MUL(g5, ut)));
    Q4STOREU(out + Q4W * v, ncomp == 7 ? Q4MUL(gm, uv) : Q4ZERO());
  }
  for (int v = 0; v < 64 / Q4W; v++) {
    const int k = v / Q4H, h = v % Q4H;
    const Q4V rv = Q4LOAD(fr + Q4W * v);
    Q4V acc = Q4LOADU(out + Q4W * v);
#define HX_AXF4_T(m)                                                                    \
  acc = Q4FMA(Q4LOAD(tb->trt[m]), Q4PERM(rv, m), acc);                                  \
  acc = Q4FMA(Q4LOAD(tb->tst[h][m]), Q4BCAST4(fs + 16 * k + 4 * (m)), acc);             \
  acc = Q4FMA(Q4BCAST1(tb->dt + 4 * k + (m)), Q4LOAD(ft + 16 * (m) + Q4W * h), acc);
    HX_AXF4_T(0)
    HX_AXF4_T(1)
    HX_AXF4_T(2)
    HX_AXF4_T(3)
#undef HX_AXF4_T
    Q4STOREU(out + Q4W * v, acc);
  }
}

/* software prefetch distance (elements) */
#define HX_AXF4_PF_DIST 2

Q4ATTR static void Q4KERNEL(const hx_ax_cpu_args_f32 *a) {
  const size_t n3 = 64;
  const int chunk = HX_AX_CHUNK(4);
#pragma omp parallel
  {
    Q4N(hx_axf4_tab) tb;
    Q4N(hx_axf4_tables)(a->D, &tb);
    __attribute__((aligned(32))) float ub[64];
#pragma omp for schedule(dynamic, chunk)
    for (int32_t k = 0; k < a->nlist; k++) {
      const size_t e = (size_t)(a->list ? a->list[k] : k);
      const int64_t eo = a->eoff[e];
      const float *ge = a->geo + (eo >> 2);
      float *oe = a->out + n3 * e;
      if (k + HX_AXF4_PF_DIST < a->nlist) { /* the record and input of a later element, into L2 */
        const size_t en = (size_t)(a->list ? a->list[k + HX_AXF4_PF_DIST] : k + HX_AXF4_PF_DIST);
        const int64_t eon = a->eoff[en];
        const char *pg = (const char *)(a->geo + (eon >> 2));
        const int nb = (eon & 3) == HX_AXK_AFF ? 1
                       : (eon & 3) == HX_AXK_AFV
                           ? (HX_AX_MEANS + (a->ncomp == 7 ? 2 : 1) * (64 + HX_AX_PAD)) * 4 / 64
                           : a->ncomp * (64 + HX_AX_PAD) * 4 / 64;
        for (int l = 0; l < nb; l++) _mm_prefetch(pg + 64 * l, HX_AXF_PF_HINT);
        const char *pu = a->map ? (const char *)(a->map + n3 * en) : (const char *)(a->u + n3 * en);
        for (int l = 0; l < 4; l++) _mm_prefetch(pu + 64 * l, HX_AXF_PF_HINT);
      }
#define HX_AXF4_ELEM(UE)                                                   \
  do {                                                                     \
    if ((eo & 3) == HX_AXK_AFF)                                            \
      Q4N(hx_axf_pre4_elem)(HX_AXK_AFF, a->ncomp, &tb, a->w3, ge, UE, oe); \
    else if ((eo & 3) == HX_AXK_AFV)                                       \
      Q4N(hx_axf_pre4_elem)(HX_AXK_AFV, a->ncomp, &tb, a->w3, ge, UE, oe); \
    else                                                                   \
      Q4N(hx_axf_pre4_elem)(HX_AXK_GEN, a->ncomp, &tb, a->w3, ge, UE, oe); \
    if (a->part) a->part[k] = hx_ax_cpu_dot_f32((int)n3, UE, oe);          \
  } while (0)
      if (a->map) {
        const float *ue = hx_ax_cpu_u_f32(n3, a, e, ub);
        HX_AXF4_ELEM(ue);
      } else {
        HX_AXF4_ELEM(a->u + n3 * e);
      }
#undef HX_AXF4_ELEM
    }
  }
}

#undef HX_AXF4_PF_DIST
#undef Q4R
#undef Q4H
#undef Q4V
#undef Q4W
#undef Q4N
#undef Q4KERNEL
#undef Q4FN
#undef Q4ATTR
#undef Q4LOAD
#undef Q4LOADU
#undef Q4STORE
#undef Q4STOREU
#undef Q4MUL
#undef Q4ADD
#undef Q4FMA
#undef Q4ZERO
#undef Q4BCAST1
#undef Q4BCAST4
#undef Q4PERM
