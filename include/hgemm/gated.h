// SPDX-License-Identifier: Apache-2.0
// hgemm/gated.h — the gate of a gated linear unit (SwiGLU), as a pass over a product's output.
//
// A SwiGLU layer computes D = silu(X·W_gateᵀ) ⊙ (X·W_upᵀ): one matrix product Z of 2N columns
// (hgemm::matmul, with its bias fused), then this gate, which halves it. The backward pass reads
// Z again (keep it: it is the product's own output), so nothing else needs saving.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "hgemm/hgemm.h"

namespace hgemm {

/// Where a gated product's gate and up columns lie in Z (M × 2N) for column c of D (M × N).
enum class GateLayout : std::uint8_t {
  /// gate c, up N + c: Z = [gate | up], as z.chunk(2, -1) splits it and as two stacked weights
  /// [W_gate; W_up] give it.
  Halves = 0,
  /// Blocks of 8 columns alternate: gate 16·(c/8) + c%8, up that + 8 (N a multiple of 8). In
  /// Hopper's accumulator fragment one thread holds columns j and j + 8, so this is the order in
  /// which a GEMM's epilogue can gate in registers; the weights' rows are interleaved so once.
  Blocks8 = 1,
};

/// "halves" or "blocks8".
const char* gate_layout_name(GateLayout l);

/// One gate pass, or a strided batch of them (matrix i of each operand `stride` elements after
/// the first):
///
///   D[r, c] = silu(Z[r, gate(c)]) · Z[r, up(c)],   silu(x) = x / (1 + e^-x)
///
/// in f32, rounded once to D's type. Z and D are row-major, F16, BF16 or F32 each; ldz ≥ 2N,
/// ldd ≥ N; pointers device-accessible and aligned to their element size. D must not overlap Z.
/// M = 0 or N = 0 does nothing. Asynchronous on `stream`.
struct GateArgs {
  std::int64_t m = 0, n = 0;  ///< D is M×N, Z is M×2N
  GateLayout layout = GateLayout::Halves;
  const void* z = nullptr;
  std::int64_t ldz = 0;
  DataType z_type = DataType::F16;
  void* d = nullptr;
  std::int64_t ldd = 0;
  DataType d_type = DataType::F16;
  std::int64_t batch = 1;
  std::int64_t stride_z = 0, stride_d = 0;  ///< in elements; stride_d ≥ ldd·M when batch > 1
};

Status swiglu(const GateArgs& args, cudaStream_t stream = nullptr);

/// The gradient of swiglu: from dD (M × N, `dd`) and the forward's Z, dZ (M × 2N, in Z's
/// layout) = [dD · Z_up · silu'(Z_gate), dD · silu(Z_gate)], silu'(x) = s·(1 + x·(1 − s)) with
/// s = sigmoid(x). `args` is the forward's (its d unused); dD and dZ take the same rules as D and
/// Z, and dZ must not overlap dD or Z.
struct GateGradArgs {
  const void* dd = nullptr;
  std::int64_t lddd = 0;
  DataType dd_type = DataType::F16;
  void* dz = nullptr;
  std::int64_t lddz = 0;
  DataType dz_type = DataType::F16;
  std::int64_t stride_dd = 0, stride_dz = 0;  ///< stride_dz ≥ lddz·M when batch > 1
};

Status swiglu_backward(const GateArgs& forward, const GateGradArgs& grad, cudaStream_t stream = nullptr);

}  // namespace hgemm
