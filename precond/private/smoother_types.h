/* The inner preconditioners S of pmg's smoothers, one line each:
 * HX_SMOOTHER(ID, id) for the record hx_smoother_id (smoother.c) and the
 * enum value HX_SMOOTH_ID; smoother.type names it as id (plain) or
 * cheby-id (in a Chebyshev polynomial), in this order.
 * No include guard: the includer defines HX_SMOOTHER. */
HX_SMOOTHER(JACOBI, jacobi)
HX_SMOOTHER(ASM, asm)
HX_SMOOTHER(RAS, ras)
