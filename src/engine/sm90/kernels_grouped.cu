// The engine's grouped kernels over the grouped scheduler's units: 128×128 single CTAs with a
// 5-slot ring for every operand major and accumulator/input pair (12 instantiations), and
// 128×256 ones with a 4-slot ring for f32 accumulators (8: each takes ptxas over a minute).
#include "engine/sm90/grouped.cuh"
#include "engine/sm90/kernel_launcher.cuh"

namespace hgemm::detail::engine {

template <int BN, int STAGES, int MAX_GROUPS, int BUFFERS>
struct GroupedTiles {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = GroupedKernel<Persistent<BN, 1, STAGES, false>, MAX_GROUPS, BUFFERS, A_MN, B_MN, Acc, In>;
};
using NarrowGrouped = GroupedTiles<kGroupedNarrowBN, 5, kMaxGroupedGroups, 2>;
using WideGrouped = GroupedTiles<kGroupedWideBN, 4, kGroupedWideMaxGroups, 1>;

template <template <bool, bool, typename, typename> class KernelT, bool F16_ACCUM>
Status launch_grouped_template(const KernelLaunch& l, const GroupedParams& p, std::string* message) {
  return with_kernel<KernelT, F16_ACCUM>(l, [&](auto tag) {
    using K = typename decltype(tag)::type;
    const void* fn = reinterpret_cast<const void*>(&grouped_kernel<K>);
    if (Status s = sm90::set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
    grouped_kernel<K><<<l.grid, K::kThreads, K::kSmemBytes, l.stream>>>(p, l.map_a, l.map_b);
    return launch_status(message);
  });
}

Status launch_grouped_kernel(const KernelLaunch& l, int bn, const GroupedParams& p, std::string* message) {
  if (bn == kGroupedWideBN) {
    if (p.groups > kGroupedWideMaxGroups || l.accum != Accum::F32) {
      *message = "internal: the 128x256 grouped kernel takes f32 accumulators and its table's groups";
      return Status::CudaError;
    }
    return launch_grouped_template<WideGrouped::Kernel, false>(l, p, message);
  }
  if (bn != kGroupedNarrowBN) {
    *message = "internal: not a grouped kernel's tile";
    return Status::CudaError;
  }
  return launch_grouped_template<NarrowGrouped::Kernel, true>(l, p, message);
}

}  // namespace hgemm::detail::engine
