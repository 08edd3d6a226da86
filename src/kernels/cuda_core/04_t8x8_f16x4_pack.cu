// SPDX-License-Identifier: Apache-2.0
// 04_t8x8_f16x4_pack.cu — cuda.t8x8_f16x4_pack
// Adds over 03_t8x8_f16x4: packed memory instructions. Each thread's 4 halves of A and of B
// travel as one 64-bit load and one 64-bit shared store (LDST64BITS) instead of two half2, and
// each row of its 8×8 C tile leaves as one 128-bit store instead of four half2: fewer load/store
// instructions for the same bytes. Toy-HGEMM report §2 ("LDST64BITS pack"). Shared-memory layout
// unchanged.
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_f16x4_pack {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256

// Shared-memory index math (in halves): s_a[BM][BK], s_b[BK][BN], both row-major.
struct Smem {
  // Loading: thread tid brings A(row tid/2, k 4·(tid%2)..+3) and B(k tid/32, col 4·(tid%32)..+3).
  __host__ __device__ static constexpr int a_row(int tid) { return tid / 2; }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2) * 4; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / 32; }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % 32) * 4; }
  __host__ __device__ static constexpr int a_store(int tid) { return a_row(tid) * BK + a_k(tid); }
  __host__ __device__ static constexpr int b_store(int tid) { return b_k(tid) * BN + b_col(tid); }
  // Computing: thread (ty, tx) reads A(ty·TM + m, k) and B(k, tx·TN + n), one half at a time.
  __host__ __device__ static constexpr int a_read(int ty, int m, int k) { return (ty * TM + m) * BK + k; }
  __host__ __device__ static constexpr int b_read(int tx, int n, int k) { return k * BN + tx * TN + n; }
};

}  // namespace hgemm::detail::cuda_t8x8_f16x4_pack

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_f16x4_pack {

using Split = TileSplit<BM, BN, BK, 4, 4>;

template <typename Acc, Edges E>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[BM * BK], s_b[BK * BN];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = Split::this_tile<E>(p);
  const std::int64_t a_row = tile.row + Smem::a_row(tid), b_col = tile.col + Smem::b_col(tid);

  Acc acc[TM][TN];
  zero_fill(acc);
  for (std::int64_t k0 = 0; k0 < p.k; k0 += BK) {
    st_vec<4>(&s_a[Smem::a_store(tid)], load_row_segment<4, E>(p.a, p.lda, p.m, p.k, a_row, k0 + Smem::a_k(tid)));
    st_vec<4>(&s_b[Smem::b_store(tid)], load_row_segment<4, E>(p.b, p.ldb, p.k, p.n, k0 + Smem::b_k(tid), b_col));
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
  for (int m = 0; m < TM; ++m) store_c<TN>(p, tile.row + ty * TM + m, tile.col + tx * TN, acc[m]);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return launch_split_tiles<Split>(p, THREADS, stream, message, [](auto acc, auto edges) {
    return kernel<typename decltype(acc)::type, decltype(edges)::value>;
  });
}

}  // namespace cuda_t8x8_f16x4_pack

const KernelEntry& entry_cuda_t8x8_f16x4_pack() {
  static const KernelEntry e{{"cuda.t8x8_f16x4_pack", "cuda", 4,
                              "64-bit global loads and shared stores, 128-bit C stores", 80, 0, kOpNN, kBothAccums,
                              1, false},
                             &cuda_t8x8_f16x4_pack::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
