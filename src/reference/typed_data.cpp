// SPDX-License-Identifier: Apache-2.0
#include "reference/typed_data.h"

#include <cuda_fp16.h>

#include <cmath>
#include <cstring>

#include "reference/parallel.h"

namespace hgemm::ref {
namespace {

std::uint32_t float_bits(float v) {
  std::uint32_t w;
  std::memcpy(&w, &v, 4);
  return w;
}

float bits_float(std::uint32_t w) {
  float v;
  std::memcpy(&v, &w, 4);
  return v;
}

// bf16 is the top half of an f32: round the lower 16 bits away, to nearest with ties to even
// (a carry into the exponent gives the next binade, or infinity, as it should).
std::uint16_t bf16_bits(float v) {
  std::uint32_t w = float_bits(v);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((w >> 16) | 0x40u);  // NaN stays NaN
  w += 0x7FFFu + ((w >> 16) & 1u);
  return static_cast<std::uint16_t>(w >> 16);
}

std::uint16_t f16_bits(float v) {
  const __half h = __float2half_rn(v);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

float f16_value(std::uint16_t b) {
  __half h;
  std::memcpy(&h, &b, 2);
  return __half2float(h);
}

}  // namespace

float round_to(DataType t, float v) {
  switch (t) {
    case DataType::F16: return f16_value(f16_bits(v));
    case DataType::BF16: return bits_float(static_cast<std::uint32_t>(bf16_bits(v)) << 16);
    case DataType::F32: break;
  }
  return v;
}

double load(const void* base, DataType t, std::int64_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(base) + i * data_type_size(t);
  if (t == DataType::F32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  std::uint16_t b;
  std::memcpy(&b, p, 2);
  return t == DataType::F16 ? f16_value(b) : bits_float(static_cast<std::uint32_t>(b) << 16);
}

void store(void* base, DataType t, std::int64_t i, float v) {
  unsigned char* p = static_cast<unsigned char*>(base) + i * data_type_size(t);
  if (t == DataType::F32) {
    std::memcpy(p, &v, 4);
    return;
  }
  const std::uint16_t b = t == DataType::F16 ? f16_bits(v) : bf16_bits(v);
  std::memcpy(p, &b, 2);
}

double unit_roundoff(DataType t) {
  return std::ldexp(1.0, t == DataType::F16 ? -11 : t == DataType::BF16 ? -8 : -24);
}

double exact_integer_limit(DataType t) { return 1.0 / unit_roundoff(t); }

double max_finite(DataType t) {
  switch (t) {
    case DataType::F16: return 65504.0;
    case DataType::BF16: return (2.0 - std::ldexp(1.0, -7)) * std::ldexp(1.0, 127);
    case DataType::F32: break;
  }
  return (2.0 - std::ldexp(1.0, -23)) * std::ldexp(1.0, 127);
}

std::uint32_t nan_bits(DataType t) { return t == DataType::F32 ? 0x7FFFFFFFu : 0x7FFFu; }

TypedData::TypedData(DataType type, std::size_t count)
    : type_(type), bytes_(count * static_cast<std::size_t>(data_type_size(type)), 0) {}

std::uint32_t TypedData::bits(std::size_t i) const {
  std::uint32_t w = 0;
  std::memcpy(&w, at(i), static_cast<std::size_t>(data_type_size(type_)));  // little-endian
  return w;
}

void TypedData::set_bits(std::size_t i, std::uint32_t bits) {
  std::memcpy(at(i), &bits, static_cast<std::size_t>(data_type_size(type_)));
}

void TypedData::fill_bits(std::uint32_t bits) {
  for (std::size_t i = 0; i < size(); ++i) set_bits(i, bits);
}

void fill_random(void* data, DataType t, std::size_t count, std::uint64_t seed, Fill fill) {
  parallel_for(static_cast<std::int64_t>(count), [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) store(data, t, i, random_value(seed, static_cast<std::uint64_t>(i), fill));
  });
}

}  // namespace hgemm::ref
