// SPDX-License-Identifier: Apache-2.0
// Device data of hgemm-bench: buffers, random fills of each element type, and the comparison of
// a result (any output type) with the f32 reference.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "hgemm/hgemm.h"

namespace hgemm::bench {

/// Throws std::runtime_error naming `what` when err is not cudaSuccess.
void check_cuda(cudaError_t err, const char* what);

/// `bytes` of device memory (at least one), freed with the object.
struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n_bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/// Writes `count` elements of `type` at p: uniform values in [-1, 1) from the stream `seed`,
/// the same numbers for every type before rounding (never a zero fill: zeros run faster on a
/// power-capped GPU). Asynchronous on the default stream.
void fill_random(void* p, DataType type, std::size_t count, std::uint64_t seed);

/// Sets every byte to 0xFF: NaN in f16, bf16 and f32, so an element a kernel leaves unwritten
/// (or a C it reads although beta = 0) shows as an error.
void poison(void* p, std::size_t bytes);

/// max |d − ref| / max |ref| (max |d − ref| when ref is all zero) over the first `cols` elements
/// of each row of stride `ld` of `count` elements; d has `type`, ref is f32. NaN or Inf in d
/// count as an infinite error. Synchronises the device.
double relative_max_error(const void* d, DataType type, const float* ref, std::size_t count, std::int64_t cols,
                          std::int64_t ld);

}  // namespace hgemm::bench
