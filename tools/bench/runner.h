// The GPU side of hgemm-bench: inputs, correctness check against cuBLAS, interleaved timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "report.h"

namespace hgemm::bench {

struct RunOptions {
  std::vector<std::string> kernels;  ///< ids to time (their cuBLAS baselines are added)
  std::vector<Shape> shapes;
  Op op_a = Op::N, op_b = Op::N;
  std::vector<Accum> accums{Accum::F16, Accum::F32};
  int warmup = 3, iters = 20;
  std::uint64_t seed = 1;
};

/// Whether a CUDA device is present; otherwise `why` says what CUDA reported.
bool device_available(std::string* why);

/// GPU name, clocks, versions and the date.
Header describe_device();

/// Runs every kernel on every shape and accumulation; throws std::runtime_error when CUDA fails.
/// `progress` (may be null) receives one line per finished shape.
std::vector<Row> run_benchmark(const RunOptions& options, void (*progress)(const std::string&));

/// Tolerance on Row::max_err for a kernel of this accumulation at depth K.
double error_tolerance(Accum accum, std::int64_t k);

}  // namespace hgemm::bench
