// SPDX-License-Identifier: Apache-2.0
#include "peak.h"

#include <cuda_fp16.h>

#include "common/tc.cuh"
#include "spin.cuh"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

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

// Reads n 16-byte words, 4 independent loads per thread per trip, bypassing L1; folds them into
// one word so the loads are not dead.
__global__ void read_words(const uint4* __restrict__ p, std::size_t n, unsigned* out) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) acc ^= p[i].x;
  if (acc == 0x9e3779b9u) out[0] = acc;  // practically never: keeps acc live
}

// How fast a kernel can read `bytes` that are not in L2, timed as hgemm-bench times a GEMM:
// events around one launch behind a spin kernel, buffers rotated over 3× the L2 so each launch
// reads from DRAM, median of 31 launches. The roof of the decode kernels (they read B once).
double time_read_tbps(std::size_t bytes) {
  int dev = 0, l2 = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  const int sets = static_cast<int>(std::max<std::size_t>(2, (3 * std::size_t(l2) + bytes - 1) / bytes));
  std::vector<uint4*> buffers(sets, nullptr);
  unsigned* out = nullptr;
  bool ok = cudaMalloc(&out, sizeof(unsigned)) == cudaSuccess;
  for (uint4*& b : buffers) ok = ok && cudaMalloc(&b, bytes) == cudaSuccess && cudaMemset(b, 0x5a, bytes) == cudaSuccess;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  for (int r = 0; ok && r < 32; ++r) {
    spin<<<1, 1>>>(50'000);
    cudaEventRecord(start);
    read_words<<<sm_count() * 8, 256>>>(buffers[r % sets], bytes / sizeof(uint4), out);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    if (r > 0) ms.push_back(t);  // the first launch warms up
  }
  const cudaError_t err = cudaGetLastError();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (uint4* b : buffers) cudaFree(b);
  cudaFree(out);
  if (!ok || err != cudaSuccess) throw std::runtime_error(std::string("read roof: ") + cudaGetErrorString(err));
  std::sort(ms.begin(), ms.end());
  return bytes / (ms[ms.size() / 2] * 1e-3) / 1e12;
}

}  // namespace

std::vector<PeakResult> measure_peaks() {
  constexpr std::size_t k4096 = std::size_t(4096) * 4096 * 2, k8192 = std::size_t(8192) * 8192 * 2;
  return {
      {"HFMA2 (half2 FMA, 4 flops)", time_tflops(__float2half2_rn(0.999f), __float2half2_rn(0.001f), 4.0), "TFLOP/s"},
      {"HFMA (scalar half FMA, 2 flops)", time_tflops(__float2half(0.999f), __float2half(0.001f), 2.0), "TFLOP/s"},
      {"FFMA (fp32 FMA, 2 flops)", time_tflops(0.999f, 0.001f, 2.0), "TFLOP/s"},
      {"mma.sync m16n8k16, f16 accumulate", time_mma_tflops(mma_chains<__half>), "TFLOP/s"},
      {"mma.sync m16n8k16, f32 accumulate", time_mma_tflops(mma_chains<float>), "TFLOP/s"},
      {"DRAM read, 4096x4096 halves (33.6 MB)", time_read_tbps(k4096), "TB/s"},
      {"DRAM read, 8192x8192 halves (134 MB)", time_read_tbps(k8192), "TB/s"},
  };
}

}  // namespace hgemm::bench
