// SPDX-License-Identifier: Apache-2.0
// The engine's Narrow kernel: persistent 128×128 single CTAs with a 6-slot ring, for M ≤ 128
// (a pair of CTAs stacked along M would leave one idle) and for cluster split-K; with and without
// the stream-K branches, each also plain (PlainOf).
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/persistent.cuh"

namespace hgemm::detail::engine {

using Narrow = Persistent<128, 1, 6, false>;
static_assert(config_matches<Narrow>(KernelShape::Narrow), "kKernelShapes describes Narrow");

Status launch_narrow(const KernelLaunch& l, bool stream_k, std::string* message) {
  return launch_persistent<Narrow>(l, stream_k, message);
}

}  // namespace hgemm::detail::engine
