// The engine's one-tile-per-CTA kernel, for a C too small to give every SM a big tile: one
// warpgroup computes a BM×BN tile (BM 64 or 128, BN down to 16) over the whole K from a TMA ring,
// and writes D from registers; nothing is split, so there are no partial sums to meet. A decode-
// shaped C (128×4096) has 32 tiles of 128×128 for 132 SMs, 1024³ has 64: cut into smaller tiles
// until there are about as many as SMs, every SM streams its own part of B (such problems are
// bound by DRAM or latency, not by the tensor cores; docs/ladder.md#small-tiles).
//  * With one CTA per SM the rest of shared memory is free, so the ring is as deep as it allows
//    (up to 16 slices of 64 k): more loads in flight per SM.
//  * PRODUCER_WARP: a fifth warp issues the copies and runs ahead through the ring on its own, so
//    the consumers only wait for data, never for a refill between their wgmmas.
//  * Tiles narrower than 64 columns need B K-major (op T): an N-major B is loaded in 64-wide
//    blocks (common/sm90/operand_tile.cuh).
//  * TRANSPOSED_C (decode shapes, M ≤ 32 rows of A with op N against a long N): the kernel runs
//    the swapped problem C^T = op(B)^T·op(A)^T, so B's rows become the tile rows and C's few rows
//    wgmma's narrow N, and writes D transposed (docs/ladder.md#decode-shapes).
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "common/sm90/accumulators.cuh"
#include "common/sm90/operand_tile.cuh"
#include "common/sm90/wgmma_ops_bf16.cuh"
#include "engine/sm90/epilogue.cuh"

namespace hgemm::detail::engine {

using namespace sm90;

/// A tile of BM (64 or 128) rows by BN columns of C, with a ring of STAGES k-slices, filled by
/// thread 0 of the warpgroup or by a producer warp of its own; TRANSPOSED_C: the kernel runs the
/// swapped problem, whose C is written transposed into D (a separate instantiation: a run-time
/// choice of the store slows the f16 kernels; measured: docs/ladder.md#small-tiles).
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

template <typename T, bool A_MN, bool B_MN, typename Acc, typename In>
struct OneWarpgroupKernel {
  static constexpr int BM = T::BM, BN = T::BN, STAGES = T::STAGES, WARPS = 4;  // consumer warps
  static constexpr bool PRODUCER_WARP = T::PRODUCER_WARP;
  static constexpr int THREADS = 32 * (WARPS + (PRODUCER_WARP ? 1 : 0));
  static constexpr int kSubTiles = BM / 64;  // 64-row wgmma blocks per tile
  using TileA = OperandTile<A_MN, BM>;
  using TileB = OperandTile<B_MN, BN>;
  using Mma = WgmmaOp<BN, Acc, In>;
  using Stage = RingSlot<TileA, TileB>;
  struct Smem {
    Stage stage[STAGES];
    std::uint64_t full[STAGES], empty[STAGES];
  };
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = 1;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory");
  static_assert(sizeof(Stage) * STAGES >= kFinishScratchBytes, "the idle ring holds the epilogue's scratch");

  /// za < 0: the maps have rank 2 (a single product), else product za of A's and zb of B's batch.
  static __device__ void refill(Smem& s, const CUtensorMap* map_a, const CUtensorMap* map_b, int slice, int m0,
                                int n0, int za, int zb) {
    const int slot = slice % STAGES;
    if (za >= 0)
      fill_slot_batched(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, slice, za, zb);
    else
      fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, slice);
  }

  /// The producer warp's loop (one thread): each slot refilled as soon as it is released.
  static __device__ void produce(Smem& s, const CUtensorMap* map_a, const CUtensorMap* map_b, int slices, int m0,
                                 int n0, int za, int zb) {
    for (int kt = 0; kt < slices; ++kt) {
      mbar_wait(&s.empty[kt % STAGES], ((kt / STAGES) & 1) ^ 1);  // passes at once on the first round
      refill(s, map_a, map_b, kt, m0, n0, za, zb);
    }
  }

  /// The first row and column of this CTA's tile. With few tile rows (a wave holds whole columns
  /// of C) consecutive CTAs go down a column: they run side by side and load the same B slices,
  /// so a slice read from DRAM serves the whole column from L2 while it is there. Many tile rows
  /// keep the row-by-row order, which is faster there (measured: docs/ladder.md#small-tiles).
  static __device__ std::pair<int, int> tile_origin(const KernelParams& p, int tile) {
    const int tiles_m = static_cast<int>((p.m + BM - 1) / BM), tiles_n = static_cast<int>((p.n + BN - 1) / BN);
    if (tiles_m <= kColumnOrderMaxTileRows) return {tile % tiles_m * BM, tile / tiles_m * BN};
    return {tile / tiles_n * BM, tile % tiles_n * BN};
  }

  static __device__ __forceinline__ void run(const KernelParams& p, const CUtensorMap& map_a,
                                             const CUtensorMap& map_b, const CUtensorMap& /*map_d*/) {
    Smem& s = aligned_smem<Smem>();
    const int tid = threadIdx.x, lane = tid % 32;
    // A batch's products one after another, each its tiles.
    const int per_product = static_cast<int>(((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN));
    const int product = static_cast<int>(blockIdx.x) / per_product;
    const auto [m0, n0] = tile_origin(p, static_cast<int>(blockIdx.x) % per_product);
    const int za = p.batched ? product * p.a_steps : -1, zb = product * p.b_steps;
    const int slices = static_cast<int>((p.k + BK - 1) / BK);

    if (tid == 0) {
      for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], WARPS);
      fence_barrier_init();
    }
    __syncthreads();
    if constexpr (PRODUCER_WARP) {
      if (tid / 32 == WARPS) {
        if (lane == 0) produce(s, &map_a, &map_b, slices, m0, n0, za, zb);
        return;
      }
    } else if (tid == 0) {
      for (int i = 0; i < STAGES && i < slices; ++i) refill(s, &map_a, &map_b, i, m0, n0, za, zb);
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
          refill(s, &map_a, &map_b, done + STAGES, m0, n0, za, zb);
        }
      }
    }
    wgmma_wait<0>();
    // The fused epilogue (p.out.epi) finishes the accumulators in place, in registers or through
    // the ring, which is idle once every warp's wgmmas have read it; they are stored as they are.
    const bool fused = p.out.epi.on;
    if (fused && !finishes_in_registers<T::TRANSPOSED_C, typename Mma::Reg>(p.out)) named_barrier_sync(1, 128);  // the consumer warps
    const Output out = fused ? p.out.of_product(product).finished() : p.out.of_product(product);
#pragma unroll
    for (int h = 0; h < kSubTiles; ++h) {
      fence_accumulators(acc[h]);
      if (fused)
        finish_accumulators<BN, T::TRANSPOSED_C>(p.out, product, p.m, p.n, m0 + 64 * h, n0, acc[h],
                                                 reinterpret_cast<float*>(&s.stage[0]));
      if constexpr (T::TRANSPOSED_C)
        store_accumulators_transposed<BN>(out, p.m, m0 + 64 * h, n0, acc[h]);
      else
        store_accumulators<BN>(out, m0 + 64 * h, n0, acc[h]);
    }
  }
};

/// The kernel of tiles T for the given operand majors and types. An MN-major B (op N) comes in
/// 64-column blocks, so a narrower T cannot hold it: that combination stands for the 64-wide
/// deepest ring instead (compiled once with it) and is never launched (the plan refuses it).
template <typename T, bool A_MN, bool B_MN, typename Acc, typename In>
using TilePerCtaKernel =
    OneWarpgroupKernel<std::conditional_t<B_MN && (T::BN < 64), DeepestRing<T::BM, 64>, T>, A_MN, B_MN, Acc, In>;

}  // namespace hgemm::detail::engine
