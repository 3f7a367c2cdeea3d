/* The cross-element FP64 operator for one vector width (included by
 * cpu/ax_xelem_cpu.c once per instantiation, no include guard): XV the
 * vector of XW doubles, XN(name) the instantiation's names, XINL and
 * XTARGET its inline and target attributes, XADD, XSUB, XMUL, XFMA, XZERO,
 * XSET1 (a scalar in every lane), XBCAST (the same from memory), XLOADU,
 * XSTOREU, XLOADT(p, q, v) (XW consecutive doubles at p[l] + q of the XW
 * elements l, transposed: v[j] lane l = p[l][q + j]) and XSTORET(v, p, q)
 * (its inverse). Every lane computes
 * the same operations whatever XW is, so the AVX2 (4 lanes) and AVX-512
 * (8 lanes) instantiations give the same bits. The method: ax_xelem_cpu.c. */

/* Even-odd tables of an n x n matrix A with A[n-1-i][n-1-m] = -A[i][m]
 * (D and D^T on GLL points, up to round-off), h = n/2, broadcast: pe[i*h + m]
 * = (A[i][m] + A[i][n-1-m]) / 2, po = (A[i][m] - A[i][n-1-m]) / 2 (i, m < h),
 * then for odd n the middle column ac[i] = A[i][h] and row am[m] = A[h][m]. */
XINL void XN(hx_xe_eo_table)(const int n, const double *D, const int trans, XV *T) {
  const int h = n / 2;
#define HX_XE_A(i, m) (trans ? D[(m) * n + (i)] : D[(i) * n + (m)])
  for (int i = 0; i < h; i++)
    for (int m = 0; m < h; m++) {
      T[i * h + m] = XSET1(0.5 * (HX_XE_A(i, m) + HX_XE_A(i, n - 1 - m)));
      T[h * h + i * h + m] = XSET1(0.5 * (HX_XE_A(i, m) - HX_XE_A(i, n - 1 - m)));
    }
  if (n & 1)
    for (int i = 0; i < h; i++) {
      T[2 * h * h + i] = XSET1(HX_XE_A(i, h));
      T[2 * h * h + h + i] = XSET1(HX_XE_A(h, i));
    }
#undef HX_XE_A
}

/* y[i*sy] (+)= sum_m A[i][m] x[m*sx], i < n: one line of the element along
 * a direction, XW elements per vector, by the even-odd split (T from
 * XN(hx_xe_eo_table)): with E_m = x_m + x_{n-1-m}, O_m = x_m - x_{n-1-m},
 * P_i = sum pe E + ac x_h, Q_i = sum po O: y_i = P_i + Q_i, y_{n-1-i} = Q_i - P_i,
 * and for odd n y_h = sum am O (A[h][h] = 0): half the multiply-adds. */
XINL void XN(hx_xe_line)(const int n, const XV *HX_RESTRICT T, const XV *HX_RESTRICT x, const int sx,
                             XV *HX_RESTRICT y, const int sy, const int acc) {
  const int h = n / 2;
  const XV *pe = T, *po = T + h * h, *ac = T + 2 * h * h, *am = ac + h;
  XV E[HX_AX_NMAX / 2], O[HX_AX_NMAX / 2], xh = XZERO();
  for (int m = 0; m < h; m++) {
    const XV a = x[m * sx], b = x[(n - 1 - m) * sx];
    E[m] = XADD(a, b), O[m] = XSUB(a, b);
  }
  if (n & 1) xh = x[h * sx];
  for (int i = 0; i < h; i++) {
    XV P = XMUL(pe[i * h], E[0]), Q = XMUL(po[i * h], O[0]);
    for (int m = 1; m < h; m++) {
      P = XFMA(pe[i * h + m], E[m], P);
      Q = XFMA(po[i * h + m], O[m], Q);
    }
    if (n & 1) P = XFMA(ac[i], xh, P);
    XV lo = XADD(P, Q), hi = XSUB(Q, P);
    if (acc) lo = XADD(y[i * sy], lo), hi = XADD(y[(n - 1 - i) * sy], hi);
    y[i * sy] = lo, y[(n - 1 - i) * sy] = hi;
  }
  if (n & 1) {
    XV s = XMUL(am[0], O[0]);
    for (int m = 1; m < h; m++) s = XFMA(am[m], O[m], s);
    y[h * sy] = acc ? XADD(y[h * sy], s) : s;
  }
}

/* Expand an affine or split record into a general one (g[c*cs + q], the
 * c < ncomp factors) with the same per-node functions as the one-element
 * kernel, so the result is the same as for a group of that kind. */
XINL void XN(hx_xe_expand)(const int n3, const int kind, const int ncomp, const double *HX_RESTRICT rec,
                               const double *HX_RESTRICT w3, double *HX_RESTRICT g) {
  const int cs = n3 + HX_AX_PAD;
  for (int q = 0; q < n3; q++) {
    double gq[6], mm;
    if (kind == HX_AXK_AFF)
      hx_geo_affine_node(rec, w3[q], ncomp, gq, &mm);
    else
      hx_geo_split_node(rec, (const float *)(rec + HX_AX_MEANS) + q, hx_ax_cs32(n3), w3[q], ncomp, gq, &mm);
    for (int c = 0; c < 6; c++) g[c * cs + q] = gq[c];
    g[6 * cs + q] = mm;
  }
}

/* One group of XW elements (positions pk[l], elements e[l]); nv lanes valid
 * for the partials. Scratch: U, R, S, T, O of n34 = n^3 rounded up to XW
 * vectors (the tails stay 0), xg XW general records for expanded lanes. */
XINL void XN(hx_xe_group)(const int n, const hx_xe_args *a, const XV *HX_RESTRICT Dv,
                              const XV *HX_RESTRICT Dtv, const int32_t *pk, const size_t *e, const int nv,
                              XV *HX_RESTRICT U, XV *HX_RESTRICT R, XV *HX_RESTRICT S, XV *HX_RESTRICT T,
                              XV *HX_RESTRICT O, double *HX_RESTRICT xg, const size_t *en) {
  const int n2 = n * n, n3 = n2 * n, n34 = (n3 + XW - 1) & ~(XW - 1), cs = n3 + HX_AX_PAD, ncomp = a->ncomp;
  const int nb = n3 & ~(XW - 1); /* nodes in full blocks of XW */
  double *HX_RESTRICT Ud = (double *)U;
  /* 1. gather */
  if (a->map) {
    const double *HX_RESTRICT u = a->u;
    for (int l = 0; l < XW; l++) {
      const int32_t *HX_RESTRICT mp = a->map + (size_t)n3 * e[l];
      for (int q = 0; q < n3; q++) Ud[XW * q + l] = mp[q] >= 0 ? u[mp[q]] : 0.0;
    }
  } else {
    const double *ue[XW];
    for (int l = 0; l < XW; l++) ue[l] = a->u + n3 * e[l];
    for (int q = 0; q < nb; q += XW) XLOADT(ue, q, U + q);
    for (int q = nb; q < n3; q++)
      for (int l = 0; l < XW; l++) Ud[XW * q + l] = ue[l][q];
  }
  /* software prefetch of the next group (en[l], HX_XE_PF_DIST groups
   * ahead) into L2: u or its map now, the general records in the flux loop */
  const double *gn[XW];
  for (int l = 0; l < XW; l++) {
    const int64_t eo = a->eoff[en[l]];
    gn[l] = (eo & 3) == HX_AXK_GEN ? a->geo + (eo >> 2) : NULL;
    if (a->map) {
      for (int q = 0; q < n3; q += 16) _mm_prefetch((const char *)(a->map + (size_t)n3 * en[l] + q), HX_XE_PF_HINT);
    } else {
      for (int q = 0; q < n3; q += 8) _mm_prefetch((const char *)(a->u + (size_t)n3 * en[l] + q), HX_XE_PF_HINT);
    }
  }
  /* 2. gradients */
  for (int ij = 0; ij < n2; ij++) XN(hx_xe_line)(n, Dv, U + ij, n2, T + ij, n2, 0);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++) XN(hx_xe_line)(n, Dv, U + i + n2 * k, n, S + i + n2 * k, n, 0);
  for (int jk = 0; jk < n2; jk++) XN(hx_xe_line)(n, Dv, U + n * jk, 1, R + n * jk, 1, 0);
  /* 3. fluxes and mass term */
  int kind[XW], allaff = 1;
  const double *rec[XW];
  for (int l = 0; l < XW; l++) {
    const int64_t eo = a->eoff[e[l]];
    kind[l] = (int)(eo & 3);
    rec[l] = a->geo + (eo >> 2);
    allaff &= kind[l] == HX_AXK_AFF;
  }
  if (allaff) {
    XV M[7];
    for (int c = 0; c < 7; c++) {
      double mc[XW];
      for (int l = 0; l < XW; l++) mc[l] = rec[l][c];
      M[c] = XLOADU(mc);
    }
    for (int q = 0; q < n34; q++) {
      const XV wq = XBCAST(a->w3 + (q < n3 ? q : 0));
      const XV g0 = XMUL(wq, M[0]), g1 = XMUL(wq, M[1]), g2 = XMUL(wq, M[2]);
      const XV g3 = XMUL(wq, M[3]), g4 = XMUL(wq, M[4]), g5 = XMUL(wq, M[5]);
      const XV ur = R[q], us = S[q], ut = T[q];
      R[q] = XFMA(g2, ut, XFMA(g1, us, XMUL(g0, ur)));
      S[q] = XFMA(g4, ut, XFMA(g3, us, XMUL(g1, ur)));
      T[q] = XFMA(g5, ut, XFMA(g4, us, XMUL(g2, ur)));
      O[q] = ncomp == 7 ? XMUL(XMUL(wq, M[6]), U[q]) : XZERO();
    }
  } else {
    const double *gp[XW];
    for (int l = 0; l < XW; l++) {
      if (kind[l] == HX_AXK_GEN) {
        gp[l] = rec[l];
      } else {
        double *x = xg + (size_t)l * 7 * cs;
        XN(hx_xe_expand)(n3, kind[l], ncomp, rec[l], a->w3, x);
        gp[l] = x;
      }
    }
    for (int q0 = 0; q0 < n34; q0 += XW) {
      if (!(q0 & 4))
        for (int l = 0; l < XW; l++)
          if (gn[l])
            for (int c = 0; c < ncomp; c++) _mm_prefetch((const char *)(gn[l] + c * cs + q0), HX_XE_PF_HINT);
      XV g[7][XW];
      for (int c = 0; c < ncomp; c++) {
        const double *gc[XW];
        for (int l = 0; l < XW; l++) gc[l] = gp[l] + c * cs;
        XLOADT(gc, q0, g[c]);
      }
      for (int j = 0; j < XW; j++) {
        const int q = q0 + j;
        const XV ur = R[q], us = S[q], ut = T[q];
        R[q] = XFMA(g[2][j], ut, XFMA(g[1][j], us, XMUL(g[0][j], ur)));
        S[q] = XFMA(g[4][j], ut, XFMA(g[3][j], us, XMUL(g[1][j], ur)));
        T[q] = XFMA(g[5][j], ut, XFMA(g[4][j], us, XMUL(g[2][j], ur)));
        O[q] = ncomp == 7 ? XMUL(g[6][j], U[q]) : XZERO();
      }
    }
  }
  /* 4. transposed gradients */
  for (int ij = 0; ij < n2; ij++) XN(hx_xe_line)(n, Dtv, T + ij, n2, O + ij, n2, 1);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++) XN(hx_xe_line)(n, Dtv, S + i + n2 * k, n, O + i + n2 * k, n, 1);
  for (int jk = 0; jk < n2; jk++) XN(hx_xe_line)(n, Dtv, R + n * jk, 1, O + n * jk, 1, 1);
  /* de-interleave and partials */
  double *oe[XW];
  for (int l = 0; l < XW; l++) oe[l] = a->out + n3 * e[l];
  for (int q = 0; q < nb; q += XW) XSTORET(O + q, oe, q);
  for (int q = nb; q < n3; q++) {
    const double *Oq = (const double *)(O + q);
    for (int l = 0; l < XW; l++) oe[l][q] = Oq[l];
  }
  if (a->part) {
    XV s = XZERO();
    for (int q = 0; q < n3; q++) s = XFMA(U[q], O[q], s);
    double sd[XW];
    XSTOREU(sd, s);
    for (int l = 0; l < nv; l++) a->part[pk[l]] = sd[l];
  }
}

/* Groups per dynamically scheduled chunk (~2048 nodes, as ax_cpu.c). */
#define HX_XE_CHUNK(N) ((N) * (N) * (N)*XW >= 2048 ? 1 : 2048 / ((N) * (N) * (N)*XW))

#define HX_XE_DEFINE(N)                                                                                     \
  __attribute__((target(XTARGET))) static void XN(hx_xe_apply_##N)(const hx_xe_args *a) {                  \
    enum { n3 = (N) * (N) * (N), n34 = (n3 + XW - 1) & ~(XW - 1) };                                         \
    const int32_t ng = (a->nlist + XW - 1) / XW;                                                            \
    const int chunk = HX_XE_CHUNK(N);                                                                       \
    _Pragma("omp parallel") {                                                                               \
      __attribute__((aligned(64))) XV Dv[(N) * (N)], Dtv[(N) * (N)];                                        \
      __attribute__((aligned(64))) XV U[n34], R[n34], S[n34], T[n34], O[n34];                               \
      __attribute__((aligned(64))) double xg[XW * 7 * (n3 + HX_AX_PAD)];                                    \
      XN(hx_xe_eo_table)((N), a->D, 0, Dv);                                                                 \
      XN(hx_xe_eo_table)((N), a->D, 1, Dtv);                                                                \
      memset(U, 0, sizeof U), memset(R, 0, sizeof R), memset(S, 0, sizeof S);                               \
      memset(T, 0, sizeof T), memset(O, 0, sizeof O), memset(xg, 0, sizeof xg);                             \
      _Pragma("omp for schedule(dynamic, chunk)") for (int32_t g = 0; g < ng; g++) {                        \
        int32_t pk[XW];                                                                                     \
        size_t e[XW], en[XW];                                                                               \
        const int nv = a->nlist - XW * g < XW ? (int)(a->nlist - XW * g) : XW;                              \
        for (int l = 0; l < XW; l++) {                                                                      \
          pk[l] = a->pos[XW * g + (l < nv ? l : nv - 1)];                                                   \
          e[l] = (size_t)(a->list ? a->list[pk[l]] : pk[l]);                                                \
          const int32_t kn =                                                                                \
              XW * (g + HX_XE_PF_DIST) + l < a->nlist ? a->pos[XW * (g + HX_XE_PF_DIST) + l] : pk[l];       \
          en[l] = (size_t)(a->list ? a->list[kn] : kn);                                                     \
        }                                                                                                   \
        XN(hx_xe_group)((N), a, Dv, Dtv, pk, e, nv, U, R, S, T, O, xg, en);                                 \
      }                                                                                                     \
    }                                                                                                       \
  }

HX_XE_DEFINE(3)
HX_XE_DEFINE(4)
HX_XE_DEFINE(5)
HX_XE_DEFINE(6)
HX_XE_DEFINE(7)
#undef HX_XE_DEFINE
#undef HX_XE_CHUNK

/* The orders served (p), with the measurements that chose them in
 * docs/log/performance.md, "Cross-element vectorisation (issue 17 item 3)". */
static int XN(hx_xe_fn)(int p, void (**fn)(const hx_xe_args *)) {
  switch (p) {
    case 2: *fn = XN(hx_xe_apply_3); return 1;
    case 3: *fn = XN(hx_xe_apply_4); return 1;
    case 4: *fn = XN(hx_xe_apply_5); return 1;
    case 5: *fn = XN(hx_xe_apply_6); return 1;
    case 6: *fn = XN(hx_xe_apply_7); return 1;
    default: return 0;
  }
}


#undef XV
#undef XW
#undef XN
#undef XINL
#undef XTARGET
#undef XADD
#undef XSUB
#undef XMUL
#undef XFMA
#undef XZERO
#undef XSET1
#undef XBCAST
#undef XLOADU
#undef XSTOREU
#undef XLOADT
#undef XSTORET
