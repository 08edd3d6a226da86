// SPDX-License-Identifier: Apache-2.0
// 03_wgmma_tma_ws_persistent.cu — sm90.wgmma_tma_ws_persistent
// Adds over 02_wgmma_tma_ws: a persistent grid, clusters with TMA multicast, an L2-aware tile
// order, and C stored by TMA while the next tile accumulates.
//  * Persistent: as many CTAs as fit at once (one per SM) — or, where fewer clusters take as
//    many rounds of tiles, only as many as that (4096³'s 256 cluster tiles go 4 to each of 64
//    clusters, not 3 or 4 to each of 66) — each looping over tiles. The producer never stops at
//    a tile's end: while the consumers write one tile's C, it already fills the ring with the
//    next tile's slices, and no CTA pays a launch or a prologue per tile.
//  * Clusters of 2 CTAs on vertically adjacent tiles (same columns of C): both need the same B
//    slice, so each loads half of it and the copy engine multicasts the half into both CTAs'
//    shared memory; B's traffic from L2 halves. A slot is free again only when the consumers of
//    both CTAs are done with it, so every consumer warp arrives on the empty barrier of each CTA.
//  * Grouped raster: clusters walk C in groups of GROUP cluster-rows, column after column, so the
//    tiles in flight share few rows of A and columns of B, which stay in L2.
//  * C through shared memory: 64-column chunks staged with stmatrix (swizzled, two buffers per
//    consumer), each warp storing its own 16 rows by TMA as soon as it has written them. The
//    last half of a tile is packed into registers and staged one chunk per slice of the next
//    tile, under its wgmmas, so the tensor cores do not wait for the epilogue. TMA takes C when
//    beta = 0 and C is 16-byte aligned with ldc and N multiples of 8; otherwise the consumers
//    write C from registers. (docs/ladder.md#persistent-epilogue)
// The production engine (src/engine/sm90/) builds on this loop with stream-K, split-K and the
// tile shapes that small and decode-shaped problems need; this rung keeps to whole tiles.
#include "common/occupancy.h"
#include "common/sm90/accumulators.cuh"
#include "common/sm90/c_chunk.cuh"
#include "common/sm90/ladder_launch.cuh"
#include "common/sm90/operand_tile.cuh"
#include "common/sm90/raster.h"
#include "common/sm90/wgmma_ops.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma_ws_persistent {

using namespace sm90;
constexpr int BM = 128, BN = 256, CLUSTER = 2, STAGES = 4, CONSUMERS = 2, THREADS = 128 * (1 + CONSUMERS);
constexpr int GROUP = 8, PRODUCER_REGS = 40, CONSUMER_REGS = 232;

/// Cluster tiles of CLUSTER·BM rows by BN columns, in grouped order.
struct ClusterTiles {
  int rows, cols, count;
  __host__ __device__ explicit ClusterTiles(const Problem& p)
      : rows(static_cast<int>((p.m + CLUSTER * BM - 1) / (CLUSTER * BM))),
        cols(static_cast<int>((p.n + BN - 1) / BN)),
        count(rows * cols) {}
  __device__ void origin(int t, int* m0, int* n0) const {
    int r = 0, c = 0;
    grouped_tile<GROUP>(t, rows, cols, &r, &c);
    *m0 = r * CLUSTER * BM, *n0 = c * BN;
  }
};

template <bool A_MN, bool B_MN, typename Acc>
struct Kernel {
  using TileA = OperandTile<A_MN, BM>;
  using TileB = OperandTile<B_MN, BN>;
  using Mma = WgmmaOp<BN, Acc>;
  using Stage = RingSlot<TileA, TileB>;
  struct Smem {
    Stage stage[STAGES];
    alignas(1024) std::uint8_t c_chunk[CONSUMERS][2][kCChunkBytes];  // double-buffered, per consumer
    std::uint64_t full[STAGES], empty[STAGES];
  };
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = CLUSTER;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory");
  /// Chunks of a tile, and those stored under the next tile's first slices: half of them (all
  /// four gain nothing with f16 accumulators; with f32 ones only half fit in the registers).
  static constexpr int kChunks = BN / kCChunkCols, kDeferred = kChunks / 2, kEager = kChunks - kDeferred;
  struct Pending {
    PackedC<kDeferred> c;
    int m0, n0;
    int next = kChunks;  // the next chunk to store; kChunks: none pending
  };

  static __device__ void produce(Smem& s, const ClusterTiles& tiles, const CUtensorMap* map_a,
                                 const CUtensorMap* map_b, int rank, int slices) {
    unsigned it = 0;  // slices issued so far, over all tiles: the ring position
    for (int t = blockIdx.x / CLUSTER; t < tiles.count; t += gridDim.x / CLUSTER) {
      int m0, n0;
      tiles.origin(t, &m0, &n0);
      for (int kt = 0; kt < slices; ++kt, ++it) {
        const unsigned slot = it % STAGES;
        mbar_wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
        fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0 + rank * BM, n0, kt, rank, CLUSTER, (1u << CLUSTER) - 1);
      }
    }
  }

  /// A consumer warp frees a ring slot in both CTAs of the cluster (plain CTA-scope arrivals: a
  /// cluster-scope release would also wait for the warp's wgmmas in flight).
  static __device__ void release(Smem& s, unsigned it) {
    if (threadIdx.x % 32 == 0)
      for (int cta = 0; cta < CLUSTER; ++cta) mbar_arrive_cluster(&s.empty[it % STAGES], cta);
  }

  /// Stages chunk J of the tile at (m0, n0) and stores it by TMA, each warp its own 16 rows.
  template <int J, typename StageFn>
  static __device__ void store_chunk(Smem& s, const CUtensorMap* map_c, int m0, int n0, int consumer, StageFn&& stage) {
    const int warp = threadIdx.x % 128 / 32;
    const bool issuer = threadIdx.x % 32 == 0;
    std::uint8_t* chunk = s.c_chunk[consumer][J % 2];
    if (issuer) bulk_wait_read<1>();  // the store that read this buffer two chunks ago is done
    __syncwarp();
    stage(chunk);
    fence_proxy_async();  // the stmatrix writes, visible to the copy engine
    __syncwarp();
    if (issuer) {
      tma_store(map_c, chunk + warp * kCStoreRows * kSwizzleRow, n0 + J * kCChunkCols, m0 + warp * kCStoreRows);
      bulk_commit();
    }
  }

  /// Stores a finished tile's first chunks and packs the others into `pending`.
  template <bool SCALED, int... J>
  static __device__ void store_tile(Smem& s, const CUtensorMap* map_c, const typename Mma::Reg* acc, int m0, int n0,
                                    int consumer, float alpha, Pending& pending, std::integer_sequence<int, J...>) {
    (store_chunk<J>(s, map_c, m0, n0, consumer,
                    [&](std::uint8_t* chunk) { stage_c_chunk<BN, __half, SCALED>(chunk, acc, J, alpha); }),
     ...);
    pack_c<kEager, __half, SCALED>(pending.c, acc, alpha);
    pending.m0 = m0, pending.n0 = n0, pending.next = kEager;
  }

  /// Stores the next pending chunk, if any (its index a compile-time constant, so the packed
  /// registers stay registers).
  template <int... J>
  static __device__ void store_next_chunk(Smem& s, const CUtensorMap* map_c, Pending& pending, int consumer,
                                          std::integer_sequence<int, J...>) {
    ((pending.next == kEager + J
          ? store_chunk<kEager + J>(s, map_c, pending.m0, pending.n0, consumer,
                                    [&](std::uint8_t* chunk) { stage_packed_chunk<J>(chunk, pending.c); })
          : void()),
     ...);
    if (pending.next < kChunks) ++pending.next;
  }
  static __device__ void store_pending(Smem& s, const CUtensorMap* map_c, Pending& pending, int consumer) {
#pragma unroll 1
    while (pending.next < kChunks)
      store_next_chunk(s, map_c, pending, consumer, std::make_integer_sequence<int, kDeferred>());
  }

  static __device__ void consume(Smem& s, const ClusterTiles& tiles, const Problem& p, const CUtensorMap* map_c,
                                 bool c_by_tma, int rank, int consumer, int slices) {
    const int row = 64 * consumer;
    unsigned it = 0;  // slices consumed so far, over all tiles: the ring position
    // Slot 0's descriptors of this consumer's rows of A and of B; the others are steps from them.
    const std::uint64_t desc_a = TileA::desc(s.stage[0].a, row, 0), desc_b = TileB::desc(s.stage[0].b, 0, 0);
    constexpr std::uint32_t kSlotUnits = sizeof(Stage) / 16;
    Pending pending;
    typename Mma::Reg acc[Mma::kRegs];
    zero_accumulators(acc);
    const int first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;
    int m0 = 0, n0 = 0;
    if (first < tiles.count) tiles.origin(first, &m0, &n0);
    for (int t = first; t < tiles.count; t += step) {
      const int tile_m0 = m0 + rank * BM + row, tile_n0 = n0;  // this consumer's 64 rows
      for (int kt = 0; kt < slices; ++kt, ++it) {
        const unsigned slot = it % STAGES;
        mbar_wait(&s.full[slot], (it / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)  // the tile's first wgmma overwrites the accumulators
          Mma::template mma<TileA::kTranspose, TileB::kTranspose>(
              acc, desc_advanced(desc_a, slot * kSlotUnits + kk * TileA::kKStepUnits),
              desc_advanced(desc_b, slot * kSlotUnits + kk * TileB::kKStepUnits), kk > 0 || kt > 0);
        wgmma_commit();
        if (kt < kDeferred) {  // under the wgmmas: the last tile's chunks, and the next tile's origin
          store_next_chunk(s, map_c, pending, consumer, std::make_integer_sequence<int, kDeferred>());
          if (kt == 0 && t + step < tiles.count) tiles.origin(t + step, &m0, &n0);
        }
        wgmma_wait<1>();
        if (kt > 0) release(s, it - 1);
      }
      wgmma_wait<0>();
      release(s, it - 1);
      fence_accumulators(acc);
      store_pending(s, map_c, pending, consumer);  // a tile with fewer slices than chunks pending
      if (!c_by_tma) {
        store_accumulators<BN>(p, tile_m0, tile_n0, acc);
      } else if (p.alpha == 1.f) {
        store_tile<false>(s, map_c, acc, tile_m0, tile_n0, consumer, p.alpha, pending, std::make_integer_sequence<int, kEager>());
      } else {
        store_tile<true>(s, map_c, acc, tile_m0, tile_n0, consumer, p.alpha, pending, std::make_integer_sequence<int, kEager>());
      }
    }
    store_pending(s, map_c, pending, consumer);
    if (c_by_tma && threadIdx.x % 32 == 0) bulk_wait_read<0>();  // the stores have read this CTA's smem
  }

  static __device__ __forceinline__ void run(const Problem& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& map_c, bool c_by_tma) {
    Smem& s = aligned_smem<Smem>();
    // A broadcast warpgroup index is known to be warp-uniform, so what derives from it (the
    // consumer's descriptors among them) lives in uniform registers.
    const int warpgroup = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);
    const int rank = static_cast<int>(cluster_cta_rank());
    const ClusterTiles tiles(p);
    const int slices = static_cast<int>((p.k + BK - 1) / BK);
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], CLUSTER * CONSUMERS * 4);
      fence_barrier_init();
    }
    cluster_sync();  // both CTAs' barriers exist before any multicast or remote arrival
    if (warpgroup == 0) {
      release_registers<PRODUCER_REGS>();
      if (threadIdx.x == 0) produce(s, tiles, &map_a, &map_b, rank, slices);
    } else {
      claim_registers<CONSUMER_REGS>();
      consume(s, tiles, p, &map_c, c_by_tma, rank, warpgroup - 1, slices);
    }
    cluster_sync();  // no CTA leaves while its peer may still arrive on its barriers
  }
};

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  using Any = Kernel<false, false, float>;  // every instantiation has the same threads and smem
  const void* fn = reinterpret_cast<const void*>(&ladder_kernel<Any>);
  if (Status s = set_smem_limit(fn, Any::kSmemBytes, message); s != Status::Success) return s;
  const unsigned fit = resident_clusters(fn, THREADS, Any::kSmemBytes, CLUSTER, message);
  if (fit == 0) return Status::CudaError;
  const ClusterTiles tiles(p);
  const unsigned clusters = static_cast<unsigned>(balanced_clusters(tiles.count, static_cast<int>(fit)));
  return launch_ladder<Kernel>(p, TileShape{BM, BN, CLUSTER, /*c_tma_store=*/true}, CLUSTER * clusters, stream, message);
}

}  // namespace sm90_wgmma_tma_ws_persistent

const KernelEntry& entry_sm90_wgmma_tma_ws_persistent() {
  static const KernelEntry e{{"sm90.wgmma_tma_ws_persistent", "sm90", 3,
                              "persistent, grouped tile order, 2-CTA clusters multicasting B, C by TMA store under the next tile",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma_ws_persistent::launch, &sm90::supports};
  return e;
}

}  // namespace hgemm::detail
