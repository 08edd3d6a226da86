// SPDX-License-Identifier: Apache-2.0
// 02_m16n16k16_mma4x2_warp2x4.cu — wmma.m16n16k16_mma4x2_warp2x4
// Adds over 01_m16n16k16_naive: block and warp tiling, the Toy-HGEMM report's lesson moved to
// tensor cores. A block of 8 warps (2 × 4) owns a 128×128 tile of C; each warp owns 64×32 of it, a
// 4 × 2 grid of 16×16 wmma tiles whose accumulators stay in registers for the whole K loop. Per
// 32-deep slice the block stages op(A) 128×32 and op(B) 32×128 in shared memory once, and each A
// fragment is reused by 2 wmma tiles and each B fragment by 4. Shared-memory rows are padded by 8
// halves (16 bytes) so that the fragment loads of neighbouring rows start in different banks.
#include <mma.h>

#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace wmma_m16n16k16_mma4x2_warp2x4 {

using namespace nvcuda;
constexpr int BM = 128, BN = 128, BK = 32, W = 16;
constexpr int WARPS_M = 2, WARPS_N = 4, TILES_M = 4, TILES_N = 2;  // warp grid, wmma tiles per warp
constexpr int THREADS = 32 * WARPS_M * WARPS_N;
constexpr int LDA_S = BK + 8, LDB_S = BN + 8;

template <Op OA, Op OB, typename Acc>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(32) __half s_a[BM * LDA_S];
  __shared__ alignas(32) __half s_b[BK * LDB_S];
  __shared__ alignas(32) Acc s_c[WARPS_M * WARPS_N][W * W];  // one 16×16 staging tile per warp
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const TileOrigin tile = tile_origin<BM, BN>(p.n);

  wmma::fragment<wmma::accumulator, W, W, W, Acc> acc[TILES_M][TILES_N];
#pragma unroll
  for (int i = 0; i < TILES_M; ++i)
#pragma unroll
    for (int j = 0; j < TILES_N; ++j) wmma::fill_fragment(acc[i][j], acc_zero<Acc>());

  for (std::int64_t k0 = 0; k0 < p.k; k0 += BK) {
    stage_tile<OA, BM, BK, LDA_S, THREADS>(s_a, p.a, p.lda, p.m, p.k, tile.row, k0, tid);
    stage_tile<OB, BK, BN, LDB_S, THREADS>(s_b, p.b, p.ldb, p.k, p.n, k0, tile.col, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += W) {
      wmma::fragment<wmma::matrix_a, W, W, W, __half, wmma::row_major> a[TILES_M];
      wmma::fragment<wmma::matrix_b, W, W, W, __half, wmma::row_major> b[TILES_N];
#pragma unroll
      for (int i = 0; i < TILES_M; ++i)
        wmma::load_matrix_sync(a[i], s_a + (wm * 64 + i * W) * LDA_S + kk, LDA_S);
#pragma unroll
      for (int j = 0; j < TILES_N; ++j)
        wmma::load_matrix_sync(b[j], s_b + kk * LDB_S + wn * 32 + j * W, LDB_S);
#pragma unroll
      for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < TILES_N; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Each accumulator tile goes through the warp's 16×16 staging buffer to the common epilogue.
  const int r = lane / 2, c = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < TILES_M; ++i)
#pragma unroll
    for (int j = 0; j < TILES_N; ++j) {
      wmma::store_matrix_sync(s_c[warp], acc[i][j], W, wmma::mem_row_major);
      __syncwarp();
      store_c<8>(p, tile.row + wm * 64 + i * W + r, tile.col + wn * 32 + j * W + c, &s_c[warp][r * W + c]);
      __syncwarp();
    }
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto oa, auto ob, auto acc) {
    return launch_tiles<BM, BN>(kernel<decltype(oa)::value, decltype(ob)::value, typename decltype(acc)::type>, p,
                                THREADS, stream, message);
  });
}

}  // namespace wmma_m16n16k16_mma4x2_warp2x4

const KernelEntry& entry_wmma_m16n16k16_mma4x2_warp2x4() {
  static const KernelEntry e{{"wmma.m16n16k16_mma4x2_warp2x4", "wmma", 2,
                              "128x128 block tile, 8 warps of 64x32 (4x2 wmma tiles), padded shared memory",
                              80, 0, kAllOps, kBothAccums, 1, false},
                             &wmma_m16n16k16_mma4x2_warp2x4::launch};
  return e;
}

}  // namespace hgemm::detail
