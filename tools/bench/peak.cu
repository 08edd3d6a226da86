#include "peak.h"

#include <cuda_fp16.h>

#include <stdexcept>

namespace hgemm::bench {

namespace {

constexpr int kChains = 8;       // independent accumulators per thread: enough to cover FMA latency
constexpr int kIters = 1 << 14;  // FMAs per chain

template <typename T> __device__ __forceinline__ T fma_op(T a, T b, T c);
template <> __device__ __forceinline__ __half2 fma_op(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
template <> __device__ __forceinline__ __half fma_op(__half a, __half b, __half c) { return __hfma(a, b, c); }
template <> __device__ __forceinline__ float fma_op(float a, float b, float c) { return fmaf(a, b, c); }

// acc_i = acc_i · x + y, kChains independent chains; the result is stored so nothing is dead.
template <typename T>
__global__ void fma_chains(T x, T y, T* out) {
  T acc[kChains];
#pragma unroll
  for (int i = 0; i < kChains; ++i) acc[i] = y;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < kChains; ++i) acc[i] = fma_op(acc[i], x, y);
  T sum = acc[0];
#pragma unroll
  for (int i = 1; i < kChains; ++i) sum = sum + acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <typename T>
double time_tflops(T x, T y, double flops_per_fma) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int blocks = sms * 8, threads = 256;
  T* out = nullptr;
  if (cudaMalloc(&out, sizeof(T) * blocks * threads) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  fma_chains<<<blocks, threads>>>(x, y, out);  // warm-up
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(start);
    fma_chains<<<blocks, threads>>>(x, y, out);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    best = ms < best ? ms : best;
  }
  const cudaError_t err = cudaGetLastError();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(out);
  if (err != cudaSuccess) throw std::runtime_error(std::string("peak kernel: ") + cudaGetErrorString(err));
  const double fmas = double(blocks) * threads * kChains * kIters;
  return fmas * flops_per_fma / (best * 1e-3) / 1e12;
}

}  // namespace

std::vector<PeakResult> measure_cuda_core_peaks() {
  return {
      {"HFMA2 (half2 FMA, 4 flops)", time_tflops(__float2half2_rn(0.999f), __float2half2_rn(0.001f), 4.0)},
      {"HFMA (scalar half FMA, 2 flops)", time_tflops(__float2half(0.999f), __float2half(0.001f), 2.0)},
      {"FFMA (fp32 FMA, 2 flops)", time_tflops(0.999f, 0.001f, 2.0)},
  };
}

}  // namespace hgemm::bench
