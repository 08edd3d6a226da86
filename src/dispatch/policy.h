// The one place that decides what "auto" runs: the engine (and its plan), a ladder entry or a
// cuBLAS fallback, for a problem on a described device. Pure host code (no CUDA calls), so that a
// CPU test pins every choice against described devices (tests/cpu/test_dispatch.cpp).
#pragma once

#include <string>

#include "common/device.h"
#include "common/matmul.h"
#include "engine/sm90/plan.h"
#include "registry/registry.h"

namespace hgemm::detail {

/// What runs for one problem: an entry, and for the engine its plan.
struct Choice {
  const KernelEntry* entry = nullptr;
  bool engine = false;
  engine::Plan plan;
};

/// auto's choice for p on d. Status and `why` (the first refusal) when no entry can run p.
Status choose_auto(const Matmul& p, const Device& d, Choice* out, std::string* why);

/// One line naming what runs: the entry id, and for the engine its plan.
std::string describe(const Choice& c);

}  // namespace hgemm::detail
