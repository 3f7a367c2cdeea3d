/* time/: BDF1/2/3 time stepping of du/dt - div(kappa grad u) + lambda u = f
 * (docs/time.md): the schemes and their shift beta0/dt, the start-up order
 * rise (or an exact start-up), the effective right-hand side, the projected
 * initial guess (hx_proj) with its statistics, and the decisions when to
 * write an output frame and a checkpoint and when to stop (the steps, a
 * failed solve, data that are not finite, a signal: core's signal state).
 *
 * The module opens no file. The problem comes in as callbacks
 * (hx_time_problem: the data at time t, the operator and preconditioner for
 * a new shift, the initial levels); every output (a frame, a checkpoint, a
 * row of the step table, the history rows of a step) and a --restart's
 * state come in and go out through the caller's callbacks (hx_time_io), the
 * way PETSc's TSMonitor and NekRS's timeStepper hand outputs to the
 * application. Every callback returns an hx error code (HX_SUCCESS).
 *
 * Vectors are host L-vectors of the discretisation (hx_disc_num_l
 * entries). */
#ifndef HX_TIME_H
#define HX_TIME_H

#include "hx_core.h"
#include "hx_disc.h"
#include "hx_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HX_TIME_BDF_MAX 3

/* BDFq (q = 1..3): (beta0 u^{n+1} - sum_{j=1..q} alpha_j u^{n+1-j}) / dt.
 * beta0(q), alpha(q, j) for j = 1..q, and the operator's shift beta0 / dt. */
double hx_time_bdf_beta0(int q);
double hx_time_bdf_alpha(int q, int j);
double hx_time_bdf_shift(int q, double dt);

/* The data of a step, filled by hx_time_problem.data. */
typedef struct {
  /* in: the step wants its error norms (an output step, an error_every step
   * or the last): exact is then wanted; work: an L-vector free during the
   * call (scratch, e.g. to check the exact solution at the nodes) */
  int exact_due;
  double *work;
  /* out: f at the nodes, the Dirichlet values (NULL: homogeneous) and the
   * Neumann loads (NULL: none), owned by the problem and valid until its
   * next call; exact: the exact solution at t for the error norms (fn NULL:
   * none), its context valid until the next call */
  const double *f, *g, *bn;
  hx_field exact;
} hx_time_data;

/* The problem side. */
typedef struct {
  void *ctx;
  /* The data at time t into *a. HX_ERR_INPUT (with its message set) for
   * data that are not finite at t: the loop then stops (below). Collective. */
  int (*data)(void *ctx, double t, hx_time_data *a);
  /* The operator and preconditioner for lambda + shift (a rise of the BDF
   * order at start-up changes beta0): *d and *pc are those to use from now
   * on (the same objects when the shift is updated in place). Collective. */
  int (*set_shift)(void *ctx, double shift, hx_disc *d, hx_pc *pc);
  /* A fresh run's level into u: level 0 the initial condition at t = 0;
   * level j >= 1 (exact start-up only) the exact solution at t = j dt.
   * Collective. */
  int (*initial)(void *ctx, int level, double t, double *u);
} hx_time_problem;

/* One solved step (hx_time_io.step). */
typedef struct {
  int step, order;
  double t;
  const hx_solve_result *solve; /* the step's solve (gain: pcg.r0norm / pcg.bnorm) */
  int projection_vectors;       /* in the basis before the solve */
  double gain;                  /* ||b - A x0|| / ||b||: the projected guess's */
  double saved;                 /* iterations the guess saved, estimated (docs/time.md) */
  double seconds, projection_s; /* the step's and the projection's wall time, the slowest rank's */
} hx_time_step;

/* A state to checkpoint (hx_time_io.checkpoint): the levels u^step,
 * u^{step-1}, ... (newest first) and the projection basis that belongs to
 * the operator of the next step (none when the order rises next). */
typedef struct {
  int step;
  double t;
  int nlev;
  const double *const *levels;
  int nproj;
  const double *const *proj;
} hx_time_state;

/* --restart (hx_time_io.resume): the state the run resumes from. */
typedef struct {
  /* in: where the state goes: k levels and K projection vectors (L-vectors) */
  int k, K;
  double **levels, **proj;
  /* out: the checkpoint's step, the levels and projection vectors it held;
   * last_output: the step of the last output frame already in the run's
   * series (-1: none); complete: the run is finished and its results are
   * committed: nothing is done */
  int step, nlev, nproj, last_output, complete;
} hx_time_resume;

/* The application side (any pointer may be NULL where the run does not
 * need it: resume without restart, the others for no such output). */
typedef struct {
  void *ctx;
  /* Fill r (hx_time_opts.restart). Collective. */
  int (*resume)(void *ctx, hx_time_resume *r);
  /* Before each solve of step `step`; again = 1: a signal interrupted the
   * step's first solve, which is started over: its history rows since the
   * call with again = 0 are to be dropped. */
  int (*solve_begin)(void *ctx, int step, double t, int again);
  /* A solved step (a row of the step table). Collective. */
  int (*step)(void *ctx, const hx_time_step *s);
  /* An output frame: the solution u at step `step` (t = step dt); work: an
   * L-vector free during the call. Collective. */
  int (*output)(void *ctx, int step, double t, const double *u, double *work);
  /* A checkpoint of s. Collective. */
  int (*checkpoint)(void *ctx, const hx_time_state *s);
  /* After each step's outputs: nonzero stops the run after this step (as a
   * signal does: result.interrupted). Must return the same on every rank
   * (the library's monitor agrees it first). */
  int (*stop)(void *ctx);
} hx_time_io;

typedef struct {
  MPI_Comm comm;
  int scheme;           /* k: BDFk, 1..3 */
  double dt;
  int steps;            /* the last step N (t = N dt) */
  int projection;       /* K: solutions kept for the projected guess (0: off, the previous level) */
  int output_every;     /* > 0: a frame at t = 0, every so many steps and at the last; 0: the last only */
  int checkpoint_every; /* > 0: a checkpoint every so many steps before the last; always at the end */
  int error_every;      /* > 0: the error norms every so many steps (and at output steps) */
  int exact_startup;    /* 1: the levels at dt .. (k-1) dt are exact (problem.initial), the full order at once */
  int restart;          /* 1: the state comes from io.resume */
  hx_disc d;            /* the discretisation and preconditioner built with shift */
  hx_pc pc;
  double shift;
  const hx_pcg_opts *pcg; /* the solver's options (monitor included) for every step */
} hx_time_opts;

/* What a run did. */
typedef struct {
  int complete;      /* io.resume said complete: nothing done; first_step, last_step and t_end set */
  int first_step;    /* the first step this call would solve (the start level + 1) */
  int last_step;     /* the last step solved, or the start level */
  double t_end;      /* last_step dt */
  int solved;        /* the steps solved */
  int interrupted;   /* a signal (or io.stop) stopped the run after last_step (< steps) */
  int failed;        /* the solve of last_step did not converge */
  int data_failed;   /* the data at data_step were not finite (after >= 1 solved step) */
  int data_step;
  double data_t;
  char data_error[1800]; /* the problem's message */
  int setups;        /* set_shift calls */
  hx_disc d;         /* the discretisation, preconditioner and shift at the end */
  hx_pc pc;
  double shift;
  hx_solve_result total; /* the last step's result with iterations and seconds summed over the steps */
} hx_time_result;

/* Step the problem from t = 0 (or the resumed step) to steps dt: per step
 * the order (rising by one per level at start-up), set_shift when beta0/dt
 * changes, the data, the effective right-hand side f + (1/dt) sum alpha_j
 * u^{n+1-j}, the projected solve (hx_solve_proj), the level update, the step
 * row; output frames and checkpoints as the options say; a signal during a
 * solve gives a checkpoint of the step before, then the step solved again
 * with signals deferred (the same bits as without the signal); a signal
 * between steps stops the run after that step on every rank. At the end
 * (not after a failed solve) the last step's frame and checkpoint. Data
 * that are not finite before any step is solved: HX_ERR_INPUT ("...,
 * at step N (t = T); nothing of this run is written"). Collective over
 * o->comm. */
int hx_time_run(const hx_time_opts *o, const hx_time_problem *p, const hx_time_io *io, hx_time_result *r);

#ifdef __cplusplus
}
#endif
#endif
