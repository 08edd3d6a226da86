// SPDX-License-Identifier: Apache-2.0
// Host storage for the operands of the typed matmul: elements of any DataType held as the raw
// bytes the device reads, conversions that round to nearest (ties to even), and deterministic
// random data in each type. Used by the tests and the benchmark; not part of the installed library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hgemm/hgemm.h"
#include "reference/reference.h"

namespace hgemm::ref {

/// v rounded to nearest, ties to even, in type t (every f16 and bf16 value is a float).
float round_to(DataType t, float v);

/// Element i of an array of type t at `base`, widened exactly.
double load(const void* base, DataType t, std::int64_t i);

/// Stores v, rounded to type t, as element i of an array of type t at `base`.
void store(void* base, DataType t, std::int64_t i, float v);

/// Unit roundoff of t (half an ulp of 1): 2^-11 for f16, 2^-8 for bf16, 2^-24 for f32.
double unit_roundoff(DataType t);

/// The largest magnitude up to which every integer is exact in t: 2^11, 2^8 and 2^24.
double exact_integer_limit(DataType t);

/// The largest finite value of t.
double max_finite(DataType t);

/// The bits of a quiet NaN in t, for poisoning memory a kernel must not read or write.
std::uint32_t nan_bits(DataType t);

/// `count` elements of one type, zero-initialised, as the raw bytes a device buffer holds.
class TypedData {
 public:
  TypedData() = default;
  TypedData(DataType type, std::size_t count);

  DataType type() const { return type_; }
  std::size_t size() const { return bytes_.size() / static_cast<std::size_t>(data_type_size(type_)); }
  std::size_t bytes() const { return bytes_.size(); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  /// The address of element i (where an operand starts inside a larger buffer).
  void* at(std::size_t i) { return bytes_.data() + i * static_cast<std::size_t>(data_type_size(type_)); }
  const void* at(std::size_t i) const { return bytes_.data() + i * static_cast<std::size_t>(data_type_size(type_)); }

  double get(std::size_t i) const { return load(data(), type_, static_cast<std::int64_t>(i)); }
  void set(std::size_t i, float v) { store(data(), type_, static_cast<std::int64_t>(i), v); }
  std::uint32_t bits(std::size_t i) const;
  void set_bits(std::size_t i, std::uint32_t bits);
  /// Every element set to the same bit pattern.
  void fill_bits(std::uint32_t bits);

  bool operator==(const TypedData& o) const { return type_ == o.type_ && bytes_ == o.bytes_; }
  bool operator!=(const TypedData& o) const { return !(*this == o); }

 private:
  DataType type_ = DataType::F16;
  std::vector<unsigned char> bytes_;
};

/// Element i of the result is random_value(seed, i, fill) rounded to t: uniform [-1, 1) or the
/// integers -2..2, reproducible from the seed on every machine.
void fill_random(void* data, DataType t, std::size_t count, std::uint64_t seed, Fill fill);
inline void fill_random(TypedData& x, std::uint64_t seed, Fill fill) {
  fill_random(x.data(), x.type(), x.size(), seed, fill);
}

}  // namespace hgemm::ref
