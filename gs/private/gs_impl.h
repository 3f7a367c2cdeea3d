/* Private to gs/: the gather-scatter handle and its per-backend entry
 * points (gs/cpu/gs_cpu.c, gs_f32_cpu.c; gs/cuda/gs_cuda.cu,
 * gs_f32_cuda.cu), built on the backend's internal interface
 * (kernels/private/backend_impl.h). No CUDA headers. */
#ifndef HX_GS_IMPL_H
#define HX_GS_IMPL_H

#include "backend_impl.h"
#include "hx_gs.h"
#include "hx_gs_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Target number of CSR entries one CUDA block of the gather loads into
 * shared memory (the NODES_PER_BLOCK of BS6); a row longer than this gets a
 * block of its own and is read from global memory. */
#define HX_GS_NODES_PER_BLOCK 1024
#define HX_GS_BLOCK 256
#define HX_GS_FIRST 0x80000000u
#define HX_GS_SKIP 0xffffffffu

struct hx_gs_s {
  hx_backend b;
  MPI_Comm comm;
  int rank, size;
  int64_t nl, ng, n_owned, n_shared, n_global;
  int64_t nnz;    /* L entries with a nonzero id */
  int64_t *gids;  /* host, ng */
  int32_t *h_map; /* host, nl: G index or -1 */

  /* backend memory */
  int32_t *d_map;         /* nl */
  int32_t *d_row;         /* ng+1: CSR row offsets of Z^T */
  int32_t *d_col;         /* nnz: L indices, increasing within a row */
  int32_t *d_bstart;      /* nblk+1 row offsets of the gather blocks (cuda) */
  int32_t nblk, nblk_int; /* blocks in all; blocks [0, nblk_int) cover the interior rows */
  double *d_mult, *d_invmult;
  /* CPU gather: one in-order pass over the L entries per chunk (fixed
   * contiguous L ranges, one per thread): acc[i] = G row of entry i, with
   * HX_GS_FIRST set on the first entry of its row; HX_GS_SKIP for id 0, for
   * shared rows and for "cut" rows (entries in more than one chunk). The
   * skipped rows (increasing; [0, cut_split) interior, then all shared rows)
   * are summed through the CSR. Both give exactly the bits of
   * hx_gs_row_sum (see hx_gs_acc_1). */
  int pull; /* 1: the CPU gather sums each row through the CSR instead
             * (no chunk plan): where L holds >= 2 entries per G row
             * (hx_gs_cpu_plan, docs/gather-scatter.md) */
  int nchunk;
  int64_t *chunk; /* nchunk+1 L offsets */
  uint32_t *acc;  /* nl */
  int64_t ncut, cut_split;
  int32_t *cut_rows; /* ncut */

  /* exchange pattern: neighbours in increasing rank order; slots
   * [nb_off[k], nb_off[k+1]) of the send and receive buffers belong to
   * neighbour k, ordered by global id (both sides agree on the order). */
  int nnb;
  int *nb_rank;
  int *nb_off; /* host, nnb+1 */
  int64_t nsend;
  int32_t *d_send_idx;           /* nsend: G index of each send slot */
  int32_t *d_comb_off;           /* n_shared+1: offsets into d_comb_pos */
  int32_t *d_comb_pos;           /* receive-buffer positions, per shared entry in rank order */
  int32_t *d_comb_self;          /* n_shared: position of this rank among the holders */
  double *d_sendbuf, *d_recvbuf; /* backend memory, nsend (cuda only; cpu uses h_*) */
  double *h_sendbuf, *h_recvbuf; /* host (pinned for cuda), nsend */
  /* cuda: the exchange runs on a queue of its own (docs/gather-scatter.md
   * "Exchange on cuda"): start records ev_ready on the default queue (the
   * caller's writes of the shared rows), cq waits for it, packs and copies
   * to h_sendbuf; finish posts the sends once cq has done that, waits for
   * MPI, copies h_recvbuf to the device and combines on cq, and records
   * ev_done, which the default queue waits for. ev_done also frees
   * h_recvbuf for the next exchange's receives. NULL on the cpu backends
   * (everything runs in the calling thread, as before). */
  hx_queue cq;
  hx_event ev_ready, ev_done;
  MPI_Request *reqs;             /* 2*nnb */
  MPI_Status *stats;             /* 2*nnb (not MPI_STATUSES_IGNORE: gcc's -Wstringop-overflow trips on it) */
  int in_flight;
  double *flight_g;
  int flight_op;
  int flight_prec; /* hx_precision of the exchange in flight (gs_prec.c); 0 = HX_F64 */
  int flight_sent; /* the sends of the exchange in flight are posted */

  /* Dirichlet mask */
  int has_mask;
  int l_pending; /* hx_gs_create_deferred: the L side (map, CSR, plan) not built yet */
  int dropped;   /* hx_gs_drop_maps: ids, multiplicities and the scatter map freed */
  int64_t n_masked;
  double *d_mask;        /* ng */
  int32_t *d_masked_idx; /* n_masked */
};

/* HX_ERR_ARG (naming what) once hx_gs_drop_maps freed the maps what needs */
int hx_gs_maps_kept(hx_gs gs, const char *what);

/* the gather blocks [blk0, blk1) of the CUDA gather that cover part's rows */
static inline int32_t hx_gs_blk0(const struct hx_gs_s *gs, hx_gs_part part) {
  return part == HX_GS_SHARED ? gs->nblk_int : 0;
}
static inline int32_t hx_gs_blk1(const struct hx_gs_s *gs, hx_gs_part part) {
  return part == HX_GS_INTERIOR ? gs->nblk_int : gs->nblk;
}

/* The exchange of gs.c for both precisions (f32: floats through the same
 * buffers, gs_prec.c's FP32 exchange). start posts the receives and, on the
 * cpu backends, packs and posts the sends; on cuda it only queues the pack
 * and the copy to the host on gs->cq and returns. post posts the sends of a
 * started exchange if not yet done (cuda: waits for cq's pack and copy
 * only). finish posts (if needed), waits for MPI and combines (cuda: queued
 * on cq, the default queue made to wait for it; no host wait). The argument
 * checks are the callers'. */
int hx_gs_xstart(hx_gs gs, int f32, void *d_g, hx_gs_op op);
int hx_gs_xpost(hx_gs gs);
int hx_gs_xfinish(hx_gs gs, int f32, void *d_g, hx_gs_op op);

/* CPU implementations (gs/cpu/gs_cpu.c) */
void hx_cpu_gs_scatter(int64_t nl, const int32_t *map, const double *g, double *l);
/* in-order accumulation over the chunks (interior rows that are not cut) */
void hx_cpu_gs_gather_acc(int nchunk, const int64_t *chunk, const uint32_t *acc, const double *l, double *g);
/* every row in [r0, r1) through the CSR (the pull gather) */
void hx_cpu_gs_gather_range(int64_t r0, int64_t r1, const int32_t *row, const int32_t *col, const double *l,
                            double *g);
/* CSR sums of the listed rows rows[0..n) */
void hx_cpu_gs_gather_rows(int64_t n, const int32_t *rows, const int32_t *row, const int32_t *col,
                           const double *l, double *g);
void hx_cpu_gs_pack(int64_t n, const int32_t *idx, const double *g, double *buf);
void hx_cpu_gs_combine(int op, int64_t n_shared, double *g_shared, const int32_t *off, const int32_t *pos,
                       const int32_t *self, const double *recv);
void hx_cpu_gs_zero_idx(int64_t n, const int32_t *idx, double *g);
/* FP32 twins (cpu/gs_f32_cpu.c) */
void hx_cpu_gs_scatter_f32(int64_t nl, const int32_t *map, const float *g, float *l);
void hx_cpu_gs_gather_acc_f32(int nchunk, const int64_t *chunk, const uint32_t *acc, const float *l,
                              float *g);
void hx_cpu_gs_gather_range_f32(int64_t r0, int64_t r1, const int32_t *row, const int32_t *col,
                                const float *l, float *g);
void hx_cpu_gs_gather_rows_f32(int64_t n, const int32_t *rows, const int32_t *row, const int32_t *col,
                               const float *l, float *g);
void hx_cpu_gs_pack_f32(int64_t n, const int32_t *idx, const float *g, float *buf);
void hx_cpu_gs_combine_f32(int op, int64_t n_shared, float *g_shared, const int32_t *off, const int32_t *pos,
                           const int32_t *self, const float *recv);
void hx_cpu_gs_zero_idx_f32(int64_t n, const int32_t *idx, float *g);

#ifdef HEXCG_HAVE_CUDA
/* CUDA implementations (gs/cuda/gs_cuda.cu), queued on the backend stream */
int hx_cuda_gs_scatter(hx_backend b, int64_t nl, const int32_t *map, const double *g, double *l);
/* blocks [blk0, blk1) of the row blocking bstart */
int hx_cuda_gs_gather(hx_backend b, int32_t blk0, int32_t blk1, const int32_t *bstart, const int32_t *row,
                      const int32_t *col, const double *l, double *g);
/* pack and combine of the exchange, queued on q (the handle's exchange
 * queue); the _f32 twins are in cuda/gs_f32_cuda.cu */
int hx_cuda_gs_pack_q(hx_queue q, int64_t n, const int32_t *idx, const double *g, double *buf);
int hx_cuda_gs_combine_q(hx_queue q, int op, int64_t n_shared, double *g_shared, const int32_t *off,
                         const int32_t *pos, const int32_t *self, const double *recv);
int hx_cuda_gs_pack_f32_q(hx_queue q, int64_t n, const int32_t *idx, const float *g, float *buf);
int hx_cuda_gs_combine_f32_q(hx_queue q, int op, int64_t n_shared, float *g_shared, const int32_t *off,
                             const int32_t *pos, const int32_t *self, const float *recv);
int hx_cuda_gs_zero_idx(hx_backend b, int64_t n, const int32_t *idx, double *g);
/* FP32 twins (cuda/gs_f32_cuda.cu) */
int hx_cuda_gs_scatter_f32(hx_backend b, int64_t nl, const int32_t *map, const float *g, float *l);
int hx_cuda_gs_gather_f32(hx_backend b, int32_t blk0, int32_t blk1, const int32_t *bstart, const int32_t *row,
                          const int32_t *col, const float *l, float *g);
int hx_cuda_gs_pack_f32(hx_backend b, int64_t n, const int32_t *idx, const float *g, float *buf);
int hx_cuda_gs_combine_f32(hx_backend b, int op, int64_t n_shared, float *g_shared, const int32_t *off,
                           const int32_t *pos, const int32_t *self, const float *recv);
int hx_cuda_gs_zero_idx_f32(hx_backend b, int64_t n, const int32_t *idx, float *g);
#endif

#ifdef __cplusplus
}
#endif
#endif
