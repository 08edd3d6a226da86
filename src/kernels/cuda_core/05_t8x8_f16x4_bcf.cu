// SPDX-License-Identifier: Apache-2.0
// 05_t8x8_f16x4_bcf.cu — cuda.t8x8_f16x4_bcf
// Adds over 04_t8x8_f16x4_pack: A is stored transposed in shared memory, s_a[BK][BM], so the
// values of A that a thread needs at one k lie side by side and come in as vectors, like B's.
// Each thread's 8×8 tile is split into four 4×4 quadrants (rows ty·4 and 64 + ty·4, columns
// tx·4 and 64 + tx·4): per k it reads two 64-bit (f16x4) pieces of A and two of B, and the 16
// threads of a half-warp read 128 consecutive bytes of s_b — no bank conflict (Toy-HGEMM report
// §7.1–7.3). The transposing store of A is scalar, and its rows 256 bytes apart share banks
// (Toy-HGEMM report §7.4); the next rung pads them.
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_f16x4_bcf {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256

// Shared-memory index math (in halves): s_a[BK][BM] (transposed), s_b[BK][BN].
struct Smem {
  // Loading: thread tid brings A(row tid/2, k 4·(tid%2)..+3) and B(k tid/32, col 4·(tid%32)..+3).
  __host__ __device__ static constexpr int a_row(int tid) { return tid / 2; }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2) * 4; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / 32; }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % 32) * 4; }
  __host__ __device__ static constexpr int a_store(int tid, int i) { return (a_k(tid) + i) * BM + a_row(tid); }
  __host__ __device__ static constexpr int b_store(int tid) { return b_k(tid) * BN + b_col(tid); }
  // Computing: 4 halves of A at rows q·BM/2 + ty·4, 4 of B at columns q·BN/2 + tx·4 (q = 0, 1).
  __host__ __device__ static constexpr int a_read(int ty, int q, int k) { return k * BM + q * (BM / 2) + ty * 4; }
  __host__ __device__ static constexpr int b_read(int tx, int q, int k) { return k * BN + q * (BN / 2) + tx * 4; }
};

}  // namespace hgemm::detail::cuda_t8x8_f16x4_bcf

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_f16x4_bcf {

using Split = TileSplit<BM, BN, BK, 4, 4>;

template <typename Acc, Edges E>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[BK * BM], s_b[BK * BN];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = Split::this_tile<E>(p);
  const std::int64_t a_row = tile.row + Smem::a_row(tid), b_col = tile.col + Smem::b_col(tid);

  Acc acc[TM][TN];
  zero_fill(acc);
  for (std::int64_t k0 = 0; k0 < p.k; k0 += BK) {
    const Halves<4> a = load_row_segment<4, E>(p.a, p.lda, p.m, p.k, a_row, k0 + Smem::a_k(tid));
#pragma unroll
    for (int i = 0; i < 4; ++i) s_a[Smem::a_store(tid, i)] = a.h[i];
    st_vec<4>(&s_b[Smem::b_store(tid)], load_row_segment<4, E>(p.b, p.ldb, p.k, p.n, k0 + Smem::b_k(tid), b_col));
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      __half r_a[TM], r_b[TN];
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        st_vec<4>(&r_a[4 * q], ld_vec<4>(&s_a[Smem::a_read(ty, q, k)]));
        st_vec<4>(&r_b[4 * q], ld_vec<4>(&s_b[Smem::b_read(tx, q, k)]));
      }
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = mul_add(r_a[m], r_b[n], acc[m][n]);
    }
    __syncthreads();
  }
  // acc[m][n]: row (m/4)·BM/2 + ty·4 + m%4, column (n/4)·BN/2 + tx·4 + n%4.
#pragma unroll
  for (int m = 0; m < TM; ++m) {
    const std::int64_t row = tile.row + (m / 4) * (BM / 2) + ty * 4 + m % 4;
#pragma unroll
    for (int q = 0; q < 2; ++q) store_c<4>(p, row, tile.col + q * (BN / 2) + tx * 4, &acc[m][4 * q]);
  }
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return launch_split_tiles<Split>(p, THREADS, stream, message, [](auto acc, auto edges) {
    return kernel<typename decltype(acc)::type, decltype(edges)::value>;
  });
}

}  // namespace cuda_t8x8_f16x4_bcf

const KernelEntry& entry_cuda_t8x8_f16x4_bcf() {
  static const KernelEntry e{{"cuda.t8x8_f16x4_bcf", "cuda", 5,
                              "A transposed in shared memory, 64-bit fragment reads of A and B", 80, 0, kOpNN,
                              kBothAccums, 1, false},
                             &cuda_t8x8_f16x4_bcf::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
