// SPDX-License-Identifier: Apache-2.0
// The pointer-batch side of hgemm-bench (--pointers): gemm_batched over products scattered in
// memory at no common stride, with host arrays (pointer_batch_in_one_launch) and with device
// arrays, timed against cublasGemmBatchedEx on the same device arrays, interleaved in the same
// run with the same launch count; every result checked against cuBLAS in f32. Also the host
// time of one call of each.
#pragma once

#include <string>
#include <vector>

#include "report.h"
#include "runner.h"

namespace hgemm::bench {

/// Runs every shape of `options` as a pointer batch of its batch count (f16 A, B, C; the other
/// output types are noted in `notes` and left out); the rows carry the baseline
/// cublas.batched, and ours in `resolved` the kernels one call queues (counted in a captured
/// graph: the map writers and the one launch, or one launch per product). `notes` (may be null)
/// also gets each shape's host time per call. Throws std::runtime_error when CUDA fails.
std::vector<Row> run_pointer_benchmark(const RunOptions& options, void (*progress)(const std::string&),
                                       std::vector<std::string>* notes);

}  // namespace hgemm::bench
