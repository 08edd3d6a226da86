// SPDX-License-Identifier: Apache-2.0
// What hgemm-bench runs: shapes, suites, types, kernel selection and error tolerances.
// Host-only, tested on the CPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hgemm/hgemm.h"

namespace hgemm::bench {

/// One problem: a strided batch of `batch` products of M×N×K (batch 1: a single product).
struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t ld = 0;     ///< lda = ldb = ldc (0: each the stored width of its matrix)
  std::int64_t batch = 1;  ///< products in the strided batch, each matrix right after the previous one
  std::int64_t groups = 0;  ///< > 0: a grouped problem of this many groups, M rows in all (grouped_rows)
  std::string str() const;  ///< "MxNxK", with "bB" when batch ≠ 1, "gG" for groups and ":ldL" when ld is set
};

/// Where a shape's matrices lie: stored sizes (row-major), leading dimensions, and the strided
/// batch's steps, each one matrix's size so that the products follow each other.
struct Layout {
  std::int64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;             ///< the shape's ld, else the stored widths
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  ///< elements from one product to the next
  std::int64_t a_count = 0, b_count = 0, c_count = 0;     ///< elements of every product together
};
/// Throws std::invalid_argument when the shape's ld is smaller than a stored width.
Layout layout_of(const Shape& s, Op op_a, Op op_b);

/// Parses "MxNxK[bB][:ldL][,...]": "bB" makes a strided batch of B products (e.g. 64x64x64b1024),
/// ":ldL" sets all three leading dimensions to L. Throws std::invalid_argument with a readable
/// message.
std::vector<Shape> parse_shapes(const std::string& text);

/// Named suites: square, llm, ragged, ladder, auto (the grid `auto` is judged on: squares with
/// odd sizes, the llm shapes, skinny M, ragged shapes and odd leading dimensions) and batched
/// (strided batches, each shape with its own batch count). Throws std::invalid_argument for an
/// unknown name.
std::vector<Shape> suite_shapes(const std::string& name);
std::vector<std::string> suite_names();

/// Parses a --batch value: a positive integer. Throws std::invalid_argument.
std::int64_t parse_batch(const std::string& text);
/// Gives every shape without a batch of its own (batch 1) `batch` products.
std::vector<Shape> with_batch(std::vector<Shape> shapes, std::int64_t batch);

/// The rows of each group of a grouped benchmark shape with `groups` groups and `total` rows (a
/// multiple of 16): uneven, each a multiple of 16, group 1 empty and, from 4 groups on, the last
/// one too. The non-empty groups get total/16 blocks of 16 rows in proportion to the weights
/// 1 + (5g + 2) mod 7, the blocks left by rounding down one each from the first group on.
/// Throws std::invalid_argument when total is not a multiple of 16.
std::vector<std::int64_t> grouped_rows(std::int64_t groups, std::int64_t total);

/// Parses a --groups value: a positive integer. Throws std::invalid_argument.
std::int64_t parse_groups(const std::string& text);
/// Makes every shape that is not grouped a grouped problem of `groups` groups (M rows in all).
std::vector<Shape> with_groups(std::vector<Shape> shapes, std::int64_t groups);

/// Parses "nn", "nt", "tn", "tt" (any case). Throws std::invalid_argument.
std::pair<Op, Op> parse_op(const std::string& text);
std::string op_string(Op a, Op b);

/// "f16", "f32" or "both" → the accumulation types to run.
std::vector<Accum> parse_accums(const std::string& text);
const char* accum_string(Accum a);

/// --dtype: the type of A and B, "f16" or "bf16" (any case). Throws std::invalid_argument.
DataType parse_input_type(const std::string& text);
/// --out: the types of C and D, comma-separated "f16", "bf16", "f32" (any case), each once, in
/// the given order. Throws std::invalid_argument.
std::vector<DataType> parse_output_types(const std::string& text);

/// --epilogue: the fused epilogue to time, comma-separated parts in any order: "bias" (along N,
/// in D's type) or "bias_m" (along M), at most one of "relu", "gelu", "gelu_tanh", "silu", "aux"
/// (Z in D's type) and "scale" (row and column scales); "" or "none" for none.
struct EpilogueSpec {
  BiasAlong bias = BiasAlong::None;
  Activation act = Activation::None;
  bool aux = false, scales = false;
  bool enabled() const { return bias != BiasAlong::None || act != Activation::None || aux || scales; }
  std::string str() const;  ///< the canonical spelling ("none", "bias,gelu,aux", ...)
};
/// Throws std::invalid_argument with a readable message.
EpilogueSpec parse_epilogue(const std::string& text);

/// The cuBLASLt epilogue that computes the same (bias along N, ReLU or GELU with the tanh
/// approximation, aux only with GELU), as the name bench rows give it ("CUBLASLT_EPILOGUE_GELU_AUX_BIAS"),
/// or empty when cuBLASLt has none (SiLU, erf GELU, a bias along M, scales).
std::string cublaslt_epilogue_name(const EpilogueSpec& e);

/// Whether `id` matches a glob with '*' and '?' (e.g. "cuda.*", "*dbuf").
bool glob_match(const std::string& pattern, const std::string& id);

/// The registered, non-baseline kernels matching any of the comma-separated patterns (all of
/// them when `patterns` is empty), in registry order; the pattern "auto" adds "auto" (the
/// library's own choice per problem) first. Throws std::invalid_argument when a pattern matches
/// nothing.
std::vector<std::string> select_kernels(const std::string& patterns);

/// The cuBLAS entry a kernel with this accumulation is compared with (it takes the same types).
const char* baseline_for(Accum a);

/// Whether an accumulation type can run with these types: f16 accumulation needs f16 throughout.
bool accum_takes(Accum a, DataType in, DataType out);

/// What one (accumulation, input type, output type) run times: the selected kernels that take
/// the accumulation and the types ("auto" always), then the baseline last. Each selected kernel
/// left out for its types gets a line in `skipped` (may be null); baselines selected by name are
/// left out silently (the baseline runs anyway).
std::vector<std::string> kernels_to_time(const std::vector<std::string>& selected, Accum a, DataType in,
                                         DataType out, std::vector<std::string>* skipped);

/// Tolerance on max |D − D_ref| / max |D_ref|, D_ref being cuBLAS's f32-accumulated product with
/// an f32 output: the rounding of the output type, plus for f16 accumulation a random walk of K
/// roundings to f16.
double error_tolerance(Accum accum, DataType out, std::int64_t k);

}  // namespace hgemm::bench
