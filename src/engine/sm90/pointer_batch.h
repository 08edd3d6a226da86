// SPDX-License-Identifier: Apache-2.0
// Pointer batches in one launch: products of one shape whose matrices lie anywhere, given by
// arrays of pointers (host or device memory). A first kernel writes each product's tensor maps on
// the device (a copy of a map encoded on the host for the shared shape, its address replaced),
// then the tiles per CTA (tile_per_cta.cuh) run every product in one grid, each CTA reading its
// product's maps and D from that table. Nothing on the host reads a device array, so the call
// needs no synchronisation and a captured graph replays with what the arrays hold then.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/device.h"
#include "common/matmul.h"
#include "engine/sm90/launch.h"
#include "engine/sm90/plan.h"

namespace hgemm::detail::engine {

/// Products given by arrays of `count` pointers: product i is `shape` (its sizes, ops, types,
/// leading dimensions, alpha and beta; its pointers unused) with A at a[i], B at b[i], and D at
/// d[i], C in place there (the f16 shorthand's C = alpha·op(A)·op(B) + beta·C).
struct PointerBatch {
  Matmul shape;
  const void* const* a = nullptr;
  const void* const* b = nullptr;
  void* const* d = nullptr;
  std::int64_t count = 0;
  bool device_arrays = false;  ///< the arrays are device memory, never read by the host
};

/// One product as the one launch reads it, written by the map writer: A's and B's maps (rank 2)
/// and D; a null D marks an entry the writer refused (null or not 16-byte aligned): its CTAs
/// return at once. Each map 128-byte aligned, as tensormap.replace on global memory needs (older
/// toolkits declare CUtensorMap 64-byte aligned only); the table itself is workspace, 256-byte
/// aligned.
struct alignas(128) PointerBatchProduct {
  alignas(128) CUtensorMap a;
  alignas(128) CUtensorMap b;
  void* d;
};
static_assert(sizeof(PointerBatchProduct) % 128 == 0 && sizeof(CUtensorMap) == 128,
              "every entry's maps start on a 128-byte boundary");

/// The most products one launch of the map writer takes from host arrays, in its parameters
/// (24 KiB of pointers, within the 32 KiB a kernel's parameters may hold).
constexpr int kPointersPerWriterLaunch = 1024;

/// The tiles of the one launch: 64×64 for a batch of small products (several CTAs share an SM),
/// else 128×64 where that gives at least 3/4 as many tiles as SMs, else 64×64.
KernelShape pointer_batch_tiles(const Matmul& shape, std::int64_t count, int sms);

/// CTAs of the one launch: every product's tiles.
std::int64_t pointer_batch_ctas(const Matmul& shape, std::int64_t count, KernelShape tiles);

/// Whether the engine can run `count` products of `shape` in one launch, whatever their
/// pointers: K > 0 is not needed (a K = 0 launch loads nothing), but every leading dimension must
/// let TMA read rows in place (a multiple of 16 bytes), and the sizes and the grid fit the
/// kernels' int indices. Else the reason in `why`.
Status pointer_batch_supports(const Matmul& shape, std::int64_t count, std::string* why);

/// Queues the map writer (one launch per kPointersPerWriterLaunch products of host arrays, one
/// for device arrays) and the one launch of every product on `stream`. b is validated.
Status launch_pointer_batch(const PointerBatch& b, const Device& d, cudaStream_t stream, std::string* message);

/// The one launch (kernels_pointer_batch.cu): l.grid CTAs of `tiles` over the table `products`
/// the map writer filled; l.params holds the shared shape, D's pointer comes from the table.
Status launch_pointer_batch_tiles(const KernelLaunch& l, KernelShape tiles, const PointerBatchProduct* products,
                                  std::string* message);

}  // namespace hgemm::detail::engine
