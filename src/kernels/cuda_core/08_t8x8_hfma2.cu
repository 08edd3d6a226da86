// 08_t8x8_hfma2.cu — cuda.t8x8_hfma2
// Adds over 07_t8x8_f16x8_pack_bcf_dbuf: fp16 multiply-adds that can use both of the SM's
// pipes that execute them. nvcc already turns the seed's scalar __hfma into HFMA2 (two halves per
// instruction), but with A broadcast through an operand selector (HFMA2 R, a.H0_H0, b, c), and
// such HFMA2s run on the FMA pipe only: 65.7 TFLOP/s on the H200 (hgemm-bench --peak), the same as
// scalar HFMA. Plain-register HFMA2s can also be issued to the tensor pipe (HFMA2.MMA in SASS),
// which is how the chip reaches its 130.8 TFLOP/s fp16 CUDA-core peak. So here each value of A is
// stored in shared memory already broadcast, as a half2 (a, a): no selector is needed and ptxas
// may issue any HFMA2 to either pipe; A costs two 128-bit loads per k instead of one. Left to
// itself ptxas splits them 1:1, which overloads the tensor pipe (dispatch stalls in ncu); reading
// two of the thread's eight rows through a selector keeps those on the FMA pipe, a 5:3 split,
// measured +9% (53 → 58 TFLOP/s at 4096³). Slices are BK = 16 deep (twice the seed's) so that
// each global load has more math to hide behind. Same 128×128 block tile, 8×8 thread tile,
// padding and double buffering as rung 07. Accumulating in half2 is the point, so this entry
// implements f16 accumulation only.
#include <cuda_runtime_api.h>  // __host__ __device__ for the layout below

namespace hgemm::detail::cuda_t8x8_hfma2 {

constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8, OFFSET = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int A_PER = BM * BK / THREADS, B_PER = BK * BN / THREADS;  // 8 halves each per slice
constexpr int LDA_S = BM + OFFSET, LDB_S = BN + OFFSET;  // s_a rows in half2, s_b rows in halves
constexpr int ROWS_ON_FMA_PIPE = 2;  // of the TM rows: read through a selector, so FMA pipe only
constexpr int A_STAGE = BK * LDA_S, B_STAGE = BK * LDB_S;

// Shared-memory index math: s_a[2][BK][BM + OFFSET] of half2 (a, a), transposed;
// s_b[2][BK][BN + OFFSET] of halves. A offsets count half2, B offsets count halves.
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

using Split = TileSplit<BM, BN, BK, A_PER, B_PER>;

template <Edges E>
__device__ __forceinline__ void gemm_tile(const Problem& p) {
  __shared__ alignas(16) __half2 s_a[2 * A_STAGE];
  __shared__ alignas(16) __half s_b[2 * B_STAGE];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = Split::this_tile<E>(p);
  const std::int64_t a_row = tile.row + Smem::a_row(tid), b_col = tile.col + Smem::b_col(tid);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto load_a = [&](std::int64_t s) { return load_row_segment<A_PER, E>(p.a, p.lda, p.m, p.k, a_row, s * BK + Smem::a_k(tid)); };
  auto load_b = [&](std::int64_t s) { return load_row_segment<B_PER, E>(p.b, p.ldb, p.k, p.n, s * BK + Smem::b_k(tid), b_col); };
  auto stash = [&](int buf, const Halves<A_PER>& a, const Halves<B_PER>& b) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) s_a[Smem::a_store(buf, tid, i)] = __half2half2(a.h[i]);  // broadcast once here
    st_vec<B_PER>(&s_b[Smem::b_store(buf, tid)], b);
  };

  __half2 acc[TM][TN / 2];
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN / 2; ++n) acc[m][n] = __float2half2_rn(0.f);

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
      __half2 a2[TM];  // (a, a) for the thread's 8 rows: two 128-bit loads
      st_vec<8>(reinterpret_cast<__half*>(&a2[0]), ld_vec<8>(reinterpret_cast<const __half*>(&s_a[Smem::a_read(buf, ty, k)])));
      st_vec<8>(reinterpret_cast<__half*>(&a2[4]), ld_vec<8>(reinterpret_cast<const __half*>(&s_a[Smem::a_read(buf, ty, k) + 4])));
      const Halves<TN> r_b = ld_vec<TN>(&s_b[Smem::b_read(buf, tx, k)]);
      const __half2* b2 = reinterpret_cast<const __half2*>(r_b.h);
#pragma unroll
      for (int m = 0; m < TM; ++m) {
        // (a, a).low broadcast is (a, a) again, but as a selector it pins the HFMA2 to the FMA pipe.
        const __half2 a_m = m < ROWS_ON_FMA_PIPE ? __low2half2(a2[m]) : a2[m];
#pragma unroll
        for (int n = 0; n < TN / 2; ++n) acc[m][n] = __hfma2(a_m, b2[n], acc[m][n]);
      }
    }
    stash(buf ^ 1, next_a, next_b);
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
    store_c<TN>(p, tile.row + ty * TM + m, tile.col + tx * TN, reinterpret_cast<const __half*>(acc[m]));
}

__global__ void __launch_bounds__(THREADS) checked_kernel(Problem p) { gemm_tile<Edges::Checked>(p); }
// 3 blocks per SM asked for, as in rung 07: ptxas then issues the prefetch earlier in the math
// (+6%: 67.9 → 71.8 TFLOP/s at 4096³), at the price of 8 bytes of spills outside the loop.
__global__ void __launch_bounds__(THREADS, 3) interior_kernel(Problem p) { gemm_tile<Edges::Interior>(p); }

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return launch_split_tiles<Split>(p, THREADS, stream, message,  // f16 only
                                   [](auto, auto edges) {
                                     return decltype(edges)::value == Edges::Interior ? interior_kernel : checked_kernel;
                                   });
}

}  // namespace cuda_t8x8_hfma2

const KernelEntry& entry_cuda_t8x8_hfma2() {
  static const KernelEntry e{{"cuda.t8x8_hfma2", "cuda", 8,
                              "A broadcast as half2 in shared memory: HFMA2 on both the FMA and the tensor pipe",
                              80, 0, kOpNN, kAccF16, 1, false},
                             &cuda_t8x8_hfma2::launch, /*auto_priority=*/8};
  return e;
}

}  // namespace hgemm::detail
#endif  // HGEMM_LAYOUT_ONLY
