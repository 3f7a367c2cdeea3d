/* The preconditioner types, one line each, in the order of
 * preconditioner.type's names (hexcg keys lists them so): HX_PC_TYPE(id)
 * for the record hx_pc_type_id (its pc_*.c file), whose name is "id".
 * No include guard: the includer defines HX_PC_TYPE. */
HX_PC_TYPE(none)
HX_PC_TYPE(jacobi)
HX_PC_TYPE(asm)
HX_PC_TYPE(pmg)
HX_PC_TYPE(auto)
HX_PC_TYPE(cheby)
