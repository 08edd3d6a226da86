// SPDX-License-Identifier: Apache-2.0
// The typed matmul's tolerance (reference/tolerance.h) against simulated kernels: one that
// accumulates in f32 as a tensor core may (truncating) passes in every output type; one that
// loses or doubles a single k-slice of 64 products over a 16×16 block of an f32 D fails.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference/reference.h"
#include "reference/tolerance.h"
#include "reference/typed_data.h"

namespace hgemm::ref {
namespace {

// D = alpha·A·B + beta·C with A (m×k), B (k×n) of one input type and C (m×n) f32, no padding.
struct Problem {
  std::int64_t m = 32, n = 32, k = 0;
  float alpha = 1.f, beta = 0.f;
  TypedData a, b, c;

  Problem(DataType in, std::int64_t k_, float alpha_, float beta_, std::uint64_t seed)
      : k(k_), alpha(alpha_), beta(beta_), a(in, m * k_), b(in, k_ * n), c(DataType::F32, m * n) {
    fill_random(a, seed, Fill::Uniform);
    fill_random(b, seed + 1, Fill::Uniform);
    fill_random(c, seed + 2, Fill::Uniform);
  }
  double a_at(std::int64_t i, std::int64_t kk) const { return a.get(static_cast<std::size_t>(i * k + kk)); }
  double b_at(std::int64_t kk, std::int64_t j) const { return b.get(static_cast<std::size_t>(kk * n + j)); }
  Reference reference() const {
    MatmulArgs args;
    args.m = m, args.n = n, args.k = k, args.alpha = alpha, args.beta = beta;
    args.a = a.data(), args.a_type = args.b_type = a.type(), args.lda = k;
    args.b = b.data(), args.ldb = n;
    args.c = c.data(), args.c_type = DataType::F32, args.ldc = args.ldd = n;
    return reference_matmul(args)[0];
  }
};

// x rounded toward zero to f32: what a tensor core's accumulator addition may do.
float truncate_f32(double x) {
  float f = static_cast<float>(x);
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.f);
  return f;
}

// D as a tensor core with an f32 accumulator may compute it: the products of each group of 16
// summed, each group added to the accumulator with truncation, the epilogue's operations
// truncated too, and the result rounded once to D's type.
TypedData simulated_kernel(const Problem& p, DataType d_type) {
  TypedData d(d_type, static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0.f;
      for (std::int64_t k0 = 0; k0 < p.k; k0 += 16) {
        double group = 0;
        for (std::int64_t kk = k0; kk < std::min(p.k, k0 + 16); ++kk) group += p.a_at(i, kk) * p.b_at(kk, j);
        acc = truncate_f32(static_cast<double>(acc) + group);
      }
      const float scaled = truncate_f32(static_cast<double>(p.alpha) * acc);
      const float c = truncate_f32(static_cast<double>(p.beta) * p.c.get(static_cast<std::size_t>(i * p.n + j)));
      d.set(static_cast<std::size_t>(i * p.n + j), truncate_f32(static_cast<double>(scaled) + c));
    }
  return d;
}

constexpr std::int64_t kSlice = 64;

TEST(MatmulTolerance, F32AccumulationPassesInEveryOutputType) {
  std::uint64_t seed = 100;
  for (DataType in : {DataType::F16, DataType::BF16})
    for (std::int64_t k : {1, 129, 1000, 4093, 8192}) {
      const Problem p(in, k, -1.5f, 0.75f, seed += 3);
      const Reference ref = p.reference();
      for (DataType out : {DataType::F16, DataType::BF16, DataType::F32}) {
        const ErrorStats e = compare(ref, simulated_kernel(p, out).data(), out, p.n);
        const std::string what = std::string(data_type_name(in)) + " inputs, " + data_type_name(out) +
                                 " output, K = " + std::to_string(k);
        EXPECT_EQ(e.nonfinite, 0) << what;
        EXPECT_LE(e.max_scaled, matmul_tolerance(out, k)) << what;
        EXPECT_LE(e.rel_fro, matmul_tolerance(out, k)) << what;
      }
    }
}

// The f32 result of a kernel that loses (factor 0) or doubles (factor 2) the k-slice starting at
// `first` on rows and columns [16, 32) of D: the reference there minus or plus that slice's sum.
TypedData with_slice_changed(const Problem& p, const Reference& ref, std::int64_t first, double factor) {
  TypedData d(DataType::F32, static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double v = ref.c[static_cast<std::size_t>(i * p.n + j)];
      if (i >= 16 && j >= 16) {
        double slice = 0;
        for (std::int64_t kk = first; kk < std::min(p.k, first + kSlice); ++kk) slice += p.a_at(i, kk) * p.b_at(kk, j);
        v += (factor - 1) * p.alpha * slice;
      }
      d.set(static_cast<std::size_t>(i * p.n + j), static_cast<float>(v));
    }
  return d;
}

TEST(MatmulTolerance, F32OutputSeesOneLostOrDoubledSlice) {
  std::uint64_t seed = 200;
  for (DataType in : {DataType::F16, DataType::BF16})
    for (std::int64_t k : {129, 1000, 4093, 8192}) {
      const Problem p(in, k, 1.f, 0.f, seed += 3);
      const Reference ref = p.reference();
      const double tol = matmul_tolerance(DataType::F32, k);
      // The first slice, one in the middle and the last (ragged where 64 does not divide K).
      for (std::int64_t first : {std::int64_t{0}, k / 2 / kSlice * kSlice, (k - 1) / kSlice * kSlice})
        for (double factor : {0.0, 2.0}) {
          const ErrorStats e = compare(ref, with_slice_changed(p, ref, first, factor).data(), DataType::F32, p.n);
          const std::string what = std::string(data_type_name(in)) + " inputs, K = " + std::to_string(k) +
                                   (factor == 0 ? ", lost" : ", doubled") + " slice at k = " + std::to_string(first);
          EXPECT_GT(e.max_scaled, tol) << what;
          EXPECT_GT(e.rel_fro, tol) << what;
        }
      // The unchanged f32 rounding of the reference passes: the test above sees the slice.
      EXPECT_LE(compare(ref, with_slice_changed(p, ref, 0, 1.0).data(), DataType::F32, p.n).max_scaled, tol);
    }
}

}  // namespace
}  // namespace hgemm::ref
