// Validation of a typed problem, in two halves: what needs no device (sizes, types, leading
// dimensions, null pointers, alignment to the element size, overlaps), then what does (the
// pointers are device-accessible memory).
#pragma once

#include "common/matmul.h"

namespace hgemm::detail {

/// Everything that can be checked without a device; on failure the status and last error.
Status validate_arguments(const Matmul& p);

/// The types of A and B: each f16 or bf16, both the same (their values already known types).
Status validate_input_types(DataType a_type, DataType b_type);

/// Whether the pointers p reads and writes are accessible from the GPU (not plain host memory).
Status validate_pointers_accessible(const Matmul& p);

}  // namespace hgemm::detail
