// SPDX-License-Identifier: Apache-2.0
// The shared-memory instructions of each kernel of the ladder, described from the kernels' own
// index math (each rung's `Smem` functions, compiled here with HGEMM_LAYOUT_ONLY) and from the
// widths the compiler emits (checked against cuobjdump -sass), and their cost under bank_model.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bank_model.h"

namespace hgemm::banks {

/// One shared-memory instruction of a kernel's main loop, as one warp executes it.
struct SmemInstruction {
  std::string name;    ///< e.g. "LDS.128 s_a (A fragment)"
  std::string array;   ///< "s_a" or "s_b"
  bool store = false;
  int width = 4;       ///< bytes per lane
  int per_slice = 1;   ///< executions per warp per K slice
  /// Byte offset in `array` for lane `lane` of warp `warp` at execution `i` (0 ≤ i < per_slice) of
  /// slice `slice`; nullopt for an inactive lane.
  std::function<std::optional<std::uint32_t>(int warp, int lane, int i, int slice)> address;
};

struct KernelSmem {
  std::string id;        ///< registry id
  int warps = 8;         ///< warps per block
  int bm = 128, bn = 128, bk = 8;  ///< block tile and slice depth
  int slice_period = 1;  ///< slices after which the addresses repeat (2 for double buffering)
  std::vector<SmemInstruction> instructions;
};

/// Every kernel of the ladder that uses shared memory, in ladder order.
const std::vector<KernelSmem>& ladder_kernels();

/// Costs of one instruction over all warps, executions and one slice period.
struct InstructionCost {
  double wavefronts_per_request = 0;  ///< average
  int worst_ways = 0;                 ///< worst n-way conflict of any request
  double ideal_wavefronts_per_request = 0;  ///< average of the phases count (what conflict-free costs)
  std::int64_t requests_per_block_slice = 0;  ///< warps × per_slice
};
InstructionCost analyse(const KernelSmem& k, const SmemInstruction& ins);

/// Totals for one launch of M×N×K (blocks × slices).
struct KernelTotals {
  double load_requests = 0, load_wavefronts = 0, store_requests = 0, store_wavefronts = 0;
};
KernelTotals predict(const KernelSmem& k, std::int64_t m, std::int64_t n, std::int64_t kdim);

}  // namespace hgemm::banks
