// SPDX-License-Identifier: Apache-2.0
// The engine as registry entries: "engine.sm90" runs every problem the way the dispatch policy
// plans it; "engine.sm90_pingpong" runs every problem on the ping-pong kernel (f32 accumulators),
// which the policy does not choose, in a build configured with HGEMM_ENGINE_PINGPONG=ON. Both carry out the plan the dispatch made for them
// (src/dispatch/policy.cpp) and plan nothing themselves. Both take every type combination of the
// typed API, and apply the fused epilogue in their kernels.
#include "common/sm90/launch.h"
#include "engine/sm90/launch.h"
#include "engine/sm90/pingpong_build.h"
#include "registry/registry.h"

namespace hgemm::detail {

namespace {

/// sm90::supports, and first whether this build compiled the kernel (as for a missing arch).
Status pingpong_supports(const Matmul& p, std::string* why) {
  if (!engine::pingpong_built()) {
    *why = engine::kPingPongNotBuilt;
    return Status::UnsupportedArch;
  }
  return sm90::supports(p, why);
}

}  // namespace

const KernelEntry& entry_engine_sm90() {
  constexpr unsigned in = type_bit(DataType::F16) | type_bit(DataType::BF16);
  constexpr unsigned out = in | type_bit(DataType::F32);
  static const KernelEntry e{{"engine.sm90", "engine", 1,
                              "the Hopper engine: persistent warp-specialised wgmma with TMA multicast, stream-K, "
                              "split-K and cluster split-K, small and swapped tiles, chosen per problem",
                              90, 90, kAllOps, kBothAccums, 1, false, in, out},
                             nullptr, &sm90::supports, nullptr, true, &engine::launch};
  return e;
}

const KernelEntry& entry_engine_sm90_pingpong() {
  constexpr unsigned in = type_bit(DataType::F16) | type_bit(DataType::BF16);
  constexpr unsigned out = in | type_bit(DataType::F32);
  static const KernelEntry e{{"engine.sm90_pingpong", "engine", 2,
                              "the engine's ping-pong kernel for every problem: two consumer warpgroups with "
                              "64x256 tiles of their own take turns at the tensor cores, one's epilogue under "
                              "the other's mainloop; whole tiles or split-K",
                              90, 90, kAllOps, kAccF32, 1, false, in, out},
                             nullptr, &pingpong_supports, nullptr, true, &engine::launch};
  return e;
}

}  // namespace hgemm::detail
