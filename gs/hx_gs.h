/* hexcg gs: the distributed gather-scatter, a module above the backend
 * layer (gs/; docs/gather-scatter.md).
 *
 * Unlike kernels/ (hx_kernels.h), this module is collective: setup finds the
 * ids shared between ranks by a rendezvous over MPI, and the exchange, the
 * assembly, the dot product and the mask talk to the ranks that share ids.
 * Each function says whether it is collective. Pointers named d_* live in
 * the backend's memory space, h_* in host memory (hx_kernels.h).
 *
 * This is the module's single public header. Its CPU and CUDA loops share
 * their per-row math with the operator's fused scatter (kernels/hx_gs_math.h).
 */
#ifndef HX_GS_H
#define HX_GS_H

#include "hx_core.h"
#include "hx_kernels.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================ gather-scatter
 * Z, Z^T, direct stiffness summation across ranks, owner marks - issue 4. */
/* Distributed gather-scatter (gs/gs.c, cpu/gs_cpu.c, cuda/gs_cuda.cu;
 * docs/gather-scatter.md). Vectors:
 *   L-vector: nl entries, element-local (E*(p+1)^3), one global id each;
 *   G-vector: ng entries, one per distinct nonzero id present on this rank.
 * G numbering (deterministic: within each group in the order of first
 * appearance in the L-vector, which keeps gather and scatter streaming):
 *   [0, ng - n_shared)        owned, held by this rank only (interior)
 *   [ng - n_shared, n_owned)  owned, also held by other ranks
 *   [n_owned, ng)             held here but owned by another rank
 * so the shared entries are the contiguous range [ng - n_shared, ng). The
 * owner of a shared id is the lowest rank holding it. All d_* pointers are
 * in the backend's memory; h_* pointers are host memory. Gather, scatter and
 * the exchange are deterministic: same inputs and rank count give the same
 * bits (no floating-point atomics; shared values are combined in rank order,
 * so every rank holding an id gets bit-identical results). */
typedef struct hx_gs_s *hx_gs;
typedef enum { HX_GS_ADD = 0, HX_GS_MIN = 1, HX_GS_MAX = 2 } hx_gs_op;
/* Which G rows a gather computes (for overlapping the exchange with work):
 * SHARED = rows [ng - n_shared, ng) only, INTERIOR = rows [0, ng - n_shared). */
typedef enum { HX_GS_ALL = 0, HX_GS_SHARED = 1, HX_GS_INTERIOR = 2 } hx_gs_part;

/* Collective over comm (comm is duplicated). nl = number of L entries,
 * h_ids[nl] global ids (host; 0 = ignore: maps to no G entry, scatter writes
 * 0 there; negative ids are an error). Shared ids are found by a rendezvous
 * (id goes to rank id % nranks): no array of global size anywhere. The
 * handle borrows b (b must outlive it). nl < 2^31. */
int hx_gs_create(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *h_ids, hx_gs *gs);
/* As hx_gs_create, but the L side (the backend map, the gather's CSR and
 * CPU plan) is not built: for a caller that lays the L-vector out anew
 * (hx_gs_relayout builds it once, in the new order) after reading what the
 * setup found. Until hx_gs_relayout, hx_gs_renumber_interior or
 * hx_gs_finish_l, the sizes, ids, hx_gs_map_host, multiplicities, the
 * exchange, masks and the owner/shared flags work; scatter and gather are
 * refused. Collective over comm. */
int hx_gs_create_deferred(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *h_ids, hx_gs *gs);
/* As hx_gs_create_deferred, with h_private[nl] (host, or NULL: none): a
 * nonzero h_private[i] promises that no other rank of comm passes the id
 * h_ids[i]. An id all of whose entries on this rank carry the promise stays
 * out of the rendezvous (its multiplicity is its local count, its holder
 * this rank); every other id goes through it as before, so the handle is the
 * one hx_gs_create_deferred builds. A false promise is not detected and gives
 * a wrong handle: the caller must know (the FDM's extended boxes: ids of
 * nodes no other rank's box reaches, precond/fdm.c). Collective over comm. */
int hx_gs_create_deferred_private(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *h_ids,
                                  const uint8_t *h_private, hx_gs *gs);
/* As hx_gs_create, with h_private as for hx_gs_create_deferred_private (the
 * same handle as hx_gs_create, built with a smaller rendezvous: the
 * discretisation's, whose promise is hx_mesh_gll_private). Collective. */
int hx_gs_create_private(hx_backend b, MPI_Comm comm, int64_t nl, const int64_t *h_ids,
                         const uint8_t *h_private, hx_gs *gs);
/* The keyed setup: for a caller that knows its L-vector's distinct ids
 * already (the FDM's extended boxes, whose nodes are fine G entries and a
 * few remote ones: precond/fdm.c), and which of them may be shared. No
 * local sort of the L ids; only the ids not promised private go through
 * the rendezvous; the L layout may be chosen after the shared ids are known.
 *   hx_gs_keyed_create: h_key[nl] (host) the key of each L entry (-1: none,
 *   as id 0), key u in [0, nu) standing for the global id h_uid[u]
 *   (positive, distinct: checked where not private); every key must occur.
 *   h_upriv (NULL: none) as h_private of hx_gs_create_deferred_private, per
 *   key. Collective (the rendezvous). hx_gs_keyed_shared then tells per key
 *   whether another rank holds the id (host, nu; hx_gs_keyed_num_shared of
 *   them).
 *   hx_gs_keyed_finish: *h_key (host, nl entries, allocated by malloc or
 *   HX_ALLOC) the L keys in the final layout: the same keys, each as often
 *   as at create (the count and that every key occurs are checked), in any
 *   order and with any number of -1 entries. It is taken over (it becomes
 *   the handle's scatter map; *h_key NULLed) and gives the handle
 *   hx_gs_create_deferred_private builds from the ids h_uid[key[i]] and the
 *   flags h_upriv[key[i]] (the same numbering, owners, exchange and
 *   multiplicities; the L side pending: hx_gs_finish_l or hx_gs_relayout).
 *   h_gof[nu] (host, or NULL) receives each key's G index. Consumes *kd
 *   (NULLed) whatever happens. Local, but call it on every rank: on an
 *   error it frees the handle's communicator.
 *   hx_gs_keyed_destroy: for a setup not finished (collective: comm). */
typedef struct hx_gs_keyed_s *hx_gs_keyed;
int hx_gs_keyed_create(hx_backend b, MPI_Comm comm, int64_t nl, const int32_t *h_key, int64_t nu,
                       const int64_t *h_uid, const uint8_t *h_upriv, hx_gs_keyed *kd);
int64_t hx_gs_keyed_num_keys(hx_gs_keyed kd); /* nu */
int64_t hx_gs_keyed_num_shared(hx_gs_keyed kd);
const uint8_t *hx_gs_keyed_shared(hx_gs_keyed kd);
int hx_gs_keyed_finish(hx_gs_keyed *kd, int64_t nl, int32_t **h_key, int32_t *h_gof, hx_gs *gs);
int hx_gs_keyed_destroy(hx_gs_keyed *kd);
/* Frees what a caller with a map of its own no longer needs once set up:
 * the G entries' ids, their multiplicities and the scatter map (host and
 * backend copies; 8 bytes per L entry and 24 per G entry). Gather, the
 * exchange, assembly, dot and an existing mask keep working; scatter, masks,
 * relayout, renumbering and the owner and shared flags are refused after it,
 * and hx_gs_global_ids, hx_gs_map_host and the multiplicities are NULL. The
 * FDM's extended gather-scatter (precond/fdm.c). Local. */
int hx_gs_drop_maps(hx_gs gs);
/* hx_gs_drop_maps, the backend copy of the scatter map (nl entries) handed
 * to the caller instead of freed (*d_map; the caller frees it with
 * hx_mem_free on the handle's backend): for a caller that scatters through
 * it itself (the FDM's extended boxes), without a copy. Local. */
int hx_gs_take_map(hx_gs gs, int32_t **d_map);
/* Builds the L side of a handle from hx_gs_create_deferred in its current
 * layout (no-op when built). Local. */
int hx_gs_finish_l(hx_gs gs);
/* Call on all ranks of comm (frees the duplicated communicator, which MPI
 * defines as collective). Accepts NULL / *gs == NULL; nulls *gs. */
int hx_gs_destroy(hx_gs *gs);

hx_backend hx_gs_backend(hx_gs gs);
MPI_Comm hx_gs_comm(hx_gs gs);               /* the handle's duplicated communicator */
int64_t hx_gs_num_l(hx_gs gs);               /* nl */
int64_t hx_gs_num_local(hx_gs gs);           /* ng: G-vector length on this rank */
int64_t hx_gs_num_owned(hx_gs gs);           /* G entries [0, n_owned) are owned here */
int64_t hx_gs_num_shared(hx_gs gs);          /* G entries [ng - n_shared, ng) are held by >1 rank */
int64_t hx_gs_num_global(hx_gs gs);          /* distinct nonzero ids over all ranks */
const int64_t *hx_gs_global_ids(hx_gs gs);   /* host, ng: the id of each G entry */
/* host, nl: the G index of each L entry, -1 for id 0 (the scatter map Z) */
const int32_t *hx_gs_map_host(hx_gs gs);
/* backend memory, ng: number of L entries over all ranks carrying this id,
 * and its inverse (exact for the integer, correctly rounded for 1/m) */
const double *hx_gs_multiplicity(hx_gs gs);
const double *hx_gs_inv_multiplicity(hx_gs gs);

/* Sizes for the streaming benchmark and the performance notes. */
typedef struct {
  int64_t nl, ng, n_owned, n_shared, n_global;
  int n_neighbors;            /* ranks this rank exchanges with */
  int64_t n_send;             /* doubles sent (= received) per exchange */
  double gather_bytes;        /* bytes one full gather moves at least: one index per L
                                 entry (nl), L values read (ids != 0), G values written */
  double scatter_bytes;       /* bytes one scatter moves at least: map read (nl), G values
                                 read once (ng), L values written (nl) */
} hx_gs_info;
int hx_gs_get_info(hx_gs gs, hx_gs_info *info);

/* Z: d_l[i] = d_g[map[i]] (0 where id == 0). Not collective. */
int hx_gs_scatter(hx_gs gs, const double *d_g, double *d_l);
/* Local Z^T: d_g[r] = sum of d_l over the L entries with G index r, in
 * increasing L order (same bits on cpu and cuda, for any thread count);
 * overwrites d_g (all rows). Not collective. */
int hx_gs_gather(hx_gs gs, const double *d_l, double *d_g);
/* Gather of one part of the rows only (see hx_gs_part); other rows untouched. */
int hx_gs_gather_part(hx_gs gs, hx_gs_part part, const double *d_l, double *d_g);

/* Direct stiffness summation of the shared entries of a G-vector across
 * ranks: afterwards every rank holding an id has op over all holders' values
 * (combined in increasing rank order: bit-identical on every holder). Entries
 * not shared are untouched. Collective over the ranks sharing ids with this
 * one (call on all ranks). start packs the shared values (on the device for
 * cuda, staged through pinned host memory) and posts the messages; finish
 * waits and combines. Between them the caller may work (e.g. on interior
 * elements) and may write the non-shared entries of d_g, but must not change
 * the shared entries [ng - n_shared, ng) and must use the same d_g and op.
 * One exchange in flight per handle. cuda (docs/gather-scatter.md "Exchange
 * on cuda"): start posts the receives and queues the pack and its copy to
 * pinned host memory on the handle's own queue, ordered after the work
 * queued on the default queue so far, and returns without waiting; finish
 * waits for that copy only (not for the default queue), posts the sends,
 * waits for MPI, queues the copy back and the combine on the handle's queue
 * and makes the default queue wait for them (no host wait): work queued on
 * the default queue after finish sees the combined values. cpu: start packs
 * and posts the sends, finish waits and combines. */
int hx_gs_exchange_start(hx_gs gs, double *d_g, hx_gs_op op);
int hx_gs_exchange_finish(hx_gs gs, double *d_g, hx_gs_op op);
/* Post the sends of the exchange in flight now (either precision; no-op if
 * posted, if none is in flight and on the cpu backends, where start posts
 * them). cuda: waits for start's pack and copy to the host, i.e. for the
 * default queue's work up to start. For a caller that is about to block on
 * the default queue anyway (a reduction) between start and finish: the
 * messages then travel meanwhile. Not collective. */
int hx_gs_exchange_post(hx_gs gs);
int hx_gs_exchange(hx_gs gs, double *d_g, hx_gs_op op);   /* start + finish */
/* Assembled Z^T across ranks: gather then exchange ADD. Collective. */
int hx_gs_assemble(hx_gs gs, const double *d_l, double *d_g);

/* x . y of two consistent G-vectors: local dot over the owned entries
 * [0, n_owned) (deterministic, HX_REDUCE_CHUNK) + MPI_Allreduce. Collective. */
int hx_gs_dot(hx_gs gs, const double *d_x, const double *d_y, double *result);

/* Dirichlet mask. Collective. h_lflag[nl] (host): nonzero marks an L entry
 * (flags on id-0 entries are ignored). A G entry is masked when any L entry
 * with its id on any rank is flagged (exchange MAX), so all holders agree.
 * Replaces a previous mask of this handle. */
int hx_gs_set_mask(hx_gs gs, const int *h_lflag);
int64_t hx_gs_num_masked(hx_gs gs);          /* masked G entries on this rank (0 before set_mask) */
/* backend memory, ng: 0.0 on masked entries, 1.0 elsewhere (NULL before set_mask) */
const double *hx_gs_mask(hx_gs gs);
/* backend memory: the hx_gs_num_masked masked G indices, increasing (NULL before set_mask) */
const int32_t *hx_gs_masked_idx(hx_gs gs);
/* Zero the masked entries of the G-vector d_g (no-op before set_mask). */
int hx_gs_apply_mask(hx_gs gs, double *d_g);

/* Elements with at least one shared node (for overlap): h_flag[E] = 1 when
 * element e's L entries [e*nodes_per_elem, (e+1)*nodes_per_elem) touch a
 * shared G entry, else 0. E = nl / nodes_per_elem. Host memory. */
int hx_gs_element_shared_flags(hx_gs gs, int64_t nodes_per_elem, int *h_flag);

/* A new layout of the L side: the new L-vector has nl entries, entry i
 * being old entry old_of_new[i] (or no node: -1); every old entry with an
 * id must appear exactly once. Ids, G numbering, owners, multiplicities,
 * mask and exchange pattern stay; the map, the gather's CSR and the CPU
 * plan follow the new order (so the gather sums each row in the new L
 * order). Local (no communication); not during an exchange. Used by the
 * FDM level to interleave its extended boxes by groups of 8 elements.
 * h_new_of_old (NULL: the G numbering stays) also renumbers the interior G
 * entries in the new L order, as hx_gs_renumber_interior below, in the
 * same rebuild of the L side (one build instead of two at setup). */
int hx_gs_relayout(hx_gs gs, int64_t nl, const int64_t *old_of_new, int32_t *h_new_of_old);

/* Renumbers the interior G entries (owned, not shared: [0, ng - n_shared))
 * in order of first appearance in the current L-vector, so that a kernel
 * reading the G-vector through the map in L order reads it nearly in
 * sequence (after hx_gs_relayout: the FDM's grouped boxes). Shared entries,
 * the exchange pattern and the owners do not change; ids and
 * multiplicities move with their entries; the L side is rebuilt.
 * h_new_of_old[ng] (host) receives the new index of each old G entry, for
 * the caller's arrays that hold G indices. Local; not during an exchange;
 * refused when a mask is set (set it after). */
int hx_gs_renumber_interior(hx_gs gs, int32_t *h_new_of_old);

/* L-vector owner marks (gslib's "unique"): h_flag[nl] = 1 on exactly one
 * L entry per id over all ranks (the first L entry, on the owning rank, of
 * each owned G entry), 0 elsewhere and on id 0. Host memory, not collective. */
int hx_gs_l_owner_flags(hx_gs gs, int *h_flag);

/* GLL ids of elements [e0, e0+ne) of an nx x ny x nz box of order p, into
 * h_ids[ne*(p+1)^3] (host). Element e = ex + nx*(ey + ny*ez); node (i,j,k)
 * at h_ids[(e-e0)*(p+1)^3 + i + (p+1)*(j + (p+1)*k)] gets id
 * 1 + (ex*p+i) + (nx*p+1)*((ey*p+j) + (ny*p+1)*(ez*p+k)). For tests and the
 * streaming benchmark. */
int hx_gs_box_ids(int nx, int ny, int nz, int p, int64_t e0, int64_t ne, int64_t *h_ids);

/* ------------------------------------------------------------ precision
 * Precision as a parameter (hx_precision, hx_kernels_prec.h): gs/gs_prec.c,
 * cpu/gs_f32_cpu.c, cuda/gs_f32_cuda.cu.
 * The same handle serves both precisions (the index structures do not
 * depend on it); G- and L-vectors are in prec. Summation order, owner rule
 * and determinism as the FP64 functions: the FP32 gather adds in float in
 * increasing L order (same bits on cpu and cuda), the FP32 exchange sends
 * floats (half the bytes) and combines in rank order (bit-identical on
 * every holder). One exchange in flight per handle, whatever its precision;
 * finish must be called with the precision, vector and op of start. */
int hx_gs_scatter_p(hx_gs gs, hx_precision prec, const void *d_g, void *d_l);
int hx_gs_gather_p(hx_gs gs, hx_precision prec, const void *d_l, void *d_g);
int hx_gs_gather_part_p(hx_gs gs, hx_precision prec, hx_gs_part part, const void *d_l, void *d_g);
/* collective over the ranks sharing ids (see hx_gs_exchange_start) */
int hx_gs_exchange_start_p(hx_gs gs, hx_precision prec, void *d_g, hx_gs_op op);
int hx_gs_exchange_finish_p(hx_gs gs, hx_precision prec, void *d_g, hx_gs_op op);
int hx_gs_exchange_p(hx_gs gs, hx_precision prec, void *d_g, hx_gs_op op);
/* The exchange of nk G-vectors of precision prec at once (the block
 * solve): d_g[c] (host array of nk backend pointers) each get what
 * hx_gs_exchange_p gives it (the same bits), with one message per
 * neighbour and direction for all nk (cpu backends; cuda exchanges column
 * by column). No exchange may be in flight on gs. Collective. */
int hx_gs_exchange_many_p(hx_gs gs, hx_precision prec, int nk, void *const *d_g, hx_gs_op op);
/* gather + exchange ADD. Collective. */
int hx_gs_assemble_p(hx_gs gs, hx_precision prec, const void *d_l, void *d_g);
/* owned-entry dot (FP64 accumulation) + MPI_Allreduce. Collective. */
int hx_gs_dot_p(hx_gs gs, hx_precision prec, const void *d_x, const void *d_y, double *result);
/* zero the masked entries (no-op before hx_gs_set_mask) */
int hx_gs_apply_mask_p(hx_gs gs, hx_precision prec, void *d_g);

#ifdef __cplusplus
}
#endif
#endif
