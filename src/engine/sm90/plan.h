// A plan of the engine: which compiled kernel runs a problem, with which scheduler and store path,
// on how many CTAs, with how much workspace. plan_engine (src/dispatch/engine_policy.h) chooses
// the kernel and the scheduler; make_plan works out the rest. Both are pure host functions, so
// the CPU tests check every plan; launch (launch.h) then only carries a plan out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/device.h"
#include "common/matmul.h"
#include "engine/sm90/params.h"

namespace hgemm::detail::engine {

/// The engine's compiled kernels (mainloop shapes).
enum class KernelShape : std::uint8_t {
  Wide,       ///< persistent, 128×256 per CTA, clusters of 2 along M multicasting B, 4 stages
  Narrow,     ///< persistent, 128×128 single CTAs, 6 stages (M ≤ 128: a pair would leave one idle)
  Skinny16,   ///< persistent on the swapped problem (few rows of C as wgmma's N): 128×16
  Skinny32,   ///< ... 128×32
  Skinny64,   ///< ... 128×64
  Tile128x64, ///< one tile per CTA, one warpgroup, the deepest ring, a producer warp
  Tile64x64,
  Tile64x32,  ///< (B K-major only: an N-major B comes in 64-wide blocks)
  Tile64x16,
  Swapped64x16,   ///< one tile per CTA on the swapped problem (decode shapes), D written transposed
  Swapped64x32,
  Swapped128x16,
  Swapped128x32,
  Grouped128x128,  ///< persistent 128×128 single CTAs over the units of a grouped problem (grouped.h)
  Grouped128x256,  ///< ... 128×256 (at most kGroupedWideMaxGroups groups)
  PingPong,        ///< persistent, 64×256 per consumer warpgroup in turns (pingpong.cuh), clusters of 2, 4 stages
};

enum class Scheduler : std::uint8_t {
  TilePerCta,     ///< one CTA per tile, each over the whole K
  WholeTiles,     ///< persistent, whole tiles in grouped order over the balanced clusters
  SplitK,         ///< persistent, each tile's K in splits; fp32 partials and a second pass
  StreamK,        ///< persistent, the last tiles' K shared between clusters (hand-over in workspace)
  ClusterSplitK,  ///< one cluster per tile, its CTAs the splits, added in distributed shared memory
  Grouped,        ///< persistent, whole tiles of groups sized on the device (grouped_schedule.h)
};

/// What the dispatch policy decides for the engine.
struct EngineChoice {
  KernelShape shape = KernelShape::Wide;
  Scheduler scheduler = Scheduler::WholeTiles;
  int splits = 1;    ///< SplitK, ClusterSplitK
  int clusters = 0;  ///< StreamK: clusters in the grid (0: all that fit)
};

struct Plan {
  EngineChoice choice;
  bool swapped = false;          ///< the kernel runs C^T = op(B)^T·op(A)^T and writes D transposed
  std::int64_t m = 0, n = 0, k = 0;  ///< the problem the kernel runs
  std::int64_t batch = 1;            ///< products of a strided batch, all in the one launch
  int bm = 0, bn = 0;            ///< its tile (per CTA)
  int cluster = 1;               ///< CTAs per cluster
  int clusters = 0;              ///< clusters in the grid
  unsigned grid = 0;             ///< CTAs
  int splits = 1;                ///< splits of K of the schedule
  StorePath store = StorePath::Registers;
  bool repack_a = false, repack_b = false;  ///< operands copied where TMA cannot read them in place
  std::size_t partials_bytes = 0;  ///< split-K partial sums
  std::size_t handover_bytes = 0;  ///< stream-K parked accumulators and flags
  std::size_t repack_bytes = 0;    ///< the aligned copies of A and B
  std::size_t workspace_bytes() const { return partials_bytes + handover_bytes + repack_bytes; }
};

/// Whether the kernel of this shape runs the swapped problem.
bool is_swapped(KernelShape s);
/// Whether it is a persistent kernel (Wide, Narrow, Skinny*).
bool is_persistent(KernelShape s);
/// Its tile: rows and columns of the problem it runs, per CTA.
void tile_of(KernelShape s, int* bm, int* bn);
/// CTAs per cluster of a persistent kernel of this shape along M, B shared between them by
/// multicast (2 for Wide and PingPong, else 1; cluster split-K's clusters are its splits instead).
int multicast_cluster(KernelShape s);
/// Whether the kernel of this shape has the stream-K and cluster split-K schedulers.
bool has_stream_k(KernelShape s);

/// The rest of the plan for p (every product of its batch in one launch) on d under `choice`.
Plan make_plan(const Matmul& p, const Device& d, const EngineChoice& choice);

/// One line: kernel, scheduler, grid, store path, workspace.
std::string describe(const Plan& plan);

}  // namespace hgemm::detail::engine
