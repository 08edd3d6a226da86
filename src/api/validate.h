// SPDX-License-Identifier: Apache-2.0
// Validation of a typed problem, in two halves: what needs no device (sizes, types, leading
// dimensions, null pointers, alignment to the element size, overlaps), then what does (the
// pointers are device-accessible memory).
#pragma once

#include "common/matmul.h"

namespace hgemm::detail {

/// Everything that can be checked without a device; on failure the status and last error.
Status validate_arguments(const Matmul& p);

/// Success where matrices `stride` elements apart, each `rows` rows `ld` apart, do not overlap
/// (stride ≥ ld·rows, compared in 128 bits); else InvalidLeadingDim with a message naming them,
/// e.g. "stride_d = 19 is smaller than ldd * M = 20: the D matrices would overlap".
Status matrices_apart(const char* stride_name, std::int64_t stride, const char* ld_name, std::int64_t ld,
                      std::int64_t rows, const char* matrices);

/// Whether the products of a batch given by pointers (product i: A at a[i], B at b[i], D and C in
/// place at d[i], every other field as in `shape`) are independent: no D shares a byte with
/// another product's D or with any product's A or B (whole spans compared, row padding
/// included). Only then may they run at once; otherwise they run in order.
bool products_independent(const Matmul& shape, const void* const* a, const void* const* b, void* const* d,
                          std::int64_t batch);

/// The types of A and B: each f16 or bf16, both the same (their values already known types).
Status validate_input_types(DataType a_type, DataType b_type);

/// The elements a matrix operand spans: `batch` matrices `stride` apart, each `rows` rows of
/// `width` elements `ld` apart (0 when any count is 0), in 128 bits.
__int128 span(std::int64_t batch, std::int64_t stride, std::int64_t rows, std::int64_t ld, std::int64_t width);

/// Success where `elements` of type t from ptr stay under 2^56 bytes (beyond any GPU's memory)
/// and inside the address space; else ProblemTooLarge or InvalidPointer naming `name`.
Status validate_extent(const char* name, const void* ptr, __int128 elements, DataType t);

/// Whether ptr is device-accessible memory (not plain host memory); else InvalidPointer naming it.
Status validate_accessible(const void* ptr, const char* name);

/// Whether the pointers p reads and writes are accessible from the GPU (not plain host memory).
Status validate_pointers_accessible(const Matmul& p);

}  // namespace hgemm::detail
