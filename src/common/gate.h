// SPDX-License-Identifier: Apache-2.0
// The gate pass of hgemm/gated.h (SwiGLU) and its gradient, on validated arguments.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/convert.h"
#include "hgemm/gated.h"

namespace hgemm::detail {

/// D = silu(Z_gate) · Z_up over `batch` matrices of rows × cols (D's size; Z has 2·cols).
Status gate_matrices(TypedMatrices z, TypedMatrices d, GateLayout layout, std::int64_t rows, std::int64_t cols,
                     std::int64_t batch, cudaStream_t stream, std::string* message);

/// dZ = [dD · Z_up · silu'(Z_gate), dD · silu(Z_gate)] in Z's layout, the same sizes.
Status gate_gradient_matrices(TypedMatrices z, TypedMatrices dd, TypedMatrices dz, GateLayout layout,
                              std::int64_t rows, std::int64_t cols, std::int64_t batch, cudaStream_t stream,
                              std::string* message);

}  // namespace hgemm::detail
