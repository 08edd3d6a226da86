// SPDX-License-Identifier: Apache-2.0
// The list of the engine's compiled kernels that make_plan's plans run, and the one a plan runs.
// kernels_wide.cu, kernels_wide_stream_k.cu, kernels_narrow.cu, kernels_pingpong.cu,
// kernels_skinny.cu, kernels_tiles.cu and kernels_swapped_tiles.cu instantiate exactly these (scripts/ptxas-check.sh counts their
// kernels, tests/cpu/test_instantiations.cpp checks that every plan maps to one entry and every
// entry is reachable). The grouped and pointer-batch kernels are planned apart (grouped_plan.cpp,
// pointer_batch_plan.cpp) and not listed here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/matmul.h"
#include "engine/sm90/plan.h"

namespace hgemm::detail::engine {

/// One compiled kernel: the mainloop shape, the stream-K branches, the store code, the short-K
/// entry of the tiles per CTA, the operands' majors as the kernel reads them (the swapped
/// problem's for a swapped shape) and the accumulator and input types.
struct Instantiation {
  KernelShape shape = KernelShape::Wide;
  bool stream_k = false;
  TileFinish finish = TileFinish::Any;
  bool short_k = false;
  bool a_mn = false, b_mn = false;
  Accum accum = Accum::F32;
  DataType in = DataType::F16;
  bool operator==(const Instantiation& o) const {
    return shape == o.shape && stream_k == o.stream_k && finish == o.finish && short_k == o.short_k &&
           a_mn == o.a_mn && b_mn == o.b_mn && accum == o.accum && in == o.in;
  }
};

/// The translation unit that compiles instantiation i.
const char* unit_of(const Instantiation& i);

/// Every instantiation of those units, each once.
const std::vector<Instantiation>& manifest();

/// The instantiation that runs `plan` for p; nullopt where the launch refuses the plan (a tile
/// narrower than 64 columns over an N-major B, f16 accumulators on the ping-pong kernel).
std::optional<Instantiation> instantiation_of(const Plan& plan, const Matmul& p);

/// One line: "wide 128x256 c2, stream-K, fused in registers, A K-major, B MN-major, f32 acc, bf16".
std::string describe(const Instantiation& i);

}  // namespace hgemm::detail::engine
