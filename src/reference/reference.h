// SPDX-License-Identifier: Apache-2.0
// Host-side helpers for checking kernels: deterministic random data, the fp64 reference GEMM,
// and error metrics, for the f16 gemm and the typed matmul (typed storage: typed_data.h).
// Used by the tests and the benchmark; not part of the installed library.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "hgemm/hgemm.h"

namespace hgemm::ref {

/// What random values look like.
enum class Fill {
  Uniform,      ///< uniform in [-1, 1), rounded to half
  SmallInts,    ///< integers in {-2, ..., 2}: products and their sums are exact in fp16 up to 2048
};

/// Value number `index` of the stream `seed`: the same on every machine, so a failure can be
/// reproduced from the seed alone.
float random_value(std::uint64_t seed, std::uint64_t index, Fill fill);

/// Fills `count` halves with random_value(seed, i).
void fill_random(__half* data, std::size_t count, std::uint64_t seed, Fill fill);

/// The fp64 result of C = alpha·op(A)·op(B) + beta·C over the same fp16 inputs, computed with
/// several threads, and the norms the error metric scales by.
struct Reference {
  std::int64_t m = 0, n = 0;
  std::vector<double> c;           ///< m×n, row-major, ld = n
  std::vector<double> a_row_norm;  ///< ‖row i of op(A)‖₂, i < m
  std::vector<double> b_col_norm;  ///< ‖column j of op(B)‖₂, j < n
  double alpha = 1, beta = 0;
  std::vector<double> c_in;        ///< |beta · C_in| per element (0 when beta = 0)
};

Reference reference_gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb, double beta,
                         const __half* c, std::int64_t ldc);

struct ErrorStats {
  double rel_fro = 0;     ///< ‖C − Cref‖_F / ‖Cref‖_F (0 when both are 0)
  double max_scaled = 0;  ///< max |C − Cref| / (|alpha|·‖a_i‖·‖b_j‖ + |beta·c_ij| + floor), f16: 2^-14
  double max_abs = 0;     ///< max |C − Cref|
  std::int64_t nonfinite = 0;  ///< elements of C that are NaN or Inf (Cref is always finite)
  std::int64_t worst_row = -1, worst_col = -1;  ///< where max_scaled is reached (or the first non-finite)
};

/// Compares C (m×n, leading dimension ldc) with the reference.
ErrorStats compare(const Reference& ref, const __half* c, std::int64_t ldc);

/// The fp64 result of D_i = alpha·op(A_i)·op(B_i) + beta·C_i for every product i of a typed,
/// strided-batched matmul, over the inputs exactly as stored: `args` is laid out as for
/// hgemm::matmul (types, leading dimensions, strides in elements) but points to host memory.
/// C is read only when beta ≠ 0 (it may be null or NaN otherwise); D is not read. One Reference
/// per product (Reference::c holds D), none for an empty batch. Several threads.
std::vector<Reference> reference_matmul(const MatmulArgs& args);

/// Compares D (m×n of type d_type, leading dimension ldd) with the reference, as the f16 compare
/// does; the scale's floor is the smallest normal number of d_type (below it, only absolute
/// precision is left): 2^-14 for f16, 2^-126 for bf16 and f32.
ErrorStats compare(const Reference& ref, const void* d, DataType d_type, std::int64_t ldd);

/// The fused epilogue's activation in fp64 (hgemm.h: Activation), by the same formulas, so NaN
/// and ±Inf come out as they do on the device (GELU(-Inf) = -Inf · 0 = NaN).
double activate(Activation a, double z);

}  // namespace hgemm::ref
