// SPDX-License-Identifier: Apache-2.0
// The check every persistent schedule must pass (src/engine/sm90/schedule.h), shared by the CPU
// tests of the scheduler and of random plans: every slice of every tile is computed exactly once;
// each stream-K tile is finished by the cluster holding its first slices, which takes exactly the
// sums the other pieces park, from later clusters only, and parked pieces come first in their runs.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace hgemm::detail::engine {

template <typename S>
struct Piece {
  int cluster, index, k_begin, k_end;
  typename S::Unit unit;
};

template <typename S>
void check_coverage(const S& s, const char* what) {
  SCOPED_TRACE(what);
  using Tile = std::tuple<int, int, int>;  // (product of the batch, m0, n0)
  std::map<Tile, std::vector<Piece<S>>> by_tile;
  std::map<Tile, std::vector<int>> slice_count;
  for (int g = 0; g < s.clusters; ++g) {
    const int units = s.units(g);
    for (int i = 0; i < units; ++i) {
      const auto u = s.unit(g, i);
      ASSERT_LT(u.k_begin, u.k_end) << "empty unit, cluster " << g << " unit " << i;
      ASSERT_LE(u.k_end, s.slices);
      auto& count = slice_count[{u.batch, u.m0, u.n0}];
      count.resize(s.slices);
      for (int kt = u.k_begin; kt < u.k_end; ++kt) ++count[kt];
      Piece<S> p{g, i, u.k_begin, u.k_end, {}};
      p.unit.park = u.park, p.unit.take_first = u.take_first, p.unit.take_last = u.take_last;
      p.unit.split = u.split;
      by_tile[{u.batch, u.m0, u.n0}].push_back(p);
    }
  }
  ASSERT_EQ(static_cast<int>(slice_count.size()), s.tiles) << "every tile";
  for (const auto& [tile, count] : slice_count)
    for (int kt = 0; kt < s.slices; ++kt)
      ASSERT_EQ(count[kt], 1) << "tile (" << std::get<0>(tile) << ": " << std::get<1>(tile) << ", "
                              << std::get<2>(tile) << ") slice " << kt;
  if (s.sk_slices == 0) {
    for (const auto& [tile, pieces] : by_tile)
      for (const Piece<S>& p : pieces) EXPECT_TRUE(p.unit.park < 0 && p.unit.take_first < 0);
    return;
  }
  for (const auto& [tile, pieces] : by_tile) {
    if (pieces.size() == 1) {  // a whole tile
      EXPECT_TRUE(pieces[0].unit.park < 0 && pieces[0].unit.take_first < 0);
      continue;
    }
    const bool half_tile_runs = 2 * (s.sk_slices / s.clusters) >= s.slices;
    if (half_tile_runs) EXPECT_LE(pieces.size(), 3u) << "at most three runs share a tile";
    std::set<int> parked;
    const Piece<S>* owner = nullptr;
    for (const Piece<S>& p : pieces) {
      if (p.k_begin == 0) {
        owner = &p;
        EXPECT_LT(p.unit.park, 0);
        EXPECT_EQ(p.index, s.units(p.cluster) - 1) << "the owner ends its run with the tile";
      } else {
        EXPECT_EQ(p.unit.park, p.cluster);
        EXPECT_EQ(p.index, s.dp_rounds) << "a parked piece starts its run";
        parked.insert(p.cluster);
      }
    }
    ASSERT_NE(owner, nullptr);
    std::set<int> taken;
    for (int w = owner->unit.take_first; w >= 0 && w <= owner->unit.take_last; ++w) taken.insert(w);
    EXPECT_EQ(taken, parked) << "the owner takes exactly the parked sums";
    EXPECT_EQ(owner->unit.take_first, owner->cluster + 1) << "waits point to the next clusters only";
    if (half_tile_runs) EXPECT_LE(owner->unit.take_last, owner->cluster + 2);
  }
}

}  // namespace hgemm::detail::engine
