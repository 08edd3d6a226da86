// SPDX-License-Identifier: Apache-2.0
// Benchmark results: one Row per (kernel, shape, op, types, accumulation), a Header describing
// the machine, and their JSON / CSV / console renderings. Host-only, tested on the CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hgemm::bench {

/// Version of the JSON layout: 2 added types, batches, baseline and vs_baseline (files without
/// the field are version 1: f16 throughout, batch 1, pct_cublas only).
inline constexpr int kJsonSchema = 2;

struct Header {
  std::string gpu, driver, cuda_runtime, cublas, date;
  int sm_count = 0, compute_capability = 0, sm_clock_max_mhz = 0;
  std::int64_t l2_bytes = 0;
  int warmup = 0, iters = 0;
  std::string command;             ///< the command line that produced the run
  std::vector<std::string> notes;  ///< what was left out and why (kernels that do not take the types)
};

struct Row {
  std::string kernel;
  std::string resolved;  ///< for kernel "auto": the entry it chose
  std::string dtype = "f16", out_dtype = "f16";  ///< types of A and B, of C and D
  std::string op, accum;
  std::string epilogue = "none";  ///< fused epilogue (none: D = op(A)·op(B))
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t ld = 0;      ///< lda = ldb = ldc when set (0: packed)
  std::int64_t batch = 1;   ///< products of the strided batch
  std::int64_t groups = 0;  ///< groups of a grouped problem (0: not grouped)
  double median_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
  double tflops = 0;       ///< 2·M·N·K·batch per median time
  double tbps = 0;         ///< A, B and D each read or written once, every product, per median time, TB/s
  std::string baseline;    ///< kernel id of the baseline this row is compared with (same types, accumulation)
  double vs_baseline = 0;  ///< baseline median / this median (> 1: faster than the baseline)
  double pct_cublas = 0;   ///< 100 · vs_baseline, kept for readers of older files
  double max_err = 0;      ///< max |D − D_ref| / max |D_ref|, D_ref = cublas.acc32 with an f32 output
  double tolerance = 0;    ///< the bound on max_err for this output type, accumulation and K
  bool ok = true;          ///< ran and max_err is within the tolerance
  int launches = 0;        ///< timed launches (the same for every kernel of a shape)
  int input_sets = 0;      ///< rotated input sets (so that inputs do not sit in L2)
  int sm_clock_mhz = 0;    ///< SM clock read right after this shape's timing (0 = unknown)
  std::string error;       ///< non-empty when the kernel could not run
};

/// The shape column: "MxNxK", with "bB" for a batch and ":ldL" for a leading dimension.
std::string shape_string(const Row& r);

/// One kernel, types and accumulation over every shape it ran: the geometric mean of its speed
/// ratio to the baseline and the worst shape.
struct Summary {
  std::string kernel, dtype, out_dtype, accum;
  int shapes = 0;
  double geomean_ratio = 0, worst_ratio = 0;
  std::string worst_shape;
};
/// Per (kernel, dtype, out_dtype, accumulation), over the rows that ran and have a baseline
/// figure; the baselines' own rows are left out.
std::vector<Summary> summarize(const std::vector<Row>& rows);
std::string format_summary(const std::vector<Summary>& s);

nlohmann::json to_json(const Header& h, const std::vector<Row>& rows);
/// The rows of a file written by to_json, of this or an older layout (missing fields take the
/// values older files implied). Throws nlohmann::json::exception on a malformed file.
std::vector<Row> rows_from_json(const nlohmann::json& j);
std::string to_csv(const std::vector<Row>& rows);
/// The console table: kernel, shape (with its batch), op, types, acc, median ms, TFLOP/s, TB/s,
/// ratio to the baseline, spread, max err.
std::string format_table(const std::vector<Row>& rows);

}  // namespace hgemm::bench
