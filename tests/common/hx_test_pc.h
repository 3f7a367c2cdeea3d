/* A preconditioner for the tests (header-only): given by its case-file
 * options in flow style, checked as a case's are. */
#ifndef HX_TEST_PC_H
#define HX_TEST_PC_H

#include "hx_disc.h"
#include "hx_io.h"
#include "hx_precond.h"

/* The preconditioner of d that the options yaml (where: their source, for
 * messages) describe, in *pc: an hexcg error code. */
static inline int hx_test_pc_create(hx_disc d, const char *yaml, const char *where, hx_pc *pc) {
  hx_opt *opts = NULL;
  int e = hx_opt_parse_yaml(yaml, where, &opts);
  if (!e) e = hx_pc_options_check(opts);
  if (!e) e = hx_pc_create_from_options(d, opts, pc);
  hx_opt_free(&opts);
  return e;
}

#endif
