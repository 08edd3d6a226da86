// SPDX-License-Identifier: Apache-2.0
// The machine hgemm-bench runs on: whether there is a GPU, and the header of every result file.
#pragma once

#include <string>

#include "report.h"

namespace hgemm::bench {

/// Whether a CUDA device is present; otherwise `why` says what CUDA reported.
bool device_available(std::string* why);

/// GPU name, clocks, versions and the date.
Header describe_device();

/// The current SM clock as nvidia-smi reports it, in MHz (0 when unknown).
int current_sm_clock_mhz();

}  // namespace hgemm::bench
