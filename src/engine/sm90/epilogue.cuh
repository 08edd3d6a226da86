// SPDX-License-Identifier: Apache-2.0
// The engine's epilogue: one consumer warpgroup's accumulators (a 64 × BN tile of the problem
// the kernel runs) → D, by the store path of the launch (params.h: StorePath):
//  * Tma: 64-column chunks of 16-bit D (32-column ones of f32 D) staged in shared memory with
//    stmatrix (two buffers per consumer) and stored by TMA, each warp its own 16 rows, no barrier
//    across the warpgroup. For 16-bit D the tile's last chunks are packed into registers and
//    stored while the next tile accumulates (docs/ladder.md#persistent-epilogue).
//  * StagedRows: the same 16-bit chunks copied out row by row with 16-byte stores, for a D that
//    TMA cannot take (ldd or N not a multiple of 8, or a misaligned pointer).
//  * Registers: 2-element runs from the accumulators, reading C where beta ≠ 0; transposed into
//    D for a swapped kernel.
//  * Partials: fp32 partial sums of one split of K into workspace (split_k_reduce.h adds them).
// The fused epilogue (Output::epi: bias, activation, aux, scales) is applied once per element
// before any of these: finish_accumulators (fused_finish.cuh) turns the accumulators into D's finished values, and
// the path stores them as they are (Output::finished). Partial sums are stored raw; the split-K
// pass and the fix-ups apply it where they write D (store_run).
#pragma once

#include <cuda_bf16.h>

#include <type_traits>
#include <utility>

#include "common/sm90/c_chunk.cuh"
#include "common/vec.cuh"
#include "engine/sm90/fused_finish.cuh"
#include "engine/sm90/params.h"
#include "engine/sm90/stores.cuh"

namespace hgemm::detail::engine {

using namespace sm90;

/// f32 D is staged 32 columns at a time: 128-byte rows, the same bytes as a 16-bit chunk.
constexpr int kF32ChunkCols = 32;

/// Writes alpha × columns [32J, 32J + 32) of one warpgroup's m64nN accumulators into a chunk of
/// 64 rows of 32 floats (128B swizzle: 16-byte unit u of row r at u ^ (r % 8)).
template <int J, typename Reg>
__device__ __forceinline__ void stage_f32_chunk(std::uint8_t* chunk, const Reg* d, float alpha) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
  for (int b = 0; b < 4; ++b)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float2 v = accumulator_pair(d, 2 * (4 * J + b) + h);
      const int r = warp * 16 + lane / 4 + 8 * h, c = 8 * b + 2 * (lane % 4);
      *reinterpret_cast<float2*>(chunk + r * kSwizzleRow + ((c / 4) ^ (r % 8)) * 16 + (c % 4) * 4) =
          make_float2(alpha * v.x, alpha * v.y);
    }
}

/// Copies a 16-bit chunk staged by stage_c_chunk to D(row0.., col0..), for any ldd and any
/// alignment, with 16-byte stores: 8 threads per row, each storing one 16-byte-aligned unit of the
/// row's 64 columns (8 units when the row starts on a 16-byte boundary, else 7, plus 8 single
/// values at the row's two ends). Skips what lies outside D (measured: docs/ladder.md#unaligned-shapes).
__device__ __forceinline__ void copy_chunk_rows(const Output& o, const std::uint8_t* chunk, std::int64_t row0,
                                                std::int64_t col0) {
  const int t = threadIdx.x % 128, u = t % 8;
  const std::int64_t valid = o.n - col0;  // columns of the chunk inside D
  auto value = [&](int r, int c) { return *reinterpret_cast<const unsigned short*>(chunk + chunk_offset(r, c)); };
#pragma unroll
  for (int pass = 0; pass < 4; ++pass) {  // 16 rows per pass
    const int r = pass * 16 + t / 8;
    if (row0 + r >= o.m) continue;
    unsigned short* row = static_cast<unsigned short*>(o.d) + (row0 + r) * o.ldd + col0;
    const int past = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) / 2) % 8);  // values past a boundary
    const int first = (8 - past) % 8;  // the first column on a 16-byte boundary
    const int c = first + 8 * u;
    if (c + 8 <= kCChunkCols && c < valid) {
      if (c + 8 <= valid) {
        const uint4 lo = *reinterpret_cast<const uint4*>(chunk + chunk_offset(r, 8 * u));
        const uint4 hi = *reinterpret_cast<const uint4*>(chunk + chunk_offset(r, 8 * min(u + 1, 7)));
        *reinterpret_cast<uint4*>(row + c) = shift_down_halves(lo, hi, first);
      } else {
        for (int i = 0; i < 8 && c + i < valid; ++i) row[c + i] = value(r, c + i);
      }
    }
    if (past != 0) {  // columns [0, first) and [first + 56, 64): one each
      const int end = u < first ? u : 56 + u;
      if (end < valid) row[end] = value(r, end);
    }
  }
}

/// Whether a register store of the N columns from col0 needs no per-element check: beta = 0 and
/// every column pair inside D and aligned for one store (the fragment's pairs start on even columns).
template <int N>
__device__ __forceinline__ bool plain_pairs(const Output& o, std::int64_t col0) {
  const int pair_bytes = 2 * data_type_size(o.d_type);
  return o.beta == 0.f && !o.epi.on && col0 + N <= o.n && o.ldd % 2 == 0 && reinterpret_cast<std::uintptr_t>(o.d) % pair_bytes == 0;
}

/// store_accumulators where plain_pairs holds: per pair a scale, a conversion and one store, so
/// the loop a small problem runs is short and contiguous (a cold instruction cache fetches every
/// line of it at the kernel's start).
template <typename D, int N, typename Reg>
__device__ __forceinline__ void store_plain_pairs(const Output& o, std::int64_t row0, std::int64_t col0, const Reg* d) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const std::int64_t row = row0 + warp * 16 + lane / 4;
  D* const top = static_cast<D*>(o.d) + row * o.ldd + col0 + 2 * (lane % 4);
  D* const bottom = top + 8 * o.ldd;
  const bool top_in = row < o.m, bottom_in = row + 8 < o.m;
#pragma unroll
  for (int q = 0; q < N / 4; ++q) {
    const float2 v = accumulator_pair(d, q);
    if (q % 2 ? bottom_in : top_in) store_pair<D>((q % 2 ? bottom : top) + (q / 2) * 8, o.alpha * v.x, o.alpha * v.y);
  }
}

/// store_accumulators without C where plain_pairs does not hold: columns past N, or rows of D
/// whose pairs are not aligned for one store (an odd ldd). A thread's pairs step by 8 columns
/// along two rows, so the row, column and alignment tests are made once per thread; per pair
/// there is one compare, and one store, or two where the row is misaligned. The stores run once
/// per tile, as straight-line code fetched cold: their length is the epilogue's cost.
template <typename D, int N, typename Reg>
__device__ __forceinline__ void store_checked_pairs(const Output& o, std::int64_t row0, std::int64_t col0, const Reg* d) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const std::int64_t row = row0 + warp * 16 + lane / 4, col = col0 + 2 * (lane % 4);
  D* const top = static_cast<D*>(o.d) + row * o.ldd + col;
  D* const bottom = top + 8 * o.ldd;
  const bool top_in = row < o.m, bottom_in = row + 8 < o.m;
  const bool top_paired = reinterpret_cast<std::uintptr_t>(top) % (2 * sizeof(D)) == 0;
  const bool bottom_paired = reinterpret_cast<std::uintptr_t>(bottom) % (2 * sizeof(D)) == 0;
  const std::int64_t left = o.n - col;  // D's columns from this thread's first one on
  const int cols = left <= 0 ? 0 : left >= N ? N : static_cast<int>(left);
#pragma unroll
  for (int q = 0; q < N / 4; ++q) {
    const bool upper = q % 2 == 0;
    const int c = (q / 2) * 8;
    if (!(upper ? top_in : bottom_in) || c >= cols) continue;
    const float2 v = accumulator_pair(d, q);
    D* const at = (upper ? top : bottom) + c;
    if (c + 1 < cols && (upper ? top_paired : bottom_paired)) {
      store_pair<D>(at, o.alpha * v.x, o.alpha * v.y);
    } else {
      at[0] = convert_to<D>(o.alpha * v.x);
      if (c + 1 < cols) at[1] = convert_to<D>(o.alpha * v.y);
    }
  }
}

/// D's values in one warpgroup's m64nN accumulators at (row0, col0) of D: alpha·acc + beta·C,
/// with C of type CT, rounded as an f16 D would round them where the accumulators are f16 (then D
/// is f16 too). TRANSPOSED: a swapped kernel's tile of `rows` rows, whose (r, c) is D(c, r). The
/// caller then stores them as they are (Output::finished), so the C-reading stores are one loop
/// per type of C instead of one per pair of types of C and D; and every load of C comes before the
/// first store of D, which an in-place update (C = D) needs, since each thread stores what it read.
template <typename CT, int N, bool TRANSPOSED, typename Reg>
__device__ __forceinline__ void add_c_in_registers(const Output& o, std::int64_t rows, std::int64_t row0,
                                                   std::int64_t col0, Reg* d) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const std::int64_t row = row0 + warp * 16 + lane / 4, col = col0 + 2 * (lane % 4);
  if (row >= rows) return;  // and so is row + 8
#pragma unroll
  for (int q = 0; q < N / 4; ++q) {
    const std::int64_t r = row + (q % 2) * 8, c = col + (q / 2) * 8;
    if (r >= rows) continue;
    float2 v = accumulator_pair(d, q);
    v.x *= o.alpha, v.y *= o.alpha;
    if (TRANSPOSED ? c < o.m : c < o.n) v.x = fmaf(o.beta, load_c<CT>(o, TRANSPOSED ? c * o.ldc + r : r * o.ldc + c), v.x);
    if (TRANSPOSED ? c + 1 < o.m : c + 1 < o.n)
      v.y = fmaf(o.beta, load_c<CT>(o, TRANSPOSED ? (c + 1) * o.ldc + r : r * o.ldc + c + 1), v.y);
    set_accumulator_pair(d, q, v);
  }
}

/// One warpgroup's m64nN accumulators at (row0, col0) of a D of type D without C (beta = 0, no
/// fused epilogue), from registers.
template <typename D, int N, typename Reg>
__device__ __forceinline__ void store_accumulators_as(const Output& o, std::int64_t row0, std::int64_t col0,
                                                      const Reg* d) {
  if (plain_pairs<N>(o, col0)) return store_plain_pairs<D, N>(o, row0, col0, d);
  store_checked_pairs<D, N>(o, row0, col0, d);
}

/// One warpgroup's m64nN accumulators at (row0, col0) of D, from registers (one loop per type of
/// D: a type branch per element would spread the loop over the instruction cache). o has no fused
/// epilogue (the caller stores what finish_accumulators finished); WITH_C = false: nor C, and the
/// code that reads it is left out.
template <int N, bool WITH_C = true, typename Reg>
__device__ __forceinline__ void store_accumulators(const Output& o, std::int64_t row0, std::int64_t col0, Reg* d) {
  Output plain = o;
  if constexpr (WITH_C)
    if (o.beta != 0.f) {
      with_type_for<Reg>(o.c_type, [&](auto tag) {
        add_c_in_registers<typename decltype(tag)::type, N, false>(o, o.m, row0, col0, d);
      });
      plain = o.finished();
    }
  with_type_for<Reg>(plain.d_type, [&](auto tag) {
    store_accumulators_as<typename decltype(tag)::type, N>(plain, row0, col0, d);
  });
}

/// The same for a swapped kernel: element (r, c) of its tile (`rows` rows in all) goes to
/// D(c, r). The 8 lanes sharing a column write 8 consecutive elements of D's row.
template <int N, typename Reg>
__device__ __forceinline__ void store_accumulators_transposed(const Output& o, std::int64_t rows, std::int64_t row0,
                                                              std::int64_t col0, Reg* d) {
  Output plain = o;
  if (o.beta != 0.f) {
    with_type_for<Reg>(o.c_type, [&](auto tag) {
      add_c_in_registers<typename decltype(tag)::type, N, true>(o, rows, row0, col0, d);
    });
    plain = o.finished();
  }
  with_type_for<Reg>(plain.d_type, [&](auto tag) {  // a conversion and a store per element, D's row bound checked
    using D = typename decltype(tag)::type;
    for_each_accumulator_pair<N>(rows, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
      if (r >= rows) return;
      D* at = static_cast<D*>(plain.d) + c * plain.ldd + r;
      if (c < plain.m) *at = convert_to<D>(plain.alpha * v.x);
      if (c + 1 < plain.m) at[plain.ldd] = convert_to<D>(plain.alpha * v.y);
    });
  });
}

/// One warpgroup's m64nN accumulators as fp32 partial sums into the m × n slice `out`.
template <int N, typename Reg>
__device__ __forceinline__ void store_partials(std::int64_t m, std::int64_t n, float* out, std::int64_t row0,
                                               std::int64_t col0, const Reg* d) {
  for_each_accumulator_pair<N>(m, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    if (r >= m || c >= n) return;
    out[r * n + c] = v.x;
    if (c + 1 < n) out[r * n + c + 1] = v.y;
  });
}

/// The TMA-store and staged-rows epilogues of one consumer warpgroup with BN-column tiles and
/// its two staging buffers. Reg/R: the accumulators.
template <int BN, typename Reg, int R>
struct StagedEpilogue {
  static constexpr int kChunks = BN / kCChunkCols;
  /// Half of a 256-wide tile with either accumulator: deferring all four chunks of an f16 tile
  /// gains nothing, and f32 accumulators leave room for only half (docs/ladder.md#persistent-epilogue).
  static constexpr int kDeferred = BN == 256 ? kChunks / 2 : kChunks;
  static constexpr int kEager = kChunks - kDeferred;
  /// The first slices of a unit, under which the previous tile's pending chunks are stored.
  static constexpr int kEarlySlices = kDeferred > 1 ? kDeferred : 1;

  struct Pending {
    PackedC<kDeferred> c;
    int m0, n0, z;       // z: the product of the batch
    int next = kChunks;  // the next chunk to store; kChunks: none pending
  };

  /// Stages one chunk through buffer `buffer` of this consumer and stores it by TMA at column
  /// `col` of product z of D (z < 0: D's map has rank 2), warp by warp: a warp writes only its own 16 rows (the wgmma fragment's rows), so
  /// each warp syncs and stores alone (measured: docs/ladder.md#persistent-epilogue).
  template <typename Stage>
  static __device__ __forceinline__ void store_chunk(std::uint8_t (&buffers)[2][kCChunkBytes], int buffer,
                                                     const CUtensorMap* map_d, int col, int m0, int z, Stage&& stage) {
    const int warp = threadIdx.x % 128 / 32;
    const bool issuer = threadIdx.x % 32 == 0;
    std::uint8_t* chunk = buffers[buffer];
    if (issuer) bulk_wait_read<1>();  // the store that read this buffer two chunks ago is done
    __syncwarp();
    stage(chunk);
    fence_proxy_async();
    __syncwarp();
    if (issuer) {
      if (z >= 0)
        tma_store_3d(map_d, chunk + warp * kCStoreRows * kSwizzleRow, col, m0 + warp * kCStoreRows, z);
      else
        tma_store(map_d, chunk + warp * kCStoreRows * kSwizzleRow, col, m0 + warp * kCStoreRows);
      bulk_commit();
    }
  }

  /// 16-bit D: stores the first kEager chunks of a finished tile and packs the others into
  /// `pending`. SCALED = false when alpha = 1: the pairs are only rounded.
  template <typename Out, bool SCALED, int... J>
  static __device__ void store_tile16(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_d,
                                      const Reg* acc, int m0, int n0, int z, float alpha, Pending& pending,
                                      std::integer_sequence<int, J...>) {
    (store_chunk(buffers, J % 2, map_d, n0 + J * kCChunkCols, m0, z,
                 [&](std::uint8_t* chunk) { stage_c_chunk<BN, Out, SCALED>(chunk, acc, J, alpha); }),
     ...);
    pack_c<kEager, Out, SCALED>(pending.c, acc, alpha);
    pending.m0 = m0, pending.n0 = n0, pending.z = z, pending.next = kEager;
  }

  /// f32 D: every 32-column chunk at once (nothing deferred: floats do not pack).
  template <int... J>
  static __device__ void store_tile32(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_d,
                                      const Reg* acc, int m0, int n0, int z, float alpha,
                                      std::integer_sequence<int, J...>) {
    (store_chunk(buffers, J % 2, map_d, n0 + J * kF32ChunkCols, m0, z,
                 [&](std::uint8_t* chunk) { stage_f32_chunk<J>(chunk, acc, alpha); }),
     ...);
  }

  /// 16-bit values, every chunk at once, as they are (alpha is already in them).
  template <typename Out, int... J>
  static __device__ void store_chunks16(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map,
                                        const Reg* acc, int m0, int n0, int z, std::integer_sequence<int, J...>) {
    (store_chunk(buffers, J % 2, map, n0 + J * kCChunkCols, m0, z,
                 [&](std::uint8_t* chunk) { stage_c_chunk<BN, Out, false>(chunk, acc, J, 1.f); }),
     ...);
  }

  /// aux of type t by TMA (map_aux: Plan::aux_by_tma), from f32 accumulators that hold the
  /// pre-activation values, through the buffers D's chunks go through next. Both take an even
  /// number of chunks, so each store still finds the buffer of the store before last (its wait).
  static __device__ void store_aux_tile(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_aux,
                                        const Reg* acc, int m0, int n0, int z, DataType t) {
    static_assert(kChunks % 2 == 0 && (BN / kF32ChunkCols) % 2 == 0, "the chunks alternate between the two buffers");
    if (t == DataType::F32)
      return store_tile32(buffers, map_aux, acc, m0, n0, z, 1.f, std::make_integer_sequence<int, BN / kF32ChunkCols>());
    if (t == DataType::BF16)
      return store_chunks16<__nv_bfloat16>(buffers, map_aux, acc, m0, n0, z, std::make_integer_sequence<int, kChunks>());
    store_chunks16<__half>(buffers, map_aux, acc, m0, n0, z, std::make_integer_sequence<int, kChunks>());
  }

  /// A finished tile by TMA, for o's type of D (f16 alone with f16 accumulators: with_type_for).
  static __device__ void store_tile(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_d,
                                    const Reg* acc, int m0, int n0, int z, const Output& o, Pending& pending) {
    constexpr auto eager = std::make_integer_sequence<int, kEager>();
    if constexpr (!std::is_same_v<Reg, std::uint32_t>) {
      if (o.d_type == DataType::F32)
        return store_tile32(buffers, map_d, acc, m0, n0, z, o.alpha,
                            std::make_integer_sequence<int, BN / kF32ChunkCols>());
      if (o.d_type == DataType::BF16)
        return o.alpha == 1.f
                   ? store_tile16<__nv_bfloat16, false>(buffers, map_d, acc, m0, n0, z, o.alpha, pending, eager)
                   : store_tile16<__nv_bfloat16, true>(buffers, map_d, acc, m0, n0, z, o.alpha, pending, eager);
    }
    o.alpha == 1.f ? store_tile16<__half, false>(buffers, map_d, acc, m0, n0, z, o.alpha, pending, eager)
                   : store_tile16<__half, true>(buffers, map_d, acc, m0, n0, z, o.alpha, pending, eager);
  }

  /// Stores the next pending chunk, if any (the chunk index must be a compile-time constant for
  /// the packed registers to stay registers).
  template <int... J>
  static __device__ void store_next_chunk(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_d,
                                          Pending& pending, std::integer_sequence<int, J...>) {
    ((pending.next == kEager + J
          ? store_chunk(buffers, (kEager + J) % 2, map_d, pending.n0 + (kEager + J) * kCChunkCols, pending.m0, pending.z,
                        [&](std::uint8_t* chunk) { stage_packed_chunk<J>(chunk, pending.c); })
          : void()),
     ...);
    if (pending.next < kChunks) ++pending.next;
  }
  static __device__ void store_next_chunk(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_d,
                                          Pending& pending) {
    store_next_chunk(buffers, map_d, pending, std::make_integer_sequence<int, kDeferred>());
  }
  static __device__ void store_pending(std::uint8_t (&buffers)[2][kCChunkBytes], const CUtensorMap* map_d,
                                       Pending& pending) {
#pragma unroll 1
    while (pending.next < kChunks) store_next_chunk(buffers, map_d, pending);
  }

  /// 16-bit D that TMA cannot take: the same staged chunks, copied out row by row by the
  /// consumer's own threads, which wait for nothing but each other. One buffer is enough (the
  /// first barrier orders the previous chunk's reads before the next one's writes); two let a
  /// warp stage while another still copies.
  template <typename Out, int BUFFERS>
  static __device__ void store_rows(std::uint8_t (&buffers)[BUFFERS][kCChunkBytes], const Output& o,
                                    const Reg* acc, int m0, int n0, unsigned barrier_id) {
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      std::uint8_t* chunk = buffers[j % BUFFERS];
      named_barrier_sync(barrier_id, 128);  // everyone is done reading this buffer (chunk j - BUFFERS)
      stage_c_chunk<BN, Out>(chunk, acc, j, o.alpha);
      named_barrier_sync(barrier_id, 128);
      copy_chunk_rows(o, chunk, m0, n0 + j * kCChunkCols);
    }
  }
  template <int BUFFERS>
  static __device__ void store_rows(std::uint8_t (&buffers)[BUFFERS][kCChunkBytes], const Output& o,
                                    const Reg* acc, int m0, int n0, unsigned barrier_id) {
    if constexpr (!std::is_same_v<Reg, std::uint32_t>)  // f16 accumulators: f16 D
      if (o.d_type == DataType::BF16) return store_rows<__nv_bfloat16>(buffers, o, acc, m0, n0, barrier_id);
    store_rows<__half>(buffers, o, acc, m0, n0, barrier_id);
  }
};

}  // namespace hgemm::detail::engine
