// SPDX-License-Identifier: Apache-2.0
// The grouped side of hgemm-bench: hgemm::grouped_matmul (contiguous layout, sizes on the device)
// timed against cublasGemmGroupedBatchedEx (sizes on the host) and a loop of cuBLAS calls, one
// per group, interleaved in the same run; every result checked against cuBLAS in f32.
#pragma once

#include <string>
#include <vector>

#include "report.h"
#include "runner.h"

namespace hgemm::bench {

/// Runs the shapes of `options` that have groups (Shape::groups > 0, sizes from grouped_rows);
/// the rows carry `groups` and the baseline cublas.grouped. Throws std::runtime_error when CUDA
/// fails.
std::vector<Row> run_grouped_benchmark(const RunOptions& options, void (*progress)(const std::string&));

}  // namespace hgemm::bench
