// The engine's one-tile-per-CTA kernels for a C too small for the persistent ones: 128×64,
// 64×64, 64×32 and 64×16 tiles, a ring as deep as fits but no deeper than K, a producer warp.
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/tile_per_cta.cuh"

namespace hgemm::detail::engine {

template <int BM, int BN>
struct TilesOf {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = TilePerCtaKernel<DeepestRing<BM, BN>, A_MN, B_MN, Acc, In>;
};

/// launch_kernel_template with the threads and shared memory of the launch's ring (no deeper than
/// its K), so that a short K lets several CTAs share an SM. No clusters.
template <template <bool, bool, typename, typename> class KernelT>
Status launch_ring_for_k(const KernelLaunch& l, std::string* message) {
  return with_kernel<KernelT>(l, [&](auto tag) {
    using K = typename decltype(tag)::type;
    if (Status s = sm90::set_smem_limit(reinterpret_cast<const void*>(&engine_kernel<K>), K::kSmemBytes, message);
        s != Status::Success)
      return s;
    const std::int64_t k = l.params.k;
    engine_kernel<K><<<l.grid, K::threads(k), K::smem_bytes(k), l.stream>>>(l.params, l.map_a, l.map_b, l.map_d);
    return launch_status(message);
  });
}

Status launch_tiles(const KernelLaunch& l, KernelShape shape, std::string* message) {
  if (l.b_mn && (shape == KernelShape::Tile64x32 || shape == KernelShape::Tile64x16)) {
    *message = "internal: a tile narrower than 64 columns cannot hold B with op N";
    return Status::UnsupportedOp;
  }
  switch (shape) {
    case KernelShape::Tile128x64: return launch_ring_for_k<TilesOf<128, 64>::Kernel>(l, message);
    case KernelShape::Tile64x64: return launch_ring_for_k<TilesOf<64, 64>::Kernel>(l, message);
    case KernelShape::Tile64x32: return launch_ring_for_k<TilesOf<64, 32>::Kernel>(l, message);
    case KernelShape::Tile64x16: return launch_ring_for_k<TilesOf<64, 16>::Kernel>(l, message);
    default: *message = "internal: not a tile-per-CTA kernel"; return Status::CudaError;
  }
}

}  // namespace hgemm::detail::engine
