// SPDX-License-Identifier: Apache-2.0
// 02_wgmma_tma_ws.cu — sm90.wgmma_tma_ws
// Adds over 01_wgmma_tma: warp specialisation and a tile twice as wide. In rung 01 the same warps
// issue the copies and the math, so a late slice stalls the tensor cores, and one warpgroup's
// 128×128 tile gives each wgmma only N = 128. Here a CTA of three warpgroups computes 128×256:
//  * warpgroup 0 is the producer: one of its threads runs ahead through the ring, waiting on a
//    slot's "empty" barrier and refilling it by TMA. It needs few registers, so it gives most of
//    them back (setmaxnreg.dec to 40);
//  * warpgroups 1 and 2 are consumers: each owns 64 rows and issues m64n256k16 wgmmas (the widest,
//    so B is fetched from shared memory once per 64×256 block), with the registers the producer
//    gave up (setmaxnreg.inc to 232: 128 fp32 accumulators per thread fit without spills).
// Full barriers complete on TMA bytes; empty barriers take one arrival per consumer warp.
#include "common/sm90/accumulators.cuh"
#include "common/sm90/ladder_launch.cuh"
#include "common/sm90/operand_tile.cuh"
#include "common/sm90/wgmma_ops.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma_ws {

using namespace sm90;
constexpr int BM = 128, BN = 256, STAGES = 4, CONSUMERS = 2, THREADS = 128 * (1 + CONSUMERS);
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;

template <bool A_MN, bool B_MN, typename Acc>
struct Kernel {
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

  static __device__ void produce(Smem& s, const CUtensorMap* map_a, const CUtensorMap* map_b, int slices, int m0,
                                 int n0) {
    for (int kt = 0; kt < slices; ++kt) {
      const int slot = kt % STAGES;
      mbar_wait(&s.empty[slot], ((kt / STAGES) & 1) ^ 1);  // the first pass finds every slot free
      fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, kt);
    }
  }

  static __device__ void consume(Smem& s, const Problem& p, int slices, int m0, int n0, int consumer) {
    typename Mma::Reg acc[Mma::kRegs];
    zero_accumulators(acc);
    const int row = 64 * consumer;
    for (int kt = 0; kt < slices; ++kt) {
      const int slot = kt % STAGES;
      mbar_wait(&s.full[slot], (kt / STAGES) & 1);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        Mma::template mma<TileA::kTranspose, TileB::kTranspose>(acc, TileA::desc(s.stage[slot].a, row, kk),
                                                                TileB::desc(s.stage[slot].b, 0, kk));
      wgmma_commit();
      wgmma_wait<1>();
      if (kt > 0 && threadIdx.x % 32 == 0) mbar_arrive(&s.empty[(kt - 1) % STAGES]);
    }
    wgmma_wait<0>();
    fence_accumulators(acc);
    store_accumulators<BN>(p, m0 + row, n0, acc);
  }

  static __device__ __forceinline__ void run(const Problem& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& /*map_c*/, bool /*c_by_tma*/) {
    Smem& s = aligned_smem<Smem>();
    const int warpgroup = threadIdx.x / 128;
    const int tiles_n = static_cast<int>((p.n + BN - 1) / BN);
    const int m0 = static_cast<int>(blockIdx.x / tiles_n) * BM, n0 = static_cast<int>(blockIdx.x % tiles_n) * BN;
    const int slices = static_cast<int>((p.k + BK - 1) / BK);

    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], CONSUMERS * 4);
      fence_barrier_init();
    }
    __syncthreads();
    if (warpgroup == 0) {
      release_registers<PRODUCER_REGS>();
      if (threadIdx.x == 0) produce(s, &map_a, &map_b, slices, m0, n0);
    } else {
      claim_registers<CONSUMER_REGS>();
      consume(s, p, slices, m0, n0, warpgroup - 1);
    }
  }
};

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  dim3 grid;
  if (Status s = tile_grid<BM, BN>(p, &grid, message); s != Status::Success) return s;
  return launch_ladder<Kernel>(p, TileShape{BM, BN}, grid.x, stream, message);
}

}  // namespace sm90_wgmma_tma_ws

const KernelEntry& entry_sm90_wgmma_tma_ws() {
  static const KernelEntry e{{"sm90.wgmma_tma_ws", "sm90", 2,
                              "warp-specialised: a TMA producer warpgroup, two m64n256 wgmma consumers (128x256)",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma_ws::launch, &sm90::supports};
  return e;
}

}  // namespace hgemm::detail
