// SPDX-License-Identifier: Apache-2.0
// Argument validation of the public API. Every invalid argument is reported before the device
// is even looked at, so these run on machines without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <set>

#include "hgemm/hgemm.h"

namespace hgemm {
namespace {

// Distinct, never-dereferenced non-null pointers standing for device memory.
__half* fake(std::uintptr_t i) { return reinterpret_cast<__half*>(0x10000 * i); }

Status call(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
            Op oa = Op::N, Op ob = Op::N, const char* kernel = "auto") {
  GemmOptions o;
  o.kernel = kernel;
  return gemm(oa, ob, m, n, k, 1.f, fake(1), lda, fake(2), ldb, 0.f, fake(3), ldc, o);
}

TEST(Validation, NegativeSizes) {
  EXPECT_EQ(call(-1, 4, 4, 4, 4, 4), Status::InvalidSize);
  EXPECT_EQ(call(4, -1, 4, 4, 4, 4), Status::InvalidSize);
  EXPECT_EQ(call(4, 4, -5, 4, 4, 4), Status::InvalidSize);
  EXPECT_NE(last_error_message().find("K = -5"), std::string::npos) << last_error_message();
}

TEST(Validation, LeadingDimensionsFollowTheOps) {
  // op(A) = N: A is M×K, lda ≥ K.  op(A) = T: A is K×M, lda ≥ M.
  EXPECT_EQ(call(8, 6, 5, 4, 6, 6), Status::InvalidLeadingDim);
  EXPECT_NE(last_error_message().find("lda = 4"), std::string::npos) << last_error_message();
  EXPECT_EQ(call(8, 6, 5, 7, 6, 6, Op::T), Status::InvalidLeadingDim);
  EXPECT_NE(last_error_message().find("M (op(A) = T)"), std::string::npos) << last_error_message();
  // op(B) = N: B is K×N, ldb ≥ N.  op(B) = T: B is N×K, ldb ≥ K.
  EXPECT_EQ(call(8, 6, 5, 5, 5, 6), Status::InvalidLeadingDim);
  EXPECT_NE(last_error_message().find("ldb = 5"), std::string::npos);
  EXPECT_EQ(call(8, 6, 5, 5, 4, 6, Op::N, Op::T), Status::InvalidLeadingDim);
  // C is M×N, ldc ≥ N.
  EXPECT_EQ(call(8, 6, 5, 5, 6, 5), Status::InvalidLeadingDim);
  EXPECT_NE(last_error_message().find("ldc = 5"), std::string::npos);
  // Leading dimensions are at least 1 even for empty matrices.
  EXPECT_EQ(call(0, 0, 0, 0, 1, 1), Status::InvalidLeadingDim);
}

TEST(Validation, NullPointersOnlyMatterForNonEmptyMatrices) {
  GemmOptions o;
  EXPECT_EQ(gemm(Op::N, Op::N, 4, 4, 4, 1.f, nullptr, 4, fake(2), 4, 0.f, fake(3), 4, o), Status::NullPointer);
  EXPECT_NE(last_error_message().find("A is null"), std::string::npos);
  EXPECT_EQ(gemm(Op::N, Op::N, 4, 4, 4, 1.f, fake(1), 4, nullptr, 4, 0.f, fake(3), 4, o), Status::NullPointer);
  EXPECT_EQ(gemm(Op::N, Op::N, 4, 4, 4, 1.f, fake(1), 4, fake(2), 4, 0.f, nullptr, 4, o), Status::NullPointer);
  // K = 0: A and B are never read, so they may be null (C = beta·C). The call then needs a device.
  const Status s = gemm(Op::N, Op::N, 4, 4, 0, 1.f, nullptr, 1, nullptr, 4, 0.f, fake(3), 4, o);
  EXPECT_NE(s, Status::NullPointer);
}

TEST(Validation, UnknownKernelIdIsReported) {
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, "cuda.warp_drive"), Status::UnknownKernel);
  EXPECT_NE(last_error_message().find("cuda.warp_drive"), std::string::npos);
}

TEST(Validation, ValidCallWithoutDeviceSaysNoDevice) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "a GPU is present";
  cudaGetLastError();
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4), Status::NoDevice);
  EXPECT_NE(last_error_message().find("no usable CUDA device"), std::string::npos) << last_error_message();
  std::string id = "unchanged";
  EXPECT_EQ(resolve_kernel(Op::N, Op::N, 4, 4, 4, fake(1), 4, fake(2), 4, fake(3), 4, {}, &id), Status::NoDevice);
  EXPECT_EQ(id, "");
}

TEST(Status, EveryValueHasItsOwnDescription) {
  std::set<std::string> seen;
  for (int s = static_cast<int>(Status::Success); s <= static_cast<int>(Status::InvalidArgument); ++s) {
    const std::string text = status_string(static_cast<Status>(s));
    EXPECT_FALSE(text.empty());
    EXPECT_TRUE(seen.insert(text).second) << text;
  }
}

// The batched forms validate the batch before anything else, and every product before the first
// launch; all of this happens without a device.
TEST(BatchedValidation, StridesAndBatchCount) {
  auto strided = [](std::int64_t sa, std::int64_t sb, std::int64_t sc, std::int64_t batch) {
    return gemm_strided_batched(Op::N, Op::N, 4, 5, 6, 1.f, fake(1), 6, sa, fake(2), 5, sb, 0.f, fake(3), 5, sc, batch);
  };
  EXPECT_EQ(strided(24, 30, 20, -1), Status::InvalidSize);
  EXPECT_NE(last_error_message().find("batch"), std::string::npos) << last_error_message();
  EXPECT_EQ(strided(-24, 30, 20, 2), Status::InvalidSize);
  // C's matrices (4 rows of ldc = 5) must not overlap: stride_c ≥ 20.
  EXPECT_EQ(strided(24, 30, 19, 2), Status::InvalidLeadingDim);
  EXPECT_NE(last_error_message().find("overlap"), std::string::npos) << last_error_message();
  // Empty batch: nothing to check or do.
  EXPECT_EQ(strided(24, 30, 20, 0), Status::Success);
  // A size error in the shared shape is reported as for gemm.
  EXPECT_EQ(gemm_strided_batched(Op::N, Op::N, 4, 5, 6, 1.f, fake(1), 5, 24, fake(2), 5, 30, 0.f, fake(3), 5, 20, 3),
            Status::InvalidLeadingDim);
}

TEST(BatchedValidation, PointerArrays) {
  const __half* a[3] = {fake(1), fake(2), nullptr};
  const __half* b[3] = {fake(4), fake(5), fake(6)};
  __half* c[3] = {fake(7), fake(8), fake(9)};
  EXPECT_EQ(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, nullptr, 6, b, 5, 0.f, c, 5, 3), Status::NullPointer);
  EXPECT_NE(last_error_message().find("A pointer array"), std::string::npos) << last_error_message();
  // The third A is null: refused, naming the entry, before anything is launched.
  EXPECT_EQ(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, a, 6, b, 5, 0.f, c, 5, 3), Status::NullPointer);
  EXPECT_NE(last_error_message().find("batch entry 2"), std::string::npos) << last_error_message();
  EXPECT_EQ(gemm_batched(Op::N, Op::N, 4, 5, 6, 1.f, a, 6, b, 5, 0.f, c, 5, -2), Status::InvalidSize);
}

}  // namespace
}  // namespace hgemm
