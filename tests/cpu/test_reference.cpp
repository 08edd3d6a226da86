// SPDX-License-Identifier: Apache-2.0
// The fp64 reference and the error metrics, against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference/reference.h"

namespace hgemm::ref {
namespace {

std::vector<__half> halves(std::initializer_list<float> v) {
  std::vector<__half> out;
  for (float x : v) out.push_back(__float2half(x));
  return out;
}

TEST(Reference, SmallProductByHand) {
  // A = [1 2 3; 4 5 6] (2×3), B = [1 0; 0 1; 1 1] (3×2): A·B = [4 5; 10 11].
  const auto a = halves({1, 2, 3, 4, 5, 6}), b = halves({1, 0, 0, 1, 1, 1}), c = halves({0, 0, 0, 0});
  const Reference r = reference_gemm(Op::N, Op::N, 2, 2, 3, 1.0, a.data(), 3, b.data(), 2, 0.0, c.data(), 2);
  EXPECT_EQ(r.c, (std::vector<double>{4, 5, 10, 11}));
  EXPECT_DOUBLE_EQ(r.a_row_norm[0], std::sqrt(14.0));
  EXPECT_DOUBLE_EQ(r.b_col_norm[1], std::sqrt(2.0));
}

TEST(Reference, AlphaBetaAndLeadingDimensions) {
  // A 2×2 stored with lda = 3 (the third column is padding and must be ignored).
  const auto a = halves({1, 2, 99, 3, 4, 99}), b = halves({1, 1, 1, 1}), c = halves({1, 2, 3, 4});
  const Reference r = reference_gemm(Op::N, Op::N, 2, 2, 2, 2.0, a.data(), 3, b.data(), 2, -1.0, c.data(), 2);
  // 2·[3 3; 7 7] − [1 2; 3 4] = [5 4; 11 10]
  EXPECT_EQ(r.c, (std::vector<double>{5, 4, 11, 10}));
}

TEST(Reference, TransposedOperands) {
  // op(A) = Aᵀ with A stored 3×2 = [1 4; 2 5; 3 6], so op(A) = [1 2 3; 4 5 6]; op(B) = Bᵀ with
  // B stored 2×3 = [1 0 1; 0 1 1], so op(B) = [1 0; 0 1; 1 1]: the product of SmallProductByHand.
  const auto a = halves({1, 4, 2, 5, 3, 6}), b = halves({1, 0, 1, 0, 1, 1}), c = halves({0, 0, 0, 0});
  const Reference r = reference_gemm(Op::T, Op::T, 2, 2, 3, 1.0, a.data(), 2, b.data(), 3, 0.0, c.data(), 2);
  EXPECT_EQ(r.c, (std::vector<double>{4, 5, 10, 11}));
}

TEST(Reference, KZeroGivesBetaC) {
  const auto c = halves({1, -2, 3, 0.5f});
  const Reference r = reference_gemm(Op::N, Op::N, 2, 2, 0, 1.0, nullptr, 1, nullptr, 2, 0.5, c.data(), 2);
  EXPECT_EQ(r.c, (std::vector<double>{0.5, -1, 1.5, 0.25}));
}

TEST(Reference, BetaZeroIgnoresNaNInC) {
  const auto a = halves({1}), b = halves({2}), c = halves({NAN});
  const Reference r = reference_gemm(Op::N, Op::N, 1, 1, 1, 1.0, a.data(), 1, b.data(), 1, 0.0, c.data(), 1);
  EXPECT_EQ(r.c[0], 2.0);
}

TEST(Compare, ExactResultHasNoError) {
  const auto a = halves({1, 2, 3, 4}), b = halves({1, 0, 0, 1}), c = halves({0, 0, 0, 0});
  const Reference r = reference_gemm(Op::N, Op::N, 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
  const ErrorStats e = compare(r, a.data(), 2);  // A·I = A
  EXPECT_EQ(e.max_abs, 0.0);
  EXPECT_EQ(e.rel_fro, 0.0);
  EXPECT_EQ(e.nonfinite, 0);
}

TEST(Compare, MeasuresErrorsAndFindsNaN) {
  const auto a = halves({1, 2, 3, 4}), b = halves({1, 0, 0, 1}), c = halves({0, 0, 0, 0});
  const Reference r = reference_gemm(Op::N, Op::N, 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
  const auto off = halves({1, 2, 3, 4.5f});
  const ErrorStats e = compare(r, off.data(), 2);
  EXPECT_DOUBLE_EQ(e.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(e.rel_fro, 0.5 / std::sqrt(30.0));
  // Scaled by ‖row 1 of A‖·‖column 1 of B‖ = 5 · 1, plus the fp16 normal floor 2^-14.
  EXPECT_DOUBLE_EQ(e.max_scaled, 0.5 / (5 + std::ldexp(1.0, -14)));
  EXPECT_EQ(e.worst_row, 1);
  EXPECT_EQ(e.worst_col, 1);
  const auto nan = halves({1, NAN, 3, 4});
  EXPECT_EQ(compare(r, nan.data(), 2).nonfinite, 1);
}

TEST(Compare, TinyValuesAreJudgedOnFp16sAbsoluteResolution) {
  // K = 0, beta = 0.5: C = 0.5·c. For a subnormal c = 2^-24 the fp16 result must round to 0 or
  // 2^-24; either is within fp16's resolution and must not count as a 50% error.
  const auto c = halves({std::ldexp(1.f, -24)});
  const Reference r = reference_gemm(Op::N, Op::N, 1, 1, 0, 1.0, nullptr, 1, nullptr, 1, 0.5, c.data(), 1);
  const auto zero = halves({0.f});
  EXPECT_LT(compare(r, zero.data(), 1).max_scaled, std::ldexp(1.0, -10));
}

TEST(RandomData, IsDeterministicNonZeroAndInRange) {
  std::vector<__half> x(10000), y(10000);
  fill_random(x.data(), x.size(), 42, Fill::Uniform);
  fill_random(y.data(), y.size(), 42, Fill::Uniform);
  int zeros = 0;
  double sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float v = __half2float(x[i]);
    EXPECT_EQ(v, __half2float(y[i]));
    EXPECT_GE(v, -1.f);
    EXPECT_LE(v, 1.f);
    zeros += v == 0.f;
    sum += v;
  }
  EXPECT_LT(zeros, 20);
  EXPECT_NEAR(sum / x.size(), 0.0, 0.05);
  EXPECT_NE(random_value(1, 0, Fill::Uniform), random_value(2, 0, Fill::Uniform));
}

TEST(RandomData, SmallIntsCoverMinusTwoToTwo) {
  std::vector<int> seen(5, 0);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const float v = random_value(7, i, Fill::SmallInts);
    ASSERT_EQ(v, std::round(v));
    ASSERT_GE(v, -2.f);
    ASSERT_LE(v, 2.f);
    ++seen[static_cast<int>(v) + 2];
  }
  for (int s : seen) EXPECT_GT(s, 100);
}

}  // namespace
}  // namespace hgemm::ref
