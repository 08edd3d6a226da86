// SPDX-License-Identifier: Apache-2.0
// The typed problem every typed kernel entry receives: one validated matmul call (the public
// MatmulArgs, checked by src/api/) and its accumulation. Plain data, host side.
#pragma once

#include <cstdint>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

struct Matmul : MatmulArgs {
  Accum accum = Accum::F32;
  bool aux_by_tma = true;  ///< GemmOptions::aux_by_tma: the plan may store aux by TMA

  bool a_used() const { return m > 0 && k > 0; }
  bool b_used() const { return k > 0 && n > 0; }
  bool d_used() const { return m > 0 && n > 0 && batch > 0; }
  bool c_read() const { return beta != 0.f && d_used(); }
  /// Whether every type is f16: what the f16 ladder takes.
  bool all_f16() const {
    return a_type == DataType::F16 && b_type == DataType::F16 && d_type == DataType::F16 &&
           (!c_read() || c_type == DataType::F16);
  }
  /// Product i of a strided batch as a problem of its own (batch = 1).
  Matmul product(std::int64_t i) const;
};

/// The address of element `offset` of a matrix of type t starting at `base`.
inline const void* element_at(const void* base, DataType t, std::int64_t offset) {
  return base ? static_cast<const char*>(base) + offset * data_type_size(t) : base;
}
inline void* element_at(void* base, DataType t, std::int64_t offset) {
  return base ? static_cast<char*>(base) + offset * data_type_size(t) : base;
}

inline Matmul Matmul::product(std::int64_t i) const {
  Matmul p = *this;
  // Only the matrices the call touches move: validation bounds their strides, not the others'.
  if (a_used()) p.a = element_at(a, a_type, i * stride_a);
  if (b_used()) p.b = element_at(b, b_type, i * stride_b);
  if (d_used()) p.d = element_at(d, d_type, i * stride_d);
  p.c = c == d ? p.d : c_read() ? element_at(c, c_type, i * stride_c) : c;
  p.batch = 1;
  p.stride_a = p.stride_b = p.stride_c = p.stride_d = 0;
  return p;
}

}  // namespace hgemm::detail
