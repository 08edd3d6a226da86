// SPDX-License-Identifier: Apache-2.0
// The engine's one-tile-per-CTA kernel, for a C too small to give every SM a big tile: one
// warpgroup computes a BM×BN tile (BM 64 or 128, BN down to 16) over the whole K from a TMA ring,
// and writes D; nothing is split, so there are no partial sums to meet. A decode-shaped C
// (128×4096) has 32 tiles of 128×128 for 132 SMs, 1024³ has 64: cut into smaller tiles until
// there are about as many as SMs, every SM streams its own part of B (such problems are bound by
// DRAM or latency, not by the tensor cores; docs/ladder.md#small-tiles).
//  * The ring is as deep as shared memory allows (up to 16 slices of 64 k), but never deeper than
//    K: a long K keeps more loads in flight per SM, and a short one (a batch of small products)
//    leaves room for several CTAs per SM, whose loads and stores overlap.
//  * A producer warp issues the copies and runs ahead through the ring on its own, so the
//    consumers only wait for data, never for a refill between their wgmmas.
//  * Tiles of 64 columns store a D that TMA can take as the persistent kernels do, staged in the
//    idle ring and written by TMA; the others write D from registers.
//  * Tiles narrower than 64 columns need B K-major (op T): an N-major B is loaded in 64-wide
//    blocks (common/sm90/operand_tile.cuh).
//  * TRANSPOSED_C (decode shapes, M ≤ 32 rows of A with op N against a long N): the kernel runs
//    the swapped problem C^T = op(B)^T·op(A)^T, so B's rows become the tile rows and C's few rows
//    wgmma's narrow N, and writes D transposed from registers (docs/ladder.md#decode-shapes).
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

/// A tile of BM (64 or 128) rows by BN columns of C, with a ring of up to STAGES k-slices;
/// TRANSPOSED_C: the kernel runs the swapped problem, whose C is written transposed into D (a
/// separate instantiation: a run-time choice of the store slows the f16 kernels; measured:
/// docs/ladder.md#small-tiles); PLAIN: D = alpha·acc for every launch (KernelLaunch::plain), the
/// fused epilogue and the stores that read C left out, so that the code a tile runs once lies
/// together. The swapped kernels keep their general instantiation for every launch: a plain one
/// ran decode shapes slower, with the same k-loop (docs/worklog.md).
template <int BM_, int BN_, int STAGES_, bool TRANSPOSED_C_ = false, bool PLAIN_ = false>
struct OneWarpgroupTiles {
  static constexpr int BM = BM_, BN = BN_, STAGES = STAGES_;
  static constexpr bool TRANSPOSED_C = TRANSPOSED_C_, PLAIN = PLAIN_;
  static_assert(BM == 64 || BM == 128, "one warpgroup covers 64 rows per wgmma, at most two of them");
  static_assert(!(TRANSPOSED_C && PLAIN), "the swapped kernels have no plain instantiation");
};

/// The deepest ring of BM×BN tiles that fits the shared memory of a CTA (at most 16 slots).
template <int BM, int BN, bool TRANSPOSED_C = false, bool PLAIN = false>
using DeepestRing =
    OneWarpgroupTiles<BM, BN, std::min(16, (227 * 1024 - 2048) / ((BM + BN) * BK * 2)), TRANSPOSED_C, PLAIN>;

/// Up to this many tile rows, the CTAs take C's tiles column by column (OneWarpgroupKernel::tile_origin).
constexpr int kColumnOrderMaxTileRows = 8;

template <typename T, bool A_MN, bool B_MN, typename Acc, typename In>
struct OneWarpgroupKernel {
  static constexpr int BM = T::BM, BN = T::BN, STAGES = T::STAGES, WARPS = 4;  // consumer warps
  static constexpr int THREADS = 32 * (WARPS + 1);                           // and the producer warp
  static constexpr int kSubTiles = BM / 64;  // 64-row wgmma blocks per tile
  using TileA = OperandTile<A_MN, BM>;
  using TileB = OperandTile<B_MN, BN>;
  using Mma = WgmmaOp<BN, Acc, In>;
  using Stage = RingSlot<TileA, TileB>;
  using Staged = StagedEpilogue<BN, typename Mma::Reg, Mma::kRegs>;
  struct SmemBarriersFirst {
    std::uint64_t full[STAGES], empty[STAGES];
    Stage stage[STAGES];  // 1 KiB-aligned: at byte kRingOffset
  };
  struct SmemRingFirst {
    Stage stage[STAGES];
    std::uint64_t full[STAGES], empty[STAGES];
  };
  using Smem = std::conditional_t<T::TRANSPOSED_C, SmemRingFirst, SmemBarriersFirst>;
  static constexpr int kRingOffset = T::TRANSPOSED_C ? 0 : 1024;
  static_assert(T::TRANSPOSED_C || 2 * sizeof(std::uint64_t) * STAGES <= kRingOffset, "the barriers fit below the ring");
  /// Whether the tile can be stored by TMA: in 64-column chunks, not transposed.
  static constexpr bool kStoresByTma = !T::TRANSPOSED_C && BN % kCChunkCols == 0;
  /// Whether this launch stores it so: the plan's store path, where the tile allows it.
  static __device__ bool stores_by_tma(const KernelParams& p) { return kStoresByTma && p.store == StorePath::Tma; }
  /// The idle ring's bytes the epilogue takes: per 64-row block, two staging buffers, which are
  /// also the fused epilogue's scratch.
  static constexpr int kEpilogueBytes = kSubTiles * 2 * kCChunkBytes;
  static_assert(2 * kCChunkBytes == kFinishScratchBytes, "a block's buffers are its epilogue scratch");
  static_assert(sizeof(Stage) * STAGES >= kEpilogueBytes, "the deepest ring holds the epilogue");
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = 1;
  /// Threads of a launch over K: the consumer warpgroup, and a producer warp where the ring must
  /// be refilled (more slices than slots); otherwise thread 0 queues every slice at the start.
  static constexpr int threads(std::int64_t k) { return (k + BK - 1) / BK > ring_slots(k) ? THREADS : 32 * WARPS; }
  static_assert(kSmemBytes <= 227 * 1024, "shared memory");

  /// The ring's slots for a launch over K: no more than its slices, whose loads are then all in
  /// flight at once as with a deeper ring, and at least what the epilogue needs. The swapped
  /// (decode) kernels run over a long K and keep every slot, a constant in their k-loop.
  static HGEMM_HOST_DEVICE constexpr int ring_slots(std::int64_t k) {
    if constexpr (T::TRANSPOSED_C) return STAGES;
    const std::int64_t slices = (k + BK - 1) / BK;
    const int least = (kEpilogueBytes + static_cast<int>(sizeof(Stage)) - 1) / static_cast<int>(sizeof(Stage));
    return static_cast<int>(std::min<std::int64_t>(STAGES, std::max<std::int64_t>(slices, least)));
  }
  /// The dynamic shared memory of a launch over K (aligned_smem's 1 KiB of room included).
  static constexpr int smem_bytes(std::int64_t k) {
    if constexpr (T::TRANSPOSED_C) return kSmemBytes;
    return kRingOffset + ring_slots(k) * static_cast<int>(sizeof(Stage)) + 1024;
  }

  /// za < 0: the maps have rank 2 (a single product), else product za of A's and zb of B's batch.
  static __device__ void refill(Smem& s, int slot, const CUtensorMap* map_a, const CUtensorMap* map_b, int slice,
                                int m0, int n0, int za, int zb) {
    if (za >= 0)
      fill_slot_batched(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, slice, za, zb);
    else
      fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, slice);
  }

  /// The producer warp's loop (one thread): each slot refilled as soon as it is released.
  static __device__ void produce(Smem& s, int slots, const CUtensorMap* map_a, const CUtensorMap* map_b, int slices,
                                 int m0, int n0, int za, int zb) {
    int slot = 0;
    unsigned phase = 0;
    for (int kt = 0; kt < slices; ++kt) {
      mbar_wait(&s.empty[slot], phase ^ 1);  // passes at once on the first round
      refill(s, slot, map_a, map_b, kt, m0, n0, za, zb);
      if (++slot == slots) slot = 0, phase ^= 1;
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

  /// Rows 64h.. of the finished tile at (m0, n0) → D by the launch's store path; `buffers`: the
  /// block's part of the idle ring.
  static __device__ void store(const KernelParams& p, const Output& out, const CUtensorMap* map_d, int product,
                               std::uint8_t (&buffers)[2][kCChunkBytes], typename Mma::Reg* acc, int m0, int n0) {
    if constexpr (T::TRANSPOSED_C) {
      store_accumulators_transposed<BN>(out, p.m, m0, n0, acc);
    } else if (stores_by_tma(p)) {
      typename Staged::Pending pending;  // nothing runs after this tile: its chunks are stored at once
      Staged::store_tile(buffers, map_d, acc, m0, n0, p.batched ? product : -1, out, pending);
      Staged::store_pending(buffers, map_d, pending);
    } else {
      store_accumulators<BN, !T::PLAIN>(out, m0, n0, acc);
    }
  }

  static __device__ __forceinline__ void run(const KernelParams& p, const CUtensorMap& map_a,
                                             const CUtensorMap& map_b, const CUtensorMap& map_d) {
    Smem& s = aligned_smem<Smem>();
    const int tid = threadIdx.x, lane = tid % 32;
    // A batch's products one after another, each its tiles.
    const int per_product = static_cast<int>(((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN));
    const int product = static_cast<int>(blockIdx.x) / per_product;
    const auto [m0, n0] = tile_origin(p, static_cast<int>(blockIdx.x) % per_product);
    const int za = p.batched ? product * p.a_steps : -1, zb = product * p.b_steps;
    const int slices = static_cast<int>((p.k + BK - 1) / BK), slots = ring_slots(p.k);

    if (tid == 0) {
      // The first loads wait on the operands' tensor maps: fetched while the barriers are set up.
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      for (int i = 0; i < slots; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], WARPS);
      fence_barrier_init();
    }
    __syncthreads();
    if (blockDim.x > 32 * WARPS) {  // a producer warp
      if (tid / 32 == WARPS) {
        if (lane == 0) produce(s, slots, &map_a, &map_b, slices, m0, n0, za, zb);
        return;
      }
    } else if (tid == 0) {  // the ring holds every slice: all are queued at once
      for (int kt = 0; kt < slices; ++kt) refill(s, kt, &map_a, &map_b, kt, m0, n0, za, zb);
    }

    typename Mma::Reg acc[kSubTiles][Mma::kRegs];  // rows 64h .. 64h + 63 of the tile
#pragma unroll
    for (int h = 0; h < kSubTiles; ++h) zero_accumulators(acc[h]);
    int slot = 0, done_slot = 0;
    unsigned phase = 0;
    for (int kt = 0; kt < slices; ++kt) {
      mbar_wait(&s.full[slot], phase);
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
      if (kt > 0 && lane == 0) mbar_arrive(&s.empty[done_slot]);
      done_slot = slot;
      if (++slot == slots) slot = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    // The fused epilogue (p.out.epi) finishes the accumulators in place, in registers or through
    // the ring, which is idle once every warp's wgmmas have read it; D is staged there too.
    const bool fused = !T::PLAIN && p.out.epi.on;
    const bool through_ring = stores_by_tma(p) ||
                              (fused && !finishes_in_registers<typename Mma::Reg>(p.out));
    if (through_ring) named_barrier_sync(1, 128);  // the consumer warps
    const Output out = fused ? p.out.of_product(product).finished() : p.out.of_product(product);
    auto* ring = reinterpret_cast<std::uint8_t(*)[2][kCChunkBytes]>(&s.stage[0]);
#pragma unroll
    for (int h = 0; h < kSubTiles; ++h) {
      fence_accumulators(acc[h]);
      if constexpr (!T::PLAIN)
        if (fused)
          finish_accumulators<BN, T::TRANSPOSED_C>(p.out, product, p.m, p.n, m0 + 64 * h, n0, acc[h],
                                                   reinterpret_cast<float*>(ring[h]));
      store(p, out, &map_d, product, ring[h], acc[h], m0 + 64 * h, n0);
    }
    // The TMA stores must have read shared memory before the CTA exits.
    if (stores_by_tma(p) && lane == 0) bulk_wait_read<0>();
  }
};

/// The kernel of tiles T for the given operand majors and types. An MN-major B (op N) comes in
/// 64-column blocks, so a narrower T cannot hold it: that combination stands for the 64-wide
/// deepest ring instead (compiled once with it) and is never launched (the plan refuses it).
template <typename T, bool A_MN, bool B_MN, typename Acc, typename In>
using TilePerCtaKernel =
    OneWarpgroupKernel<std::conditional_t<B_MN && (T::BN < 64), DeepestRing<T::BM, 64, false, T::PLAIN>, T>, A_MN,
                       B_MN, Acc, In>;

}  // namespace hgemm::detail::engine
