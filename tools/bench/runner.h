// SPDX-License-Identifier: Apache-2.0
// The timing side of hgemm-bench: every kernel checked against the reference, then timed
// interleaved with its cuBLAS baseline on rotating input sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "report.h"

namespace hgemm::bench {

struct RunOptions {
  std::vector<std::string> kernels;  ///< ids to time (their cuBLAS baselines are added)
  std::vector<Shape> shapes;         ///< each with its batch count
  Op op_a = Op::N, op_b = Op::N;
  std::vector<Accum> accums{Accum::F16, Accum::F32};
  DataType in_type = DataType::F16;                     ///< A and B
  std::vector<DataType> out_types{DataType::F16};       ///< C and D, each a run of its own
  int warmup = 3, iters = 20;
  std::uint64_t seed = 1;
  /// The fused epilogue of every run (bias and aux in D's type, scales f32). With one, each kernel
  /// is timed fused and unfused ("<id>+unfused": the plain product, then the library's
  /// elementwise pass), against cuBLASLt with the same epilogue ("cublaslt:<EPILOGUE>") where one
  /// exists for f32 accumulation, else against the first kernel's unfused run.
  EpilogueSpec epilogue;
};

/// Runs every kernel on every shape, output type and accumulation, through hgemm::matmul; throws
/// std::runtime_error when CUDA fails. `progress` (may be null) receives one line per finished
/// shape and one per note; `notes` (may be null) gets what was left out because of its types.
std::vector<Row> run_benchmark(const RunOptions& options, void (*progress)(const std::string&),
                               std::vector<std::string>* notes);

}  // namespace hgemm::bench
