// SPDX-License-Identifier: Apache-2.0
// A pointer batch's launches (pointer_batch.h): the table of every product's tensor maps and D
// in stream-ordered workspace, the map writer that fills it from the pointer arrays, then the one
// launch of every product.
#include <algorithm>
#include <cstdint>

#include "common/launch.cuh"
#include "common/sm90/ptx.cuh"
#include "common/sm90/tensor_maps.h"
#include "common/workspace.h"
#include "engine/sm90/pointer_batch.h"

namespace hgemm::detail::engine {
namespace {

/// Points the tensor map at `map` (global memory) to `address`, every other field kept.
__device__ __forceinline__ void replace_global_address(CUtensorMap* map, const void* address) {
#ifdef HGEMM_SM90A
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(
                   static_cast<std::uint64_t>(__cvta_generic_to_global(map))),
               "l"(reinterpret_cast<std::uint64_t>(address))
               : "memory");
#endif
}

/// Makes this thread's writes of tensor maps visible to the tensor-map proxy of later readers
/// (they acquire before their first TMA load).
__device__ __forceinline__ void release_tensor_maps() {
#ifdef HGEMM_SM90A
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
#endif
}

__device__ __forceinline__ void copy_tensor_map(CUtensorMap* to, const CUtensorMap* from) {
  const auto* src = reinterpret_cast<const uint4*>(from);
  auto* dst = reinterpret_cast<uint4*>(to);
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(CUtensorMap) / sizeof(uint4)); ++i) dst[i] = src[i];
}

/// Up to kPointersPerWriterLaunch entries of host arrays, carried in the writer's parameters: a
/// captured graph keeps them, and no copy of host memory is queued.
struct HostPointers {
  const void* a[kPointersPerWriterLaunch];
  const void* b[kPointersPerWriterLaunch];
  void* d[kPointersPerWriterLaunch];
  __device__ const void* a_at(int i) const { return a[i]; }
  __device__ const void* b_at(int i) const { return b[i]; }
  __device__ void* d_at(int i) const { return d[i]; }
};

/// The caller's device arrays, read when the writer runs.
struct DevicePointers {
  const void* const* a;
  const void* const* b;
  void* const* d;
  __device__ const void* a_at(int i) const { return a[i]; }
  __device__ const void* b_at(int i) const { return b[i]; }
  __device__ void* d_at(int i) const { return d[i]; }
};

/// Where the writer puts entries [0, count) of its source, and which maps take an address (an
/// operand with no elements, or K = 0, keeps the placeholder map).
struct MapWrites {
  PointerBatchProduct* out = nullptr;
  int count = 0;
  bool a_used = false, b_used = false;
};

__device__ __forceinline__ bool tma_aligned(const void* p) {
  return p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

/// One thread per product: the shared maps copied, their addresses replaced by the product's;
/// an entry TMA cannot take (null, not 16-byte aligned) gets a null D, which skips the product.
template <typename Source>
__global__ void __launch_bounds__(128)
    write_product_maps(const __grid_constant__ CUtensorMap shared_a, const __grid_constant__ CUtensorMap shared_b,
                       const __grid_constant__ Source source, MapWrites w) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;  // below 2^31 + 128: no wrap in 32 bits
  if (x >= static_cast<unsigned>(w.count)) return;
  const int i = static_cast<int>(x);
  const void* a = source.a_at(i);
  const void* b = source.b_at(i);
  void* d = source.d_at(i);
  const bool ok = tma_aligned(d) && (!w.a_used || tma_aligned(a)) && (!w.b_used || tma_aligned(b));
  PointerBatchProduct& entry = w.out[i];
  copy_tensor_map(&entry.a, &shared_a);
  copy_tensor_map(&entry.b, &shared_b);
  if (ok && w.a_used) replace_global_address(&entry.a, a);
  if (ok && w.b_used) replace_global_address(&entry.b, b);
  entry.d = ok ? d : nullptr;
  release_tensor_maps();
}

template <typename Source>
Status launch_writer(const CUtensorMap& a, const CUtensorMap& b, const Source& source, const MapWrites& w,
                     cudaStream_t stream, std::string* message) {
  const auto blocks = static_cast<unsigned>((static_cast<std::int64_t>(w.count) + 127) / 128);  // count ≤ INT_MAX
  write_product_maps<Source><<<blocks, 128, 0, stream>>>(a, b, source, w);
  return launch_status(message);
}

/// The maps every product's are copied from: the shared shape at a placeholder address (the
/// table's, 16-byte aligned), replaced per product. With K = 0 nothing is loaded, but the kernel
/// still prefetches its maps: a one-row map of the table stands in for both.
Status encode_shared_maps(const Matmul& p, void* placeholder, int bm, int bn, CUtensorMap* a, CUtensorMap* b,
                          std::string* message) {
  if (p.k == 0) {
    const sm90::StoredOperand row{placeholder, DataType::F16, 64, 1, 64};
    if (Status s = sm90::encode_operand_map(a, row, false, bm, message); s != Status::Success) return s;
    return sm90::encode_operand_map(b, row, false, bn, message);
  }
  const sm90::StoredOperand sa{placeholder, p.a_type, p.lda, p.op_a == Op::N ? p.m : p.k, p.op_a == Op::N ? p.k : p.m};
  const sm90::StoredOperand sb{placeholder, p.b_type, p.ldb, p.op_b == Op::N ? p.k : p.n, p.op_b == Op::N ? p.n : p.k};
  if (Status s = sm90::encode_operand_map(a, sa, p.op_a == Op::T, bm, message); s != Status::Success) return s;
  return sm90::encode_operand_map(b, sb, p.op_b == Op::N, bn, message);
}

}  // namespace

Status launch_pointer_batch(const PointerBatch& batch, const Device& device, cudaStream_t stream,
                            std::string* message) {
  const Matmul& p = batch.shape;
  const KernelShape tiles = pointer_batch_tiles(p, batch.count, device.sms);
  const std::int64_t ctas = pointer_batch_ctas(p, batch.count, tiles);
  if (ctas == 0) return Status::Success;  // an empty D
  int bm = 0, bn = 0;
  tile_of(tiles, &bm, &bn);
  StreamWorkspace workspace(stream);
  void* table = nullptr;
  const std::size_t bytes = static_cast<std::size_t>(batch.count) * sizeof(PointerBatchProduct);
  if (Status s = workspace.allocate(bytes, &table, message); s != Status::Success) return s;
  auto* products = static_cast<PointerBatchProduct*>(table);
  CUtensorMap shared_a{}, shared_b{};
  if (Status s = encode_shared_maps(p, table, bm, bn, &shared_a, &shared_b, message); s != Status::Success) return s;

  MapWrites w;
  w.a_used = p.a_used(), w.b_used = p.b_used();
  const int count = static_cast<int>(batch.count);
  if (batch.device_arrays) {
    w.out = products, w.count = count;
    const DevicePointers source{batch.a, batch.b, batch.d};
    if (Status s = launch_writer(shared_a, shared_b, source, w, stream, message); s != Status::Success) return s;
  } else {
    HostPointers source;
    for (int first = 0; first < count; first += kPointersPerWriterLaunch) {
      w.out = products + first, w.count = std::min(kPointersPerWriterLaunch, count - first);
      std::copy_n(batch.a + first, w.count, source.a);
      std::copy_n(batch.b + first, w.count, source.b);
      std::copy_n(batch.d + first, w.count, source.d);
      if (Status s = launch_writer(shared_a, shared_b, source, w, stream, message); s != Status::Success) return s;
    }
  }

  KernelLaunch l;
  KernelParams& k = l.params;
  k.m = p.m, k.n = p.n, k.k = p.k;
  k.out.ldd = p.ldd, k.out.ldc = p.ldd, k.out.m = p.m, k.out.n = p.n;  // C in place: D's rows
  k.out.alpha = p.alpha, k.out.beta = p.c_read() ? p.beta : 0.f;
  k.out.d_type = p.d_type, k.out.c_type = p.d_type;
  k.store = StorePath::Registers;
  l.a_mn = p.op_a == Op::T, l.b_mn = p.op_b == Op::N, l.accum = p.accum, l.in = p.a_type;
  l.grid = static_cast<unsigned>(ctas), l.stream = stream;
  l.plain = !p.c_read();
  return launch_pointer_batch_tiles(l, tiles, products, message);
}

}  // namespace hgemm::detail::engine
