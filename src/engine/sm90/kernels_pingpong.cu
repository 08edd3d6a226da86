// SPDX-License-Identifier: Apache-2.0
// The engine's ping-pong kernel: persistent 64×256 units per consumer warpgroup, clusters of 2
// CTAs along M sharing B by multicast, 4 ring slots; f32 accumulators, f16 and bf16 inputs, also
// plain (pingpong.cuh).
#include "engine/sm90/pingpong.cuh"

namespace hgemm::detail::engine {

using PingPongWide = PingPong<256, 2, 4>;
static_assert(config_matches<PingPongWide>(KernelShape::PingPong), "kKernelShapes describes PingPong");

Status launch_pingpong(const KernelLaunch& l, std::string* message) {
  if (l.accum != Accum::F32 || l.params.cluster_splits > 1 || l.params.stream_k.parked != nullptr) {
    *message = "internal: the ping-pong kernel takes f32 accumulators, whole tiles or split-K";
    return Status::CudaError;
  }
  return launch_pingpong_of<PingPongWide>(l, message);
}

}  // namespace hgemm::detail::engine
