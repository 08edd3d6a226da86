// What hgemm-bench runs: shapes, suites, kernel selection. Host-only, tested on the CPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hgemm/hgemm.h"

namespace hgemm::bench {

struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t ld = 0;  ///< lda = ldb = ldc (0: each the stored width of its matrix)
  std::string str() const;  ///< "MxNxK", or "MxNxK:ldL"
};

/// Parses "MxNxK[:ldL][,...]" (":ldL" sets all three leading dimensions to L). Throws
/// std::invalid_argument with a readable message.
std::vector<Shape> parse_shapes(const std::string& text);

/// Named suites: square, llm, ragged, ladder, auto (the grid `auto` is judged on: squares with
/// odd sizes, the llm shapes, skinny M, ragged shapes and odd leading dimensions). Throws std::invalid_argument for an unknown name.
std::vector<Shape> suite_shapes(const std::string& name);
std::vector<std::string> suite_names();

/// Parses "nn", "nt", "tn", "tt" (any case). Throws std::invalid_argument.
std::pair<Op, Op> parse_op(const std::string& text);
std::string op_string(Op a, Op b);

/// "f16", "f32" or "both" → the accumulation types to run.
std::vector<Accum> parse_accums(const std::string& text);
const char* accum_string(Accum a);

/// Whether `id` matches a glob with '*' and '?' (e.g. "cuda.*", "*dbuf").
bool glob_match(const std::string& pattern, const std::string& id);

/// The registered, non-baseline kernels matching any of the comma-separated patterns (all of
/// them when `patterns` is empty), in registry order; the pattern "auto" adds "auto" (the
/// library's own choice per problem) first. Throws std::invalid_argument when a pattern matches
/// nothing.
std::vector<std::string> select_kernels(const std::string& patterns);

/// The cuBLAS entry a kernel with this accumulation is compared with.
const char* baseline_for(Accum a);

}  // namespace hgemm::bench
