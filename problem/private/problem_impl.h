/* Private to problem/: the problem's struct, shared by its files. */
#ifndef HX_PROBLEM_IMPL_H
#define HX_PROBLEM_IMPL_H

#include "hx_problem.h"

/* The coefficient fields of one hx_problem_disc call: the discs made from
 * it borrow them (hx_disc_opts), so each call's set is kept until the
 * problem is destroyed. */
typedef struct hx_problem_coefset_s {
  struct hx_problem_coefset_s *next;
  hx_field *kfield, *lfield;
  const char **ksrc, **lsrc;
} hx_problem_coefset;

struct hx_problem_s {
  hx_mesh m;
  hx_backend b;
  MPI_Comm comm;
  int nt, nmat;
  hx_problem_desc desc;   /* its arrays point to the copies below */
  hx_problem_coef *kappa; /* nmat each (NULL in desc: kappa 1, lambda 0) */
  hx_problem_coef *lambda;
  hx_problem_bc *bcs;     /* nt: the tag's condition (copied) */
  int *has_bc;            /* nt: 1 where the description gives one */
  hx_field *ralpha;       /* nt: Robin alpha (fn NULL: not Robin) */
  const hx_problem_bc **bcp;
  hx_problem_coefset *sets;
  int singular;
  hx_problem_components comps;
};

/* The components with the elements marked in fixed: logged, kept in out
 * (may be NULL), refused when several with a floating one. Collective. */
int hx_problem_decide_components(hx_problem p, const int *fixed, hx_problem_components *out);
/* an hx_field with a constant value (ctx: a double) */
double hx_problem_const_fn(const void *ctx, double x, double y, double z);

#endif
