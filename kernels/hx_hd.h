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

#endif
