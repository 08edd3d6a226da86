// SPDX-License-Identifier: Apache-2.0
// The typed matmul's choice of kernel on a device: a named entry refuses the types its KernelInfo
// does not list (UnsupportedType, naming itself), and "auto" resolves every type combination to
// an entry that takes it.
#include "matmul_util.h"

namespace hgemm::test {
namespace {

constexpr DataType kInTypes[] = {DataType::F16, DataType::BF16};
constexpr DataType kOutTypes[] = {DataType::F16, DataType::BF16, DataType::F32};

class TypedMatmulApi : public testing::Test {
 protected:
  void SetUp() override { HGEMM_SKIP_WITHOUT_GPU(); }

  // 256-byte-aligned device buffers of 64×64 f32 elements; resolve_matmul reads no memory, so
  // larger problems may point at them too.
  MatmulArgs args(DataType in, DataType c, DataType d, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, float beta) {
    if (!a_) {  // large enough for the largest shape: C and D must not overlap (the API refuses that)
      constexpr std::size_t kBytes = std::size_t(4096) * 4096 * 4;
      a_ = std::make_unique<DeviceBytes>(kBytes), b_ = std::make_unique<DeviceBytes>(kBytes);
      c_ = std::make_unique<DeviceBytes>(kBytes), d_ = std::make_unique<DeviceBytes>(kBytes);
    }
    MatmulArgs p;
    p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k, p.beta = beta;
    p.a = a_->get(), p.a_type = in, p.lda = op_a == Op::N ? k : m;
    p.b = b_->get(), p.b_type = in, p.ldb = op_b == Op::N ? n : k;
    p.c = c_->get(), p.c_type = c, p.ldc = n;
    p.d = d_->get(), p.d_type = d, p.ldd = n;
    return p;
  }

 private:
  std::unique_ptr<DeviceBytes> a_, b_, c_, d_;
};

bool takes(const KernelInfo& k, DataType in, DataType c, DataType d, bool c_read) {
  return (k.in_types & type_bit(in)) && (k.out_types & type_bit(d)) && (!c_read || (k.out_types & type_bit(c)));
}

std::string types(DataType in, DataType c, DataType d) {
  return std::string("A/B ") + data_type_name(in) + ", C " + data_type_name(c) + ", D " + data_type_name(d);
}

TEST_F(TypedMatmulApi, EntriesRefuseTypesTheyDoNotTake) {
  for (const KernelInfo& k : kernels()) {
    // An entry with f16 accumulation only meets validation's refusal of other types first.
    if (!(k.accums & kAccF32)) continue;
    Op op_a = Op::N, op_b = Op::N;  // the first op pair the entry implements
    for (unsigned bit = 0; bit < 4; ++bit)
      if (k.ops & (1u << bit)) {
        op_a = bit / 2 ? Op::T : Op::N, op_b = bit % 2 ? Op::T : Op::N;
        break;
      }
    MatmulOptions o;
    o.kernel = k.id;
    for (DataType in : kInTypes)
      for (DataType c : kOutTypes)
        for (DataType d : kOutTypes)
          for (float beta : {0.f, 1.f}) {
            // 16 rows, aligned rows: a shape every entry's other requirements accept.
            const MatmulArgs p = args(in, c, d, op_a, op_b, 16, 64, 64, beta);
            std::string id;
            const Status s = resolve_matmul(p, o, &id);
            const std::string what = k.id + " with " + types(in, c, d) + ", beta = " + std::to_string(beta);
            if (takes(k, in, c, d, beta != 0.f)) {
              EXPECT_NE(s, Status::UnsupportedType) << what << ": " << last_error_message();
            } else {
              EXPECT_EQ(s, Status::UnsupportedType) << what << ": " << last_error_message();
              EXPECT_NE(last_error_message().find(k.id + " takes A and B in"), std::string::npos)
                  << what << ": " << last_error_message();
              EXPECT_EQ(id, "");
            }
          }
  }
}

TEST_F(TypedMatmulApi, HopperRungsTakeF16Only) {
  const std::string rung = "sm90.wgmma_tma_ws_persistent";
  bool listed = false;
  for (const KernelInfo& k : kernels()) listed |= k.id == rung;
  ASSERT_TRUE(listed) << rung;
  MatmulOptions o;
  o.kernel = rung;
  struct Types {
    DataType in, c, d;
  };
  for (const Types& t : {Types{DataType::BF16, DataType::BF16, DataType::BF16},
                         Types{DataType::BF16, DataType::F16, DataType::F16},
                         Types{DataType::F16, DataType::F16, DataType::F32},
                         Types{DataType::F16, DataType::F32, DataType::F16}}) {
    const Status s = matmul(args(t.in, t.c, t.d, Op::N, Op::N, 64, 64, 64, 1.f), o);
    EXPECT_EQ(s, Status::UnsupportedType) << types(t.in, t.c, t.d) << ": " << last_error_message();
    EXPECT_NE(last_error_message().find(rung + " takes A and B in f16, C and D in f16"), std::string::npos)
        << last_error_message();
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // nothing was launched
}

TEST_F(TypedMatmulApi, AutoResolvesEveryCombinationToAnEntryThatTakesIt) {
  struct Shape {
    Op op_a, op_b;
    std::int64_t m, n, k;
  };
  for (const Shape& sh : {Shape{Op::N, Op::T, 16, 64, 64}, Shape{Op::N, Op::N, 127, 129, 129},
                          Shape{Op::T, Op::N, 1000, 1000, 1000}, Shape{Op::N, Op::N, 4096, 4096, 4096},
                          Shape{Op::T, Op::T, 16, 4096, 4096}})
    for (DataType in : kInTypes)
      for (DataType c : kOutTypes)
        for (DataType d : kOutTypes)
          for (float beta : {0.f, 1.f}) {
            const MatmulArgs p = args(in, c, d, sh.op_a, sh.op_b, sh.m, sh.n, sh.k, beta);
            const std::string what = std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k) +
                                     " " + types(in, c, d) + ", beta = " + std::to_string(beta);
            std::string id;
            ASSERT_EQ(resolve_matmul(p, {}, &id), Status::Success) << what << ": " << last_error_message();
            const KernelInfo* info = nullptr;
            for (const KernelInfo& k : kernels())
              if (k.id == id) info = &k;
            ASSERT_NE(info, nullptr) << what << ": auto named '" << id << "'";
            EXPECT_TRUE(takes(*info, in, c, d, beta != 0.f)) << what << ": auto named " << id;
            EXPECT_TRUE(info->accums & kAccF32) << what << ": auto named " << id;
            // The entry auto names accepts the problem by name too.
            MatmulOptions named;
            named.kernel = id;
            std::string again;
            EXPECT_EQ(resolve_matmul(p, named, &again), Status::Success) << what << " " << id << ": "
                                                                          << last_error_message();
            EXPECT_EQ(again, id);
          }
}

}  // namespace
}  // namespace hgemm::test
