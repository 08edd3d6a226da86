// SPDX-License-Identifier: Apache-2.0
// XOR swizzle of shared-memory tiles read by ldmatrix (mma ladder, rung 04).
// ldmatrix reads an 8×8 matrix as eight 16-byte row pieces in one wavefront, conflict-free only
// if the eight pieces fall in eight different 16-byte bank groups (bank group = byte address / 16
// mod 8). Rows of a tile sit one after another, so a column of chunks in a tile with 128-byte (or
// wider) rows hits the same group eight times. Storing chunk u of row r at chunk u ^ f(r) spreads
// them: f(r) = r % 8 for rows of 128 bytes or more; for 64-byte rows two rows share a 128-byte
// line, so f(r) = (r / 2) % 4 and the row's half of the line tells the rest.
// Plain C++ (host and device) so a CPU test can check every address pattern the kernel uses.
#pragma once

#include "common/host_device.h"

namespace hgemm::detail {

/// Element offset of (r, c) in a swizzled tile with rows of ROW halves (c / 8 picks the 16-byte
/// chunk, c % 8 the element inside it).
template <int ROW>
HGEMM_HOST_DEVICE constexpr int swizzled(int r, int c) {
  static_assert(ROW == 32 || ROW % 64 == 0, "rows of 64 bytes or of a multiple of 128 bytes");
  const int f = ROW == 32 ? (r / 2) % 4 : r % 8;
  return r * ROW + (((c / 8) ^ f) * 8) + c % 8;
}

}  // namespace hgemm::detail
