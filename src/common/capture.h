// SPDX-License-Identifier: Apache-2.0
// A scope in which this thread's CUDA calls ignore a stream capture in progress: for one-time
// set-up calls that a capture forbids and that touch no stream (binding a context, creating a
// memory pool), made by whichever call comes first, which may be inside a CUDA graph's capture.
#pragma once

#include <cuda_runtime_api.h>

namespace hgemm::detail {

class RelaxedCapture {
 public:
  RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;  // the thread's previous mode once swapped
};

}  // namespace hgemm::detail
