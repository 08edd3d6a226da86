// The engine's grouped kernels: 128×128 single CTAs with a 5-slot ring over the grouped
// scheduler's units, for every operand major and accumulator/input pair (12 instantiations).
#include "engine/sm90/grouped.cuh"
#include "engine/sm90/kernel_launcher.cuh"

namespace hgemm::detail::engine {

using GroupedTiles = Persistent<kGroupedBN, 1, 5, false>;

template <bool A_MN, bool B_MN, typename Acc, typename In>
using GroupedOf = GroupedKernel<GroupedTiles, A_MN, B_MN, Acc, In>;

Status launch_grouped_kernel(const KernelLaunch& l, const GroupedParams& p, std::string* message) {
  return with_kernel<GroupedOf>(l, [&](auto tag) {
    using K = typename decltype(tag)::type;
    static_assert(K::BN == kGroupedBN, "the plan's tile");
    const void* fn = reinterpret_cast<const void*>(&grouped_kernel<K>);
    if (Status s = sm90::set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
    grouped_kernel<K><<<l.grid, K::kThreads, K::kSmemBytes, l.stream>>>(p, l.map_a, l.map_b);
    return launch_status(message);
  });
}

}  // namespace hgemm::detail::engine
