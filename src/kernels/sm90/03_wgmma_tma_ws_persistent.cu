// 03_wgmma_tma_ws_persistent.cu — sm90.wgmma_tma_ws_persistent
// Adds over 02_wgmma_tma_ws: a persistent grid, clusters with TMA multicast, an L2-aware tile
// order, C stored by TMA, and split-K with swapped operands for skinny problems.
//  * Persistent: as many CTAs as fit at once (one per SM), each looping over tiles. The producer
//    never stops at a tile's end: while the consumers write one tile's C, it is already filling
//    the ring with the next tile's slices, so the epilogue overlaps the loads, and no CTA pays a
//    launch or a prologue per tile.
//  * Clusters of 2 CTAs on vertically adjacent tiles (same columns of C): both need the same B
//    slice, so each CTA loads half of it and the copy engine multicasts the half into both CTAs'
//    shared memory. B's traffic from L2 halves. A slot is free again only when the consumers of
//    both CTAs are done with it, so every consumer warp arrives on the empty barrier of each CTA.
//  * Grouped raster: clusters walk C in groups of GROUP cluster-rows, column after column, so the
//    tiles in flight at any time share few rows of A and columns of B and those stay in L2.
//  * C through shared memory: each consumer stages 64-column chunks (swizzled, double-buffered)
//    and one thread stores them by TMA, which clips ragged edges; the consumers go straight back
//    to their wgmmas (when beta = 0 and C is 16-byte aligned with ldc % 8 == 0). When beta = 0
//    but C is not TMA-aligned, the consumers copy the staged chunks out row by row themselves,
//    with 16-byte stores (realigned to each row's start) instead of stores spread over 8 rows.
//  * Few tiles (decode-like shapes): K is split so that every SM streams; splits write fp32
//    partial sums that one pass adds in a fixed order (deterministic), launched early (PDL). When
//    M ≤ 64 (op(A) = N) the operands also swap roles, C^T = op(B)^T·op(A)^T: the long N runs along
//    wgmma's 64-row M and the few rows of C along its N (16, 32 or 64), so no tensor work is spent
//    on rows that do not exist.
#include <algorithm>

#include "common/sm90/launch.cuh"
#include "common/sm90/tile.cuh"
#include "common/sm90/wgmma_ops.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma_ws_persistent {

using namespace sm90;
constexpr int BM = 128, CONSUMERS = 2, THREADS = 128 * (1 + CONSUMERS), GROUP = 8;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;

constexpr int kSmemLimit = 227 * 1024;  // per block on sm_90

/// A tile configuration: BN columns of C per CTA, clusters of CLUSTER CTAs along M (sharing B
/// by multicast), STAGES ring slots; SKINNY: the kernel runs the swapped problem and always
/// writes fp32 partial sums, which reduce_splits writes to C transposed.
template <int BN_, int CLUSTER_, int STAGES_, bool SKINNY_>
struct Config {
  static constexpr int BN = BN_, CLUSTER = CLUSTER_, STAGES = STAGES_;
  static constexpr bool SKINNY = SKINNY_;
};
using Wide = Config<256, 2, 4, false>;
/// For M <= 128 (when the operands are not swapped): a pair of CTAs stacked along M would leave
/// one idle, so single CTAs of 128×128 with a deeper ring, and twice the tiles to split K over.
/// Measured on the H200 (op nt, f16 / f32): 128×4096×4096 25.4 / 25.4 µs against 30.8 / 31.1
/// with Wide; 96×4096×4096 22.1 / 23.7 against 27.7 / 28.9.
using Narrow = Config<128, 1, 6, false>;
constexpr int kNarrowMaxM = 128;
template <int BN>
using Skinny = Config<BN, 1, std::min(8, (kSmemLimit - 2048 - CONSUMERS * 2 * kCChunkBytes) / (BM * BK * 2 + BN * BK * 2)),
                      true>;

/// Work order: unit L is split L % splits of cluster tile L / splits (CLUSTER×BM rows by BN
/// columns, in grouped order); a split covers `per_split` slices of K.
template <typename C>
struct Schedule {
  int cluster_rows, tiles_n, tiles, slices, per_split, splits, total;

  __host__ __device__ Schedule(const Problem& p, int wanted_splits)
      : cluster_rows(static_cast<int>((p.m + C::CLUSTER * BM - 1) / (C::CLUSTER * BM))),
        tiles_n(static_cast<int>((p.n + C::BN - 1) / C::BN)),
        tiles(cluster_rows * tiles_n),
        slices(static_cast<int>((p.k + BK - 1) / BK)),
        per_split((slices + wanted_splits - 1) / wanted_splits),
        splits((slices + per_split - 1) / per_split),  // no empty split
        total(tiles * splits) {}

  struct Unit {
    int m0, n0, split, k_begin, k_end;  // k in slices
  };

  __device__ Unit unit(int L, int rank) const {
    const int tile = L / splits, split = L % splits;
    const int per_group = GROUP * tiles_n, first_row = tile / per_group * GROUP;
    const int rows = min(GROUP, cluster_rows - first_row), r = tile % per_group;
    return {((first_row + r % rows) * C::CLUSTER + rank) * BM, (r / rows) * C::BN, split, split * per_split,
            min(slices, (split + 1) * per_split)};
  }
};

/// Splits of K that fill the GPU when C has fewer cluster tiles than the clusters that fit
/// (skinny problems): each split keeps at least 4 slices, at most kMaxSplits splits (the
/// reduction sums many splits in parallel, reduce_splits). 16×64×65536 has one tile: 16 splits of
/// 4096 ran in 25 µs, 32 in 22 µs, 128 of 512 in 11.3 µs (cuBLAS: 14.2 µs f16, 10.6 µs f32).
constexpr int kMaxSplits = 128;
template <typename C>
int choose_splits(const Problem& p, unsigned clusters_that_fit) {
  const Schedule<C> one(p, 1);
  if (one.tiles * 2 > static_cast<int>(clusters_that_fit)) return 1;
  const int by_gpu = static_cast<int>(clusters_that_fit) / one.tiles, by_depth = one.slices / 4;
  return std::max(1, std::min({by_gpu, by_depth, kMaxSplits}));
}

template <bool A_MN, bool B_MN, typename Acc, typename C>
struct Kernel {
  static constexpr int BN = C::BN, CLUSTER = C::CLUSTER, STAGES = C::STAGES;
  using Schedule = sm90_wgmma_tma_ws_persistent::Schedule<C>;
  using TileA = OperandTile<A_MN, BM>;
  using TileB = OperandTile<B_MN, BN>;
  using Mma = WgmmaOp<BN, Acc>;
  using Stage = RingSlot<TileA, TileB>;
  struct Smem {
    Stage stage[STAGES];
    alignas(1024) std::uint8_t c_chunk[CONSUMERS][2][kCChunkBytes];  // double-buffered, per consumer
    std::uint64_t full[STAGES], empty[STAGES];
  };
  static_assert(aligned_smem_bytes<Smem>() <= kSmemLimit, "shared memory");
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = CLUSTER;

  static __device__ void produce(Smem& s, const Schedule& sched, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                 int rank) {
    int it = 0;  // slices issued so far, over all tiles: the ring position
    for (int L = blockIdx.x / CLUSTER; L < sched.total; L += gridDim.x / CLUSTER) {
      const auto [m0, n0, split, k_begin, k_end] = sched.unit(L, rank);
      for (int kt = k_begin; kt < k_end; ++kt, ++it) {
        const int slot = it % STAGES;
        mbar_wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
        fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, kt, rank, CLUSTER,
                  CLUSTER > 1 ? (1u << CLUSTER) - 1 : 0);
      }
    }
  }

  static __device__ void release(Smem& s, int it) {
    if (threadIdx.x % 32 != 0) return;
    if (CLUSTER == 1)
      mbar_arrive(&s.empty[it % STAGES]);
    else
      for (int cta = 0; cta < CLUSTER; ++cta) mbar_arrive_cluster(&s.empty[it % STAGES], cta);
  }

  /// The epilogue by TMA: each 64-column chunk of the consumer's 64×256 block is staged in
  /// shared memory (two buffers, so staging one overlaps the store of the other) and stored by
  /// one thread; the consumer goes back to the next tile's wgmmas without waiting for C.
  static __device__ void store_by_tma(Smem& s, const CUtensorMap* map_c, const typename Mma::Reg* acc, int m0, int n0,
                                      int consumer, float alpha) {
    const bool issuer = threadIdx.x % 128 == 0;
    const unsigned barrier_id = 1 + consumer;  // a named barrier for the consumer's 128 threads
#pragma unroll
    for (int j = 0; j < BN / kCChunkCols; ++j) {
      std::uint8_t* chunk = s.c_chunk[consumer][j % 2];
      if (issuer) bulk_wait_read<1>();  // the store that read this buffer two chunks ago is done
      named_barrier_sync(barrier_id, 128);
      stage_c_chunk<BN>(chunk, acc, j, alpha);
      fence_proxy_async();
      named_barrier_sync(barrier_id, 128);
      if (issuer) {
        tma_store(map_c, chunk, n0 + j * kCChunkCols, m0);
        bulk_commit();
      }
    }
  }

  /// The epilogue when C cannot take TMA (beta = 0): the same staged chunks, copied out row by
  /// row by the consumer's own threads (copy_chunk_rows), which wait for nothing but each other.
  static __device__ void store_by_rows(Smem& s, const Problem& p, const typename Mma::Reg* acc, int m0, int n0,
                                       int consumer) {
    const unsigned barrier_id = 1 + consumer;
#pragma unroll
    for (int j = 0; j < BN / kCChunkCols; ++j) {
      std::uint8_t* chunk = s.c_chunk[consumer][j % 2];
      named_barrier_sync(barrier_id, 128);  // everyone is done reading this buffer (chunk j - 2)
      stage_c_chunk<BN>(chunk, acc, j, p.alpha);
      named_barrier_sync(barrier_id, 128);
      copy_chunk_rows(p, chunk, m0, n0 + j * kCChunkCols);
    }
  }

  static __device__ void consume(Smem& s, const Schedule& sched, const Problem& p, const CUtensorMap* map_c,
                                 EpilogueMode mode, int rank, int consumer) {
    const int row = 64 * consumer;
    int it = 0;
    for (int L = blockIdx.x / CLUSTER; L < sched.total; L += gridDim.x / CLUSTER) {
      const auto [m0, n0, split, k_begin, k_end] = sched.unit(L, rank);
      typename Mma::Reg acc[Mma::kRegs];
      zero_accumulators(acc);
      for (int kt = k_begin; kt < k_end; ++kt, ++it) {
        const int slot = it % STAGES;
        mbar_wait(&s.full[slot], (it / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          Mma::template mma<TileA::kTranspose, TileB::kTranspose>(acc, TileA::desc(s.stage[slot].a, row, kk),
                                                                  TileB::desc(s.stage[slot].b, 0, kk));
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > k_begin) release(s, it - 1);
      }
      wgmma_wait<0>();
      release(s, it - 1);
      fence_accumulators(acc);
      if (mode.partials)
        store_partials<BN>(p, mode.partials + split * p.m * p.n, m0 + row, n0, acc);
      else if (mode.tma_store)
        store_by_tma(s, map_c, acc, m0 + row, n0, consumer, p.alpha);
      else if (mode.staged_rows)
        store_by_rows(s, p, acc, m0 + row, n0, consumer);
      else
        store_accumulators<BN>(p, m0 + row, n0, acc);
    }
    if (mode.tma_store && threadIdx.x % 128 == 0) bulk_wait_all();
  }

  static __device__ __forceinline__ void run(const Problem& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& map_c, EpilogueMode mode) {
    Smem& s = aligned_smem<Smem>();
    const int warpgroup = threadIdx.x / 128, rank = static_cast<int>(cluster_cta_rank());
    const Schedule sched(p, mode.splits);

    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], CLUSTER * CONSUMERS * 4);
      fence_barrier_init();
    }
    cluster_sync();  // both CTAs' barriers exist before any multicast or remote arrival
    if (warpgroup == 0) {
      release_registers<PRODUCER_REGS>();
      if (threadIdx.x == 0) produce(s, sched, &map_a, &map_b, rank);
    } else {
      claim_registers<CONSUMER_REGS>();
      consume(s, sched, p, &map_c, mode, rank, warpgroup - 1);
    }
    cluster_sync();  // no CTA leaves while its peer may still arrive on its barriers
  }
};

template <typename C>
struct With {
  template <bool A_MN, bool B_MN, typename Acc>
  using Kernel = sm90_wgmma_tma_ws_persistent::Kernel<A_MN, C::SKINNY ? false : B_MN, Acc, C>;
};

/// Runs configuration C on p (for a skinny configuration, p is the swapped problem).
template <typename C>
Status launch_config(const Problem& p, cudaStream_t stream, std::string* message) {
  auto plan = [&](const void* kernel, int smem, EpilogueMode* mode, StreamWorkspace& workspace) -> unsigned {
    const unsigned fit = resident_clusters(kernel, THREADS, smem, C::CLUSTER, message);
    if (fit == 0) return 0;
    const Schedule<C> sched(p, choose_splits<C>(p, fit));
    mode->transposed = C::SKINNY;
    if (C::SKINNY || sched.splits > 1) {  // skinny: C^T is written by the reduction, transposed
      void* partials = nullptr;
      const std::size_t bytes = static_cast<std::size_t>(sched.splits) * p.m * p.n * sizeof(float);
      if (workspace.allocate(bytes, &partials, message) != Status::Success) return 0;
      mode->partials = static_cast<float*>(partials);
      mode->splits = sched.splits;
    }
    return C::CLUSTER * std::min<unsigned>(fit, static_cast<unsigned>(sched.total));
  };
  const TileShape shape{BM, C::BN, 1, C::CLUSTER, /*c_tma_store=*/!C::SKINNY};
  return launch_kernel<With<C>::template Kernel>(p, shape, stream, message, plan);
}

/// The problem with A and B swapped: C^T = op(B)^T·op(A)^T, for op(A) = N.
Problem swapped(const Problem& p) {
  Problem q = p;
  q.m = p.n, q.n = p.m;
  q.op_a = p.op_b == Op::N ? Op::T : Op::N, q.a = p.b, q.lda = p.ldb;
  q.op_b = Op::T, q.b = p.a, q.ldb = p.lda;
  return q;
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  if (!sm90::takes_skinny_path(p))
    return p.m <= kNarrowMaxM ? launch_config<Narrow>(p, stream, message) : launch_config<Wide>(p, stream, message);
  const Problem q = swapped(p);
  if (p.m <= 16) return launch_config<Skinny<16>>(q, stream, message);
  if (p.m <= 32) return launch_config<Skinny<32>>(q, stream, message);
  return launch_config<Skinny<64>>(q, stream, message);
}

/// "auto" takes this rung for M <= 128 (the Narrow tiles, and the skinny path, M <= 64, within
/// them) and for any C with enough tiles; the rest goes to rung 04 or 01 (sm90::few_tiles_short_k).
/// Rung 04 (priority 25) takes the small problems it suits first, the skinny path excepted.
bool auto_suits(const Problem& p) { return p.m <= kNarrowMaxM || !sm90::few_tiles_short_k(p); }

}  // namespace sm90_wgmma_tma_ws_persistent

const KernelEntry& entry_sm90_wgmma_tma_ws_persistent() {
  static const KernelEntry e{{"sm90.wgmma_tma_ws_persistent", "sm90", 3,
                              "persistent, grouped tile order, 2-CTA clusters multicasting B, C by TMA store; split-K for few tiles",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma_ws_persistent::launch, /*auto_priority=*/22,
                             &sm90::supports, &sm90_wgmma_tma_ws_persistent::auto_suits};
  return e;
}

}  // namespace hgemm::detail
