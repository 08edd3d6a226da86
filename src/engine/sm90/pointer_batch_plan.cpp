// SPDX-License-Identifier: Apache-2.0
// The host-side choices of a pointer batch's one launch (pointer_batch.h): its tiles, its grid
// and what the kernels can index. Pure host code, tested on the CPU.
#include <algorithm>
#include <climits>
#include <string>
#include <utility>

#include "engine/sm90/pointer_batch.h"

namespace hgemm::detail::engine {
namespace {

std::int64_t tiles(std::int64_t m, std::int64_t n, int bm, int bn) { return ((m + bm - 1) / bm) * ((n + bn - 1) / bn); }

/// A batch of products at most 128 × 128 with one side at most 64 over a K of at most two
/// slices: 64×64 tiles, several CTAs to an SM, overlap their loads and stores (as the strided
/// batches of the engine's policy).
bool small_products(const Matmul& p) {
  return p.k <= 128 && std::max(p.m, p.n) <= 128 && std::min(p.m, p.n) <= 64;
}

}  // namespace

KernelShape pointer_batch_tiles(const Matmul& shape, std::int64_t count, int sms) {
  if (small_products(shape)) return KernelShape::Tile64x64;
  const std::int64_t enough = std::max(1, sms * 3 / 4);
  return tiles(shape.m, shape.n, 128, 64) * count >= enough ? KernelShape::Tile128x64 : KernelShape::Tile64x64;
}

std::int64_t pointer_batch_ctas(const Matmul& shape, std::int64_t count, KernelShape shape_of_tiles) {
  int bm = 0, bn = 0;
  tile_of(shape_of_tiles, &bm, &bn);
  return tiles(shape.m, shape.n, bm, bn) * count;
}

Status pointer_batch_supports(const Matmul& shape, std::int64_t count, std::string* why) {
  struct Rows {
    const char* name;
    std::int64_t ld;
    DataType type;
  };
  for (const Rows& r : {Rows{"lda", shape.lda, shape.a_type}, Rows{"ldb", shape.ldb, shape.b_type},
                        Rows{"ldc", shape.ldd, shape.d_type}})
    // ld·size a multiple of 16 bytes, tested as ld a multiple of 16 / size: no product to overflow
    // (the host checks of device arrays reach here with any ld validation lets through).
    if (const std::size_t size = data_type_size(r.type); size == 0 || 16 % size != 0 ||
                                                         r.ld % static_cast<std::int64_t>(16 / size) != 0) {
      *why = std::string(r.name) + " = " + std::to_string(r.ld) +
             " is not a multiple of 16 bytes: a pointer batch in one launch reads every matrix in place by TMA";
      return Status::Misaligned;
    }
  // TMA coordinates are 32-bit signed, its strides below 2^40 bytes; CTAs and products count in int.
  const std::int64_t limit = INT_MAX - 512;
  if (shape.m > limit || shape.n > limit || shape.k > limit || shape.lda > (std::int64_t(1) << 38) ||
      shape.ldb > (std::int64_t(1) << 38) || count > INT_MAX ||
      tiles(shape.m, shape.n, 64, 64) > INT_MAX / std::max<std::int64_t>(count, 1)) {
    *why = "a pointer batch in one launch needs M, N, K below 2^31 - 512, lda and ldb below 2^38 and fewer than "
           "2^31 tiles of 64x64 in all";
    return Status::ProblemTooLarge;
  }
  return Status::Success;
}

}  // namespace hgemm::detail::engine
