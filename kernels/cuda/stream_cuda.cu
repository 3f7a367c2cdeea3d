// CUDA streaming kernels: the vector ops and reductions for FP64 and FP32
// (kernels templated on the type, one extern "C" launcher per type), the
// conversions between the two, the fused CG kernels with the deferred
// reductions (FP64) and the benchmark event timer. Per-entry math comes
// from hx_stream_math.h (shared with cpu/stream_cpu.c). Reductions: stage 1
// reduces each HX_REDUCE_CHUNK chunk in one block in double (fixed order),
// stage 2 sums the chunk partials in one block (fixed order): deterministic,
// and a blocking reduction gives the bits of its deferred twin.
#include "../hx_stream_math.h"
#include "prec_impl.h"
#include "hx_cuda_check.h"

#define HX_SBLOCK 256    // threads per block, stage 1 and the elementwise kernels
#define HX_SBLOCK2 1024  // threads of the single stage-2 block

static inline unsigned hx_sgrid(int64_t n) {
  int64_t g = (n + HX_SBLOCK - 1) / HX_SBLOCK;
  return (unsigned)(g > 65535 * 16 ? 65535 * 16 : (g < 1 ? 1 : g));
}

// grid-stride loop of the elementwise kernels
#define HX_SFOR(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

// Deterministic shared-memory tree sum of one value per thread of a block of NT.
template <int NT>
static __device__ double hx_stream_block_sum(double v) {
  __shared__ double s[NT];
  s[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int w = NT / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

// ------------------------------------------------------------ elementwise
template <typename T>
static __global__ void hx_copy_kernel(int64_t n, T *__restrict__ y, const T *__restrict__ x) {
  HX_SFOR(i, n) y[i] = x[i];
}
// into D from S: exact into double, round to nearest (even) into float
template <typename D, typename S>
static __global__ void hx_convert_kernel(int64_t n, D *__restrict__ y, const S *__restrict__ x) {
  HX_SFOR(i, n) y[i] = (D)x[i];
}
template <typename T>
static __global__ void hx_axpby_kernel(int64_t n, T *__restrict__ y, T a, const T *__restrict__ x, T b) {
  HX_SFOR(i, n) y[i] = hx_axpby_1(a, x[i], b, y[i]);
}
template <typename T>
static __global__ void hx_xpay_kernel(int64_t n, T *__restrict__ p, const T *__restrict__ z, T beta) {
  HX_SFOR(i, n) p[i] = hx_xpay_1(z[i], beta, p[i]);
}
// y may alias x or z: no __restrict__
template <typename T>
static __global__ void hx_pmult_kernel(int64_t n, T *y, const T *x, const T *z) {
  HX_SFOR(i, n) y[i] = hx_pmult_1(x[i], z[i]);
}
static __global__ void hx_axpy_f32_to_f64_kernel(int64_t n, double *__restrict__ y, double a,
                                                 const float *__restrict__ x) {
  HX_SFOR(i, n) y[i] = hx_axpy_f32_to_f64_1(y[i], a, x[i]);
}

// launch an elementwise kernel over n entries on q
template <typename... P, typename... A>
static int hx_elementwise(hx_queue q, void (*kernel)(int64_t, P...), int64_t n, A... args) {
  kernel<<<hx_sgrid(n), HX_SBLOCK, 0, HX_QSTREAM(q)>>>(n, args...);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_copy(hx_queue q, int64_t n, double *y, const double *x) {
  return hx_elementwise(q, hx_copy_kernel<double>, n, y, x);
}
extern "C" int hx_cuda_copy_f32(hx_queue q, int64_t n, float *y, const float *x) {
  return hx_elementwise(q, hx_copy_kernel<float>, n, y, x);
}
extern "C" int hx_cuda_convert(hx_queue q, int64_t n, double *y, const float *x) {
  return hx_elementwise(q, hx_convert_kernel<double, float>, n, y, x);
}
extern "C" int hx_cuda_convert_f32(hx_queue q, int64_t n, float *y, const double *x) {
  return hx_elementwise(q, hx_convert_kernel<float, double>, n, y, x);
}
extern "C" int hx_cuda_axpby(hx_queue q, int64_t n, double *y, double a, const double *x, double bb) {
  return hx_elementwise(q, hx_axpby_kernel<double>, n, y, a, x, bb);
}
extern "C" int hx_cuda_axpby_f32(hx_queue q, int64_t n, float *y, float a, const float *x, float bb) {
  return hx_elementwise(q, hx_axpby_kernel<float>, n, y, a, x, bb);
}
extern "C" int hx_cuda_xpay(hx_queue q, int64_t n, double *p, const double *z, double beta) {
  return hx_elementwise(q, hx_xpay_kernel<double>, n, p, z, beta);
}
extern "C" int hx_cuda_xpay_f32(hx_queue q, int64_t n, float *p, const float *z, float beta) {
  return hx_elementwise(q, hx_xpay_kernel<float>, n, p, z, beta);
}
extern "C" int hx_cuda_pointwise_mult(hx_queue q, int64_t n, double *y, const double *x, const double *z) {
  return hx_elementwise(q, hx_pmult_kernel<double>, n, y, x, z);
}
extern "C" int hx_cuda_pointwise_mult_f32(hx_queue q, int64_t n, float *y, const float *x, const float *z) {
  return hx_elementwise(q, hx_pmult_kernel<float>, n, y, x, z);
}
extern "C" int hx_cuda_axpy_f32_to_f64(hx_queue q, int64_t n, double *y, double a, const float *x) {
  return hx_elementwise(q, hx_axpy_f32_to_f64_kernel, n, y, a, x);
}

// ------------------------------------------------------------ reductions
// Stage 1 of a dot product (SQ: the squared norm of x; y unused): block c
// reduces chunk c.
template <typename T, bool SQ>
static __global__ void hx_dot_stage1(int64_t n, const T *__restrict__ x, const T *__restrict__ y,
                                     double *__restrict__ part) {
  const int64_t lo = (int64_t)blockIdx.x * HX_REDUCE_CHUNK;
  const int64_t hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
  double s = 0.0;
#pragma unroll 4
  for (int64_t i = lo + threadIdx.x; i < hi; i += HX_SBLOCK) s += SQ ? hx_sq_1(x[i]) : hx_dot_1(x[i], y[i]);
  s = hx_stream_block_sum<HX_SBLOCK>(s);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// Stage 1 of BS5 (X: x += alpha p too) and of the 3-word r update: block c
// updates chunk c and writes its partial if the chunk holds reduced entries
// (c < nchunks(nred)).
template <bool X>
static __global__ void hx_cg_update_stage1(int64_t n, int64_t nred, double *__restrict__ x,
                                           double *__restrict__ r, const double *__restrict__ p,
                                           const double *__restrict__ w, double alpha,
                                           double *__restrict__ part) {
  const int64_t lo = (int64_t)blockIdx.x * HX_REDUCE_CHUNK;
  const int64_t hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
  double s = 0.0;
#pragma unroll 4
  for (int64_t i = lo + threadIdx.x; i < hi; i += HX_SBLOCK) {
    if (X) x[i] = hx_x_update_1(x[i], alpha, p[i]);
    const double ri = hx_r_update_1(r[i], alpha, w[i]);
    r[i] = ri;
    if (i < nred) s += hx_sq_1(ri);
  }
  if (lo < nred) {
    s = hx_stream_block_sum<HX_SBLOCK>(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
  }
}

// Stage 2: one block sums v[0..m) in a fixed order. Four independent partial
// sums per thread keep four loads in flight (m reaches 2^17 for a 4 GiB
// vector: a chain of dependent loads would cost ~10% there).
static __device__ double hx_stage2_sum(int64_t m, const double *__restrict__ v) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t i = threadIdx.x;
  for (; i + 3 * HX_SBLOCK2 < m; i += 4 * HX_SBLOCK2) {
    s0 += v[i];
    s1 += v[i + HX_SBLOCK2];
    s2 += v[i + 2 * HX_SBLOCK2];
    s3 += v[i + 3 * HX_SBLOCK2];
  }
  for (; i < m; i += HX_SBLOCK2) s0 += v[i];
  return hx_stream_block_sum<HX_SBLOCK2>((s0 + s1) + (s2 + s3));
}

static __global__ void hx_stream_stage2(int64_t m, double *__restrict__ part) {
  const double s = hx_stage2_sum(m, part);
  if (threadIdx.x == 0) part[0] = s;
}

// stage 2 over the first m partials, copy the result to the host
static int hx_stream_finish(hx_queue q, int64_t m, double *result) {
  *result = 0.0;
  if (m <= 0) {
    HX_CUDA(cudaStreamSynchronize(HX_QSTREAM(q)));
    return HX_SUCCESS;
  }
  hx_stream_stage2<<<1, HX_SBLOCK2, 0, HX_QSTREAM(q)>>>(m, q->d_partials);
  HX_CUDA_LAUNCH_CHECK();
  HX_CUDA(cudaMemcpyAsync(q->h_result, q->d_partials, sizeof(double), cudaMemcpyDeviceToHost, HX_QSTREAM(q)));
  HX_CUDA(cudaStreamSynchronize(HX_QSTREAM(q)));
  *result = *q->h_result;
  return HX_SUCCESS;
}

static int hx_stream_grid_check(int64_t nc) {
  HX_CHECK(nc <= 2147483647LL, HX_ERR_ARG, "vector too long for one launch (%lld chunks)", (long long)nc);
  return HX_SUCCESS;
}

// stage 1 of x.y (SQ: x.x) into part[0 .. nchunks(n)) on stream s
template <typename T, bool SQ>
static int hx_dot_parts(cudaStream_t s, int64_t n, const T *x, const T *y, double *part) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_stream_grid_check(nc));
  hx_dot_stage1<T, SQ><<<(unsigned)nc, HX_SBLOCK, 0, s>>>(n, x, y, part);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

// stage 1 of the CG update (X: with the x update) into part on stream s
template <bool X>
static int hx_cg_parts(cudaStream_t s, int64_t n, int64_t nred, double *x, double *r, const double *p,
                       const double *w, double alpha, double *part) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_stream_grid_check(nc));
  hx_cg_update_stage1<X><<<(unsigned)nc, HX_SBLOCK, 0, s>>>(n, nred, x, r, p, w, alpha, part);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

// a blocking x.y (SQ: x.x) on q's own scratch
template <typename T, bool SQ>
static int hx_cuda_dot_t(hx_queue q, int64_t n, const T *x, const T *y, double *result) {
  HX_CALL(hx_queue_partials(q, (size_t)hx_num_chunks(n)));
  HX_CALL((hx_dot_parts<T, SQ>(HX_QSTREAM(q), n, x, y, q->d_partials)));
  HX_CALL(hx_stream_finish(q, hx_num_chunks(n), result));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_dot(hx_queue q, int64_t n, const double *x, const double *y, double *result) {
  return hx_cuda_dot_t<double, false>(q, n, x, y, result);
}
extern "C" int hx_cuda_dot_f32(hx_queue q, int64_t n, const float *x, const float *y, double *result) {
  return hx_cuda_dot_t<float, false>(q, n, x, y, result);
}
extern "C" int hx_cuda_norm2sq(hx_queue q, int64_t n, const double *x, double *result) {
  return hx_cuda_dot_t<double, true>(q, n, x, nullptr, result);
}
extern "C" int hx_cuda_norm2sq_f32(hx_queue q, int64_t n, const float *x, double *result) {
  return hx_cuda_dot_t<float, true>(q, n, x, nullptr, result);
}

extern "C" int hx_cuda_cg_update(hx_queue q, int64_t n, int64_t nred, double *x, double *r, const double *p,
                                 const double *w, double alpha, double *rr) {
  HX_CALL(hx_queue_partials(q, (size_t)hx_num_chunks(n)));
  HX_CALL(hx_cg_parts<true>(HX_QSTREAM(q), n, nred, x, r, p, w, alpha, q->d_partials));
  HX_CALL(hx_stream_finish(q, hx_num_chunks(nred), rr));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_r_update(hx_queue q, int64_t n, int64_t nred, double *r, const double *w,
                                double alpha, double *rr) {
  HX_CALL(hx_queue_partials(q, (size_t)hx_num_chunks(n)));
  HX_CALL(hx_cg_parts<false>(HX_QSTREAM(q), n, nred, nullptr, r, nullptr, w, alpha, q->d_partials));
  HX_CALL(hx_stream_finish(q, hx_num_chunks(nred), rr));
  return HX_SUCCESS;
}

// ------------------------------------------------------------ event timer
extern "C" int hx_cuda_event_pair_create(void **ev) {
  *ev = NULL;
  cudaEvent_t *e = (cudaEvent_t *)calloc(2, sizeof(cudaEvent_t));
  HX_CHECK(e, HX_ERR_MEM, "out of host memory");
  cudaError_t c0 = cudaEventCreate(&e[0]);
  cudaError_t c1 = c0 == cudaSuccess ? cudaEventCreate(&e[1]) : c0;
  if (c1 != cudaSuccess) {
    if (c0 == cudaSuccess) cudaEventDestroy(e[0]);
    free(e);
    return HX_ERROR(HX_ERR_CUDA, "cudaEventCreate failed: %s (%s)", cudaGetErrorName(c1),
                    cudaGetErrorString(c1));
  }
  *ev = (void *)e;
  return HX_SUCCESS;
}

extern "C" int hx_cuda_event_pair_destroy(void *ev) {
  if (!ev) return HX_SUCCESS;
  cudaEvent_t *e = (cudaEvent_t *)ev;
  cudaError_t c0 = cudaEventDestroy(e[0]), c1 = cudaEventDestroy(e[1]);
  free(e);
  HX_CUDA(c0);
  HX_CUDA(c1);
  return HX_SUCCESS;
}

extern "C" int hx_cuda_event_pair_record(hx_backend b, void *ev, int which) {
  cudaEvent_t *e = (cudaEvent_t *)ev;
  HX_CUDA(cudaEventRecord(e[which ? 1 : 0], HX_STREAM(b)));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_event_elapsed(void *ev, double *seconds) {
  cudaEvent_t *e = (cudaEvent_t *)ev;
  float ms = 0.0f;
  HX_CUDA(cudaEventSynchronize(e[1]));
  HX_CUDA(cudaEventElapsedTime(&ms, e[0], e[1]));
  *seconds = 1e-3 * (double)ms;
  return HX_SUCCESS;
}

// ------------------------------------------------------------ deferred reductions
// Stage 1 kernels write chunk partials into their slot's row of red->part
// and return (no copy, no wait); hx_cuda_red_fetch runs stage 2 for every
// slot at once (block k sums row k into d_res[k]), copies the m sums to the
// pinned host array and waits once.

// x += alpha p; r -= alpha w; z = d r; partials of r.r, r.z (, z.w)
static __global__ void hx_cg_update_diag_stage1(int64_t n, int64_t nred, double *__restrict__ x,
                                                double *__restrict__ r, const double *__restrict__ p,
                                                const double *__restrict__ w, const double *__restrict__ d,
                                                double *__restrict__ z, double alpha,
                                                double *__restrict__ prr, double *__restrict__ prz,
                                                double *__restrict__ pzw) {
  const int64_t lo = (int64_t)blockIdx.x * HX_REDUCE_CHUNK;
  const int64_t hi = lo + HX_REDUCE_CHUNK < n ? lo + HX_REDUCE_CHUNK : n;
  double srr = 0.0, srz = 0.0, szw = 0.0;
#pragma unroll 4
  for (int64_t i = lo + threadIdx.x; i < hi; i += HX_SBLOCK) {
    x[i] = hx_x_update_1(x[i], alpha, p[i]);
    const double wi = w[i];
    const double ri = hx_r_update_1(r[i], alpha, wi);
    const double zi = hx_pmult_1(ri, d[i]);
    r[i] = ri;
    z[i] = zi;
    if (i < nred) {
      srr += hx_sq_1(ri);
      srz += hx_dot_1(ri, zi);
      if (pzw) szw += hx_dot_1(zi, wi);
    }
  }
  if (lo < nred) {  // uniform across the block: the __syncthreads inside are safe
    srr = hx_stream_block_sum<HX_SBLOCK>(srr);
    if (threadIdx.x == 0) prr[blockIdx.x] = srr;
    __syncthreads();
    srz = hx_stream_block_sum<HX_SBLOCK>(srz);
    if (threadIdx.x == 0) prz[blockIdx.x] = srz;
    if (pzw) {
      __syncthreads();
      szw = hx_stream_block_sum<HX_SBLOCK>(szw);
      if (threadIdx.x == 0) pzw[blockIdx.x] = szw;
    }
  }
}

// Stage 2 of every slot: block k sums nparts[k] partials of row k (the
// stage-2 order of hx_stream_stage2) into res[k].
struct hx_red_counts {
  int64_t n[HX_RED_MAX_SLOTS];
};
static __global__ void hx_red_stage2(hx_red_counts cnt, int64_t ncmax, const double *__restrict__ part,
                                     double *__restrict__ res) {
  const int k = blockIdx.x;
  const int64_t m = cnt.n[k];
  const double s = hx_stage2_sum(m, part + (int64_t)k * ncmax);
  if (threadIdx.x == 0) res[k] = s;
}

extern "C" int hx_cuda_red_alloc(hx_red red) {
  HX_CUDA(cudaMalloc((void **)&red->part, sizeof(double) * (size_t)red->nslots * (size_t)red->ncmax));
  HX_CUDA(cudaMalloc((void **)&red->d_res, sizeof(double) * (size_t)red->nslots));
  HX_CUDA(cudaMallocHost((void **)&red->h_res, sizeof(double) * (size_t)red->nslots));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_red_free(hx_red red) {
  // the stream may still use the scratch: wait for it first
  cudaError_t e0 = cudaStreamSynchronize(HX_STREAM(red->b));
  cudaError_t e1 = red->part ? cudaFree(red->part) : cudaSuccess;
  cudaError_t e2 = red->d_res ? cudaFree(red->d_res) : cudaSuccess;
  cudaError_t e3 = red->h_res ? cudaFreeHost(red->h_res) : cudaSuccess;
  red->part = red->d_res = red->h_res = NULL;
  HX_CUDA(e0);
  HX_CUDA(e1);
  HX_CUDA(e2);
  HX_CUDA(e3);
  return HX_SUCCESS;
}

extern "C" int hx_cuda_red_fetch(hx_red red, int m) {
  cudaStream_t s = HX_STREAM(red->b);
  if (m > 0) {
    hx_red_counts cnt;
    for (int k = 0; k < HX_RED_MAX_SLOTS; k++) cnt.n[k] = k < red->nslots ? red->nparts[k] : 0;
    hx_red_stage2<<<(unsigned)m, HX_SBLOCK2, 0, s>>>(cnt, red->ncmax, red->part, red->d_res);
    HX_CUDA_LAUNCH_CHECK();
    HX_CUDA(cudaMemcpyAsync(red->h_res, red->d_res, sizeof(double) * (size_t)m, cudaMemcpyDeviceToHost, s));
  }
  HX_CUDA(cudaStreamSynchronize(s));
  return HX_SUCCESS;
}

extern "C" int hx_cuda_dot_red(hx_red red, int k, int64_t n, const double *x, const double *y) {
  HX_CALL((hx_dot_parts<double, false>(HX_STREAM(red->b), n, x, y, red->part + (int64_t)k * red->ncmax)));
  red->nparts[k] = hx_num_chunks(n);
  return HX_SUCCESS;
}

extern "C" int hx_cuda_cg_update_red(hx_red red, int k_rr, int64_t n, int64_t nred, double *x, double *r,
                                     const double *p, const double *w, double alpha) {
  HX_CALL(hx_cg_parts<true>(HX_STREAM(red->b), n, nred, x, r, p, w, alpha, red->part + (int64_t)k_rr * red->ncmax));
  red->nparts[k_rr] = hx_num_chunks(nred);
  return HX_SUCCESS;
}

extern "C" int hx_cuda_cg_update_diag_red(hx_red red, int k_rr, int k_rz, int k_zw, int64_t n, int64_t nred,
                                          double *x, double *r, const double *p, const double *w,
                                          const double *d, double *z, double alpha) {
  const int64_t nc = hx_num_chunks(n);
  HX_CALL(hx_stream_grid_check(nc));
  double *row = red->part;
  hx_cg_update_diag_stage1<<<(unsigned)nc, HX_SBLOCK, 0, HX_STREAM(red->b)>>>(
      n, nred, x, r, p, w, d, z, alpha, row + (int64_t)k_rr * red->ncmax, row + (int64_t)k_rz * red->ncmax,
      k_zw >= 0 ? row + (int64_t)k_zw * red->ncmax : NULL);
  HX_CUDA_LAUNCH_CHECK();
  red->nparts[k_rr] = red->nparts[k_rz] = hx_num_chunks(nred);
  if (k_zw >= 0) red->nparts[k_zw] = hx_num_chunks(nred);
  return HX_SUCCESS;
}
