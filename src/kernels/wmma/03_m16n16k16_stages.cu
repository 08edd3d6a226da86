// SPDX-License-Identifier: Apache-2.0
// 03_m16n16k16_stages.cu — wmma.m16n16k16_stages
// Adds over 02_m16n16k16_mma4x2_warp2x4: loads that overlap the math. Tiles move global → shared
// with cp.async into a ring of STAGES = 3 slices in dynamic shared memory: while slice kt is
// multiplied, slices kt+1 and kt+2 are in flight, and one barrier per slice hands a consumed slot
// back. B is read in either storage: K×N (op N, row_major fragments) or N×K (op T, col_major
// fragments, no transpose needed). cp.async copies 16 aligned bytes, so the entry needs
// 16-byte-aligned A, B, C and leading dimensions that are multiples of 8 (other problems get
// Status::Misaligned); ragged M, N, K are zero-filled by the copies.
#include <mma.h>

#include <type_traits>

#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace wmma_m16n16k16_stages {

using namespace nvcuda;
constexpr int BM = 128, BN = 128, BK = 32, W = 16, STAGES = 3;
constexpr int WARPS_M = 2, WARPS_N = 4, TILES_M = 4, TILES_N = 2;
constexpr int THREADS = 32 * WARPS_M * WARPS_N, PAD = 8;

template <Op OB>
struct Layout {
  static constexpr int A_LD = BK + PAD, A_SIZE = BM * A_LD;
  static constexpr int B_LD = OB == Op::N ? BN + PAD : BK + PAD;  // [BK][BN] or [BN][BK]
  static constexpr int B_SIZE = (OB == Op::N ? BK : BN) * B_LD;
  static constexpr int STAGE = A_SIZE + B_SIZE;
  static constexpr int C_STAGE = WARPS_M * WARPS_N * W * W;  // one 16×16 staging tile per warp (floats)
  static constexpr int SMEM_BYTES = STAGES * STAGE * 2 + C_STAGE * 4;
};

template <Op OB, typename Acc>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  using L = Layout<OB>;
  using BLayout = std::conditional_t<OB == Op::N, wmma::row_major, wmma::col_major>;
  extern __shared__ __align__(128) __half smem[];
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

  wmma::fragment<wmma::accumulator, W, W, W, Acc> acc[TILES_M][TILES_N];
#pragma unroll
  for (int i = 0; i < TILES_M; ++i)
#pragma unroll
    for (int j = 0; j < TILES_N; ++j) wmma::fill_fragment(acc[i][j], acc_zero<Acc>());
  run_cp_async_ring<STAGES>(slices, load_slice, [&](std::int64_t kt) {
    const __half* a_s = smem + (kt % STAGES) * L::STAGE;
    const __half* b_s = a_s + L::A_SIZE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += W) {
      wmma::fragment<wmma::matrix_a, W, W, W, __half, wmma::row_major> a[TILES_M];
      wmma::fragment<wmma::matrix_b, W, W, W, __half, BLayout> b[TILES_N];
#pragma unroll
      for (int i = 0; i < TILES_M; ++i) wmma::load_matrix_sync(a[i], a_s + (wm * 64 + i * W) * L::A_LD + kk, L::A_LD);
#pragma unroll
      for (int j = 0; j < TILES_N; ++j) {
        const int n = wn * 32 + j * W;
        wmma::load_matrix_sync(b[j], OB == Op::N ? b_s + kk * L::B_LD + n : b_s + n * L::B_LD + kk, L::B_LD);
      }
#pragma unroll
      for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < TILES_N; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  });
  Acc* s_c = reinterpret_cast<Acc*>(reinterpret_cast<float*>(smem + STAGES * L::STAGE) + warp * W * W);
  const int r = lane / 2, c = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < TILES_M; ++i)
#pragma unroll
    for (int j = 0; j < TILES_N; ++j) {
      wmma::store_matrix_sync(s_c, acc[i][j], W, wmma::mem_row_major);
      __syncwarp();
      store_c<8>(p, tile.row + wm * 64 + i * W + r, tile.col + wn * 32 + j * W + c, &s_c[r * W + c]);
      __syncwarp();
    }
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto, auto ob, auto acc) {
    constexpr Op OB = decltype(ob)::value;
    return launch_tiles_with_smem<BM, BN>(kernel<OB, typename decltype(acc)::type>, p, THREADS, Layout<OB>::SMEM_BYTES,
                                          stream, message);
  });
}

}  // namespace wmma_m16n16k16_stages

const KernelEntry& entry_wmma_m16n16k16_stages() {
  static const KernelEntry e{{"wmma.m16n16k16_stages", "wmma", 3,
                              "cp.async into a 3-slice ring in dynamic shared memory, B in either storage",
                              80, 0, kOpNN | kOpNT, kBothAccums, 8, false},
                             &wmma_m16n16k16_stages::launch};
  return e;
}

}  // namespace hgemm::detail
