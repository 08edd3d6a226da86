// SPDX-License-Identifier: Apache-2.0
#include "engine/sm90/plan.h"

#include <cstdio>

#include "common/sm90/raster.h"

namespace hgemm::detail::engine {
namespace {

constexpr int kBK = 64;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool tma_readable(const void* ptr, std::int64_t ld, int elem_bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * elem_bytes) % 16 == 0;
}

// Whether TMA can store an N-column matrix (of a batch of p.batch, `stride` elements apart) at
// ptr: 16-byte aligned, with rows, N and the batch stride in whole 16-byte units (TMA clips a
// ragged N only to whole units).
bool tma_storable(const Matmul& p, const void* ptr, std::int64_t ld, std::int64_t stride, int size) {
  return tma_readable(ptr, ld, size) && (p.n * size) % 16 == 0 && (p.batch == 1 || (stride * size) % 16 == 0);
}

// Where the epilogue of a persistent, unswapped kernel writes D: by TMA when beta does not read C
// and TMA can store D, staged rows for another 16-bit D with beta = 0, else from registers.
StorePath store_path(const Matmul& p) {
  if (p.c_read()) return StorePath::Registers;
  const int size = data_type_size(p.d_type);
  if (tma_storable(p, p.d, p.ldd, p.stride_d, size)) return StorePath::Tma;
  return size == 2 ? StorePath::StagedRows : StorePath::Registers;
}

// The store code of the instantiation that runs the plan (Plan::finish).
TileFinish finish_of(const Matmul& p, const Plan& plan) {
  const KernelShape s = plan.choice.shape;
  if (plan.store == StorePath::Partials || plan.choice.scheduler == Scheduler::ClusterSplitK || p.c_read())
    return TileFinish::Any;
  const bool swapped_or_grouped = plan.swapped || !(is_persistent(s) || plan.choice.scheduler == Scheduler::TilePerCta);
  if (!p.epilogue.enabled()) {
    if (swapped_or_grouped) return TileFinish::Any;
    return is_persistent(s) && plan.store != StorePath::Tma ? TileFinish::Any : TileFinish::Plain;
  }
  const bool in_registers = p.accum == Accum::F32 && !p.epilogue.scale_rows && !p.epilogue.scale_cols;
  return (s == KernelShape::Wide || s == KernelShape::Narrow) && in_registers && plan.store == StorePath::Tma
             ? TileFinish::FusedInRegisters
             : TileFinish::Any;
}

const char* shape_name(KernelShape s) { return shape_info(s).name; }

const char* scheduler_name(Scheduler s) {
  switch (s) {
    case Scheduler::TilePerCta: return "a tile per CTA";
    case Scheduler::WholeTiles: return "whole tiles";
    case Scheduler::SplitK: return "split-K";
    case Scheduler::StreamK: return "stream-K";
    case Scheduler::ClusterSplitK: return "cluster split-K";
    case Scheduler::Grouped: return "grouped";
  }
  return "?";
}

const char* store_name(StorePath s) {
  switch (s) {
    case StorePath::Registers: return "registers";
    case StorePath::Tma: return "TMA store";
    case StorePath::StagedRows: return "staged rows";
    case StorePath::Partials: return "partials + reduce";
  }
  return "?";
}

}  // namespace

Plan make_plan(const Matmul& p, const Device& d, const EngineChoice& choice) {
  Plan plan;
  plan.choice = choice;
  plan.swapped = is_swapped(choice.shape);
  plan.m = plan.swapped ? p.n : p.m, plan.n = plan.swapped ? p.m : p.n, plan.k = p.k;
  plan.batch = p.batch;
  tile_of(choice.shape, &plan.bm, &plan.bn);
  const std::int64_t slices = ceil_div(plan.k, kBK);
  if (!is_persistent(choice.shape)) {
    plan.grid = static_cast<unsigned>(ceil_div(plan.m, plan.bm) * ceil_div(plan.n, plan.bn) * p.batch);
    plan.clusters = static_cast<int>(plan.grid);
  } else {
    const int rows = multicast_cluster(choice.shape) * plan.bm;  // a cluster tile's rows
    const std::int64_t tiles = ceil_div(plan.m, rows) * ceil_div(plan.n, plan.bn) * p.batch;
    // Splits as the schedule normalises them: none empty, K = 0 one.
    const std::int64_t wanted = choice.scheduler == Scheduler::SplitK || choice.scheduler == Scheduler::ClusterSplitK
                                    ? choice.splits
                                    : 1;
    const std::int64_t per_split = slices > 0 ? ceil_div(slices, wanted) : 1;
    plan.splits = static_cast<int>(slices > 0 ? ceil_div(slices, per_split) : 1);
    const std::int64_t units = tiles * plan.splits;
    if (choice.scheduler == Scheduler::ClusterSplitK) {
      plan.cluster = plan.splits;
      plan.clusters = static_cast<int>(tiles);
    } else {
      plan.cluster = multicast_cluster(choice.shape);
      const int fit = d.clusters[plan.cluster] > 0 ? d.clusters[plan.cluster] : 1;
      plan.clusters = choice.scheduler == Scheduler::StreamK
                          ? (choice.clusters > 0 ? choice.clusters : fit)
                          : sm90::balanced_clusters(static_cast<int>(units), fit);
    }
    plan.grid = static_cast<unsigned>(plan.cluster * plan.clusters);
  }
  // The store path.
  if (choice.scheduler == Scheduler::SplitK)
    plan.store = StorePath::Partials;
  else if (plan.swapped || choice.scheduler == Scheduler::ClusterSplitK)
    plan.store = StorePath::Registers;
  else if (!is_persistent(choice.shape))  // TMA stores for chunks of 64 columns, else registers
    plan.store = plan.bn % 64 == 0 && store_path(p) == StorePath::Tma ? StorePath::Tma : StorePath::Registers;
  else
    plan.store = store_path(p);
  plan.finish = finish_of(p, plan);
  const Epilogue& e = p.epilogue;
  plan.aux_by_tma = p.aux_by_tma && plan.finish == TileFinish::FusedInRegisters && choice.scheduler != Scheduler::StreamK &&
                    e.aux_output && tma_storable(p, e.aux, e.ldaux, e.stride_aux, data_type_size(e.aux_type));
  plan.short_k = !is_persistent(choice.shape) && !plan.swapped && plan.bm == 64 && p.accum == Accum::F32 &&
                 plan.k <= kShortK;
  // Workspace.
  if (plan.store == StorePath::Partials)
    plan.partials_bytes = static_cast<std::size_t>(plan.splits) * p.batch * plan.m * plan.n * sizeof(float);
  if (choice.scheduler == Scheduler::StreamK) {
    const std::size_t slots = static_cast<std::size_t>(plan.clusters) * plan.cluster * kConsumerWarpgroups;
    const std::size_t words = p.accum == Accum::F16 ? plan.bn / 4 : plan.bn / 2;  // accumulator registers
    plan.handover_bytes = slots * 128 * words * 4 + slots * sizeof(unsigned long long);
  }
  // The kernel's A is B when swapped; an operand TMA cannot read is copied with ld rounded to 8.
  const void* ka = plan.swapped ? p.b : p.a;
  const void* kb = plan.swapped ? p.a : p.b;
  const std::int64_t lda = plan.swapped ? p.ldb : p.lda, ldb = plan.swapped ? p.lda : p.ldb;
  const std::int64_t ka_stride = plan.swapped ? p.stride_b : p.stride_a, kb_stride = plan.swapped ? p.stride_a : p.stride_b;
  auto copy_bytes = [&](const void* ptr, std::int64_t ld, std::int64_t stride, std::int64_t rows, std::int64_t width,
                        bool* repack) {
    const std::int64_t copies = stride == 0 ? 1 : p.batch;
    *repack = rows > 0 && !(tma_readable(ptr, ld, 2) && (copies == 1 || stride % 8 == 0));
    return *repack ? static_cast<std::size_t>(copies * rows * ceil_div(width, 8) * 8 * 2) : std::size_t(0);
  };
  // Stored shapes: A is M×K (op N) or K×M (op T), B K×N (op N) or N×K (op T), of p.
  const std::int64_t pa_rows = p.op_a == Op::N ? p.m : p.k, pa_width = p.op_a == Op::N ? p.k : p.m;
  const std::int64_t pb_rows = p.op_b == Op::N ? p.k : p.n, pb_width = p.op_b == Op::N ? p.n : p.k;
  const std::size_t a_copy = copy_bytes(ka, lda, ka_stride, plan.swapped ? pb_rows : pa_rows,
                                        plan.swapped ? pb_width : pa_width, &plan.repack_a);
  const std::size_t b_copy = copy_bytes(kb, ldb, kb_stride, plan.swapped ? pa_rows : pb_rows,
                                        plan.swapped ? pa_width : pb_width, &plan.repack_b);
  plan.repack_bytes = p.k > 0 ? a_copy + b_copy : 0;
  if (p.k == 0) plan.repack_a = plan.repack_b = false;
  return plan;
}

const char* finish_name(TileFinish f) {
  switch (f) {
    case TileFinish::Any: return "general";
    case TileFinish::Plain: return "plain";
    case TileFinish::FusedInRegisters: return "fused in registers";
  }
  return "?";
}

std::string describe(const Plan& plan) {
  char text[320];
  const EngineChoice& c = plan.choice;
  std::string scheduler = scheduler_name(c.scheduler);
  if (c.scheduler == Scheduler::SplitK || c.scheduler == Scheduler::ClusterSplitK)
    scheduler += " " + std::to_string(plan.splits);
  const std::string finish = plan.finish == TileFinish::Any ? "" : std::string(", ") + finish_name(plan.finish);
  std::snprintf(text, sizeof text, "%s, %s, %u CTAs, %s%s%s%s", shape_name(c.shape), scheduler.c_str(), plan.grid,
                store_name(plan.store), finish.c_str(), plan.aux_by_tma ? ", aux by TMA" : "",
                plan.short_k ? ", short-K entry" : "");
  std::string out = text;
  if (plan.batch > 1) out += ", batch of " + std::to_string(plan.batch) + " in one launch";
  if (plan.repack_a || plan.repack_b)
    out += std::string(", repack") + (plan.repack_a ? " A" : "") + (plan.repack_b ? " B" : "");
  if (plan.workspace_bytes() > 0) out += ", workspace " + std::to_string((plan.workspace_bytes() + 1023) / 1024) + " KiB";
  return out;
}

}  // namespace hgemm::detail::engine
