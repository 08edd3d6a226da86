// SPDX-License-Identifier: Apache-2.0
// The f16 shorthand: gemm and its batched forms are matmul calls with every type f16 and C
// updated in place (D is C).
#include <climits>
#include <string>
#include <vector>

#include "api/errors.h"
#include "api/matmul.h"
#include "api/pointer_batch.h"
#include "api/validate.h"

namespace hgemm {
namespace {

MatmulArgs in_place_f16(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb, float beta, __half* c,
                        std::int64_t ldc) {
  MatmulArgs args;
  args.op_a = op_a, args.op_b = op_b, args.m = m, args.n = n, args.k = k, args.alpha = alpha, args.beta = beta;
  args.a = a, args.lda = lda, args.b = b, args.ldb = ldb;
  args.c = c, args.ldc = ldc, args.d = c, args.ldd = ldc;
  return args;
}

std::string str(std::int64_t v) { return std::to_string(v); }

/// The stride in elements between consecutive pointers of p[0..batch) if they are evenly spaced
/// at a non-negative, whole-element distance (then the batch can run as a strided one); else -1.
template <typename T>
std::int64_t common_stride(T* const* p, std::int64_t batch) {
  if (batch < 2) return 0;
  auto at = [&](std::int64_t i) { return reinterpret_cast<std::uintptr_t>(p[i]); };
  if (at(1) < at(0) || (at(1) - at(0)) % sizeof(T) != 0) return -1;
  const std::uintptr_t step = at(1) - at(0);
  for (std::int64_t i = 2; i < batch; ++i)
    if (at(i) - at(i - 1) != step || at(i) < at(i - 1)) return -1;
  return static_cast<std::int64_t>(step / sizeof(T));
}

}  // namespace

Status resolve_kernel(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, const __half* a,
                      std::int64_t lda, const __half* b, std::int64_t ldb, const __half* c, std::int64_t ldc,
                      const GemmOptions& options, std::string* kernel_id) {
  return resolve_matmul(in_place_f16(op_a, op_b, m, n, k, 1.f, a, lda, b, ldb, 0.f, const_cast<__half*>(c), ldc),
                        options, kernel_id);
}

Status gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const __half* a,
            std::int64_t lda, const __half* b, std::int64_t ldb, float beta, __half* c, std::int64_t ldc,
            const GemmOptions& options) {
  return matmul(in_place_f16(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), options);
}

Status gemm_strided_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                            const __half* a, std::int64_t lda, std::int64_t stride_a, const __half* b,
                            std::int64_t ldb, std::int64_t stride_b, float beta, __half* c, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch, const GemmOptions& options) {
  if (batch < 0) return detail::fail(Status::InvalidSize, "negative batch count " + str(batch));
  if (batch > 1 && m > 0 && n > 0 && stride_c >= 0)
    if (Status s = detail::matrices_apart("stride_c", stride_c, "ldc", ldc, m, "the C matrices"); s != Status::Success)
      return s;
  MatmulArgs args = in_place_f16(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  args.batch = batch, args.stride_a = stride_a, args.stride_b = stride_b, args.stride_c = args.stride_d = stride_c;
  return matmul(args, options);
}

Status gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const __half* const* a, std::int64_t lda, const __half* const* b, std::int64_t ldb, float beta,
                    __half* const* c, std::int64_t ldc, std::int64_t batch, const GemmOptions& options) {
  if (batch < 0) return detail::fail(Status::InvalidSize, "negative batch count " + str(batch));
  if (batch > INT_MAX)
    return detail::fail(Status::ProblemTooLarge, "batch count " + str(batch) + " is above INT32_MAX");
  if (batch > 0 && (!a || !b || !c))
    return detail::fail(Status::NullPointer,
                        std::string("the ") + (!a ? "A" : !b ? "B" : "C") + " pointer array is null");
  detail::engine::PointerBatch pointers;
  pointers.shape = detail::typed_problem(in_place_f16(op_a, op_b, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta,
                                                      nullptr, ldc),
                                         options.accum);
  pointers.a = reinterpret_cast<const void* const*>(a), pointers.b = reinterpret_cast<const void* const*>(b);
  pointers.d = reinterpret_cast<void* const*>(c), pointers.count = batch;
  // Device arrays are never read here: they go to the one launch, whose kernels read them.
  if (batch > 0)
    if (Status s = detail::locate_pointer_arrays(a, b, c, &pointers.device_arrays); s != Status::Success) return s;
  if (pointers.device_arrays) return detail::run_device_pointer_batch(pointers, options);
  auto product = [&](std::int64_t i) {
    return detail::typed_problem(in_place_f16(op_a, op_b, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc),
                                 options.accum);
  };
  auto in_entry = [&](std::int64_t i, Status s) {
    return batch > 1 ? detail::fail_in(s, "batch entry " + str(i) + ": ") : s;
  };
  // Evenly spaced matrices (what a strided tensor's batch gives) run as one strided launch where
  // the products do not depend on each other (and the strided problem is valid, which bounds
  // the spans compared); a C that another product reads or writes keeps them one launch each,
  // in order.
  const std::int64_t stride_a = common_stride(a, batch), stride_b = common_stride(b, batch),
                     stride_c = common_stride(c, batch);
  if (batch > 1 && stride_a >= 0 && stride_b >= 0 && stride_c >= 0) {
    detail::Matmul strided = product(0);
    strided.batch = batch, strided.stride_a = stride_a, strided.stride_b = stride_b;
    strided.stride_c = strided.stride_d = stride_c;
    if (detail::validate_arguments(strided) == Status::Success &&
        detail::products_independent(strided, reinterpret_cast<const void* const*>(a),
                                     reinterpret_cast<const void* const*>(b), reinterpret_cast<void* const*>(c), batch))
      return matmul(strided, options);
    detail::clear_error();
  }
  // Every product is validated and its kernel chosen before the first launch: nothing runs
  // unless the whole batch can.
  for (std::int64_t i = 0; i < batch; ++i)
    if (Status s = detail::validate_arguments(product(i)); s != Status::Success) return in_entry(i, s);
  bool ran = false;
  if (Status s = detail::run_host_pointer_batch(pointers, options, &ran); s != Status::Success || ran) return s;
  std::vector<detail::Choice> choices(static_cast<std::size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i)
    if (Status s = detail::prepare_matmul(product(i), options.kernel, options.check_pointers,
                                          &choices[static_cast<std::size_t>(i)]);
        s != Status::Success)
      return in_entry(i, s);
  for (std::int64_t i = 0; i < batch; ++i)
    if (Status s = detail::run_matmul(choices[static_cast<std::size_t>(i)], product(i), options.stream);
        s != Status::Success)
      return in_entry(i, s);
  detail::clear_error();
  return Status::Success;
}

}  // namespace hgemm
