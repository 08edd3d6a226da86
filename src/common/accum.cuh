// SPDX-License-Identifier: Apache-2.0
// The accumulator type of a kernel: __half (the Toy-HGEMM report's choice) or float (the library
// default). mul_add is the one place where the two differ inside a main loop.
#pragma once

#include <cuda_fp16.h>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

__device__ __forceinline__ __half mul_add(__half a, __half b, __half acc) { return __hfma(a, b, acc); }
__device__ __forceinline__ float mul_add(__half a, __half b, float acc) {
  return fmaf(__half2float(a), __half2float(b), acc);
}

__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(float x) { return x; }

template <typename Acc> __device__ __forceinline__ Acc acc_zero() { return Acc(0.f); }
template <> __device__ __forceinline__ __half acc_zero<__half>() { return __ushort_as_half(0); }

template <typename Acc> struct AccumOf;
template <> struct AccumOf<__half> { static constexpr Accum value = Accum::F16; };
template <> struct AccumOf<float> { static constexpr Accum value = Accum::F32; };

}  // namespace hgemm::detail

namespace hgemm::detail {

/// Zeroes a thread's register tile of accumulators.
template <typename Acc, int R, int C>
__device__ __forceinline__ void zero_fill(Acc (&acc)[R][C]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < C; ++c) acc[r][c] = acc_zero<Acc>();
}

}  // namespace hgemm::detail
