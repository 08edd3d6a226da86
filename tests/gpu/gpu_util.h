// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the GPU tests: device detection, device buffers, the standard case list.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "hgemm/hgemm.h"
#include "reference/reference.h"

namespace hgemm::test {

/// Whether a CUDA device can be used; `why` gets CUDA's reason when not.
bool have_device(std::string* why);

#define HGEMM_SKIP_WITHOUT_GPU()                                      \
  do {                                                                \
    std::string why_;                                                 \
    if (!::hgemm::test::have_device(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

/// The cases whose M, N and K are all at most HGEMM_TEST_MAX_DIM (environment; every case without
/// it): the small ones a compute-sanitizer run can afford.
template <typename C>
std::vector<C> within_max_dim(std::vector<C> cases) {
  const char* env = std::getenv("HGEMM_TEST_MAX_DIM");
  if (!env) return cases;
  const std::int64_t limit = std::atoll(env);
  std::vector<C> kept;
  for (const C& c : cases)
    if (c.m <= limit && c.n <= limit && c.k <= limit) kept.push_back(c);
  return kept;
}

/// A device allocation of halves, freed on destruction.
class DeviceHalves {
 public:
  explicit DeviceHalves(std::size_t count);
  ~DeviceHalves();
  DeviceHalves(const DeviceHalves&) = delete;
  DeviceHalves& operator=(const DeviceHalves&) = delete;
  __half* get() const { return ptr_; }
  void upload(const std::vector<__half>& host, std::size_t offset = 0);
  std::vector<__half> download(std::size_t count, std::size_t offset = 0) const;

 private:
  __half* ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// One GEMM problem of the test set.
struct Case {
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  float alpha = 1.f, beta = 0.f;
  std::int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;  ///< extra elements at the end of each stored row
  std::int64_t offset = 0;  ///< A, B and C start this many halves past an aligned address
  ref::Fill fill = ref::Fill::Uniform;
  bool exact = false;  ///< small-integer data: every kernel must match the reference exactly
  std::uint64_t seed = 0;
  std::string tag;  ///< names a drawn case (random_cases): the first word of its name

  // Leading dimensions: the stored width (at least 1) plus the case's padding.
  std::int64_t lda() const { return std::max<std::int64_t>(1, op_a == Op::N ? k : m) + lda_pad; }
  std::int64_t ldb() const { return std::max<std::int64_t>(1, op_b == Op::N ? n : k) + ldb_pad; }
  std::int64_t ldc() const { return std::max<std::int64_t>(1, n) + ldc_pad; }
  std::int64_t a_rows() const { return op_a == Op::N ? m : k; }
  std::int64_t b_rows() const { return op_b == Op::N ? k : n; }
  std::string name() const;  ///< e.g. "127x129x1000_nn_ab_ld"
};

/// The correctness shape set: tile multiples, primes and off-by-one sizes around
/// every tile edge, K = 0, M or N = 0 and 1, alpha/beta ≠ 1/0, every op combination, ld > width,
/// 2-byte-aligned pointers, exact small-integer data. HGEMM_TEST_MAX_DIM (environment) drops
/// the cases with a larger dimension (for compute-sanitizer runs).
const std::vector<Case>& standard_cases();

/// Decode-shaped cases (M <= 16, op nt, leading dimensions multiples of 8, some with padding
/// beyond that): what skinny.m16_mma_nt takes. Ragged N and K, K = 0, alpha/beta, exact data.
const std::vector<Case>& skinny_cases();

/// Shapes whose tile count makes the engine choose each of its narrower tiles
/// (on a 132-SM GPU), op nt, with K long enough to wrap its ring several times; and a tiny C over
/// a long K, which the engine splits into more than 100 parts.
const std::vector<Case>& tile_choice_cases();

/// Shapes with more 256×256 tiles than an H200 holds clusters at once, a mostly idle last round
/// and a deep K: the engine shares their last tiles' K between clusters (stream-K), in two and
/// three pieces, under every epilogue.
const std::vector<Case>& stream_k_cases();

/// More tiles than the engine's persistent kernels has clusters, short K, C by TMA: the stores of one
/// tile's C overlap the next tile's first slices (and are flushed when K is shorter).
const std::vector<Case>& many_tiles_cases();

/// Odd leading dimensions and 2-byte-aligned pointers at sizes that take the engine through
/// each of its epilogues (TMA store, rows copied with 16-byte stores, C read, split-K partial
/// sums, the skinny path).
const std::vector<Case>& odd_ld_cases();

/// Seeded random cases (random_shapes.h; HGEMM_RANDOM_CASES of them, default 40, batches left
/// out): random ops, alpha and beta, leading-dimension padding, 2-byte-aligned pointers and
/// small-integer data. HGEMM_TEST_MAX_DIM applies as to the standard cases.
const std::vector<Case>& random_cases();

/// The inputs of a case and their fp64 reference, computed once per process.
struct CaseData {
  std::vector<__half> a, b, c;  ///< stored matrices, padding included
  ref::Reference reference;
};
const CaseData& case_data(const Case& c);

/// Tolerances (see the definition for the reasoning).
double tolerance_rel_fro(Accum accum, std::int64_t k);
double tolerance_max_scaled(Accum accum, std::int64_t k);

}  // namespace hgemm::test
