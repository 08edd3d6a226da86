// SPDX-License-Identifier: Apache-2.0
// 01_m16n16k16_naive.cu — wmma.m16n16k16_naive
// The first tensor-core rung: the CUDA-core ladder's multiply-adds replaced by the tensor cores,
// through the portable nvcuda::wmma API. One warp owns one 16×16 tile of C; per 16-deep slice of K
// it stages the 16×16 pieces of op(A) and op(B) in shared memory (zeros past the edges, so any M,
// N, K works), loads them as fragments and issues one mma_sync (m16n16k16). Everything the
// Toy-HGEMM report's kernels learned about reuse is thrown away again — each warp reads its A and B
// straight from global memory — so this rung shows what the tensor cores give on their own.
#include <mma.h>

#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace wmma_m16n16k16_naive {

using namespace nvcuda;
constexpr int T = 16, LDS = T + 8;  // tile edge; padded shared-memory rows (16-byte multiple)

template <Op OA, Op OB, typename Acc>
__global__ void __launch_bounds__(32) kernel(Problem p) {
  __shared__ alignas(32) __half s_a[T * LDS], s_b[T * LDS];
  __shared__ alignas(32) Acc s_c[T * T];
  const int lane = threadIdx.x;
  const TileOrigin tile = tile_origin<T, T>(p.n);
  const std::int64_t a_rows = p.m, a_cols = p.k;

  wmma::fragment<wmma::accumulator, T, T, T, Acc> acc;
  wmma::fill_fragment(acc, acc_zero<Acc>());
  for (std::int64_t k0 = 0; k0 < p.k; k0 += T) {
    stage_tile<OA, T, T, LDS, 32>(s_a, p.a, p.lda, a_rows, a_cols, tile.row, k0, lane);
    stage_tile<OB, T, T, LDS, 32>(s_b, p.b, p.ldb, p.k, p.n, k0, tile.col, lane);
    __syncwarp();
    wmma::fragment<wmma::matrix_a, T, T, T, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, T, T, T, __half, wmma::row_major> b;
    wmma::load_matrix_sync(a, s_a, LDS);
    wmma::load_matrix_sync(b, s_b, LDS);
    wmma::mma_sync(acc, a, b, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(s_c, acc, T, wmma::mem_row_major);
  __syncwarp();
  const int r = lane / 2, c = (lane % 2) * 8;  // 8 consecutive elements per lane
  store_c<8>(p, tile.row + r, tile.col + c, &s_c[r * T + c]);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto oa, auto ob, auto acc) {
    return launch_tiles<T, T>(kernel<decltype(oa)::value, decltype(ob)::value, typename decltype(acc)::type>, p,
                                32, stream, message);
  });
}

}  // namespace wmma_m16n16k16_naive

const KernelEntry& entry_wmma_m16n16k16_naive() {
  static const KernelEntry e{{"wmma.m16n16k16_naive", "wmma", 1,
                              "tensor cores through nvcuda::wmma: one warp per 16x16 tile, operands staged per slice",
                              80, 0, kAllOps, kBothAccums, 1, false},
                             &wmma_m16n16k16_naive::launch};
  return e;
}

}  // namespace hgemm::detail
