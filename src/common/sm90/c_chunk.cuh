// SPDX-License-Identifier: Apache-2.0
// C staged through shared memory for TMA stores: 64 rows × 64 columns of 16-bit values (f16 or
// bf16) per chunk, 128B-swizzled, written from the accumulators with stmatrix, and packed
// 16-bit pairs that let a tile's last chunks wait in registers while the next tile accumulates.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/sm90/accumulators.cuh"
#include "common/sm90/operand_tile.cuh"

namespace hgemm::detail::sm90 {

/// A C chunk staged for TMA stores (one per warp's 16 rows, kCStoreRows): 64 rows × 64 columns
/// of 16-bit values, rows of 128 bytes with the 128B swizzle of the C map (16-byte unit u of row
/// r sits at u ^ (r % 8)), so that the eight rows a warp writes at once fall in different banks.
constexpr int kCChunkCols = 64, kCChunkBytes = 64 * kCChunkCols * 2;
/// Rows of a chunk one TMA store writes: a warp's own rows (each warp stages and stores its part).
constexpr int kCStoreRows = 16;

/// The byte of a staged chunk that holds (row r, column c).
__device__ __forceinline__ int chunk_offset(int r, int c) { return r * kSwizzleRow + ((c / 8) ^ (r % 8)) * 16 + (c % 8) * 2; }

/// Writes a chunk's 16 pairs of 16-bit values per thread into `chunk`: pair i (i = 2u + h) holds
/// row 16·warp + lane/4 + 8h, columns 8u + 2(lane % 4) and the next (the wgmma D fragment's
/// order); pair_at(i) gives its 32 bits. Each pair is one element pair of an 8×8 block of C, so
/// four stmatrix stores write the warp's 16 rows: store k takes pairs 4k .. 4k + 3, the blocks
/// (u, h) = (2k, 0), (2k, 1), (2k + 1, 0), (2k + 1, 1), and lane l names row l % 8 of block l / 8.
/// (Against one 4-byte store per pair through a generic pointer: 4 instructions instead of 16
/// plus their 64-bit address arithmetic.)
template <typename PairAt>
__device__ __forceinline__ void stage_chunk_pairs(std::uint8_t* chunk, PairAt&& pair_at) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, block = lane / 8;
  const int r = warp * 16 + lane % 8 + 8 * (block % 2);
  const std::uint32_t base = shared_address(chunk);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    stmatrix_x4(base + chunk_offset(r, 8 * (2 * k + block / 2)), pair_at(4 * k), pair_at(4 * k + 1),
                pair_at(4 * k + 2), pair_at(4 * k + 3));
}

/// Two floats rounded to a pair of Out (__half or __nv_bfloat16), as 32 bits.
template <typename Out>
__device__ __forceinline__ std::uint32_t rounded_bits(float x, float y) {
  if constexpr (std::is_same_v<Out, __half>) {
    return half2_bits(__floats2half2_rn(x, y));
  } else {
    const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  }
}

/// Accumulator pair q rounded to Out: what the TMA-store epilogue writes when alpha = 1 (f16
/// accumulators into f16 pass through as they are; floats round as alpha × v would for alpha = 1).
template <typename Out>
__device__ __forceinline__ std::uint32_t rounded_pair(const float* d, int q) { return rounded_bits<Out>(d[2 * q], d[2 * q + 1]); }
template <typename Out>
__device__ __forceinline__ std::uint32_t rounded_pair(const std::uint32_t* d, int q) {
  if constexpr (std::is_same_v<Out, __half>) {
    return d[q];
  } else {
    const float2 v = accumulator_pair(d, q);
    return rounded_bits<Out>(v.x, v.y);
  }
}

/// Accumulator pair q scaled by alpha and rounded to Out: what the TMA-store epilogue writes.
/// SCALED = false: alpha is 1, and the pair is only rounded (the same bits, no multiplies).
template <typename Out, bool SCALED = true, typename Reg>
__device__ __forceinline__ std::uint32_t scaled_pair(const Reg* d, int q, float alpha) {
  if constexpr (!SCALED) {
    return rounded_pair<Out>(d, q);
  } else {
    const float2 v = accumulator_pair(d, q);
    return rounded_bits<Out>(alpha * v.x, alpha * v.y);
  }
}

/// Writes alpha × columns [64j, 64j + 64) of one warpgroup's m64nN accumulators into `chunk`.
template <int N, typename Out = __half, bool SCALED = true, typename Reg>
__device__ __forceinline__ void stage_c_chunk(std::uint8_t* chunk, const Reg* d, int j, float alpha) {
  stage_chunk_pairs(chunk, [&](int i) { return scaled_pair<Out, SCALED>(d, 16 * j + i, alpha); });
}

/// CHUNKS 64-column chunks of one warpgroup's m64nN tile of C as they will be stored (the bits
/// stage_c_chunk writes), in the accumulators' pair order. Half the registers of fp32
/// accumulators, so they can wait here to be stored while the next tile accumulates.
template <int CHUNKS>
struct PackedC {
  std::uint32_t pair[16 * CHUNKS];
};

/// Packs chunks [FIRST, FIRST + CHUNKS) of accumulators d.
template <int FIRST, typename Out = __half, bool SCALED = true, int CHUNKS, typename Reg>
__device__ __forceinline__ void pack_c(PackedC<CHUNKS>& c, const Reg* d, float alpha) {
#pragma unroll
  for (int q = 0; q < 16 * CHUNKS; ++q) c.pair[q] = scaled_pair<Out, SCALED>(d, 16 * FIRST + q, alpha);
}

/// Writes packed chunk J (counted from the first packed one) into `chunk`, as stage_c_chunk would.
template <int J, int CHUNKS>
__device__ __forceinline__ void stage_packed_chunk(std::uint8_t* chunk, const PackedC<CHUNKS>& c) {
  stage_chunk_pairs(chunk, [&](int i) { return c.pair[16 * J + i]; });
}

}  // namespace hgemm::detail::sm90
