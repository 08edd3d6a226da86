// SPDX-License-Identifier: Apache-2.0
// A model of the shared-memory bank rules of NVIDIA GPUs (Volta to Hopper), host-only.
//
// Shared memory has 32 banks of 4-byte words; bank = (byte address / 4) mod 32. One warp-wide
// load or store instruction ("request") is served in wavefronts, one per pass through the banks:
//  1. The warp is split into phases by access width: accesses of up to 4 bytes are served for all
//     32 lanes together, 8-byte accesses by half-warps (lanes 0–15, 16–31), 16-byte accesses by
//     quarter-warps (lanes 0–7, 8–15, …). ldmatrix row addresses count as 16-byte accesses.
//  2. Pairing: when every active lane n reads the same address as lane n^1, or every one the same
//     as lane n^2, an 8- or 16-byte load may be served in phases twice as wide (the unit returns
//     the shared registers packed); the model takes that when it costs fewer wavefronts. Measured on the H200: an LDS.128 that pairs this way costs 2 wavefronts,
//     one that does not costs 4 (docs/bank-conflicts.md); described for CC 7.x by NVIDIA on its
//     forums. Stores are not paired.
//  3. Within a phase every bank serves one word per wavefront; lanes reading the same word share it
//     (broadcast). A phase costs as many wavefronts as its busiest bank has distinct words.
// The request costs the sum over its phases. "n-way" is the largest distinct-word count of a
// bank in any phase: 1 means conflict-free.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace hgemm::banks {

constexpr int kBanks = 32;
constexpr int kWarp = 32;

struct LaneAccess {
  bool active = false;
  std::uint32_t byte_address = 0;  ///< must be a multiple of the access width
};

struct Request {
  int width = 4;        ///< bytes per lane: 1, 2, 4, 8 or 16
  bool store = false;
  std::array<LaneAccess, kWarp> lanes{};
};

struct Cost {
  int wavefronts = 0;  ///< passes needed to serve the request
  int phases = 0;      ///< phases with at least one active lane
  int ways = 0;        ///< worst bank's distinct words in one phase (1 = conflict-free, 0 = no active lane)
};

/// The cost of one request under the rules above. Throws std::invalid_argument for a width other
/// than 1, 2, 4, 8, 16 or a misaligned address.
Cost cost(const Request& r);

/// Whether every active lane shares its address with lane n^1, or every one with lane n^2.
bool pairs_share_addresses(const Request& r);

}  // namespace hgemm::banks
