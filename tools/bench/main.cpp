// SPDX-License-Identifier: Apache-2.0
// hgemm-bench: times registered kernels against cuBLAS in the same run and checks each result.
// Every call goes through hgemm::matmul with the chosen types (--dtype, --out) and batch.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "config.h"
#include "device_info.h"
#include "grouped.h"
#include "peak.h"
#include "pointers.h"
#include "report.h"
#include "runner.h"

namespace {

void print_progress(const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); }

}  // namespace

int main(int argc, char** argv) {
  using namespace hgemm::bench;
  CLI::App app{"hgemm-bench: time hgemm kernels against cuBLAS (same run, interleaved) and check their results"};
  std::string kernel_patterns, shapes_text, suite = "ladder", op_text = "nn", accum_text = "both", json_path, csv_path;
  std::string dtype_text = "f16", out_text = "f16", batch_text, groups_text;
  RunOptions opt;
  bool list = false, peak = false, pointers = false;
  app.add_option("--kernels", kernel_patterns,
                 "comma-separated kernel ids or globs, or auto (default: every non-baseline kernel)");
  auto* shapes_opt = app.add_option("--shapes", shapes_text,
                                    "comma-separated shapes MxNxK[bB][:ldL]: bB a strided batch of B products "
                                    "(64x64x64b1024), :ldL lda = ldb = ldc = L (4096x4096x4096:ld4099)");
  app.add_option("--suite", suite,
                 "named shape set: square, llm, ragged, ladder, auto, batched (strided batches, each shape with "
                 "its own batch count), grouped (MoE layers, each shape with its own groups)")
      ->excludes(shapes_opt);
  app.add_option("--op", op_text, "op(A) op(B): nn, nt, tn or tt");
  app.add_option("--accum", accum_text,
                 "accumulation: f16, f32 or both (f16 runs only with f16 inputs and outputs; otherwise it is noted "
                 "and skipped)");
  app.add_option("--dtype", dtype_text, "type of A and B: f16 or bf16 (default f16)");
  app.add_option("--out", out_text,
                 "type of C and D: f16, bf16 or f32, or several comma-separated, each a run of its own (default f16)");
  app.add_option("--batch", batch_text,
                 "run every shape without a batch of its own as a strided batch of this many products (default 1)");
  app.add_option("--groups", groups_text,
                 "run every shape without groups of its own as a grouped problem (contiguous layout) of this many "
                 "groups, M rows in all, sized as the grouped suite documents; timed against "
                 "cublasGemmGroupedBatchedEx and a loop of cuBLAS calls (--kernels does not apply)");
  std::string epilogue_text;
  app.add_option("--epilogue", epilogue_text,
                 "fused epilogue, comma-separated: bias or bias_m, relu|gelu|gelu_tanh|silu, aux, scale (e.g. "
                 "bias,gelu_tanh,aux); times each kernel fused, plain (no epilogue) and unfused against cuBLASLt's "
                 "matching epilogue");
  app.add_option("--warmup", opt.warmup, "untimed rounds before timing")->check(CLI::NonNegativeNumber);
  app.add_option("--iters", opt.iters, "timed launches per kernel")->check(CLI::PositiveNumber);
  app.add_option("--seed", opt.seed, "seed of the random inputs");
  app.add_option("--json", json_path, "write the results as JSON to this file");
  app.add_option("--csv", csv_path, "write the results as CSV to this file");
  app.add_flag("--pointers", pointers,
               "run every shape (with its batch count; use --suite batched) as gemm_batched over products scattered "
               "at no common stride, with host arrays (pointer_batch_in_one_launch) and device arrays, timed "
               "against cublasGemmBatchedEx; f16 only (--kernels does not apply); prints each call's host time");
  app.add_flag("--list", list, "list the registered kernels and exit");
  app.add_flag("--peak", peak,
               "measure the CUDA cores' fp16/fp32 FMA ceilings, mma.sync's and the DRAM read rate, then exit");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    for (const hgemm::KernelInfo& k : hgemm::kernels())
      std::printf("%-32s %s%s\n", k.id.c_str(), k.summary.c_str(), k.baseline ? " [baseline]" : "");
    return 0;
  }
  try {
    opt.shapes = shapes_text.empty() ? suite_shapes(suite) : parse_shapes(shapes_text);
    if (!batch_text.empty()) opt.shapes = with_batch(opt.shapes, parse_batch(batch_text));
    if (!groups_text.empty()) opt.shapes = with_groups(opt.shapes, parse_groups(groups_text));
    for (const Shape& s : opt.shapes)
      if (s.groups > 0) grouped_rows(s.groups, s.m);  // M a multiple of 16, before any GPU work
    std::tie(opt.op_a, opt.op_b) = parse_op(op_text);
    for (const Shape& s : opt.shapes) layout_of(s, opt.op_a, opt.op_b);  // an ld too small, before any GPU work
    opt.in_type = parse_input_type(dtype_text);
    opt.out_types = parse_output_types(out_text);
    opt.accums = parse_accums(accum_text);
    opt.kernels = select_kernels(kernel_patterns);
    opt.epilogue = parse_epilogue(epilogue_text);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "hgemm-bench: %s\n", e.what());
    return 1;
  }
  std::string why;
  if (!device_available(&why)) {
    std::fprintf(stderr,
                 "hgemm-bench: no CUDA GPU found (%s).\n"
                 "The benchmark needs an NVIDIA GPU; on this machine run the tests instead (make test).\n",
                 why.c_str());
    return 2;
  }
  if (peak) {
    try {
      for (const PeakResult& r : measure_peaks())
        std::printf("%-44s %8.2f %s\n", r.what.c_str(), r.value, r.unit.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hgemm-bench: %s\n", e.what());
      return 4;
    }
    return 0;
  }
  try {
    Header header = describe_device();
    header.warmup = opt.warmup, header.iters = opt.iters;
    for (int i = 0; i < argc; ++i) header.command += (i ? " " : "") + std::string(argv[i]);
    std::fprintf(stderr, "hgemm-bench on %s (%d SMs, max SM clock %d MHz), driver %s, cuBLAS %s\n",
                 header.gpu.c_str(), header.sm_count, header.sm_clock_max_mhz, header.driver.c_str(),
                 header.cublas.c_str());
    // Grouped shapes go to their own runner; the others to the kernels' one.
    RunOptions plain = opt;
    plain.shapes.clear();
    for (const Shape& s : opt.shapes)
      if (s.groups == 0) plain.shapes.push_back(s);
    std::vector<Row> rows = plain.shapes.empty() ? std::vector<Row>()
                            : pointers           ? run_pointer_benchmark(plain, print_progress, &header.notes)
                                                 : run_benchmark(plain, print_progress, &header.notes);
    const std::vector<Row> grouped = run_grouped_benchmark(opt, print_progress);
    rows.insert(rows.end(), grouped.begin(), grouped.end());
    std::cout << format_table(rows) << "\n" << format_summary(summarize(rows)) << std::flush;
    if (!json_path.empty()) std::ofstream(json_path) << to_json(header, rows).dump(2) << "\n";
    if (!csv_path.empty()) std::ofstream(csv_path) << to_csv(rows);
    for (const Row& r : rows)
      if (!r.ok && r.error.empty()) {
        std::fprintf(stderr, "hgemm-bench: %s on %s (%s/%s, %s accumulation) exceeded its error tolerance\n",
                     r.kernel.c_str(), shape_string(r).c_str(), r.dtype.c_str(), r.out_dtype.c_str(), r.accum.c_str());
        return 3;
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hgemm-bench: %s\n", e.what());
    return 4;
  }
  return 0;
}
