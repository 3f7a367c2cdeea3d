/* The assembled operator y = M Z^T A_L Z x (see hx_disc.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx_disc.h"

/* The L-vector work space of the operators of one gather-scatter
 * (hx_op_create_shared): an apply uses it only while it runs, and the
 * operators of a disc (FP64, FP32, the FP64-geometry one) never run at the
 * same time, so they share it (at p = 7 each operator had 20 bytes per L
 * entry of its own). wl: nl doubles (the element output; hx_op_diagonal's
 * FP64 staging); ul: the scatter's L-vector of the FP32 operators (nl
 * floats; the FP64 kernel fuses the scatter, no ul); map: the L->G map of
 * the fused FP64 scatter, the gather-scatter's host map itself on the plain
 * cpu backend (the same memory there), else a backend copy. */
typedef struct {
  int refs;
  hx_backend b;
  int64_t nl;
  double *d_wl;
  void *d_ul;
  size_t ul_bytes;
  int32_t *d_map;
  int map_owned; /* 0: d_map is the gs's host map (plain cpu) */
} op_work;

struct hx_op_s {
  hx_gs gs;
  hx_ax ax;
  hx_backend b;
  MPI_Comm comm;
  int64_t ng, nl;
  hx_precision prec;       /* that of the element operator: of d_x, d_y and the work space */
  op_work *w;              /* L-vector work space, shared (see op_work) */
  int overlap;             /* split boundary/interior elements */
  int32_t nbnd, nint;      /* element counts of the two lists */
  int32_t *d_bnd, *d_int;  /* element lists (backend memory) */
  double t_elem, t_exch, t_gs;
  hx_log_event ev_elem, ev_exch, ev_gs; /* log events of the phases */
  double elem_bytes, elem_flops;    /* model counts of one element-kernel pass */
  /* extra boundary diagonal (Robin, hx_op_set_boundary_diag): nbd listed G
   * entries (the first nbd_red owned), their values in op's precision, host
   * copies for hx_op_diagonal, a one-slot reduction for hx_op_apply's x.y */
  int64_t nbd, nbd_red;
  int32_t *d_bd_idx, *h_bd_idx;
  void *d_bd_r;
  double *h_bd_r;
  hx_red bd_red;
  /* hx_op_apply_many_p's L-vector work space: mk columns of nl entries of
   * op's precision (the element outputs; FP32: and the scattered inputs) */
  int mk;
  void *d_mwl, *d_mul;
};

/* drops a reference; frees at the last (first error) */
static int work_release(op_work **pw) {
  op_work *w = *pw;
  *pw = NULL;
  if (!w || --w->refs > 0) return HX_SUCCESS;
  int first = hx_mem_free(w->b, (void **)&w->d_wl), err;
  if ((err = hx_mem_free(w->b, &w->d_ul)) && !first) first = err;
  if (w->map_owned && (err = hx_mem_free(w->b, (void **)&w->d_map)) && !first) first = err;
  free(w);
  return first;
}

/* what an operator of precision prec needs of w, allocated if missing */
static int work_ensure(op_work *w, hx_gs gs, hx_precision prec) {
  const size_t nl = (size_t)w->nl;
  if (!w->d_wl) {
    HX_CALL(hx_mem_alloc(w->b, sizeof(double) * (nl > 0 ? nl : 1), (void **)&w->d_wl));
    HX_CALL(hx_mem_zero(w->b, w->d_wl, sizeof(double) * nl));
  }
  if (prec != HX_F64) {
    const size_t need = hx_precision_size(prec) * (nl > 0 ? nl : 1);
    if (w->ul_bytes < need) {
      HX_CALL(hx_mem_free(w->b, &w->d_ul));
      w->ul_bytes = 0;
      HX_CALL(hx_mem_alloc(w->b, need, &w->d_ul));
      w->ul_bytes = need;
    }
  } else if (!w->d_map) {
    if (!strcmp(hx_backend_name(w->b), "cpu") && nl > 0) {
      w->d_map = (int32_t *)hx_gs_map_host(gs);
      w->map_owned = 0;
    } else {
      HX_CALL(hx_mem_alloc(w->b, sizeof(int32_t) * (nl + 1), (void **)&w->d_map));
      w->map_owned = 1;
      if (nl > 0) HX_CALL(hx_mem_to_device(w->b, w->d_map, hx_gs_map_host(gs), sizeof(int32_t) * nl));
    }
  }
  return HX_SUCCESS;
}

int hx_op_create(hx_gs gs, hx_ax ax, int overlap, hx_op *out) {
  HX_CALL(hx_op_create_shared(gs, ax, overlap, NULL, out));
  return HX_SUCCESS;
}

int hx_op_create_shared(hx_gs gs, hx_ax ax, int overlap, hx_op share, hx_op *out) {
  *out = NULL;
  HX_CHECK(gs && ax, HX_ERR_ARG, "gather-scatter or element operator is NULL");
  HX_CHECK(!share || share->gs == gs, HX_ERR_ARG, "an operator shares the work space of one on the same gather-scatter only");
  const int n = hx_ax_order(ax) + 1;
  const int32_t E = hx_ax_num_elements(ax);
  HX_CHECK(hx_gs_num_l(gs) == hx_ax_num_nodes(ax), HX_ERR_ARG,
           "gather-scatter has %lld L entries but the operator %lld", (long long)hx_gs_num_l(gs),
           (long long)hx_ax_num_nodes(ax));
  hx_op op;
  HX_CALL(HX_ALLOC(&op, 1));
  op->gs = gs, op->ax = ax, op->b = hx_gs_backend(gs), op->comm = hx_gs_comm(gs);
  op->ng = hx_gs_num_local(gs), op->nl = hx_gs_num_l(gs);
  op->prec = hx_ax_precision(ax);
  int *flag = NULL;
  int32_t *lb = NULL, *li = NULL;
  int err;
  if ((err = hx_log_event_register("op.element", &op->ev_elem)) ||
      (err = hx_log_event_register("op.exchange", &op->ev_exch)) ||
      (err = hx_log_event_register("op.scatter+gather", &op->ev_gs)))
    goto fail;
  {
    double bpe, fpe;
    hx_ax_cost(ax, &bpe, &fpe);
    op->elem_bytes = bpe * E, op->elem_flops = fpe * E;
  }
  if (share) {
    op->w = share->w;
    op->w->refs++;
  } else {
    op_work *w = calloc(1, sizeof *w);
    if (!w) {
      err = HX_ERROR(HX_ERR_MEM, "out of memory");
      goto fail;
    }
    w->refs = 1, w->b = op->b, w->nl = op->nl;
    op->w = w;
  }
  if ((err = work_ensure(op->w, gs, op->prec))) goto fail;

  int size;
  int64_t nshared_any = 0, nshared = hx_gs_num_shared(gs);
  if (MPI_Comm_size(op->comm, &size) != MPI_SUCCESS ||
      MPI_Allreduce(&nshared, &nshared_any, 1, MPI_INT64_T, MPI_SUM, op->comm) != MPI_SUCCESS) {
    err = HX_ERROR(HX_ERR_MPI, "MPI failed counting the shared nodes");
    goto fail;
  }
  op->overlap = overlap && size > 1 && nshared_any > 0;
  if (op->overlap) {
    if ((err = HX_ALLOC(&flag, E > 0 ? E : 1)) || (err = HX_ALLOC(&lb, E > 0 ? E : 1)) ||
        (err = HX_ALLOC(&li, E > 0 ? E : 1)) || (err = hx_gs_element_shared_flags(gs, (int64_t)n * n * n, flag)))
      goto fail;
    for (int32_t e = 0; e < E; e++) {
      if (flag[e]) lb[op->nbnd++] = e;
      else li[op->nint++] = e;
    }
    if ((err = hx_mem_alloc(op->b, sizeof(int32_t) * (size_t)(op->nbnd + 1), (void **)&op->d_bnd)) ||
        (err = hx_mem_alloc(op->b, sizeof(int32_t) * (size_t)(op->nint + 1), (void **)&op->d_int)) ||
        (err = hx_mem_to_device(op->b, op->d_bnd, lb, sizeof(int32_t) * (size_t)op->nbnd)) ||
        (err = hx_mem_to_device(op->b, op->d_int, li, sizeof(int32_t) * (size_t)op->nint)))
      goto fail;
  }
  free(flag), free(lb), free(li);
  *out = op;
  return HX_SUCCESS;
fail:
  free(flag), free(lb), free(li);
  hx_op_destroy(&op);
  return hx_error_trace(__FILE__, __LINE__, __func__, err);
}

int hx_op_destroy(hx_op *pop) {
  if (!pop || !*pop) return HX_SUCCESS;
  hx_op op = *pop;
  *pop = NULL;
  /* free everything, report the first error */
  void **bufs[6] = {(void **)&op->d_bnd, (void **)&op->d_int, (void **)&op->d_bd_idx, (void **)&op->d_bd_r,
                    &op->d_mwl, &op->d_mul};
  int first = hx_red_destroy(&op->bd_red);
  free(op->h_bd_idx), free(op->h_bd_r);
  const int ew = work_release(&op->w);
  if (ew && !first) first = ew;
  for (int i = 0; i < 6; i++) {
    const int e = hx_mem_free(op->b, bufs[i]);
    if (e && !first) first = e;
  }
  free(op);
  if (first) return hx_error_trace(__FILE__, __LINE__, __func__, first);
  return HX_SUCCESS;
}

int64_t hx_op_size(hx_op op) { return op->ng; }
int64_t hx_op_owned(hx_op op) { return hx_gs_num_owned(op->gs); }
hx_gs hx_op_gs(hx_op op) { return op->gs; }
hx_ax hx_op_ax(hx_op op) { return op->ax; }

void hx_op_ax_changed(hx_op op) {
  double bpe, fpe;
  hx_ax_cost(op->ax, &bpe, &fpe);
  const int32_t E = hx_ax_num_elements(op->ax);
  op->elem_bytes = bpe * E, op->elem_flops = fpe * E;
}
hx_backend hx_op_backend(hx_op op) { return op->b; }
void hx_op_times(hx_op op, double *t_elem, double *t_exchange, double *t_gs) {
  if (t_elem) *t_elem = op->t_elem;
  if (t_exchange) *t_exchange = op->t_exch;
  if (t_gs) *t_gs = op->t_gs;
}

/* y = Z^T A_L Z x (unmasked) in the operator's precision, *uw = local sum
 * of element u.w when uw != NULL; red != NULL: the local u.w (uw is then
 * NULL) left as partials in slot rk of red instead of read to the host
 * (FP64 only). One algorithm for both precisions: element pass, gather,
 * exchange, with the boundary/interior split overlapping the exchange.
 * FP64 fuses the scatter Z into the element kernel (hx_ax_apply_list_g
 * reads each element's values from x through the L->G map: the L-vector
 * of Z x is never written); FP32 scatters to the L work vector first (its
 * fused form measured slower than scatter + apply at p = 7 and no faster
 * at p = 3: docs/log/performance.md "FP32 vs FP64 kernels"). */
static int hx_op_elem(hx_op op, int32_t nlist, const int32_t *d_list, const void *d_x, double *uw, hx_red red,
                      int rk) {
  if (op->prec != HX_F64) {
    if (d_list) HX_CALL(hx_ax_apply_list_p(op->ax, nlist, d_list, op->w->d_ul, op->w->d_wl, uw));
    else HX_CALL(hx_ax_apply_p(op->ax, op->w->d_ul, op->w->d_wl, uw));
  } else if (red) {
    HX_CALL(hx_ax_apply_list_g_red(op->ax, nlist, d_list, op->w->d_map, (const double *)d_x, (double *)op->w->d_wl, red,
                                   rk));
  } else {
    HX_CALL(hx_ax_apply_list_g(op->ax, nlist, d_list, op->w->d_map, (const double *)d_x, (double *)op->w->d_wl, uw));
  }
  return HX_SUCCESS;
}

static int hx_op_core_elem(hx_op op, const void *d_x, void *d_y, double *uw, hx_red red, int rk) {
  const hx_precision prec = op->prec;
  const int cuda = hx_backend_get_kind(op->b) == HX_BACKEND_CUDA;
  double t1 = hx_wtime();
  if (prec != HX_F64) HX_CALL(hx_gs_scatter_p(op->gs, prec, d_x, op->w->d_ul));
  if (!op->overlap) {
    HX_CALL(hx_op_elem(op, hx_ax_num_elements(op->ax), NULL, d_x, uw, red, rk));
    /* cuda: no wait here (the phases' times are host times, docs/gather-scatter.md) */
    if (!cuda) HX_CALL(hx_backend_sync(op->b));
    double t2 = hx_wtime();
    HX_CALL(hx_gs_gather_p(op->gs, prec, op->w->d_wl, d_y));
    double t3 = hx_wtime();
    HX_CALL(hx_gs_exchange_p(op->gs, prec, d_y, HX_GS_ADD));
    double t4 = hx_wtime();
    op->t_elem += t2 - t1, op->t_gs += t3 - t2, op->t_exch += t4 - t3;
    hx_log_event_add(op->ev_elem, t2 - t1, op->elem_bytes, op->elem_flops);
    hx_log_event_add(op->ev_gs, t3 - t2, 0.0, 0.0);
    hx_log_event_add(op->ev_exch, t4 - t3, 0.0, 0.0);
    return HX_SUCCESS;
  }
  /* elements touching other ranks, their shared rows, start the exchange,
   * interior elements and rows meanwhile, then finish */
  double uw1 = 0.0, uw2 = 0.0;
  HX_CALL(hx_op_elem(op, op->nbnd, op->d_bnd, d_x, uw ? &uw1 : NULL, red, rk));
  HX_CALL(hx_gs_gather_part_p(op->gs, prec, HX_GS_SHARED, op->w->d_wl, d_y));
  double t2 = hx_wtime();
  HX_CALL(hx_gs_exchange_start_p(op->gs, prec, d_y, HX_GS_ADD));
  /* cuda: the interior's u.w below waits for the device (the element pass
   * reads its sum to the host), so send first; without uw (or with the sums
   * left in red) the sends wait for finish and the interior is queued at once */
  if (uw) HX_CALL(hx_gs_exchange_post(op->gs));
  double t3 = hx_wtime();
  HX_CALL(hx_op_elem(op, op->nint, op->d_int, d_x, uw ? &uw2 : NULL, red, rk));
  HX_CALL(hx_gs_gather_part_p(op->gs, prec, HX_GS_INTERIOR, op->w->d_wl, d_y));
  /* cuda: no wait; finish's combine runs on the exchange's queue beside the
   * interior (disjoint rows) and the default queue waits for it */
  if (!cuda) HX_CALL(hx_backend_sync(op->b));
  double t4 = hx_wtime();
  HX_CALL(hx_gs_exchange_finish_p(op->gs, prec, d_y, HX_GS_ADD));
  double t5 = hx_wtime();
  op->t_elem += (t2 - t1) + (t4 - t3), op->t_exch += (t3 - t2) + (t5 - t4);
  hx_log_event_add(op->ev_elem, (t2 - t1) + (t4 - t3), op->elem_bytes, op->elem_flops);
  hx_log_event_add(op->ev_exch, (t3 - t2) + (t5 - t4), 0.0, 0.0);
  if (uw) *uw = uw1 + uw2;
  return HX_SUCCESS;
}

/* the element core, then the boundary diagonal on the consistent sum: its
 * x.R.x appended to red's slot rk, or (uw) fetched from the op's own slot
 * and added to the local sum */
static int hx_op_core(hx_op op, const void *d_x, void *d_y, double *uw, hx_red red, int rk) {
  HX_CALL(hx_op_core_elem(op, d_x, d_y, uw, red, rk));
  if (!op->bd_red) return HX_SUCCESS;
  const double t1 = hx_wtime();
  hx_red r = red ? red : uw ? op->bd_red : NULL;
  HX_CALL(hx_array_diag_add_list_p(op->b, op->prec, op->nbd, op->nbd_red, op->d_bd_idx, op->d_bd_r, d_x, d_y, r,
                                   red ? rk : 0));
  if (uw && !red) {
    double v;
    HX_CALL(hx_red_fetch(op->bd_red, 1, &v));
    *uw += v;
  }
  op->t_elem += hx_wtime() - t1;
  return HX_SUCCESS;
}

int hx_op_set_boundary_diag(hx_op op, int64_t m, const int32_t *h_idx, const double *h_r) {
  HX_CHECK(op && m >= 0 && (m == 0 || (h_idx && h_r)), HX_ERR_ARG, "boundary diagonal: bad arguments");
  HX_CALL(hx_red_destroy(&op->bd_red));
  HX_CALL(hx_mem_free(op->b, (void **)&op->d_bd_idx));
  HX_CALL(hx_mem_free(op->b, (void **)&op->d_bd_r));
  free(op->h_bd_idx), free(op->h_bd_r);
  op->h_bd_idx = NULL, op->h_bd_r = NULL, op->nbd = op->nbd_red = 0;
  if (m == 0) return HX_SUCCESS;
  const int64_t owned = hx_gs_num_owned(op->gs);
  for (int64_t j = 0; j < m; j++) {
    HX_CHECK(h_idx[j] >= 0 && h_idx[j] < op->ng && (j == 0 || h_idx[j] > h_idx[j - 1]), HX_ERR_ARG,
             "boundary diagonal: entry %lld (G index %d) not increasing within [0, %lld)", (long long)j,
             (int)h_idx[j], (long long)op->ng);
    op->nbd_red += h_idx[j] < owned;
  }
  op->nbd = m;
  const size_t es = hx_precision_size(op->prec);
  HX_CALL(HX_ALLOC(&op->h_bd_idx, m));
  HX_CALL(HX_ALLOC(&op->h_bd_r, m));
  memcpy(op->h_bd_idx, h_idx, sizeof(int32_t) * (size_t)m);
  memcpy(op->h_bd_r, h_r, sizeof(double) * (size_t)m);
  HX_CALL(hx_mem_alloc(op->b, sizeof(int32_t) * (size_t)m, (void **)&op->d_bd_idx));
  HX_CALL(hx_mem_alloc(op->b, es * (size_t)m, &op->d_bd_r));
  HX_CALL(hx_mem_to_device(op->b, op->d_bd_idx, h_idx, sizeof(int32_t) * (size_t)m));
  if (op->prec == HX_F64) {
    HX_CALL(hx_mem_to_device(op->b, op->d_bd_r, h_r, sizeof(double) * (size_t)m));
  } else {
    float *hf;
    HX_CALL(HX_ALLOC(&hf, m));
    for (int64_t j = 0; j < m; j++) hf[j] = (float)h_r[j];
    const int err = hx_mem_to_device(op->b, op->d_bd_r, hf, sizeof(float) * (size_t)m);
    free(hf);
    HX_CALL(err);
  }
  HX_CALL(hx_red_create(op->b, 1, 1, &op->bd_red));
  return HX_SUCCESS;
}

/* the core and the mask in op's precision (the FP64 entry points check it) */
static int hx_op_masked(hx_op op, const void *d_x, void *d_y, double *uw, hx_red red, int rk) {
  hx_timer_start(HX_T_OPERATOR);
  int ierr = hx_op_core(op, d_x, d_y, uw, red, rk);
  if (!ierr) ierr = hx_gs_apply_mask_p(op->gs, op->prec, d_y);
  hx_timer_stop(HX_T_OPERATOR);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

#define HX_OP_F64(op) \
  HX_CHECK((op) && (op)->prec == HX_F64, HX_ERR_ARG, "%s: operator is NULL or not FP64 (hx_op_apply_p)", __func__)

int hx_op_apply(hx_op op, const double *d_x, double *d_y, double *xy) {
  HX_OP_F64(op);
  double uw = 0.0;
  HX_CALL(hx_op_masked(op, d_x, d_y, xy ? &uw : NULL, NULL, 0));
  if (xy) {
    hx_timer_start(HX_T_REDUCTION);
    HX_MPI(MPI_Allreduce(&uw, xy, 1, MPI_DOUBLE, MPI_SUM, op->comm));
    hx_timer_stop(HX_T_REDUCTION);
  }
  return HX_SUCCESS;
}

int hx_op_apply_red(hx_op op, const double *d_x, double *d_y, hx_red red, int k) {
  HX_OP_F64(op);
  HX_CHECK(red, HX_ERR_ARG, "reduction set is NULL");
  HX_CALL(hx_op_masked(op, d_x, d_y, NULL, red, k));
  return HX_SUCCESS;
}

int hx_op_apply_unmasked(hx_op op, const double *d_x, double *d_y) {
  HX_OP_F64(op);
  hx_timer_start(HX_T_OPERATOR);
  int ierr = hx_op_core(op, d_x, d_y, NULL, NULL, 0);
  hx_timer_stop(HX_T_OPERATOR);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

int hx_op_diagonal_host(hx_op op, double *d_work, double *h_diag) {
  double *h_l;
  HX_CALL(HX_ALLOC(&h_l, op->nl));
  int ierr = hx_ax_diagonal(op->ax, h_l);
  if (!ierr) ierr = hx_mem_to_device(op->b, op->w->d_wl, h_l, sizeof(double) * (size_t)op->nl);
  free(h_l);
  HX_CALL(ierr);
  HX_CALL(hx_gs_assemble(op->gs, (const double *)op->w->d_wl, d_work));
  HX_CALL(hx_mem_to_host(op->b, h_diag, d_work, sizeof(double) * (size_t)op->ng));
  for (int64_t j = 0; j < op->nbd; j++) h_diag[op->h_bd_idx[j]] += op->h_bd_r[j];
  const int64_t nm = hx_gs_num_masked(op->gs);
  if (nm > 0) { /* the masked entries are 1 */
    int32_t *idx;
    HX_CALL(HX_ALLOC(&idx, nm));
    ierr = hx_mem_to_host(op->b, idx, hx_gs_masked_idx(op->gs), sizeof(int32_t) * (size_t)nm);
    for (int64_t k = 0; k < nm && !ierr; k++) h_diag[idx[k]] = 1.0;
    free(idx);
    HX_CALL(ierr);
  }
  return HX_SUCCESS;
}

int hx_op_diagonal(hx_op op, double *d_diag) {
  double *h_g;
  HX_CALL(HX_ALLOC(&h_g, op->ng));
  int ierr = hx_op_diagonal_host(op, d_diag, h_g);
  if (!ierr) ierr = hx_mem_to_device(op->b, d_diag, h_g, sizeof(double) * (size_t)op->ng);
  free(h_g);
  HX_CALL(ierr);
  return HX_SUCCESS;
}

hx_precision hx_op_precision(hx_op op) { return op->prec; }

int hx_op_apply_p(hx_op op, const void *d_x, void *d_y) {
  HX_CHECK(op, HX_ERR_ARG, "operator is NULL");
  HX_CALL(hx_op_masked(op, d_x, d_y, NULL, NULL, 0));
  return HX_SUCCESS;
}

/* ---------------------------------------------------------- k columns */

/* the many-column work space for nk columns, grown on demand */
static int op_many_work(hx_op op, int nk) {
  if (nk <= op->mk) return HX_SUCCESS;
  const size_t bytes = hx_precision_size(op->prec) * (size_t)(op->nl > 0 ? op->nl : 1) * (size_t)nk;
  HX_CALL(hx_mem_free(op->b, &op->d_mwl));
  HX_CALL(hx_mem_free(op->b, &op->d_mul));
  op->mk = 0;
  HX_CALL(hx_mem_alloc(op->b, bytes, &op->d_mwl));
  if (op->prec != HX_F64) HX_CALL(hx_mem_alloc(op->b, bytes, &op->d_mul));
  op->mk = nk;
  return HX_SUCCESS;
}

/* the element pass of hx_op_elem on nk columns (uw: nk local sums or NULL) */
static int op_many_elem(hx_op op, int nk, int32_t nlist, const int32_t *d_list, const void *const *x, void *const *wl,
                        double *uw) {
  const void *const *in = x;
  const void *ul[HX_AX_MANY_MAX];
  if (op->prec != HX_F64) {
    const size_t es = hx_precision_size(op->prec);
    for (int c = 0; c < nk; c++) ul[c] = (const char *)op->d_mul + es * (size_t)op->nl * c;
    in = ul;
  }
  HX_CALL(hx_ax_apply_many_prec(op->ax, op->prec, nk, nlist, d_list, op->prec == HX_F64 ? op->w->d_map : NULL, in,
                                wl, uw));
  return HX_SUCCESS;
}

int hx_op_apply_many_p(hx_op op, int nk, const void *const *d_x, void *const *d_y, double *xy) {
  HX_CHECK(op, HX_ERR_ARG, "operator is NULL");
  HX_CHECK(nk >= 0 && nk <= HX_AX_MANY_MAX, HX_ERR_ARG, "%d columns: the k-vector apply takes 0..%d", nk,
           HX_AX_MANY_MAX);
  HX_CHECK(nk == 0 || (d_x && d_y), HX_ERR_ARG, "NULL column array");
  HX_CHECK(!xy || op->prec == HX_F64, HX_ERR_ARG, "the sums x.y of a k-vector apply are FP64 only");
  if (nk == 0) return HX_SUCCESS;
  HX_CALL(op_many_work(op, nk));
  const hx_precision prec = op->prec;
  const size_t es = hx_precision_size(prec);
  void *wl[HX_AX_MANY_MAX];
  double uw1[HX_AX_MANY_MAX], uw2[HX_AX_MANY_MAX];
  for (int c = 0; c < nk; c++) wl[c] = (char *)op->d_mwl + es * (size_t)op->nl * c;
  hx_timer_start(HX_T_OPERATOR);
  int ierr = HX_SUCCESS;
  const double t1 = hx_wtime();
  if (prec != HX_F64)
    for (int c = 0; c < nk && !ierr; c++)
      ierr = hx_gs_scatter_p(op->gs, prec, d_x[c], (char *)op->d_mul + es * (size_t)op->nl * c);
  /* as hx_op_core_elem: with the boundary/interior split the two element
   * passes and their sums (uw1 + uw2), without it one pass */
  if (!ierr && !op->overlap) {
    ierr = op_many_elem(op, nk, hx_ax_num_elements(op->ax), NULL, d_x, wl, xy ? uw1 : NULL);
    for (int c = 0; c < nk && !ierr; c++) ierr = hx_gs_gather_p(op->gs, prec, wl[c], d_y[c]);
  } else if (!ierr) {
    ierr = op_many_elem(op, nk, op->nbnd, op->d_bnd, d_x, wl, xy ? uw1 : NULL);
    for (int c = 0; c < nk && !ierr; c++) ierr = hx_gs_gather_part_p(op->gs, prec, HX_GS_SHARED, wl[c], d_y[c]);
    if (!ierr) ierr = op_many_elem(op, nk, op->nint, op->d_int, d_x, wl, xy ? uw2 : NULL);
    for (int c = 0; c < nk && !ierr; c++) ierr = hx_gs_gather_part_p(op->gs, prec, HX_GS_INTERIOR, wl[c], d_y[c]);
    for (int c = 0; c < nk && xy; c++) uw1[c] = uw1[c] + uw2[c];
  }
  if (!ierr) ierr = hx_backend_sync(op->b);
  const double t2 = hx_wtime();
  if (!ierr) ierr = hx_gs_exchange_many_p(op->gs, prec, nk, d_y, HX_GS_ADD);
  const double t3 = hx_wtime();
  /* the boundary diagonal and the mask per column, as hx_op_core and hx_op_masked */
  for (int c = 0; c < nk && !ierr && op->bd_red; c++) {
    ierr = hx_array_diag_add_list_p(op->b, prec, op->nbd, op->nbd_red, op->d_bd_idx, op->d_bd_r, d_x[c], d_y[c],
                                    xy ? op->bd_red : NULL, 0);
    double v;
    if (!ierr && xy && !(ierr = hx_red_fetch(op->bd_red, 1, &v))) uw1[c] += v;
  }
  for (int c = 0; c < nk && !ierr; c++) ierr = hx_gs_apply_mask_p(op->gs, prec, d_y[c]);
  hx_timer_stop(HX_T_OPERATOR);
  op->t_elem += t2 - t1, op->t_exch += t3 - t2;
  hx_log_event_add(op->ev_elem, t2 - t1, op->elem_bytes * nk, op->elem_flops * nk);
  hx_log_event_add(op->ev_exch, t3 - t2, 0.0, 0.0);
  HX_CALL(ierr);
  if (xy) {
    hx_timer_start(HX_T_REDUCTION);
    ierr = MPI_Allreduce(uw1, xy, nk, MPI_DOUBLE, MPI_SUM, op->comm) == MPI_SUCCESS
               ? HX_SUCCESS
               : HX_ERROR(HX_ERR_MPI, "MPI_Allreduce of the k-vector apply's sums failed");
    hx_timer_stop(HX_T_REDUCTION);
    HX_CALL(ierr);
  }
  return HX_SUCCESS;
}
