// SPDX-License-Identifier: Apache-2.0
// The one device function of the fused epilogue: from Z = alpha·acc + beta·C at D's (row, col)
// to D's value, writing aux on the way. Every path that applies the epilogue (the engine's
// in-place pass over its accumulators, its per-element stores of split-K and cluster split-K,
// the elementwise pass of K = 0 and of the kernels that do not fuse) calls it, so they agree
// to the bit.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/fused_epilogue.h"

namespace hgemm::detail {

__device__ __forceinline__ float load_typed(const void* base, DataType t, std::int64_t i) {
  switch (t) {
    case DataType::F16: return __half2float(static_cast<const __half*>(base)[i]);
    case DataType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

__device__ __forceinline__ void store_typed(void* base, DataType t, std::int64_t i, float v) {
  switch (t) {
    case DataType::F16: static_cast<__half*>(base)[i] = __float2half_rn(v); break;
    case DataType::BF16: static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(base)[i] = v; break;
  }
}

/// 2^x and 1/x on the special-function unit alone, one instruction each, subnormal results
/// flushed to zero. exp2f and __fdividef wrap the same instructions in range fix-ups that the
/// activations below do not need: 1 + 2^x is at least 1, and where its reciprocal would be
/// subnormal the quotient is 0 either way (as __fdividef's is there).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float reciprocal_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// The activations in f32. GELU uses the accurate erff (2 ulp). The tanh form and SiLU are
/// sigmoids, z·sigmoid(2u) = 0.5·z·(1 + tanh(u)) and z·sigmoid(z), computed as
/// z · 1/(1 + 2^(-x·log2 e)): five to seven instructions, two of them on the special-function
/// unit, where tanhf takes about twenty; this matters because the epilogue runs while the tensor
/// cores wait. Unlike 1 + tanh(u) for negative z, the form does not cancel. At z = -Inf it gives
/// NaN (-Inf · 0), as 0.5·z·(1 + tanh u) and z·sigmoid(z) do.
__device__ __forceinline__ float activate(Activation a, float z) {
  switch (a) {
    case Activation::ReLU: return z < 0.f ? 0.f : z;  // NaN < 0 is false: NaN passes
    case Activation::GELU: return 0.5f * z * (1.f + erff(z * 0.70710678118654752f));
    case Activation::GELUTanh: {  // x = 2u·log2 e = z·(c1 + c3·z²), u = sqrt(2/π)·(z + 0.044715·z³)
      const float x = z * fmaf(0.1029432416f, z * z, 2.3022081852f);
      return z * reciprocal_approx(1.f + exp2_approx(-x));
    }
    case Activation::SiLU: return z * reciprocal_approx(1.f + exp2_approx(-1.4426950409f * z));
    default: return z;
  }
}

/// The epilogue of element (row, col) of product b of a batch (row and column are D's; a swapped
/// kernel passes its (c, r)). e is the launch's (its vectors offset here by b, so that a kernel
/// keeps no per-product copy in registers).
///
/// What it reads, the bias and the scales, comes apart from the arithmetic (ElementInputs), so
/// that a caller finishing several elements issues every load before the first aux store: through
/// generic pointers no load can pass an earlier store, and each would wait out the one before.
/// Without a bias it adds -0 and without a scale it multiplies by 1, which change no value.
struct ElementInputs {
  float bias = -0.f, row_scale = 1.f, col_scale = 1.f;
};
__device__ __forceinline__ float bias_of(const FusedEpilogue& e, std::int64_t b, std::int64_t row, std::int64_t col) {
  return e.bias ? load_typed(e.bias, e.bias_type, b * e.stride_bias + (e.bias_per_row ? row : col)) : -0.f;
}
__device__ __forceinline__ ElementInputs load_inputs(const FusedEpilogue& e, std::int64_t b, std::int64_t row,
                                                     std::int64_t col) {
  ElementInputs in;
  in.bias = bias_of(e, b, row, col);
  if (e.row_scale) in.row_scale = e.row_scale[b * e.stride_row_scale + row];
  if (e.col_scale) in.col_scale = e.col_scale[b * e.stride_col_scale + col];
  return in;
}

/// The two steps: pre_activation takes z = alpha·acc + beta·C(row, col) to Z = z + bias and
/// writes aux; post_activation takes Z to act(Z)·row_scale·col_scale.
__device__ __forceinline__ float pre_activation(const FusedEpilogue& e, std::int64_t b, std::int64_t row,
                                                std::int64_t col, float z, float bias) {
  z += bias;
  if (e.aux) store_typed(e.aux, e.aux_type, b * e.stride_aux + row * e.ldaux + col, z);
  return z;
}
template <Activation ACT>
__device__ __forceinline__ float post_activation(float z, float row_scale, float col_scale) {
  return activate(ACT, z) * row_scale * col_scale;
}
__device__ __forceinline__ float finish_loaded(const FusedEpilogue& e, std::int64_t b, std::int64_t row,
                                               std::int64_t col, float z, const ElementInputs& in) {
  return activate(e.act, pre_activation(e, b, row, col, z, in.bias)) * in.row_scale * in.col_scale;
}
__device__ __forceinline__ float finish_element(const FusedEpilogue& e, std::int64_t b, std::int64_t row,
                                                std::int64_t col, float z) {
  return finish_loaded(e, b, row, col, z, load_inputs(e, b, row, col));
}

}  // namespace hgemm::detail
