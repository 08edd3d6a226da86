// small_tiles.h — what rung 04 (sm90.wgmma_tma_small_tiles) tells the other sm90 rungs: how it
// would cut C, and its launch, so that rung 03 can hand it the problems it runs faster (a C it
// covers in one wave of small tiles).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/problem.h"

namespace hgemm::detail::sm90_wgmma_tma_small_tiles {

/// Rung 04's cut of C: BM×BN tiles, one CTA each over the whole K.
struct TileChoice {
  int bm = 0, bn = 0;
  std::int64_t tiles = 0;
};
TileChoice choose_tiles(const Problem& p);

Status launch(const Problem& p, cudaStream_t stream, std::string* message);
bool auto_suits(const Problem& p);

}  // namespace hgemm::detail::sm90_wgmma_tma_small_tiles
