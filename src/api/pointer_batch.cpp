// SPDX-License-Identifier: Apache-2.0
#include "api/pointer_batch.h"

#include <climits>
#include <cstdint>
#include <string>

#include "api/errors.h"
#include "api/validate.h"
#include "common/device.h"

namespace hgemm::detail {
namespace {

const char* const kArrayNames[3] = {"A", "B", "C"};

/// Whether the call names a kernel the one launch stands for (the engine, or auto's choice).
bool engine_named(std::string_view kernel) { return kernel == "auto" || kernel == "engine.sm90"; }

/// A stand-in for every matrix of a shape whose pointers the host cannot see: non-null, aligned
/// to any element size, low enough that no matrix of a valid size runs past the address space.
const void* const kPlaceholder = reinterpret_cast<const void*>(std::uintptr_t(1) << 12);

Matmul with_placeholders(const Matmul& shape) {
  Matmul q = shape;
  q.a = q.b = kPlaceholder;
  q.d = const_cast<void*>(kPlaceholder);
  q.c = q.d;  // in place
  q.batch = 1;
  return q;
}

/// Products that each fill the GPU with 128×128 tiles run one launch each: their launches cost
/// little next to their work, and the persistent kernels run them.
bool fills_the_gpu(const Matmul& p, int sms) { return ((p.m + 127) / 128) * ((p.n + 127) / 128) >= sms; }

bool tma_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

Status place_pointer_arrays(const ArrayAttributes (&attributes)[3], int current_device, bool* device_arrays) {
  int on_device = 0;
  for (int i = 0; i < 3; ++i) {
    const ArrayAttributes& x = attributes[i];
    const std::string name = std::string("the ") + kArrayNames[i] + " pointer array";
    if (x.err == cudaErrorNoDevice || x.err == cudaErrorInsufficientDriver) continue;  // only host memory exists
    if (x.err != cudaSuccess)
      return fail(Status::InvalidPointer,
                  name + ": cudaPointerGetAttributes failed: " + cudaGetErrorString(x.err) +
                      "; pass host memory or device memory of the current device");
    if (x.type != cudaMemoryTypeDevice) continue;  // ordinary, pinned or managed: the host reads it
    if (x.device != current_device)
      return fail(Status::InvalidPointer, name + " is memory of device " + std::to_string(x.device) +
                                              ", but the call runs on device " + std::to_string(current_device));
    ++on_device;
  }
  if (on_device != 0 && on_device != 3)
    return fail(Status::InvalidArgument,
                "the pointer arrays are partly device memory and partly host memory: pass all three in one kind");
  *device_arrays = on_device == 3;
  return Status::Success;
}

Status locate_pointer_arrays(const void* a, const void* b, const void* c, bool* device_arrays) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {  // no usable device: no memory but the host's
    cudaGetLastError();
    *device_arrays = false;
    return Status::Success;
  }
  ArrayAttributes attributes[3];
  const void* arrays[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    cudaPointerAttributes attr{};
    attributes[i].err = cudaPointerGetAttributes(&attr, arrays[i]);
    if (attributes[i].err != cudaSuccess) cudaGetLastError();
    attributes[i].type = attr.type, attributes[i].device = attr.device;
  }
  return place_pointer_arrays(attributes, current, device_arrays);
}

Status validate_device_pointer_batch(const engine::PointerBatch& batch) {
  const void* arrays[3] = {batch.a, batch.b, batch.d};
  for (int i = 0; i < 3; ++i) {
    const auto at = reinterpret_cast<std::uintptr_t>(arrays[i]);
    const std::string name = std::string("the ") + kArrayNames[i] + " pointer array";
    if (at % alignof(void*) != 0) return fail(Status::Misaligned, name + " is not aligned to 8 bytes");
    if (static_cast<unsigned __int128>(at) + static_cast<unsigned __int128>(batch.count) * sizeof(void*) >
        (static_cast<unsigned __int128>(1) << 64))
      return fail(Status::InvalidPointer, name + " of " + std::to_string(batch.count) +
                                              " entries would run past the end of the address space");
  }
  if (Status s = validate_arguments(with_placeholders(batch.shape)); s != Status::Success) return s;
  std::string why;
  if (Status s = engine::pointer_batch_supports(batch.shape, batch.count, &why); s != Status::Success)
    return fail(s, "device pointer arrays: " + why);
  return Status::Success;
}

Status run_device_pointer_batch(const engine::PointerBatch& batch, const GemmOptions& options) {
  if (Status s = validate_device_pointer_batch(batch); s != Status::Success) return s;
  if (!engine_named(options.kernel))
    return fail(Status::InvalidArgument, "device pointer arrays run on the engine only (kernel \"auto\" or "
                                         "\"engine.sm90\"), not on '" + std::string(options.kernel) + "'");
  Device device;
  std::string message;
  if (Status s = current_device(&device, &message); s != Status::Success) return fail(s, message);
  if (!device.hopper())
    return fail(Status::UnsupportedArch, "device pointer arrays need the Hopper engine: an sm_90 GPU and a build "
                                         "with sm_90a code (this is " + device.name + ")");
  clear_error();
  if (!batch.shape.d_used()) return Status::Success;
  const Status s = engine::launch_pointer_batch(batch, device, options.stream, &message);
  return s == Status::Success ? s : fail(s, "engine.sm90 (pointer batch): " + message);
}

Status run_host_pointer_batch(const engine::PointerBatch& batch, const GemmOptions& options, bool* ran) {
  *ran = false;
  const Matmul& p = batch.shape;
  std::string why;
  if (!options.pointer_batch_in_one_launch || !engine_named(options.kernel) || batch.count < 2 || p.k == 0 ||
      !p.d_used() || engine::pointer_batch_supports(p, batch.count, &why) != Status::Success)
    return Status::Success;
  Device device;
  if (current_device(&device, &why) != Status::Success || !device.hopper() || fills_the_gpu(p, device.sms))
    return Status::Success;
  for (std::int64_t i = 0; i < batch.count; ++i)
    if ((p.a_used() && !tma_aligned(batch.a[i])) || (p.b_used() && !tma_aligned(batch.b[i])) ||
        !tma_aligned(batch.d[i]))
      return Status::Success;
  if (!products_independent(p, batch.a, batch.b, batch.d, batch.count)) return Status::Success;
  if (options.check_pointers)
    for (std::int64_t i = 0; i < batch.count; ++i) {
      Matmul q = p;
      q.a = batch.a[i], q.b = batch.b[i], q.d = batch.d[i], q.c = q.d;
      if (Status s = validate_pointers_accessible(q); s != Status::Success)
        return batch.count > 1 ? fail_in(s, "batch entry " + std::to_string(i) + ": ") : s;
    }
  *ran = true;
  clear_error();
  const Status s = engine::launch_pointer_batch(batch, device, options.stream, &why);
  return s == Status::Success ? s : fail(s, "engine.sm90 (pointer batch): " + why);
}

}  // namespace hgemm::detail
