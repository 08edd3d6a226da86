// SPDX-License-Identifier: Apache-2.0
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
#include "engine/sm90/kernel_shapes.h"
#include "engine/sm90/params.h"

namespace hgemm::detail::engine {

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
  /// The instantiation's store code (TileFinish): Plain where D = alpha·op(A)·op(B) alone is
  /// stored (by TMA for a persistent kernel, any path for a tile per CTA), FusedInRegisters where
  /// the Wide or Narrow kernel finishes a fused epilogue in registers and stores by TMA.
  TileFinish finish = TileFinish::Any;
  /// FusedInRegisters with aux, whole tiles, asked for (GemmOptions::aux_by_tma): aux staged in shared memory and stored by TMA, as D
  /// is (aux 16-byte aligned, its rows, N and batch stride whole 16-byte units); else from registers.
  bool aux_by_tma = false;
  bool short_k = false;  ///< the tiles per CTA's short-K entry (64-row tiles, f32 accumulators, K ≤ 2 slices)
  bool repack_a = false, repack_b = false;  ///< operands copied where TMA cannot read them in place
  std::size_t partials_bytes = 0;  ///< split-K partial sums
  std::size_t handover_bytes = 0;  ///< stream-K parked accumulators and flags
  std::size_t repack_bytes = 0;    ///< the aligned copies of A and B
  std::size_t workspace_bytes() const { return partials_bytes + handover_bytes + repack_bytes; }
};

/// The deepest K at which 64-row tiles per CTA take the short-K entry (Plan::short_k): two
/// k-slices of 64, a ring small enough for eight CTAs of one warpgroup per SM.
constexpr std::int64_t kShortK = 2 * 64;

/// Whether the kernel of this shape runs the swapped problem.
constexpr bool is_swapped(KernelShape s) { return shape_info(s).swapped; }
/// Whether make_plan gives it a persistent schedule (Wide, Narrow, Skinny*, PingPong).
constexpr bool is_persistent(KernelShape s) { return shape_info(s).persistent; }
/// Its tile: rows and columns of the problem it runs, per CTA.
inline void tile_of(KernelShape s, int* bm, int* bn) { *bm = shape_info(s).bm, *bn = shape_info(s).bn; }
/// CTAs per cluster of a persistent kernel of this shape along M, B shared between them by
/// multicast (cluster split-K's clusters are its splits instead).
constexpr int multicast_cluster(KernelShape s) { return shape_info(s).cluster; }
/// Whether the kernel of this shape has the stream-K scheduler.
constexpr bool has_stream_k(KernelShape s) { return shape_info(s).stream_k; }
/// Whether it has cluster split-K (its splits the CTAs of a cluster, added in shared memory).
constexpr bool has_cluster_split_k(KernelShape s) { return shape_info(s).cluster_split_k; }

/// The rest of the plan for p (every product of its batch in one launch) on d under `choice`.
Plan make_plan(const Matmul& p, const Device& d, const EngineChoice& choice);

/// The store code's name: "general", "plain", "fused in registers".
const char* finish_name(TileFinish f);

/// One line: kernel, scheduler, grid, store path, store code (unless general), workspace.
std::string describe(const Plan& plan);

}  // namespace hgemm::detail::engine
