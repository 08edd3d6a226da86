// SPDX-License-Identifier: Apache-2.0
// The engine's 128×128 grouped kernels: single CTAs with a 5-slot ring over the grouped
// scheduler's units, for every operand major and accumulator/input pair (12 instantiations).
#include "engine/sm90/grouped.cuh"

namespace hgemm::detail::engine {

static_assert(shape_info(KernelShape::Grouped128x128).bm == kGroupedBM &&
                  shape_info(KernelShape::Grouped128x128).bn == kGroupedNarrowBN,
              "kKernelShapes describes it");

Status launch_grouped_narrow(const KernelLaunch& l, const GroupedParams& p, std::string* message) {
  return GroupedTiles<kGroupedNarrowBN, 5, kMaxGroupedGroups, 2, true>::launch(l, p, message);
}

}  // namespace hgemm::detail::engine
