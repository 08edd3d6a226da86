// SPDX-License-Identifier: Apache-2.0
// The engine's Wide kernel without the stream-K branches: persistent 128×256 tiles, clusters of
// 2 CTAs along M sharing B by multicast, 4 ring slots; general, plain (PlainOf) and fused in
// registers. Its stream-K half is kernels_wide_stream_k.cu, so the two compile side by side.
#include "engine/sm90/kernels_wide.cuh"

namespace hgemm::detail::engine {

Status launch_wide(const KernelLaunch& l, std::string* message) { return launch_persistent<Wide, false>(l, message); }

}  // namespace hgemm::detail::engine
