// SPDX-License-Identifier: Apache-2.0
// The random values of the tests and the benchmark, one formula for host and device: value
// number `index` of the stream `seed` is the same everywhere, so a failure is reproduced from
// the seed alone.
#pragma once

#include <cuda_runtime_api.h>  // __host__ __device__

#include <cstdint>

namespace hgemm::ref {

__host__ __device__ inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t x = seed * 0x632BE59BD9B4E019ull + index + 0x9E3779B97F4A7C15ull;  // splitmix64
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1).
__host__ __device__ inline double random_uniform(std::uint64_t seed, std::uint64_t index) {
  return 2.0 * static_cast<double>(random_bits(seed, index) >> 11) * (1.0 / 9007199254740992.0) - 1.0;
}

}  // namespace hgemm::ref
