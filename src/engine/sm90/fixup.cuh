// SPDX-License-Identifier: Apache-2.0
// The engine's fix-ups: where the partial sums of one tile, computed by several CTAs, meet.
//  * Stream-K hand-over: a CTA that computed part of a tile parks its accumulators in workspace
//    and raises a flag; the tile's owner waits for the flags and adds the parked sums in k order.
//  * Cluster split-K: the splits of a tile are the CTAs of one cluster; each stages its sums in
//    its shared memory, and after a cluster barrier every CTA adds up its share of the rows from
//    all of them over distributed shared memory and writes D.
// Both add in a fixed order, so the result does not depend on timing. (Split-K through fp32
// partials in workspace ends in a second pass instead: split_k_reduce.h.)
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>

#include "common/sm90/accumulators.cuh"
#include "engine/sm90/params.h"
#include "engine/sm90/stores.cuh"

namespace hgemm::detail::engine {

using namespace sm90;

// ------------------------------------------------------------------ stream-K hand-over
/// Where this thread's R accumulator registers sit in `slot` of the parking area: in 16-byte
/// groups, group j (registers 4j..4j+3) of thread t at group j·128 + t, so each warp moves whole
/// 512-byte runs. Step through the groups 128 apart.
template <int R>
__device__ __forceinline__ uint4* parked_groups(const StreamKHandover& h, int slot) {
  static_assert(R % 4 == 0, "16-byte groups of 32-bit registers");
  return reinterpret_cast<uint4*>(h.parked) + static_cast<std::size_t>(slot) * (R / 4) * 128 + threadIdx.x % 128;
}

/// Stream-K hand-over, writer side: one warpgroup's accumulators go to `slot` of the parking
/// area (parked_groups); once all 128 threads have stored (named barrier `barrier_id`), the
/// slot's flag is raised.
template <typename Reg, int R>
__device__ __forceinline__ void park_accumulators(const StreamKHandover& h, int slot, const Reg (&d)[R],
                                                  unsigned barrier_id) {
  static_assert(sizeof(Reg) == 4, "32-bit registers");
  uint4* out = parked_groups<R>(h, slot);
#pragma unroll
  for (int j = 0; j < R / 4; ++j) {
    uint4 v;
    memcpy(&v, &d[4 * j], 16);
    __stcg(out + j * 128, v);
  }
  named_barrier_sync(barrier_id, 128);
  if (threadIdx.x % 128 == 0) st_release_gpu(h.flags + slot, h.epoch);
}

__device__ __forceinline__ void add_parked(float& d, std::uint32_t bits) { d += __uint_as_float(bits); }
__device__ __forceinline__ void add_parked(std::uint32_t& d, std::uint32_t bits) {
  __half2 a, b;
  memcpy(&a, &d, 4);
  memcpy(&b, &bits, 4);
  a = __hadd2(a, b);
  memcpy(&d, &a, 4);
}

/// Stream-K hand-over, owner side: waits for `slot`'s flag and clears it (so a captured CUDA graph,
/// which repeats the launch's flag value, finds it clear on its next replay), then adds the parked
/// sums to the warpgroup's own (the same additions in the same order whatever the timing). Loads
/// go out 8 groups at a time, so the L2 latency is paid R/32 times, not R/4.
template <typename Reg, int R>
__device__ __forceinline__ void add_parked_accumulators(const StreamKHandover& h, int slot, Reg (&d)[R],
                                                        unsigned barrier_id) {
  constexpr int kBatch = R / 4 < 8 ? R / 4 : 8;
  static_assert(R % (4 * kBatch) == 0 && sizeof(Reg) == 4, "whole batches of 16-byte groups");
  if (threadIdx.x % 128 == 0) {
    while (ld_acquire_gpu(h.flags + slot) != h.epoch) __nanosleep(64);
    h.flags[slot] = 0;  // read once per launch; the next launch is stream-ordered after this one
  }
  named_barrier_sync(barrier_id, 128);
  const uint4* in = parked_groups<R>(h, slot);
#pragma unroll
  for (int j0 = 0; j0 < R / 4; j0 += kBatch) {
    uint4 v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) v[j] = __ldcg(in + (j0 + j) * 128);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      add_parked(d[4 * (j0 + j)], v[j].x);
      add_parked(d[4 * (j0 + j) + 1], v[j].y);
      add_parked(d[4 * (j0 + j) + 2], v[j].z);
      add_parked(d[4 * (j0 + j) + 3], v[j].w);
    }
  }
}

// ------------------------------------------------------------------ cluster split-K
/// An fp32 tile of N columns staged in shared memory for the cluster's split-K sum: rows of N
/// floats, whose 16-byte units are XOR-swizzled by the row (unit u of row r at u ^ (r % 8), or
/// r % 4 with 4 units a row), so that a warp's fragment pairs (8 rows) and its float4 reads
/// (along a row, or down 8 rows) fall in different banks. The float index of (r, c).
template <int N>
__device__ __forceinline__ int staged_float_index(int r, int c) {
  constexpr int kUnits = N / 4, kMask = kUnits >= 8 ? 7 : kUnits - 1;
  return r * N + ((c / 4) ^ (r & kMask)) * 4 + c % 4;
}

/// Writes one warpgroup's m64nN accumulators (as floats) into rows row0..row0+63 of the staged
/// tile.
template <int N, typename Reg>
__device__ __forceinline__ void stage_accumulators(float* tile, int row0, const Reg* d) {
  for_each_accumulator_pair<N>(INT32_MAX, row0, 0, d, [&](std::int64_t r, std::int64_t c, float2 v) {
    *reinterpret_cast<float2*>(tile + staged_float_index<N>(static_cast<int>(r), static_cast<int>(c))) = v;
  });
}

/// The end of a cluster split-K tile (KernelParams::cluster_splits): every CTA of the cluster has
/// staged its split's sums of the ROWS×N tile at (m0, n0) at the same place in its shared memory
/// (stage_accumulators, then a cluster_sync). Split `rank` writes rows [rank·ROWS/splits,
/// (rank+1)·ROWS/splits) of the tile: each element is the sum of the splits' values in split
/// order (the same sum whatever the timing), then alpha and beta, then D. `thread` of `threads`
/// share the work, a float4 each, writing `out` (the tile's product of the batch). TRANSPOSED: p is the swapped problem, and (r, c) of its tile
/// goes to D(c, r); consecutive threads then take consecutive rows, which are D's contiguous
/// columns.
template <int ROWS, int N, bool TRANSPOSED>
__device__ __forceinline__ void add_staged_splits(const KernelParams& p, const Output& out, const float* tile,
                                                  std::int64_t m0, std::int64_t n0, int rank, int splits, int thread,
                                                  int threads) {
  constexpr int kUnits = N / 4;
  const int first = rank * ROWS / splits, rows = (rank + 1) * ROWS / splits - first;
  for (int i = thread; i < rows * kUnits; i += threads) {
    const int r = first + (TRANSPOSED ? i % rows : i / kUnits), u = TRANSPOSED ? i / rows : i % kUnits;
    const std::int64_t row = m0 + r, col = n0 + 4 * u;
    if (row >= p.m || col >= p.n) continue;
    const float* at = tile + staged_float_index<N>(r, 4 * u);
    float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) {
      if (s < splits) {
        const float4 x = load_float4_from_cluster_cta(at, s);
        v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
      }
    }
    if constexpr (TRANSPOSED) {
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (col + k < p.n) store_element(out, col + k, row, v[k]);
    } else {
      store_run<4>(out, row, col, v);
    }
  }
}

}  // namespace hgemm::detail::engine
