// CUDA element-wise tensor-product transfer: one block per element, its
// input box and the two intermediates in dynamic shared memory (at most
// 3 x 16^3 doubles = 96 KiB at order 15, above the 48 KiB default: the
// kernel asks for the larger carve-out once), each thread computing entries
// of one stage at a time. Templated on the value type: double (the FP64
// transfer) and float (hx_tensor3_apply_p with HX_F32, the overloads of the
// float math). Per-entry math: ../hx_tensor_math.h (the same
// sums in the same order as cpu/tensor_cpu.c).
#include "../hx_tensor_math.h"
#include "backend_impl.h"
#include "hx_cuda_check.h"

template <typename T>
__global__ void __launch_bounds__(256)
    hx_tensor3_kernel(int a, int c, const T *__restrict__ A, const T *__restrict__ in, T *__restrict__ out) {
  extern __shared__ unsigned char s_raw[];
  T *s_mem = reinterpret_cast<T *>(s_raw);
  const int a3 = a * a * a, n1 = c * a * a, n2 = c * c * a, c3 = c * c * c;
  T *s_in = s_mem, *t1 = s_in + a3, *t2 = t1 + n1;
  const size_t e = blockIdx.x;
  for (int pt = threadIdx.x; pt < a3; pt += blockDim.x) s_in[pt] = in[e * a3 + pt];
  __syncthreads();
  for (int pt = threadIdx.x; pt < n1; pt += blockDim.x) t1[pt] = hx_tensor_stage1(a, c, A, s_in, pt);
  __syncthreads();
  for (int pt = threadIdx.x; pt < n2; pt += blockDim.x) t2[pt] = hx_tensor_stage2(a, c, A, t1, pt);
  __syncthreads();
  for (int pt = threadIdx.x; pt < c3; pt += blockDim.x) out[e * c3 + pt] = hx_tensor_stage3(a, c, A, t2, pt);
}

template <typename T>
static int launch(hx_backend b, int a, int c, int32_t E, const T *A, const T *in, T *out) {
  const size_t shmem = sizeof(T) * (size_t)(a * a * a + c * a * a + c * c * a);
  if (shmem > 48 * 1024)
    HX_CUDA(cudaFuncSetAttribute(hx_tensor3_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  const int m = a > c ? a : c, threads = m * m * m < 256 ? ((m * m * m + 31) / 32) * 32 : 256;
  hx_tensor3_kernel<T><<<(unsigned)E, threads, shmem, HX_STREAM(b)>>>(a, c, A, in, out);
  HX_CUDA_LAUNCH_CHECK();
  return HX_SUCCESS;
}

extern "C" int hx_cuda_tensor3(hx_backend b, int a, int c, int32_t E, const double *A, const double *in,
                               double *out) {
  return launch<double>(b, a, c, E, A, in, out);
}

extern "C" int hx_cuda_tensor3_f32(hx_backend b, int a, int c, int32_t E, const float *A, const float *in,
                                   float *out) {
  return launch<float>(b, a, c, E, A, in, out);
}
