// SPDX-License-Identifier: Apache-2.0
#include "common/gate.h"

#include "common/elementwise.cuh"
#include "common/launch.cuh"

namespace hgemm::detail {
namespace {

using namespace elementwise;

/// Z's columns of D's column c: the gate's and, `up` further, the up's.
struct GateColumns {
  GateLayout layout;
  std::int64_t cols;
  __device__ std::int64_t gate(std::int64_t c) const {
    return layout == GateLayout::Halves ? c : 16 * (c >> 3) + (c & 7);
  }
  __device__ std::int64_t up() const { return layout == GateLayout::Halves ? cols : 8; }
};

__device__ __forceinline__ float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

__global__ void gate_kernel(TypedMatrices z, TypedMatrices d, GateColumns at, std::int64_t rows, std::int64_t cols,
                            std::int64_t batch) {
  for_each_element(rows, cols, batch, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
    const std::int64_t zi = b * z.stride + r * z.ld + at.gate(c);
    const float g = load_typed(z.ptr, z.type, zi), u = load_typed(z.ptr, z.type, zi + at.up());
    store_typed(const_cast<void*>(d.ptr), d.type, b * d.stride + r * d.ld + c, g * sigmoid(g) * u);
  });
}

__global__ void gate_gradient_kernel(TypedMatrices z, TypedMatrices dd, TypedMatrices dz, GateColumns at,
                                     std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  for_each_element(rows, cols, batch, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
    const std::int64_t zi = b * z.stride + r * z.ld + at.gate(c), gi = b * dz.stride + r * dz.ld + at.gate(c);
    const float g = load_typed(z.ptr, z.type, zi), u = load_typed(z.ptr, z.type, zi + at.up());
    const float grad = load_typed(dd.ptr, dd.type, b * dd.stride + r * dd.ld + c);
    const float s = sigmoid(g);
    void* out = const_cast<void*>(dz.ptr);
    store_typed(out, dz.type, gi, grad * u * s * (1.f + g * (1.f - s)));
    store_typed(out, dz.type, gi + at.up(), grad * g * s);
  });
}

}  // namespace

Status gate_matrices(TypedMatrices z, TypedMatrices d, GateLayout layout, std::int64_t rows, std::int64_t cols,
                     std::int64_t batch, cudaStream_t stream, std::string* message) {
  if (rows * cols * batch == 0) return Status::Success;
  gate_kernel<<<element_grid(rows, cols, batch), kThreads, 0, stream>>>(z, d, GateColumns{layout, cols}, rows, cols,
                                                                        batch);
  return launch_status(message);
}

Status gate_gradient_matrices(TypedMatrices z, TypedMatrices dd, TypedMatrices dz, GateLayout layout,
                              std::int64_t rows, std::int64_t cols, std::int64_t batch, cudaStream_t stream,
                              std::string* message) {
  if (rows * cols * batch == 0) return Status::Success;
  gate_gradient_kernel<<<element_grid(rows, cols, batch), kThreads, 0, stream>>>(z, dd, dz, GateColumns{layout, cols},
                                                                                 rows, cols, batch);
  return launch_status(message);
}

}  // namespace hgemm::detail
