// SPDX-License-Identifier: Apache-2.0
// 03_m16n8k16_stages.cu — mma.m16n8k16_stages
// Adds over 02_m16n8k16_mma2x4_warp4x4: loads that run while the tensor cores work. Tiles move
// global → shared with cp.async (the copy bypasses registers and the issuing warp does not wait),
// into a ring of STAGES = 3 slices: while slice kt is multiplied, slices kt+1 and kt+2 are in
// flight, and one barrier per slice hands a consumed slot back. Within a slice the fragments of
// the next 16-deep step are loaded (ldmatrix) before the current step's mma.sync are issued
// (register double buffering). 8 warps of 64×32 (4 × 4 m16n8 tiles each) instead of 16 of 32×32:
// twice the fragment reuse per ldmatrix. B is taken in either storage: K×N (op N, ldmatrix
// .trans) or N×K (op T, the layout mma's "col" operand wants, plain ldmatrix). cp.async copies
// 16 aligned bytes, so the entry needs 16-byte-aligned A, B, C and leading dimensions that are
// multiples of 8 (other problems get Status::Misaligned); ragged M, N, K are zero-filled.
#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace mma_m16n8k16_stages {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3;
constexpr int WARPS_M = 2, WARPS_N = 4, MMA_M = 4, MMA_N = 4;  // warp grid, m16n8 tiles per warp
constexpr int THREADS = 32 * WARPS_M * WARPS_N, PAD = 8;

template <Op OB>
struct Layout {
  static constexpr int A_LD = BK + PAD, A_SIZE = BM * A_LD;
  static constexpr int B_LD = OB == Op::N ? BN + PAD : BK + PAD;  // [BK][BN] or [BN][BK]
  static constexpr int B_SIZE = (OB == Op::N ? BK : BN) * B_LD;
  static constexpr int STAGE = A_SIZE + B_SIZE, SMEM_BYTES = STAGES * STAGE * 2;
};

template <Op OB, typename Acc>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  using L = Layout<OB>;
  extern __shared__ __align__(16) __half smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const TileOrigin tile = tile_origin<BM, BN>(p.n);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto copy_a = a_tile_copier<BM, BK, THREADS>(p, tile.row, tid);
  auto copy_b = b_tile_copier<OB, BK, BN, THREADS>(p, tile.col, tid);
  auto load_slice = [&](std::int64_t kt) {  // called for kt = 0, 1, 2, ... in turn
    if (kt < slices) {
      __half* a = smem + (kt % STAGES) * L::STAGE;
      copy_a.copy_and_advance(a, [](int r, int c) { return r * L::A_LD + c; });
      copy_b.copy_and_advance(a + L::A_SIZE, [](int r, int c) { return r * L::B_LD + c; });
    }
    cp_async_commit();  // an empty group past the end keeps the wait count uniform
  };

  // Fragments of one 16-deep step: A of the warp's 4 m16 rows, B of its 4 n8 columns.
  auto load_frags = [&](MmaFrags<MMA_M, MMA_N>& f, const __half* a, const __half* b, int kk) {
#pragma unroll
    for (int i = 0; i < MMA_M; ++i) ldmatrix_x4(f.a[i], a + (wm * 64 + i * 16 + lane % 16) * L::A_LD + kk + (lane / 16) * 8);
#pragma unroll
    for (int j = 0; j < MMA_N; j += 2) {
      std::uint32_t r[4];
      if constexpr (OB == Op::N)  // lanes 0-15: k rows of n-block j, lanes 16-31: of block j + 1
        ldmatrix_x4_trans(r, b + (kk + lane % 16) * L::B_LD + wn * 32 + j * 8 + (lane / 16) * 8);
      else  // rows are n: lanes 0-7 / 8-15 give k 0-7 / 8-15 of block j, lanes 16-31 the same of j + 1
        ldmatrix_x4(r, b + (wn * 32 + j * 8 + (lane / 16) * 8 + lane % 8) * L::B_LD + kk + ((lane / 8) % 2) * 8);
      f.b[j][0] = r[0], f.b[j][1] = r[1], f.b[j + 1][0] = r[2], f.b[j + 1][1] = r[3];
    }
  };

  MmaAcc<Acc> acc[MMA_M][MMA_N];
  run_cp_async_ring<STAGES>(slices, load_slice, [&](std::int64_t kt) {
    const __half* a = smem + (kt % STAGES) * L::STAGE;
    const __half* b = a + L::A_SIZE;
    mma_steps_double_buffered<BK / 16>(acc, [&](MmaFrags<MMA_M, MMA_N>& f, int kk) { load_frags(f, a, b, kk); });
  });
  store_mma_tiles(p, tile.row + wm * 64, tile.col + wn * 32, acc, lane);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto, auto ob, auto acc) {
    constexpr Op OB = decltype(ob)::value;
    return launch_tiles_with_smem<BM, BN>(kernel<OB, typename decltype(acc)::type>, p, THREADS, Layout<OB>::SMEM_BYTES,
                                          stream, message);
  });
}

}  // namespace mma_m16n8k16_stages

const KernelEntry& entry_mma_m16n8k16_stages() {
  static const KernelEntry e{{"mma.m16n8k16_stages", "mma", 3,
                              "cp.async into a 3-slice ring, fragments double-buffered in registers, 8 warps of 64x32",
                              80, 0, kOpNN | kOpNT, kBothAccums, 8, false},
                             &mma_m16n8k16_stages::launch};
  return e;
}

}  // namespace hgemm::detail
