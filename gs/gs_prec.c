/* Gather-scatter with a precision parameter (hx_kernels_prec.h): HX_F64 calls
 * the functions of gs.c; HX_F32 runs the float loops (cpu/gs_f32_cpu.c,
 * cuda/gs_f32_cuda.cu) on the index structures of the same handle, and the
 * exchange sends floats through the handle's message buffers (sized for
 * doubles, so floats fit). */
#include "gs_impl.h"

#define HX_PREC_OK(prec) HX_CHECK_PREC(prec)

int hx_gs_scatter_p(hx_gs gs, hx_precision prec, const void *d_g, void *d_l) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_CHECK(!gs->l_pending, HX_ERR_ARG, "gather-scatter: scatter before the L side was built (hx_gs_finish_l)");
  HX_PREC_OK(prec);
  if (prec == HX_F64) {
    HX_CALL(hx_gs_scatter(gs, (const double *)d_g, (double *)d_l));
    return HX_SUCCESS;
  }
  HX_CALL(hx_gs_maps_kept(gs, "scatter"));
  if (gs->nl == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(gs->b, "gs scatter",
                     hx_cuda_gs_scatter_f32(gs->b, gs->nl, gs->d_map, (const float *)d_g, (float *)d_l),
                     hx_cpu_gs_scatter_f32(gs->nl, gs->d_map, (const float *)d_g, (float *)d_l),
                     HX_KARG(d_g, gs->ng, sizeof(float), "G-vector"), HX_KARG(d_l, gs->nl, sizeof(float), "L-vector"));
  return HX_SUCCESS;
}

int hx_gs_gather_part_p(hx_gs gs, hx_precision prec, hx_gs_part part, const void *d_l, void *d_g) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_CHECK(!gs->l_pending, HX_ERR_ARG, "gather-scatter: gather before the L side was built (hx_gs_finish_l)");
  HX_PREC_OK(prec);
  if (prec == HX_F64) {
    HX_CALL(hx_gs_gather_part(gs, part, (const double *)d_l, (double *)d_g));
    return HX_SUCCESS;
  }
  HX_CHECK(part == HX_GS_ALL || part == HX_GS_SHARED || part == HX_GS_INTERIOR, HX_ERR_ARG,
           "gather-scatter: unknown part %d", (int)part);
  const int64_t s0 = gs->ng - gs->n_shared;
  const int64_t r0 = part == HX_GS_SHARED ? s0 : 0, r1 = part == HX_GS_INTERIOR ? s0 : gs->ng;
  if (r1 <= r0) return HX_SUCCESS;
  const float *l = (const float *)d_l;
  float *g = (float *)d_g;
  HX_KERNEL_DISPATCH(gs->b, "gs gather",
                     hx_cuda_gs_gather_f32(gs->b, hx_gs_blk0(gs, part), hx_gs_blk1(gs, part), gs->d_bstart,
                                           gs->d_row, gs->d_col, l, g),
                     (void)0, HX_KARG(d_l, gs->nl, sizeof(float), "L-vector"),
                     HX_KARG(d_g, gs->ng, sizeof(float), "G-vector")); /* the CPU loops follow, in the scope */
  if (gs->pull) {
    hx_cpu_gs_gather_range_f32(r0, r1, gs->d_row, gs->d_col, l, g);
    return HX_SUCCESS;
  }
  if (part != HX_GS_SHARED) hx_cpu_gs_gather_acc_f32(gs->nchunk, gs->chunk, gs->acc, l, g);
  const int64_t c0 = part == HX_GS_SHARED ? gs->cut_split : 0;
  const int64_t c1 = part == HX_GS_INTERIOR ? gs->cut_split : gs->ncut;
  if (c1 > c0) hx_cpu_gs_gather_rows_f32(c1 - c0, gs->cut_rows + c0, gs->d_row, gs->d_col, l, g);
  return HX_SUCCESS;
}

int hx_gs_gather_p(hx_gs gs, hx_precision prec, const void *d_l, void *d_g) {
  HX_MC_SCOPE(gs->b);
  HX_CALL(hx_gs_gather_part_p(gs, prec, HX_GS_ALL, d_l, d_g));
  return HX_SUCCESS;
}

int hx_gs_exchange_start_p(hx_gs gs, hx_precision prec, void *d_g, hx_gs_op op) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_PREC_OK(prec);
  if (prec == HX_F64) {
    HX_CALL(hx_gs_exchange_start(gs, (double *)d_g, op));
    return HX_SUCCESS;
  }
  HX_CHECK(!gs->in_flight, HX_ERR_ARG, "gather-scatter: an exchange is already in flight on this handle");
  HX_CHECK(op == HX_GS_ADD || op == HX_GS_MIN || op == HX_GS_MAX, HX_ERR_ARG, "gather-scatter: unknown op %d",
           (int)op);
  HX_CALL(hx_gs_xstart(gs, 1, d_g, op)); /* gs.c: the same path as FP64, floats */
  return HX_SUCCESS;
}

int hx_gs_exchange_finish_p(hx_gs gs, hx_precision prec, void *d_g, hx_gs_op op) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_PREC_OK(prec);
  if (prec == HX_F64) {
    HX_CALL(hx_gs_exchange_finish(gs, (double *)d_g, op));
    return HX_SUCCESS;
  }
  HX_CHECK(gs->in_flight, HX_ERR_ARG, "gather-scatter: exchange_finish without exchange_start");
  HX_CHECK(gs->flight_prec == (int)HX_F32, HX_ERR_ARG,
           "gather-scatter: FP32 exchange_finish of an FP64 exchange");
  HX_CHECK((double *)d_g == gs->flight_g && (int)op == gs->flight_op, HX_ERR_ARG,
           "gather-scatter: exchange_finish with a different vector or op than exchange_start");
  HX_CALL(hx_gs_xfinish(gs, 1, d_g, op));
  return HX_SUCCESS;
}

int hx_gs_exchange_p(hx_gs gs, hx_precision prec, void *d_g, hx_gs_op op) {
  HX_MC_SCOPE(gs->b);
  HX_CALL(hx_gs_exchange_start_p(gs, prec, d_g, op));
  HX_CALL(hx_gs_exchange_finish_p(gs, prec, d_g, op));
  return HX_SUCCESS;
}

int hx_gs_assemble_p(hx_gs gs, hx_precision prec, const void *d_l, void *d_g) {
  HX_MC_SCOPE(gs->b);
  HX_CALL(hx_gs_gather_p(gs, prec, d_l, d_g));
  HX_CALL(hx_gs_exchange_p(gs, prec, d_g, HX_GS_ADD));
  return HX_SUCCESS;
}

int hx_gs_dot_p(hx_gs gs, hx_precision prec, const void *d_x, const void *d_y, double *result) {
  HX_MC_SCOPE(gs->b);
  HX_CHECK(gs && result, HX_ERR_ARG, "gather-scatter: NULL argument");
  HX_PREC_OK(prec);
  if (prec == HX_F64) {
    HX_CALL(hx_gs_dot(gs, (const double *)d_x, (const double *)d_y, result));
    return HX_SUCCESS;
  }
  double loc = 0.0;
  HX_CALL(hx_array_dot_p(gs->b, prec, gs->n_owned, d_x, d_y, &loc));
  HX_MPI(MPI_Allreduce(&loc, result, 1, MPI_DOUBLE, MPI_SUM, gs->comm));
  return HX_SUCCESS;
}

int hx_gs_apply_mask_p(hx_gs gs, hx_precision prec, void *d_g) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_PREC_OK(prec);
  if (prec == HX_F64) {
    HX_CALL(hx_gs_apply_mask(gs, (double *)d_g));
    return HX_SUCCESS;
  }
  if (!gs->has_mask || gs->n_masked == 0) return HX_SUCCESS;
  HX_KERNEL_DISPATCH(gs->b, "gs mask", hx_cuda_gs_zero_idx_f32(gs->b, gs->n_masked, gs->d_masked_idx, (float *)d_g),
                     hx_cpu_gs_zero_idx_f32(gs->n_masked, gs->d_masked_idx, (float *)d_g),
                     HX_KARG(d_g, gs->ng, sizeof(float), "G-vector"));
  return HX_SUCCESS;
}
