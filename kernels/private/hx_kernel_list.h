/* Private to kernels/: the launchers of the kernels that exist in both
 * precisions, declared once (issue 49). A line of HX_KERNELS
 *   X(name, CPU return type, (CPU parameters), (CUDA parameters))
 * written with HX_KT for the value type declares four functions: the CPU
 * loops hx_cpu_<name> (HX_KT = double) and hx_cpu_<name>_f32 (float), and,
 * in a CUDA build, the launchers hx_cuda_<name> and hx_cuda_<name>_f32 (int,
 * extern "C", defined in kernels/cuda/). HX_CPU_P(prec, name, args...) and
 * HX_CUDA_P(prec, name, args...) call the one of precision prec (pointer
 * arguments may be void *: C converts them; scalars are converted to the
 * type). An entry point checks its arguments and calls them through
 * HX_KERNEL_DISPATCH (backend_impl.h). Included from backend_impl.h. */
#ifndef HX_KERNEL_LIST_H
#define HX_KERNEL_LIST_H

#ifdef __cplusplus
extern "C" {
#endif

#define HX_KERNELS(X)                                                                                            \
  /* streaming (cpu/stream_cpu_t.h, cuda/stream_cuda.cu; queued on q) */                                         \
  X(copy, int, (int64_t n, HX_KT *y, const HX_KT *x), (hx_queue q, int64_t n, HX_KT *y, const HX_KT *x))         \
  X(axpby, int, (int64_t n, HX_KT *y, HX_KT a, const HX_KT *x, HX_KT bb),                                        \
    (hx_queue q, int64_t n, HX_KT *y, HX_KT a, const HX_KT *x, HX_KT bb))                                        \
  X(xpay, int, (int64_t n, HX_KT *p, const HX_KT *z, HX_KT beta),                                               \
    (hx_queue q, int64_t n, HX_KT *p, const HX_KT *z, HX_KT beta))                                              \
  X(pointwise_mult, int, (int64_t n, HX_KT *y, const HX_KT *x, const HX_KT *z),                                 \
    (hx_queue q, int64_t n, HX_KT *y, const HX_KT *x, const HX_KT *z))                                          \
  X(dot, int, (hx_queue q, int64_t n, const HX_KT *x, const HX_KT *y, double *result),                          \
    (hx_queue q, int64_t n, const HX_KT *x, const HX_KT *y, double *result))                                    \
  X(norm2sq, int, (hx_queue q, int64_t n, const HX_KT *x, double *result),                                      \
    (hx_queue q, int64_t n, const HX_KT *x, double *result))                                                    \
  /* the extra diagonal on listed entries (cpu/diag_cpu_t.h, cuda/diag_cuda.cu): xrx != NULL gets             \
   * sum_{j<mred} r_j x_{idx_j}^2 (host memory on the cpu, backend memory on cuda) */                            \
  X(diag_add_list, void,                                                                                        \
    (int64_t m, int64_t mred, const int32_t *idx, const HX_KT *r, const HX_KT *x, HX_KT *y, double *xrx),       \
    (hx_backend b, int64_t m, int64_t mred, const int32_t *idx, const HX_KT *r, const HX_KT *x, HX_KT *y,       \
     double *xrx))                                                                                              \
  /* the tensor-product transfer (cpu/tensor_cpu.c, cuda/tensor_cuda.cu) */                                     \
  X(tensor3, int, (int a, int c, int32_t E, const HX_KT *A, const HX_KT *in, HX_KT *out),                       \
    (hx_backend b, int a, int c, int32_t E, const HX_KT *A, const HX_KT *in, HX_KT *out))                       \
  /* the element operator (cpu/ax_cpu.c, cuda/ax_cuda.cu): part = the element u.w in double; map != NULL: u    \
   * is a G-vector read through it */                                                                           \
  X(ax_apply, int,                                                                                              \
    (const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map, const HX_KT *u,          \
     HX_KT *w, double *part),                                                                                   \
    (const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map, const HX_KT *u,          \
     HX_KT *w, double *part))                                                                                   \
  /* the element operator on nk vectors at once (cpu/ax_cpu.c, cuda/ax_cuda.cu): u[c], w[c] the columns;      \
   * part != NULL: column c's element u.w at part[c nlist + list position] */                                  \
  X(ax_apply_many, int,                                                                                         \
    (const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map, int nk,                  \
     const HX_KT *const *u, HX_KT *const *w, double *part),                                                     \
    (const struct hx_ax_s *ax, int32_t nlist, const int32_t *list, const int32_t *map, int nk,                  \
     const HX_KT *const *u, HX_KT *const *w, double *part))

#define HX_KCAT_(a, b) a##b
#define HX_KCAT(a, b) HX_KCAT_(a, b)
#define HX_KDECL_CPU(name, ret, cpu, cuda) ret HX_KCAT(HX_KCAT(hx_cpu_, name), HX_KSUF) cpu;
#define HX_KDECL_CUDA(name, ret, cpu, cuda) int HX_KCAT(HX_KCAT(hx_cuda_, name), HX_KSUF) cuda;
struct hx_ax_s;

#ifdef HEXCG_HAVE_CUDA
#define HX_KDECL(name, ret, cpu, cuda) HX_KDECL_CPU(name, ret, cpu, cuda) HX_KDECL_CUDA(name, ret, cpu, cuda)
#else
#define HX_KDECL HX_KDECL_CPU
#endif
#define HX_KT double
#define HX_KSUF
HX_KERNELS(HX_KDECL)
#undef HX_KT
#undef HX_KSUF
#define HX_KT float
#define HX_KSUF _f32
HX_KERNELS(HX_KDECL)
#undef HX_KT
#undef HX_KSUF

#define HX_CPU_P(prec, name, ...) \
  ((prec) == HX_F64 ? hx_cpu_##name(__VA_ARGS__) : hx_cpu_##name##_f32(__VA_ARGS__))
#define HX_CUDA_P(prec, name, ...) \
  ((prec) == HX_F64 ? hx_cuda_##name(__VA_ARGS__) : hx_cuda_##name##_f32(__VA_ARGS__))

#ifdef __cplusplus
}
#endif
#endif
