// The steps of a matmul call, shared by the typed entry point and the f16 shorthand.
#pragma once

#include <string_view>

#include "common/matmul.h"
#include "registry/registry.h"

namespace hgemm::detail {

/// The typed problem of a public call.
Matmul typed_problem(const MatmulArgs& args, Accum accum);

/// Validates p (arguments, then the device and, with check_pointers, its pointers) and picks the
/// entry that runs it (`id` or "auto"); null for an empty batch, which needs nothing. Nothing is
/// launched.
Status prepare_matmul(const Matmul& p, std::string_view id, bool check_pointers, const KernelEntry** entry);

/// Launches p with the entry prepare_matmul picked (nothing for a null entry or an empty D).
Status run_matmul(const KernelEntry* e, const Matmul& p, cudaStream_t stream);

}  // namespace hgemm::detail
