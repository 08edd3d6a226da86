// SPDX-License-Identifier: Apache-2.0
// The engine's persistent kernel, composed from its parts: the mainloop (a TMA producer and two
// wgmma consumer warpgroups around a ring), the scheduler (whole tiles in grouped order, split-K,
// stream-K), the fix-ups (stream-K hand-over, cluster split-K) and the epilogue (TMA store with
// deferred chunks, staged rows, registers, partial sums). One CTA per SM; each cluster walks its
// units, and the producer never stops at a unit's end, so the next unit's slices load while the
// consumers write D.
#pragma once

#include <type_traits>

#include "common/sm90/accumulators.cuh"
#include "engine/sm90/consumer_epilogue.cuh"
#include "engine/sm90/fixup.cuh"
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/mainloop.cuh"

namespace hgemm::detail::engine {

template <typename C, bool A_MN, bool B_MN, typename Acc, typename In>
struct PersistentKernel {
  static_assert(C::BM == 64 * CONSUMERS && C::READERS == CONSUMERS, "the consumers share each tile, 64 rows each");
  using Loop = Mainloop<C, A_MN, B_MN, Acc, In>;
  static constexpr int BN = C::BN, CLUSTER = C::CLUSTER, STAGES = C::STAGES;
  using Schedule = typename Loop::Schedule;
  using Unit = typename Loop::Unit;
  using Reg = typename Loop::Reg;
  static constexpr int kRegs = Loop::kRegs;
  using Epilogue = ConsumerEpilogue<BN, C::SWAPPED, C::FINISH, Reg, kRegs>;
  using Staged = typename Epilogue::Staged;
  struct Smem {
    typename Loop::Stage stage[STAGES];
    alignas(1024) std::uint8_t c_chunk[CONSUMERS][2][kCChunkBytes];  // double-buffered, per consumer
    std::uint64_t full[STAGES], empty[STAGES];
  };
  static_assert(aligned_smem_bytes<Smem>() <= kSmemLimit, "shared memory");
  static_assert(sizeof(Smem::c_chunk[0]) == kFinishScratchBytes, "a consumer's buffers are its epilogue scratch");
  static_assert(sizeof(typename Loop::Stage) * STAGES >= sizeof(float) * C::BM * BN, "the ring holds a staged fp32 tile");
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = CLUSTER;
  static constexpr unsigned kConsumersBarrier = 1 + CONSUMERS;  // both consumers' 256 threads

  /// Whether this launch is a cluster split-K one (only single-CTA configurations without the
  /// stream-K branches have the path): producer and consumers must agree on its cluster_sync.
  static __device__ bool adds_splits_in_cluster(const KernelParams& p) {
    if constexpr (CLUSTER == 1 && !C::STREAM_K && C::FINISH == TileFinish::Any)
      return p.cluster_splits > 1;
    else
      return false;
  }

  /// Cluster split-K: this CTA's only unit is done, and with it every load, so the ring is idle:
  /// each consumer stages its 64 rows of sums there as floats, and after a cluster_sync (which the
  /// producer warpgroup joins) every CTA adds its share of the tile's rows from all the CTAs.
  static __device__ void add_splits_in_cluster(Smem& s, const KernelParams& p, const Unit& u, const Reg* acc,
                                               int consumer) {
    float* tile = reinterpret_cast<float*>(&s.stage[0]);
    named_barrier_sync(kConsumersBarrier, CONSUMERS * 128);  // both consumers' wgmmas are done with the ring
    stage_accumulators<BN>(tile, 64 * consumer, acc);
    cluster_sync();
    add_staged_splits<C::BM, BN, C::SWAPPED>(p, p.out.of_product(u.batch), tile, u.m0, u.n0, u.split, p.cluster_splits,
                                          threadIdx.x - 128, CONSUMERS * 128);
  }

  /// The stream-K parking slot of one consumer of one CTA of cluster g.
  static __device__ int handover_slot(int g, int rank, int consumer) { return (g * CLUSTER + rank) * CONSUMERS + consumer; }

  static __device__ void consume(Smem& s, const Schedule& sched, const KernelParams& p, const CUtensorMap* map_d,
                                 const CUtensorMap* map_aux, int rank, int consumer) {
    const int row = 64 * consumer;
    const unsigned barrier_id = 1 + consumer;  // a named barrier for the consumer's 128 threads
    unsigned it = 0;  // slices consumed so far, over all units: the ring position
    const int g = blockIdx.x / CLUSTER, units = sched.units(g);
    std::uint64_t desc_a, desc_b;
    Loop::descriptors(s, row, &desc_a, &desc_b);
    typename Staged::Pending pending;  // the previous tile's D, stored while this one accumulates
    // Overwrite the accumulators at a unit's start, except with stream-K or the swapped tiles:
    // there ptxas spills or serializes the wgmmas when the accumulators live from one unit to the
    // next, and they are zeroed per unit.
    constexpr bool kOverwrite = !C::STREAM_K && !C::SWAPPED;
    Reg acc[kRegs];
    if constexpr (kOverwrite) zero_accumulators(acc);
    // FusedInRegisters: the unit's bias, loaded at its epilogue (loading it under the k-loop
    // gained nothing measurable).
    constexpr bool kFused = C::FINISH == TileFinish::FusedInRegisters;
    std::conditional_t<kFused, TileBias<BN>, NoTileBias> bias;
    // The next unit is worked out while the current one's first wgmmas run, not between tiles.
    Unit next = units > 0 ? sched.unit(g, 0) : Unit{};
    for (int i = 0; i < units; ++i) {
      const Unit u = next;
      const int m0 = u.m0 + rank * C::BM + row, n0 = u.n0;  // this consumer's 64 rows
      if constexpr (!kOverwrite) zero_accumulators(acc);
      Loop::template accumulate<Staged::kEarlySlices, kOverwrite>(s, u, it, acc, desc_a, desc_b, [&](int kt) {
        if constexpr (!C::SWAPPED) Staged::store_next_chunk(s.c_chunk[consumer], map_d, pending);
        if (kt == u.k_begin && i + 1 < units) next = sched.unit(g, i + 1);
      });
      if constexpr (!C::SWAPPED) Staged::store_pending(s.c_chunk[consumer], map_d, pending);  // a short unit
      if (adds_splits_in_cluster(p)) {
        add_splits_in_cluster(s, p, u, acc, consumer);
        continue;
      }
      if constexpr (C::STREAM_K) {
        if (u.park >= 0) {  // another cluster finishes this tile
          park_accumulators(p.stream_k, handover_slot(u.park, rank, consumer), acc, barrier_id);
          continue;
        }
        for (int w = u.take_first; w >= 0 && w <= u.take_last; ++w)  // in k order: the same sum every run
          add_parked_accumulators(p.stream_k, handover_slot(w, rank, consumer), acc, barrier_id);
      }
      if constexpr (kFused) Epilogue::load_bias(p, u, m0, n0, bias);
      if constexpr (kFused)
        Epilogue::template store<kStoresAuxByTma>(s.c_chunk[consumer], p, map_d, u, acc, m0, n0, barrier_id, pending,
                                                   &bias, map_aux);
      else
        Epilogue::store(s.c_chunk[consumer], p, map_d, u, acc, m0, n0, barrier_id, pending);
    }
    if constexpr (!C::SWAPPED) Staged::store_pending(s.c_chunk[consumer], map_d, pending);
    // The stores must have read this CTA's shared memory before it exits; their writes to D
    // complete before the grid does.
    if (p.store == StorePath::Tma && threadIdx.x % 32 == 0) bulk_wait_read<0>();
  }

  /// The fused-in-registers instantiation without the stream-K branches takes aux's map too
  /// (engine_kernel: StoresAuxByTma); with them, its code made ptxas spill.
  static constexpr bool kStoresAuxByTma = C::FINISH == TileFinish::FusedInRegisters && !C::STREAM_K;

  static __device__ __forceinline__ void run(const KernelParams& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& map_d, const CUtensorMap* map_aux = nullptr) {
    Smem& s = aligned_smem<Smem>();
    // The warpgroup index as a broadcast, which the compiler knows to be warp-uniform: what derives
    // from it, the consumer's descriptors among them, then lives in uniform registers, which
    // shortens the k-loop. rank: the CTA's place in a cluster along M (a cluster split-K launch of
    // CLUSTER = 1 has its splits along the cluster instead, and takes them from the schedule).
    const int warpgroup = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);
    const int rank = CLUSTER > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
    const Schedule sched(p.m, p.n, p.k, p.splits, gridDim.x / CLUSTER, C::STREAM_K, p.batch);

    Loop::run_cta(
        s, sched, p, map_a, map_b, warpgroup, rank,
        [&](int consumer) { consume(s, sched, p, &map_d, map_aux, rank, consumer); },
        [&] {
          if (adds_splits_in_cluster(p)) cluster_sync();  // add_splits_in_cluster's
        });
  }
};

/// PersistentKernel of configuration C in the form launch_kernel_template takes.
template <typename C>
struct PersistentOf {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = PersistentKernel<C, A_MN, B_MN, Acc, In>;
};

/// Launches configuration C's persistent kernel for l, with the stream-K branches or without them;
/// a plain launch that stores by TMA takes C's plain instantiation (PlainOf), one whose fused
/// epilogue runs in registers its FusedInRegistersOf (built for f32 accumulators only). A unit
/// may instantiate one STREAM_K only, so a kernel's two halves compile side by side.
template <typename C, bool STREAM_K>
Status launch_persistent(const KernelLaunch& l, std::string* message) {
  if constexpr (C::FINISH == TileFinish::Any) {
    if (l.plain && l.params.store == StorePath::Tma) return launch_persistent<PlainOf<C>, STREAM_K>(l, message);
    if (l.fused_in_registers) return launch_persistent<FusedInRegistersOf<C>, STREAM_K>(l, message);
  }
  constexpr bool kF16Accum = C::FINISH != TileFinish::FusedInRegisters;
  using Config = std::conditional_t<STREAM_K, WithStreamK<C>, C>;
  return launch_kernel_template<PersistentOf<Config>::template Kernel, kF16Accum>(l, message);
}

template <typename C>
Status launch_persistent(const KernelLaunch& l, bool stream_k, std::string* message) {
  return stream_k ? launch_persistent<C, true>(l, message) : launch_persistent<C, false>(l, message);
}

}  // namespace hgemm::detail::engine
