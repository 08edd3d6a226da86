// SPDX-License-Identifier: Apache-2.0
// The GPU a problem runs on, as the dispatch policy and the engine's plans see it: plain data, so
// that both can be tested on the CPU against described devices (an H200, an A100, an L4). It lives
// in common/ because both read it: the engine then needs nothing from the dispatch.
#pragma once

#include <string>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

struct Device {
  std::string name;
  int cc = 0;             ///< compute capability × 10: 90 for sm_90
  int sms = 0;            ///< streaming multiprocessors
  bool sm90a_code = false;  ///< the library holds sm_90a code (wgmma) and the GPU is sm_90
  /// clusters[n]: clusters of n CTAs (n = 1..8) of a kernel that needs a whole SM that fit on
  /// the GPU at once (the GPCs decide how many); 0 where clusters are not available.
  int clusters[9] = {};

  bool hopper() const { return cc == 90 && sm90a_code; }
};

/// The current CUDA device, read once per device ordinal (SM count, compute capability, cluster
/// occupancy); Status::NoDevice with `message` set when there is none.
Status current_device(Device* out, std::string* message);

/// Devices described for the CPU tests of the policy. Their cluster counts are those
/// cudaOccupancyMaxActiveClusters reports for a one-CTA-per-SM kernel.
Device described_h200();
Device described_a100();
Device described_l4();

}  // namespace hgemm::detail
