// SPDX-License-Identifier: Apache-2.0
// The shared-memory side of one operand tile of the sm90 kernels and engine, and the ring slot
// that holds a tile of A and one of B.
//
// A k-slice is BK = 64 halves deep: exactly one 128-byte row of the TMA's 128B swizzle, so every
// tile is a stack of 1 KiB swizzle atoms (8 rows × 128 bytes) and wgmma reads it without bank
// conflicts. An operand is either
//   K-major  (A with op N, B with op T): the tile is ROWS rows of 64 k-values; one TMA box.
//   MN-major (A with op T, B with op N): the tile is ROWS/64 blocks of [64 k][64 m-or-n]; one TMA
//            box per block; wgmma reads it with its transpose bit set.
// The matching tensor maps are built on the host (tensor_maps.h).
#pragma once

#include <cstdint>

#include "common/sm90/ptx.cuh"

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

  /// As load, from matrix z of a batch (a map of rank 3: width, rows, batch).
  __device__ static void load_batched(std::uint8_t* dst, const CUtensorMap* map, int row0, int k0, int z,
                                      std::uint64_t* bar, int part = 0, int parts = 1, std::uint16_t mask = 0) {
    if constexpr (!MN_MAJOR) {
      const int rows = ROWS / parts;
      issue_3d(dst + part * rows * kSwizzleRow, map, k0, row0 + part * rows, z, bar, mask);
    } else {
      const int blocks = ROWS / 64 / parts;
      for (int j = part * blocks; j < (part + 1) * blocks; ++j)
        issue_3d(dst + j * kBlockBytes, map, row0 + 64 * j, k0, z, bar, mask);
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
  __device__ static void issue_3d(std::uint8_t* dst, const CUtensorMap* map, int x, int y, int z, std::uint64_t* bar,
                                  std::uint16_t mask) {
    if (mask)
      tma_load_3d_multicast(dst, map, x, y, z, bar, mask);
    else
      tma_load_3d(dst, map, x, y, z, bar);
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

/// As fill_slot, from matrix za of A's batch and zb of B's (maps of rank 3).
template <typename TileA, typename TileB>
__device__ __forceinline__ void fill_slot_batched(RingSlot<TileA, TileB>& slot, std::uint64_t* full,
                                                  const CUtensorMap* map_a, const CUtensorMap* map_b, int m0, int n0,
                                                  int kt, int za, int zb, int b_part = 0, int b_parts = 1,
                                                  std::uint16_t mask = 0) {
  mbar_arrive_expect_tx(full, TileA::kBytes + TileB::kBytes);
  TileA::load_batched(slot.a, map_a, m0, kt * BK, za, full);
  TileB::load_batched(slot.b, map_b, n0, kt * BK, zb, full, b_part, b_parts, mask);
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

}  // namespace hgemm::detail::sm90
