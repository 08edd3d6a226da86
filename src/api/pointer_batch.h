// SPDX-License-Identifier: Apache-2.0
// gemm_batched's pointer arrays: where they live (host or device memory, asked of the driver),
// what the host checks of device arrays, and the one launch of every product on the engine.
#pragma once

#include <cuda_runtime_api.h>

#include "engine/sm90/pointer_batch.h"
#include "hgemm/hgemm.h"

namespace hgemm::detail {

/// One pointer array as cudaPointerGetAttributes described it (err: what the call returned).
struct ArrayAttributes {
  cudaError_t err = cudaSuccess;
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
};

/// Where the A, B and C pointer arrays of a call live, from their attributes: all readable by
/// the host (ordinary, pinned or managed memory, or no device at all: then nothing is device
/// memory), or all device memory of `current_device`. Else InvalidPointer (the driver could not
/// place one, or it is another device's memory) or InvalidArgument (of both kinds). Pure: the
/// CPU tests call it with made-up attributes.
Status place_pointer_arrays(const ArrayAttributes (&attributes)[3], int current_device, bool* device_arrays);

/// Asks the driver where the three arrays live and calls place_pointer_arrays.
Status locate_pointer_arrays(const void* a, const void* b, const void* c, bool* device_arrays);

/// What the host can check of a batch of device arrays without reading them: the arrays (8-byte
/// aligned, not past the end of the address space), the shared shape as gemm validates it, and
/// what the one launch needs (pointer_batch_supports).
Status validate_device_pointer_batch(const engine::PointerBatch& batch);

/// Runs a batch of device arrays (validated here) in one launch on the engine.
Status run_device_pointer_batch(const engine::PointerBatch& batch, const GemmOptions& options);

/// Runs a validated batch of host arrays in one launch where options ask for it and it can
/// (pointer_batch_in_one_launch; see gemm_batched in hgemm.h); *ran says whether it did. A
/// status other than Success is an error of the call (a matrix the GPU cannot access).
Status run_host_pointer_batch(const engine::PointerBatch& batch, const GemmOptions& options, bool* ran);

}  // namespace hgemm::detail
