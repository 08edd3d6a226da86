// SPDX-License-Identifier: Apache-2.0
// A kernel that keeps the GPU busy for `ns` nanoseconds while the host enqueues the launches to
// time, so host-side launch cost stays out of the event timings of short kernels; and the
// interleaved timing loop of the suites that time entries against each other.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hgemm::bench {
namespace {

__global__ void spin(long long ns) {
  for (long long t = 0; t < ns; t += 1000) __nanosleep(1000);
}

/// Times `entries` entries against each other: `warmup` untimed rounds, then `iters` rounds, each
/// behind a spin, that launch every entry once in a rotating order, `launch(j)` between two
/// events. Returns each entry's `iters` times in milliseconds.
template <typename Launch>
std::vector<std::vector<float>> time_interleaved(int entries, int warmup, int iters, Launch launch) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  };
  std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(entries) * iters);
  for (auto& e : events) check(cudaEventCreate(&e), "cudaEventCreate");
  auto pair = [&](int j, int it) { return &events[2 * (static_cast<std::size_t>(j) * iters + it)]; };
  for (int w = 0; w < warmup; ++w)
    for (int j = 0; j < entries; ++j) launch(j);
  for (int it = 0; it < iters; ++it) {
    spin<<<1, 1>>>(2'000'000);
    for (int x = 0; x < entries; ++x) {
      const int j = (x + it) % entries;
      check(cudaEventRecord(pair(j, it)[0]), "cudaEventRecord");
      launch(j);
      check(cudaEventRecord(pair(j, it)[1]), "cudaEventRecord");
    }
  }
  check(cudaDeviceSynchronize(), "benchmark launches");
  std::vector<std::vector<float>> ms(entries, std::vector<float>(iters));
  for (int j = 0; j < entries; ++j)
    for (int it = 0; it < iters; ++it)
      check(cudaEventElapsedTime(&ms[j][it], pair(j, it)[0], pair(j, it)[1]), "cudaEventElapsedTime");
  for (auto& e : events) cudaEventDestroy(e);
  return ms;
}

}  // namespace
}  // namespace hgemm::bench
