// SPDX-License-Identifier: Apache-2.0
// 01_m16_mma_nt.cu — skinny.m16_mma_nt
// Decode-shaped products: M ≤ 16 rows of A (the tokens) against a B stored N×K (op nt: the weight
// of a linear layer, each output column a row of B). C is tiny and every element of B is used
// exactly once per row of A, so the kernel's speed is the rate at which it streams B from DRAM;
// tiles, shared-memory staging and pipelines of the GEMM ladder only add latency here.
//  * One mma.sync m16n8k16 covers all M ≤ 16 rows (absent rows read as zeros) and 8 columns.
//  * Fragments come straight from global memory in 16-byte loads, with no shuffles: a sum over k
//    may visit k in any order as long as A and B agree, so lane l takes the 8 consecutive k
//    values 8(l % 4)…+7 of row l / 4 (and l / 4 + 8 of A), and its four 32-bit words feed the
//    k-pairs of two mma.sync (words 0–1 the first, 2–3 the second). A warp reads 64 contiguous
//    bytes of each of its 8 rows of B per 32-deep step.
//  * A block owns GROUPS × 8 columns; its 8 warps split K in 32-deep steps taken in turn, UNROLL
//    steps of loads in flight per warp, and their partial sums meet in shared memory in a fixed
//    order: the result does not depend on timing (deterministic).
//  * The grid is one wave: the widest blocks (GROUPS of 1, 2 or 4) that still give every SM its
//    share of the columns: a second partial wave costs more than re-reading A, and too few blocks
//    leave bandwidth unused (measured: docs/ladder.md#decode-shapes).
// Accumulates in f32 for both accumulation settings (memory-bound: the wider sum costs nothing).
// Needs 16-byte-aligned A and B with lda, ldb multiples of 8 (Status::Misaligned otherwise) and
// M ≤ 16 (Status::UnsupportedShape otherwise); any N, K and ldc. "auto" does not pick it for a
// long K over fewer than 512 columns (see auto_suits), nor on Hopper, where the sm90 rungs stream
// B by TMA faster (its auto priority sits below theirs; docs/ladder.md, Decode shapes).
#include "common/launch.cuh"
#include "common/occupancy.h"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace skinny_m16_mma_nt {

constexpr int kMaxM = 16;

template <int WARPS_, int GROUPS_, int UNROLL_>
struct Config {
  static constexpr int WARPS = WARPS_, GROUPS = GROUPS_, UNROLL = UNROLL_;
  static constexpr int THREADS = 32 * WARPS, COLS = 8 * GROUPS, STEP = 32;
};

/// Halves k0…k0+7 of a row whose first `k` halves exist (zeros past them and for absent rows).
/// STREAM marks the load evict-first (B, read once); A, read by every block, stays cached.
template <bool STREAM>
__device__ __forceinline__ uint4 load_chunk(const __half* row, std::int64_t k0, std::int64_t k, bool row_ok) {
  if (!row_ok || k0 >= k) return make_uint4(0u, 0u, 0u, 0u);
  const uint4* whole = reinterpret_cast<const uint4*>(row + k0);
  if (k0 + 8 <= k) return STREAM ? __ldcs(whole) : __ldg(whole);
  Halves<8> h = load_halves<8>(row + k0, k - k0);
  return *reinterpret_cast<const uint4*>(&h);
}

/// What one lane loads for one 32-deep step: A rows g and g + 8, and row g of each column group.
template <typename C>
struct StepLoads {
  uint4 a_lo, a_hi, b[C::GROUPS];
};

template <typename C>
__global__ void __launch_bounds__(C::THREADS) kernel(Problem p) {
  __shared__ float partial[C::WARPS][kMaxM][C::COLS];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * C::COLS;
  const std::int64_t steps = (p.k + C::STEP - 1) / C::STEP;
  const __half* a_lo = p.a + (g < p.m ? g : 0) * p.lda;
  const __half* a_hi = p.a + (g + 8 < p.m ? g + 8 : 0) * p.lda;
  const __half* b_row[C::GROUPS];
  bool b_ok[C::GROUPS];
#pragma unroll
  for (int j = 0; j < C::GROUPS; ++j) {
    const std::int64_t n = col0 + 8 * j + g;
    b_ok[j] = n < p.n;
    b_row[j] = p.b + (b_ok[j] ? n : 0) * p.ldb;
  }

  MmaAcc<float> acc[C::GROUPS];
  for (std::int64_t s0 = warp; s0 < steps; s0 += C::WARPS * C::UNROLL) {
    StepLoads<C> in[C::UNROLL];
#pragma unroll
    for (int u = 0; u < C::UNROLL; ++u) {  // every load of UNROLL steps first, then the math
      const std::int64_t k0 = (s0 + u * C::WARPS) * C::STEP + 8 * q;
      in[u].a_lo = load_chunk<false>(a_lo, k0, p.k, g < p.m);
      in[u].a_hi = load_chunk<false>(a_hi, k0, p.k, g + 8 < p.m);
#pragma unroll
      for (int j = 0; j < C::GROUPS; ++j) in[u].b[j] = load_chunk<true>(b_row[j], k0, p.k, b_ok[j]);
    }
#pragma unroll
    for (int u = 0; u < C::UNROLL; ++u) {
      const uint4 lo = in[u].a_lo, hi = in[u].a_hi;
      const std::uint32_t first[4] = {lo.x, hi.x, lo.y, hi.y}, second[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
      for (int j = 0; j < C::GROUPS; ++j) {
        const std::uint32_t b_first[2] = {in[u].b[j].x, in[u].b[j].y}, b_second[2] = {in[u].b[j].z, in[u].b[j].w};
        mma_m16n8k16(acc[j], first, b_first);
        mma_m16n8k16(acc[j], second, b_second);
      }
    }
  }

  // D fragment: lane holds columns 2q, 2q + 1 of rows g and g + 8.
#pragma unroll
  for (int j = 0; j < C::GROUPS; ++j) {
    const int col = 8 * j + 2 * q;
    partial[warp][g][col] = acc[j].r[0], partial[warp][g][col + 1] = acc[j].r[1];
    partial[warp][g + 8][col] = acc[j].r[2], partial[warp][g + 8][col + 1] = acc[j].r[3];
  }
  __syncthreads();
  for (int o = threadIdx.x; o < kMaxM * C::COLS; o += C::THREADS) {
    const int row = o / C::COLS, col = o % C::COLS;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < C::WARPS; ++w) sum += partial[w][row][col];
    store_c<1>(p, row, col0 + col, &sum);
  }
}

/// Launches the configuration as one block per COLS columns; `fits` says whether that grid is
/// resident at once. Returns false (launching nothing) when it is not and `only_if_fits` is set.
template <typename C>
bool try_launch(const Problem& p, cudaStream_t stream, bool only_if_fits, Status* status, std::string* message) {
  const std::int64_t blocks = (p.n + C::COLS - 1) / C::COLS;
  if (only_if_fits && blocks > resident_blocks(reinterpret_cast<const void*>(&kernel<C>), C::THREADS)) return false;
  if (blocks > INT_MAX) {
    *message = "N = " + std::to_string(p.n) + " needs more blocks than a grid can hold";
    *status = Status::ProblemTooLarge;
    return true;
  }
  kernel<C><<<static_cast<unsigned>(blocks), C::THREADS, 0, stream>>>(p);
  *status = launch_status(message);
  return true;
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  Status s = Status::Success;
  if (try_launch<Config<8, 1, 2>>(p, stream, true, &s, message)) return s;
  if (try_launch<Config<8, 2, 2>>(p, stream, true, &s, message)) return s;
  try_launch<Config<8, 4, 2>>(p, stream, false, &s, message);
  return s;
}

Status supports(const Matmul& p, std::string* why) {
  if (p.m <= kMaxM) return Status::Success;
  *why = "skinny.m16_mma_nt takes M <= 16 rows; M = " + std::to_string(p.m);
  return Status::UnsupportedShape;
}

}  // namespace skinny_m16_mma_nt

const KernelEntry& entry_skinny_m16_mma_nt() {
  static const KernelEntry e{{"skinny.m16_mma_nt", "skinny", 1,
                              "M <= 16 against B stored NxK: one mma.sync per 8 columns fed by 16-byte loads straight "
                              "from global memory, K split over warps and reduced in a fixed order",
                              80, 0, kOpNT, kBothAccums, 8, false},
                             &skinny_m16_mma_nt::launch,
                             &skinny_m16_mma_nt::supports};
  return e;
}

}  // namespace hgemm::detail
