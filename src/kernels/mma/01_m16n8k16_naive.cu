// SPDX-License-Identifier: Apache-2.0
// 01_m16n8k16_naive.cu — mma.m16n8k16_naive
// The tensor cores without the wmma wrapper: the PTX that wmma compiles to, written out. One warp
// owns one 16×8 tile of C; per 16-deep slice it stages op(A) 16×16 and op(B) 16×8 in shared
// memory (zeros past the edges), loads them into the exact register layout the instruction wants
// with ldmatrix (A as four 8×8 matrices, B as two, transposed on the way because it is stored
// k-major), and issues one mma.sync.m16n8k16. The accumulator fragment (rows lane/4 and +8,
// columns 2·(lane%4) and +1) is known, so C is written straight from registers.
#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace mma_m16n8k16_naive {

constexpr int TM = 16, TN = 8, TK = 16, LDA_S = TK + 8, LDB_S = TN + 8;

template <Op OA, Op OB, typename Acc>
__global__ void __launch_bounds__(32) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[TM * LDA_S], s_b[TK * LDB_S];
  const int lane = threadIdx.x;
  const TileOrigin tile = tile_origin<TM, TN>(p.n);
  MmaAcc<Acc> acc;
  for (std::int64_t k0 = 0; k0 < p.k; k0 += TK) {
    stage_tile<OA, TM, TK, LDA_S, 32>(s_a, p.a, p.lda, p.m, p.k, tile.row, k0, lane);
    stage_tile<OB, TK, TN, LDB_S, 32>(s_b, p.b, p.ldb, p.k, p.n, k0, tile.col, lane);
    __syncwarp();
    std::uint32_t a[4], b[2];
    ldmatrix_x4(a, s_a + (lane % 16) * LDA_S + (lane / 16) * 8);
    ldmatrix_x2_trans(b, s_b + (lane % 16) * LDB_S);
    mma_m16n8k16(acc, a, b);
    __syncwarp();
  }
  store_mma_tile(p, tile.row, tile.col, acc, lane);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto oa, auto ob, auto acc) {
    return launch_tiles<TM, TN>(kernel<decltype(oa)::value, decltype(ob)::value, typename decltype(acc)::type>, p,
                                32, stream, message);
  });
}

}  // namespace mma_m16n8k16_naive

const KernelEntry& entry_mma_m16n8k16_naive() {
  static const KernelEntry e{{"mma.m16n8k16_naive", "mma", 1,
                              "raw mma.sync.m16n8k16 with ldmatrix: one warp per 16x8 tile",
                              80, 0, kAllOps, kBothAccums, 1, false},
                             &mma_m16n8k16_naive::launch};
  return e;
}

}  // namespace hgemm::detail
