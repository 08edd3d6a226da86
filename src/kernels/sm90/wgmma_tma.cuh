// wgmma_tma.cuh — the kernel of rung 01 (sm90.wgmma_tma), for any tile: one warpgroup, one CTA
// per BM×BN tile of C, TMA into a ring of STAGES slots, wgmma from shared memory. Rung 01 runs it
// with 128×128 tiles; sm90.wgmma_tma_small_tiles (04) picks smaller tiles and a deeper ring per
// problem, and adds a producer warp. What each part does is explained in 01_wgmma_tma.cu.
//
// TRANSPOSED_C (rung 04's decode shapes): p is the swapped problem, whose C is written transposed
// into the caller's C (store_accumulators_transposed).
//
// PRODUCER_WARP: a fifth warp issues the copies and runs ahead through the ring on its own. In
// rung 01 thread 0 refills a slot itself, after waiting for the other warps to release it, and
// the warpgroup's next wgmma waits for thread 0; with a producer warp the consumers only wait for
// data.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "common/sm90/launch.cuh"
#include "common/sm90/tile.cuh"
#include "common/sm90/wgmma_ops.cuh"

namespace hgemm::detail::sm90 {

/// A tile of BM (64 or 128) rows by BN columns of C, with a ring of STAGES k-slices, filled by
/// thread 0 of the warpgroup or by a producer warp of its own; TRANSPOSED_C: the problem is a
/// swapped one (sm90::swapped), whose C is written transposed into the caller's C (a separate
/// instantiation: a run-time choice of the store slows the f16 kernels; measured:
/// docs/ladder.md#small-tiles).
template <int BM_, int BN_, int STAGES_, bool PRODUCER_WARP_ = false, bool TRANSPOSED_C_ = false>
struct OneWarpgroupTiles {
  static constexpr int BM = BM_, BN = BN_, STAGES = STAGES_;
  static constexpr bool PRODUCER_WARP = PRODUCER_WARP_, TRANSPOSED_C = TRANSPOSED_C_;
  static_assert(BM == 64 || BM == 128, "one warpgroup covers 64 rows per wgmma, at most two of them");
};

/// The deepest ring of BM×BN tiles that fits the shared memory of a CTA (at most 16 slots), with
/// a producer warp.
template <int BM, int BN, bool TRANSPOSED_C = false>
using DeepestRing =
    OneWarpgroupTiles<BM, BN, std::min(16, (227 * 1024 - 2048) / ((BM + BN) * BK * 2)), true, TRANSPOSED_C>;

/// Up to this many tile rows, the CTAs take C's tiles column by column (OneWarpgroupKernel::tile_origin).
constexpr int kColumnOrderMaxTileRows = 8;

template <typename T, bool A_MN, bool B_MN, typename Acc>
struct OneWarpgroupKernel {
  static constexpr int BM = T::BM, BN = T::BN, STAGES = T::STAGES, WARPS = 4;  // consumer warps
  static constexpr bool PRODUCER_WARP = T::PRODUCER_WARP;
  static constexpr int THREADS = 32 * (WARPS + (PRODUCER_WARP ? 1 : 0));
  static constexpr int kSubTiles = BM / 64;  // 64-row wgmma blocks per tile
  using TileA = OperandTile<A_MN, BM>;
  using TileB = OperandTile<B_MN, BN>;
  using Mma = WgmmaOp<BN, Acc>;
  using Stage = RingSlot<TileA, TileB>;
  struct Smem {
    Stage stage[STAGES];
    std::uint64_t full[STAGES], empty[STAGES];
  };
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = 1;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory");

  static __device__ void refill(Smem& s, const CUtensorMap* map_a, const CUtensorMap* map_b, int slice, int m0,
                                int n0) {
    const int slot = slice % STAGES;
    fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, slice);
  }

  /// The producer warp's loop (one thread): each slot refilled as soon as it is released.
  static __device__ void produce(Smem& s, const CUtensorMap* map_a, const CUtensorMap* map_b, int slices, int m0,
                                 int n0) {
    for (int kt = 0; kt < slices; ++kt) {
      mbar_wait(&s.empty[kt % STAGES], ((kt / STAGES) & 1) ^ 1);  // passes at once on the first round
      refill(s, map_a, map_b, kt, m0, n0);
    }
  }

  /// The first row and column of this CTA's tile. With few tile rows (a wave holds whole columns
  /// of C) consecutive CTAs go down a column: they run side by side and load the same B slices,
  /// so a slice read from DRAM serves the whole column from L2 while it is there. Many tile rows
  /// keep the row-by-row order, which is faster there (measured: docs/ladder.md#small-tiles).
  static __device__ std::pair<int, int> tile_origin(const Problem& p) {
    const int tiles_m = static_cast<int>((p.m + BM - 1) / BM), tiles_n = static_cast<int>((p.n + BN - 1) / BN);
    if (tiles_m <= kColumnOrderMaxTileRows)
      return {static_cast<int>(blockIdx.x % tiles_m) * BM, static_cast<int>(blockIdx.x / tiles_m) * BN};
    return {static_cast<int>(blockIdx.x / tiles_n) * BM, static_cast<int>(blockIdx.x % tiles_n) * BN};
  }

  static __device__ __forceinline__ void run(const Problem& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& /*map_c*/, EpilogueMode /*mode*/) {
    Smem& s = aligned_smem<Smem>();
    const int tid = threadIdx.x, lane = tid % 32;
    const auto [m0, n0] = tile_origin(p);
    const int slices = static_cast<int>((p.k + BK - 1) / BK);

    if (tid == 0) {
      for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], WARPS);
      fence_barrier_init();
    }
    __syncthreads();
    if constexpr (PRODUCER_WARP) {
      if (tid / 32 == WARPS) {
        if (lane == 0) produce(s, &map_a, &map_b, slices, m0, n0);
        return;
      }
    } else if (tid == 0) {
      for (int i = 0; i < STAGES && i < slices; ++i) refill(s, &map_a, &map_b, i, m0, n0);
    }

    typename Mma::Reg acc[kSubTiles][Mma::kRegs];  // rows 64h .. 64h + 63 of the tile
#pragma unroll
    for (int h = 0; h < kSubTiles; ++h) zero_accumulators(acc[h]);
    for (int kt = 0; kt < slices; ++kt) {
      const int slot = kt % STAGES;
      mbar_wait(&s.full[slot], (kt / STAGES) & 1);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const std::uint64_t b = TileB::desc(s.stage[slot].b, 0, kk);
#pragma unroll
        for (int h = 0; h < kSubTiles; ++h)
          Mma::template mma<TileA::kTranspose, TileB::kTranspose>(acc[h], TileA::desc(s.stage[slot].a, 64 * h, kk), b);
      }
      wgmma_commit();
      wgmma_wait<1>();  // slice kt - 1 is done: its slot can be refilled
      if (kt > 0) {
        const int done = kt - 1, done_slot = done % STAGES;
        if (lane == 0) mbar_arrive(&s.empty[done_slot]);
        if (!PRODUCER_WARP && tid == 0 && done + STAGES < slices) {
          mbar_wait(&s.empty[done_slot], (done / STAGES) & 1);
          refill(s, &map_a, &map_b, done + STAGES, m0, n0);
        }
      }
    }
    wgmma_wait<0>();
#pragma unroll
    for (int h = 0; h < kSubTiles; ++h) {
      fence_accumulators(acc[h]);
      if constexpr (T::TRANSPOSED_C)
        store_accumulators_transposed<BN>(p, m0 + 64 * h, n0, acc[h]);
      else
        store_accumulators<BN>(p, m0 + 64 * h, n0, acc[h]);
    }
  }
};

/// The kernel template launch_kernel instantiates for tiles T. An MN-major B (op N) comes in
/// 64-column blocks, so a narrower T cannot hold it: that combination stands for the 64-wide
/// deepest ring instead (compiled once with it) and is never launched (launch_one_warpgroup
/// refuses it).
template <typename T>
struct OneWarpgroup {
  template <bool A_MN, bool B_MN, typename Acc>
  using Kernel =
      OneWarpgroupKernel<std::conditional_t<B_MN && (T::BN < 64), DeepestRing<T::BM, 64>, T>, A_MN, B_MN, Acc>;
};

/// Runs tiles T over p, one CTA per tile (p the swapped problem when T::TRANSPOSED_C).
template <typename T>
Status launch_one_warpgroup(const Problem& p, cudaStream_t stream, std::string* message) {
  if (b_mn_major(p) && T::BN < 64) {
    *message = "internal: a tile narrower than 64 columns cannot hold B with op N";
    return Status::UnsupportedOp;
  }
  return launch_kernel<OneWarpgroup<T>::template Kernel>(p, TileShape{T::BM, T::BN}, stream, message,
                                                         one_block_per_tile<T::BM, T::BN>(p, message));
}

}  // namespace hgemm::detail::sm90
