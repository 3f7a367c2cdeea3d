/* hexcg compare: the comparison rules and the table (docs/regression.md). */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "hx_compare.h"

/* append to buf (truncated at len) */
static void appendf(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void appendf(char *buf, size_t len, const char *fmt, ...) {
  size_t l = strlen(buf);
  if (l + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + l, len - l, fmt, ap);
  va_end(ap);
}

int hx_cmp_key_class(const char *k) {
  if (!strcmp(k, "output") || !strncmp(k, "output.", 7) || !strcmp(k, "time.output_every") ||
      !strcmp(k, "time.checkpoint_every") || !strcmp(k, "time.error_every"))
    return HX_CMP_KEY_IGNORED;
  if (!strcmp(k, "mesh.partitioner")) return HX_CMP_KEY_SOLVER;
  if (!strcmp(k, "order") || !strncmp(k, "mesh.", 5) || !strncmp(k, "problem.", 8) || !strncmp(k, "time.", 5))
    return HX_CMP_KEY_PROBLEM;
  return HX_CMP_KEY_SOLVER;
}

/* a case value for a message: quoted when it holds blanks or commas, cut at 60 characters */
static void show_value(char *buf, size_t len, const char *v) {
  if (!v) {
    snprintf(buf, len, "(none)");
    return;
  }
  const int q = strchr(v, ' ') || strchr(v, ',') || !v[0];
  if (strlen(v) > 60)
    snprintf(buf, len, "%s%.57s...%s", q ? "'" : "", v, q ? "'" : "");
  else
    snprintf(buf, len, "%s%s%s", q ? "'" : "", v, q ? "'" : "");
}

/* The keys of the two effective cases that differ, problem keys first (in
 * the order of RUN's case, then keys only BASELINE has), into
 * res->problem_keys / solver_keys / diff_keys; prints them to out. */
static void key_diffs(const hx_cmp_run *run, const hx_cmp_run *base, FILE *out, hx_cmp_result *res) {
  if (!run->keys.n || !base->keys.n) {
    if (out && (run->case_path || base->case_path))
      fprintf(out, "  %-23s %9s  not compared: %s has no case.yaml\n", "effective case", "",
              run->case_path ? "BASELINE" : "RUN");
    return;
  }
  int printed = 0;
  for (int cls = HX_CMP_KEY_PROBLEM; cls <= HX_CMP_KEY_SOLVER; cls++) {
    char *list = cls == HX_CMP_KEY_PROBLEM ? res->problem_keys : res->solver_keys;
    /* keys one case has and the other has not (a preconditioner's own keys): named, without "(none)" */
    char only[2][1024] = {"", ""};
    for (int side = 0; side < 2; side++) {
      const hx_case_keys *k = side ? &base->keys : &run->keys;
      for (int i = 0; i < k->n; i++) {
        const char *name = k->key[i];
        if (hx_cmp_key_class(name) != cls) continue;
        if (side && hx_case_keys_get(&run->keys, name)) continue; /* seen on RUN's pass */
        const char *a = hx_case_keys_get(&run->keys, name), *b = hx_case_keys_get(&base->keys, name);
        if (a && b && !strcmp(a, b)) continue;
        char va[80], vb[80];
        show_value(va, sizeof va, a), show_value(vb, sizeof vb, b);
        if (!a || !b)
          appendf(only[side], sizeof only[side], "%s%s", only[side][0] ? " " : "", name);
        /* a different order is already said by the summary's row */
        else if (strcmp(name, "order") || !strstr(res->problem_diff, "order "))
          appendf(list, sizeof res->problem_keys, "%s%s %s vs %s", list[0] ? ", " : "", name, va, vb);
        appendf(res->diff_keys, sizeof res->diff_keys, "%s%s", res->diff_keys[0] ? "," : "", name);
        if (cls == HX_CMP_KEY_PROBLEM) res->n_problem_keys++;
        if (cls == HX_CMP_KEY_SOLVER) {
          res->n_solver_keys++;
          if (strcmp(name, "mesh.partitioner") && strcmp(name, "backend")) res->n_solve_keys++;
        }
        if (out) {
          if (!printed++)
            fprintf(out, "\n  effective cases (case.yaml): the keys that differ\n  %-7s %-34s %-22s %s\n", "class",
                    "key", "run", "baseline");
          fprintf(out, "  %-7s %-34s %-22s %s\n", cls == HX_CMP_KEY_PROBLEM ? "problem" : "solver", name, va, vb);
        }
      }
    }
    for (int side = 0; side < 2; side++)
      if (only[side][0])
        appendf(list, sizeof res->problem_keys, "%sonly %s has %s", list[0] ? ", " : "", side ? "BASELINE" : "RUN",
                only[side]);
  }
  if (out && !printed) fprintf(out, "\n  effective cases (case.yaml): the same keys and values (output.* aside)\n");
}

/* "solutions 3.1e-07 apart (max |u - u'| / max |u'|; L2 2.9e-07)", or why
 * they were not compared; "" when a side has no solution.h5 */
static void solution_text(const hx_cmp_result *res, char *buf, size_t len) {
  buf[0] = 0;
  if (!res->solution_read) return;
  if (!res->sol.compared)
    snprintf(buf, len, "solutions not compared: %s", res->sol.why_not);
  else
    snprintf(buf, len, "solutions %.2g apart (max |u - u'| / max |u'|; L2 %.2g)", res->sol.rel_max,
             res->sol.rel_l2);
}

/* |a - b| / allowed, with NaN == NaN and inf where allowed is 0. */
static double ratio_of(double diff, double allowed) {
  if (diff == 0) return 0;
  if (!(allowed > 0)) return INFINITY;
  return diff / allowed;
}

static double curve_ratio(double a, double b, double b0, const hx_cmp_opts *o) {
  if (!isfinite(a) || !isfinite(b)) return INFINITY; /* a non-finite value never matches, not even itself */
  double scale = fabs(b) > o->floor * fabs(b0) ? fabs(b) : o->floor * fabs(b0);
  return ratio_of(fabs(a - b), o->rtol * scale);
}

void hx_cmp_curve_compare(int n, const double *run, const double *base, const hx_cmp_opts *o,
                          hx_cmp_curve *c) {
  c->first = -1, c->first_fails = 0, c->first_ratio = 0, c->worst = -1, c->worst_ratio = 0, c->nfail = 0;
  int first_diff = -1;
  double first_diff_ratio = 0;
  for (int i = 0; i < n; i++) {
    double q = curve_ratio(run[i], base[i], base[0], o);
    int differs = !(run[i] == base[i]) || !isfinite(run[i]);
    if (differs && first_diff < 0) first_diff = i, first_diff_ratio = q;
    if (q > 1) {
      if (!c->nfail) c->first = i, c->first_fails = 1, c->first_ratio = q;
      c->nfail++;
    }
    if (c->worst < 0 || q > c->worst_ratio) c->worst = i, c->worst_ratio = q;
  }
  if (!c->first_fails) c->first = first_diff, c->first_ratio = first_diff_ratio;
  if (c->worst_ratio == 0) c->worst = -1;
}

/* ---------------------------------------------------------------- the table */
static void row5(FILE *out, const char *check, const char *at, const char *a, const char *b, const char *d,
                 const char *q, int ok) {
  if (out) fprintf(out, "  %-23s %9s  %-16s %-16s %9s %12s  %s\n", check, at, a, b, d, q, ok ? "ok" : "FAIL");
}

static void row(FILE *out, const char *check, const char *at, const char *a, const char *b, const char *q,
                int ok) {
  row5(out, check, at, a, b, "", q, ok);
}

static void fmt_diff(char *buf, size_t len, double a, double b) {
  double d = fabs(a - b);
  if (d == 0 || isnan(d))
    snprintf(buf, len, "%s", d == 0 ? "0" : "nan");
  else
    snprintf(buf, len, "%.2e", d);
}

static void fmt_ratio(char *buf, size_t len, double q) {
  if (isinf(q))
    snprintf(buf, len, "inf");
  else if (q == 0)
    snprintf(buf, len, "0");
  else
    snprintf(buf, len, "%.2g", q);
}

static void curve_rows(FILE *out, const char *name, const hx_cmp_curve *c, const hx_cmp_run *run,
                       const double *a, const double *b) {
  char chk[64], at[32], va[40], vb[40], q[32], d[32];
  int ok_first = !c->first_fails;
  if (c->first < 0) {
    snprintf(chk, sizeof chk, "%s", name);
    row(out, chk, "all", "identical", "", "0", 1);
    return;
  }
  snprintf(chk, sizeof chk, "%s %s", name, c->first_fails ? "first" : "first diff");
  snprintf(at, sizeof at, "%d", run->it[c->first]);
  snprintf(va, sizeof va, "%.9e", a[c->first]);
  snprintf(vb, sizeof vb, "%.9e", b[c->first]);
  fmt_diff(d, sizeof d, a[c->first], b[c->first]);
  fmt_ratio(q, sizeof q, c->first_ratio);
  row5(out, chk, at, va, vb, d, q, ok_first);
  if (c->worst >= 0) {
    snprintf(chk, sizeof chk, "%s worst", name);
    snprintf(at, sizeof at, "%d", run->it[c->worst]);
    snprintf(va, sizeof va, "%.9e", a[c->worst]);
    snprintf(vb, sizeof vb, "%.9e", b[c->worst]);
    fmt_diff(d, sizeof d, a[c->worst], b[c->worst]);
    fmt_ratio(q, sizeof q, c->worst_ratio);
    row5(out, chk, at, va, vb, d, q, c->worst_ratio <= 1);
  }
  if (c->nfail && out)
    fprintf(out, "  %-23s %9s  %d of the compared rows over the tolerance\n", "", "", c->nfail);
}

static int count(hx_cmp_result *res, int ok) {
  res->checks++;
  if (!ok) res->failures++;
  return ok;
}

static const char *btxt(int v) { return v ? "true" : "false"; }

static void describe(FILE *out, const char *role, const hx_cmp_run *r) {
  if (!out) return;
  const char *h = strrchr(r->hist_path, '/');
  fprintf(out, "  %-9s %s (%s%s): %d iterations", role, r->arg, h ? h + 1 : r->hist_path,
          r->has_summary ? ", summary.yaml" : "", hx_cmp_iterations(r));
  if (r->has_summary) {
    const hx_run_stats *s = &r->sum.st;
    if (s->ranks) fprintf(out, ", %d rank%s", s->ranks, s->ranks > 1 ? "s" : "");
    if (s->backend[0]) fprintf(out, ", %s", s->backend);
    if (r->sum.case_name[0]) fprintf(out, ", case %s", r->sum.case_name);
  }
  fprintf(out, "\n");
}

static int note(hx_cmp_result *res, const char *name, int ok);

static void error_row(FILE *out, const char *name, int known_a, double a, int known_b, double b,
                      const hx_cmp_opts *o, hx_cmp_result *res) {
  char va[40], vb[40], q[32] = "", d[32];
  if (!known_a && !known_b) return;
  if (known_a != known_b) {
    snprintf(va, sizeof va, "%s", known_a ? "given" : "none");
    snprintf(vb, sizeof vb, "%s", known_b ? "given" : "none");
    row(out, name, "", va, vb, "", count(res, 0));
    return;
  }
  snprintf(va, sizeof va, "%.9e", a);
  snprintf(vb, sizeof vb, "%.9e", b);
  fmt_diff(d, sizeof d, a, b);
  double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  const double allowed = fmax(o->error_rtol * m, o->error_floor);
  double r = !isfinite(a) || !isfinite(b) ? INFINITY : ratio_of(fabs(a - b), allowed);
  fmt_ratio(q, sizeof q, r);
  row5(out, name, "", va, vb, d, q, note(res, name, count(res, r <= 1)));
}

/* remember the first failed check's name; returns ok */
static int note(hx_cmp_result *res, const char *name, int ok) {
  if (!ok && !res->first_failure[0]) snprintf(res->first_failure, sizeof res->first_failure, "%s", name);
  return ok;
}

static void int_row(FILE *out, const char *name, long long a, long long b, hx_cmp_result *res) {
  if (a == 0 || b == 0) return; /* not given on one side */
  char va[40], vb[40];
  snprintf(va, sizeof va, "%lld", a);
  snprintf(vb, sizeof vb, "%lld", b);
  if (a != b) /* a different problem */
    appendf(res->problem_diff, sizeof res->problem_diff, "%s%s %lld vs %lld", res->problem_diff[0] ? ", " : "",
            name, a, b);
  row(out, name, "", va, vb, "", note(res, name, count(res, a == b)));
}

/* Iteration 0 within round-off (HX_CMP_R0_*): a check of its own, with
 * the allowance of the order of the sums only. */
static void r0_row(const hx_cmp_run *run, const hx_cmp_run *base, FILE *out, hx_cmp_result *res) {
  const double a = run->res[0], b = base->res[0], m = fmax(fabs(a), fabs(b));
  long long N = run->has_summary ? run->sum.st.dofs : 0;
  if (base->has_summary && base->sum.st.dofs > N) N = base->sum.st.dofs;
  double allowed = N > 0 ? HX_CMP_R0_ROUNDOFF_PER_DOF * (double)N * 0x1p-53 : HX_CMP_R0_NO_DOFS;
  if (allowed < HX_CMP_R0_MIN) allowed = HX_CMP_R0_MIN;
  const double rel = !isfinite(a) || !isfinite(b) ? INFINITY : m > 0 ? fabs(a - b) / m : 0;
  res->r0_rel = rel, res->r0_allowed = allowed;
  res->r0_fails = !(rel <= allowed);
  char va[40], vb[40], d[32], q[32], at[32];
  snprintf(at, sizeof at, "%d", run->it[0]);
  snprintf(va, sizeof va, "%.9e", a), snprintf(vb, sizeof vb, "%.9e", b);
  fmt_diff(d, sizeof d, a, b), fmt_ratio(q, sizeof q, ratio_of(rel, allowed));
  row5(out, "initial residual", at, va, vb, d, q, note(res, "initial residual", count(res, !res->r0_fails)));
}

/* Failed checks between two runs of the same problem: are they what another
 * partition does to a partition-dependent preconditioner (other rank counts,
 * the same preconditioner and tolerance, both converged, iterations and
 * error norms within the partition allowances)? Sets res->consistent and
 * prints the allowances' rows. */
static void consistent_check(const hx_cmp_run *run, const hx_cmp_run *base, const hx_cmp_opts *o, FILE *out,
                             hx_cmp_result *res) {
  const hx_run_stats *a = &run->sum.st, *b = &base->sum.st;
  if (!(a->ranks > 0 && b->ranks > 0 && a->ranks != b->ranks))
    return; /* the same partition: a real difference */
  if (!a->converged || !b->converged) return;
  if (strcmp(run->sum.preconditioner, base->sum.preconditioner) || run->sum.tol != base->sum.tol) return;
  const int na = hx_cmp_iterations(run), nb = hx_cmp_iterations(base), dn = na > nb ? na - nb : nb - na;
  const int nmax = na > nb ? na : nb;
  int slack = (int)ceil(HX_CMP_PART_SLACK_FRAC * nmax);
  if (slack < HX_CMP_PART_SLACK_MIN) slack = HX_CMP_PART_SLACK_MIN;
  char why[256];
  int l = snprintf(why, sizeof why, "%d vs %d ranks, %s, tol %g; iterations %d vs %d within %d", a->ranks,
                   b->ranks, run->sum.preconditioner[0] ? run->sum.preconditioner : "?", run->sum.tol, na, nb,
                   slack);
  int ok = dn <= slack;
  if (out) {
    char va[40], vb[40], q[32];
    fprintf(out, "\n  partition allowances (%d vs %d ranks, %s):\n", a->ranks, b->ranks,
            run->sum.preconditioner[0] ? run->sum.preconditioner : "?");
    snprintf(va, sizeof va, "%d", na);
    snprintf(vb, sizeof vb, "%d", nb);
    snprintf(q, sizeof q, "%d/%d", dn, slack);
    row(out, "iterations", "", va, vb, q, dn <= slack);
  }
  if (a->exact_known && b->exact_known) {
    const char *nm[2] = {"error_l2", "error_max"};
    const double ea[2] = {a->error_l2, a->error_max}, eb[2] = {b->error_l2, b->error_max};
    for (int k = 0; k < 2; k++) {
      const double m = fmax(fabs(ea[k]), fabs(eb[k]));
      const double allowed = fmax(o->consistent_error * m, o->error_floor);
      const double r =
          !isfinite(ea[k]) || !isfinite(eb[k]) ? INFINITY : ratio_of(fabs(ea[k] - eb[k]), allowed);
      ok = ok && r <= 1;
      if (out) {
        char va[40], vb[40], d[32], q[32];
        snprintf(va, sizeof va, "%.9e", ea[k]), snprintf(vb, sizeof vb, "%.9e", eb[k]);
        fmt_diff(d, sizeof d, ea[k], eb[k]), fmt_ratio(q, sizeof q, r);
        row5(out, nm[k], "", va, vb, d, q, r <= 1);
      }
      if (l > 0 && (size_t)l < sizeof why)
        l += snprintf(why + l, sizeof why - (size_t)l, ", %s %.2g%% apart within %g%%", nm[k],
                      m > 0 ? 100.0 * fabs(ea[k] - eb[k]) / m : 0.0, 100.0 * o->consistent_error);
    }
  }
  if (!ok) return;
  res->consistent = 1;
  snprintf(res->consistent_why, sizeof res->consistent_why, "%s", why);
}

void hx_cmp_verdict(const hx_cmp_result *res, char *buf, size_t len) {
  char sol[400], extra[1600] = "";
  solution_text(res, sol, sizeof sol);
  /* the solver keys and the solutions, after the verdict's own reason */
  if (res->solver_keys[0]) appendf(extra, sizeof extra, "; solver keys differ: %s", res->solver_keys);
  if (sol[0]) appendf(extra, sizeof extra, "; %s", sol);
  if (res->problem_diff[0])
    snprintf(buf, len, "different problems (%s%s): their histories are not comparable", res->problem_diff, extra);
  else if (!res->failures)
    snprintf(buf, len, "the same results within round-off (every check within its tolerance%s)", extra);
  else if (res->consistent)
    snprintf(buf, len,
             "consistent: the same problem, both converged to the tolerance (%s); not within round-off "
             "(first failed check: %s) because the preconditioner depends on the partition (--strict: "
             "round-off only)%s",
             res->consistent_why, res->first_failure[0] ? res->first_failure : "?", extra);
  else
    snprintf(buf, len, "different results for the same problem (first failed check: %s%s)",
             res->first_failure[0] ? res->first_failure : "?", extra);
}

int hx_compare_runs(const hx_cmp_run *run, const hx_cmp_run *base, const hx_cmp_opts *o, FILE *out,
                    hx_cmp_result *res) {
  HX_CHECK(run->n > 0 && base->n > 0, HX_ERR_ARG, "empty history");
  HX_CHECK(run->it[0] == base->it[0], HX_ERR_INPUT,
           "RUN starts at iteration %d, BASELINE at iteration %d: cannot compare them row by row", run->it[0],
           base->it[0]);
  memset(res, 0, sizeof *res);
  if (out) {
    fprintf(out, "hexcg compare\n");
    describe(out, "run:", run);
    describe(out, "baseline:", base);
    fprintf(out,
            "  rule:     residuals |r - b| <= rtol * max(b, floor * b_0) with rtol %.3g, floor %.3g "
            "(b: baseline);\n"
            "            iteration counts within %d; error norms within %.3g (relative) or %.3g "
            "(absolute); time_s not compared\n",
            o->rtol, o->floor, o->slack, o->error_rtol, o->error_floor);
    if (!o->strict)
      fprintf(out,
              "            other rank counts: consistent when both converged to the same tol, the iterations "
              "within max(%d, %g n), error norms within %.3g (relative)\n",
              HX_CMP_PART_SLACK_MIN, HX_CMP_PART_SLACK_FRAC, o->consistent_error);
    fprintf(out, "\n");
    fprintf(out, "  %-23s %9s  %-16s %-16s %9s %12s  %s\n", "check", "iteration", "run", "baseline", "|diff|",
            "diff/allowed", "result");
  }
  char va[40], vb[40], q[32];
  /* iteration counts */
  int na = hx_cmp_iterations(run), nb = hx_cmp_iterations(base);
  int dn = na > nb ? na - nb : nb - na;
  snprintf(va, sizeof va, "%d", na);
  snprintf(vb, sizeof vb, "%d", nb);
  snprintf(q, sizeof q, "%d/%d", dn, o->slack);
  res->iterations_ok = note(res, "iterations", count(res, dn <= o->slack));
  row(out, "iterations", "", va, vb, q, res->iterations_ok);

  /* the curves, up to the shorter one */
  int n = run->n < base->n ? run->n : base->n;
  hx_cmp_curve_compare(n, run->res, base->res, o, &res->res);
  hx_cmp_curve_compare(n, run->rel, base->rel, o, &res->rel);
  note(res, "residual", count(res, res->res.nfail == 0));
  note(res, "rel_residual", count(res, res->rel.nfail == 0));
  curve_rows(out, "residual", &res->res, run, run->res, base->res);
  curve_rows(out, "rel_residual", &res->rel, run, run->rel, base->rel);
  r0_row(run, base, out, res);
  if (out && run->n != base->n)
    fprintf(out, "  %-23s %9s  compared up to iteration %d (the shorter history)\n", "", "", run->it[n - 1]);

  /* the summaries */
  if (run->has_summary && base->has_summary) {
    const hx_run_stats *a = &run->sum.st, *b = &base->sum.st;
    res->summary_compared = 1;
    row(out, "converged", "", btxt(a->converged), btxt(b->converged), "",
        note(res, "converged", count(res, a->converged == b->converged)));
    row(out, "reason", "", a->reason, b->reason, "", note(res, "reason", count(res, !strcmp(a->reason, b->reason))));
    error_row(out, "error_l2", a->exact_known, a->error_l2, b->exact_known, b->error_l2, o, res);
    error_row(out, "error_max", a->exact_known, a->error_max, b->exact_known, b->error_max, o, res);
    int_row(out, "order", a->order, b->order, res);
    int_row(out, "elements", (long long)a->elements, (long long)b->elements, res);
    int_row(out, "dofs", (long long)a->dofs, (long long)b->dofs, res);
    if (run->is_time != base->is_time) { /* a time loop's history is per step, not one solve */
      appendf(res->problem_diff, sizeof res->problem_diff, "%s%s", res->problem_diff[0] ? ", " : "",
              run->is_time ? "a time-dependent run vs a steady one" : "a steady run vs a time-dependent one");
      row(out, "time-dependent", "", btxt(run->is_time), btxt(base->is_time), "",
          note(res, "time-dependent", count(res, 0)));
    }
  } else if (out) {
    fprintf(out, "  %-23s %9s  not compared: %s has no summary.yaml\n", "summary", "",
            !run->has_summary && !base->has_summary ? "neither side"
            : !run->has_summary                     ? "RUN"
                                                    : "BASELINE");
  }

  /* the effective cases: a problem key that differs is another problem */
  key_diffs(run, base, out, res);
  if (res->n_problem_keys) {
    note(res, "problem keys", count(res, 0));
    if (res->problem_keys[0])
      appendf(res->problem_diff, sizeof res->problem_diff, "%sproblem keys differ: %s",
              res->problem_diff[0] ? "; " : "", res->problem_keys);
  }
  /* iteration 0 beyond round-off: another problem unless the initial guesses differ */
  if (res->r0_fails) {
    const char *ga = hx_case_keys_get(&run->keys, "solver.initial_guess"),
               *gb = hx_case_keys_get(&base->keys, "solver.initial_guess");
    if (!ga) ga = hx_case_keys_get(&run->keys, "solver.initial_guess.file");
    if (!gb) gb = hx_case_keys_get(&base->keys, "solver.initial_guess.file");
    const int same_guess = (!ga && !gb) || (ga && gb && !strcmp(ga, gb));
    if (same_guess)
      appendf(res->problem_diff, sizeof res->problem_diff,
              "%sinitial residual %.9e vs %.9e, %.2g relative (round-off allows %.2g): another right-hand side, "
              "coefficient or mesh",
              res->problem_diff[0] ? "; " : "", run->res[0], base->res[0], res->r0_rel, res->r0_allowed);
  }

  /* the solutions */
  if (run->solution_path && base->solution_path) {
    HX_CALL(hx_solution_diff(run->solution_path, base->solution_path, &res->sol));
    res->solution_read = 1;
    if (out) {
      char t[400];
      solution_text(res, t, sizeof t);
      if (res->sol.compared)
        fprintf(out, "\n  solution u (solution.h5, %lld nodes matched by element id and coordinates): max |u - u'| "
                "%.3e, max |u'| %.3e\n    %s\n", res->sol.nodes, res->sol.max_abs, res->sol.max_u, t);
      else
        fprintf(out, "\n  solution u (solution.h5): %s\n", t);
    }
  } else if (out && (run->solution_path || base->solution_path)) {
    fprintf(out, "\n  solution u: not compared: %s has no solution.h5\n", run->solution_path ? "BASELINE" : "RUN");
  }

  /* the same problem on another partition, the same solver keys */
  if (run->has_summary && base->has_summary && res->failures && !res->problem_diff[0] && !res->n_solve_keys &&
      !res->r0_fails && !o->strict)
    consistent_check(run, base, o, out, res);
  return HX_SUCCESS;
}

void hx_check_bounds(const hx_cmp_run *run, const hx_bounds *b, FILE *out, hx_cmp_result *res) {
  char va[48], vb[48];
  const hx_run_stats *s = run->has_summary ? &run->sum.st : NULL;
  if (out) fprintf(out, "\n  %-23s %9s  %-16s %-16s\n", "bound", "", "run", "limit");
  if (b->max_iterations >= 0) {
    int it = hx_cmp_iterations(run);
    snprintf(va, sizeof va, "%d", it);
    snprintf(vb, sizeof vb, "<= %d", b->max_iterations);
    row(out, "max_iterations", "", va, vb, "", count(res, it <= b->max_iterations));
  }
  if (b->max_rel_residual > 0) {
    /* final residual / initial residual */
    double r0 = run->res[0], r = run->res[run->n - 1];
    double rel = s && run->sum.has_residuals ? s->rel_residual : (r0 > 0 ? r / r0 : 0);
    snprintf(va, sizeof va, "%.6e", rel);
    snprintf(vb, sizeof vb, "<= %.6e", b->max_rel_residual);
    row(out, "max_rel_residual", "", va, vb, "", count(res, rel <= b->max_rel_residual));
  }
  if (b->converged >= 0) {
    if (!s) {
      row(out, "converged", "", "no summary.yaml", btxt(b->converged), "", count(res, 0));
    } else {
      row(out, "converged", "", btxt(s->converged), btxt(b->converged), "",
          count(res, s->converged == b->converged));
    }
  }
  const double lim[2] = {b->max_error_l2, b->max_error_max};
  const char *nm[2] = {"max_error_l2", "max_error_max"};
  for (int k = 0; k < 2; k++) {
    if (!(lim[k] > 0)) continue;
    snprintf(vb, sizeof vb, "<= %.6e", lim[k]);
    if (!s || !s->exact_known) {
      row(out, nm[k], "", s ? "no error (no exact)" : "no summary.yaml", vb, "", count(res, 0));
      continue;
    }
    double e = k == 0 ? s->error_l2 : s->error_max;
    snprintf(va, sizeof va, "%.6e", e);
    row(out, nm[k], "", va, vb, "", count(res, e <= lim[k]));
  }
}
