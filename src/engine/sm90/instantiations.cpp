// SPDX-License-Identifier: Apache-2.0
#include "engine/sm90/instantiations.h"

namespace hgemm::detail::engine {
namespace {

/// The accumulator and input types the kernels are built for: f16 inputs with f16 or f32
/// accumulators, bf16 inputs with f32 ones (with_kernel in kernel_launcher.cuh).
struct Types {
  Accum accum;
  DataType in;
};
constexpr Types kAllTypes[] = {{Accum::F16, DataType::F16}, {Accum::F32, DataType::F16}, {Accum::F32, DataType::BF16}};

std::vector<Instantiation> list_all() {
  std::vector<Instantiation> out;
  auto add = [&](KernelShape s, bool stream_k, TileFinish f, bool short_k, bool a_mn, bool b_mn, Types t) {
    out.push_back({s, stream_k, f, short_k, a_mn, b_mn, t.accum, t.in});
  };
  auto majors = [&](bool b_mn_too, auto&& f) {
    for (bool a_mn : {false, true})
      for (bool b_mn : {false, true})
        if (b_mn_too || !b_mn) f(a_mn, b_mn);
  };
  // Wide, Narrow: with and without stream-K, each general, plain, and fused in registers (f32 only).
  for (KernelShape s : {KernelShape::Wide, KernelShape::Narrow})
    for (bool stream_k : {false, true}) {
      for (TileFinish f : {TileFinish::Any, TileFinish::Plain})
        majors(true, [&](bool a, bool b) {
          for (Types t : kAllTypes) add(s, stream_k, f, false, a, b, t);
        });
      majors(true, [&](bool a, bool b) {
        for (Types t : kAllTypes)
          if (t.accum == Accum::F32) add(s, stream_k, TileFinish::FusedInRegisters, false, a, b, t);
      });
    }
  // Ping-pong: general and plain, f32 accumulators, no stream-K.
  for (TileFinish f : {TileFinish::Any, TileFinish::Plain})
    majors(true, [&](bool a, bool b) {
      for (Types t : kAllTypes)
        if (t.accum == Accum::F32) add(KernelShape::PingPong, false, f, false, a, b, t);
    });
  // The swapped persistent kernels: B K-major, stream-K on the 32- and 64-row ones.
  for (KernelShape s : {KernelShape::Skinny16, KernelShape::Skinny32, KernelShape::Skinny64})
    for (bool stream_k : {false, true}) {
      if (stream_k && s == KernelShape::Skinny16) continue;
      majors(false, [&](bool a, bool b) {
        for (Types t : kAllTypes) add(s, stream_k, TileFinish::Any, false, a, b, t);
      });
    }
  // Tiles per CTA: general and plain; B N-major only 64 wide and more; the short-K entry for
  // 64-row tiles with f32 accumulators.
  for (KernelShape s : {KernelShape::Tile128x64, KernelShape::Tile64x64, KernelShape::Tile64x32, KernelShape::Tile64x16})
    for (TileFinish f : {TileFinish::Any, TileFinish::Plain})
      majors(shape_info(s).bn >= 64, [&](bool a, bool b) {
        for (Types t : kAllTypes) {
          add(s, false, f, false, a, b, t);
          if (shape_info(s).bm == 64 && t.accum == Accum::F32) add(s, false, f, true, a, b, t);
        }
      });
  // Swapped tiles per CTA: B K-major, general code only.
  for (KernelShape s : {KernelShape::Swapped64x16, KernelShape::Swapped64x32, KernelShape::Swapped128x16,
                        KernelShape::Swapped128x32})
    majors(false, [&](bool a, bool b) {
      for (Types t : kAllTypes) add(s, false, TileFinish::Any, false, a, b, t);
    });
  return out;
}

}  // namespace

const char* unit_of(const Instantiation& i) {
  switch (i.shape) {
    case KernelShape::Wide: return i.stream_k ? "kernels_wide_stream_k.cu" : "kernels_wide.cu";
    case KernelShape::Narrow: return "kernels_narrow.cu";
    case KernelShape::PingPong: return "kernels_pingpong.cu";
    case KernelShape::Skinny16:
    case KernelShape::Skinny32:
    case KernelShape::Skinny64: return "kernels_skinny.cu";
    case KernelShape::Tile128x64:
    case KernelShape::Tile64x64:
    case KernelShape::Tile64x32:
    case KernelShape::Tile64x16: return "kernels_tiles.cu";
    case KernelShape::Swapped64x16:
    case KernelShape::Swapped64x32:
    case KernelShape::Swapped128x16:
    case KernelShape::Swapped128x32: return "kernels_swapped_tiles.cu";
    case KernelShape::Grouped128x128: return "kernels_grouped.cu";
    case KernelShape::Grouped128x256: return "kernels_grouped_wide.cu";
  }
  return "?";
}

const std::vector<Instantiation>& manifest() {
  static const std::vector<Instantiation> all = list_all();
  return all;
}

std::optional<Instantiation> instantiation_of(const Plan& plan, const Matmul& p) {
  Instantiation i;
  i.shape = plan.choice.shape;
  const ShapeInfo& info = shape_info(i.shape);
  if (i.shape == KernelShape::Grouped128x128 || i.shape == KernelShape::Grouped128x256) return std::nullopt;
  i.stream_k = plan.choice.scheduler == Scheduler::StreamK;
  i.finish = plan.finish;
  i.short_k = plan.short_k;
  // The kernel's operands as launch.cu's kernel_operands gives them: for the swapped problem B
  // is its A (MN-major when op(B) = N) and A its K-major B.
  i.a_mn = plan.swapped ? p.op_b == Op::N : p.op_a == Op::T;
  i.b_mn = plan.swapped ? false : p.op_b == Op::N;
  i.accum = p.accum;
  i.in = p.a_type;
  if (i.b_mn && !info.persistent && info.bn < 64) return std::nullopt;  // launch_tiles refuses it
  if (i.shape == KernelShape::PingPong && i.accum != Accum::F32) return std::nullopt;
  return i;
}

std::string describe(const Instantiation& i) {
  std::string s = shape_info(i.shape).name;
  if (i.stream_k) s += ", stream-K";
  s += std::string(", ") + finish_name(i.finish);
  if (i.short_k) s += ", short-K entry";
  s += i.a_mn ? ", A MN-major" : ", A K-major";
  s += i.b_mn ? ", B MN-major" : ", B K-major";
  s += i.accum == Accum::F16 ? ", f16 acc, " : ", f32 acc, ";
  s += data_type_name(i.in);
  return s;
}

}  // namespace hgemm::detail::engine
