// SPDX-License-Identifier: Apache-2.0
// Tables of hgemm-banks: the model per instruction, ncu's counters beside it, and the Toy-HGEMM
// report's claims.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/ladder.h"

namespace hgemm::banks {

struct Shape {
  std::int64_t m = 2048, n = 2048, k = 2048;
};
Shape parse_shape(const std::string& text);

/// ncu's counters for one kernel (first profiled launch of its f16 instantiation).
struct Measured {
  std::string id;
  double load_requests = -1, load_wavefronts = -1, load_conflicts = -1;
  double store_requests = -1, store_wavefronts = -1, store_conflicts = -1;
};

/// Parses `ncu --csv --metrics ...` output (metrics of scripts/gpu-check.sh); kernels are matched
/// to registry ids by their namespace (cuda_t8x8_f16x4:: → cuda.t8x8_f16x4).
std::vector<Measured> read_ncu_csv(const std::string& path);

std::string text_report(const std::vector<const KernelSmem*>& kernels, const std::vector<Measured>& measured,
                        const Shape& shape);
std::string markdown_report(const std::vector<const KernelSmem*>& kernels, const std::vector<Measured>& measured,
                            const Shape& shape);

}  // namespace hgemm::banks
