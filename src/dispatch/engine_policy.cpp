// SPDX-License-Identifier: Apache-2.0
#include "dispatch/engine_policy.h"

#include <algorithm>
#include <climits>

#include "engine/sm90/grouped.h"
#include "engine/sm90/params.h"

namespace hgemm::detail {
namespace {

using engine::EngineChoice;
using engine::KernelShape;
using engine::Scheduler;

std::int64_t tiles(std::int64_t m, std::int64_t n, std::int64_t bm, std::int64_t bn) {
  return ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
}

/// Few rows against many columns with op(A) = N: the rows become wgmma's narrow N when the
/// operands are swapped (C^T = op(B)^T·op(A)^T), so no tensor work goes to rows that do not exist.
bool runs_swapped(const Matmul& p) { return p.m <= 64 && p.n > p.m && p.op_a == Op::N && p.k > 0; }

/// A persistent schedule of whole tiles over all the clusters that fit: what the rules below read.
struct WholeTiles {
  int tiles = 0, slices = 0, clusters = 0;
};

WholeTiles whole_tiles(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, int rows, int cols,
                       int clusters) {
  return {static_cast<int>(tiles(m, n, rows, cols) * batch), static_cast<int>((k + 63) / 64), clusters};
}

/// Splits of K that fill the GPU when C has fewer tiles than half the clusters that fit (skinny
/// problems): each split keeps at least 4 slices, at most kMaxSplits splits (the reduction sums
/// many splits in parallel), so a one-tile C with a long K may take many splits
/// (measured: docs/ladder.md#split-k).
constexpr int kMaxSplits = 128;
int choose_splits(const WholeTiles& one) {
  if (one.tiles * 2 > one.clusters) return 1;
  const int by_gpu = one.clusters / one.tiles, by_depth = one.slices / 4;
  const int splits = std::min(by_gpu, by_depth);
  return splits < 1 ? 1 : std::min(splits, kMaxSplits);
}

/// Cluster split-K, for C with too few tiles to fill the GPU: the splits of each tile run as one
/// cluster, at most kMaxClusterSplits CTAs (the portable cluster size), and their sums meet in
/// distributed shared memory, with no workspace, flags or second pass. Splits: as many as the SMs
/// allow per tile, each at least 2 slices deep; 0 (not this way) when C has enough tiles. When
/// both would allow more than kMaxClusterSplits (very few tiles), the swapped kernels still take
/// kMaxClusterSplits as long as each split stays at most kMaxClusterSplitSlices deep, which beats
/// their split-K and stream-K; a deeper K, and the other kernels, go to stream-K or split-K, which
/// spread it wider. Against few-tile stream-K, too few splits lose, so there the cluster path needs
/// kMinClusterSplits (measured: docs/ladder.md#cluster-split-k).
constexpr int kMinClusterSplits = 4, kMaxClusterSplitSlices = 32;
int choose_cluster_splits(const WholeTiles& one, bool swapped) {
  if (one.tiles * 2 > one.clusters) return 0;
  int splits = std::min(one.clusters / one.tiles, one.slices / 2);
  if (swapped && one.slices <= engine::kMaxClusterSplits * kMaxClusterSplitSlices)
    splits = std::min(splits, engine::kMaxClusterSplits);
  return splits >= 2 && splits <= engine::kMaxClusterSplits ? splits : 0;
}

/// Whether stream-K pays over whole tiles: the clusters left idle by the last round must add up
/// to at least kStreamKMinIdleSlices slices per cluster, since stream-K has a fixed cost
/// (hand-over, L2 locality) that only enough idle time wins back. Fewer tiles than clusters keep
/// whole tiles (see wants_stream_k_for_few_tiles) (measured: docs/ladder.md#stream-k).
constexpr int kStreamKMinIdleSlices = 24;
bool wants_stream_k(const WholeTiles& one) {
  if (one.tiles <= one.clusters) return false;
  if (4ll * one.clusters * one.slices * (one.clusters + 1) > INT_MAX) return false;  // run bounds in 32 bits
  const int idle = (one.clusters - one.tiles % one.clusters) % one.clusters;
  return static_cast<long long>(idle) * one.slices >= static_cast<long long>(kStreamKMinIdleSlices) * one.clusters;
}

/// Whether a problem with too few tiles to fill the GPU (one that choose_splits would split)
/// shares its slices out as stream-K runs instead: the runs' sums meet in the kernel, not in
/// workspace and a second pass; each run is at least two slices (measured: docs/ladder.md#stream-k).
bool wants_stream_k_for_few_tiles(const WholeTiles& one) {
  if (choose_splits(one) <= 1) return false;
  if (4ll * one.clusters * one.slices * (one.tiles + 1) > INT_MAX) return false;  // run bounds in 32 bits
  return static_cast<long long>(one.tiles) * one.slices >= 2ll * one.clusters;
}

/// The clusters a stream-K schedule runs on. With at most half as many tiles as clusters, each
/// tile gets the same number r of runs and the other clusters stay idle: every run then lies
/// inside one tile, so no run parks the end of one tile and then owns the next. r is the fewest
/// runs of at most `max_run_slices` slices each (at least 2, at most clusters / tiles): each run
/// past the first adds a parked set that the tile's owner reads after the others, while each run
/// fewer leaves more SMs idle. A 128-wide slice carries half the math of a 256-wide one, so its
/// runs are longer (measured: docs/ladder.md#stream-k).
int stream_k_clusters(const WholeTiles& one, int bn) {
  if (one.tiles * 2 > one.clusters) return one.clusters;
  const int max_run_slices = bn == 256 ? 16 : 24;
  const int by_length = (one.slices + max_run_slices - 1) / max_run_slices, most = one.clusters / one.tiles;
  return one.tiles * std::clamp(by_length, 2, std::max(2, most));
}

/// The swapped persistent kernels with 16 columns keep split-K and the column reduction where the
/// wider ones take stream-K runs, which is faster there (measured: docs/ladder.md#stream-k).
constexpr int kSwappedStreamKMinColumns = 32;

}  // namespace

EngineChoice persistent_choice(KernelShape shape, std::int64_t m, std::int64_t n, std::int64_t k, const Device& d,
                               std::int64_t batch) {
  int bm = 0, bn = 0;
  engine::tile_of(shape, &bm, &bn);
  const int cluster = engine::multicast_cluster(shape);
  const WholeTiles one = whole_tiles(m, n, k, batch, cluster * bm, bn, std::max(1, d.clusters[cluster]));
  if (one.tiles == 0) return {shape, Scheduler::WholeTiles, 1, 0};  // an empty D: nothing runs
  const bool swapped = engine::is_swapped(shape);
  if (k > 0 && engine::has_cluster_split_k(shape)) {
    // Cluster split-K with as many splits as fit one cluster per tile at once.
    const int least = swapped && bn < kSwappedStreamKMinColumns ? 2 : kMinClusterSplits;
    int splits = choose_cluster_splits(one, swapped);
    while (splits >= least && d.clusters[splits] < one.tiles) --splits;
    if (splits >= least) return {shape, Scheduler::ClusterSplitK, splits, 0};
  }
  if (engine::has_stream_k(shape) && (!swapped || bn >= kSwappedStreamKMinColumns) && k > 0 &&
      ((!swapped && wants_stream_k(one)) || wants_stream_k_for_few_tiles(one)))
    return {shape, Scheduler::StreamK, 1, stream_k_clusters(one, bn)};
  const int splits = choose_splits(one);
  return {shape, splits > 1 ? Scheduler::SplitK : Scheduler::WholeTiles, splits, 0};
}

namespace {

/// A batch of products at most 128 × 128 with one side at most 64, over a K of at most two
/// slices: a persistent CTA walks many 128×128 tiles at least half empty one after another, while
/// 64×64 tiles, one per CTA and several CTAs per SM, overlap their loads and TMA stores
/// (measured: docs/ladder.md#small-tiles).
constexpr std::int64_t kSmallProductMaxSide = 128, kSmallProductMaxNarrowSide = 64, kSmallProductMaxDepth = 128;
bool small_products(const Matmul& p) {
  return p.batch > 1 && p.k <= kSmallProductMaxDepth && std::max(p.m, p.n) <= kSmallProductMaxSide &&
         std::min(p.m, p.n) <= kSmallProductMaxNarrowSide;
}

/// The one-tile-per-CTA kernel for p: 64×64 tiles for a batch of small products; for a decode
/// shape that runs swapped, the swapped tiles; otherwise the largest of 128×64, 64×64, 64×32,
/// 64×16 tiles (the last two with B K-major only) that cuts C into at least 3/4 as many tiles as
/// there are SMs, else the smallest.
KernelShape tile_per_cta_shape(const Matmul& p, const Device& d) {
  if (small_products(p)) return KernelShape::Tile64x64;
  const int swapped_rows =
      p.batch == 1 && runs_swapped(p) && p.m <= kSwappedTileMaxRows ? swapped_tile_rows(p.n, d.sms) : 0;
  if (swapped_rows == 128) return p.m <= 16 ? KernelShape::Swapped128x16 : KernelShape::Swapped128x32;
  if (swapped_rows == 64) return p.m <= 16 ? KernelShape::Swapped64x16 : KernelShape::Swapped64x32;
  const std::int64_t enough = std::max(1, d.sms * 3 / 4);
  const bool narrow_ok = p.op_b == Op::T;  // an N-major B comes in 64-wide blocks
  if (tiles(p.m, p.n, 128, 64) * p.batch >= enough) return KernelShape::Tile128x64;
  if (tiles(p.m, p.n, 64, 64) * p.batch >= enough || !narrow_ok) return KernelShape::Tile64x64;
  if (tiles(p.m, p.n, 64, 32) * p.batch >= enough) return KernelShape::Tile64x32;
  return KernelShape::Tile64x16;
}

/// Products at most 64 columns wide over a long K, with enough 128×64 tiles to fill the SMs: a
/// persistent tile (128 columns) would compute twice the columns there are, while the store a
/// tile per CTA does from registers stays small next to the k-loop; over a shorter K the
/// persistent 128×128 tiles win (measured: docs/ladder.md#small-tiles).
constexpr std::int64_t kTileMaxNarrowColumns = 64, kTileMinNarrowDepth = 2048;

/// Whether a tile per CTA runs p faster than the persistent kernels: a batch of small products; a
/// narrow C over a long K;
/// C with fewer 128×128 tiles than SMs, except the swapped shapes it does not take (M ≤ 64 with
/// op(A) = N, unless M > 32 and K ≤ 4096) and a long K over a C too small even for 64×16 tiles
/// (persistent split-K spreads it wider); and the decode shapes it runs swapped in one wave
/// (measured: docs/ladder.md#small-tiles, #decode-shapes).
bool tile_per_cta_suits(const Matmul& p, const Device& d) {
  if (small_products(p)) return true;
  if (p.batch == 1 && runs_swapped(p) && p.m <= kSwappedTileMaxRows && swapped_tile_rows(p.n, d.sms) > 0) return true;
  if (p.n <= kTileMaxNarrowColumns && p.k >= kTileMinNarrowDepth && !runs_swapped(p) &&
      tiles(p.m, p.n, 128, 64) * p.batch >= d.sms)
    return true;
  if (tiles(p.m, p.n, 128, 128) * p.batch >= d.sms) return false;
  if (runs_swapped(p) && !(p.m > 32 && p.k <= 4096)) return false;
  const std::int64_t smallest = p.op_b == Op::N ? tiles(p.m, p.n, 64, 64) : tiles(p.m, p.n, 64, 16);
  return smallest * p.batch * 2 >= d.sms || p.k <= 8192;
}

/// M ≤ 128 (unswapped) takes single 128×128 CTAs: a pair stacked along M would leave one idle
/// (measured: docs/ladder.md#decode-shapes). So does N ≤ 128: a 256-wide tile would compute
/// twice the columns there are (measured: docs/ladder.md#small-tiles); and so do sizes that
/// leave the 256×256 cluster tiles' last row and column mostly empty (wide_tiles_waste).
constexpr std::int64_t kNarrowMaxM = 128, kNarrowMaxN = 128;

/// Whether the 256×256 cluster tiles would compute at least 1.5 times the work of the 128×128
/// tiles (each the work of four), their last row and column of tiles mostly empty (a batch of
/// 384×384 products: 1.78 times); over a K of at least kWasteMinDepth, 1.25 times (640×640: 1.44,
/// 896×896: 1.31). Over a shorter K a tile is mostly epilogue, which the 128×128 tiles pay four
/// times as often (measured: docs/ladder.md#small-tiles).
constexpr std::int64_t kWasteMinDepth = 512;
bool wide_tiles_waste(const Matmul& p) {
  const std::int64_t wide = 4 * tiles(p.m, p.n, 256, 256), narrow = tiles(p.m, p.n, 128, 128);
  return 2 * wide >= 3 * narrow || (p.k >= kWasteMinDepth && 4 * wide >= 5 * narrow);
}

}  // namespace

int swapped_tile_rows(std::int64_t rows, int sms) {
  const std::int64_t t64 = (rows + 63) / 64, t128 = (rows + 127) / 128;
  if (sms <= 0 || t64 * 16 < static_cast<std::int64_t>(sms) * 7) return 0;
  if (t64 <= sms) return 64;
  return t128 <= sms ? 128 : 0;
}

engine::Plan plan_engine(const Matmul& p, const Device& d) {
  EngineChoice choice;
  if (tile_per_cta_suits(p, d)) {
    choice = {tile_per_cta_shape(p, d), Scheduler::TilePerCta, 1, 0};
  } else if (!runs_swapped(p)) {
    const bool narrow = p.m <= kNarrowMaxM || p.n <= kNarrowMaxN || wide_tiles_waste(p);
    choice = persistent_choice(narrow ? KernelShape::Narrow : KernelShape::Wide, p.m, p.n, p.k, d, p.batch);
  } else {
    const KernelShape shape = p.m <= 16 ? KernelShape::Skinny16 : p.m <= 32 ? KernelShape::Skinny32 : KernelShape::Skinny64;
    choice = persistent_choice(shape, p.n, p.m, p.k, d, p.batch);  // the swapped problem
  }
  return engine::make_plan(p, d, choice);
}

engine::Plan plan_pingpong(const Matmul& p, const Device& d) {
  return engine::make_plan(p, d, persistent_choice(KernelShape::PingPong, p.m, p.n, p.k, d, p.batch));
}

/// Grouped problems take whole tiles over every SM: the group sizes are known only on the
/// device, so nothing about them can choose a split or a grid. 256 columns read half the shared
/// memory per MAC of 128; 128 columns stay for narrow products (N ≤ 128), for more groups than
/// the wide kernel's table holds and for f16 accumulators (the wide kernel is built for f32 only).
engine::Plan plan_grouped(const GroupedMatmul& p, const Device& d) {
  const bool wide = p.n > engine::kGroupedNarrowBN && p.groups <= engine::kGroupedWideMaxGroups &&
                    p.accum == Accum::F32;
  const KernelShape shape = wide ? KernelShape::Grouped128x256 : KernelShape::Grouped128x128;
  return engine::make_grouped_plan(p, d, {shape, Scheduler::Grouped, 1, 0});
}

}  // namespace hgemm::detail
