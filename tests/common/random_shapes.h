// SPDX-License-Identifier: Apache-2.0
// Seeded random problems for the GPU tests: shapes drawn from the kinds the dispatch policy
// tells apart (tiny, around tile edges, decode, skinny, a deep K, wide with a short K, strided
// batches of small products), so that a run reaches plans and edges no hand-written case names.
// The draw is fixed by HGEMM_RANDOM_SEED (environment; a default otherwise) and its length by
// HGEMM_RANDOM_CASES: a failure names its case, and the same seed draws it again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>

#include "hgemm/hgemm.h"

namespace hgemm::test {

/// A seeded source of the draws below.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  /// Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  T pick(std::initializer_list<T> xs) {
    return *(xs.begin() + between(0, static_cast<std::int64_t>(xs.size()) - 1));
  }
  template <typename T, std::size_t N>
  T pick(const T (&xs)[N]) {
    return xs[between(0, static_cast<std::int64_t>(N) - 1)];
  }
  /// A row's padding past `width` elements (at least 1): none (twice as likely), to the next
  /// multiple of 8 (TMA-aligned rows), or odd.
  std::int64_t padding(std::int64_t width) {
    const std::int64_t w = std::max<std::int64_t>(width, 1);
    return pick<std::int64_t>({0, 0, (8 - w % 8) % 8, between(1, 9)});
  }
  /// A size next to a tile edge: a multiple of 16, 64, 128 or 256 up to `most`, one off or on it.
  std::int64_t near_edge(std::int64_t most) {
    const std::int64_t unit = pick<std::int64_t>({16, 64, 128, 256});
    const std::int64_t x = unit * between(1, std::max<std::int64_t>(1, most / unit)) + between(-1, 1);
    return std::clamp<std::int64_t>(x, 1, most);
  }

 private:
  std::mt19937_64 rng_;
};

/// The seed and number of random cases (HGEMM_RANDOM_SEED, HGEMM_RANDOM_CASES).
inline std::uint64_t random_seed() {
  const char* env = std::getenv("HGEMM_RANDOM_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20261205;
}
inline int random_case_count(int fallback) {
  const char* env = std::getenv("HGEMM_RANDOM_CASES");
  return env ? std::atoi(env) : fallback;
}

/// A drawn problem size and the kind it was drawn as (the first word of a test's name).
struct RandomShape {
  std::string kind;
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
  bool decode = false;  ///< a decode kind: op(A) = N makes it run swapped
};

/// op(A) and op(B) for shape s: a decode shape mostly as a Linear layer stores them (A N, B T:
/// the engine runs it swapped), other shapes any pair.
inline std::pair<Op, Op> random_ops(Draw& r, const RandomShape& s) {
  const Op a = s.decode && r.chance(0.8) ? Op::N : r.pick({Op::N, Op::T});
  const Op b = s.decode && r.chance(0.8) ? Op::T : r.pick({Op::N, Op::T});
  return {a, b};
}

/// One shape of a random kind. Products are kept to about `budget` multiply-adds, so that
/// the fp64 reference stays quick: K shrinks first, then the batch.
inline RandomShape random_shape(Draw& r, double budget = 3e8) {
  RandomShape s;
  switch (r.between(0, 7)) {
    case 0: s.kind = "tiny", s.m = r.between(1, 200), s.n = r.between(1, 200), s.k = r.between(1, 300); break;
    case 1: s.kind = "edges", s.m = r.near_edge(1100), s.n = r.near_edge(1100), s.k = r.near_edge(1100); break;
    case 2:
      s.kind = "decode", s.decode = true;
      s.m = r.chance(0.5) ? r.between(1, 32) : r.between(33, 64);
      s.n = r.chance(0.5) ? r.near_edge(8200) : r.between(500, 8200);
      s.k = r.chance(0.5) ? r.near_edge(4200) : r.between(16, 4200);
      break;
    case 3: s.kind = "skinny", s.m = r.between(300, 5000), s.n = r.between(1, 64), s.k = r.between(16, 2000); break;
    case 4: s.kind = "deepk", s.m = r.between(1, 96), s.n = r.between(1, 200), s.k = r.between(2000, 20000); break;
    case 5: s.kind = "wide", s.m = r.near_edge(2600), s.n = r.near_edge(2600), s.k = r.between(1, 400); break;
    case 6:
      s.kind = "batch", s.batch = r.between(2, 64);
      s.m = r.chance(0.3) ? 64 * r.between(1, 2) : r.between(1, 160);
      s.n = r.chance(0.3) ? 64 * r.between(1, 2) : r.between(1, 160);
      s.k = r.chance(0.3) ? 64 * r.between(1, 3) : r.between(1, 300);
      break;
    default: s.kind = "mid", s.m = r.between(200, 1500), s.n = r.between(200, 1500), s.k = r.between(64, 1500); break;
  }
  auto work = [&] { return static_cast<double>(s.m) * s.n * s.k * s.batch; };
  while (work() > budget && s.k > 64) s.k = std::max<std::int64_t>(64, s.k / 2 + r.between(-3, 3));
  while (work() > budget && s.batch > 1) s.batch = std::max<std::int64_t>(1, s.batch / 2);
  return s;
}

}  // namespace hgemm::test
