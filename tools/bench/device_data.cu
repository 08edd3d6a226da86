// SPDX-License-Identifier: Apache-2.0
#include "device_data.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "reference/random.h"

namespace hgemm::bench {

namespace {

__device__ inline void store(__half* p, float v) { *p = __float2half(v); }
__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ inline void store(float* p, float v) { *p = v; }

__device__ inline float load(const __half* p) { return __half2float(*p); }
__device__ inline float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline float load(const float* p) { return *p; }

template <typename T>
__global__ void fill_uniform(T* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    store(p + i, static_cast<float>(ref::random_uniform(seed, i)));
}

// out[0] = max |d − ref| (NaN and Inf count as +inf), out[1] = max |ref|; floats ≥ 0 compare as ints.
template <typename T>
__global__ void max_errors(const T* d, const float* ref, std::size_t n, std::size_t cols, std::size_t ld,
                           unsigned* out) {
  float err = 0.f, mag = 0.f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    if (i % ld >= cols) continue;
    const float x = load(d + i), r = ref[i];
    err = fmaxf(err, isfinite(x) ? fabsf(x - r) : INFINITY);
    mag = fmaxf(mag, fabsf(r));
  }
  atomicMax(&out[0], __float_as_uint(err));
  atomicMax(&out[1], __float_as_uint(mag));
}

}  // namespace

void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

DeviceBuffer::DeviceBuffer(std::size_t n_bytes) : bytes(n_bytes) {
  check_cuda(cudaMalloc(&ptr, std::max<std::size_t>(n_bytes, 1)), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() { cudaFree(ptr); }

void fill_random(void* p, DataType type, std::size_t count, std::uint64_t seed) {
  switch (type) {
    case DataType::F16: fill_uniform<<<1024, 256>>>(static_cast<__half*>(p), count, seed); break;
    case DataType::BF16: fill_uniform<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), count, seed); break;
    case DataType::F32: fill_uniform<<<1024, 256>>>(static_cast<float*>(p), count, seed); break;
  }
  check_cuda(cudaGetLastError(), "fill_uniform");
}

void poison(void* p, std::size_t bytes) { check_cuda(cudaMemset(p, 0xFF, bytes), "cudaMemset"); }

double relative_max_error(const void* d, DataType type, const float* ref, std::size_t count, std::int64_t cols,
                          std::int64_t ld) {
  if (count == 0) return 0.0;
  DeviceBuffer out(2 * sizeof(unsigned));
  unsigned* d_out = static_cast<unsigned*>(out.ptr);
  check_cuda(cudaMemset(d_out, 0, out.bytes), "cudaMemset");
  const std::size_t c = static_cast<std::size_t>(cols), l = static_cast<std::size_t>(ld);
  switch (type) {
    case DataType::F16: max_errors<<<1024, 256>>>(static_cast<const __half*>(d), ref, count, c, l, d_out); break;
    case DataType::BF16: max_errors<<<1024, 256>>>(static_cast<const __nv_bfloat16*>(d), ref, count, c, l, d_out); break;
    case DataType::F32: max_errors<<<1024, 256>>>(static_cast<const float*>(d), ref, count, c, l, d_out); break;
  }
  check_cuda(cudaGetLastError(), "max_errors");
  unsigned h[2];
  check_cuda(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost), "comparing with the reference");
  float err, mag;
  std::memcpy(&err, &h[0], 4);
  std::memcpy(&mag, &h[1], 4);
  return mag > 0 ? err / mag : err;
}

}  // namespace hgemm::bench
