// SPDX-License-Identifier: Apache-2.0
// Hopper (sm_90a) device mechanics shared by the sm90 ladder: mbarriers, TMA tile loads (plain
// and cluster-multicast), wgmma fences and groups, shared-memory matrix descriptors, register
// reallocation and cluster helpers. Each wrapper is one PTX instruction with a name that says
// what it does. The bodies exist only in the sm_90a compilation pass (HGEMM_SM90A); in the other
// passes they are empty and the kernels that use them are never launched (the registry refuses).
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cstdint>

#include "common/shared_address.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HGEMM_SM90A 1
#endif

namespace hgemm::detail::sm90 {

// ------------------------------------------------------------------ mbarrier
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned arrivals) {
#ifdef HGEMM_SM90A
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(arrivals) : "memory");
#endif
}

/// Makes the barriers' initialisation visible to the async proxy (TMA) and the cluster.
__device__ __forceinline__ void fence_barrier_init() {
#ifdef HGEMM_SM90A
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/// One arrival that also announces `bytes` of TMA transactions to come in this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
#ifdef HGEMM_SM90A
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes) : "memory");
#endif
}

__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
#ifdef HGEMM_SM90A
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
#endif
}

/// Arrival on the barrier at the same offset in the shared memory of cluster CTA `cta`. Plain
/// (CTA-scope) semantics: a .release.cluster arrival would also wait for this warp's wgmmas still
/// in flight, draining the tensor pipe every slice (measured: docs/ladder.md#persistent-epilogue).
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, unsigned cta) {
#ifdef HGEMM_SM90A
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(shared_address(bar)),
      "r"(cta)
      : "memory");
#endif
}

/// Waits until the barrier's phase of this parity has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
#ifdef HGEMM_SM90A
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// ------------------------------------------------------------------ TMA
/// Loads the tensor map's box at element coordinates (x = inner, y = outer) into `dst`; the
/// bytes complete a transaction on `bar`. Out-of-bounds elements arrive as zeros.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int x, int y, std::uint64_t* bar) {
#ifdef HGEMM_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(shared_address(bar))
      : "memory");
#endif
}

/// As tma_load, but the box lands at the same offset in every CTA of `cta_mask` in the
/// cluster, completing on each one's barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, int x, int y, std::uint64_t* bar,
                                                   std::uint16_t cta_mask) {
#ifdef HGEMM_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(shared_address(bar)), "h"(cta_mask)
      : "memory");
#endif
}

/// The same from matrix z of a batch (a map of rank 3: width, rows, batch), plain and multicast.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int x, int y, int z, std::uint64_t* bar) {
#ifdef HGEMM_SM90A
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(shared_address(bar))
      : "memory");
#endif
}
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map, int x, int y, int z,
                                                      std::uint64_t* bar, std::uint16_t cta_mask) {
#ifdef HGEMM_SM90A
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(shared_address(bar)), "h"(cta_mask)
      : "memory");
#endif
}

/// Stores the box at `src` to the tensor map's coordinates (x, y); elements outside the tensor
/// are not written. Completes asynchronously: see bulk_commit / bulk_wait_read.
__device__ __forceinline__ void tma_store(const CUtensorMap* map, const void* src, int x, int y) {
#ifdef HGEMM_SM90A
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(shared_address(src)), "r"(x), "r"(y)
               : "memory");
#endif
}

/// The same into matrix z of a batch (a map of rank 3).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int x, int y, int z) {
#ifdef HGEMM_SM90A
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(shared_address(src)), "r"(x), "r"(y), "r"(z)
               : "memory");
#endif
}

__device__ __forceinline__ void bulk_commit() {
#ifdef HGEMM_SM90A
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

/// Waits until at most N committed bulk stores still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
#ifdef HGEMM_SM90A
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#endif
}

/// Stores four 8×8 matrices of halves to shared memory (stmatrix .x4): register i of every lane
/// holds two halves of matrix i, at row lane / 4, columns 2 (lane % 4) and the next (the mma and
/// wgmma D fragment's layout); lanes 8i .. 8i + 7 give the 16-byte-aligned addresses of matrix
/// i's rows 0..7.
__device__ __forceinline__ void stmatrix_x4(std::uint32_t row_address, std::uint32_t r0, std::uint32_t r1,
                                            std::uint32_t r2, std::uint32_t r3) {
#ifdef HGEMM_SM90A
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row_address), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
#endif
}

/// Makes this thread's ordinary shared-memory writes visible to the async proxy (TMA).
__device__ __forceinline__ void fence_proxy_async() {
#ifdef HGEMM_SM90A
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
#ifdef HGEMM_SM90A
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#endif
}

// ------------------------------------------------------------------ wgmma
/// Orders this thread's register writes (accumulators) before the next wgmma reads them.
__device__ __forceinline__ void wgmma_fence() {
#ifdef HGEMM_SM90A
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#ifdef HGEMM_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}

/// Waits until at most N committed wgmma groups of this warp are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#ifdef HGEMM_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}

/// Keeps the compiler from moving accumulator reads/writes across an asynchronous wgmma. The
/// constraint matches the register's type: punning a float through "+r" makes ptxas copy
/// accumulators between wgmmas and inject waits (ptxas info C7519).
__device__ __forceinline__ void fence_operand(float& reg) { asm volatile("" : "+f"(reg)::"memory"); }
__device__ __forceinline__ void fence_operand(std::uint32_t& reg) { asm volatile("" : "+r"(reg)::"memory"); }

/// Shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format") for a 128-byte-swizzled
/// tile: start address, leading and stride byte offsets (all in 16-byte units), swizzle mode 1.
__device__ __forceinline__ std::uint64_t smem_desc_sw128(const void* start, unsigned lead_bytes,
                                                         unsigned stride_bytes) {
  const std::uint64_t addr = (shared_address(start) & 0x3FFFF) >> 4;
  return addr | (std::uint64_t((lead_bytes >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32) | (std::uint64_t(1) << 62);
}

/// The descriptor `desc` with its start address moved `units` 16-byte units on: the descriptor of
/// the same layout `16 · units` bytes further. Shared memory addresses are below 256 KiB, so the
/// 14-bit start field never carries into the next field, and the add stays in the low word.
__device__ __forceinline__ std::uint64_t desc_advanced(std::uint64_t desc, std::uint32_t units) {
  return (desc & 0xFFFFFFFF00000000ull) | static_cast<std::uint32_t>(static_cast<std::uint32_t>(desc) + units);
}

// ------------------------------------------------------------------ registers and clusters
/// Gives registers back (producer warpgroup) or takes them (consumer warpgroups).
template <int REGS>
__device__ __forceinline__ void release_registers() {
#ifdef HGEMM_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
#endif
}
template <int REGS>
__device__ __forceinline__ void claim_registers() {
#ifdef HGEMM_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
#endif
}

__device__ __forceinline__ unsigned cluster_cta_rank() {
  unsigned r = 0;
#ifdef HGEMM_SM90A
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
  return r;
}

/// All threads of all CTAs of the cluster meet here (also orders their shared-memory accesses).
__device__ __forceinline__ void cluster_sync() {
#ifdef HGEMM_SM90A
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

/// The 4 floats at the same shared-memory offset as `local` in cluster CTA `cta` (distributed
/// shared memory: `cta` may be this CTA). Valid between two cluster_syncs that bracket the peer's
/// writes and the end of its reads.
__device__ __forceinline__ float4 load_float4_from_cluster_cta(const void* local, unsigned cta) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
#ifdef HGEMM_SM90A
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(shared_address(local)), "r"(cta)
      : "memory");
#endif
  return v;
}

/// A 64-bit flag in global memory, read with acquire and written with release semantics at GPU
/// scope: one CTA hands data to another (stream-K). The usual pattern: the writers store, meet
/// at a barrier, and one of them releases the flag; one reader acquires it, then the readers meet
/// at a barrier and load.
__device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long* flag) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(flag) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_gpu(unsigned long long* flag, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(flag), "l"(v) : "memory");
}

/// A barrier over `threads` threads (a multiple of 32) with hardware barrier number `id` (1..15).
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Arrives on named barrier `id` of `threads` threads without waiting: the barrier completes once
/// the other threads reach named_barrier_sync on it (a signal from one group of warps to another).
__device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace hgemm::detail::sm90
