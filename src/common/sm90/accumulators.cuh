// SPDX-License-Identifier: Apache-2.0
// One warpgroup's wgmma accumulators (the D fragment of m64nNk16) as the sm90 kernels and the
// engine read them: pairs by position, zeroed, fenced, and written to an f16 C from registers.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "common/epilogue.cuh"
#include "common/problem.h"
#include "common/sm90/ptx.cuh"

namespace hgemm::detail::sm90 {

/// A half2 as the 32-bit register that f16 wgmma accumulators and stmatrix operands are, and back.
__device__ __forceinline__ __half2 half2_from_bits(std::uint32_t bits) { return *reinterpret_cast<const __half2*>(&bits); }
__device__ __forceinline__ std::uint32_t half2_bits(__half2 v) { return *reinterpret_cast<const std::uint32_t*>(&v); }

__device__ __forceinline__ float2 accumulator_pair(const float* d, int q) { return make_float2(d[2 * q], d[2 * q + 1]); }
__device__ __forceinline__ float2 accumulator_pair(const std::uint32_t* d, int q) { return __half22float2(half2_from_bits(d[q])); }

/// Sets accumulator pair q, the inverse of accumulator_pair (f16 accumulators round to nearest).
__device__ __forceinline__ void set_accumulator_pair(float* d, int q, float2 v) { d[2 * q] = v.x, d[2 * q + 1] = v.y; }
__device__ __forceinline__ void set_accumulator_pair(std::uint32_t* d, int q, float2 v) {
  d[q] = half2_bits(__float22half2_rn(v));
}

/// Calls f(r, c, v) for each accumulator pair this thread holds of one warpgroup's m64nN wgmma
/// tile starting at (row0, col0): v = the values at (r, c) and (r, c + 1). Fragment layout (PTX
/// ISA, wgmma D for m64nNk16): warp w of the group owns rows 16w..16w+15; lane l holds, for each
/// 8-column block j, the pairs at row 16w + l/4 (+ 8) and columns 8j + 2(l%4), +1 — pair
/// q = 2j + (0 or 1 for the +8 row). Skips the thread's pairs when its first row is past `rows`;
/// f checks r against `rows` (the +8 row) and c against the columns itself.
template <int N, typename Reg, typename F>
__device__ __forceinline__ void for_each_accumulator_pair(std::int64_t rows, std::int64_t row0, std::int64_t col0,
                                                          const Reg* d, F&& f) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const std::int64_t row = row0 + warp * 16 + lane / 4, col = col0 + 2 * (lane % 4);
  if (row >= rows) return;  // and so is row + 8
#pragma unroll
  for (int q = 0; q < N / 4; ++q) f(row + (q % 2) * 8, col + (q / 2) * 8, accumulator_pair(d, q));
}

/// Writes one warpgroup's m64nN accumulators, whose tile starts at (row0, col0) of an f16 C. Each
/// column pair goes through store_c<2> (common/epilogue.cuh): one 4-byte store where C's address
/// allows it, else two 2-byte ones.
template <int N, typename Reg>
__device__ __forceinline__ void store_accumulators(const Problem& p, std::int64_t row0, std::int64_t col0, const Reg* d) {
  for_each_accumulator_pair<N>(p.m, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    const float pair[2] = {v.x, v.y};
    store_c<2>(p, r, c, pair);
  });
}

/// Explicit zeros for the accumulators, fenced so that the first wgmma sees them.
template <typename Reg, int R>
__device__ __forceinline__ void zero_accumulators(Reg (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    d[i] = Reg(0);
    fence_operand(d[i]);
  }
}

/// Orders the accumulators after the wgmma_wait that completed them.
template <typename Reg, int R>
__device__ __forceinline__ void fence_accumulators(Reg (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) fence_operand(d[i]);
}

}  // namespace hgemm::detail::sm90
