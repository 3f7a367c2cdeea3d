/* Cross-element FDM box solves for one value type and instruction set
 * (included by cpu/fdm_xelem_cpu.c once per instantiation, no include
 * guard): XT the scalar, XV the vector of XW lanes, XN(name) the
 * instantiation's names, XTARGET the target attribute's string, and XLOAD,
 * XSTORE (aligned), XMUL, XFMA, XADD, XINVPOS (1/d where d > 0, else 0).
 * Optional (else scalar loops): XTRANS(r) transposes XW vectors r[XW] as an
 * XW x XW matrix, with XLOADU, XSTOREU (unaligned) and XGATHER(x, idx)
 * (x[idx[0..XW)], 0 where idx < 0) for the interleaving of the boxes in
 * blocks of XW points. XPAIR (AVX-512): the XW = 16 lanes are two groups of
 * 8 of the grouped layout side by side (XPAIR_LOAD, XPAIR_GATHER,
 * XSTORE_OUT read and write the two halves), and the list kernels are not
 * instantiated.
 *
 * XW elements of the list run together, one per vector lane: the boxes,
 * their three 1D eigenvector matrices and eigenvalues are interleaved per
 * group ([point][lane]), so each of the six contractions is a plain
 * matrix-vector product per line of the box on whole vectors, with no
 * padding of the lines (the within-element kernel of fdm_avx2_t.h pads an
 * FP32 line of m = 10 to 16 lanes: 62 % of its arithmetic is useful). Per
 * line the m outputs accumulate in registers (m independent FMA chains) and each is
 * sum_{q < m} C(i, q) in[q] in increasing q with one rounding per term, as
 * hx_fdm_elem_solve sums, so the results agree with it to round-off, and
 * every lane's arithmetic is the same whatever XW is (the AVX2 and AVX-512
 * instantiations give the same bits). */

/* the unaligned result of the last contraction at point pt (the grouped
 * layout's output): XW lanes at out + pt XW by default */
#ifndef XSTORE_OUT
#define XSTORE_OUT(out, M, pt, v) XSTOREU((out) + (size_t)(pt)*XW, v)
#endif

/* out[p(i)] = sum_q C(i, q) in[p(q)] along the direction of point stride sd,
 * for every line (o1, o2) of the other two directions (strides s1, s2);
 * C(i, q) = C[(i ci + q cq) XW + lane]. L3 != NULL (the forward t
 * contraction): the result is scaled by 1 / (Lr[o1] + Ls[o2] + Lt[i]). */
XINL void XN(hx_fdm_xelem_contract_o)(const int M, const int sd, const int s1, const int s2,
                                      const XT *HX_RESTRICT C, const int ci, const int cq,
                                      const XT *HX_RESTRICT in, XT *HX_RESTRICT out, const XT *HX_RESTRICT L3,
                                      const int out_unaligned) {
  for (int o2 = 0; o2 < M; o2++)
    for (int o1 = 0; o1 < M; o1++) {
      const int base = o1 * s1 + o2 * s2;
      /* all m outputs of the line at once: m independent FMA chains (the
       * FMA latency hidden), each input loaded once */
      XV acc[HX_FDM_XELEM_MMAX];
      {
        const XV v = XLOAD(in + (size_t)base * XW);
        for (int i = 0; i < M; i++) acc[i] = XMUL(XLOAD(C + (size_t)(i * ci) * XW), v);
      }
      for (int q = 1; q < M; q++) {
        const XV v = XLOAD(in + (size_t)(base + q * sd) * XW);
        for (int i = 0; i < M; i++) acc[i] = XFMA(XLOAD(C + (size_t)(i * ci + q * cq) * XW), v, acc[i]);
      }
      if (L3) {
        const XV lrs = XADD(XLOAD(L3 + (size_t)o1 * XW), XLOAD(L3 + (size_t)(M + o2) * XW));
        for (int i = 0; i < M; i++) acc[i] = XMUL(acc[i], XINVPOS(XADD(lrs, XLOAD(L3 + (size_t)(2 * M + i) * XW))));
      }
      if (out_unaligned)
        for (int i = 0; i < M; i++) XSTORE_OUT(out, M, base + i * sd, acc[i]);
      else
        for (int i = 0; i < M; i++) XSTORE(out + (size_t)(base + i * sd) * XW, acc[i]);
    }
}

XINL void XN(hx_fdm_xelem_contract)(const int M, const int sd, const int s1, const int s2,
                                    const XT *HX_RESTRICT C, const int ci, const int cq,
                                    const XT *HX_RESTRICT in, XT *HX_RESTRICT out, const XT *HX_RESTRICT L3) {
  XN(hx_fdm_xelem_contract_o)(M, sd, s1, s2, C, ci, cq, in, out, L3, 0);
}

/* The six contractions of a group's boxes (interleaved S in Sl, L in Ll):
 * U in, X work, the result in out (U itself, or unaligned memory) */
XINL void XN(hx_fdm_xelem_six)(const int M, const XT *HX_RESTRICT Sl, const XT *HX_RESTRICT Ll, XT *U, XT *X,
                               XT *out, const int out_unaligned) {
  const int M2 = M * M;
  const XT *Sr = Sl, *Ss = Sl + (size_t)M2 * XW, *St = Sl + (size_t)2 * M2 * XW;
  /* forward: out[i] = sum_q S[i M + q] in[q] (ci = M, cq = 1); back:
   * out[i] = sum_q S[q M + i] in[q] (ci = 1, cq = M) */
  XN(hx_fdm_xelem_contract)(M, 1, M, M2, Sr, M, 1, U, X, NULL);
  XN(hx_fdm_xelem_contract)(M, M, 1, M2, Ss, M, 1, X, U, NULL);
  XN(hx_fdm_xelem_contract)(M, M2, 1, M, St, M, 1, U, X, Ll);
  XN(hx_fdm_xelem_contract)(M, M2, 1, M, St, 1, M, X, U, NULL);
  XN(hx_fdm_xelem_contract)(M, M, 1, M2, Ss, 1, M, U, X, NULL);
  XN(hx_fdm_xelem_contract_o)(M, 1, M, M2, Sr, 1, M, X, out, NULL, out_unaligned);
}

#ifndef XPAIR
/* One group of XW elements e[0..XW): interleave S, L and the input boxes
 * (u, or x[map] with 0 where map < 0), solve, de-interleave into w. U, X:
 * two interleaved boxes (M^3 XW), Sl: 3 M^2 XW, Ll: 3 M XW, all aligned. */
XINL void XN(hx_fdm_xelem_group)(const int M, const int64_t *HX_RESTRICT e, const XT *HX_RESTRICT S,
                                 const XT *HX_RESTRICT L, const XT *HX_RESTRICT u, const int32_t *HX_RESTRICT map,
                                 const XT *HX_RESTRICT x, XT *HX_RESTRICT w, XT *HX_RESTRICT U,
                                 XT *HX_RESTRICT X, XT *HX_RESTRICT Sl, XT *HX_RESTRICT Ll) {
  const int M2 = M * M, M3 = M2 * M;
  for (int l = 0; l < XW; l++) {
    const XT *HX_RESTRICT Se = S + e[l] * 3 * M2;
    for (int j = 0; j < 3 * M2; j++) Sl[(size_t)j * XW + l] = Se[j];
    const XT *HX_RESTRICT Le = L + e[l] * 3 * M;
    for (int j = 0; j < 3 * M; j++) Ll[(size_t)j * XW + l] = Le[j];
  }
  /* the boxes point by point: XW sequential input streams, U written in order */
  if (map) {
    const int32_t *me[XW];
    for (int l = 0; l < XW; l++) me[l] = map + e[l] * M3;
    int pt = 0;
#ifdef XTRANS
    /* blocks of XW points: one masked hardware gather per element, then
     * the XW x XW transpose into [point][lane] */
    for (; pt + XW <= M3; pt += XW) {
      XV r[XW];
      for (int l = 0; l < XW; l++) r[l] = XGATHER(x, me[l] + pt);
      XTRANS(r);
      for (int j = 0; j < XW; j++) XSTORE(U + (size_t)(pt + j) * XW, r[j]);
    }
#endif
    for (; pt < M3; pt++)
      for (int l = 0; l < XW; l++) {
        const int32_t g = me[l][pt];
        U[(size_t)pt * XW + l] = g >= 0 ? x[g] : (XT)0;
      }
  } else {
    const XT *ue[XW];
    for (int l = 0; l < XW; l++) ue[l] = u + e[l] * M3;
    int pt = 0;
#ifdef XTRANS
    for (; pt + XW <= M3; pt += XW) {
      XV r[XW];
      for (int l = 0; l < XW; l++) r[l] = XLOADU(ue[l] + pt);
      XTRANS(r);
      for (int j = 0; j < XW; j++) XSTORE(U + (size_t)(pt + j) * XW, r[j]);
    }
#endif
    for (; pt < M3; pt++)
      for (int l = 0; l < XW; l++) U[(size_t)pt * XW + l] = ue[l][pt];
  }
  XN(hx_fdm_xelem_six)(M, Sl, Ll, U, X, U, 0);
  XT *we[XW];
  for (int l = 0; l < XW; l++) we[l] = w + e[l] * M3;
  /* scalar de-interleave: 8 x 8 transposes here measured slower overall (docs/fdm.md) */
  for (int pt = 0; pt < M3; pt++)
    for (int l = 0; l < XW; l++) we[l][pt] = U[(size_t)pt * XW + l];
}

#endif

#ifdef XGATHER
/* Grouped layout (docs/fdm.md "Grouped layout"): the extended boxes of
 * group g are stored interleaved, [point][lane], at g M^3 8 of the map and
 * of w, the group's S and L at g 3 M^2 8 and g 3 M 8: the input box is
 * one gather per point, the output is written in place, and S, L are
 * copied as they are (no per-lane interleaving). With XPAIR the lanes are
 * groups g and g + 1 side by side: each load takes 8 entries of each. */
#ifdef XPAIR
#define XG_LOAD(p, stride) XPAIR_LOAD((p), (p) + (stride))
#define XG_GATHER(x, idx, stride) XPAIR_GATHER(x, (idx), (idx) + (stride))
#else
#define XG_LOAD(p, stride) XLOADU(p)
#define XG_GATHER(x, idx, stride) XGATHER(x, idx)
#endif
XINL void XN(hx_fdm_xelem_grouped_one)(const int M, const XT *HX_RESTRICT Sg, const XT *HX_RESTRICT Lg,
                                       const int32_t *HX_RESTRICT mapg, const XT *HX_RESTRICT x,
                                       XT *HX_RESTRICT wg, XT *HX_RESTRICT U, XT *HX_RESTRICT X,
                                       XT *HX_RESTRICT Sl, XT *HX_RESTRICT Ll) {
  const int M2 = M * M, M3 = M2 * M;
  for (int j = 0; j < 3 * M2; j++) XSTORE(Sl + (size_t)j * XW, XG_LOAD(Sg + (size_t)j * 8, (size_t)3 * M2 * 8));
  for (int j = 0; j < 3 * M; j++) XSTORE(Ll + (size_t)j * XW, XG_LOAD(Lg + (size_t)j * 8, (size_t)3 * M * 8));
  for (int pt = 0; pt < M3; pt++) XSTORE(U + (size_t)pt * XW, XG_GATHER(x, mapg + (size_t)pt * 8, (size_t)M3 * 8));
  XN(hx_fdm_xelem_six)(M, Sl, Ll, U, X, wg, 1);
}
#undef XG_LOAD
#undef XG_GATHER
#endif

#ifndef XPAIR
/* Prefetch the next group's S, L and input (map or boxes) into L2, one line
 * per 64 bytes, as the within-element kernels do for the next element. */
XINL void XN(hx_fdm_xelem_prefetch)(const int M, const int64_t *e, const XT *S, const XT *L, const XT *u,
                                    const int32_t *map) {
  const int64_t m3 = (int64_t)M * M * M;
  for (int l = 0; l < XW; l++) {
    const XT *s = S + e[l] * 3 * M * M;
    for (int i = 0; i < 3 * M * M; i += 64 / (int)sizeof(XT)) _mm_prefetch((const char *)(s + i), _MM_HINT_T1);
    _mm_prefetch((const char *)(L + e[l] * 3 * M), _MM_HINT_T1);
    if (map)
      for (int64_t i = 0; i < m3; i += 16) _mm_prefetch((const char *)(map + e[l] * m3 + i), _MM_HINT_T1);
    else
      for (int64_t i = 0; i < m3; i += 64 / (int)sizeof(XT))
        _mm_prefetch((const char *)(u + e[l] * m3 + i), _MM_HINT_T1);
  }
}

/* The loop over the complete groups of the list (nlist / XW of them; the
 * caller solves the rest). */
#define XLOOP(M)                                                                                              \
  __attribute__((target(XTARGET))) static void XN(hx_fdm_xelem_##M)(                                             \
      int32_t ngroups, const int32_t *list, const XT *S, const XT *L, const XT *u, XT *w, const int32_t *map, \
      const XT *x) {                                                                                          \
    _Pragma("omp parallel") {                                                                                 \
      __attribute__((aligned(64))) XT U[(M) * (M) * (M)*XW], X[(M) * (M) * (M)*XW];                          \
      __attribute__((aligned(64))) XT Sl[3 * (M) * (M)*XW], Ll[3 * (M)*XW];                                   \
      _Pragma("omp for schedule(dynamic, 1)") for (int32_t g = 0; g < ngroups; g++) {                         \
        int64_t e[XW], en[XW];                                                                                \
        for (int l = 0; l < XW; l++) e[l] = list ? list[g * XW + l] : (int64_t)g * XW + l;                    \
        if (g + 1 < ngroups) {                                                                                \
          for (int l = 0; l < XW; l++) en[l] = list ? list[(g + 1) * XW + l] : (int64_t)(g + 1) * XW + l;     \
          XN(hx_fdm_xelem_prefetch)((M), en, S, L, u, map);                                                   \
        }                                                                                                     \
        XN(hx_fdm_xelem_group)((M), e, S, L, u, map, x, w, U, X, Sl, Ll);                                     \
      }                                                                                                       \
    }                                                                                                         \
  }
XLOOP(4)
XLOOP(5)
XLOOP(6)
XLOOP(7)
XLOOP(8)
XLOOP(9)
XLOOP(10)
XLOOP(11)
XLOOP(12)
XLOOP(13)
#undef XLOOP

#endif

#ifdef XGATHER
/* groups [g0, g0 + ng) of the grouped layout, XW / 8 of them at a time
 * (with XPAIR the caller solves an odd last group) */
#define XLOOPG(M)                                                                                      \
  __attribute__((target(XTARGET))) static void XN(hx_fdm_xelem_grouped_##M)(                          \
      int32_t g0, int32_t ng, const XT *Sg, const XT *Lg, const int32_t *mapg, const XT *x, XT *wg) {   \
    _Pragma("omp parallel") {                                                                          \
      __attribute__((aligned(64))) XT U[(M) * (M) * (M)*XW], X[(M) * (M) * (M)*XW];                   \
      __attribute__((aligned(64))) XT Sl[3 * (M) * (M)*XW], Ll[3 * (M)*XW];                            \
      _Pragma("omp for schedule(dynamic, 1)") for (int32_t k = 0; k < ng / (XW / 8); k++) {            \
        const int32_t g = g0 + k * (XW / 8);                                                           \
        const size_t gs = (size_t)g * (M) * (M) * (M)*8;                                               \
        XN(hx_fdm_xelem_grouped_one)((M), Sg + (size_t)g * 3 * (M) * (M)*8, Lg + (size_t)g * 3 * (M)*8, \
                                     mapg + gs, x, wg + gs, U, X, Sl, Ll);                             \
      }                                                                                                \
    }                                                                                                  \
  }
XLOOPG(4)
XLOOPG(5)
XLOOPG(6)
XLOOPG(7)
XLOOPG(8)
XLOOPG(9)
XLOOPG(10)
XLOOPG(11)
XLOOPG(12)
XLOOPG(13)
#undef XLOOPG
typedef void (*XN(hx_fdm_xelem_grouped_fn))(int32_t, int32_t, const XT *, const XT *, const int32_t *, const XT *,
                                            XT *);
static const XN(hx_fdm_xelem_grouped_fn) XN(hx_fdm_xelem_grouped_table)[HX_FDM_XELEM_MMAX - 3] = {
    XN(hx_fdm_xelem_grouped_4),  XN(hx_fdm_xelem_grouped_5),  XN(hx_fdm_xelem_grouped_6),
    XN(hx_fdm_xelem_grouped_7),  XN(hx_fdm_xelem_grouped_8),  XN(hx_fdm_xelem_grouped_9),
    XN(hx_fdm_xelem_grouped_10), XN(hx_fdm_xelem_grouped_11), XN(hx_fdm_xelem_grouped_12),
    XN(hx_fdm_xelem_grouped_13)};
#endif

#ifndef XPAIR
typedef void (*XN(hx_fdm_xelem_fn))(int32_t, const int32_t *, const XT *, const XT *, const XT *, XT *,
                                    const int32_t *, const XT *);
static const XN(hx_fdm_xelem_fn) XN(hx_fdm_xelem_table)[HX_FDM_XELEM_MMAX - 3] = {
    XN(hx_fdm_xelem_4),  XN(hx_fdm_xelem_5),  XN(hx_fdm_xelem_6),  XN(hx_fdm_xelem_7),  XN(hx_fdm_xelem_8),
    XN(hx_fdm_xelem_9),  XN(hx_fdm_xelem_10), XN(hx_fdm_xelem_11), XN(hx_fdm_xelem_12), XN(hx_fdm_xelem_13)};
#endif

#undef XT
#undef XV
#undef XW
#undef XN
#undef XZERO
#undef XLOAD
#undef XSTORE
#undef XMUL
#undef XFMA
#undef XADD
#undef XINVPOS
#undef XTRANS
#undef XLOADU
#undef XSTOREU
#undef XGATHER
#undef XSTORE_OUT
#undef XTARGET
#undef XPAIR
#undef XPAIR_LOAD
#undef XPAIR_GATHER
