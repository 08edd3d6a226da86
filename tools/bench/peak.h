// Arithmetic ceilings of the CUDA cores, measured: the roofs the CUDA-core ladder is judged by.
#pragma once

#include <string>
#include <vector>

namespace hgemm::bench {

struct PeakResult {
  std::string what;  ///< e.g. "HFMA2 (half2 FMA)"
  double tflops = 0;
};

/// Times long chains of independent FMAs held in registers (no memory traffic): HFMA2, scalar
/// HFMA and FFMA. Throws std::runtime_error on CUDA errors.
std::vector<PeakResult> measure_cuda_core_peaks();

}  // namespace hgemm::bench
