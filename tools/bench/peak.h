// Arithmetic ceilings, measured: the CUDA cores' FMAs (the roofs of the CUDA-core ladder) and
// mma.sync (the roof of the sm_80-style tensor-core ladder).
#pragma once

#include <string>
#include <vector>

namespace hgemm::bench {

struct PeakResult {
  std::string what;  ///< e.g. "HFMA2 (half2 FMA)"
  double tflops = 0;
};

/// Times long chains of independent FMAs held in registers (no memory traffic): HFMA2, scalar
/// HFMA and FFMA, then mma.sync m16n8k16 with f16 and f32 accumulators the same way. Throws
/// std::runtime_error on CUDA errors.
std::vector<PeakResult> measure_peaks();

}  // namespace hgemm::bench
