// SPDX-License-Identifier: Apache-2.0
// The engine's swapped persistent kernels: C^T = op(B)^T·op(A)^T for few rows of C (M ≤ 64,
// op(A) = N), the long N along wgmma's 64-row M and C's rows along its N (16, 32 or 64), D
// written transposed. The swapped problem's B is always K-major (op T), so B_MN is fixed.
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/persistent.cuh"

namespace hgemm::detail::engine {

/// The deepest ring of BN-wide swapped tiles next to the staging buffers, at most 8 slots.
template <int BN, bool STREAM_K = false>
using Skinny = Persistent<BN, 1, std::min(8, (kSmemLimit - 2048 - CONSUMERS * 2 * kCChunkBytes) / (BM * BK * 2 + BN * BK * 2)),
                          true, STREAM_K>;

static_assert(config_matches<Skinny<16>>(KernelShape::Skinny16) && config_matches<Skinny<32>>(KernelShape::Skinny32) &&
                  config_matches<Skinny<64>>(KernelShape::Skinny64) && shape_info(KernelShape::Skinny64).swapped,
              "kKernelShapes describes the swapped persistent kernels");

template <typename C>
struct SkinnyOf {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = PersistentKernel<C, A_MN, false, Acc, In>;
};

Status launch_skinny(const KernelLaunch& l, KernelShape shape, bool stream_k, std::string* message) {
  switch (shape) {
    case KernelShape::Skinny16: return launch_kernel_template<SkinnyOf<Skinny<16>>::Kernel>(l, message);
    case KernelShape::Skinny32:
      return stream_k ? launch_kernel_template<SkinnyOf<Skinny<32, true>>::Kernel>(l, message)
                      : launch_kernel_template<SkinnyOf<Skinny<32>>::Kernel>(l, message);
    case KernelShape::Skinny64:
      return stream_k ? launch_kernel_template<SkinnyOf<Skinny<64, true>>::Kernel>(l, message)
                      : launch_kernel_template<SkinnyOf<Skinny<64>>::Kernel>(l, message);
    default: *message = "internal: not a swapped persistent kernel"; return Status::CudaError;
  }
}

}  // namespace hgemm::detail::engine
