// SPDX-License-Identifier: Apache-2.0
// 06_t8x8_f16x8_pack_bcf.cu — cuda.t8x8_f16x8_pack_bcf
// Adds over 05_t8x8_f16x4_bcf: padding and 128-bit fragments. Each row of s_a and s_b gets
// OFFSET = 8 extra halves (16 bytes), so rows of the transposed A that are 4 apart no longer
// start in the same bank and the scalar transposing stores stop colliding (Toy-HGEMM report
// §7.5–7.6). The thread tile is contiguous again (rows ty·8.., columns tx·8..) and each thread
// reads it per k as one 128-bit (f16x8) load of A and one of B; C rows leave as 128-bit stores.
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_f16x8_pack_bcf {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, OFFSET = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int LDA_S = BM + OFFSET, LDB_S = BN + OFFSET;  // padded shared row lengths

// Shared-memory index math (in halves): s_a[BK][BM + OFFSET] (transposed), s_b[BK][BN + OFFSET].
struct Smem {
  // Loading: thread tid brings A(row tid/2, k 4·(tid%2)..+3) and B(k tid/32, col 4·(tid%32)..+3).
  __host__ __device__ static constexpr int a_row(int tid) { return tid / 2; }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2) * 4; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / 32; }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % 32) * 4; }
  __host__ __device__ static constexpr int a_store(int tid, int i) { return (a_k(tid) + i) * LDA_S + a_row(tid); }
  __host__ __device__ static constexpr int b_store(int tid) { return b_k(tid) * LDB_S + b_col(tid); }
  // Computing: 8 halves of A from row ty·TM, 8 of B from column tx·TN, at each k.
  __host__ __device__ static constexpr int a_read(int ty, int k) { return k * LDA_S + ty * TM; }
  __host__ __device__ static constexpr int b_read(int tx, int k) { return k * LDB_S + tx * TN; }
};

}  // namespace hgemm::detail::cuda_t8x8_f16x8_pack_bcf

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_f16x8_pack_bcf {

using Split = TileSplit<BM, BN, BK, 4, 4>;

template <typename Acc, Edges E>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[BK * LDA_S], s_b[BK * LDB_S];
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
      const Halves<TM> r_a = ld_vec<TM>(&s_a[Smem::a_read(ty, k)]);
      const Halves<TN> r_b = ld_vec<TN>(&s_b[Smem::b_read(tx, k)]);
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = mul_add(r_a.h[m], r_b.h[n], acc[m][n]);
    }
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

}  // namespace cuda_t8x8_f16x8_pack_bcf

const KernelEntry& entry_cuda_t8x8_f16x8_pack_bcf() {
  static const KernelEntry e{{"cuda.t8x8_f16x8_pack_bcf", "cuda", 6,
                              "padded shared rows (OFFSET = 8), 128-bit fragment reads", 80, 0, kOpNN, kBothAccums,
                              1, false},
                             &cuda_t8x8_f16x8_pack_bcf::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
