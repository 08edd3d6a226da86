// SPDX-License-Identifier: Apache-2.0
// The grouped scheduler (mixture-of-experts layouts): the units are (group, tile row, tile
// column) over groups whose sizes exist only on the device: row counts (contiguous, masked) or
// slices of K (K-grouped, where every group has all M rows). The kernel first turns the sizes
// into a table (each group's clamped end and its first unit); CTA c of the grid then
// takes units c, c + grid, ... below the table's total, and a unit finds its group by binary
// search. Plain C++ (host and device) so that a CPU test checks the table and the mapping
// (tests/cpu/test_grouped.cpp); the kernel builds the same table in parallel (grouped.cuh).
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "common/sm90/raster.h"
#include "hgemm/hgemm.h"

namespace hgemm::detail::engine {

/// The clamped end (row, or k for K-grouped) of a group whose raw end is `raw`, after a group
/// ending at `prev` (≤ bound): decreasing offsets give empty groups, none reaches past the bound.
HGEMM_HOST_DEVICE inline int grouped_end(int raw, int prev, int bound) {
  return raw < prev ? prev : raw > bound ? bound : raw;
}

/// The rows of a masked group: m_valid clamped to [0, M].
HGEMM_HOST_DEVICE inline int masked_rows(int raw, int bound) { return raw < 0 ? 0 : raw > bound ? bound : raw; }

/// Units of ROWS × COLS tiles, each group's in grouped raster order (GROUP tile rows at a time,
/// as TileSchedule), the groups one after another.
template <int ROWS, int COLS, int GROUP>
struct GroupedSchedule {
  const int* first_unit;  ///< [groups + 1]: the first unit of group g; [groups]: the total
  const int* ends;        ///< [groups]: contiguous, the group's clamped end row; masked, its rows; K-grouped, its end k
  int groups, tiles_n;
  GroupedLayout layout;
  int rows_each;  ///< K-grouped: the rows of every group (M)

  struct Unit {
    int group;
    int row0;  ///< the group's first row in A and D (contiguous; 0 otherwise)
    int rows;  ///< the group's rows
    int m0, n0;  ///< the tile's first row inside the group, its first column
    int k_begin, k_end;  ///< K-grouped: the group's slice of K (0, 0 otherwise: all of K)
  };

  HGEMM_HOST_DEVICE int total() const { return first_unit[groups]; }

  HGEMM_HOST_DEVICE int group_begin(int g) const { return layout == GroupedLayout::Masked || g == 0 ? 0 : ends[g - 1]; }
  HGEMM_HOST_DEVICE int group_rows(int g) const {
    return layout == GroupedLayout::KGrouped ? rows_each : ends[g] - group_begin(g);
  }
  HGEMM_HOST_DEVICE int tiles_of(int rows) const { return (rows + ROWS - 1) / ROWS * tiles_n; }

  /// Unit u < total(): the last group whose first unit is ≤ u (empty groups share their first
  /// unit with the next one, so this is the non-empty group holding u).
  HGEMM_HOST_DEVICE Unit unit(int u) const {
    int lo = 0, hi = groups - 1;  // first_unit[lo] <= u < first_unit[hi + 1]
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (first_unit[mid] <= u)
        lo = mid;
      else
        hi = mid - 1;
    }
    Unit x;
    x.group = lo, x.rows = group_rows(lo);
    const bool k_grouped = layout == GroupedLayout::KGrouped;
    x.row0 = k_grouped ? 0 : group_begin(lo);
    x.k_begin = k_grouped ? group_begin(lo) : 0, x.k_end = k_grouped ? ends[lo] : 0;
    int row = 0, col = 0;
    sm90::grouped_tile<GROUP>(u - first_unit[lo], (x.rows + ROWS - 1) / ROWS, tiles_n, &row, &col);
    x.m0 = row * ROWS, x.n0 = col * COLS;
    return x;
  }
};

/// The rows and the table entry of group g from its size as the caller wrote it, after a group
/// ending at `prev`: what the host's and the kernel's table builders share. `bound` clamps the
/// sizes (M, or K for K-grouped); K-grouped groups all have rows_each rows.
HGEMM_HOST_DEVICE inline int grouped_entry(GroupedLayout layout, int raw, int* prev, int bound, int rows_each,
                                           int* end) {
  if (layout == GroupedLayout::Masked) return *end = masked_rows(raw, bound);
  *end = grouped_end(raw, *prev, bound);
  const int rows = layout == GroupedLayout::KGrouped ? rows_each : *end - *prev;
  *prev = *end;
  return rows;
}

/// The table of a grouped launch built one group after another (what the kernel builds in
/// parallel): `sizes` are the offsets (contiguous, K-grouped) or m_valid (masked) as the caller
/// wrote them, `tiles_n` the tile columns of N.
template <int ROWS>
HGEMM_HOST_DEVICE void build_grouped_table(const std::int32_t* sizes, int groups, GroupedLayout layout, int bound,
                                           int rows_each, int tiles_n, int* ends, int* first_unit) {
  int prev = 0, units = 0;
  for (int g = 0; g < groups; ++g) {
    const int rows = grouped_entry(layout, sizes[g], &prev, bound, rows_each, &ends[g]);
    first_unit[g] = units;
    units += (rows + ROWS - 1) / ROWS * tiles_n;
  }
  first_unit[groups] = units;
}

/// Units a grouped launch can have at most, whatever the sizes on the device: contiguous groups
/// add at most one partial tile row each to the bound's; masked and K-grouped groups have at
/// most (exactly) M rows each.
inline std::int64_t grouped_units_bound(GroupedLayout layout, std::int64_t groups, std::int64_t m, std::int64_t n,
                                        int rows, int cols) {
  const std::int64_t tile_rows = (m + rows - 1) / rows, tiles_n = (n + cols - 1) / cols;
  if (layout != GroupedLayout::Contiguous) return groups * tile_rows * tiles_n;
  const std::int64_t most = tile_rows + groups < groups * tile_rows ? tile_rows + groups : groups * tile_rows;
  return most * tiles_n;
}

}  // namespace hgemm::detail::engine
