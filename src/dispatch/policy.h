// SPDX-License-Identifier: Apache-2.0
// The one place that decides what runs: for "auto" the engine (and its plan), a ladder entry or a
// cuBLAS fallback; for a kernel named by id that entry, and for an engine entry its plan. Pure
// host code (no CUDA calls), so that a CPU test pins every choice against described devices
// (tests/cpu/test_dispatch.cpp).
#pragma once

#include <string>
#include <string_view>

#include "common/device.h"
#include "common/matmul.h"
#include "engine/sm90/plan.h"
#include "registry/registry.h"

namespace hgemm::detail {

/// What runs for one problem: an entry, and for an engine entry the plan it runs. The plan is
/// made here, once; the entry carries it out (KernelEntry::run_plan) and does not plan again.
struct Choice {
  const KernelEntry* entry = nullptr;
  bool engine = false;  ///< an engine entry: it runs `plan`
  engine::Plan plan;
  /// The batch runs as one product of batch·M rows (batch_fold.h): the entry and plan are that
  /// product's, and run_of(choice, p) is what they run.
  bool one_product = false;
};

/// The problem c's entry runs for p: p, or its batch as one product (Choice::one_product).
Matmul run_of(const Choice& c, const Matmul& p);

/// auto's choice for p on d. Status and `why` (the first refusal) when no entry can run p.
Status choose_auto(const Matmul& p, const Device& d, Choice* out, std::string* why);

/// What runs p on d for kernel `id`: auto's choice for "auto", else the entry of that id where it
/// supports p and can apply p's epilogue, with its plan. Status and `why` otherwise.
Status choose_kernel(const Matmul& p, std::string_view id, const Device& d, Choice* out, std::string* why);

/// One line naming what runs: the entry id, and for the engine its plan.
std::string describe(const Choice& c);

}  // namespace hgemm::detail
