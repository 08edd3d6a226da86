#include "peak.h"

#include <cuda_fp16.h>

#include "common/tc.cuh"

#include <cstddef>
#include <stdexcept>
#include <string>

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

int sm_count() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return sms;
}

/// Best of 5 timed calls of `launch` (after one untimed), in ms, with `outputs` elements of Out
/// allocated for the kernel to write; throws on a CUDA error.
template <typename Out, typename Launch>
float best_ms(std::size_t outputs, Launch launch) {
  Out* out = nullptr;
  if (cudaMalloc(&out, sizeof(Out) * outputs) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch(out);  // warm-up
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(start);
    launch(out);
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
  return best;
}

template <typename T>
double time_tflops(T x, T y, double flops_per_fma) {
  const int blocks = sm_count() * 8, threads = 256;
  const float ms = best_ms<T>(std::size_t(blocks) * threads, [&](T* out) { fma_chains<<<blocks, threads>>>(x, y, out); });
  const double fmas = double(blocks) * threads * kChains * kIters;
  return fmas * flops_per_fma / (ms * 1e-3) / 1e12;
}

// The sm_80 tensor-core instruction on its own (the library's mma_m16n8k16, tc.cuh): kChains
// independent m16n8k16 accumulators per warp, fragments in registers, so the rate is the tensor
// pipe's for mma.sync (the roof of the wmma/mma ladder; Hopper's full rate needs wgmma).
template <typename Acc>
__global__ void mma_chains(unsigned x, float* out) {
  const std::uint32_t a[4] = {x, x ^ 1u, x ^ 2u, x ^ 3u}, b[2] = {x ^ 4u, x ^ 5u};
  detail::MmaAcc<Acc> acc[kChains];
  for (int it = 0; it < kIters / 16; ++it)
#pragma unroll
    for (int i = 0; i < kChains; ++i) detail::mma_m16n8k16(acc[i], a, b);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kChains; ++i)
    for (auto w : acc[i].r) sum += static_cast<float>(w);
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <typename Kernel>
double time_mma_tflops(Kernel kernel) {
  const int blocks = sm_count() * 4, threads = 256;
  const unsigned x = 0x3c003c00u;  // (1.0, 1.0) as half2
  const float ms = best_ms<float>(std::size_t(blocks) * threads, [&](float* out) { kernel<<<blocks, threads>>>(x, out); });
  const double mmas = double(blocks) * (threads / 32) * kChains * (kIters / 16);
  return mmas * 2.0 * 16 * 8 * 16 / (ms * 1e-3) / 1e12;
}

}  // namespace

std::vector<PeakResult> measure_peaks() {
  return {
      {"HFMA2 (half2 FMA, 4 flops)", time_tflops(__float2half2_rn(0.999f), __float2half2_rn(0.001f), 4.0)},
      {"HFMA (scalar half FMA, 2 flops)", time_tflops(__float2half(0.999f), __float2half(0.001f), 2.0)},
      {"FFMA (fp32 FMA, 2 flops)", time_tflops(0.999f, 0.001f, 2.0)},
      {"mma.sync m16n8k16, f16 accumulate", time_mma_tflops(mma_chains<__half>)},
      {"mma.sync m16n8k16, f32 accumulate", time_mma_tflops(mma_chains<float>)},
  };
}

}  // namespace hgemm::bench
