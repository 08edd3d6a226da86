// SPDX-License-Identifier: Apache-2.0
#include "analysis/bank_model.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

namespace hgemm::banks {

namespace {

bool pairs_with(const Request& r, int mask) {
  bool any = false;
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneAccess& a = r.lanes[lane];
    const LaneAccess& b = r.lanes[lane ^ mask];
    if (!a.active) continue;
    any = true;
    if (!b.active || a.byte_address != b.byte_address) return false;
  }
  return any;
}

// The worst bank's count of distinct words among the given lanes.
int busiest_bank(const Request& r, int first_lane, int lane_count) {
  std::array<std::set<std::uint32_t>, kBanks> words;
  const int words_per_access = std::max(1, r.width / 4);
  for (int lane = first_lane; lane < first_lane + lane_count; ++lane) {
    const LaneAccess& a = r.lanes[lane];
    if (!a.active) continue;
    const std::uint32_t first_word = a.byte_address / 4;
    for (int w = 0; w < words_per_access; ++w) words[(first_word + w) % kBanks].insert(first_word + w);
  }
  std::size_t worst = 0;
  for (const auto& s : words) worst = std::max(worst, s.size());
  return static_cast<int>(worst);
}

Cost cost_in_phases(const Request& r, int lanes_per_phase) {
  Cost c;
  for (int first = 0; first < kWarp; first += lanes_per_phase) {
    const int worst = busiest_bank(r, first, lanes_per_phase);
    if (worst == 0) continue;
    ++c.phases;
    c.wavefronts += worst;
    c.ways = std::max(c.ways, worst);
  }
  return c;
}

}  // namespace

bool pairs_share_addresses(const Request& r) { return pairs_with(r, 1) || pairs_with(r, 2); }

Cost cost(const Request& r) {
  if (r.width != 1 && r.width != 2 && r.width != 4 && r.width != 8 && r.width != 16)
    throw std::invalid_argument("access width must be 1, 2, 4, 8 or 16 bytes, not " + std::to_string(r.width));
  for (const LaneAccess& a : r.lanes)
    if (a.active && a.byte_address % r.width != 0)
      throw std::invalid_argument("misaligned " + std::to_string(r.width) + "-byte access at byte " +
                                  std::to_string(a.byte_address));
  const int lanes_per_phase = r.width <= 4 ? 32 : r.width == 8 ? 16 : 8;
  const Cost plain = cost_in_phases(r, lanes_per_phase);
  if (r.store || r.width < 8 || !pairs_share_addresses(r)) return plain;
  // Paired lanes: the request may be served in phases twice as wide, when that is cheaper.
  const Cost paired = cost_in_phases(r, 2 * lanes_per_phase);
  return paired.wavefronts < plain.wavefronts ? paired : plain;
}

}  // namespace hgemm::banks
