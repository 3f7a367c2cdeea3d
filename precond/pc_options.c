/* Preconditioner options: validation with case-file positions, defaults,
 * and the factory from options to hx_pc objects. */
#include <stdlib.h>
#include <string.h>

#include "precond_impl.h"

const char *const hx_pc_type_names[] = {"none", "jacobi"};
const int hx_pc_num_types = (int)(sizeof hx_pc_type_names / sizeof *hx_pc_type_names);
enum { PC_NONE = 0, PC_JACOBI = 1 };

static const char *const top_keys[] = {"type"};

int hx_pc_options_check(hx_opt *opts) {
  if (!opts) return HX_SUCCESS;
  HX_CALL(hx_opt_check_keys(opts, "preconditioner", top_keys, (int)(sizeof top_keys / sizeof *top_keys)));
  int type = PC_JACOBI;
  HX_CALL(hx_opt_enum(opts, "preconditioner", "type", hx_pc_type_names, hx_pc_num_types, &type));
  HX_CALL(hx_opt_set(opts, "type", hx_pc_type_names[type]));
  return HX_SUCCESS;
}

int hx_pc_create_from_options(hx_disc d, const hx_opt *opts, hx_pc *pc) {
  *pc = NULL;
  int type = PC_JACOBI;
  HX_CALL(hx_opt_enum(opts, "preconditioner", "type", hx_pc_type_names, hx_pc_num_types, &type));
  hx_op op = hx_disc_op(d);
  switch (type) {
    case PC_NONE: HX_CALL(hx_pc_create_identity(op, pc)); break;
    case PC_JACOBI: HX_CALL(hx_pc_create_jacobi(op, pc)); break;
    default: return HX_ERROR(HX_ERR_INPUT, "unknown preconditioner type %d", type);
  }
  return HX_SUCCESS;
}
