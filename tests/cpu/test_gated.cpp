// SPDX-License-Identifier: Apache-2.0
// hgemm::swiglu and swiglu_backward refuse bad arguments with a status and a message, before any
// device is touched: sizes, layouts, types, leading dimensions, null, misaligned and overlapping
// pointers, batch strides, extents past 2^56 bytes. Valid arguments pass every host check and
// then stop at the device (NoDevice here; InvalidPointer on a machine with a GPU, the pointers
// being made up). Empty problems succeed without looking at the pointers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hgemm/gated.h"

namespace hgemm {
namespace {

void* fake(int i) { return reinterpret_cast<void*>(std::uintptr_t(0x1000000000) * static_cast<std::uintptr_t>(i)); }

GateArgs valid_forward(GateLayout layout = GateLayout::Halves) {
  GateArgs a;
  a.m = 100, a.n = 64, a.layout = layout;
  a.z = fake(1), a.ldz = 136, a.z_type = DataType::BF16;
  a.d = fake(2), a.ldd = 64, a.d_type = DataType::F32;
  return a;
}

GateGradArgs valid_grad() {
  GateGradArgs g;
  g.dd = fake(3), g.lddd = 64, g.dd_type = DataType::F16;
  g.dz = fake(4), g.lddz = 128, g.dz_type = DataType::BF16;
  return g;
}

bool reaches_device(Status s) { return s == Status::NoDevice || s == Status::InvalidPointer; }

TEST(Gated, ValidArgumentsPassTheHostChecks) {
  for (GateLayout l : {GateLayout::Halves, GateLayout::Blocks8}) {
    EXPECT_TRUE(reaches_device(swiglu(valid_forward(l)))) << last_error_message();
    EXPECT_TRUE(reaches_device(swiglu_backward(valid_forward(l), valid_grad()))) << last_error_message();
  }
  GateArgs batched = valid_forward();
  batched.batch = 3, batched.stride_z = 136 * 100, batched.stride_d = 64 * 100;
  EXPECT_TRUE(reaches_device(swiglu(batched))) << last_error_message();
  EXPECT_STREQ(gate_layout_name(GateLayout::Halves), "halves");
  EXPECT_STREQ(gate_layout_name(GateLayout::Blocks8), "blocks8");
}

TEST(Gated, EmptyProblemsSucceedWithoutPointers) {
  for (int which = 0; which < 3; ++which) {
    GateArgs a = valid_forward();
    a.z = nullptr, a.d = nullptr;
    (which == 0 ? a.m : which == 1 ? a.n : a.batch) = 0;
    EXPECT_EQ(swiglu(a), Status::Success) << which << ": " << last_error_message();
    GateGradArgs g;
    g.lddd = 64, g.lddz = 136;
    EXPECT_EQ(swiglu_backward(a, g), Status::Success) << which << ": " << last_error_message();
  }
}

// Each broken field, the status it gives and a word its message must hold.
struct Broken {
  const char* what;
  void (*breaks)(GateArgs&, GateGradArgs&);
  Status status;
  const char* says;
  enum Reads { Both, ForwardOnly, GradientOnly } reads = Both;  ///< which call looks at the field
};

const Broken kBroken[] = {
    {"negative M", [](GateArgs& a, GateGradArgs&) { a.m = -1; }, Status::InvalidSize, "M = -1"},
    {"negative N", [](GateArgs& a, GateGradArgs&) { a.n = -5; }, Status::InvalidSize, "N = -5"},
    {"negative batch", [](GateArgs& a, GateGradArgs&) { a.batch = -2; }, Status::InvalidSize, "batch"},
    {"huge N", [](GateArgs& a, GateGradArgs&) { a.n = INT64_MAX; }, Status::ProblemTooLarge, "2N"},
    {"unknown layout", [](GateArgs& a, GateGradArgs&) { a.layout = static_cast<GateLayout>(7); },
     Status::InvalidArgument, "GateLayout"},
    {"blocks of 8 over N % 8", [](GateArgs& a, GateGradArgs&) { a.layout = GateLayout::Blocks8, a.n = 60, a.ldd = 60; },
     Status::InvalidArgument, "multiple of 8"},
    {"unknown type of Z", [](GateArgs& a, GateGradArgs&) { a.z_type = static_cast<DataType>(9); },
     Status::UnsupportedType, "of Z"},
    {"unknown type of dZ", [](GateArgs&, GateGradArgs& g) { g.dz_type = static_cast<DataType>(200); },
     Status::UnsupportedType, "of dZ", Broken::GradientOnly},
    {"ldz under 2N", [](GateArgs& a, GateGradArgs&) { a.ldz = 127; }, Status::InvalidLeadingDim, "ldz = 127"},
    {"ldd under N", [](GateArgs& a, GateGradArgs&) { a.ldd = 63; }, Status::InvalidLeadingDim, "ldd = 63", Broken::ForwardOnly},
    {"lddz under 2N", [](GateArgs&, GateGradArgs& g) { g.lddz = 100; }, Status::InvalidLeadingDim, "lddz = 100", Broken::GradientOnly},
    {"lddd zero", [](GateArgs&, GateGradArgs& g) { g.lddd = 0; }, Status::InvalidLeadingDim, "lddd = 0", Broken::GradientOnly},
    {"null Z", [](GateArgs& a, GateGradArgs&) { a.z = nullptr; }, Status::NullPointer, "Z is null"},
    {"null dD", [](GateArgs&, GateGradArgs& g) { g.dd = nullptr; }, Status::NullPointer, "dD is null", Broken::GradientOnly},
    {"misaligned Z", [](GateArgs& a, GateGradArgs&) { a.z = static_cast<char*>(fake(1)) + 1; }, Status::Misaligned,
     "Z"},
    {"misaligned dZ", [](GateArgs&, GateGradArgs& g) { g.dz = static_cast<char*>(fake(4)) + 1; }, Status::Misaligned,
     "dZ", Broken::GradientOnly},
    {"negative stride", [](GateArgs& a, GateGradArgs&) { a.stride_z = -1; }, Status::InvalidSize, "stride"},
    {"overlapping D matrices",
     [](GateArgs& a, GateGradArgs& g) { a.batch = 2, a.stride_z = 13600, a.stride_d = 6399, g.stride_dz = 12800; },
     Status::InvalidLeadingDim, "stride_d = 6399", Broken::ForwardOnly},
    {"overlapping dZ matrices",
     [](GateArgs& a, GateGradArgs& g) { a.batch = 2, a.stride_z = 13600, a.stride_d = 6400, g.stride_dz = 100; },
     Status::InvalidLeadingDim, "stride_dz = 100", Broken::GradientOnly},
    {"past 2^56 bytes", [](GateArgs& a, GateGradArgs&) { a.ldz = std::int64_t(1) << 50; }, Status::ProblemTooLarge,
     "2^56"},
    {"past the address space", [](GateArgs& a, GateGradArgs&) { a.z = reinterpret_cast<void*>(UINTPTR_MAX - 63); },
     Status::InvalidPointer, "address space"},
};

TEST(Gated, BrokenArgumentsAreRefusedWithAMessage) {
  for (const Broken& b : kBroken)
    for (bool backward : {false, true}) {
      GateArgs a = valid_forward();
      GateGradArgs g = valid_grad();
      b.breaks(a, g);
      if (b.reads == (backward ? Broken::ForwardOnly : Broken::GradientOnly)) continue;
      const Status s = backward ? swiglu_backward(a, g) : swiglu(a);
      EXPECT_EQ(s, b.status) << b.what << (backward ? " (backward)" : "") << ": " << last_error_message();
      EXPECT_NE(last_error_message().find(b.says), std::string::npos)
          << b.what << ": message '" << last_error_message() << "' does not say '" << b.says << "'";
    }
}

TEST(Gated, OutputsMayNotOverlapInputs) {
  GateArgs a = valid_forward();
  a.d = static_cast<char*>(const_cast<void*>(a.z)) + 2 * 64;  // D inside Z's first row
  EXPECT_EQ(swiglu(a), Status::InvalidArgument);
  EXPECT_NE(last_error_message().find("D overlaps Z"), std::string::npos) << last_error_message();
  GateArgs f = valid_forward();
  GateGradArgs g = valid_grad();
  g.dz = const_cast<void*>(g.dd);
  g.dz_type = DataType::F16;
  EXPECT_EQ(swiglu_backward(f, g), Status::InvalidArgument);
  EXPECT_NE(last_error_message().find("dZ overlaps dD"), std::string::npos) << last_error_message();
}

}  // namespace
}  // namespace hgemm
