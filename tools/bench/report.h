// Benchmark results: one Row per (kernel, shape, op, accumulation), a Header describing the
// machine, and their JSON / CSV / console renderings. Host-only, tested on the CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hgemm::bench {

struct Header {
  std::string gpu, driver, cuda_runtime, cublas, date;
  int sm_count = 0, compute_capability = 0, sm_clock_max_mhz = 0;
  std::int64_t l2_bytes = 0;
  int warmup = 0, iters = 0;
  std::string command;  ///< the command line that produced the run
};

struct Row {
  std::string kernel, op, accum;
  std::string resolved;  ///< for kernel "auto": the entry it chose
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t ld = 0;  ///< lda = ldb = ldc when set (0: packed)
  double median_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
  double tflops = 0;
  double tbps = 0;        ///< 2·(MK + KN + MN) bytes (each operand once) per median time, TB/s
  double pct_cublas = 0;  ///< 100 · baseline median / this median, baseline = cuBLAS with matched accumulation
  double max_err = 0;     ///< max |C − C_cublas.acc32| / max |C_cublas.acc32|
  bool ok = true;         ///< ran and max_err is within the accumulation's tolerance
  int launches = 0;       ///< timed launches (the same for every kernel of a shape)
  int input_sets = 0;     ///< rotated input sets (so that inputs do not sit in L2)
  int sm_clock_mhz = 0;   ///< SM clock read right after this shape's timing (0 = unknown)
  std::string error;      ///< non-empty when the kernel could not run
};

/// One kernel and accumulation over every shape it ran: the geometric mean of its speed ratio to
/// cuBLAS and the worst shape.
struct Summary {
  std::string kernel, accum;
  int shapes = 0;
  double geomean_ratio = 0, worst_ratio = 0;
  std::string worst_shape;
};
/// Per (non-baseline kernel, accumulation), over the rows that ran and have a cuBLAS figure.
std::vector<Summary> summarize(const std::vector<Row>& rows);
std::string format_summary(const std::vector<Summary>& s);

nlohmann::json to_json(const Header& h, const std::vector<Row>& rows);
std::string to_csv(const std::vector<Row>& rows);
/// The console table: kernel, shape, op, acc, median ms, TFLOP/s, % cuBLAS, spread, max err.
std::string format_table(const std::vector<Row>& rows);

}  // namespace hgemm::bench
