// SPDX-License-Identifier: Apache-2.0
// A kernel that keeps the GPU busy for `ns` nanoseconds while the host enqueues the launches to
// time, so host-side launch cost stays out of the event timings of short kernels.
#pragma once

namespace hgemm::bench {
namespace {

__global__ void spin(long long ns) {
  for (long long t = 0; t < ns; t += 1000) __nanosleep(1000);
}

}  // namespace
}  // namespace hgemm::bench
