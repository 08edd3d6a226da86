// SPDX-License-Identifier: Apache-2.0
// The engine's mainloop: a producer thread fills a ring of k-slices of A and B by TMA (B split
// between the CTAs of a cluster and multicast to all of them), and consumer warpgroups run
// wgmma over each slice and release it. The configuration (tile, cluster, ring depth) and the
// operand types are template parameters; the scheduler says which units of work to run.
#pragma once

#include <algorithm>

#include "common/sm90/accumulators.cuh"
#include "common/sm90/c_chunk.cuh"
#include "common/sm90/operand_tile.cuh"
#include "common/sm90/wgmma_ops_bf16.cuh"
#include "engine/sm90/params.h"
#include "engine/sm90/schedule.h"

namespace hgemm::detail::engine {

using namespace sm90;

constexpr int BM = 128, CONSUMERS = kConsumerWarpgroups, THREADS = 128 * (1 + CONSUMERS), GROUP = 8;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int kSmemLimit = 227 * 1024;  // per block on sm_90

/// A persistent configuration: BN columns of C per CTA, clusters of CLUSTER CTAs along M
/// (sharing B by multicast), STAGES ring slots; SWAPPED: the kernel runs the swapped problem and
/// writes its C^T into D transposed; STREAM_K: the scheduler can share tiles' K between clusters
/// (a separate instantiation, so the stream-K branches cost nothing where they are never taken;
/// measured: docs/ladder.md#stream-k); FINISH: the store code it holds (TileFinish).
template <int BN_, int CLUSTER_, int STAGES_, bool SWAPPED_, bool STREAM_K_ = false, TileFinish FINISH_ = TileFinish::Any>
struct Persistent {
  static constexpr int BM = engine::BM, BN = BN_, CLUSTER = CLUSTER_, STAGES = STAGES_;
  static constexpr int READERS = CONSUMERS;  ///< consumer warpgroups reading each ring slot (64 rows each)
  static constexpr bool SWAPPED = SWAPPED_, STREAM_K = STREAM_K_;
  static constexpr TileFinish FINISH = FINISH_;
  static constexpr bool PLAIN = FINISH == TileFinish::Plain;
  static_assert(FINISH == TileFinish::Any || !SWAPPED, "a swapped kernel stores D transposed, never by TMA");
};
template <typename C>
using WithStreamK = Persistent<C::BN, C::CLUSTER, C::STAGES, C::SWAPPED, true, C::FINISH>;
/// C for the plain launches that store tiles by TMA (KernelLaunch::plain).
template <typename C>
using PlainOf = Persistent<C::BN, C::CLUSTER, C::STAGES, C::SWAPPED, C::STREAM_K, TileFinish::Plain>;
/// C for the launches whose fused epilogue runs in registers before a TMA store
/// (KernelLaunch::fused_in_registers).
template <typename C>
using FusedInRegistersOf = Persistent<C::BN, C::CLUSTER, C::STAGES, C::SWAPPED, C::STREAM_K, TileFinish::FusedInRegisters>;

/// The work order of configuration C: cluster tiles of CLUSTER×BM rows by BN columns.
template <typename C>
using ScheduleOf = TileSchedule<C::CLUSTER * C::BM, C::BN, GROUP, BK>;

template <typename C, bool A_MN, bool B_MN, typename Acc, typename In>
struct Mainloop {
  static constexpr int BM = C::BM, BN = C::BN, CLUSTER = C::CLUSTER, STAGES = C::STAGES;
  using Schedule = ScheduleOf<C>;
  using Unit = typename Schedule::Unit;
  using TileA = OperandTile<A_MN, BM>;
  using TileB = OperandTile<B_MN, BN>;
  using Mma = WgmmaOp<BN, Acc, In>;
  using Reg = typename Mma::Reg;
  static constexpr int kRegs = Mma::kRegs;
  using Stage = RingSlot<TileA, TileB>;
  static constexpr std::uint32_t kSlotUnits = sizeof(Stage) / 16;
  static_assert(sizeof(Stage) % 16 == 0, "slots start on 16-byte units");

  /// The ring's barriers: full completes on a slot's TMA bytes, empty on one arrival per warp of
  /// the slot's readers in every CTA of the cluster (each CTA's B share lands in all of them).
  template <typename Smem>
  static __device__ void init_barriers(Smem& s) {
    for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], CLUSTER * C::READERS * 4);
  }

  /// A warp-specialised CTA of the persistent kernels: thread 0 sets up the ring's barriers, the
  /// first warpgroup gives up registers and its thread 0 produces (then `after_produce()`), each
  /// other warpgroup takes registers and runs `consume(consumer)`; the cluster meets before and
  /// after, so no multicast or remote arrival finds a peer's barriers missing or gone.
  template <typename Smem, typename Consume, typename AfterProduce>
  static __device__ __forceinline__ void run_cta(Smem& s, const Schedule& sched, const KernelParams& p,
                                                 const CUtensorMap& map_a, const CUtensorMap& map_b, int warpgroup,
                                                 int rank, Consume consume, AfterProduce after_produce) {
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      init_barriers(s);
      fence_barrier_init();
    }
    cluster_sync();
    if (warpgroup == 0) {
      release_registers<PRODUCER_REGS>();
      if (threadIdx.x == 0) produce(s, sched, &map_a, &map_b, rank, p.batched, p.a_steps, p.b_steps);
      after_produce();
    } else {
      claim_registers<CONSUMER_REGS>();
      consume(warpgroup - 1);
    }
    cluster_sync();
  }

  /// The producer thread: every slice of every unit of cluster g, in order, each into the next
  /// ring slot once the consumers of the whole cluster have released it. A and B are read from
  /// the unit's product of the batch (a_steps, b_steps = 0: the one matrix every product shares).
  template <typename Smem>
  static __device__ void produce(Smem& s, const Schedule& sched, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                 int rank, bool batched, int a_steps, int b_steps) {
    unsigned it = 0;  // slices issued so far, over all units: the ring position
    const int g = blockIdx.x / CLUSTER, units = sched.units(g);
    for (int i = 0; i < units; ++i) {
      const Unit u = sched.unit(g, i);
      for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
        const unsigned slot = it % STAGES;
        mbar_wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
        constexpr std::uint16_t kMask = CLUSTER > 1 ? (1u << CLUSTER) - 1 : 0;
        if (batched)  // rank-3 maps only for a batch: 2-D loads are cheaper for a single product
          fill_slot_batched(s.stage[slot], &s.full[slot], map_a, map_b, u.m0 + rank * BM, u.n0, kt, u.batch * a_steps,
                            u.batch * b_steps, rank, CLUSTER, kMask);
        else
          fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, u.m0 + rank * BM, u.n0, kt, rank, CLUSTER, kMask);
      }
    }
  }

  /// A consumer warp gives ring position `it` back, to every CTA of the cluster. Plain CTA-scope
  /// arrivals: a cluster-scope release would wait for the warp's wgmmas still in flight.
  template <typename Smem>
  static __device__ void release(Smem& s, unsigned it) {
    if (threadIdx.x % 32 != 0) return;
    if (CLUSTER == 1)
      mbar_arrive(&s.empty[it % STAGES]);
    else
      for (int cta = 0; cta < CLUSTER; ++cta) mbar_arrive_cluster(&s.empty[it % STAGES], cta);
  }

  /// The slot-0 descriptors of a consumer's 64 rows of A and of B; the others are steps from them.
  template <typename Smem>
  static __device__ void descriptors(Smem& s, int row, std::uint64_t* desc_a, std::uint64_t* desc_b) {
    *desc_a = TileA::desc(s.stage[0].a, row, 0);
    *desc_b = TileB::desc(s.stage[0].b, 0, 0);
  }

  /// Nothing to do to a slot before the tensor cores read it (accumulate's default).
  struct NoPrepare {
    __device__ void operator()(int, unsigned) const {}
  };
  /// Nothing to do once the unit's last wgmmas are issued (accumulate's default).
  struct NoIssued {
    __device__ void operator()() const {}
  };

  /// A consumer warpgroup runs unit u's slices from ring position `it` on, one group of wgmmas
  /// in flight, and releases each slot once the group after it is issued. OVERWRITE: the unit's
  /// first wgmma overwrites the accumulators (scale-d = 0) instead of adding to zeros written
  /// after the previous epilogue, which the tensor cores would wait for. early(kt) runs while
  /// the wgmmas of each of the unit's first EARLY slices run (the epilogue's deferred stores,
  /// the next unit's arithmetic); prepare(kt, slot) once slice kt has landed in `slot`, before
  /// any wgmma reads it (the K-grouped kernel's masking of a group's last slice); issued() once
  /// the unit's last wgmmas are issued, while they still run (the ping-pong consumers' turn).
  template <int EARLY, bool OVERWRITE, typename Smem, typename Early, typename Prepare = NoPrepare,
            typename Issued = NoIssued>
  static __device__ __forceinline__ void accumulate(Smem& s, const Unit& u, unsigned& it, Reg (&acc)[kRegs],
                                                    std::uint64_t desc_a, std::uint64_t desc_b, Early&& early,
                                                    Prepare&& prepare = Prepare{}, Issued&& issued = Issued{}) {
    for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
      const unsigned slot = it % STAGES;
      mbar_wait(&s.full[slot], (it / STAGES) & 1);
      prepare(kt, slot);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        Mma::template mma<TileA::kTranspose, TileB::kTranspose>(
            acc, desc_advanced(desc_a, slot * kSlotUnits + kk * TileA::kKStepUnits),
            desc_advanced(desc_b, slot * kSlotUnits + kk * TileB::kKStepUnits), !OVERWRITE || kk > 0 || kt > u.k_begin);
      wgmma_commit();
      if (kt < u.k_begin + EARLY) early(kt);  // one test in the other slices
      wgmma_wait<1>();
      if (kt > u.k_begin) release(s, it - 1);
    }
    issued();
    wgmma_wait<0>();
    release(s, it - 1);
    fence_accumulators(acc);
  }
};

}  // namespace hgemm::detail::engine
