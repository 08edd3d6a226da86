// 01_wgmma_tma.cu — sm90.wgmma_tma
// The first Hopper rung: the tensor cores driven the way sm_90 wants. Over the Ampere-style
// mma.sync path it adds three things.
//  * TMA: one thread asks the copy engine for a whole 128×64 tile of A and of B
//    (cp.async.bulk.tensor, tensor maps built on the host); the engine computes the addresses,
//    zero-fills what lies outside the matrix (ragged M, N, K need no predicates) and writes the
//    tile 128B-swizzled, the layout wgmma reads without bank conflicts.
//  * An mbarrier ring of STAGES slots: the copy engine completes a slot's "full" barrier by byte
//    count; the warps release it on its "empty" barrier once the wgmmas reading it are done, and
//    the thread refills it STAGES slices ahead.
//  * wgmma.mma_async: one warpgroup (4 warps) multiplies 64×128×16 per instruction with both
//    operands read straight from shared memory through descriptors; the instructions of a slice
//    run asynchronously while the next slice's wait is issued (one group kept in flight).
// Every op combination runs natively: an operand stored MN-major (A with op T, B with op N) is
// loaded as 64-wide blocks and read with wgmma's transpose bit. Operands TMA cannot read in place
// (pointer not 16-byte aligned, ld not a multiple of 8) are first copied to aligned workspace.
// One CTA of 128 threads per 128×128 tile of C. The kernel itself is in wgmma_tma.cuh, shared with
// rung 04, which runs it with smaller tiles.
#include "kernels/sm90/wgmma_tma.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace sm90_wgmma_tma {

using Tiles = sm90::OneWarpgroupTiles<128, 128, 4>;  // the kernel itself: kernels/sm90/wgmma_tma.cuh

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return sm90::launch_one_warpgroup<Tiles>(p, stream, message);
}

}  // namespace sm90_wgmma_tma

const KernelEntry& entry_sm90_wgmma_tma() {
  static const KernelEntry e{{"sm90.wgmma_tma", "sm90", 1,
                              "TMA tile loads into an mbarrier ring, wgmma from shared memory (1 warpgroup, 128x128)",
                              90, 90, kAllOps, kBothAccums, 1, false},
                             &sm90_wgmma_tma::launch, &sm90::supports};
  return e;
}

}  // namespace hgemm::detail
