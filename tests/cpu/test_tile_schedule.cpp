// SPDX-License-Identifier: Apache-2.0
// The engine's persistent scheduler (src/engine/sm90/schedule.h) under the plans the dispatch
// policy makes (src/dispatch/engine_policy.cpp): every slice of every tile is computed exactly
// once, by whole tiles, splits of K or stream-K pieces; each stream-K tile is finished by the
// cluster holding its first slices, which takes exactly the sums the other pieces park, from
// later clusters only (the next one or two when runs are at least half a tile), and parks come
// first in their runs, so no cluster waits for one that is itself waiting.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "dispatch/engine_policy.h"
#include "engine/sm90/schedule.h"
#include "schedule_coverage.h"

namespace hgemm::detail::engine {
namespace {

using Wide = TileSchedule<256, 256, 8, 64>;    // 2-CTA clusters of 128×256 tiles
using Narrow = TileSchedule<128, 128, 8, 64>;  // single CTAs of 128×128 (M <= 128)

constexpr int kH200WideClusters = 66, kH200NarrowClusters = 132;

/// A device that holds `wide_clusters` clusters of two CTAs and `narrow_clusters` single CTAs;
/// clusters of n > 2 CTAs: as many as the SMs hold (the policy's rules without the GPCs' limits),
/// or none, which keeps cluster split-K out of a plan.
Device device_with(int wide_clusters, int narrow_clusters, bool larger_clusters) {
  Device d = described_h200();
  d.sms = narrow_clusters;
  d.clusters[1] = narrow_clusters;
  d.clusters[2] = wide_clusters;
  for (int n = 3; n <= 8; ++n) d.clusters[n] = larger_clusters ? narrow_clusters / n : 0;
  return d;
}

Matmul problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  Matmul p;
  p.m = m, p.n = n, p.k = k, p.op_b = Op::T;
  p.lda = std::max<std::int64_t>(k, 1), p.ldb = std::max<std::int64_t>(k, 1), p.ldd = p.ldc = std::max<std::int64_t>(n, 1);
  p.a = p.b = p.d = reinterpret_cast<void*>(0x100000);
  return p;
}

/// The schedule the wide or narrow kernel builds for the persistent plan of m × n × k on
/// `clusters` clusters (wide: of 2 CTAs; narrow: single CTAs), cluster split-K aside.
template <typename S>
S plan(std::int64_t m, std::int64_t n, std::int64_t k, int clusters) {
  const bool wide = std::is_same_v<S, Wide>;
  const Device d = wide ? device_with(clusters, 2 * clusters, false) : device_with(clusters / 2, clusters, false);
  const KernelShape shape = wide ? KernelShape::Wide : KernelShape::Narrow;
  const Plan p = make_plan(problem(m, n, k), d, persistent_choice(shape, m, n, k, d));
  return S(p.m, p.n, p.k, p.splits, static_cast<int>(p.grid) / p.cluster, p.choice.scheduler == Scheduler::StreamK);
}

TEST(TileSchedule, WholeTilesAndSplitsCoverEverySliceOnce) {
  check_coverage(plan<Wide>(4096, 4096, 4096, kH200WideClusters), "4096^3");
  check_coverage(plan<Wide>(1000, 1000, 1000, kH200WideClusters), "1000^3");
  check_coverage(Wide(100, 60, 30000, 66, 66, false), "one tile, 66 splits");
  check_coverage(Narrow(128, 4096, 4096, 4, 128, false), "narrow, 4 splits");
  check_coverage(Wide(129, 127, 4093, 3, 5, false), "3 splits over 5 clusters");
  const Wide empty_k = plan<Wide>(4096, 4096, 0, kH200WideClusters);  // K = 0 never launches, but plans
  EXPECT_EQ(empty_k.splits, 1);
  EXPECT_EQ(empty_k.sk_slices, 0);
}

// A strided batch in one launch: the products' tiles one after another, each product's in
// grouped order, under whole tiles, splits and stream-K alike.
TEST(TileSchedule, BatchesCoverEveryProductOnce) {
  for (int batch : {1, 3, 64, 1024})
    for (int clusters : {1, 7, 66})
      for (bool stream_k : {false, true}) {
        const Wide s(300, 520, 1000, 1, clusters, stream_k && batch * 6 > clusters, batch);
        check_coverage(s, ("wide, batch " + std::to_string(batch) + ", " + std::to_string(clusters) + " clusters").c_str());
        EXPECT_EQ(s.tiles, 6 * batch);
      }
  check_coverage(Narrow(64, 64, 4000, 4, 66, false, 5), "narrow, 4 splits, batch 5");
  check_coverage(Narrow(64, 64, 64, 1, 132, false, 1024), "1024 products of one tile");
}

// Whole tiles go to the fewest clusters that take as many rounds as all of them would.
TEST(TileSchedule, BalancedClustersKeepTheRoundsAndEvenTheLoad) {
  using sm90::balanced_clusters;
  EXPECT_EQ(balanced_clusters(256, kH200WideClusters), 64) << "4096^3: 4 rounds either way";
  EXPECT_EQ(balanced_clusters(1024, kH200WideClusters), 64) << "8192x8192x1024: 16 rounds";
  EXPECT_EQ(balanced_clusters(896, kH200WideClusters), 64) << "4096x14336x4096: 14 rounds";
  EXPECT_EQ(balanced_clusters(66, kH200WideClusters), 66);
  EXPECT_EQ(balanced_clusters(67, kH200WideClusters), 34) << "two rounds";
  EXPECT_EQ(balanced_clusters(10, kH200WideClusters), 10) << "fewer units than clusters: one each";
  EXPECT_EQ(balanced_clusters(0, kH200WideClusters), 0);
  for (int fit : {1, 5, 64, 66, 132})
    for (int units = 1; units <= 5000; ++units) {
      const int g = balanced_clusters(units, fit);
      const int rounds = (units + fit - 1) / fit;
      ASSERT_GE(g, 1);
      ASSERT_LE(g, fit);
      ASSERT_EQ((units + g - 1) / g, rounds) << units << " units on " << fit << " clusters";
      if (g > 1) ASSERT_GT((units + g - 2) / (g - 1), rounds) << "one cluster fewer would take another round";
      const Wide s(256ll * units, 256, 256, 1, g, false);  // one tile column: `units` tiles
      int most = 0, least = INT_MAX;
      for (int c = 0; c < g; ++c) most = std::max(most, s.units(c)), least = std::min(least, s.units(c));
      ASSERT_LE(most - least, 1) << units << " units on " << g << " clusters";
    }
}

TEST(TileSchedule, StreamKCoversEverySliceOnceAndPairsHandOvers) {
  for (int clusters : {1, 2, 7, 66, 67, 132})
    for (int tiles_m : {1, 3, 9, 17})
      for (int tiles_n : {1, 5, 16, 23})
        for (std::int64_t k : {64, 1000, 1600, 4096, 4100}) {
          const Wide s(tiles_m * 256 - 3, tiles_n * 256, k, 1, clusters, true);
          if (s.tiles <= clusters) continue;  // stream-K needs more tiles than clusters
          const std::string what = std::to_string(tiles_m) + "x" + std::to_string(tiles_n) + " tiles, K " +
                                   std::to_string(k) + ", " + std::to_string(clusters) + " clusters";
          check_coverage(s, what.c_str());
        }
}

// With at most half as many tiles as clusters, the tiles' slices are cut into as many runs as
// clusters (in place of split-K): a tile may be shared by many runs, and its owner waits for all
// of them, later clusters that park first.
TEST(TileSchedule, FewTilesShareTheirSlicesAsStreamKRuns) {
  struct Case {
    std::int64_t m, n, k;
  };
  int shared = 0;
  for (int clusters : {2, 7, 66, 132})
    for (Case c : {Case{100, 60, 30000}, Case{1000, 1000, 1000}, Case{256, 4096, 4096}, Case{129, 127, 4093},
                   Case{600, 300, 640}, Case{1, 1, 257}}) {
      const Wide one(c.m, c.n, c.k, 1, clusters, false);
      if (one.tiles * 2 > clusters) continue;  // enough tiles: whole tiles or the usual stream-K
      const Wide s = plan<Wide>(c.m, c.n, c.k, clusters);
      const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + ", " +
                               std::to_string(clusters) + " clusters";
      SCOPED_TRACE(what);
      const bool splits = one.tiles * 2 <= clusters && std::min(clusters / one.tiles, one.slices / 4) > 1;
      if (!splits || one.tiles * one.slices < 2 * clusters) {
        EXPECT_EQ(s.sk_slices, 0) << "too few slices to share";
        continue;
      }
      ++shared;
      EXPECT_EQ(s.dp_rounds, 0);
      EXPECT_EQ(s.sk_slices, s.tiles * s.slices);
      EXPECT_EQ(s.splits, 1);
      check_coverage(s, what.c_str());
    }
  EXPECT_GE(shared, 9);
  const Narrow narrow = plan<Narrow>(128, 4096, 4096, kH200NarrowClusters);  // 32 tiles of 64 slices
  EXPECT_EQ(narrow.sk_slices, 32 * 64);
  check_coverage(narrow, "128x4096x4096, narrow");
}

// Few tiles: each tile gets the same number of runs, the fewest of at most 24 (narrow) or 16
// (wide) slices, at least 2, at most clusters / tiles; the other clusters stay idle. Every run lies
// inside one tile (one unit, parked unless it holds the tile's first slices) and each tile's owner
// takes the next runs' sums.
TEST(TileSchedule, FewTilesRunInsideOneTile) {
  struct Case {
    std::int64_t m, n, k;
    int runs_per_tile;
  };
  for (Case c : {Case{128, 4096, 4096, 3}, Case{128, 4096, 1024, 2}, Case{128, 8192, 8192, 2},
                 Case{100, 1000, 3000, 2}, Case{100, 60, 30000, 20}, Case{128, 128, 65536, 43},
                 Case{128, 640, 100000, 26}}) {
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    SCOPED_TRACE(what);
    const Narrow one(c.m, c.n, c.k, 1, kH200NarrowClusters, false);
    const Narrow s = plan<Narrow>(c.m, c.n, c.k, kH200NarrowClusters);
    ASSERT_GT(s.sk_slices, 0) << "few-tile stream-K";
    check_coverage(s, what.c_str());
    ASSERT_EQ(s.clusters, one.tiles * c.runs_per_tile);
    for (int g = 0; g < s.clusters; ++g) {
      ASSERT_EQ(s.units(g), 1) << "cluster " << g;
      const auto u = s.unit(g, 0);
      const int j = g % c.runs_per_tile;
      EXPECT_EQ(u.k_end - u.k_begin, s.slices * (j + 1) / c.runs_per_tile - s.slices * j / c.runs_per_tile);
      EXPECT_GE(u.k_end - u.k_begin, 2);
      if (j == 0) {
        EXPECT_EQ(u.take_first, g + 1);
        EXPECT_EQ(u.take_last, g + c.runs_per_tile - 1);
      }
    }
  }
  EXPECT_EQ(plan<Wide>(1024, 1024, 1024, kH200WideClusters).clusters, 32) << "16 tiles, 2 runs";
  EXPECT_EQ(plan<Wide>(256, 4096, 4096, kH200WideClusters).clusters, 64) << "16 tiles, 4 runs";
  EXPECT_EQ(plan<Wide>(512, 2048, 8192, kH200WideClusters).clusters, 64) << "at most 66 / 16";
  EXPECT_EQ(plan<Wide>(4096, 4352, 4096, kH200WideClusters).clusters, kH200WideClusters)
      << "more tiles than clusters: the usual stream-K";
}

// Cluster split-K (single-CTA tiles, few of them): as many splits as the SMs allow per tile, each
// at least 2 slices, at most the portable cluster size, else another path. The kernel takes its
// split from the schedule and the cluster's CTA rank from blockIdx.x % splits: with one CTA per
// unit, the two must agree, and every CTA has exactly one unit.
TEST(TileSchedule, ClusterSplitsOneTilePerCluster) {
  const Device d = device_with(kH200WideClusters, kH200NarrowClusters, true);
  auto splits = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    const EngineChoice c = persistent_choice(KernelShape::Narrow, m, n, k, d);
    return c.scheduler == Scheduler::ClusterSplitK ? c.splits : 0;
  };
  EXPECT_EQ(splits(128, 4096, 4096), 4) << "32 tiles";
  EXPECT_EQ(splits(128, 2048, 4096), 8) << "16 tiles";
  EXPECT_EQ(splits(100, 3000, 2000), 5) << "24 tiles";
  EXPECT_EQ(splits(120, 3000, 520), 4) << "9 slices";
  EXPECT_EQ(splits(128, 1024, 4096), 0) << "16 per tile fit";
  EXPECT_EQ(splits(128, 8576, 4096), 0) << "67 tiles";
  EXPECT_EQ(splits(128, 4096, 128), 0) << "2 slices";
  EXPECT_EQ(splits(100, 60, 30000), 0) << "one deep tile";
  // Where 32 clusters of 4 do not all fit (30 on an H200), 3 splits lose to stream-K.
  const Device h200 = described_h200();
  EXPECT_EQ(persistent_choice(KernelShape::Narrow, 128, 4096, 4096, h200).scheduler, Scheduler::StreamK);
  struct Case {
    std::int64_t m, n, k;
    int wanted, splits;
  };
  for (Case c : {Case{128, 4096, 4096, 3, 3}, Case{120, 3000, 520, 4, 3}, Case{100, 3000, 2000, 5, 5},
                 Case{128, 2048, 4096, 8, 8}, Case{7, 300, 200, 3, 2}}) {
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    SCOPED_TRACE(what);
    const Narrow splits(c.m, c.n, c.k, c.wanted, 1, false);
    ASSERT_EQ(splits.splits, c.splits) << "no empty split";
    const Narrow s(c.m, c.n, c.k, c.wanted, splits.total, false);  // the grid: one CTA per split
    check_coverage(s, what.c_str());
    for (int g = 0; g < s.clusters; ++g) {
      ASSERT_EQ(s.units(g), 1);
      const auto u = s.unit(g, 0);
      EXPECT_EQ(u.split, g % s.splits) << "CTA " << g << ": its split is its rank in a cluster of " << s.splits;
      EXPECT_EQ(u.m0 / 128 * s.tiles_n + u.n0 / 128, g / s.splits) << "one tile per cluster";
    }
  }
}

TEST(TileSchedule, StreamKOnlyWhereItPays) {
  auto sk = [](auto s) { return s.sk_slices > 0; };
  EXPECT_FALSE(sk(plan<Wide>(4096, 4096, 4096, kH200WideClusters))) << "last round 88% full";
  EXPECT_FALSE(sk(plan<Wide>(8192, 8192, 1024, kH200WideClusters))) << "16 slices deep";
  EXPECT_FALSE(sk(plan<Wide>(1792, 2048, 4096, kH200WideClusters))) << "fewer tiles than clusters";
  EXPECT_FALSE(sk(plan<Wide>(4096, 4096, 128, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Wide>(3000, 3000, 3000, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Wide>(4096, 4352, 4096, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Wide>(8192, 8192, 8192, kH200WideClusters)));
  // The GPU test set's stream-K cases (tests/gpu/gpu_util.cpp) take it on an H200.
  EXPECT_TRUE(sk(plan<Wide>(17000, 200, 1600, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Wide>(2300, 2800, 3100, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Wide>(16900, 250, 1700, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Wide>(17100, 256, 1700, kH200WideClusters)));
  EXPECT_TRUE(sk(plan<Narrow>(100, 17024, 1600, kH200NarrowClusters)));
  // Few tiles: stream-K in place of split-K.
  EXPECT_TRUE(sk(plan<Wide>(1024, 1024, 1024, kH200WideClusters))) << "16 tiles";
  EXPECT_TRUE(sk(plan<Narrow>(128, 4096, 4096, kH200NarrowClusters))) << "32 tiles";
  EXPECT_FALSE(sk(plan<Wide>(256, 256, 64, kH200WideClusters))) << "one slice to share";
  // 2300×2800×3100: 99 tiles, a round of whole tiles, then 33 cut into runs of half a tile.
  const Wide three = plan<Wide>(2300, 2800, 3100, kH200WideClusters);
  EXPECT_EQ(three.dp_rounds, 1);
  EXPECT_EQ(three.sk_slices, 33 * 49);
}

// The swapped decode tiles of one tile per CTA (src/dispatch/engine_policy.h): 64-row tiles while
// they fit one wave, then 128-row ones; none for fewer tiles than 7/16 of the SMs or more than
// the SMs hold.
TEST(SwappedTileRows, OneWaveThatKeepsDramBusy) {
  constexpr int kH200Sms = 132;
  EXPECT_EQ(swapped_tile_rows(57 * 64, kH200Sms), 0) << "57 tiles: too few CTAs streaming B";
  EXPECT_EQ(swapped_tile_rows(57 * 64 + 1, kH200Sms), 64) << "58 tiles of 64 rows";
  EXPECT_EQ(swapped_tile_rows(4096, kH200Sms), 64);
  EXPECT_EQ(swapped_tile_rows(132 * 64, kH200Sms), 64) << "one 64-row tile per SM";
  EXPECT_EQ(swapped_tile_rows(132 * 64 + 1, kH200Sms), 128) << "67 tiles of 128 rows";
  EXPECT_EQ(swapped_tile_rows(14336, kH200Sms), 128);
  EXPECT_EQ(swapped_tile_rows(132 * 128, kH200Sms), 128);
  EXPECT_EQ(swapped_tile_rows(132 * 128 + 1, kH200Sms), 0) << "two waves even of 128-row tiles";
  EXPECT_EQ(swapped_tile_rows(28672, kH200Sms), 0);
  EXPECT_EQ(swapped_tile_rows(4096, 0), 0) << "SM count unknown";
  EXPECT_EQ(swapped_tile_rows(4096, 114), 64) << "an H100 PCIe";
  EXPECT_EQ(swapped_tile_rows(1, kH200Sms), 0);
}

}  // namespace
}  // namespace hgemm::detail::engine
