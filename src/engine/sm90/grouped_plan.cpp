// SPDX-License-Identifier: Apache-2.0
// The plan and the launch of a grouped problem: the grid, the store path, the operands TMA
// cannot read in place copied, the tensor maps (A of rank 2 over all rows, or of rank 3 over
// the masked groups; B of rank 3 over the groups, of one matrix when K-grouped) and the kernel.
#include <algorithm>

#include "common/sm90/tensor_maps.h"
#include "common/workspace.h"
#include "engine/sm90/grouped.h"
#include "engine/sm90/grouped_schedule.h"

namespace hgemm::detail::engine {

Plan make_grouped_plan(const GroupedMatmul& p, const Device& d, const EngineChoice& choice) {
  Plan plan;
  plan.choice = choice;
  plan.m = p.m, plan.n = p.n, plan.k = p.k;
  plan.batch = p.groups;
  tile_of(choice.shape, &plan.bm, &plan.bn);
  plan.cluster = 1;
  const std::int64_t units =
      p.d_used() ? grouped_units_bound(p.layout, p.groups, p.m, p.n, plan.bm, plan.bn) : 0;
  const int fit = std::max(1, d.clusters[1]);
  plan.clusters = static_cast<int>(std::min<std::int64_t>(units, fit));
  plan.grid = static_cast<unsigned>(plan.clusters);
  plan.store = p.d_type == DataType::F32 ? StorePath::Registers : StorePath::StagedRows;
  // Operands TMA cannot read in place are copied (make_tma_readable), ld rounded up to 8.
  auto copy = [&](const void* ptr, std::int64_t ld, std::int64_t stride, std::int64_t copies, std::int64_t rows,
                  std::int64_t width, bool* repack) {
    const bool readable = reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 8 == 0 &&
                          (copies == 1 || stride % 8 == 0);
    *repack = p.k > 0 && rows > 0 && !readable;
    return *repack ? static_cast<std::size_t>(copies * rows * ((width + 7) / 8 * 8) * 2) : std::size_t(0);
  };
  const std::int64_t a_copies = p.masked() && p.stride_a != 0 ? p.groups : 1;
  const std::int64_t b_copies = p.stride_b != 0 ? p.groups : 1;
  plan.repack_bytes =
      copy(p.a, p.lda, p.stride_a, a_copies, p.op_a == Op::N ? p.m : p.k, p.op_a == Op::N ? p.k : p.m, &plan.repack_a) +
      copy(p.b, p.ldb, p.stride_b, b_copies, p.op_b == Op::N ? p.k : p.n, p.op_b == Op::N ? p.n : p.k, &plan.repack_b);
  return plan;
}

Status launch_grouped(const Plan& plan, const GroupedMatmul& p, cudaStream_t stream, std::string* message) {
  if (plan.grid == 0) return Status::Success;  // no row of D can be written
  KernelLaunch l;
  l.a_mn = p.op_a == Op::T, l.b_mn = p.op_b == Op::N, l.accum = p.accum, l.in = p.a_type;
  l.grid = plan.grid, l.cluster = 1, l.stream = stream;
  StreamWorkspace workspace(stream);
  if (p.k > 0) {  // K = 0 loads nothing: the kernel writes zeros
    // A: all M rows of the contiguous layout in one matrix, or the masked groups as a batch.
    const std::int64_t a_batch = p.masked() ? p.groups : 1;
    sm90::StoredOperand a{p.a, p.a_type, p.lda, p.op_a == Op::N ? p.m : p.k, p.op_a == Op::N ? p.k : p.m,
                          a_batch, p.masked() ? p.stride_a : 0};
    sm90::StoredOperand b{p.b, p.b_type, p.ldb, p.op_b == Op::N ? p.k : p.n, p.op_b == Op::N ? p.n : p.k, p.groups,
                          p.stride_b};
    if (Status s = sm90::make_tma_readable(&a, &b, workspace, stream, message); s != Status::Success) return s;
    const Status sa = p.masked() ? sm90::encode_batched_operand_map(&l.map_a, a, l.a_mn, plan.bm, message)
                                 : sm90::encode_operand_map(&l.map_a, a, l.a_mn, plan.bm, message);
    if (sa != Status::Success) return sa;
    if (Status s = sm90::encode_batched_operand_map(&l.map_b, b, l.b_mn, plan.bn, message); s != Status::Success)
      return s;
  }
  GroupedParams k;
  k.n = p.n, k.k = p.k;
  k.bound = static_cast<int>(p.k_grouped() ? p.k : p.m);
  k.rows_each = static_cast<int>(p.m);
  k.groups = static_cast<int>(p.groups);
  k.layout = p.layout;
  k.sizes = p.sizes();
  k.a_steps = p.masked() && p.stride_a != 0, k.b_steps = p.stride_b != 0;
  k.out.d = p.d, k.out.ldd = p.ldd, k.out.n = p.n, k.out.alpha = p.alpha, k.out.beta = 0.f;
  k.out.d_type = p.d_type, k.out.stride_d = p.d_per_group() ? p.stride_d : 0;
  return plan.bn == kGroupedWideBN ? launch_grouped_wide(l, k, message) : launch_grouped_narrow(l, k, message);
}

}  // namespace hgemm::detail::engine
