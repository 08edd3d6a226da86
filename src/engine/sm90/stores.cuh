// SPDX-License-Identifier: Apache-2.0
// Typed element stores of the engine's epilogues: D = alpha·v + beta·C for runs of consecutive
// columns of one row, read and rounded in the types of C and D (f16, bf16, f32), and with
// EPI the fused epilogue after it (finish_element). beta = 0 never reads C. Columns past N are
// skipped; a run is one vector store where D's address allows it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/fused_epilogue.cuh"
#include "common/launch.cuh"
#include "engine/sm90/params.h"

namespace hgemm::detail::engine {

__device__ __forceinline__ float load_element(const void* base, DataType t, std::int64_t i) {
  switch (t) {
    case DataType::F16: return __half2float(static_cast<const __half*>(base)[i]);
    case DataType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

/// Element i of a C of type CT (__half, __nv_bfloat16 or float).
template <typename CT>
__device__ __forceinline__ float load_c(const Output& o, std::int64_t i) {
  if constexpr (std::is_same_v<CT, float>)
    return static_cast<const float*>(o.c)[i];
  else if constexpr (std::is_same_v<CT, __half>)
    return __half2float(static_cast<const __half*>(o.c)[i]);
  else
    return __bfloat162float(static_cast<const __nv_bfloat16*>(o.c)[i]);
}

/// v rounded to D's type (__half, __nv_bfloat16 or float).
template <typename D>
__device__ __forceinline__ D convert_to(float v) {
  if constexpr (std::is_same_v<D, float>)
    return v;
  else if constexpr (std::is_same_v<D, __half>)
    return __float2half_rn(v);
  else
    return __float2bfloat16_rn(v);
}

/// W consecutive values of a 16-bit type as one word (W = 1, 2 or 4).
template <int W> struct Word16;
template <> struct Word16<1> { using type = unsigned short; };
template <> struct Word16<2> { using type = unsigned int; };
template <> struct Word16<4> { using type = uint2; };
template <int W> struct Word32;
template <> struct Word32<1> { using type = float; };
template <> struct Word32<2> { using type = float2; };
template <> struct Word32<4> { using type = float4; };

template <typename T>
__device__ __forceinline__ unsigned short bits16(float v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half_as_ushort(__float2half_rn(v));
  } else {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
}

/// Writes the `valid` (≤ W) first values of v to the W elements at `p`, as one store when all W
/// are valid and p is aligned to the run.
template <typename T, int W>
__device__ __forceinline__ void write_run16(T* p, const float* v, std::int64_t valid) {
  if (valid >= W && reinterpret_cast<std::uintptr_t>(p) % (2 * W) == 0) {
    alignas(2 * W) unsigned short h[W];
#pragma unroll
    for (int i = 0; i < W; ++i) h[i] = bits16<T>(v[i]);
    *reinterpret_cast<typename Word16<W>::type*>(p) = *reinterpret_cast<const typename Word16<W>::type*>(h);
    return;
  }
#pragma unroll
  for (int i = 0; i < W; ++i)
    if (i < valid) reinterpret_cast<unsigned short*>(p)[i] = bits16<T>(v[i]);
}

template <int W>
__device__ __forceinline__ void write_run32(float* p, const float* v, std::int64_t valid) {
  if (valid >= W && reinterpret_cast<std::uintptr_t>(p) % (4 * W) == 0) {
    alignas(4 * W) float f[W];
#pragma unroll
    for (int i = 0; i < W; ++i) f[i] = v[i];
    *reinterpret_cast<typename Word32<W>::type*>(p) = *reinterpret_cast<const typename Word32<W>::type*>(f);
    return;
  }
#pragma unroll
  for (int i = 0; i < W; ++i)
    if (i < valid) p[i] = v[i];
}

/// D(row, col .. col + W) = alpha·acc + beta·C(row, col ..) into a D of type D (__half,
/// __nv_bfloat16 or float), for the columns inside D (the caller checks the row); EPI: then the
/// fused epilogue of o.epi.
template <typename D, int W, bool EPI = false>
__device__ __forceinline__ void store_run_as(const Output& o, std::int64_t row, std::int64_t col, const float* acc) {
  const std::int64_t valid = o.n - col;
  if (valid <= 0) return;
  float v[W];
#pragma unroll
  for (int i = 0; i < W; ++i) {
    v[i] = o.alpha * acc[i];
    if (o.beta != 0.f && i < valid) v[i] = fmaf(o.beta, load_element(o.c, o.c_type, row * o.ldc + col + i), v[i]);
  }
  if constexpr (EPI) {  // every load before the first aux store (finish_loaded)
    ElementInputs in[W];
#pragma unroll
    for (int i = 0; i < W; ++i)
      if (i < valid) in[i] = load_inputs(o.epi, o.product, row, col + i);
#pragma unroll
    for (int i = 0; i < W; ++i)
      if (i < valid) v[i] = finish_loaded(o.epi, o.product, row, col + i, v[i], in[i]);
  }
  D* at = static_cast<D*>(o.d) + row * o.ldd + col;
  if constexpr (std::is_same_v<D, float>)
    write_run32<W>(at, v, valid);
  else
    write_run16<D, W>(at, v, valid);
}

/// Calls f(TypeTag<T>{}) for the element type t (__half, __nv_bfloat16 or float), so that an
/// epilogue's loop over its elements is instantiated per type and has no type branch per element.
template <typename F>
__device__ __forceinline__ void with_type(DataType t, F&& f) {
  switch (t) {
    case DataType::F16: f(TypeTag<__half>{}); break;
    case DataType::BF16: f(TypeTag<__nv_bfloat16>{}); break;
    default: f(TypeTag<float>{}); break;
  }
}

/// with_type for a kernel whose accumulators are Reg: f16 accumulators (32-bit registers of half
/// pairs) come only with f16 C and D (validate_types), so such kernels hold the f16 code alone.
template <typename Reg, typename F>
__device__ __forceinline__ void with_type_for(DataType t, F&& f) {
  if constexpr (std::is_same_v<Reg, std::uint32_t>)
    f(TypeTag<__half>{});
  else
    with_type(t, static_cast<F&&>(f));
}

/// Whether D is f32, as a kernel with accumulators Reg knows it (never with f16 accumulators).
template <typename Reg>
__device__ __forceinline__ bool is_f32_output(const Output& o) {
  return !std::is_same_v<Reg, std::uint32_t> && o.d_type == DataType::F32;
}

/// store_run_as for o's type of D and its epilogue, chosen per call (for code outside a
/// per-element loop: the fix-ups and the split-K pass, which apply the epilogue once, here).
template <int W>
__device__ __forceinline__ void store_run(const Output& o, std::int64_t row, std::int64_t col, const float* acc) {
  with_type(o.d_type, [&](auto tag) {
    if (o.epi.on)
      store_run_as<typename decltype(tag)::type, W, true>(o, row, col, acc);
    else
      store_run_as<typename decltype(tag)::type, W>(o, row, col, acc);
  });
}

/// D(row, col) = alpha·acc + beta·C(row, col) (and the epilogue) for one element inside D's columns.
__device__ __forceinline__ void store_element(const Output& o, std::int64_t row, std::int64_t col, float acc) {
  store_run<1>(o, row, col, &acc);
}

/// Two values of D's type as one aligned store.
template <typename D>
__device__ __forceinline__ void store_pair(D* at, float x, float y) {
  if constexpr (std::is_same_v<D, float>)
    *reinterpret_cast<float2*>(at) = make_float2(x, y);
  else if constexpr (std::is_same_v<D, __half>)
    *reinterpret_cast<__half2*>(at) = __floats2half2_rn(x, y);
  else
    *reinterpret_cast<__nv_bfloat162*>(at) = __floats2bfloat162_rn(x, y);
}

}  // namespace hgemm::detail::engine
