/* The register-blocked AVX2+FMA FDM box solve of cpu/fdm_cpu.c for one
 * value type (included there once per instantiation, no include guard):
 * HX_T the scalar (double, float), HX_V the 256-bit vector, HX_VW its lanes
 * (4, 8), HX_AF(name) the instantiation's names, and the vector operations
 * HX_VZERO, HX_VLOAD (aligned), HX_VBCAST, HX_VFMA, HX_VSTORE (aligned),
 * HX_VSTOREN (first n lanes), HX_VADD, HX_VSET1, HX_VMUL, HX_VINVPOS (1/d
 * where d > 0, else 0). The double instantiation is the original code; the
 * float one is the same blocking on 8 lanes (r lines padded to 8). */

/* Store the first n (1..HX_VW) lanes of v at o. */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_store_n)(HX_T *o, HX_V v, const int n) { HX_VSTOREN(o, v, n); }

/* Lines l0 .. l0+LB-1: out[l ldo + 0..] = sum_{q<Q} in[l ldi + q] B[q P + 0..P).
 * nout: lanes stored per line (P, or M for the final unpadded output). */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_right_blk)(const int LB, const int P, const int Q, const int ldi,
                                          const int ldo, const int nout, const HX_T *HX_RESTRICT in,
                                          const HX_T *HX_RESTRICT B, HX_T *HX_RESTRICT out) {
  const int NA = P / HX_VW;
  HX_V c[8][5];
  for (int l = 0; l < LB; l++)
    for (int v = 0; v < NA; v++) c[l][v] = HX_VZERO();
  for (int q = 0; q < Q; q++) {
    HX_V b[5];
    for (int v = 0; v < NA; v++) b[v] = HX_VLOAD(B + q * P + HX_VW * v);
    for (int l = 0; l < LB; l++) {
      const HX_V x = HX_VBCAST(in + l * ldi + q);
      for (int v = 0; v < NA; v++) c[l][v] = HX_VFMA(x, b[v], c[l][v]);
    }
  }
  for (int l = 0; l < LB; l++)
    for (int v = 0; v < NA; v++) {
      const int n = nout - HX_VW * v;
      if (n > 0) HX_AF(hx_fdm_avx2_store_n)(out + l * ldo + HX_VW * v, c[l][v], n < HX_VW ? n : HX_VW);
    }
}

/* All M*M lines of a box. */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_right)(const int M, const int ldi, const int ldo, const int nout,
                                      const HX_T *HX_RESTRICT in, const HX_T *HX_RESTRICT B,
                                      HX_T *HX_RESTRICT out) {
  const int P = HX_FDM_PW(M), NA = P / HX_VW;
  const int LB = HX_FDM_LB(NA);
  const int nl = M * M, nfull = nl / LB * LB;
#pragma GCC unroll 1
  for (int l = 0; l < nfull; l += LB)
    HX_AF(hx_fdm_avx2_right_blk)(LB, P, M, ldi, ldo, nout, in + l * ldi, B, out + l * ldo);
  if (nl - nfull)
    HX_AF(hx_fdm_avx2_right_blk)(nl - nfull, P, M, ldi, ldo, nout, in + nfull * ldi, B, out + nfull * ldo);
}

/* Vector base offset of vector k of a padded box: slab = 1 walks the vectors
 * of the s direction (per t plane c: NA vectors per b line), slab = 0 the
 * flat vectors of the t direction. */


/* Rows i0 .. i0+RB-1 and vectors k0 .. k0+VB-1:
 * out[base_k + i rs] = sum_{q<M} A[i ai + q aq] in[base_k + q rs], times
 * the inverse diagonal for the forward t contraction (diag: Lr padded to P,
 * Ls, Lt). */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_left_blk)(const int M, const int slab, const int RB, const int VB,
                                         const int rs, const int ai, const int aq, const int i0, const int k0,
                                         const HX_T *HX_RESTRICT A, const HX_T *HX_RESTRICT in,
                                         HX_T *HX_RESTRICT out, const int diag,
                                         const HX_T *HX_RESTRICT Lr, const HX_T *HX_RESTRICT Ls,
                                         const HX_T *HX_RESTRICT Lt) {
  const int P = HX_FDM_PW(M), NA = P / HX_VW;
  int base[4];
  for (int v = 0; v < VB; v++) base[v] = HX_FDM_VBASE_W(slab, k0 + v, NA, M, P);
  HX_V c[6][4];
  for (int r = 0; r < RB; r++)
    for (int v = 0; v < VB; v++) c[r][v] = HX_VZERO();
  const HX_T *HX_RESTRICT Ai = A + i0 * ai;
  for (int q = 0; q < M; q++) {
    HX_V b[4];
    for (int v = 0; v < VB; v++) b[v] = HX_VLOAD(in + base[v] + q * rs);
    for (int r = 0; r < RB; r++) {
      const HX_V a = HX_VBCAST(Ai + r * ai + q * aq);
      for (int v = 0; v < VB; v++) c[r][v] = HX_VFMA(a, b[v], c[r][v]);
    }
  }
  for (int r = 0; r < RB; r++)
    for (int v = 0; v < VB; v++) {
      HX_V y = c[r][v];
      if (diag) {
        const int bb = base[v] / P, a0 = base[v] % P;
        const HX_V d = HX_VADD(HX_VLOAD(Lr + a0), HX_VSET1(Ls[bb] + Lt[i0 + r]));
        const HX_V inv = HX_VINVPOS(d);
        y = HX_VMUL(y, inv);
      }
      HX_VSTORE(out + base[v] + (i0 + r) * rs, y);
    }
}

/* A whole left contraction: M rows, M*NA vectors. */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_left)(const int M, const int slab, const int rs, const int ai, const int aq,
                                     const HX_T *HX_RESTRICT A, const HX_T *HX_RESTRICT in,
                                     HX_T *HX_RESTRICT out, const int diag, const HX_T *HX_RESTRICT Lr,
                                     const HX_T *HX_RESTRICT Ls, const HX_T *HX_RESTRICT Lt) {
  const int P = HX_FDM_PW(M), NV = M * (P / HX_VW);
  const int RB = HX_FDM_RB(M), VB = HX_FDM_VB(M);
  const int rfull = M / RB * RB, vfull = NV / VB * VB;
#pragma GCC unroll 1
  for (int k = 0; k < vfull; k += VB) {
#pragma GCC unroll 1
    for (int i = 0; i < rfull; i += RB)
      HX_AF(hx_fdm_avx2_left_blk)(M, slab, RB, VB, rs, ai, aq, i, k, A, in, out, diag, Lr, Ls, Lt);
    if (M - rfull)
      HX_AF(hx_fdm_avx2_left_blk)(M, slab, M - rfull, VB, rs, ai, aq, rfull, k, A, in, out, diag, Lr, Ls, Lt);
  }
  if (NV - vfull) {
#pragma GCC unroll 1
    for (int i = 0; i < rfull; i += RB)
      HX_AF(hx_fdm_avx2_left_blk)(M, slab, RB, NV - vfull, rs, ai, aq, i, vfull, A, in, out, diag, Lr, Ls, Lt);
    if (M - rfull)
      HX_AF(hx_fdm_avx2_left_blk)(M, slab, M - rfull, NV - vfull, rs, ai, aq, rfull, vfull, A, in, out, diag, Lr, Ls,
                           Lt);
  }
}

/* Per-thread work space of the AVX2 solve (aligned; P*M*M HX_Ts per box). */
typedef struct {
  HX_T *X, *Y;   /* two padded boxes */
  HX_T *BT, *BR; /* M x P: S_r^T and S_r, padded with zero columns */
  HX_T *Lr;      /* P: L_r, padded with 1 */
  HX_T *U;       /* M^3: the gathered input box (fused scatter) */
} HX_AF(hx_fdm_avx2_ws);

/* One element: w = A_box^{-1} u. u: the unpadded input box, or NULL to
 * gather it as x[map[pt]] (0 where map < 0) into ws->U first. */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_elem)(const int M, const HX_T *HX_RESTRICT S3, const HX_T *HX_RESTRICT L3,
                                     const HX_T *HX_RESTRICT u, const int32_t *HX_RESTRICT map,
                                     const HX_T *HX_RESTRICT x, HX_T *HX_RESTRICT w,
                                     const HX_AF(hx_fdm_avx2_ws) *ws) {
  const int P = HX_FDM_PW(M), M2 = M * M;
  const HX_T *HX_RESTRICT Sr = S3, *HX_RESTRICT Ss = S3 + M2, *HX_RESTRICT St = S3 + 2 * M2;
  HX_T *HX_RESTRICT X = ws->X, *HX_RESTRICT Y = ws->Y, *HX_RESTRICT BT = ws->BT, *HX_RESTRICT BR = ws->BR;
  HX_T *HX_RESTRICT Lr = ws->Lr;
  for (int q = 0; q < M; q++)
    for (int i = 0; i < P; i++) {
      BT[q * P + i] = i < M ? Sr[i * M + q] : 0.0;
      BR[q * P + i] = i < M ? Sr[q * M + i] : 0.0;
    }
  for (int i = 0; i < P; i++) Lr[i] = i < M ? L3[i] : 1.0;
  if (!u) {
    HX_T *HX_RESTRICT U = ws->U;
    for (int pt = 0; pt < M2 * M; pt++) {
      const int32_t g = map[pt];
      U[pt] = g >= 0 ? x[g] : 0.0;
    }
    u = U;
  }
  /* forward r, s, t (with the scaling), back t, s, r */
  HX_AF(hx_fdm_avx2_right)(M, M, P, P, u, BT, X);
  HX_AF(hx_fdm_avx2_left)(M, 1, P, M, 1, Ss, X, Y, 0, Lr, L3 + M, L3 + 2 * M);
  HX_AF(hx_fdm_avx2_left)(M, 0, M * P, M, 1, St, Y, X, 1, Lr, L3 + M, L3 + 2 * M);
  HX_AF(hx_fdm_avx2_left)(M, 0, M * P, 1, M, St, X, Y, 0, Lr, L3 + M, L3 + 2 * M);
  HX_AF(hx_fdm_avx2_left)(M, 1, P, 1, M, Ss, Y, X, 0, Lr, L3 + M, L3 + 2 * M);
  HX_AF(hx_fdm_avx2_right)(M, P, M, M, X, BR, w);
}

/* Prefetch the operator data and the input (box, or map) of element en
 * into L2, one line per 8 HX_Ts (16 ints), as the operator kernel does. */
HX_FDM_AVX2_FN void HX_AF(hx_fdm_avx2_prefetch)(const int M, const int64_t en, const HX_T *S, const HX_T *L,
                                         const HX_T *u, const int32_t *map) {
  const int64_t m3 = (int64_t)M * M * M;
  const HX_T *s = S + en * 3 * M * M;
  for (int i = 0; i < 3 * M * M; i += 64 / (int)sizeof(HX_T)) _mm_prefetch((const char *)(s + i), _MM_HINT_T1);
  _mm_prefetch((const char *)(L + en * 3 * M), _MM_HINT_T1);
  if (map)
    for (int64_t i = 0; i < m3; i += 16) _mm_prefetch((const char *)(map + en * m3 + i), _MM_HINT_T1);
  else
    for (int64_t i = 0; i < m3; i += 64 / (int)sizeof(HX_T)) _mm_prefetch((const char *)(u + en * m3 + i), _MM_HINT_T1);
}

#define HX_AF_LOOP(M, NAME)                                                                             \
  __attribute__((target("avx2,fma"))) static void NAME(                                  \
      int32_t nlist, const int32_t *list, const HX_T *S, const HX_T *L, const HX_T *u, HX_T *w, \
      const int32_t *map, const HX_T *x) {                                                            \
    const int64_t m3 = (int64_t)(M) * (M) * (M);                                                        \
    _Pragma("omp parallel") {                                                                           \
      __attribute__((aligned(64))) HX_T X[HX_FDM_PW(M) * (M) * (M)], Y[HX_FDM_PW(M) * (M) * (M)];       \
      __attribute__((aligned(64))) HX_T BT[(M)*HX_FDM_PW(M)], BR[(M)*HX_FDM_PW(M)], Lr[HX_FDM_PW(M)];    \
      __attribute__((aligned(64))) HX_T U[(M) * (M) * (M)];                                           \
      const HX_AF(hx_fdm_avx2_ws) ws = {X, Y, BT, BR, Lr, U};                                                  \
      _Pragma("omp for schedule(dynamic, 4)") for (int32_t k = 0; k < nlist; k++) {                     \
        const int64_t e = list ? list[k] : k;                                                           \
        if (k + 1 < nlist) HX_AF(hx_fdm_avx2_prefetch)((M), list ? list[k + 1] : k + 1, S, L, u, map);         \
        HX_AF(hx_fdm_avx2_elem)((M), S + e * 3 * (M) * (M), L + e * 3 * (M), map ? NULL : u + e * m3,          \
                         map ? map + e * m3 : NULL, x, w + e * m3, &ws);                                \
      }                                                                                                 \
    }                                                                                                   \
  }

HX_AF_LOOP(4, HX_AF(hx_fdm_cpu_avx2_4))
HX_AF_LOOP(5, HX_AF(hx_fdm_cpu_avx2_5))
HX_AF_LOOP(6, HX_AF(hx_fdm_cpu_avx2_6))
HX_AF_LOOP(7, HX_AF(hx_fdm_cpu_avx2_7))
HX_AF_LOOP(8, HX_AF(hx_fdm_cpu_avx2_8))
HX_AF_LOOP(9, HX_AF(hx_fdm_cpu_avx2_9))
HX_AF_LOOP(10, HX_AF(hx_fdm_cpu_avx2_10))
HX_AF_LOOP(11, HX_AF(hx_fdm_cpu_avx2_11))
HX_AF_LOOP(12, HX_AF(hx_fdm_cpu_avx2_12))
HX_AF_LOOP(13, HX_AF(hx_fdm_cpu_avx2_13))
HX_AF_LOOP(14, HX_AF(hx_fdm_cpu_avx2_14))
HX_AF_LOOP(15, HX_AF(hx_fdm_cpu_avx2_15))
HX_AF_LOOP(16, HX_AF(hx_fdm_cpu_avx2_16))
HX_AF_LOOP(17, HX_AF(hx_fdm_cpu_avx2_17))
HX_AF_LOOP(18, HX_AF(hx_fdm_cpu_avx2_18))
#undef HX_AF_LOOP

/* the template's parameters, undefined so that the next instantiation can
 * define them again */
#undef HX_T
#undef HX_V
#undef HX_VW
#undef HX_AF
#undef HX_VZERO
#undef HX_VLOAD
#undef HX_VBCAST
#undef HX_VFMA
#undef HX_VSTORE
#undef HX_VADD
#undef HX_VSET1
#undef HX_VMUL
#undef HX_VINVPOS
#undef HX_VSTOREN
