// SPDX-License-Identifier: Apache-2.0
// Pointer batches on the host: where gemm_batched's arrays live (from made-up driver attributes),
// what the host checks of device arrays without reading them, the one launch's tiles and grid,
// and that every hostile argument is answered with a status and a message.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <random>
#include <vector>

#include "api/pointer_batch.h"
#include "engine/sm90/pointer_batch.h"
#include "hgemm/hgemm.h"
#include "validation_util.h"

namespace hgemm {
namespace {

using detail::ArrayAttributes;
namespace engine = detail::engine;
using engine::KernelShape;
using engine::PointerBatch;
using test::refused;

ArrayAttributes on(cudaMemoryType type, int device = 0) { return {cudaSuccess, type, device}; }

Status place(ArrayAttributes a, ArrayAttributes b, ArrayAttributes c, bool* device_arrays, int current = 0) {
  const ArrayAttributes attributes[3] = {a, b, c};
  return detail::place_pointer_arrays(attributes, current, device_arrays);
}

TEST(PointerArrayPlace, HostReadableArraysStayOnTheHost) {
  bool device = true;
  EXPECT_EQ(place(on(cudaMemoryTypeUnregistered), on(cudaMemoryTypeHost), on(cudaMemoryTypeManaged), &device),
            Status::Success);
  EXPECT_FALSE(device);
  // No device at all: whatever the arrays are, they are host memory.
  const ArrayAttributes none{cudaErrorNoDevice, cudaMemoryTypeUnregistered, -1};
  device = true;
  EXPECT_EQ(place(none, none, none, &device, -1), Status::Success);
  EXPECT_FALSE(device);
}

TEST(PointerArrayPlace, DeviceArraysOfTheCurrentDevice) {
  bool device = false;
  EXPECT_EQ(place(on(cudaMemoryTypeDevice, 1), on(cudaMemoryTypeDevice, 1), on(cudaMemoryTypeDevice, 1), &device, 1),
            Status::Success);
  EXPECT_TRUE(device);
}

TEST(PointerArrayPlace, RefusesWhatNoKernelCouldRead) {
  bool device = false;
  EXPECT_TRUE(refused(place(on(cudaMemoryTypeDevice, 0), on(cudaMemoryTypeDevice, 1), on(cudaMemoryTypeDevice, 0),
                            &device),
                      Status::InvalidPointer, "B pointer array is memory of device 1"));
  EXPECT_TRUE(refused(place(on(cudaMemoryTypeDevice), on(cudaMemoryTypeUnregistered), on(cudaMemoryTypeDevice), &device),
                      Status::InvalidArgument, "partly device memory"));
  EXPECT_TRUE(refused(place(on(cudaMemoryTypeHost), on(cudaMemoryTypeHost), {cudaErrorInvalidValue}, &device),
                      Status::InvalidPointer, "C pointer array: cudaPointerGetAttributes failed"));
}

/// A valid batch of device arrays at made-up addresses: 64×64×64 products, ld 64.
PointerBatch device_batch() {
  PointerBatch b;
  b.shape.m = b.shape.n = b.shape.k = 64;
  b.shape.lda = b.shape.ldb = b.shape.ldc = b.shape.ldd = 64;
  b.shape.beta = 1.f;
  b.a = reinterpret_cast<const void* const*>(std::uintptr_t(0x100000));
  b.b = reinterpret_cast<const void* const*>(std::uintptr_t(0x200000));
  b.d = reinterpret_cast<void* const*>(std::uintptr_t(0x300000));
  b.count = 1024;
  b.device_arrays = true;
  return b;
}

TEST(DevicePointerBatchValidation, AcceptsAValidShape) {
  EXPECT_EQ(detail::validate_device_pointer_batch(device_batch()), Status::Success) << last_error_message();
  PointerBatch k0 = device_batch();
  k0.shape.k = 0;  // D = beta·C
  EXPECT_EQ(detail::validate_device_pointer_batch(k0), Status::Success) << last_error_message();
}

TEST(DevicePointerBatchValidation, ChecksTheArraysThemselves) {
  PointerBatch b = device_batch();
  b.b = reinterpret_cast<const void* const*>(std::uintptr_t(0x200004));
  EXPECT_TRUE(refused(detail::validate_device_pointer_batch(b), Status::Misaligned, "B pointer array is not aligned"));
  b = device_batch();
  b.d = reinterpret_cast<void* const*>(~std::uintptr_t(0) - 4095);  // 512 entries fit, 1024 do not
  EXPECT_TRUE(refused(detail::validate_device_pointer_batch(b), Status::InvalidPointer, "past the end"));
}

TEST(DevicePointerBatchValidation, ChecksTheSharedShape) {
  auto with = [](auto change) {
    PointerBatch b = device_batch();
    change(b.shape);
    return detail::validate_device_pointer_batch(b);
  };
  EXPECT_TRUE(refused(with([](detail::Matmul& p) { p.m = -1; }), Status::InvalidSize, "negative size"));
  EXPECT_TRUE(refused(with([](detail::Matmul& p) { p.lda = 32; }), Status::InvalidLeadingDim, "lda = 32"));
  EXPECT_TRUE(refused(with([](detail::Matmul& p) { p.op_b = static_cast<Op>(7); }), Status::InvalidArgument, "Op"));
  EXPECT_TRUE(refused(with([](detail::Matmul& p) { p.ldb = 66; }), Status::Misaligned, "ldb = 66"));
  EXPECT_TRUE(refused(with([](detail::Matmul& p) { p.ldc = p.ldd = 68; }), Status::Misaligned, "ldc = 68"));
  EXPECT_TRUE(refused(with([](detail::Matmul& p) {
                        p.m = p.n = std::int64_t(1) << 31;
                        p.k = 8;
                        p.lda = 8, p.ldb = p.ldc = p.ldd = std::int64_t(1) << 31;
                      }),
                      Status::ProblemTooLarge, ""));
  PointerBatch b = device_batch();  // 2^31 tiles in all: beyond the grid
  b.shape.m = b.shape.n = 64 * 2048, b.shape.ldb = b.shape.ldc = b.shape.ldd = 64 * 2048;
  b.count = 600;
  EXPECT_TRUE(refused(detail::validate_device_pointer_batch(b), Status::ProblemTooLarge, "2^31 tiles"));
}

TEST(PointerBatchPlan, TilesAndGrid) {
  const int sms = 132;
  detail::Matmul p;
  p.m = p.n = p.k = 64;
  EXPECT_EQ(engine::pointer_batch_tiles(p, 1024, sms), KernelShape::Tile64x64);
  EXPECT_EQ(engine::pointer_batch_ctas(p, 1024, KernelShape::Tile64x64), 1024);
  p.m = p.n = p.k = 256;
  EXPECT_EQ(engine::pointer_batch_tiles(p, 256, sms), KernelShape::Tile128x64);
  EXPECT_EQ(engine::pointer_batch_ctas(p, 256, KernelShape::Tile128x64), 8 * 256);
  p.m = 200, p.n = 200, p.k = 200;  // 2 × 4 tiles of 128×64 per product: 16 for two, too few
  EXPECT_EQ(engine::pointer_batch_tiles(p, 2, sms), KernelShape::Tile64x64);
  EXPECT_EQ(engine::pointer_batch_ctas(p, 2, KernelShape::Tile64x64), 2 * 16);
  p.m = 0;
  EXPECT_EQ(engine::pointer_batch_ctas(p, 5, KernelShape::Tile64x64), 0);
}

TEST(PointerBatchValidation, GemmBatchedAnswersHostileCounts) {
  const __half* a[3] = {};
  const __half* b[3] = {};
  __half* c[3] = {};
  GemmOptions o;
  o.pointer_batch_in_one_launch = true;
  EXPECT_TRUE(refused(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, a, 6, b, 5, 0.f, c, 5, std::int64_t(1) << 31, o),
                      Status::ProblemTooLarge, "INT32_MAX"));
  EXPECT_TRUE(refused(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, a, 6, b, 5, 0.f, c, 5, INT64_MIN, o),
                      Status::InvalidSize, "negative batch"));
  EXPECT_TRUE(refused(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, a, 6, nullptr, 5, 0.f, c, 5, 3, o),
                      Status::NullPointer, "B pointer array"));
  EXPECT_EQ(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, nullptr, 6, nullptr, 5, 0.f, nullptr, 5, 0, o), Status::Success);
}

// With the one launch asked for, host arrays are validated as before it: every entry, by name.
TEST(PointerBatchValidation, HostArraysOptedInAreValidatedPerEntry) {
  auto fake = [](std::uintptr_t i) { return reinterpret_cast<__half*>(0x10000 * i); };
  const __half* a[3] = {fake(1), fake(5), nullptr};
  const __half* b[3] = {fake(2), fake(6), fake(9)};
  __half* c[3] = {fake(3), fake(7), fake(4)};
  GemmOptions o;
  o.pointer_batch_in_one_launch = true;
  EXPECT_TRUE(refused(gemm_batched(Op::N, Op::N, 64, 64, 64, 1.f, a, 64, b, 64, 0.f, c, 64, 3, o), Status::NullPointer,
                      "batch entry 2"));
  a[2] = fake(8);
  EXPECT_TRUE(refused(gemm_batched(Op::N, Op::N, 64, 64, 64, 1.f, a, 60, b, 64, 0.f, c, 64, 3, o),
                      Status::InvalidLeadingDim, "lda = 60"));
  EXPECT_TRUE(test::accepted(gemm_batched(Op::N, Op::N, 64, 64, 64, 1.f, a, 64, b, 64, 0.f, c, 64, 3, o), true));
}

// Random shapes of every kind (negative, huge, odd, enums out of range) and random array
// addresses: the device-array checks answer each with a status, and a refusal with a message.
TEST(DevicePointerBatchValidation, HostileShapesAreAnswered) {
  std::mt19937_64 r(20261206);
  auto pick = [&](std::initializer_list<std::int64_t> values) {
    return *(values.begin() + static_cast<std::ptrdiff_t>(r() % values.size()));
  };
  auto size = [&] { return pick({-1, 0, 1, 7, 64, 129, INT_MAX, std::int64_t(1) << 40, INT64_MAX, INT64_MIN}); };
  for (int i = 0; i < 20000; ++i) {
    PointerBatch b;
    b.shape.m = size(), b.shape.n = size(), b.shape.k = size();
    b.shape.lda = size(), b.shape.ldb = size(), b.shape.ldc = b.shape.ldd = size();
    b.shape.op_a = static_cast<Op>(r() % 3), b.shape.op_b = static_cast<Op>(r() % 3);
    b.shape.accum = static_cast<Accum>(r() % 3);
    b.shape.beta = static_cast<float>(r() % 2);
    b.a = reinterpret_cast<const void* const*>(static_cast<std::uintptr_t>(pick({8, 12, -4096, 1 << 20})));
    b.b = reinterpret_cast<const void* const*>(static_cast<std::uintptr_t>(pick({8, 1 << 20})));
    b.d = reinterpret_cast<void* const*>(static_cast<std::uintptr_t>(pick({8, -8, 1 << 20})));
    b.count = pick({1, 2, 1024, INT_MAX});
    const Status s = detail::validate_device_pointer_batch(b);
    ASSERT_TRUE(s == Status::Success || !last_error_message().empty()) << "draw " << i << ": " << status_string(s);
    ASSERT_LE(static_cast<int>(s), static_cast<int>(Status::UnsupportedEpilogue)) << "draw " << i;
  }
}

}  // namespace
}  // namespace hgemm
