#include "common/sm90/host.h"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include "common/launch.cuh"
#include "common/occupancy.h"
#include "common/vec.cuh"
#include "common/sm90/tile.cuh"

namespace hgemm::detail::sm90 {
namespace {

// The driver's encoder, found through the runtime (no link against libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

bool tma_readable(const __half* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 8 == 0;
}

// One operand to copy: rows × width halves from (src, ld) to (dst, dst_ld), dst_ld a multiple of
// 8 and dst 16-byte aligned (width < 2^31).
struct RepackJob {
  const __half* src;
  std::int64_t ld;
  __half* dst;
  std::int64_t dst_ld, rows, width;
};
constexpr int kRepackRowsPerBlock = 8, kRepackMaxRowBlocks = 32767;  // two jobs within gridDim.y ≤ 65535

// One 16-byte load, kept whole (the compiler splits plain loads into the words shift_down_halves
// keeps, four times the instructions). The source is read-only while the repack runs.
__device__ __forceinline__ uint4 load_unit(const void* p) {
  uint4 v;
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// Columns c..c+7 of a row of `width` halves starting anywhere on a 2-byte boundary, zeros past
// the row's end: the two aligned 16-byte units that hold them, realigned, where both lie inside
// the row (one unit when it is aligned); element by element at the row's two ends.
__device__ __forceinline__ uint4 load_row_halves8(const __half* row, int c, int width) {
  const __half* p = row + c;
  const int s = static_cast<int>(reinterpret_cast<std::uintptr_t>(p) / 2 % 8);
  const uint4* unit = reinterpret_cast<const uint4*>(p - s);
  if (s == 0 && c + 8 <= width) return load_unit(unit);
  if (s != 0 && c >= s && c - s + 16 <= width) return shift_down_halves(load_unit(unit), load_unit(unit + 1), s);
  alignas(16) __half v[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = c + j < width ? p[j] : __ushort_as_half(0);
  return *reinterpret_cast<const uint4*>(v);
}

// Both operands' copies in one launch: blocks of 32 × 8 threads, each thread writing 8 halves
// (one 16-byte store) of a row, 8 rows per block; blockIdx.y picks the job (a's row blocks first).
// (The job's fields are picked one by one: a reference to either parameter would copy both to
// local memory and turn every load into a generic one.)
__global__ void repack_kernel(RepackJob a, RepackJob b, unsigned a_row_blocks, unsigned b_row_blocks) {
  const bool in_a = blockIdx.y < a_row_blocks;
  const __half* const src0 = in_a ? a.src : b.src;
  __half* const dst0 = in_a ? a.dst : b.dst;
  const std::int64_t ld = in_a ? a.ld : b.ld, dst_ld = in_a ? a.dst_ld : b.dst_ld, rows = in_a ? a.rows : b.rows;
  const int width = static_cast<int>(in_a ? a.width : b.width);
  const unsigned row_blocks = in_a ? a_row_blocks : b_row_blocks;
  const unsigned row_block = in_a ? blockIdx.y : blockIdx.y - a_row_blocks;
  const std::int64_t groups = dst_ld / 8;
  for (std::int64_t r = std::int64_t(row_block) * kRepackRowsPerBlock + threadIdx.y; r < rows;
       r += std::int64_t(row_blocks) * kRepackRowsPerBlock) {
    const __half* src = src0 + r * ld;
    __half* dst = dst0 + r * dst_ld;
    for (std::int64_t g = std::int64_t(blockIdx.x) * 32 + threadIdx.x; g < groups; g += std::int64_t(gridDim.x) * 32)
      *reinterpret_cast<uint4*>(dst + g * 8) = load_row_halves8(src, static_cast<int>(g * 8), width);
  }
}

__global__ void scale_c_kernel(Problem p) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < p.m * p.n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    __half* c = p.c + (i / p.n) * p.ldc + i % p.n;
    *c = p.beta == 0.f ? __ushort_as_half(0) : __float2half_rn(p.beta * __half2float(*c));
  }
}

// C(r, c) = alpha·(partial sums of (r, c), added in split order: deterministic) + beta·C(r, c).
__device__ __forceinline__ float reduce_element(const Problem& p, const float* partials, int splits, std::int64_t slice,
                                                std::int64_t i) {
  float sum = 0.f;
#pragma unroll 4
  for (int s = 0; s < splits; ++s) sum += partials[s * slice + i];
  return sum;
}

__device__ __forceinline__ void store_reduced(const Problem& p, __half* c, float sum) {
  float v = p.alpha * sum;
  if (p.beta != 0.f) v = fmaf(p.beta, __half2float(*c), v);
  *c = __float2half_rn(v);
}

__device__ __forceinline__ void wait_for_gemm() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");  // launched early (PDL): wait for the GEMM's sums
#endif
}

// One thread per element of C; consecutive threads read consecutive sums and write consecutive
// elements of a row.
__global__ void reduce_splits_kernel(Problem p, const float* partials, int splits) {
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < slice;
       i += std::int64_t(gridDim.x) * blockDim.x)
    store_reduced(p, p.c + (i / p.n) * p.ldc + i % p.n, reduce_element(p, partials, splits, slice, i));
}

// p is the swapped problem: its element (r, c) is C(c, r). A 32×32 block of sums is read along
// p's rows and written along C's rows, through shared memory, so that both sides are coalesced
// (read and written in p's order, C's stores would each land in a different row).
constexpr int kTransposeTile = 32, kTransposeRows = 8;  // block: 32 × 8 threads
__global__ void reduce_splits_transposed_kernel(Problem p, const float* partials, int splits) {
  __shared__ float tile[kTransposeTile][kTransposeTile + 1];  // +1: column reads hit 32 banks
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kTransposeTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kTransposeTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int j = ty; j < kTransposeTile; j += kTransposeRows)
    if (r0 + j < p.m && c0 + tx < p.n) tile[j][tx] = reduce_element(p, partials, splits, slice, (r0 + j) * p.n + c0 + tx);
  __syncthreads();
  for (int j = ty; j < kTransposeTile; j += kTransposeRows)  // C's row c0 + j, columns r0 + tx
    if (c0 + j < p.n && r0 + tx < p.m) store_reduced(p, p.c + (c0 + j) * p.ldc + r0 + tx, tile[tx][j]);
}

// p is the swapped problem with few columns (the rows of C, at most kFewColumns): a block takes
// kFewRows rows of p, one thread per element, reads their sums in p's order (consecutive threads,
// consecutive floats) into shared memory and writes them along C's rows, so that both sides are
// coalesced and every thread has work (the 32×32 tiles above would leave most threads idle;
// measured: docs/ladder.md#split-k).
constexpr int kFewColumns = 16, kFewRows = 64;
__global__ void reduce_splits_columns_kernel(Problem p, const float* partials, int splits) {
  __shared__ float tile[kFewColumns][kFewRows + 1];
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n, r0 = static_cast<std::int64_t>(blockIdx.x) * kFewRows;
  const int cols = static_cast<int>(p.n), rows = static_cast<int>(p.m - r0 < kFewRows ? p.m - r0 : kFewRows);
  if (cols == 1) {  // C's one row is p's one column: nothing to transpose
    for (int e = threadIdx.x; e < rows; e += blockDim.x)
      store_reduced(p, p.c + r0 + e, reduce_element(p, partials, splits, slice, r0 + e));
    return;
  }
  for (int e = threadIdx.x; e < rows * cols; e += blockDim.x)  // p's row-major order
    tile[e % cols][e / cols] = reduce_element(p, partials, splits, slice, r0 * cols + e);
  __syncthreads();
  for (int e = threadIdx.x; e < rows * cols; e += blockDim.x)  // C's row e / rows, columns r0 + e % rows
    store_reduced(p, p.c + (e / rows) * p.ldc + r0 + e % rows, tile[e / rows][e % rows]);
}

// Many splits over few elements (a tiny C with a long K): each block sums 32 consecutive elements
// (in p's order), its 8 warps taking every 8th split, then adds the 8 warps' sums in warp order
// (deterministic). Writes C, or C^T when `transposed` (p is then the swapped problem).
constexpr int kSplitWarps = 8;
__global__ void reduce_many_splits_kernel(Problem p, const float* partials, int splits, bool transposed) {
  __shared__ float sums[kSplitWarps][32];
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n, i = std::int64_t(blockIdx.x) * 32 + threadIdx.x;
  const int warp = threadIdx.y;
  float sum = 0.f;
  if (i < slice) {
#pragma unroll 4
    for (int s = warp; s < splits; s += kSplitWarps) sum += partials[s * slice + i];
  }
  sums[warp][threadIdx.x] = sum;
  __syncthreads();
  if (warp != 0 || i >= slice) return;
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kSplitWarps; ++w) total += sums[w][threadIdx.x];
  const std::int64_t r = i / p.n, c = i % p.n;
  store_reduced(p, transposed ? p.c + c * p.ldc + r : p.c + r * p.ldc + c, total);
}

// A grid-stride grid of 256-thread blocks for `items` elements.
unsigned elementwise_grid(std::int64_t items) {
  const std::int64_t blocks = (items + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

// One operand as stored: rows × width halves with leading dimension ld.
struct Stored {
  const __half* ptr;
  std::int64_t ld, rows, width;
};

// Where TMA cannot read A or B in place (pointer not 16-byte aligned, ld not a multiple of 8),
// copies it into workspace with ld rounded up to a multiple of 8 (one launch for both) and
// points the operand there.
Status readable_copies(Stored* a, Stored* b, StreamWorkspace& workspace, cudaStream_t stream, std::string* message) {
  RepackJob jobs[2] = {};
  unsigned row_blocks[2] = {0, 0};
  std::int64_t groups = 0;
  Stored* ops[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    Stored* op = ops[i];
    if (tma_readable(op->ptr, op->ld) || op->rows == 0) continue;
    const std::int64_t dst_ld = (op->width + 7) / 8 * 8;
    void* dst = nullptr;
    if (Status s = workspace.allocate(static_cast<std::size_t>(op->rows * dst_ld) * sizeof(__half), &dst, message);
        s != Status::Success)
      return s;
    jobs[i] = {op->ptr, op->ld, static_cast<__half*>(dst), dst_ld, op->rows, op->width};
    row_blocks[i] = static_cast<unsigned>(
        std::min<std::int64_t>((op->rows + kRepackRowsPerBlock - 1) / kRepackRowsPerBlock, kRepackMaxRowBlocks));
    groups = std::max(groups, dst_ld / 8);
    op->ptr = static_cast<const __half*>(dst);
    op->ld = dst_ld;
  }
  if (row_blocks[0] + row_blocks[1] == 0) return Status::Success;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((groups + 31) / 32, 64)), row_blocks[0] + row_blocks[1]);
  repack_kernel<<<grid, dim3(32, kRepackRowsPerBlock), 0, stream>>>(jobs[0], jobs[1], row_blocks[0], row_blocks[1]);
  return launch_status(message);
}

// A 128B-swizzled map of a row-major rows × width matrix of halves, with a box_w × box_h box.
Status encode_box(CUtensorMap* map, const __half* ptr, std::int64_t width, std::int64_t rows, std::int64_t ld,
                  int box_w, int box_h, std::string* message) {
  auto encoder = tensor_map_encoder();
  if (!encoder) {
    *message = "the CUDA driver has no cuTensorMapEncodeTiled (driver too old for TMA)";
    return Status::CudaError;
  }
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(width), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(__half)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_w), static_cast<cuuint32_t>(box_h)};
  const cuuint32_t unit[2] = {1, 1};
  CUresult r = encoder(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(ptr), dims, strides, box, unit,
                       CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    *message = "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r));
    return Status::CudaError;
  }
  return Status::Success;
}

// The map of one operand: inner dimension = the stored width, outer = the stored rows. The box
// is one 128-byte row deep in the inner dimension; K-major operands take `rows` rows per box,
// MN-major ones 64 k-rows (a [64 k][64 mn] block).
Status encode(CUtensorMap* map, const Stored& op, bool mn_major, int rows, std::string* message) {
  return encode_box(map, op.ptr, op.width, op.rows, op.ld, 64, mn_major ? BK : rows, message);
}

}  // namespace

bool takes_skinny_path(const Problem& p) { return p.m <= 64 && p.n > p.m && p.op_a == Op::N && p.k > 0; }

Problem swapped(const Problem& p) {
  Problem q = p;
  q.m = p.n, q.n = p.m;
  q.op_a = p.op_b == Op::N ? Op::T : Op::N, q.a = p.b, q.lda = p.ldb;
  q.op_b = Op::T, q.b = p.a, q.ldb = p.lda;
  return q;
}

Status supports(const Matmul& p, std::string* why) {
#ifndef HGEMM_HAS_SM90A
  if (p.m >= 0) {  // always; keeps the code below reachable for the compiler
    *why = "this build of hgemm has no sm_90a code (add 90a to HGEMM_CUDA_ARCHS)";
    return Status::UnsupportedArch;
  }
#endif
  // TMA coordinates are 32-bit signed, its strides below 2^40 bytes; tile counts fit an int.
  const std::int64_t limit = INT_MAX - 512;
  if (p.m > limit || p.n > limit || p.k > limit || ((p.m + 127) / 128) * ((p.n + 127) / 128) > INT_MAX) {
    *why = "the sm90 kernels need M, N, K below 2^31 - 512 and fewer than 2^31 tiles of 128x128";
    return Status::ProblemTooLarge;
  }
  if (p.lda > (std::int64_t(1) << 38) || p.ldb > (std::int64_t(1) << 38)) {
    *why = "the sm90 kernels need lda and ldb below 2^38";
    return Status::ProblemTooLarge;
  }
  return Status::Success;
}

Status encode_operand_maps(const Problem& p, TileShape shape, StreamWorkspace& workspace, cudaStream_t stream,
                           OperandMaps* maps, EpilogueMode* mode, std::string* message) {
  // TMA stores clip a ragged N only to whole 16-byte units (measured: N = 127 with ldc = 128
  // wrote column 127 of every row), so N must be a multiple of 8 too; else the staged rows.
  mode->tma_store = shape.c_tma_store && p.beta == 0.f && tma_readable(p.c, p.ldc) && p.n % 8 == 0;
  mode->staged_rows = shape.c_tma_store && p.beta == 0.f && !mode->tma_store;
  if (mode->tma_store) {
    if (Status s = encode_box(&maps->c, p.c, p.n, p.m, p.ldc, kCChunkCols, kCStoreRows, message); s != Status::Success) return s;
  }
  Stored a{p.a, p.lda, a_mn_major(p) ? p.k : p.m, a_mn_major(p) ? p.m : p.k};
  Stored b{p.b, p.ldb, b_mn_major(p) ? p.k : p.n, b_mn_major(p) ? p.n : p.k};
  if (Status s = readable_copies(&a, &b, workspace, stream, message); s != Status::Success) return s;
  if (Status s = encode(&maps->a, a, a_mn_major(p), shape.bm / shape.a_parts, message); s != Status::Success) return s;
  return encode(&maps->b, b, b_mn_major(p), shape.bn / shape.b_parts, message);
}

Status scale_c(const Problem& p, cudaStream_t stream, std::string* message) {
  scale_c_kernel<<<elementwise_grid(p.m * p.n), 256, 0, stream>>>(p);
  return launch_status(message);
}

Status reduce_splits(const Problem& p, const EpilogueMode& mode, cudaStream_t stream, std::string* message) {
  // Programmatic dependent launch: the reduction is launched while the GEMM kernel drains and
  // waits in griddepcontrol.wait for its results, hiding one launch latency.
  cudaLaunchConfig_t config{};
  config.stream = stream;
  cudaLaunchAttribute early[1];
  early[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = early;
  config.numAttrs = 1;
  const float* partials = mode.partials;
  cudaError_t err;
  if (mode.splits > kSplitWarps) {
    config.gridDim = dim3(static_cast<unsigned>((p.m * p.n + 31) / 32));
    config.blockDim = dim3(32, kSplitWarps);
    err = cudaLaunchKernelEx(&config, reduce_many_splits_kernel, p, partials, mode.splits, mode.transposed);
  } else if (mode.transposed && p.n <= kFewColumns) {
    config.gridDim = dim3(static_cast<unsigned>((p.m + kFewRows - 1) / kFewRows));
    config.blockDim = dim3(static_cast<unsigned>(kFewRows * p.n));
    err = cudaLaunchKernelEx(&config, reduce_splits_columns_kernel, p, partials, mode.splits);
  } else if (mode.transposed) {
    config.gridDim = dim3(static_cast<unsigned>((p.m + kTransposeTile - 1) / kTransposeTile),
                          static_cast<unsigned>((p.n + kTransposeTile - 1) / kTransposeTile));
    config.blockDim = dim3(kTransposeTile, kTransposeRows);
    err = cudaLaunchKernelEx(&config, reduce_splits_transposed_kernel, p, partials, mode.splits);
  } else {
    config.gridDim = dim3(elementwise_grid(p.m * p.n));
    config.blockDim = dim3(256);
    err = cudaLaunchKernelEx(&config, reduce_splits_kernel, p, partials, mode.splits);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    *message = std::string("split-K reduction launch failed: ") + cudaGetErrorString(err);
    return Status::CudaError;
  }
  return launch_status(message);
}

Status set_smem_limit(const void* kernel, int bytes, std::string* message) {
  static std::mutex mutex;
  static std::set<std::tuple<const void*, int, int>> allowed;  // (kernel, device, bytes) already set
  int device = 0;
  cudaGetDevice(&device);
  const auto key = std::make_tuple(kernel, device, bytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (allowed.count(key)) return Status::Success;
  }
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
      err != cudaSuccess) {
    cudaGetLastError();
    *message = "cannot allow " + std::to_string(bytes) + " bytes of shared memory: " + cudaGetErrorString(err);
    return Status::CudaError;
  }
  std::lock_guard<std::mutex> lock(mutex);
  allowed.insert(key);
  return Status::Success;
}

cudaLaunchAttribute cluster_dims(int cluster) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  return attr;
}

unsigned resident_clusters(const void* kernel, int threads, int smem_bytes, int cluster, std::string* message) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int>, unsigned> cache;  // (kernel, device, cluster)
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard<std::mutex> lock(mutex);
  const std::string cannot = "cannot place a cluster of " + std::to_string(cluster) + " CTAs: ";
  auto it = cache.find({kernel, device, cluster});
  if (it != cache.end()) {
    if (it->second == 0) *message = cannot + "occupancy is 0";
    return it->second;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  cudaLaunchAttribute attr[1] = {cluster_dims(cluster)};
  config.attrs = attr;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaError_t err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config); err != cudaSuccess || clusters < 1) {
    cudaGetLastError();
    *message = cannot + (err != cudaSuccess ? cudaGetErrorString(err) : "occupancy is 0");
    if (err == cudaSuccess) cache[{kernel, device, cluster}] = 0;  // asked again, the answer is the same
    return 0;
  }
  return cache[{kernel, device, cluster}] = static_cast<unsigned>(clusters);
}

}  // namespace hgemm::detail::sm90
