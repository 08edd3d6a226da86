// SPDX-License-Identifier: Apache-2.0
// What an engine kernel receives besides its tensor maps: the problem it runs, where D goes (and
// C comes from), and the parameters of its scheduler and fix-up. Plain data, host and device.
#pragma once

#include <cstdint>

#include "common/fused_epilogue.h"
#include "common/host_device.h"

#include "hgemm/hgemm.h"

namespace hgemm::detail::engine {

/// D = alpha·acc + beta·C, in D's own orientation: m × n, row-major; for a batch, matrix b of D
/// and of C stride_d and stride_c elements on. A kernel that runs the swapped problem writes its
/// element (r, c) to D(c, r). With epi.on, the fused epilogue follows (common/fused_epilogue.cuh).
struct Output {
  void* d = nullptr;
  std::int64_t ldd = 0;
  const void* c = nullptr;  ///< read only when beta ≠ 0
  std::int64_t ldc = 0;
  std::int64_t m = 0, n = 0;
  float alpha = 1.f, beta = 0.f;
  DataType d_type = DataType::F16, c_type = DataType::F16;
  std::int64_t stride_d = 0, stride_c = 0;
  FusedEpilogue epi;  ///< the launch's: finish_element offsets its vectors by `product`
  int product = 0;    ///< of the batch, once of_product has moved d and c to it

  /// The output of product b of the batch.
  HGEMM_HOST_DEVICE Output of_product(int b) const {
    Output o = *this;
    o.d = static_cast<char*>(d) + b * stride_d * data_type_size(d_type);
    if (c) o.c = static_cast<const char*>(c) + b * stride_c * data_type_size(c_type);
    o.product = b;
    return o;
  }

  /// The plain store of values the epilogue has already finished: D = v.
  HGEMM_HOST_DEVICE Output finished() const {
    Output o = *this;
    o.alpha = 1.f, o.beta = 0.f, o.c = nullptr, o.epi.on = false;
    return o;
  }
};

/// Consumer warpgroups of a persistent CTA (each owns 64 rows of the 128-row tile).
constexpr int kConsumerWarpgroups = 2;

/// Splits of a tile one cluster can hold (cluster split-K): the portable cluster size.
constexpr int kMaxClusterSplits = 8;

/// How the epilogue writes a tile.
enum class StorePath : std::uint8_t {
  Registers,   ///< from the accumulators, 2-element runs (transposed for swapped kernels)
  Tma,         ///< staged in shared memory, stored by TMA (beta = 0, D aligned, N a multiple of 16 bytes)
  StagedRows,  ///< staged as for Tma, copied out row by row (beta = 0, 16-bit D that TMA cannot take)
  Partials,    ///< fp32 partial sums of each split of K into workspace; a second pass writes D
};

/// The float of the fused epilogue's scratch (16 KB per consumer warpgroup: its two 8 KB TMA
/// staging buffers) that holds row rr < 16, column cc < 64 of warp w's share of a chunk
/// (epilogue.cuh: finish_accumulators). Rows 0-7 lie in the first buffer and rows 8-15 in the
/// second, at bytes [2048w, 2048w + 2048) of each: the rows the warp stages itself for a TMA
/// store. Rows are 64 floats whose 16-byte units are XOR-swizzled by 2·rr (mod 16), so that a
/// half-warp's accumulator pairs (4 rows × 4 pairs) and a warp's read along a row hit 32 banks.
HGEMM_HOST_DEVICE inline int finish_scratch_float(int w, int rr, int cc) {
  return (rr / 8) * 2048 + 512 * w + (rr % 8) * 64 + (((cc / 4) ^ ((2 * rr) % 16)) * 4) + cc % 4;
}

/// Stream-K hand-over slots: the parked accumulators and their flags.
struct StreamKHandover {
  std::uint32_t* parked = nullptr;      ///< per slot: the parked accumulators, [register][thread]
  unsigned long long* flags = nullptr;  ///< per slot: `epoch` once the slot's sums are parked
  unsigned long long epoch = 0;         ///< this launch's flag value (unique per launch)
};

struct KernelParams {
  std::int64_t m = 0, n = 0, k = 0;  ///< the problem the kernel runs (the swapped one if so)
  int batch = 1;                     ///< products of a strided batch, one launch for all
  bool batched = false;              ///< the tensor maps have rank 3 (batch > 1); rank 2 otherwise
  int a_steps = 1, b_steps = 1;      ///< whether the kernel's A and B step with the batch (0: one shared matrix)
  Output out;
  StorePath store = StorePath::Registers;
  bool aux_by_tma = false;    ///< aux (out.epi.aux) stored by TMA through the aux map (Plan::aux_by_tma)
  float* partials = nullptr;  ///< StorePath::Partials: splits × batch × m × n floats
  int splits = 1;             ///< splits of K of the schedule
  int cluster_splits = 1;     ///< > 1: the splits of a tile are a cluster's CTAs, added in DSMEM
  StreamKHandover stream_k;   ///< on when parked is set
};

/// The finishing code a persistent instantiation holds: Any, every store path and the fused
/// epilogue (the general kernel); Plain, tiles stored by TMA as they are (no fused epilogue, no
/// C, no splits added in the cluster); FusedInRegisters, the fused epilogue in registers (f32
/// accumulators, no C, no scales) and then the TMA store. The code a launch of the last two runs
/// then lies together instead of spread among the other paths, whose instruction fetches a short
/// unit waits for (docs/engine.md#the-fused-epilogue).
enum class TileFinish : std::uint8_t { Any, Plain, FusedInRegisters };

}  // namespace hgemm::detail::engine
