/* Box generator with the optional Kershaw map and smooth deformation map
 * (docs/mesh.md). Runs on rank 0 and fills a global mesh. */
#include <math.h>
#include <string.h>

#include "mesh_impl.h"

void hx_mesh_box_opts_default(hx_mesh_box_opts *o) {
  memset(o, 0, sizeof *o);
  o->nx = o->ny = o->nz = 4;
  for (int d = 0; d < 3; d++) o->extent[d][0] = 0.0, o->extent[d][1] = 1.0;
  o->kershaw_eps = 1.0;
  o->deform = 0;
  o->deform_amplitude = 0.05;
  o->geom_order = 1;
  o->partitioner = HX_PART_RCB;
}

/* Kershaw 1D maps (DESIGN.md "The Kershaw mesh") */
static double ker_right(double e, double t) { return t <= 0.5 ? (2.0 - e) * t : 1.0 + e * (t - 1.0); }
static double ker_left(double e, double t) { return 1.0 - ker_right(e, 1.0 - t); }
static double ker_blend(double a, double b, double s) {
  if (s < 0) s = 0;
  if (s > 1) s = 1;
  return a + (b - a) * s;
}
/* the deformed coordinate of y (or z) in [0,1] in the x-layer of x */
static double ker_yz(double eps, double x, double y) {
  int k = (int)floor(6.0 * x);
  if (k < 0) k = 0;
  if (k > 5) k = 5;
  double s = 6.0 * x - k;
  double l = ker_left(eps, y), r = ker_right(eps, y);
  switch (k) {
    case 0: return l;
    case 1:
    case 4: return ker_blend(l, r, s);
    case 2: return ker_blend(r, l, 0.5 * s);
    case 3: return ker_blend(r, l, 0.5 * (1.0 + s));
    default: return r;
  }
}

void hx_mesh_kershaw_map(double eps, const double x[3], double X[3]) {
  X[0] = x[0];
  X[1] = ker_yz(eps, x[0], x[1]);
  X[2] = ker_yz(eps, x[0], x[2]);
}

/* unit-cube coordinates (u, v, w) -> physical point */
static void box_map(const hx_mesh_box_opts *o, double u, double v, double w, double *X) {
  double eps = o->kershaw_eps;
  double U = u, V = v, W = w;
  if (eps != 1.0) {
    double in[3] = {u, v, w}, out[3];
    hx_mesh_kershaw_map(eps, in, out);
    V = out[1], W = out[2];
  }
  if (o->deform) {
    const double a = o->deform_amplitude, pi = M_PI;
    double su = sin(pi * U), sv = sin(pi * V), sw = sin(pi * W);
    double U2 = U + a * sin(2 * pi * U) * sv * sw;
    double V2 = V + a * su * sin(2 * pi * V) * sw;
    double W2 = W + a * su * sv * sin(2 * pi * W);
    U = U2, V = V2, W = W2;
  }
  const double *L[3] = {o->extent[0], o->extent[1], o->extent[2]};
  X[0] = L[0][0] + (L[0][1] - L[0][0]) * U;
  X[1] = L[1][0] + (L[1][1] - L[1][0]) * V;
  X[2] = L[2][0] + (L[2][1] - L[2][0]) * W;
}

int hx_gmesh_box(const hx_mesh_box_opts *o, hx_gmesh *g) {
  HX_CHECK(o != NULL, HX_ERR_ARG, "box options are NULL");
  HX_CHECK(o->nx >= 1 && o->ny >= 1 && o->nz >= 1, HX_ERR_INPUT,
           "box mesh: elements per direction must be >= 1, got %d x %d x %d", o->nx, o->ny, o->nz);
  for (int d = 0; d < 3; d++)
    HX_CHECK(o->extent[d][1] > o->extent[d][0], HX_ERR_INPUT,
             "box mesh: extent of %c must be increasing (min < max), got [%g, %g]", 'x' + d, o->extent[d][0],
             o->extent[d][1]);
  HX_CHECK(o->kershaw_eps > 0.0 && o->kershaw_eps <= 1.0, HX_ERR_INPUT,
           "box mesh: Kershaw eps must be in (0, 1] (1 = no Kershaw map), got %g", o->kershaw_eps);
  HX_CHECK(o->kershaw_eps == 1.0 || (o->nx % 6 == 0 && o->ny % 2 == 0 && o->nz % 2 == 0), HX_ERR_INPUT,
           "Kershaw mesh (eps %g < 1) needs nx divisible by 6 and ny, nz even so that every kink of "
           "the map falls on element boundaries; got %d x %d x %d",
           o->kershaw_eps, o->nx, o->ny, o->nz);
  HX_CHECK(o->geom_order == 1 || o->geom_order == 2, HX_ERR_INPUT,
           "box mesh: geometry order must be 1 (hex8) or 2 (hex27), got %d", o->geom_order);
  HX_CHECK(!o->deform || (o->deform_amplitude >= 0.0 && o->deform_amplitude <= 0.1), HX_ERR_INPUT,
           "box mesh: deformation amplitude must be in [0, 0.1] (keeps the map invertible), got %g",
           o->deform_amplitude);
  const int64_t nx = o->nx, ny = o->ny, nz = o->nz;
  const int64_t ne = nx * ny * nz;
  HX_CHECK(ne <= ((int64_t)1 << 40), HX_ERR_INPUT, "box mesh: too many elements (%lld)", (long long)ne);
  const int q = o->geom_order + 1, npe = q * q * q;
  memset(g, 0, sizeof *g);
  snprintf(g->src, sizeof g->src, "box %lldx%lldx%lld", (long long)nx, (long long)ny, (long long)nz);
  g->ne = ne, g->npe = npe, g->nv = (nx + 1) * (ny + 1) * (nz + 1);
  HX_CALL(HX_ALLOC(&g->nodes, ne * npe * 3));
  HX_CALL(HX_ALLOC(&g->vid, ne * 8));
  HX_CALL(HX_ALLOC(&g->mat, ne));
  HX_CALL(HX_ALLOC(&g->ftag, ne * 6));
  g->nmat = 1, g->ntags = 6;
  HX_CALL(HX_ALLOC(&g->mat_names, 1));
  HX_CALL(HX_ALLOC(&g->tag_names, 6));
  HX_CALL(hx_strdup("box", &g->mat_names[0]));
  static const char *tn[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
  for (int t = 0; t < 6; t++) HX_CALL(hx_strdup(tn[t], &g->tag_names[t]));
  const int64_t nxy = nx * ny;
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < ne; e++) {
    int64_t ex = e % nx, ey = (e / nx) % ny, ez = e / nxy;
    for (int c = 0; c < 2; c++)
      for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++)
          g->vid[e * 8 + a + 2 * b + 4 * c] = (ex + a) + (nx + 1) * ((ey + b) + (ny + 1) * (ez + c));
    for (int c = 0; c < q; c++)
      for (int b = 0; b < q; b++)
        for (int a = 0; a < q; a++) {
          double u = (ex + (double)a / (q - 1)) / nx, v = (ey + (double)b / (q - 1)) / ny,
                 w = (ez + (double)c / (q - 1)) / nz;
          /* exact end points */
          if (ex + a / (q - 1) == nx && a == q - 1) u = 1.0;
          if (ey + b / (q - 1) == ny && b == q - 1) v = 1.0;
          if (ez + c / (q - 1) == nz && c == q - 1) w = 1.0;
          box_map(o, u, v, w, &g->nodes[(e * npe + a + q * (b + q * c)) * 3]);
        }
    int32_t *ft = &g->ftag[e * 6];
    ft[0] = ex == 0 ? 0 : -1;
    ft[1] = ex == nx - 1 ? 1 : -1;
    ft[2] = ey == 0 ? 2 : -1;
    ft[3] = ey == ny - 1 ? 3 : -1;
    ft[4] = ez == 0 ? 4 : -1;
    ft[5] = ez == nz - 1 ? 5 : -1;
  }
  return HX_SUCCESS;
}

/* The periodic correspondences of the box: vertex (.., 0, ..) -> (.., n, ..)
 * along each periodic axis, after checking that the map (Kershaw,
 * deformation) takes the min face onto the max face by the translation
 * along the axis. */
int hx_gmesh_box_periodic(const hx_mesh_box_opts *o, hx_gmesh *g) {
  const int per = o->periodic[0] || o->periodic[1] || o->periodic[2];
  if (!per) return HX_SUCCESS;
  const int64_t n[3] = {o->nx, o->ny, o->nz};
  int64_t cnt = 0;
  for (int d = 0; d < 3; d++) {
    if (!o->periodic[d]) continue;
    HX_CHECK(n[d] >= 2, HX_ERR_INPUT,
             "periodic %c: needs at least 2 elements along %c (got %lld): with one element its two %c faces "
             "would be the same face",
             'x' + d, 'x' + d, (long long)n[d], 'x' + d);
    HX_CHECK(!(d == 0 && o->kershaw_eps != 1.0), HX_ERR_INPUT,
             "periodic x on a Kershaw mesh (eps %g < 1): the Kershaw map bends the face x = 0 by its left "
             "profile and the face x = 1 by its right one, so the two faces are not translates of each other "
             "and cannot be identified; periodic y and z are compatible (the map keeps y = 0, 1 and z = 0, 1 "
             "flat and moves their nodes alike)",
             o->kershaw_eps);
    cnt += (n[(d + 1) % 3] + 1) * (n[(d + 2) % 3] + 1);
  }
  HX_CALL(HX_ALLOC(&g->per, 2 * cnt));
  int64_t w = 0;
  const int64_t sx = 1, sy = n[0] + 1, sz = (n[0] + 1) * (n[1] + 1), st[3] = {sx, sy, sz};
  for (int d = 0; d < 3; d++) {
    if (!o->periodic[d]) continue;
    const double L = o->extent[d][1] - o->extent[d][0];
    const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
    for (int64_t b = 0; b <= n[d2]; b++)
      for (int64_t a = 0; a <= n[d1]; a++) {
        double u0[3], u1[3], X0[3], X1[3];
        u0[d] = 0.0, u1[d] = 1.0;
        u0[d1] = u1[d1] = (double)a / (double)n[d1];
        u0[d2] = u1[d2] = (double)b / (double)n[d2];
        if (a == n[d1]) u0[d1] = u1[d1] = 1.0;
        if (b == n[d2]) u0[d2] = u1[d2] = 1.0;
        box_map(o, u0[0], u0[1], u0[2], X0);
        box_map(o, u1[0], u1[1], u1[2], X1);
        double dev = fabs(X1[d] - X0[d] - L) / L;
        for (int k = 0; k < 3; k++)
          if (k != d) dev = fmax(dev, fabs(X1[k] - X0[k]) / (o->extent[k][1] - o->extent[k][0]));
        HX_CHECK(
            dev <= 1e-12, HX_ERR_INPUT,
            "periodic %c: the mesh map does not take the face %cmin onto %cmax by a translation: (%g, %g, "
            "%g) lies opposite (%g, %g, %g)",
            'x' + d, 'x' + d, 'x' + d, X0[0], X0[1], X0[2], X1[0], X1[1], X1[2]);
        const int64_t v0 = a * st[d1] + b * st[d2];
        g->per[2 * w] = v0, g->per[2 * w + 1] = v0 + n[d] * st[d];
        w++;
      }
  }
  g->nper = w;
  return HX_SUCCESS;
}
