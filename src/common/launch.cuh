// SPDX-License-Identifier: Apache-2.0
// Host side of a launch: compile-time dispatch over ops and accumulator, grid sizing, errors.
#pragma once

#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/operand.cuh"
#include "common/problem.h"

namespace hgemm::detail {

template <Op O> using OpTag = std::integral_constant<Op, O>;
template <typename T> struct TypeTag { using type = T; };

/// Calls f(TypeTag<Acc>{}) with Acc = __half or float as p.accum says.
template <typename F>
Status dispatch_accum(const Problem& p, F&& f) {
  return p.accum == Accum::F16 ? f(TypeTag<__half>{}) : f(TypeTag<float>{});
}

/// Calls f(OpTag<OA>{}, OpTag<OB>{}, TypeTag<Acc>{}) with the problem's ops and accumulator.
template <typename F>
Status dispatch_ops_accum(const Problem& p, F&& f) {
  return dispatch_accum(p, [&](auto acc) {
    if (p.op_a == Op::N)
      return p.op_b == Op::N ? f(OpTag<Op::N>{}, OpTag<Op::N>{}, acc) : f(OpTag<Op::N>{}, OpTag<Op::T>{}, acc);
    return p.op_b == Op::N ? f(OpTag<Op::T>{}, OpTag<Op::N>{}, acc) : f(OpTag<Op::T>{}, OpTag<Op::T>{}, acc);
  });
}

/// Fails if C's `tiles` tiles, one block each, exceed a 1-D grid's limit.
inline Status check_tile_count(std::int64_t tiles, std::string* message) {
  if (tiles <= INT_MAX) return Status::Success;
  *message = "C has " + std::to_string(tiles) + " tiles, more than a grid can hold";
  return Status::ProblemTooLarge;
}

/// One block per BM×BN tile of C, in a 1-D grid. Fails if the tile count exceeds grid.x's limit.
template <int BM, int BN>
Status tile_grid(const Problem& p, dim3* grid, std::string* message) {
  const std::int64_t tiles = ((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  if (Status s = check_tile_count(tiles, message); s != Status::Success) return s;
  *grid = dim3(static_cast<unsigned>(tiles));
  return Status::Success;
}

/// The status of the launch just made.
inline Status launch_status(std::string* message) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return Status::Success;
  *message = std::string("kernel launch failed: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  return Status::CudaError;
}

/// Launches `fn(p)` with one `block`-sized thread block per BM×BN tile of C (and `smem_bytes` of
/// dynamic shared memory).
template <int BM, int BN, typename KernelFn>
Status launch_tiles(KernelFn fn, const Problem& p, dim3 block, cudaStream_t stream, std::string* message,
                    int smem_bytes = 0) {
  dim3 grid;
  if (Status s = tile_grid<BM, BN>(p, &grid, message); s != Status::Success) return s;
  fn<<<grid, block, smem_bytes, stream>>>(p);
  return launch_status(message);
}

/// launch_tiles with `smem_bytes` of dynamic shared memory, first raising the kernel's limit
/// (needed above 48 KiB).
template <int BM, int BN, typename KernelFn>
Status launch_tiles_with_smem(KernelFn fn, const Problem& p, int threads, int smem_bytes, cudaStream_t stream,
                              std::string* message) {
  if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes) != cudaSuccess)
    return launch_status(message);
  return launch_tiles<BM, BN>(fn, p, threads, stream, message, smem_bytes);
}

template <Edges E> using EdgesTag = std::integral_constant<Edges, E>;

/// One `block`-sized thread block per tile of C, split by `Split` (a TileSplit, operand.cuh):
/// the kernel `kernel_for(TypeTag<Acc>{}, EdgesTag<Edges::Interior>{})` on the interior tiles,
/// then `kernel_for(TypeTag<Acc>{}, EdgesTag<Edges::Checked>{})` on the others (two launches on
/// `stream`; either is skipped when it has no tiles).
template <typename Split, typename KernelFor>
Status launch_split_tiles(const Problem& p, dim3 block, cudaStream_t stream, std::string* message,
                          KernelFor kernel_for) {
  const std::int64_t interior = Split::interior_tiles(p), all = Split::all_tiles(p);
  if (Status s = check_tile_count(all, message); s != Status::Success) return s;
  return dispatch_accum(p, [&](auto acc) {
    if (interior > 0) {
      kernel_for(acc, EdgesTag<Edges::Interior>{})<<<static_cast<unsigned>(interior), block, 0, stream>>>(p);
      if (Status s = launch_status(message); s != Status::Success) return s;
    }
    if (all > interior) {
      kernel_for(acc, EdgesTag<Edges::Checked>{})<<<static_cast<unsigned>(all - interior), block, 0, stream>>>(p);
      return launch_status(message);
    }
    return Status::Success;
  });
}

}  // namespace hgemm::detail
