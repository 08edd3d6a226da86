// SPDX-License-Identifier: Apache-2.0
// The engine's part of the dispatch policy: for a problem on a device, which of the engine's
// kernels runs it and with which scheduler (a tile per CTA, whole tiles, split-K, stream-K,
// cluster split-K), and from that the whole plan. Pure host code.
#pragma once

#include "common/device.h"
#include "common/grouped_matmul.h"
#include "common/matmul.h"
#include "engine/sm90/plan.h"

namespace hgemm::detail {

/// The engine's plan for one product of p on d.
engine::Plan plan_engine(const Matmul& p, const Device& d);

/// The ping-pong kernel's plan for p, whatever its shape: whole tiles, or split-K where C has too
/// few tiles to fill the GPU (it has no stream-K). What "engine.sm90_pingpong" runs; plan_engine
/// does not choose it yet.
engine::Plan plan_pingpong(const Matmul& p, const Device& d);

/// The engine's plan for a grouped problem (one launch for every group).
engine::Plan plan_grouped(const GroupedMatmul& p, const Device& d);

/// The scheduler a persistent kernel of this shape runs the (kernel's) problem m × n × k with, for
/// a batch of `batch` products: cluster split-K, stream-K (for the shapes that have them), split-K
/// or whole tiles (the rules are in engine_policy.cpp).
engine::EngineChoice persistent_choice(engine::KernelShape shape, std::int64_t m, std::int64_t n, std::int64_t k,
                                       const Device& d, std::int64_t batch = 1);

/// Decode shapes with at most this many rows (the swapped problem's columns: one 16- or 32-wide
/// wgmma) can run swapped on one-tile-per-CTA kernels.
constexpr std::int64_t kSwappedTileMaxRows = 32;

/// The tile height for the swapped problem of a decode-shaped product whose B has `rows` rows of
/// C's columns: 64 while that gives each of the `sms` SMs at most one tile, else 128 while that
/// does; 0 where a tile per CTA does not suit it: more tiles than SMs even at 128 rows (the
/// persistent kernels keep every SM busy there), or tiles for fewer than 7/16 of the SMs (a CTA
/// streams B at a bounded rate, so too few of them leave DRAM idle; the persistent kernels split
/// K instead; measured: docs/ladder.md#decode-shapes).
int swapped_tile_rows(std::int64_t rows, int sms);

}  // namespace hgemm::detail
