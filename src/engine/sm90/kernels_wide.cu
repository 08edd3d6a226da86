// SPDX-License-Identifier: Apache-2.0
// The engine's Wide kernel: persistent 128×256 tiles, clusters of 2 CTAs along M sharing B by
// multicast, 4 ring slots; with and without the stream-K branches, each also plain (PlainOf).
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/persistent.cuh"

namespace hgemm::detail::engine {

using Wide = Persistent<256, 2, 4, false>;
static_assert(config_matches<Wide>(KernelShape::Wide), "kKernelShapes describes Wide");

Status launch_wide(const KernelLaunch& l, bool stream_k, std::string* message) {
  return launch_persistent<Wide>(l, stream_k, message);
}

}  // namespace hgemm::detail::engine
