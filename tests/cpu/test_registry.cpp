// SPDX-License-Identifier: Apache-2.0
// Invariants of the kernel table that every new entry must keep.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "hgemm/hgemm.h"

namespace hgemm {
namespace {

TEST(Registry, IdsAreUniqueAndNamedFamilyDotRung) {
  std::set<std::string> ids;
  const std::regex form("[a-z0-9]+\\.[a-z0-9_]+");
  for (const KernelInfo& k : kernels()) {
    EXPECT_TRUE(ids.insert(k.id).second) << "duplicate id " << k.id;
    EXPECT_TRUE(std::regex_match(k.id, form)) << k.id;
    EXPECT_EQ(k.id.substr(0, k.id.find('.')), k.family) << k.id;
    EXPECT_FALSE(k.summary.empty()) << k.id;
    EXPECT_NE(k.ops, 0u) << k.id;
    EXPECT_NE(k.accums, 0u) << k.id;
    EXPECT_EQ(k.ops & ~unsigned(kAllOps), 0u) << k.id;
    EXPECT_EQ(k.accums & ~unsigned(kBothAccums), 0u) << k.id;
    EXPECT_GE(k.min_cc, 50) << k.id;
    EXPECT_TRUE(k.max_cc == 0 || k.max_cc >= k.min_cc) << k.id;
    EXPECT_GE(k.align, 1) << k.id;
  }
}

TEST(Registry, LaddersAreNumberedInOrder) {
  std::map<std::string, int> last;
  for (const KernelInfo& k : kernels()) {
    EXPECT_EQ(k.ladder, last[k.family] + 1) << k.id << " breaks the ladder order of " << k.family;
    last[k.family] = k.ladder;
  }
}

TEST(Registry, HoldsTheSeedLadderThenHfma2) {
  const std::vector<std::string> expected = {
      "cuda.naive", "cuda.sliced_k", "cuda.t8x8_f16x4", "cuda.t8x8_f16x4_pack", "cuda.t8x8_f16x4_bcf",
      "cuda.t8x8_f16x8_pack_bcf", "cuda.t8x8_f16x8_pack_bcf_dbuf", "cuda.t8x8_hfma2"};
  std::vector<std::string> cuda;
  for (const KernelInfo& k : kernels())
    if (k.family == "cuda") cuda.push_back(k.id);
  EXPECT_EQ(cuda, expected);
  for (const KernelInfo& k : kernels()) {
    if (k.family != "cuda") continue;
    EXPECT_TRUE(k.ops & kOpNN) << k.id;
    EXPECT_EQ(k.align, 1) << k.id << ": the CUDA-core ladder takes any pointer and leading dimension";
    if (k.id == "cuda.t8x8_hfma2")
      EXPECT_EQ(k.accums, unsigned(kAccF16)) << "half2 FMAs accumulate in half";
    else
      EXPECT_EQ(k.accums, unsigned(kBothAccums)) << k.id;
  }
}

TEST(Registry, CublasBaselinesCoverBothAccumulations) {
  unsigned accums = 0;
  for (const KernelInfo& k : kernels()) {
    EXPECT_EQ(k.baseline, k.family == "cublas") << k.id;
    if (k.baseline) {
      accums |= k.accums;
      EXPECT_EQ(k.ops, unsigned(kAllOps)) << k.id;
    }
  }
  EXPECT_EQ(accums, unsigned(kBothAccums));
}

TEST(Registry, OpBitsAreDistinct) {
  std::set<unsigned> bits;
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) bits.insert(op_bit(a, b));
  EXPECT_EQ(bits, (std::set<unsigned>{kOpNN, kOpNT, kOpTN, kOpTT}));
}

}  // namespace
}  // namespace hgemm
