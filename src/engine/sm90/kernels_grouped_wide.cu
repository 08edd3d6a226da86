// SPDX-License-Identifier: Apache-2.0
// The engine's 128×256 grouped kernels: single CTAs with a 4-slot ring, one staging buffer per
// consumer and a table of kGroupedWideMaxGroups, for f32 accumulators (8 instantiations, each
// over a minute of ptxas: their own translation unit, so they compile beside the 128×128 ones).
#include "engine/sm90/grouped.cuh"

namespace hgemm::detail::engine {

static_assert(shape_info(KernelShape::Grouped128x256).bm == kGroupedBM &&
                  shape_info(KernelShape::Grouped128x256).bn == kGroupedWideBN,
              "kKernelShapes describes it");

Status launch_grouped_wide(const KernelLaunch& l, const GroupedParams& p, std::string* message) {
  if (p.groups > kGroupedWideMaxGroups || l.accum != Accum::F32) {
    *message = "internal: the 128x256 grouped kernel takes f32 accumulators and its table's groups";
    return Status::CudaError;
  }
  return GroupedTiles<kGroupedWideBN, 4, kGroupedWideMaxGroups, 1, false>::launch(l, p, message);
}

}  // namespace hgemm::detail::engine
