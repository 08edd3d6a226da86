// SPDX-License-Identifier: Apache-2.0
// 07_t8x8_f16x8_pack_bcf_dbuf.cu — cuda.t8x8_f16x8_pack_bcf_dbuf
// Adds over 06_t8x8_f16x8_pack_bcf: double buffering. Two copies of s_a and s_b; while the
// block computes on one, each thread's global loads of the next slice are already in flight
// into registers, and land in the other copy after the math. One barrier per slice instead of
// two: the buffer written in step t was last read in step t−1, before that step's barrier.
// Toy-HGEMM report §8, with slices 16 deep instead of 8: a load then has 512 HFMA2s of math to hide
// behind instead of 256, and each thread brings 8 halves of A and 8 of B per slice as 128-bit
// loads. With the Toy-HGEMM report's 8-deep slices this rung is slower than rung 06 (measured:
// docs/ladder.md#double-buffering).
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_f16x8_pack_bcf_dbuf {

constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8, OFFSET = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int A_PER = BM * BK / THREADS, B_PER = BK * BN / THREADS;  // 8 halves each per slice
constexpr int LDA_S = BM + OFFSET, LDB_S = BN + OFFSET;
constexpr int A_STAGE = BK * LDA_S, B_STAGE = BK * LDB_S;  // halves per buffer

// Shared-memory index math (in halves): s_a[2][BK][BM + OFFSET] (transposed), s_b[2][BK][BN + OFFSET].
struct Smem {
  __host__ __device__ static constexpr int a_row(int tid) { return tid / 2; }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2) * A_PER; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / (BN / B_PER); }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % (BN / B_PER)) * B_PER; }
  __host__ __device__ static constexpr int a_store(int buf, int tid, int i) {
    return buf * A_STAGE + (a_k(tid) + i) * LDA_S + a_row(tid);
  }
  __host__ __device__ static constexpr int b_store(int buf, int tid) { return buf * B_STAGE + b_k(tid) * LDB_S + b_col(tid); }
  __host__ __device__ static constexpr int a_read(int buf, int ty, int k) { return buf * A_STAGE + k * LDA_S + ty * TM; }
  __host__ __device__ static constexpr int b_read(int buf, int tx, int k) { return buf * B_STAGE + k * LDB_S + tx * TN; }
};

}  // namespace hgemm::detail::cuda_t8x8_f16x8_pack_bcf_dbuf

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_f16x8_pack_bcf_dbuf {

using Split = TileSplit<BM, BN, BK, A_PER, B_PER>;

template <typename Acc, Edges E>
__device__ __forceinline__ void gemm_tile(const Problem& p) {
  __shared__ alignas(16) __half s_a[2 * A_STAGE], s_b[2 * B_STAGE];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = Split::this_tile<E>(p);
  const std::int64_t a_row = tile.row + Smem::a_row(tid), b_col = tile.col + Smem::b_col(tid);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto load_a = [&](std::int64_t s) { return load_row_segment<A_PER, E>(p.a, p.lda, p.m, p.k, a_row, s * BK + Smem::a_k(tid)); };
  auto load_b = [&](std::int64_t s) { return load_row_segment<B_PER, E>(p.b, p.ldb, p.k, p.n, s * BK + Smem::b_k(tid), b_col); };
  auto stash = [&](int buf, const Halves<A_PER>& a, const Halves<B_PER>& b) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) s_a[Smem::a_store(buf, tid, i)] = a.h[i];
    st_vec<B_PER>(&s_b[Smem::b_store(buf, tid)], b);
  };

  Acc acc[TM][TN];
  zero_fill(acc);
  if (slices > 0) stash(0, load_a(0), load_b(0));
  __syncthreads();
  for (std::int64_t s = 0; s < slices; ++s) {
    const int buf = static_cast<int>(s & 1);
    // In flight during the math below. The last slice reloads itself into the free buffer, where
    // nothing reads it: no load leaves the matrix, and no branch lets the compiler sink the
    // loads below the math (as it did when the store was skipped on the last slice).
    const std::int64_t next = s + 1 < slices ? s + 1 : s;
    const Halves<A_PER> next_a = load_a(next);
    const Halves<B_PER> next_b = load_b(next);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const Halves<TM> r_a = ld_vec<TM>(&s_a[Smem::a_read(buf, ty, k)]);
      const Halves<TN> r_b = ld_vec<TN>(&s_b[Smem::b_read(buf, tx, k)]);
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = mul_add(r_a.h[m], r_b.h[n], acc[m][n]);
    }
    stash(buf ^ 1, next_a, next_b);
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m) store_c<TN>(p, tile.row + ty * TM + m, tile.col + tx * TN, acc[m]);
}

template <typename Acc>
__global__ void __launch_bounds__(THREADS) checked_kernel(Problem p) {
  gemm_tile<Acc, Edges::Checked>(p);
}
// Asking for 3 blocks per SM (f16) is what makes ptxas issue the prefetch early in the math:
// left to itself it used 70 registers and placed the loads after 507 of the 512 HFMA2s, where
// they hide nothing (docs/ladder.md).
template <typename Acc>
__global__ void __launch_bounds__(THREADS, sizeof(Acc) == 2 ? 3 : 2) interior_kernel(Problem p) {
  gemm_tile<Acc, Edges::Interior>(p);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return launch_split_tiles<Split>(p, THREADS, stream, message, [](auto acc, auto edges) {
    using Acc = typename decltype(acc)::type;
    return decltype(edges)::value == Edges::Interior ? interior_kernel<Acc> : checked_kernel<Acc>;
  });
}

}  // namespace cuda_t8x8_f16x8_pack_bcf_dbuf

const KernelEntry& entry_cuda_t8x8_f16x8_pack_bcf_dbuf() {
  static const KernelEntry e{{"cuda.t8x8_f16x8_pack_bcf_dbuf", "cuda", 7,
                              "double-buffered shared memory, register-staged prefetch, one barrier per slice", 80,
                              0, kOpNN, kBothAccums, 1, false},
                             &cuda_t8x8_f16x8_pack_bcf_dbuf::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
