// SPDX-License-Identifier: Apache-2.0
// The engine's one-tile-per-CTA kernels for a C too small for the persistent ones: 128×64,
// 64×64, 64×32 and 64×16 tiles, a ring as deep as fits but no deeper than K, a producer warp.
#include <type_traits>

#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/tile_per_cta.cuh"

namespace hgemm::detail::engine {

/// The tile per CTA of shape S (its tile from kKernelShapes).
template <KernelShape S, bool PLAIN>
struct TilesOf {
  static_assert(!shape_info(S).persistent && !shape_info(S).swapped, "a tile per CTA");
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = TilePerCtaKernel<DeepestRing<shape_info(S).bm, shape_info(S).bn, false, PLAIN>, A_MN, B_MN, Acc, In>;
};

static_assert(kShortK == 2 * BK, "the short-K entry's ring holds every slice of its K");

/// The __global__ entry of the tiles per CTA. SHORT_K: a launch over at most kShortK of 64-row
/// tiles with f32 accumulators, one warpgroup (no producer warp: the ring holds every slice)
/// bound to 64 registers a thread, so that eight CTAs share an SM and a batch of small products
/// runs in one wave. Over a longer K a CTA has the SM to itself, and the bound would slow its
/// k-loop and store; f16 accumulators take 80 registers (six CTAs per SM) and would spill
/// (measured: docs/ladder.md#small-tiles).
template <typename K, bool SHORT_K>
__global__ void __launch_bounds__(SHORT_K ? 128 : K::kThreads, SHORT_K ? 8 : 1)
    tile_kernel(KernelParams p, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_d) {
  K::run(p, map_a, map_b, map_d);
}

/// Launches tile_kernel<K> with the threads and shared memory of the launch's ring (no deeper
/// than its K), so that a short K lets several CTAs share an SM. No clusters.
template <typename K, bool SHORT_K>
Status launch_tile_kernel(const KernelLaunch& l, std::string* message) {
  const void* fn = reinterpret_cast<const void*>(&tile_kernel<K, SHORT_K>);
  if (Status s = sm90::set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
  const std::int64_t k = l.params.k;
  tile_kernel<K, SHORT_K><<<l.grid, K::threads(k), K::smem_bytes(k), l.stream>>>(l.params, l.map_a, l.map_b, l.map_d);
  return launch_status(message);
}

template <template <bool, bool, typename, typename> class KernelT>
Status launch_ring_for_k(const KernelLaunch& l, std::string* message) {
  return with_kernel<KernelT>(l, message, [&](auto tag) {
    using K = typename decltype(tag)::type;
    if constexpr (K::BM == 64 && std::is_same_v<typename K::Mma::Reg, float>) {
      static_assert(K::threads(kShortK) == 128, "a short K needs no producer warp");
      if (l.short_k) {
        if (l.params.k > kShortK) {
          *message = "internal: a short-K plan over a longer K";
          return Status::CudaError;
        }
        return launch_tile_kernel<K, true>(l, message);
      }
    } else if (l.short_k) {
      *message = "internal: a short-K plan for a kernel without the entry";
      return Status::CudaError;
    }
    return launch_tile_kernel<K, false>(l, message);
  });
}

template <bool PLAIN>
Status launch_tiles_of(const KernelLaunch& l, KernelShape shape, std::string* message) {
  switch (shape) {
    case KernelShape::Tile128x64:
      return launch_ring_for_k<TilesOf<KernelShape::Tile128x64, PLAIN>::template Kernel>(l, message);
    case KernelShape::Tile64x64: return launch_ring_for_k<TilesOf<KernelShape::Tile64x64, PLAIN>::template Kernel>(l, message);
    case KernelShape::Tile64x32: return launch_ring_for_k<TilesOf<KernelShape::Tile64x32, PLAIN>::template Kernel>(l, message);
    case KernelShape::Tile64x16: return launch_ring_for_k<TilesOf<KernelShape::Tile64x16, PLAIN>::template Kernel>(l, message);
    default: *message = "internal: not a tile-per-CTA kernel"; return Status::CudaError;
  }
}

Status launch_tiles(const KernelLaunch& l, KernelShape shape, std::string* message) {
  if (l.b_mn && (shape == KernelShape::Tile64x32 || shape == KernelShape::Tile64x16)) {
    *message = "internal: a tile narrower than 64 columns cannot hold B with op N";
    return Status::UnsupportedOp;
  }
  return l.plain ? launch_tiles_of<true>(l, shape, message) : launch_tiles_of<false>(l, shape, message);
}

}  // namespace hgemm::detail::engine
