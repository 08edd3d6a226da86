// SPDX-License-Identifier: Apache-2.0
// The engine's persistent scheduler: which tiles, splits of K and stream-K pieces each cluster of
// the grid works through. Plain C++ (host and device) so that a CPU test can check that every
// slice of every tile is computed once and that the stream-K hand-overs pair up
// (tests/cpu/test_tile_schedule.cpp).
#pragma once

#include <climits>
#include <cstdint>

#include "common/host_device.h"
#include "common/sm90/raster.h"

namespace hgemm::detail::engine {

/// Cluster g of the G in the grid takes units g, g + G, g + 2G, … where unit L is split L % splits
/// of tile L / splits (ROWS×COLS of C per cluster, the batch's products one after another, each
/// in grouped order: GROUP tile-rows at a time, column after column, so the tiles in flight share
/// rows of A and columns of B in L2); a split covers `per_split` slices of BK values of K.
///
/// Stream-K (only with splits = 1): whole tiles go out that way for `dp_rounds` rounds; the tiles
/// left — the last round's R tiles, or when R < G/2 those and one more round — are laid end to
/// end, slice after slice, and cut into G runs of equal length, one per cluster. Every run but the
/// one holding a tile's first slices parks its sums (that is the run's first piece, so it parks
/// early), and the one holding the first slices ends with the tile: it adds the parked sums in k
/// order and writes C. Waits point from cluster g to later clusters only, which park before they
/// wait for anyone. When there are more tiles than clusters a run is at least half a tile long, so
/// at most three runs share a tile, waits point to g + 1 and g + 2 only, and the grid makes
/// progress whenever three of its clusters can be resident at once. With at most half as many
/// tiles as clusters (dp_rounds = 0, wants_stream_k_for_few_tiles) runs are shorter and a tile's
/// owner may wait for many clusters: the grid is sized to what fits at once.
template <int ROWS, int COLS, int GROUP, int BK>
struct TileSchedule {
  int tile_rows, tiles_n, per_product, tiles, slices, per_split, splits, total;
  int clusters, dp_rounds;  // dp_rounds: whole tiles per cluster before its stream-K run
  int sk_slices;            // slices cut into runs (0: no stream-K)

  HGEMM_HOST_DEVICE TileSchedule(std::int64_t m, std::int64_t n, std::int64_t k, int wanted_splits, int clusters,
                                 bool stream_k, int batch = 1)
      : tile_rows(static_cast<int>((m + ROWS - 1) / ROWS)),
        tiles_n(static_cast<int>((n + COLS - 1) / COLS)),
        per_product(tile_rows * tiles_n),
        tiles(per_product * batch),
        slices(static_cast<int>((k + BK - 1) / BK)),
        per_split(slices > 0 ? (slices + wanted_splits - 1) / wanted_splits : 1),
        splits(slices > 0 ? (slices + per_split - 1) / per_split : 1),  // no empty split (K = 0: one)
        total(tiles * splits),
        clusters(clusters),
        dp_rounds(stream_k ? dp_rounds_for(tiles, clusters) : 0),
        sk_slices(stream_k ? (tiles - dp_rounds * clusters) * slices : 0) {}

  struct Unit {
    int m0, n0, split, k_begin, k_end;    // the tile's first row and column; k in slices
    int batch = 0;                        // the product of the batch it belongs to
    int park = -1;                        // stream-K: park the sums in this cluster's slot, write no C
    int take_first = -1, take_last = -1;  // stream-K: add the sums these clusters parked, then write C
  };

  /// Rounds of whole tiles before stream-K: tiles / G, one fewer when the last round would be
  /// less than half full (R = tiles % G < G/2), never below 0.
  static HGEMM_HOST_DEVICE int dp_rounds_for(int tiles, int clusters) {
    const int rounds = tiles / clusters - (2 * (tiles % clusters) >= clusters ? 0 : 1);
    return rounds < 0 ? 0 : rounds;
  }

  /// The units cluster g works through, in order.
  HGEMM_HOST_DEVICE int units(int g) const {
    if (sk_slices == 0) return g < total ? (total - 1 - g) / clusters + 1 : 0;
    return dp_rounds + (run_begin(g + 1) - 1) / slices - run_begin(g) / slices + 1;
  }

  HGEMM_HOST_DEVICE Unit unit(int g, int i) const {
    if (sk_slices == 0 || i < dp_rounds) return grid_unit(g + i * clusters);
    const int begin = run_begin(g), end = run_begin(g + 1);
    const int t = begin / slices + (i - dp_rounds);  // among the stream-K tiles
    const int first = t * slices;
    Unit u = grid_unit(dp_rounds * clusters + t);
    u.k_begin = (begin > first ? begin : first) - first;
    u.k_end = (end < first + slices ? end : first + slices) - first;
    if (u.k_begin > 0) {
      u.park = g;
    } else if (u.k_end < slices) {
      u.take_first = run_holding(first + u.k_end);
      u.take_last = run_holding(first + slices - 1);
    }
    return u;
  }

 private:
  HGEMM_HOST_DEVICE int run_begin(int g) const { return g * sk_slices / clusters; }  // fits: the policy checks it

  /// The cluster whose run holds stream-K slice x.
  HGEMM_HOST_DEVICE int run_holding(int x) const {
    int g = x * clusters / sk_slices;
    while (g > 0 && run_begin(g) > x) --g;
    while (g + 1 < clusters && run_begin(g + 1) <= x) ++g;
    return g;
  }

  HGEMM_HOST_DEVICE Unit grid_unit(int L) const {
    const int tile = L / splits, split = L % splits;
    int row = 0, col = 0;
    sm90::grouped_tile<GROUP>(tile % per_product, tile_rows, tiles_n, &row, &col);
    const int k_end = (split + 1) * per_split;
    Unit u{row * ROWS, col * COLS, split, split * per_split, k_end < slices ? k_end : slices};
    u.batch = tile / per_product;
    return u;
  }
};

}  // namespace hgemm::detail::engine
