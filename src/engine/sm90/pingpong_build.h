// SPDX-License-Identifier: Apache-2.0
// Whether this build compiled the ping-pong kernel (CMake option HGEMM_ENGINE_PINGPONG), and what
// engine.sm90_pingpong says when it did not.
#pragma once

namespace hgemm::detail::engine {

/// Defined in kernels_pingpong.cu, which is compiled with the library's definitions.
bool pingpong_built();

inline constexpr const char* kPingPongNotBuilt =
    "engine.sm90_pingpong is not compiled in this build of hgemm (configure with -DHGEMM_ENGINE_PINGPONG=ON)";

}  // namespace hgemm::detail::engine
