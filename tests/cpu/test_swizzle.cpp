// SPDX-License-Identifier: Apache-2.0
// The XOR swizzle of the mma ladder (src/common/swizzle.h): every ldmatrix matrix and every
// 8-thread phase of the cp.async stores lands in eight different 16-byte bank groups, and no two
// elements of a tile share an address.
#include <gtest/gtest.h>

#include <set>

#include "common/swizzle.h"

namespace hgemm::detail {
namespace {

int bank_group(int element_offset) { return (element_offset * 2 / 16) % 8; }

template <int ROW>
void check_tile(int rows) {
  std::set<int> seen;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < ROW; ++c) {
      const int at = swizzled<ROW>(r, c);
      EXPECT_GE(at, 0);
      EXPECT_LT(at, rows * ROW);
      EXPECT_TRUE(seen.insert(at).second) << "ROW " << ROW << ": (" << r << ", " << c << ") collides";
    }
  // ldmatrix: rows r0..r0+7 (r0 a multiple of 8, as the kernel issues them), one chunk each.
  for (int r0 = 0; r0 < rows; r0 += 8)
    for (int chunk = 0; chunk < ROW / 8; ++chunk) {
      std::set<int> groups;
      for (int i = 0; i < 8; ++i) groups.insert(bank_group(swizzled<ROW>(r0 + i, chunk * 8)));
      EXPECT_EQ(groups.size(), 8u) << "ROW " << ROW << ", rows " << r0 << "+, chunk " << chunk;
    }
  // cp.async: thread s stores chunk s % (ROW / 8) of row s / (ROW / 8); a wavefront serves 8
  // consecutive threads.
  const int chunks = rows * ROW / 8;
  for (int s0 = 0; s0 < chunks; s0 += 8) {
    std::set<int> groups;
    for (int s = s0; s < s0 + 8; ++s) groups.insert(bank_group(swizzled<ROW>(s / (ROW / 8), (s % (ROW / 8)) * 8)));
    EXPECT_EQ(groups.size(), 8u) << "ROW " << ROW << ", threads " << s0 << "+";
  }
}

TEST(Swizzle, Rows64BytesAreConflictFree) { check_tile<32>(128); }
TEST(Swizzle, Rows128BytesAreConflictFree) { check_tile<64>(128); }
TEST(Swizzle, Rows256BytesAreConflictFree) { check_tile<128>(64); }
TEST(Swizzle, Rows512BytesAreConflictFree) { check_tile<256>(32); }

// Without the swizzle the same ldmatrix would hit one bank group eight times (128-byte rows):
// the check above can fail.
TEST(Swizzle, PlainRowMajorWouldConflict) {
  std::set<int> groups;
  for (int i = 0; i < 8; ++i) groups.insert(bank_group(i * 64));
  EXPECT_EQ(groups.size(), 1u);
}

}  // namespace
}  // namespace hgemm::detail
