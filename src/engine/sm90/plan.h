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
  bool repack_a = false, repack_b = false;  ///< operands copied where TMA cannot read them in place
  std::size_t partials_bytes = 0;  ///< split-K partial sums
  std::size_t handover_bytes = 0;  ///< stream-K parked accumulators and flags
  std::size_t repack_bytes = 0;    ///< the aligned copies of A and B
  std::size_t workspace_bytes() const { return partials_bytes + handover_bytes + repack_bytes; }
};

/// Whether the kernel of this shape runs the swapped problem.
constexpr bool is_swapped(KernelShape s) { return shape_info(s).swapped; }
/// Whether make_plan gives it a persistent schedule (Wide, Narrow, Skinny*, PingPong).
constexpr bool is_persistent(KernelShape s) { return shape_info(s).persistent; }
/// Its tile: rows and columns of the problem it runs, per CTA.
inline void tile_of(KernelShape s, int* bm, int* bn) { *bm = shape_info(s).bm, *bn = shape_info(s).bn; }
/// CTAs per cluster of a persistent kernel of this shape along M, B shared between them by
/// multicast (cluster split-K's clusters are its splits instead).
constexpr int multicast_cluster(KernelShape s) { return shape_info(s).cluster; }
/// Whether the kernel of this shape has the stream-K and cluster split-K schedulers.
constexpr bool has_stream_k(KernelShape s) { return shape_info(s).stream_k; }

/// The rest of the plan for p (every product of its batch in one launch) on d under `choice`.
Plan make_plan(const Matmul& p, const Device& d, const EngineChoice& choice);

/// One line: kernel, scheduler, grid, store path, workspace.
std::string describe(const Plan& plan);

}  // namespace hgemm::detail::engine
