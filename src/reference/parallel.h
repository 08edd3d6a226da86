// SPDX-License-Identifier: Apache-2.0
// The reference's one threading helper: a loop split across the machine's cores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace hgemm::ref {

/// Runs body(begin, end) over [0, count) split across the machine's cores.
template <typename Body>
void parallel_for(std::int64_t count, Body body) {
  const std::int64_t threads =
      std::max<std::int64_t>(1, std::min<std::int64_t>(std::thread::hardware_concurrency(), count / 16 + 1));
  if (threads == 1) {
    body(std::int64_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t chunk = (count + threads - 1) / threads;
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::int64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin < end) pool.emplace_back([=] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace hgemm::ref
