// 08_t8x8_hfma2.cu — cuda.t8x8_hfma2
// Adds over 07_t8x8_f16x8_pack_bcf_dbuf: packed half2 arithmetic. The seed's __hfma does one
// fp16 multiply-add per instruction, half of what the CUDA cores can do: HFMA2 works on two
// halves at once. The accumulators become 8×4 half2 (pairs of neighbouring C columns), and per
// k each A value is broadcast to both lanes (a.H0_H0 in SASS) and multiplied into 4 pairs of B:
// 32 HFMA2 instead of 64 HFMA. Same tiling, same shared-memory layout and double buffering.
// Accumulating in half2 is the point, so this entry implements f16 accumulation only.
#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/operand.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace cuda_t8x8_hfma2 {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, OFFSET = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int LDA_S = BM + OFFSET, LDB_S = BN + OFFSET;
constexpr int A_STAGE = BK * LDA_S, B_STAGE = BK * LDB_S;  // halves per buffer

// Shared-memory index math (in halves): s_a[2][BK][BM + OFFSET] (transposed), s_b[2][BK][BN + OFFSET].
struct Smem {
  __host__ __device__ static constexpr int a_row(int tid) { return tid / 2; }
  __host__ __device__ static constexpr int a_k(int tid) { return (tid % 2) * 4; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / 32; }
  __host__ __device__ static constexpr int b_col(int tid) { return (tid % 32) * 4; }
  __host__ __device__ static constexpr int a_store(int buf, int tid, int i) {
    return buf * A_STAGE + (a_k(tid) + i) * LDA_S + a_row(tid);
  }
  __host__ __device__ static constexpr int b_store(int buf, int tid) { return buf * B_STAGE + b_k(tid) * LDB_S + b_col(tid); }
  __host__ __device__ static constexpr int a_read(int buf, int ty, int k) { return buf * A_STAGE + k * LDA_S + ty * TM; }
  __host__ __device__ static constexpr int b_read(int buf, int tx, int k) { return buf * B_STAGE + k * LDB_S + tx * TN; }
};

__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  __shared__ alignas(16) __half s_a[2 * A_STAGE], s_b[2 * B_STAGE];
  const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
  const TileOrigin tile = tile_origin<BM, BN>(p.n);
  const std::int64_t a_row = tile.row + Smem::a_row(tid), b_col = tile.col + Smem::b_col(tid);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto load_a = [&](std::int64_t s) { return load_row_segment<4>(p.a, p.lda, p.m, p.k, a_row, s * BK + Smem::a_k(tid)); };
  auto load_b = [&](std::int64_t s) { return load_row_segment<4>(p.b, p.ldb, p.k, p.n, s * BK + Smem::b_k(tid), b_col); };
  auto stash = [&](int buf, const Halves<4>& a, const Halves<4>& b) {
#pragma unroll
    for (int i = 0; i < 4; ++i) s_a[Smem::a_store(buf, tid, i)] = a.h[i];
    st_vec<4>(&s_b[Smem::b_store(buf, tid)], b);
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
    const bool has_next = s + 1 < slices;
    // In flight during the math below; past the last slice these are zeros and no loads.
    const Halves<4> next_a = load_a(s + 1), next_b = load_b(s + 1);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const Halves<TM> r_a = ld_vec<TM>(&s_a[Smem::a_read(buf, ty, k)]);
      const Halves<TN> r_b = ld_vec<TN>(&s_b[Smem::b_read(buf, tx, k)]);
      const __half2* b2 = reinterpret_cast<const __half2*>(r_b.h);
#pragma unroll
      for (int m = 0; m < TM; ++m) {
        const __half2 a2 = __half2half2(r_a.h[m]);
#pragma unroll
        for (int n = 0; n < TN / 2; ++n) acc[m][n] = __hfma2(a2, b2[n], acc[m][n]);
      }
    }
    if (has_next) stash(buf ^ 1, next_a, next_b);
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
    store_c<TN>(p, tile.row + ty * TM + m, tile.col + tx * TN, reinterpret_cast<const __half*>(acc[m]));
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  dim3 grid;
  if (Status s = tile_grid<BM, BN>(p, &grid, message); s != Status::Success) return s;
  kernel<<<grid, THREADS, 0, stream>>>(p);
  return launch_status(message);
}

}  // namespace cuda_t8x8_hfma2

const KernelEntry& entry_cuda_t8x8_hfma2() {
  static const KernelEntry e{{"cuda.t8x8_hfma2", "cuda", 8,
                              "packed half2 FMAs (HFMA2): two fp16 multiply-adds per instruction", 80, 0, kOpNN,
                              kAccF16, 1, false},
                             &cuda_t8x8_hfma2::launch, /*auto_priority=*/8};
  return e;
}

}  // namespace hgemm::detail
