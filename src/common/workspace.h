// SPDX-License-Identifier: Apache-2.0
// Scratch memory for one launch, stream-ordered: taken from hgemm's private memory pool of the
// current device (cudaMallocFromPoolAsync) and given back on the same stream when the
// StreamWorkspace goes out of scope, after the work queued behind it. The pool keeps freed memory
// for the next call (its release threshold is unlimited) until hgemm::release_workspace().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

class StreamWorkspace {
 public:
  explicit StreamWorkspace(cudaStream_t stream) : stream_(stream) {}
  ~StreamWorkspace();
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;

  /// `bytes` of device memory usable by work queued on the stream from now on.
  Status allocate(std::size_t bytes, void** out, std::string* message);

 private:
  cudaStream_t stream_;
  std::vector<void*> blocks_;
};

}  // namespace hgemm::detail
