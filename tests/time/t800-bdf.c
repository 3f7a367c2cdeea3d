/* time/ alone (hx_time_run with this test's callbacks) on du/dt = -lambda u
 * + f(t), u(t) = cos(2 t) + exp(-t) / 2, a field constant in space on a
 * 2x2x2 box of order 2 with no Dirichlet face: the operator maps the
 * constant c to (lambda + shift) M c, so every step's solution is the
 * constant of the scalar BDF recurrence (computed here independently from
 * its own coefficients) up to the solver's tolerance (1e-13).
 *
 *   rates     BDF1/2/3 from an exact start-up and from the order rise
 *             (k - 1 set_shift calls), errors at t = 1 for dt = 1/10, 1/20,
 *             1/40, 1/80: every node agrees with the scalar recurrence to
 *             1e-12 relative (measured <= 4e-15: 80 steps of rounding and a
 *             1e-13 solve) and the observed orders are 1, 2, 3 within 0.06
 *             on the finest pair (within 0.35 on the coarser ones): e = C
 *             dt^q (1 + c dt) puts the rate O(dt) from q, measured 0.02-0.05
 *             on the finest pair. BDF2 started by a BDF1 step keeps order 2;
 *             BDF3 started by BDF1 and BDF2 steps has order 2 (docs/time.md);
 *   schedule  BDF2 with the order rise, 10 steps, output_every 3,
 *             checkpoint_every 4, projection 4: frames at 0 3 6 9 10,
 *             checkpoints at 4 8 10, one set_shift at step 2, a row and a
 *             solve_begin per step with the order 1 then 2;
 *   signal    SIGTERM raised in the row callback of step 5: the run stops
 *             after step 5 (interrupted), frame and checkpoint of step 5;
 *   restart   the checkpoint of step 6 (levels and projection basis) resumed:
 *             steps 7..10 give the uninterrupted run's solution bit for bit;
 *   data      data not finite at step 7: the run stops (data_failed, frame
 *             and checkpoint of step 6); at step 1: HX_ERR_INPUT naming the
 *             step.
 * Usage: t800-bdf MODE [--backend cpu] */
#include <signal.h>

#include "hx_disc.h"
#include "hx_mesh.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_time.h"
#include "hx_test.h"

#define LAMBDA 1.5
static double u_ex(double t) { return cos(2 * t) + 0.5 * exp(-t); }
static double f_ex(double t) { return -2 * sin(2 * t) - 0.5 * exp(-t) + LAMBDA * u_ex(t); }

typedef struct {
  hx_mesh m;
  hx_backend b;
  hx_disc d;
  hx_pc pc;
  int64_t nl;
  double *f, *lam;
  int *dirichlet;
  /* what the callbacks saw */
  int outs[64], nouts, cks[64], ncks, rows[64], orders[64], nrows, begins, agains, shifts;
  int ck_nlev[64], ck_nproj[64];
  double last_u, spread; /* the last frame's value at node 0, max |u_i - u_0| over every frame */
  int raise_at, bad_at;  /* raise SIGTERM after this step's row; data not finite at this step */
  /* the checkpoint kept for the restart */
  int keep_step, kept, kept_nlev, kept_np;
  double *kept_lev[HX_TIME_BDF_MAX], *kept_proj[8];
} ctx_t;

static int build(ctx_t *c, double shift) {
  for (int i = 0; i < hx_mesh_num_materials(c->m); i++) c->lam[i] = LAMBDA + shift;
  hx_disc_opts o = hx_disc_opts_default();
  o.p = 2, o.lambda = c->lam, o.dirichlet_tag = c->dirichlet;
  HX_CALL(hx_disc_create(c->m, c->b, &o, &c->d));
  HX_CALL(hx_pc_create_jacobi(hx_disc_op(c->d), &c->pc));
  return HX_SUCCESS;
}

static int cb_data(void *ctx, double t, hx_time_data *a) {
  ctx_t *c = ctx;
  const double v = c->bad_at > 0 && fabs(t - c->bad_at * 0.1) < 1e-12 ? NAN : f_ex(t);
  if (v != v) return HX_ERROR(HX_ERR_INPUT, "t800: f is not finite");
  for (int64_t i = 0; i < c->nl; i++) c->f[i] = v;
  a->f = c->f, a->g = NULL, a->bn = NULL;
  return HX_SUCCESS;
}
static int cb_set_shift(void *ctx, double shift, hx_disc *d, hx_pc *pc) {
  ctx_t *c = ctx;
  hx_pc_destroy(&c->pc);
  hx_disc_destroy(&c->d);
  HX_CALL(build(c, shift));
  *d = c->d, *pc = c->pc;
  c->shifts++;
  return HX_SUCCESS;
}
static int cb_initial(void *ctx, int level, double t, double *u) {
  ctx_t *c = ctx;
  (void)level;
  for (int64_t i = 0; i < c->nl; i++) u[i] = u_ex(t);
  return HX_SUCCESS;
}
static int cb_resume(void *ctx, hx_time_resume *r) {
  ctx_t *c = ctx;
  for (int j = 0; j < c->kept_nlev; j++) memcpy(r->levels[j], c->kept_lev[j], sizeof(double) * (size_t)c->nl);
  for (int j = 0; j < c->kept_np; j++) memcpy(r->proj[j], c->kept_proj[j], sizeof(double) * (size_t)c->nl);
  r->step = c->keep_step, r->nlev = c->kept_nlev, r->nproj = c->kept_np, r->last_output = c->keep_step;
  return HX_SUCCESS;
}
static int cb_solve_begin(void *ctx, int step, double t, int again) {
  ctx_t *c = ctx;
  (void)step, (void)t;
  c->begins++, c->agains += again;
  return HX_SUCCESS;
}
static int cb_step(void *ctx, const hx_time_step *s) {
  ctx_t *c = ctx;
  if (c->nrows < 64) c->rows[c->nrows] = s->step, c->orders[c->nrows++] = s->order;
  if (s->step == c->raise_at) raise(SIGTERM);
  return HX_SUCCESS;
}
static int cb_output(void *ctx, int step, double t, const double *u, double *work) {
  ctx_t *c = ctx;
  (void)t, (void)work;
  if (c->nouts < 64) c->outs[c->nouts++] = step;
  for (int64_t i = 0; i < c->nl; i++) c->spread = fmax(c->spread, fabs(u[i] - u[0]));
  c->last_u = u[0];
  return HX_SUCCESS;
}
static int cb_checkpoint(void *ctx, const hx_time_state *s) {
  ctx_t *c = ctx;
  if (c->ncks < 64) c->ck_nlev[c->ncks] = s->nlev, c->ck_nproj[c->ncks] = s->nproj, c->cks[c->ncks++] = s->step;
  if (s->step == c->keep_step && !c->kept) {
    c->kept = 1, c->kept_nlev = s->nlev, c->kept_np = s->nproj;
    for (int j = 0; j < s->nlev; j++) memcpy(c->kept_lev[j], s->levels[j], sizeof(double) * (size_t)c->nl);
    for (int j = 0; j < s->nproj && j < 8; j++) memcpy(c->kept_proj[j], s->proj[j], sizeof(double) * (size_t)c->nl);
  }
  return HX_SUCCESS;
}

/* The scalar BDF recurrence, from its own coefficients: k, N steps of dt,
 * exact start-up or the order rising from BDF1 */
static double scalar_bdf(int k, int N, double dt, int exact) {
  static const double b0[3] = {1.0, 3.0 / 2.0, 11.0 / 6.0};
  static const double al[3][3] = {{1, 0, 0}, {2, -0.5, 0}, {3, -1.5, 1.0 / 3.0}};
  double u[64] = {u_ex(0)};
  int n0 = 0;
  if (exact)
    for (int j = 1; j < k && j <= N; j++) u[j] = u_ex(j * dt), n0 = j;
  double *w = malloc(sizeof(double) * (size_t)(N + 1));
  for (int j = 0; j <= n0; j++) w[j] = u[j];
  for (int n = n0 + 1; n <= N; n++) {
    const int q = n < k ? n : k; /* levels held: n */
    double s = 0;
    for (int j = 0; j < q; j++) s += al[q - 1][j] * w[n - 1 - j];
    w[n] = (f_ex(n * dt) + s / dt) / (b0[q - 1] / dt + LAMBDA);
  }
  const double r = w[N];
  free(w);
  return r;
}

static hx_pcg_opts g_po;
static int run(ctx_t *c, int k, int N, double dt, int exact, int K, int out_every, int ck_every, int restart,
               hx_time_result *r) {
  const double shift = hx_time_bdf_shift(exact || restart ? k : 1, dt);
  HX_CALL(build(c, shift));
  const hx_time_opts o = {.comm = MPI_COMM_WORLD, .scheme = k, .dt = dt, .steps = N, .projection = K,
                          .output_every = out_every, .checkpoint_every = ck_every, .exact_startup = exact,
                          .restart = restart, .d = c->d, .pc = c->pc, .shift = shift, .pcg = &g_po};
  const hx_time_problem p = {c, cb_data, cb_set_shift, cb_initial};
  const hx_time_io io = {c, cb_resume, cb_solve_begin, cb_step, cb_output, cb_checkpoint, NULL};
  c->nouts = c->ncks = c->nrows = c->begins = c->agains = c->shifts = 0, c->spread = 0;
  const int err = hx_time_run(&o, &p, &io, r);
  hx_pc_destroy(&c->pc);
  hx_disc_destroy(&c->d);
  return err;
}

static int same_list(const int *a, int na, const int *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static int mode_rates(ctx_t *c) {
  for (int k = 1; k <= 3; k++)
    for (int exact = 1; exact >= (k > 1 ? 0 : 1); exact--) {
      double e[4];
      for (int l = 0; l < 4; l++) {
        const int N = 10 << l;
        const double dt = 1.0 / N, ref = scalar_bdf(k, N, dt, exact);
        hx_time_result r;
        HX_TCALL(run(c, k, N, dt, exact, 0, 0, 0, 0, &r));
        HX_ASSERT(r.solved == N - (exact ? k - 1 : 0) && r.last_step == N, "BDF%d: %d steps solved", k, r.solved);
        HX_ASSERT(r.setups == (exact ? 0 : k - 1), "BDF%d exact %d: %d set_shift calls", k, exact, r.setups);
        HX_ASSERT(hx_test_reldiff(c->last_u, ref, 1.0) < 1e-12 && c->spread < 1e-12,
                  "BDF%d dt %g: u %.17g, the scalar recurrence %.17g (spread %g)", k, dt, c->last_u, ref, c->spread);
        e[l] = fabs(c->last_u - u_ex(1.0));
      }
      /* the rate's distance to the order is O(dt) (e = C dt^q (1 + c dt)):
       * measured 0.02-0.05 on the finest pair, 0.06-0.32 on the coarsest */
      const int q = exact || k < 3 ? k : 2; /* BDF3 from BDF1/2 steps: order 2 */
      for (int l = 1; l < 4; l++) {
        const double rate = log2(e[l - 1] / e[l]);
        HX_ASSERT(fabs(rate - q) < (l == 3 ? 0.06 : 0.35), "BDF%d (exact start %d): rate %.3f, want %d (errors %g %g)",
                  k, exact, rate, q, e[l - 1], e[l]);
      }
    }
  return 0;
}

static int mode_schedule(ctx_t *c) {
  hx_time_result r;
  HX_TCALL(run(c, 2, 10, 0.1, 0, 4, 3, 4, 0, &r));
  const int outs[] = {0, 3, 6, 9, 10}, cks[] = {4, 8, 10}, rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  HX_ASSERT(same_list(c->outs, c->nouts, outs, 5), "frames at %d steps (want 0 3 6 9 10)", c->nouts);
  HX_ASSERT(same_list(c->cks, c->ncks, cks, 3), "checkpoints at %d steps (want 4 8 10)", c->ncks);
  HX_ASSERT(same_list(c->rows, c->nrows, rows, 10), "%d rows", c->nrows);
  for (int i = 0; i < c->nrows; i++) HX_ASSERT(c->orders[i] == (i == 0 ? 1 : 2), "step %d: order %d", i + 1, c->orders[i]);
  HX_ASSERT(c->shifts == 1 && r.setups == 1, "set_shift %d times (want 1: BDF1 -> BDF2)", c->shifts);
  HX_ASSERT(c->begins == 10 && c->agains == 0, "solve_begin %d times", c->begins);
  for (int i = 0; i < c->ncks; i++)
    HX_ASSERT(c->ck_nlev[i] == 2 && c->ck_nproj[i] >= 1 && c->ck_nproj[i] <= 4, "checkpoint %d: %d levels, %d vectors",
              c->cks[i], c->ck_nlev[i], c->ck_nproj[i]);
  HX_ASSERT(r.solved == 10 && !r.interrupted && !r.failed && !r.data_failed && r.first_step == 1, "result");
  return 0;
}

static int mode_signal(ctx_t *c) {
  hx_signals_install();
  c->raise_at = 5;
  hx_time_result r;
  HX_TCALL(run(c, 2, 10, 0.1, 0, 4, 3, 4, 0, &r));
  const int outs[] = {0, 3, 5}, cks[] = {4, 5};
  HX_ASSERT(r.interrupted && r.last_step == 5 && r.solved == 5, "interrupted %d after step %d", r.interrupted,
            r.last_step);
  HX_ASSERT(same_list(c->outs, c->nouts, outs, 3), "frames at %d steps (want 0 3 5)", c->nouts);
  HX_ASSERT(same_list(c->cks, c->ncks, cks, 2), "checkpoints at %d steps (want 4 5)", c->ncks);
  return 0;
}

static int mode_restart(ctx_t *c) {
  hx_time_result r;
  c->keep_step = 6;
  HX_TCALL(run(c, 3, 10, 0.1, 0, 4, 3, 3, 0, &r));
  const double whole = c->last_u;
  HX_ASSERT(c->kept && c->kept_nlev == 3 && c->kept_np >= 1, "the checkpoint of step 6 (%d levels, %d vectors)",
            c->kept_nlev, c->kept_np);
  HX_TCALL(run(c, 3, 10, 0.1, 0, 4, 3, 3, 1, &r));
  const int outs[] = {9, 10}, rows[] = {7, 8, 9, 10};
  HX_ASSERT(same_list(c->outs, c->nouts, outs, 2), "frames at %d steps (want 9 10)", c->nouts);
  HX_ASSERT(same_list(c->rows, c->nrows, rows, 4), "%d rows (want 7..10)", c->nrows);
  HX_ASSERT(r.first_step == 7 && r.setups == 0, "first step %d, %d set_shift calls", r.first_step, r.setups);
  HX_ASSERT(c->last_u == whole, "restarted %.17g, uninterrupted %.17g", c->last_u, whole);
  return 0;
}

static int mode_data(ctx_t *c) {
  hx_time_result r;
  c->bad_at = 7;
  HX_TCALL(run(c, 2, 10, 0.1, 0, 4, 3, 0, 0, &r));
  const int outs[] = {0, 3, 6}, cks[] = {6};
  HX_ASSERT(r.data_failed && r.data_step == 7 && r.last_step == 6 && strstr(r.data_error, "not finite"),
            "data_failed %d at step %d: %s", r.data_failed, r.data_step, r.data_error);
  HX_ASSERT(same_list(c->outs, c->nouts, outs, 3) && same_list(c->cks, c->ncks, cks, 1), "frames %d, checkpoints %d",
            c->nouts, c->ncks);
  c->bad_at = 1;
  const int err = run(c, 2, 10, 0.1, 0, 4, 3, 0, 0, &r);
  HX_ASSERT(err == HX_ERR_INPUT && strstr(hx_error_message(), "at step 1 (t = 0.1); nothing of this run is written"),
            "%d: %s", err, hx_error_message());
  hx_error_clear();
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hx_test_init(&argc, &argv, &rank, &size);
  const char *mode = argc > 1 ? argv[1] : "";
  ctx_t c;
  memset(&c, 0, sizeof c);
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = 2;
  HX_TCALL(hx_backend_create(hx_test_backend_arg(argc, argv), &c.b));
  HX_TCALL(hx_mesh_create_box(MPI_COMM_WORLD, &mo, &c.m));
  c.lam = calloc((size_t)hx_mesh_num_materials(c.m), sizeof(double));
  c.dirichlet = calloc((size_t)hx_mesh_num_tags(c.m) + 1, sizeof(int)); /* no Dirichlet face */
  HX_TCALL(build(&c, 0.0));
  c.nl = hx_disc_num_l(c.d);
  hx_pc_destroy(&c.pc);
  hx_disc_destroy(&c.d);
  c.f = malloc(sizeof(double) * (size_t)c.nl);
  for (int j = 0; j < HX_TIME_BDF_MAX; j++) c.kept_lev[j] = malloc(sizeof(double) * (size_t)c.nl);
  for (int j = 0; j < 8; j++) c.kept_proj[j] = malloc(sizeof(double) * (size_t)c.nl);
  c.keep_step = -1;
  hx_pcg_opts_default(&g_po);
  g_po.rtol = 1e-13, g_po.max_iterations = 500;
  int rc = 0;
  if (!strcmp(mode, "rates")) rc = mode_rates(&c);
  else if (!strcmp(mode, "schedule")) rc = mode_schedule(&c);
  else if (!strcmp(mode, "signal")) rc = mode_signal(&c);
  else if (!strcmp(mode, "restart")) rc = mode_restart(&c);
  else if (!strcmp(mode, "data")) rc = mode_data(&c);
  else HX_ASSERT(0, "unknown mode '%s' (rates, schedule, signal, restart, data)", mode);
  for (int j = 0; j < HX_TIME_BDF_MAX; j++) free(c.kept_lev[j]);
  for (int j = 0; j < 8; j++) free(c.kept_proj[j]);
  free(c.f), free(c.lam), free(c.dirichlet);
  hx_mesh_destroy(&c.m);
  hx_backend_destroy(&c.b);
  MPI_Finalize();
  return rc ? rc : hx_test_result();
}
