// SPDX-License-Identifier: Apache-2.0
// 08_t8x8_hfma2.cu — cuda.t8x8_hfma2
// Adds over 07_t8x8_f16x8_pack_bcf_dbuf: fp16 multiply-adds that use both of the SM's pipes that
// execute them. nvcc already turns the Toy-HGEMM report's scalar __hfma into HFMA2 (two halves per
// instruction), but with A broadcast through an operand selector (HFMA2 R, a.H0_H0, b, c), and
// such HFMA2s run on the FMA pipe only, no faster than scalar HFMA. An HFMA2 on plain registers can
// also be issued to the tensor pipe (HFMA2.MMA in SASS), which is how the chip reaches its fp16
// CUDA-core peak (measured: docs/ladder.md#hfma2).
// So this rung multiplies in "dot form": each half2 holds two consecutive k, A as (a[i][k],
// a[i][k+1]) and B as (b[k][j], b[k+1][j]), and one HFMA2 adds both products of a k-pair into the
// two lanes of C[i][j]'s accumulator (even k in one lane, odd k in the other; the epilogue adds the
// lanes). No operand is broadcast, so no selector, and ptxas splits the HFMA2s evenly between the
// two pipes. Per k-pair a thread reads 8 rows of A and 8 columns of B (four 128-bit loads) for 64
// HFMA2s (the k-loop alone, shared memory to registers: docs/ladder.md#hfma2).
// On the way to shared memory A is transposed by k-pairs (4-byte stores) and B's row pairs are
// interleaved (byte permutes). Same 128×128 block tile, 8×8 thread tile and register-staged
// double buffering as rung 07, with slices 32 deep (one barrier per 1024 HFMA2s per thread; the
// 64 accumulators leave room for two blocks per SM and no deeper slice). Accumulating in half2 is
// the point, so this entry implements f16 accumulation only. This file is compiled with ptxas -O1
// (CMakeLists.txt): at -O3, with 128 registers, ptxas issues the next slice's global loads late in
// the math instead of before it; -O1 keeps them where they are written.
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_hfma2 {

constexpr int BM = 128, BN = 128, BK = 32, KP = BK / 2, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int A_CHUNK = 8;                           // halves of one row of A per 128-bit load
constexpr int A_LOADS = BM * BK / THREADS / A_CHUNK;  // per thread and slice
constexpr int A_ROWS_PER_LOAD = BM / A_LOADS;
constexpr int B_PER = 8;                              // columns of B per 128-bit load
constexpr int B_LOADS = BN * KP / THREADS / B_PER;    // row pairs per thread and slice
constexpr int B_PAIRS_PER_LOAD = KP / B_LOADS;
// Rows of s_a and s_b, in half2: 4 mod 8 words. The two threads that load a row's 32 bytes of A
// store their k-pairs 4 rows of s_a apart, 16 banks apart, so a warp's 4-byte stores (16 rows,
// two k-pairs) are conflict-free, and LDS.128 rows stay 16-byte aligned.
constexpr int LDA_S = BM + 4, LDB_S = BN + 4;
constexpr int A_STAGE = KP * LDA_S, B_STAGE = KP * LDB_S;

// Shared-memory index math, in half2: s_a[2][KP][LDA_S] holds (a[i][2q], a[i][2q+1]) at [q][i];
// s_b[2][KP][LDB_S] holds (b[2q][j], b[2q+1][j]) at [q][j].
struct Smem {
  // Thread pairs load a row's 32 bytes: threads [0, 128) k 0..15 of rows 0..63, threads
  // [128, 256) k 16..31 of the same rows; the second load adds 64 rows.
  __host__ __device__ static constexpr int a_row(int tid, int load) {
    return (tid / 2) % A_ROWS_PER_LOAD + load * A_ROWS_PER_LOAD;
  }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2 + 2 * (tid / (2 * A_ROWS_PER_LOAD))) * A_CHUNK; }
  __host__ __device__ static constexpr int b_pair(int tid, int load) { return tid / (BN / B_PER) + load * B_PAIRS_PER_LOAD; }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % (BN / B_PER)) * B_PER; }
  __host__ __device__ static constexpr int a_store(int buf, int tid, int load, int i) {
    return buf * A_STAGE + (a_k(tid) / 2 + i) * LDA_S + a_row(tid, load);
  }
  __host__ __device__ static constexpr int b_store(int buf, int tid, int load) { return buf * B_STAGE + b_pair(tid, load) * LDB_S + b_col(tid); }
  __host__ __device__ static constexpr int a_read(int buf, int ty, int q) { return buf * A_STAGE + q * LDA_S + ty * TM; }
  // A thread's 8 columns of B (and of C) are two runs of 4, half a tile apart, so that 8
  // consecutive lanes read 128 consecutive bytes (8 contiguous columns per lane: 2-way conflicts).
  __host__ __device__ static constexpr int b_read(int buf, int tx, int q, int run) {
    return buf * B_STAGE + q * LDB_S + run * (BN / 2) + tx * (TN / 2);
  }
  __host__ __device__ static constexpr int c_col(int tx, int run) { return run * (BN / 2) + tx * (TN / 2); }
};

}  // namespace hgemm::detail::cuda_t8x8_hfma2

// Everything above is the layout, shared with the bank-conflict model (src/analysis), which
// compiles it alone; everything below is the kernel.
#ifndef HGEMM_LAYOUT_ONLY
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_hfma2 {

using Split = TileSplit<BM, BN, BK, A_CHUNK, B_PER>;

/// The thread's share of an A slice: A_CHUNK consecutive k in each of A_LOADS rows.
struct APart {
  Halves<A_CHUNK> part[A_LOADS];
};

/// Rows 2q and 2q+1 of a B slice, B_PER columns each.
struct BPair {
  Halves<B_PER> even, odd;
};
struct BPart {
  BPair pair[B_LOADS];
};

/// (b[2q][j], b[2q+1][j]) for the B_PER columns j: the two rows interleaved.
__device__ __forceinline__ void interleave(const BPair& b, __half2* out) {
#pragma unroll
  for (int j = 0; j < B_PER; ++j) out[j] = __halves2half2(b.even.h[j], b.odd.h[j]);
}

/// The two lanes of a dot-form accumulator hold the even-k and odd-k sums of one element of C.
__device__ __forceinline__ float lanes_sum(__half2 acc) { return __low2float(acc) + __high2float(acc); }

template <Edges E>
__device__ __forceinline__ void gemm_tile(const Problem& p) {
  __shared__ alignas(16) __half2 s_a[2 * A_STAGE];
  __shared__ alignas(16) __half2 s_b[2 * B_STAGE];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = Split::this_tile<E>(p);
  const std::int64_t b_col = tile.col + Smem::b_col(tid);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto load_a = [&](std::int64_t s) {
    APart a;
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l)
      a.part[l] = load_row_segment<A_CHUNK, E>(p.a, p.lda, p.m, p.k, tile.row + Smem::a_row(tid, l), s * BK + Smem::a_k(tid));
    return a;
  };
  auto load_b = [&](std::int64_t s) {
    BPart b;
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      const std::int64_t k = s * BK + 2 * Smem::b_pair(tid, l);
      b.pair[l] = BPair{load_row_segment<B_PER, E>(p.b, p.ldb, p.k, p.n, k, b_col),
                        load_row_segment<B_PER, E>(p.b, p.ldb, p.k, p.n, k + 1, b_col)};
    }
    return b;
  };
  auto stash = [&](int buf, const APart& a, const BPart& b) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l)
#pragma unroll
      for (int i = 0; i < A_CHUNK / 2; ++i)
        s_a[Smem::a_store(buf, tid, l, i)] = reinterpret_cast<const __half2*>(a.part[l].h)[i];
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      alignas(16) __half2 b_pairs[B_PER];
      interleave(b.pair[l], b_pairs);
#pragma unroll
      for (int j = 0; j < B_PER; j += 4)
        *reinterpret_cast<uint4*>(&s_b[Smem::b_store(buf, tid, l) + j]) = *reinterpret_cast<const uint4*>(&b_pairs[j]);
    }
  };

  __half2 acc[TM][TN];
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) acc[m][n] = __float2half2_rn(0.f);

  if (slices > 0) stash(0, load_a(0), load_b(0));
  __syncthreads();
  for (std::int64_t s = 0; s < slices; ++s) {
    const int buf = static_cast<int>(s & 1);
    // In flight during the math below; the last slice reloads itself into the free buffer (no
    // branch for the compiler to sink the loads into, see rung 07).
    const std::int64_t next = s + 1 < slices ? s + 1 : s;
    const APart next_a = load_a(next);
    const BPart next_b = load_b(next);
#pragma unroll
    for (int q = 0; q < KP; ++q) {
      alignas(16) __half2 a2[TM], b2[TN];  // four 128-bit loads
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<uint4*>(&a2[i]) = *reinterpret_cast<const uint4*>(&s_a[Smem::a_read(buf, ty, q) + i]);
      *reinterpret_cast<uint4*>(&b2[0]) = *reinterpret_cast<const uint4*>(&s_b[Smem::b_read(buf, tx, q, 0)]);
      *reinterpret_cast<uint4*>(&b2[4]) = *reinterpret_cast<const uint4*>(&s_b[Smem::b_read(buf, tx, q, 1)]);
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = __hfma2(a2[m], b2[n], acc[m][n]);
    }
    stash(buf ^ 1, next_a, next_b);
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m) {
    float c[TN];
#pragma unroll
    for (int n = 0; n < TN; ++n) c[n] = lanes_sum(acc[m][n]);
    store_c<TN / 2>(p, tile.row + ty * TM + m, tile.col + Smem::c_col(tx, 0), c);
    store_c<TN / 2>(p, tile.row + ty * TM + m, tile.col + Smem::c_col(tx, 1), c + TN / 2);
  }
}

// Two blocks per SM: 64 accumulator registers per thread leave room for no more.
__global__ void __launch_bounds__(THREADS, 2) checked_kernel(Problem p) { gemm_tile<Edges::Checked>(p); }
__global__ void __launch_bounds__(THREADS, 2) interior_kernel(Problem p) { gemm_tile<Edges::Interior>(p); }

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return launch_split_tiles<Split>(p, THREADS, stream, message,  // f16 only
                                   [](auto, auto edges) {
                                     return decltype(edges)::value == Edges::Interior ? interior_kernel : checked_kernel;
                                   });
}

}  // namespace cuda_t8x8_hfma2

const KernelEntry& entry_cuda_t8x8_hfma2() {
  static const KernelEntry e{{"cuda.t8x8_hfma2", "cuda", 8,
                              "HFMA2 in dot form (k-pairs in each half2): no selector, both the FMA and the tensor pipe",
                              80, 0, kOpNN, kAccF16, 1, false},
                             &cuda_t8x8_hfma2::launch};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
