// SPDX-License-Identifier: Apache-2.0
// The order in which persistent sm90 kernels take the tiles of C, and how many clusters share
// them out. Plain C++ (host and device).
#pragma once

#include "common/host_device.h"

namespace hgemm::detail::sm90 {

/// Tile `tile` of a tile_rows × tiles_n grid in grouped order: GROUP tile-rows at a time, column
/// after column, so that the tiles in flight at once share few rows of A and columns of B, which
/// then stay in L2. Sets the tile's row and column (in tiles).
template <int GROUP>
HGEMM_HOST_DEVICE void grouped_tile(int tile, int tile_rows, int tiles_n, int* row, int* col) {
  const int per_group = GROUP * tiles_n, first_row = tile / per_group * GROUP;
  const int left = tile_rows - first_row, rows = GROUP < left ? GROUP : left, r = tile % per_group;
  *row = first_row + r % rows;
  *col = r / rows;
}

/// The clusters a schedule of `units` whole units runs on, of the `fit` that fit at once: as few
/// as take the same number of rounds as all of them would, so every cluster gets the same number
/// of units (or one fewer).
inline HGEMM_HOST_DEVICE int balanced_clusters(int units, int fit) {
  if (units <= fit) return units;
  const int rounds = (units + fit - 1) / fit;
  return (units + rounds - 1) / rounds;
}

}  // namespace hgemm::detail::sm90
