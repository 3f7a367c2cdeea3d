/* Cross-element vectorised FP64 operator (issue 17 item 3; docs/operator.md,
 * "Cross-element vectorisation"): at low order an element is too small for
 * SIMD within it, so four elements go through the sum factorisation
 * together, one per lane of an AVX2 register (deal.II's layout); 8 in an
 * AVX-512 register where chosen (hx_cpu_avx512_order: the same operations
 * per lane, so the same bits). Precomputed geometry; ax_cpu.c calls it for
 * the orders hx_xe_fn serves and falls back to its one-element kernels
 * otherwise. The kernel is written once (ax_xelem_t.h) for both widths.
 *
 * Per group of 4 (8) elements (interleaved scratch: x[q] holds node q of
 * the group's elements):
 *  1. gather u (L-vector: 4x4 (8x8) transposes of consecutive nodes of each
 *     element; fused scatter: through the map, 0 where it is negative);
 *  2. ur, us, ut by line contractions, even-odd split (half the multiply-
 *     adds; fully unrolled, n a constant);
 *  3. fluxes per node: the factors of 4 consecutive nodes of the 4 elements
 *     loaded and transposed (general records; other kinds in a group with a
 *     general one are first expanded to a general record in scratch; split
 *     records are handed back to the one-element kernel), or
 *     w_q times the per-lane constants when all 4 are affine;
 *  4. out = M u + D^T contractions, de-interleaved into each element's
 *     L slots; the per-element partials u.w are the lanes of one sum.
 * The list is reordered by record kind (stable) before grouping, so groups
 * mix kinds only at the boundaries; a short last group repeats its last
 * element in the spare lanes (same values written twice, its partial once).
 * Every lane computes exactly the same operations, so an element's result
 * does not depend on its group or lane. */
#include "ax_impl.h"
#include "isa_impl.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#define HX_XE_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

/* Arguments of one apply. */
typedef struct {
  int32_t nlist;
  const int32_t *pos;  /* list positions in group order (by record kind) */
  const int32_t *list; /* NULL: elements 0..nlist-1 */
  const int32_t *map;  /* NULL, or u is a G-vector read through map */
  const double *u;
  double *out, *part;
  const double *geo, *w3, *D;
  const int64_t *eoff;
  int ncomp;
} hx_xe_args;

#define HX_XE_PF_DIST 1
#define HX_XE_PF_HINT _MM_HINT_T1

/* AVX2: 4 lanes */
#define XV __m256d
#define XW 4
#define XN(name) name
#define XINL HX_XE_INLINE
#define XTARGET "avx2,fma"
#define XADD _mm256_add_pd
#define XSUB _mm256_sub_pd
#define XMUL _mm256_mul_pd
#define XFMA _mm256_fmadd_pd
#define XZERO _mm256_setzero_pd
#define XSET1 _mm256_set1_pd
#define XBCAST _mm256_broadcast_sd
#define XLOADU _mm256_loadu_pd
#define XSTOREU _mm256_storeu_pd
#define XLOADT(p, q, v) hx_xe_load4x4((p)[0] + (q), (p)[1] + (q), (p)[2] + (q), (p)[3] + (q), v)
#define XSTORET(v, p, q) hx_xe_store4x4(v, (p)[0] + (q), (p)[1] + (q), (p)[2] + (q), (p)[3] + (q))

/* v[j] = (p[0][j], p[1][j], p[2][j], p[3][j]), j < 4: a 4x4 transpose of 4
 * consecutive doubles of 4 elements (2 shuffles per 2 vectors; the 128-bit
 * inserts come with the loads). */
HX_XE_INLINE void hx_xe_load4x4(const double *p0, const double *p1, const double *p2, const double *p3,
                                __m256d *v) {
  for (int h = 0; h < 4; h += 2) {
    const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p0 + h)), _mm_loadu_pd(p2 + h), 1);
    const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p1 + h)), _mm_loadu_pd(p3 + h), 1);
    v[h] = _mm256_unpacklo_pd(a, b);
    v[h + 1] = _mm256_unpackhi_pd(a, b);
  }
}

/* The inverse: p[l][j] = v[j] lane l. */
HX_XE_INLINE void hx_xe_store4x4(const __m256d *v, double *p0, double *p1, double *p2, double *p3) {
  for (int h = 0; h < 4; h += 2) {
    const __m256d a = _mm256_unpacklo_pd(v[h], v[h + 1]), b = _mm256_unpackhi_pd(v[h], v[h + 1]);
    _mm_storeu_pd(p0 + h, _mm256_castpd256_pd128(a));
    _mm_storeu_pd(p1 + h, _mm256_castpd256_pd128(b));
    _mm_storeu_pd(p2 + h, _mm256_extractf128_pd(a, 1));
    _mm_storeu_pd(p3 + h, _mm256_extractf128_pd(b, 1));
  }
}

#include "ax_xelem_t.h"

/* AVX-512: 8 lanes */
#define HX_XE512_INLINE static inline __attribute__((always_inline, target(HX_AVX512_TARGET)))

/* r[0..8) as an 8 x 8 matrix of doubles, transposed in place */
HX_XE512_INLINE void hx_xe_tr8(__m512d *r) {
  __m512d t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);     /* r_i[0] r_i+1[0] r_i[2] r_i+1[2] ... */
    t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]); /* the odd columns */
  }
  /* 128-bit lanes: u holds columns {0,4}, {2,6}, {1,5}, {3,7} of rows 0-3 and 4-7 */
  u[0] = _mm512_shuffle_f64x2(t[0], t[2], 0x88), u[1] = _mm512_shuffle_f64x2(t[0], t[2], 0xDD);
  u[2] = _mm512_shuffle_f64x2(t[1], t[3], 0x88), u[3] = _mm512_shuffle_f64x2(t[1], t[3], 0xDD);
  u[4] = _mm512_shuffle_f64x2(t[4], t[6], 0x88), u[5] = _mm512_shuffle_f64x2(t[4], t[6], 0xDD);
  u[6] = _mm512_shuffle_f64x2(t[5], t[7], 0x88), u[7] = _mm512_shuffle_f64x2(t[5], t[7], 0xDD);
  r[0] = _mm512_shuffle_f64x2(u[0], u[4], 0x88), r[4] = _mm512_shuffle_f64x2(u[0], u[4], 0xDD);
  r[2] = _mm512_shuffle_f64x2(u[1], u[5], 0x88), r[6] = _mm512_shuffle_f64x2(u[1], u[5], 0xDD);
  r[1] = _mm512_shuffle_f64x2(u[2], u[6], 0x88), r[5] = _mm512_shuffle_f64x2(u[2], u[6], 0xDD);
  r[3] = _mm512_shuffle_f64x2(u[3], u[7], 0x88), r[7] = _mm512_shuffle_f64x2(u[3], u[7], 0xDD);
}

HX_XE512_INLINE void hx_xe_load8x8(const double *const *p, const int q, __m512d *v) {
  for (int l = 0; l < 8; l++) v[l] = _mm512_loadu_pd(p[l] + q);
  hx_xe_tr8(v);
}

HX_XE512_INLINE void hx_xe_store8x8(const __m512d *v, double *const *p, const int q) {
  __m512d r[8];
  for (int j = 0; j < 8; j++) r[j] = v[j];
  hx_xe_tr8(r);
  for (int l = 0; l < 8; l++) _mm512_storeu_pd(p[l] + q, r[l]);
}

#define XV __m512d
#define XW 8
#define XN(name) name##_x8
#define XINL HX_XE512_INLINE
#define XTARGET HX_AVX512_TARGET
#define XADD _mm512_add_pd
#define XSUB _mm512_sub_pd
#define XMUL _mm512_mul_pd
#define XFMA _mm512_fmadd_pd
#define XZERO _mm512_setzero_pd
#define XSET1 _mm512_set1_pd
#define XBCAST(p) _mm512_set1_pd(*(p))
#define XLOADU _mm512_loadu_pd
#define XSTOREU _mm512_storeu_pd
#define XLOADT(p, q, v) hx_xe_load8x8(p, q, v)
#define XSTORET(v, p, q) hx_xe_store8x8(v, p, q)
#include "ax_xelem_t.h"

/* the instantiation serving order p (avx512: the 8-lane one, the same
 * orders: at p = 7 the within-element AVX-512 kernel was faster, 4.9-6.5
 * against 8.7-9.2 ms per apply on the affine box, docs/operator.md) */
static int hx_xe_pick(int avx512, int p, void (**fn)(const hx_xe_args *)) {
  return avx512 ? hx_xe_fn_x8(p, fn) : hx_xe_fn(p, fn);
}

int hx_ax_xelem_serves(int p) {
  void (*fn)(const hx_xe_args *) = NULL;
  return hx_ax_cpu_isa() == 1 && hx_xe_pick(hx_cpu_avx512_order(p), p, &fn);
}

int hx_ax_xelem_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                      const double *u, double *w, double *part, int32_t *nrest, int32_t **rest) {
  void (*fn)(const hx_xe_args *) = NULL;
  *nrest = 0, *rest = NULL;
  if (!ax->isa || ax->mode != HX_GEO_PRECOMPUTED || !hx_xe_pick(ax->avx512, ax->p, &fn)) return 0;
  if (hx_env_off("HEXCG_AX_XELEM")) return 0;
  if (nlist <= 0) return 1;
  /* list positions by record kind, stable: general, affine, split */
  int32_t *pos = malloc(sizeof(int32_t) * (size_t)nlist);
  if (!pos) return 0; /* the one-element kernel needs no memory */
  int32_t cnt[4] = {0, 0, 0, 0};
  for (int32_t k = 0; k < nlist; k++) cnt[ax->d_eoff[list ? list[k] : k] & 3]++;
  int32_t at[4] = {0, cnt[HX_AXK_GEN], cnt[HX_AXK_GEN] + cnt[HX_AXK_AFF],
                   cnt[HX_AXK_GEN] + cnt[HX_AXK_AFF] + cnt[HX_AXK_SPL]};
  for (int32_t k = 0; k < nlist; k++) pos[at[ax->d_eoff[list ? list[k] : k] & 3]++] = k;
  /* split records stay with the one-element kernel, which reads the float
   * deviations directly (expanding them here ran 0.5x its speed at p = 3) */
  /* so do the scaled affine records (AFV: kappa and lambda per node) */
  const int32_t nr = cnt[HX_AXK_SPL] + cnt[HX_AXK_AFV], nx = nlist - nr;
  if (nr > 0) {
    if (!(*rest = malloc(sizeof(int32_t) * (size_t)nr))) {
      free(pos);
      return 0;
    }
    memcpy(*rest, pos + nx, sizeof(int32_t) * (size_t)nr);
    *nrest = nr;
  }
  if (nx == 0) {
    free(pos);
    return 1;
  }
  hx_xe_args a = {.nlist = nx,
                  .pos = pos,
                  .list = list,
                  .map = map,
                  .u = u,
                  .out = w,
                  .part = part,
                  .geo = ax->d_geo,
                  .w3 = ax->d_basis + hx_ax_off_w3(ax->n),
                  .D = ax->d_basis,
                  .eoff = ax->d_eoff,
                  .ncomp = ax->ncomp};
  fn(&a);
  free(pos);
  return 1;
}

#else
int hx_ax_xelem_serves(int p) {
  (void)p;
  return 0;
}
int hx_ax_xelem_apply(const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map,
                      const double *u, double *w, double *part, int32_t *nrest, int32_t **rest) {
  *nrest = 0, *rest = NULL;
  (void)ax, (void)nlist, (void)list, (void)map, (void)u, (void)w, (void)part;
  return 0;
}
#endif
