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

/// The types of A and B: each f16 or bf16, both the same (their values already known types).
Status validate_input_types(DataType a_type, DataType b_type);

/// Whether the pointers p reads and writes are accessible from the GPU (not plain host memory).
Status validate_pointers_accessible(const Matmul& p);

}  // namespace hgemm::detail
