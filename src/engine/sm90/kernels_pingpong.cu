// SPDX-License-Identifier: Apache-2.0
// The engine's ping-pong kernel: persistent 64×256 units per consumer warpgroup, clusters of 2
// CTAs along M sharing B by multicast, 4 ring slots; f32 accumulators, f16 and bf16 inputs, also
// plain (pingpong.cuh). Compiled only with -DHGEMM_ENGINE_PINGPONG=ON (CMakeLists.txt).
#include "engine/sm90/pingpong_build.h"
#ifdef HGEMM_ENGINE_PINGPONG
#include "engine/sm90/pingpong.cuh"
#else
#include "engine/sm90/launch.h"
#endif

namespace hgemm::detail::engine {

#ifdef HGEMM_ENGINE_PINGPONG
bool pingpong_built() { return true; }

using PingPongWide = PingPong<256, 2, 4>;
static_assert(config_matches<PingPongWide>(KernelShape::PingPong), "kKernelShapes describes PingPong");

Status launch_pingpong(const KernelLaunch& l, std::string* message) {
  if (l.accum != Accum::F32 || l.params.cluster_splits > 1 || l.params.stream_k.parked != nullptr) {
    *message = "internal: the ping-pong kernel takes f32 accumulators, whole tiles or split-K";
    return Status::CudaError;
  }
  return launch_pingpong_of<PingPongWide>(l, message);
}
#else
bool pingpong_built() { return false; }

Status launch_pingpong(const KernelLaunch&, std::string* message) {
  *message = kPingPongNotBuilt;
  return Status::UnsupportedArch;
}
#endif

}  // namespace hgemm::detail::engine
