// SPDX-License-Identifier: Apache-2.0
// Ceilings, measured: the CUDA cores' FMAs (the roofs of the CUDA-core ladder), mma.sync (the
// roof of the sm_80-style tensor-core ladder), and how fast a kernel can read operands that are
// not in L2 (the roof of the decode kernels, which stream B once).
#pragma once

#include <string>
#include <vector>

namespace hgemm::bench {

struct PeakResult {
  std::string what;  ///< e.g. "HFMA2 (half2 FMA)"
  double value = 0;
  std::string unit;  ///< "TFLOP/s" or "TB/s"
};

/// Times long chains of independent FMAs held in registers (no memory traffic): HFMA2, scalar
/// HFMA and FFMA, then mma.sync m16n8k16 with f16 and f32 accumulators the same way; then reads
/// of a 4096×4096 and an 8192×8192 matrix of halves from DRAM, timed as hgemm-bench times a GEMM.
/// Throws std::runtime_error on CUDA errors.
std::vector<PeakResult> measure_peaks();

}  // namespace hgemm::bench
