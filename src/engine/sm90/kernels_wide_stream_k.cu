// SPDX-License-Identifier: Apache-2.0
// The engine's Wide kernel with the stream-K branches (kernels_wide.cu has the rest).
#include "engine/sm90/kernels_wide.cuh"

namespace hgemm::detail::engine {

Status launch_wide_stream_k(const KernelLaunch& l, std::string* message) {
  return launch_persistent<Wide, true>(l, message);
}

}  // namespace hgemm::detail::engine
