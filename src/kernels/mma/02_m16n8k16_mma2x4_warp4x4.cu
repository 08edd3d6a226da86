// SPDX-License-Identifier: Apache-2.0
// 02_m16n8k16_mma2x4_warp4x4.cu — mma.m16n8k16_mma2x4_warp4x4
// Adds over 01_m16n8k16_naive: block and warp tiling. A block of 16 warps (4 × 4) owns a 128×128
// tile of C; each warp owns 32×32 of it, 2 × 4 m16n8 tiles whose accumulators stay in registers
// for the whole K loop. Per 32-deep slice the block stages op(A) 128×32 and op(B) 32×128 in shared
// memory with 16-byte loads (op N), rows padded by 8 halves so that the eight row addresses of
// an ldmatrix land in different bank groups; each warp then loads 2 A fragments and 4 B
// fragments per 16-deep step and issues 8 mma.sync, every A fragment used 4 times and every B
// fragment twice.
#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace mma_m16n8k16_mma2x4_warp4x4 {

constexpr int BM = 128, BN = 128, BK = 32;
constexpr int WARPS_M = 4, WARPS_N = 4, MMA_M = 2, MMA_N = 4;  // warp grid, m16n8 tiles per warp
constexpr int THREADS = 32 * WARPS_M * WARPS_N, LDA_S = BK + 8, LDB_S = BN + 8;

template <Op OA, Op OB, typename Acc>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[BM * LDA_S];
  __shared__ alignas(16) __half s_b[BK * LDB_S];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const TileOrigin tile = tile_origin<BM, BN>(p.n);

  MmaAcc<Acc> acc[MMA_M][MMA_N];
  for (std::int64_t k0 = 0; k0 < p.k; k0 += BK) {
    stage_tile<OA, BM, BK, LDA_S, THREADS>(s_a, p.a, p.lda, p.m, p.k, tile.row, k0, tid);
    stage_tile<OB, BK, BN, LDB_S, THREADS>(s_b, p.b, p.ldb, p.k, p.n, k0, tile.col, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      std::uint32_t a[MMA_M][4], b[MMA_N][2];
#pragma unroll
      for (int i = 0; i < MMA_M; ++i)
        ldmatrix_x4(a[i], s_a + (wm * 32 + i * 16 + lane % 16) * LDA_S + kk + (lane / 16) * 8);
#pragma unroll
      for (int j = 0; j < MMA_N; ++j) ldmatrix_x2_trans(b[j], s_b + (kk + lane % 16) * LDB_S + wn * 32 + j * 8);
#pragma unroll
      for (int i = 0; i < MMA_M; ++i)
#pragma unroll
        for (int j = 0; j < MMA_N; ++j) mma_m16n8k16(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }
  store_mma_tiles(p, tile.row + wm * 32, tile.col + wn * 32, acc, lane);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto oa, auto ob, auto acc) {
    return launch_tiles<BM, BN>(kernel<decltype(oa)::value, decltype(ob)::value, typename decltype(acc)::type>, p,
                                THREADS, stream, message);
  });
}

}  // namespace mma_m16n8k16_mma2x4_warp4x4

const KernelEntry& entry_mma_m16n8k16_mma2x4_warp4x4() {
  static const KernelEntry e{{"mma.m16n8k16_mma2x4_warp4x4", "mma", 2,
                              "128x128 block tile, 16 warps of 32x32 (2x4 m16n8 tiles), ldmatrix from padded rows",
                              80, 0, kAllOps, kBothAccums, 1, false},
                             &mma_m16n8k16_mma2x4_warp4x4::launch};
  return e;
}

}  // namespace hgemm::detail
