/* The preconditioner's report tree (hx_pc_report, solver/pc.c), as hexcg run
 * builds it for summary.yaml, on any rank count:
 *   - every node's common keys; apply_s, setup_s the max over ranks of the
 *     node's own stats (a rank made slower by a sleep in its setup sets them)
 *   - every rank gets the same tree (text compared with rank 0's)
 *   - pmg: one entry per level with the level's order and global DOFs
 *     ((N p + 1)^3 on an N^3 box), eigenvalue estimate > 0, rho >= it;
 *     the Q1 coarse level's rows (N - 1)^3 (all-Dirichlet box)
 *   - a preconditioner with children lists their trees under parts
 *   - the helpers refuse a keyed entry in a list and an item in a map */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"
#include "hx_solver.h"
#include "hx_test.h"
#include "hx_test_pc.h"

enum { N = 3 };

static int make_pc(hx_disc d, const char *yaml, hx_pc *pc) {
  HX_TCALL(hx_test_pc_create(d, yaml, "--pc", pc));
  return 0;
}

static double num(const hx_opt *map, const char *key) {
  const hx_opt *v = hx_opt_get(map, key);
  if (!v || v->kind != HX_OPT_SCALAR) return NAN;
  char *end;
  const double x = strtod(v->value, &end);
  return *end ? NAN : x;
}

/* the tree as text, and whether it equals rank 0's */
static int same_on_all_ranks(const hx_opt *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  hx_opt_write_yaml(t, 0, f);
  fclose(f);
  long n = (long)len;
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  char *ref = malloc((size_t)n + 1);
  if (!ref) return 0;
  memcpy(ref, buf, len < (size_t)n ? len : (size_t)n);
  MPI_Bcast(ref, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = (size_t)n == len && !memcmp(ref, buf, len), all;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  free(ref), free(buf);
  return all;
}

/* the common keys of a node, its seconds against the max over ranks of pc's stats */
static void check_node(hx_pc pc, const hx_opt *t, const char *type, int64_t applies) {
  HX_ASSERT(t && t->kind == HX_OPT_MAP, "%s: the tree is not a map", type);
  const hx_opt *ty = hx_opt_get(t, "type"), *de = hx_opt_get(t, "description");
  HX_ASSERT(ty && !strcmp(ty->value, type), "type %s, want %s", ty ? ty->value : "(none)", type);
  char view[512];
  hx_pc_view(pc, view, sizeof view);
  HX_ASSERT(de && !strncmp(view, de->value, strlen(de->value)), "description '%s' is not the view '%s'",
            de ? de->value : "(none)", view);
  HX_ASSERT(num(t, "applies") == (double)applies, "%s: applies %g, want %lld", type, num(t, "applies"),
            (long long)applies);
  hx_pc_stats s;
  hx_pc_get_stats(pc, &s);
  double v[2] = {s.t_setup, s.applies ? s.t_apply / (double)s.applies : 0.0};
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  HX_ASSERT(fabs(num(t, "setup_s") - v[0]) <= 1e-6 * v[0], "%s: setup_s %g, max over ranks %g", type,
            num(t, "setup_s"), v[0]);
  HX_ASSERT(fabs(num(t, "apply_s") - v[1]) <= 1e-6 * v[1], "%s: apply_s %g, max over ranks %g", type,
            num(t, "apply_s"), v[1]);
}

/* a shell holding jacobi as its child: z = jacobi(r); rank 1 sleeps in its setup */
typedef struct {
  hx_pc inner;
  int rank;
} wrap;
static int wrap_setup(void *ctx) {
  if (((wrap *)ctx)->rank == 1) usleep(200000);
  return HX_SUCCESS;
}
static int wrap_apply(void *ctx, const double *r, double *z) {
  HX_CALL(hx_pc_apply(((wrap *)ctx)->inner, r, z));
  return HX_SUCCESS;
}
static int wrap_report(void *ctx, hx_opt *node) {
  (void)ctx;
  hx_opt *m;
  HX_CALL(hx_pc_report_map(node, "own", &m));
  HX_CALL(hx_pc_report_text(m, "what", "a: b # not a comment"));
  HX_CALL(hx_pc_report_real(m, "wait_s", 0.25)); /* the same on every rank */
  return HX_SUCCESS;
}
static int wrap_destroy(void *ctx) {
  free(ctx);
  return HX_SUCCESS;
}

int main(int argc, char **argv) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &(int){0});
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hx_backend b = NULL;
  hx_mesh m = NULL;
  hx_disc d = NULL;
  hx_pc pmg = NULL, jac = NULL, shell = NULL;
  hx_opt *t = NULL;
  double *r = NULL, *z = NULL;
  if (hx_backend_create("cpu", &b)) goto fail;
  hx_mesh_box_opts mo;
  hx_mesh_box_opts_default(&mo);
  mo.nx = mo.ny = mo.nz = N;
  if (hx_mesh_create_box(MPI_COMM_WORLD, &mo, &m)) goto fail;
  hx_disc_opts o = hx_disc_opts_default();
  o.p = 5;
  if (hx_disc_create(m, b, &o, &d)) goto fail;
  const int64_t ng = hx_op_size(hx_disc_op(d));
  const size_t bytes = sizeof(double) * (size_t)(ng > 0 ? ng : 1);
  if (hx_mem_alloc(b, bytes, (void **)&r) || hx_mem_alloc(b, bytes, (void **)&z)) goto fail;
  {
    double *h = malloc(bytes);
    for (int64_t i = 0; i < ng; i++) h[i] = 1.0 + 0.1 * (double)(i % 7);
    hx_mem_to_device(b, r, h, bytes);
    free(h);
    hx_gs_apply_mask(hx_disc_gs(d), r);
  }

  /* pmg: the per-level figures */
  if (make_pc(d, "{type: pmg, levels: [5, 3, 1]}", &pmg)) goto fail;
  for (int k = 0; k < 3; k++) HX_TCALL(hx_pc_apply(pmg, r, z));
  HX_TCALL(hx_pc_report(pmg, MPI_COMM_WORLD, &t));
  check_node(pmg, t, "pmg", 3);
  HX_ASSERT(same_on_all_ranks(t), "pmg: the ranks' trees differ");
  {
    const hx_opt *lv = hx_opt_get(t, "levels");
    HX_ASSERT(lv && lv->kind == HX_OPT_LIST && lv->n == 2, "pmg: levels is not a list of 2 (orders 5, 3)");
    const int orders[2] = {5, 3};
    for (int l = 0; lv && l < lv->n && l < 2; l++) {
      const hx_opt *L = lv->items[l];
      const double want = pow(N * orders[l] + 1, 3);
      HX_ASSERT(num(L, "order") == orders[l], "level %d: order %g, want %d", l, num(L, "order"), orders[l]);
      HX_ASSERT(num(L, "dofs") == want, "level %d: dofs %g, want %g", l, num(L, "dofs"), want);
      const double e = num(L, "eig_estimate"), rho = num(L, "rho");
      HX_ASSERT(e > 0 && rho >= e, "level %d: eig_estimate %g, rho %g", l, e, rho);
      HX_ASSERT(num(L, "setup_s") > 0 && num(L, "smooth_s") > 0 && num(L, "transfer_s") >= 0,
                "level %d: setup %g, smoothing %g, transfers %g s", l, num(L, "setup_s"), num(L, "smooth_s"),
                num(L, "transfer_s"));
      const hx_opt *sm = hx_opt_get(L, "smoother");
      HX_ASSERT(sm && strstr(sm->value, "asm"), "level %d: smoother '%s'", l, sm ? sm->value : "(none)");
    }
    HX_ASSERT(num(hx_opt_get(t, "levels")->items[0], "dofs") == (double)hx_disc_num_dofs(d),
              "level 0 DOFs differ from the discretisation's");
    const hx_opt *c = hx_opt_get(t, "coarse");
    HX_ASSERT(c && num(c, "order") == 1 && num(c, "rows") == (N - 1) * (N - 1) * (N - 1) &&
                  num(c, "amg_levels") >= 1,
              "pmg: coarse order %g, rows %g, AMG levels %g", num(c, "order"), num(c, "rows"),
              num(c, "amg_levels"));
    HX_ASSERT(!hx_opt_get(t, "parts"), "pmg has no children, but the tree has parts");
  }
  hx_opt_free(&t);

  /* a shell with a child: parts, and the max over ranks of a setup that
   * is slower on rank 1 */
  if (make_pc(d, "{type: jacobi}", &jac)) goto fail;
  {
    wrap *w = calloc(1, sizeof *w);
    w->inner = jac, w->rank = rank;
    const hx_pc_ops ops = {.type = "wrap",
                           .setup = wrap_setup,
                           .apply = wrap_apply,
                           .report = wrap_report,
                           .destroy = wrap_destroy};
    HX_TCALL(hx_pc_create_shell(hx_disc_op(d), &ops, w, 1, &jac, &shell));
  }
  for (int k = 0; k < 2; k++) HX_TCALL(hx_pc_apply(shell, r, z));
  HX_TCALL(hx_pc_report(shell, MPI_COMM_WORLD, &t));
  check_node(shell, t, "wrap", 2);
  HX_ASSERT(same_on_all_ranks(t), "wrap: the ranks' trees differ");
  if (size > 1)
    HX_ASSERT(num(t, "setup_s") >= 0.2, "setup_s %g: not rank 1's 0.2 s sleep", num(t, "setup_s"));
  {
    const hx_opt *own = hx_opt_get(t, "own"), *what = hx_opt_get(own, "what");
    HX_ASSERT(what && !strcmp(what->value, "a: b # not a comment") && num(own, "wait_s") == 0.25,
              "wrap: its own figures are not in the tree");
    const hx_opt *parts = hx_opt_get(t, "parts");
    HX_ASSERT(parts && parts->kind == HX_OPT_LIST && parts->n == 1, "wrap: parts is not a list of one");
    if (parts && parts->n == 1) {
      check_node(jac, parts->items[0], "jacobi", 2);
      const hx_opt *J = parts->items[0];
      HX_ASSERT(num(J, "dofs") == (double)hx_disc_num_dofs(d), "jacobi: dofs %g, want %lld", num(J, "dofs"),
                (long long)hx_disc_num_dofs(d));
      HX_ASSERT(num(J, "diagonal_min") > 0 && num(J, "diagonal_min") <= num(J, "diagonal_max"),
                "jacobi: diagonal range [%g, %g]", num(J, "diagonal_min"), num(J, "diagonal_max"));
    }
  }
  hx_opt_free(&t);

  /* the helpers refuse the wrong kind of node */
  {
    hx_opt *map = hx_opt_new(HX_OPT_MAP, NULL, NULL), *list;
    HX_TCALL(hx_pc_report_list(map, "l", &list));
    HX_ASSERT(hx_pc_report_int(list, "k", 1) == HX_ERR_ARG, "a keyed entry in a list was accepted");
    HX_ASSERT(hx_pc_report_real(map, NULL, 1.0) == HX_ERR_ARG, "an item without key in a map was accepted");
    HX_ASSERT(hx_pc_report_text(hx_opt_get(map, "l") ? map->items[0] : NULL, NULL, "x") == HX_SUCCESS,
              "an item in a list was refused");
    hx_error_clear();
    HX_ASSERT(map->n == 1 && list->n == 1 && !strcmp(list->items[0]->value, "x"), "the map holds %d entries",
              map->n);
    hx_opt_free(&map);
  }
  goto done;
fail:
  hx_error_print(stderr, rank, 1);
  hx_test_failures_++;
done:
  hx_opt_free(&t);
  hx_pc_destroy(&shell);
  hx_pc_destroy(&jac);
  hx_pc_destroy(&pmg);
  if (b) hx_mem_free(b, (void **)&r), hx_mem_free(b, (void **)&z);
  hx_disc_destroy(&d);
  hx_mesh_destroy(&m);
  hx_backend_destroy(&b);
  int fails = hx_test_result(), all;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all;
}
