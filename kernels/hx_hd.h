/* HX_HD: math shared between the CPU backend and the CUDA kernels.
 *
 * Everything in this header (and in the kernels/hx_*_math.h headers that
 * include it) is plain C that also compiles as CUDA C++: static inline
 * functions, no VLAs, no compound literals, explicit casts of void *. Under
 * nvcc HX_HD becomes __host__ __device__, so the CPU tests exercise exactly
 * the per-node arithmetic that the GPU runs.
 */
#ifndef HX_HD_H
#define HX_HD_H

#if defined(__CUDACC__)
#define HX_HD __host__ __device__
#else
#define HX_HD
#endif

#if defined(__cplusplus) || defined(__CUDACC__)
#define HX_RESTRICT __restrict__
#else
#define HX_RESTRICT restrict
#endif

/* Chunk length of the two-stage deterministic reductions. Both backends
 * reduce fixed chunks of this many entries (each chunk in a fixed order) and
 * then add the chunk partials in chunk order, so a reduction gives the same
 * bits for any thread count. */
#define HX_REDUCE_CHUNK 4096

/* ---- streaming ops: per-entry math ---- */
static inline HX_HD double hx_axpby_1(double a, double x, double b, double y) { return a * x + b * y; }
static inline HX_HD double hx_dot_1(double x, double y) { return x * y; }

/* Sum the products x[i]*y[i] of one chunk [lo, hi) in a fixed order with
 * 4 independent accumulators (vectorisable, deterministic). */
static inline HX_HD double hx_chunk_dot(const double *HX_RESTRICT x, const double *HX_RESTRICT y,
                                        long lo, long hi) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  long i = lo;
  for (; i + 3 < hi; i += 4) {
    s0 += hx_dot_1(x[i], y[i]);
    s1 += hx_dot_1(x[i + 1], y[i + 1]);
    s2 += hx_dot_1(x[i + 2], y[i + 2]);
    s3 += hx_dot_1(x[i + 3], y[i + 3]);
  }
  for (; i < hi; i++) s0 += hx_dot_1(x[i], y[i]);
  return (s0 + s1) + (s2 + s3);
}

#endif
