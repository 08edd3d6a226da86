// SPDX-License-Identifier: Apache-2.0
// 03_t8x8_f16x4.cu — cuda.t8x8_f16x4
// Adds over 02_sliced_k: thread tiling. A block of 256 threads owns a 128×128 tile of C and each
// thread an 8×8 sub-tile held in registers, so one value of A (or B) read from shared memory
// feeds 8 multiply-adds instead of 1: 64 FMAs per 16 shared loads per k (Toy-HGEMM report §5.2). K
// advances in slices of BK = 8; each thread brings 4 halves of A and 4 of B per slice, as two half2
// (f16x4). Toy-HGEMM report §5. The s_a[BM][BK] layout makes a warp's reads of A collide in
// shared-memory banks (Toy-HGEMM report §6); the next rungs fix that.
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_f16x4 {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256

// Shared-memory index math (in halves): s_a[BM][BK], s_b[BK][BN], both row-major.
struct Smem {
  // Loading: thread tid brings A(row tid/2, k 4·(tid%2)..+3) and B(k tid/32, col 4·(tid%32)..+3).
  __host__ __device__ static constexpr int a_row(int tid) { return tid / 2; }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2) * 4; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / 32; }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % 32) * 4; }
  __host__ __device__ static constexpr int a_store(int tid, int h) { return a_row(tid) * BK + a_k(tid) + h; }
  __host__ __device__ static constexpr int b_store(int tid, int h) { return b_k(tid) * BN + b_col(tid) + h; }
  // Computing: thread (ty, tx) reads A(ty·TM + m, k) and B(k, tx·TN + n), one half at a time.
  __host__ __device__ static constexpr int a_read(int ty, int m, int k) { return (ty * TM + m) * BK + k; }
  __host__ __device__ static constexpr int b_read(int tx, int n, int k) { return k * BN + tx * TN + n; }
};

}  // namespace hgemm::detail::cuda_t8x8_f16x4

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_f16x4 {

using Split = TileSplit<BM, BN, BK, 2, 2>;

template <typename Acc, Edges E>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[BM * BK], s_b[BK * BN];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = Split::this_tile<E>(p);
  const std::int64_t a_row = tile.row + Smem::a_row(tid), b_col = tile.col + Smem::b_col(tid);

  Acc acc[TM][TN];
  zero_fill(acc);
  for (std::int64_t k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
    for (int h = 0; h < 4; h += 2) {
      st_vec<2>(&s_a[Smem::a_store(tid, h)],
                load_row_segment<2, E>(p.a, p.lda, p.m, p.k, a_row, k0 + Smem::a_k(tid) + h));
      st_vec<2>(&s_b[Smem::b_store(tid, h)],
                load_row_segment<2, E>(p.b, p.ldb, p.k, p.n, k0 + Smem::b_k(tid), b_col + h));
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k)
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n)
          acc[m][n] = mul_add(s_a[Smem::a_read(ty, m, k)], s_b[Smem::b_read(tx, n, k)], acc[m][n]);
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; n += 2) store_c<2>(p, tile.row + ty * TM + m, tile.col + tx * TN + n, &acc[m][n]);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return launch_split_tiles<Split>(p, THREADS, stream, message, [](auto acc, auto edges) {
    return kernel<typename decltype(acc)::type, decltype(edges)::value>;
  });
}

}  // namespace cuda_t8x8_f16x4

const KernelEntry& entry_cuda_t8x8_f16x4() {
  static const KernelEntry e{{"cuda.t8x8_f16x4", "cuda", 3,
                              "128x128 block tile, 8x8 register tile per thread, half2 global loads", 80, 0,
                              kOpNN, kBothAccums, 1, false},
                             &cuda_t8x8_f16x4::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
