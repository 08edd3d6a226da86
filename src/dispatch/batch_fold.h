// SPDX-License-Identifier: Apache-2.0
// A strided batch that is one product in disguise: every product shares B, and each product's
// rows of A, C, D and aux follow the previous product's, so the batch is a (batch·M)×K by K×N
// product (a contiguous activation batch times one weight, say): one launch of full tiles instead
// of `batch` products of M rows each. Pure host code, part of the dispatch's choice.
#pragma once

#include "common/matmul.h"

namespace hgemm::detail {

/// Whether p's batch is one product of batch·M rows: B shared (stride 0), op(A) = N, and A, D, C
/// (where read) and aux strided by M of their rows; no vector along M (one per product) and the
/// vectors along N shared by every product.
bool batch_is_one_product(const Matmul& p);

/// That product (batch_is_one_product(p)): M·batch rows, batch 1.
Matmul as_one_product(const Matmul& p);

}  // namespace hgemm::detail
