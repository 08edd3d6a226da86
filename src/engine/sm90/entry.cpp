// The engine as a registry entry: "engine.sm90" runs the plan the dispatch policy makes for the
// problem on the current device. It takes every type combination of the typed API, and applies
// the fused epilogue in its kernels.
#include "dispatch/device.h"
#include "dispatch/engine_policy.h"
#include "engine/sm90/launch.h"
#include "common/sm90/launch.h"
#include "registry/registry.h"

namespace hgemm::detail {
namespace {

Status run(const Matmul& p, cudaStream_t stream, std::string* message) {
  Device device;
  if (Status s = current_device(&device, message); s != Status::Success) return s;
  return engine::launch(plan_engine(p, device), p, stream, message);
}

}  // namespace

const KernelEntry& entry_engine_sm90() {
  constexpr unsigned in = type_bit(DataType::F16) | type_bit(DataType::BF16);
  constexpr unsigned out = in | type_bit(DataType::F32);
  static const KernelEntry e{{"engine.sm90", "engine", 1,
                              "the Hopper engine: persistent warp-specialised wgmma with TMA multicast, stream-K, "
                              "split-K and cluster split-K, small and swapped tiles, chosen per problem",
                              90, 90, kAllOps, kBothAccums, 1, false, in, out},
                             nullptr, &sm90::supports, &run, true};
  return e;
}

}  // namespace hgemm::detail
