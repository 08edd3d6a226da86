// SPDX-License-Identifier: Apache-2.0
// hgemm-banks: the shared-memory bank-conflict model of src/analysis applied to the kernels of
// the ladder; optionally compared with ncu's counters and written out as docs/bank-conflicts.md.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "banks_report.h"

int main(int argc, char** argv) {
  using namespace hgemm::banks;
  CLI::App app{"hgemm-banks: shared-memory bank conflicts of the ladder's kernels, from their own index math"};
  std::string kernel = "all", markdown, ncu_csv, shape_text = "2048x2048x2048";
  app.add_option("--kernel", kernel, "a kernel id, or 'all'");
  app.add_option("--markdown", markdown, "write the report as Markdown to this file (docs/bank-conflicts.md)");
  app.add_option("--ncu-csv", ncu_csv, "ncu --csv output with the bank metrics, to compare with (scripts/gpu-check.sh)");
  app.add_option("--shape", shape_text, "MxNxK of the ncu run, for the predicted totals");
  CLI11_PARSE(app, argc, argv);
  try {
    const Shape shape = parse_shape(shape_text);
    std::vector<Measured> measured;
    if (!ncu_csv.empty()) measured = read_ncu_csv(ncu_csv);
    std::vector<const KernelSmem*> chosen;
    for (const KernelSmem& k : ladder_kernels())
      if (kernel == "all" || k.id == kernel) chosen.push_back(&k);
    if (chosen.empty()) throw std::invalid_argument("no analysed kernel named '" + kernel + "'");
    std::cout << text_report(chosen, measured, shape);
    if (!markdown.empty()) {
      std::ofstream out(markdown);
      out << markdown_report(chosen, measured, shape);
      if (!out) throw std::runtime_error("cannot write " + markdown);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hgemm-banks: %s\n", e.what());
    return 1;
  }
  return 0;
}
