// The shared-memory side of one operand tile of the sm90 kernels, and the accumulator epilogue.
//
// A k-slice is BK = 64 halves deep: exactly one 128-byte row of the TMA's 128B swizzle, so every
// tile is a stack of 1 KiB swizzle atoms (8 rows × 128 bytes) and wgmma reads it without bank
// conflicts. An operand is either
//   K-major  (A with op N, B with op T): the tile is ROWS rows of 64 k-values; one TMA box.
//   MN-major (A with op T, B with op N): the tile is ROWS/64 blocks of [64 k][64 m-or-n]; one TMA
//            box per block; wgmma reads it with its transpose bit set.
// The matching tensor maps are built on the host (host.h: tile_box).
#pragma once

#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <cstring>

#include "common/epilogue.cuh"
#include "common/problem.h"
#include "common/sm90/ptx.cuh"
#include "common/sm90/tile_schedule.h"
#include "common/vec.cuh"

namespace hgemm::detail::sm90 {

constexpr int BK = 64;            // k-values per slice: one 128-byte swizzle row
constexpr int kSwizzleRow = 128;  // bytes
constexpr int kAtomBytes = 1024;  // 8 swizzled rows

template <bool MN_MAJOR, int ROWS>
struct OperandTile {
  static_assert(MN_MAJOR ? ROWS % 64 == 0 : ROWS % 8 == 0, "whole swizzle atoms / 64-wide blocks");
  static constexpr int kBytes = ROWS * BK * 2;
  static constexpr int kBlockBytes = 64 * BK * 2;  // MN-major: one [64 k][64 mn] block
  static constexpr int kTranspose = MN_MAJOR ? 1 : 0;

  /// Loads part `part` of `parts` of the tile whose first row (m or n) is row0 and first k is
  /// k0 into `dst`, multicast to the cluster CTAs in `mask` (0: this CTA only).
  __device__ static void load(std::uint8_t* dst, const CUtensorMap* map, int row0, int k0, std::uint64_t* bar,
                              int part = 0, int parts = 1, std::uint16_t mask = 0) {
    if constexpr (!MN_MAJOR) {
      const int rows = ROWS / parts;
      issue(dst + part * rows * kSwizzleRow, map, k0, row0 + part * rows, bar, mask);
    } else {
      const int blocks = ROWS / 64 / parts;
      for (int j = part * blocks; j < (part + 1) * blocks; ++j) issue(dst + j * kBlockBytes, map, row0 + 64 * j, k0, bar, mask);
    }
  }

  /// How far desc(base, row, kk + 1) starts after desc(base, row, kk): K-major, the k16 step
  /// moves 32 B inside the swizzled row; MN-major, it moves 16 rows of 128 B. In bytes, and in the
  /// descriptor's 16-byte address units (desc_advanced).
  static constexpr int kKStepBytes = MN_MAJOR ? 16 * kSwizzleRow : 32;
  static constexpr std::uint32_t kKStepUnits = kKStepBytes / 16;

  /// Descriptor of the 64-or-more-row sub-tile starting at row `row` (a multiple of 64), for the
  /// k16 step `kk` (0..3) of the slice.
  __device__ static std::uint64_t desc(const std::uint8_t* base, int row, int kk) {
    if constexpr (!MN_MAJOR)  // rows of 128 B
      return smem_desc_sw128(base + row * kSwizzleRow + kk * kKStepBytes, 16, kAtomBytes);
    else  // 64-wide blocks kBlockBytes apart
      return smem_desc_sw128(base + (row / 64) * kBlockBytes + kk * kKStepBytes, kBlockBytes, kAtomBytes);
  }

 private:
  __device__ static void issue(std::uint8_t* dst, const CUtensorMap* map, int x, int y, std::uint64_t* bar,
                               std::uint16_t mask) {
    if (mask)
      tma_load_multicast(dst, map, x, y, bar, mask);
    else
      tma_load(dst, map, x, y, bar);
  }
};

// ------------------------------------------------------------------ shared memory
/// One slot of an operand ring: a tile of A and one of B, each on a 1 KiB boundary (the 128B
/// swizzle's atom, which TMA writes and wgmma descriptors address).
template <typename TileA, typename TileB>
struct RingSlot {
  alignas(1024) std::uint8_t a[TileA::kBytes];
  alignas(1024) std::uint8_t b[TileB::kBytes];
};

/// Queues k-slice `kt` of the tiles at rows m0 (A) and n0 (B) into `slot`, whose full barrier is
/// told to expect both tiles' bytes. B's load is part `b_part` of `b_parts`, multicast to the
/// cluster CTAs in `mask` (0: this CTA only): in a cluster, each CTA loads its share of B.
template <typename TileA, typename TileB>
__device__ __forceinline__ void fill_slot(RingSlot<TileA, TileB>& slot, std::uint64_t* full, const CUtensorMap* map_a,
                                          const CUtensorMap* map_b, int m0, int n0, int kt, int b_part = 0,
                                          int b_parts = 1, std::uint16_t mask = 0) {
  mbar_arrive_expect_tx(full, TileA::kBytes + TileB::kBytes);
  TileA::load(slot.a, map_a, m0, kt * BK, full);
  TileB::load(slot.b, map_b, n0, kt * BK, full, b_part, b_parts, mask);
}

/// Dynamic shared memory to ask for a layout S placed by aligned_smem: its size plus room to move
/// the base up to the next 1 KiB boundary (the runtime only promises 16 bytes).
template <typename S>
constexpr int aligned_smem_bytes() {
  return static_cast<int>(sizeof(S)) + 1024;
}

/// The kernel's shared-memory layout S, at the first 1 KiB boundary of the dynamic shared memory.
template <typename S>
__device__ __forceinline__ S& aligned_smem() {
  extern __shared__ std::uint8_t raw[];
  return *reinterpret_cast<S*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t(1023));
}

// ------------------------------------------------------------------ epilogue
/// How a kernel writes C (by default store_accumulators): `tma_store` — C is staged in shared memory and stored by TMA (C
/// 16-byte aligned, ldc and N multiples of 8, beta = 0; the map clips a ragged M).
/// `staged_rows` — C cannot take TMA (ldc or N not a multiple of 8, or a misaligned pointer) but
/// beta = 0: chunks are staged in shared memory as for `tma_store`, then written row by row
/// with 16-byte stores where the row allows (see copy_chunk_rows).
/// `partials` — each of `splits` splits of K writes its fp32 partial sums of op(A)·op(B) to
/// partials[split][M][N] instead of C, and reduce_splits (host.h) adds them in split order and
/// writes C (`transposed`: the kernel ran the swapped problem, C^T).
/// `stream_k` — some tiles' K is shared by two CTAs, which hand partial sums over (StreamKHandover).
/// `cluster_splits` — the `splits` splits of each tile run as one cluster, split s on the
/// cluster's CTA s, and their sums meet in distributed shared memory (add_staged_splits): no
/// workspace and no second pass.
struct StreamKHandover {
  std::uint32_t* parked = nullptr;        ///< per slot: the parked accumulators, [register][thread]
  unsigned long long* flags = nullptr;    ///< per slot: `epoch` once the slot's sums are parked
  unsigned long long epoch = 0;           ///< this launch's flag value (unique per launch)
};
struct EpilogueMode {
  bool tma_store = false;
  bool staged_rows = false;
  float* partials = nullptr;
  int splits = 1;
  bool transposed = false;
  StreamKHandover stream_k;  ///< on when stream_k.parked is set
  int cluster_splits = 1;    ///< > 1: the splits of a tile add up inside its cluster
};

/// A half2 as the 32-bit register that f16 wgmma accumulators and stmatrix operands are, and back.
__device__ __forceinline__ __half2 half2_from_bits(std::uint32_t bits) { return *reinterpret_cast<const __half2*>(&bits); }
__device__ __forceinline__ std::uint32_t half2_bits(__half2 v) { return *reinterpret_cast<const std::uint32_t*>(&v); }

__device__ __forceinline__ float2 accumulator_pair(const float* d, int q) { return make_float2(d[2 * q], d[2 * q + 1]); }
__device__ __forceinline__ float2 accumulator_pair(const std::uint32_t* d, int q) { return __half22float2(half2_from_bits(d[q])); }

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

/// Writes one warpgroup's m64nN accumulators, whose tile starts at (row0, col0) of C. Each column
/// pair goes through store_c<2> (common/epilogue.cuh): one 4-byte store where C's address allows
/// it, else two 2-byte ones.
template <int N, typename Reg>
__device__ __forceinline__ void store_accumulators(const Problem& p, std::int64_t row0, std::int64_t col0, const Reg* d) {
  for_each_accumulator_pair<N>(p.m, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    const float pair[2] = {v.x, v.y};
    store_c<2>(p, r, c, pair);
  });
}

/// Writes value v of element (r, c) of the swapped problem p's C (C^T = op(B)^T·op(A)^T, so p's C
/// is C^T) to C(c, r), if c lies inside p (the caller checks r).
__device__ __forceinline__ void store_c_transposed(const Problem& p, std::int64_t r, std::int64_t c, float v) {
  if (c < p.n) store_c_segment<1>(p.c + c * p.ldc + r, 1, &v, p.alpha, p.beta);
}

/// store_accumulators for the swapped problem p: element (r, c) of p's tile goes to C(c, r). Each
/// lane's column pair becomes two single halves in two rows of C; the 8 lanes sharing a column
/// write 8 consecutive halves of its row.
template <int N, typename Reg>
__device__ __forceinline__ void store_accumulators_transposed(const Problem& p, std::int64_t row0, std::int64_t col0,
                                                              const Reg* d) {
  for_each_accumulator_pair<N>(p.m, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    if (r >= p.m) return;
    store_c_transposed(p, r, c, v.x);
    store_c_transposed(p, r, c + 1, v.y);
  });
}

/// A C chunk staged for TMA stores (one per warp's 16 rows, kCStoreRows): 64 rows × 64 columns
/// of halves, rows of 128 bytes with the 128B swizzle of the C map (16-byte unit u of row r sits
/// at u ^ (r % 8)), so that the eight rows a warp writes at once fall in different banks.
constexpr int kCChunkCols = 64, kCChunkBytes = 64 * kCChunkCols * 2;
/// Rows of a chunk one TMA store writes: a warp's own rows (each warp stages and stores its part).
constexpr int kCStoreRows = 16;

/// The byte of a staged chunk that holds (row r, column c).
__device__ __forceinline__ int chunk_offset(int r, int c) { return r * kSwizzleRow + ((c / 8) ^ (r % 8)) * 16 + (c % 8) * 2; }

/// Writes a chunk's 16 half2 pairs per thread into `chunk`: pair i (i = 2u + h) holds row
/// 16·warp + lane/4 + 8h, columns 8u + 2(lane % 4) and the next (the wgmma D fragment's order).
/// Each pair is one element pair of an 8×8 block of C, so four stmatrix stores write the warp's
/// 16 rows: store k takes pairs 4k .. 4k + 3, the blocks (u, h) = (2k, 0), (2k, 1), (2k + 1, 0),
/// (2k + 1, 1), and lane l names row l % 8 of block l / 8. (Against one 4-byte store per pair
/// through a generic pointer: 4 instructions instead of 16 plus their 64-bit address arithmetic.)
template <typename PairAt>
__device__ __forceinline__ void stage_chunk_pairs(std::uint8_t* chunk, PairAt&& pair_at) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, block = lane / 8;
  const int r = warp * 16 + lane % 8 + 8 * (block % 2);
  const std::uint32_t base = shared_address(chunk);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    stmatrix_x4(base + chunk_offset(r, 8 * (2 * k + block / 2)), half2_bits(pair_at(4 * k)),
                half2_bits(pair_at(4 * k + 1)), half2_bits(pair_at(4 * k + 2)), half2_bits(pair_at(4 * k + 3)));
}

/// Accumulator pair q rounded to half: what the TMA-store epilogue writes when alpha = 1 (half
/// accumulators pass through as they are; floats round as alpha × v would for alpha = 1).
__device__ __forceinline__ __half2 rounded_pair(const float* d, int q) { return __floats2half2_rn(d[2 * q], d[2 * q + 1]); }
__device__ __forceinline__ __half2 rounded_pair(const std::uint32_t* d, int q) { return half2_from_bits(d[q]); }

/// Accumulator pair q scaled by alpha and rounded to half: what the TMA-store epilogue writes.
/// SCALED = false: alpha is 1, and the pair is only rounded (the same halves, no multiplies).
template <bool SCALED = true, typename Reg>
__device__ __forceinline__ __half2 scaled_pair(const Reg* d, int q, float alpha) {
  if constexpr (!SCALED) {
    return rounded_pair(d, q);
  } else {
    const float2 v = accumulator_pair(d, q);
    return __floats2half2_rn(alpha * v.x, alpha * v.y);
  }
}

/// Writes alpha × columns [64j, 64j + 64) of one warpgroup's m64nN accumulators into `chunk`.
template <int N, bool SCALED = true, typename Reg>
__device__ __forceinline__ void stage_c_chunk(std::uint8_t* chunk, const Reg* d, int j, float alpha) {
  stage_chunk_pairs(chunk, [&](int i) { return scaled_pair<SCALED>(d, 16 * j + i, alpha); });
}

/// CHUNKS 64-column chunks of one warpgroup's m64nN tile of C as they will be stored (scaled_pair,
/// the values stage_c_chunk writes), in the accumulators' pair order. Half the registers of fp32 accumulators, so they can wait here to be stored while the
/// next tile accumulates.
template <int CHUNKS>
struct PackedC {
  __half2 pair[16 * CHUNKS];
};

/// Packs chunks [FIRST, FIRST + CHUNKS) of accumulators d.
template <int FIRST, bool SCALED = true, int CHUNKS, typename Reg>
__device__ __forceinline__ void pack_c(PackedC<CHUNKS>& c, const Reg* d, float alpha) {
#pragma unroll
  for (int q = 0; q < 16 * CHUNKS; ++q) c.pair[q] = scaled_pair<SCALED>(d, 16 * FIRST + q, alpha);
}

/// Writes packed chunk J (counted from the first packed one) into `chunk`, as stage_c_chunk would.
template <int J, int CHUNKS>
__device__ __forceinline__ void stage_packed_chunk(std::uint8_t* chunk, const PackedC<CHUNKS>& c) {
  stage_chunk_pairs(chunk, [&](int i) { return c.pair[16 * J + i]; });
}

__device__ __forceinline__ __half chunk_half(const std::uint8_t* chunk, int r, int c) {
  return *reinterpret_cast<const __half*>(chunk + chunk_offset(r, c));
}

/// The 8 halves at columns [8u + s, 8u + s + 8) of row r of a staged chunk (s < 8, and s = 0 when
/// u = 7): its 16-byte units u and u + 1, shifted down by s halves.
__device__ __forceinline__ uint4 chunk_halves8(const std::uint8_t* chunk, int r, int u, int s) {
  const uint4 lo = *reinterpret_cast<const uint4*>(chunk + chunk_offset(r, 8 * u));
  const uint4 hi = *reinterpret_cast<const uint4*>(chunk + chunk_offset(r, 8 * min(u + 1, 7)));
  return shift_down_halves(lo, hi, s);
}

/// Copies a chunk staged by stage_c_chunk to C(row0.., col0..), for any ldc and any alignment,
/// with 16-byte stores: 8 threads per row, each storing one 16-byte-aligned unit of the row's
/// 64 columns (8 units when the row starts on a 16-byte boundary, else 7, plus 8 single halves
/// at the row's two ends). Skips what lies outside C. (measured: docs/ladder.md#unaligned-shapes)
__device__ __forceinline__ void copy_chunk_rows(const Problem& p, const std::uint8_t* chunk, std::int64_t row0,
                                                std::int64_t col0) {
  const int t = threadIdx.x % 128, u = t % 8;
  const std::int64_t valid = p.n - col0;  // columns of the chunk inside C
#pragma unroll
  for (int pass = 0; pass < 4; ++pass) {  // 16 rows per pass
    const int r = pass * 16 + t / 8;
    if (row0 + r >= p.m) continue;
    __half* row = p.c + (row0 + r) * p.ldc + col0;
    const int past = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) / 2) % 8);  // halves past a boundary
    const int first = (8 - past) % 8;  // the first column on a 16-byte boundary
    const int c = first + 8 * u;
    if (c + 8 <= kCChunkCols && c < valid) {
      if (c + 8 <= valid) {
        *reinterpret_cast<uint4*>(row + c) = chunk_halves8(chunk, r, u, first);
      } else {
        for (int i = 0; i < 8 && c + i < valid; ++i) row[c + i] = chunk_half(chunk, r, c + i);
      }
    }
    if (past != 0) {  // columns [0, first) and [first + 56, 64): one each
      const int end = u < first ? u : 56 + u;
      if (end < valid) row[end] = chunk_half(chunk, r, end);
    }
  }
}

/// Writes one warpgroup's m64nN accumulators (tile at row0, col0) as fp32 partial sums into the
/// M×N slice `out`, skipping what lies outside C.
template <int N, typename Reg>
__device__ __forceinline__ void store_partials(const Problem& p, float* out, std::int64_t row0, std::int64_t col0,
                                               const Reg* d) {
  for_each_accumulator_pair<N>(p.m, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    if (r >= p.m || c >= p.n) return;
    out[r * p.n + c] = v.x;
    if (c + 1 < p.n) out[r * p.n + c + 1] = v.y;
  });
}

/// Where this thread's R accumulator registers sit in `slot` of the parking area: in 16-byte
/// groups, group j (registers 4j..4j+3) of thread t at group j·128 + t, so each warp moves whole
/// 512-byte runs. Step through the groups 128 apart.
template <int R>
__device__ __forceinline__ uint4* parked_groups(const StreamKHandover& h, int slot) {
  static_assert(R % 4 == 0, "16-byte groups of 32-bit registers");
  return reinterpret_cast<uint4*>(h.parked) + static_cast<std::size_t>(slot) * (R / 4) * 128 + threadIdx.x % 128;
}

/// Stream-K hand-over, writer side: one warpgroup's accumulators go to `slot` of the parking
/// area (parked_groups); once all 128 threads have stored (named barrier `barrier_id`), the
/// slot's flag is raised.
template <typename Reg, int R>
__device__ __forceinline__ void park_accumulators(const StreamKHandover& h, int slot, const Reg (&d)[R],
                                                  unsigned barrier_id) {
  static_assert(sizeof(Reg) == 4, "32-bit registers");
  uint4* out = parked_groups<R>(h, slot);
#pragma unroll
  for (int j = 0; j < R / 4; ++j) {
    uint4 v;
    memcpy(&v, &d[4 * j], 16);
    __stcg(out + j * 128, v);
  }
  named_barrier_sync(barrier_id, 128);
  if (threadIdx.x % 128 == 0) st_release_gpu(h.flags + slot, h.epoch);
}

__device__ __forceinline__ void add_parked(float& d, std::uint32_t bits) { d += __uint_as_float(bits); }
__device__ __forceinline__ void add_parked(std::uint32_t& d, std::uint32_t bits) {
  __half2 a, b;
  memcpy(&a, &d, 4);
  memcpy(&b, &bits, 4);
  a = __hadd2(a, b);
  memcpy(&d, &a, 4);
}

/// Stream-K hand-over, owner side: waits for `slot`'s flag and clears it (so a captured CUDA graph,
/// which repeats the launch's flag value, finds it clear on its next replay), then adds the parked
/// sums to the warpgroup's own (the same additions in the same order whatever the timing). Loads
/// go out 8 groups at a time, so the L2 latency is paid R/32 times, not R/4.
template <typename Reg, int R>
__device__ __forceinline__ void add_parked_accumulators(const StreamKHandover& h, int slot, Reg (&d)[R],
                                                        unsigned barrier_id) {
  constexpr int kBatch = R / 4 < 8 ? R / 4 : 8;
  static_assert(R % (4 * kBatch) == 0 && sizeof(Reg) == 4, "whole batches of 16-byte groups");
  if (threadIdx.x % 128 == 0) {
    while (ld_acquire_gpu(h.flags + slot) != h.epoch) __nanosleep(64);
    h.flags[slot] = 0;  // read once per launch; the next launch is stream-ordered after this one
  }
  named_barrier_sync(barrier_id, 128);
  const uint4* in = parked_groups<R>(h, slot);
#pragma unroll
  for (int j0 = 0; j0 < R / 4; j0 += kBatch) {
    uint4 v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) v[j] = __ldcg(in + (j0 + j) * 128);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      add_parked(d[4 * (j0 + j)], v[j].x);
      add_parked(d[4 * (j0 + j) + 1], v[j].y);
      add_parked(d[4 * (j0 + j) + 2], v[j].z);
      add_parked(d[4 * (j0 + j) + 3], v[j].w);
    }
  }
}

/// An fp32 tile of N columns staged in shared memory for the cluster's split-K sum: rows of N
/// floats, whose 16-byte units are XOR-swizzled by the row (unit u of row r at u ^ (r % 8), or
/// r % 4 with 4 units a row), so that a warp's fragment pairs (8 rows) and its float4 reads
/// (along a row, or down 8 rows) fall in different banks. The float index of (r, c).
template <int N>
__device__ __forceinline__ int staged_float_index(int r, int c) {
  constexpr int kUnits = N / 4, kMask = kUnits >= 8 ? 7 : kUnits - 1;
  return r * N + ((c / 4) ^ (r & kMask)) * 4 + c % 4;
}

/// Writes one warpgroup's m64nN accumulators (as floats) into rows row0..row0+63 of the staged
/// tile.
template <int N, typename Reg>
__device__ __forceinline__ void stage_accumulators(float* tile, int row0, const Reg* d) {
  for_each_accumulator_pair<N>(INT32_MAX, row0, 0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    *reinterpret_cast<float2*>(tile + staged_float_index<N>(static_cast<int>(r), static_cast<int>(c))) = v;
  });
}

/// The end of a cluster split-K tile (EpilogueMode::cluster_splits): every CTA of the cluster has
/// staged its split's sums of the ROWS×N tile at (m0, n0) at the same place in its shared memory
/// (stage_accumulators, then a cluster_sync). Split `rank` writes rows [rank·ROWS/splits,
/// (rank+1)·ROWS/splits) of the tile: each element is the sum of the splits' values in split
/// order (the same sum whatever the timing), then alpha and beta, then C. `thread` of `threads`
/// share the work, a float4 each. TRANSPOSED: p is the swapped problem, and (r, c) of its tile
/// goes to C(c, r); consecutive threads then take consecutive rows, which are C's contiguous
/// columns.
template <int ROWS, int N, bool TRANSPOSED>
__device__ __forceinline__ void add_staged_splits(const Problem& p, const float* tile, std::int64_t m0,
                                                  std::int64_t n0, int rank, int splits, int thread, int threads) {
  constexpr int kUnits = N / 4;
  const int first = rank * ROWS / splits, rows = (rank + 1) * ROWS / splits - first;
  for (int i = thread; i < rows * kUnits; i += threads) {
    const int r = first + (TRANSPOSED ? i % rows : i / kUnits), u = TRANSPOSED ? i / rows : i % kUnits;
    const std::int64_t row = m0 + r, col = n0 + 4 * u;
    if (row >= p.m || col >= p.n) continue;
    const float* at = tile + staged_float_index<N>(r, 4 * u);
    float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) {
      if (s < splits) {
        const float4 x = load_float4_from_cluster_cta(at, s);
        v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
      }
    }
    if constexpr (TRANSPOSED) {
#pragma unroll
      for (int k = 0; k < 4; ++k) store_c_transposed(p, row, col + k, v[k]);
    } else {
      store_c<4>(p, row, col, v);
    }
  }
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
