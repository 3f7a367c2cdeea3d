/* The hand-written AVX2+FMA FP32 element kernel for n = 4 (p = 3, the
 * p-multigrid's middle level), included once by ax_cpu.c after
 * ax_f32_avx2_8.h. The generic loop at n = 4 runs on 128-bit vectors (a row
 * is 4 floats); here one __m256 holds two rows (nodes i = 0..3 of rows j,
 * j+1 of plane k: vector v = 2k + j/2 of the element's 8), and each of the
 * six contractions is 4 multiply-adds per vector:
 *  - r (along the row): the row's entry m broadcast inside each 128-bit lane
 *    (vpermilps) times the lane table D[i][m];
 *  - s (across rows): row m of the plane broadcast to both lanes
 *    (vbroadcastf128) times the table D[j][m] of the vector's two rows;
 *  - t (across planes): the vector of plane m times the scalar D[k][m];
 * and the same with D^T for the transposed ones. Records: general, affine
 * and scaled affine, as the generic loop (same per-node float math, sums in another
 * order: within float round-off of it). */
#ifndef HX_AX_F32_AVX2_4_H
#define HX_AX_F32_AVX2_4_H

/* Tables (64-byte aligned, per thread): tr[m] lanes D[i][m], ts[h][m] lanes
 * D[2h + l/4][m], trt, tst the same of D^T, d[k*4+m] = D[k][m], dt = D^T. */
typedef struct {
  __attribute__((aligned(32))) float tr[4][8], ts[2][4][8], trt[4][8], tst[2][4][8], d[16], dt[16];
} hx_axf4_tab;

static void hx_axf4_tables(const float *D, hx_axf4_tab *t) {
  for (int m = 0; m < 4; m++)
    for (int l = 0; l < 8; l++) {
      t->tr[m][l] = D[(l % 4) * 4 + m];
      t->trt[m][l] = D[m * 4 + l % 4];
      for (int h = 0; h < 2; h++) {
        t->ts[h][m][l] = D[(2 * h + l / 4) * 4 + m];
        t->tst[h][m][l] = D[m * 4 + 2 * h + l / 4];
      }
    }
  for (int k = 0; k < 4; k++)
    for (int m = 0; m < 4; m++) t->d[k * 4 + m] = D[k * 4 + m], t->dt[k * 4 + m] = D[m * 4 + k];
}

/* in-lane broadcast of entry m of each 128-bit lane */
#define HX_AXF4_PERM(x, m) _mm256_permute_ps((x), (m) * 0x55)

HX_AXF_AVX2_FN void hx_axf_avx2_pre4_elem(const int gk, const int ncomp, const hx_axf4_tab *HX_RESTRICT tb,
                                          const float *HX_RESTRICT w3, const float *HX_RESTRICT geo,
                                          const float *HX_RESTRICT u, float *HX_RESTRICT out) {
  const int cs = 64 + HX_AX_PAD;
  __attribute__((aligned(32))) float fr[64], fs[64], ft[64];
  __m256 mc[7];
  if (gk != HX_AXK_GEN)
    for (int cc = 0; cc < 7; cc++) mc[cc] = _mm256_broadcast_ss(geo + cc);
  for (int v = 0; v < 8; v++) {
    const int k = v >> 1, h = v & 1;
    const __m256 uv = _mm256_loadu_ps(u + 8 * v);
    __m256 ur = _mm256_mul_ps(_mm256_load_ps(tb->tr[0]), HX_AXF4_PERM(uv, 0));
    __m256 us = _mm256_mul_ps(_mm256_load_ps(tb->ts[h][0]), _mm256_broadcast_ps((const __m128 *)(u + 16 * k)));
    __m256 ut = _mm256_mul_ps(_mm256_broadcast_ss(tb->d + 4 * k), _mm256_loadu_ps(u + 8 * h));
    /* m = 1..3 written out: the permute's control must be a literal */
#define HX_AXF4_G(m)                                                                                   \
  ur = _mm256_fmadd_ps(_mm256_load_ps(tb->tr[m]), HX_AXF4_PERM(uv, m), ur);                            \
  us = _mm256_fmadd_ps(_mm256_load_ps(tb->ts[h][m]), _mm256_broadcast_ps((const __m128 *)(u + 16 * k + 4 * (m))), \
                       us);                                                                            \
  ut = _mm256_fmadd_ps(_mm256_broadcast_ss(tb->d + 4 * k + (m)), _mm256_loadu_ps(u + 16 * (m) + 8 * h), ut);
    HX_AXF4_G(1)
    HX_AXF4_G(2)
    HX_AXF4_G(3)
#undef HX_AXF4_G
    __m256 g0, g1, g2, g3, g4, g5, gm = _mm256_setzero_ps();
    if (gk == HX_AXK_GEN) {
      const float *gq = geo + 8 * v;
      g0 = _mm256_loadu_ps(gq), g1 = _mm256_loadu_ps(gq + cs), g2 = _mm256_loadu_ps(gq + 2 * cs);
      g3 = _mm256_loadu_ps(gq + 3 * cs), g4 = _mm256_loadu_ps(gq + 4 * cs), g5 = _mm256_loadu_ps(gq + 5 * cs);
      if (ncomp == 7) gm = _mm256_loadu_ps(gq + 6 * cs);
    } else {
      /* AFF: g = w_q m; AFV: g = (w_q kappa_q) m, mass (w_q lambda_q) m_6
       * (hx_geo_scaled_node_f32's products) */
      const __m256 wv = _mm256_loadu_ps(w3 + 8 * v);
      const float *kq = geo + HX_AX_MEANS + 8 * v;
      const __m256 wk = gk == HX_AXK_AFV ? _mm256_mul_ps(wv, _mm256_loadu_ps(kq)) : wv;
      g0 = _mm256_mul_ps(wk, mc[0]), g1 = _mm256_mul_ps(wk, mc[1]), g2 = _mm256_mul_ps(wk, mc[2]);
      g3 = _mm256_mul_ps(wk, mc[3]), g4 = _mm256_mul_ps(wk, mc[4]), g5 = _mm256_mul_ps(wk, mc[5]);
      if (ncomp == 7)
        gm = _mm256_mul_ps(gk == HX_AXK_AFV ? _mm256_mul_ps(wv, _mm256_loadu_ps(kq + cs)) : wv, mc[6]);
    }
    _mm256_store_ps(fr + 8 * v, _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g0, ur), _mm256_mul_ps(g1, us)),
                                              _mm256_mul_ps(g2, ut)));
    _mm256_store_ps(fs + 8 * v, _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g1, ur), _mm256_mul_ps(g3, us)),
                                              _mm256_mul_ps(g4, ut)));
    _mm256_store_ps(ft + 8 * v, _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(g2, ur), _mm256_mul_ps(g4, us)),
                                              _mm256_mul_ps(g5, ut)));
    _mm256_storeu_ps(out + 8 * v, ncomp == 7 ? _mm256_mul_ps(gm, uv) : _mm256_setzero_ps());
  }
  for (int v = 0; v < 8; v++) {
    const int k = v >> 1, h = v & 1;
    const __m256 rv = _mm256_load_ps(fr + 8 * v);
    __m256 acc = _mm256_loadu_ps(out + 8 * v);
#define HX_AXF4_T(m)                                                                                   \
  acc = _mm256_fmadd_ps(_mm256_load_ps(tb->trt[m]), HX_AXF4_PERM(rv, m), acc);                         \
  acc = _mm256_fmadd_ps(_mm256_load_ps(tb->tst[h][m]), _mm256_broadcast_ps((const __m128 *)(fs + 16 * k + 4 * (m))), \
                        acc);                                                                          \
  acc = _mm256_fmadd_ps(_mm256_broadcast_ss(tb->dt + 4 * k + (m)), _mm256_load_ps(ft + 16 * (m) + 8 * h), acc);
    HX_AXF4_T(0)
    HX_AXF4_T(1)
    HX_AXF4_T(2)
    HX_AXF4_T(3)
#undef HX_AXF4_T
    _mm256_storeu_ps(out + 8 * v, acc);
  }
}
#undef HX_AXF4_PERM

/* software prefetch distance (elements) */
#define HX_AXF4_PF_DIST 2

HX_AX_AVX2_ATTR static void hx_ax_cpu_avx2_pre_4_f32(const hx_ax_cpu_args_f32 *a) {
  const size_t n3 = 64;
  const int chunk = HX_AX_CHUNK(4);
#pragma omp parallel
  {
    hx_axf4_tab tb;
    hx_axf4_tables(a->D, &tb);
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
      hx_axf_avx2_pre4_elem(HX_AXK_AFF, a->ncomp, &tb, a->w3, ge, UE, oe); \
    else if ((eo & 3) == HX_AXK_AFV)                                       \
      hx_axf_avx2_pre4_elem(HX_AXK_AFV, a->ncomp, &tb, a->w3, ge, UE, oe); \
    else                                                                   \
      hx_axf_avx2_pre4_elem(HX_AXK_GEN, a->ncomp, &tb, a->w3, ge, UE, oe); \
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

#endif
