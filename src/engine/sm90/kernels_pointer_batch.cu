// SPDX-License-Identifier: Apache-2.0
// The one launch of a pointer batch (pointer_batch.h): the tiles per CTA (tile_per_cta.cuh),
// each CTA on the product its index falls in, with that product's tensor maps and D read from
// the table the map writer filled. 128×64 and 64×64 tiles, a ring no deeper than K, the short-K
// entry for plain 64-row tiles as in kernels_tiles.cu.
#include <type_traits>

#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/pointer_batch.h"
#include "engine/sm90/tile_per_cta.cuh"

namespace hgemm::detail::engine {
namespace {

/// Orders this thread's later uses of `map` (TMA loads, prefetch) after the map writer's generic
/// writes of it, which the tensor-map proxy might otherwise not see (a replayed graph rewrites
/// the same table).
__device__ __forceinline__ void acquire_tensor_map(const CUtensorMap* map) {
#ifdef HGEMM_SM90A
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
#endif
}

/// The deepest K of the short-K entry: a ring of two slices, eight CTAs of one warpgroup to an SM.
constexpr std::int64_t kPointerBatchShortK = 2 * BK;

/// CTA x runs tile x % tiles of product x / tiles, as a single product of rank-2 maps (the
/// table's), D and C in place at the table's D. A product whose entry the writer refused (D null)
/// is skipped.
template <typename K, bool SHORT_K>
__global__ void __launch_bounds__(SHORT_K ? 128 : K::kThreads, SHORT_K ? 8 : 1)
    pointer_batch_kernel(KernelParams p, const PointerBatchProduct* __restrict__ products) {
  const int per_product = static_cast<int>(((p.m + K::BM - 1) / K::BM) * ((p.n + K::BN - 1) / K::BN));
  const PointerBatchProduct& mine = products[blockIdx.x / per_product];
  void* const d = mine.d;
  if (d == nullptr) return;
  // The threads that may issue TMA loads: thread 0 and the producer warp's first lane.
  if (threadIdx.x % 32 == 0) acquire_tensor_map(&mine.a), acquire_tensor_map(&mine.b);
  p.out.d = d;
  p.out.c = p.out.beta != 0.f ? d : nullptr;
  K::run(p, mine.a, mine.b, mine.a);  // D is stored from registers: no map of its own
}

template <typename K, bool SHORT_K>
Status launch_pointer_kernel(const KernelLaunch& l, const PointerBatchProduct* products, std::string* message) {
  const void* fn = reinterpret_cast<const void*>(&pointer_batch_kernel<K, SHORT_K>);
  if (Status s = sm90::set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
  const std::int64_t k = l.params.k;
  pointer_batch_kernel<K, SHORT_K><<<l.grid, K::threads(k), K::smem_bytes(k), l.stream>>>(l.params, products);
  return launch_status(message);
}

/// The tile per CTA of shape S (its tile from kKernelShapes).
template <KernelShape S, bool PLAIN>
struct PointerTiles {
  static_assert(!shape_info(S).persistent && !shape_info(S).swapped, "a tile per CTA");
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = TilePerCtaKernel<DeepestRing<shape_info(S).bm, shape_info(S).bn, false, PLAIN>, A_MN, B_MN, Acc, In>;
};

template <KernelShape S, bool PLAIN>
Status launch_pointer_tiles(const KernelLaunch& l, const PointerBatchProduct* products, std::string* message) {
  return with_kernel<PointerTiles<S, PLAIN>::template Kernel>(l, message, [&](auto tag) {
    using K = typename decltype(tag)::type;
    // Plain launches only: reading C, the 64-register bound spills (D's pointer from the table
    // stays live over the k-loop).
    if constexpr (K::BM == 64 && std::is_same_v<typename K::Mma::Reg, float> && PLAIN) {
      static_assert(K::threads(kPointerBatchShortK) == 128, "a short K needs no producer warp");
      if (l.params.k <= kPointerBatchShortK) return launch_pointer_kernel<K, true>(l, products, message);
    }
    return launch_pointer_kernel<K, false>(l, products, message);
  });
}

template <bool PLAIN>
Status launch_pointer_tiles_of(const KernelLaunch& l, KernelShape tiles, const PointerBatchProduct* products,
                               std::string* message) {
  switch (tiles) {
    case KernelShape::Tile128x64: return launch_pointer_tiles<KernelShape::Tile128x64, PLAIN>(l, products, message);
    case KernelShape::Tile64x64: return launch_pointer_tiles<KernelShape::Tile64x64, PLAIN>(l, products, message);
    default: *message = "internal: a pointer batch runs on 128x64 or 64x64 tiles"; return Status::CudaError;
  }
}

}  // namespace

Status launch_pointer_batch_tiles(const KernelLaunch& l, KernelShape tiles, const PointerBatchProduct* products,
                                  std::string* message) {
  return l.plain ? launch_pointer_tiles_of<true>(l, tiles, products, message)
                 : launch_pointer_tiles_of<false>(l, tiles, products, message);
}

}  // namespace hgemm::detail::engine
