// SPDX-License-Identifier: Apache-2.0
// Vector loads and stores of 1, 2, 4 or 8 halves (16, 32, 64 or 128 bits).
//
// Global-memory helpers take `valid`, the number of in-bounds elements from `p` on: the full
// vector is moved with one wide instruction when it is entirely in bounds and `p` is aligned to
// its width; otherwise element by element, with zeros for loads past the edge and no stores past
// it. This is how every kernel handles ragged edges and odd leading dimensions.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace hgemm::detail {

template <int N>
struct alignas(2 * N) Halves {
  __half h[N];
};

template <int N> struct VecWord;
template <> struct VecWord<1> { using type = unsigned short; };
template <> struct VecWord<2> { using type = unsigned int; };
template <> struct VecWord<4> { using type = uint2; };
template <> struct VecWord<8> { using type = uint4; };

template <int N>
__device__ __forceinline__ bool is_vec_aligned(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & (2 * N - 1)) == 0;
}

/// Unpredicated wide load / store, for shared memory and for addresses known to be aligned.
template <int N>
__device__ __forceinline__ Halves<N> ld_vec(const __half* p) {
  using W = typename VecWord<N>::type;
  Halves<N> r;
  *reinterpret_cast<W*>(r.h) = *reinterpret_cast<const W*>(p);
  return r;
}
template <int N>
__device__ __forceinline__ void st_vec(__half* p, const Halves<N>& v) {
  using W = typename VecWord<N>::type;
  *reinterpret_cast<W*>(p) = *reinterpret_cast<const W*>(v.h);
}

/// Unpredicated wide load from global memory (N = 2, 4 or 8; p aligned to 2N bytes, read-only
/// for the kernel's lifetime) that the compiler issues where it is written: the asm statement
/// clobbers memory, so no shared-memory access moves across it. A prefetch written before the
/// math it should overlap stays there; as a plain load, nvcc sank the double-buffered rung's
/// prefetch below its math when registers were tight.
template <int N>
__device__ __forceinline__ Halves<N> ld_global_in_order(const __half* p) {
  Halves<N> r;
  std::uint32_t* w = reinterpret_cast<std::uint32_t*>(r.h);
  if constexpr (N == 2) {
    asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(w[0]) : "l"(p) : "memory");
  } else if constexpr (N == 4) {
    asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p) : "memory");
  } else {
    static_assert(N == 8, "2, 4 or 8 halves");
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "l"(p)
                 : "memory");
  }
  return r;
}

/// N halves from p, zeros for elements at or past `valid`.
template <int N>
__device__ __forceinline__ Halves<N> load_halves(const __half* p, std::int64_t valid) {
  if (valid >= N && is_vec_aligned<N>(p)) return ld_vec<N>(p);
  Halves<N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.h[i] = i < valid ? p[i] : __ushort_as_half(0);
  return r;
}

/// Stores the first min(N, valid) halves of v at p.
template <int N>
__device__ __forceinline__ void store_halves(__half* p, const Halves<N>& v, std::int64_t valid) {
  if (valid >= N && is_vec_aligned<N>(p)) {
    st_vec<N>(p, v);
    return;
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (i < valid) p[i] = v.h[i];
}

/// Halves s..s+7 of the 16 halves lo:hi (s < 8): two aligned 16-byte units read where a row
/// starts between 16-byte boundaries, realigned through selects and one funnel shift (a barrel
/// shift: indexing the words by s would move them to local memory).
__device__ __forceinline__ uint4 shift_down_halves(const uint4& lo, const uint4& hi, int s) {
  std::uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
  for (int i = 0; i < 6; ++i) w[i] = (s & 4) ? w[i + 2] : w[i];  // 4 halves: 2 words
#pragma unroll
  for (int i = 0; i < 5; ++i) w[i] = (s & 2) ? w[i + 1] : w[i];  // 2 halves: 1 word
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = (s & 1) ? __funnelshift_r(w[i], w[i + 1], 16) : w[i];
  return make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace hgemm::detail
