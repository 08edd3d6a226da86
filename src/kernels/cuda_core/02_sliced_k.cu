// SPDX-License-Identifier: Apache-2.0
// 02_sliced_k.cu — cuda.sliced_k
// Adds over 01_naive: block tiling. The 32×32 block walks K in slices of 32; each slice of A
// (32×32) and B (32×32) is brought into shared memory once, each thread fetching one element of
// each, and then read 32 times from there. Global traffic drops by the tile width (32×), but each
// multiply-add still needs two shared-memory loads, and there are two barriers per slice.
// Toy-HGEMM report §4. Ragged edges: out-of-range elements are loaded as zero and every thread
// reaches every barrier (the Toy-HGEMM report's kernel returns early on edges, before
// __syncthreads()).
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_sliced_k {

constexpr int BM = 32, BN = 32, BK = 32;

// Shared-memory index math (in halves): s_a[BM][BK], s_b[BK][BN], row-major. Thread (ty, tx)
// stores A(ty, tx) and B(ty, tx) of the slice, then reads row ty of s_a and column tx of s_b.
struct Smem {
  __host__ __device__ static constexpr int a_store(int ty, int tx) { return ty * BK + tx; }
  __host__ __device__ static constexpr int b_store(int ty, int tx) { return ty * BN + tx; }
  __host__ __device__ static constexpr int a_read(int ty, int k) { return ty * BK + k; }
  __host__ __device__ static constexpr int b_read(int tx, int k) { return k * BN + tx; }
};

}  // namespace hgemm::detail::cuda_sliced_k

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_sliced_k {

template <Op OA, Op OB, typename Acc>
__global__ void __launch_bounds__(BM * BN) sliced_k_kernel(Problem p) {
  __shared__ __half s_a[BM * BK], s_b[BK * BN];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const TileOrigin tile = tile_origin<BM, BN>(p.n);
  const std::int64_t row = tile.row + ty, col = tile.col + tx;

  Acc sum = acc_zero<Acc>();
  for (std::int64_t k0 = 0; k0 < p.k; k0 += BK) {
    s_a[Smem::a_store(ty, tx)] = load_op_element<OA>(p.a, p.lda, p.m, p.k, row, k0 + tx);
    s_b[Smem::b_store(ty, tx)] = load_op_element<OB>(p.b, p.ldb, p.k, p.n, k0 + ty, col);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) sum = mul_add(s_a[Smem::a_read(ty, k)], s_b[Smem::b_read(tx, k)], sum);
    __syncthreads();
  }
  if (col < p.n) store_c<1>(p, row, col, &sum);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto oa, auto ob, auto acc) {
    return launch_tiles<BM, BN>(sliced_k_kernel<decltype(oa)::value, decltype(ob)::value, typename decltype(acc)::type>, p,
                                dim3(BN, BM), stream, message);
  });
}

}  // namespace cuda_sliced_k

const KernelEntry& entry_cuda_sliced_k() {
  static const KernelEntry e{{"cuda.sliced_k", "cuda", 2, "32x32 block tiles of A and B staged in shared memory",
                              80, 0, kAllOps, kBothAccums, 1, false},
                             &cuda_sliced_k::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
