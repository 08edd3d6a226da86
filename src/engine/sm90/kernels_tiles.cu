// The engine's one-tile-per-CTA kernels for a C too small for the persistent ones: 128×64,
// 64×64, 64×32 and 64×16 tiles, the deepest ring that fits, a producer warp.
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/tile_per_cta.cuh"

namespace hgemm::detail::engine {

template <int BM, int BN>
struct TilesOf {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = TilePerCtaKernel<DeepestRing<BM, BN>, A_MN, B_MN, Acc, In>;
};

Status launch_tiles(const KernelLaunch& l, KernelShape shape, std::string* message) {
  if (l.b_mn && (shape == KernelShape::Tile64x32 || shape == KernelShape::Tile64x16)) {
    *message = "internal: a tile narrower than 64 columns cannot hold B with op N";
    return Status::UnsupportedOp;
  }
  switch (shape) {
    case KernelShape::Tile128x64: return launch_kernel_template<TilesOf<128, 64>::Kernel>(l, message);
    case KernelShape::Tile64x64: return launch_kernel_template<TilesOf<64, 64>::Kernel>(l, message);
    case KernelShape::Tile64x32: return launch_kernel_template<TilesOf<64, 32>::Kernel>(l, message);
    case KernelShape::Tile64x16: return launch_kernel_template<TilesOf<64, 16>::Kernel>(l, message);
    default: *message = "internal: not a tile-per-CTA kernel"; return Status::CudaError;
  }
}

}  // namespace hgemm::detail::engine
