// SPDX-License-Identifier: Apache-2.0
// 01_naive.cu — cuda.naive
// The textbook kernel: one thread per element of C, a K-long dot product read straight from
// global memory. Nothing is reused: every A and B element is fetched N and M times (through the
// caches), and each multiply-add needs two loads. Toy-HGEMM report §3. This is the ladder's
// baseline.
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_naive {

constexpr int BM = 32, BN = 32;  // a 32×32 block of threads, one C element each

template <Op OA, Op OB, typename Acc>
__global__ void __launch_bounds__(BM * BN) naive_kernel(Problem p) {
  const TileOrigin tile = tile_origin<BM, BN>(p.n);
  const std::int64_t row = tile.row + threadIdx.y, col = tile.col + threadIdx.x;
  if (row >= p.m || col >= p.n) return;  // no barrier in this kernel, so leaving early is safe
  Acc sum = acc_zero<Acc>();
  for (std::int64_t k = 0; k < p.k; ++k)
    sum = mul_add(p.a[op_offset<OA>(row, k, p.lda)], p.b[op_offset<OB>(k, col, p.ldb)], sum);
  store_c<1>(p, row, col, &sum);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto oa, auto ob, auto acc) {
    return launch_tiles<BM, BN>(naive_kernel<decltype(oa)::value, decltype(ob)::value, typename decltype(acc)::type>, p,
                                dim3(BN, BM), stream, message);
  });
}

}  // namespace cuda_naive

const KernelEntry& entry_cuda_naive() {
  static const KernelEntry e{{"cuda.naive", "cuda", 1, "one thread per C element, operands read from global memory",
                              80, 0, kAllOps, kBothAccums, 1, false},
                             &cuda_naive::launch};
  return e;
}

}  // namespace hgemm::detail
