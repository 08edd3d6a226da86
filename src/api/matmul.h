// SPDX-License-Identifier: Apache-2.0
// The steps of a matmul call, shared by the typed entry point and the f16 shorthand.
#pragma once

#include <string_view>

#include "common/matmul.h"
#include "dispatch/policy.h"
#include "registry/registry.h"

namespace hgemm::detail {

/// The typed problem of a public call.
Matmul typed_problem(const MatmulArgs& args, Accum accum);

/// Validates p (arguments, then the device and, with check_pointers, its pointers) and picks
/// what runs it (`id` or "auto"): the entry, and an engine entry's plan. No entry for an empty
/// batch, which needs nothing. Nothing is launched.
Status prepare_matmul(const Matmul& p, std::string_view id, bool check_pointers, Choice* choice);

/// Launches p as prepare_matmul chose (nothing without an entry or for an empty D); an engine
/// entry runs the choice's plan, which nothing here makes again.
Status run_matmul(const Choice& choice, const Matmul& p, cudaStream_t stream);

}  // namespace hgemm::detail
