// SPDX-License-Identifier: Apache-2.0
// The error a correct typed matmul with f32 accumulation may show, for the metrics of
// ref::compare (both the scaled max and the relative Frobenius error are held to it).
//
// With x_k = a_ik·b_kj: f16 and bf16 products are exact in f32 (11- or 8-bit significands), so
// only the additions round. K of them, each off by at most 2^-24 of the running sum, leave the
// sum off by ≲ K·2^-24·Σ|x_k| ≤ K·2^-24·‖a_i‖‖b_j‖ (Cauchy–Schwarz). Tensor cores may truncate
// instead of rounding, which doubles the step: 2K·2^-24. The epilogue rounds alpha·acc, beta·c
// and their sum in f32 (a few more 2^-24 of the scale: 8·2^-24 covers them truncated), then
// once to D's type: u_out = 2^-11 (f16), 2^-8 (bf16), 2^-24 (f32) of |D| ≤ the scale. Allowed:
//
//   2·u_out + (2K + 8)·2^-24
//
// (twice the output rounding, so a result one step from the nearest passes, never two). The A/B
// type matters only through the data: bf16 inputs are as exact in f32 as f16 ones.
//
// For f32 output this sees one k-slice of 64 products lost or counted twice: with uniform
// [-1, 1) data the slice adds S = Σ of 64 products (σ = 8/3) to an element whose scale is
// ‖a_i‖‖b_j‖ ≈ K/3, a scaled error of σ_s ≈ 8/K, against (2K + 10)·2^-24 allowed. At K = 4093
// that is 1.9e-3 against 4.9e-4: a slice lost over a 16×16 block of D (largest of 256 ≈ 3σ_s)
// fails by about 10×, and one element alone usually fails too; the two meet near K = 8192,
// where the block still fails by about 3× (MatmulTolerance.F32OutputSeesOneLostOrDoubledSlice
// checks this). Rounding stays far inside the bound: an f32 sum truncated 16 products at a time
// errs by < 1/100 of it for f32 output from K = 129 up (MatmulTolerance.F32Accumulation...).
// For f16 and bf16 outputs the output rounding dominates and a lost slice can hide at large K:
// the exact small-integer cases catch it there.
#pragma once

#include <cstdint>

#include "hgemm/hgemm.h"
#include "reference/typed_data.h"

namespace hgemm::ref {

inline double matmul_tolerance(DataType d_type, std::int64_t k) {
  const double u32 = 1.0 / 16777216.0;  // 2^-24
  return 2 * unit_roundoff(d_type) + (2.0 * static_cast<double>(k) + 8) * u32;
}

}  // namespace hgemm::ref
