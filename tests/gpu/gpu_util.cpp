// SPDX-License-Identifier: Apache-2.0
#include "gpu_util.h"

#include "random_shapes.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace hgemm::test {

bool have_device(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();
    return false;
  }
  if (count == 0) {
    *why = "cudaGetDeviceCount reports 0 devices";
    return false;
  }
  return true;
}

DeviceHalves::DeviceHalves(std::size_t count) : count_(count) {
  if (cudaMalloc(reinterpret_cast<void**>(&ptr_), std::max<std::size_t>(count, 1) * sizeof(__half)) != cudaSuccess)
    throw std::runtime_error("cudaMalloc failed");
}
DeviceHalves::~DeviceHalves() { cudaFree(ptr_); }

void DeviceHalves::upload(const std::vector<__half>& host, std::size_t offset) {
  if (offset + host.size() > count_) throw std::out_of_range("upload past the end of a device buffer");
  if (cudaMemcpy(ptr_ + offset, host.data(), host.size() * sizeof(__half), cudaMemcpyHostToDevice) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy to device failed");
}

std::vector<__half> DeviceHalves::download(std::size_t count, std::size_t offset) const {
  std::vector<__half> host(count);
  if (cudaMemcpy(host.data(), ptr_ + offset, count * sizeof(__half), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy to host failed");
  return host;
}

std::string Case::name() const {
  std::string s = (tag.empty() ? "" : tag + "_") + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(k) + "_" + (op_a == Op::N ? "n" : "t") + (op_b == Op::N ? "n" : "t");
  if (alpha != 1.f || beta != 0.f) s += "_ab";
  if (lda_pad || ldb_pad || ldc_pad) s += "_ld" + std::to_string(lda_pad) + std::to_string(ldb_pad) + std::to_string(ldc_pad);
  if (offset) s += "_unaligned";
  if (exact) s += "_exact";
  return s;
}

namespace {

std::vector<Case> build_cases() {
  std::vector<Case> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k) -> Case& {
    Case c;
    c.m = m, c.n = n, c.k = k;
    cases.push_back(c);
    return cases.back();
  };
  // Shapes around the tile edges of the ladder (32, 128 and BK = 8 / 32), primes, 1 and 4093.
  for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {1, 1, 1}, {7, 7, 7}, {1, 129, 127}, {129, 1, 128}, {127, 128, 129}, {128, 128, 128}, {129, 127, 7},
           {33, 31, 1000}, {4093, 7, 129}, {7, 4093, 127}, {129, 127, 4093}, {255, 257, 9}, {256, 256, 256},
           {1000, 1000, 1000}})
    add(m, n, k);
  // K = 0: C = beta·C (and exact zeros when beta = 0, over a NaN-poisoned C).
  add(127, 129, 0).beta = 0.5f;
  add(127, 129, 0);
  // Empty C: nothing may be written (the ld padding is checked).
  add(0, 129, 7).beta = 0.5f;
  add(7, 0, 7).beta = 0.5f;
  // alpha and beta other than 1 and 0.
  { Case& c = add(129, 127, 128); c.alpha = -1.5f, c.beta = 0.75f; }
  { Case& c = add(1000, 7, 1000); c.alpha = 0.5f, c.beta = -2.f; }
  { Case& c = add(128, 128, 128); c.alpha = 0.f, c.beta = 2.f; }
  // Leading dimensions larger than the width: odd pads (rows not 16-byte aligned) and aligned ones.
  { Case& c = add(127, 129, 129); c.lda_pad = 3, c.ldb_pad = 5, c.ldc_pad = 9, c.beta = 0.5f; }
  { Case& c = add(129, 127, 257); c.lda_pad = 8, c.ldb_pad = 8, c.ldc_pad = 8; }
  // Rows 16-byte aligned (lda, ldb, ldc multiples of 8) with ragged M, N, K: what the kernels that
  // need aligned rows (cp.async, TMA in place) can take.
  { Case& c = add(129, 127, 4093); c.lda_pad = 3, c.ldb_pad = 1, c.ldc_pad = 1, c.beta = 0.5f; }
  { Case& c = add(7, 4093, 127); c.lda_pad = 1, c.ldb_pad = 3, c.ldc_pad = 3; }
  { Case& c = add(1, 129, 127); c.lda_pad = 1, c.ldb_pad = 7, c.ldc_pad = 7, c.alpha = -1.f; }
  // ... with beta = 0, so kernels that store C by TMA do so on a ragged N (and M).
  { Case& c = add(129, 127, 257); c.lda_pad = 7, c.ldb_pad = 1, c.ldc_pad = 1; }
  // Base pointers aligned to 2 bytes only.
  { Case& c = add(127, 129, 130); c.offset = 1, c.beta = -1.f; }
  // Few rows, long K (the sm90 rung's skinny path: swapped operands, split-K partial sums).
  { Case& c = add(16, 1000, 4093); c.beta = 0.5f; }
  { Case& c = add(100, 300, 2000); c.alpha = 2.f, c.ldc_pad = 3; }
  // Whole 128×128 tiles next to ragged ones, K a multiple of 16 and rows 8-byte aligned: the
  // CUDA-core rungs run the inside tiles with unchecked loads and the last tile row and column
  // with checked ones (TileSplit), in two launches that must cover C exactly once.
  { Case& c = add(300, 400, 96); c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  { Case& c = add(200, 260, 48); c.lda_pad = 8, c.ldb_pad = 4, c.ldc_pad = 3, c.alpha = 0.5f, c.beta = -1.f; }
  // Small-integer data: fp16 and fp32 accumulation are both exact, so any indexing slip shows.
  for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{129, 127, 4093}, {255, 257, 1000}}) {
    Case& c = add(m, n, k);
    c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f;
  }
  // The transposed layouts, for the kernels that implement them.
  for (auto [oa, ob] : {std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}, std::pair{Op::T, Op::T}}) {
    auto op = [&, oa = oa, ob = ob](Case& c) -> Case& { c.op_a = oa, c.op_b = ob; return c; };
    op(add(127, 129, 129));
    op(add(7, 4093, 127));
    { Case& c = op(add(129, 127, 1000)); c.alpha = -1.5f, c.beta = 0.75f, c.lda_pad = 3, c.ldb_pad = 1, c.ldc_pad = 2; }
    op(add(127, 129, 0)).beta = 0.5f;
    op(add(5, 260, 1000)).beta = -1.f;
    { Case& c = op(add(129, 127, 4093)); c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  }
  // Few rows with op(A) = T and aligned rows, beta = 0: no operand swap, C stored by TMA.
  for (auto ob : {Op::N, Op::T}) {
    Case& c = add(7, 4093, 127);
    c.op_a = Op::T, c.op_b = ob;
    c.lda_pad = 1, c.ldb_pad = ob == Op::N ? 3 : 1, c.ldc_pad = 3;
  }
  std::uint64_t seed = 1;
  for (Case& c : cases) c.seed = seed++;
  return within_max_dim(std::move(cases));
}

// The smallest padding that makes a row of `width` elements (at least 1) a multiple of 8, plus
// `extra` (a multiple of 8).
std::int64_t pad_to_8(std::int64_t width, std::int64_t extra = 0) {
  return (8 - std::max<std::int64_t>(width, 1) % 8) % 8 + extra;
}

std::vector<Case> build_skinny_cases() {
  std::vector<Case> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t extra = 0) -> Case& {
    Case c;
    c.m = m, c.n = n, c.k = k, c.op_a = Op::N, c.op_b = Op::T;
    c.lda_pad = pad_to_8(k, extra), c.ldb_pad = pad_to_8(k, extra), c.ldc_pad = pad_to_8(n, extra);
    cases.push_back(c);
    return cases.back();
  };
  // Every M up to the limit's edges, N around the 8- and 32-column groups, K around the 8-wide
  // chunks and 32-deep steps (and past several steps per warp).
  for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {1, 1, 1}, {1, 7, 5}, {2, 33, 31}, {7, 129, 33}, {15, 4093, 127}, {16, 32, 32}, {16, 31, 1000},
           {16, 1000, 4093}, {3, 257, 8200}, {1, 4096, 4096}, {16, 4096, 4096}, {9, 8, 263}})
    add(m, n, k);
  { Case& c = add(16, 129, 1000, 8); c.alpha = -1.5f, c.beta = 0.75f; }
  { Case& c = add(5, 300, 777, 16); c.alpha = 0.5f, c.beta = -2.f; }
  add(16, 129, 0).beta = 0.5f;  // C = beta·C
  add(7, 129, 0);               // exact zeros over a NaN-poisoned C
  for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{16, 257, 4093}, {1, 100, 2048}}) {
    Case& c = add(m, n, k);
    c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f;
  }
  std::uint64_t seed = 1001;
  for (Case& c : cases) c.seed = seed++;
  return cases;
}

// Shapes for kernels that choose their tile by the number of tiles (the engine's tile-per-CTA kernels):
// on a 132-SM H200 these pick 64×64 tiles with B K-major and 64×32 ones, rings wrapping many times;
// then tiny C over long K, split many ways.
std::vector<Case> build_tile_choice_cases() {
  std::vector<Case> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k) -> Case& {
    Case c;
    c.m = m, c.n = n, c.k = k, c.op_a = Op::N, c.op_b = Op::T;
    cases.push_back(c);
    return cases.back();
  };
  add(128, 4100, 300).beta = 0.5f;
  { Case& c = add(64, 4000, 1500); c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  { Case& c = add(100, 3000, 2000); c.alpha = -0.5f, c.ldb_pad = 5; }
  // One tile of C over a long K: the engine shares its slices between 20 stream-K runs (100 rows)
  // and, on the skinny path (16 rows), splits K 128 ways, the reduction summing the splits in
  // parallel as C^T.
  { Case& c = add(100, 60, 30000); c.op_b = Op::N, c.alpha = -1.f, c.beta = 0.5f; }
  add(16, 64, 65536);
  // Few rows over a K split 3 and 6 ways on a 132-SM H200: the engine's swapped persistent kernels runs each tile's
  // splits as one cluster, which adds them in distributed shared memory and writes C transposed;
  // 3500 and 2500 rows end mid-tile (16×64×65536 here and the odd-ld 16×1000×3000 keep split-K and
  // reduce_splits_columns_kernel). 3500 columns are too few for the swapped tile-per-CTA kernels (below).
  { Case& c = add(7, 3500, 1000); c.alpha = -1.5f, c.beta = 0.5f; }
  add(12, 2500, 777).op_b = Op::N;
  // 17-64 rows over few tiles: the engine's swapped persistent kernels shares the slices of the swapped problem's
  // 24 tiles of 128×32 as stream-K runs, 2 per tile, and writes C^T from the owners' registers.
  { Case& c = add(24, 3000, 2000); c.alpha = 0.75f, c.beta = -1.f; }
  // Single-CTA tiles (128×128; op(A) = T keeps 24 rows off the skinny path) over a K too long for
  // the tile-per-CTA kernels. 18 tiles: the engine runs each tile's 130 slices as one cluster of 7
  // splits (fewer where 18 clusters of 7 do not fit), which add up in distributed shared memory,
  // C read with an odd ldc. 12 tiles: too few for clusters of at most 8 to fill the SMs, so the
  // tiles' slices are shared out as stream-K runs instead.
  { Case& c = add(24, 2200, 8300); c.op_a = Op::T, c.op_b = Op::N, c.alpha = 1.5f, c.beta = -0.5f, c.ldc_pad = 3; }
  { Case& c = add(120, 1500, 8700); c.op_b = Op::N, c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  // Few rows on the tile-per-CTA kernels (one wave of 126 64×64 tiles, the last
  // tile column ragged), and next to it 64 rows that tiles per CTA would cut into 188 64×16 tiles, two
  // waves, which the engine keeps persistent (Narrow tiles, each tile's splits of K in one cluster).
  { Case& c = add(128, 4000, 700); c.alpha = -1.f, c.beta = 0.25f, c.lda_pad = 8; }
  add(64, 3000, 900).op_a = Op::T;
  // 24 tiles of 256×256 for 66 clusters, which tiles per CTA would cut into 160 tiles (two waves): the
  // engine keeps it persistent and shares the tiles' slices as stream-K runs.
  { Case& c = add(600, 2000, 700); c.alpha = 0.5f, c.beta = -1.f; }
  // Decode shapes the engine runs swapped on tiles per CTA, C^T written transposed: on
  // a 132-SM H200, 64 tiles of 64×16, the last 61 rows deep; 67 tiles of 128×16 from an N-major B
  // (op nn) read in place, the last 8 rows deep; 58 tiles of 64×32 with odd ldc; 126 tiles of
  // 128×32 with 15 absent columns; 94 tiles of 64×16 from a B that TMA cannot read in place (odd
  // ldb: repacked).
  { Case& c = add(16, 4093, 1000); c.alpha = -1.5f, c.beta = 0.5f; }
  add(1, 8456, 300).op_b = Op::N;
  { Case& c = add(32, 3700, 777); c.ldc_pad = 3, c.lda_pad = 8, c.beta = -0.5f; }
  { Case& c = add(17, 16001, 200); c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  { Case& c = add(5, 6000, 4100); c.op_b = Op::N, c.ldb_pad = 1, c.alpha = 2.f; }
  // Few tiles over a deep K on the swapped persistent kernels: 8 tiles of 128×32 and of 128×16
  // (A and B repacked: lda = ldb = 2500), each tile's 63 or 40 slices as one cluster of 8 splits.
  { Case& c = add(32, 1000, 4000); c.alpha = 0.5f, c.beta = -1.f; }
  { Case& c = add(9, 900, 2500); c.fill = ref::Fill::SmallInts, c.exact = true; }
  std::uint64_t seed = 2001;
  for (Case& c : cases) c.seed = seed++;
  return cases;
}

// Leading dimensions TMA cannot address (not multiples of 8) and 2-byte-aligned pointers, at
// sizes that take the engine through each of its persistent paths: 256- and 128-wide tiles, C stored by TMA
// and copied row by row (16-byte stores at every alignment of a row), C read (beta ≠ 0), split-K
// partial sums, the skinny path; operands TMA cannot read are repacked.
std::vector<Case> build_odd_ld_cases() {
  std::vector<Case> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b, std::int64_t lda_pad,
                 std::int64_t ldb_pad, std::int64_t ldc_pad) -> Case& {
    Case c;
    c.m = m, c.n = n, c.k = k, c.op_a = op_a, c.op_b = op_b;
    c.lda_pad = lda_pad, c.ldb_pad = ldb_pad, c.ldc_pad = ldc_pad;
    cases.push_back(c);
    return cases.back();
  };
  add(300, 520, 200, Op::N, Op::T, 1, 3, 1);  // C row by row: ldc odd, every row alignment
  add(300, 520, 200, Op::N, Op::T, 1, 3, 8);  // C by TMA (ldc = 528)
  { Case& c = add(300, 520, 200, Op::N, Op::T, 5, 0, 3); c.alpha = -0.5f, c.beta = 0.75f; }  // C read
  { Case& c = add(257, 300, 1000, Op::N, Op::T, 1, 1, 1); c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  add(260, 264, 136, Op::N, Op::T, 0, 0, 0).offset = 1;  // ld fine, pointers 2-byte aligned
  add(300, 520, 200, Op::N, Op::N, 1, 0, 1);              // B (N-major) read in place
  add(300, 520, 200, Op::T, Op::T, 0, 1, 1);              // A M-major, lda = 300
  add(200, 10, 300, Op::N, Op::T, 1, 1, 1);               // 10 columns: every row's ragged end
  { Case& c = add(100, 1000, 4000, Op::N, Op::T, 1, 1, 1); c.beta = 0.5f; }  // split K: partial sums
  add(40, 1000, 3000, Op::N, Op::T, 1, 1, 1);             // skinny path
  { Case& c = add(16, 1000, 3000, Op::N, Op::T, 3, 1, 1); c.alpha = 2.f; }  // skinny, 16 columns of C^T
  // Both operands repacked along a K of 300000 rows: more row blocks than one launch's grid.y
  // holds (the repack splits its jobs at 32767 blocks of 8 rows).
  { Case& c = add(7, 9, 300000, Op::T, Op::N, 0, 0, 0); c.beta = -1.f; }
  std::uint64_t seed = 3001;
  for (Case& c : cases) c.seed = seed++;
  return cases;
}

// Tile counts that leave much of the last round idle over a K deep enough for the engine to
// share tiles between clusters (stream-K: idle clusters × slices of K ≥ 24 × clusters). On an
// H200 (66 clusters of 256×256 tiles): 67 tiles cut into 66 runs of 1.02 tiles (a tile in two
// pieces); 2300×2800, 99 tiles, one round of whole tiles, then the last 33 cut into runs of half a
// tile (a tile in three pieces); 100×17024, the single-CTA 128×128 tiles (133 for 132 CTAs).
// Each epilogue follows the hand-over: C by TMA, C read (beta ≠ 0), C copied row by row.
/// Appends a case of this shape and these ops to `cases`; returns it for the rest of its settings.
Case& add_case(std::vector<Case>& cases, std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b) {
  Case c;
  c.m = m, c.n = n, c.k = k, c.op_a = op_a, c.op_b = op_b;
  cases.push_back(c);
  return cases.back();
}

std::vector<Case> build_stream_k_cases() {
  std::vector<Case> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b) -> Case& {
    return add_case(cases, m, n, k, op_a, op_b);
  };
  add(17000, 200, 1600, Op::N, Op::N);  // aligned, beta = 0: C by TMA
  { Case& c = add(2300, 2800, 3100, Op::N, Op::T); c.alpha = -0.5f, c.beta = 0.75f; }
  add(16900, 250, 1700, Op::T, Op::N).ldc_pad = 1;  // C row by row
  { Case& c = add(17100, 256, 1700, Op::T, Op::T); c.fill = ref::Fill::SmallInts, c.exact = true, c.beta = 1.f; }
  add(100, 17024, 1600, Op::T, Op::T).alpha = 2.f;
  std::uint64_t seed = 4001;
  for (Case& c : cases) c.seed = seed++;
  return cases;
}

// More tiles than the engine's persistent kernels has clusters, C stored by TMA (beta = 0, aligned,
// N % 8 == 0), short K: each tile's last C chunks are stored while the CTA's next tile runs its
// first slices, and flushed at the tile's end when K has fewer slices than chunks wait. On an
// H200: 90 tiles of 256×256 over 66 clusters with one slice each; 72 tiles of four slices, the
// last ragged; 132 tiles (two rounds exactly) of two slices, both operands MN-major; and 133 of
// the single-CTA 128×128 tiles for 132 CTAs.
std::vector<Case> build_many_tiles_cases() {
  std::vector<Case> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b) -> Case& {
    return add_case(cases, m, n, k, op_a, op_b);
  };
  add(2560, 2304, 64, Op::N, Op::T);
  add(2304, 2048, 200, Op::N, Op::N).alpha = -1.5f;
  add(1024, 8448, 128, Op::T, Op::T);
  { Case& c = add(120, 17000, 96, Op::T, Op::N); c.fill = ref::Fill::SmallInts, c.exact = true; }
  std::uint64_t seed = 5001;
  for (Case& c : cases) c.seed = seed++;
  return cases;
}

std::vector<Case> build_random_cases() {
  std::vector<Case> cases;
  Draw r(random_seed());
  const int count = random_case_count(40);
  while (static_cast<int>(cases.size()) < count) {
    RandomShape s = random_shape(r, 1e8);
    if (s.batch > 1) continue;  // gemm() takes one product
    Case c;
    c.tag = "random" + std::to_string(cases.size()) + s.kind;
    c.m = s.m, c.n = s.n, c.k = s.k;
    std::tie(c.op_a, c.op_b) = random_ops(r, s);
    c.exact = c.k <= 250 && r.chance(0.3);  // |D| ≤ 2·250·4 + 2, exact in f16 and its f16 sums
    if (c.exact) {
      c.fill = ref::Fill::SmallInts;
      c.alpha = r.pick({1.f, -1.f, 2.f}) * (c.k <= 120 ? 1.f : 0.5f), c.beta = r.pick({0.f, 1.f, -1.f});
    } else {
      c.alpha = r.pick({1.f, 1.f, -1.5f, 0.5f, 0.25f}), c.beta = r.pick({0.f, 0.f, 1.f, -0.5f, 0.75f});
    }
    c.lda_pad = r.padding(c.op_a == Op::N ? c.k : c.m), c.ldb_pad = r.padding(c.op_b == Op::N ? c.n : c.k);
    c.ldc_pad = r.padding(c.n);
    c.offset = r.chance(0.15) ? 1 : 0;
    c.seed = 70001 + cases.size();
    cases.push_back(c);
  }
  return within_max_dim(std::move(cases));
}

}  // namespace

const std::vector<Case>& random_cases() {
  static const std::vector<Case> cases = build_random_cases();
  return cases;
}

const std::vector<Case>& many_tiles_cases() {
  static const std::vector<Case> cases = build_many_tiles_cases();
  return cases;
}

const std::vector<Case>& stream_k_cases() {
  static const std::vector<Case> cases = build_stream_k_cases();
  return cases;
}

const std::vector<Case>& odd_ld_cases() {
  static const std::vector<Case> cases = build_odd_ld_cases();
  return cases;
}

const std::vector<Case>& tile_choice_cases() {
  static const std::vector<Case> cases = build_tile_choice_cases();
  return cases;
}

const std::vector<Case>& skinny_cases() {
  static const std::vector<Case> cases = build_skinny_cases();
  return cases;
}

const std::vector<Case>& standard_cases() {
  static const std::vector<Case> cases = build_cases();
  return cases;
}

const CaseData& case_data(const Case& c) {
  static std::mutex mutex;
  static std::map<std::string, CaseData> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = c.name() + "#" + std::to_string(c.seed);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  CaseData d;
  d.a.resize(static_cast<std::size_t>(c.a_rows() * c.lda()));
  d.b.resize(static_cast<std::size_t>(c.b_rows() * c.ldb()));
  d.c.resize(static_cast<std::size_t>(c.m * c.ldc()));
  ref::fill_random(d.a.data(), d.a.size(), c.seed * 3, c.fill);
  ref::fill_random(d.b.data(), d.b.size(), c.seed * 3 + 1, c.fill);
  ref::fill_random(d.c.data(), d.c.size(), c.seed * 3 + 2, c.fill);
  d.reference = ref::reference_gemm(c.op_a, c.op_b, c.m, c.n, c.k, c.alpha, d.a.data(), c.lda(), d.b.data(), c.ldb(),
                                    c.beta, d.c.data(), c.ldc());
  return cache.emplace(key, std::move(d)).first->second;
}

// Tolerances, relative to the metrics of ref::compare.
//
// f32 accumulation: fp16 products are exact in fp32; each of the K additions rounds with
// relative error ≤ 2^-24, so the sum is off by at most about K·2^-24·Σ|a_i b_i| ≤ K·2^-24·‖a‖‖b‖
// (Cauchy–Schwarz). The output is then rounded once to fp16: ≤ 2^-11 of |C| ≤ ‖a‖‖b‖ + |βc|.
// Allowed: 2^-10 + K·2^-22, i.e. twice the rounding bound plus four times the summation bound.
//
// f16 accumulation: every addition rounds to fp16 (2^-11 relative to the running sum). The
// errors add up like a random walk: simulating sequential fp16 accumulation over uniform[-1,1]
// data gives a scaled max error of ≈ 0.95·2^-10 for every K from 7 to 16384, and a Frobenius
// error of ≈ 0.14·2^-10·sqrt(K) (0.0092 at K = 4093). Allowed: 4·2^-10 scaled, and
// 2^-10·(2 + sqrt(K)/2) Frobenius (≈ 3.5× the simulated value). This tolerance cannot see one
// missing term at large K, which is why every f16 kernel is also run on exact integer data.
double tolerance_rel_fro(Accum accum, std::int64_t k) {
  const double eps = std::ldexp(1.0, -10);
  return accum == Accum::F32 ? eps + k * std::ldexp(1.0, -22) : eps * (2 + 0.5 * std::sqrt(static_cast<double>(k)));
}
double tolerance_max_scaled(Accum accum, std::int64_t k) {
  const double eps = std::ldexp(1.0, -10);
  return accum == Accum::F32 ? eps + k * std::ldexp(1.0, -22) : 4 * eps;
}

}  // namespace hgemm::test
