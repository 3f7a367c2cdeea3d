/* hexcg kernels: the backend layer.
 *
 * A backend ("cpu" with OpenMP, "cuda") owns a memory space. Pointers named
 * d_* / returned by hx_vec_data() live in the backend's memory space (device
 * memory for cuda, host memory for cpu); h_* pointers are host memory.
 * Nothing in this module is collective over MPI: reductions return the local
 * value and the caller reduces across ranks.
 *
 * This is the module's single public header. Kernel families added later
 * (operator, FDM...) declare their API in the sections below or in a header
 * included from here. The gather-scatter, which is collective, is a module
 * of its own above this one (gs/hx_gs.h).
 */
#ifndef HX_KERNELS_H
#define HX_KERNELS_H

#include "hx_core.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HX_BACKEND_CPU = 0, HX_BACKEND_CUDA = 1 } hx_backend_kind;

/* Information about the CUDA device, when there is one. */
typedef struct {
  int device;             /* device index used */
  int count;              /* number of visible devices */
  char name[256];
  int cc_major, cc_minor; /* compute capability */
  double mem_gib;         /* global memory */
  int sm_count;
  int runtime_version;    /* e.g. 13000 */
  int driver_version;
  char pci_bus_id[32];    /* "0000:3b:00.0" */
  int local_rank;         /* node-local rank the device was chosen for */
  int ranks_on_device;    /* node-local ranks using this device (hx_backend_create_comm) */
  int requested;          /* 1: the device index came from HEXCG_CUDA_DEVICE */
} hx_device_info;

typedef struct hx_backend_s *hx_backend;

/* 1 if the CUDA backend was compiled into this build. */
int hx_cuda_compiled(void);
/* CUDA runtime version the build links (e.g. 13000), 0 if not compiled. */
int hx_cuda_runtime_version(void);
/* Query the CUDA device a rank with node-local rank 0 would use (device 0,
 * or HEXCG_CUDA_DEVICE). Returns HX_ERR_NO_DEVICE (with a message saying
 * why: not compiled in, no driver, no device...) when no usable device
 * exists; every CUDA error code is treated as "no device" here. */
int hx_cuda_query(hx_device_info *info);

/* Pure: the device index for node-local rank local_rank among ndevices
 * visible devices: requested (>= 0: HEXCG_CUDA_DEVICE or the case) if given,
 * else local_rank mod ndevices. HX_ERR_NO_DEVICE if ndevices < 1,
 * HX_ERR_INPUT if requested >= ndevices. */
int hx_device_select(int local_rank, int ndevices, int requested, int *device);
/* Not collective. The device index HEXCG_CUDA_DEVICE asks for, -1 if unset
 * or empty; HX_ERR_INPUT if it is not a non-negative integer. */
int hx_device_requested(int *requested);

/* Create a backend by name: "cpu", "cpu-memcheck" or "cuda". An unknown name
 * is HX_ERR_INPUT; "cuda" in a build without CUDA or without a usable device
 * is HX_ERR_NO_DEVICE with a message that says which.
 * "cpu-memcheck" runs the CPU kernels (hx_backend_get_kind gives
 * HX_BACKEND_CPU) but keeps its "device" memory apart from host memory: it
 * is inaccessible (PROT_NONE) outside the kernel and transfer functions, so
 * host code that dereferences backend memory dies with a message naming the
 * allocation ("host code touched backend memory without a transfer"); new
 * allocations are filled with NaN (bytes 0xff), freed ones poisoned with
 * NaN and kept inaccessible (use after free is named as such); an
 * asynchronous hx_mem_to_host_q delivers its data only when its queue is
 * synchronised (NaN before), and the source of an hx_mem_to_device_q must
 * not change before then (checked). See docs/developer.md "cpu-memcheck".
 * Environment: HEXCG_BACKEND_CPU=cpu-memcheck makes every request for "cpu"
 * create "cpu-memcheck" (runs a whole program or test suite under it;
 * scripts/test.sh --memcheck). */
int hx_backend_create(const char *name, hx_backend *b);
/* Collective over comm. hx_backend_create for one rank of an MPI job: with
 * "cuda", each rank takes the device hx_device_select gives for its
 * node-local rank (MPI_Comm_split_type shared) unless HEXCG_CUDA_DEVICE
 * names one, and counts the node-local ranks sharing its device (by PCI bus
 * id; more than one is allowed, with a warning). Every rank gets an error
 * if any rank failed (HX_ERR_NO_DEVICE: "on rank R" for the others). */
int hx_backend_create_comm(const char *name, MPI_Comm comm, hx_backend *b);
/* Collective over comm. On rank 0 of comm, text (at most len bytes, NUL
 * terminated) with one YAML flow mapping per rank, each on its own line
 * starting with "  - ": rank, host, local_rank, device, name, pci_bus_id,
 * ranks_on_device; "" for a non-CUDA backend. Other ranks get "". */
int hx_backend_devices_describe(hx_backend b, MPI_Comm comm, char *text, size_t len);
/* The device info of a CUDA backend (NULL for the others). */
const hx_device_info *hx_backend_device(hx_backend b);
int hx_backend_destroy(hx_backend *b);
hx_backend_kind hx_backend_get_kind(hx_backend b);
/* 1 when b's memory is the host's own (the cpu backend): host code may read
 * and write it without a transfer; 0 for cuda and cpu-memcheck (whose
 * "device" memory is kept apart to catch exactly such accesses). */
int hx_backend_host_memory(hx_backend b);
const char *hx_backend_name(hx_backend b);
/* Wait for all work queued on the backend (every queue). */
int hx_backend_sync(hx_backend b);
/* Number of OpenMP threads the CPU backend uses. */
int hx_backend_num_threads(hx_backend b);

/* The CPU kernels this process runs, in words: "generic", "avx2+fma" or
 * "avx512+avx2+fma" (AVX-512 kernels at some order, hx_cpu_isa_choice; the
 * CPU's instruction sets and HEXCG_CPU_ISA: generic forces the portable
 * loops, avx2 keeps the AVX-512 kernels off). */
const char *hx_cpu_kernels_name(void);

/* Which of the AVX-512 and AVX2 CPU kernels this process runs, and why
 * (kernels/cpu/isa_cpu.c, docs/operator.md "Which AVX-512 kernels run"): what
 * HEXCG_CPU_ISA says where it is set; else, on a CPU with AVX-512
 * F/VL/DQ/BW, a start-up probe (run once per process on first use,
 * thread-safe, a few ms) for the kernels whose results do not depend on the
 * choice (the FP64 operator at p = 2..6, and the kernels chosen for all
 * orders at once), and a table by CPU vendor, family and model for the
 * p = 7 kernel, whose results differ in round-off (the same choice on every
 * rank and in every run on a CPU model). Not collective. */
#define HX_CPU_ISA_PMAX 7
typedef struct {
  const char *kernels; /* hx_cpu_kernels_name() */
  /* "HEXCG_CPU_ISA" (forced), "probe" (and the table at p = 7), "table" (the
   * probe failed: error), "cpu" (no AVX-512 or no AVX2+FMA), "build" (no x86 kernels) */
  const char *source;
  unsigned avx512_orders;             /* bit p: the FP64 operator at order p runs its AVX-512 kernel */
  int avx512;                         /* the AVX-512 kernels chosen for all orders at once (FDM, peak) */
  double ratio[HX_CPU_ISA_PMAX + 1];  /* the probe: AVX-512 / AVX2 best time at order p (0: not measured) */
  double ratio_mean;                  /* their geometric mean (0: no probe) */
  unsigned probe_orders;              /* bit p: the probe would take AVX-512 at order p */
  double probe_ms;                    /* the probe's cost (0: no probe) */
  char cpu[64];                       /* "GenuineIntel family 6 model 207" */
  int table_avx512;                   /* the table's choice for p = 7 */
  const char *table;                  /* the table row's evidence */
  char error[160];                    /* why the probe failed ("" when it did not) */
} hx_cpu_isa_info;
void hx_cpu_isa_choice(hx_cpu_isa_info *info);
/* hx_cpu_isa_choice in one line (no newline, at most len bytes with the
 * NUL): hexcg --version's "cpu kernels:" line. */
void hx_cpu_isa_describe(char *buf, size_t len);

/* Memory in the backend's space. hx_mem_free accepts NULL and nulls *ptr. */
int hx_mem_alloc(hx_backend b, size_t bytes, void **d_ptr);
int hx_mem_free(hx_backend b, void **d_ptr);
int hx_mem_to_device(hx_backend b, void *d_dst, const void *h_src, size_t bytes);
int hx_mem_to_host(hx_backend b, void *h_dst, const void *d_src, size_t bytes);
int hx_mem_copy(hx_backend b, void *d_dst, const void *d_src, size_t bytes);
int hx_mem_zero(hx_backend b, void *d_ptr, size_t bytes);

/* ------------------------------------------------------------ queues
 * A queue is an ordered stream of backend work: what is enqueued on one
 * queue runs in order; work on different queues may run concurrently and is
 * ordered only by events. A queue owns its CUDA stream, its reduction
 * scratch and its pinned result double, so two host threads may each use
 * their own queue at the same time (reductions included). One queue must not
 * be used by two host threads at once.
 *   cuda: a queue is a cudaStream (non-blocking), an event a cudaEvent.
 *   cpu:  a queue is the calling thread: work runs synchronously when it is
 *         enqueued, events are trivially complete; each queue still has its
 *         own reduction scratch (host threads reducing concurrently on their
 *         own queues do not race).
 *   cpu-memcheck: as cpu, but asynchronous transfers complete at the next
 *         synchronisation point of their queue (see hx_mem_to_host_q).
 * Every backend has a default queue; each function without a _q suffix runs
 * on it (and keeps its documented synchronisation). The default queue is not
 * thread-safe: a second host thread needs a queue of its own. Errors are
 * per thread (hx_core.h): a worker thread captures its error with
 * hx_error_capture and the joining thread re-raises it (HX_ERROR_RERAISE).
 * Not collective. */
typedef struct hx_queue_s *hx_queue;
typedef struct hx_event_s *hx_event;

/* A new queue on b (borrowed: b must outlive it). */
int hx_queue_create(hx_backend b, hx_queue *q);
/* Waits for the queue's work, then frees it. Accepts NULL / *q == NULL; nulls
 * *q. The default queue cannot be destroyed (HX_ERR_ARG). */
int hx_queue_destroy(hx_queue *q);
/* b's default queue (owned by b). */
hx_queue hx_backend_default_queue(hx_backend b);
hx_backend hx_queue_backend(hx_queue q);
/* Wait until everything enqueued on q so far has completed (asynchronous
 * transfers included: their host buffers are valid / reusable after it). */
int hx_queue_sync(hx_queue q);

/* The queue forms of the transfers and streaming ops (hx_mem_to_host_q,
 * hx_array_dot_q...) are private to kernels/ and gs/ (kernels/private/
 * queue_impl.h): only the backend layer and the gather-scatter's exchange
 * enqueue work on queues of their own. */

/* Events mark a point in a queue. hx_event_record(ev, q) marks "everything
 * enqueued on q so far"; hx_queue_wait_event(q2, ev) makes work enqueued on
 * q2 afterwards wait for that point (no host blocking); hx_event_sync(ev)
 * blocks the host until it (an event never recorded is complete). An event
 * may be recorded again; a wait refers to the latest record before it. */
int hx_event_create(hx_backend b, hx_event *ev);
int hx_event_destroy(hx_event *ev); /* accepts NULL / *ev == NULL; nulls *ev */
int hx_event_record(hx_event ev, hx_queue q);
int hx_queue_wait_event(hx_queue q, hx_event ev);
int hx_event_sync(hx_event ev);


/* ------------------------------------------------------------ vectors */
typedef struct hx_vec_s *hx_vec;

/* A vector of n doubles in the backend's memory, zero-initialised (the
 * Krylov solvers keep their work vectors in these). The
 * vector borrows b: b must outlive it. */
int hx_vec_create(hx_backend b, int64_t n, hx_vec *v);
int hx_vec_destroy(hx_vec *v);
int64_t hx_vec_size(hx_vec v);
hx_backend hx_vec_backend(hx_vec v);
/* Pointer to the data in the backend's memory space. */
double *hx_vec_data(hx_vec v);
/* Copy n doubles from/to host memory. */
int hx_vec_set_host(hx_vec v, const double *h_src);
int hx_vec_get_host(hx_vec v, double *h_dst);
int hx_vec_set_value(hx_vec v, double value);

/* Streaming ops (BS1-BS4 of the streaming suite). Sizes must match.
 * Reductions are local to this rank and deterministic (HX_REDUCE_CHUNK). */
int hx_vec_copy(hx_vec y, hx_vec x);                        /* y = x */
int hx_vec_axpby(hx_vec y, double a, hx_vec x, double b);   /* y = a x + b y */
int hx_vec_dot(hx_vec x, hx_vec y, double *result);         /* x . y */
int hx_vec_norm2sq(hx_vec x, double *result);               /* x . x */

/* The same on raw arrays in the backend's memory (n entries): hx_array_copy
 * (y = x), hx_array_axpby (y = a x + bb y), hx_array_dot (x . y), inline
 * FP64 forms of the _p entry points (end of this header). */

/* ============================================================ streaming
 * Fused CG updates and the other streaming kernels (BS5...) - issue 7. */
/* (section: stream) */
/* Fused CG kernels (kernels/stream.c). All pointers are backend memory; the
 * reductions are local to this rank and deterministic (fixed HX_REDUCE_CHUNK
 * chunks summed in a fixed order, independent of threads/launch shape).
 * n = vector length; nred <= n = number of leading entries that count in the
 * reduction (the G-vector puts owned nodes first, so nred = owned count).
 * n == 0 is allowed (rr = 0); nred outside [0, n] is HX_ERR_ARG. Not
 * collective. Reductions return with the (host) result, so on cuda they wait
 * for the stream; xpay and pointwise_mult are queued on it (asynchronous). */
/* BS5: x += alpha p; r -= alpha w; *rr = sum_{i<nred} r_i^2 (after the update). */
int hx_array_cg_update(hx_backend b, int64_t n, int64_t nred, double *d_x, double *d_r,
                       const double *d_p, const double *d_w, double alpha, double *rr);
/* the 3-word variant (streamParanumal 2023): r -= alpha w; *rr = sum_{i<nred} r_i^2 */
int hx_array_r_update(hx_backend b, int64_t n, int64_t nred, double *d_r, const double *d_w,
                      double alpha, double *rr);
/* hx_array_xpay (p = z + beta p), hx_array_pointwise_mult (y = x .* z,
 * pointwise, e.g. Jacobi; y == x or y == z allowed), hx_array_norm2sq (BS3:
 * *result = sum_i x_i^2, n entries): inline FP64 forms of the _p entry
 * points (end of this header). */

/* Deferred reductions (issue 17): the _red kernels below leave their local
 * partial sums in a slot of an hx_red (backend memory) and return without
 * waiting (cuda: queued on b's default queue, no host synchronisation);
 * hx_red_fetch completes slots 0..m-1 and reads them to the host together,
 * one transfer and one wait, so a CG iteration waits once per reduction
 * however many dot products it carries. A slot's sum is that of the blocking
 * kernel (same chunks, same order: on the cpu backends bit for bit). Not
 * collective; one host thread at a time. */
typedef struct hx_red_s *hx_red;
/* nslots slots (1..16) for vectors of up to nmax entries. */
int hx_red_create(hx_backend b, int nslots, int64_t nmax, hx_red *red);
int hx_red_destroy(hx_red *red); /* accepts NULL / *red == NULL; nulls *red */
/* h_out[k] = the sum left in slot k (k < m; a slot not written since the
 * last fetch gives 0). Waits for b's default queue; clears the slots. */
int hx_red_fetch(hx_red red, int m, double *h_out);
/* slot k: sum_{i<n} x_i y_i */
int hx_array_dot_red(hx_red red, int k, int64_t n, const double *d_x, const double *d_y);
/* BS5 (hx_array_cg_update) with r.r over [0, nred) left in slot k_rr */
int hx_array_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *d_x, double *d_r,
                           const double *d_p, const double *d_w, double alpha);
/* BS5 fused with a diagonal preconditioner (Jacobi), one pass:
 *   x += alpha p; r -= alpha w; z = d .* r (the new r);
 * sums over [0, nred) of r.r -> slot k_rr, r.z -> k_rz and, when k_zw >= 0,
 * z.w -> k_zw (flexible CG). Each value equals, bit for bit on the cpu
 * backends, hx_array_cg_update, hx_array_pointwise_mult, hx_array_dot run one
 * after the other. No argument may alias another. */
int hx_array_cg_update_diag_red(hx_red red, int k_rr, int k_rz, int k_zw, int64_t n, int64_t nred,
                                double *d_x, double *d_r, const double *d_p, const double *d_w,
                                const double *d_d, double *d_z, double alpha);

/* Device-side interval timer for benchmarks (kernels/stream.c). On cuda: a
 * pair of cudaEvents recorded on the backend's work stream; on cpu there is
 * no device clock and hx_dev_timer_elapsed gives -1. Not collective. */
typedef struct hx_dev_timer_s *hx_dev_timer;
int hx_dev_timer_create(hx_backend b, hx_dev_timer *t);
int hx_dev_timer_destroy(hx_dev_timer *t);
int hx_dev_timer_start(hx_dev_timer t); /* enqueue the start mark */
int hx_dev_timer_stop(hx_dev_timer t);  /* enqueue the stop mark */
/* wait for the stop mark; *seconds between the marks (-1 on cpu) */
int hx_dev_timer_elapsed(hx_dev_timer t, double *seconds);

/* ============================================================ operator
 * Element operator A_L by sum factorisation, geometric factors - issue 5. */
/* (section: ax) */
/* Element-level spectral-element operator (kernels/ax.c, cpu/ax_cpu.c,
 * cuda/ax_cuda.cu; docs/operator.md). Not collective: everything is local to
 * this rank's E elements. On element e with GLL points/weights (t_i, w_i),
 * n = p+1, D = hx_lagrange_deriv on the GLL points:
 *   (A u)_e = sum_{r,s} D_r^T (G_rs . D_s u) + lambda w_i w_j w_k |J| u
 * with G = kappa w_i w_j w_k |J| J^{-1} J^{-T} (6 symmetric factors per node),
 * by sum factorisation (O(n^4) per element).
 * L-vector layout: E*n^3 doubles in the backend's memory; node (i,j,k) of
 * element e at e*n^3 + i + n*(j + n*k) (i along reference direction r). */
typedef struct hx_ax_s *hx_ax;
typedef enum { HX_GEO_PRECOMPUTED = 0, HX_GEO_ONTHEFLY = 1 } hx_geo_mode;
/* Storage of the precomputed factors of curved (non-affine) elements: FP64
 * per node, or split: an FP64 mean per element and FP32 deviations per node,
 * reconstructed in FP64 (docs/operator.md). Affine elements always store 7
 * FP64 constants (unless affine detection is off). */
typedef enum { HX_AX_GEO_FP64 = 0, HX_AX_GEO_SPLIT = 1 } hx_ax_geometry;
typedef struct {
  hx_geo_mode mode;        /* default HX_GEO_PRECOMPUTED */
  hx_ax_geometry geometry; /* default HX_AX_GEO_FP64; SPLIT needs PRECOMPUTED */
  int affine;              /* default 1: detect affine elements (parallelepipeds)
                              and store 7 constants for them; 0: every element
                              stored per node (the reference for the tests) */
  /* Coefficients at the GLL nodes (issue 29): host L-vectors (E (p+1)^3,
   * node order of the L-vector) of kappa (> 0) and lambda (>= 0) replacing
   * h_kappa / h_lambda; NULL: the per-element values. An element whose
   * nodes all carry the same value is handled as with that per-element
   * value (affine record, same bits); one whose value varies is stored per
   * node (geometry fp64 or split), with kappa folded into G and lambda
   * into the mass weight at each node. On-the-fly geometry refuses
   * varying values (HX_ERR_INPUT). Copied. */
  const double *h_kappa_node;
  const double *h_lambda_node;
} hx_ax_opts;
hx_ax_opts hx_ax_opts_default(void);

/* Element operator data for E >= 0 local elements of order p (1..15) on
 * backend b (borrowed: b must outlive ax).
 * h_nodes: host, E*npe*3 element node coordinates (npe = 8 trilinear hex8,
 * or 27 triquadratic hex27), xyz interleaved per node, nodes in tensor order
 * (hex8 vertex (a,b,c) in {0,1}^3 at a+2b+4c; hex27 at a+3b+9c with a,b,c in
 * {0,1,2}, 1 = mid-edge/face/centre point at reference coordinate 0).
 * h_kappa, h_lambda: host, E values (per-element coefficients, kappa > 0,
 * lambda >= 0; h_lambda may be NULL for lambda = 0). mode:
 *   HX_GEO_PRECOMPUTED: store the 6 symmetric factors G and the mass weight
 *     lambda w_i w_j w_k |J| per node (7 doubles/node; 6 when every lambda
 *     is 0, the Poisson case);
 *   HX_GEO_ONTHEFLY: recompute them on the fly from the 8 vertices (hex8 only;
 *     npe = 27 with this mode is an HX_ERR_ARG error).
 * A non-positive Jacobian at any GLL node is an HX_ERR_INPUT error naming the
 * local element index. Inputs are copied.
 * hx_ax_create(b, p, E, npe, h_nodes, h_kappa, h_lambda, mode, &ax): inline,
 * end of this header (the defaults with mode; hx_ax_create_opts_prec, the one
 * constructor, is in hx_kernels_prec.h). */
/* hx_ax_create_opts(b, p, E, npe, h_nodes, h_kappa, h_lambda, opts, &ax): the
 * same with the storage options (hx_ax_create: defaults with mode); opts ==
 * NULL: the defaults. Inline, end of this header.
 * npe may also be (p+1)^3: h_nodes are then the element map's values at the
 * operator's own GLL nodes (an isoparametric map of order p, e.g. an exact
 * curved map sampled by hx_mesh_gll_nodes; PRECOMPUTED only, stored per node). */
/* Elements stored affine (7 constants), split, and general FP64 per node. */
void hx_ax_storage_counts(hx_ax ax, int32_t *n_affine, int32_t *n_split, int32_t *n_general);
hx_ax_geometry hx_ax_geometry_of(hx_ax ax);
const char *hx_ax_geometry_name(hx_ax_geometry g); /* "fp64" | "split" */
/* Accepts NULL / *ax == NULL; nulls *ax. */
int hx_ax_destroy(hx_ax *ax);
/* New lambda for ax (the Helmholtz shift of a time step, hx_disc_set_shift):
 * h_lambda (host, E values, NULL = 0) and h_lambda_node (host L-vector or
 * NULL, as hx_ax_opts) replace the ones ax was made with; the nodes, kappa,
 * geometry mode and storage and the precision stay. The factors are made
 * again by the constructor's own code, so ax holds the same bits as one
 * created with these coefficients; the handle stays valid (operators that
 * borrow it see the new lambda). On an error ax is unchanged. Not
 * collective. */
int hx_ax_set_lambda(hx_ax ax, const double *h_lambda, const double *h_lambda_node);

int hx_ax_order(hx_ax ax);                 /* p */
int32_t hx_ax_num_elements(hx_ax ax);      /* E */
int64_t hx_ax_num_nodes(hx_ax ax);         /* E*(p+1)^3: L-vector length */
hx_geo_mode hx_ax_geo_mode(hx_ax ax);
hx_backend hx_ax_backend(hx_ax ax);

/* hx_ax_apply(ax, d_u, d_w, uw): d_w = A_L d_u for all local elements (backend memory, L-vectors; d_u and
 * d_w must not overlap). If uw != NULL, also *uw = sum over the elements of
 * u_e . w_e (local to this rank, deterministic: on the CPU per-element
 * partials summed in element order, same bits for any thread count; on CUDA
 * a fixed tree, so the last bits differ from the CPU) - this is p.Ap for CG
 * when u = Z p. Synchronous with respect to *uw (returns after the value is
 * on the host); without uw the CUDA launch is asynchronous on the backend's
 * stream. */
/* hx_ax_apply_list(ax, nlist, d_list, d_u, d_w, uw): the same restricted to the nlist elements whose local indices are in
 * d_list (backend memory, int32, each in [0, E), no duplicates): lets the
 * caller do elements touching other ranks first, start the halo exchange,
 * then the interior. Entries of d_w of other elements are left untouched.
 * *uw sums the listed elements in list order. nlist == 0 gives *uw = 0. */
/* hx_ax_apply_list_g(ax, nlist, d_list, d_map, d_x, d_w, uw): hx_ax_apply_list with the scatter fused in: the element reads its values
 * u_e[q] = d_x[d_map[e n^3 + q]] (0 where d_map < 0) straight from the
 * G-vector d_x; d_map: backend memory, E n^3 int32 (the gather-scatter's L->G
 * map). d_list == NULL with nlist == E: every element. Same result bits as
 * scatter + hx_ax_apply_list. */
/* hx_ax_apply_list_g_red(ax, nlist, d_list, d_map, d_x, d_w, red, k): hx_ax_apply_list_g whose sum of the element u.w is not read to the host
 * but appended as one partial to slot k of red (hx_red_fetch returns the
 * slot's partials summed in the order appended): no host wait on cuda, the
 * same value as uw on the cpu backends (an empty list appends 0).
 * These four are inline FP64 forms of hx_ax_apply_prec (hx_kernels_prec.h;
 * end of this header): an FP32 operator refuses them (HX_ERR_ARG). */

/* Host arrays, E*(p+1)^3 each: the diagonal of A_L (for the assembled Jacobi
 * diagonal after gather), and the lumped mass w_i w_j w_k |J| (no lambda)
 * per node (right-hand side, error norms, coarse space). */
int hx_ax_diagonal(hx_ax ax, double *h_diag);
int hx_ax_mass(hx_ax ax, double *h_mass);
/* Bytes moved and flops per element of one hx_ax_apply (model counts, see
 * docs/operator.md; for benchmarks): the mean over the elements of the
 * storage in use. */
void hx_ax_cost(hx_ax ax, double *bytes_per_elem, double *flops_per_elem);
/* Measured FP64 peak of backend b, for rooflines: every CPU thread (OpenMP
 * team) or CUDA thread runs independent register-resident multiply-add
 * chains (x = x*m + c, 2 flops); CPU: runs grown to >= seconds/4, then the
 * best of 3 (total ~ seconds); *gflops = flops/time.
 * On the CPU the loop is compiled with the same flags and instruction-set
 * selection as the operator kernels. Not collective. */
int hx_ax_peak_gflops(hx_backend b, double seconds, double *gflops);

/* ============================================================ FDM
 * Element-level fast-diagonalisation box solves of the Schwarz fine level
 * (kernels/fdm.c, cpu/fdm_cpu.c, cuda/fdm_cuda.cu, math in hx_fdm_math.h;
 * docs/fdm.md). Not collective. Extended L-vectors: m^3 doubles per element,
 * m = p + 3, point (a, b, c) (indices -1..p+1 stored at 0..m-1, a along r)
 * of element e at e*m^3 + a + m*(b + m*c). d_S: backend memory, E*3*m*m
 * (per element the r, s, t matrices, row i = eigenvector i); d_L: backend
 * memory, E*3*m eigenvalues (kappa folded in, lambda added to the r
 * direction). Asynchronous on the backend's stream for cuda. */
/* hx_fdm_elem_apply(b, p, E, d_S, d_L, d_u, d_w): d_w = A_box^{-1} d_u on
 * every element (whole m^3 boxes; d_u, d_w must not overlap). p in 1..15.
 * hx_fdm_elem_apply_list(b, p, nlist, d_list, d_S, d_L, d_u, d_w): the same
 * on the nlist elements whose local indices are in d_list (backend memory,
 * int32, no duplicates; NULL: 0..nlist-1); boxes of other elements are
 * untouched.
 * hx_fdm_elem_apply_map(b, p, nlist, d_list, d_S, d_L, d_map, d_x, d_w): the
 * same with the scatter fused in: the input box of element e is
 * d_x[d_map[e m^3 + pt]] (0 where d_map < 0), d_map an extended L -> G map
 * (backend memory, E m^3 int32), d_x the G-vector; d_list NULL: elements
 * 0..nlist-1. d_w must not overlap d_x.
 * hx_fdm_wgather(b, n, d_idx, d_w, d_x, d_y): d_y[i] = d_idx[i] >= 0 ?
 * d_w[i] * d_x[d_idx[i]] : 0 for i < n (backend memory; d_y must not overlap
 * d_x).
 * Inline FP64 forms of the _p functions (hx_kernels_prec.h; end of this
 * header). */

/* ============================================================ tensor
 * Element-wise tensor-product transfers between orders (kernels/tensor.c,
 * cpu/tensor_cpu.c, cuda/tensor_cuda.cu; math in hx_tensor_math.h). Not
 * collective. d_out_e (c^3 values) = (A x A x A) d_in_e (a^3 values) for
 * e < E, with d_A (backend memory) c x a row-major and the L-vector layout
 * of the operator (e*a^3 + i + a*(j + a*k)). a, c in 1..16; d_in and d_out
 * must not overlap. Asynchronous on the backend's stream for cuda.
 * hx_tensor3_apply(b, a, c, E, d_A, d_in, d_out): FP64, the inline form of
 * hx_tensor3_apply_p (end of this header). */

/* ============================================================ precision
 * FP32 twins of the streaming ops, gather-scatter and operator, conversion
 * kernels (hx_precision, HX_F64 / HX_F32): see hx_kernels_prec.h. */
#include "hx_kernels_prec.h"

/* ------------------------------------------------------------ FP64 names
 * The FP64 forms of the precision-taking entry points, documented above:
 * each is its _p function with HX_F64 (the same code, the same bits). */
static inline int hx_array_copy(hx_backend b, int64_t n, double *d_y, const double *d_x) {
  return hx_array_copy_p(b, HX_F64, n, d_y, d_x);
}
static inline int hx_array_axpby(hx_backend b, int64_t n, double *d_y, double a, const double *d_x, double bb) {
  return hx_array_axpby_p(b, HX_F64, n, d_y, a, d_x, bb);
}
static inline int hx_array_dot(hx_backend b, int64_t n, const double *d_x, const double *d_y, double *result) {
  return hx_array_dot_p(b, HX_F64, n, d_x, d_y, result);
}
static inline int hx_array_xpay(hx_backend b, int64_t n, double *d_p, const double *d_z, double beta) {
  return hx_array_xpay_p(b, HX_F64, n, d_p, d_z, beta);
}
static inline int hx_array_pointwise_mult(hx_backend b, int64_t n, double *d_y, const double *d_x,
                                          const double *d_z) {
  return hx_array_pointwise_mult_p(b, HX_F64, n, d_y, d_x, d_z);
}
static inline int hx_array_norm2sq(hx_backend b, int64_t n, const double *d_x, double *result) {
  return hx_array_norm2sq_p(b, HX_F64, n, d_x, result);
}
static inline int hx_ax_create_opts(hx_backend b, int p, int32_t E, int npe, const double *h_nodes,
                                    const double *h_kappa, const double *h_lambda, const hx_ax_opts *opts,
                                    hx_ax *ax) {
  return hx_ax_create_opts_prec(b, p, E, npe, h_nodes, h_kappa, h_lambda, opts, HX_F64, ax);
}
static inline int hx_ax_create(hx_backend b, int p, int32_t E, int npe, const double *h_nodes, const double *h_kappa,
                               const double *h_lambda, hx_geo_mode mode, hx_ax *ax) {
  return hx_ax_create_prec(b, p, E, npe, h_nodes, h_kappa, h_lambda, mode, HX_F64, ax);
}
static inline int hx_ax_apply(hx_ax ax, const double *d_u, double *d_w, double *uw) {
  return hx_ax_apply_prec(ax, HX_F64, ax ? hx_ax_num_elements(ax) : 0, NULL, NULL, d_u, d_w, uw, NULL, 0);
}
static inline int hx_ax_apply_list(hx_ax ax, int32_t nlist, const int32_t *d_list, const double *d_u, double *d_w,
                                   double *uw) {
  return hx_ax_apply_prec(ax, HX_F64, nlist, d_list, NULL, d_u, d_w, uw, NULL, 0);
}
static inline int hx_ax_apply_list_g(hx_ax ax, int32_t nlist, const int32_t *d_list, const int32_t *d_map,
                                     const double *d_x, double *d_w, double *uw) {
  return hx_ax_apply_prec(ax, HX_F64, nlist, d_list, d_map, d_x, d_w, uw, NULL, 0);
}
static inline int hx_ax_apply_list_g_red(hx_ax ax, int32_t nlist, const int32_t *d_list, const int32_t *d_map,
                                         const double *d_x, double *d_w, hx_red red, int k) {
  return hx_ax_apply_prec(ax, HX_F64, nlist, d_list, d_map, d_x, d_w, NULL, red, k);
}
static inline int hx_fdm_elem_apply_list(hx_backend b, int p, int32_t nlist, const int32_t *d_list,
                                         const double *d_S, const double *d_L, const double *d_u, double *d_w) {
  return hx_fdm_elem_apply_list_p(b, HX_F64, p, nlist, d_list, d_S, d_L, d_u, d_w);
}
static inline int hx_fdm_elem_apply(hx_backend b, int p, int32_t E, const double *d_S, const double *d_L,
                                    const double *d_u, double *d_w) {
  return hx_fdm_elem_apply_list_p(b, HX_F64, p, E, NULL, d_S, d_L, d_u, d_w);
}
static inline int hx_fdm_elem_apply_map(hx_backend b, int p, int32_t nlist, const int32_t *d_list,
                                        const double *d_S, const double *d_L, const int32_t *d_map,
                                        const double *d_x, double *d_w) {
  return hx_fdm_elem_apply_map_p(b, HX_F64, p, nlist, d_list, d_S, d_L, d_map, d_x, d_w);
}
static inline int hx_fdm_wgather(hx_backend b, int64_t n, const int32_t *d_idx, const double *d_w,
                                 const double *d_x, double *d_y) {
  return hx_fdm_wgather_p(b, n, d_idx, d_w, HX_F64, d_x, HX_F64, d_y);
}
static inline int hx_tensor3_apply(hx_backend b, int a, int c, int32_t E, const double *d_A, const double *d_in,
                                   double *d_out) {
  return hx_tensor3_apply_p(b, HX_F64, a, c, E, d_A, d_in, d_out);
}

#ifdef __cplusplus
}
#endif
#endif
