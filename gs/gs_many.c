/* The exchange of nk G-vectors at once (hx_gs_exchange_many_p, hx_gs.h):
 * one message per neighbour and direction for all nk columns, each column
 * combined as its single exchange combines it (the same bits). The message
 * to neighbour k holds the nk columns' slots [nb_off[k], nb_off[k+1]) one
 * column after the other, so a column's part of the receive buffer is
 * unpacked into the single exchange's slot layout before the combine. */
#include <stdlib.h>
#include <string.h>

#include "gs_impl.h"

#define HX_GS_TAG_MANY 4713

int hx_gs_exchange_many_p(hx_gs gs, hx_precision prec, int nk, void *const *d_g, hx_gs_op op) {
  HX_CHECK(gs, HX_ERR_ARG, "gather-scatter: NULL handle");
  HX_CHECK_PREC(prec);
  HX_CHECK(nk >= 0 && (nk == 0 || d_g), HX_ERR_ARG, "gather-scatter: %d columns, or a NULL column array", nk);
  HX_CHECK(op == HX_GS_ADD || op == HX_GS_MIN || op == HX_GS_MAX, HX_ERR_ARG, "gather-scatter: unknown op %d",
           (int)op);
  HX_CHECK(!gs->in_flight, HX_ERR_ARG, "gather-scatter: an exchange is already in flight on this handle");
  for (int c = 0; c < nk; c++) HX_CHECK(d_g[c], HX_ERR_ARG, "gather-scatter: column %d is NULL", c);
  if (nk == 0 || gs->nnb == 0) return HX_SUCCESS;
  /* cuda: the single exchange per column (its pack and combine are device
   * kernels on the exchange queue; the many-column form is the cpu's) */
  if (gs->cq || nk == 1) {
    for (int c = 0; c < nk; c++) HX_CALL(hx_gs_exchange_p(gs, prec, d_g[c], op));
    return HX_SUCCESS;
  }
  const int f32 = prec == HX_F32;
  const size_t es = f32 ? sizeof(float) : sizeof(double), ns = (size_t)gs->nsend;
  char *sbuf = malloc(es * ns * (size_t)nk + 1), *rbuf = malloc(es * ns * (size_t)nk + 1), *col = malloc(es * ns + 1);
  MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)gs->nnb);
  MPI_Status *stats = malloc(sizeof(MPI_Status) * 2 * (size_t)gs->nnb);
  if (!sbuf || !rbuf || !col || !reqs || !stats) {
    free(sbuf), free(rbuf), free(col), free(reqs), free(stats);
    return HX_ERROR(HX_ERR_MEM, "gather-scatter: out of memory for the buffers of a %d-column exchange", nk);
  }
  int err = HX_SUCCESS;
  for (int c = 0; c < nk && !err; c++) {
    const hx_karg g = HX_KARG(d_g[c], gs->ng, es, "G-vector column");
    err = hx_kernel_args(gs->b, "gs exchange (k vectors)", 1, &g);
  }
  int posted = 0;
  for (int k = 0; k < gs->nnb && !err; k++, posted++) {
    const int len = gs->nb_off[k + 1] - gs->nb_off[k];
    if (MPI_Irecv(rbuf + es * (size_t)gs->nb_off[k] * nk, len * nk, f32 ? MPI_FLOAT : MPI_DOUBLE, gs->nb_rank[k],
                  HX_GS_TAG_MANY, gs->comm, &reqs[k]) != MPI_SUCCESS)
      err = HX_ERROR(HX_ERR_MPI, "gather-scatter: MPI_Irecv failed");
  }
  if (!err) {
    HX_MC_SCOPE(gs->b);
    for (int k = 0; k < gs->nnb; k++) {
      const int o = gs->nb_off[k], len = gs->nb_off[k + 1] - o;
      for (int c = 0; c < nk; c++) {
        char *dst = sbuf + es * ((size_t)o * nk + (size_t)c * len);
        if (f32) hx_cpu_gs_pack_f32(len, gs->d_send_idx + o, (const float *)d_g[c], (float *)dst);
        else hx_cpu_gs_pack(len, gs->d_send_idx + o, (const double *)d_g[c], (double *)dst);
      }
    }
  }
  int sent = 0;
  for (int k = 0; k < gs->nnb && !err; k++, sent++) {
    const int len = gs->nb_off[k + 1] - gs->nb_off[k];
    if (MPI_Isend(sbuf + es * (size_t)gs->nb_off[k] * nk, len * nk, f32 ? MPI_FLOAT : MPI_DOUBLE, gs->nb_rank[k],
                  HX_GS_TAG_MANY, gs->comm, &reqs[gs->nnb + k]) != MPI_SUCCESS)
      err = HX_ERROR(HX_ERR_MPI, "gather-scatter: MPI_Isend failed");
  }
  if (posted) MPI_Waitall(posted, reqs, stats);
  if (sent) MPI_Waitall(sent, reqs + gs->nnb, stats + gs->nnb);
  if (!err) {
    HX_MC_SCOPE(gs->b);
    const int64_t s0 = gs->ng - gs->n_shared;
    for (int c = 0; c < nk; c++) {
      for (int k = 0; k < gs->nnb; k++) {
        const int o = gs->nb_off[k], len = gs->nb_off[k + 1] - o;
        memcpy(col + es * (size_t)o, rbuf + es * ((size_t)o * nk + (size_t)c * len), es * (size_t)len);
      }
      if (f32)
        hx_cpu_gs_combine_f32((int)op, gs->n_shared, (float *)d_g[c] + s0, gs->d_comb_off, gs->d_comb_pos,
                              gs->d_comb_self, (const float *)col);
      else
        hx_cpu_gs_combine((int)op, gs->n_shared, (double *)d_g[c] + s0, gs->d_comb_off, gs->d_comb_pos,
                          gs->d_comb_self, (const double *)col);
    }
  }
  free(sbuf), free(rbuf), free(col), free(reqs), free(stats);
  if (err) return hx_error_trace(__FILE__, __LINE__, __func__, err);
  return HX_SUCCESS;
}
