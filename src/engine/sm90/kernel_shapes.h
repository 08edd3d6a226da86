// SPDX-License-Identifier: Apache-2.0
// The engine's compiled kernel shapes, in one table: what the plan (plan.cpp), the launch
// (launch.cu) and the instantiations (kernels_*.cu, which static_assert their configs against
// it) all read.
#pragma once

#include <cstdint>
#include <type_traits>

namespace hgemm::detail::engine {

/// The engine's compiled kernels (mainloop shapes), in the order of kKernelShapes.
enum class KernelShape : std::uint8_t {
  Wide,       ///< persistent, 128×256 per CTA, clusters of 2 along M multicasting B, 4 stages
  Narrow,     ///< persistent, 128×128 single CTAs, 6 stages (M ≤ 128: a pair would leave one idle)
  Skinny16,   ///< persistent on the swapped problem (few rows of C as wgmma's N): 128×16
  Skinny32,   ///< ... 128×32
  Skinny64,   ///< ... 128×64
  Tile128x64, ///< one tile per CTA, one warpgroup, the deepest ring, a producer warp
  Tile64x64,
  Tile64x32,  ///< (B K-major only: an N-major B comes in 64-wide blocks)
  Tile64x16,
  Swapped64x16,   ///< one tile per CTA on the swapped problem (decode shapes), D written transposed
  Swapped64x32,
  Swapped128x16,
  Swapped128x32,
  Grouped128x128,  ///< persistent 128×128 single CTAs over the units of a grouped problem (grouped.h)
  Grouped128x256,  ///< ... 128×256 (at most kGroupedWideMaxGroups groups)
  PingPong,        ///< persistent, 64×256 per consumer warpgroup in turns (pingpong.cuh), clusters of 2, 4 stages
};

/// One kernel shape: its tile per CTA (of the problem it runs: the swapped problem for swapped
/// shapes), the CTAs of a cluster along M sharing B by multicast, and its schedulers.
struct ShapeInfo {
  KernelShape shape;
  const char* name;
  int bm, bn;
  int cluster;     ///< CTAs per multicast cluster (cluster split-K's clusters are its splits instead)
  bool persistent; ///< planned by make_plan as a persistent schedule of units (else one CTA per
                   ///< tile; the grouped kernels, persistent too, plan their own: grouped_plan.cpp)
  bool swapped;    ///< runs C^T = op(B)^T·op(A)^T and writes D transposed
  bool stream_k;   ///< has the stream-K scheduler (an instantiation with its branches)
  bool cluster_split_k;  ///< has cluster split-K (single-CTA persistent kernels)
};

inline constexpr ShapeInfo kKernelShapes[] = {
    {KernelShape::Wide, "wide 128x256 c2", 128, 256, 2, true, false, true, false},
    {KernelShape::Narrow, "narrow 128x128", 128, 128, 1, true, false, true, true},
    {KernelShape::Skinny16, "swapped persistent 128x16", 128, 16, 1, true, true, false, true},
    {KernelShape::Skinny32, "swapped persistent 128x32", 128, 32, 1, true, true, true, true},
    {KernelShape::Skinny64, "swapped persistent 128x64", 128, 64, 1, true, true, true, true},
    {KernelShape::Tile128x64, "tile 128x64", 128, 64, 1, false, false, false, false},
    {KernelShape::Tile64x64, "tile 64x64", 64, 64, 1, false, false, false, false},
    {KernelShape::Tile64x32, "tile 64x32", 64, 32, 1, false, false, false, false},
    {KernelShape::Tile64x16, "tile 64x16", 64, 16, 1, false, false, false, false},
    {KernelShape::Swapped64x16, "swapped tile 64x16", 64, 16, 1, false, true, false, false},
    {KernelShape::Swapped64x32, "swapped tile 64x32", 64, 32, 1, false, true, false, false},
    {KernelShape::Swapped128x16, "swapped tile 128x16", 128, 16, 1, false, true, false, false},
    {KernelShape::Swapped128x32, "swapped tile 128x32", 128, 32, 1, false, true, false, false},
    {KernelShape::Grouped128x128, "grouped 128x128", 128, 128, 1, false, false, false, false},
    {KernelShape::Grouped128x256, "grouped 128x256", 128, 256, 1, false, false, false, false},
    {KernelShape::PingPong, "ping-pong 64x256 c2", 64, 256, 2, true, false, false, false},
};

inline constexpr int kKernelShapeCount = static_cast<int>(sizeof(kKernelShapes) / sizeof(kKernelShapes[0]));

constexpr bool kernel_shapes_in_order() {
  for (int i = 0; i < kKernelShapeCount; ++i)
    if (static_cast<int>(kKernelShapes[i].shape) != i) return false;
  return static_cast<int>(KernelShape::PingPong) + 1 == kKernelShapeCount;
}
static_assert(kernel_shapes_in_order(), "kKernelShapes lists every KernelShape once, in the enum's order");

constexpr const ShapeInfo& shape_info(KernelShape s) { return kKernelShapes[static_cast<int>(s)]; }

template <typename C, typename = void>
struct HasCluster : std::false_type {};
template <typename C>
struct HasCluster<C, std::void_t<decltype(C::CLUSTER)>> : std::true_type {};

/// Whether config C (its BM, BN and CLUSTER, a config without CLUSTER being single CTAs) is the
/// kernel of shape s.
template <typename C>
constexpr bool config_matches(KernelShape s) {
  const ShapeInfo& i = shape_info(s);
  if (C::BM != i.bm || C::BN != i.bn) return false;
  if constexpr (HasCluster<C>::value) return C::CLUSTER == i.cluster;
  return i.cluster == 1;
}

}  // namespace hgemm::detail::engine
