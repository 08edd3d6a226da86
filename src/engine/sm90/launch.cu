// SPDX-License-Identifier: Apache-2.0
#include "engine/sm90/launch.h"

#include <atomic>

#include "common/convert.h"
#include "common/sm90/c_chunk.cuh"
#include "common/sm90/tensor_maps.h"
#include "common/workspace.h"
#include "engine/sm90/epilogue.cuh"
#include "engine/sm90/split_k_reduce.h"

namespace hgemm::detail::engine {
namespace {

/// A flag value no earlier launch used: stream-K flags live in pooled workspace that nothing
/// zeroes, so a launch waits for its own value (64 bits, counted from an arbitrary odd start: not
/// a pattern that zeroed or float-filled memory holds). Readers clear the flags they consumed, so a
/// CUDA graph replaying the launch with the same value starts from clear flags.
unsigned long long next_epoch() {
  static std::atomic<unsigned long long> counter{0x9e3779b97f4a7c15ull};
  return counter.fetch_add(2, std::memory_order_relaxed);
}

/// A and B of p as stored, and B's rows per TMA box.
struct KernelOperands {
  sm90::StoredOperand a, b;
  bool a_mn = false, b_mn = false;
};

/// The kernel's operands: p's own, or for the swapped problem (C^T = op(B)^T·op(A)^T, op(A) = N)
/// B as the kernel's A (MN-major when op(B) = N) and A as its K-major B.
KernelOperands kernel_operands(const Matmul& p, bool swapped) {
  const sm90::StoredOperand a{p.a, p.a_type, p.lda, p.op_a == Op::N ? p.m : p.k, p.op_a == Op::N ? p.k : p.m, p.batch,
                              p.stride_a};
  const sm90::StoredOperand b{p.b, p.b_type, p.ldb, p.op_b == Op::N ? p.k : p.n, p.op_b == Op::N ? p.n : p.k, p.batch,
                              p.stride_b};
  if (swapped) return {b, a, p.op_b == Op::N, false};
  return {a, b, p.op_a == Op::T, p.op_b == Op::N};
}

Status launch_batch(const Plan& plan, const Matmul& p, cudaStream_t stream, std::string* message) {
  StreamWorkspace workspace(stream);
  KernelLaunch l;
  KernelOperands ops = kernel_operands(p, plan.swapped);
  if (Status s = sm90::make_tma_readable(&ops.a, &ops.b, workspace, stream, message); s != Status::Success) return s;
  // B is split between a cluster's CTAs along M, each loading its share and multicasting it.
  const int b_rows = is_persistent(plan.choice.shape) ? plan.bn / multicast_cluster(plan.choice.shape) : plan.bn;
  // Maps of rank 3 (the batch a dimension) only for a batch: a single product's 2-D loads and
  // stores are cheaper.
  const bool batched = p.batch > 1;
  auto operand_map = [&](CUtensorMap* map, const sm90::StoredOperand& op, bool mn_major, int rows) {
    return batched ? sm90::encode_batched_operand_map(map, op, mn_major, rows, message)
                   : sm90::encode_operand_map(map, op, mn_major, rows, message);
  };
  if (Status s = operand_map(&l.map_a, ops.a, ops.a_mn, plan.bm); s != Status::Success) return s;
  if (Status s = operand_map(&l.map_b, ops.b, ops.b_mn, b_rows); s != Status::Success) return s;
  // D's map and aux's: the epilogue's staged chunks, each warp's 16 rows of 64 16-bit columns or 32 floats.
  auto store_map = [&](CUtensorMap* map, void* ptr, DataType type, std::int64_t ld, std::int64_t stride) {
    const int cols = type == DataType::F32 ? kF32ChunkCols : sm90::kCChunkCols;
    return batched ? sm90::encode_batched_store_map(map, ptr, type, p.n, p.m, ld, p.batch, stride, cols,
                                                    sm90::kCStoreRows, message)
                   : sm90::encode_store_map(map, ptr, type, p.n, p.m, ld, cols, sm90::kCStoreRows, message);
  };
  if (plan.store == StorePath::Tma)
    if (Status s = store_map(&l.map_d, p.d, p.d_type, p.ldd, p.stride_d); s != Status::Success) return s;
  if (plan.aux_by_tma) {
    const Epilogue& e = p.epilogue;
    if (Status s = store_map(&l.map_aux, e.aux, e.aux_type, e.ldaux, e.stride_aux); s != Status::Success) return s;
  }
  KernelParams& k = l.params;
  k.m = plan.m, k.n = plan.n, k.k = plan.k;
  k.batch = static_cast<int>(p.batch);
  k.batched = batched;
  k.a_steps = ops.a.stride != 0, k.b_steps = ops.b.stride != 0;
  k.out = {p.d, p.ldd, p.c_read() ? p.c : nullptr, p.ldc, p.m, p.n, p.alpha, p.c_read() ? p.beta : 0.f,
           p.d_type, p.c_type, p.stride_d, p.stride_c, fused_epilogue(p.epilogue)};
  k.store = plan.store;
  k.aux_by_tma = plan.aux_by_tma;
  k.splits = plan.splits;
  k.cluster_splits = plan.choice.scheduler == Scheduler::ClusterSplitK ? plan.splits : 1;
  if (plan.partials_bytes > 0) {
    void* partials = nullptr;
    if (Status s = workspace.allocate(plan.partials_bytes, &partials, message); s != Status::Success) return s;
    k.partials = static_cast<float*>(partials);
  }
  if (plan.handover_bytes > 0) {
    const std::size_t slots = static_cast<std::size_t>(plan.clusters) * plan.cluster * kConsumerWarpgroups;
    void *parked = nullptr, *flags = nullptr;
    if (Status s = workspace.allocate(plan.handover_bytes - slots * sizeof(unsigned long long), &parked, message);
        s != Status::Success)
      return s;
    if (Status s = workspace.allocate(slots * sizeof(unsigned long long), &flags, message); s != Status::Success) return s;
    k.stream_k = {static_cast<std::uint32_t*>(parked), static_cast<unsigned long long*>(flags), next_epoch()};
  }
  l.a_mn = ops.a_mn, l.b_mn = ops.b_mn, l.accum = p.accum, l.in = p.a_type;
  l.grid = plan.grid, l.cluster = plan.cluster, l.stream = stream;
  l.plain = plan.finish == TileFinish::Plain;
  l.fused_in_registers = plan.finish == TileFinish::FusedInRegisters;
  l.short_k = plan.short_k;
  const bool stream_k = plan.choice.scheduler == Scheduler::StreamK;
  Status s;
  switch (plan.choice.shape) {
    case KernelShape::Wide: s = stream_k ? launch_wide_stream_k(l, message) : launch_wide(l, message); break;
    case KernelShape::PingPong: s = launch_pingpong(l, message); break;
    case KernelShape::Narrow: s = launch_narrow(l, stream_k, message); break;
    case KernelShape::Skinny16:
    case KernelShape::Skinny32:
    case KernelShape::Skinny64: s = launch_skinny(l, plan.choice.shape, stream_k, message); break;
    case KernelShape::Tile128x64:
    case KernelShape::Tile64x64:
    case KernelShape::Tile64x32:
    case KernelShape::Tile64x16: s = launch_tiles(l, plan.choice.shape, message); break;
    default: s = launch_swapped_tiles(l, plan.choice.shape, message); break;
  }
  if (s != Status::Success || plan.store != StorePath::Partials) return s;
  return reduce_splits(k, plan.swapped, stream, message);
}

}  // namespace

Status launch(const Plan& plan, const Matmul& p, cudaStream_t stream, std::string* message) {
  if (p.k == 0) {  // D = beta·C (zeros when beta = 0, C unread), every product at once
    const TypedMatrices c{p.c_read() ? p.c : nullptr, p.c_type, p.ldc, p.stride_c};
    if (p.epilogue.enabled())  // D = act(beta·C + bias)·scales
      return finish_matrices(c, p.c_read() ? p.beta : 0.f, {p.d, p.d_type, p.ldd, p.stride_d},
                             fused_epilogue(p.epilogue), p.m, p.n, p.batch, stream, message);
    return scale_matrices(c, p.c_read() ? p.beta : 0.f, {p.d, p.d_type, p.ldd, p.stride_d}, p.m, p.n, p.batch, stream,
                          message);
  }
  return launch_batch(plan, p, stream, message);
}

}  // namespace hgemm::detail::engine
