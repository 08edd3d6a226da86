// The one place that decides what "auto" runs: a ladder entry, the engine or a cuBLAS fallback,
// for a problem on a described device. Pure host code (no CUDA calls), so that a CPU test pins
// every choice against described devices (tests/cpu/test_dispatch.cpp).
#pragma once

#include <string>

#include "common/matmul.h"
#include "dispatch/device.h"
#include "registry/registry.h"

namespace hgemm::detail {

/// What runs for one problem.
struct Choice {
  const KernelEntry* entry = nullptr;
};

/// auto's choice for p on d. Status and `why` (the first refusal) when no entry can run p.
Status choose_auto(const Matmul& p, const Device& d, Choice* out, std::string* why);

/// One line naming what runs (the entry id, and for the engine its plan).
std::string describe(const Choice& c);

}  // namespace hgemm::detail
