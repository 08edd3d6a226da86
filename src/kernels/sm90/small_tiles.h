// small_tiles.h — how rung 04 (sm90.wgmma_tma_small_tiles) cuts C, which the dispatch policy
// reads to decide where the rung runs a problem faster than the persistent one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/problem.h"

namespace hgemm::detail::sm90_wgmma_tma_small_tiles {

/// Rung 04's cut of C: BM×BN tiles, one CTA each over the whole K; `swapped`: the tiles are those
/// of the swapped problem (sm90::swapped, C^T = op(B)^T·op(A)^T), whose C is written transposed.
struct TileChoice {
  int bm = 0, bn = 0;
  std::int64_t tiles = 0;
  bool swapped = false;
};
TileChoice choose_tiles(const Problem& p);

/// Decode shapes with at most this many rows (the swapped problem's columns: one 16- or 32-wide
/// wgmma) can run swapped on rung 04's tiles.
constexpr std::int64_t kSwappedMaxRows = 32;

/// The tile height for the swapped problem of a decode-shaped product whose B has `rows` rows of
/// C's columns: 64 while that gives each of the `sms` SMs at most one tile, else 128 while that
/// does; 0 where rung 04 does not suit it: more tiles than SMs even at 128 rows (rung 03's
/// persistent loop keeps every SM busy there), or tiles for fewer than 7/16 of the SMs (a CTA
/// streams B at a bounded rate, so too few of them leave DRAM idle; rung 03 splits K instead;
/// measured: docs/ladder.md#decode-shapes).
inline int swapped_tile_rows(std::int64_t rows, int sms) {
  const std::int64_t t64 = (rows + 63) / 64, t128 = (rows + 127) / 128;
  if (sms <= 0 || t64 * 16 < static_cast<std::int64_t>(sms) * 7) return 0;
  if (t64 <= sms) return 64;
  return t128 <= sms ? 128 : 0;
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message);

}  // namespace hgemm::detail::sm90_wgmma_tma_small_tiles
