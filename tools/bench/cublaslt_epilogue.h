// SPDX-License-Identifier: Apache-2.0
// cuBLASLt with a fused epilogue, the baseline of hgemm-bench --epilogue where cuBLASLt has the
// same epilogue (config.h: cublaslt_epilogue_name).
#pragma once

#include <string>

#include "config.h"
#include "hgemm/hgemm.h"

namespace hgemm::bench {

/// D = epilogue(op(A)·op(B)) by cublasLtMatmul for a single product (batch 1, beta 0) described
/// as for hgemm::matmul: row-major D is column-major Dᵀ = op(B)ᵀ·op(A)ᵀ, whose rows are D's
/// columns, so cuBLASLt's bias (one value per row of its D) is a bias along N. The bias and aux
/// are args.epilogue's, in D's type. Descriptors and the chosen algorithm are kept per problem;
/// the launch is on the default stream. Returns false with `error` when cuBLASLt refuses.
bool cublaslt_matmul(const MatmulArgs& args, const EpilogueSpec& spec, std::string* error);

}  // namespace hgemm::bench
