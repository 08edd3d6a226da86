// SPDX-License-Identifier: Apache-2.0
// The engine's ping-pong kernel: the persistent kernel's producer and ring, but each consumer
// warpgroup runs a tile of its own (64 rows × BN), the two taking a cluster's units in turns. The
// turns are ordered at the tensor cores: a consumer issues its tile's wgmmas only once the other
// has issued all of its previous tile's, so while one consumer runs its epilogue (the fused
// epilogue, C, an f32 D, the stores) the other's mainloop keeps the tensor cores busy, instead of
// both idling them at once as the cooperative consumers of one tile do.
#pragma once

#include "common/sm90/accumulators.cuh"
#include "engine/sm90/consumer_epilogue.cuh"
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/mainloop.cuh"

namespace hgemm::detail::engine {

/// A ping-pong configuration: per CTA a 64 × BN unit, clusters of CLUSTER CTAs along M sharing B
/// by multicast (a cluster's unit is CLUSTER·64 rows), STAGES ring slots, each read by one
/// consumer. Whole tiles or split-K; no stream-K, no cluster split-K, no swapped problem. PLAIN:
/// every tile stored by TMA as it is (as Persistent's).
template <int BN_, int CLUSTER_, int STAGES_, bool PLAIN_ = false>
struct PingPong {
  static constexpr int BM = 64, BN = BN_, CLUSTER = CLUSTER_, STAGES = STAGES_;
  static constexpr int READERS = 1;
  static constexpr bool SWAPPED = false, STREAM_K = false, PLAIN = PLAIN_;
};

template <typename C, bool A_MN, bool B_MN, typename Acc, typename In>
struct PingPongKernel {
  static_assert(C::BM == 64 && C::READERS == 1 && !C::SWAPPED && !C::STREAM_K, "one consumer per 64-row unit");
  using Loop = Mainloop<C, A_MN, B_MN, Acc, In>;
  static constexpr int BN = C::BN, CLUSTER = C::CLUSTER, STAGES = C::STAGES;
  using Schedule = typename Loop::Schedule;
  using Unit = typename Loop::Unit;
  using Reg = typename Loop::Reg;
  static constexpr int kRegs = Loop::kRegs;
  using Epilogue = ConsumerEpilogue<BN, false, C::PLAIN ? TileFinish::Plain : TileFinish::Any, Reg, kRegs>;
  using Staged = typename Epilogue::Staged;
  struct Smem {
    typename Loop::Stage stage[STAGES];
    alignas(1024) std::uint8_t c_chunk[CONSUMERS][2][kCChunkBytes];  // double-buffered, per consumer
    std::uint64_t full[STAGES], empty[STAGES];
  };
  static_assert(aligned_smem_bytes<Smem>() <= kSmemLimit, "shared memory");
  static_assert(sizeof(Smem::c_chunk[0]) == kFinishScratchBytes, "a consumer's buffers are its epilogue scratch");
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS, kClusterSize = CLUSTER;
  /// Named barrier kTurnBarrier + c (both consumers' 256 threads): consumer c's turn at the tensor
  /// cores. Barriers 1 and 2 are each consumer's own, 3 both consumers' in the other kernels.
  static constexpr unsigned kTurnBarrier = 4;

  /// Consumer `consumer` runs the cluster's units i with i % 2 == consumer. Before unit i > 0 it
  /// waits for its turn, which the other consumer gives once unit i - 1's last wgmmas are issued.
  /// The turns also keep the ring sound: when a consumer starts a unit, every slice before it has
  /// landed (the other consumer waited for them), so no full barrier it waits on is a phase behind.
  static __device__ void consume(Smem& s, const Schedule& sched, const KernelParams& p, const CUtensorMap* map_d,
                                 int rank, int consumer) {
    const unsigned barrier_id = 1 + consumer;  // a named barrier for the consumer's 128 threads
    unsigned it = 0;  // the ring position: slices of every unit before this one, the other's included
    const int g = blockIdx.x / CLUSTER, units = sched.units(g);
    std::uint64_t desc_a, desc_b;
    Loop::descriptors(s, 0, &desc_a, &desc_b);
    typename Staged::Pending pending;
    Reg acc[kRegs];
    zero_accumulators(acc);
    for (int i = consumer; i < units; i += 2) {
      if (i > 0) {  // the other consumer's unit i - 1 takes the slices before this one
        const Unit other = sched.unit(g, i - 1);
        it += other.k_end - other.k_begin;
      }
      const Unit u = sched.unit(g, i);
      const int m0 = u.m0 + rank * C::BM, n0 = u.n0;
      if (i > 0) named_barrier_sync(kTurnBarrier + consumer, CONSUMERS * 128);
      Loop::template accumulate<0, true>(
          s, u, it, acc, desc_a, desc_b, [](int) {}, typename Loop::NoPrepare{}, [&] {
            if (i + 1 < units) named_barrier_arrive(kTurnBarrier + (1 - consumer), CONSUMERS * 128);
          });
      // The whole tile now: the next unit of this consumer starts only after the other's.
      Epilogue::store(s.c_chunk[consumer], p, map_d, u, acc, m0, n0, barrier_id, pending);
      Staged::store_pending(s.c_chunk[consumer], map_d, pending);
    }
    // The stores must have read this CTA's shared memory before it exits; their writes to D
    // complete before the grid does.
    if (p.store == StorePath::Tma && threadIdx.x % 32 == 0) bulk_wait_read<0>();
  }

  static __device__ __forceinline__ void run(const KernelParams& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& map_d) {
    Smem& s = aligned_smem<Smem>();
    const int warpgroup = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);  // warp-uniform
    const int rank = CLUSTER > 1 ? static_cast<int>(cluster_cta_rank()) : 0;
    const Schedule sched(p.m, p.n, p.k, p.splits, gridDim.x / CLUSTER, false, p.batch);

    Loop::run_cta(
        s, sched, p, map_a, map_b, warpgroup, rank,
        [&](int consumer) { consume(s, sched, p, &map_d, rank, consumer); }, [] {});
  }
};

/// PingPongKernel of configuration C in the form launch_kernel_template takes.
template <typename C>
struct PingPongOf {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = PingPongKernel<C, A_MN, B_MN, Acc, In>;
};

/// Launches configuration C's ping-pong kernel for l (f32 accumulators); a plain launch that
/// stores by TMA takes the plain instantiation.
template <typename C>
Status launch_pingpong_of(const KernelLaunch& l, std::string* message) {
  if constexpr (!C::PLAIN)
    if (l.plain && l.params.store == StorePath::Tma)
      return launch_pingpong_of<PingPong<C::BN, C::CLUSTER, C::STAGES, true>>(l, message);
  return launch_kernel_template<PingPongOf<C>::template Kernel, false>(l, message);
}

}  // namespace hgemm::detail::engine
