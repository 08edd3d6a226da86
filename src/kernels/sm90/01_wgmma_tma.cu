// SPDX-License-Identifier: Apache-2.0
// 01_wgmma_tma.cu — sm90.wgmma_tma
// The first Hopper rung: the tensor cores driven the way sm_90 wants. Over the Ampere-style
// mma.sync path it adds three things.
//  * TMA: one thread asks the copy engine for a whole 128×64 tile of A and of B
//    (cp.async.bulk.tensor, tensor maps built on the host); the engine computes the addresses,
//    zero-fills what lies outside the matrix (ragged M, N, K need no predicates) and writes the
//    tile 128B-swizzled, the layout wgmma reads without bank conflicts.
//  * An mbarrier ring of STAGES slots: the copy engine completes a slot's "full" barrier by byte
//    count; the warps release it on its "empty" barrier once the wgmmas reading it are done, and
//    thread 0 refills it STAGES slices ahead.
//  * wgmma.mma_async: one warpgroup (4 warps) multiplies 64×128×16 per instruction, both operands
//    read straight from shared memory through descriptors, two 64-row halves per 128-row tile;
//    the instructions of a slice run asynchronously while the next slice's wait is issued (one
//    group kept in flight).
// Every op combination runs natively: an operand stored MN-major (A with op T, B with op N) is
// loaded as 64-wide blocks and read with wgmma's transpose bit. Operands TMA cannot read in place
// (pointer not 16-byte aligned, ld not a multiple of 8) are first copied to aligned workspace.
// One CTA of 128 threads per 128×128 tile of C.
#include "common/sm90/accumulators.cuh"
#include "common/sm90/ladder_launch.cuh"
#include "common/sm90/operand_tile.cuh"
#include "common/sm90/wgmma_ops.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma {

using namespace sm90;
constexpr int BM = 128, BN = 128, STAGES = 4, WARPS = 4;

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
  static constexpr int kThreads = 32 * WARPS, kClusterSize = 1;

  static __device__ void refill(Smem& s, const CUtensorMap* map_a, const CUtensorMap* map_b, int slice, int m0, int n0) {
    const int slot = slice % STAGES;
    fill_slot(s.stage[slot], &s.full[slot], map_a, map_b, m0, n0, slice);
  }

  static __device__ __forceinline__ void run(const Problem& p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const CUtensorMap& /*map_c*/, bool /*c_by_tma*/) {
    Smem& s = aligned_smem<Smem>();
    const int tid = threadIdx.x, lane = tid % 32;
    const int tiles_n = static_cast<int>((p.n + BN - 1) / BN);
    const int m0 = static_cast<int>(blockIdx.x / tiles_n) * BM, n0 = static_cast<int>(blockIdx.x % tiles_n) * BN;
    const int slices = static_cast<int>((p.k + BK - 1) / BK);

    if (tid == 0) {
      for (int i = 0; i < STAGES; ++i) mbar_init(&s.full[i], 1), mbar_init(&s.empty[i], WARPS);
      fence_barrier_init();
      for (int i = 0; i < STAGES && i < slices; ++i) refill(s, &map_a, &map_b, i, m0, n0);
    }
    __syncthreads();

    typename Mma::Reg acc[BM / 64][Mma::kRegs];  // rows 64h .. 64h + 63 of the tile
#pragma unroll
    for (int h = 0; h < BM / 64; ++h) zero_accumulators(acc[h]);
    for (int kt = 0; kt < slices; ++kt) {
      const int slot = kt % STAGES;
      mbar_wait(&s.full[slot], (kt / STAGES) & 1);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const std::uint64_t b = TileB::desc(s.stage[slot].b, 0, kk);
#pragma unroll
        for (int h = 0; h < BM / 64; ++h)
          Mma::template mma<TileA::kTranspose, TileB::kTranspose>(acc[h], TileA::desc(s.stage[slot].a, 64 * h, kk), b);
      }
      wgmma_commit();
      wgmma_wait<1>();  // slice kt - 1 is done: its slot can be refilled
      if (kt > 0) {
        const int done = kt - 1, done_slot = done % STAGES;
        if (lane == 0) mbar_arrive(&s.empty[done_slot]);
        if (tid == 0 && done + STAGES < slices) {
          mbar_wait(&s.empty[done_slot], (done / STAGES) & 1);  // every warp is done with the slot
          refill(s, &map_a, &map_b, done + STAGES, m0, n0);
        }
      }
    }
    wgmma_wait<0>();
#pragma unroll
    for (int h = 0; h < BM / 64; ++h) {
      fence_accumulators(acc[h]);
      store_accumulators<BN>(p, m0 + 64 * h, n0, acc[h]);
    }
  }
};

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  dim3 grid;
  if (Status s = tile_grid<BM, BN>(p, &grid, message); s != Status::Success) return s;
  return launch_ladder<Kernel>(p, TileShape{BM, BN}, grid.x, stream, message);
}

}  // namespace sm90_wgmma_tma

const KernelEntry& entry_sm90_wgmma_tma() {
  static const KernelEntry e{{"sm90.wgmma_tma", "sm90", 1,
                              "TMA tile loads into an mbarrier ring, wgmma from shared memory (1 warpgroup, 128x128)",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma::launch, &sm90::supports};
  return e;
}

}  // namespace hgemm::detail
