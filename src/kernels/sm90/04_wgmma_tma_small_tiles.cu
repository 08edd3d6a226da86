// 04_wgmma_tma_small_tiles.cu — sm90.wgmma_tma_small_tiles
// Rung 01's kernel (one warpgroup, TMA ring, wgmma) with the tile chosen per problem, for C too
// small to give every SM a big tile: a decode-shaped C (128×4096) has 32 tiles of 128×128 for 132
// SMs, 1024³ has 64. Rung 03 answers with split-K, which writes fp32 partial sums and adds them
// in a second pass; here C is cut into smaller tiles instead, down to 64×16, until there are
// about as many tiles as SMs, each CTA runs the whole K, and C is written once from registers.
//  * A smaller tile does less math per byte loaded, but such problems are bound by DRAM or by
//    latency, not by the tensor cores; what pays is every SM streaming its own part of B.
//  * With one CTA per SM the rest of shared memory is free, so the ring is as deep as it allows
//    (up to 16 slices of 64 k): more loads in flight per SM, which is what streaming B needs.
//  * A producer warp fills the ring, so the consumers never wait for a refill, as they do with
//    rung 01's scheme of thread 0 refilling between its wgmmas (measured: docs/ladder.md#small-tiles).
//  * Tiles narrower than 64 columns need B K-major (op T): an N-major B is loaded in 64-wide
//    blocks (common/sm90/tile.cuh), so op N keeps 64 columns or more.
//  * With few tile rows the CTAs take the tiles down the columns of C, so that those loading the
//    same B slices run side by side and share them through L2 (wgmma_tma.cuh: tile_origin).
//  * Decode shapes (M ≤ 32 rows of A with op N, against a long N) run swapped, C^T =
//    op(B)^T·op(A)^T: B's rows become the tile rows (64 or 128, wgmma's M) and C's few rows its
//    16- or 32-wide N, so no tensor work or ring space goes to rows that do not exist, and C^T is
//    written transposed into C. Each CTA streams its 64 or 128 rows of B over the whole K with
//    12–16 slices in flight and nothing to add up afterwards (measured against rung 03's skinny
//    path: docs/ladder.md#decode-shapes; small_tiles.h: swapped_tile_rows says where).
#include "common/occupancy.h"
#include "kernels/sm90/small_tiles.h"
#include "kernels/sm90/wgmma_tma.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma_small_tiles {

using namespace sm90;

template <int BM, int BN>
std::int64_t tiles(const Problem& p) {
  return ((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
}

/// The tile height of p's swapped problem if p is a decode shape that runs swapped, else 0
/// (small_tiles.h: kSwappedMaxRows, swapped_tile_rows).
int swapped_rows(const Problem& p) {
  if (!takes_skinny_path(p) || p.m > kSwappedMaxRows) return 0;
  return swapped_tile_rows(p.n, sm_count());
}

/// For a decode shape that runs swapped, the tiles of the swapped problem (C^T); otherwise the
/// largest of 128×64, 64×64, 64×32, 64×16 tiles (the last two with B K-major only) that cuts C
/// into at least 3/4 as many tiles as there are SMs, else the smallest.
TileChoice choose_tiles(const Problem& p) {
  if (const int bm = swapped_rows(p); bm > 0) return {bm, p.m <= 16 ? 16 : 32, (p.n + bm - 1) / bm, true};
  const std::int64_t enough = std::max(1, sm_count() * 3 / 4);
  const bool narrow_ok = !b_mn_major(p);
  if (tiles<128, 64>(p) >= enough) return {128, 64, tiles<128, 64>(p)};
  if (tiles<64, 64>(p) >= enough || !narrow_ok) return {64, 64, tiles<64, 64>(p)};
  if (tiles<64, 32>(p) >= enough) return {64, 32, tiles<64, 32>(p)};
  return {64, 16, tiles<64, 16>(p)};
}

/// Runs the swapped problem q on tiles of bm rows by BN columns, C written transposed.
template <int BN>
Status launch_swapped(const Problem& q, int bm, cudaStream_t stream, std::string* message) {
  if (bm == 128) return launch_one_warpgroup<DeepestRing<128, BN, /*TRANSPOSED_C=*/true>>(q, stream, message);
  return launch_one_warpgroup<DeepestRing<64, BN, /*TRANSPOSED_C=*/true>>(q, stream, message);
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  const TileChoice t = choose_tiles(p);
  if (t.swapped)
    return t.bn == 16 ? launch_swapped<16>(swapped(p), t.bm, stream, message)
                      : launch_swapped<32>(swapped(p), t.bm, stream, message);
  if (t.bm == 128) return launch_one_warpgroup<DeepestRing<128, 64>>(p, stream, message);
  if (t.bn == 64) return launch_one_warpgroup<DeepestRing<64, 64>>(p, stream, message);
  if (t.bn == 32) return launch_one_warpgroup<DeepestRing<64, 32>>(p, stream, message);
  return launch_one_warpgroup<DeepestRing<64, 16>>(p, stream, message);
}

}  // namespace sm90_wgmma_tma_small_tiles

const KernelEntry& entry_sm90_wgmma_tma_small_tiles() {
  static const KernelEntry e{{"sm90.wgmma_tma_small_tiles", "sm90", 4,
                              "rung 01's kernel with tiles down to 64x16, a deep ring and a producer warp, so that small C still fills the SMs; decode shapes swapped",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma_small_tiles::launch, &sm90::supports};
  return e;
}

}  // namespace hgemm::detail
