// SPDX-License-Identifier: Apache-2.0
#include "common/sm90/tensor_maps.h"

#include <cuda_fp16.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <algorithm>

#include "common/capture.h"
#include "common/launch.cuh"
#include "common/sm90/operand_tile.cuh"
#include "common/vec.cuh"

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

// One operand to copy: `batch` matrices of rows × width 16-bit values (f16 or bf16: copied as
// bits), matrix b at src + b·stride with leading dimension ld, into dst with dst_ld a multiple of
// 8 (dst 16-byte aligned, the matrices one after another: the copy's stride is rows · dst_ld).
struct RepackJob {
  const __half* src;
  std::int64_t ld, stride;
  __half* dst;
  std::int64_t dst_ld, rows, width, batch;
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
  const std::int64_t stride = in_a ? a.stride : b.stride, all_rows = rows * (in_a ? a.batch : b.batch);
  const int width = static_cast<int>(in_a ? a.width : b.width);
  const unsigned row_blocks = in_a ? a_row_blocks : b_row_blocks;
  const unsigned row_block = in_a ? blockIdx.y : blockIdx.y - a_row_blocks;
  const std::int64_t groups = dst_ld / 8;
  for (std::int64_t r = std::int64_t(row_block) * kRepackRowsPerBlock + threadIdx.y; r < all_rows;
       r += std::int64_t(row_blocks) * kRepackRowsPerBlock) {
    const __half* src = src0 + r / rows * stride + r % rows * ld;
    __half* dst = dst0 + r * dst_ld;
    for (std::int64_t g = std::int64_t(blockIdx.x) * 32 + threadIdx.x; g < groups; g += std::int64_t(gridDim.x) * 32)
      *reinterpret_cast<uint4*>(dst + g * 8) = load_row_halves8(src, static_cast<int>(g * 8), width);
  }
}

CUtensorMapDataType tma_type(DataType t) {
  return t == DataType::F16    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
         : t == DataType::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                               : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// A 128B-swizzled map with a box_w × box_h (× 1) box: of a row-major rows × width matrix (rank
// 2), or of `batch` of them `stride` elements apart (rank 3; a stride of 0, one matrix repeated,
// is a batch of 1 that the kernels address at z = 0).
Status encode_box(CUtensorMap* map, const void* ptr, DataType type, std::int64_t width, std::int64_t rows,
                  std::int64_t ld, int box_w, int box_h, int rank, std::int64_t batch, std::int64_t stride,
                  std::string* message) {
  auto encoder = tensor_map_encoder();
  if (!encoder) {
    *message = "the CUDA driver has no cuTensorMapEncodeTiled (driver too old for TMA)";
    return Status::CudaError;
  }
  // The encoder is a driver call and needs a current context, which a thread that has made no
  // runtime call yet (autograd's backward thread, say) lacks: a runtime call binds the device's.
  // The thread may be capturing a CUDA graph, which forbids cudaFree: relaxed for the one call.
  thread_local bool bound = false;
  if (!bound) {
    const cudaError_t err = [] {
      const RelaxedCapture relaxed;
      return cudaFree(nullptr);
    }();
    if (err != cudaSuccess) {
      *message = std::string("binding the device's context failed: ") + cudaGetErrorString(err);
      return Status::CudaError;
    }
    bound = true;
  }
  const std::int64_t size = data_type_size(type);
  if (stride == 0 || batch == 1) batch = 1, stride = ((rows * ld * size + 15) / 16 * 16) / size;  // never stepped over
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(width), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld * size), static_cast<cuuint64_t>(stride * size)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_w), static_cast<cuuint32_t>(box_h), 1};
  const cuuint32_t unit[3] = {1, 1, 1};
  CUresult r = encoder(map, tma_type(type), static_cast<cuuint32_t>(rank), const_cast<void*>(ptr), dims, strides, box,
                       unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    *message = "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r));
    return Status::CudaError;
  }
  return Status::Success;
}

}  // namespace

bool tma_readable(const void* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 8 == 0;
}

bool tma_readable(const StoredOperand& op) {
  return tma_readable(op.ptr, op.ld) && (op.batch <= 1 || op.stride % 8 == 0);
}

Status make_tma_readable(StoredOperand* a, StoredOperand* b, StreamWorkspace& workspace, cudaStream_t stream,
                         std::string* message) {
  RepackJob jobs[2] = {};
  unsigned row_blocks[2] = {0, 0};
  std::int64_t groups = 0;
  StoredOperand* ops[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    StoredOperand* op = ops[i];
    if (tma_readable(*op) || op->rows == 0) continue;
    const std::int64_t dst_ld = (op->width + 7) / 8 * 8, batch = op->stride == 0 ? 1 : op->batch;
    void* dst = nullptr;
    if (Status s = workspace.allocate(static_cast<std::size_t>(batch * op->rows * dst_ld) * sizeof(__half), &dst, message);
        s != Status::Success)
      return s;
    jobs[i] = {static_cast<const __half*>(op->ptr), op->ld, op->stride, static_cast<__half*>(dst), dst_ld, op->rows,
               op->width, batch};
    row_blocks[i] = static_cast<unsigned>(std::min<std::int64_t>(
        (batch * op->rows + kRepackRowsPerBlock - 1) / kRepackRowsPerBlock, kRepackMaxRowBlocks));
    groups = std::max(groups, dst_ld / 8);
    op->ptr = dst;
    op->ld = dst_ld;
    if (op->stride != 0) op->stride = op->rows * dst_ld;
  }
  if (row_blocks[0] + row_blocks[1] == 0) return Status::Success;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((groups + 31) / 32, 64)), row_blocks[0] + row_blocks[1]);
  repack_kernel<<<grid, dim3(32, kRepackRowsPerBlock), 0, stream>>>(jobs[0], jobs[1], row_blocks[0], row_blocks[1]);
  return launch_status(message);
}

Status encode_operand_map(CUtensorMap* map, const StoredOperand& op, bool mn_major, int rows, std::string* message) {
  return encode_box(map, op.ptr, op.type, op.width, op.rows, op.ld, 64, mn_major ? BK : rows, 2, 1, 0, message);
}

Status encode_batched_operand_map(CUtensorMap* map, const StoredOperand& op, bool mn_major, int rows,
                                  std::string* message) {
  return encode_box(map, op.ptr, op.type, op.width, op.rows, op.ld, 64, mn_major ? BK : rows, 3, op.batch, op.stride,
                    message);
}

Status encode_store_map(CUtensorMap* map, void* ptr, DataType type, std::int64_t width, std::int64_t rows,
                        std::int64_t ld, int box_w, int box_h, std::string* message) {
  return encode_box(map, ptr, type, width, rows, ld, box_w, box_h, 2, 1, 0, message);
}

Status encode_batched_store_map(CUtensorMap* map, void* ptr, DataType type, std::int64_t width, std::int64_t rows,
                                std::int64_t ld, std::int64_t batch, std::int64_t stride, int box_w, int box_h,
                                std::string* message) {
  return encode_box(map, ptr, type, width, rows, ld, box_w, box_h, 3, batch, stride, message);
}

}  // namespace hgemm::detail::sm90
