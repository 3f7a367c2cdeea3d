/* The Schwarz level's weighted copies (kernels/fdm.c): hx_fdm_wgather_p
 * (y[i] = w[i] x[idx[i]]) and its transpose hx_fdm_wscatter_p (y zeroed,
 * then y[idx[i]] = w[i] x[i]) for the four precision pairs, against host
 * evaluations of the documented forms (F64 -> F64: the product in double;
 * F32 -> F32: the weight rounded to float, the product in float; F64 ->
 * F32: the double product rounded once; F32 -> F64: the exact widening
 * times the weight), bit for bit; -1 indices (gather: 0; scatter: skipped),
 * y beyond the scattered entries 0 (also where it held garbage before), and
 * the duality <y, G x> = <S y, x> for the double pair to round-off. With
 * --backend cuda (skips without a device) the same on the device;
 * cpu-memcheck: no host access to backend memory without a transfer. */
#include "hx_kernels.h"
#include "hx_kernels_prec.h"
#include "hx_test.h"

#define NX 5003 /* the indexed vector */
#define NI 3001 /* the index array: distinct targets in 0..NX, some -1 */

static double ref_entry(int kind, double w, const void *x, int64_t j) {
  switch (kind) {
    case 0: return w * ((const double *)x)[j];
    case 1: return w * (double)((const float *)x)[j];
    case 2: return (double)(float)(w * ((const double *)x)[j]);
    default: return (double)((float)w * ((const float *)x)[j]);
  }
}

static double get(const void *y, int f32, int64_t i) { return f32 ? ((const float *)y)[i] : ((const double *)y)[i]; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *backend = hx_test_backend_arg(argc, argv);
  hx_test_skip_without_device(backend);
  hx_backend b;
  HX_TCALL(hx_backend_create(backend, &b));
  hx_test_rng rng = {0x5eed1234ull};
  /* distinct targets: a stride through 0..NX-1 (prime stride), every 7th -1 */
  int32_t idx[NI];
  double w[NI];
  for (int i = 0; i < NI; i++) {
    idx[i] = i % 7 == 3 ? -1 : (int32_t)(((int64_t)i * 1667) % NX);
    w[i] = 0.25 + hx_test_rand(&rng);
  }
  double xd[NX];
  float xf[NX];
  for (int i = 0; i < NX; i++) xd[i] = hx_test_rand(&rng), xf[i] = (float)hx_test_rand(&rng);
  int32_t *d_idx;
  double *d_w;
  void *d_x, *d_y;
  HX_TCALL(hx_mem_alloc(b, sizeof idx, (void **)&d_idx));
  HX_TCALL(hx_mem_alloc(b, sizeof w, (void **)&d_w));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * NX, &d_x));
  HX_TCALL(hx_mem_alloc(b, sizeof(double) * NX, &d_y));
  HX_TCALL(hx_mem_to_device(b, d_idx, idx, sizeof idx));
  HX_TCALL(hx_mem_to_device(b, d_w, w, sizeof w));
  static const char *names[] = {"F64 -> F64", "F32 -> F64", "F64 -> F32", "F32 -> F32"};
  double y[NX];
  char hit[NX];
  memset(hit, 0, sizeof hit);
  for (int i = 0; i < NI; i++)
    if (idx[i] >= 0) hit[idx[i]] = 1;
  for (int kind = 0; kind < 4; kind++) {
    const hx_precision xp = kind & 1 ? HX_F32 : HX_F64, yp = kind & 2 ? HX_F32 : HX_F64;
    const void *hx = kind & 1 ? (const void *)xf : (const void *)xd;
    const size_t xs = hx_precision_size(xp), ys = hx_precision_size(yp);
    /* gather: x indexed (NX entries), y of NI */
    HX_TCALL(hx_mem_to_device(b, d_x, hx, xs * NX));
    HX_TCALL(hx_fdm_wgather_p(b, NI, d_idx, d_w, xp, d_x, yp, d_y));
    HX_TCALL(hx_mem_to_host(b, y, d_y, ys * NI));
    int bad = 0;
    for (int i = 0; i < NI; i++) {
      const double want = idx[i] < 0 ? 0.0 : ref_entry(kind, w[i], hx, idx[i]);
      bad += get(y, kind & 2, i) != want;
    }
    HX_ASSERT(bad == 0, "%s gather: %d of %d entries differ from the reference", names[kind], bad, NI);
    /* scatter: x of NI entries, y of NX, garbage before */
    HX_TCALL(hx_mem_to_device(b, d_x, hx, xs * NI));
    for (int i = 0; i < NX; i++) y[i] = 1e300;
    HX_TCALL(hx_mem_to_device(b, d_y, y, sizeof(double) * NX));
    HX_TCALL(hx_fdm_wscatter_p(b, NX, NI, d_idx, d_w, xp, d_x, yp, d_y));
    HX_TCALL(hx_mem_to_host(b, y, d_y, ys * NX));
    bad = 0;
    int nonzero = 0;
    for (int i = 0; i < NI; i++)
      if (idx[i] >= 0) bad += get(y, kind & 2, idx[i]) != ref_entry(kind, w[i], hx, i);
    for (int j = 0; j < NX; j++) nonzero += !hit[j] && get(y, kind & 2, j) != 0.0;
    HX_ASSERT(bad == 0, "%s scatter: %d entries differ from the reference", names[kind], bad);
    HX_ASSERT(nonzero == 0, "%s scatter: %d entries that no index names are not 0", names[kind], nonzero);
  }
  /* duality in double: <v, G x> = <S v, x> with v (NI) and x (NX) random */
  {
    double v[NI], gx[NI], sv[NX];
    for (int i = 0; i < NI; i++) v[i] = hx_test_rand(&rng);
    HX_TCALL(hx_mem_to_device(b, d_x, xd, sizeof xd));
    HX_TCALL(hx_fdm_wgather_p(b, NI, d_idx, d_w, HX_F64, d_x, HX_F64, d_y));
    HX_TCALL(hx_mem_to_host(b, gx, d_y, sizeof gx));
    HX_TCALL(hx_mem_to_device(b, d_x, v, sizeof v));
    HX_TCALL(hx_fdm_wscatter_p(b, NX, NI, d_idx, d_w, HX_F64, d_x, HX_F64, d_y));
    HX_TCALL(hx_mem_to_host(b, sv, d_y, sizeof sv));
    double a = 0.0, c = 0.0, s = 0.0;
    for (int i = 0; i < NI; i++) a += v[i] * gx[i], s += fabs(v[i] * gx[i]);
    for (int j = 0; j < NX; j++) c += sv[j] * xd[j];
    HX_ASSERT(fabs(a - c) <= 1e-13 * s, "<v, G x> = %.17g, <S v, x> = %.17g", a, c);
  }
  /* nothing to scatter: y is still zeroed */
  HX_TCALL(hx_fdm_wscatter_p(b, NX, 0, d_idx, d_w, HX_F64, d_x, HX_F64, d_y));
  HX_TCALL(hx_mem_to_host(b, y, d_y, sizeof(double) * NX));
  int nz = 0;
  for (int j = 0; j < NX; j++) nz += y[j] != 0.0;
  HX_ASSERT(nz == 0, "an empty scatter left %d entries nonzero", nz);
  hx_mem_free(b, (void **)&d_idx), hx_mem_free(b, (void **)&d_w), hx_mem_free(b, &d_x), hx_mem_free(b, &d_y);
  HX_TCALL(hx_backend_destroy(&b));
  MPI_Finalize();
  return hx_test_result();
}
