// SPDX-License-Identifier: Apache-2.0
// The engine's one-tile-per-CTA kernels on the swapped problem (decode shapes): 64- or 128-row
// tiles of B's rows against 16 or 32 rows of C, D written transposed. The swapped problem's B is
// K-major (op T), so B_MN is fixed.
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/tile_per_cta.cuh"

namespace hgemm::detail::engine {

/// The swapped tile per CTA of shape S (its tile from kKernelShapes).
template <KernelShape S>
struct SwappedTilesOf {
  static_assert(!shape_info(S).persistent && shape_info(S).swapped, "a swapped tile per CTA");
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel =
      TilePerCtaKernel<DeepestRing<shape_info(S).bm, shape_info(S).bn, /*TRANSPOSED_C=*/true>, A_MN, false, Acc, In>;
};

Status launch_swapped_tiles(const KernelLaunch& l, KernelShape shape, std::string* message) {
  switch (shape) {
    case KernelShape::Swapped64x16: return launch_kernel_template<SwappedTilesOf<KernelShape::Swapped64x16>::Kernel>(l, message);
    case KernelShape::Swapped64x32: return launch_kernel_template<SwappedTilesOf<KernelShape::Swapped64x32>::Kernel>(l, message);
    case KernelShape::Swapped128x16:
      return launch_kernel_template<SwappedTilesOf<KernelShape::Swapped128x16>::Kernel>(l, message);
    case KernelShape::Swapped128x32:
      return launch_kernel_template<SwappedTilesOf<KernelShape::Swapped128x32>::Kernel>(l, message);
    default: *message = "internal: not a swapped tile-per-CTA kernel"; return Status::CudaError;
  }
}

}  // namespace hgemm::detail::engine
