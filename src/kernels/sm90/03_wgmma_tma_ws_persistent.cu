// 03_wgmma_tma_ws_persistent.cu — sm90.wgmma_tma_ws_persistent
// Adds over 02_wgmma_tma_ws: a persistent grid, clusters with TMA multicast, an L2-aware tile
// order, C stored by TMA, and split-K with swapped operands for skinny problems.
//  * Persistent: as many CTAs as fit at once (one per SM), each looping over tiles — or, where
//    fewer clusters take as many rounds of tiles, only as many as that (so 4096³'s 256 cluster
//    tiles go 4 to each of 64 clusters, not 3 or 4 to each of 66). The producer
//    never stops at a tile's end: while the consumers write one tile's C, it is already filling
//    the ring with the next tile's slices, so the epilogue overlaps the loads, and no CTA pays a
//    launch or a prologue per tile.
//  * Clusters of 2 CTAs on vertically adjacent tiles (same columns of C): both need the same B
//    slice, so each CTA loads half of it and the copy engine multicasts the half into both CTAs'
//    shared memory. B's traffic from L2 halves. A slot is free again only when the consumers of
//    both CTAs are done with it, so every consumer warp arrives on the empty barrier of each CTA.
//  * Grouped raster: clusters walk C in groups of GROUP cluster-rows, column after column, so the
//    tiles in flight at any time share few rows of A and columns of B and those stay in L2.
//  * C through shared memory: each consumer stages 64-column chunks (swizzled, double-buffered),
//    each warp its own 16 rows, which its first lane stores by TMA as soon as the warp has written
//    them (no barrier across the warpgroup); TMA clips ragged edges (when beta = 0 and C is 16-byte
//    aligned with ldc % 8 == 0). The consumers do not wait for the stores, and they stage the
//    last chunks of a tile (half of a 256-wide one, all of a narrower one) only once the next
//    tile's first wgmmas are running, so the tensor cores are not idle for them. When beta = 0
//    but C is not TMA-aligned, the consumers copy the staged chunks out row by row themselves,
//    with 16-byte stores (realigned to each row's start) instead of stores spread over 8 rows.
//  * Stream-K: when the last round of whole tiles would leave many clusters idle over a deep K,
//    the last tiles' slices are shared out evenly instead; a cluster that computed part of a tile
//    parks its sums in workspace and the one that computed the tile's first slices adds them and
//    writes C (common/sm90/tile_schedule.h says which, and when it pays).
//  * Few tiles: each tile's slices are cut into the same number of stream-K runs, each run inside
//    one tile, and the runs' sums meet in the kernel (max_run_slices says how many runs). With
//    single-CTA tiles (Narrow, skinny) and enough SMs per tile, a tile's splits of K run as one
//    cluster instead and add up in distributed shared memory (add_splits_in_cluster).
//    Decode-like shapes (M ≤ 64, op(A) = N) swap the operands, C^T = op(B)^T·op(A)^T: the long N
//    runs along wgmma's 64-row M and the few rows of C along its N (16, 32 or 64), so no tensor
//    work is spent on rows that do not exist. With enough tiles the consumers write C^T
//    transposed from their registers; with few, M > 16 takes the stream-K runs too, and M ≤ 16
//    splits K: the splits' fp32 partial sums are added in a fixed order (deterministic) by a
//    second pass, launched early (PDL), that writes C transposed (kSkinnyStreamKMinColumns).
//  * A C that rung 04 cuts into at most one wave of small tiles (64×16 to 128×64) goes to rung
//    04's kernel instead (wants_small_tiles): each CTA runs its tile's whole K, so there are no
//    partial sums to meet, and a single wave leaves the persistent loop nothing to overlap. So do
//    the decode shapes (M ≤ 32) whose swapped problem rung 04's 64- or 128-row tiles cover in one
//    wave that keeps DRAM busy (N from 3,649 to 16,896 columns on 132 SMs).
#include <algorithm>
#include <atomic>
#include <utility>

#include "common/occupancy.h"
#include "common/sm90/launch.cuh"
#include "common/sm90/tile.cuh"
#include "common/sm90/tile_schedule.h"
#include "common/sm90/wgmma_ops.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma_ws_persistent {

using namespace sm90;
constexpr int BM = 128, CONSUMERS = 2, THREADS = 128 * (1 + CONSUMERS), GROUP = 8;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;

constexpr int kSmemLimit = 227 * 1024;  // per block on sm_90

/// A tile configuration: BN columns of C per CTA, clusters of CLUSTER CTAs along M (sharing B
/// by multicast), STAGES ring slots; SKINNY: the kernel runs the swapped problem and writes its
/// C^T into C transposed, from registers (or as fp32 partial sums, which reduce_splits adds and
/// writes transposed, when K is split); STREAM_K: the schedule
/// shares the last tiles' K between clusters (a separate instantiation, so the stream-K branches
/// cost nothing where they are never taken; measured: docs/ladder.md#stream-k).
template <int BN_, int CLUSTER_, int STAGES_, bool SKINNY_, bool STREAM_K_ = false>
struct Config {
  static constexpr int BN = BN_, CLUSTER = CLUSTER_, STAGES = STAGES_;
  static constexpr bool SKINNY = SKINNY_, STREAM_K = STREAM_K_;
};
template <typename C>
using WithStreamK = Config<C::BN, C::CLUSTER, C::STAGES, C::SKINNY, true>;
using Wide = Config<256, 2, 4, false>;
/// For M <= 128 (when the operands are not swapped): a pair of CTAs stacked along M would leave
/// one idle, so single CTAs of 128×128 with a deeper ring, and twice the tiles to split K over
/// (measured: docs/ladder.md#decode-shapes).
using Narrow = Config<128, 1, 6, false>;
constexpr int kNarrowMaxM = 128;
/// The longest few-tile stream-K run worth a hand-over (tile_schedule.h: stream_k_clusters). A
/// Narrow slice carries half the math of a Wide CTA's, so its runs are longer
/// (measured: docs/ladder.md#stream-k).
template <typename C>
constexpr int max_run_slices() {
  return C::BN == 256 ? 16 : 24;
}
/// The skinny path (M <= 64, operands swapped) with few tiles shares their slices as stream-K runs,
/// as the other paths do, from 32 columns of the swapped problem up (M > 16); with 16 it keeps
/// split-K and the column reduction (reduce_splits), which is faster there
/// (measured: docs/ladder.md#stream-k).
constexpr int kSkinnyStreamKMinColumns = 32;
template <int BN>
using Skinny = Config<BN, 1, std::min(8, (kSmemLimit - 2048 - CONSUMERS * 2 * kCChunkBytes) / (BM * BK * 2 + BN * BK * 2)),
                      true>;

/// The work order of configuration C: cluster tiles of CLUSTER×BM rows by BN columns (each CTA
/// of a cluster takes BM of the rows), split-K and stream-K as common/sm90/tile_schedule.h lays out.
template <typename C>
using Schedule = TileSchedule<C::CLUSTER * BM, C::BN, GROUP, BK>;

template <typename C>
Schedule<C> whole_tiles(const Problem& p, int clusters) {
  return Schedule<C>(p.m, p.n, p.k, 1, clusters, false);
}

template <bool A_MN, bool B_MN, typename Acc, typename C>
struct Kernel {
  static constexpr int BN = C::BN, CLUSTER = C::CLUSTER, STAGES = C::STAGES;
  using Schedule = sm90_wgmma_tma_ws_persistent::Schedule<C>;
  using Unit = typename Schedule::Unit;
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
    unsigned it = 0;  // slices issued so far, over all tiles: the ring position
    const int g = blockIdx.x / CLUSTER, units = sched.units(g);
    for (int i = 0; i < units; ++i) {
      const Unit u = sched.unit(g, i);
      for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
        const unsigned slot = it % STAGES;
        mbar_wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
        fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, u.m0 + rank * BM, u.n0, kt, rank, CLUSTER,
                  CLUSTER > 1 ? (1u << CLUSTER) - 1 : 0);
      }
    }
  }

  static __device__ void release(Smem& s, unsigned it) {
    if (threadIdx.x % 32 != 0) return;
    if (CLUSTER == 1)
      mbar_arrive(&s.empty[it % STAGES]);
    else
      for (int cta = 0; cta < CLUSTER; ++cta) mbar_arrive_cluster(&s.empty[it % STAGES], cta);
  }

  /// The epilogue by TMA, one 64-column chunk at a time, each staged in shared memory (two
  /// buffers per consumer, so staging one overlaps the store of the other) and stored by TMA, one
  /// store per warp (store_chunk_by_tma). The last kDeferred chunks of a tile are stored while the next tile
  /// accumulates: they are packed to halves (PackedC) and the consumer starts the next tile at
  /// once, staging one of them after each of that tile's slices is issued to the tensor cores.
  /// With fp32 accumulators, 256 columns and its ring, only half the tile fits in the consumer's
  /// registers next to the next tile's accumulators.
  static constexpr int kChunks = BN / kCChunkCols;
  /// Half of a 256-wide tile with either accumulator: deferring all four chunks of an f16 tile
  /// gains nothing (measured: docs/ladder.md#persistent-epilogue).
  static constexpr int kDeferred = BN == 256 ? kChunks / 2 : kChunks;
  static constexpr int kEager = kChunks - kDeferred;
  struct PendingC {
    PackedC<kDeferred> c;
    int m0, n0;
    int next = kChunks;  // the next chunk to store; kChunks: none pending
  };

  /// Stages chunk J through `stage` and stores it by TMA, warp by warp: a warp writes only its
  /// own 16 rows of the chunk (the wgmma fragment's rows), so each warp syncs and stores alone,
  /// with no warpgroup barrier (measured: docs/ladder.md#persistent-epilogue).
  template <int J, typename Stage>
  static __device__ void store_chunk_by_tma(Smem& s, const CUtensorMap* map_c, int m0, int n0, int consumer,
                                            Stage&& stage) {
    const int warp = threadIdx.x % 128 / 32;
    const bool issuer = threadIdx.x % 32 == 0;
    std::uint8_t* chunk = s.c_chunk[consumer][J % 2];
    if (issuer) bulk_wait_read<1>();  // the store that read this buffer two chunks ago is done
    __syncwarp();
    stage(chunk);
    fence_proxy_async();
    __syncwarp();
    if (issuer) {
      tma_store(map_c, chunk + warp * kCStoreRows * kSwizzleRow, n0 + J * kCChunkCols, m0 + warp * kCStoreRows);
      bulk_commit();
    }
  }

  /// Stores the first kEager chunks of a finished tile and packs the others into `pending`.
  /// SCALED = false when alpha = 1: the pairs are only rounded, not multiplied (the same halves;
  /// 128 multiplies per fp32 thread less while the tensor cores wait for the next tile).
  template <bool SCALED, int... J>
  static __device__ void store_tile(Smem& s, const CUtensorMap* map_c, const typename Mma::Reg* acc, int m0, int n0,
                                    int consumer, float alpha, PendingC& pending, std::integer_sequence<int, J...>) {
    (store_chunk_by_tma<J>(s, map_c, m0, n0, consumer,
                           [&](std::uint8_t* chunk) { stage_c_chunk<BN, SCALED>(chunk, acc, J, alpha); }),
     ...);
    pack_c<kEager, SCALED>(pending.c, acc, alpha);
    pending.m0 = m0, pending.n0 = n0, pending.next = kEager;
  }
  static __device__ void store_tile(Smem& s, const CUtensorMap* map_c, const typename Mma::Reg* acc, int m0, int n0,
                                    int consumer, float alpha, PendingC& pending) {
    if (alpha == 1.f)
      store_tile<false>(s, map_c, acc, m0, n0, consumer, alpha, pending, std::make_integer_sequence<int, kEager>());
    else
      store_tile<true>(s, map_c, acc, m0, n0, consumer, alpha, pending, std::make_integer_sequence<int, kEager>());
  }

  /// Stores the next pending chunk, if any (the chunk index must be a compile-time constant for
  /// the packed registers to stay registers).
  template <int... J>
  static __device__ void store_next_chunk(Smem& s, const CUtensorMap* map_c, PendingC& pending, int consumer,
                                          std::integer_sequence<int, J...>) {
    ((pending.next == kEager + J
          ? store_chunk_by_tma<kEager + J>(s, map_c, pending.m0, pending.n0, consumer,
                                           [&](std::uint8_t* chunk) { stage_packed_chunk<J>(chunk, pending.c); })
          : void()),
     ...);
    if (pending.next < kChunks) ++pending.next;
  }
  static __device__ void store_next_chunk(Smem& s, const CUtensorMap* map_c, PendingC& pending, int consumer) {
    store_next_chunk(s, map_c, pending, consumer, std::make_integer_sequence<int, kDeferred>());
  }
  /// The first slices of a unit, under which the previous tile's pending chunks are stored (one
  /// per slice) and the next unit is worked out.
  static constexpr int kEarlySlices = kDeferred > 1 ? kDeferred : 1;
  static __device__ void store_pending(Smem& s, const CUtensorMap* map_c, PendingC& pending, int consumer) {
#pragma unroll 1
    while (pending.next < kChunks) store_next_chunk(s, map_c, pending, consumer);
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

  /// Cluster split-K (EpilogueMode::cluster_splits): this CTA computed split u.split of the tile,
  /// the other CTAs of its cluster the other splits. The CTA's only unit is done, and with it
  /// every load, so the ring is idle: each consumer stages its 64 rows of sums there as floats,
  /// and after a cluster_sync (which the producer warpgroup joins) every CTA adds up its share of
  /// the tile's rows from all the CTAs' stages and writes them to C (add_staged_splits).
  static_assert(sizeof(Stage) * STAGES >= sizeof(float) * BM * BN, "the ring holds a staged fp32 tile");
  static constexpr unsigned kConsumersBarrier = 1 + CONSUMERS;  // both consumers' 256 threads
  /// Whether this launch is a cluster split-K one (only single-CTA configurations without the
  /// stream-K branches have the path): producer and consumers must agree on its cluster_sync.
  static __device__ bool adds_splits_in_cluster(const EpilogueMode& mode) {
    if constexpr (CLUSTER == 1 && !C::STREAM_K)
      return mode.cluster_splits > 1;
    else
      return false;
  }
  static __device__ void add_splits_in_cluster(Smem& s, const Problem& p, const Unit& u,
                                               const typename Mma::Reg* acc, int consumer, int splits) {
    float* tile = reinterpret_cast<float*>(&s.stage[0]);
    named_barrier_sync(kConsumersBarrier, CONSUMERS * 128);  // both consumers' wgmmas are done with the ring
    stage_accumulators<BN>(tile, 64 * consumer, acc);
    cluster_sync();
    add_staged_splits<BM, BN, C::SKINNY>(p, tile, u.m0, u.n0, u.split, splits, threadIdx.x - 128, CONSUMERS * 128);
  }

  /// The parking slot of one consumer of one CTA of cluster g.
  static __device__ int handover_slot(int g, int rank, int consumer) { return (g * CLUSTER + rank) * CONSUMERS + consumer; }

  static __device__ void consume(Smem& s, const Schedule& sched, const Problem& p, const CUtensorMap* map_c,
                                 EpilogueMode mode, int rank, int consumer) {
    const int row = 64 * consumer;
    const unsigned barrier_id = 1 + consumer;  // a named barrier for the consumer's 128 threads
    unsigned it = 0;  // slices consumed so far, over all tiles: the ring position
    const int g = blockIdx.x / CLUSTER, units = sched.units(g);
    // The slot-0 descriptors of this consumer's rows of A and of B; the others are steps from them.
    const std::uint64_t desc_a = TileA::desc(s.stage[0].a, row, 0), desc_b = TileB::desc(s.stage[0].b, 0, 0);
    constexpr std::uint32_t kSlotUnits = sizeof(Stage) / 16;
    static_assert(sizeof(Stage) % 16 == 0, "slots start on 16-byte units");
    PendingC pending;  // the previous tile's C, stored while this one accumulates (TMA store only)
    // A unit's first wgmma overwrites the accumulators (scale-d = 0) instead of adding to zeros
    // written after the previous unit's epilogue, which the tensor cores would wait for. Not with
    // stream-K or the skinny tiles: there ptxas spills or serializes the wgmmas when the
    // accumulators live from one unit to the next, and they are zeroed per unit.
    constexpr bool kOverwrite = !C::STREAM_K && !C::SKINNY;
    typename Mma::Reg acc[Mma::kRegs];
    if constexpr (kOverwrite) zero_accumulators(acc);
    // The next unit is worked out while the current one's first wgmmas run, not between tiles.
    Unit next = units > 0 ? sched.unit(g, 0) : Unit{};
    for (int i = 0; i < units; ++i) {
      const Unit u = next;
      const int m0 = u.m0 + rank * BM + row, n0 = u.n0;  // this consumer's 64 rows
      if constexpr (!kOverwrite) zero_accumulators(acc);
      for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
        const unsigned slot = it % STAGES;
        mbar_wait(&s.full[slot], (it / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          Mma::template mma<TileA::kTranspose, TileB::kTranspose>(
              acc, desc_advanced(desc_a, slot * kSlotUnits + kk * TileA::kKStepUnits),
              desc_advanced(desc_b, slot * kSlotUnits + kk * TileB::kKStepUnits), !kOverwrite || kk > 0 || kt > u.k_begin);
        wgmma_commit();
        if (kt < u.k_begin + kEarlySlices) {  // while the wgmmas run; one test in the other slices
          if constexpr (!C::SKINNY) store_next_chunk(s, map_c, pending, consumer);
          if (kt == u.k_begin && i + 1 < units) next = sched.unit(g, i + 1);
        }
        wgmma_wait<1>();
        if (kt > u.k_begin) release(s, it - 1);
      }
      wgmma_wait<0>();
      release(s, it - 1);
      fence_accumulators(acc);
      if constexpr (!C::SKINNY) store_pending(s, map_c, pending, consumer);  // a tile shorter than its chunks
      if (adds_splits_in_cluster(mode)) {
        add_splits_in_cluster(s, p, u, acc, consumer, mode.cluster_splits);
        continue;
      }
      if constexpr (C::STREAM_K) {
        if (u.park >= 0) {  // another cluster finishes this tile
          park_accumulators(mode.stream_k, handover_slot(u.park, rank, consumer), acc, barrier_id);
          continue;
        }
        for (int w = u.take_first; w >= 0 && w <= u.take_last; ++w)  // in k order: the same sum every run
          add_parked_accumulators(mode.stream_k, handover_slot(w, rank, consumer), acc, barrier_id);
      }
      if (mode.partials)
        store_partials<BN>(p, mode.partials + u.split * p.m * p.n, m0, n0, acc);
      else if (mode.tma_store)
        store_tile(s, map_c, acc, m0, n0, consumer, p.alpha, pending);
      else if (mode.staged_rows)
        store_by_rows(s, p, acc, m0, n0, consumer);
      else if (C::SKINNY)
        store_accumulators_transposed<BN>(p, m0, n0, acc);
      else
        store_accumulators<BN>(p, m0, n0, acc);
    }
    if constexpr (!C::SKINNY) store_pending(s, map_c, pending, consumer);
    // The stores must have read this CTA's shared memory before it exits; their writes to C
    // complete before the grid does.
    if (mode.tma_store && threadIdx.x % 32 == 0) bulk_wait_read<0>();
  }

  static __device__ __forceinline__ void run(const Problem& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& map_c, EpilogueMode mode) {
    Smem& s = aligned_smem<Smem>();
    // The warpgroup index as a broadcast, which the compiler knows to be warp-uniform: what derives
    // from it, the consumer's descriptors among them, then lives in uniform registers, which
    // shortens the k-loop. rank: the CTA's place in a cluster along M (a cluster split-K launch of
    // CLUSTER = 1 has its splits along the cluster instead, and takes them from the schedule).
    const int warpgroup = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);
    const int rank = CLUSTER > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
    const Schedule sched(p.m, p.n, p.k, mode.splits, gridDim.x / CLUSTER, C::STREAM_K);

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
      if (adds_splits_in_cluster(mode)) cluster_sync();  // add_splits_in_cluster's
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

/// 32-bit accumulator registers per consumer thread: what a stream-K hand-over parks per thread.
template <typename C>
int accumulator_words(const Problem& p) {
  return p.accum == Accum::F16 ? WgmmaOp<C::BN, __half>::kRegs : WgmmaOp<C::BN, float>::kRegs;
}

/// A flag value no earlier launch used: stream-K flags live in pooled workspace that nothing
/// zeroes, so a launch waits for its own value (64 bits, counted from an arbitrary odd start: not
/// a pattern that zeroed or float-filled memory holds). Readers clear the flags they consumed, so a
/// CUDA graph replaying the launch with the same value starts from clear flags.
unsigned long long next_epoch() {
  static std::atomic<unsigned long long> counter{0x9e3779b97f4a7c15ull};
  return counter.fetch_add(2, std::memory_order_relaxed);
}

/// Clusters of configuration C that fit on the GPU at once, of C::CLUSTER CTAs (the persistent
/// grid) or of `cluster` (a cluster split-K launch). Every instantiation of C has the same
/// threads, shared memory and register bound, so one stands for all.
template <typename C>
unsigned clusters_that_fit(std::string* message, int cluster = C::CLUSTER) {
  using K = typename With<C>::template Kernel<false, false, float>;
  const void* fn = reinterpret_cast<const void*>(&kernel_entry<K>);
  if (set_smem_limit(fn, K::kSmemBytes, message) != Status::Success) return 0;
  return resident_clusters(fn, THREADS, K::kSmemBytes, cluster, message);
}

/// The splits of a cluster split-K launch of configuration C (choose_cluster_splits), fewer if
/// the clusters of that many CTAs, one per tile, would not all fit at once; 0: not this way (fewer
/// than kMinClusterSplits, or than 2 where the alternative is split-K and reduce_splits).
template <typename C>
int cluster_splits_that_fit(const Schedule<C>& one) {
  static_assert(C::CLUSTER == 1, "the cluster's CTAs are the tile's splits");
  std::string ignored;  // a cluster size that cannot be placed is one that does not fit
  int splits = choose_cluster_splits(one);
  // Below kMinClusterSplits the few-tile stream-K runs do as well, but not split-K and its pass.
  const int least = C::SKINNY && C::BN < kSkinnyStreamKMinColumns ? 2 : kMinClusterSplits;
  while (splits >= least && clusters_that_fit<C>(&ignored, splits) < static_cast<unsigned>(one.tiles)) --splits;
  return splits >= least ? splits : 0;
}

/// Runs configuration C on p (for a skinny configuration, p is the swapped problem); `one` is its
/// schedule of whole tiles over the clusters that fit at once; cluster_splits > 1: as a cluster
/// split-K launch of that many splits.
template <typename C>
Status launch_planned(const Problem& p, const Schedule<C>& one, cudaStream_t stream, std::string* message,
                      int cluster_splits = 0) {
  auto plan = [&](const void*, int, EpilogueMode* mode, StreamWorkspace& workspace) -> unsigned {
    const int splits = cluster_splits > 1 ? cluster_splits : C::STREAM_K ? 1 : choose_splits(one);
    const Schedule<C> sched(p.m, p.n, p.k, splits, 1, false);
    mode->transposed = C::SKINNY;
    if (cluster_splits > 1) {  // one CTA per split of every tile, a cluster per tile
      mode->splits = mode->cluster_splits = sched.splits;
      return static_cast<unsigned>(sched.total);
    }
    // Whole tiles: the fewest clusters that take as many rounds as all that fit (balanced_clusters),
    // so no cluster idles a round (measured: docs/ladder.md#persistent-epilogue).
    const int clusters =
        C::STREAM_K ? stream_k_clusters(one, max_run_slices<C>()) : balanced_clusters(sched.total, one.clusters);
    if (C::STREAM_K) {
      const std::size_t slots = static_cast<std::size_t>(clusters) * C::CLUSTER * CONSUMERS;
      void *parked = nullptr, *flags = nullptr;
      if (workspace.allocate(slots * 128 * accumulator_words<C>(p) * 4, &parked, message) != Status::Success ||
          workspace.allocate(slots * sizeof(unsigned long long), &flags, message) != Status::Success)
        return 0;
      mode->stream_k = {static_cast<std::uint32_t*>(parked), static_cast<unsigned long long*>(flags), next_epoch()};
    }
    if (sched.splits > 1) {
      void* partials = nullptr;
      const std::size_t bytes = static_cast<std::size_t>(sched.splits) * p.m * p.n * sizeof(float);
      if (workspace.allocate(bytes, &partials, message) != Status::Success) return 0;
      mode->partials = static_cast<float*>(partials);
      mode->splits = sched.splits;
    }
    return static_cast<unsigned>(C::CLUSTER * clusters);
  };
  const TileShape shape{BM, C::BN, 1, C::CLUSTER, /*c_tma_store=*/!C::SKINNY};
  return launch_kernel<With<C>::template Kernel>(p, shape, stream, message, plan);
}

/// Runs configuration C on p, with stream-K where it pays (tile_schedule.h: wants_stream_k, and
/// wants_stream_k_for_few_tiles in place of split-K).
template <typename C>
Status launch_config(const Problem& p, cudaStream_t stream, std::string* message) {
  const unsigned fit = clusters_that_fit<C>(message);
  if (fit == 0) return Status::CudaError;
  const Schedule<C> one = whole_tiles<C>(p, static_cast<int>(fit));
  if constexpr (C::CLUSTER == 1 && !C::STREAM_K) {
    if (p.k > 0)
      if (const int splits = cluster_splits_that_fit<C>(one); splits > 1)
        return launch_planned<C>(p, one, stream, message, splits);
  }
  if constexpr (!C::SKINNY || C::BN >= kSkinnyStreamKMinColumns) {
    if (p.k > 0 && ((!C::SKINNY && wants_stream_k(one)) || wants_stream_k_for_few_tiles(one)))
      return launch_planned<WithStreamK<C>>(p, one, stream, message);
  }
  return launch_planned<C>(p, one, stream, message);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  if (!sm90::takes_skinny_path(p))
    return p.m <= kNarrowMaxM ? launch_config<Narrow>(p, stream, message) : launch_config<Wide>(p, stream, message);
  const Problem q = swapped(p);
  if (p.m <= 16) return launch_config<Skinny<16>>(q, stream, message);
  if (p.m <= 32) return launch_config<Skinny<32>>(q, stream, message);
  return launch_config<Skinny<64>>(q, stream, message);
}

}  // namespace sm90_wgmma_tma_ws_persistent

const KernelEntry& entry_sm90_wgmma_tma_ws_persistent() {
  static const KernelEntry e{{"sm90.wgmma_tma_ws_persistent", "sm90", 3,
                              "persistent, grouped tile order, 2-CTA clusters multicasting B, C by TMA store; stream-K for few tiles and a ragged last round",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma_ws_persistent::launch,
                             &sm90::supports};
  return e;
}

}  // namespace hgemm::detail
